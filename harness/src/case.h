/*
 * harness/src/case.h: a parsed case file (cases/README.md). A case owns its
 * frontmatter strings, its symbol table and its statement tree; cts_case_free
 * releases all of it.
 */
#ifndef CTS_CASE_H
#define CTS_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"

struct cts_spec;

enum cts_stmt_kind {
  /* actions */
  CTS_MGR_SUB,       /* manager dst = sub a */
  CTS_MGR_SUB_OF,    /* manager dst = sub_of a */
  CTS_CREATE,        /* tensor dst = zeros|ones|full|arange|values a shape ... */
  CTS_OP,            /* tensor dst = op a [b] [shape] [in out] */
  CTS_ATTACH,        /* attach a to b */
  CTS_DETACH,        /* detach a */
  CTS_BORROW,        /* borrow a into b */
  CTS_RET,           /* ret a from b */
  CTS_RELEASE,       /* release a */
  CTS_CLOSE,         /* close a */
  CTS_CAP,           /* cap a */
  CTS_DUMP,          /* dump a */
  CTS_REPEAT,        /* repeat count { body } */
  /* scopes (spec/scopes.md) */
  CTS_SCOPE_OPEN,        /* scope dst = open */
  CTS_SCOPE_DISPOSE,     /* dispose a */
  CTS_SCOPE_MOVE_OUTER,  /* move a out of b */
  CTS_SCOPE_MOVE_OTHER,  /* move a from b to out (-2: none) */
  CTS_SCOPE_DETACH,      /* detach a from b */
  CTS_SCOPE_ATTACH,      /* attach a to b (b a scope) */
  CTS_SCOPE_DISPOSE_ALL, /* dispose everything in a [but list] */
  CTS_SCOPE_HANDOVER,    /* handover a */
  CTS_WRAPPED,           /* wrapped dst { body; result x } */
  CTS_RESULT,            /* result a: the last statement of a wrapped body */
  /* composites */
  CTS_PACK,              /* composite dst = pack [list] sorted|unsorted (flag: 1 sorted) */
  CTS_LIST,              /* composite dst = list [list] */
  CTS_COMPONENT,         /* tensor dst = component a count */
  /* DLPack (spec/dlpack.md) */
  CTS_DL_EXPORT,         /* dlpack dst = export a form [copy] [readonly] */
  CTS_DL_MAKE,           /* dlpack dst = make form shape ... (dl options) */
  CTS_DL_IMPORT,         /* tensor dst = import a into b */
  CTS_DL_DROP,           /* drop a */
  /* graphs (spec/graphs.md) */
  CTS_G_NEW,             /* graph dst = new a */
  CTS_G_LEAF,            /* node dst = leaf a shape [dtype] [values|arange] (sub: fill) */
  CTS_G_EXTERNAL,        /* node dst = external a b */
  CTS_G_OP,              /* node dst = op a [b] [shape]; svd binds list[0..2] */
  CTS_G_FLAG,            /* flag a ...: flag holds enum tsm_graph_flag bits */
  CTS_G_EXPAND,          /* expand a b */
  CTS_G_COMPUTE,         /* compute a: the differential compute */
  CTS_G_RECOMPUTE,       /* recompute a */
  CTS_G_RELEASE,         /* release a (a graph) */
  /* threads */
  CTS_THREAD,            /* thread flag { body }: flag is the thread number, 1.. */
  CTS_PARALLEL,          /* parallel { thread blocks } */
  /* expectations */
  CTS_EXPECT_OWNER,    /* a's holder == b (b < 0: none) */
  CTS_EXPECT_LENDER,   /* a's lender == b (b < 0: none) */
  CTS_EXPECT_BORROWED, /* flag: 1 borrowed, 0 not borrowed */
  CTS_EXPECT_VALID,    /* flag: 1 valid, 0 released */
  CTS_EXPECT_COUNT,
  CTS_EXPECT_CHILDREN,
  CTS_EXPECT_STATE,    /* flag: enum cts_mgr_state_name */
  CTS_EXPECT_PARENT,
  CTS_EXPECT_VALUES,
  CTS_EXPECT_SHAPE,
  CTS_EXPECT_BYTES,
  CTS_EXPECT_ERROR,    /* inner fails with err */
  CTS_EXPECT_SCOPE,    /* a's owning scope == b (-2: none) */
  CTS_EXPECT_CURRENT,  /* this thread's current scope == b (-2: none) */
  CTS_EXPECT_MEMBERS,  /* a's member count == count */
  CTS_EXPECT_OUTER,    /* a's outer scope == b (-2: none) */
  CTS_EXPECT_COMPOSITE,/* a's composite == b (-2: none) */
  CTS_EXPECT_ABSENT,   /* component count of a is absent */
  CTS_EXPECT_STATS,    /* flag: enum tsm_kind; stats[] under stats_mask */
  CTS_EXPECT_DELETED,  /* a's deleter ran count times */
  CTS_EXPECT_NODE,     /* a's values after the last compute; flag 1: unspecified */
  CTS_EXPECT_PLANNED   /* a's reuse plan <= count bytes */
};

#define CTS_FIRST_EXPECT CTS_EXPECT_OWNER

enum cts_stat {
  CTS_STAT_CREATED_IN,
  CTS_STAT_CREATED_OUTSIDE,
  CTS_STAT_DISPOSED_IN,
  CTS_STAT_DISPOSED_OUTSIDE,
  CTS_STAT_ATTACHED,
  CTS_STAT_DETACHED,
  CTS_STAT_LIVE,
  CTS_N_STATS
};

