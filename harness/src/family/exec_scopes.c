/*
 * harness/src/family/exec_scopes.c: the scopes-and-composites family (spec/scopes.md,
 * spec/composites.md) on the executor side: the wrapped block (SCOPE.WRAP.1), what the
 * judge observes of scopes (each scope's state, the running thread's current scope and
 * statistics, SCOPE.STAT.2, in either variant of SCOPE.STAT.3, which a passing case's
 * message names) and of a resource's links (its owning scope and composite), what pack,
 * list and component made bound and checked, and the family's hooks. Its
 * generic actions are rows in exec_managers.c, its expectations in exec_expect.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "exec_scopes.h"

/* A wrapped block in progress (SCOPE.WRAP.1). */
struct cts_wrap {
  const struct cts_stmt *st;
  struct cts_wrap *outer;
  struct cts_run *r;
  int entered;     /* the adapter called the function */
  int scope;       /* the model's scope for the block */
  int result;      /* model id of `result X` */
};

/* The scopes family's state, owned by the run through its family slot: each scope's
 * handle (the map's array is the state's), the innermost wrapped block running (or
 * NULL, borrowed from the running executor), and what the case lets the judge observe. */
struct scopes_state {
  struct cts_objmap scope; /* each model scope's handle */
  struct cts_wrap *wrap;
  int scopes; /* scope_info, scope_current and thread_stats exist */
  int links;  /* res_links exists */
  /* SCOPE.STAT.3 (MAY): the variant (enum cts_stat_variant) the session took at line
   * variant_line, the first statement after which the variants' tensor counters differed
   * and the adapter's were one's; CTS_NONE until then. Afterwards only it is accepted. */
  int variant, variant_line;
};

static struct scopes_state *scopes_of(struct cts_run *r) { return r->family[CTS_FAMILY_SCOPES]; }

static struct cts_objinfo *scope_info(struct cts_run *r, int sc) {
  return &scopes_of(r)->scope.v[sc];
}

static tsm_handle scope_h(struct cts_run *r, int sc) {
  return sc == CTS_BOGUS ? CTS_BOGUS_HANDLE : sc == CTS_NONE ? TSM_NONE : scope_info(r, sc)->h;
}

/* ---- observation ----------------------------------------------------------------- */

char *cts__describe_scope(struct cts_run *r, int sc, char *buf, size_t n) {
  if (sc == CTS_NONE)
    snprintf(buf, n, "none");
  else if (scope_info(r, sc)->sym < 0)
    snprintf(buf, n, "the wrapped scope of line %d", scope_info(r, sc)->line);
  else
    snprintf(buf, n, "%s (scope opened at line %d)", cts__sym_name(r, scope_info(r, sc)->sym),
             scope_info(r, sc)->line);
  return buf;
}

/* The family's part of a resource's observation: its owning scope and composite
 * (res_links), when the case uses scopes or composites. */
static int check_links(struct cts_run *r, int id, const char *name) {
  if (!scopes_of(r)->links) return 0;
  struct tsm_res_links links;
  memset(&links, 0, sizeof links);
  char want[160], got[160];
  int rc = r->a->res_links(r->s, r->res[id].h, &links);
  if (rc) return cts__report(r, CTS_FAIL, "res_links(%s) failed with %s", name, cts_err_name(rc));
  const struct cts_mres *mr = &r->m.res[id];
  if (!mr->valid) {
    if (links.scope != TSM_NONE)
      return cts__report(r, CTS_FAIL, "%s: released, but still reports scope %s", name,
                         cts__describe_handle(r, links.scope, got, sizeof got));
    return 0;
  }
  if (links.kind != mr->kind)
    return cts__report(r, CTS_FAIL, "%s: kind expected %d, observed %d", name, mr->kind,
                       links.kind);
  if (links.scope != scope_h(r, mr->scope))
    return cts__report(r, CTS_FAIL, "%s: owning scope expected %s, observed %s", name,
                       cts__describe_scope(r, mr->scope, want, sizeof want),
                       cts__describe_handle(r, links.scope, got, sizeof got));
  if (links.composite != cts__res_handle(r, mr->composite))
    return cts__report(r, CTS_FAIL, "%s: composite expected %s, observed %s", name,
                       mr->composite == CTS_NONE ? "none"
                                                 : cts__res_name(r, mr->composite, want, sizeof want),
                       cts__describe_handle(r, links.composite, got, sizeof got));
  return 0;
}

