/*
 * harness/src/exec/exec_observe.c: comparing what the adapter shows (ABI.INFO.1) with the
 * model: managers, resources, live bytes and tensor elements, and the state after each
 * step; the families add theirs through their hooks (observe, observe_res,
 * observe_thread, held_bytes) and name their objects (describe_handle). Every disagreement is reported with the
 * object's name and line.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "opsem.h"

/* Above this many live resources only the objects a statement touched are checked. */
#define FULL_CHECK_LIMIT 4096

int cts__report(struct cts_run *r, int status, const char *fmt, ...) {
  if (r->status != CTS_PASS) return -1;
  r->status = status;
  if (cts_exec_on_report) cts_exec_on_report(r->cur ? r->cur->line : 0, status, 0);
  if (r->cur)
    cts_buf_printf(r->msg, "%s:%d: `%s`: ", r->c->path, r->cur->line, r->cur->text);
  else
    cts_buf_printf(r->msg, "%s: ", r->c->path);
  va_list ap;
  va_start(ap, fmt);
  cts_buf_vprintf(r->msg, fmt, ap);
  va_end(ap);
  if (cts_exec_on_step) cts_exec_on_step(status, r->msg->buf);
  return -1;
}

/* ---- mismatches only a suite rule explains --------------------------------------- */

/* A mismatch that only a TSM rule explains names that clause, so that it is graded by it
 * (grade.c). In the check after a statement it is kept while the other checks run: any
 * other disagreement, which may break a MUST rule, is the one reported; with none, the
 * kept one is. */
struct soft {
  int set;
  char msg[768];
};

/* Keeps the mismatch in d (the first one only) and RETURNS 0; without d, reports it
 * and RETURNS -1. */
