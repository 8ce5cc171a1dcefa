/*
 * harness/src/family/exec_expect.c: the expectations of the managers family and of the
 * scopes-and-composites family (cases/README.md, Expectations). Each first asks the model
 * (a case that contradicts it is Error), then observes the adapter (a disagreement is
 * Fail).
 */
#include <string.h>

#include "exec_internal.h"
#include "exec_scopes.h"
#include "opsem.h"

/* The model ids of the expectation's operands; `bogus` is no expectation's operand. */
static int expect_operands(struct cts_run *r, const struct cts_stmt *st, int *x, int *y) {
  *x = *y = CTS_NONE;
  if (cts__operand(r, st->a, x) || cts__operand(r, st->b, y)) return -1;
  if (*x == CTS_BOGUS || *y == CTS_BOGUS)
    return cts__report(r, CTS_ERROR, "'bogus' can only be an argument of an action");
  return 0;
}

/* ---- resources -------------------------------------------------------------------- */

/* `expect owner|lender X == M|none`: holder() is the model's answer. */
static int expect_manager_of(struct cts_run *r, const struct cts_stmt *st,
                             int (*holder)(const struct cts_model *, int), const char *what) {
  int x, y;
  char buf[200];
  if (expect_operands(r, st, &x, &y)) return -1;
  int got = holder(&r->m, x);
  if (cts__model_agrees(r, got == y, "the model's %s is %s", what,
                        cts__describe_mgr(r, got, buf, sizeof buf)))
    return -1;
  return cts__check_res(r, x);
}

int cts__expect_owner(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  return expect_manager_of(r, st, cts_model_holder, "owner");
}

int cts__expect_lender(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  return expect_manager_of(r, st, cts_model_lender, "lender");
}

int cts__expect_borrowed(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  int borrowed = cts_model_borrowed(&r->m, x);
  if (cts__model_agrees(r, borrowed == st->u.truth.holds, "the model says %s",
                        borrowed ? "borrowed" : "not borrowed"))
    return -1;
  return cts__check_res(r, x);
}

int cts__expect_valid(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  int valid = r->m.res[x].valid;
  if (cts__model_agrees(r, valid == st->u.truth.holds, "the model says %s",
                        valid ? "live" : "released"))
    return -1;
  return cts__check_res(r, x);
}

int cts__expect_values(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  const struct cts_mres *mr = &r->m.res[x];
  const double *want = st->u.values.v;
  size_t n_want = st->u.values.n;
  if (cts__model_agrees(r, mr->valid, "the tensor is released")) return -1;
  int64_t n = cts_model_elems(mr);
  if (cts__model_agrees(r, (size_t)n == n_want, "%zu values for %lld elements", n_want,
                        (long long)n))
    return -1;
  const double *mv = cts_model_values(&r->m, x);
  int approx = cts_model_approx(&r->m, x);
  for (int64_t i = 0; i < n; i++) {
    double w = cts_opsem_expected(mr->dtype, want[i]);
    if (cts__model_agrees(r, cts__values_equal(w, mv[i], approx),
                          "element %lld is %.9g in the model", (long long)i, mv[i]))
      return -1;
  }
  const struct cts_want expected = {want, n_want, approx, "expected", NULL, CTS_NONE};
  return cts__check_values(r, x, &expected);
}

int cts__expect_shape(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  const struct cts_mres *mr = &r->m.res[x];
  int ndim = st->u.dims.ndim;
  const int64_t *shape = st->u.dims.shape;
  int same = mr->valid && cts_opsem_same_dims(mr->ndim, mr->shape, ndim, shape);
  if (cts__model_agrees(r, same, "the model's shape differs")) return -1;
  struct tsm_tensor_desc d;
  memset(&d, 0, sizeof d);
  int rc = r->a->tensor_desc(r->s, r->res[x].h, &d);
  if (rc) return cts__report(r, CTS_FAIL, "tensor_desc failed with %s", cts_err_name(rc));
  same = cts_opsem_same_dims(d.ndim, d.shape, ndim, shape);
  return same ? 0 : cts__report(r, CTS_FAIL, "shape differs (ndim %d observed)", d.ndim);
}

/* ---- managers --------------------------------------------------------------------- */

int cts__expect_count(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  size_t held = r->m.mgrs[x].held.n;
  if (cts__model_agrees(r, (int64_t)held == st->u.count.want, "the model's count is %zu", held))
    return -1;
  return cts__check_mgr(r, x);
}

int cts__expect_children(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  size_t n = r->m.mgrs[x].children.n;
  if (cts__model_agrees(r, (int64_t)n == st->u.count.want, "the model's child count is %zu", n))
    return -1;
  return cts__check_mgr(r, x);
}

