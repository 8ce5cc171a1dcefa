/*
 * harness/adapters/tvm-ffi/tvmffi_adapter.c: judges apache-tvm-ffi's C-level DLPack
 * conversion (TVMFFITensorFromDLPack[Versioned], TVMFFITensorToDLPack[Versioned] of
 * <tvm/ffi/c_api.h>) through the adapter ABI (spec/adapter.md, spec/dlpack.md).
 *
 * caps = TSM_CAP_MANAGERS | TSM_CAP_DLPACK_C; one device, "cpu"; f32 and i32 tensors;
 * the ops add, sub, mul, sum, gather, reshape, matmul.
 *
 * clauses: [ABI.LOAD.1, ABI.VER.1, ABI.VER.2, ABI.CAP.1, ABI.DEV.1, ABI.SESSION.1,
 *           ABI.HANDLE.1, ABI.INFO.1, ABI.DLPACK.1, ERR.ORDER.1, ERR.ATOMIC.1, MGR.*,
 *           DLP.DEL.*, DLP.EXPORT.*, DLP.IMPORT.*, DLP.MGR.*]
 *
 * Managers. The manager slots are the shared manager layer of the third-party adapters
 * (harness/adapters/common/adapter_mgr.h: the example adapter's rules, two plain arrays
 * of the session, tagged handles that are never reused, O(n) scans). The manager family
 * is not tvm-ffi's (tvm-ffi has reference counting, no managers); it is here so that the
 * DLPack cases, which import into managers, can run. This file gives that layer its
 * storage hooks (tf_storage) and adds the ops, live bytes and the DLPack slots.
 *
 * Tensors. Each live tensor holds one strong reference to a tvm-ffi Tensor object
 * (TVMFFIObjectHandle, the layer's `store`); releasing the tensor drops it
 * (TVMFFIObjectDecRef, tf_store_drop), and tvm-ffi frees the storage, or runs an
 * imported tensor's DLPack deleter, when the last reference goes: the tensor's own, an
 * export's, a reshape view's. So every DLP.DEL and DLP.EXPORT.3 check judges tvm-ffi's
 * reference counting.
 *
 * Storage. New tensors (tensor_new, op results, compact copies) come from
 * TVMFFIEnvTensorAlloc, tvm-ffi's environment allocator, with this adapter's
 * DLPackManagedTensorAllocator installed for the call (tf_env_alloc): tvm-ffi asks it
 * for a DLManagedTensorVersioned and wraps it in a Tensor whose destructor runs that
 * tensor's deleter. The deleter gives the bytes back to the session's pool, so live
 * bytes (MGR.COUNT.4) are the bytes of buffers whose deleter tvm-ffi has not run yet:
 * what tvm-ffi really keeps alive. Imported tensors' memory is the producer's and counts
 * nothing (DLP.MGR.3).
 *
 * Export. TVMFFITensorToDLPack / TVMFFITensorToDLPackVersioned of the tensor's object,
 * as the ABI's form says. Those functions take no request, so a copy is made here (a
 * fresh env-allocated Tensor whose only reference the export then holds) and the
 * READ_ONLY / IS_COPIED flags are set here on the struct tvm-ffi returned (which the
 * caller owns); a legacy export is refused both (DLP.EXPORT.5).
 *
 * Import. After the manager checks, the managed struct goes to
 * TVMFFITensorFromDLPack[Versioned] unread: tvm-ffi alone decides whether to accept it,
 * and the version check (DLP.IMPORT.1) and the refusal of NULL strides at minor >= 2
 * (DLP.IMPORT.4) are left to it. On the Tensor it built the adapter then refuses what
 * its own tensor layer cannot hold (a malformed layout, memory the host cannot read, a
 * dtype other than f32/i32: DLP.IMPORT.2 order), by dropping that Tensor, so tvm-ffi
 * runs the deleter. A compact tensor is aliased (held as tvm-ffi built it); a strided
 * one is copied into compact storage and the imported Tensor dropped at once
 * (DLP.IMPORT.4, DLP.MGR.3), because this layer's tensors are compact (MGR.OP.7).
 * A failing TVMFFITensorFromDLPack* leaves the struct with its caller (its throws all
 * come before the Tensor exists; tvm-ffi's own Python caller runs the deleter then,
 * tvm_ffi/cython/tensor.pxi _from_dlpack_exchange_api), so the adapter runs it.
 *
 * Errors. Each slot checks in the order of ERR.ORDER.1 and changes nothing before
 * every check has passed (ERR.ATOMIC.1); an import consumes its struct whatever it
 * returns, except without a struct or form to consume (DLP.IMPORT.2). A failing tvm-ffi
 * call leaves an error object in tvm-ffi's thread-local slot, which tf_drop_error takes
 * and releases, so nothing leaks.
 */