static int soft_report(struct cts_run *r, struct soft *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int soft_report(struct cts_run *r, struct soft *d, const char *fmt, ...) {
  char text[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d ? d->msg : text, d ? sizeof d->msg : sizeof text, fmt, ap);
  va_end(ap);
  if (!d) return cts__report(r, CTS_FAIL, "%s", text);
  d->set = 1;
  return 0;
}

/* The statement being checked when its row's model function is fn and it ran on its
 * own (not under `expect error`, so it succeeded); else NULL. */
static const struct cts_stmt *succeeded(struct cts_run *r, cts_model_fn fn) {
  const struct cts_stmt *st = r->cur;
  return st && !cts_exec_model_decides && cts_stmt_exec[st->kind].model == fn ? st : NULL;
}

/* The resource (tensor or composite) operand sym of the current statement names, or
 * CTS_NONE. */
static int res_operand(struct cts_run *r, int sym) {
  if (sym < 0 || !(r->c->syms[sym].kind & CTS_SYM_RESOURCE) || r->sym_obj[sym] < 0)
    return CTS_NONE;
  return (size_t)r->sym_obj[sym] < r->m.n_res ? r->sym_obj[sym] : CTS_NONE;
}

/* The model's manager of handle h, or CTS_BOGUS when none has it (CTS_NONE for none). */
static int mgr_of(struct cts_run *r, tsm_handle h) {
  if (h == TSM_NONE) return CTS_NONE;
  for (size_t g = 0; g < r->m.n_mgrs && g < r->mgr_cap; g++)
    if (r->mgr[g].h == h) return (int)g;
  return CTS_BOGUS;
}

/* The resources the model had borrowed after the last check that passed (MGR.ATTACH.4
 * asks what an attach found), reset as each run begins (a process runs several with
 * --batch, --fail-alloc and combos; a run's statements run one at a time). */
static struct cts_ids borrowed_before;

static int was_borrowed(int id) {
  for (size_t k = 0; k < borrowed_before.n; k++)
    if (borrowed_before.v[k] == id) return 1;
  return 0;
}

static void remember_borrowed(struct cts_run *r) {
  borrowed_before.n = 0;
  const struct cts_watch *wr = &r->m.watch_res;
  for (size_t k = 0; k < wr->n; k++) {
    int id = wr->v[k];
    if (!r->m.res[id].valid || !cts_model_borrowed(&r->m, id)) continue;
    cts_grow((void **)&borrowed_before.v, &borrowed_before.cap, borrowed_before.n + 1,
             sizeof *borrowed_before.v);
    borrowed_before.v[borrowed_before.n++] = id;
  }
}

/* The values of a tensor in words, for the families' explain hooks (exec_internal.h). */
void cts__explain_values(struct cts_buf *out, int dtype, int ndim, const int64_t *shape,
                         const double *vals) {
  enum { SHOWN = 8 };
  cts_buf_printf(out, ", %s [", cts_opsem_dtype_name(dtype));
  for (int d = 0; d < ndim; d++) cts_buf_printf(out, "%s%lld", d ? ", " : "", (long long)shape[d]);
  cts_buf_printf(out, "]");
  if (!vals) return;
  int64_t n = cts_opsem_elems(ndim, shape);
  cts_buf_printf(out, ", values [");
  for (int64_t i = 0; i < n && i < SHOWN; i++) cts_buf_printf(out, "%s%g", i ? ", " : "", vals[i]);
  cts_buf_printf(out, "%s]", n > SHOWN ? ", ..." : "");
}

/* ---- names ------------------------------------------------------------------- */

const char *cts__sym_name(struct cts_run *r, int sym) {
  return sym >= 0 ? r->c->syms[sym].name : "(unnamed)";
}

char *cts__describe_mgr(struct cts_run *r, int g, char *buf, size_t n) {
  if (g == CTS_NONE)
    snprintf(buf, n, "none");
  else if (g == 0)
    snprintf(buf, n, "root");
  else
    snprintf(buf, n, "%s (manager made at line %d)", cts__sym_name(r, r->mgr[g].sym), r->mgr[g].line);
  return buf;
}

const char *cts__res_name(struct cts_run *r, int id, char *buf, size_t n) {
  int c = r->m.res[id].composite;
  if (r->res[id].sym < 0 && c != CTS_NONE) {
    size_t k = 0;
    while (k < r->m.res[c].components.n && r->m.res[c].components.v[k] != id) k++;
    snprintf(buf, n, "component %zu of composite %s (made at line %d)", k,
             cts__sym_name(r, r->res[c].sym), r->res[c].line);
  } else {
    snprintf(buf, n, "%s %s (made at line %d)",
             r->m.res[id].kind == TSM_KIND_COMPOSITE ? "composite" : "tensor",
             cts__sym_name(r, r->res[id].sym), r->res[id].line);
  }
  return buf;
}

/* Managers, then the families' objects, then resources. */
char *cts__describe_handle(struct cts_run *r, tsm_handle h, char *buf, size_t n) {
  if (h == TSM_NONE) {
    snprintf(buf, n, "none");
    return buf;
  }
  for (size_t g = 0; g < r->m.n_mgrs && g < r->mgr_cap; g++)
    if (r->mgr[g].h == h) return cts__describe_mgr(r, (int)g, buf, n);
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->describe_handle && cts_families[f]->describe_handle(r, h, buf, n))
      return buf;
  for (size_t i = 0; i < r->m.n_res && i < r->res_cap; i++)
    if (r->res[i].h == h) {
      cts__res_name(r, (int)i, buf, n);
      return buf;
    }
  snprintf(buf, n, "unknown handle 0x%llx", (unsigned long long)h);
  return buf;
}

/* ---- handle maps ------------------------------------------------------------- */

static size_t slot_of(const struct cts_handle_index *x, tsm_handle h) {
  uint64_t k = (uint64_t)h * 0x9e3779b97f4a7c15ull;
  size_t i = (size_t)(k >> 17) & (x->cap - 1);
  while (x->v[i].h && x->v[i].h != h) i = (i + 1) & (x->cap - 1);
  return i;
}

static void index_put(struct cts_handle_index *x, tsm_handle h, int id, int is_res) {
  if (2 * (x->n + 1) > x->cap) { /* keep it at most half full */
    struct cts_handle_index bigger = {cts_xcalloc(x->cap ? 2 * x->cap : 64, sizeof *x->v), 0,
                                      x->cap ? 2 * x->cap : 64};
    for (size_t i = 0; i < x->cap; i++)
      if (x->v[i].h) bigger.v[slot_of(&bigger, x->v[i].h)] = x->v[i];
    bigger.n = x->n;
    free(x->v);
    *x = bigger;
  }
  struct cts_handle_slot *slot = &x->v[slot_of(x, h)];
  x->n += slot->h == 0;
  *slot = (struct cts_handle_slot){h, id, is_res};
}

static int indexed(struct cts_run *r, struct cts_objinfo **v) {
  if (v == &r->mgr || v == &r->res) return 1;
  for (int f = 0; f < CTS_N_FAMILIES; f++) {
    struct cts_objmap *map = cts_families[f]->objects ? cts_families[f]->objects(r) : NULL;
    if (map && v == &map->v) return 1;
  }
  return 0;
}

