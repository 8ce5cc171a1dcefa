/*
 * harness/adapters/ggml/ggml_adapter.c: the adapter of ggml (ggml-org/ggml, from PyPI's
 * libggml-python, deps.mk): caps = managers + graphs. This file is the manager layer and
 * the vtable; ggml_graph.c maps the graph slots onto ggml's graph allocator.
 *
 * ggml has no managers: its tensors live in contexts and backend buffers that the
 * caller frees. The manager layer is therefore the example adapter's
 * (harness/adapters/example/), in host memory, so that graphs have managers to belong to
 * (GRAPH.MGR.1) and external tensors to read (GRAPH.EXT.1); the `op` slot computes with
 * ggml's CPU backend, on one-node ggml graphs over the tensors' own storage.
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

/* ---- handles and arrays ------------------------------------------------------------ */

static tsm_handle gg_mgr_handle(size_t i) { return GG_MGR_TAG | (tsm_handle)(i + 1); }
static tsm_handle gg_res_handle(size_t i) { return GG_RES_TAG | (tsm_handle)(i + 1); }
static tsm_handle gg_root(void) { return gg_mgr_handle(0); }

struct gg_mgr *gg_mgr_get(struct gg_session *S, tsm_handle h) {
  tsm_handle i = (h & ~GG_TAG_MASK) - 1;
  if ((h & GG_TAG_MASK) != GG_MGR_TAG || (h & ~GG_TAG_MASK) == 0 || i >= S->nmgr) return NULL;
  return &S->mgrs[i];
}

struct gg_res *gg_res_get(struct gg_session *S, tsm_handle h) {
  tsm_handle i = (h & ~GG_TAG_MASK) - 1;
  if ((h & GG_TAG_MASK) != GG_RES_TAG || (h & ~GG_TAG_MASK) == 0 || i >= S->nres) return NULL;
  return &S->res[i];
}

static int gg_closed(const struct gg_mgr *m) { return (m->state & TSM_MGR_CLOSED) != 0; }
static int gg_capped(const struct gg_mgr *m) { return (m->state & TSM_MGR_CAPPED) != 0; }

/* Room for one more element at index n. Only grows capacity, so a later refusal still
 * leaves nothing observable behind. Returns 0 or TSM_ENOMEM. */
int gg_reserve(void **arr, size_t *cap, size_t n, size_t elem) {
  size_t ncap;
  void *p;
  if (n < *cap) return 0;
  ncap = *cap ? 2 * *cap : 16;
  p = realloc(*arr, ncap * elem);
  if (!p) return TSM_ENOMEM;
  *arr = p;
  *cap = ncap;
  return 0;
}

static int gg_new_mgr(struct gg_session *S, tsm_handle parent, tsm_handle *out) {
  int rc = gg_reserve((void **)&S->mgrs, &S->mgr_cap, S->nmgr, sizeof *S->mgrs);
  if (rc) return rc;
  S->mgrs[S->nmgr] = (struct gg_mgr){.state = 0, .closing = 0, .parent = parent};
  *out = gg_mgr_handle(S->nmgr++);
  return 0;
}

/* ---- tensors' state (the example adapter's rules) ---------------------------------- */

static void gg_release(struct gg_res *r) {
  free(r->data);
  r->data = NULL;
  r->valid = 0;
  r->holder = TSM_NONE;
  r->nlend = 0;
}

/* r goes back from its closing borrower to its top lender (MGR.TEMP.4, MGR.TEMP.5). */
static void gg_give_back(struct gg_session *S, struct gg_res *r) {
  tsm_handle lender = r->lenders[--r->nlend];
  struct gg_mgr *l = gg_mgr_get(S, lender);
  if (lender == TSM_NONE) {
    r->holder = TSM_NONE;
    r->nlend = 0; /* a detached resource is never borrowed */
  } else if (gg_closed(l) && !l->closing) {
    gg_release(r);
  } else {
    r->holder = lender;
  }
}

