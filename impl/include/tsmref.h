/*
 * impl/include/tsmref.h: public C API of libtsmref, the tsm-cts reference
 * implementation of scoped tensor memory (spec/managers.md, spec/scopes.md,
 * spec/errors.md, spec/devices.md).
 *
 * Usable as a plain C library: this header needs nothing but the C11 standard headers.
 *
 * Model. A context (tsmr_ctx) is one session on one device ("cpu" or "cuda:0"). It owns
 * a root manager; managers nest; tensors are resources held by exactly one manager or
 * detached. Every object is named by a 64-bit handle (tsmr_handle, 0 = none) that keeps
 * its meaning for the context's life: a released tensor's handle answers
 * TSMR_ERELEASED forever, a closed manager's handle reports a closed manager.
 *
 * Errors. Every function returning int returns 0 (TSMR_OK) or one negative code from
 * TSMR_ERRNO_MAP (same names and values as spec/errors.md). A call that fails leaves its
 * OUT parameters untouched and changes nothing (ERR.ATOMIC.1). No caller error aborts.
 *
 * Threads (SCOPE.THREAD.1-3). Every function may be called from any thread, also
 * concurrently on the same context: each context has one mutex that every call holds
 * for its duration (tsmr_scope_wrapped releases it while its callback runs), so calls
 * on one context run one after the other. Scope chains (the current scope) and the
 * statistics are per (context, thread). tsmr_ctx_close must not race with any other
 * call on that context. Link with -pthread.
 *
 * Scopes and composites (spec/scopes.md). Resources made while a thread has a current
 * scope become its members; disposing the scope releases them. Composites (packed
 * sequences, tensor lists) are resources whose components are tensors that live,
 * move and die with them. Scope handles keep their meaning too: a disposed scope's
 * handle reports disposed, and every operation but dispose and queries on it answers
 * TSMR_EDISPOSED.
 *
 * DLPack (spec/dlpack.md). tsmr_dlpack_export/import exchange tensors through the
 * DLPack C ABI in both forms; the managed structs travel as void * (this header needs
 * no DLPack header).
 */
#ifndef TSMREF_H
#define TSMREF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the exported API; the library is built with hidden visibility otherwise. */
#if defined(__GNUC__) && !defined(TSMREF_STATIC_BUILD)
#define TSMR_API __attribute__((visibility("default")))
#else
#define TSMR_API
#endif

/* The library version: these three lines are its only source (the build reads them
 * for tsmref.pc; harness/tests/check_versions.sh checks the two agree). */
#define TSMREF_VERSION_MAJOR 1
#define TSMREF_VERSION_MINOR 6
#define TSMREF_VERSION_PATCH 0
#define TSMREF_VERSION_STR_(x) #x
#define TSMREF_VERSION_JOIN_(a, b, c) TSMREF_VERSION_STR_(a) "." TSMREF_VERSION_STR_(b) "." TSMREF_VERSION_STR_(c)
#define TSMREF_VERSION_STRING \
  TSMREF_VERSION_JOIN_(TSMREF_VERSION_MAJOR, TSMREF_VERSION_MINOR, TSMREF_VERSION_PATCH)

/* The error codes of spec/errors.md, same names and values. */
#define TSMR_ERRNO_MAP(XX)                                                 \
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
  XX(EDISPOSED, -12, "scope has been disposed")                           \
  XX(EVERSION, -13, "unsupported DLPack major version")                    \
  XX(EDLPACK, -14, "malformed or unsupported DLPack tensor")                  \
  XX(ESTALE, -15, "the graph's plan is stale")

enum tsmr_errno {
  TSMR_OK = 0,
#define TSMR__ERRNO_ENUM(name, value, text) TSMR_##name = value,
  TSMR_ERRNO_MAP(TSMR__ERRNO_ENUM)
#undef TSMR__ERRNO_ENUM
  TSMR_ERRNO_MIN = -15
};

/* RETURN: static text for code (never NULL, not owned by the caller); unknown codes
 * give "unknown error". */
TSMR_API const char *tsmr_strerror(int code);
/* RETURN: static name such as "ECAPPED", "OK", or "UNKNOWN"; not owned by the caller. */
TSMR_API const char *tsmr_err_name(int code);

typedef uint64_t tsmr_handle;
#define TSMR_NONE ((tsmr_handle)0)