void cts__remember_at(struct cts_run *r, struct cts_obj_slot at, struct cts_objinfo info) {
  cts_grow((void **)at.v, at.cap, at.id + 1, sizeof **at.v);
  (*at.v)[at.id] = info;
  if (info.h != TSM_NONE && indexed(r, at.v))
    index_put(&r->handles, info.h, (int)at.id, at.v == &r->res);
}

tsm_handle cts__mgr_handle(struct cts_run *r, int g) {
  return g == CTS_BOGUS ? CTS_BOGUS_HANDLE : g == CTS_NONE ? TSM_NONE : r->mgr[g].h;
}

tsm_handle cts__res_handle(struct cts_run *r, int id) {
  return id == CTS_BOGUS ? CTS_BOGUS_HANDLE : id == CTS_NONE ? TSM_NONE : r->res[id].h;
}

struct cts_objmap *cts__family_objects(struct cts_run *r, int kind) {
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if ((cts_families[f]->sym_kinds & kind) && cts_families[f]->objects)
      return cts_families[f]->objects(r);
  return NULL;
}

/* A manager or a family's object holds h for good; a resource while it is live. */
int cts__handle_in_use(struct cts_run *r, tsm_handle h) {
  if (!r->handles.cap) return 0;
  const struct cts_handle_slot *slot = &r->handles.v[slot_of(&r->handles, h)];
  if (slot->h != h) return 0;
  return !slot->is_res || ((size_t)slot->id < r->m.n_res && r->m.res[slot->id].valid);
}

/* ---- objects ----------------------------------------------------------------- */

/* MGR.ROOT.3: the root counts fewer than it holds, while each resource the model says it
 * holds reports itself live and held by the root: the root does not track what it
 * holds. */
static int root_untracked(struct cts_run *r, uint64_t observed) {
  const struct cts_ids *held = &r->m.mgrs[0].held;
  if (observed >= held->n) return 0;
  for (size_t k = 0; k < held->n; k++) {
    struct tsm_res_info info;
    memset(&info, 0, sizeof info);
    if ((size_t)held->v[k] >= r->res_cap ||
        r->a->res_info(r->s, r->res[held->v[k]].h, &info) || !info.valid ||
        info.owner != r->mgr[0].h)
      return 0;
  }
  return 1;
}

/* Manager g's state (open or closed, capped) and whether it is the root, against the
 * model; `want` names it. */
static int check_mgr_state(struct cts_run *r, int g, const char *want,
                           const struct tsm_mgr_info *info) {
  const struct cts_mmgr *mg = &r->m.mgrs[g];
  int closed = mg->state == CTS_M_CLOSED;
  if (!!(info->state & TSM_MGR_CLOSED) != closed)
    return cts__report(r, CTS_FAIL, "manager %s: expected %s, observed %s", want,
                       closed ? "closed" : "open", closed ? "open" : "closed");
  if (!closed && !!(info->state & TSM_MGR_CAPPED) != mg->capped)
    return cts__report(r, CTS_FAIL, "manager %s: expected %s, observed %s", want,
                       mg->capped ? "capped" : "not capped", mg->capped ? "not capped" : "capped");
  if (!!info->is_root != (g == 0))
    return cts__report(r, CTS_FAIL, "manager %s: is_root is %d", want, info->is_root);
  return 0;
}

/* Manager g's parent against the model. */
static int check_mgr_parent(struct cts_run *r, int g, const char *want,
                            const struct tsm_mgr_info *info) {
  const struct cts_mmgr *mg = &r->m.mgrs[g];
  if (info->parent == cts__mgr_handle(r, mg->parent)) return 0;
  char wp[160], got[160];
  /* MGR.CLOSE.5 (TSM) says a closed manager reports no parent, but so does ABI.INFO.1
   * (MUST): named, the MUST clause grades it. */
  return cts__report(r, CTS_FAIL, "manager %s: parent expected %s, observed %s%s", want,
                     cts__describe_mgr(r, mg->parent, wp, sizeof wp),
                     cts__describe_handle(r, info->parent, got, sizeof got),
                     mg->state == CTS_M_CLOSED ? " (ABI.INFO.1, MGR.CLOSE.5)" : "");
}

/* Manager g's live and child counts against the model; a root that only fails to count
 * what it holds goes to d (MGR.ROOT.3). */
