/*
 * harness/adapters/libtorch/libtorch_adapter.cpp: judges ATen's own DLPack conversion,
 * at::toDLPack and at::fromDLPack of <ATen/DLConvertor.h> (PyTorch 1.13, Debian's
 * libtorch-dev), through the adapter ABI (spec/adapter.md, spec/dlpack.md). The vtable
 * is libtorch_entry.c's.
 *
 * clauses: [ABI.DEV.1, ABI.SESSION.1, ABI.HANDLE.1, ABI.INFO.1, ABI.SLOT.1, ABI.DLPACK.1,
 *           ERR.ORDER.1, ERR.ATOMIC.1, MGR.*, DLP.DEL.*, DLP.EXPORT.*, DLP.IMPORT.*,
 *           DLP.MGR.*]
 *
 * Managers. The manager slots are the shared manager layer of the third-party adapters
 * (harness/adapters/common/adapter_mgr.h); ATen has reference counting, no managers.
 * This file gives that layer its storage hooks and adds the ops, live bytes and the
 * DLPack slots.
 *
 * Tensors. Each live tensor holds one at::Tensor (the layer's `store`, a heap
 * at::Tensor); releasing the tensor drops it, and ATen frees the storage, or runs an
 * imported tensor's DLPack deleter, when the last reference to the storage goes: the
 * tensor's own, an export's (toDLPack's ATenDLMTensor holds a Tensor), a view's. So
 * every DLP.DEL and DLP.EXPORT.3 check judges ATen's reference counting.
 *
 * Storage. New tensors' buffers are this adapter's, handed to ATen with at::from_blob
 * and a deleter that gives the bytes back to the session's pool: live bytes
 * (MGR.COUNT.4) are the bytes of buffers ATen still holds. A tensor of no bytes is
 * at::empty's and counts nothing; imported memory is the producer's and counts nothing
 * (DLP.MGR.3). Ops compute with ATen (add_out, sub_out, mul_out, sum, index_select_out,
 * mm_out) into such a buffer; reshape is Tensor::view, which shares the storage
 * (MGR.OP.9).
 *
 * DLPack. ATen 1.13 (Debian) speaks the legacy form only (DLManagedTensor, its bundled
 * DLPack 0.6 header ATen/dlpack.h): there the versioned form answers ENOTSUP in both
 * slots, which makes those statements NotSupported as an absent optional slot does
 * (ABI.SLOT.1); an import so answered leaves the struct untouched, as the judge's default
 * slot does. An ATen whose ATen/dlpack.h is DLPack 1.x (a torch wheel's, wheel.mk) has
 * at::toDLPackVersioned and at::fromDLPackVersioned, and the versioned form goes through
 * them (LT_VERSIONED). Export is at::toDLPack(Versioned), whose struct holds a Tensor
 * until its deleter runs. A legacy export has no flags, so copy and read-only requests
 * are EINVAL there (DLP.EXPORT.8); a versioned one asked to copy copies as torch's own
 * Tensor.__dlpack__(copy=True) does (at::maybeCopyTensor, then toDLPackVersioned), and
 * one asked for read-only is at::toDLPackVersionedReadOnly. Import hands the struct to
 * at::fromDLPack (or fromDLPackVersioned) unread, so ATen alone decides what it accepts. When fromDLPack throws, the struct is still its caller's:
 * ATen's own Python caller (torch/csrc/utils/tensor_new.cpp, tensor_fromDLPack) renames
 * the capsule only after fromDLPack returned, so the producer's capsule destructor runs
 * the deleter; this adapter does the same, and reports the first check of DLP.IMPORT.2
 * the struct fails (EDLPACK when it fails none: ATen refused what the spec takes). When
 * fromDLPack returns, the Tensor's storage owns the struct (its deleter runs when the
 * storage goes), and the adapter refuses, in the order of DLP.IMPORT.2, what its tensor
 * layer cannot hold of the Tensor ATen built (am_dl_import_check): a refusal drops the
 * Tensor. A compact Tensor is held as ATen built it (aliased); a strided one is copied
 * by ATen (Tensor::copy_) into a compact buffer of the pool and dropped at once
 * (DLP.IMPORT.4, DLP.MGR.3).
 *
 * Errors. No exception crosses the C ABI: every call into ATen is inside a try block.
 * The checks come first, in the order of ERR.ORDER.1, and change nothing (ERR.ATOMIC.1);
 * what ATen can still throw after them is an allocation failure, reported ENOMEM.
 *
 * Threads. A case process runs a few small tensors: ATen's intra-op thread pool is set
 * to one thread, so that no case process starts a pool on the shared cores.
 */
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <ATen/Parallel.h>