int cts__expect_state(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  const struct cts_mmgr *mg = &r->m.mgrs[x];
  int state = mg->state == CTS_M_CLOSED ? CTS_STATE_CLOSED
              : mg->capped                ? CTS_STATE_CAPPED
                                          : CTS_STATE_OPEN;
  if (cts__model_agrees(r, state == st->u.state.want, "the model's state differs")) return -1;
  return cts__check_mgr(r, x);
}

int cts__expect_parent(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  char buf[200];
  if (expect_operands(r, st, &x, &y)) return -1;
  int parent = r->m.mgrs[x].parent;
  if (cts__model_agrees(r, parent == y, "the model's parent is %s",
                        cts__describe_mgr(r, parent, buf, sizeof buf)))
    return -1;
  return cts__check_mgr(r, x);
}

int cts__expect_bytes(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  uint64_t live = r->m.live_bytes;
  if (cts__model_agrees(r, live == (uint64_t)st->u.count.want, "the model has %llu live bytes",
                        (unsigned long long)live))
    return -1;
  return cts__check_bytes(r);
}

/* ---- scopes ----------------------------------------------------------------------- */

int cts__expect_scope(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  char buf[200];
  if (expect_operands(r, st, &x, &y)) return -1;
  int scope = r->m.res[x].scope;
  if (cts__model_agrees(r, scope == y, "the model's scope is %s",
                        cts__describe_scope(r, scope, buf, sizeof buf)))
    return -1;
  return cts__check_res(r, x);
}

int cts__expect_scope_state(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  int disposed = r->m.scopes[x].disposed;
  if (cts__model_agrees(r, disposed == (st->u.state.want == CTS_STATE_DISPOSED),
                        "the model says %s", disposed ? "disposed" : "open"))
    return -1;
  return cts__check_scope(r, x);
}

int cts__expect_current(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  char buf[200];
  if (expect_operands(r, st, &x, &y)) return -1;
  int cur = r->m.threads[r->m.thread].current;
  if (cts__model_agrees(r, cur == y, "the model's current scope is %s",
                        cts__describe_scope(r, cur, buf, sizeof buf)))
    return -1;
  return cts__check_thread(r);
}

int cts__expect_members(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  size_t n = r->m.scopes[x].members.n;
  if (cts__model_agrees(r, (int64_t)n == st->u.count.want, "the model's member count is %zu", n))
    return -1;
  return cts__check_scope(r, x);
}

int cts__expect_outer(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  char buf[200];
  if (expect_operands(r, st, &x, &y)) return -1;
  int outer = r->m.scopes[x].outer;
  if (cts__model_agrees(r, outer == y, "the model's outer scope is %s",
                        cts__describe_scope(r, outer, buf, sizeof buf)))
    return -1;
  return cts__check_scope(r, x);
}

int cts__expect_stats(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  static const char *const names[CTS_N_STATS] = {
      "created_in", "created_outside", "disposed_in", "disposed_outside",
      "attached",   "detached",        "live"};
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  /* Each list must be its variant's of SCOPE.STAT.3; one list is both variants'. The
   * adapter's counters are one variant's, the session's (cts__check_thread). */
  for (int v = 0; v < CTS_N_VARIANTS; v++) {
    int64_t model[CTS_N_STATS];
    cts_model_stats_as(&r->m, r->m.thread, st->u.stats.kind, v, model);
    const int64_t *want = v && st->u.stats.variants ? st->u.stats.want_b : st->u.stats.want;
    for (int i = 0; i < CTS_N_STATS; i++)
      if ((st->u.stats.mask & (1u << i)) &&
          cts__model_agrees(r, model[i] == want[i], "%s is %lld in the model as variant (%c) of "
                            "SCOPE.STAT.3 counts components%s", names[i], (long long)model[i],
                            "ab"[v], st->u.stats.variants ? "" : ": give each variant's list, "
                            "`LIST | LIST`"))
        return -1;
  }
  return cts__check_thread(r);
}

/* ---- composites ------------------------------------------------------------------- */

int cts__expect_composite(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y;
  if (expect_operands(r, st, &x, &y)) return -1;
  if (cts__model_agrees(r, r->m.res[x].composite == y, "the model says otherwise")) return -1;
  return cts__check_res(r, x);
}

int cts__expect_absent(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x, y, comp = CTS_NONE;
  if (expect_operands(r, st, &x, &y)) return -1;
  int64_t index = st->u.component.index;
  int rc = cts_model_component(&r->m, x, index, &comp);
  if (cts__model_agrees(r, rc == 0 && comp == CTS_NONE, "the component is present in the model"))
    return -1;
  tsm_handle h = TSM_NONE;
  rc = r->a->composite_component(r->s, r->res[x].h, (int)index, &h);
  if (rc || h != TSM_NONE)
    return cts__report(r, CTS_FAIL, "composite_component gave %s and handle 0x%llx, "
                       "expected an absent component", cts_err_name(rc), (unsigned long long)h);
  return 0;
}
