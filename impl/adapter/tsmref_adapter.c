/*
 * impl/adapter/tsmref_adapter.c: the tsm-cts adapter of libtsmref (spec/adapter.md).
 * A thin mapping from the ABI's slots to the tsmr_ API; the only impl file that
 * includes <tsm/adapter.h>. Handles, dtypes, op numbers, state bits and error codes
 * have the same values on both sides (checked below at compile time).
 * Clauses: ABI.LOAD.1, ABI.VER.1-2, ABI.CAP.1, ABI.DEV.1, ABI.SESSION.1,
 * ABI.HANDLE.1, ABI.INFO.1; ABI 1.1 slots: SCOPE.*, COMP.* (spec/scopes.md); ABI 1.2
 * slots: DLP.* (spec/dlpack.md); ABI 1.3 slots: GRAPH.* (spec/graphs.md).
 * Every slot may be called from several threads (TSM_CAP_THREADS): libtsmref locks
 * per context.
 */
#include <pthread.h>
#include <string.h>

#include "tsm/adapter.h"
#include "tsmref.h"
#include "tsmref_test.h"

#define TSMA_SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)
#define TSMA_SAME_ERR(name, value, text) TSMA_SAME(TSM_##name, TSMR_##name);
TSM_ERRNO_MAP(TSMA_SAME_ERR)
#define TSMA_DTYPES(X) \
  X(F32) X(I32) X(F64) X(F16) X(BF16) X(I8) X(I16) X(I64) X(U8) X(U16) X(U32) X(U64) X(BOOL)
#define TSMA_SAME_DTYPE(name) TSMA_SAME(TSM_##name, TSMR_##name);
TSMA_DTYPES(TSMA_SAME_DTYPE)
#define TSMA_DTYPE_BIT(name) | (1u << TSM_##name)
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
TSMA_SAME(TSM_KIND_TENSOR, TSMR_KIND_TENSOR);
TSMA_SAME(TSM_KIND_COMPOSITE, TSMR_KIND_COMPOSITE);
TSMA_SAME(TSM_COMPONENT_DATA, TSMR_COMPONENT_DATA);
TSMA_SAME(TSM_COMPONENT_BATCH_SIZES, TSMR_COMPONENT_BATCH_SIZES);
TSMA_SAME(TSM_COMPONENT_SORTED_INDICES, TSMR_COMPONENT_SORTED_INDICES);
TSMA_SAME(TSM_COMPONENT_UNSORTED_INDICES, TSMR_COMPONENT_UNSORTED_INDICES);
TSMA_SAME(TSM_ERRNO_MIN, TSMR_ERRNO_MIN);
TSMA_SAME(TSM_DLPACK_LEGACY, TSMR_DLPACK_LEGACY);
TSMA_SAME(TSM_DLPACK_VERSIONED, TSMR_DLPACK_VERSIONED);
TSMA_SAME(TSM_DLPACK_COPY, TSMR_DLPACK_COPY);
TSMA_SAME(TSM_DLPACK_READ_ONLY, TSMR_DLPACK_READ_ONLY);
TSMA_SAME(TSM_OP_TRANSPOSE, TSMR_OP_TRANSPOSE);
TSMA_SAME(TSM_OP_DIAG, TSMR_OP_DIAG);
TSMA_SAME(TSM_OP_SVD, TSMR_OP_SVD);
TSMA_SAME(TSM_GRAPH_INPUT, TSMR_GRAPH_INPUT);
TSMA_SAME(TSM_GRAPH_OUTPUT, TSMR_GRAPH_OUTPUT);
TSMA_SAME(TSM_GRAPH_PARAM, TSMR_GRAPH_PARAM);
TSMA_SAME(TSM_PLAN_REUSE, TSMR_PLAN_REUSE);
TSMA_SAME(TSM_PLAN_NONE, TSMR_PLAN_NONE);
_Static_assert(sizeof(tsm_handle) == sizeof(tsmr_handle), "handle width");

/* The device list, built once: libtsmref probes its devices once per process, so the
 * names, availability and reasons never change after the first call. */
#define TSMA_MAX_DEVICES 8
static struct tsm_device tsma_devices[TSMA_MAX_DEVICES];
static int tsma_device_n; /* entries in tsma_devices, or TSM_EINVAL */
static pthread_once_t tsma_devices_once = PTHREAD_ONCE_INIT;

