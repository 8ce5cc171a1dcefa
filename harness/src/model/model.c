/*
 * harness/src/model/model.c: the executable model of managers and resources (spec/managers.md,
 * spec/errors.md), scopes and their statistics (spec/scopes.md), composites (COMP.PACK,
 * COMP.LIST, COMP.UNIT) and DLPack tensors (spec/dlpack.md); graphs are model_graph.c,
 * the operations' shape, dtype and value rules opsem.c. Each function checks in the
 * order of ERR.ORDER.1 before it changes anything (ERR.ATOMIC.1), then applies the
 * clause it names.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "opsem.h"
#include "util.h"

static void ids_add(struct cts_ids *ids, int id) { CTS_PUSH(ids->v, ids->n, ids->cap, id); }

static void ids_remove(struct cts_ids *ids, int id) {
  for (size_t i = 0; i < ids->n; i++) {
    if (ids->v[i] == id) {
      memmove(&ids->v[i], &ids->v[i + 1], (ids->n - i - 1) * sizeof(int));
      ids->n--;
      return;
    }
  }
}

/* ---- what the judge observes next (struct cts_watch) ------------------------- */

static void watch(struct cts_watch *w, int id) {
  cts_grow((void **)&w->in, &w->in_cap, (size_t)id + 1, 1);
  if (w->in[id]) return;
  w->in[id] = 1;
  CTS_PUSH(w->v, w->n, w->cap, id);
}

static void touch_res(struct cts_model *m, int id) {
  m->res[id].dirty = 1;
  watch(&m->watch_res, id);
}

static void touch_mgr(struct cts_model *m, int id) {
  m->mgrs[id].dirty = 1;
  watch(&m->watch_mgrs, id);
}

static void touch_scope(struct cts_model *m, int id) {
  m->scopes[id].dirty = 1;
  watch(&m->watch_scopes, id);
}

static void touch_dl(struct cts_model *m, int id) {
  m->dls[id].dirty = 1;
  watch(&m->watch_dls, id);
}

static void watch_free(struct cts_watch *w) {
  free(w->v);
  free(w->in);
}

/* Clears the dirty flags of w's ids in table and drops those for which gone holds. */
#define CTS__SWEEP(w, table, gone)                  \
  do {                                              \
    size_t keep = 0;                                \
    for (size_t k = 0; k < (w).n; k++) {            \
      int id = (w).v[k];                            \
      (table)[id].dirty = 0;                        \
      if (gone)                                     \
        (w).in[id] = 0;                             \
      else                                          \
        (w).v[keep++] = id;                         \
    }                                               \
    (w).n = keep;                                   \
  } while (0)

void cts_model_clear_dirty(struct cts_model *m) {
  CTS__SWEEP(m->watch_dls, m->dls, m->dls[id].state == CTS_DL_GONE);
  CTS__SWEEP(m->watch_scopes, m->scopes, m->scopes[id].disposed);
  CTS__SWEEP(m->watch_mgrs, m->mgrs, m->mgrs[id].state == CTS_M_CLOSED);
  CTS__SWEEP(m->watch_res, m->res, !m->res[id].valid);
}

static int new_mgr(struct cts_model *m, int parent) {
  struct cts_mmgr g;
  memset(&g, 0, sizeof g);
  g.state = CTS_M_OPEN;
  g.parent = parent;
  CTS_PUSH(m->mgrs, m->n_mgrs, m->cap_mgrs, g);
  int id = (int)m->n_mgrs - 1;
  touch_mgr(m, id);
  if (parent != CTS_NONE) {
    ids_add(&m->mgrs[parent].children, id);
    touch_mgr(m, parent);
  }
  return id;
}

void cts_model_init(struct cts_model *m) {
  memset(m, 0, sizeof *m);
  new_mgr(m, CTS_NONE); /* MGR.ROOT.1 */
  cts_model_set_thread(m, 0);
  m->dtypes = CTS_DTYPES_ALL; /* a run sets the adapter's (exec.c) */
}

void cts_model_set_thread(struct cts_model *m, int thread) {
  while (m->n_threads <= (size_t)thread) {
    struct cts_mthread t;
    memset(&t, 0, sizeof t);
    t.current = CTS_NONE;
    CTS_PUSH(m->threads, m->n_threads, m->cap_threads, t);
  }
  m->thread = thread;
}

/* An event on the running thread, counted alike in both variants of SCOPE.STAT.3. */
static void count(struct cts_model *m, int kind, int stat) {
  struct cts_mthread *t = &m->threads[m->thread];
  t->stats[kind][stat]++;
  if (kind == TSM_KIND_TENSOR) t->stats_b[stat]++;
}

/* A component tensor's event on the running thread: the counter variant (a) of
 * SCOPE.STAT.3 moves, and the one variant (b) moves. */
static void count_component(struct cts_model *m, int stat_a, int stat_b) {
  struct cts_mthread *t = &m->threads[m->thread];
  t->stats[TSM_KIND_TENSOR][stat_a]++;
  t->stats_b[stat_b]++;
}

/* A membership event (attached or detached) on the running thread for scope sc, which
 * may be another thread's (SCOPE.STAT.4). */
static void count_membership(struct cts_model *m, int kind, int stat, int sc) {
  count(m, kind, stat);
  int opener = m->scopes[sc].thread;
  if (opener == m->thread) return;
  m->threads[m->thread].elsewhere[kind][stat - CTS_STAT_ATTACHED]++;
  m->threads[opener].lent[kind][stat - CTS_STAT_ATTACHED]++;
}

void cts_model_free(struct cts_model *m) {
  for (size_t i = 0; i < m->n_mgrs; i++) {
    free(m->mgrs[i].held.v);
    free(m->mgrs[i].children.v);
  }
  for (size_t i = 0; i < m->n_res; i++) {
    free(m->res[i].borrows);
    free(m->res[i].components.v);
  }
  for (size_t i = 0; i < m->n_st; i++) free(m->st[i].vals);
  for (size_t i = 0; i < m->n_scopes; i++) free(m->scopes[i].members.v);
  for (size_t i = 0; i < m->n_dls; i++) free(m->dls[i].vals);
  free(m->dls);
  for (size_t i = 0; i < m->n_graphs; i++) free(m->graphs[i].order.v);
  for (size_t i = 0; i < m->n_gnodes; i++) {
    free(m->gnodes[i].init);
    free(m->gnodes[i].vals);
  }
  free(m->graphs);
  free(m->gnodes);
  free(m->scopes);
  free(m->threads);
  free(m->mgrs);
  free(m->res);
  free(m->st);
  watch_free(&m->watch_res);
  watch_free(&m->watch_mgrs);
  watch_free(&m->watch_scopes);
  watch_free(&m->watch_dls);
  memset(m, 0, sizeof *m);
}


