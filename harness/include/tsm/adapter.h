/*
 * harness/include/tsm/adapter.h: the tsm-cts adapter ABI (spec/adapter.md, ABI.*).
 *
 * An implementation under test is a shared object that exports one symbol,
 * TSM_ADAPTER_ENTRY_NAME, returning a pointer to a static const struct tsm_adapter.
 * The judge (tsm-cts) dlopen()s it, checks abi_major and struct_size, and drives it
 * only through the slots below. Handles are opaque 64-bit numbers chosen by the
 * adapter; 0 is never a valid handle and means "none" where a slot reports one.
 *
 * Versions with the same abi_major are ABI stable: new slots are only appended and
 * raise abi_minor; any reorder or change of meaning raises abi_major. The judge reads
 * a slot only if it lies inside the adapter's struct_size.
 *
 * Every slot returns 0 (TSM_OK) or a negative code from TSM_ERRNO_MAP. A slot that
 * fails leaves its OUT parameters untouched and the implementation's state unchanged
 * (spec ERR.ATOMIC.1).
 */
#ifndef TSM_ADAPTER_H
#define TSM_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version: these two lines are its only source. spec/adapter.md states it and
 * has a section per minor, as this header does; harness/tests/check_versions.sh fails
 * when they disagree. */
#define TSM_ADAPTER_ABI_MAJOR 1
#define TSM_ADAPTER_ABI_MINOR 6
#define TSM_ADAPTER_ENTRY_NAME "tsm_adapter_entry"

/* The error codes of spec/errors.md. The case language names them without the E. */
#define TSM_ERRNO_MAP(XX)                                                  \
  XX(EINVAL, -1, "invalid argument")                                       \
  XX(ENOTSUP, -2, "not supported by this implementation")                  \
  XX(ENOMEM, -3, "out of memory")                                          \
  XX(ECLOSED, -4, "manager is closed")                                     \
  XX(ECAPPED, -5, "manager is capped for addition of resources")           \
  XX(ERELEASED, -6, "resource has been released")                          \
  XX(EROOT, -7, "operation not allowed on the root manager")               \
  XX(ESHAPE, -8, "shape mismatch")                                         \
  XX(EDTYPE, -9, "dtype mismatch")                                         \
  XX(EDEVICE, -10, "device mismatch or device unavailable")                \
  XX(ERANGE, -11, "index out of range")                                    \
  XX(EDISPOSED, -12, "scope has been disposed")                          \
  XX(EVERSION, -13, "unsupported DLPack major version")                     \
  XX(EDLPACK, -14, "malformed or unsupported DLPack tensor")              \
  XX(ESTALE, -15, "the graph's plan is stale")

enum tsm_errno {
  TSM_OK = 0,
#define TSM__ERRNO_ENUM(name, value, text) TSM_##name = value,
  TSM_ERRNO_MAP(TSM__ERRNO_ENUM)
#undef TSM__ERRNO_ENUM
  TSM_ERRNO_MIN = -15
};

typedef uint64_t tsm_handle;
#define TSM_NONE ((tsm_handle)0)

/* Capability bits: one per family. A case whose `requires:` names a family the
 * adapter lacks is reported NotSupported, never Fail (spec ABI.CAP.1). */
enum tsm_cap {
  TSM_CAP_MANAGERS = 1u << 0,    /* spec/managers.md */
  TSM_CAP_SCOPES = 1u << 1,      /* spec/scopes.md, SCOPE.* (ABI 1.1 slots) */
  TSM_CAP_COMPOSITES = 1u << 2,  /* spec/scopes.md, COMP.* (ABI 1.1 slots) */
  TSM_CAP_DLPACK_C = 1u << 3,    /* spec/dlpack.md, C ABI (ABI 1.2 slots) */
  TSM_CAP_DLPACK_PY = 1u << 4,   /* spec/dlpack.md, Python capsules (harness/python) */
  TSM_CAP_GRAPHS = 1u << 5,      /* spec/graphs.md, GRAPH.* (ABI 1.3 slots) */
  TSM_CAP_THREADS = 1u << 6      /* slots may be called from several threads */
};

/* Element types (MGR.DTYPE.1): each is DLPack's (code, bits, lanes = 1) of its name.
 * Bit (1u << dtype) of tsm_adapter.dtypes says the adapter holds it (ABI 1.5). */