/* Closes m in the order of MGR.CLOSE.3, then releases its graphs (GRAPH.MGR.1). */
static void gg_close(struct gg_session *S, tsm_handle mh) {
  struct gg_mgr *m = gg_mgr_get(S, mh);
  size_t i;
  m->state = TSM_MGR_CLOSED;
  m->closing = 1;
  for (i = 0; i < S->nmgr; i++)
    if (S->mgrs[i].parent == mh && !gg_closed(&S->mgrs[i])) gg_close(S, gg_mgr_handle(i));
  for (i = 0; i < S->nres; i++)
    if (S->res[i].valid && S->res[i].holder == mh && S->res[i].nlend == 0) gg_release(&S->res[i]);
  for (i = 0; i < S->nres; i++)
    if (S->res[i].valid && S->res[i].holder == mh) gg_give_back(S, &S->res[i]);
  gg_graphs_of_closed(S, mh);
  m->parent = TSM_NONE;
  m->closing = 0;
}

/* ---- devices and sessions ---------------------------------------------------------- */

static const struct tsm_device gg_devices[] = {{.name = "cpu", .available = 1, .unavailable_reason = NULL}};

static int gg_device_list(const struct tsm_device **out) {
  *out = gg_devices;
  return 1;
}

/* ggml reports through its logger; the judge reads results, not ggml's debug lines, so
 * only warnings and errors go to stderr. */
static void gg_log(enum ggml_log_level level, const char *text, void *user) {
  (void)user;
  if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static int gg_session_open(int device_index, void **s_out) {
  struct gg_session *S;
  tsm_handle root;
  if (device_index != 0 || !s_out) return TSM_EINVAL;
  S = calloc(1, sizeof *S);
  if (!S) return TSM_ENOMEM;
  ggml_log_set(gg_log, NULL);
  S->backend = ggml_backend_cpu_init();
  if (!S->backend || gg_new_mgr(S, TSM_NONE, &root)) {
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

static void gg_session_close(void *s) {
  struct gg_session *S = s;
  size_t i;
  if (!S) return;
  gg_graphs_free(S);
  for (i = 0; i < S->nres; i++) {
    free(S->res[i].data);
    free(S->res[i].lenders);
  }
  free(S->res);
  free(S->mgrs);
  ggml_backend_free(S->backend);
  free(S);
}

/* ---- managers ------------------------------------------------------------------------ */

static int gg_mgr_root(void *s, tsm_handle *out) {
  (void)s;
  if (!out) return TSM_EINVAL;
  *out = gg_root();
  return 0;
}

static int gg_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  struct gg_session *S = s;
  struct gg_mgr *p = gg_mgr_get(S, parent);
  if (!p || !out) return TSM_EINVAL;
  if (gg_closed(p)) return TSM_ECLOSED;
  return gg_new_mgr(S, parent, out);
}

static int gg_mgr_sub_of(void *s, tsm_handle resource, tsm_handle *out) {
  struct gg_session *S = s;
  struct gg_res *r = gg_res_get(S, resource);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  return gg_new_mgr(S, r->holder != TSM_NONE ? r->holder : gg_root(), out);
}

static int gg_mgr_close(void *s, tsm_handle m) {
  struct gg_session *S = s;
  struct gg_mgr *mg = gg_mgr_get(S, m);
  if (!mg) return TSM_EINVAL;
  if (m == gg_root()) return TSM_EROOT;
  if (!gg_closed(mg)) gg_close(S, m);
  return 0;
}

static int gg_mgr_cap(void *s, tsm_handle m) {
  struct gg_mgr *mg = gg_mgr_get(s, m);
  if (!mg) return TSM_EINVAL;
  if (gg_closed(mg)) return TSM_ECLOSED;
  mg->state |= TSM_MGR_CAPPED;
  return 0;
}

static int gg_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  struct gg_session *S = s;
  struct gg_mgr *mg = gg_mgr_get(S, m);
  size_t i;
  if (!mg || !out) return TSM_EINVAL;
  memset(out, 0, sizeof *out);
  out->state = mg->state;
  out->is_root = m == gg_root();
  out->parent = mg->parent;
  for (i = 0; i < S->nres; i++) out->live += S->res[i].valid && S->res[i].holder == m;
  for (i = 0; i < S->nmgr; i++) out->children += S->mgrs[i].parent == m && !gg_closed(&S->mgrs[i]);
  return 0;
}

/* ---- tensors ----------------------------------------------------------------------- */

static size_t gg_numel(const struct tsm_tensor_desc *d) {
  size_t n = 1;
  int i;
  for (i = 0; i < d->ndim; i++) n *= (size_t)d->shape[i];
  return n;
}

/* Appends a live tensor held by m with zeroed storage. OUT *out. */
static int gg_new_res(struct gg_session *S, tsm_handle m, const struct tsm_tensor_desc *desc,
                      tsm_handle *out) {
  size_t nbytes = gg_numel(desc) * 4;
  void *buf;
  if (gg_reserve((void **)&S->res, &S->res_cap, S->nres, sizeof *S->res)) return TSM_ENOMEM;
  buf = calloc(1, nbytes ? nbytes : 1);
  if (!buf) return TSM_ENOMEM;
  S->res[S->nres] = (struct gg_res){.valid = 1, .holder = m, .desc = *desc, .nbytes = nbytes, .data = buf};
  *out = gg_res_handle(S->nres++);
  return 0;
}

/* EINVAL for a bad desc (MGR.CREATE.4), ENOMEM for one no memory holds (MGR.CREATE.5). */
static int gg_desc_check(const struct tsm_tensor_desc *desc) {
  size_t n = 1;
  int i;
  if (desc->dtype != TSM_F32 && desc->dtype != TSM_I32) return TSM_EINVAL;
  if (desc->ndim < 0 || desc->ndim > TSM_MAX_DIMS) return TSM_EINVAL;
  for (i = 0; i < desc->ndim; i++)
    if (desc->shape[i] < 0) return TSM_EINVAL;
  for (i = 0; i < desc->ndim; i++)
    if (desc->shape[i] == 0) return 0;
  for (i = 0; i < desc->ndim; i++) {
    if (n > (size_t)INT64_MAX / 4 / (size_t)desc->shape[i]) return TSM_ENOMEM;
    n *= (size_t)desc->shape[i];
  }
  return 0;
}

static int gg_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                         const void *data, tsm_handle *out) {
  struct gg_session *S = s;
  struct gg_mgr *mg = gg_mgr_get(S, m);
  int rc;
  if (!mg || !desc || !out) return TSM_EINVAL;
  if ((rc = gg_desc_check(desc))) return rc;
  if (gg_closed(mg)) return TSM_ECLOSED;
  if (gg_capped(mg)) return TSM_ECAPPED;
  if ((rc = gg_new_res(S, m, desc, out))) return rc;
  if (data) memcpy(S->res[S->nres - 1].data, data, S->res[S->nres - 1].nbytes);
  return 0;
}