/* 1 where ATen's bundled DLPack header is 1.x and ATen converts the versioned form. */
#ifdef DLPACK_MAJOR_VERSION
#define LT_VERSIONED 1
#else
#define LT_VERSIONED 0
#endif

extern "C" {
#include "adapter_mgr.h"
}
#include "libtorch_adapter.h"

namespace {

/* ---- the storage pool: the adapter's buffers that ATen holds ----------------------- */

/* The buffers of a session whose deleter ATen has not run yet. session_close drops the
 * session's own tensors, so the pool is normally empty then; should ATen still hold a
 * buffer (a reference it leaked), that buffer's late deleter still finds the pool, and
 * the last deleter frees it. */
struct lt_pool {
  uint64_t bytes = 0;   /* live bytes (MGR.COUNT.4) */
  uint64_t buffers = 0; /* live buffers */
  bool closed = false;  /* the session has closed */
};

void lt_pool_give_back(lt_pool *p, uint64_t nbytes) {
  p->bytes -= nbytes;
  p->buffers--;
  if (p->closed && p->buffers == 0) delete p;
}

/* A session. `am` comes first: the judge's `void *s` is both (adapter_mgr.h). Each live
 * tensor's `store` there is a heap at::Tensor, compact, the tensor's own. */
struct lt_session {
  struct am_session am; /* managers and tensors */
  lt_pool *pool;
};

at::ScalarType lt_scalar(int dtype) { return dtype == TSM_F32 ? at::kFloat : at::kInt; }

/* A new zeroed, compact CPU Tensor of dtype and shape (valid; nbytes its byte size, 4 per
 * element) whose buffer counts in pool until ATen drops its storage. Returns 0 or
 * TSM_ENOMEM. */
int lt_alloc(lt_pool *pool, int dtype, int ndim, const int64_t *shape, size_t nbytes,
             at::Tensor *out) {
  const at::IntArrayRef sizes(shape, static_cast<size_t>(ndim));
  const at::TensorOptions opts = at::TensorOptions().dtype(lt_scalar(dtype));
  if (nbytes == 0) {
    try {
      *out = at::empty(sizes, opts);
      return 0;
    } catch (const std::exception &) {
      return TSM_ENOMEM;
    }
  }
  void *data = std::calloc(1, nbytes);
  if (!data) return TSM_ENOMEM;
  pool->bytes += nbytes;
  const uint64_t counted = ++pool->buffers;
  try {
    *out = at::from_blob(
        data, sizes,
        [pool, nbytes](void *p) {
          std::free(p);
          lt_pool_give_back(pool, nbytes);
        },
        opts);
  } catch (const std::exception &) {
    /* Once ATen's storage holds the buffer, unwinding runs the deleter; before, the
     * buffer is still ours. */
    if (pool->buffers == counted) {
      std::free(data);
      pool->bytes -= nbytes;
      pool->buffers--;
    }
    return TSM_ENOMEM;
  }
  return 0;
}

at::Tensor &lt_tensor(const struct am_res *r) { return *static_cast<at::Tensor *>(r->store); }

/* OUT *store: a heap Tensor holding t's reference. Returns 0 or TSM_ENOMEM (t is then
 * dropped with its caller's copy). */
int lt_store(at::Tensor t, void **store) {
  at::Tensor *p = new (std::nothrow) at::Tensor(std::move(t));
  if (!p) return TSM_ENOMEM;
  *store = p;
  return 0;
}

/* ---- the manager layer's storage hooks (struct am_storage) --------------------------- */

/* A new tensor: a Tensor of the session's pool holding data's bytes or zeros. */
int lt_store_alloc(struct am_session *S, const struct tsm_tensor_desc *desc, size_t nbytes,
                   const void *data, void **out) {
  try {
    at::Tensor t;
    int rc = lt_alloc(reinterpret_cast<lt_session *>(S)->pool, desc->dtype, desc->ndim,
                      desc->shape, nbytes, &t);
    if (rc) return rc;
    if (data && nbytes) std::memcpy(t.data_ptr(), data, nbytes);
    return lt_store(std::move(t), out);
  } catch (const std::exception &) {
    return TSM_ENOMEM;
  }
}

/* Releasing a tensor drops its reference (MGR.REL.1); ATen frees the storage, or runs an
 * import's deleter, once no export or view holds it either (DLP.MGR.1). */
void lt_store_drop(void *store) { delete static_cast<at::Tensor *>(store); }

/* A tensor is read through the Tensor's data pointer (storage data + offset); its
 * storage exists, so ATen has nothing to throw, and the C caller must see none. */
const void *lt_store_elems(void *store) {
  try {
    return static_cast<at::Tensor *>(store)->data_ptr();
  } catch (const std::exception &) {
    return nullptr;
  }
}

const struct am_storage lt_storage = {lt_store_alloc, lt_store_drop, lt_store_elems, nullptr};

/* ---- ops ------------------------------------------------------------------------------- */

/* op on a (and b) into o, the zeroed compact result, with ATen's CPU kernels. i32 sums
 * accumulate in ATen's accumulation type and are cast back, which wraps around. */
void lt_compute(int op, const at::Tensor &a, const at::Tensor *b, at::Tensor &o) {
  switch (op) {
  case TSM_OP_ADD:
    at::add_out(o, a, *b);
    break;
  case TSM_OP_SUB:
    at::sub_out(o, a, *b);
    break;
  case TSM_OP_MUL:
    at::mul_out(o, a, *b);
    break;
  case TSM_OP_SUM:
    o.copy_(a.sum(a.scalar_type()));
    break;
  case TSM_OP_GATHER:
    at::index_select_out(o, a, 0, *b);
    break;
  default: /* TSM_OP_MATMUL */
    at::mm_out(o, a, *b);
    break;
  }
}

/* ---- DLPack ---------------------------------------------------------------------------- */

/* Runs a legacy struct's deleter, if any, for a struct ATen did not take. */
void lt_run_deleter(DLManagedTensor *m) {
  if (m->deleter) m->deleter(m);
}

#if LT_VERSIONED
/* The same for a versioned struct. */
void lt_run_deleter(DLManagedTensorVersioned *m) {
  if (m->deleter) m->deleter(m);
}
#endif

/* The fields the import checks judge, of a DLTensor. */
struct am_dl_fields lt_fields(const DLTensor &t) {
  struct am_dl_fields f = {};
  f.data = t.data;
  f.device_type = t.device.device_type;
  f.ndim = t.ndim;
  f.shape = t.shape;
  f.strides = t.strides;
  f.code = t.dtype.code;
  f.bits = t.dtype.bits;
  f.lanes = t.dtype.lanes;
  f.byte_offset = t.byte_offset;
  return f;
}

/* The same fields of the Tensor ATen built: its data pointer, sizes, strides and dtype
 * as DLPack says them (at::getDLDataType); memory other than the CPU's is kDLExtDev,
 * which no check takes. */
struct am_dl_fields lt_fields(const at::Tensor &t) {
  const DLDataType dt = at::getDLDataType(t);
  struct am_dl_fields f = {};
  f.data = t.data_ptr();
  f.device_type = t.device().is_cpu() ? kDLCPU : kDLExtDev;
  f.ndim = static_cast<int>(t.dim());
  f.shape = t.sizes().data();
  f.strides = t.strides().data();
  f.code = dt.code;
  f.bits = dt.bits;
  f.lanes = dt.lanes;
  return f;
}

/* The tensor to hold for the Tensor ATen built from an import (DLP.IMPORT.2-7), or the
 * refusal; a refused or copied t is dropped by the caller, which runs the deleter
 * through t's storage. OUT *d: its desc. */
int lt_import_built(lt_pool *pool, const at::Tensor &t, struct tsm_tensor_desc *d,
                    at::Tensor *out) {
  const struct am_dl_fields f = lt_fields(t);
  int compact, rc;
  if ((rc = am_dl_import_check(&f, d, &compact))) return rc;
  if (compact) {
    *out = t;
    return 0;
  }
  /* DLP.IMPORT.4: a compact copy of our own; the imported Tensor goes at once */
  if ((rc = lt_alloc(pool, d->dtype, d->ndim, d->shape, am_numel(d) * 4, out))) return rc;
  out->copy_(t);
  return 0;
}

} // namespace