/* One session on one device; opaque. Made by tsmr_ctx_open, freed by tsmr_ctx_close. */
typedef struct tsmr_ctx tsmr_ctx;

/* Element types: each is DLPack's (code, bits, lanes = 1) of its name (spec/managers.md
 * MGR.DTYPE.1). add, sub, mul and sum take F32 and I32, matmul F32 (MGR.OP.10). */
enum tsmr_dtype {
  TSMR_F32 = 1, TSMR_I32 = 2, TSMR_F64 = 3, TSMR_F16 = 4, TSMR_BF16 = 5, TSMR_I8 = 6,
  TSMR_I16 = 7, TSMR_I64 = 8, TSMR_U8 = 9, TSMR_U16 = 10, TSMR_U32 = 11, TSMR_U64 = 12,
  TSMR_BOOL = 13
};

/* Operations of tsmr_op (same values as the adapter ABI's tsm_op). */
enum tsmr_op {
  TSMR_OP_ADD = 1,     /* a + b, equal shapes and dtypes */
  TSMR_OP_SUB = 2,     /* a - b */
  TSMR_OP_MUL = 3,     /* a * b, elementwise */
  TSMR_OP_SUM = 4,     /* sum of all elements, 0-d result of a's dtype */
  TSMR_OP_GATHER = 5,  /* rows of 2-d table a at 1-d i32 indices b: [n, cols] */
  TSMR_OP_RESHAPE = 6, /* view of a in the shape given by params; shares storage */
  TSMR_OP_MATMUL = 7,  /* [m,k] x [k,n] -> [m,n], f32 only */
  /* graph-only operations (tsmr_graph_op, GRAPH.OP.1); tsmr_op refuses them */
  TSMR_OP_TRANSPOSE = 8, /* 2-d [m,n] -> [n,m], a node of its own (not a view) */
  TSMR_OP_DIAG = 9,      /* 1-d [k] -> [k,k], the vector on the diagonal, zeros elsewhere */
  TSMR_OP_SVD = 10       /* f32 [m,n] -> U [m,k], S [k], Vt [k,n], k = min(m,n) */
};

#define TSMR_MAX_DIMS 8

/* Manager state bits of tsmr_mgr_info.state. A closed manager that was capped before
 * closing reports both bits (cap is permanent, MGR.CAP.3). */
enum tsmr_mgr_state { TSMR_MGR_CLOSED = 1u << 0, TSMR_MGR_CAPPED = 1u << 1 };

struct tsmr_mgr_info {
  uint32_t state;      /* TSMR_MGR_* bits; 0 = open and uncapped */
  int is_root;         /* 1 for the context's root manager */
  tsmr_handle parent;  /* TSMR_NONE for the root and for a closed manager */
  uint64_t live;       /* resources held now, owned or borrowed (MGR.COUNT.1) */
  uint64_t children;   /* open child managers (MGR.COUNT.2) */
};

struct tsmr_res_info {
  int valid;           /* 0 once released; the other fields are then 0 */
  int borrowed;        /* 1 while held through a temporary attach */
  tsmr_handle owner;   /* the holder; TSMR_NONE when detached */
  tsmr_handle lender;  /* where a borrowed resource goes back; TSMR_NONE when none */
  uint64_t nbytes;     /* bytes of its elements */
};

struct tsmr_tensor_desc {
  int dtype;                      /* enum tsmr_dtype */
  int ndim;                       /* 0..TSMR_MAX_DIMS; 0 is a scalar */
  int64_t shape[TSMR_MAX_DIMS];   /* extents >= 0; entries past ndim are ignored */
};

/* ---- Devices (DEV.*) ---------------------------------------------------------- */

/* RETURN: number of listed devices (>= 1). Index 0 is "cpu". "cuda:0" is listed when
 * the library was built with the CUDA backend (libtsmref_cuda.so); it is available
 * only if that library loads and reports at least one device. */
TSMR_API int tsmr_device_count(void);
/* Describes device i. name, available, reason: OUT (each may be NULL); the strings are
 * static, owned by the library, valid until process exit. reason is "" when available.
 * Returns TSMR_EINVAL for i out of range. */
TSMR_API int tsmr_device_get(int i, const char **name, int *available,
                             const char **reason);

/* ---- Contexts (ABI.SESSION.1) --------------------------------------------------- */

/* device: IN, "cpu" or "cuda:0", not retained. out: OUT, the new context, freed by
 * tsmr_ctx_close. Unknown name: TSMR_EINVAL; listed but unavailable: TSMR_EDEVICE. */
