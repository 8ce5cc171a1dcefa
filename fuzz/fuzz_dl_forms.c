/*
 * fuzz/fuzz_dl_forms.c: the one place fuzz/ touches DLPack structs directly. The
 * judge's producer (harness/src/base/dlpack_judge.h) builds well-formed arrays of at most
 * TSM_MAX_DIMS entries; the dlpack-consume target also needs a NULL shape, more than
 * TSM_MAX_DIMS dimensions and poisoned pointers, so it swaps the arrays here. Compiled
 * against the DLPack 1.x header (deps.mk), which declares both DLManagedTensor (same
 * layout as Debian's 0.6 header, checked below) and DLManagedTensorVersioned.
 */
#include <dlpack/dlpack.h>
#include <stddef.h>

#include "fuzz_dlpack.h"

_Static_assert(sizeof(DLTensor) == 48, "DLTensor layout of DLPack 0.6");
_Static_assert(offsetof(DLManagedTensor, deleter) == 56, "DLManagedTensor layout of DLPack 0.6");

void fuzz_dl_set_layout(void *managed, int form, int ndim, int64_t *shape, int64_t *strides) {
  DLTensor *t = form == TSM_DLPACK_VERSIONED ? &((DLManagedTensorVersioned *)managed)->dl_tensor
                                             : &((DLManagedTensor *)managed)->dl_tensor;
  t->ndim = ndim;
  t->shape = shape;
  t->strides = strides;
}