static int check_mgr_counts(struct cts_run *r, int g, const char *want,
                            const struct tsm_mgr_info *info, struct soft *d) {
  const struct cts_mmgr *mg = &r->m.mgrs[g];
  int untracked = info->live != mg->held.n && g == 0 && root_untracked(r, info->live);
  if (info->live != mg->held.n && !untracked)
    return cts__report(r, CTS_FAIL, "manager %s: live count expected %zu, observed %llu", want,
                       mg->held.n, (unsigned long long)info->live);
  if (info->children != mg->children.n)
    return cts__report(r, CTS_FAIL, "manager %s: child count expected %zu, observed %llu", want,
                       mg->children.n, (unsigned long long)info->children);
  if (untracked)
    return soft_report(r, d, "manager %s: live count expected %zu, observed %llu, though each "
                       "resource it holds reports itself held by it (MGR.ROOT.3)", want,
                       mg->held.n, (unsigned long long)info->live);
  return 0;
}

/* Manager g against the model; a mismatch only a TSM rule explains goes to d (above). */
static int check_mgr(struct cts_run *r, int g, struct soft *d) {
  struct tsm_mgr_info info;
  memset(&info, 0, sizeof info);
  char want[160];
  cts__describe_mgr(r, g, want, sizeof want);
  int rc = r->a->mgr_info(r->s, r->mgr[g].h, &info);
  if (rc) return cts__report(r, CTS_FAIL, "mgr_info(%s) failed with %s (ABI.INFO.1)", want,
                             cts_err_name(rc));
  if (check_mgr_state(r, g, want, &info) || check_mgr_parent(r, g, want, &info)) return -1;
  return check_mgr_counts(r, g, want, &info, d);
}

int cts__check_mgr(struct cts_run *r, int g) { return check_mgr(r, g, NULL); }

/* A resource's manager link (owner, lender): the model's manager g, observed h. */
static int check_mgr_link(struct cts_run *r, const char *name, const char *link, int g,
                          tsm_handle h) {
  if (h == cts__mgr_handle(r, g)) return 0;
  char want[160], got[160];
  return cts__report(r, CTS_FAIL, "%s: %s expected %s, observed %s", name, link,
                     cts__describe_mgr(r, g, want, sizeof want),
                     cts__describe_handle(r, h, got, sizeof got));
}

/* MGR.ATTACH.4: the statement attached (or returned) resource id (or the composite id is
 * a component of), which was borrowed and is now held by its new holder, as observed; a
 * borrow that outlives it is the rule's. */
static int borrow_outlived_attach(struct cts_run *r, int id) {
  const struct cts_stmt *st = succeeded(r, cts__model_attach);
  if (!st) st = succeeded(r, cts__model_ret);
  int moved = st ? res_operand(r, st->a) : CTS_NONE;
  return moved != CTS_NONE && (moved == id || r->m.res[id].composite == moved) &&
         was_borrowed(id) && !cts_model_borrowed(&r->m, id);
}

/* MGR.ATTACH.4's mismatch (borrow_outlived_attach) into d: RETURN soft_report's. */
static int borrow_outlived(struct cts_run *r, struct soft *d, const char *name,
                           const struct tsm_res_info *info) {
  char lender[160];
  return soft_report(r, d, "%s: expected not borrowed, observed %s with lender %s: the "
                     "attach ends the borrow (MGR.ATTACH.4)", name,
                     info->borrowed ? "borrowed" : "not borrowed",
                     cts__describe_handle(r, info->lender, lender, sizeof lender));
}

/* A live resource's owner, borrow and lender against the model; name names it. */
static int check_res_links(struct cts_run *r, int id, const char *name,
                           const struct tsm_res_info *info, struct soft *d) {
  if (check_mgr_link(r, name, "owner", cts_model_holder(&r->m, id), info->owner)) return -1;
  int borrowed = cts_model_borrowed(&r->m, id);
  if ((!!info->borrowed != borrowed || info->lender != TSM_NONE) && !borrowed &&
      borrow_outlived_attach(r, id))
    return borrow_outlived(r, d, name, info);
  if (!!info->borrowed != borrowed)
    return cts__report(r, CTS_FAIL, "%s: expected %s, observed %s", name,
                       borrowed ? "borrowed" : "not borrowed",
                       borrowed ? "not borrowed" : "borrowed");
  return check_mgr_link(r, name, "lender", cts_model_lender(&r->m, id), info->lender);
}