TSMR_API int tsmr_ctx_open(const char *device, tsmr_ctx **out);
/* Releases every resource and manager of ctx and frees ctx. ctx: IN, freed here; NULL
 * is a no-op. */
TSMR_API void tsmr_ctx_close(tsmr_ctx *ctx);
/* name: RETURN the context's device name, static, not owned by the caller. */
TSMR_API const char *tsmr_ctx_device(const tsmr_ctx *ctx);
/* out: OUT, bytes of live storage on the context's device (MGR.COUNT.4, DEV.BYTES.1). */
TSMR_API int tsmr_live_bytes(tsmr_ctx *ctx, uint64_t *out);

/* ---- Managers (MGR.ROOT, SUB, CAP, CLOSE, COUNT) -------------------------------- */

/* out: OUT, the root manager's handle. */
TSMR_API int tsmr_mgr_root(tsmr_ctx *ctx, tsmr_handle *out);
/* out: OUT, a new open, uncapped sub-manager of parent (MGR.SUB.1-3). */
TSMR_API int tsmr_mgr_new_sub(tsmr_ctx *ctx, tsmr_handle parent, tsmr_handle *out);
/* out: OUT, a new sub-manager of resource r's holder, or of the root when r is
 * detached (MGR.SUB.4). */
TSMR_API int tsmr_mgr_sub_of(tsmr_ctx *ctx, tsmr_handle r, tsmr_handle *out);
/* Closes m and its subtree (MGR.CLOSE.1-6); closing a closed manager is a no-op. */
TSMR_API int tsmr_mgr_close(tsmr_ctx *ctx, tsmr_handle m);
/* Caps m: it refuses additions from now on (MGR.CAP.1-4). Idempotent. */
TSMR_API int tsmr_mgr_cap(tsmr_ctx *ctx, tsmr_handle m);
/* out: OUT, m's state; succeeds for every manager handle ever issued (ABI.INFO.1). */
TSMR_API int tsmr_mgr_info(tsmr_ctx *ctx, tsmr_handle m, struct tsmr_mgr_info *out);
/* Writes a text tree of m's subtree with live counts (MGR.COUNT.3) into buf: OUT,
 * caller-owned, cap bytes, always NUL-terminated when cap > 0, truncated to fit. */
TSMR_API int tsmr_mgr_dump(tsmr_ctx *ctx, tsmr_handle m, char *buf, size_t cap);

/* ---- Tensors (MGR.CREATE, MGR.OP) ----------------------------------------------- */

/* desc: IN, not retained. data: IN, host memory holding desc's element count of
 * elements, row-major, or NULL for zeros; not retained. out: OUT, a new tensor owned
 * by m (MGR.CREATE.1-4). */
TSMR_API int tsmr_tensor_new(tsmr_ctx *ctx, tsmr_handle m,
                             const struct tsmr_tensor_desc *desc, const void *data,
                             tsmr_handle *out);
/* out: OUT, t's dtype and shape. */
TSMR_API int tsmr_tensor_desc(tsmr_ctx *ctx, tsmr_handle t, struct tsmr_tensor_desc *out);
/* Copies t's elements, row-major, to dst: OUT, caller-owned host memory of cap bytes;
 * cap smaller than t's size is TSMR_EINVAL. */
TSMR_API int tsmr_tensor_read(tsmr_ctx *ctx, tsmr_handle t, void *dst, size_t cap);
/* Runs op (enum tsmr_op). inputs: IN, n handles (2 for add/sub/mul/gather/matmul, 1 for
 * sum/reshape), not retained. params: IN, the target shape for RESHAPE (n_params
 * extents), else NULL/0; not retained. out_mgr: TSMR_NONE for the default holder rule
 * (MGR.OP.1/2), else the explicit holder (MGR.OP.3). out: OUT, the result tensor. */
TSMR_API int tsmr_op(tsmr_ctx *ctx, int op, const tsmr_handle *inputs, int n,
                     const int64_t *params, int n_params, tsmr_handle out_mgr,
                     tsmr_handle *out);

/* ---- Resources (MGR.ATTACH, DETACH, TEMP, RET, REL) ----------------------------- */

