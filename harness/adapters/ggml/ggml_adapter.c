/*
 * harness/adapters/ggml/ggml_adapter.c: the adapter of ggml (ggml-org/ggml, from PyPI's
 * libggml-python, deps.mk): caps = managers + graphs. This file is the tensors' storage,
 * the `op` slot and the vtable; ggml_graph.c maps the graph slots onto ggml's graph
 * allocator.
 *
 * ggml has no managers: its tensors live in contexts and backend buffers that the
 * caller frees. The manager slots are therefore the shared manager layer's
 * (harness/adapters/common/adapter_mgr.h, the example adapter's rules), over tensors in
 * host memory, so that graphs have managers to belong to (GRAPH.MGR.1) and external
 * tensors to read (GRAPH.EXT.1); the `op` slot computes with ggml's CPU backend, on
 * one-node ggml graphs over the tensors' own storage.
 *
 * clauses: [ABI.LOAD.1, ABI.VER.1, ABI.VER.2, ABI.CAP.1, ABI.SLOT.1, ABI.DEV.1,
 *           ABI.SESSION.1, ABI.HANDLE.1, ABI.INFO.1, ERR.ORDER.1, ERR.ATOMIC.1, MGR.*]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggml-cpu.h>

#include "ggml_adapter.h"

const struct tsm_adapter *tsm_adapter_entry(void);

/* ---- tensors' storage: host memory ----------------------------------------------------- */

/* The manager layer's storage hooks (struct am_storage). */
static int gg_store_alloc(struct am_session *S, const struct tsm_tensor_desc *desc,
                          size_t nbytes, const void *data, void **out) {
  void *buf = calloc(1, nbytes ? nbytes : 1); /* never NULL: ggml's "allocated" */
  (void)S;
  (void)desc;
  if (!buf) return TSM_ENOMEM;
  if (data) memcpy(buf, data, nbytes);
  *out = buf;
  return 0;
}

static void gg_store_drop(void *store) { free(store); }

static const void *gg_store_elems(void *store) { return store; }

/* A closed manager's graphs are released with it (GRAPH.MGR.1). */
static void gg_mgr_closed(struct am_session *S, tsm_handle m) {
  gg_graphs_of_closed((struct gg_session *)S, m);
}

static const struct am_storage gg_storage = {
    .alloc = gg_store_alloc,
    .drop = gg_store_drop,
    .elems = gg_store_elems,
    .closed = gg_mgr_closed,
};

/* ---- sessions ------------------------------------------------------------------------ */

/* ggml reports through its logger; the judge reads results, not ggml's debug lines, so
 * only warnings and errors go to stderr. */