/* ---- argument checks (ERR.HANDLE.1, MGR.REL.3) ------------------------------ */

static int check_res(const struct cts_model *m, int r) {
  if (r == CTS_BOGUS || r < 0 || (size_t)r >= m->n_res) return TSM_EINVAL;
  return m->res[r].valid ? 0 : TSM_ERELEASED;
}

static int check_mgr(const struct cts_model *m, int g) {
  return (g == CTS_BOGUS || g < 0 || (size_t)g >= m->n_mgrs) ? TSM_EINVAL : 0;
}

/* A resource that can be moved or released on its own: not a component (COMP.UNIT.3). */
static int check_movable(const struct cts_model *m, int r) {
  if (r == CTS_BOGUS || r < 0 || (size_t)r >= m->n_res) return TSM_EINVAL;
  if (m->res[r].composite != CTS_NONE) return TSM_EINVAL;
  return m->res[r].valid ? 0 : TSM_ERELEASED;
}

static int check_scope(const struct cts_model *m, int sc) {
  return (sc == CTS_BOGUS || sc < 0 || (size_t)sc >= m->n_scopes) ? TSM_EINVAL : 0;
}

/* ERR.ORDER.1 across several arguments: any EINVAL before any ERELEASED. */
static int first_error(int x, int y) {
  if (x == TSM_EINVAL || y == TSM_EINVAL) return TSM_EINVAL;
  return x ? x : y;
}

static int is_open(const struct cts_model *m, int g) { return m->mgrs[g].state != CTS_M_CLOSED; }

/* ---- holder bookkeeping ---------------------------------------------------- */

static void set_holder(struct cts_model *m, int r, int g) {
  struct cts_mres *res = &m->res[r];
  if (res->holder != CTS_NONE) {
    ids_remove(&m->mgrs[res->holder].held, r);
    touch_mgr(m, res->holder);
  }
  res->holder = g;
  if (g != CTS_NONE) {
    ids_add(&m->mgrs[g].held, r);
    touch_mgr(m, g);
  }
  touch_res(m, r);
}

static void storage_unref(struct cts_model *m, int s) {
  if (--m->st[s].refs > 0) return;
  m->live_bytes -= m->st[s].bytes;
  free(m->st[s].vals); /* nobody reads a released storage; large loops must stay flat */
  m->st[s].vals = NULL;
  m->st[s].aff.on = 0;
  int dl = m->st[s].dl;
  if (dl != CTS_NONE) { /* DLP.MGR.1: the alias's release runs the deleter */
    m->dls[dl].deletes++;
    m->dls[dl].state = CTS_DL_GONE;
    touch_dl(m, dl);
  }
}

static void leave_scope(struct cts_model *m, int r) {
  int sc = m->res[r].scope;
  if (sc == CTS_NONE) return;
  ids_remove(&m->scopes[sc].members, r);
  touch_scope(m, sc);
  m->res[r].scope = CTS_NONE;
  touch_res(m, r);
}

static void join_scope(struct cts_model *m, int r, int sc) {
  leave_scope(m, r);
  if (sc == CTS_NONE) return;
  ids_add(&m->scopes[sc].members, r);
  touch_scope(m, sc);
  m->res[r].scope = sc;
  touch_res(m, r);
}

/* MGR.REL.1, SCOPE.REL.1, SCOPE.STAT.2-3: components go with their composite, counted
 * by the composite's owning scope in variant (b). */
static void release(struct cts_model *m, int r) {
  struct cts_mres *res = &m->res[r];
  for (size_t i = 0; i < res->components.n; i++) {
    int c = m->res[r].components.v[i];
    if (c == CTS_NONE) continue;
    m->res[c].valid = 0;
    touch_res(m, c);
    storage_unref(m, m->res[c].storage);
    count_component(m, CTS_STAT_DISPOSED_OUTSIDE, m->res[r].scope != CTS_NONE
                                                      ? CTS_STAT_DISPOSED_IN
                                                      : CTS_STAT_DISPOSED_OUTSIDE);
  }
  res = &m->res[r];
  count(m, res->kind, res->scope != CTS_NONE ? CTS_STAT_DISPOSED_IN : CTS_STAT_DISPOSED_OUTSIDE);
  leave_scope(m, r);
  set_holder(m, r, CTS_NONE);
  m->res[r].n_borrows = 0;
  m->res[r].valid = 0;
  if (m->res[r].storage != CTS_NONE) storage_unref(m, m->res[r].storage);
}

int cts_model_holder(const struct cts_model *m, int r) {
  int c = m->res[r].composite;
  return c != CTS_NONE ? m->res[c].holder : m->res[r].holder;
}

int cts_model_borrowed(const struct cts_model *m, int r) {
  int c = m->res[r].composite;
  return (c != CTS_NONE ? m->res[c].n_borrows : m->res[r].n_borrows) > 0;
}

uint64_t cts_model_nbytes(const struct cts_model *m, int r) {
  const struct cts_mres *res = &m->res[r];
  if (res->kind == TSM_KIND_TENSOR) return (uint64_t)cts_model_elems(res) * cts_opsem_dtype_size(res->dtype);
  uint64_t sum = 0;
  for (size_t i = 0; i < res->components.n; i++)
    if (res->components.v[i] != CTS_NONE) sum += cts_model_nbytes(m, res->components.v[i]);
  return sum;
}

/* Makes sure thread t exists, the running thread unchanged. */
static struct cts_mthread *thread_at(struct cts_model *m, int t) {
  int running = m->thread;
  cts_model_set_thread(m, t);
  m->thread = running;
  return &m->threads[t];
}

void cts_model_stats_as(struct cts_model *m, int t, int kind, int variant,
                        int64_t out[CTS_N_STATS]) {
  const struct cts_mthread *th = thread_at(m, t);
  const int64_t *s =
      kind == TSM_KIND_TENSOR && variant == CTS_VARIANT_B ? th->stats_b : th->stats[kind];
  for (int i = 0; i < CTS_STAT_LIVE; i++) out[i] = s[i];
  out[CTS_STAT_LIVE] = s[CTS_STAT_CREATED_IN] + s[CTS_STAT_CREATED_OUTSIDE] -
                       s[CTS_STAT_DISPOSED_IN] - s[CTS_STAT_DISPOSED_OUTSIDE];
}

void cts_model_stats(struct cts_model *m, int t, int kind, int64_t out[CTS_N_STATS]) {
  cts_model_stats_as(m, t, kind, CTS_VARIANT_A, out);
}

