/*
 * impl/src/scope.c: per-thread state, dispose scopes and the statistics.
 * Clauses: SCOPE.STACK.1-2, SCOPE.REG.1-2, SCOPE.THREAD.1-3, SCOPE.DISP.1-4,
 * SCOPE.REL.1-2, SCOPE.MOVE.1-4, SCOPE.DETACH.1, SCOPE.ATTACH.1, SCOPE.ALL.1-2,
 * SCOPE.HAND.1, SCOPE.WRAP.1, SCOPE.STAT.1-3, SCOPE.MGR.1-2, ERR.ORDER.1.
 *
 * Threads. Each context has one lock (lock.h: a mutex, biased toward the first thread
 * that enters, and open to lanes for the creates and releases of threads that each work
 * in managers of their own), taken by every public entry point (tsmr__enter); so calls
 * on one context from several threads run as if one after the other (SCOPE.THREAD.3). The state of
 * a thread (its chain head and statistics) is a struct tsmr__thread per (context,
 * thread), kept on the context's list and found through a thread-local one-entry cache
 * keyed by the context's never-reused serial (the lock's owner finds its own through
 * ctx->owner_ts). Threads are told apart by a never-reused id (tsmr__tls.thread_id),
 * not by pthread_self(), whose values come back for new threads: a new thread never
 * inherits the chain or the counters of one that ended.
 *
 * Scopes. An open scope is a struct on its thread's chain (outer/inner links); its
 * handle's slot is never reused, and a disposed scope has no struct (slot obj NULL),
 * so its handle keeps answering "disposed". Membership is orthogonal to holders
 * (SCOPE.MGR.1): a resource has a holder-list link and, independently, a scope link;
 * whichever releases first (tsmr__tensor_release) unlinks both (SCOPE.MGR.2).
 */
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

_Thread_local struct tsmr__tls tsmr__tls;
static atomic_uint_fast64_t thread_ids;

struct tsmr__thread *tsmr__thread_lookup(tsmr_ctx *ctx) {
  uint64_t *id = &tsmr__tls.thread_id;
  if (!*id) *id = atomic_fetch_add(&thread_ids, 1) + 1;
  for (struct tsmr__thread *t = ctx->threads; t; t = t->next)
    if (t->tid == *id) return t;
  void *block;
  struct tsmr__thread *t = tsmr__alloc_lines(sizeof *t, &block);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->block = block;
  t->tid = *id;
  t->next = ctx->threads;
  ctx->threads = t;
  tsmr__lock_add_lane(&ctx->lock, &t->lane);
  return t;
}

int tsmr__enter_slow(tsmr_ctx *ctx, struct tsmr__tls *c, int to_lanes) {
  if (!tsmr__lock_acquire_slow(&ctx->lock, c->thread_id, to_lanes)) return TSMR__TO_LANES;
  if (c->serial != ctx->serial) {
    struct tsmr__thread *ts = tsmr__thread_lookup(ctx);
    if (!ts) {
      tsmr__lock_release(&ctx->lock);
      return TSMR_ENOMEM;
    }
    c->serial = ctx->serial;
    c->ts = ts;
  }
  ctx->cur = c->ts;
  if (!ctx->owner_ts) { /* the first thread in: the lock may be biased toward it */
    tsmr__lock_grant(&ctx->lock, c->ts->tid);
    ctx->owner_ts = c->ts;
  }
  return 0;
}

static struct tsmr__stats *tensor_stats(tsmr_ctx *ctx, const struct tsmr__tensor *t) {
  return &ctx->cur->st[t->rkind == TSMR__RES_COMPOSITE];
}

/* Takes t out of its scope (it had one) and counts `detached` (SCOPE.STAT.2). */
static void leave_scope(tsmr_ctx *ctx, struct tsmr__tensor *t) {
  tsmr__scope_del(t);
  tensor_stats(ctx, t)->detached++;
}

/* Unlinks s from its thread's chain, re-linking its inner scope (SCOPE.DISP.3), and
 * marks it disposed. s has no member left. */
static void scope_finish(tsmr_ctx *ctx, struct tsmr__scope *s) {
  struct tsmr__thread *thr = s->thr;
  TSMR_ASSERT(s->n_members == 0 && tsmr__list_empty(&s->members));
  if (s->inner) {
    s->inner->outer = s->outer;
  } else {
    TSMR_ASSERT(thr->innermost == s);
    thr->innermost = s->outer;
  }
  if (s->outer) s->outer->inner = s->inner;
  ctx->scopes.slots[tsmr__h_slot(s->handle)].obj = NULL;
  tsmr__free(s);
}

