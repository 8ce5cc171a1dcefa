/*
 * harness/src/dlpack_versioned.c: the judge's producer, reader and deleter for the
 * versioned DLPack form, compiled against the dlpack.h bundled in apache-tvm-ffi (DLPack 1.x) (deps.mk). Clauses: DLP.DEL.1-3,
 * DLP.EXPORT.1-2.
 */
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "util.h"

_Static_assert(DLPACK_MAJOR_VERSION == 1, "the versioned form is DLPack 1.x");
_Static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
_Static_assert(sizeof(struct DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned layout");
_Static_assert(offsetof(struct DLManagedTensorVersioned, flags) == 24, "versioned layout");
_Static_assert(offsetof(struct DLManagedTensorVersioned, dl_tensor) == 32, "versioned layout");

struct judge_versioned {
  struct DLManagedTensorVersioned m;
  int64_t shape[TSM_MAX_DIMS];
  int64_t strides[TSM_MAX_DIMS];
};

static void judge_deleter(struct DLManagedTensorVersioned *self) {
  cts_dl_record_deleted(self->manager_ctx);
}

void *cts_dl_versioned_make(const struct cts_dl_view *v, struct cts_dl_record *rec) {
  struct judge_versioned *j = cts_xcalloc(1, sizeof *j);
  j->m.version.major = v->major;
  j->m.version.minor = v->minor;
  j->m.flags = v->flags;
  DLTensor *t = &j->m.dl_tensor;
  t->data = v->data;
  t->device.device_type = (DLDeviceType)v->device_type;
  t->device.device_id = v->device_id;
  t->ndim = v->ndim;
  t->dtype.code = (uint8_t)v->code;
  t->dtype.bits = (uint8_t)v->bits;
  t->dtype.lanes = (uint16_t)v->lanes;
  memcpy(j->shape, v->shape, sizeof j->shape);
  memcpy(j->strides, v->strides, sizeof j->strides);
  t->shape = j->shape;
  t->strides = v->has_strides ? j->strides : NULL;
  t->byte_offset = v->byte_offset;
  j->m.manager_ctx = rec;
  j->m.deleter = v->has_deleter ? judge_deleter : NULL;
  return &j->m;
}

void cts_dl_versioned_free(void *managed) { free(managed); }

void cts_dl_versioned_view(const void *managed, struct cts_dl_view *out) {
  const struct DLManagedTensorVersioned *m = managed;
  const DLTensor *t = &m->dl_tensor;
  memset(out, 0, sizeof *out);
  out->major = m->version.major;
  out->minor = m->version.minor;
  out->flags = m->flags;
  out->device_type = (int)t->device.device_type;
  out->device_id = t->device.device_id;
  out->ndim = t->ndim;
  for (int i = 0; i < t->ndim && i < TSM_MAX_DIMS; i++) {
    out->shape[i] = t->shape ? t->shape[i] : -1;
    if (t->strides) out->strides[i] = t->strides[i];
  }
  out->has_strides = t->strides != NULL;
  out->code = t->dtype.code;
  out->bits = t->dtype.bits;
  out->lanes = t->dtype.lanes;
  out->byte_offset = t->byte_offset;
  out->data = t->data;
  out->has_deleter = m->deleter != NULL;
}

void cts_dl_versioned_delete(void *managed) {
  struct DLManagedTensorVersioned *m = managed;
  if (m->deleter) m->deleter(m);
}