static int gg_tensor_desc(void *s, tsm_handle t, struct tsm_tensor_desc *out) {
  struct gg_res *r = gg_res_get(s, t);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  *out = r->desc;
  return 0;
}

static int gg_tensor_read(void *s, tsm_handle t, void *dst, size_t cap) {
  struct gg_res *r = gg_res_get(s, t);
  if (!r || (!dst && cap)) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (cap < r->nbytes) return TSM_EINVAL;
  if (r->nbytes) memcpy(dst, r->data, r->nbytes);
  return 0;
}

/* ---- operations: one-node ggml graphs ------------------------------------------------ */

/* A ggml tensor over r's own storage, in ctx. */
static struct ggml_tensor *gg_wrap(struct ggml_context *ctx, struct gg_res *r) {
  struct ggml_tensor *t = gg_tensor(ctx, &r->desc);
  if (t) t->data = r->data;
  return t;
}

/* Computes op on the inputs' storage into dst's (zeroed) storage with ggml's CPU
 * backend. Returns 0 or TSM_ENOMEM. */
static int gg_op_compute(struct gg_session *S, int op, struct gg_res *a, struct gg_res *b,
                         struct gg_res *dst) {
  size_t graph_size = 8;
  struct ggml_init_params ip = {ggml_graph_overhead_custom(graph_size, false) +
                                    8 * ggml_tensor_overhead(),
                                NULL, true};
  struct ggml_context *ctx = ggml_init(ip);
  struct ggml_tensor *ta, *tb = NULL, *res;
  struct ggml_cgraph *gf;
  int rc = TSM_ENOMEM;
  if (!ctx) return TSM_ENOMEM;
  ta = gg_wrap(ctx, a);
  if (b) tb = gg_wrap(ctx, b);
  res = ta && (!b || tb) ? gg_op_build(ctx, op, ta, tb, &dst->desc) : NULL;
  if (res) {
    res->data = dst->data;
    gf = ggml_new_graph_custom(ctx, graph_size, false);
    ggml_build_forward_expand(gf, res);
    rc = ggml_backend_graph_compute(S->backend, gf) == GGML_STATUS_SUCCESS ? 0 : TSM_ENOMEM;
  }
  ggml_free(ctx);
  return rc;
}