/* r: moves to m (MGR.ATTACH.1-4). */
TSMR_API int tsmr_res_attach(tsmr_ctx *ctx, tsmr_handle r, tsmr_handle m);
/* r: becomes detached (MGR.DETACH.1-3). */
TSMR_API int tsmr_res_detach(tsmr_ctx *ctx, tsmr_handle r);
/* r: borrowed into m; the previous holder becomes the lender (MGR.TEMP.1-9). */
TSMR_API int tsmr_res_temp_attach(tsmr_ctx *ctx, tsmr_handle r, tsmr_handle m);
/* r: held by m, moves to m's parent (MGR.RET.1-2). */
TSMR_API int tsmr_res_ret(tsmr_ctx *ctx, tsmr_handle m, tsmr_handle r);
/* r: released; releasing a released resource succeeds (MGR.REL.1-2). */
TSMR_API int tsmr_res_release(tsmr_ctx *ctx, tsmr_handle r);
/* out: OUT, a new handle of r's tensor, which keeps its holder, borrows, scope and
 * storage; r: released, nothing counted (MGR.ADOPT.1). A composite or a component is
 * TSMR_EINVAL. */
TSMR_API int tsmr_res_adopt(tsmr_ctx *ctx, tsmr_handle r, tsmr_handle *out);
/* out: OUT, r's state; a released r reports valid = 0 and succeeds (ABI.INFO.1). */
TSMR_API int tsmr_res_info(tsmr_ctx *ctx, tsmr_handle r, struct tsmr_res_info *out);

/* ---- Scopes (SCOPE.*) -------------------------------------------------------------
 * Scope handles are a third handle kind; a resource or manager handle given as a
 * scope (or the reverse) is TSMR_EINVAL. Argument errors come in ERR.ORDER.1's order:
 * TSMR_EINVAL (bad handles; a component, COMP.UNIT.3), TSMR_ERELEASED, TSMR_EDISPOSED.
 * The statistics of each event count on the calling thread (SCOPE.STAT.2). */

/* Resource kinds and statistics kinds (same values as the adapter ABI's tsm_kind). */
enum tsmr_kind { TSMR_KIND_TENSOR = 0, TSMR_KIND_COMPOSITE = 1 };

/* Component indices of a packed sequence (tsmr_component). */
enum tsmr_component_index {
  TSMR_COMPONENT_DATA = 0,             /* f32 [sum of lengths] */
  TSMR_COMPONENT_BATCH_SIZES = 1,      /* i32 [max length] */
  TSMR_COMPONENT_SORTED_INDICES = 2,   /* i32 [n]; absent with enforce_sorted */
  TSMR_COMPONENT_UNSORTED_INDICES = 3  /* i32 [n]; absent with enforce_sorted */
};

struct tsmr_scope_info {
  int disposed;        /* 1 once disposed */
  tsmr_handle outer;   /* next outer open scope of its thread; TSMR_NONE if none/disposed */
  uint64_t members;    /* live resources it owns (SCOPE.REG.2); 0 once disposed */
};

struct tsmr_scope_stats { /* SCOPE.STAT.1, per thread and kind; counters never decrease */
  uint64_t created_in_scope, created_outside;
  uint64_t disposed_in_scope, disposed_outside;
  uint64_t attached, detached;
  int64_t live;        /* created_* - disposed_*; may be negative on a consumer thread */
};

struct tsmr_res_links {
  int kind;              /* enum tsmr_kind */
  tsmr_handle scope;     /* owning scope, TSMR_NONE if none (always for a component) */
  tsmr_handle composite; /* a component's composite, else TSMR_NONE */
};

/* out: OUT, a new scope, now the calling thread's current scope (SCOPE.STACK.1). */
TSMR_API int tsmr_scope_open(tsmr_ctx *ctx, tsmr_handle *out);
/* Releases every member of sc, unlinks sc from its thread's chain wherever it is
 * (the inner scope takes sc's outer, SCOPE.DISP.3) and marks it disposed; from any
 * thread. Disposing a disposed scope succeeds (SCOPE.DISP.2). */
TSMR_API int tsmr_scope_dispose(tsmr_ctx *ctx, tsmr_handle sc);
/* A member r of sc joins sc's outer scope, or no scope when sc has none
 * (SCOPE.MOVE.1). r not a member of sc: nothing happens (SCOPE.MOVE.3). */
TSMR_API int tsmr_scope_move_to_outer(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r);
/* A member r of sc joins the open scope other, or no scope when other is TSMR_NONE;
 * other == sc changes nothing (SCOPE.MOVE.2); a disposed other is TSMR_EDISPOSED. */
