/*
 * impl/src/optable.c: the op table. One row per operation of enum tsmr_op: its name,
 * arity and number of results, whether managers (tsmr_op, ops.c) or graphs
 * (tsmr_graph_op, graph.c) run it, its shape rule, and its kernel: a slot of the
 * backend vtable (backend.h, ggml style: each backend fills the slots it has, a NULL
 * slot answers TSMR_ENOTSUP) and the function that unpacks a kernel call into it.
 * A new op is one row here, one enum value in tsmref.h and its kernels per backend.
 * Clauses: MGR.OP.7-9, GRAPH.OP.1.
 */
#include <string.h>

#include "internal.h"

int tsmr__op_params_check(int op, int n_params, const int64_t *params) {
  if (op != TSMR_OP_RESHAPE) return 0;
  if (n_params < 0 || n_params > TSMR_MAX_DIMS || (n_params > 0 && !params))
    return TSMR_EINVAL;
  for (int i = 0; i < n_params; i++)
    if (params[i] < 0) return TSMR_EINVAL;
  return 0;
}

int tsmr__backend_has(const struct tsmr__backend *be, size_t slot) {
  void (*fn)(void) = NULL;
  if (!slot) return 1;
  memcpy(&fn, (const char *)be + slot, sizeof fn);
  return fn != NULL;
}

/* ---- shape rules (ESHAPE, then EDTYPE) -------------------------------------------- */

static int shape_binary(struct tsmr__shape_call *c) { /* add, sub, mul */
  const struct tsmr__operand *a = &c->a, *b = &c->b;
  if (a->ndim != b->ndim) return TSMR_ESHAPE;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return TSMR_ESHAPE;
  if (a->dtype != b->dtype || !tsmr__dtype_arith(a->dtype)) return TSMR_EDTYPE;
  c->ndim[0] = a->ndim;
  memcpy(c->shape[0], a->shape, (size_t)a->ndim * sizeof c->shape[0][0]);
  return 0;
}

static int shape_sum(struct tsmr__shape_call *c) { /* a 0-d result */
  c->ndim[0] = 0;
  if (!tsmr__dtype_arith(c->a.dtype)) return TSMR_EDTYPE;
  c->zero = c->a.numel == 0;
  return 0;
}

/* The index range (ERANGE) is checked by the manager after the rule (ops.c). */
static int shape_gather(struct tsmr__shape_call *c) {
  if (c->a.ndim != 2 || c->b.ndim != 1) return TSMR_ESHAPE;
  if (c->b.dtype != TSMR_I32) return TSMR_EDTYPE;
  c->ndim[0] = 2;
  c->shape[0][0] = c->b.numel;
  c->shape[0][1] = c->a.shape[1];
  return 0;
}

static int shape_reshape(struct tsmr__shape_call *c) {
  int64_t numel;
  int rc = tsmr__shape_check(c->a.dtype, c->n_params, c->params, &numel, NULL);
  if (rc == TSMR_ENOMEM || (rc == 0 && numel != c->a.numel)) return TSMR_ESHAPE;
  if (rc) return rc;
  c->ndim[0] = c->n_params;
  for (int i = 0; i < c->n_params; i++) c->shape[0][i] = c->params[i];
  return 0;
}

static int shape_matmul(struct tsmr__shape_call *c) {
  const struct tsmr__operand *a = &c->a, *b = &c->b;
  if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return TSMR_ESHAPE;
  if (a->dtype != TSMR_F32 || b->dtype != TSMR_F32) return TSMR_EDTYPE;
  c->ndim[0] = 2;
  c->shape[0][0] = a->shape[0];
  c->shape[0][1] = b->shape[1];
  c->zero = a->shape[1] == 0;
  return 0;
}

static int shape_transpose(struct tsmr__shape_call *c) {
  if (c->a.ndim != 2) return TSMR_ESHAPE;
  c->ndim[0] = 2;
  c->shape[0][0] = c->a.shape[1];
  c->shape[0][1] = c->a.shape[0];
  return 0;
}

static int shape_diag(struct tsmr__shape_call *c) {
  if (c->a.ndim != 1) return TSMR_ESHAPE;
  int64_t sq, k = c->a.shape[0];
  if (__builtin_mul_overflow(k, k, &sq) || sq > (int64_t)(SIZE_MAX / 8))
    return TSMR_ENOMEM;
  c->ndim[0] = 2;
  c->shape[0][0] = c->shape[0][1] = k;
  return 0;
}

static int shape_svd(struct tsmr__shape_call *c) { /* U [m,k], S [k], Vt [k,n] */
  if (c->a.ndim != 2) return TSMR_ESHAPE;
  if (c->a.dtype != TSMR_F32) return TSMR_EDTYPE;
  int64_t m = c->a.shape[0], n = c->a.shape[1], k = m < n ? m : n;
  c->ndim[0] = 2, c->shape[0][0] = m, c->shape[0][1] = k;
  c->ndim[1] = 1, c->shape[1][0] = k;
  c->ndim[2] = 2, c->shape[2][0] = k, c->shape[2][1] = n;
  return 0;
}

