/*
 * harness/src/exec/exec_parallel.c: `parallel` blocks (SCOPE.THREAD.3). Their threads run at
 * the same time against the adapter alone, recording what each generic action returned
 * (its row's adapter call); after the join each thread's record is replayed on the model
 * in order (its row's model function), comparing codes, binding what was made and then
 * checking it.
 */
#include <stdlib.h>

#include "exec_internal.h"

/* What one action of a parallel thread did on the adapter. */
struct record {
  int rc;
  tsm_handle made;
};

struct recorder {
  const struct cts_stmt *thread;
  struct record *v;
  size_t n, cap;
  tsm_handle *local;      /* per symbol: bound in this block, else 0 */
  int unbound_sym;        /* >= 0: a name with no binding stopped the recording */
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

/* Replays a recorded block on the model, in the same order, comparing codes. */
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
    struct record one = rec->v[(*at)++];
    struct cts_operands o;
    int made = CTS_NONE, expected_err = 0;
    int rc = cts__resolve(r, st, &o);
    if (rc == 0) {
      int model_rc = cts_stmt_exec[st->kind].model(&r->m, st, &o, &made);
      rc = cts__judge_codes(r, model_rc, one.rc, &expected_err);
      if (rc == 0) rc = cts__bind_made(r, st, made, one.made);
      if (rc == 0 && (cts_stmt_exec[st->kind].binds & CTS_SYM_RESOURCE) && made != CTS_NONE) {
        struct made_res one_made = {made, st};
        CTS_PUSH(made_list->v, made_list->n, made_list->cap, one_made);
      }
    }
    free(o.list);
    if (rc) return -1;
  }
  return 0;
}

static void check_thread_job(struct cts_run *r, void *arg) {
  int *rc = arg;
  *rc = cts__observe_thread(r);
}

int cts__exec_parallel(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  size_t n = st->body.n;
  struct recorder *recs = cts_xcalloc(n, sizeof *recs);
  int *ts = cts_xcalloc(n, sizeof(int));
  void **args = cts_xcalloc(n, sizeof(void *));
  for (size_t i = 0; i < n; i++) {
    recs[i].thread = &st->body.items[i];
    recs[i].local = cts_xcalloc(r->c->n_syms, sizeof(tsm_handle));
    recs[i].unbound_sym = -1;
    ts[i] = cts__thread_slot(r, st->body.items[i].u.thread.number);
    args[i] = &recs[i];
  }
  cts__on_threads(r, n, ts, record_job, args);
  int running = r->m.thread, rc = 0;
  struct made_list made = {0};
  for (size_t i = 0; rc == 0 && i < n; i++) {
    size_t at = 0;
    cts_model_set_thread(&r->m, ts[i]);
    rc = replay_block(r, &recs[i], &st->body.items[i].body, &at, &made);
  }
  for (size_t i = 0; rc == 0 && i < made.n; i++) {
    r->cur = made.v[i].st;
    if (r->m.res[made.v[i].id].valid) rc = cts__check_made_values(r, made.v[i].st, made.v[i].id);
  }
  free(made.v);
  r->cur = st;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    cts_model_set_thread(&r->m, ts[i]);
    cts__on_thread(r, ts[i], check_thread_job, &rc);
  }
  cts_model_set_thread(&r->m, running);
  if (rc == 0) rc = cts__check_state(r);
  for (size_t i = 0; i < n; i++) {
    free(recs[i].v);
    free(recs[i].local);
  }
  free(recs);
  free(ts);
  free(args);
  return rc;
}