TSMR_API int tsmr_scope_move_to_other(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r,
                                      tsmr_handle other);
/* A member r of sc leaves scopes; it stays live (SCOPE.DETACH.1). */
TSMR_API int tsmr_scope_detach(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r);
/* r becomes a member of sc, leaving the scope that owned it (SCOPE.ATTACH.1). */
TSMR_API int tsmr_scope_attach(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r);
/* Releases every member of sc that is not among keep: IN, n_keep resource handles,
 * not retained (NULL when n_keep is 0); items that are not members of sc, released
 * ones included, are ignored. sc stays open (SCOPE.ALL.1-2). */
TSMR_API int tsmr_scope_dispose_all(tsmr_ctx *ctx, tsmr_handle sc,
                                    const tsmr_handle *keep, int n_keep);
/* Detaches every member of sc, then disposes sc (SCOPE.HAND.1). */
TSMR_API int tsmr_scope_handover(tsmr_ctx *ctx, tsmr_handle sc);
/* Opens a scope on the calling thread, calls fn(arg, &result) without holding the
 * context lock (fn may call any tsmr_ function), moves result (TSMR_NONE: no result)
 * to the outer scope or out of scopes, and disposes the scope (SCOPE.WRAP.1). fn's
 * non-zero return is returned after the dispose. out: OUT, the result. */
TSMR_API int tsmr_scope_wrapped(tsmr_ctx *ctx, int (*fn)(void *arg, tsmr_handle *result),
                                void *arg, tsmr_handle *out);
/* out: OUT, the calling thread's current scope, TSMR_NONE when none (SCOPE.STACK.2). */
TSMR_API int tsmr_scope_current(tsmr_ctx *ctx, tsmr_handle *out);
/* out: OUT, sc's state; succeeds for every scope handle ever issued. */
TSMR_API int tsmr_scope_info(tsmr_ctx *ctx, tsmr_handle sc, struct tsmr_scope_info *out);
/* out: OUT, the calling thread's counters of kind (enum tsmr_kind), SCOPE.STAT.1. */
TSMR_API int tsmr_thread_stats(tsmr_ctx *ctx, int kind, struct tsmr_scope_stats *out);
/* out: OUT, r's kind, owning scope and composite; a released r reports all none. */
TSMR_API int tsmr_res_links(tsmr_ctx *ctx, tsmr_handle r, struct tsmr_res_links *out);

/* ---- Composites (COMP.*) -------------------------------------------------------------
 * A composite is one resource (one holder, one scope, one live count entry); its
 * components are tensors that report its holder, lender and borrowed state, belong to
 * no scope, can be read and used as op inputs, and refuse to be moved, borrowed or
 * released alone (TSMR_EINVAL). res_info's nbytes of a composite is the sum of its
 * components'. A composite is not a tensor: tsmr_tensor_desc/read and tsmr_op refuse
 * it with TSMR_EINVAL. */

/* Packs seqs: IN, n >= 1 handles of one-dimensional f32 tensors of lengths >= 1, not
 * retained and not consumed, like PyTorch pack_sequence (COMP.PACK.1-2). Refusals in
 * order: TSMR_EINVAL (n, handles, a composite input, a length 0, with enforce_sorted
 * an increasing length), TSMR_ERELEASED, TSMR_ECLOSED/TSMR_ECAPPED (the holder of
 * seqs[0], the root when it is detached), TSMR_ESHAPE (not one-dimensional),
 * TSMR_EDTYPE (not f32). out: OUT, the packed sequence; its index components are
 * absent with enforce_sorted. */
TSMR_API int tsmr_pack(tsmr_ctx *ctx, const tsmr_handle *seqs, int n, int enforce_sorted,
                       tsmr_handle *out);
/* Makes a tensor list of items: IN, n >= 1 distinct live plain tensors with one
 * holder (or all detached), none borrowed (else TSMR_EINVAL; released ones
 * TSMR_ERELEASED after that), not retained. The items become its components in order,
 * leaving their holder's live count and their scope; the list takes their place in
 * the holder (TSMR_ECAPPED when it is capped) and joins the current scope
 * (COMP.LIST.1-2). out: OUT, the list. */
