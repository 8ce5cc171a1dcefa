/*
 * harness/src/exec/exec.c: the executor core, the step-by-step judge. Each statement runs
 * through its row of the statement table (families.c): a generic action runs its
 * adapter call on the adapter and its model function on the model; their return codes
 * must agree, and after the statement every observable the ABI offers (ABI.INFO.1) must
 * agree too (exec_observe.c). A disagreement of the adapter is Fail; a case whose
 * statements or expectations contradict the model is Error (a bug in the case, not in
 * the adapter). This file names no family: families plug in through families.c.
 */
#include "exec.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_load.h"
#include "exec_internal.h"
#include "opsem.h"

static const char *const status_names[CTS_N_STATUS] = {
    "Pass", "Fail", "Warning", "Crash", "Timeout", "NotSupported", "Skip", "XFail", "XPass", "Error"};

const char *cts_status_name(int status) {
  return status >= 0 && status < CTS_N_STATUS ? status_names[status] : "?";
}

int cts_status_from_name(const char *name) {
  for (int i = 0; i < CTS_N_STATUS; i++)
    if (strcmp(status_names[i], name) == 0) return i;
  return -1;
}

int cts_status_ok(int s) {
  return s == CTS_PASS || s == CTS_WARNING || s == CTS_NOTSUPPORTED || s == CTS_SKIP || s == CTS_XFAIL;
}

void (*cts_exec_on_report)(int line, int status, int model_rc);
void (*cts_exec_on_step)(int status, const char *message);
int cts_exec_model_decides;

/* The line of the statement being judged, 0 outside the body (cts_exec_on_report). */
static int cur_line(const struct cts_run *r) { return r->cur ? r->cur->line : 0; }

/* ---- operands ---------------------------------------------------------------- */

int cts__operand(struct cts_run *r, int sym, int *out) {
  if (sym == -1 || sym == -2) { /* absent, or `none` */
    *out = CTS_NONE;
    return 0;
  }
  if (sym == CTS_SYM_BOGUS) {
    *out = CTS_BOGUS;
    return 0;
  }
  if (r->sym_obj[sym] < 0) return cts__unbound(r, sym);
  *out = r->sym_obj[sym];
  return 0;
}

int cts__resolve(struct cts_run *r, const struct cts_stmt *st, struct cts_operands *o) {
  memset(o, 0, sizeof *o);
  if (cts__operand(r, st->a, &o->a) || cts__operand(r, st->b, &o->b) ||
      cts__operand(r, st->out, &o->out))
    return -1;
  if (st->n_list) {
    o->list = cts_xmalloc(st->n_list * sizeof(int));
    o->n_list = st->n_list;
    for (size_t i = 0; i < st->n_list; i++)
      if (cts__operand(r, st->list[i], &o->list[i])) return -1;
  }
  return 0;
}

tsm_handle cts__handle_of(struct cts_run *r, int sym, int id) {
  if (id == CTS_BOGUS) return CTS_BOGUS_HANDLE;
  if (id == CTS_NONE) return TSM_NONE;
  int kind = r->c->syms[sym].kind;
  if (kind == CTS_SYM_MANAGER) return cts__mgr_handle(r, id);
  struct cts_objmap *map = cts__family_objects(r, kind);
  return map ? map->v[id].h : cts__res_handle(r, id);
}

static void to_handles(struct cts_run *r, const struct cts_stmt *st,
                       const struct cts_operands *o, struct cts_handles *h) {
  h->a = cts__handle_of(r, st->a, o->a);
  h->b = cts__handle_of(r, st->b, o->b);
  h->out = cts__handle_of(r, st->out, o->out);
  h->list = st->n_list ? cts_xmalloc(st->n_list * sizeof(tsm_handle)) : NULL;
  for (size_t i = 0; i < st->n_list; i++)
    h->list[i] = cts__handle_of(r, st->list[i], o->list[i]);
}

/* The model and adapter sides of a row whose executor does both itself; a parallel
 * thread records and replays only generic actions. */