int cts__check_scope(struct cts_run *r, int sc) {
  struct tsm_scope_info info;
  memset(&info, 0, sizeof info);
  char name[160], want[160], got[160];
  cts__describe_scope(r, sc, name, sizeof name);
  int rc = r->a->scope_info(r->s, scope_info(r, sc)->h, &info);
  if (rc) return cts__report(r, CTS_FAIL, "scope_info(%s) failed with %s", name, cts_err_name(rc));
  const struct cts_mscope *ms = &r->m.scopes[sc];
  if (!!info.disposed != ms->disposed)
    return cts__report(r, CTS_FAIL, "scope %s: expected %s, observed %s", name,
                       ms->disposed ? "disposed" : "open", ms->disposed ? "open" : "disposed");
  if (info.outer != scope_h(r, ms->outer))
    return cts__report(r, CTS_FAIL, "scope %s: outer scope expected %s, observed %s", name,
                       cts__describe_scope(r, ms->outer, want, sizeof want),
                       cts__describe_handle(r, info.outer, got, sizeof got));
  if (info.members != ms->members.n)
    return cts__report(r, CTS_FAIL, "scope %s: member count expected %zu, observed %llu", name,
                       ms->members.n, (unsigned long long)info.members);
  return 0;
}

static const char *const stat_names[CTS_N_STATS] = {
    "created_in_scope", "created_outside", "disposed_in_scope", "disposed_outside",
    "attached",         "detached",        "live"};

/* One bucket of a thread's statistics as the check after a statement sees it: thread t's
 * counters for a kind, the adapter's (seen) and the model's as each variant of
 * SCOPE.STAT.3 counts them (want[v]). */
struct stats_bucket {
  int t, kind;
  const int64_t *seen;
  int64_t (*want)[CTS_N_STATS];
};

static const char *kind_name(int kind) { return kind == TSM_KIND_TENSOR ? "tensor" : "composite"; }

/* Counter i, on which both variants of SCOPE.STAT.3 agree, is off: the clause that counts
 * it. A membership counter the adapter has as if the events of scopes opened on other
 * threads counted on the opener (SCOPE.STAT.4, a rule of the suite) names that clause. */
static int report_counter(struct cts_run *r, const struct stats_bucket *b, int i) {
  int64_t want = b->want[CTS_VARIANT_A][i], seen = b->seen[i];
  const char *clause = "SCOPE.STAT.2";
  if (i == CTS_STAT_ATTACHED || i == CTS_STAT_DETACHED) {
    struct cts_mstat_elsewhere e = cts_model_stats_elsewhere(&r->m, b->t, b->kind, i);
    if ((e.here || e.lent) && seen >= want - e.here && seen <= want + e.lent)
      clause = "SCOPE.STAT.4: the suite counts a membership event on the thread that "
               "performs it, whichever thread opened the scope";
  }
  return cts__report(r, CTS_FAIL, "thread %s, %s statistics: %s expected %lld, observed %lld "
                     "(%s)", r->c->threads[b->t], kind_name(b->kind),
                     stat_names[i], (long long)want, (long long)seen, clause);
}

/* 1 when the adapter's counters are one variant's: the session's once it took one, else
 * either, and the first statement where the variants differ and the adapter's are one's
 * fixes the session's variant. */
static int bucket_matches(struct cts_run *r, const struct stats_bucket *b) {
  struct scopes_state *ss = scopes_of(r);
  size_t size = CTS_N_STATS * sizeof(int64_t);
  int v = ss->variant;
  if (v != CTS_NONE) return !memcmp(b->seen, b->want[v], size);
  int differ = memcmp(b->want[CTS_VARIANT_A], b->want[CTS_VARIANT_B], size) != 0;
  for (int k = 0; k < CTS_N_VARIANTS; k++) {
    if (memcmp(b->seen, b->want[k], size)) continue;
    if (differ) {
      ss->variant = k;
      ss->variant_line = r->cur ? r->cur->line : 0;
    }
    return 1;
  }
  return 0;
}

/* Counter i is off: as the session's variant v counts it, or (v CTS_NONE) as both do. */
static int report_variant_counter(struct cts_run *r, const struct stats_bucket *b, int i, int v) {
  int64_t a = b->want[CTS_VARIANT_A][i], bb = b->want[CTS_VARIANT_B][i], seen = b->seen[i];
  const char *thread = r->c->threads[b->t], *kname = kind_name(b->kind);
  if (v != CTS_NONE)
    return cts__report(r, CTS_FAIL, "thread %s, %s statistics: %s expected %lld as variant "
                       "(%c), which this session's counters showed at line %d, observed %lld "
                       "(SCOPE.STAT.3: an implementation counts its components one way)",
                       thread, kname, stat_names[i], (long long)b->want[v][i], "ab"[v],
                       scopes_of(r)->variant_line, (long long)seen);
  return cts__report(r, CTS_FAIL, "thread %s, %s statistics: %s expected %lld (variant (a)) "
                     "or %lld (variant (b)), observed %lld (SCOPE.STAT.3)", thread, kname,
                     stat_names[i], (long long)a, (long long)bb, (long long)seen);
}

