/*
 * harness/src/exec/exec_parallel.c: `parallel` blocks (SCOPE.THREAD.3). Their threads run at
 * the same time against the adapter alone, recording what each action returned (its
 * row's adapter half: a generic action's adapter call; a DLPack statement's export or
 * import call, or the deleter the judge runs as owner, DLP.DEL.4); after the join each
 * thread's record is replayed on the model in order (its row's model half, after what
 * its family checks first: can_replay), comparing codes, binding what was made, and
 * then checking it (a tensor's elements, an export's fields and elements).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "exec_internal.h"

/* What one action of a parallel thread did on the adapter. */
struct record {
  int rc;
  tsm_handle made;
};

/* Where a block's threads wait for each other before their first action, so that
 * their actions overlap however late a thread wakes: with no synchronisation between
 * them after it, ThreadSanitizer sees every pair of their actions as concurrent, also
 * when one thread happens to finish before another starts. A thread that waits more
 * than GATE_WAIT_S goes on alone (a worker that could not start runs its job on the
 * caller, one job after the other). */
#define GATE_WAIT_S 2

struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t arrived, n;
};

static void gate_pass(struct gate *g) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += GATE_WAIT_S;
  pthread_mutex_lock(&g->mu);
  if (++g->arrived == g->n) pthread_cond_broadcast(&g->cv);
  while (g->arrived < g->n)
    if (pthread_cond_timedwait(&g->cv, &g->mu, &until) == ETIMEDOUT) break;
  pthread_mutex_unlock(&g->mu);
}

struct recorder {
  const struct cts_stmt *thread;
  struct record *v;
  size_t n, cap;
  tsm_handle *local;      /* per symbol: bound in this block, else 0 */
  int unbound_sym;        /* >= 0: a name with no binding stopped the recording */
  struct gate *gate;      /* the block's, shared */
};

static tsm_handle record_handle(struct cts_run *r, struct recorder *rec, int sym) {
  if (sym == -1 || sym == -2) return TSM_NONE;
  if (sym == CTS_SYM_BOGUS) return CTS_BOGUS_HANDLE;
  if (rec->local[sym]) return rec->local[sym];
  if (r->sym_obj[sym] < 0) {
    rec->unbound_sym = sym;
    return TSM_NONE;
  }
  return cts__handle_of(r, sym, r->sym_obj[sym]);
}

static void record_block(struct cts_run *r, struct recorder *rec, const struct cts_block *b) {
  for (size_t i = 0; i < b->n && rec->unbound_sym < 0; i++) {
    const struct cts_stmt *st = &b->items[i];
    if (st->kind == CTS_REPEAT) {
      for (int64_t k = 0; k < st->u.repeat.times && rec->unbound_sym < 0; k++)
        record_block(r, rec, &st->body);
      continue;
    }
    struct cts_handles h;
    h.a = record_handle(r, rec, st->a);
    h.b = record_handle(r, rec, st->b);
    h.out = record_handle(r, rec, st->out);
    h.list = st->n_list ? cts_xmalloc(st->n_list * sizeof(tsm_handle)) : NULL;
    for (size_t k = 0; k < st->n_list; k++) h.list[k] = record_handle(r, rec, st->list[k]);
    struct record one = {0, TSM_NONE};
    if (rec->unbound_sym < 0) {
      one.rc = cts_stmt_exec[st->kind].adapter(r, st, &h, &one.made);
      if (one.rc == 0 && st->dst >= 0) rec->local[st->dst] = one.made;
      CTS_PUSH(rec->v, rec->n, rec->cap, one);
    }
    free(h.list);
  }
}

static void record_job(struct cts_run *r, void *arg) {
  struct recorder *rec = arg;
  gate_pass(rec->gate);
  record_block(r, rec, &rec->thread->body);
}

/* Resources a parallel block made, for their value checks once all threads are replayed. */
struct made_res {
  int id;
  const struct cts_stmt *st;
};

struct made_list {
  struct made_res *v;
  size_t n, cap;
};

/* What st made: a resource's values are checked after the block, when it is still valid
 * then (a later statement of its thread may have released it); a family's other object
 * (a DLPack export) is checked now, in the replay's order, while the model still holds
 * what it was made from. */
static int check_or_keep(struct cts_run *r, const struct cts_stmt *st, int id,
                         struct made_list *list) {
  const struct cts_stmt_exec *x = &cts_stmt_exec[st->kind];
  if (x->binds & CTS_SYM_RESOURCE) {
    struct made_res one = {id, st};
    CTS_PUSH(list->v, list->n, list->cap, one);
    return 0;
  }
  return x->made == CTS_MADE_FAMILY ? cts__check_made_values(r, st, id) : 0;
}