/* Releases every member of s (SCOPE.DISP.1, SCOPE.ALL.1). */
static void scope_release_all(tsmr_ctx *ctx, struct tsmr__scope *s) {
  while (!tsmr__list_empty(&s->members))
    tsmr__tensor_release(ctx, tsmr__scope_member(s->members.next));
}

static int scope_open_l(tsmr_ctx *ctx, tsmr_handle *out) {
  if (!out) return TSMR_EINVAL;
  if (tsmr__table_reserve(&ctx->scopes)) return TSMR_ENOMEM;
  struct tsmr__scope *s = tsmr__alloc(sizeof *s);
  if (!s) return TSMR_ENOMEM;
  struct tsmr__thread *thr = ctx->cur;
  tsmr__list_init(&s->members);
  s->n_members = 0;
  s->thr = thr;
  s->outer = thr->innermost; /* SCOPE.STACK.1 */
  s->inner = NULL;
  if (s->outer) s->outer->inner = s;
  thr->innermost = s;
  uint32_t idx = tsmr__mslot_alloc(&ctx->scopes, s);
  s->handle = tsmr__mkhandle(TSMR__KIND_SCOPE, idx, TSMR__MGR_GEN);
  *out = s->handle;
  return 0;
}

static int scope_dispose_l(tsmr_ctx *ctx, tsmr_handle sh) {
  struct tsmr__scope *s;
  int rc;
  if ((rc = tsmr__scope_get(ctx, sh, &s))) return rc;
  if (!s) return 0; /* SCOPE.DISP.2 */
  scope_release_all(ctx, s);
  scope_finish(ctx, s);
  return 0;
}

/* Argument decoding of the member operations, in ERR.ORDER.1: EINVAL (handles, a
 * component: COMP.UNIT.3), ERELEASED (SCOPE.REL.2), EDISPOSED (SCOPE.DISP.4). */
static int member_args(tsmr_ctx *ctx, tsmr_handle sh, tsmr_handle rh,
                       struct tsmr__scope **s, struct tsmr__tensor **t) {
  int rc;
  if ((rc = tsmr__scope_get(ctx, sh, s))) return rc;
  if ((rc = tsmr__tensor_get(ctx, rh, t))) return rc;
  if (tsmr__res_kind(ctx, rh, *t) == TSMR__RES_COMPONENT) return TSMR_EINVAL;
  if (!*t) return TSMR_ERELEASED;
  if (!*s) return TSMR_EDISPOSED;
  return 0;
}

/* Moves member t of its scope to target (NULL: no scope), SCOPE.MOVE.1-2. */
static void move_member(tsmr_ctx *ctx, struct tsmr__tensor *t,
                        struct tsmr__scope *target) {
  if (target == t->scope) return; /* SCOPE.MOVE.2: to itself */
  if (!target) {
    leave_scope(ctx, t);
    return;
  }
  tsmr__scope_del(t); /* scope to scope: counts nothing */
  tsmr__scope_add(target, t);
}

static int scope_move_to_outer_l(tsmr_ctx *ctx, tsmr_handle sh, tsmr_handle rh) {
  struct tsmr__scope *s;
  struct tsmr__tensor *t;
  int rc;
  if ((rc = member_args(ctx, sh, rh, &s, &t))) return rc;
  if (t->scope != s) return 0; /* SCOPE.MOVE.3 */
  move_member(ctx, t, s->outer);
  return 0;
}

static int scope_move_to_other_l(tsmr_ctx *ctx, tsmr_handle sh, tsmr_handle rh,
                                 tsmr_handle oh) {
  struct tsmr__scope *s, *o = NULL;
  struct tsmr__tensor *t;
  int rc;
  if ((rc = tsmr__scope_get(ctx, sh, &s))) return rc;
  if ((rc = tsmr__tensor_get(ctx, rh, &t))) return rc;
  if (oh != TSMR_NONE && (rc = tsmr__scope_get(ctx, oh, &o))) return rc;
  if (tsmr__res_kind(ctx, rh, t) == TSMR__RES_COMPONENT) return TSMR_EINVAL;
  if (!t) return TSMR_ERELEASED;
  if (!s) return TSMR_EDISPOSED;
  if (oh != TSMR_NONE && !o) return TSMR_EDISPOSED; /* SCOPE.MOVE.4 */
  if (t->scope != s) return 0;                      /* SCOPE.MOVE.3 */
  move_member(ctx, t, o);
  return 0;
}