/* ---- slots: sessions ----------------------------------------------------------------- */

extern "C" int lt_session_open(int device_index, void **s_out) {
  if (device_index != 0 || !s_out) return TSM_EINVAL;
  lt_session *S = static_cast<lt_session *>(std::calloc(1, sizeof *S));
  if (!S) return TSM_ENOMEM;
  S->pool = new (std::nothrow) lt_pool();
  if (!S->pool || am_session_init(&S->am, &lt_storage)) {
    delete S->pool;
    std::free(S);
    return TSM_ENOMEM;
  }
  try {
    at::set_num_threads(1);
  } catch (const std::exception &) {
    /* a pool of another size only costs time */
  }
  *s_out = S;
  return 0;
}

/* Drops every reference the session still holds (the judge has run its exports'
 * deleters by now, ABI.DLPACK.1), so ATen frees everything. */
extern "C" void lt_session_close(void *s) {
  lt_session *S = static_cast<lt_session *>(s);
  if (!S) return;
  am_session_fini(&S->am);
  S->pool->closed = true;
  if (S->pool->buffers == 0) delete S->pool;
  std::free(S);
}

/* ---- slots: ops and live bytes ----------------------------------------------------------- */

/* The checks are the shared layer's (am_op_prepare: the result goes where am_op_target
 * says, MGR.OP.1-4); the inputs do not move (MGR.OP.6). */