/* Replays one recorded action on the model, comparing codes and binding what it made. */
static int replay_one(struct cts_run *r, const struct cts_stmt *st, struct record one,
                      struct made_list *made_list) {
  const struct cts_stmt_exec *x = &cts_stmt_exec[st->kind];
  const struct cts_family *family = cts_families[x->family];
  struct cts_operands o;
  int made = CTS_NONE, expected_err = 0;
  int rc = cts__resolve(r, st, &o);
  if (rc == 0 && family->can_replay) rc = family->can_replay(r, st);
  if (rc == 0 && one.rc == CTS_NOT_RUN)
    rc = cts__cannot_run(r, "another thread of the block handed over or deleted an operand of "
                         "this first (a block's threads act on different resources)");
  if (rc == 0) {
    int model_rc = x->model(&r->m, st, &o, &made);
    rc = cts__judge_codes(r, model_rc, one.rc, &expected_err);
    if (rc == 0) rc = cts__bind_made(r, st, made, one.made);
    if (rc == 0 && made != CTS_NONE) rc = check_or_keep(r, st, made, made_list);
  }
  free(o.list);
  return rc ? -1 : 0;
}

/* Replays a recorded block on the model, in the same order. */
static int replay_block(struct cts_run *r, struct recorder *rec, const struct cts_block *b,
                        size_t *at, struct made_list *made_list) {
  for (size_t i = 0; i < b->n; i++) {
    const struct cts_stmt *st = &b->items[i];
    r->cur = st;
    if (st->kind == CTS_REPEAT) {
      for (int64_t k = 0; k < st->u.repeat.times; k++)
        if (replay_block(r, rec, &st->body, at, made_list)) return -1;
      continue;
    }
    if (*at >= rec->n)
      return cts__report(r, CTS_ERROR, "'%s' is not bound when thread %s runs this",
                         r->c->syms[rec->unbound_sym].name, r->c->threads[rec->thread->u.thread.number]);
    if (replay_one(r, st, rec->v[(*at)++], made_list)) return -1;
  }
  return 0;
}

/* The value checks of the resources the block made that are still valid, in the order
 * they were made. */
static int check_made(struct cts_run *r, const struct made_list *made) {
  for (size_t i = 0; i < made->n; i++) {
    r->cur = made->v[i].st;
    if (r->m.res[made->v[i].id].valid &&
        cts__check_made_values(r, made->v[i].st, made->v[i].id))
      return -1;
  }
  return 0;
}

static void check_thread_job(struct cts_run *r, void *arg) {
  int *rc = arg;
  *rc = cts__observe_thread(r);
}

/* A parallel block's threads: what each recorded, its model thread and worker slot. */
struct block_threads {
  size_t n;
  struct recorder *recs;
  int *ts;
  void **args;
  struct gate gate;
};

static void threads_new(struct cts_run *r, const struct cts_stmt *st, struct block_threads *b) {
  size_t n = b->n = st->body.n;
  b->recs = cts_xcalloc(n, sizeof *b->recs);
  b->ts = cts_xcalloc(n, sizeof(int));
  b->args = cts_xcalloc(n, sizeof(void *));
  pthread_mutex_init(&b->gate.mu, NULL);
  pthread_cond_init(&b->gate.cv, NULL);
  b->gate.arrived = 0;
  b->gate.n = n;
  for (size_t i = 0; i < n; i++) {
    b->recs[i].thread = &st->body.items[i];
    b->recs[i].local = cts_xcalloc(r->c->n_syms, sizeof(tsm_handle));
    b->recs[i].unbound_sym = -1;
    b->recs[i].gate = &b->gate;
    b->ts[i] = cts__thread_slot(r, st->body.items[i].u.thread.number);
    b->args[i] = &b->recs[i];
  }
}

static void threads_free(struct block_threads *b) {
  for (size_t i = 0; i < b->n; i++) {
    free(b->recs[i].v);
    free(b->recs[i].local);
  }
  pthread_cond_destroy(&b->gate.cv);
  pthread_mutex_destroy(&b->gate.mu);
  free(b->recs);
  free(b->ts);
  free(b->args);
}

int cts__exec_parallel(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  struct block_threads b;
  threads_new(r, st, &b);
  cts__on_threads(r, b.n, b.ts, record_job, b.args);
  int running = r->m.thread, rc = 0;
  struct made_list made = {0};
  for (size_t i = 0; rc == 0 && i < b.n; i++) {
    size_t at = 0;
    cts_model_set_thread(&r->m, b.ts[i]);
    rc = replay_block(r, &b.recs[i], &st->body.items[i].body, &at, &made);
  }
  if (rc == 0) rc = check_made(r, &made);
  free(made.v);
  r->cur = st;
  for (size_t i = 0; rc == 0 && i < b.n; i++) {
    cts_model_set_thread(&r->m, b.ts[i]);
    cts__on_thread(r, b.ts[i], check_thread_job, &rc);
  }
  cts_model_set_thread(&r->m, running);
  if (rc == 0) rc = cts__check_state(r);
  threads_free(&b);
  return rc;
}