int cts__model_none(struct cts_model *m, const struct cts_stmt *st,
                    const struct cts_operands *o, int *made) {
  (void)m, (void)st, (void)o, (void)made;
  return TSM_EINVAL;
}

int cts__adapter_none(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                      tsm_handle *made) {
  (void)r, (void)st, (void)h, (void)made;
  return TSM_EINVAL;
}

/* ---- literals -------------------------------------------------------------- */

double cts__literal_at(const struct cts_literal *lit, int64_t i) {
  switch (lit->fill) {
    case CTS_ZEROS: return 0;
    case CTS_ONES: return 1;
    case CTS_FULL: return lit->scalar;
    case CTS_ARANGE: return (double)i;
    default: return lit->vals[i];
  }
}

double *cts__literal_values(const struct cts_literal *lit, int64_t *n) {
  *n = cts_opsem_literal_elems(lit->ndim, lit->shape);
  double *v = cts_xmalloc((*n ? (size_t)*n : 1) * sizeof(double));
  for (int64_t i = 0; i < *n; i++) v[i] = cts__literal_at(lit, i);
  return v;
}

double *cts__literal_data(const struct cts_literal *lit, int64_t *n) {
  *n = cts_opsem_literal_elems(lit->ndim, lit->shape);
  return lit->fill == CTS_ZEROS ? NULL : cts__literal_values(lit, n);
}

/* ---- binding what an action made ------------------------------------------- */

int cts__bind_handle(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h) {
  int binds = cts_stmt_exec[st->kind].binds;
  if (h == TSM_NONE || h == CTS_BOGUS_HANDLE || cts__handle_in_use(r, h))
    return cts__report(r, CTS_FAIL, "adapter returned handle 0x%llx, which is 0 or already in "
                       "use (ABI.HANDLE.1)", (unsigned long long)h);
  struct cts_objmap *map = cts__family_objects(r, binds);
  struct cts_obj_slot at = {&r->res, &r->res_cap, (size_t)id};
  if (binds == CTS_SYM_MANAGER)
    at = (struct cts_obj_slot){&r->mgr, &r->mgr_cap, (size_t)id};
  else if (map)
    at = (struct cts_obj_slot){&map->v, &map->cap, (size_t)id};
  cts__remember_at(r, at, (struct cts_objinfo){h, st->dst, st->line});
  r->sym_obj[st->dst] = id;
  return 0;
}

int cts__bind_made(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h) {
  const struct cts_stmt_exec *x = &cts_stmt_exec[st->kind];
  if (x->made == CTS_MADE_NOTHING || st->dst < 0) return 0;
  if (x->made == CTS_MADE_FAMILY) return cts_families[x->family]->bind_made(r, st, id, h);
  return cts__bind_handle(r, st, id, h);
}

/* The elements of what the statement made. */
int cts__check_made_values(struct cts_run *r, const struct cts_stmt *st, int id) {
  const struct cts_stmt_exec *x = &cts_stmt_exec[st->kind];
  if (x->made == CTS_MADE_FAMILY) return cts_families[x->family]->check_made(r, st, id);
  if (x->made != CTS_MADE_TENSOR) return 0;
  /* the model's elements one at a time: the check samples a large tensor, and a closed
   * form stays one */
  struct cts_want want = {NULL, (size_t)cts_model_elems(&r->m.res[id]),
                          cts_model_approx(&r->m, id), "value", &r->m, id};
  return cts__check_values(r, id, &want);
}

/* ---- values on a device ------------------------------------------------------ */

/* Higham's gamma_n = n u / (1 - n u) for f32 (u = 2^-24): a sum of n f32 terms in any
 * order is within gamma_(n-1) times the sum of their magnitudes of the exact sum, a dot
 * product of n terms (with or without fused multiply-adds) within gamma_n times the sum
 * of the products' magnitudes (N. J. Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., sections 3.1 and 3.2); -1 when n is too large to bound. */