static int scope_detach_l(tsmr_ctx *ctx, tsmr_handle sh, tsmr_handle rh) {
  struct tsmr__scope *s;
  struct tsmr__tensor *t;
  int rc;
  if ((rc = member_args(ctx, sh, rh, &s, &t))) return rc;
  if (t->scope == s) leave_scope(ctx, t); /* SCOPE.DETACH.1, else MOVE.3 */
  return 0;
}

static int scope_attach_l(tsmr_ctx *ctx, tsmr_handle sh, tsmr_handle rh) {
  struct tsmr__scope *s;
  struct tsmr__tensor *t;
  int rc;
  if ((rc = member_args(ctx, sh, rh, &s, &t))) return rc;
  if (t->scope == s) return 0; /* SCOPE.ATTACH.1: already a member */
  if (t->scope) tsmr__scope_del(t);
  tsmr__scope_add(s, t);
  tensor_stats(ctx, t)->attached++;
  return 0;
}

static int scope_dispose_all_l(tsmr_ctx *ctx, tsmr_handle sh, const tsmr_handle *keep,
                               int n_keep) {
  struct tsmr__scope *s;
  struct tsmr__tensor *t;
  int rc;
  if (n_keep < 0 || (n_keep > 0 && !keep)) return TSMR_EINVAL;
  if ((rc = tsmr__scope_get(ctx, sh, &s))) return rc;
  for (int i = 0; i < n_keep; i++) /* released or foreign items are ignored */
    if ((rc = tsmr__tensor_get(ctx, keep[i], &t))) return rc;
  if (!s) return TSMR_EDISPOSED;
  /* Park the kept members on a side list (still members of s), release the rest,
   * put them back: O(members + keep), duplicates in keep are harmless. */
  tsmr__list kept;
  tsmr__list_init(&kept);
  for (int i = 0; i < n_keep; i++) {
    (void)tsmr__tensor_get(ctx, keep[i], &t);
    if (!t || t->scope != s) continue; /* SCOPE.ALL.2: not a member: ignored */
    tsmr__list_del(&tsmr__body(t)->snode);
    tsmr__list_add(&kept, &tsmr__body(t)->snode);
  }
  scope_release_all(ctx, s);
  while (!tsmr__list_empty(&kept)) {
    tsmr__list *n = kept.next;
    tsmr__list_del(n);
    tsmr__list_add(&s->members, n);
  }
  return 0;
}

static int scope_handover_l(tsmr_ctx *ctx, tsmr_handle sh) {
  struct tsmr__scope *s;
  int rc;
  if ((rc = tsmr__scope_get(ctx, sh, &s))) return rc;
  if (!s) return TSMR_EDISPOSED;
  while (!tsmr__list_empty(&s->members)) /* SCOPE.HAND.1 */
    leave_scope(ctx, tsmr__scope_member(s->members.next));
  scope_finish(ctx, s);
  return 0;
}

static int scope_current_l(tsmr_ctx *ctx, tsmr_handle *out) {
  if (!out) return TSMR_EINVAL;
  *out = ctx->cur->innermost ? ctx->cur->innermost->handle : TSMR_NONE;
  return 0;
}

static int scope_info_l(tsmr_ctx *ctx, tsmr_handle sh, struct tsmr_scope_info *out) {
  struct tsmr__scope *s;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = tsmr__scope_get(ctx, sh, &s))) return rc;
  out->disposed = s == NULL;
  out->outer = s && s->outer ? s->outer->handle : TSMR_NONE;
  out->members = s ? s->n_members : 0;
  return 0;
}

static int thread_stats_l(tsmr_ctx *ctx, int kind, struct tsmr_scope_stats *out) {
  if (!out || (kind != TSMR_KIND_TENSOR && kind != TSMR_KIND_COMPOSITE))
    return TSMR_EINVAL;
  const struct tsmr__stats *st = &ctx->cur->st[kind];
  out->created_in_scope = st->c_in;
  out->created_outside = st->c_out;
  out->disposed_in_scope = st->d_in;
  out->disposed_outside = st->d_out;
  out->attached = st->attached;
  out->detached = st->detached;
  out->live = (int64_t)(st->c_in + st->c_out) - (int64_t)(st->d_in + st->d_out);
  return 0;
}

