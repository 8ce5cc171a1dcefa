/*
 * harness/adapters/ggml/ggml_adapter.h: what the two halves of the ggml adapter share.
 * ggml_adapter.c is the tensors' storage, the `op` slot and the vtable over the shared
 * manager layer (harness/adapters/common/adapter_mgr.h); ggml_graph.c maps the graph
 * slots onto ggml's graph, ggml_gallocr and the CPU backend.
 *
 * Handles are a tag in the top byte and index + 1 below it, into arrays of the session
 * that only grow, so a handle keeps its meaning for the whole session (ABI.HANDLE.1) and
 * the tag tells the kinds apart (ERR.HANDLE.1): the manager layer's 'M' and 'R', and
 * the graphs' 'G' and 'N' under the same mask.
 */
#ifndef GG_ADAPTER_H
#define GG_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml.h>
#include <tsm/adapter.h>

#include "adapter_mgr.h"

#define GG_GRAPH_TAG 0x4700000000000000ull /* 'G' */
#define GG_NODE_TAG 0x4e00000000000000ull  /* 'N' */

enum gg_node_kind { GG_LEAF, GG_EXTERNAL, GG_OP };

/* A graph tensor: the spec's node, and the ggml tensor that carries its value. */
struct gg_node {
  size_t graph;                /* index of its graph in the session */
  int kind;                    /* enum gg_node_kind */
  int op;                      /* enum tsm_op of a GG_OP */
  size_t src[2];
  int n_src;
  size_t root;                 /* itself, or the tensor a reshape chain reads */
  struct tsm_tensor_desc desc; /* the spec's dtype and shape */
  size_t nbytes;
  uint32_t flags;              /* TSM_GRAPH_* as the spec accumulates them */
  int in_graph;
  int64_t order;               /* execution step of an op node; -1 for a leaf */
  tsm_handle ext;              /* an external's manager tensor */
  struct ggml_context *ctx;    /* metadata of t and of the views it reads through */
  struct ggml_tensor *t;       /* NULL once the graph is released */
};

/* A graph and its current plan. */
struct gg_graph {
  tsm_handle mgr;
  int released;
  size_t *seq;                   /* in-graph nodes in execution order (GRAPH.BUILD.1) */
  size_t n_seq, seq_cap;
  int64_t n_steps;
  struct ggml_context *gctx;     /* holds gf */
  struct ggml_cgraph *gf;        /* rebuilt from seq when `rebuild` is set */
  int rebuild;                   /* nodes or flags changed since gf was built */
  int planned, mode;             /* mode: enum tsm_plan_mode of the current plan */
  int stale;                     /* nodes or flags changed since the plan (GRAPH.PLAN.1) */
  ggml_gallocr_t galloc;         /* the TSM_PLAN_REUSE plan: ggml's graph allocator */
  ggml_backend_buffer_t none_buf; /* the TSM_PLAN_NONE plan: one range per tensor */
  uint64_t planned_bytes;
};

/* A session. `am` comes first: the judge's `void *s` is both (adapter_mgr.h). A manager
 * tensor's storage there (struct am_res's `store`) is host memory of its nbytes, at
 * least 1 byte so that ggml sees it as allocated, which ggml's CPU backend reads in place
 * when the tensor is an op's input or a graph's external leaf (GRAPH.EXT.1). The session
 * owns its graphs, their nodes and the backend. */
struct gg_session {
  struct am_session am;   /* managers and tensors */
  struct gg_graph *graphs;
  size_t ngraph, graph_cap;
  struct gg_node *nodes;
  size_t nnode, node_cap;
  ggml_backend_t backend; /* the CPU backend, one thread */
};

/* ---- ggml_graph.c ---------------------------------------------------------------- */

/* The spec's shape and dtype rule of op (MGR.OP.8, GRAPH.OP.1): OUT *out the result's
 * desc. Returns 0, TSM_EINVAL (a bad reshape target), TSM_ESHAPE or TSM_EDTYPE; gather's
 * index range is its caller's check. */
int gg_op_result(int op, const struct tsm_tensor_desc *a, const struct tsm_tensor_desc *b,
                 const int64_t *params, int n_params, struct tsm_tensor_desc *out);
/* 0 when ggml's CPU backend computes op on a's dtype and both shapes fit ggml's four
 * dimensions, else TSM_ENOTSUP. */
int gg_op_supported(int op, const struct tsm_tensor_desc *a, const struct tsm_tensor_desc *out);
/* A ggml tensor of desc's dtype and shape in ctx, or NULL when ctx is full. */
struct ggml_tensor *gg_tensor(struct ggml_context *ctx, const struct tsm_tensor_desc *d);
/* The ggml tensor computing op on a (and b), shaped as out, in ctx (GRAPH.OP.1). */
struct ggml_tensor *gg_op_build(struct ggml_context *ctx, int op, struct ggml_tensor *a,
                                struct ggml_tensor *b, const struct tsm_tensor_desc *out);
/* A ggml context for metadata only, room for n tensors; NULL when out of memory. */
struct ggml_context *gg_meta_ctx(size_t n);

/* Releases every graph of manager m (GRAPH.MGR.1), when m closes. */
void gg_graphs_of_closed(struct gg_session *S, tsm_handle m);
/* Bytes the session's unreleased graphs hold (GRAPH.MGR.1: in live bytes). */
uint64_t gg_graph_bytes(struct gg_session *S);
void gg_graphs_free(struct gg_session *S);

int gg_graph_new(void *s, tsm_handle mgr, tsm_handle *out);
int gg_graph_leaf(void *s, tsm_handle g, const struct tsm_tensor_desc *d, tsm_handle *out);
int gg_graph_external(void *s, tsm_handle g, tsm_handle tensor, tsm_handle *out);
int gg_graph_op(void *s, tsm_handle g, int op, const tsm_handle *srcs, int n,
                const int64_t *params, int n_params, tsm_handle *outs, int n_outs);
int gg_graph_flag(void *s, tsm_handle t, uint32_t flags);
int gg_graph_expand(void *s, tsm_handle g, tsm_handle t);
int gg_graph_plan(void *s, tsm_handle g, int mode);
int gg_graph_write(void *s, tsm_handle t, const void *data, size_t nbytes);
int gg_graph_compute(void *s, tsm_handle g);
int gg_graph_read(void *s, tsm_handle t, void *dst, size_t cap);
int gg_graph_place(void *s, tsm_handle t, struct tsm_graph_place *out);
int gg_graph_info(void *s, tsm_handle g, struct tsm_graph_info *out);
int gg_graph_release(void *s, tsm_handle g);

#endif /* GG_ADAPTER_H */