/* Resource id against the model; a mismatch only a TSM rule explains goes to d. */
static int check_res(struct cts_run *r, int id, struct soft *d) {
  struct tsm_res_info info;
  memset(&info, 0, sizeof info);
  char name[200];
  cts__res_name(r, id, name, sizeof name);
  int rc = r->a->res_info(r->s, r->res[id].h, &info);
  if (rc) return cts__report(r, CTS_FAIL, "res_info(%s) failed with %s (ABI.INFO.1)", name,
                             cts_err_name(rc));
  const struct cts_mres *mr = &r->m.res[id];
  if (!!info.valid != mr->valid)
    return cts__report(r, CTS_FAIL, "%s: expected %s, observed %s", name,
                       mr->valid ? "live" : "released", mr->valid ? "released" : "live");
  if (mr->valid) {
    if (check_res_links(r, id, name, &info, d)) return -1;
    uint64_t bytes = cts_model_nbytes(&r->m, id);
    if (info.nbytes != bytes)
      return cts__report(r, CTS_FAIL, "%s: nbytes expected %llu, observed %llu", name,
                         (unsigned long long)bytes, (unsigned long long)info.nbytes);
  }
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->observe_res && cts_families[f]->observe_res(r, id, name)) return -1;
  return 0;
}

int cts__check_res(struct cts_run *r, int id) { return check_res(r, id, NULL); }

int cts__observe_thread(struct cts_run *r) {
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->observe_thread && cts_families[f]->observe_thread(r)) return -1;
  return 0;
}

/* "(G of them graph buffers)" for each family that holds bytes, into what; its clauses
 * after MGR.COUNT.4 into clauses. */
static void held_parts(const uint64_t *held, char *what, size_t what_n, char *clauses,
                       size_t clauses_n) {
  size_t at = 0, cat = (size_t)snprintf(clauses, clauses_n, "MGR.COUNT.4");
  what[0] = '\0';
  for (int f = 0; f < CTS_N_FAMILIES && at < what_n && cat < clauses_n; f++) {
    const struct cts_family *fam = cts_families[f];
    if (!fam->held_bytes) continue;
    at += (size_t)snprintf(what + at, what_n - at, "%s%llu of them %s", at ? ", " : " (",
                           (unsigned long long)held[f], fam->held_what);
    cat += (size_t)snprintf(clauses + cat, clauses_n - cat, ", %s", fam->held_clause);
  }
  if (at && at < what_n) snprintf(what + at, what_n - at, ")");
}

/* What the last live-bytes check that passed saw: the model's storages and each family's
 * part (reset as each run begins, as borrowed_before). */
static struct {
  int set;
  uint64_t storages, held[CTS_N_FAMILIES];
} bytes_before;

void cts__observe_begin(void) {
  borrowed_before.n = 0;
  bytes_before.set = 0;
}

/* The family whose part alone changed since the last check that passed, the model's
 * storages unchanged (so the storages were verified and stayed): a difference in live
 * bytes is then in that family's part. -1 when there is no such family. */
static int changed_family(struct cts_run *r, const uint64_t *held) {
  if (!bytes_before.set || !r->cur || bytes_before.storages != r->m.live_bytes) return -1;
  int changed = -1;
  for (int f = 0; f < CTS_N_FAMILIES; f++) {
    if (held[f] == bytes_before.held[f]) continue;
    if (changed >= 0 || !cts_families[f]->held_bytes) return -1;
    changed = f;
  }
  return changed;
}

/* Live bytes: the model's storages plus what each family holds on the device, as the
 * implementation reports it (a graph's plan size is its own choice, GRAPH.MGR.1). */
int cts__check_bytes(struct cts_run *r) {
  uint64_t bytes = 0, want = r->m.live_bytes, held[CTS_N_FAMILIES] = {0};
  for (int f = 0; f < CTS_N_FAMILIES; f++) {
    if (cts_families[f]->held_bytes && cts_families[f]->held_bytes(r, &held[f])) return -1;
    want += held[f];
  }
  int rc = r->a->live_bytes(r->s, &bytes);
  if (rc) return cts__report(r, CTS_FAIL, "live_bytes failed with %s", cts_err_name(rc));
  if (bytes == want) {
    bytes_before.set = 1;
    bytes_before.storages = r->m.live_bytes;
    memcpy(bytes_before.held, held, sizeof held);
    return 0;
  }
  char what[256], clauses[128];
  held_parts(held, what, sizeof what, clauses, sizeof clauses);
  int f = changed_family(r, held);
  if (f >= 0) snprintf(clauses, sizeof clauses, "%s", cts_families[f]->held_clause);
  return cts__report(r, CTS_FAIL, "live bytes expected %llu%s, observed %llu (%s)",
                     (unsigned long long)want, what, (unsigned long long)bytes, clauses);
}