static double f32_gamma(int64_t n) {
  double nu = (double)n * 0x1p-24;
  return nu < 0.5 ? nu / (1 - nu) : -1;
}

/* MGR.OP.7's allowance for an element of an input that is itself a sum or product
 * (its device value may differ by that much from the model's), else 0. */
static double input_slack(struct cts_run *r, int id, double v) {
  return cts_model_approx(&r->m, id) ? CTS_OPSEM_REL_TOL * fmax(1.0, fabs(v)) : 0;
}

/* How far element i of an f32 `sum` or `matmul` result may lie from the model's value
 * when the device evaluates it in f32 in another order (the model's value is the exact
 * one rounded to f32: one term more), with subnormals flushed to zero, from inputs that
 * agree with the model to MGR.OP.7's tolerance; -1 when it cannot be bounded. */
static double f32_any_order_bound(struct cts_run *r, int op, int a, int b, int64_t i) {
  const struct cts_mres *ra = &r->m.res[a];
  const double *x = cts_model_values(&r->m, a);
  double mag = 0, spread = 0;
  int64_t n;
  if (op == TSM_OP_SUM) {
    n = cts_model_elems(ra);
    for (int64_t k = 0; k < n; k++) {
      double s = input_slack(r, a, x[k]);
      mag += fabs(x[k]) + s;
      spread += s;
    }
  } else { /* TSM_OP_MATMUL: [rows, n] x [n, cols] */
    const struct cts_mres *rb = &r->m.res[b];
    const double *y = cts_model_values(&r->m, b);
    int64_t cols = rb->shape[1], row = i / cols, col = i % cols;
    n = ra->shape[1];
    for (int64_t k = 0; k < n; k++) {
      double p = x[row * n + k], q = y[k * cols + col];
      double up = (fabs(p) + input_slack(r, a, p)) * (fabs(q) + input_slack(r, b, q));
      mag += up;
      spread += up - fabs(p * q);
    }
  }
  double gamma = f32_gamma(n + 2);
  return gamma < 0 ? -1 : gamma * mag + spread + 2.0 * (double)(n + 1) * FLT_MIN;
}

/* 1 when DEV.VAL.1 may explain a miss of result `made` of statement st: an
 * approximate f32 `sum` or `matmul` of the model's (a matmul with both inputs) in a
 * session on a device other than the CPU. */
static int rounding_applies(struct cts_run *r, const struct cts_stmt *st,
                            const struct cts_operands *o, int made) {
  int op = st->u.op.op;
  if (!r->cuda_session || cts_stmt_exec[st->kind].model != cts__model_op ||
      !cts_model_approx(&r->m, made))
    return 0;
  return op == TSM_OP_SUM || (op == TSM_OP_MATMUL && o->b >= 0);
}

/* The elements the adapter holds for result `made`, *n of them (the caller frees them);
 * NULL when it is not an f32 tensor of the model's shape or cannot be read. */
static float *read_f32_result(struct cts_run *r, int made, int64_t *n) {
  const struct cts_mres *mr = &r->m.res[made];
  struct tsm_tensor_desc d;
  memset(&d, 0, sizeof d);
  if (r->a->tensor_desc(r->s, r->res[made].h, &d) || d.dtype != TSM_F32 ||
      !cts_opsem_same_dims(d.ndim, d.shape, mr->ndim, mr->shape))
    return NULL;
  *n = cts_model_elems(mr);
  float *got = cts_xmalloc(*n ? (size_t)*n * sizeof *got : 1);
  if (r->a->tensor_read(r->s, r->res[made].h, got, (size_t)*n * sizeof *got) == 0) return got;
  free(got);
  return NULL;
}

/* An f32 result as the device computed it: the operation, its inputs' model ids, and
 * the elements read (borrowed). */
struct f32_result {
  int op, a, b, made;
  const float *got;
  int64_t n;
};

/* The first element of f off the model's value when every such element lies within
 * what an f32 evaluation in another order can give; else (or when none is off) -1. */
