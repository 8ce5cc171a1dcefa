/*
 * harness/src/dlpack_legacy.c: the judge's producer, reader and deleter for the
 * legacy DLPack form, compiled against Debian's libdlpack-dev (DLPack 0.6) (deps.mk). Clauses: DLP.DEL.1-3,
 * DLP.EXPORT.1-2.
 */
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "util.h"

_Static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor layout");
_Static_assert(sizeof(DLManagedTensor) == 64, "DLManagedTensor layout");
_Static_assert(offsetof(DLManagedTensor, deleter) == 56, "DLManagedTensor layout");

/* The shape and strides live in the same allocation as the struct. */
struct judge_legacy {
  DLManagedTensor m;
  int64_t shape[TSM_MAX_DIMS];
  int64_t strides[TSM_MAX_DIMS];
};

static void judge_deleter(DLManagedTensor *self) {
  cts_dl_record_deleted(self->manager_ctx);
}

void *cts_dl_legacy_make(const struct cts_dl_view *v, struct cts_dl_record *rec) {
  struct judge_legacy *j = cts_xcalloc(1, sizeof *j);
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

void cts_dl_legacy_free(void *managed) { free(managed); }

void cts_dl_legacy_view(const void *managed, struct cts_dl_view *out) {
  const DLManagedTensor *m = managed;
  const DLTensor *t = &m->dl_tensor;
  memset(out, 0, sizeof *out);
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

void cts_dl_legacy_delete(void *managed) {
  DLManagedTensor *m = managed;
  if (m->deleter) m->deleter(m);
}
