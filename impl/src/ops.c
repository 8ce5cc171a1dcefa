/*
 * impl/src/ops.c: operation dispatch. Validates every argument in the order of
 * ERR.ORDER.1 (EINVAL, ERELEASED, ECLOSED, ECAPPED, then ESHAPE, EDTYPE, ERANGE),
 * decides the result's holder, creates the result and only then calls the backend.
 * Clauses: MGR.OP.1-9, MGR.TEMP.9, MGR.CAP.1, ERR.ORDER.1, ERR.ATOMIC.1, DEV.VAL.1.
 */
#include <string.h>

#include "internal.h"

static int same_shape(const struct tsmr__tensor *a, const struct tsmr__tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

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

static int op_l(tsmr_ctx *ctx, int op, const tsmr_handle *inputs, int n,
            const int64_t *params, int n_params, tsmr_handle out_mgr, tsmr_handle *out) {
  struct tsmr__tensor *in[2] = {NULL, NULL}, *r;
  struct tsmr__mgr *rm = NULL;
  const struct tsmr__backend *be;
  int64_t shape[TSMR_MAX_DIMS];
  int ndim = 0, dtype, rc, zero = 0;

  /* 1. EINVAL: the call itself, then the handles. */
  if (!ctx || !out || op < TSMR_OP_ADD || op > TSMR_OP_MATMUL) return TSMR_EINVAL;
  int want = (op == TSMR_OP_SUM || op == TSMR_OP_RESHAPE) ? 1 : 2;
  if (n != want || !inputs) return TSMR_EINVAL;
  if (op == TSMR_OP_RESHAPE) {
    if (n_params < 0 || n_params > TSMR_MAX_DIMS || (n_params > 0 && !params))
      return TSMR_EINVAL;
    for (int i = 0; i < n_params; i++)
      if (params[i] < 0) return TSMR_EINVAL;
  }
  for (int i = 0; i < n; i++) {
    if ((rc = tsmr__tensor_get(ctx, inputs[i], &in[i]))) return rc;
    if (in[i] && in[i]->rkind == TSMR__RES_COMPOSITE) return TSMR_EINVAL; /* no data */
  }
  int explicit_mgr = out_mgr != TSMR_NONE;
  if (explicit_mgr && (rc = tsmr__mgr_get(ctx, out_mgr, &rm, NULL))) return rc;
  /* 2. ERELEASED (MGR.OP.5). */
  for (int i = 0; i < n; i++)
    if (!in[i]) return TSMR_ERELEASED;
  /* 3. ECLOSED / ECAPPED on the result's holder (MGR.OP.1-4, MGR.TEMP.9). */
  if (!explicit_mgr) { /* a component input: its composite's holder (COMP.UNIT.3) */
    const struct tsmr__tensor *h0 = tsmr__holder_res(in[0]);
    rm = h0->holder ? h0->holder : ctx->root;
  }
  if (!rm) return TSMR_ECLOSED;
  if ((rc = tsmr__mgr_accepts(rm))) return rc;
  /* 4. The operation's own checks (MGR.OP.7-9). */
  struct tsmr__tensor *a = in[0], *b = in[1];
  be = ctx->be;
  dtype = a->dtype;
  switch (op) {
  case TSMR_OP_ADD:
  case TSMR_OP_SUB:
  case TSMR_OP_MUL:
    if (!same_shape(a, b)) return TSMR_ESHAPE;
    if (a->dtype != b->dtype) return TSMR_EDTYPE;
    ndim = a->ndim;
    memcpy(shape, a->shape, sizeof shape);
    break;
  case TSMR_OP_SUM:
    ndim = 0;
    zero = a->numel == 0;
    break;
  case TSMR_OP_GATHER:
    if (a->ndim != 2 || b->ndim != 1) return TSMR_ESHAPE;
    if (b->dtype != TSMR_I32) return TSMR_EDTYPE;
    ndim = 2;
    shape[0] = b->numel;
    shape[1] = a->shape[1];
    break;
  case TSMR_OP_RESHAPE: {
    int64_t numel;
    rc = tsmr__shape_check(a->dtype, n_params, params, &numel, NULL);
    if (rc == TSMR_ENOMEM || (rc == 0 && numel != a->numel)) return TSMR_ESHAPE;
    if (rc) return rc;
    ndim = n_params;
    for (int i = 0; i < ndim; i++) shape[i] = params[i];
    break;
  }
  case TSMR_OP_MATMUL:
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return TSMR_ESHAPE;
    if (a->dtype != TSMR_F32 || b->dtype != TSMR_F32) return TSMR_EDTYPE;
    ndim = 2;
    shape[0] = a->shape[0];
    shape[1] = b->shape[1];
    zero = a->shape[1] == 0;
    break;
  }
  if (op == TSMR_OP_GATHER && (rc = gather_range(ctx, b, a->shape[0]))) return rc;
  int have = 1; /* does the backend offer the kernel this op needs? */
  switch (op) {
  case TSMR_OP_ADD: have = be->add != NULL; break;
  case TSMR_OP_SUB: have = be->sub != NULL; break;
  case TSMR_OP_MUL: have = be->mul != NULL; break;
  case TSMR_OP_SUM: have = be->sum != NULL; break;
  case TSMR_OP_GATHER: have = be->gather != NULL; break;
  case TSMR_OP_MATMUL: have = be->matmul != NULL; break;
  default: break;
  }
  if (!have) return TSMR_ENOTSUP;

  /* 5. Create the result (nothing left behind on failure), then run the kernel. */
  int64_t numel;
  if ((rc = tsmr__shape_check(dtype, ndim, shape, &numel, NULL))) return rc; /* ENOMEM */
  rc = tsmr__tensor_create(ctx, rm, dtype, ndim, shape, numel,
                           op == TSMR_OP_RESHAPE ? a->st : NULL, zero, &r);
  if (rc) return rc;
  void *o = r->st->data;
  if (!zero && r->numel > 0) {
    switch (op) {
    case TSMR_OP_ADD: rc = be->add(dtype, o, a->st->data, b->st->data, a->numel); break;
    case TSMR_OP_SUB: rc = be->sub(dtype, o, a->st->data, b->st->data, a->numel); break;
    case TSMR_OP_MUL: rc = be->mul(dtype, o, a->st->data, b->st->data, a->numel); break;
    case TSMR_OP_SUM: rc = be->sum(dtype, o, a->st->data, a->numel); break;
    case TSMR_OP_GATHER:
      rc = be->gather(o, a->st->data, b->st->data, b->numel,
                      (size_t)a->shape[1] * tsmr__dtype_size(a->dtype));
      break;
    case TSMR_OP_MATMUL:
      rc = be->matmul(o, a->st->data, b->st->data, a->shape[0], a->shape[1], b->shape[1]);
      break;
    default: break; /* reshape: metadata only */
    }
    if (rc) {
      tsmr__tensor_discard(ctx, r);
      return rc;
    }
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