struct cts_mstat_elsewhere cts_model_stats_elsewhere(struct cts_model *m, int t, int kind,
                                                     int stat) {
  const struct cts_mthread *th = thread_at(m, t);
  struct cts_mstat_elsewhere e = {th->elsewhere[kind][stat - CTS_STAT_ATTACHED],
                                  th->lent[kind][stat - CTS_STAT_ATTACHED]};
  return e;
}

int cts_model_lender(const struct cts_model *m, int r) {
  if (m->res[r].composite != CTS_NONE) r = m->res[r].composite;
  const struct cts_mres *res = &m->res[r];
  return res->n_borrows ? res->borrows[res->n_borrows - 1].lender : CTS_NONE;
}

/* ---- managers -------------------------------------------------------------- */

int cts_model_new_sub(struct cts_model *m, int parent, int *out) {
  int rc = check_mgr(m, parent);
  if (rc) return rc;
  if (!is_open(m, parent)) return TSM_ECLOSED; /* MGR.SUB.2; a cap does not refuse (SUB.3) */
  *out = new_mgr(m, parent);                   /* MGR.SUB.1 */
  return 0;
}

int cts_model_sub_of(struct cts_model *m, int r, int *out) {
  int rc = check_res(m, r);
  if (rc) return rc;
  int holder = cts_model_holder(m, r);
  return cts_model_new_sub(m, holder == CTS_NONE ? 0 : holder, out); /* MGR.SUB.4 */
}

int cts_model_cap(struct cts_model *m, int g) {
  int rc = check_mgr(m, g);
  if (rc) return rc;
  if (!is_open(m, g)) return TSM_ECLOSED; /* MGR.CAP.4 */
  m->mgrs[g].capped = 1;                  /* MGR.CAP.3: idempotent, this manager alone */
  touch_mgr(m, g);
  return 0;
}

/* MGR.TEMP.4: the borrower gives r back to the lender of its innermost borrow. */
static void give_back(struct cts_model *m, int r) {
  struct cts_mres *res = &m->res[r];
  int lender = res->borrows[--res->n_borrows].lender;
  if (lender == CTS_NONE) {
    res->n_borrows = 0;
    set_holder(m, r, CTS_NONE);
  } else if (m->mgrs[lender].state == CTS_M_CLOSED) {
    release(m, r);
  } else {
    set_holder(m, r, lender); /* open or closing (MGR.CLOSE.4); no cap check */
  }
}

static void close_mgr(struct cts_model *m, int g) {
  struct cts_mmgr *mg = &m->mgrs[g];
  mg->state = CTS_M_CLOSING; /* MGR.CLOSE.3: refuses additions from now on */
  touch_mgr(m, g);
  while (m->mgrs[g].children.n) close_mgr(m, m->mgrs[g].children.v[0]);
  /* Owned first, then borrowed; iterate over a copy since both change the list. */
  struct cts_ids held = {0};
  for (size_t i = 0; i < m->mgrs[g].held.n; i++) ids_add(&held, m->mgrs[g].held.v[i]);
  for (size_t i = 0; i < held.n; i++)
    if (m->res[held.v[i]].n_borrows == 0) release(m, held.v[i]);
  for (size_t i = 0; i < held.n; i++) {
    int r = held.v[i];
    if (m->res[r].valid && m->res[r].holder == g) give_back(m, r);
  }
  free(held.v);
  int parent = m->mgrs[g].parent;
  if (parent != CTS_NONE) {
    ids_remove(&m->mgrs[parent].children, g);
    touch_mgr(m, parent);
  }
  m->mgrs[g].parent = CTS_NONE;
  m->mgrs[g].state = CTS_M_CLOSED;
  for (size_t i = 0; i < m->n_graphs; i++) /* GRAPH.MGR.1 */
    if (m->graphs[i].mgr == g) cts_model_graph_release(m, (int)i);
}

int cts_model_close(struct cts_model *m, int g) {
  int rc = check_mgr(m, g);
  if (rc) return rc;
  if (g == 0) return TSM_EROOT;         /* MGR.ROOT.2 */
  if (!is_open(m, g)) return 0;         /* MGR.CLOSE.2 */
  close_mgr(m, g);                      /* MGR.CLOSE.1 */
  return 0;
}

/* ---- tensors and operations ------------------------------------------------ */

int64_t cts_model_elems(const struct cts_mres *r) { return cts_opsem_elems(r->ndim, r->shape); }

const double *cts_model_storage_values(const struct cts_model *m, int s) {
  /* writing out a closed form changes no value the model holds: a cache, hence the cast */
  struct cts_mstorage *st = (struct cts_mstorage *)&m->st[s];
  if (!st->vals && st->aff.on) {
    st->vals = cts_xmalloc((st->n ? (size_t)st->n : 1) * sizeof(double));
    for (int64_t i = 0; i < st->n; i++) st->vals[i] = st->aff.first + st->aff.step * (double)i;
  }
  return st->vals;
}

const double *cts_model_values(const struct cts_model *m, int r) {
  return cts_model_storage_values(m, m->res[r].storage);
}

double cts_model_value_at(const struct cts_model *m, int r, int64_t i) {
  const struct cts_mstorage *st = &m->st[m->res[r].storage];
  if (!st->vals && st->aff.on) return st->aff.first + st->aff.step * (double)i;
  return st->vals[i];
}

int cts_model_closed_form(const struct cts_model *m, int r, struct cts_maffine *out) {
  const struct cts_mstorage *st = &m->st[m->res[r].storage];
  if (st->vals || !st->aff.on) return 0;
  *out = st->aff;
  return 1;
}

int cts_model_approx(const struct cts_model *m, int r) { return m->st[m->res[r].storage].approx; }

static int new_storage(struct cts_model *m, int dtype, int64_t n, double *vals) {
  struct cts_mstorage s = {CTS_NONE, (uint64_t)n * cts_opsem_dtype_size(dtype), 1, vals, n, 0,
                           {0, 0, 0}};
  CTS_PUSH(m->st, m->n_st, m->cap_st, s);
  m->live_bytes += s.bytes;
  return (int)m->n_st - 1;
}

/* A new resource: plain ones register with the thread's current scope (SCOPE.REG.1);
 * components never do (SCOPE.STAT.3). */