static int res_links_l(tsmr_ctx *ctx, tsmr_handle rh, struct tsmr_res_links *out) {
  struct tsmr__tensor *t;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, rh, &t))) return rc;
  out->kind = TSMR_KIND_TENSOR;
  out->scope = out->composite = TSMR_NONE;
  if (!t) return 0;
  out->kind = t->rkind == TSMR__RES_COMPOSITE ? TSMR_KIND_COMPOSITE : TSMR_KIND_TENSOR;
  out->scope = t->scope ? t->scope->handle : TSMR_NONE;
  const struct tsmr__tensor *parent = tsmr__body(t)->parent;
  out->composite = parent ? parent->handle : TSMR_NONE;
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_scope_open(tsmr_ctx *ctx, tsmr_handle *out) {
  TSMR__LOCKED(scope_open_l(ctx, out));
}

int tsmr_scope_dispose(tsmr_ctx *ctx, tsmr_handle sc) {
  TSMR__LOCKED(scope_dispose_l(ctx, sc));
}

int tsmr_scope_move_to_outer(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r) {
  TSMR__LOCKED(scope_move_to_outer_l(ctx, sc, r));
}

int tsmr_scope_move_to_other(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r,
                             tsmr_handle other) {
  TSMR__LOCKED(scope_move_to_other_l(ctx, sc, r, other));
}

int tsmr_scope_detach(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r) {
  TSMR__LOCKED(scope_detach_l(ctx, sc, r));
}

int tsmr_scope_attach(tsmr_ctx *ctx, tsmr_handle sc, tsmr_handle r) {
  TSMR__LOCKED(scope_attach_l(ctx, sc, r));
}

int tsmr_scope_dispose_all(tsmr_ctx *ctx, tsmr_handle sc, const tsmr_handle *keep,
                           int n_keep) {
  TSMR__LOCKED(scope_dispose_all_l(ctx, sc, keep, n_keep));
}

int tsmr_scope_handover(tsmr_ctx *ctx, tsmr_handle sc) {
  TSMR__LOCKED(scope_handover_l(ctx, sc));
}

int tsmr_scope_current(tsmr_ctx *ctx, tsmr_handle *out) {
  TSMR__LOCKED(scope_current_l(ctx, out));
}

int tsmr_scope_info(tsmr_ctx *ctx, tsmr_handle sc, struct tsmr_scope_info *out) {
  TSMR__LOCKED(scope_info_l(ctx, sc, out));
}

int tsmr_thread_stats(tsmr_ctx *ctx, int kind, struct tsmr_scope_stats *out) {
  TSMR__LOCKED(thread_stats_l(ctx, kind, out));
}

int tsmr_res_links(tsmr_ctx *ctx, tsmr_handle r, struct tsmr_res_links *out) {
  TSMR__LOCKED(res_links_l(ctx, r, out));
}

/* SCOPE.WRAP.1. The lock is not held while fn runs: fn calls back into the API. */
int tsmr_scope_wrapped(tsmr_ctx *ctx, int (*fn)(void *arg, tsmr_handle *result),
                       void *arg, tsmr_handle *out) {
  tsmr_handle sh, res = TSMR_NONE;
  struct tsmr__scope *s;
  struct tsmr__tensor *t;
  int rc;
  if (!ctx || !fn || !out) return TSMR_EINVAL;
  if ((rc = tsmr__enter(ctx))) return rc;
  rc = scope_open_l(ctx, &sh);
  tsmr__leave(ctx);
  if (rc) return rc;
  int frc = fn(arg, &res);
  rc = tsmr__enter(ctx); /* this thread's state exists: cannot fail */
  TSMR_ASSERT(rc == 0);
  rc = tsmr__scope_get(ctx, sh, &s);
  TSMR_ASSERT(rc == 0);
  if (frc == 0 && res != TSMR_NONE) {
    rc = tsmr__tensor_get(ctx, res, &t);
    if (rc == 0 && tsmr__res_kind(ctx, res, t) == TSMR__RES_COMPONENT) rc = TSMR_EINVAL;
    if (rc == 0 && !t) rc = TSMR_ERELEASED; /* fn released it, or disposed s itself */
    if (rc == 0 && s && t->scope == s) move_member(ctx, t, s->outer);
  }
  if (s) { /* fn may have disposed it itself */
    scope_release_all(ctx, s);
    scope_finish(ctx, s);
  }
  tsmr__leave(ctx);
  if (frc) return frc;
  if (rc) return rc;
  *out = res;
  return 0;
}