TSMR_API int tsmr_list(tsmr_ctx *ctx, const tsmr_handle *items, int n, tsmr_handle *out);
/* out: OUT, component index of composite c (enum tsmr_component_index for a packed
 * sequence, the position for a list); TSMR_NONE for an absent one. TSMR_EINVAL past
 * the end or when c is not a composite. */
TSMR_API int tsmr_component(tsmr_ctx *ctx, tsmr_handle c, int index, tsmr_handle *out);

/* ---- DLPack C ABI (DLP.*, spec/dlpack.md) ------------------------------------------
 * The managed structs are passed as void *; form says which one (same values as the
 * adapter ABI's tsm_dlpack_form): DLManagedTensor (legacy, DLPack 0.x) or
 * DLManagedTensorVersioned (DLPack 1.x). Only f32 (kDLFloat, 32 bits) and i32 (kDLInt,
 * 32 bits), lanes 1, are exchanged. */
enum tsmr_dlpack_form { TSMR_DLPACK_LEGACY = 0, TSMR_DLPACK_VERSIONED = 1 };
/* Requests of tsmr_dlpack_export (same values as the adapter ABI's tsm_dlpack_request). */
enum tsmr_dlpack_request { TSMR_DLPACK_COPY = 1u << 0, TSMR_DLPACK_READ_ONLY = 1u << 1 };
/* The DLPack minor version that versioned exports carry (major is always 1). */
TSMR_API int tsmr_dlpack_versioned_minor(void);

/* Exports tensor t. out: OUT, a new managed struct of form, owned by the caller, who
 * runs its deleter exactly once (DLP.DEL.1); the deleter may run on any thread, also
 * after tsmr_ctx_close (the buffer then is freed by the deleter). The export shares t's
 * storage (a reference: it stays valid and counts in live bytes until the deleter runs,
 * DLP.EXPORT.3-4), unless request has TSMR_DLPACK_COPY: then it owns a copy of its own
 * (counted too) and sets IS_COPIED. TSMR_DLPACK_READ_ONLY sets READ_ONLY. Versioned
 * exports carry version {1, tsmr_dlpack_versioned_minor()}, non-NULL strides when
 * ndim > 0, byte_offset 0; legacy ones non-NULL strides too. The device is kDLCPU/0 or
 * kDLCUDA/0. Refusals in order: TSMR_EINVAL (form, unknown request bits, any request
 * on the legacy form, a handle that is not a tensor, a composite), TSMR_ERELEASED,
 * TSMR_ENOMEM. A component of a composite may be exported. */
TSMR_API int tsmr_dlpack_export(tsmr_ctx *ctx, tsmr_handle t, int form, uint32_t request,
                                void **out);
/* Imports managed: IN, a managed struct of form, CONSUMED whatever the result
 * (DLP.IMPORT.2): on success the new tensor owns it, on any refusal its deleter has run
 * once before the return. The only exceptions: managed NULL or form unknown
 * (TSMR_EINVAL, nothing consumed, nothing called). The new tensor is a plain resource
 * held by m, in the calling thread's current scope (DLP.MGR.1). It aliases the memory
 * of a compact tensor the session can use (deleter at its release; adds no live bytes;
 * one of this context's own exports aliases the exported storage, whose deleter runs
 * here), else it is a compact copy (deleter at once; adds its size) (DLP.MGR.3).
 * Refusals in order: TSMR_EINVAL (ctx, out, m not a manager) / TSMR_ECLOSED /
 * TSMR_ECAPPED, TSMR_EVERSION (major != 1: only version and deleter read),
 * TSMR_EDLPACK (ndim outside 0..8, NULL shape with ndim > 0, a negative extent, an
 * element count that overflows, NULL data with elements, NULL strides with ndim > 0
 * from a versioned producer of minor >= 2), TSMR_EDEVICE (DLP.IMPORT.7), TSMR_EDTYPE,
 * then TSMR_ENOMEM or a copy error. The foreign deleter is never called with the
 * context lock held. out: OUT, the new tensor. */
TSMR_API int tsmr_dlpack_import(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                                tsmr_handle *out);
/* tsmr_dlpack_import, except that managed is taken on success only: on any refusal
 * (the same codes in the same order) managed is untouched, its deleter has not run, and
 * the caller still owns it. For a caller that must give a refused tensor back, such as
 * a DLPack exchange table's managed_tensor_to_py_object_no_sync (DLP.XAPI.TO.2), where a
 * consumed tensor would leave nothing to give back. Nothing is taken before the last
 * check that can fail (TSMR_ENOMEM and copy errors included) has passed. */