static int new_res(struct cts_model *m, int holder, int storage, const struct cts_mtype *type) {
  struct cts_mres r;
  memset(&r, 0, sizeof r);
  r.valid = 1;
  r.kind = TSM_KIND_TENSOR;
  r.composite = CTS_NONE;
  r.scope = CTS_NONE;
  r.holder = CTS_NONE;
  r.storage = storage;
  r.dtype = type->dtype;
  r.ndim = type->ndim;
  memcpy(r.shape, type->shape, (size_t)type->ndim * sizeof(int64_t));
  CTS_PUSH(m->res, m->n_res, m->cap_res, r);
  int id = (int)m->n_res - 1;
  set_holder(m, id, holder);
  return id;
}

static void register_new(struct cts_model *m, int r) {
  int cur = m->threads[m->thread].current;
  count(m, m->res[r].kind, cur != CTS_NONE ? CTS_STAT_CREATED_IN : CTS_STAT_CREATED_OUTSIDE);
  join_scope(m, r, cur);
}

/* MGR.CREATE.2, MGR.OP.4, MGR.CAP.1: may `g` take a new resource? */
static int check_addition(const struct cts_model *m, int g) {
  if (!is_open(m, g) || m->mgrs[g].state == CTS_M_CLOSING) return TSM_ECLOSED;
  if (m->mgrs[g].capped) return TSM_ECAPPED;
  return 0;
}

int cts_model_create(struct cts_model *m, int g, const struct cts_mtype *type,
                     const double *vals, int *out) {
  int dtype = type->dtype;
  int rc = check_mgr(m, g);
  if (!rc) rc = cts_opsem_check_desc(dtype, type->ndim, type->shape); /* MGR.CREATE.4 */
  if (!rc) rc = cts_opsem_check_size(dtype, type->ndim, type->shape); /* MGR.CREATE.5 */
  if (!rc) rc = check_addition(m, g);
  if (rc) return rc;
  int64_t n = cts_opsem_elems(type->ndim, type->shape);
  double *v = cts_xcalloc((size_t)n, sizeof(double));
  if (vals) cts_opsem_round_all(dtype, v, vals, n);
  *out = new_res(m, g, new_storage(m, dtype, n, v), type); /* MGR.CREATE.1 */
  register_new(m, *out);
  return 0;
}

/* The operand an opsem rule reads: tensor r's dtype, shape and elements. */
static struct cts_opsem_tensor operand(const struct cts_model *m, int r) {
  const struct cts_mres *res = &m->res[r];
  return cts_opsem_tensor(res->dtype, res->ndim, res->shape,
                          cts_model_storage_values(m, res->storage));
}

/* The closed form of add or sub of a and b into res, when both operands have one and
 * the result is exact in res's dtype (then rounding leaves every element as it is, as
 * cts_opsem_values would compute it); aff.on 0 otherwise. */
static struct cts_maffine closed_result(const struct cts_model *m, const struct cts_mop *call,
                                        const struct cts_opsem_tensor *res) {
  struct cts_maffine none = {0, 0, 0};
  if ((call->op != TSM_OP_ADD && call->op != TSM_OP_SUB) || call->b == CTS_NONE) return none;
  const struct cts_mstorage *x = &m->st[m->res[call->a].storage];
  const struct cts_mstorage *y = &m->st[m->res[call->b].storage];
  int64_t n = cts_opsem_elems(res->ndim, res->shape);
  if (x->vals || y->vals || !x->aff.on || !y->aff.on || x->n != n || y->n != n) return none;
  double sign = call->op == TSM_OP_ADD ? 1 : -1;
  struct cts_maffine z = {1, x->aff.first + sign * y->aff.first, x->aff.step + sign * y->aff.step};
  return cts_opsem_affine_exact(res->dtype, z.first, z.step, n) ? z : none;
}

/* Tensor r's dtype and shape, its elements not read. */
static struct cts_opsem_tensor shape_of(const struct cts_model *m, int r) {
  const struct cts_mres *res = &m->res[r];
  return cts_opsem_tensor(res->dtype, res->ndim, res->shape, NULL);
}

/* MGR.OP.9: a view shares its input's storage. */
static int new_view(struct cts_model *m, int target, int a, const struct cts_opsem_tensor *out) {
  int s = m->res[a].storage;
  m->st[s].refs++;
  return new_res(m, target, s, &(struct cts_mtype){m->res[a].dtype, out->ndim, out->shape});
}

/* MGR.OP.7: a computed result owns new storage holding the operation's elements. */
static int new_result(struct cts_model *m, int target, const struct cts_mop *call,
                      struct cts_opsem_tensor *in, const struct cts_opsem_tensor *res) {
  int64_t n = cts_opsem_elems(res->ndim, res->shape);
  struct cts_maffine closed = closed_result(m, call, res);
  int s;
  if (closed.on) {
    s = new_storage(m, res->dtype, n, NULL);
    m->st[s].aff = closed;
  } else {
    in[0].vals = cts_model_values(m, call->a);
    if (call->b != CTS_NONE) in[1].vals = cts_model_values(m, call->b);
    double *v = cts_opsem_values(call->op, &in[0], call->b != CTS_NONE ? &in[1] : NULL, res);
    s = new_storage(m, res->dtype, n, v);
  }
  m->st[s].approx = cts_opsem_approx(call->op, res->dtype);
  return new_res(m, target, s, &(struct cts_mtype){res->dtype, res->ndim, res->shape});
}

/* The handles first, any EINVAL before any ERELEASED (ERR.ORDER.1), then a reshape's
 * target shape. */
static int op_check_args(const struct cts_model *m, const struct cts_mop *call, int out_mgr) {
  int rc = check_res(m, call->a);
  if (call->b != CTS_NONE) rc = first_error(rc, check_res(m, call->b));
  if (out_mgr != CTS_NONE) rc = first_error(rc, check_mgr(m, out_mgr));
  if (rc) return rc;
  if (call->op == TSM_OP_RESHAPE && cts_opsem_check_desc(TSM_F32, call->ndim, call->shape))
    return TSM_EINVAL;
  return 0;
}

/* Where an operation's result goes: out_mgr when given (MGR.OP.3), else a's holder
 * (MGR.OP.1, a component's is its composite's: COMP.UNIT.3), else the root (MGR.OP.2). */
static int op_target(const struct cts_model *m, int a, int out_mgr) {
  int target = out_mgr;
  if (target == CTS_NONE) target = cts_model_holder(m, a);
  return target == CTS_NONE ? 0 : target;
}