static int64_t rounding_miss(struct cts_run *r, const struct f32_result *f) {
  const double *want = cts_model_values(&r->m, f->made);
  int64_t miss = -1;
  for (int64_t i = 0; i < f->n; i++) {
    double w = cts_opsem_expected(TSM_F32, want[i]), g = f->got[i];
    if (cts__values_equal(w, g, 1)) continue;
    double bound = f32_any_order_bound(r, f->op, f->a, f->b, i);
    if (!(isfinite(g) && bound >= 0 && fabs(g - w) <= bound)) return -1;
    if (miss < 0) miss = i;
  }
  return miss;
}

/* DEV.VAL.1 (TSM): on a device other than the CPU (a CUDA session: the only other kind
 * of device the ABI names), an f32 `sum` or `matmul` whose result
 * misses MGR.OP.7's tolerance while every element stays within what an f32 evaluation in
 * another order can give is the device's rounding, graded by DEV.VAL.1; a value beyond
 * that is a wrong value, left to the value check below (the case's clauses grade it).
 * RETURNS -1 after reporting the first such element, else 0. */
static int device_rounding(struct cts_run *r, const struct cts_stmt *st,
                           const struct cts_operands *o, int made) {
  if (!rounding_applies(r, st, o, made)) return 0;
  struct f32_result f = {st->u.op.op, o->a, o->b, made, NULL, 0};
  float *got = read_f32_result(r, made, &f.n);
  if (!got) return 0;
  f.got = got;
  int64_t miss = rounding_miss(r, &f);
  double g = miss >= 0 ? got[miss] : 0;
  free(got);
  if (miss < 0) return 0;
  double w = cts_opsem_expected(TSM_F32, cts_model_values(&r->m, made)[miss]);
  char name[200];
  return cts__report(r, CTS_FAIL, "%s: value element %lld expected %.9g, observed %.9g: beyond "
                     "the 1e-5 relative tolerance, within the error of an f32 evaluation in "
                     "another order on this device (DEV.VAL.1)",
                     cts__res_name(r, made, name, sizeof name), (long long)miss, w, g);
}

/* ERR.NOMEM.1: a tensor larger than the judge models, which the adapter may refuse for
 * want of memory: *model_rc becomes ENOMEM. RETURN 0, or -1 after reporting another
 * code (Error: the case asks more than the judge can judge). */
static int too_large(struct cts_run *r, int adapter_rc, int *model_rc) {
  if (adapter_rc != TSM_ENOMEM)
    return cts__report(r, CTS_ERROR, "the tensor has more than %lld elements, more than the "
                       "judge models (cases/README.md, \"Limits\"); the adapter returned %s",
                       (long long)CTS_OPSEM_MAX_MODELED, cts_err_name(adapter_rc));
  *model_rc = TSM_ENOMEM;
  return 0;
}

/* A refusal the case expects (or the model decides): `expected`. */
static int judge_refusal(struct cts_run *r, int expected, int model_rc, int adapter_rc) {
  if (model_rc != expected)
    return cts__report(r, CTS_ERROR, "the case expects %s but the spec model gives %s",
                       cts_err_name(expected), cts_err_name(model_rc));
  /* An import refused with another code: DLPack defines no error codes and no order
   * of checks, so which code is the suite's rule (DLP.IMPORT.2, TSM). Not so for a
   * tensor of another major version: another code shows that a field after the
   * version was read (DLP.IMPORT.1). */
  if (adapter_rc && adapter_rc != expected && r->cur && r->cur->kind == CTS_DL_IMPORT)
    return cts__report(r, CTS_FAIL, "expected error %s, adapter returned %s (%s)",
                       cts_err_name(expected), cts_err_name(adapter_rc),
                       expected == TSM_EVERSION ? "DLP.IMPORT.1" : "DLP.IMPORT.2");
  if (adapter_rc != expected)
    return cts__report(r, CTS_FAIL, "expected error %s, adapter returned %s",
                       cts_err_name(expected), cts_err_name(adapter_rc));
  return 0;
}

