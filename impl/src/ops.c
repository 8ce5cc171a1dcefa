/*
 * impl/src/ops.c: operation dispatch. Validates every argument in the order of
 * ERR.ORDER.1 (EINVAL, ERELEASED, ECLOSED, ECAPPED, then ESHAPE, EDTYPE, ERANGE),
 * decides the result's holder, creates the result and only then calls the backend;
 * the op's shape rule and kernel come from the op table (optable.c).
 * Clauses: MGR.OP.1-9, MGR.TEMP.9, MGR.CAP.1, ERR.ORDER.1, ERR.ATOMIC.1, DEV.VAL.1.
 */
#include <string.h>

#include "internal.h"

/* ---- manager ops ---------------------------------------------------------------- */

/* Checks gather indices against the table's rows (ERANGE). */
static int gather_range(tsmr_ctx *ctx, const struct tsmr__tensor *idx,
                        int64_t rows) {
  const int64_t numel = tsmr__body(idx)->numel;
  if (numel == 0) return 0;
  size_t n = (size_t)numel * sizeof(int32_t);
  const int32_t *host = idx->st->data;
  int32_t *tmp = NULL;
  int rc = 0;
  if (!ctx->be->host_memory) {
    if (!(tmp = tsmr__alloc(n))) return TSMR_ENOMEM;
    if ((rc = ctx->be->copy_d2h(tmp, idx->st->data, n))) goto out;
    host = tmp;
  }
  for (int64_t i = 0; i < numel; i++)
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
static int op_args(tsmr_ctx *ctx, const struct tsmr__op_call *c, struct tsmr__tensor **in,
                   struct tsmr__mgr **out_rm) {
  const struct tsmr__op_def *d = tsmr__op_def(c->op);
  struct tsmr__mgr *rm = NULL;
  int n = c->n, rc;
  if (!d || !(d->where & TSMR__OP_MGR)) return TSMR_EINVAL; /* graph-only: EINVAL */
  if (n != d->arity || !c->inputs) return TSMR_EINVAL;
  if ((rc = tsmr__op_params_check(c->op, c->n_params, c->params))) return rc;
  for (int i = 0; i < n; i++) {
    if ((rc = tsmr__tensor_get(ctx, c->inputs[i], &in[i]))) return rc;
    if (tsmr__res_kind(ctx, c->inputs[i], in[i]) == TSMR__RES_COMPOSITE)
      return TSMR_EINVAL; /* no data */
  }
  int explicit_mgr = c->into != TSMR_NONE;
  if (explicit_mgr && (rc = tsmr__mgr_get(ctx, c->into, &rm, NULL))) return rc;
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

static struct tsmr__operand operand_of(const struct tsmr__tensor *t) {
  struct tsmr__operand o = {0, 0, NULL, 0};
  if (t) o = (struct tsmr__operand){t->dtype, t->ndim, tsmr__body(t)->shape,
                                    tsmr__body(t)->numel};
  return o;
}

/* Step 4: the operation's own checks (MGR.OP.7-9) by its shape rule, then gather's
 * index range (ERANGE); sc: IN/OUT, the rule's call (the result's shape, zero). */
static int op_result(tsmr_ctx *ctx, int op, struct tsmr__tensor **in,
                     struct tsmr__shape_call *sc) {
  sc->a = operand_of(in[0]);
  sc->b = operand_of(in[1]);
  int rc = tsmr__op_def(op)->shape(sc);
  if (rc || op != TSMR_OP_GATHER) return rc;
  return gather_range(ctx, in[1], tsmr__body(in[0])->shape[0]);
}

/* The backend's kernel of d into r (r->numel > 0). */
static int op_kernel(tsmr_ctx *ctx, const struct tsmr__op_def *d, struct tsmr__tensor *r,
                     struct tsmr__tensor **in) {
  const struct tsmr__tensor *a = in[0], *b = in[1];
  struct tsmr__operand oa = operand_of(a), ob = operand_of(b), res = operand_of(r);
  struct tsmr__kernel_call k = {ctx->be, a->dtype, {r->st->data, NULL, NULL}, a->st->data,
                                b ? b->st->data : NULL, &oa, &ob, &res};
  return d->mgr_run(&k);
}

/* Step 5: creates the result (nothing left behind on failure), then runs the kernel. */
static int op_make(tsmr_ctx *ctx, const struct tsmr__op_call *c, struct tsmr__mgr *rm,
                   struct tsmr__tensor **in, const struct tsmr__shape_call *sc) {
  const struct tsmr__op_def *d = tsmr__op_def(c->op);
  struct tsmr__tensor *a = in[0], *r;
  int dtype = a->dtype, zero = sc->zero, rc;
  int64_t numel;
  if ((rc = tsmr__shape_check(dtype, sc->ndim[0], sc->shape[0], &numel, NULL)))
    return rc; /* ENOMEM */
  const struct tsmr__tensor_spec s = {dtype, sc->ndim[0], sc->shape[0], numel,
                                      c->op == TSMR_OP_RESHAPE ? a->st : NULL, zero};
  rc = tsmr__tensor_create(ctx, rm, &s, &r);
  if (rc) return rc;
  if (!zero && tsmr__body(r)->numel > 0 && d->mgr_run && (rc = op_kernel(ctx, d, r, in))) {
    tsmr__tensor_discard(ctx, r);
    return rc;
  }
  tsmr__res_register(ctx, r); /* SCOPE.REG.1 */
  c->outs[0] = r->handle;
  return 0;
}

static int op_l(tsmr_ctx *ctx, const struct tsmr__op_call *c) {
  struct tsmr__tensor *in[2] = {NULL, NULL};
  struct tsmr__mgr *rm = NULL;
  struct tsmr__shape_call sc;
  int rc;
  if (!ctx || !c->outs) return TSMR_EINVAL;
  if ((rc = op_args(ctx, c, in, &rm))) return rc;
  memset(&sc, 0, sizeof sc);
  sc.params = c->params;
  sc.n_params = c->n_params;
  if ((rc = op_result(ctx, c->op, in, &sc))) return rc;
  if (!tsmr__backend_has(ctx->be, tsmr__op_def(c->op)->mgr_slot)) return TSMR_ENOTSUP;
  return op_make(ctx, c, rm, in, &sc);
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_op(tsmr_ctx *ctx, int op, const tsmr_handle *inputs, int n,
            const int64_t *params, int n_params, tsmr_handle out_mgr, tsmr_handle *out) {
  struct tsmr__op_call c = {op, inputs, n, params, n_params, out_mgr, out, 1};
  TSMR__LOCKED(op_l(ctx, &c));
}
