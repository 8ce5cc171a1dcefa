/*
 * harness/adapters/common/adapter_mgr.h: the manager family (spec/managers.md) for
 * third-party adapters whose runtime has no managers of its own (ggml, tvm-ffi, libtorch).
 *
 * It is the example adapter's manager layer (harness/adapters/example/example_adapter.c),
 * written once so that every adapter built on it follows the same rules: managers and
 * tensors are entries of two arrays of the session, handles are tagged indices into them
 * that are never reused (ABI.HANDLE.1, MGR.OWN.3), every count is an O(n) scan, errors
 * come in the order of ERR.ORDER.1 and nothing changes before every check has passed
 * (ERR.ATOMIC.1). The example keeps its own copy on purpose: it is the self-contained
 * file to copy (its README.md).
 *
 * What differs between the adapters is a tensor's storage: plain host memory for ggml
 * (its CPU backend reads it in place), a counted reference to a tvm-ffi Tensor for
 * tvm-ffi, a heap at::Tensor for libtorch (a C++ adapter, which includes this header
 * inside extern "C"). This layer never looks inside it; it reaches it through the hooks of
 * struct am_storage, which the adapter gives when it opens a session.
 *
 * Use: the adapter's session struct has a struct am_session as its FIRST member, so that
 * the `void *s` the judge passes to a slot points to both; the am_* slots below then go
 * into the adapter's vtable as they are, and the adapter's own slots (ops, graphs,
 * DLPack) reach managers and tensors through am_mgr_get / am_res_get.
 *
 * Every am_* symbol has hidden visibility: the module is linked into each adapter's
 * shared object, which exports tsm_adapter_entry alone.
 *
 * clauses: [ABI.HANDLE.1, ABI.INFO.1, ERR.ORDER.1, ERR.ATOMIC.1, ERR.HANDLE.1, MGR.*]
 */
#ifndef AM_ADAPTER_MGR_H
#define AM_ADAPTER_MGR_H

#include <stddef.h>
#include <stdint.h>

#include <tsm/adapter.h>

#pragma GCC visibility push(hidden)

/* Handles: a tag in the top byte, index + 1 below it. An adapter with more kinds of
 * objects (ggml's graphs and nodes) tags them with other letters under the same mask. */
#define AM_TAG_MASK 0xff00000000000000ull
#define AM_MGR_TAG 0x4d00000000000000ull /* 'M' */
#define AM_RES_TAG 0x5200000000000000ull /* 'R' */

struct am_session;

/* The adapter's storage hooks. `store` is the adapter's own pointer (a buffer, an object
 * handle); this layer keeps one per live tensor and hands it back to these hooks only. */
struct am_storage {
  /* New storage for the nbytes of desc's row-major elements: data's nbytes when data is
   * not NULL, zeros otherwise. desc has passed am_desc_check. OUT *out, owned by the
   * tensor it is given to. Returns 0, or TSM_ENOMEM with nothing allocated. */
  int (*alloc)(struct am_session *S, const struct tsm_tensor_desc *desc, size_t nbytes,
               const void *data, void **out);
  /* Gives store up: its tensor is released, or the session closes while it is live. */
  void (*drop)(void *store);
  /* The host address of store's row-major elements, readable for the tensor's nbytes;
   * NULL allowed when nbytes is 0. */
  const void *(*elems)(void *store);
  /* (optional, may be NULL) Manager m has closed: its children are closed and its
   * tensors released or given back (MGR.CLOSE.3); it is not unlinked yet. For what the
   * adapter attaches to managers besides tensors (ggml's graphs, GRAPH.MGR.1). */
  void (*closed)(struct am_session *S, tsm_handle m);
};

/* A manager. Owned by the session's array; `state` holds the TSM_MGR_* bits that
 * mgr_info reports. */
struct am_mgr {
  uint32_t state;    /* TSM_MGR_CLOSED, TSM_MGR_CAPPED */
  int closing;       /* 1 while its close is in progress (MGR.CLOSE.3, MGR.CLOSE.4) */
  tsm_handle parent; /* TSM_NONE for the root and once closed */
};

/* A tensor. Owned by the session's array, entry and handle for the whole session; the
 * tensor owns `lenders` (freed with the session) and, while valid, `store` (given back
 * to the storage hooks' drop when it is released). */