/* A statement the case expects to succeed. */
static int judge_success(struct cts_run *r, int model_rc, int adapter_rc) {
  if (model_rc && cts_exec_on_report) cts_exec_on_report(cur_line(r), CTS_ERROR, model_rc);
  if (model_rc)
    return cts__report(r, CTS_ERROR, "the spec model refuses this with %s: the case must say "
                       "`expect error %s: ...`", cts_err_name(model_rc), cts_err_name(model_rc));
  if (adapter_rc)
    return cts__report(r, CTS_FAIL, "adapter returned %s, the spec requires success",
                       cts_err_name(adapter_rc));
  return 0;
}

int cts__judge_codes(struct cts_run *r, int model_rc, int adapter_rc, int *expected_err) {
  if (model_rc == CTS_OPSEM_TOO_LARGE && too_large(r, adapter_rc, &model_rc)) return -1;
  if (adapter_rc == TSM_ENOTSUP && model_rc != TSM_ENOTSUP) /* an optional slot it lacks */
    return cts__report(r, CTS_NOTSUPPORTED, "the adapter does not offer this statement (it "
                       "returned ENOTSUP)");
  if (!*expected_err && model_rc && cts_exec_model_decides) {
    *expected_err = model_rc;
    if (cts_exec_on_report) cts_exec_on_report(cur_line(r), CTS_PASS, model_rc);
  }
  if (*expected_err) return judge_refusal(r, *expected_err, model_rc, adapter_rc);
  return judge_success(r, model_rc, adapter_rc);
}

static int cannot_run_v(struct cts_run *r, const char *fmt, va_list ap) {
  if (cts_exec_model_decides) {
    r->skipped = 1;
    if (cts_exec_on_report) cts_exec_on_report(cur_line(r), CTS_SKIP, 0);
    return -1;
  }
  char detail[256];
  vsnprintf(detail, sizeof detail, fmt, ap);
  return cts__report(r, CTS_ERROR, "%s", detail);
}

int cts__cannot_run(struct cts_run *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = cannot_run_v(r, fmt, ap);
  va_end(ap);
  return rc;
}

int cts__unbound(struct cts_run *r, int sym) {
  return cts__cannot_run(r, "'%s' is not bound here (its binding failed or never ran)",
                         r->c->syms[sym].name);
}

int cts__model_agrees(struct cts_run *r, int ok, const char *fmt, ...) {
  if (ok) return 0;
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return cts__cannot_run(r, "the case contradicts the spec model: %s", detail);
}

/* ---- statements ------------------------------------------------------------- */

/* A generic action: the row's adapter call, then its model function. */
int cts__exec_action(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  const struct cts_stmt_exec *x = &cts_stmt_exec[st->kind];
  struct cts_operands o;
  struct cts_handles h = {0};
  int rc = cts__resolve(r, st, &o);
  int made = CTS_NONE;
  tsm_handle made_h = TSM_NONE;
  if (rc == 0) {
    to_handles(r, st, &o, &h);
    int adapter_rc = x->adapter(r, st, &h, &made_h);
    if (r->fault && adapter_rc == TSM_ENOMEM) {
      free(o.list);
      free(h.list);
      return cts__injected(r);
    }
    int model_rc = x->model(&r->m, st, &o, &made);
    rc = cts__judge_codes(r, model_rc, adapter_rc, &expected_err);
    if (rc == 0 && !expected_err) rc = cts__bind_made(r, st, made, made_h);
    if (rc == 0) rc = cts__check_state(r);
    if (rc == 0 && !expected_err && made != CTS_NONE) rc = device_rounding(r, st, &o, made);
    if (rc == 0 && !expected_err && made != CTS_NONE) rc = cts__check_made_values(r, st, made);
  }
  free(o.list);
  free(h.list);
  return rc;
}