TSMR_API int tsmr_dlpack_try_import(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                                    tsmr_handle *out);

/* ---- Graphs (GRAPH.*, spec/graphs.md) ----------------------------------------------
 * A graph is built in a manager (tsmr_graph_new) from graph tensors, a fourth handle
 * kind (never manager resources: no holder, no scope, no live count): planner leaves
 * (tsmr_graph_leaf), external leaves wrapping a live manager tensor
 * (tsmr_graph_external) and operation nodes (tsmr_graph_op). tsmr_graph_expand adds a
 * tensor and what it depends on in post-order, sources in argument order (BUILD.1);
 * only expanded tensors are computed, placed and readable (BUILD.2: EINVAL).
 *
 * Plans. tsmr_graph_plan places every in-graph leaf and non-view node in planner
 * buffers: TSMR_PLAN_REUSE shares memory between tensors whose live ranges do not
 * overlap (REUSE.1) and runs elementwise add/sub/mul in place (INPLACE.1), all in one
 * buffer; TSMR_PLAN_NONE gives every tensor a buffer of its own (the unplanned
 * evaluation). Offsets are aligned to 4 bytes on cpu, 256 on cuda (sizes are rounded
 * up to that in the buffer; tsmr_graph_place reports the true size). The buffers are
 * zero-filled, count in the context's live bytes from planning until the graph is
 * released or its manager closes (MGR.1), and are then freed.
 *   Planning again a planned, fresh graph in the same mode keeps the plan (a no-op).
 *   Any other plan migrates the leaves' values to the new placement; node values are
 *   then those of the zero-filled buffers until the next compute.
 *   Adding a flag bit to an in-graph tensor, or expanding new tensors, after planning
 *   makes the plan stale (PLAN.1): tsmr_graph_write and tsmr_graph_compute re-plan in
 *   the last mode first (a never-planned graph is planned with TSMR_PLAN_REUSE by
 *   compute), migrating the leaves' values; reads and places keep using the stale
 *   plan until then (PLAN.2), so a tensor added since has no place yet.
 * External leaves. The graph keeps the tensor's handle, not a reference: it reads the
 * tensor's storage at compute and read time, never writes or frees it (EXT.1); a
 * released external makes compute and reading it fail with TSMR_ERELEASED, changing
 * nothing.
 * SVD. The three results are three graph tensors that join the graph together
 * (expanding any of them adds all three, at one execution step) and are computed by
 * one call: cpu LAPACKE_sgesvd, cuda cusolverDnSgesvd. matmul: cblas_sgemm (OpenBLAS)
 * on cpu, cublasSgemm on cuda.
 * Released graphs (tsmr_graph_release or the manager's close): every call on the graph
 * or its tensors answers TSMR_ERELEASED, except tsmr_graph_info (released = 1) and
 * tsmr_graph_release (a no-op). Argument errors come first (TSMR_EINVAL), then
 * TSMR_ERELEASED, then TSMR_ESHAPE, TSMR_EDTYPE. */

enum tsmr_graph_flag { TSMR_GRAPH_INPUT = 1u << 0, TSMR_GRAPH_OUTPUT = 1u << 1,
                       TSMR_GRAPH_PARAM = 1u << 2 };
enum tsmr_plan_mode { TSMR_PLAN_REUSE = 0, TSMR_PLAN_NONE = 1 };

struct tsmr_graph_place {
  int in_graph;        /* reachable from an expanded tensor */
  int placed;          /* has planner memory in the current plan: not a view/external */
  int64_t order;       /* execution index of a node; -1 for a leaf or not in the graph */
  uint32_t buffer;     /* planner buffer (a view: its root's) */
  uint64_t offset;     /* byte offset in that buffer (a view: its root's) */
  uint64_t nbytes;     /* the tensor's bytes */
  tsmr_handle root;    /* a view's root (graph tensor); the tensor itself otherwise */
};

struct tsmr_graph_info {
  int released;        /* graph released or its manager closed (MGR.1) */
  int planned;         /* a plan exists */
  int stale;           /* flags or nodes added since planning (PLAN.1) */
  uint64_t planned_bytes; /* bytes of the current plan's buffers */
};

