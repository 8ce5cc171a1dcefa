/*
 * harness/adapters/libtorch/libtorch_adapter.h: the slots that libtorch_adapter.cpp (C++,
 * over ATen) implements and libtorch_entry.c (C) puts into the adapter's vtable.
 *
 * The vtable is C because it takes the shared manager layer's slots through AM_SLOTS
 * (harness/adapters/common/adapter_mgr.h), whose designated initializers are not in
 * the struct's declaration order: C allows that, C++17 does not.
 */
#ifndef LT_LIBTORCH_ADAPTER_H
#define LT_LIBTORCH_ADAPTER_H

#include <stdint.h>

#include <tsm/adapter.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(hidden)

int lt_session_open(int device_index, void **s_out);
void lt_session_close(void *s);
int lt_op(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params, int n_params,
          tsm_handle out_mgr, tsm_handle *out);
int lt_live_bytes(void *s, uint64_t *out);
int lt_dlpack_export(void *s, tsm_handle r, int form, uint32_t request, void **out);
int lt_dlpack_import(void *s, void *managed, int form, tsm_handle m, tsm_handle *out);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* LT_LIBTORCH_ADAPTER_H */