#include <stdlib.h>
#include <string.h>

#include <tsm/adapter.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include "adapter_mgr.h"

const struct tsm_adapter *tsm_adapter_entry(void);

#define TF_STR_(x) #x
#define TF_STR(x) TF_STR_(x)

/* ---- the storage pool: buffers of the env allocator ------------------------------- */

/* The buffers this session allocated whose deleter tvm-ffi has not run yet. A buffer's
 * deleter runs when the last reference to its Tensor goes; session_close drops the
 * session's own, so the pool is normally empty then. Should a reference survive it (one
 * tvm-ffi leaked), its late deleter still finds the pool, and the last deleter frees it,
 * instead of writing into freed memory. */
struct tf_pool {
  uint64_t bytes;   /* live bytes (MGR.COUNT.4) */
  uint64_t buffers; /* live buffers */
  int closed;       /* the session has closed */
};

/* One buffer handed to tvm-ffi: the managed struct with its shape and strides. */
struct tf_buf {
  DLManagedTensorVersioned m;
  int64_t shape[TSM_MAX_DIMS], strides[TSM_MAX_DIMS];
  struct tf_pool *pool;
  uint64_t nbytes;
};

/* The env allocator has no context argument: the pool of the allocation in progress on
 * this thread (set by tf_alloc around TVMFFIEnvTensorAlloc). */
static _Thread_local struct tf_pool *tf_alloc_pool;

/* The deleter tvm-ffi runs when the Tensor wrapping b loses its last reference. */
static void tf_buf_deleter(DLManagedTensorVersioned *self) {
  struct tf_buf *b = self->manager_ctx;
  struct tf_pool *p = b->pool;
  p->bytes -= b->nbytes;
  p->buffers--;
  free(b->m.dl_tensor.data);
  free(b);
  if (p->closed && p->buffers == 0) free(p);
}

/* Row-major strides of shape (an extent 0 counts as 1, as PyTorch's). Unsigned: an
 * empty tensor's extents may multiply past int64 (MGR.CREATE.5), and its strides place
 * nothing; a non-empty one's byte size fits, so nothing wraps. */
static void tf_compact_strides(int ndim, const int64_t *shape, int64_t *strides) {
  uint64_t acc = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = (int64_t)acc;
    acc *= shape[i] > 1 ? (uint64_t)shape[i] : 1;
  }
}

/* The DLPackManagedTensorAllocator (dlpack.h) TVMFFIEnvTensorAlloc calls: a zeroed,
 * compact DLPack 1.x tensor of the prototype's dtype, shape and device. The caller,
 * tf_alloc, has checked the shape and that the byte size fits. */