enum tsm_dtype {
  TSM_F32 = 1, TSM_I32 = 2,
  /* ABI 1.5 */
  TSM_F64 = 3, TSM_F16 = 4, TSM_BF16 = 5, TSM_I8 = 6, TSM_I16 = 7, TSM_I64 = 8,
  TSM_U8 = 9, TSM_U16 = 10, TSM_U32 = 11, TSM_U64 = 12, TSM_BOOL = 13
};
#define TSM_DTYPE_LAST TSM_BOOL

/* Operations of the `op` slot. Bit (1u << op) of tsm_adapter.ops says it is offered. */
enum tsm_op {
  TSM_OP_ADD = 1,     /* a + b, same shape and dtype */
  TSM_OP_SUB = 2,     /* a - b */
  TSM_OP_MUL = 3,     /* a * b, elementwise */
  TSM_OP_SUM = 4,     /* sum of all elements, 0-d result of a's dtype */
  TSM_OP_GATHER = 5,  /* rows of 2-d table a at 1-d i32 indices b: shape [n, cols] */
  TSM_OP_RESHAPE = 6, /* view of a with the shape in params; shares a's storage */
  TSM_OP_MATMUL = 7,  /* 2-d [m,k] x [k,n] -> [m,n], f32 */
  /* graph-only operations (GRAPH.OP.1) */
  TSM_OP_TRANSPOSE = 8, /* 2-d [m,n] -> [n,m] */
  TSM_OP_DIAG = 9,      /* 1-d [k] -> [k,k] with the vector on the diagonal */
  TSM_OP_SVD = 10       /* [m,n] -> U [m,k], S [k], Vt [k,n], k = min(m,n): three results */
};

#define TSM_MAX_DIMS 8

struct tsm_device {
  const char *name;          /* "cpu", "cuda:0"; not owned by the caller */
  int available;             /* 0: listed but unusable here; cases report NotSupported */
  const char *unavailable_reason; /* why, when !available; not owned by the caller */
};

/* Manager state bits of tsm_mgr_info.state. */
enum tsm_mgr_state { TSM_MGR_CLOSED = 1u << 0, TSM_MGR_CAPPED = 1u << 1 };

struct tsm_mgr_info {
  uint32_t state;     /* TSM_MGR_* bits; 0 = open and uncapped */
  int is_root;        /* 1 for the session's root manager */
  tsm_handle parent;  /* TSM_NONE for the root and for a closed manager */
  uint64_t live;      /* resources this manager holds now, owned or borrowed (MGR.COUNT.1) */
  uint64_t children;  /* open child managers (MGR.COUNT.2) */
};

struct tsm_res_info {
  int valid;          /* 0 once released; the other fields are then 0 */
  int borrowed;       /* 1 while held through a temporary attach (MGR.TEMP) */
  tsm_handle owner;   /* the holder; TSM_NONE when detached */
  tsm_handle lender;  /* where a borrowed resource goes back; TSM_NONE when none */
  uint64_t nbytes;    /* bytes of its elements */
};

struct tsm_tensor_desc {
  int dtype;                     /* enum tsm_dtype */
  int ndim;                      /* 0..TSM_MAX_DIMS; 0 is a scalar */
  int64_t shape[TSM_MAX_DIMS];
};

/* ---- ABI 1.1 types ---------------------------------------------------------- */

enum tsm_kind { TSM_KIND_TENSOR = 0, TSM_KIND_COMPOSITE = 1 };

enum tsm_component {
  TSM_COMPONENT_DATA = 0,
  TSM_COMPONENT_BATCH_SIZES = 1,
  TSM_COMPONENT_SORTED_INDICES = 2,
  TSM_COMPONENT_UNSORTED_INDICES = 3
};

struct tsm_scope_info {
  int disposed;       /* 1 once disposed */
  tsm_handle outer;   /* the next outer open scope of its thread; TSM_NONE if none or disposed */
  uint64_t members;   /* live resources it owns (SCOPE.REG.2); 0 once disposed */
};

struct tsm_scope_stats {   /* SCOPE.STAT.1 */
  uint64_t created_in_scope, created_outside;
  uint64_t disposed_in_scope, disposed_outside;
  uint64_t attached, detached;
  int64_t live;
};