int cts__exec_repeat(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  for (int64_t k = 0; k < st->u.repeat.times; k++)
    if (cts__exec_block(r, &st->body)) return -1;
  return 0;
}

int cts__exec_expect_error(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  const struct cts_stmt *inner = st->u.error.inner;
  return cts_stmt_exec[inner->kind].exec(r, inner, st->u.error.code);
}

void (*cts__on_step)(struct cts_run *r, const struct cts_stmt *st, int outcome);

int cts__exec_block(struct cts_run *r, const struct cts_block *b) {
  for (size_t i = 0; i < b->n; i++) {
    const struct cts_stmt *st = &b->items[i];
    r->cur = st;
    int rc = cts_stmt_exec[st->kind].exec(r, st, 0);
    if (cts__on_step) cts__on_step(r, st, rc == 0 ? 0 : r->skipped ? 1 : -1);
    if (rc == 0) continue;
    if (!r->skipped) return -1;
    r->skipped = 0;
  }
  return 0;
}

int cts__injected(struct cts_run *r) {
  r->injected = 1;
  cts__check_state(r);
  return -1;
}

/* ---- a run ------------------------------------------------------------------ */

static int open_run(struct cts_run *r, int device_index) {
  cts__observe_begin();
  const struct tsm_device *devs = NULL;
  if (r->a->device_list(&devs) > device_index && devs[device_index].name)
    r->m.cuda_session = r->cuda_session = !strncmp(devs[device_index].name, "cuda", 4);
  const char *missing = cts_adapter_missing_slot(r->a, r->c->families);
  if (missing)
    return cts__report(r, CTS_ERROR, "adapter declares the case's families but its '%s' slot is "
                       "NULL", missing);
  int rc = r->a->session_open(device_index, &r->s);
  if (rc)
    return cts__report(r, CTS_FAIL, "session_open(%d) failed with %s", device_index,
                       cts_err_name(rc));
  int cuda = r->m.cuda_session;
  cts_model_init(&r->m);
  r->m.cuda_session = cuda;
  r->m.dtypes = r->a->dtypes;
  r->sym_obj = cts_xmalloc(r->c->n_syms * sizeof(int));
  for (size_t i = 0; i < r->c->n_syms; i++) r->sym_obj[i] = -1;
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    r->family[f] = cts_families[f]->state_new ? cts_families[f]->state_new(r) : NULL;
  return 0;
}

/* A run's first calls: the session, its root manager and, in a thread case, the first
 * look at the session's state. Owned by run_once. */
struct opening {
  struct cts_run *r;
  int device_index;
  int opened;   /* a session to close */
  int ready;    /* the root is bound: the body may run */
  int checked;  /* the first state check ran here, with result check_rc */
  int check_rc;
};

static void *open_session(void *arg) {
  struct opening *o = arg;
  struct cts_run *r = o->r;
  if (open_run(r, o->device_index)) return NULL;
  o->opened = 1;
  tsm_handle root = TSM_NONE;
  int rc = r->a->mgr_root(r->s, &root);
  if (rc || root == TSM_NONE) {
    cts__report(r, CTS_FAIL, "mgr_root failed with %s (MGR.ROOT.1)", cts_err_name(rc));
    return NULL;
  }
  cts__remember_at(r, (struct cts_obj_slot){&r->mgr, &r->mgr_cap, 0},
                   (struct cts_objinfo){root, CTS_SYM_ROOT, 0});
  r->sym_obj[CTS_SYM_ROOT] = 0;
  o->ready = 1;
  if (r->c->families & TSM_CAP_THREADS) { /* never armed (main.c) */
    o->check_rc = cts__check_state(r);
    o->checked = 1;
  }
  return NULL;
}

/* ABI.THREAD.2: a thread case's first calls run on a thread that ends before the body
 * runs, so the first thread that called the session is gone when the case's own threads
 * start, and one of them may get its identifier (glibc hands a joined thread's pthread_t
 * out again): a session that ties a fast path or a thread's state to its first caller
 * by such an identifier shows it at the first statement. RETURN 0, or -1 when that
 * thread could not start (reported). */