/* Planner figures of the current plan (diagnostics, bench/bench_graphs.c). */
struct tsmr_graph_stats {
  uint64_t n_tensors;     /* in-graph tensors covered by the plan */
  uint64_t n_nodes;       /* of which operation nodes */
  uint64_t n_inplace;     /* nodes computed in their source's memory */
  uint64_t planned_bytes; /* the plan's buffer bytes */
  uint64_t bound_bytes;   /* liveness lower bound: the largest sum over the execution
                             order of the (aligned) sizes of the blocks live together */
  uint64_t naive_bytes;   /* sum of all placed tensors' aligned sizes (PLAN_NONE) */
  uint64_t plan_ns;       /* wall time of the last planning */
};

/* out: OUT, a new empty graph of manager m (ECLOSED when closed; a capped manager may
 * still make graphs: they are not resources). */
TSMR_API int tsmr_graph_new(tsmr_ctx *ctx, tsmr_handle m, tsmr_handle *out);
/* out: OUT, a planner leaf of desc (IN, not retained); its data comes from
 * tsmr_graph_write (zeros until then). */
TSMR_API int tsmr_graph_leaf(tsmr_ctx *ctx, tsmr_handle g, const struct tsmr_tensor_desc *desc,
                             tsmr_handle *out);
/* out: OUT, an external leaf reading the live plain tensor or component t (EXT.1). */
TSMR_API int tsmr_graph_external(tsmr_ctx *ctx, tsmr_handle g, tsmr_handle t,
                                 tsmr_handle *out);
/* A node of op (add, sub, mul, matmul: 2 srcs; sum, reshape, transpose, diag, svd: 1)
 * on srcs (IN, graph tensors of g). params: RESHAPE's shape. outs: OUT, n_outs results:
 * 3 for SVD (U, S, Vt), else 1. Gather is TSMR_ENOTSUP. */
TSMR_API int tsmr_graph_op(tsmr_ctx *ctx, tsmr_handle g, int op, const tsmr_handle *srcs,
                           int n, const int64_t *params, int n_params, tsmr_handle *outs,
                           int n_outs);
/* Adds flags (enum tsmr_graph_flag bits) to t; OUTPUT on a view also marks its root;
 * PARAM on a node is TSMR_EINVAL (FLAG.1-2). */
TSMR_API int tsmr_graph_flag(tsmr_ctx *ctx, tsmr_handle t, uint32_t flags);
/* Adds t and what it depends on to its graph (BUILD.1). */
TSMR_API int tsmr_graph_expand(tsmr_ctx *ctx, tsmr_handle g, tsmr_handle t);
/* Plans g in mode (enum tsmr_plan_mode). TSMR_ENOMEM leaves the old plan. */
TSMR_API int tsmr_graph_plan(tsmr_ctx *ctx, tsmr_handle g, int mode);
/* Writes the elements (row-major, at least t's bytes of data: IN, not retained) of a
 * planner leaf t that is in the graph; the graph must have a plan (else TSMR_EINVAL);
 * a stale plan is re-planned first. */
TSMR_API int tsmr_graph_write(tsmr_ctx *ctx, tsmr_handle t, const void *data,
                              size_t nbytes);
/* Computes g (re-planning a stale or missing plan first). */
TSMR_API int tsmr_graph_compute(tsmr_ctx *ctx, tsmr_handle g);
/* Copies t's elements to dst (OUT, cap >= t's bytes). t must be in the graph and
 * placed by the current plan (or a view of such, or an external), else TSMR_EINVAL. */
TSMR_API int tsmr_graph_read(tsmr_ctx *ctx, tsmr_handle t, void *dst, size_t cap);
/* out: OUT, where t lives under the current plan (PLAN.3). */
TSMR_API int tsmr_graph_place(tsmr_ctx *ctx, tsmr_handle t, struct tsmr_graph_place *out);
/* out: OUT, g's state; succeeds for released graphs. */
TSMR_API int tsmr_graph_info(tsmr_ctx *ctx, tsmr_handle g, struct tsmr_graph_info *out);
/* out: OUT, the current plan's planner figures (TSMR_EINVAL when unplanned). */
TSMR_API int tsmr_graph_stats(tsmr_ctx *ctx, tsmr_handle g, struct tsmr_graph_stats *out);
/* Frees g's buffers and marks it released; releasing again succeeds. */
TSMR_API int tsmr_graph_release(tsmr_ctx *ctx, tsmr_handle g);

#ifdef __cplusplus
}
#endif
#endif /* TSMREF_H */