struct tsm_res_links {
  int kind;             /* enum tsm_kind */
  tsm_handle scope;     /* owning scope, TSM_NONE if none (always none for a component) */
  tsm_handle composite; /* the composite a component belongs to, else TSM_NONE */
};

/* ---- ABI 1.2 types ---------------------------------------------------------- */

/* Which managed struct a void* of the DLPack slots points at. */
enum tsm_dlpack_form {
  TSM_DLPACK_LEGACY = 0,    /* DLManagedTensor (DLPack 0.x, Debian's libdlpack-dev) */
  TSM_DLPACK_VERSIONED = 1  /* DLManagedTensorVersioned (DLPack 1.x) */
};

/* What an export is asked for (DLP.EXPORT.5). */
enum tsm_dlpack_request { TSM_DLPACK_COPY = 1u << 0, TSM_DLPACK_READ_ONLY = 1u << 1 };

/* ---- ABI 1.3 types ---------------------------------------------------------- */

/* Graph tensor flags (GRAPH.FLAG.1). */
enum tsm_graph_flag { TSM_GRAPH_INPUT = 1u << 0, TSM_GRAPH_OUTPUT = 1u << 1,
                      TSM_GRAPH_PARAM = 1u << 2 };

/* How graph_plan places tensors: the planner's reuse, or a buffer each (the unplanned
 * evaluation the judge compares with, GRAPH.OUT.1). */
enum tsm_plan_mode { TSM_PLAN_REUSE = 0, TSM_PLAN_NONE = 1 };

/* Where a graph tensor lives under the current plan (GRAPH.PLAN.3). */
struct tsm_graph_place {
  int in_graph;        /* reachable from an expanded tensor */
  int placed;          /* has planner memory: not a view, not external */
  int64_t order;       /* execution index of a node; -1 for a leaf */
  uint32_t buffer;     /* which planner buffer */
  uint64_t offset;     /* byte offset in that buffer */
  uint64_t nbytes;
  tsm_handle root;     /* a view's root; the tensor itself otherwise */
};

struct tsm_graph_info {
  int released;        /* its manager closed or graph_release ran (GRAPH.MGR.1) */
  int planned;         /* a plan exists */
  int stale;           /* flags or nodes changed since (GRAPH.PLAN.1) */
  uint64_t planned_bytes; /* bytes of the current plan's buffers */
};

/* One instance per adapter, static const. Slots marked (optional) may be NULL; the
 * judge then reports the cases that need them NotSupported. `s` is the session
 * pointer returned by session_open, owned by the adapter. */
struct tsm_adapter {
  uint32_t abi_major;      /* TSM_ADAPTER_ABI_MAJOR the adapter was built against */
  uint32_t abi_minor;      /* TSM_ADAPTER_ABI_MINOR the adapter was built against */
  uint32_t struct_size;    /* sizeof(struct tsm_adapter) the adapter was built with */
  uint32_t caps;           /* enum tsm_cap bits */
  uint32_t ops;            /* 1u << enum tsm_op for each op offered */
  const char *name;        /* short name, used to find the expectations file */
  const char *version;     /* free text */

  /* Devices: *out points at n entries owned by the adapter; returns n >= 1. Index i
   * of this list is the device_index of session_open and live_bytes. */
  int (*device_list)(const struct tsm_device **out);

  /* A session is one isolated world with its own root manager on one device. The
   * judge opens one per case run; session_close releases everything still live. */
  int (*session_open)(int device_index, void **s_out);
  void (*session_close)(void *s);

  /* Managers (MGR.*). */
  int (*mgr_root)(void *s, tsm_handle *out);
  int (*mgr_new_sub)(void *s, tsm_handle parent, tsm_handle *out);
  int (*mgr_sub_of)(void *s, tsm_handle resource, tsm_handle *out);
  int (*mgr_close)(void *s, tsm_handle m);
  int (*mgr_cap)(void *s, tsm_handle m);
  int (*mgr_info)(void *s, tsm_handle m, struct tsm_mgr_info *out);
  /* (optional) m's subtree into buf (NUL-terminated, truncated to cap): a line per open
   * manager with `mgr 0x<handle> ... live=<N> children=<M>` (MGR.DUMP.1), which the
   * judge reads. */
  int (*mgr_dump)(void *s, tsm_handle m, char *buf, size_t cap);

