/*
 * harness/src/model/model.h: the executable model, the judge's oracle: managers and resources
 * (spec/managers.md, spec/errors.md), scopes and per-thread statistics (spec/scopes.md),
 * composites (COMP.*), DLPack tensors (spec/dlpack.md) in model.c, graphs
 * (spec/graphs.md) in model_graph.c; the operations' shape, dtype and value rules
 * both use come from opsem.h. It is written from the spec alone, never from impl/ (spec/architecture.md, rule 3):
 * two implementations that must agree; plain arrays and scans, clarity over speed.
 * Objects of each kind are numbered from 0 in creation order and are never freed
 * before cts_model_free, so a released resource or a closed manager keeps answering
 * questions about itself. struct cts_model owns every array below and each object's
 * own arrays; ids refer across them and own nothing.
 */
#ifndef CTS_MODEL_H
#define CTS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "tsm/adapter.h"

#define CTS_NONE (-1)  /* no manager: detached, no parent, no lender */
#define CTS_BOGUS (-2) /* a handle the session never issued (ERR.HANDLE.1) */

enum cts_model_state { CTS_M_OPEN, CTS_M_CLOSING, CTS_M_CLOSED };

/* A growable list of ids; owns v. */
struct cts_ids {
  int *v;
  size_t n, cap;
};

/* A manager; owns its two id lists (the resources and managers stay the model's). */
struct cts_mmgr {
  int state;          /* enum cts_model_state */
  int capped;
  int parent;         /* CTS_NONE for the root and once closed */
  struct cts_ids held;     /* live resources held, owned or borrowed (MGR.COUNT.1) */
  struct cts_ids children; /* open children (MGR.COUNT.2) */
  int dirty;          /* changed by the last statement */
};

/* One step of a borrow chain: `borrower` holds it and gives it back to `lender`. */
struct cts_borrow {
  int borrower, lender;
};

/* A resource: a tensor or a composite. Owns borrows and components' id list. */
struct cts_mres {
  int valid;
  int kind;                   /* enum tsm_kind */
  int holder;                 /* CTS_NONE when detached, released or a component */
  int composite;              /* the composite a component belongs to, else CTS_NONE */
  struct cts_ids components;  /* a composite's, in order; CTS_NONE for an absent one */
  int scope;                  /* owning scope (SCOPE.REG.1), else CTS_NONE */
  struct cts_borrow *borrows; /* chain, innermost last; empty when owned (MGR.TEMP.5) */
  size_t n_borrows, cap_borrows;
  int storage;
  int dtype, ndim;
  int64_t shape[TSM_MAX_DIMS];
  int dirty;
};

/* Elements in closed form: element i is first + step * i, exactly so in the dtype
 * (cts_opsem_affine_exact). A large arange or fill, and sums and differences of such,
 * stay so: no double per element until something needs them all. */
struct cts_maffine {
  int on;
  double first, step;
};

/* The elements resources view; owns vals until the last view is released. */
struct cts_mstorage {
  int dl;         /* a judge-made DLPack tensor aliased by it (deleted with it), or CTS_NONE */
  uint64_t bytes;
  int refs;       /* live resources viewing it (MGR.OP.9) */
  double *vals;   /* elements, f32 rounded to float, i32 as integers; NULL while aff
                   * holds them (cts_model_storage_values writes them out) */
  int64_t n;
  int approx;     /* f32 sum or matmul: compared to a tolerance (MGR.OP.7) */
  struct cts_maffine aff;
};

/* A scope on one thread's chain; owns its member id list. */
struct cts_mscope {
  int thread;     /* whose chain it is on */
  int outer;      /* next outer open scope of that thread, or CTS_NONE */
  int disposed;
  struct cts_ids members;
  int dirty;
};

/* SCOPE.STAT.3 (MAY): the ways a component tensor may count in the statistics. (a) the
 * reference's: created_outside, disposed_outside; (b) TorchSharp's: created_in_scope and
 * detached when a scope is current at its making, disposed_in_scope when its composite
 * has an owning scope at its release. The composite counters and `live` are the same. */
enum cts_stat_variant { CTS_VARIANT_A, CTS_VARIANT_B, CTS_N_VARIANTS };

/* A thread's scope chain head and statistics; owns nothing. */
struct cts_mthread {
  int current;                     /* innermost open scope, or CTS_NONE */
  int64_t stats[2][CTS_N_STATS];   /* per enum tsm_kind, components counted as variant
                                    * (a); [CTS_STAT_LIVE] is derived */
  int64_t stats_b[CTS_N_STATS];    /* the tensor counters with components as variant (b) */
  /* Membership events (attached, detached) of SCOPE.STAT.4, per enum tsm_kind: counted
   * here for a scope another thread opened, and counted on other threads for a scope
   * this thread opened (where an implementation that counts on the opener has them). */
  int64_t elsewhere[2][2], lent[2][2];
};

