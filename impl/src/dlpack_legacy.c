/*
 * impl/src/dlpack_legacy.c: the legacy DLPack form (DLManagedTensor, DLPack 0.x),
 * compiled against Debian's libdlpack-dev header (0.6, /usr/include/dlpack/dlpack.h;
 * never vendored). Builds and reads the managed struct for the core (dlpack.c) through
 * dlx.h. A legacy tensor has no version and no flags; NULL strides mean compact
 * (DLP.IMPORT.4). Clauses: DLP.DEL.1-3, DLP.EXPORT.1-2, DLP.IMPORT.3-4.
 */
#include <dlpack/dlpack.h>
#include <stddef.h>
#include <string.h>

#include "dlx.h"

/* The ABI this TU relies on (DLPack 0.6, LP64). */
_Static_assert(sizeof(DLTensor) == 48, "DLTensor size");
_Static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor size");
_Static_assert(offsetof(DLTensor, data) == 0, "DLTensor.data");
_Static_assert(offsetof(DLTensor, device) == 8, "DLTensor.device");
_Static_assert(offsetof(DLTensor, ndim) == 16, "DLTensor.ndim");
_Static_assert(offsetof(DLTensor, dtype) == 20, "DLTensor.dtype");
_Static_assert(offsetof(DLTensor, shape) == 24, "DLTensor.shape");
_Static_assert(offsetof(DLTensor, strides) == 32, "DLTensor.strides");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor.byte_offset");
_Static_assert(offsetof(DLManagedTensor, dl_tensor) == 0, "DLManagedTensor.dl_tensor");
_Static_assert(offsetof(DLManagedTensor, manager_ctx) == 48, "DLManagedTensor.manager_ctx");
_Static_assert(offsetof(DLManagedTensor, deleter) == 56, "DLManagedTensor.deleter");
_Static_assert((int)kDLCPU == (int)TSMR__DLX_CPU && (int)kDLCUDA == (int)TSMR__DLX_CUDA &&
                   (int)kDLCUDAHost == (int)TSMR__DLX_CUDA_HOST &&
                   (int)kDLCUDAManaged == (int)TSMR__DLX_CUDA_MANAGED,
               "DLDeviceType values");
_Static_assert((int)kDLInt == (int)TSMR__DLX_INT && (int)kDLFloat == (int)TSMR__DLX_FLOAT,
               "DLDataTypeCode values");

struct tsmr_dlx_legacy_block {
  struct tsmr__dlx_rec rec; /* first: tsmr__free(rec) frees the block */
  DLManagedTensor mt;
  int64_t shape[TSMR_MAX_DIMS], strides[TSMR_MAX_DIMS];
};

/* The deleter of every legacy export: any thread, exactly once (DLP.DEL.1, DLP.DEL.3). */
static void dlx_legacy_deleter(DLManagedTensor *mt) {
  struct tsmr__dlx_rec *rec = mt->manager_ctx;
  tsmr__dlx_rec_drop(rec);
  tsmr__free(rec);
}

static int dlx_legacy_parse(void *managed, struct tsmr__dlx_view *v) {
  const DLTensor *t = &((const DLManagedTensor *)managed)->dl_tensor;
  v->data = t->data;
  v->byte_offset = t->byte_offset;
  v->device_type = (int)t->device.device_type;
  v->device_id = t->device.device_id;
  v->ndim = t->ndim;
  v->shape = t->shape;
  v->strides = t->strides; /* NULL: compact */
  v->strides_refused = 0;
  v->code = t->dtype.code;
  v->bits = t->dtype.bits;
  v->lanes = t->dtype.lanes;
  return 0;
}

static void dlx_legacy_call_deleter(void *managed) {
  DLManagedTensor *mt = managed;
  if (mt->deleter) mt->deleter(mt); /* DLP.DEL.2 */
}

static struct tsmr__dlx_rec *dlx_legacy_own(void *managed) {
  const DLManagedTensor *mt = managed;
  return mt->deleter == dlx_legacy_deleter ? mt->manager_ctx : NULL;
}

static int dlx_legacy_build(const struct tsmr__dlx_out *o, struct tsmr__dlx_rec **rec,
                            void **managed) {
  struct tsmr_dlx_legacy_block *b = tsmr__alloc(sizeof *b);
  if (!b) return TSMR_ENOMEM;
  memset(b, 0, sizeof *b);
  for (int i = 0; i < o->ndim; i++) {
    b->shape[i] = o->shape[i];
    b->strides[i] = o->strides[i];
  }
  DLTensor *t = &b->mt.dl_tensor;
  t->data = o->data;
  t->device.device_type = (DLDeviceType)o->device_type;
  t->device.device_id = o->device_id;
  t->ndim = o->ndim;
  t->dtype.code = o->code;
  t->dtype.bits = o->bits;
  t->dtype.lanes = 1;
  t->shape = b->shape;
  t->strides = b->strides; /* given anyway, also for compact tensors */
  t->byte_offset = 0;
  b->mt.manager_ctx = &b->rec;
  b->mt.deleter = dlx_legacy_deleter;
  *rec = &b->rec;
  *managed = &b->mt;
  return 0;
}

const struct tsmr__dlx_form tsmr__dlx_legacy = {
    dlx_legacy_parse,
    dlx_legacy_call_deleter,
    dlx_legacy_own,
    dlx_legacy_build,
};