int cts_model_op(struct cts_model *m, const struct cts_mop *call, int out_mgr, int *out) {
  int rc = op_check_args(m, call, out_mgr);
  if (rc) return rc;
  int op = call->op, unary = call->b == CTS_NONE;
  int target = op_target(m, call->a, out_mgr);
  if ((rc = check_addition(m, target))) return rc;               /* MGR.OP.4 */
  struct cts_opsem_tensor in[2], res;
  /* add and sub read no element to decide their result (new_result writes out what a
   * closed form cannot give); every other rule may (gather's indices) */
  int elementwise = op == TSM_OP_ADD || op == TSM_OP_SUB;
  in[0] = elementwise ? shape_of(m, call->a) : operand(m, call->a);
  if (!unary) in[1] = elementwise ? shape_of(m, call->b) : operand(m, call->b);
  if (!cts_opsem_offered(op, CTS_OPSEM_MANAGER)) return TSM_EINVAL;
  rc = cts_opsem_result(op, &in[0], unary ? NULL : &in[1],
                        &(struct cts_opsem_target){call->ndim, call->shape}, &res);
  if (rc) return rc;                                             /* MGR.OP.8 */
  if (op != TSM_OP_RESHAPE && (rc = cts_opsem_check_size(res.dtype, res.ndim, res.shape)))
    return rc;                                                   /* MGR.CREATE.5 */
  if (op == TSM_OP_RESHAPE)
    *out = new_view(m, target, call->a, &res);
  else
    *out = new_result(m, target, call, in, &res);
  register_new(m, *out);
  return 0;
}

/* ---- moving resources ------------------------------------------------------ */

int cts_model_attach(struct cts_model *m, int r, int g) {
  int rc = first_error(check_movable(m, r), check_mgr(m, g));
  if (rc) return rc;
  if (m->res[r].holder == g) return 0;                 /* MGR.ATTACH.3 */
  if ((rc = check_addition(m, g))) return rc;          /* MGR.ATTACH.2 */
  m->res[r].n_borrows = 0;                             /* MGR.ATTACH.4 */
  set_holder(m, r, g);                                 /* MGR.ATTACH.1 */
  return 0;
}

int cts_model_detach(struct cts_model *m, int r) {
  int rc = check_movable(m, r);
  if (rc) return rc;                                   /* MGR.DETACH.3 */
  m->res[r].n_borrows = 0;                             /* MGR.DETACH.2 */
  set_holder(m, r, CTS_NONE);                          /* MGR.DETACH.1 */
  return 0;
}

int cts_model_borrow(struct cts_model *m, int r, int g) {
  int rc = first_error(check_movable(m, r), check_mgr(m, g));
  if (rc) return rc;
  if (g == 0) return TSM_EROOT;                        /* MGR.ROOT.4 */
  if (!is_open(m, g)) return TSM_ECLOSED;              /* MGR.TEMP.3; no cap check (TEMP.2) */
  struct cts_mres *res = &m->res[r];
  if (res->holder == g) return 0;                      /* MGR.TEMP.8 */
  struct cts_borrow step = {g, res->holder};           /* MGR.TEMP.1: lender read first */
  CTS_PUSH(res->borrows, res->n_borrows, res->cap_borrows, step);
  set_holder(m, r, g);
  return 0;
}

int cts_model_ret(struct cts_model *m, int r, int g) {
  int rc = first_error(check_movable(m, r), check_mgr(m, g));
  if (rc) return rc;
  if (g == 0) return TSM_EROOT;                        /* MGR.ROOT.5 */
  if (!is_open(m, g)) return TSM_ECLOSED;              /* MGR.RET.2 */
  if (m->res[r].holder != g) return TSM_EINVAL;
  int parent = m->mgrs[g].parent;
  if ((rc = check_addition(m, parent))) return rc;     /* MGR.RET.1 */
  m->res[r].n_borrows = 0;
  set_holder(m, r, parent);
  return 0;
}

int cts_model_release(struct cts_model *m, int r) {
  int rc = check_movable(m, r);
  if (rc == TSM_ERELEASED) return 0;                   /* MGR.REL.2 */
  if (rc) return rc;
  release(m, r);                                       /* MGR.REL.1 */
  return 0;
}

/* Replaces r by x in ids, where r was (the order of a holder's or a scope's list is what
 * a dump or a dispose sees). */
static void ids_replace(struct cts_ids *ids, int r, int x) {
  for (size_t i = 0; i < ids->n; i++)
    if (ids->v[i] == r) ids->v[i] = x;
}

int cts_model_adopt(struct cts_model *m, int r, int *out) {
  int rc = check_movable(m, r); /* a component: EINVAL (COMP.UNIT.3) */
  if (rc != TSM_EINVAL && m->res[r].kind != TSM_KIND_TENSOR)
    rc = TSM_EINVAL; /* a composite, released or not: EINVAL first (ERR.ORDER.1) */
  if (rc) return rc;
  struct cts_mres moved = m->res[r]; /* holder, borrows, scope and storage go along */
  CTS_PUSH(m->res, m->n_res, m->cap_res, moved);
  int x = (int)m->n_res - 1;
  struct cts_mres *old = &m->res[r];
  if (old->holder != CTS_NONE) {
    ids_replace(&m->mgrs[old->holder].held, r, x);
    touch_mgr(m, old->holder);
  }
  if (old->scope != CTS_NONE) {
    ids_replace(&m->scopes[old->scope].members, r, x);
    touch_scope(m, old->scope);
  }
  old->valid = 0; /* no count: nothing was disposed (SCOPE.STAT.1) */
  old->holder = old->scope = CTS_NONE; /* storage kept: r reads are refused first */
  old->borrows = NULL;
  old->n_borrows = old->cap_borrows = 0;
  touch_res(m, r);
  touch_res(m, x);
  *out = x;
  return 0;
}

/* ---- scopes (spec/scopes.md) ------------------------------------------------- */

int cts_model_scope_open(struct cts_model *m, int *out) {
  struct cts_mscope sc;
  memset(&sc, 0, sizeof sc);
  sc.thread = m->thread;
  sc.outer = m->threads[m->thread].current; /* SCOPE.STACK.1 */
  CTS_PUSH(m->scopes, m->n_scopes, m->cap_scopes, sc);
  *out = (int)m->n_scopes - 1;
  touch_scope(m, *out);
  m->threads[m->thread].current = *out;
  return 0;
}

/* Scope operations check: handles, the resource, then the scope (ERR.ORDER.1). */
static int check_scope_op(const struct cts_model *m, int sc, int r) {
  int rc = check_scope(m, sc);
  if (r != CTS_NONE) rc = first_error(rc, check_movable(m, r));
  if (rc) return rc;
  return m->scopes[sc].disposed ? TSM_EDISPOSED : 0; /* SCOPE.DISP.4 */
}