static int open_first_calls(struct opening *o) {
  pthread_t opener;
  if (!(o->r->c->families & TSM_CAP_THREADS)) {
    open_session(o);
    return 0;
  }
  if (pthread_create(&opener, NULL, open_session, o) != 0) {
    cts__report(o->r, CTS_ERROR, "could not start the thread that opens the session");
    return -1;
  }
  pthread_join(opener, NULL);
  return 0;
}

/* The body, with allocation `arm` failing when arm > 0. *fired: it failed. */
static void run_body(struct cts_run *r, const struct opening *o, uint64_t arm, int *fired) {
  const struct tsm_adapter *a = r->a;
  uint64_t left = 0;
  if (arm) a->debug_alloc_fail(r->s, arm, &left);
  if ((o->checked ? o->check_rc : cts__check_state(r)) == 0) cts__exec_block(r, &r->c->body);
  if (!arm) return;
  a->debug_alloc_fail(r->s, TSM_ALLOC_QUERY, &left);
  *fired = left == 0;
  a->debug_alloc_fail(r->s, 0, &left); /* nothing fails while the session closes */
  r->cur = NULL;
  if (*fired && !r->injected)
    cts__report(r, CTS_FAIL, "allocation %llu failed but no call reported ENOMEM "
                "(ERR.NOMEM.1)", (unsigned long long)arm);
}

static void close_run(struct cts_run *r) {
  cts__stop_workers(r);
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->before_close) cts_families[f]->before_close(r);
  r->a->session_close(r->s);
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->after_close) cts_families[f]->after_close(r);
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->state_free) cts_families[f]->state_free(r->family[f]);
  cts_model_free(&r->m);
  free(r->sym_obj);
  free(r->mgr);
  free(r->res);
  free(r->handles.v);
  free(r->read_buf);
}

/* One run of the case on a fresh session. Borrows the case and the adapter. */
struct once {
  const struct cts_case *c;
  const struct tsm_adapter *a;
  int device_index;
  uint64_t arm; /* > 0: that allocation fails */
  int fired;    /* out: the armed failure happened */
};

/* RETURN the run's status; msg receives its message. */
static int run_once(struct once *w, struct cts_buf *msg) {
  struct cts_run r;
  memset(&r, 0, sizeof r);
  r.c = w->c;
  r.a = w->a;
  r.msg = msg;
  r.status = CTS_PASS;
  r.fault = w->arm > 0;
  struct opening o = {&r, w->device_index, 0, 0, 0, 0};
  if (open_first_calls(&o) == 0 && o.ready) run_body(&r, &o, w->arm, &w->fired);
  if (o.opened) close_run(&r);
  return r.status;
}

int cts_exec_case(const struct cts_case *c, const struct tsm_adapter *a, int device_index,
                  struct cts_buf *msg, uint64_t fail_max) {
  struct once w = {c, a, device_index, 0, 0};
  if (!fail_max) return run_once(&w, msg);
  for (uint64_t k = 1; k <= fail_max; k++) {
    struct cts_buf one = {0};
    w.arm = k;
    w.fired = 0;
    /* The run's message begins as the case's will, so that the step it streams
     * (cts_exec_on_step) is the message returned; a run that passes drops it. */
    cts_buf_printf(&one, "with allocation %llu failing: ", (unsigned long long)k);
    int status = run_once(&w, &one);
    if (status != CTS_PASS) {
      cts_buf_printf(msg, "%s", one.buf);
      cts_buf_free(&one);
      return status;
    }
    cts_buf_free(&one);
    if (!w.fired) {
      cts_buf_printf(msg, "every one of its %llu allocations failed in turn, cleanly",
                     (unsigned long long)(k - 1));
      return CTS_PASS;
    }
  }
  cts_buf_printf(msg, "the first %llu allocations failed in turn, cleanly (the cap)",
                 (unsigned long long)fail_max);
  return CTS_PASS;
}