/* Each counter is one variant's, but not all are the same variant's: the first that
 * only (a) explains and the first that only (b) does. */
static int report_mixed_variants(struct cts_run *r, const struct stats_bucket *b) {
  int ia = -1, ib = -1;
  const int64_t *seen = b->seen;
  for (int i = 0; i < CTS_N_STATS; i++) {
    if (seen[i] != b->want[CTS_VARIANT_A][i]) ib = ib < 0 ? i : ib;
    if (seen[i] != b->want[CTS_VARIANT_B][i]) ia = ia < 0 ? i : ia;
  }
  return cts__report(r, CTS_FAIL, "thread %s, %s statistics: %s is %lld as variant (a) counts "
                     "components but %s is %lld as variant (b) does, so they match neither "
                     "(SCOPE.STAT.3: an implementation counts its components one way)",
                     r->c->threads[b->t], kind_name(b->kind), stat_names[ia], (long long)seen[ia],
                     stat_names[ib], (long long)seen[ib]);
}

/* Compares one bucket of thread t's statistics with the model's counters: the adapter's
 * must be one variant's of SCOPE.STAT.3 (bucket_matches). Else the first counter that
 * is off names the clause it breaks. */
static int check_stats(struct cts_run *r, const struct stats_bucket *b) {
  if (bucket_matches(r, b)) return 0;
  int v = scopes_of(r)->variant;
  for (int i = 0; i < CTS_N_STATS; i++) {
    int64_t a = b->want[CTS_VARIANT_A][i], bb = b->want[CTS_VARIANT_B][i], seen = b->seen[i];
    if (v != CTS_NONE ? seen == b->want[v][i] : seen == a || seen == bb) continue;
    if (a == bb) return report_counter(r, b, i);
    return report_variant_counter(r, b, i, v);
  }
  return report_mixed_variants(r, b);
}

int cts__check_thread(struct cts_run *r) {
  if (!scopes_of(r)->scopes) return 0;
  char want[160], got[160];
  tsm_handle cur = TSM_NONE;
  int rc = r->a->scope_current(r->s, &cur);
  int t = r->m.thread;
  if (rc) return cts__report(r, CTS_FAIL, "scope_current failed with %s", cts_err_name(rc));
  if (cur != scope_h(r, r->m.threads[t].current))
    return cts__report(r, CTS_FAIL, "thread %s: current scope expected %s, observed %s",
                       r->c->threads[t], cts__describe_scope(r, r->m.threads[t].current, want, sizeof want),
                       cts__describe_handle(r, cur, got, sizeof got));
  for (int kind = 0; kind < 2; kind++) {
    struct tsm_scope_stats st;
    memset(&st, 0, sizeof st);
    if ((rc = r->a->thread_stats(r->s, kind, &st)))
      return cts__report(r, CTS_FAIL, "thread_stats failed with %s", cts_err_name(rc));
    int64_t seen[CTS_N_STATS] = {(int64_t)st.created_in_scope, (int64_t)st.created_outside,
                                 (int64_t)st.disposed_in_scope, (int64_t)st.disposed_outside,
                                 (int64_t)st.attached, (int64_t)st.detached, st.live};
    int64_t want[CTS_N_VARIANTS][CTS_N_STATS];
    for (int v = 0; v < CTS_N_VARIANTS; v++) cts_model_stats_as(&r->m, t, kind, v, want[v]);
    struct stats_bucket bucket = {t, kind, seen, want};
    if (check_stats(r, &bucket)) return -1;
  }
  return 0;
}

/* ---- wrapped blocks -------------------------------------------------------- */

static int wrapped_body(void *arg, tsm_handle *result) {
  struct cts_wrap *w = arg;
  struct cts_run *r = w->r;
  w->entered = 1;
  cts_model_scope_open(&r->m, &w->scope);
  tsm_handle h = TSM_NONE;
  int rc = r->a->scope_current(r->s, &h);
  if (rc || h == TSM_NONE || cts__handle_in_use(r, h)) {
    cts__report(r, CTS_FAIL, "inside scope_wrapped, scope_current gave %s and handle 0x%llx: "
                "no fresh scope is current (SCOPE.WRAP.1)", cts_err_name(rc), (unsigned long long)h);
    return TSM_EINVAL;
  }
  cts__remember_at(r, (struct cts_obj_slot){&scopes_of(r)->scope.v, &scopes_of(r)->scope.cap,
                                            (size_t)w->scope},
                   (struct cts_objinfo){h, -1, w->st->line});
  if (cts__check_state(r) || cts__exec_block(r, &w->st->body)) return TSM_EINVAL;
  *result = cts__res_handle(r, w->result);
  return 0;
}

