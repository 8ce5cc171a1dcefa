/*
 * impl/src/dlpack_versioned.c: the versioned DLPack form (DLManagedTensorVersioned,
 * DLPack 1.x), compiled against the dlpack.h bundled in PyPI's apache-tvm-ffi (1.3;
 * its folder is read from $(DLPACK_V1_INC_FILE), never vendored). Builds and reads the
 * managed struct for the core (dlpack.c) through dlx.h.
 * Clauses: DLP.DEL.1-3, DLP.EXPORT.1-2, DLP.EXPORT.5, DLP.IMPORT.1, DLP.IMPORT.3-4.
 */
#include <dlpack/dlpack.h>
#include <stddef.h>
#include <string.h>

#include "dlx.h"

#if DLPACK_MAJOR_VERSION != 1
#error "dlpack_versioned.c needs a DLPack 1.x header"
#endif

/* The ABI this TU relies on (DLPack 1.x, LP64). */
_Static_assert(sizeof(DLTensor) == 48, "DLTensor size");
_Static_assert(offsetof(DLTensor, data) == 0, "DLTensor.data");
_Static_assert(offsetof(DLTensor, device) == 8, "DLTensor.device");
_Static_assert(offsetof(DLTensor, ndim) == 16, "DLTensor.ndim");
_Static_assert(offsetof(DLTensor, dtype) == 20, "DLTensor.dtype");
_Static_assert(offsetof(DLTensor, shape) == 24, "DLTensor.shape");
_Static_assert(offsetof(DLTensor, strides) == 32, "DLTensor.strides");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor.byte_offset");
_Static_assert(sizeof(struct DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned");
_Static_assert(offsetof(struct DLManagedTensorVersioned, version) == 0, "version");
_Static_assert(offsetof(struct DLManagedTensorVersioned, manager_ctx) == 8, "manager_ctx");
_Static_assert(offsetof(struct DLManagedTensorVersioned, deleter) == 16, "deleter");
_Static_assert(offsetof(struct DLManagedTensorVersioned, flags) == 24, "flags");
_Static_assert(offsetof(struct DLManagedTensorVersioned, dl_tensor) == 32, "dl_tensor");
_Static_assert((int)kDLCPU == (int)TSMR__DLX_CPU && (int)kDLCUDA == (int)TSMR__DLX_CUDA &&
                   (int)kDLCUDAHost == (int)TSMR__DLX_CUDA_HOST &&
                   (int)kDLCUDAManaged == (int)TSMR__DLX_CUDA_MANAGED,
               "DLDeviceType values");
_Static_assert((int)kDLInt == (int)TSMR__DLX_INT && (int)kDLFloat == (int)TSMR__DLX_FLOAT,
               "DLDataTypeCode values");
_Static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == TSMR__DLX_FLAG_READ_ONLY &&
                   DLPACK_FLAG_BITMASK_IS_COPIED == TSMR__DLX_FLAG_IS_COPIED,
               "DLPACK_FLAG_BITMASK_* values");

const int tsmr__dlx_versioned_minor = DLPACK_MINOR_VERSION;

struct tsmr_dlx_versioned_block {
  struct tsmr__dlx_rec rec; /* first: tsmr__free(rec) frees the block */
  struct DLManagedTensorVersioned mt;
  int64_t shape[TSMR_MAX_DIMS], strides[TSMR_MAX_DIMS];
};

/* The deleter of every versioned export: any thread, exactly once (DLP.DEL.1, 3). */
static void dlx_versioned_deleter(struct DLManagedTensorVersioned *mt) {
  struct tsmr__dlx_rec *rec = mt->manager_ctx;
  tsmr__dlx_rec_drop(rec);
  tsmr__free(rec);
}

static int dlx_versioned_parse(void *managed, struct tsmr__dlx_view *v) {
  const struct DLManagedTensorVersioned *mt = managed;
  if (mt->version.major != 1) return TSMR_EVERSION; /* DLP.IMPORT.1: nothing else read */
  const DLTensor *t = &mt->dl_tensor;
  v->data = t->data;
  v->byte_offset = t->byte_offset;
  v->device_type = (int)t->device.device_type;
  v->device_id = t->device.device_id;
  v->ndim = t->ndim;
  v->shape = t->shape;
  v->strides = t->strides;
  /* DLP.IMPORT.4: from 1.2 on, strides are mandatory when ndim > 0 */
  v->strides_refused = !t->strides && t->ndim > 0 && mt->version.minor >= 2;
  v->code = t->dtype.code;
  v->bits = t->dtype.bits;
  v->lanes = t->dtype.lanes;
  return 0;
}

/* Reads only the deleter, whose place every major version keeps (DLP.IMPORT.1). */
static void dlx_versioned_call_deleter(void *managed) {
  struct DLManagedTensorVersioned *mt = managed;
  if (mt->deleter) mt->deleter(mt); /* DLP.DEL.2 */
}

static struct tsmr__dlx_rec *dlx_versioned_own(void *managed) {
  const struct DLManagedTensorVersioned *mt = managed;
  return mt->deleter == dlx_versioned_deleter ? mt->manager_ctx : NULL;
}

static int dlx_versioned_build(const struct tsmr__dlx_out *o,
                               struct tsmr__dlx_rec **rec, void **managed) {
  struct tsmr_dlx_versioned_block *b = tsmr__alloc(sizeof *b);
  if (!b) return TSMR_ENOMEM;
  memset(b, 0, sizeof *b);
  for (int i = 0; i < o->ndim; i++) {
    b->shape[i] = o->shape[i];
    b->strides[i] = o->strides[i];
  }
  b->mt.version.major = DLPACK_MAJOR_VERSION;
  b->mt.version.minor = DLPACK_MINOR_VERSION;
  b->mt.manager_ctx = &b->rec;
  b->mt.deleter = dlx_versioned_deleter;
  b->mt.flags = o->flags; /* 0 unless requested (DLP.EXPORT.2, DLP.EXPORT.5) */
  DLTensor *t = &b->mt.dl_tensor;
  t->data = o->data;
  t->device.device_type = (DLDeviceType)o->device_type;
  t->device.device_id = o->device_id;
  t->ndim = o->ndim;
  t->dtype.code = o->code;
  t->dtype.bits = o->bits;
  t->dtype.lanes = 1;
  t->shape = b->shape;
  t->strides = b->strides; /* never NULL (DLPack 1.2) */
  t->byte_offset = 0;
  *rec = &b->rec;
  *managed = &b->mt;
  return 0;
}

const struct tsmr__dlx_form tsmr__dlx_versioned = {
    dlx_versioned_parse,
    dlx_versioned_call_deleter,
    dlx_versioned_own,
    dlx_versioned_build,
};
