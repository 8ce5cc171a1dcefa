/*
 * fuzz/fuzz_dlpack.h: what the dlpack-consume target (fuzz/fuzz_dlpack.c) needs from
 * the translation unit that sees the DLPack header (fuzz/fuzz_dl_forms.c).
 */
#ifndef FUZZ_DLPACK_H
#define FUZZ_DLPACK_H

#include <stdint.h>

#include "tsm/adapter.h"

/* Points the managed tensor's DLTensor (form: enum tsm_dlpack_form) at ndim, shape
 * and strides; the arrays stay the caller's and must outlive the tensor's deleter. */
void fuzz_dl_set_layout(void *managed, int form, int ndim, int64_t *shape, int64_t *strides);

#endif