/* Removes sc from its thread's chain wherever it is (SCOPE.DISP.3). */
static void unlink_scope(struct cts_model *m, int sc) {
  struct cts_mthread *t = &m->threads[m->scopes[sc].thread];
  if (t->current == sc) {
    t->current = m->scopes[sc].outer;
  } else {
    const struct cts_watch *w = &m->watch_scopes; /* every scope not disposed */
    for (size_t k = 0; k < w->n; k++) {
      int i = w->v[k];
      if (!m->scopes[i].disposed && m->scopes[i].outer == sc) {
        m->scopes[i].outer = m->scopes[sc].outer;
        touch_scope(m, i);
      }
    }
  }
  m->scopes[sc].outer = CTS_NONE;
  m->scopes[sc].disposed = 1;
  touch_scope(m, sc);
}

int cts_model_scope_dispose(struct cts_model *m, int sc) {
  int rc = check_scope(m, sc);
  if (rc) return rc;
  if (m->scopes[sc].disposed) return 0;                /* SCOPE.DISP.2 */
  while (m->scopes[sc].members.n) release(m, m->scopes[sc].members.v[0]); /* SCOPE.DISP.1 */
  unlink_scope(m, sc);
  return 0;
}

/* Moves member r of sc to `to` (CTS_NONE: no scope), counting a detach when it leaves
 * scopes (SCOPE.STAT.2). A non-member is left alone (SCOPE.MOVE.3). */
static void move_member(struct cts_model *m, int sc, int r, int to) {
  if (m->res[r].scope != sc || to == sc) return;
  if (to == CTS_NONE) count_membership(m, m->res[r].kind, CTS_STAT_DETACHED, sc);
  join_scope(m, r, to);
}

int cts_model_scope_move_outer(struct cts_model *m, int sc, int r) {
  int rc = check_scope_op(m, sc, r);
  if (rc) return rc;
  move_member(m, sc, r, m->scopes[sc].outer);          /* SCOPE.MOVE.1 */
  return 0;
}

int cts_model_scope_move_other(struct cts_model *m, int sc, int r, int other) {
  int rc = check_scope_op(m, sc, r);
  if (other != CTS_NONE) rc = first_error(rc, check_scope(m, other));
  if (rc) return rc;
  if (other != CTS_NONE && m->scopes[other].disposed) return TSM_EDISPOSED; /* SCOPE.MOVE.4 */
  move_member(m, sc, r, other);                        /* SCOPE.MOVE.2 */
  return 0;
}

int cts_model_scope_detach(struct cts_model *m, int sc, int r) {
  int rc = check_scope_op(m, sc, r);
  if (rc) return rc;
  move_member(m, sc, r, CTS_NONE);                     /* SCOPE.DETACH.1 */
  return 0;
}

int cts_model_scope_attach(struct cts_model *m, int sc, int r) {
  int rc = check_scope_op(m, sc, r);
  if (rc) return rc;
  if (m->res[r].scope == sc) return 0;                 /* SCOPE.ATTACH.1 */
  count_membership(m, m->res[r].kind, CTS_STAT_ATTACHED, sc);
  join_scope(m, r, sc);
  return 0;
}

int cts_model_scope_dispose_all(struct cts_model *m, int sc, const int *keep, size_t n_keep) {
  int rc = check_scope(m, sc);
  for (size_t i = 0; i < n_keep; i++)
    if (keep[i] == CTS_BOGUS) rc = TSM_EINVAL;
  if (rc) return rc;
  if (m->scopes[sc].disposed) return TSM_EDISPOSED;
  struct cts_ids doomed = {0};
  for (size_t i = 0; i < m->scopes[sc].members.n; i++) {
    int r = m->scopes[sc].members.v[i], kept = 0;
    for (size_t k = 0; k < n_keep; k++) kept |= keep[k] == r; /* SCOPE.ALL.2 */
    if (!kept) ids_add(&doomed, r);
  }
  for (size_t i = 0; i < doomed.n; i++) release(m, doomed.v[i]);
  free(doomed.v);
  return 0;
}

int cts_model_scope_handover(struct cts_model *m, int sc) {
  int rc = check_scope(m, sc);
  if (rc) return rc;
  if (m->scopes[sc].disposed) return TSM_EDISPOSED;
  while (m->scopes[sc].members.n) move_member(m, sc, m->scopes[sc].members.v[0], CTS_NONE);
  unlink_scope(m, sc);                                 /* SCOPE.HAND.1 */
  return 0;
}

/* ---- composites ------------------------------------------------------------ */

static int new_composite(struct cts_model *m, int holder) {
  int64_t none[1] = {0};
  int id = new_res(m, holder, CTS_NONE, &(struct cts_mtype){TSM_F32, 0, none});
  m->res[id].kind = TSM_KIND_COMPOSITE;
  return id;
}

/* A new component tensor of composite c, a member of no scope (SCOPE.STAT.3: created
 * outside in variant (a); in variant (b) created in the current scope and detached). */
static int new_component(struct cts_model *m, int c, int dtype, int64_t n, double *vals) {
  int64_t shape[1] = {n};
  int s = new_storage(m, dtype, n, vals);
  int id = new_res(m, CTS_NONE, s, &(struct cts_mtype){dtype, 1, shape});
  m->res[id].composite = c;
  int scoped = m->threads[m->thread].current != CTS_NONE;
  count_component(m, CTS_STAT_CREATED_OUTSIDE,
                  scoped ? CTS_STAT_CREATED_IN : CTS_STAT_CREATED_OUTSIDE);
  if (scoped) m->threads[m->thread].stats_b[CTS_STAT_DETACHED]++;
  ids_add(&m->res[c].components, id);
  return id;
}

/* COMP.PACK.2-3: handles, the target's additions, then 1-d f32 sequences. */
static int pack_check(const struct cts_model *m, const int *seqs, size_t n, int *target) {
  int rc = n ? 0 : TSM_EINVAL;
  for (size_t i = 0; i < n; i++) {
    rc = first_error(rc, check_res(m, seqs[i]));
    if (seqs[i] != CTS_BOGUS && m->res[seqs[i]].kind != TSM_KIND_TENSOR) rc = TSM_EINVAL;
  }
  if (rc) return rc;
  *target = cts_model_holder(m, seqs[0]);
  if (*target == CTS_NONE) *target = 0;
  if ((rc = check_addition(m, *target))) return rc;
  for (size_t i = 0; i < n; i++)
    if (m->res[seqs[i]].ndim != 1) return TSM_ESHAPE;
  for (size_t i = 0; i < n; i++)
    if (m->res[seqs[i]].dtype != TSM_F32) return TSM_EDTYPE;
  return 0;
}