/* ---- kernel calls: a call unpacked into the backend slot -------------------------- */

static int run_add(const struct tsmr__kernel_call *k) {
  return k->res->numel ? k->be->add(k->dtype, k->out[0], k->a, k->b, k->res->numel) : 0;
}
static int run_sub(const struct tsmr__kernel_call *k) {
  return k->res->numel ? k->be->sub(k->dtype, k->out[0], k->a, k->b, k->res->numel) : 0;
}
static int run_mul(const struct tsmr__kernel_call *k) {
  return k->res->numel ? k->be->mul(k->dtype, k->out[0], k->a, k->b, k->res->numel) : 0;
}
static int run_sum(const struct tsmr__kernel_call *k) { /* of nothing: 0 */
  return k->be->sum(k->dtype, k->out[0], k->a, k->oa->numel);
}
static int run_gather(const struct tsmr__kernel_call *k) {
  return k->be->gather(k->out[0], k->a, k->b, k->ob->numel,
                       (size_t)k->oa->shape[1] * tsmr__dtype_size(k->oa->dtype));
}
static int run_matmul(const struct tsmr__kernel_call *k) { /* managers: no empty inner */
  struct tsmr__mm_dims d = {k->oa->shape[0], k->oa->shape[1], k->ob->shape[1]};
  return k->be->matmul(k->out[0], k->a, k->b, &d);
}
static int run_sgemm(const struct tsmr__kernel_call *k) { /* graphs: k may be 0 */
  struct tsmr__mm_dims d = {k->oa->shape[0], k->oa->shape[1], k->res->shape[1]};
  if (!k->res->numel) return 0;
  return k->be->sgemm(k->out[0], k->a, k->b, &d);
}
static int run_transpose(const struct tsmr__kernel_call *k) {
  if (!k->res->numel) return 0;
  return k->be->transpose32(k->out[0], k->a, k->oa->shape[0], k->oa->shape[1]);
}
static int run_diag(const struct tsmr__kernel_call *k) {
  return k->res->numel ? k->be->diag32(k->out[0], k->a, k->oa->numel) : 0;
}
static int run_svd(const struct tsmr__kernel_call *k) { /* the three results at once */
  struct tsmr__svd_out o = {k->out[0], k->out[1], k->out[2]};
  if (!k->oa->shape[0] || !k->oa->shape[1]) return 0;
  return k->be->sgesvd(&o, k->a, k->oa->shape[0], k->oa->shape[1]);
}

/* ---- the table ---------------------------------------------------------------------- */

#define SLOT(f) offsetof(struct tsmr__backend, f)
#define MG (TSMR__OP_MGR | TSMR__OP_GRAPH)

static const struct tsmr__op_def op_table[] = {
    [TSMR_OP_ADD] = {"add", 2, 1, MG, shape_binary, SLOT(add), SLOT(add), run_add, run_add},
    [TSMR_OP_SUB] = {"sub", 2, 1, MG, shape_binary, SLOT(sub), SLOT(sub), run_sub, run_sub},
    [TSMR_OP_MUL] = {"mul", 2, 1, MG, shape_binary, SLOT(mul), SLOT(mul), run_mul, run_mul},
    [TSMR_OP_SUM] = {"sum", 1, 1, MG, shape_sum, SLOT(sum), SLOT(sum), run_sum, run_sum},
    [TSMR_OP_GATHER] = {"gather", 2, 1, TSMR__OP_MGR, shape_gather, SLOT(gather), 0,
                        run_gather, NULL},
    [TSMR_OP_RESHAPE] = {"reshape", 1, 1, MG, shape_reshape, 0, 0, NULL, NULL}, /* a view */
    [TSMR_OP_MATMUL] = {"matmul", 2, 1, MG, shape_matmul, SLOT(matmul), SLOT(sgemm),
                        run_matmul, run_sgemm},
    [TSMR_OP_TRANSPOSE] = {"transpose", 1, 1, TSMR__OP_GRAPH, shape_transpose, 0,
                           SLOT(transpose32), NULL, run_transpose},
    [TSMR_OP_DIAG] = {"diag", 1, 1, TSMR__OP_GRAPH, shape_diag, 0, SLOT(diag32), NULL,
                      run_diag},
    [TSMR_OP_SVD] = {"svd", 1, 3, TSMR__OP_GRAPH, shape_svd, 0, SLOT(sgesvd), NULL,
                     run_svd},
};

const struct tsmr__op_def *tsmr__op_def(int op) {
  if (op <= 0 || op >= (int)(sizeof op_table / sizeof op_table[0])) return NULL;
  return op_table[op].name ? &op_table[op] : NULL;
}