  /* Tensors. data: IN, host memory of desc's element count, or NULL for zeros; not
   * retained. The new tensor is owned by m (MGR.CREATE). */
  int (*tensor_new)(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                    const void *data, tsm_handle *out);
  int (*tensor_desc)(void *s, tsm_handle t, struct tsm_tensor_desc *out);
  /* Copies t's elements, row-major, to host dst of cap bytes. */
  int (*tensor_read)(void *s, tsm_handle t, void *dst, size_t cap);
  /* inputs: n handles; params: the target shape for RESHAPE, else NULL/0; out_mgr:
   * TSM_NONE for the default owner rule (MGR.OP.1), else the explicit owner. */
  int (*op)(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params,
            int n_params, tsm_handle out_mgr, tsm_handle *out);

  /* Resources (MGR.ATTACH, MGR.TEMP, MGR.RET, MGR.REL). */
  int (*res_attach)(void *s, tsm_handle r, tsm_handle m);
  int (*res_detach)(void *s, tsm_handle r);
  int (*res_temp_attach)(void *s, tsm_handle r, tsm_handle m);
  int (*res_ret)(void *s, tsm_handle m, tsm_handle r); /* r to m's parent */
  int (*res_release)(void *s, tsm_handle r);
  int (*res_info)(void *s, tsm_handle r, struct tsm_res_info *out);

  /* Bytes of live storage on the session's device (MGR.COUNT.4). */
  int (*live_bytes)(void *s, uint64_t *out);

  /* ---- ABI 1.1: dispose scopes (TSM_CAP_SCOPES, spec/scopes.md) ---------------
   * Scope slots act on the calling thread's chain where the spec says "current"
   * (open, current, registration of new resources, statistics); the others name
   * their scope and may be called from any thread (SCOPE.THREAD.2). */
  int (*scope_open)(void *s, tsm_handle *out);            /* SCOPE.STACK.1 */
  int (*scope_dispose)(void *s, tsm_handle sc);           /* SCOPE.DISP.1-3 */
  int (*scope_move_to_outer)(void *s, tsm_handle sc, tsm_handle r);  /* SCOPE.MOVE.1 */
  /* other: an open scope, or TSM_NONE to detach (SCOPE.MOVE.2) */
  int (*scope_move_to_other)(void *s, tsm_handle sc, tsm_handle r, tsm_handle other);
  int (*scope_detach)(void *s, tsm_handle sc, tsm_handle r);         /* SCOPE.DETACH.1 */
  int (*scope_attach)(void *s, tsm_handle sc, tsm_handle r);         /* SCOPE.ATTACH.1 */
  /* Releases every member of sc not among the n_keep handles of keep (IN, not
   * retained; NULL when n_keep is 0): SCOPE.ALL.1-2. */
  int (*scope_dispose_all)(void *s, tsm_handle sc, const tsm_handle *keep, int n_keep);
  int (*scope_handover)(void *s, tsm_handle sc);          /* SCOPE.HAND.1 */
  /* Opens a scope on the calling thread, calls fn(arg, &result) there, moves result
   * out and disposes the scope (SCOPE.WRAP.1). fn calls back into the adapter, so
   * the implementation must not hold a lock across it. *out: the result. */
  int (*scope_wrapped)(void *s, int (*fn)(void *arg, tsm_handle *result), void *arg,
                       tsm_handle *out);
  int (*scope_current)(void *s, tsm_handle *out);         /* TSM_NONE when none */
  int (*scope_info)(void *s, tsm_handle sc, struct tsm_scope_info *out);
  /* The calling thread's statistics of one kind (enum tsm_kind), SCOPE.STAT.1. */
  int (*thread_stats)(void *s, int kind, struct tsm_scope_stats *out);
  /* A resource's scope and composite links; works for released ones (all none). */
  int (*res_links)(void *s, tsm_handle r, struct tsm_res_links *out);