/* A gather index outside the table is ERANGE (MGR.OP.8). */
static int gg_gather_range(const struct gg_res *table, const struct gg_res *idx) {
  const int32_t *v = idx->data;
  size_t i;
  for (i = 0; i < gg_numel(&idx->desc); i++)
    if (v[i] < 0 || v[i] >= table->desc.shape[0]) return TSM_ERANGE;
  return 0;
}

/* The result goes to out_mgr, or to the holder of the first input, or to the root when
 * that input is detached (MGR.OP.1-3); the inputs do not move (MGR.OP.6). `reshape` is
 * a view sharing its source's storage (MGR.OP.9), which this layer does not model:
 * ENOTSUP. */
static int gg_op(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params,
                 int n_params, tsm_handle out_mgr, tsm_handle *out) {
  struct gg_session *S = s;
  struct gg_res *a, *b = NULL;
  struct gg_mgr *dst;
  struct tsm_tensor_desc desc;
  tsm_handle dst_h;
  int two = op == TSM_OP_ADD || op == TSM_OP_SUB || op == TSM_OP_MUL || op == TSM_OP_MATMUL ||
            op == TSM_OP_GATHER;
  int rc;
  if (op < TSM_OP_ADD || op > TSM_OP_MATMUL || !inputs || !out) return TSM_EINVAL;
  if (n != (two ? 2 : 1) || (op != TSM_OP_RESHAPE && n_params != 0)) return TSM_EINVAL;
  a = gg_res_get(S, inputs[0]);
  if (two) b = gg_res_get(S, inputs[1]);
  if (!a || (two && !b) || (out_mgr != TSM_NONE && !gg_mgr_get(S, out_mgr))) return TSM_EINVAL;
  if (op == TSM_OP_RESHAPE && (n_params < 0 || n_params > TSM_MAX_DIMS || (n_params && !params)))
    return TSM_EINVAL;
  if (!a->valid || (b && !b->valid)) return TSM_ERELEASED; /* MGR.OP.5 */
  dst_h = out_mgr != TSM_NONE ? out_mgr : a->holder != TSM_NONE ? a->holder : gg_root();
  dst = gg_mgr_get(S, dst_h);
  if (gg_closed(dst)) return TSM_ECLOSED; /* MGR.OP.4 */
  if (gg_capped(dst)) return TSM_ECAPPED;
  if ((rc = gg_op_result(op, &a->desc, b ? &b->desc : NULL, params, n_params, &desc))) return rc;
  if (op == TSM_OP_GATHER && (rc = gg_gather_range(a, b))) return rc;
  if (op == TSM_OP_RESHAPE) return TSM_ENOTSUP;
  if ((rc = gg_op_supported(op, &a->desc, &desc)) || (rc = gg_desc_check(&desc))) return rc;
  if ((rc = gg_new_res(S, dst_h, &desc, out))) return rc;
  a = gg_res_get(S, inputs[0]); /* gg_new_res may have moved the array */
  if (two) b = gg_res_get(S, inputs[1]);
  rc = gg_op_compute(S, op, a, b, &S->res[S->nres - 1]);
  if (rc) { /* nothing was made (ERR.ATOMIC.1) */
    free(S->res[--S->nres].data);
    *out = TSM_NONE;
  }
  return rc;
}