/* A pack in progress: its n sequences, whether they are promised sorted, and (from
 * pack_order) their lengths and the packing order, n entries each, owned. */
struct packing {
  const int *seqs;
  size_t n;
  int sorted;
  int64_t *len, *order;
};

/* The sequences' lengths and the packing order (COMP.PACK.1: by decreasing length, ties
 * by increasing index). EINVAL for an empty sequence or, when `sorted` is promised, an
 * increasing length; else 0 with p's len and order malloc'ed for the caller. */
static int pack_order(const struct cts_model *m, struct packing *p) {
  size_t n = p->n;
  int64_t *len = cts_xmalloc(n * sizeof(int64_t)), longest = 0;
  for (size_t i = 0; i < n; i++) {
    len[i] = m->res[p->seqs[i]].shape[0];
    if (len[i] > longest) longest = len[i];
    if (len[i] < 1 || (p->sorted && i && len[i] > len[i - 1])) {
      free(len);
      return TSM_EINVAL;
    }
  }
  int64_t *order = cts_xmalloc(n * sizeof(int64_t));
  size_t k = 0;
  for (int64_t l = longest; l >= 1; l--)
    for (size_t i = 0; i < n; i++)
      if (len[i] == l) order[k++] = (int64_t)i;
  p->len = len;
  p->order = order;
  return 0;
}

/* The data component (time-major) and the batch sizes per step. */
static void pack_data(struct cts_model *m, int c, const struct packing *p) {
  const int64_t *len = p->len, *order = p->order;
  int64_t total = 0, longest = len[order[0]];
  for (size_t i = 0; i < p->n; i++) total += len[i];
  double *data = cts_xcalloc((size_t)total, sizeof(double));
  double *batch = cts_xcalloc((size_t)longest, sizeof(double));
  int64_t at = 0;
  for (int64_t t = 0; t < longest; t++) {
    for (size_t j = 0; j < p->n; j++) {
      int64_t i = order[j];
      if (len[i] <= t) continue;
      data[at++] = cts_model_values(m, p->seqs[i])[t];
      batch[t] += 1;
    }
  }
  new_component(m, c, TSM_F32, total, data);
  new_component(m, c, TSM_I32, longest, batch);
}

/* The sorted and unsorted indices; absent when the input was already sorted. */
static void pack_indices(struct cts_model *m, int c, const struct packing *p) {
  size_t n = p->n;
  const int64_t *order = p->order;
  if (p->sorted) {
    ids_add(&m->res[c].components, CTS_NONE);
    ids_add(&m->res[c].components, CTS_NONE);
    return;
  }
  double *sorted_idx = cts_xcalloc(n, sizeof(double));
  double *unsorted_idx = cts_xcalloc(n, sizeof(double));
  for (size_t j = 0; j < n; j++) {
    sorted_idx[j] = (double)order[j];
    unsorted_idx[order[j]] = (double)j;
  }
  new_component(m, c, TSM_I32, (int64_t)n, sorted_idx);
  new_component(m, c, TSM_I32, (int64_t)n, unsorted_idx);
}

int cts_model_pack(struct cts_model *m, const int *seqs, size_t n, int sorted, int *out) {
  int target = 0;
  struct packing p = {seqs, n, sorted, NULL, NULL};
  int rc = pack_check(m, seqs, n, &target);
  if (!rc) rc = pack_order(m, &p);
  if (rc) return rc;
  int c = new_composite(m, target);
  pack_data(m, c, &p);
  pack_indices(m, c, &p);
  free(p.order);
  free(p.len);
  register_new(m, c);
  *out = c;
  return 0;
}

/* COMP.LIST.1's handles: at least one item, each a tensor that is no component. */
static int list_check_items(const struct cts_model *m, const int *items, size_t n) {
  int rc = n ? 0 : TSM_EINVAL;
  for (size_t i = 0; i < n; i++) {
    int r = items[i];
    if (r == CTS_BOGUS || m->res[r].kind != TSM_KIND_TENSOR || m->res[r].composite != CTS_NONE)
      rc = TSM_EINVAL;
  }
  return rc;
}

/* COMP.LIST.1: among the live items, distinct, one holder (*holder), none borrowed. */
static int list_holder(const struct cts_model *m, const int *items, size_t n, int *holder) {
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    int r = items[i];
    if (!m->res[r].valid) continue;
    for (size_t k = 0; k < i; k++)
      if (items[k] == r) return TSM_EINVAL;
    if (m->res[r].n_borrows || (!first && m->res[r].holder != *holder)) return TSM_EINVAL;
    *holder = m->res[r].holder;
    first = 0;
  }
  return 0;
}

/* Tensor r becomes the next component of composite c: out of its scope (a detach,
 * SCOPE.STAT.2) and its holder (COMP.UNIT.1). */
static void make_component(struct cts_model *m, int r, int c) {
  if (m->res[r].scope != CTS_NONE)
    count_membership(m, TSM_KIND_TENSOR, CTS_STAT_DETACHED, m->res[r].scope);
  leave_scope(m, r);
  set_holder(m, r, CTS_NONE);
  m->res[r].composite = c;
  ids_add(&m->res[c].components, r);
}

int cts_model_list(struct cts_model *m, const int *items, size_t n, int *out) {
  int holder = CTS_NONE;
  int rc = list_check_items(m, items, n);
  if (!rc) rc = list_holder(m, items, n, &holder);
  for (size_t i = 0; !rc && i < n; i++) rc = check_res(m, items[i]); /* then ERELEASED */
  if (!rc && holder != CTS_NONE) rc = check_addition(m, holder);
  if (rc) return rc;
  int c = new_composite(m, holder);
  for (size_t i = 0; i < n; i++) make_component(m, items[i], c);
  register_new(m, c);
  *out = c;
  return 0;
}

int cts_model_component(const struct cts_model *m, int c, int64_t index, int *out) {
  if (c == CTS_BOGUS || m->res[c].kind != TSM_KIND_COMPOSITE) return TSM_EINVAL;
  if (!m->res[c].valid) return TSM_ERELEASED;
  if (index < 0 || (size_t)index >= m->res[c].components.n) return TSM_EINVAL;
  *out = m->res[c].components.v[index];
  return 0;
}

/* ---- DLPack (spec/dlpack.md) ------------------------------------------------- */

static int new_dl(struct cts_model *m, int judge_made, int form) {
  struct cts_mdl d;
  memset(&d, 0, sizeof d);
  d.judge_made = judge_made;
  d.form = form;
  d.state = CTS_DL_JUDGE;
  d.storage = CTS_NONE;
  CTS_PUSH(m->dls, m->n_dls, m->cap_dls, d);
  touch_dl(m, (int)m->n_dls - 1);
  return (int)m->n_dls - 1;
}

