/*
 * impl/src/ops.c: operation dispatch. Validates every argument in the order of
 * ERR.ORDER.1 (EINVAL, ERELEASED, ECLOSED, ECAPPED, then ESHAPE, EDTYPE, ERANGE),
 * decides the result's holder, creates the result and only then calls the backend;
 * and the shape and dtype rules of the ops managers and graphs share (graph.c).
 * Clauses: MGR.OP.1-9, MGR.TEMP.9, MGR.CAP.1, ERR.ORDER.1, ERR.ATOMIC.1, DEV.VAL.1.
 */
#include <string.h>

#include "internal.h"

/* ---- op semantics shared with graphs (graph.c) ----------------------------------- */

int tsmr__op_params_check(int op, int n_params, const int64_t *params) {
  if (op != TSMR_OP_RESHAPE) return 0;
  if (n_params < 0 || n_params > TSMR_MAX_DIMS || (n_params > 0 && !params))
    return TSMR_EINVAL;
  for (int i = 0; i < n_params; i++)
    if (params[i] < 0) return TSMR_EINVAL;
  return 0;
}

int tsmr__op_shape(int op, const struct tsmr__operand *a, const struct tsmr__operand *b,
                   const int64_t *params, int n_params, int *ndim, int64_t *shape) {
  switch (op) {
  case TSMR_OP_ADD:
  case TSMR_OP_SUB:
  case TSMR_OP_MUL:
    if (a->ndim != b->ndim) return TSMR_ESHAPE;
    for (int i = 0; i < a->ndim; i++)
      if (a->shape[i] != b->shape[i]) return TSMR_ESHAPE;
    if (a->dtype != b->dtype || !tsmr__dtype_arith(a->dtype)) return TSMR_EDTYPE;
    *ndim = a->ndim;
    memcpy(shape, a->shape, (size_t)a->ndim * sizeof *shape);
    return 0;
  case TSMR_OP_MATMUL:
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return TSMR_ESHAPE;
    if (a->dtype != TSMR_F32 || b->dtype != TSMR_F32) return TSMR_EDTYPE;
    *ndim = 2;
    shape[0] = a->shape[0];
    shape[1] = b->shape[1];
    return 0;
  case TSMR_OP_RESHAPE: {
    int64_t numel;
    int rc = tsmr__shape_check(a->dtype, n_params, params, &numel, NULL);
    if (rc == TSMR_ENOMEM || (rc == 0 && numel != a->numel)) return TSMR_ESHAPE;
    if (rc) return rc;
    *ndim = n_params;
    for (int i = 0; i < n_params; i++) shape[i] = params[i];
    return 0;
  }
  default: /* TSMR_OP_SUM: a 0-d result */
    *ndim = 0;
    return tsmr__dtype_arith(a->dtype) ? 0 : TSMR_EDTYPE;
  }
}

/* ---- manager ops ---------------------------------------------------------------- */

/* Checks gather indices against the table's rows (ERANGE). */
static int gather_range(tsmr_ctx *ctx, const struct tsmr__tensor *idx,
                        int64_t rows) {
  if (idx->numel == 0) return 0;
  size_t n = (size_t)idx->numel * sizeof(int32_t);
  const int32_t *host = idx->st->data;
  int32_t *tmp = NULL;
  int rc = 0;
  if (!ctx->be->host_memory) {
    if (!(tmp = tsmr__alloc(n))) return TSMR_ENOMEM;
    if ((rc = ctx->be->copy_d2h(tmp, idx->st->data, n))) goto out;
    host = tmp;
  }
  for (int64_t i = 0; i < idx->numel; i++)
    if (host[i] < 0 || host[i] >= rows) {
      rc = TSMR_ERANGE;
      break;
    }
out:
  tsmr__free(tmp);
  return rc;
}

/* Steps 1-3 of ERR.ORDER.1: the call and the handles (EINVAL), released inputs
 * (ERELEASED, MGR.OP.5), the result's holder (ECLOSED, ECAPPED; MGR.OP.1-4,
 * MGR.TEMP.9). in, rm: OUT. */
static int op_args(tsmr_ctx *ctx, int op, const tsmr_handle *inputs, int n,
                   const int64_t *params, int n_params, tsmr_handle out_mgr,
                   struct tsmr__tensor **in, struct tsmr__mgr **out_rm) {
  struct tsmr__mgr *rm = NULL;
  int rc;
  if (op < TSMR_OP_ADD || op > TSMR_OP_MATMUL) return TSMR_EINVAL;
  int want = (op == TSMR_OP_SUM || op == TSMR_OP_RESHAPE) ? 1 : 2;
  if (n != want || !inputs) return TSMR_EINVAL;
  if ((rc = tsmr__op_params_check(op, n_params, params))) return rc;
  for (int i = 0; i < n; i++) {
    if ((rc = tsmr__tensor_get(ctx, inputs[i], &in[i]))) return rc;
    if (tsmr__res_kind(ctx, inputs[i], in[i]) == TSMR__RES_COMPOSITE)
      return TSMR_EINVAL; /* no data */
  }
  int explicit_mgr = out_mgr != TSMR_NONE;
  if (explicit_mgr && (rc = tsmr__mgr_get(ctx, out_mgr, &rm, NULL))) return rc;
  for (int i = 0; i < n; i++)
    if (!in[i]) return TSMR_ERELEASED;
  if (!explicit_mgr) { /* a component input: its composite's holder (COMP.UNIT.3) */
    const struct tsmr__tensor *h0 = tsmr__holder_res(in[0]);
    rm = h0->holder ? h0->holder : ctx->root;
  }
  if (!rm) return TSMR_ECLOSED;
  if ((rc = tsmr__mgr_accepts(rm))) return rc;
  *out_rm = rm;
  return 0;
}

