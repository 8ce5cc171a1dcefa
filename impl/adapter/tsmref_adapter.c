/*
 * impl/adapter/tsmref_adapter.c: the tsm-cts adapter of libtsmref (spec/adapter.md).
 * A thin mapping from the ABI's slots to the tsmr_ API; the only impl file that
 * includes <tsm/adapter.h>. Handles, dtypes, op numbers, state bits and error codes
 * have the same values on both sides (checked below at compile time).
 * Clauses: ABI.LOAD.1, ABI.VER.1-2, ABI.CAP.1, ABI.DEV.1, ABI.SESSION.1,
 * ABI.HANDLE.1, ABI.INFO.1.
 */
#include <string.h>

#include "tsm/adapter.h"
#include "tsmref.h"

#define TSMA_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
#define TSMA_SAME_ERR(name, value, text) TSMA_SAME(TSM_##name, TSMR_##name);
TSM_ERRNO_MAP(TSMA_SAME_ERR)
TSMA_SAME(TSM_F32, TSMR_F32);
TSMA_SAME(TSM_I32, TSMR_I32);
TSMA_SAME(TSM_OP_ADD, TSMR_OP_ADD);
TSMA_SAME(TSM_OP_SUB, TSMR_OP_SUB);
TSMA_SAME(TSM_OP_MUL, TSMR_OP_MUL);
TSMA_SAME(TSM_OP_SUM, TSMR_OP_SUM);
TSMA_SAME(TSM_OP_GATHER, TSMR_OP_GATHER);
TSMA_SAME(TSM_OP_RESHAPE, TSMR_OP_RESHAPE);
TSMA_SAME(TSM_OP_MATMUL, TSMR_OP_MATMUL);
TSMA_SAME(TSM_MGR_CLOSED, TSMR_MGR_CLOSED);
TSMA_SAME(TSM_MGR_CAPPED, TSMR_MGR_CAPPED);
TSMA_SAME(TSM_MAX_DIMS, TSMR_MAX_DIMS);
_Static_assert(sizeof(tsm_handle) == sizeof(tsmr_handle), "handle width");

#define TSMA_MAX_DEVICES 8
static struct tsm_device tsma_devices[TSMA_MAX_DEVICES];

static int tsma_device_list(const struct tsm_device **out) {
  int n = tsmr_device_count();
  if (n > TSMA_MAX_DEVICES) n = TSMA_MAX_DEVICES;
  for (int i = 0; i < n; i++) {
    const char *name = "", *reason = "";
    int available = 0;
    if (tsmr_device_get(i, &name, &available, &reason) != 0) return TSM_EINVAL;
    tsma_devices[i].name = name;
    tsma_devices[i].available = available;
    tsma_devices[i].unavailable_reason = available ? NULL : reason;
  }
  *out = tsma_devices;
  return n;
}

static int tsma_session_open(int device_index, void **s_out) {
  const char *name;
  int available;
  if (!s_out || device_index < 0 || device_index >= tsmr_device_count())
    return TSM_EINVAL;
  if (tsmr_device_get(device_index, &name, &available, NULL) != 0) return TSM_EINVAL;
  if (!available) return TSM_EDEVICE;
  tsmr_ctx *ctx;
  int rc = tsmr_ctx_open(name, &ctx);
  if (rc == 0) *s_out = ctx;
  return rc;
}

static void tsma_session_close(void *s) { tsmr_ctx_close(s); }

static int tsma_mgr_root(void *s, tsm_handle *out) { return tsmr_mgr_root(s, out); }

static int tsma_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  return tsmr_mgr_new_sub(s, parent, out);
}

static int tsma_mgr_sub_of(void *s, tsm_handle r, tsm_handle *out) {
  return tsmr_mgr_sub_of(s, r, out);
}

static int tsma_mgr_close(void *s, tsm_handle m) { return tsmr_mgr_close(s, m); }

static int tsma_mgr_cap(void *s, tsm_handle m) { return tsmr_mgr_cap(s, m); }

static int tsma_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  struct tsmr_mgr_info i;
  int rc = tsmr_mgr_info(s, m, &i);
  if (rc || !out) return rc ? rc : TSM_EINVAL;
  out->state = i.state;
  out->is_root = i.is_root;
  out->parent = i.parent;
  out->live = i.live;
  out->children = i.children;
  return 0;
}

static int tsma_mgr_dump(void *s, tsm_handle m, char *buf, size_t cap) {
  return tsmr_mgr_dump(s, m, buf, cap);
}