int cts_model_dl_make(struct cts_model *m, const struct cts_mdl_desc *desc, double *vals,
                      int *out) {
  *out = new_dl(m, 1, desc->form);
  m->dls[*out].desc = *desc;
  m->dls[*out].vals = vals;
  return 0;
}

int cts_model_dl_make_affine(struct cts_model *m, const struct cts_mdl_desc *desc,
                             struct cts_maffine aff, int *out) {
  cts_model_dl_make(m, desc, NULL, out);
  m->dls[*out].aff = aff;
  return 0;
}

int cts_model_dl_export(struct cts_model *m, int r, int form, uint32_t request, int *out) {
  if (r == CTS_BOGUS) return TSM_EINVAL;
  if (form == TSM_DLPACK_LEGACY && request) return TSM_EINVAL;    /* DLP.EXPORT.5 */
  if (m->res[r].kind != TSM_KIND_TENSOR) return TSM_EINVAL;
  if (!m->res[r].valid) return TSM_ERELEASED;
  int s = m->res[r].storage;
  if (request & TSM_DLPACK_COPY) {                                 /* DLP.EXPORT.5 */
    double *v = cts_xcalloc(m->st[s].n ? (size_t)m->st[s].n : 1, sizeof(double));
    memcpy(v, cts_model_storage_values(m, s), (size_t)m->st[s].n * sizeof(double));
    s = new_storage(m, m->res[r].dtype, m->st[s].n, v);
  } else {
    m->st[s].refs++;                                               /* DLP.EXPORT.3-4 */
  }
  *out = new_dl(m, 0, form);
  m->dls[*out].storage = s;
  m->dls[*out].desc.dtype = m->res[r].dtype; /* what a re-import gives (DLP.EXPORT.1) */
  m->dls[*out].desc.ndim = m->res[r].ndim;
  memcpy(m->dls[*out].desc.shape, m->res[r].shape, sizeof m->res[r].shape);
  return 0;
}

int cts_model_dl_compact(const struct cts_mdl_desc *d) {
  if (d->no_strides || d->n_strides == 0 || cts_opsem_elems(d->ndim, d->shape) == 0)
    return 1; /* no element to place: compact whatever the strides (dlpack.md, Terms) */
  int64_t expect = 1;
  for (int i = d->ndim - 1; i >= 0; i--) {
    if (d->shape[i] != 1 && d->strides[i] != expect) return 0;
    expect *= d->shape[i];
  }
  return 1;
}

/* The deleter has run, as a consumer's refusal or copy requires (DLP.IMPORT.2). */
static void dl_consumed_now(struct cts_model *m, int x) {
  struct cts_mdl *d = &m->dls[x];
  free(d->vals);
  d->vals = NULL;
  d->aff.on = 0;
  if (d->judge_made)
    d->deletes++;
  else
    storage_unref(m, d->storage);
  d->state = CTS_DL_GONE;
  touch_dl(m, (int)(d - m->dls));
}

/* The tensor's own form: its version (DLP.IMPORT.1), then its shape, data and strides
 * (DLP.IMPORT.9, DLP.IMPORT.4). */
static int dl_form_check(const struct cts_mdl_desc *k) {
  if (k->form == TSM_DLPACK_VERSIONED && k->major != 1) return TSM_EVERSION; /* DLP.IMPORT.1 */
  if (k->ndim > TSM_MAX_DIMS) return TSM_EDLPACK;                       /* DLP.IMPORT.9 */
  for (int i = 0; i < k->ndim; i++)
    if (k->shape[i] < 0) return TSM_EDLPACK;
  if (k->null_data && cts_opsem_elems(k->ndim, k->shape) > 0) return TSM_EDLPACK;
  if (k->form == TSM_DLPACK_VERSIONED && k->minor >= 2 && k->no_strides && k->ndim > 0)
    return TSM_EDLPACK;                                           /* DLP.IMPORT.4 */
  return 0;
}

static int dl_import_check(const struct cts_model *m, const struct cts_mdl *d) {
  if (!d->judge_made) return 0; /* an export of this session is well formed */
  const struct cts_mdl_desc *k = &d->desc;
  int rc = dl_form_check(k);
  if (rc) return rc;
  int host = k->device_type == 3 || k->device_type == 13;
  if (!(host || (k->device_type == 1 && !m->cuda_session))) return TSM_EDEVICE; /* .7 */
  int dtype = cts_opsem_dtype_of_dl(k->code, k->bits, k->lanes);
  if (!dtype || !(m->dtypes >> dtype & 1)) return TSM_EDTYPE;   /* IMPORT.6 */
  return 0;
}

int cts_model_dl_import(struct cts_model *m, int x, int g, int *out) {
  int rc = check_mgr(m, g);
  if (!rc) rc = check_addition(m, g);
  struct cts_mdl *d = &m->dls[x];
  if (!rc) rc = dl_import_check(m, d);
  if (rc) {
    dl_consumed_now(m, x);
    return rc;
  }
  d->state = CTS_DL_HANDED;
  touch_dl(m, (int)(d - m->dls));
  if (!d->judge_made) { /* DLP.MGR.3: the export's storage, counted once */
    const struct cts_mdl_desc *e = &d->desc; /* the exported tensor's */
    *out = new_res(m, g, d->storage, &(struct cts_mtype){e->dtype, e->ndim, e->shape});
    d->state = CTS_DL_GONE;
    register_new(m, *out);
    return 0;
  }
  const struct cts_mdl_desc *k = &d->desc;
  int64_t n = cts_opsem_elems(k->ndim, k->shape);
  double *v = d->vals; /* the storage takes the values over, read as the dtype */
  d->vals = NULL;
  if (v) cts_opsem_round_all(k->dtype, v, v, n);
  int s = new_storage(m, k->dtype, n, v);
  m->st[s].aff = d->aff; /* exact in the dtype: rounding keeps it (cts_model_dl_make_affine) */
  d->aff.on = 0;
  if (cts_model_dl_compact(k) && !m->cuda_session) { /* DLP.MGR.3: alias */
    m->live_bytes -= m->st[s].bytes;
    m->st[s].bytes = 0;
    m->st[s].dl = x;
  } else {
    dl_consumed_now(m, x);
  }
  *out = new_res(m, g, s, &(struct cts_mtype){k->dtype, k->ndim, k->shape});
  register_new(m, *out);
  return 0;
}

void cts_model_dl_drop(struct cts_model *m, int x) { dl_consumed_now(m, x); }