/* What a DLPack tensor the judge makes describes (spec/dlpack.md); plain values. */
struct cts_mdl_desc {
  int form;                 /* enum tsm_dlpack_form */
  int64_t major, minor;
  int device_type;          /* DLDeviceType */
  int ndim;
  int64_t shape[CTS_DL_MAX_DIMS];
  int no_strides, n_strides;
  int64_t strides[CTS_DL_MAX_DIMS];
  int code, bits, lanes;
  int null_data;
  int dtype;                /* enum tsm_dtype the values are read as, when supported */
};

enum cts_dl_state { CTS_DL_JUDGE, CTS_DL_HANDED, CTS_DL_GONE };

/* A DLPack tensor: judge-made (owns vals until imported) or an export (holds a
 * reference on its storage until deleted). */
struct cts_mdl {
  int judge_made;           /* else an export of the implementation */
  int state;                /* enum cts_dl_state: who owns it */
  int deletes;              /* deleter runs the spec requires so far (judge-made) */
  int storage;              /* export: the storage it keeps alive */
  int form;
  struct cts_mdl_desc desc; /* judge-made; an export: the exported tensor's dtype, ndim
                             * and shape only */
  double *vals;             /* judge-made: logical elements, row-major (NULL: aff) */
  struct cts_maffine aff;   /* judge-made in closed form */
  int dirty;
};

/* A graph (spec/graphs.md, model_graph.c); owns its order list. */
struct cts_mgraph {
  int mgr;             /* the manager it belongs to (GRAPH.MGR.1) */
  int released;
  int planned;         /* a plan exists (cts_model_graph_planned) */
  int stale_nodes;     /* nodes were added since the last plan (GRAPH.PLAN.1) */
  int stale_flags;     /* flags were added since the last plan (GRAPH.PLAN.5) */
  int computed;        /* values exist */
  struct cts_ids order; /* in-graph tensors in build order: leaves and nodes */
  int dirty;
};

enum cts_gnode_kind { CTS_GN_LEAF, CTS_GN_EXTERNAL, CTS_GN_OP };

/* A graph tensor: a leaf, an external tensor or an op result; owns init and vals. */
struct cts_mgnode {
  int graph;
  int kind;            /* enum cts_gnode_kind */
  int op;              /* enum tsm_op for CTS_GN_OP */
  int src[2], n_src;
  int out;             /* svd: which result, 0..2 */
  int first;           /* svd: the node id of result 0 */
  int res;             /* external: the tensor resource */
  int dtype, ndim;
  int64_t shape[TSM_MAX_DIMS];
  uint32_t flags;      /* enum tsm_graph_flag */
  uint32_t plan_flags; /* flags as of the graph's last plan (GRAPH.PLAN.5) */
  int in_graph;
  int64_t order;       /* execution index of a node once in the graph; -1 leaves */
  int svd_taint;       /* derived from svd factors: compared to a tolerance */
  double *init;        /* leaf: the elements written before every compute */
  double *vals;        /* after the last compute */
};

/* The whole model of one case run; owns every object array and, through them, all the
 * model's memory (cts_model_free). */
/* The ids of one of the model's tables that the judge observes after the next statement
 * (exec_observe.c): every one changed since the last observation (its dirty flag) and
 * every one not yet gone for good (a live resource, a manager not closed, a scope not
 * disposed, a DLPack tensor whose deleter is still due), so that observing costs what
 * is alive or changed, not what a long case ever made. in[id]: id is listed. */
struct cts_watch {
  int *v;
  size_t n, cap;
  unsigned char *in;
  size_t in_cap;
};

struct cts_model {
  struct cts_watch watch_res, watch_mgrs, watch_scopes, watch_dls; /* owned */
  struct cts_mgraph *graphs;
  size_t n_graphs, cap_graphs;
  struct cts_mgnode *gnodes;
  size_t n_gnodes, cap_gnodes;
  struct cts_mdl *dls;
  size_t n_dls, cap_dls;
  int cuda_session;         /* imports of host memory are copied (DLP.IMPORT.7) */
  uint32_t dtypes;          /* the adapter's (1u << enum tsm_dtype): what it imports (DLP.IMPORT.6) */
  struct cts_mscope *scopes;
  size_t n_scopes, cap_scopes;
  struct cts_mthread *threads;
  size_t n_threads, cap_threads;
  int thread;                      /* the thread running the statement */
  struct cts_mmgr *mgrs;
  size_t n_mgrs, cap_mgrs;
  struct cts_mres *res;
  size_t n_res, cap_res;
  struct cts_mstorage *st;
  size_t n_st, cap_st;
  uint64_t live_bytes;
};