static int tf_env_alloc(DLTensor *proto, DLManagedTensorVersioned **out, void *error_ctx,
                        void (*set_error)(void *error_ctx, const char *kind, const char *msg)) {
  struct tf_pool *p = tf_alloc_pool;
  struct tf_buf *b;
  uint64_t numel = 1;
  void *data = NULL;
  if (!p || proto->ndim < 0 || proto->ndim > TSM_MAX_DIMS) {
    set_error(error_ctx, "ValueError", "tvmffi_adapter: no pool or bad rank");
    return -1;
  }
  for (int i = 0; i < proto->ndim; i++) numel *= (uint64_t)proto->shape[i];
  uint64_t nbytes = numel * (((uint64_t)proto->dtype.bits * proto->dtype.lanes + 7) / 8);
  b = calloc(1, sizeof *b);
  if (nbytes) data = calloc(1, (size_t)nbytes);
  if (!b || (nbytes && !data)) {
    free(b);
    free(data);
    set_error(error_ctx, "MemoryError", "tvmffi_adapter: out of memory");
    return -1;
  }
  b->m.version.major = DLPACK_MAJOR_VERSION;
  b->m.version.minor = DLPACK_MINOR_VERSION;
  b->m.manager_ctx = b;
  b->m.deleter = tf_buf_deleter;
  b->m.dl_tensor.data = data; /* NULL for zero elements (DLP.EXPORT.1) */
  b->m.dl_tensor.device = proto->device;
  b->m.dl_tensor.ndim = proto->ndim;
  b->m.dl_tensor.dtype = proto->dtype;
  memcpy(b->shape, proto->shape, (size_t)proto->ndim * sizeof *b->shape);
  tf_compact_strides(proto->ndim, b->shape, b->strides);
  b->m.dl_tensor.shape = b->shape;
  b->m.dl_tensor.strides = b->strides; /* given also when compact (DLPack 1.2) */
  b->pool = p;
  b->nbytes = nbytes;
  p->bytes += nbytes;
  p->buffers++;
  *out = &b->m;
  return 0;
}

/* Takes the error a failed tvm-ffi call raised into its thread-local slot and drops it. */
static void tf_drop_error(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err) TVMFFIObjectDecRef(err);
}

/* The DLTensor of a tvm-ffi Tensor object: it follows the object header. The header's
 * accessor, TVMFFITensorGetDLTensorPtr, is only declared for C++. */
static DLTensor *tf_dl(TVMFFIObjectHandle obj) {
  return (DLTensor *)(void *)((char *)obj + sizeof(TVMFFIObject));
}

/* Element 0 of a compact tensor; NULL when it has no data. */
static unsigned char *tf_elems(TVMFFIObjectHandle obj) {
  DLTensor *t = tf_dl(obj);
  return t->data ? (unsigned char *)t->data + t->byte_offset : NULL;
}

static DLDataType tf_dtype(int dtype) {
  DLDataType d;
  d.code = dtype == TSM_F32 ? kDLFloat : kDLInt;
  d.bits = 32;
  d.lanes = 1;
  return d;
}

/* A new zeroed, compact tvm-ffi Tensor on the CPU from tvm-ffi's env allocator, counted
 * in pool. The shape is valid and its byte size fits (checked by the caller). OUT *out:
 * one reference. Returns 0 or TSM_ENOMEM. */
static int tf_alloc(struct tf_pool *pool, int dtype, int ndim, const int64_t *shape,
                    TVMFFIObjectHandle *out) {
  int64_t shp[TSM_MAX_DIMS];
  DLTensor proto;
  DLPackManagedTensorAllocator prev = NULL;
  int rc;
  memcpy(shp, shape, (size_t)ndim * sizeof *shp);
  memset(&proto, 0, sizeof proto);
  proto.device.device_type = kDLCPU;
  proto.device.device_id = 0;
  proto.ndim = ndim;
  proto.dtype = tf_dtype(dtype);
  proto.shape = shp;
  /* Installed for this call only, on this thread: the env allocator is thread-local,
   * and whatever the thread had before is put back. */
  if (TVMFFIEnvSetDLPackManagedTensorAllocator(tf_env_alloc, 0, &prev)) {
    tf_drop_error();
    return TSM_ENOMEM;
  }
  tf_alloc_pool = pool;
  rc = TVMFFIEnvTensorAlloc(&proto, out);
  tf_alloc_pool = NULL;
  if (rc) tf_drop_error();
  if (TVMFFIEnvSetDLPackManagedTensorAllocator(prev, 0, NULL)) tf_drop_error();
  return rc ? TSM_ENOMEM : 0;
}