enum cts_create_kind { CTS_ZEROS, CTS_ONES, CTS_FULL, CTS_ARANGE, CTS_VALUES };
enum cts_state_name { CTS_STATE_OPEN, CTS_STATE_CAPPED, CTS_STATE_CLOSED, CTS_STATE_DISPOSED,
                      CTS_STATE_RELEASED };

enum cts_sym_kind {
  CTS_SYM_MANAGER = 1,
  CTS_SYM_TENSOR = 2,
  CTS_SYM_SCOPE = 4,
  CTS_SYM_COMPOSITE = 8,
  CTS_SYM_DLPACK = 16, /* a managed tensor the judge holds or handed over */
  CTS_SYM_GRAPH = 32,
  CTS_SYM_NODE = 64,   /* a graph tensor */
  CTS_SYM_RESOURCE = CTS_SYM_TENSOR | CTS_SYM_COMPOSITE,
  CTS_SYM_ANY = 15     /* bogus: any kind but a DLPack tensor */
};

/* Where a judge-made DLPack tensor says its memory is. */
enum cts_dl_where { CTS_DL_WHERE_HOST, CTS_DL_WHERE_CPU, CTS_DL_WHERE_CUDA_HOST,
                    CTS_DL_WHERE_CUDA_MANAGED, CTS_DL_WHERE_OPENCL, CTS_DL_WHERE_VULKAN };

/* The options of `export` and `make` (cases/README.md, DLPack). */
struct cts_dl_opts {
  int form;              /* enum tsm_dlpack_form */
  uint32_t request;      /* export: enum tsm_dlpack_request bits */
  int fill;              /* make: CTS_ZEROS, CTS_ARANGE or CTS_VALUES (st->vals) */
  int no_strides;        /* NULL strides */
  int n_strides;         /* given strides, or 0 for compact ones */
  int64_t strides[TSM_MAX_DIMS];
  int64_t offset;        /* byte_offset */
  int64_t major, minor;
  int readonly, copied, no_deleter, null_data;
  int where;             /* enum cts_dl_where */
  int code, bits, lanes; /* dtype; 0 bits: the statement's f32 or i32 */
};

/* Symbols 0 and 1 are predefined. */
#define CTS_SYM_ROOT 0
#define CTS_SYM_BOGUS 1

struct cts_symbol {
  char *name;
  int kind; /* enum cts_sym_kind */
};

struct cts_block {
  struct cts_stmt *items;
  size_t n, cap;
};

struct cts_stmt {
  int kind; /* enum cts_stmt_kind */
  int line, col;
  char *text;     /* the source line, trimmed, for messages */
  int dst;        /* symbol bound, or -1 */
  int a, b;       /* operand symbols, or -1 */
  int out;        /* CTS_OP: explicit output manager symbol, or -1 */
  int sub;        /* CTS_CREATE: enum cts_create_kind; CTS_OP: enum tsm_op */
  int dtype;      /* enum tsm_dtype */
  int ndim;
  int64_t shape[TSM_MAX_DIMS];
  double *vals;   /* CTS_CREATE values / CTS_EXPECT_VALUES */
  size_t nvals;
  double scalar;  /* CTS_CREATE full */
  int64_t count;  /* repeat count, expected count/children/bytes */
  int flag;       /* see the kinds above */
  int err;        /* CTS_EXPECT_ERROR: the expected negative code */
  struct cts_stmt *inner; /* CTS_EXPECT_ERROR */
  struct cts_block body;  /* CTS_REPEAT, CTS_WRAPPED, CTS_THREAD, CTS_PARALLEL */
  int *list;              /* symbols: keep list, pack sequences, list items */
  size_t n_list;
  int64_t stats[CTS_N_STATS]; /* CTS_EXPECT_STATS */
  unsigned stats_mask;        /* 1u << enum cts_stat for each counter given */
  struct cts_dl_opts *dl;     /* CTS_DL_EXPORT, CTS_DL_MAKE */
};

struct cts_case {
  char *path;        /* as given on the command line */
  char *name;        /* relative to the cases root: the stable id */
  char *description;
  char *origin;
  char **clauses;
  size_t n_clauses;
  int *clause_lines, *clause_cols;
  char **requires;   /* family names */
  size_t n_requires;
  char **devices;    /* "any" or name prefixes */
  size_t n_devices;
  char **tags;
  size_t n_tags;
  int timeout_ms;    /* 0: default */
  uint32_t ops_used; /* 1u << enum tsm_op */
  uint32_t families; /* enum tsm_cap bits of requires: and of the statements used */
  char **threads;    /* thread names; thread 0 is the main thread, named "main" */
  size_t n_threads, cap_threads;
  int uses_dump;
  int uses_wrapped;  /* runs code inside the adapter's call: no fault injection */
  struct cts_symbol *syms;
  size_t n_syms, cap_syms;
  struct cts_block body;
};

/* A parse error: the first one found. */
struct cts_parse_error {
  int line, col;
  char msg[256];
};

/* Parses `text` (the contents of `path`). spec may be NULL (clause ids are then only
 * checked for their grammar). RETURN a case the caller frees with cts_case_free, or
 * NULL with *err filled. */
struct cts_case *cts_case_parse(const char *path, const char *text,
                                const struct cts_spec *spec,
                                struct cts_parse_error *err);
struct cts_case *cts_case_load(const char *path, const struct cts_spec *spec,
                               struct cts_parse_error *err);
void cts_case_free(struct cts_case *c);

int cts_case_has_tag(const struct cts_case *c, const char *tag);
/* Maps a family name of `requires:` to its capability bit; 0 if unknown. */
uint32_t cts_family_cap(const char *family);
const char *cts_err_name(int code); /* "CAPPED" for TSM_ECAPPED; "OK"; "?" */
const char *cts_op_name(int op);

#endif