/* Creates the model with its root manager, id 0. */
void cts_model_init(struct cts_model *m);
void cts_model_free(struct cts_model *m);
/* After an observation: clears the dirty flags and stops watching what is gone. */
void cts_model_clear_dirty(struct cts_model *m);

/* What a tensor is made as: its dtype and shape (the first ndim extents of shape are
 * read, not kept). */
struct cts_mtype {
  int dtype; /* enum tsm_dtype */
  int ndim;
  const int64_t *shape;
};

/* An operation a statement asks for: op on a (and b, or CTS_NONE) with a reshape's
 * target shape (which the other operations do not read). a and b are tensors for
 * cts_model_op, graph nodes for cts_model_graph_op. */
struct cts_mop {
  int op; /* enum tsm_op */
  int a, b;
  int ndim;
  const int64_t *shape;
};

/* Each returns 0 or the negative code the spec requires; on error nothing changed.
 * Manager and resource arguments may be CTS_BOGUS. */
int cts_model_new_sub(struct cts_model *m, int parent, int *out);
int cts_model_sub_of(struct cts_model *m, int r, int *out);
int cts_model_close(struct cts_model *m, int mgr);
int cts_model_cap(struct cts_model *m, int mgr);
/* vals: n elements (NULL for zeros) */
int cts_model_create(struct cts_model *m, int mgr, const struct cts_mtype *type,
                     const double *vals, int *out);
/* out_mgr: explicit output manager or CTS_NONE */
int cts_model_op(struct cts_model *m, const struct cts_mop *call, int out_mgr, int *out);
int cts_model_attach(struct cts_model *m, int r, int mgr);
int cts_model_detach(struct cts_model *m, int r);
int cts_model_borrow(struct cts_model *m, int r, int mgr);
int cts_model_ret(struct cts_model *m, int r, int mgr);
int cts_model_release(struct cts_model *m, int r);
/* MGR.ADOPT.1: r's resource under a new id *out; r released, nothing counted. */
int cts_model_adopt(struct cts_model *m, int r, int *out);

/* Scopes (spec/scopes.md), on m->thread where the spec says "current". */
void cts_model_set_thread(struct cts_model *m, int thread);
int cts_model_scope_open(struct cts_model *m, int *out);
int cts_model_scope_dispose(struct cts_model *m, int sc);
int cts_model_scope_move_outer(struct cts_model *m, int sc, int r);
int cts_model_scope_move_other(struct cts_model *m, int sc, int r, int other);
int cts_model_scope_detach(struct cts_model *m, int sc, int r);
int cts_model_scope_attach(struct cts_model *m, int sc, int r);
int cts_model_scope_dispose_all(struct cts_model *m, int sc, const int *keep, size_t n_keep);
int cts_model_scope_handover(struct cts_model *m, int sc);
/* Composites. */
int cts_model_pack(struct cts_model *m, const int *seqs, size_t n, int sorted, int *out);
int cts_model_list(struct cts_model *m, const int *items, size_t n, int *out);
/* *out: the component, or CTS_NONE when absent; EINVAL past the end. */
int cts_model_component(const struct cts_model *m, int c, int64_t index, int *out);

/* DLPack (spec/dlpack.md). vals: the logical elements of desc, owned by the model after. */
int cts_model_dl_make(struct cts_model *m, const struct cts_mdl_desc *desc, double *vals, int *out);
/* The same for elements in closed form, exact in desc's dtype (cts_opsem_affine_exact). */
int cts_model_dl_make_affine(struct cts_model *m, const struct cts_mdl_desc *desc,
                             struct cts_maffine aff, int *out);
int cts_model_dl_export(struct cts_model *m, int r, int form, uint32_t request, int *out);
int cts_model_dl_import(struct cts_model *m, int x, int mgr, int *out);
void cts_model_dl_drop(struct cts_model *m, int x);
/* 1 when desc is compact row-major (DLP.IMPORT.4). */
int cts_model_dl_compact(const struct cts_mdl_desc *desc);

/* Graphs. Node ids index m->gnodes. */
int cts_model_graph_new(struct cts_model *m, int mgr, int *out);
int cts_model_graph_leaf(struct cts_model *m, int g, const struct cts_mtype *type, double *init,
                         int *out);