int cts__exec_wrapped(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  struct scopes_state *ss = scopes_of(r);
  struct cts_wrap w = {st, ss->wrap, r, 0, 0, CTS_NONE};
  ss->wrap = &w;
  tsm_handle out = TSM_NONE;
  int rc = r->a->scope_wrapped(r->s, wrapped_body, &w, &out);
  ss->wrap = w.outer;
  r->cur = st;
  if (r->status != CTS_PASS) return -1;
  if (!w.entered && rc == TSM_ENOTSUP)
    return cts__report(r, CTS_NOTSUPPORTED, "the adapter does not offer wrapped (scope_wrapped "
                       "returned ENOTSUP)");
  if (!w.entered)
    return cts__report(r, CTS_FAIL, "scope_wrapped returned %s without calling the function",
                       cts_err_name(rc));
  /* Moving the result out is a scope operation on it: a released result fails with
   * ERELEASED (SCOPE.REL.2), a component with EINVAL (COMP.UNIT.3), after the dispose.
   * The language has no `expect error` for a block, so the code itself is the check:
   * the adapter must give the model's, and a refused call binds nothing. No result
   * (`result none`, or in the fuzzer's runs a result whose binding was refused): nothing
   * moves, and R stays unbound. */
  int model_rc =
      w.result == CTS_NONE ? 0 : cts_model_scope_move_outer(&r->m, w.scope, w.result);
  cts_model_scope_dispose(&r->m, w.scope);
  if (rc != model_rc)
    return cts__report(r, CTS_FAIL, "scope_wrapped returned %s, the spec requires %s "
                       "(SCOPE.WRAP.1; moving a released result out fails with ERELEASED, "
                       "SCOPE.REL.2, a component with EINVAL, COMP.UNIT.3)",
                       cts_err_name(rc), cts_err_name(model_rc));
  if (rc) return cts__check_state(r);
  if (out != cts__res_handle(r, w.result))
    return cts__report(r, CTS_FAIL, "scope_wrapped gave 0x%llx, not the block's result",
                       (unsigned long long)out);
  r->sym_obj[st->dst] = w.result;
  return cts__check_state(r);
}

int cts__exec_result(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  return cts__operand(r, st->a, &scopes_of(r)->wrap->result);
}

/* What the judge observes follows what the case uses: res_links exists with scopes or
 * composites, scope_info and the thread's statistics with scopes. */
static void *scopes_new(struct cts_run *r) {
  struct scopes_state *ss = cts_xcalloc(1, sizeof *ss);
  ss->scopes = (r->c->families & TSM_CAP_SCOPES) != 0;
  ss->links = (r->c->families & (TSM_CAP_SCOPES | TSM_CAP_COMPOSITES)) != 0;
  ss->variant = CTS_NONE;
  return ss;
}

/* A case that passed says which variant of a MAY clause its session showed. */
static void scopes_before_close(struct cts_run *r) {
  const struct scopes_state *ss = scopes_of(r);
  if (r->status != CTS_PASS || ss->variant == CTS_NONE) return;
  cts_buf_printf(r->msg, "%sSCOPE.STAT.3 (MAY): variant (%c) observed",
                 r->msg->buf && r->msg->buf[0] ? "\n" : "", "ab"[ss->variant]);
}

/* After every step: open or just-disposed scopes, and the running thread's current scope
 * and statistics. */
static int observe_scopes(struct cts_run *r) {
  if (!scopes_of(r)->scopes) return 0;
  const struct cts_watch *w = &r->m.watch_scopes;
  for (size_t k = 0; k < w->n; k++)
    if (!r->m.scopes[w->v[k]].disposed || r->m.scopes[w->v[k]].dirty)
      if (cts__check_scope(r, w->v[k])) return -1;
  return cts__check_thread(r);
}

/* ---- composites: what pack, list and component made ----------------------------- */

/* Learns the handles of a new composite's components and checks them: absent ones
 * are TSM_NONE (COMP.PACK.1), list components are the items (COMP.LIST.1). */