/* ---- the session and the tensors' storage ------------------------------------------ */

/* A session. `am` comes first: the judge's `void *s` is both (adapter_mgr.h). Each
 * live tensor's `store` there is a TVMFFIObjectHandle: one strong reference to a tvm-ffi
 * Tensor, compact, the tensor's own. The pool is shared with the buffers' deleters
 * (struct tf_pool says who frees it). */
struct tf_session {
  struct am_session am; /* managers and tensors */
  struct tf_pool *pool;
};

/* The manager layer's storage hooks (struct am_storage): a new tensor is an
 * env-allocated Tensor of the session's pool, holding data's bytes or zeros. */
static int tf_store_alloc(struct am_session *S, const struct tsm_tensor_desc *desc,
                          size_t nbytes, const void *data, void **out) {
  TVMFFIObjectHandle obj;
  int rc = tf_alloc(((struct tf_session *)S)->pool, desc->dtype, desc->ndim, desc->shape, &obj);
  if (rc) return rc;
  if (data && nbytes) memcpy(tf_elems(obj), data, nbytes);
  *out = obj;
  return 0;
}

/* Releasing a tensor drops its reference (MGR.REL.1); tvm-ffi frees the storage, or runs
 * an import's deleter, once no export or view holds one either (DLP.MGR.1). */
static void tf_store_drop(void *store) { TVMFFIObjectDecRef(store); }

/* A tensor is read through the tvm-ffi Tensor's data and byte_offset. */
static const void *tf_store_elems(void *store) { return tf_elems(store); }

static const struct am_storage tf_storage = {
    .alloc = tf_store_alloc,
    .drop = tf_store_drop,
    .elems = tf_store_elems,
    .closed = NULL,
};

/* ---- slots: sessions ------------------------------------------------------------------ */

static int tf_session_open(int device_index, void **s_out) {
  struct tf_session *S;
  if (device_index != 0 || !s_out) return TSM_EINVAL;
  S = calloc(1, sizeof *S);
  if (!S) return TSM_ENOMEM;
  S->pool = calloc(1, sizeof *S->pool);
  if (!S->pool || am_session_init(&S->am, &tf_storage)) {
    free(S->pool);
    free(S);
    return TSM_ENOMEM;
  }
  *s_out = S;
  return 0;
}

/* Drops every reference the session still holds (the judge has run its exports'
 * deleters by now, ABI.DLPACK.1), so tvm-ffi frees everything. */
static void tf_session_close(void *s) {
  struct tf_session *S = s;
  if (!S) return;
  am_session_fini(&S->am);
  S->pool->closed = 1;
  if (S->pool->buffers == 0) free(S->pool);
  free(S);
}

/* ---- slots: ops ------------------------------------------------------------------- */

/* One element of an elementwise op; i32 wraps around, in unsigned arithmetic to stay
 * defined. */
static void tf_elementwise(int op, int dtype, void *o, const void *a, const void *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (dtype == TSM_F32) {
      float x = ((const float *)a)[i], y = ((const float *)b)[i];
      ((float *)o)[i] = op == TSM_OP_ADD ? x + y : op == TSM_OP_SUB ? x - y : x * y;
    } else {
      uint32_t x = (uint32_t)((const int32_t *)a)[i], y = (uint32_t)((const int32_t *)b)[i];
      uint32_t z = op == TSM_OP_ADD ? x + y : op == TSM_OP_SUB ? x - y : x * y;
      ((int32_t *)o)[i] = (int32_t)z;
    }
  }
}