/* Step 4: the operation's own checks (MGR.OP.7-9) and the result's shape; *zero: the
 * result is all zeros without a kernel (a sum of nothing, an empty inner dimension). */
static int op_result(tsmr_ctx *ctx, int op, const struct tsmr__tensor *a,
                     const struct tsmr__tensor *b, const int64_t *params, int n_params,
                     int *ndim, int64_t *shape, int *zero) {
  struct tsmr__operand oa = {a->dtype, a->ndim, a->shape, a->numel}, ob = {0, 0, NULL, 0};
  if (b) ob = (struct tsmr__operand){b->dtype, b->ndim, b->shape, b->numel};
  if (op != TSMR_OP_GATHER) {
    int rc = tsmr__op_shape(op, &oa, &ob, params, n_params, ndim, shape);
    *zero = !rc && ((op == TSMR_OP_SUM && a->numel == 0) ||
                    (op == TSMR_OP_MATMUL && a->shape[1] == 0));
    return rc;
  }
  if (a->ndim != 2 || b->ndim != 1) return TSMR_ESHAPE;
  if (b->dtype != TSMR_I32) return TSMR_EDTYPE;
  *ndim = 2;
  shape[0] = b->numel;
  shape[1] = a->shape[1];
  return gather_range(ctx, b, a->shape[0]);
}

/* Does the backend offer the kernel op needs? (reshape needs none) */
static int backend_has(const struct tsmr__backend *be, int op) {
  switch (op) {
  case TSMR_OP_ADD: return be->add != NULL;
  case TSMR_OP_SUB: return be->sub != NULL;
  case TSMR_OP_MUL: return be->mul != NULL;
  case TSMR_OP_SUM: return be->sum != NULL;
  case TSMR_OP_GATHER: return be->gather != NULL;
  case TSMR_OP_MATMUL: return be->matmul != NULL;
  default: return 1;
  }
}

static int op_run(const struct tsmr__backend *be, int op, int dtype, void *o,
                  const struct tsmr__tensor *a, const struct tsmr__tensor *b) {
  switch (op) {
  case TSMR_OP_ADD: return be->add(dtype, o, a->st->data, b->st->data, a->numel);
  case TSMR_OP_SUB: return be->sub(dtype, o, a->st->data, b->st->data, a->numel);
  case TSMR_OP_MUL: return be->mul(dtype, o, a->st->data, b->st->data, a->numel);
  case TSMR_OP_SUM: return be->sum(dtype, o, a->st->data, a->numel);
  case TSMR_OP_GATHER:
    return be->gather(o, a->st->data, b->st->data, b->numel,
                      (size_t)a->shape[1] * tsmr__dtype_size(a->dtype));
  case TSMR_OP_MATMUL:
    return be->matmul(o, a->st->data, b->st->data, a->shape[0], a->shape[1], b->shape[1]);
  default: return 0; /* reshape: metadata only */
  }
}

static int op_l(tsmr_ctx *ctx, int op, const tsmr_handle *inputs, int n,
                const int64_t *params, int n_params, tsmr_handle out_mgr,
                tsmr_handle *out) {
  struct tsmr__tensor *in[2] = {NULL, NULL}, *r;
  struct tsmr__mgr *rm = NULL;
  int64_t shape[TSMR_MAX_DIMS];
  int ndim = 0, rc, zero = 0;
  if (!ctx || !out) return TSMR_EINVAL;
  if ((rc = op_args(ctx, op, inputs, n, params, n_params, out_mgr, in, &rm))) return rc;
  struct tsmr__tensor *a = in[0], *b = in[1];
  int dtype = a->dtype;
  if ((rc = op_result(ctx, op, a, b, params, n_params, &ndim, shape, &zero))) return rc;
  if (!backend_has(ctx->be, op)) return TSMR_ENOTSUP;
  /* 5. Create the result (nothing left behind on failure), then run the kernel. */
  int64_t numel;
  if ((rc = tsmr__shape_check(dtype, ndim, shape, &numel, NULL))) return rc; /* ENOMEM */
  rc = tsmr__tensor_create(ctx, rm, dtype, ndim, shape, numel,
                           op == TSMR_OP_RESHAPE ? a->st : NULL, zero, &r);
  if (rc) return rc;
  if (!zero && r->numel > 0 && (rc = op_run(ctx->be, op, dtype, r->st->data, a, b))) {
    tsmr__tensor_discard(ctx, r);
    return rc;
  }
  tsmr__res_register(ctx, r); /* SCOPE.REG.1 */
  *out = r->handle;
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_op(tsmr_ctx *ctx, int op, const tsmr_handle *inputs, int n,
            const int64_t *params, int n_params, tsmr_handle out_mgr, tsmr_handle *out) {
  TSMR__LOCKED(op_l(ctx, op, inputs, n, params, n_params, out_mgr, out));
}