/* What a statement did that only a TSM rule forbids, found before the other checks, goes
 * into the model as the implementation did it (the run stops at this statement anyway),
 * so that the other checks look for anything else. RETURNS 1 when it did. */
static int as_observed(struct cts_run *r, int id, const struct tsm_res_info *info) {
  if (!info->valid) return cts_model_release(&r->m, id) == 0;
  int g = mgr_of(r, info->owner);
  if (g == CTS_NONE) return cts_model_detach(&r->m, id) == 0;
  if (g == CTS_BOGUS) return 0;
  if (!info->borrowed && info->lender == TSM_NONE) return cts_model_attach(&r->m, id, g) == 0;
  return info->borrowed && info->lender == cts__mgr_handle(r, cts_model_holder(&r->m, id)) &&
         cts_model_borrow(&r->m, id, g) == 0;
}

/* 1 when resource id is as the model has it: live, with the model's holder, borrow and
 * lender. */
static int as_it_was(struct cts_run *r, int id, const struct tsm_res_info *info) {
  return info->valid && info->owner == cts__mgr_handle(r, cts_model_holder(&r->m, id)) &&
         !!info->borrowed == cts_model_borrowed(&r->m, id) &&
         info->lender == cts__mgr_handle(r, cts_model_lender(&r->m, id));
}

/* MGR.OP.6's mismatch for input id, observed as info, into d when only the rule
 * explains it (as_observed). */
static void input_changed(struct cts_run *r, struct soft *d, int id,
                          const struct tsm_res_info *info) {
  char name[200], was[160], now[160];
  cts__res_name(r, id, name, sizeof name);
  cts__describe_mgr(r, cts_model_holder(&r->m, id), was, sizeof was);
  cts__describe_handle(r, info->owner, now, sizeof now);
  if (as_observed(r, id, info))
    soft_report(r, d, "%s, an input of the operation: expected it as it was (held by %s), "
                "observed %s%s%s (MGR.OP.6)", name, was,
                info->valid ? "held by " : "released", info->valid ? now : "",
                info->borrowed ? ", borrowed" : "");
}

/* MGR.OP.6: an operation that succeeded left each input as it was (an input named as
 * the result is not looked at: the name is the result's now). */
static void op_inputs(struct cts_run *r, struct soft *d) {
  const struct cts_stmt *st = succeeded(r, cts__model_op);
  for (int k = 0; st && k < 2 && !d->set; k++) {
    int sym = k ? st->b : st->a, id = sym == st->dst ? CTS_NONE : res_operand(r, sym);
    if (id == CTS_NONE || !r->m.res[id].valid || (size_t)id >= r->res_cap) continue;
    struct tsm_res_info info;
    memset(&info, 0, sizeof info);
    if (r->a->res_info(r->s, r->res[id].h, &info) || as_it_was(r, id, &info)) continue;
    input_changed(r, d, id, &info);
  }
}

/* MGR.CLOSE.7, MGR.TEMP.6: a close released no resource that a closed manager had lent
 * out and a borrower still holds. */
static void lent_out(struct cts_run *r, struct soft *d) {
  const struct cts_watch *wr = &r->m.watch_res;
  for (size_t k = 0; succeeded(r, cts__model_close) && k < wr->n && !d->set; k++) {
    int id = wr->v[k];
    const struct cts_mres *mr = &r->m.res[id];
    int lender_closed = 0;
    for (size_t b = 0; mr->valid && b < mr->n_borrows; b++)
      lender_closed |= mr->borrows[b].lender != CTS_NONE &&
                       r->m.mgrs[mr->borrows[b].lender].state == CTS_M_CLOSED;
    if (!lender_closed || (size_t)id >= r->res_cap) continue;
    struct tsm_res_info info;
    memset(&info, 0, sizeof info);
    if (r->a->res_info(r->s, r->res[id].h, &info) || info.valid) continue;
    char name[200], holder[160];
    cts__res_name(r, id, name, sizeof name);
    cts__describe_mgr(r, cts_model_holder(&r->m, id), holder, sizeof holder);
    if (as_observed(r, id, &info))
      soft_report(r, d, "%s: expected live, still borrowed by %s after its lender closed, "
                  "observed released (MGR.CLOSE.7, MGR.TEMP.6)", name, holder);
  }
}