static int tsma_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                           const void *data, tsm_handle *out) {
  struct tsmr_tensor_desc d;
  if (!desc) return TSM_EINVAL;
  memset(&d, 0, sizeof d);
  d.dtype = desc->dtype;
  d.ndim = desc->ndim;
  for (int i = 0; i < TSM_MAX_DIMS; i++) d.shape[i] = desc->shape[i];
  return tsmr_tensor_new(s, m, &d, data, out);
}

static int tsma_tensor_desc(void *s, tsm_handle t, struct tsm_tensor_desc *out) {
  struct tsmr_tensor_desc d;
  int rc = tsmr_tensor_desc(s, t, &d);
  if (rc || !out) return rc ? rc : TSM_EINVAL;
  out->dtype = d.dtype;
  out->ndim = d.ndim;
  for (int i = 0; i < TSM_MAX_DIMS; i++) out->shape[i] = d.shape[i];
  return 0;
}

static int tsma_tensor_read(void *s, tsm_handle t, void *dst, size_t cap) {
  return tsmr_tensor_read(s, t, dst, cap);
}

static int tsma_op(void *s, int op, const tsm_handle *inputs, int n,
                   const int64_t *params, int n_params, tsm_handle out_mgr,
                   tsm_handle *out) {
  return tsmr_op(s, op, inputs, n, params, n_params, out_mgr, out);
}

static int tsma_res_attach(void *s, tsm_handle r, tsm_handle m) {
  return tsmr_res_attach(s, r, m);
}

static int tsma_res_detach(void *s, tsm_handle r) { return tsmr_res_detach(s, r); }

static int tsma_res_temp_attach(void *s, tsm_handle r, tsm_handle m) {
  return tsmr_res_temp_attach(s, r, m);
}

static int tsma_res_ret(void *s, tsm_handle m, tsm_handle r) {
  return tsmr_res_ret(s, m, r);
}

static int tsma_res_release(void *s, tsm_handle r) { return tsmr_res_release(s, r); }

static int tsma_res_info(void *s, tsm_handle r, struct tsm_res_info *out) {
  struct tsmr_res_info i;
  int rc = tsmr_res_info(s, r, &i);
  if (rc || !out) return rc ? rc : TSM_EINVAL;
  out->valid = i.valid;
  out->borrowed = i.borrowed;
  out->owner = i.owner;
  out->lender = i.lender;
  out->nbytes = i.nbytes;
  return 0;
}

static int tsma_live_bytes(void *s, uint64_t *out) { return tsmr_live_bytes(s, out); }

#define TSMA_OP_BIT(op) (1u << (op))

static const struct tsm_adapter tsma_adapter = {
    /* .abi_major       = */ TSM_ADAPTER_ABI_MAJOR,
    /* .abi_minor       = */ TSM_ADAPTER_ABI_MINOR,
    /* .struct_size     = */ sizeof(struct tsm_adapter),
    /* .caps            = */ TSM_CAP_MANAGERS,
    /* .ops             = */ TSMA_OP_BIT(TSM_OP_ADD) | TSMA_OP_BIT(TSM_OP_SUB) |
        TSMA_OP_BIT(TSM_OP_MUL) | TSMA_OP_BIT(TSM_OP_SUM) | TSMA_OP_BIT(TSM_OP_GATHER) |
        TSMA_OP_BIT(TSM_OP_RESHAPE) | TSMA_OP_BIT(TSM_OP_MATMUL),
    /* .name            = */ "tsmref",
    /* .version         = */ "libtsmref " TSMREF_VERSION_STRING,
    /* .device_list     = */ tsma_device_list,
    /* .session_open    = */ tsma_session_open,
    /* .session_close   = */ tsma_session_close,
    /* .mgr_root        = */ tsma_mgr_root,
    /* .mgr_new_sub     = */ tsma_mgr_new_sub,
    /* .mgr_sub_of      = */ tsma_mgr_sub_of,
    /* .mgr_close       = */ tsma_mgr_close,
    /* .mgr_cap         = */ tsma_mgr_cap,
    /* .mgr_info        = */ tsma_mgr_info,
    /* .mgr_dump        = */ tsma_mgr_dump,
    /* .tensor_new      = */ tsma_tensor_new,
    /* .tensor_desc     = */ tsma_tensor_desc,
    /* .tensor_read     = */ tsma_tensor_read,
    /* .op              = */ tsma_op,
    /* .res_attach      = */ tsma_res_attach,
    /* .res_detach      = */ tsma_res_detach,
    /* .res_temp_attach = */ tsma_res_temp_attach,
    /* .res_ret         = */ tsma_res_ret,
    /* .res_release     = */ tsma_res_release,
    /* .res_info        = */ tsma_res_info,
    /* .live_bytes      = */ tsma_live_bytes,
};

__attribute__((visibility("default"))) const struct tsm_adapter *tsm_adapter_entry(void) {
  return &tsma_adapter;
}