/* The values of a computed op into o, the result's compact elements. */
static void tf_compute(int op, const struct am_res *a, const struct am_res *b,
                       const struct tsm_tensor_desc *d, void *o) {
  const void *x = tf_elems(a->store), *y = b ? tf_elems(b->store) : NULL;
  size_t n = am_numel(&a->desc);
  if (op == TSM_OP_SUM) {
    if (a->desc.dtype == TSM_F32) {
      double acc = 0;
      for (size_t i = 0; i < n; i++) acc += ((const float *)x)[i];
      *(float *)o = (float)acc;
    } else {
      uint32_t acc = 0;
      for (size_t i = 0; i < n; i++) acc += (uint32_t)((const int32_t *)x)[i];
      *(int32_t *)o = (int32_t)acc;
    }
  } else if (op == TSM_OP_MATMUL) {
    int64_t m = d->shape[0], k = a->desc.shape[1], nn = d->shape[1];
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < nn; j++) {
        double acc = 0;
        for (int64_t l = 0; l < k; l++)
          acc += (double)((const float *)x)[i * k + l] * ((const float *)y)[l * nn + j];
        ((float *)o)[i * nn + j] = (float)acc;
      }
  } else if (op == TSM_OP_GATHER) {
    size_t row = (size_t)a->desc.shape[1] * 4;
    for (int64_t i = 0; i < d->shape[0]; i++)
      memcpy((unsigned char *)o + (size_t)i * row,
             (const unsigned char *)x + (size_t)((const int32_t *)y)[i] * row, row);
  } else {
    tf_elementwise(op, a->desc.dtype, o, x, y, n);
  }
}

/* reshape: a tvm-ffi view of a's storage (TVMFFITensorCreateUnsafeView), which keeps a's
 * Tensor alive, so the storage lives while the source or any view does (MGR.OP.9). */
static int tf_view(const struct am_res *a, const struct tsm_tensor_desc *d,
                   TVMFFIObjectHandle *out) {
  const DLTensor *src = tf_dl(a->store);
  int64_t shape[TSM_MAX_DIMS], strides[TSM_MAX_DIMS];
  DLTensor proto = *src;
  memcpy(shape, d->shape, sizeof shape);
  tf_compact_strides(d->ndim, shape, strides);
  proto.ndim = d->ndim;
  proto.shape = shape;
  proto.strides = strides; /* tvm-ffi requires them, also for 0-d */
  if (TVMFFITensorCreateUnsafeView(a->store, &proto, out)) {
    tf_drop_error();
    return TSM_ENOMEM;
  }
  return 0;
}

/* The checks are the shared layer's (am_op_prepare: the result goes where am_op_target
 * says, MGR.OP.1-4); the inputs do not move (MGR.OP.6). */
static int tf_op(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params,
                 int n_params, tsm_handle out_mgr, tsm_handle *out) {
  struct tf_session *S = s;
  const struct am_op_args args = {op, inputs, n, params, n_params, out_mgr, out};
  struct am_op_plan plan;
  TVMFFIObjectHandle obj;
  int rc;
  if ((rc = am_op_prepare(&S->am, &args, &plan))) return rc;
  struct am_res **in = plan.in;
  struct tsm_tensor_desc d = plan.d;
  tsm_handle dst_h = plan.dst;
  if (op == TSM_OP_RESHAPE) {
    rc = tf_view(in[0], &d, &obj);
  } else if (!(rc = tf_alloc(S->pool, d.dtype, d.ndim, d.shape, &obj)) && am_numel(&d)) {
    tf_compute(op, in[0], in[1], &d, tf_elems(obj));
  }
  if (rc) return rc;
  *out = am_res_add(&S->am, dst_h, &d, obj);
  return 0;
}

/* ---- slots: live bytes ------------------------------------------------------------ */

