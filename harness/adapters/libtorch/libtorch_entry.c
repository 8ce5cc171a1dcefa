/*
 * harness/adapters/libtorch/libtorch_entry.c: the libtorch adapter's vtable and entry
 * point. The slots are libtorch_adapter.cpp's (ATen's DLPack conversion) and the shared
 * manager layer's (AM_SLOTS); this file is C only because AM_SLOTS's designated
 * initializers are out of the struct's declaration order, which C++17 refuses.
 *
 * caps = TSM_CAP_MANAGERS | TSM_CAP_DLPACK_C; one device, "cpu"; f32 and i32 tensors;
 * the ops add, sub, mul, sum, gather, reshape, matmul.
 *
 * clauses: [ABI.LOAD.1, ABI.VER.1, ABI.VER.2, ABI.CAP.1, ABI.SLOT.1]
 */
#include <tsm/adapter.h>
#include <torch/csrc/api/include/torch/version.h>

#include "adapter_mgr.h"
#include "libtorch_adapter.h"

/* Whose ATen: Debian's libtorch (libtorch.mk), or a torch wheel's (wheel.mk says so). */
#ifndef LT_ATEN_ORIGIN
#define LT_ATEN_ORIGIN "Debian's libtorch"
#endif

const struct tsm_adapter *tsm_adapter_entry(void);

static const struct tsm_adapter lt_adapter = {
    .abi_major = TSM_ADAPTER_ABI_MAJOR,
    .abi_minor = TSM_ADAPTER_ABI_MINOR,
    .struct_size = sizeof(struct tsm_adapter),
    .caps = TSM_CAP_MANAGERS | TSM_CAP_DLPACK_C,
    .ops = AM_OPS,
    .name = "libtorch",
    .version = "1.0 over ATen " TORCH_VERSION " (" LT_ATEN_ORIGIN ")",
    .session_open = lt_session_open,
    .session_close = lt_session_close,
    AM_SLOTS,
    .op = lt_op,
    .live_bytes = lt_live_bytes,
    .dlpack_export = lt_dlpack_export,
    .dlpack_import = lt_dlpack_import,
};

/* RETURN the adapter; static, valid until the object is unloaded (ABI.LOAD.1). */
const struct tsm_adapter *tsm_adapter_entry(void) { return &lt_adapter; }