struct am_res {
  int valid;                   /* 0 once released; never 1 again */
  tsm_handle holder;           /* TSM_NONE while detached or released */
  tsm_handle *lenders;         /* borrow stack; lenders[nlend - 1] is the current lender */
  size_t nlend, lend_cap;      /* borrowed iff nlend > 0 */
  struct tsm_tensor_desc desc; /* dtype and shape */
  size_t nbytes;               /* 4 bytes per element (f32 and i32) */
  void *store;                 /* the adapter's storage; NULL once released */
};

/* The manager layer of one session (ABI.SESSION.1): the first member of the adapter's
 * session. It owns both arrays; mgrs[0] is the root. `storage` is the adapter's static
 * table, not owned. */
struct am_session {
  struct am_mgr *mgrs;
  size_t nmgr, mgr_cap;
  struct am_res *res;
  size_t nres, res_cap;
  const struct am_storage *storage;
};

/* ---- handles, arrays, checks ------------------------------------------------------ */

tsm_handle am_handle(tsm_handle tag, size_t i);
/* 1 and OUT *i when h is a handle of kind tag naming one of n entries, else 0. */
int am_handle_index(tsm_handle h, tsm_handle tag, size_t n, size_t *i);
/* RETURN the manager / tensor of h, or NULL when h is not one this session issued. The
 * pointers stay valid until the next manager / tensor is added (the array may move). */
struct am_mgr *am_mgr_get(struct am_session *S, tsm_handle h);
struct am_res *am_res_get(struct am_session *S, tsm_handle h);
tsm_handle am_root(void);
int am_closed(const struct am_mgr *m);
int am_capped(const struct am_mgr *m);

/* Room for one more element of size elem at index n of *arr. Only grows capacity, so a
 * later refusal still leaves nothing observable behind. Returns 0 or TSM_ENOMEM. */
int am_reserve(void **arr, size_t *cap, size_t n, size_t elem);

/* Element count of a valid desc; 0 when any extent is 0. */
size_t am_numel(const struct tsm_tensor_desc *d);
/* A shape of ndim extents: TSM_EINVAL when malformed (MGR.CREATE.4), TSM_ENOMEM when its
 * byte size at 4 bytes per element does not fit in int64 (MGR.CREATE.5), else 0. */
int am_shape_check(int ndim, const int64_t *shape);
/* am_shape_check of desc's shape after its dtype: f32 or i32, else TSM_EINVAL. */
int am_desc_check(const struct tsm_tensor_desc *desc);

/* ---- devices and sessions ------------------------------------------------------------ */

/* OUT *out: one device, "cpu": the layer's tensors are host memory (ABI.DEV.1). RETURN 1. */
int am_device_list(const struct tsm_device **out);
/* Starts S (zeroed by the caller) with its root manager (MGR.ROOT.1). Returns 0 or
 * TSM_ENOMEM, with nothing to free. */
int am_session_init(struct am_session *S, const struct am_storage *storage);
/* Drops every live tensor's storage and frees what S owns; S itself is the caller's. */
void am_session_fini(struct am_session *S);

/* ---- tensors for the adapter's own slots ---------------------------------------------- */

/* Room for one tensor more (am_reserve); after it, am_res_add cannot fail. */
int am_res_reserve(struct am_session *S);
/* Appends a live tensor held by m over store, which it takes; the room is reserved.
 * RETURN its handle. */
tsm_handle am_res_add(struct am_session *S, tsm_handle m, const struct tsm_tensor_desc *desc,
                      void *store);
/* Bytes of the session's live tensors. */
uint64_t am_res_bytes(const struct am_session *S);
/* Where an op's result goes (MGR.OP.1-3): out_mgr, or the holder of the first input, or
 * the root when that input is detached. OUT *dst. Returns TSM_ECLOSED or TSM_ECAPPED when
 * that manager takes no new tensor (MGR.OP.4), else 0. out_mgr is TSM_NONE or a manager
 * of S; first is live. */
int am_op_target(struct am_session *S, tsm_handle out_mgr, const struct am_res *first,
                 tsm_handle *dst);

/* The checks of an op slot (ops add to matmul) before anything is computed, in the
 * order of ERR.ORDER.1: EINVAL (op, arity, reshape's params, handles), ERELEASED
 * (MGR.OP.5), the target manager's ECLOSED / ECAPPED (am_op_target, MGR.OP.1-4), the
 * result's ESHAPE / EDTYPE / ERANGE (MGR.OP.7-9), ENOMEM for a result whose byte size
 * does not fit (MGR.CREATE.5) or no room for one more tensor. On success nothing has
 * changed but the room reserved (am_res_reserve), so am_res_add cannot fail; *plan
 * holds the inputs (valid until the next tensor is added), the result's desc and the
 * manager that will hold it. */