extern "C" int lt_op(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params,
                     int n_params, tsm_handle out_mgr, tsm_handle *out) {
  lt_session *S = static_cast<lt_session *>(s);
  struct am_op_args args;
  args.op = op;
  args.inputs = inputs;
  args.n = n;
  args.params = params;
  args.n_params = n_params;
  args.out_mgr = out_mgr;
  args.out = out;
  struct am_op_plan plan;
  void *store;
  int rc;
  if ((rc = am_op_prepare(&S->am, &args, &plan))) return rc;
  struct am_res **in = plan.in;
  struct tsm_tensor_desc &d = plan.d;
  tsm_handle dst_h = plan.dst;
  try {
    at::Tensor result;
    if (op == TSM_OP_RESHAPE) {
      result = lt_tensor(in[0]).view(at::IntArrayRef(d.shape, static_cast<size_t>(d.ndim)));
    } else if (!(rc = lt_alloc(S->pool, d.dtype, d.ndim, d.shape, am_numel(&d) * 4, &result))) {
      lt_compute(op, lt_tensor(in[0]), in[1] ? &lt_tensor(in[1]) : nullptr, result);
    }
    if (rc || (rc = lt_store(std::move(result), &store))) return rc;
  } catch (const std::exception &) {
    return TSM_ENOMEM;
  }
  *out = am_res_add(&S->am, dst_h, &d, store);
  return 0;
}

/* OUT *out: the bytes of the pool's buffers ATen still holds (MGR.COUNT.4). */
extern "C" int lt_live_bytes(void *s, uint64_t *out) {
  if (!out) return TSM_EINVAL;
  *out = static_cast<lt_session *>(s)->pool->bytes;
  return 0;
}

/* ---- slots: DLPack ------------------------------------------------------------------- */

/* at::toDLPack of the tensor (DLP.EXPORT.1-4): the struct holds a Tensor on the storage,
 * so the storage outlives the source until its deleter runs (DLP.EXPORT.3). */