/* ---- resources (the example adapter's rules) ----------------------------------------- */

static int gg_res_attach(void *s, tsm_handle rh, tsm_handle m) {
  struct gg_session *S = s;
  struct gg_res *r = gg_res_get(S, rh);
  struct gg_mgr *mg = gg_mgr_get(S, m);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (r->holder == m) return 0;
  if (gg_closed(mg)) return TSM_ECLOSED;
  if (gg_capped(mg)) return TSM_ECAPPED;
  r->holder = m;
  r->nlend = 0;
  return 0;
}

static int gg_res_detach(void *s, tsm_handle rh) {
  struct gg_res *r = gg_res_get(s, rh);
  if (!r) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  r->holder = TSM_NONE;
  r->nlend = 0;
  return 0;
}

static int gg_res_temp_attach(void *s, tsm_handle rh, tsm_handle b) {
  struct gg_session *S = s;
  struct gg_res *r = gg_res_get(S, rh);
  struct gg_mgr *mg = gg_mgr_get(S, b);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (b == gg_root()) return TSM_EROOT;
  if (gg_closed(mg)) return TSM_ECLOSED;
  if (r->holder == b) return 0;
  if (gg_reserve((void **)&r->lenders, &r->lend_cap, r->nlend, sizeof *r->lenders)) return TSM_ENOMEM;
  r->lenders[r->nlend++] = r->holder;
  r->holder = b;
  return 0;
}

static int gg_res_ret(void *s, tsm_handle m, tsm_handle rh) {
  struct gg_session *S = s;
  struct gg_res *r = gg_res_get(S, rh);
  struct gg_mgr *mg = gg_mgr_get(S, m);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (m == gg_root()) return TSM_EROOT;
  if (gg_closed(mg)) return TSM_ECLOSED;
  if (r->holder != m) return TSM_EINVAL;
  return gg_res_attach(s, rh, mg->parent);
}

static int gg_res_release(void *s, tsm_handle rh) {
  struct gg_res *r = gg_res_get(s, rh);
  if (!r) return TSM_EINVAL;
  if (r->valid) gg_release(r);
  return 0;
}

static int gg_res_info(void *s, tsm_handle rh, struct tsm_res_info *out) {
  struct gg_res *r = gg_res_get(s, rh);
  if (!r || !out) return TSM_EINVAL;
  memset(out, 0, sizeof *out);
  if (!r->valid) return 0;
  out->valid = 1;
  out->borrowed = r->nlend > 0;
  out->owner = r->holder;
  out->lender = r->nlend ? r->lenders[r->nlend - 1] : TSM_NONE;
  out->nbytes = r->nbytes;
  return 0;
}

/* Live tensors' bytes plus the buffers of every unreleased graph's plan (MGR.COUNT.4,
 * GRAPH.MGR.1). */
static int gg_live_bytes(void *s, uint64_t *out) {
  struct gg_session *S = s;
  uint64_t n = 0;
  size_t i;
  if (!out) return TSM_EINVAL;
  for (i = 0; i < S->nres; i++)
    if (S->res[i].valid) n += S->res[i].nbytes;
  *out = n + gg_graph_bytes(S);
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
    .device_list = gg_device_list,
    .session_open = gg_session_open,
    .session_close = gg_session_close,
    .mgr_root = gg_mgr_root,
    .mgr_new_sub = gg_mgr_new_sub,
    .mgr_sub_of = gg_mgr_sub_of,
    .mgr_close = gg_mgr_close,
    .mgr_cap = gg_mgr_cap,
    .mgr_info = gg_mgr_info,
    .tensor_new = gg_tensor_new,
    .tensor_desc = gg_tensor_desc,
    .tensor_read = gg_tensor_read,
    .op = gg_op,
    .res_attach = gg_res_attach,
    .res_detach = gg_res_detach,
    .res_temp_attach = gg_res_temp_attach,
    .res_ret = gg_res_ret,
    .res_release = gg_res_release,
    .res_info = gg_res_info,
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