struct am_op_args {
  int op;                   /* the op slot's arguments, as it received them */
  const tsm_handle *inputs;
  int n;
  const int64_t *params;
  int n_params;
  tsm_handle out_mgr;
  tsm_handle *out;
};
struct am_op_plan {
  struct am_res *in[2];     /* the inputs, in[1] NULL for one */
  struct tsm_tensor_desc d; /* the result's desc */
  tsm_handle dst;           /* the manager that will hold it */
};
int am_op_prepare(struct am_session *S, const struct am_op_args *args, struct am_op_plan *plan);

/* ---- DLPack imports ------------------------------------------------------------------- */

/* DLPack's values (dlpack.h's DLDeviceType and DLDataTypeCode, the same in every version
 * since 0.6), so that this layer needs no DLPack header: the adapters compile against
 * different ones (ATen's, tvm-ffi's). */
enum am_dl_value { AM_DL_INT = 0, AM_DL_FLOAT = 2, AM_DL_CPU = 1, AM_DL_CUDA_HOST = 3,
                   AM_DL_CUDA_MANAGED = 13 };

/* The fields of a DLTensor that an imported tensor is judged by. */
struct am_dl_fields {
  const void *data;
  int device_type;
  int ndim;
  const int64_t *shape, *strides; /* strides NULL: compact */
  uint8_t code, bits;             /* the dtype */
  uint16_t lanes;
  uint64_t byte_offset;
};

/* What this layer's tensors can hold of an imported DLPack tensor, in the order of
 * DLP.IMPORT.2: a layout it can read (EDLPACK: rank past TSM_MAX_DIMS, a negative extent,
 * NULL data with elements, an element span or byte size that overflows), host memory
 * (EDEVICE, DLP.IMPORT.7), f32 or i32 (EDTYPE, DLP.IMPORT.6). OUT *d: its desc;
 * *compact: row-major contiguous (an extent-1 dimension's stride is free). */
int am_dl_import_check(const struct am_dl_fields *t, struct tsm_tensor_desc *d, int *compact);

/* ---- slots (struct tsm_adapter), `s` being the adapter's session --------------------- */

int am_mgr_root(void *s, tsm_handle *out);
int am_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out);
int am_mgr_sub_of(void *s, tsm_handle resource, tsm_handle *out);
int am_mgr_close(void *s, tsm_handle m);
int am_mgr_cap(void *s, tsm_handle m);
int am_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out);
int am_mgr_dump(void *s, tsm_handle m, char *buf, size_t cap);
int am_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc, const void *data,
                  tsm_handle *out);
int am_tensor_desc(void *s, tsm_handle t, struct tsm_tensor_desc *out);
int am_tensor_read(void *s, tsm_handle t, void *dst, size_t cap);
int am_res_attach(void *s, tsm_handle r, tsm_handle m);
int am_res_detach(void *s, tsm_handle r);
int am_res_temp_attach(void *s, tsm_handle r, tsm_handle b);
int am_res_ret(void *s, tsm_handle m, tsm_handle r);
int am_res_release(void *s, tsm_handle r);
int am_res_info(void *s, tsm_handle r, struct tsm_res_info *out);

/* The manager ops whose checks am_op_prepare makes (an adapter computes them itself). */
#define AM_OPS                                                                           \
  (1u << TSM_OP_ADD | 1u << TSM_OP_SUB | 1u << TSM_OP_MUL | 1u << TSM_OP_SUM |              \
   1u << TSM_OP_GATHER | 1u << TSM_OP_RESHAPE | 1u << TSM_OP_MATMUL)

/* The designated initializers of the device list and the slots above for an adapter's
 * struct tsm_adapter, so that each adapter names only what is its own. */
#define AM_SLOTS                                                                         \
  .device_list = am_device_list, .mgr_root = am_mgr_root, .mgr_new_sub = am_mgr_new_sub, \
  .mgr_sub_of = am_mgr_sub_of, .mgr_close = am_mgr_close, .mgr_cap = am_mgr_cap,         \
  .mgr_info = am_mgr_info, .tensor_new = am_tensor_new, .tensor_desc = am_tensor_desc,   \
  .tensor_read = am_tensor_read, .res_attach = am_res_attach,                            \
  .res_detach = am_res_detach, .res_temp_attach = am_res_temp_attach,                    \
  .res_ret = am_res_ret, .res_release = am_res_release, .res_info = am_res_info,        \
  .mgr_dump = am_mgr_dump

#pragma GCC visibility pop

#endif /* AM_ADAPTER_MGR_H */