/* OUT *out: the bytes of env-allocated buffers tvm-ffi still holds (MGR.COUNT.4). */
static int tf_live_bytes(void *s, uint64_t *out) {
  struct tf_session *S = s;
  if (!out) return TSM_EINVAL;
  *out = S->pool->bytes;
  return 0;
}

/* ---- slots: DLPack ------------------------------------------------------------------ */

/* Exports r through TVMFFITensorToDLPack[Versioned] (DLP.EXPORT.1-4): the struct holds a
 * tvm-ffi reference on the Tensor, so the storage outlives the source until its deleter
 * runs (DLP.EXPORT.3). A copy (DLP.EXPORT.5) is a fresh Tensor whose only reference the
 * export holds; the flags are set on the struct tvm-ffi returned, which its caller owns
 * (tvm-ffi's C export takes no request and sets flags 0). */
static int tf_dlpack_export(void *s, tsm_handle rh, int form, uint32_t request, void **out) {
  struct tf_session *S = s;
  struct am_res *r = am_res_get(&S->am, rh);
  const uint32_t known = TSM_DLPACK_COPY | TSM_DLPACK_READ_ONLY;
  TVMFFIObjectHandle obj;
  int rc;
  if (!r || !out || (form != TSM_DLPACK_LEGACY && form != TSM_DLPACK_VERSIONED) ||
      (request & ~known))
    return TSM_EINVAL;
  if (form == TSM_DLPACK_LEGACY && request) return TSM_EINVAL; /* no flags to say it */
  if (!r->valid) return TSM_ERELEASED;
  obj = r->store;
  if (request & TSM_DLPACK_COPY) {
    if ((rc = tf_alloc(S->pool, r->desc.dtype, r->desc.ndim, r->desc.shape, &obj))) return rc;
    if (r->nbytes) memcpy(tf_elems(obj), tf_elems(r->store), r->nbytes);
  }
  if (form == TSM_DLPACK_LEGACY) {
    DLManagedTensor *m = NULL;
    if (!(rc = TVMFFITensorToDLPack(obj, &m))) *out = m;
  } else {
    DLManagedTensorVersioned *m = NULL;
    if (!(rc = TVMFFITensorToDLPackVersioned(obj, &m))) {
      if (request & TSM_DLPACK_READ_ONLY) m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
      if (request & TSM_DLPACK_COPY) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
      *out = m;
    }
  }
  if (rc) tf_drop_error();
  if (obj != r->store) TVMFFIObjectDecRef(obj); /* the copy: the export's reference remains */
  return rc ? TSM_ENOMEM : 0;
}

/* Runs a managed struct's deleter, if any, for a struct tvm-ffi did not take. The
 * deleter sits at the same place in every major version of the versioned struct, so
 * this reads nothing else (DLP.IMPORT.1). */
static void tf_run_deleter(void *managed, int form) {
  if (form == TSM_DLPACK_VERSIONED) {
    DLManagedTensorVersioned *m = managed;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor *m = managed;
    if (m->deleter) m->deleter(m);
  }
}

/* The shared layer's import checks (am_dl_import_check) of the Tensor tvm-ffi built. */
static int tf_import_check(const DLTensor *t, struct tsm_tensor_desc *d, int *compact) {
  const struct am_dl_fields f = {
      .data = t->data, .device_type = t->device.device_type, .ndim = t->ndim,
      .shape = t->shape, .strides = t->strides, .code = t->dtype.code, .bits = t->dtype.bits,
      .lanes = t->dtype.lanes, .byte_offset = t->byte_offset};
  return am_dl_import_check(&f, d, compact);
}

/* The row-major elements of strided t (4-byte elements, checked by tf_import_check)
 * into dst. */
