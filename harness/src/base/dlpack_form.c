/*
 * harness/src/base/dlpack_form.c: the judge's producer, reader and deleter of one DLPack
 * form, compiled once per form (harness/harness.mk): with CTS_DL_VERSIONED=0 against
 * Debian's libdlpack-dev header (DLPack 0.6) into the cts_dl_legacy_* functions, with
 * CTS_DL_VERSIONED=1 against the DLPack 1.x header bundled in apache-tvm-ffi (deps.mk)
 * into the cts_dl_versioned_* functions. The two headers declare the same names, hence
 * two translation units of one source. Clauses: DLP.DEL.1-3, DLP.EXPORT.1-2.
 */
#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "util.h"

#if !defined(CTS_DL_VERSIONED)
#error "compile with -DCTS_DL_VERSIONED=0 (legacy form) or 1 (versioned form)"
#endif

_Static_assert(sizeof(DLTensor) == 48, "DLTensor layout");
_Static_assert(offsetof(DLTensor, byte_offset) == 40, "DLTensor layout");
#if CTS_DL_VERSIONED
_Static_assert(DLPACK_MAJOR_VERSION == 1, "the versioned form is DLPack 1.x");
typedef struct DLManagedTensorVersioned form_managed;
#define FORM_FN(name) cts_dl_versioned_##name
_Static_assert(sizeof(form_managed) == 80, "DLManagedTensorVersioned layout");
_Static_assert(offsetof(form_managed, flags) == 24, "DLManagedTensorVersioned layout");
_Static_assert(offsetof(form_managed, dl_tensor) == 32, "DLManagedTensorVersioned layout");
#else
typedef DLManagedTensor form_managed;
#define FORM_FN(name) cts_dl_legacy_##name
_Static_assert(sizeof(form_managed) == 64, "DLManagedTensor layout");
_Static_assert(offsetof(form_managed, deleter) == 56, "DLManagedTensor layout");
#endif

/* The shape and strides live in the same allocation as the struct. */
struct judge_managed {
  form_managed m;
  int64_t shape[CTS_DL_MAX_DIMS];
  int64_t strides[CTS_DL_MAX_DIMS];
};

static void judge_deleter(form_managed *self) { cts_dl_record_deleted(self->manager_ctx); }

static void set_tensor(DLTensor *t, const struct cts_dl_view *v, struct judge_managed *j) {
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
}

void *FORM_FN(make)(const struct cts_dl_view *v, struct cts_dl_record *rec) {
  struct judge_managed *j = cts_xcalloc(1, sizeof *j);
#if CTS_DL_VERSIONED
  j->m.version.major = v->major;
  j->m.version.minor = v->minor;
  j->m.flags = v->flags;
#endif
  set_tensor(&j->m.dl_tensor, v, j);
  j->m.manager_ctx = rec;
  j->m.deleter = v->has_deleter ? judge_deleter : NULL;
  return &j->m;
}

void FORM_FN(free)(void *managed) { free(managed); }

static void view_tensor(const DLTensor *t, struct cts_dl_view *out) {
  out->device_type = (int)t->device.device_type;
  out->device_id = t->device.device_id;
  out->ndim = t->ndim;
  for (int i = 0; i < t->ndim && i < CTS_DL_MAX_DIMS; i++) {
    out->shape[i] = t->shape ? t->shape[i] : -1;
    if (t->strides) out->strides[i] = t->strides[i];
  }
  out->has_strides = t->strides != NULL;
  out->code = t->dtype.code;
  out->bits = t->dtype.bits;
  out->lanes = t->dtype.lanes;
  out->byte_offset = t->byte_offset;
  out->data = t->data;
}

void FORM_FN(view)(const void *managed, struct cts_dl_view *out) {
  const form_managed *m = managed;
  memset(out, 0, sizeof *out);
#if CTS_DL_VERSIONED
  out->major = m->version.major;
  out->minor = m->version.minor;
  out->flags = m->flags;
#endif
  view_tensor(&m->dl_tensor, out);
  out->has_deleter = m->deleter != NULL;
}

void FORM_FN(delete)(void *managed) {
  form_managed *m = managed;
  if (m->deleter) m->deleter(m);
}