static void tsma_devices_build(void) {
  int n = tsmr_device_count();
  if (n > TSMA_MAX_DEVICES) n = TSMA_MAX_DEVICES;
  for (int i = 0; i < n; i++) {
    const char *name = "", *reason = "";
    int available = 0;
    if (tsmr_device_get(i, &name, &available, &reason) != 0) {
      tsma_device_n = TSM_EINVAL;
      return;
    }
    tsma_devices[i].name = name;
    tsma_devices[i].available = available;
    tsma_devices[i].unavailable_reason = available ? NULL : reason;
  }
  tsma_device_n = n;
}

static int tsma_device_list(const struct tsm_device **out) {
  pthread_once(&tsma_devices_once, tsma_devices_build);
  if (tsma_device_n >= 0) *out = tsma_devices;
  return tsma_device_n;
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

static int tsma_res_adopt(void *s, tsm_handle r, tsm_handle *out) {
  return tsmr_res_adopt(s, r, out);
}

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

/* ---- ABI 1.1: scopes ---------------------------------------------------------- */

static int tsma_scope_open(void *s, tsm_handle *out) { return tsmr_scope_open(s, out); }

static int tsma_scope_dispose(void *s, tsm_handle sc) { return tsmr_scope_dispose(s, sc); }

static int tsma_scope_move_to_outer(void *s, tsm_handle sc, tsm_handle r) {
  return tsmr_scope_move_to_outer(s, sc, r);
}

static int tsma_scope_move_to_other(void *s, tsm_handle sc, tsm_handle r,
                                    tsm_handle other) {
  return tsmr_scope_move_to_other(s, sc, r, other);
}

static int tsma_scope_detach(void *s, tsm_handle sc, tsm_handle r) {
  return tsmr_scope_detach(s, sc, r);
}

static int tsma_scope_attach(void *s, tsm_handle sc, tsm_handle r) {
  return tsmr_scope_attach(s, sc, r);
}

static int tsma_scope_dispose_all(void *s, tsm_handle sc, const tsm_handle *keep,
                                  int n_keep) {
  return tsmr_scope_dispose_all(s, sc, keep, n_keep);
}

static int tsma_scope_handover(void *s, tsm_handle sc) { return tsmr_scope_handover(s, sc); }

/* tsm_handle and tsmr_handle are both uint64_t, so fn passes through unchanged. */
static int tsma_scope_wrapped(void *s, int (*fn)(void *arg, tsm_handle *result), void *arg,
                              tsm_handle *out) {
  return tsmr_scope_wrapped(s, fn, arg, out);
}

static int tsma_scope_current(void *s, tsm_handle *out) { return tsmr_scope_current(s, out); }

static int tsma_scope_info(void *s, tsm_handle sc, struct tsm_scope_info *out) {
  struct tsmr_scope_info i;
  int rc = tsmr_scope_info(s, sc, &i);
  if (rc || !out) return rc ? rc : TSM_EINVAL;
  out->disposed = i.disposed;
  out->outer = i.outer;
  out->members = i.members;
  return 0;
}

static int tsma_thread_stats(void *s, int kind, struct tsm_scope_stats *out) {
  struct tsmr_scope_stats i;
  int rc = tsmr_thread_stats(s, kind, &i);
  if (rc || !out) return rc ? rc : TSM_EINVAL;
  out->created_in_scope = i.created_in_scope;
  out->created_outside = i.created_outside;
  out->disposed_in_scope = i.disposed_in_scope;
  out->disposed_outside = i.disposed_outside;
  out->attached = i.attached;
  out->detached = i.detached;
  out->live = i.live;
  return 0;
}

static int tsma_res_links(void *s, tsm_handle r, struct tsm_res_links *out) {
  struct tsmr_res_links i;
  int rc = tsmr_res_links(s, r, &i);
  if (rc || !out) return rc ? rc : TSM_EINVAL;
  out->kind = i.kind;
  out->scope = i.scope;
  out->composite = i.composite;
  return 0;
}

/* ---- ABI 1.1: composites ------------------------------------------------------ */

static int tsma_composite_pack(void *s, const tsm_handle *seqs, int n, int enforce_sorted,
                               tsm_handle *out) {
  return tsmr_pack(s, seqs, n, enforce_sorted, out);
}

static int tsma_composite_list(void *s, const tsm_handle *items, int n, tsm_handle *out) {
  return tsmr_list(s, items, n, out);
}

static int tsma_composite_component(void *s, tsm_handle c, int index, tsm_handle *out) {
  return tsmr_component(s, c, index, out);
}

/* ---- ABI 1.2: DLPack C ABI ---------------------------------------------------- */

static int tsma_dlpack_export(void *s, tsm_handle r, int form, uint32_t request,
                              void **out) {
  return tsmr_dlpack_export(s, r, form, request, out);
}

/* managed is consumed by libtsmref whatever the result (DLP.IMPORT.2). */
static int tsma_dlpack_import(void *s, void *managed, int form, tsm_handle m,
                              tsm_handle *out) {
  return tsmr_dlpack_import(s, managed, form, m, out);
}

/* ---- ABI 1.3: graphs ------------------------------------------------------------ */

static int tsma_graph_new(void *s, tsm_handle mgr, tsm_handle *out) {
  return tsmr_graph_new(s, mgr, out);
}

static int tsma_graph_leaf(void *s, tsm_handle g, const struct tsm_tensor_desc *d,
                           tsm_handle *out) {
  struct tsmr_tensor_desc rd;
  if (!d) return TSM_EINVAL;
  memset(&rd, 0, sizeof rd);
  rd.dtype = d->dtype;
  rd.ndim = d->ndim;
  if (d->ndim < 0 || d->ndim > TSM_MAX_DIMS) return TSM_EINVAL;
  for (int i = 0; i < d->ndim; i++) rd.shape[i] = d->shape[i];
  return tsmr_graph_leaf(s, g, &rd, out);
}

static int tsma_graph_external(void *s, tsm_handle g, tsm_handle tensor, tsm_handle *out) {
  return tsmr_graph_external(s, g, tensor, out);
}

static int tsma_graph_op(void *s, tsm_handle g, int op, const tsm_handle *srcs, int n,
                         const int64_t *params, int n_params, tsm_handle *outs, int n_outs) {
  return tsmr_graph_op(s, g, op, srcs, n, params, n_params, outs, n_outs);
}

static int tsma_graph_flag(void *s, tsm_handle t, uint32_t flags) {
  return tsmr_graph_flag(s, t, flags);
}

static int tsma_graph_expand(void *s, tsm_handle g, tsm_handle t) {
  return tsmr_graph_expand(s, g, t);
}

static int tsma_graph_plan(void *s, tsm_handle g, int mode) {
  return tsmr_graph_plan(s, g, mode);
}

static int tsma_graph_write(void *s, tsm_handle t, const void *data, size_t nbytes) {
  return tsmr_graph_write(s, t, data, nbytes);
}

static int tsma_graph_compute(void *s, tsm_handle g) { return tsmr_graph_compute(s, g); }

static int tsma_graph_read(void *s, tsm_handle t, void *dst, size_t cap) {
  return tsmr_graph_read(s, t, dst, cap);
}

static int tsma_graph_place(void *s, tsm_handle t, struct tsm_graph_place *out) {
  struct tsmr_graph_place p;
  if (!out) return TSM_EINVAL;
  int rc = tsmr_graph_place(s, t, &p);
  if (rc) return rc;
  out->in_graph = p.in_graph;
  out->placed = p.placed;
  out->order = p.order;
  out->buffer = p.buffer;
  out->offset = p.offset;
  out->nbytes = p.nbytes;
  out->root = p.root;
  return 0;
}

static int tsma_graph_info(void *s, tsm_handle g, struct tsm_graph_info *out) {
  struct tsmr_graph_info i;
  if (!out) return TSM_EINVAL;
  int rc = tsmr_graph_info(s, g, &i);
  if (rc) return rc;
  out->released = i.released;
  out->planned = i.planned;
  out->stale = i.stale;
  out->planned_bytes = i.planned_bytes;
  return 0;
}

static int tsma_graph_release(void *s, tsm_handle g) { return tsmr_graph_release(s, g); }

/* The ABI's fault-injection slot (ERR.NOMEM.1) is the library's test hook. */
static int tsma_debug_alloc_fail(void *s, uint64_t arm, uint64_t *left) {
  (void)s;
  if (!left) return TSM_EINVAL;
  if (arm != TSM_ALLOC_QUERY) tsmr_test_alloc_fail_nth(arm);
  *left = tsmr_test_alloc_fail_left();
  return 0;
}

#define TSMA_OP_BIT(op) (1u << (op))

static const struct tsm_adapter tsma_adapter = {
    .abi_major = TSM_ADAPTER_ABI_MAJOR,
    .abi_minor = TSM_ADAPTER_ABI_MINOR,
    .struct_size = sizeof(struct tsm_adapter),
    .caps = TSM_CAP_MANAGERS | TSM_CAP_SCOPES | TSM_CAP_COMPOSITES | TSM_CAP_THREADS |
        TSM_CAP_DLPACK_C | TSM_CAP_GRAPHS,
    .ops = TSMA_OP_BIT(TSM_OP_ADD) | TSMA_OP_BIT(TSM_OP_SUB) |
        TSMA_OP_BIT(TSM_OP_MUL) | TSMA_OP_BIT(TSM_OP_SUM) | TSMA_OP_BIT(TSM_OP_GATHER) |
        TSMA_OP_BIT(TSM_OP_RESHAPE) | TSMA_OP_BIT(TSM_OP_MATMUL),
    /* transpose, diag and svd are graph operations only (graph_op, TSM_CAP_GRAPHS):
     * the manager op slot does not offer them, so their bits stay clear. */
    .name = "tsmref",
    .version = "libtsmref " TSMREF_VERSION_STRING,
    .device_list = tsma_device_list,
    .session_open = tsma_session_open,
    .session_close = tsma_session_close,
    .mgr_root = tsma_mgr_root,
    .mgr_new_sub = tsma_mgr_new_sub,
    .mgr_sub_of = tsma_mgr_sub_of,
    .mgr_close = tsma_mgr_close,
    .mgr_cap = tsma_mgr_cap,
    .mgr_info = tsma_mgr_info,
    .mgr_dump = tsma_mgr_dump,
    .tensor_new = tsma_tensor_new,
    .tensor_desc = tsma_tensor_desc,
    .tensor_read = tsma_tensor_read,
    .op = tsma_op,
    .res_attach = tsma_res_attach,
    .res_detach = tsma_res_detach,
    .res_temp_attach = tsma_res_temp_attach,
    .res_ret = tsma_res_ret,
    .res_release = tsma_res_release,
    .res_info = tsma_res_info,
    .live_bytes = tsma_live_bytes,
    /* ABI 1.1 */
    .scope_open = tsma_scope_open,
    .scope_dispose = tsma_scope_dispose,
    .scope_move_to_outer = tsma_scope_move_to_outer,
    .scope_move_to_other = tsma_scope_move_to_other,
    .scope_detach = tsma_scope_detach,
    .scope_attach = tsma_scope_attach,
    .scope_dispose_all = tsma_scope_dispose_all,
    .scope_handover = tsma_scope_handover,
    .scope_wrapped = tsma_scope_wrapped,
    .scope_current = tsma_scope_current,
    .scope_info = tsma_scope_info,
    .thread_stats = tsma_thread_stats,
    .res_links = tsma_res_links,
    .composite_pack = tsma_composite_pack,
    .composite_list = tsma_composite_list,
    .composite_component = tsma_composite_component,
    /* ABI 1.2 */
    .dlpack_export = tsma_dlpack_export,
    .dlpack_import = tsma_dlpack_import,
    /* ABI 1.3 */
    .graph_new = tsma_graph_new,
    .graph_leaf = tsma_graph_leaf,
    .graph_external = tsma_graph_external,
    .graph_op = tsma_graph_op,
    .graph_flag = tsma_graph_flag,
    .graph_expand = tsma_graph_expand,
    .graph_plan = tsma_graph_plan,
    .graph_write = tsma_graph_write,
    .graph_compute = tsma_graph_compute,
    .graph_read = tsma_graph_read,
    .graph_place = tsma_graph_place,
    .graph_info = tsma_graph_info,
    .graph_release = tsma_graph_release,
    .debug_alloc_fail = tsma_debug_alloc_fail,
    /* ABI 1.5 */
    .dtypes = 0u TSMA_DTYPES(TSMA_DTYPE_BIT),
    .res_adopt = tsma_res_adopt,
};

__attribute__((visibility("default"))) const struct tsm_adapter *tsm_adapter_entry(void) {
  return &tsma_adapter;
}