int cts_model_graph_external(struct cts_model *m, int g, int r, int *out);
/* outs: 3 for TSM_OP_SVD, else 1. */
int cts_model_graph_op(struct cts_model *m, const struct cts_mop *call, int *outs);
int cts_model_graph_flag(struct cts_model *m, int node, uint32_t flags);
int cts_model_graph_expand(struct cts_model *m, int g, int node);
int cts_model_graph_release(struct cts_model *m, int g);
/* A graph is usable: EINVAL for a bogus one, ERELEASED once released. */
int cts_model_graph_check(const struct cts_model *m, int g);
/* Values of every in-graph tensor; svd_factors(node) gives the factors the
 * implementation computed (the model validates them, it does not choose them). */
void cts_model_graph_compute(struct cts_model *m, int g,
                             const double *(*svd_factor)(void *ctx, int node), void *ctx);
/* Graph g is planned now: not stale, its tensors' flags are those of the plan. */
void cts_model_graph_planned(struct cts_model *m, int g);
/* Live range of a placed tensor (GRAPH.REUSE.1 with the suite's GRAPH.REUSE.2,
 * FLAG.2, SINK.1): [start, end]; end INT64_MAX when kept. */
void cts_model_graph_live(const struct cts_model *m, int node, int64_t *start, int64_t *end);
/* 1 when the tensor's value is guaranteed after a compute (GRAPH.OUT.1, SINK.1, FLAG.2). */
int cts_model_graph_guaranteed(const struct cts_model *m, int node);
/* The suite's own (TSM) rules a live range or guarantee can leave out, so that the judge
 * can tell a placement only those forbid from one the documented (MUST) rules forbid. */
enum cts_graph_relax {
  CTS_RELAX_LEAF_START = 1, /* GRAPH.REUSE.2 out: a non-INPUT leaf is live from its first
                             * reader's step, not from before the first node */
  CTS_RELAX_PARAM = 2,      /* GRAPH.FLAG.2 out: a PARAM tensor ends at its last read and
                             * may be taken over in place */
  CTS_RELAX_SINK = 4,       /* GRAPH.SINK.1 out: a sink ends at its own step */
  CTS_RELAX_ANY_OP = 8,     /* GRAPH.INPLACE.2 out: any operation may take a source over */
  CTS_RELAX_PLAN_FLAGS = 16 /* GRAPH.PLAN.5 out: the flags as of the last plan count */
};
/* cts_model_graph_live and _guaranteed with the rules of relax (enum cts_graph_relax)
 * left out; relax 0 gives those. */
void cts_model_graph_live_as(const struct cts_model *m, int node, unsigned relax, int64_t *start,
                             int64_t *end);
int cts_model_graph_guaranteed_as(const struct cts_model *m, int node, unsigned relax);
/* The flags of a tensor as relax counts them (CTS_RELAX_PLAN_FLAGS: as of the last plan). */
uint32_t cts_model_graph_flags_as(const struct cts_mgnode *n, unsigned relax);
int cts_model_graph_root(const struct cts_model *m, int node);
int64_t cts_model_graph_elems(const struct cts_mgnode *n);

/* Queries. */
/* The holder a resource reports: a component reports its composite's (COMP.UNIT.1). */
int cts_model_holder(const struct cts_model *m, int r);
int cts_model_borrowed(const struct cts_model *m, int r);
uint64_t cts_model_nbytes(const struct cts_model *m, int r);
/* The statistics of thread t for a kind, with live derived (SCOPE.STAT.1); components
 * counted as variant (a) of SCOPE.STAT.3, or as `variant` (enum cts_stat_variant). */
void cts_model_stats(struct cts_model *m, int t, int kind, int64_t out[CTS_N_STATS]);
void cts_model_stats_as(struct cts_model *m, int t, int kind, int variant,
                        int64_t out[CTS_N_STATS]);
/* Of thread t's `stat` (CTS_STAT_ATTACHED or _DETACHED) for a kind: here, how many it
 * counted for scopes other threads opened; lent, how many other threads counted for
 * scopes t opened (SCOPE.STAT.4). */
struct cts_mstat_elsewhere {
  int64_t here, lent;
};
struct cts_mstat_elsewhere cts_model_stats_elsewhere(struct cts_model *m, int t, int kind,
                                                     int stat);
int cts_model_lender(const struct cts_model *m, int r); /* CTS_NONE if not borrowed */
int64_t cts_model_elems(const struct cts_mres *r);
/* Tensor r's elements (written out once from a closed form: a cache, not a change). */
const double *cts_model_values(const struct cts_model *m, int r);
const double *cts_model_storage_values(const struct cts_model *m, int s);
/* Element i of tensor r, without writing out a closed form. */
double cts_model_value_at(const struct cts_model *m, int r, int64_t i);
/* 1 with *out set when tensor r's elements are held in closed form (not written out). */
int cts_model_closed_form(const struct cts_model *m, int r, struct cts_maffine *out);
int cts_model_approx(const struct cts_model *m, int r);

#endif