  /* ---- ABI 1.1: composites (TSM_CAP_COMPOSITES, spec/scopes.md COMP.*) ------- */
  int (*composite_pack)(void *s, const tsm_handle *seqs, int n, int enforce_sorted,
                        tsm_handle *out);                 /* COMP.PACK.1-2 */
  int (*composite_list)(void *s, const tsm_handle *items, int n, tsm_handle *out);
  /* Component `index` of c (TSM_COMPONENT_* for a packed sequence, the position for
   * a list); *out = TSM_NONE for an absent one; EINVAL past the end. */
  int (*composite_component)(void *s, tsm_handle c, int index, tsm_handle *out);

  /* ---- ABI 1.2: DLPack C ABI (TSM_CAP_DLPACK_C, spec/dlpack.md) ---------------
   * *out: a DLManagedTensor* or DLManagedTensorVersioned* (enum tsm_dlpack_form),
   * RETURN to the caller, who owns it and runs its deleter exactly once (DLP.DEL.1). */
  int (*dlpack_export)(void *s, tsm_handle r, int form, uint32_t request, void **out);
  /* managed: IN, consumed whatever the result (DLP.IMPORT.2); the new tensor is held
   * by m (DLP.MGR.1). */
  int (*dlpack_import)(void *s, void *managed, int form, tsm_handle m, tsm_handle *out);

  /* ---- ABI 1.3: graphs (TSM_CAP_GRAPHS, spec/graphs.md) -----------------------
   * Graph tensors are handles of their own kind; they are no manager's resources. */
  int (*graph_new)(void *s, tsm_handle mgr, tsm_handle *out);       /* GRAPH.MGR.1 */
  /* A leaf the planner places; its data is written after planning (graph_write). */
  int (*graph_leaf)(void *s, tsm_handle g, const struct tsm_tensor_desc *d, tsm_handle *out);
  /* An existing live tensor as a leaf the planner never touches (GRAPH.EXT.1). */
  int (*graph_external)(void *s, tsm_handle g, tsm_handle tensor, tsm_handle *out);
  /* outs: n_outs results (3 for TSM_OP_SVD, else 1); params: RESHAPE's shape. */
  int (*graph_op)(void *s, tsm_handle g, int op, const tsm_handle *srcs, int n,
                  const int64_t *params, int n_params, tsm_handle *outs, int n_outs);
  int (*graph_flag)(void *s, tsm_handle t, uint32_t flags);        /* GRAPH.FLAG.1 */
  int (*graph_expand)(void *s, tsm_handle g, tsm_handle t);        /* GRAPH.BUILD.1 */
  int (*graph_plan)(void *s, tsm_handle g, int mode);              /* enum tsm_plan_mode */
  /* The elements of a planned leaf, row-major, before a compute. */
  int (*graph_write)(void *s, tsm_handle t, const void *data, size_t nbytes);
  int (*graph_compute)(void *s, tsm_handle g);                     /* GRAPH.PLAN.1 */
  int (*graph_read)(void *s, tsm_handle t, void *dst, size_t cap);
  int (*graph_place)(void *s, tsm_handle t, struct tsm_graph_place *out);
  int (*graph_info)(void *s, tsm_handle g, struct tsm_graph_info *out);
  int (*graph_release)(void *s, tsm_handle g);

  /* ---- ABI 1.4: allocation-failure injection (optional; spec/errors.md ERR.NOMEM) --
   * arm: TSM_ALLOC_QUERY leaves the countdown as it is; 0 disarms; k > 0 makes the
   * k-th allocation from now fail. *left: the countdown after the call (0 once the
   * failure has fired or when disarmed). */
  int (*debug_alloc_fail)(void *s, uint64_t arm, uint64_t *left);

  /* ---- ABI 1.5: dtypes (spec/managers.md MGR.DTYPE.1) ----------------------------
   * 1u << enum tsm_dtype for each dtype the adapter's tensors hold. 0, or a struct
   * that ends before this field: f32 and i32 (what ABI 1.0 to 1.4 had). */
  uint32_t dtypes;

  /* ---- ABI 1.6: adoption (optional; spec/managers.md MGR.ADOPT.1) ---------------- */
  /* r's resource under a new handle *out; r becomes released, nothing counted. */
  int (*res_adopt)(void *s, tsm_handle r, tsm_handle *out);
};

#define TSM_ALLOC_QUERY UINT64_MAX

typedef const struct tsm_adapter *(*tsm_adapter_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* TSM_ADAPTER_H */
