/*
 * harness/src/exec/exec_thread.c: the case's worker threads and the `thread W { }` statement
 * (`parallel` blocks are exec_parallel.c's).
 * A worker lives until the case run ends or a `join W` ends it, so what is thread-local
 * in the implementation (its scope chain, its statistics: SCOPE.STACK.1, SCOPE.STAT.1)
 * persists from one `thread W` block to the next. After `join W`, W's name runs on a
 * new worker and a new model thread (SCOPE.THREAD.4): the slot of a case thread number
 * (cts__thread_slot) is where it runs now. The judge hands a worker one job at a time.
 * Every statement of a `thread W` block runs on the worker, DLPack ones too: a `drop`
 * there runs the export's deleter on W's thread, not the exporter's (DLP.DEL.4).
 */
#include <pthread.h>
#include <stdlib.h>

#include "exec_internal.h"
#include "util.h"

struct cts_worker {
  pthread_t tid;
  int started;
  int has_job;        /* set by the caller, cleared by the worker when done */
  int quit;
  cts_job_fn fn;
  void *arg;
};

struct cts_workers {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct cts_worker *w; /* indexed by thread number; [0] unused */
  size_t n;
  struct cts_run *run;
};

struct start {
  struct cts_workers *ws;
  size_t index;
};

static void *worker_main(void *p) {
  struct start st = *(struct start *)p;
  free(p);
  struct cts_workers *ws = st.ws;
  pthread_mutex_lock(&ws->mu);
  for (;;) {
    struct cts_worker *w = &ws->w[st.index];
    if (w->quit) break;
    if (!w->has_job) {
      pthread_cond_wait(&ws->cv, &ws->mu);
      continue;
    }
    cts_job_fn fn = w->fn;
    void *arg = w->arg;
    pthread_mutex_unlock(&ws->mu);
    fn(ws->run, arg);
    pthread_mutex_lock(&ws->mu);
    ws->w[st.index].has_job = 0;
    pthread_cond_broadcast(&ws->cv);
  }
  pthread_mutex_unlock(&ws->mu);
  return NULL;
}

static struct cts_workers *workers(struct cts_run *r) {
  if (!r->workers) {
    struct cts_workers *ws = cts_xcalloc(1, sizeof *ws);
    pthread_mutex_init(&ws->mu, NULL);
    pthread_cond_init(&ws->cv, NULL);
    ws->run = r;
    r->workers = ws;
  }
  return r->workers;
}

/* Called with ws->mu held. */
static void post(struct cts_workers *ws, int t, cts_job_fn fn, void *arg) {
  if ((size_t)t >= ws->n) {
    size_t cap = ws->n;
    cts_grow((void **)&ws->w, &cap, (size_t)t + 1, sizeof *ws->w);
    ws->n = (size_t)t + 1;
  }
  struct cts_worker *w = &ws->w[t];
  if (!w->started) {
    struct start *st = cts_xmalloc(sizeof *st);
    st->ws = ws;
    st->index = (size_t)t;
    if (pthread_create(&w->tid, NULL, worker_main, st) != 0) {
      free(st);
      /* No thread: run the job here rather than lose it; thread cases then fail on
       * their thread-local expectations, which names the problem. */
      pthread_mutex_unlock(&ws->mu);
      fn(ws->run, arg);
      pthread_mutex_lock(&ws->mu);
      return;
    }
    w->started = 1;
  }
  w->fn = fn;
  w->arg = arg;
  w->has_job = 1;
}

static int any_busy(struct cts_workers *ws, size_t n, const int *ts) {
  for (size_t i = 0; i < n; i++)
    if ((size_t)ts[i] < ws->n && ws->w[ts[i]].has_job) return 1;
  return 0;
}

void cts__on_threads(struct cts_run *r, size_t n, const int *ts, cts_job_fn fn, void **args) {
  struct cts_workers *ws = workers(r);
  pthread_mutex_lock(&ws->mu);
  for (size_t i = 0; i < n; i++) post(ws, ts[i], fn, args[i]);
  pthread_cond_broadcast(&ws->cv);
  while (any_busy(ws, n, ts)) pthread_cond_wait(&ws->cv, &ws->mu);
  pthread_mutex_unlock(&ws->mu);
}

void cts__on_thread(struct cts_run *r, int t, cts_job_fn fn, void *arg) {
  if (t == 0) {
    fn(r, arg);
    return;
  }
  cts__on_threads(r, 1, &t, fn, &arg);
}

int cts__thread_slot(struct cts_run *r, int number) {
  return (size_t)number < r->n_thread_slots ? r->thread_slot[number] : number;
}

/* Worker t's thread ends (joined); nothing runs on slot t again. */
static void end_worker(struct cts_run *r, int t) {
  struct cts_workers *ws = r->workers;
  if (!ws || (size_t)t >= ws->n || !ws->w[t].started) return;
  pthread_mutex_lock(&ws->mu);
  ws->w[t].quit = 1;
  pthread_cond_broadcast(&ws->cv);
  pthread_mutex_unlock(&ws->mu);
  pthread_join(ws->w[t].tid, NULL);
  ws->w[t].started = 0;
}

/* `join W`: W's thread ends, and its name moves to a fresh slot past every case thread
 * number and every earlier slot, so that the next `thread W` starts a new thread with a
 * new model thread (no scope chain, zero statistics: SCOPE.THREAD.4). */
int cts__exec_join(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int number = st->u.thread.number;
  end_worker(r, cts__thread_slot(r, number));
  if (!r->thread_slot) {
    r->n_thread_slots = r->c->n_threads;
    r->thread_slot = cts_xmalloc(r->n_thread_slots * sizeof *r->thread_slot);
    for (size_t i = 0; i < r->n_thread_slots; i++) r->thread_slot[i] = (int)i;
  }
  int fresh = (int)r->n_thread_slots;
  for (size_t i = 0; i < r->n_thread_slots; i++)
    if (r->thread_slot[i] >= fresh) fresh = r->thread_slot[i] + 1;
  r->thread_slot[number] = fresh;
  return cts__check_state(r);
}

void cts__stop_workers(struct cts_run *r) {
  free(r->thread_slot);
  r->thread_slot = NULL;
  r->n_thread_slots = 0;
  struct cts_workers *ws = r->workers;
  if (!ws) return;
  pthread_mutex_lock(&ws->mu);
  for (size_t i = 0; i < ws->n; i++) ws->w[i].quit = 1;
  pthread_cond_broadcast(&ws->cv);
  pthread_mutex_unlock(&ws->mu);
  for (size_t i = 0; i < ws->n; i++)
    if (ws->w[i].started) pthread_join(ws->w[i].tid, NULL);
  pthread_cond_destroy(&ws->cv);
  pthread_mutex_destroy(&ws->mu);
  free(ws->w);
  free(ws);
  r->workers = NULL;
}

/* ---- `thread W { }` ------------------------------------------------------------ */

struct block_job {
  const struct cts_block *body;
  int rc;
};

static void run_block_job(struct cts_run *r, void *arg) {
  struct block_job *job = arg;
  job->rc = cts__exec_block(r, job->body);
}

/* The block runs on its worker while this thread waits (one thread at a time). */
int cts__exec_thread(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int running = r->m.thread;
  struct block_job job = {&st->body, 0};
  int slot = cts__thread_slot(r, st->u.thread.number);
  cts_model_set_thread(&r->m, slot);
  cts__on_thread(r, slot, run_block_job, &job);
  cts_model_set_thread(&r->m, running);
  return job.rc;
}