static void tf_gather(unsigned char *dst, const DLTensor *t, size_t numel) {
  const unsigned char *base = (const unsigned char *)t->data + t->byte_offset;
  int64_t idx[TSM_MAX_DIMS] = {0}, off = 0;
  for (size_t k = 0; k < numel; k++) {
    memcpy(dst + k * 4, base + off * 4, 4); /* off < 0: negative strides */
    for (int i = t->ndim - 1; i >= 0; i--) {
      if (++idx[i] < t->shape[i]) {
        off += t->strides[i];
        break;
      }
      off -= t->strides[i] * (t->shape[i] - 1);
      idx[i] = 0;
    }
  }
}

/* Imports managed into m (DLP.IMPORT.*, DLP.MGR.1-3); consumed whatever happens,
 * except without a struct or a known form. */
static int tf_dlpack_import(void *s, void *managed, int form, tsm_handle m, tsm_handle *out) {
  struct tf_session *S = s;
  struct am_mgr *mg = am_mgr_get(&S->am, m);
  struct tsm_tensor_desc d;
  TVMFFIObjectHandle obj = NULL, copy;
  int rc = 0, compact;
  if (!managed || (form != TSM_DLPACK_LEGACY && form != TSM_DLPACK_VERSIONED)) return TSM_EINVAL;
  if (!mg || !out) rc = TSM_EINVAL;
  else if (am_closed(mg)) rc = TSM_ECLOSED;
  else if (am_capped(mg)) rc = TSM_ECAPPED;
  else if (am_res_reserve(&S->am)) rc = TSM_ENOMEM;
  if (rc) {
    tf_run_deleter(managed, form);
    return rc;
  }
  if (form == TSM_DLPACK_VERSIONED)
    rc = TVMFFITensorFromDLPackVersioned(managed, 0, 0, &obj);
  else
    rc = TVMFFITensorFromDLPack(managed, 0, 0, &obj);
  if (rc) { /* tvm-ffi refused before taking the struct: its caller still owns it */
    tf_drop_error();
    tf_run_deleter(managed, form);
    return TSM_EDLPACK;
  }
  /* From here the Tensor owns managed: dropping it runs the deleter (tvm-ffi's
   * TensorObjFromDLPack destructor). */
  if ((rc = tf_import_check(tf_dl(obj), &d, &compact))) {
    TVMFFIObjectDecRef(obj);
    return rc;
  }
  if (!compact) { /* DLP.IMPORT.4: a compact copy of our own, the deleter at once */
    rc = tf_alloc(S->pool, d.dtype, d.ndim, d.shape, &copy);
    if (!rc) tf_gather(tf_elems(copy), tf_dl(obj), am_numel(&d));
    TVMFFIObjectDecRef(obj);
    if (rc) return rc;
    obj = copy;
  }
  *out = am_res_add(&S->am, m, &d, obj);
  return 0;
}

/* ---- the vtable --------------------------------------------------------------------- */

static const struct tsm_adapter tf_adapter = {
    .abi_major = TSM_ADAPTER_ABI_MAJOR,
    .abi_minor = TSM_ADAPTER_ABI_MINOR,
    .struct_size = sizeof(struct tsm_adapter),
    .caps = TSM_CAP_MANAGERS | TSM_CAP_DLPACK_C,
    .ops = AM_OPS,
    .name = "tvm-ffi",
    .version = "1.0 over the apache-tvm-ffi C API " TF_STR(TVM_FFI_VERSION_MAJOR) "." TF_STR(
        TVM_FFI_VERSION_MINOR) "." TF_STR(TVM_FFI_VERSION_PATCH),
    .session_open = tf_session_open,
    .session_close = tf_session_close,
    AM_SLOTS,
    .op = tf_op,
    .live_bytes = tf_live_bytes,
    .dlpack_export = tf_dlpack_export,
    .dlpack_import = tf_dlpack_import,
};

/* RETURN the adapter; static, valid until the object is unloaded (ABI.LOAD.1). */
const struct tsm_adapter *tsm_adapter_entry(void) { return &tf_adapter; }