/* 1 when every watched object is checked, not only those a statement touched (at most
 * FULL_CHECK_LIMIT live resources). */
static int full_check(const struct cts_run *r) {
  const struct cts_watch *wr = &r->m.watch_res;
  size_t live = 0;
  for (size_t k = 0; k < wr->n; k++) live += r->m.res[wr->v[k]].valid;
  return live <= FULL_CHECK_LIMIT;
}

/* The open or just-changed managers, then the live or just-released resources. */
static int check_watched(struct cts_run *r, struct soft *d) {
  const struct cts_watch *wr = &r->m.watch_res, *wm = &r->m.watch_mgrs;
  int full = full_check(r);
  for (size_t k = 0; k < wm->n; k++) {
    const struct cts_mmgr *mg = &r->m.mgrs[wm->v[k]];
    if ((mg->state != CTS_M_CLOSED && (full || mg->held.n <= FULL_CHECK_LIMIT)) || mg->dirty)
      if (check_mgr(r, wm->v[k], d)) return -1;
  }
  for (size_t k = 0; k < wr->n; k++)
    if ((full && r->m.res[wr->v[k]].valid) || r->m.res[wr->v[k]].dirty)
      if (check_res(r, wr->v[k], d)) return -1;
  return 0;
}

/* After every statement: open or just-changed managers, live or just-released
 * resources (the model's watch lists: what a long case released long ago costs
 * nothing), what each family observes, and the device's live bytes. A mismatch only a
 * TSM rule explains is reported when nothing else disagrees (struct soft). */
int cts__check_state(struct cts_run *r) {
  struct soft d = {0};
  op_inputs(r, &d);
  lent_out(r, &d);
  if (check_watched(r, &d)) return -1;
  for (int f = 0; f < CTS_N_FAMILIES; f++)
    if (cts_families[f]->observe && cts_families[f]->observe(r)) return -1;
  cts_model_clear_dirty(&r->m);
  if (cts__check_bytes(r)) return -1;
  if (d.set) return cts__report(r, CTS_FAIL, "%s", d.msg);
  remember_borrowed(r);
  return 0;
}

/* ---- elements ---------------------------------------------------------------- */

int cts__values_equal(double want, double got, int approx) {
  return approx ? cts_opsem_close(want, got, CTS_OPSEM_REL_TOL) : want == got;
}

/* Element i of what want names. */
static double want_at(const struct cts_want *want, int64_t i) {
  return want->m ? cts_model_value_at(want->m, want->res, i) : want->v[i];
}

/* Elements per block of the f32 pass: the inner loops have no exit and a constant trip
 * count, so the compiler vectorizes them (at -O2 too); a block with a miss, and the last
 * partial block, are searched element by element. */
#define F32_BLOCK 4096

/* 1 when one of the F32_BLOCK f32 at p (element `base` onward) is not first + step * i rounded to
 * float: exact for the whole numbers a closed form holds (cts_opsem_affine_exact). */
static int f32_block_misses_affine(const unsigned char *p, int64_t base,
                                   const struct cts_maffine *aff) {
  int miss = 0;
  double b = (double)base;
  for (int j = 0; j < F32_BLOCK; j++) {
    float got;
    memcpy(&got, p + (size_t)j * sizeof got, sizeof got);
    miss |= got != (float)(aff->first + aff->step * (b + (double)j));
  }
  return miss;
}

/* The same in 32-bit integers (cts_opsem_affine_int32): first is the block's first
 * element. */
static int f32_block_misses_int32(const unsigned char *p, int32_t first, int32_t step) {
  int miss = 0;
  for (int j = 0; j < F32_BLOCK; j++) {
    float got;
    memcpy(&got, p + (size_t)j * sizeof got, sizeof got);
    miss |= got != cts_opsem_affine_f32_at(first, step, j);
  }
  return miss;
}

/* A closed form as the f32 pass compares it: in 32-bit integers when int32 holds its n
 * elements (in32), else in doubles. */
struct f32_closed {
  struct cts_maffine aff;
  int in32;
  int32_t first, step;
};

/* Whether the full block at element i of p misses the closed form c. */
static int f32_block_misses_closed(const unsigned char *p, int64_t i, const struct f32_closed *c) {
  if (!c->in32) return f32_block_misses_affine(p, i, &c->aff);
  return f32_block_misses_int32(p, (int32_t)((int64_t)c->first + (int64_t)c->step * i), c->step);
}