extern "C" int lt_dlpack_export(void *s, tsm_handle rh, int form, uint32_t request, void **out) {
  lt_session *S = static_cast<lt_session *>(s);
  struct am_res *r = am_res_get(&S->am, rh);
  const uint32_t known = TSM_DLPACK_COPY | TSM_DLPACK_READ_ONLY;
  if (!r || !out || (form != TSM_DLPACK_LEGACY && form != TSM_DLPACK_VERSIONED) ||
      (request & ~known))
    return TSM_EINVAL;
  if (form == TSM_DLPACK_VERSIONED && !LT_VERSIONED) return TSM_ENOTSUP; /* ATen 1.13 */
  if (form == TSM_DLPACK_LEGACY && request) return TSM_EINVAL; /* no flags (DLP.EXPORT.8) */
  if (!r->valid) return TSM_ERELEASED;
  try {
#if LT_VERSIONED
    if (form == TSM_DLPACK_VERSIONED) {
      at::Tensor t = lt_tensor(r);
      if (request & TSM_DLPACK_COPY) /* as THPModule_toDLPackImpl does for copy=True */
        t = at::maybeCopyTensor(t, std::nullopt, true);
      *out = (request & TSM_DLPACK_READ_ONLY) ? at::toDLPackVersionedReadOnly(t)
                                              : at::toDLPackVersioned(t);
      return 0;
    }
#endif
    *out = at::toDLPack(lt_tensor(r));
  } catch (const std::exception &) {
    return TSM_ENOMEM;
  }
  return 0;
}

/* ATen's Tensor of a struct M of either form (fromDLPack or fromDLPackVersioned), or,
 * when ATen refused it before taking it, the struct's deleter run and the first check
 * of DLP.IMPORT.2 it fails (EDLPACK when none: ATen refused what the spec takes); or,
 * when refused already is not 0 (the manager's refusal), the deleter run and that.
 * OUT *built, *d (the refused struct's desc, as far as the checks got). */
template <typename M, typename F>
int lt_from_dlpack(M *dl, int refused, F from, at::Tensor *built, struct tsm_tensor_desc *d) {
  if (refused) {
    lt_run_deleter(dl);
    return refused;
  }
  try {
    *built = from(dl);
    return 0;
  } catch (const std::exception &) { /* ATen refused before taking the struct */
    const struct am_dl_fields f = lt_fields(dl->dl_tensor);
    int compact;
    int rc = am_dl_import_check(&f, d, &compact);
    lt_run_deleter(dl);
    return rc ? rc : TSM_EDLPACK;
  }
}

/* Imports managed into m through at::fromDLPack or, versioned, at::fromDLPackVersioned
 * (DLP.IMPORT.*, DLP.MGR.1-3); consumed whatever happens, except without a struct or a
 * known form, and in the versioned form where ATen does not read it (ENOTSUP,
 * untouched). */
extern "C" int lt_dlpack_import(void *s, void *managed, int form, tsm_handle m, tsm_handle *out) {
  lt_session *S = static_cast<lt_session *>(s);
  struct am_mgr *mg = am_mgr_get(&S->am, m);
  struct tsm_tensor_desc d;
  void *store;
  int rc = 0;
  if (!managed || (form != TSM_DLPACK_LEGACY && form != TSM_DLPACK_VERSIONED)) return TSM_EINVAL;
  if (form == TSM_DLPACK_VERSIONED && !LT_VERSIONED) return TSM_ENOTSUP;
  if (!mg || !out) rc = TSM_EINVAL;
  else if (am_closed(mg)) rc = TSM_ECLOSED;
  else if (am_capped(mg)) rc = TSM_ECAPPED;
  else if (am_res_reserve(&S->am)) rc = TSM_ENOMEM;
  at::Tensor built;
#if LT_VERSIONED
  if (form == TSM_DLPACK_VERSIONED)
    rc = lt_from_dlpack(static_cast<DLManagedTensorVersioned *>(managed), rc,
                        [](DLManagedTensorVersioned *m) { return at::fromDLPackVersioned(m); },
                        &built, &d);
#endif
  if (form == TSM_DLPACK_LEGACY)
    rc = lt_from_dlpack(static_cast<DLManagedTensor *>(managed), rc,
                        [](DLManagedTensor *m) { return at::fromDLPack(m); }, &built, &d);
  if (rc) return rc;
  /* From here the Tensor's storage owns the struct: the deleter runs when it goes. */
  try {
    at::Tensor held;
    if ((rc = lt_import_built(S->pool, built, &d, &held))) return rc;
    built.reset();
    if ((rc = lt_store(std::move(held), &store))) return rc;
  } catch (const std::exception &) {
    return TSM_ENOMEM;
  }
  *out = am_res_add(&S->am, m, &d, store);
  return 0;
}