static int learn_components(struct cts_run *r, int c, int line) {
  const struct cts_ids *comps = &r->m.res[c].components;
  char name[200];
  cts__res_name(r, c, name, sizeof name);
  for (size_t i = 0; i < comps->n; i++) {
    int id = comps->v[i];
    tsm_handle h = TSM_NONE;
    int rc = r->a->composite_component(r->s, r->res[c].h, (int)i, &h);
    if (rc) return cts__report(r, CTS_FAIL, "composite_component(%s, %zu) failed with %s", name, i,
                               cts_err_name(rc));
    if (id == CTS_NONE) {
      if (h != TSM_NONE)
        return cts__report(r, CTS_FAIL, "%s: component %zu must be absent (COMP.PACK.1)", name, i);
      continue;
    }
    if ((size_t)id < r->res_cap && r->res[id].h) {
      if (r->res[id].h != h)
        return cts__report(r, CTS_FAIL, "%s: component %zu is not the item it was made from", name, i);
      continue;
    }
    if (h == TSM_NONE || h == CTS_BOGUS_HANDLE || cts__handle_in_use(r, h))
      return cts__report(r, CTS_FAIL, "%s: component %zu has handle 0x%llx, which is 0 or already "
                         "in use (ABI.HANDLE.1)", name, i, (unsigned long long)h);
    cts__remember_at(r, (struct cts_obj_slot){&r->res, &r->res_cap, (size_t)id},
                     (struct cts_objinfo){h, -1, line});
  }
  return 0;
}

/* A component is an existing resource: the adapter must hand back its handle. */
static int bind_component(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h) {
  if (id == CTS_NONE)
    return cts__cannot_run(r, "that component is absent: write `expect absent`");
  if (h != r->res[id].h)
    return cts__report(r, CTS_FAIL, "composite_component returned 0x%llx, not the component's "
                       "handle 0x%llx", (unsigned long long)h, (unsigned long long)r->res[id].h);
  r->sym_obj[st->dst] = id;
  return 0;
}

static int composite_bind_made(struct cts_run *r, const struct cts_stmt *st, int id,
                               tsm_handle h) {
  if (st->kind == CTS_COMPONENT) return bind_component(r, st, id, h);
  if (cts__bind_handle(r, st, id, h)) return -1;
  return learn_components(r, id, st->line);
}

/* A packed sequence's parts hold the elements of the tensors it was made from. */
static int composite_check_made(struct cts_run *r, const struct cts_stmt *st, int id) {
  if (st->kind != CTS_PACK) return 0;
  const struct cts_ids *comps = &r->m.res[id].components;
  for (size_t i = 0; i < comps->n; i++) {
    int c = comps->v[i];
    if (c == CTS_NONE) continue;
    const struct cts_want want = {NULL, (size_t)cts_model_elems(&r->m.res[c]), 0, "value",
                                  &r->m, c};
    if (cts__check_values(r, c, &want)) return -1;
  }
  return 0;
}

/* ---- the family ----------------------------------------------------------------- */

/* A handle that is a scope's, described; NULL when it is none. */
static char *describe_scope_handle(struct cts_run *r, tsm_handle h, char *buf, size_t n) {
  for (size_t sc = 0; sc < r->m.n_scopes && sc < scopes_of(r)->scope.cap; sc++)
    if (scope_info(r, (int)sc)->h == h) return cts__describe_scope(r, (int)sc, buf, n);
  return NULL;
}

static struct cts_objmap *scope_objects(struct cts_run *r) { return &scopes_of(r)->scope; }

static int explain_scope(struct cts_run *r, int kind, int id, struct cts_buf *out) {
  if (kind != CTS_SYM_SCOPE) return 0;
  const struct cts_mscope *sc = &r->m.scopes[id];
  char outer[200];
  cts_buf_printf(out, "scope, %s, outer %s, %zu members", sc->disposed ? "disposed" : "open",
                 sc->outer == CTS_NONE ? "none" : cts__describe_scope(r, sc->outer, outer,
                                                                      sizeof outer),
                 sc->members.n);
  return 1;
}

static void scopes_free(void *state) {
  struct scopes_state *ss = state;
  if (ss) free(ss->scope.v);
  free(ss);
}

const struct cts_family cts_family_scopes = {
    .state_new = scopes_new,
    .sym_kinds = CTS_SYM_SCOPE,
    .objects = scope_objects,
    .observe = observe_scopes,
    .observe_res = check_links,
    .observe_thread = cts__check_thread,
    .before_close = scopes_before_close,
    .describe_handle = describe_scope_handle,
    .state_free = scopes_free,
    .explain = explain_scope,
    .bind_made = composite_bind_made,
    .check_made = composite_check_made,
};