/* The same against a list of n doubles. */
static int f32_block_misses_list(const unsigned char *p, const double *want) {
  int miss = 0;
  for (int j = 0; j < F32_BLOCK; j++) {
    float got;
    memcpy(&got, p + (size_t)j * sizeof got, sizeof got);
    miss |= got != (float)want[j];
  }
  return miss;
}

/* The first element of n f32 in buf that is not exactly want's, rounded to float; -1
 * when there is none. One pass at memory speed: the IREE seed's 64 MiB results are
 * compared whole. */
static int64_t first_f32_miss(const void *buf, int64_t n, const struct cts_want *want) {
  const unsigned char *p = buf;
  struct f32_closed c;
  int closed = want->m && cts_model_closed_form(want->m, want->res, &c.aff);
  c.in32 = closed && cts_opsem_affine_int32(c.aff.first, c.aff.step, n, &c.first, &c.step);
  const double *list = want->m ? NULL : want->v;
  for (int64_t i = 0; i < n; i += F32_BLOCK) {
    int len = n - i < F32_BLOCK ? (int)(n - i) : F32_BLOCK;
    const unsigned char *at = p + (size_t)i * sizeof(float);
    if (len == F32_BLOCK && (closed ? !f32_block_misses_closed(at, i, &c)
                                    : list ? !f32_block_misses_list(at, list + i) : 0))
      continue;
    for (int64_t k = i; k < i + len; k++) {
      float got;
      memcpy(&got, p + (size_t)k * sizeof got, sizeof got);
      if ((double)got != (double)(float)want_at(want, k)) return k;
    }
  }
  return -1;
}

/* Tensor id's elements as read into buf against want's, every one of them; name names
 * it. */
static int compare_elements(struct cts_run *r, int id, const char *name, const void *buf,
                            const struct cts_want *want) {
  const struct cts_mres *mr = &r->m.res[id];
  int64_t n = cts_model_elems(mr);
  size_t size = cts_opsem_dtype_size(mr->dtype);
  int64_t from = 0;
  if (mr->dtype == TSM_F32 && !want->approx) {
    from = first_f32_miss(buf, n, want);
    if (from < 0) return 0;
  }
  for (int64_t i = from; i < n; i++) {
    double got = cts_opsem_read(mr->dtype, (const char *)buf + (size_t)i * size);
    double w = cts_opsem_expected(mr->dtype, want_at(want, i));
    if (!cts__values_equal(w, got, want->approx))
      return cts__report(r, CTS_FAIL, "%s: %s element %lld expected %.9g, observed %.9g", name,
                         want->what, (long long)i, w, got);
  }
  return 0;
}

/* Reads tensor id from the adapter and compares dtype, shape and elements with
 * `want` (model values, or an expectation's list). */
int cts__check_values(struct cts_run *r, int id, const struct cts_want *want) {
  char name[200];
  cts__res_name(r, id, name, sizeof name);
  const struct cts_mres *mr = &r->m.res[id];
  struct tsm_tensor_desc d;
  memset(&d, 0, sizeof d);
  int rc = r->a->tensor_desc(r->s, r->res[id].h, &d);
  if (rc) return cts__report(r, CTS_FAIL, "tensor_desc(%s) failed with %s", name, cts_err_name(rc));
  if (d.dtype != mr->dtype || !cts_opsem_same_dims(d.ndim, d.shape, mr->ndim, mr->shape))
    return cts__report(r, CTS_FAIL, "%s: dtype or shape differs from the model", name);
  int64_t n = cts_model_elems(mr);
  if ((size_t)n != want->n)
    return cts__report(r, CTS_ERROR, "%s: %zu values expected for %lld elements", name, want->n,
                       (long long)n);
  size_t bytes = (size_t)n * cts_opsem_dtype_size(mr->dtype);
  if (bytes > r->read_cap || !r->read_buf) {
    free(r->read_buf);
    r->read_buf = cts_xmalloc(bytes ? bytes : 1);
    r->read_cap = bytes;
  }
  rc = r->a->tensor_read(r->s, r->res[id].h, r->read_buf, bytes);
  if (rc) return cts__report(r, CTS_FAIL, "tensor_read(%s) failed with %s", name, cts_err_name(rc));
  return compare_elements(r, id, name, r->read_buf, want);
}