static void gg_log(enum ggml_log_level level, const char *text, void *user) {
  (void)user;
  if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static int gg_session_open(int device_index, void **s_out) {
  struct gg_session *S;
  if (device_index != 0 || !s_out) return TSM_EINVAL;
  S = calloc(1, sizeof *S);
  if (!S) return TSM_ENOMEM;
  ggml_log_set(gg_log, NULL);
  S->backend = ggml_backend_cpu_init();
  if (!S->backend || am_session_init(&S->am, &gg_storage)) {
    if (S->backend) ggml_backend_free(S->backend);
    free(S);
    return TSM_ENOMEM;
  }
  /* one thread: the planned and the unplanned computes must agree byte for byte
   * (GRAPH.OUT.1), and the cases are small */
  ggml_backend_cpu_set_n_threads(S->backend, 1);
  *s_out = S;
  return 0;
}

/* The graphs first: their external leaves point into the tensors' storage. */
static void gg_session_close(void *s) {
  struct gg_session *S = s;
  if (!S) return;
  gg_graphs_free(S);
  am_session_fini(&S->am);
  ggml_backend_free(S->backend);
  free(S);
}

/* ---- operations: one-node ggml graphs ------------------------------------------------ */

/* A ggml tensor of desc over the host storage data, in ctx. */
static struct ggml_tensor *gg_wrap(struct ggml_context *ctx, const struct tsm_tensor_desc *desc,
                                   void *data) {
  struct ggml_tensor *t = gg_tensor(ctx, desc);
  if (t) t->data = data;
  return t;
}

/* Computes op on the inputs' storage into o, zeroed storage of the result's desc d,
 * with ggml's CPU backend. Returns 0 or TSM_ENOMEM. */
static int gg_op_compute(struct gg_session *S, int op, struct am_res *a, struct am_res *b,
                         const struct tsm_tensor_desc *d, void *o) {
  size_t graph_size = 8;
  struct ggml_init_params ip = {ggml_graph_overhead_custom(graph_size, false) +
                                    8 * ggml_tensor_overhead(),
                                NULL, true};
  struct ggml_context *ctx = ggml_init(ip);
  struct ggml_tensor *ta, *tb = NULL, *res;
  struct ggml_cgraph *gf;
  int rc = TSM_ENOMEM;
  if (!ctx) return TSM_ENOMEM;
  ta = gg_wrap(ctx, &a->desc, a->store);
  if (b) tb = gg_wrap(ctx, &b->desc, b->store);
  res = ta && (!b || tb) ? gg_op_build(ctx, op, ta, tb, d) : NULL;
  if (res) {
    res->data = o;
    gf = ggml_new_graph_custom(ctx, graph_size, false);
    ggml_build_forward_expand(gf, res);
    rc = ggml_backend_graph_compute(S->backend, gf) == GGML_STATUS_SUCCESS ? 0 : TSM_ENOMEM;
  }
  ggml_free(ctx);
  return rc;
}

/* A gather index outside the table is ERANGE (MGR.OP.8). */
static int gg_gather_range(const struct am_res *table, const struct am_res *idx) {
  const int32_t *v = idx->store;
  size_t i;
  for (i = 0; i < am_numel(&idx->desc); i++)
    if (v[i] < 0 || v[i] >= table->desc.shape[0]) return TSM_ERANGE;
  return 0;
}

/* The result goes where am_op_target says (MGR.OP.1-4); the inputs do not move
 * (MGR.OP.6). `reshape` is a view sharing its source's storage (MGR.OP.9), which this
 * layer does not model: ENOTSUP. The result's storage is computed into before the
 * tensor exists, so a failed compute leaves nothing behind (ERR.ATOMIC.1). */
static int gg_op(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params,
                 int n_params, tsm_handle out_mgr, tsm_handle *out) {
  struct gg_session *S = s;
  struct am_res *a, *b = NULL;
  struct tsm_tensor_desc desc;
  tsm_handle dst_h;
  void *o;
  int two = op == TSM_OP_ADD || op == TSM_OP_SUB || op == TSM_OP_MUL || op == TSM_OP_MATMUL ||
            op == TSM_OP_GATHER;
  int rc;
  if (op < TSM_OP_ADD || op > TSM_OP_MATMUL || !inputs || !out) return TSM_EINVAL;
  if (n != (two ? 2 : 1) || (op != TSM_OP_RESHAPE && n_params != 0)) return TSM_EINVAL;
  a = am_res_get(&S->am, inputs[0]);
  if (two) b = am_res_get(&S->am, inputs[1]);
  if (!a || (two && !b) || (out_mgr != TSM_NONE && !am_mgr_get(&S->am, out_mgr)))
    return TSM_EINVAL;
  if (op == TSM_OP_RESHAPE && (n_params < 0 || n_params > TSM_MAX_DIMS || (n_params && !params)))
    return TSM_EINVAL;
  if (!a->valid || (b && !b->valid)) return TSM_ERELEASED; /* MGR.OP.5 */
  if ((rc = am_op_target(&S->am, out_mgr, a, &dst_h))) return rc;
  if ((rc = gg_op_result(op, &a->desc, b ? &b->desc : NULL, params, n_params, &desc))) return rc;
  if (op == TSM_OP_GATHER && (rc = gg_gather_range(a, b))) return rc;
  if (op == TSM_OP_RESHAPE) return TSM_ENOTSUP;
  if ((rc = gg_op_supported(op, &a->desc, &desc)) || (rc = am_desc_check(&desc))) return rc;
  if (am_res_reserve(&S->am)) return TSM_ENOMEM;
  a = am_res_get(&S->am, inputs[0]); /* the reserve may have moved the array */
  if (two) b = am_res_get(&S->am, inputs[1]);
  if ((rc = gg_store_alloc(&S->am, &desc, am_numel(&desc) * 4, NULL, &o))) return rc;
  if ((rc = gg_op_compute(S, op, a, b, &desc, o))) {
    gg_store_drop(o);
    return rc;
  }
  *out = am_res_add(&S->am, dst_h, &desc, o);
  return 0;
}

/* ---- live bytes ------------------------------------------------------------------------ */

/* Live tensors' bytes plus the buffers of every unreleased graph's plan (MGR.COUNT.4,
 * GRAPH.MGR.1). */
static int gg_live_bytes(void *s, uint64_t *out) {
  struct gg_session *S = s;
  if (!out) return TSM_EINVAL;
  *out = am_res_bytes(&S->am) + gg_graph_bytes(S);
  return 0;
}

/* ---- the vtable ------------------------------------------------------------------------ */

/* svd has no ggml operation; reshape is offered for graphs (a ggml view) and answers
 * ENOTSUP in the manager layer (gg_op). */
static const struct tsm_adapter gg_adapter = {
    .abi_major = TSM_ADAPTER_ABI_MAJOR,
    .abi_minor = TSM_ADAPTER_ABI_MINOR,
    .struct_size = sizeof(struct tsm_adapter),
    .caps = TSM_CAP_MANAGERS | TSM_CAP_GRAPHS,
    .ops = 1u << TSM_OP_ADD | 1u << TSM_OP_SUB | 1u << TSM_OP_MUL | 1u << TSM_OP_SUM |
           1u << TSM_OP_GATHER | 1u << TSM_OP_RESHAPE | 1u << TSM_OP_MATMUL |
           1u << TSM_OP_TRANSPOSE | 1u << TSM_OP_DIAG,
    .name = "ggml",
    .version = "1.0 (ggml 0.20.2 from libggml-python 0.20.2.post1, CPU backend)",
    .session_open = gg_session_open,
    .session_close = gg_session_close,
    AM_SLOTS,
    .op = gg_op,
    .live_bytes = gg_live_bytes,
    .graph_new = gg_graph_new,
    .graph_leaf = gg_graph_leaf,
    .graph_external = gg_graph_external,
    .graph_op = gg_graph_op,
    .graph_flag = gg_graph_flag,
    .graph_expand = gg_graph_expand,
    .graph_plan = gg_graph_plan,
    .graph_write = gg_graph_write,
    .graph_compute = gg_graph_compute,
    .graph_read = gg_graph_read,
    .graph_place = gg_graph_place,
    .graph_info = gg_graph_info,
    .graph_release = gg_graph_release,
};

const struct tsm_adapter *tsm_adapter_entry(void) { return &gg_adapter; }
