/*
 * impl/tests/test_lock.c: the biased context lock and its lanes (impl/src/lock.h)
 * through the public API, with a look at the lock's state (impl/src/internal.h) so that
 * a test of the bias cannot pass while no lock was ever biased, nor a test of the lanes
 * while no call went through one:
 *   grant     the first thread to call in owns the lock (where the kernel has the
 *             expedited membarrier the revocation needs; else no lock is biased);
 *   contend   the owner and another thread create and release at once, each in its own
 *             sub-manager; the other thread's first call revokes the bias (never
 *             granted again) while the owner is busy; every count and live byte is as
 *             if the calls had run one after the other (SCOPE.THREAD.3); ROUNDS
 *             contexts, so that a revocation meets the owner inside many times;
 *             Once revoked, the lock opens lanes (lock.h) to these creates and releases:
 *             over the ROUNDS contexts, each worker's lane took calls; and ROUNDS
 *             contexts with both workers in one sub-manager;
 *   lanes     one thread creates and releases in its sub-manager, keeping LIVE tensors
 *             alive, while another keeps reading the live bytes (a call that closes the
 *             lanes and folds their counts): every reading is a whole number of the
 *             worker's tensors, within what it holds at that moment;
 *   exit      the owner ends; a new thread (which glibc may give the same pthread_t)
 *             starts with no statistics of its own (SCOPE.THREAD.4) and revokes;
 *   two       one thread owns two contexts and alternates between them;
 *   deleter   an export's DLPack deleter runs on another thread than the owner
 *             (DLP.DEL.1): it takes the lock, revoking the bias;
 *   orphans   exports outlive their context (DLP.EXPORT.3): the anchor their deleters
 *             find counts them only from the close on, and the last one frees it; then
 *             the deleters run on another thread while the owner closes the context;
 *   fork      a child process inherits a biased lock: its one thread is the owner,
 *             and a thread it starts revokes the bias there (the child's membarrier,
 *             which may need registering again).
 * ci/check.sh runs it as it is and in the tsan lane (ThreadSanitizer build).
 * Run: $(B)/bin/test-lock; prints "# lock: N checks, 0 failed".
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dlpack/dlpack.h>

#include "check.h"
#include "dlx.h" /* the export anchor; and internal.h */

#define ROUNDS 50    /* contexts of the contention test, each revoked once under load */
#define ITERS 20000  /* create + release per thread and context in the contention test */
#define LIVE 64      /* tensors each thread keeps alive while it works */
#define READINGS 200 /* of the live bytes while the lanes test's worker works */

#define OK(call) CHECK((call) == 0, "%s", #call)

static const struct tsmr_tensor_desc desc4 = {TSMR_F32, 1, {4}};

/* Whether this kernel lets a lock be biased: a context's first caller owns it. */
static int bias_supported;

static uint64_t lock_owner(tsmr_ctx *ctx) {
  return atomic_load(&ctx->lock.owner);
}

static void test_grant(void) {
  tsmr_ctx *ctx;
  tsmr_handle root;
  OK(tsmr_ctx_open("cpu", &ctx));
  CHECK(lock_owner(ctx) == TSMR__LOCK_UNBIASED, "a new context's lock is not biased yet");
  OK(tsmr_mgr_root(ctx, &root));
  bias_supported = lock_owner(ctx) != TSMR__LOCK_UNBIASED;
  if (bias_supported)
    CHECK(lock_owner(ctx) == tsmr__tls.thread_id, "biased toward %llu, the caller is %llu",
          (unsigned long long)lock_owner(ctx), (unsigned long long)tsmr__tls.thread_id);
  else
    printf("# no expedited membarrier here: every lock takes its mutex\n");
  tsmr_ctx_close(ctx);
}

/* One side of the contention test: ITERS create + release in sub, keeping LIVE
 * tensors alive; then its own statistics. */
struct worker {
  tsmr_ctx *ctx;
  tsmr_handle sub;
  pthread_barrier_t *start;
  int errors;
  struct tsmr_scope_stats st;
  uint64_t lane_calls;   /* of its thread's state: calls its lane took */
  atomic_int steady;     /* 1 from its LIVE creates until its last releases begin */
  atomic_int *until;     /* not NULL: it goes on past ITERS until this is set */
  atomic_int done;       /* 1 once it returns */
};

static void *work(void *arg) {
  struct worker *w = arg;
  tsmr_handle live[LIVE];
  pthread_barrier_wait(w->start);
  for (int i = 0; i < LIVE; i++)
    w->errors += tsmr_tensor_new(w->ctx, w->sub, &desc4, NULL, &live[i]) != 0;
  atomic_store(&w->steady, 1);
  for (long i = 0; i < ITERS || (w->until && !atomic_load(w->until)); i++) {
    tsmr_handle *slot = &live[i % LIVE];
    w->errors += tsmr_res_release(w->ctx, *slot) != 0;
    w->errors += tsmr_tensor_new(w->ctx, w->sub, &desc4, NULL, slot) != 0;
  }
  atomic_store(&w->steady, 0);
  for (int i = 0; i < LIVE; i++) w->errors += tsmr_res_release(w->ctx, live[i]) != 0;
  w->errors += tsmr_thread_stats(w->ctx, TSMR_KIND_TENSOR, &w->st) != 0;
  /* its own state, read by its own thread: the lanes never write another's */
  w->lane_calls = tsmr__tls.serial == w->ctx->serial ? tsmr__tls.ts->lane_calls : 0;
  atomic_store(&w->done, 1);
  return NULL;
}

/* One context of the contention test; lane_calls: IN/OUT, each worker's lane calls
 * added; shared: both workers in one sub-manager (whose lane owner then changes hands,
 * and each list of it is touched by one thread at a time or the counts go wrong). */
static void contend_once(uint64_t lane_calls[2], int shared) {
  tsmr_ctx *ctx;
  tsmr_handle root;
  pthread_barrier_t start;
  pthread_t th;
  struct worker w[2];
  OK(tsmr_ctx_open("cpu", &ctx));
  OK(tsmr_mgr_root(ctx, &root)); /* this thread owns the lock */
  pthread_barrier_init(&start, NULL, 2);
  for (int i = 0; i < 2; i++) {
    w[i] = (struct worker){ctx, TSMR_NONE, &start, 0, {0}, 0, 0, NULL, 0};
    if (shared && i) w[i].sub = w[0].sub;
    else OK(tsmr_mgr_new_sub(ctx, root, &w[i].sub));
  }
  if (pthread_create(&th, NULL, work, &w[1]) != 0) {
    CHECK(0, "pthread_create failed");
    pthread_barrier_destroy(&start);
    tsmr_ctx_close(ctx);
    return;
  }
  work(&w[0]);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < 2; i++) {
    CHECK(w[i].errors == 0, "worker %d: %d calls failed", i, w[i].errors);
    CHECK(w[i].st.created_outside == ITERS + LIVE && w[i].st.disposed_outside == ITERS + LIVE,
          "worker %d counted %llu created, %llu disposed", i,
          (unsigned long long)w[i].st.created_outside,
          (unsigned long long)w[i].st.disposed_outside);
    struct tsmr_mgr_info info;
    OK(tsmr_mgr_info(ctx, w[i].sub, &info));
    CHECK(info.live == 0, "worker %d's manager has %llu live", i, (unsigned long long)info.live);
    lane_calls[i] += w[i].lane_calls;
  }
  uint64_t bytes = 1;
  OK(tsmr_live_bytes(ctx, &bytes));
  CHECK(bytes == 0, "%llu live bytes", (unsigned long long)bytes);
  if (bias_supported)
    CHECK(lock_owner(ctx) == TSMR__LOCK_REVOKED, "the other thread's calls revoked the bias");
  tsmr_ctx_close(ctx);
}

static void test_contend(void) {
  uint64_t lane_calls[2] = {0, 0};
  uint64_t shared_calls[2] = {0, 0};
  for (int r = 0; r < ROUNDS; r++) contend_once(lane_calls, 0);
  for (int r = 0; r < ROUNDS; r++) contend_once(shared_calls, 1);
  printf("# contend: lane calls %llu (the owner's thread), %llu (the other); in one "
         "sub-manager %llu and %llu\n",
         (unsigned long long)lane_calls[0], (unsigned long long)lane_calls[1],
         (unsigned long long)shared_calls[0], (unsigned long long)shared_calls[1]);
  if (bias_supported)
    for (int i = 0; i < 2; i++)
      CHECK(lane_calls[i] > 0, "worker %d: no create or release went through its lane", i);
}

/* test_lanes' reader: the live bytes of ctx, where w alone works, until w is done. */
static void read_while_working(tsmr_ctx *ctx, struct worker *w) {
  const uint64_t each = 4 * sizeof(float);
  long readings = 0, steady = 0, bad = 0;
  uint64_t worst = 0;
  for (;;) {
    int s1 = atomic_load(&w->steady);
    uint64_t bytes = UINT64_MAX;
    OK(tsmr_live_bytes(ctx, &bytes));
    int s2 = atomic_load(&w->steady);
    readings++;
    /* within its LIVE (LIVE - 1 between a release and its create) while steady */
    int whole = bytes % each == 0 && bytes <= LIVE * each;
    if (s1 && s2) {
      steady++;
      whole = whole && bytes >= (LIVE - 1) * each;
    }
    if (!whole && !bad++) worst = bytes;
    if (steady >= READINGS) atomic_store(w->until, 1);
    if (atomic_load(&w->done)) break;
    struct timespec pause = {0, 20000};
    nanosleep(&pause, NULL);
  }
  CHECK(bad == 0, "%ld of %ld readings of the live bytes were off (the first: %llu)", bad,
        readings, (unsigned long long)worst);
  CHECK(steady >= READINGS, "%ld readings while the worker worked", steady);
  printf("# lanes: %ld readings (%ld while the worker worked)\n", readings, steady);
}

/* test_lanes: the worker's bytes as another thread reads them. */
static void test_lanes(void) {
  tsmr_ctx *ctx;
  tsmr_handle root;
  pthread_barrier_t start;
  pthread_t th;
  OK(tsmr_ctx_open("cpu", &ctx));
  OK(tsmr_mgr_root(ctx, &root));
  pthread_barrier_init(&start, NULL, 2);
  atomic_int enough = 0; /* readings while it works: it may stop */
  struct worker w = {ctx, TSMR_NONE, &start, 0, {0}, 0, 0, &enough, 0};
  OK(tsmr_mgr_new_sub(ctx, root, &w.sub));
  if (pthread_create(&th, NULL, work, &w) != 0) {
    CHECK(0, "pthread_create failed");
    pthread_barrier_destroy(&start);
    tsmr_ctx_close(ctx);
    return;
  }
  pthread_barrier_wait(&start);
  read_while_working(ctx, &w);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&start);
  CHECK(w.errors == 0, "the worker: %d calls failed", w.errors);
  uint64_t bytes = 1;
  OK(tsmr_live_bytes(ctx, &bytes));
  CHECK(bytes == 0, "%llu live bytes at the end", (unsigned long long)bytes);
  printf("# lanes: the worker's lane calls %llu\n", (unsigned long long)w.lane_calls);
  tsmr_ctx_close(ctx);
}

/* test_exit: the owner's thread. */
static void *own_and_end(void *arg) {
  tsmr_ctx *ctx = arg;
  tsmr_handle root, t, scope;
  if (tsmr_mgr_root(ctx, &root) || tsmr_scope_open(ctx, &scope) ||
      tsmr_tensor_new(ctx, root, &desc4, NULL, &t))
    return (void *)1; /* t stays alive in the scope this thread leaves open */
  return (void *)(uintptr_t)(bias_supported && lock_owner(ctx) != tsmr__tls.thread_id);
}

static void *newcomer(void *arg) {
  tsmr_ctx *ctx = arg;
  struct tsmr_scope_stats st;
  tsmr_handle sc = 1;
  if (tsmr_thread_stats(ctx, TSMR_KIND_TENSOR, &st) || tsmr_scope_current(ctx, &sc))
    return (void *)1;
  return (void *)(uintptr_t)(st.created_in_scope != 0 || sc != TSMR_NONE);
}

static void test_exit(void) {
  tsmr_ctx *ctx;
  pthread_t th;
  void *res = (void *)1;
  OK(tsmr_ctx_open("cpu", &ctx));
  if (pthread_create(&th, NULL, own_and_end, ctx) == 0) pthread_join(th, &res);
  CHECK(res == NULL, "the first thread did not own the lock");
  res = (void *)1;
  if (pthread_create(&th, NULL, newcomer, ctx) == 0) pthread_join(th, &res);
  CHECK(res == NULL, "a new thread inherited the ended owner's scope or statistics");
  if (bias_supported) CHECK(lock_owner(ctx) == TSMR__LOCK_REVOKED, "not revoked");
  uint64_t bytes = 0;
  OK(tsmr_live_bytes(ctx, &bytes));
  CHECK(bytes == 16, "%llu live bytes, expected the ended thread's 16",
        (unsigned long long)bytes);
  tsmr_ctx_close(ctx);
}

static void test_two(void) {
  tsmr_ctx *ctx[2];
  tsmr_handle root[2], t;
  for (int c = 0; c < 2; c++) {
    OK(tsmr_ctx_open("cpu", &ctx[c]));
    OK(tsmr_mgr_root(ctx[c], &root[c]));
  }
  for (int i = 0; i < 1000; i++)
    for (int c = 0; c < 2; c++) {
      OK(tsmr_tensor_new(ctx[c], root[c], &desc4, NULL, &t));
      if (i % 2) OK(tsmr_res_release(ctx[c], t));
    }
  for (int c = 0; c < 2; c++) {
    struct tsmr_scope_stats st;
    uint64_t bytes = 0;
    OK(tsmr_thread_stats(ctx[c], TSMR_KIND_TENSOR, &st));
    CHECK(st.created_outside == 1000 && st.disposed_outside == 500,
          "context %d: %llu created, %llu disposed", c,
          (unsigned long long)st.created_outside, (unsigned long long)st.disposed_outside);
    OK(tsmr_live_bytes(ctx[c], &bytes));
    CHECK(bytes == 500 * 16, "context %d: %llu live bytes", c, (unsigned long long)bytes);
    if (bias_supported) CHECK(lock_owner(ctx[c]) == tsmr__tls.thread_id, "context %d", c);
    tsmr_ctx_close(ctx[c]);
  }
}

/* test_deleter: runs an export's deleter, as a consumer on its own thread would. */
static void *drop_export(void *arg) {
  DLManagedTensorVersioned *m = arg;
  m->deleter(m);
  return NULL;
}

static void test_deleter(void) {
  tsmr_ctx *ctx;
  tsmr_handle root, t;
  void *managed = NULL;
  pthread_t th;
  uint64_t bytes = 1;
  OK(tsmr_ctx_open("cpu", &ctx));
  OK(tsmr_mgr_root(ctx, &root));
  OK(tsmr_tensor_new(ctx, root, &desc4, NULL, &t));
  OK(tsmr_dlpack_export(ctx, t, TSMR_DLPACK_VERSIONED, 0, &managed));
  OK(tsmr_res_release(ctx, t));
  OK(tsmr_live_bytes(ctx, &bytes));
  CHECK(bytes == 16, "the export keeps the storage: %llu live bytes", (unsigned long long)bytes);
  if (managed && pthread_create(&th, NULL, drop_export, managed) == 0) pthread_join(th, NULL);
  OK(tsmr_live_bytes(ctx, &bytes));
  CHECK(bytes == 0, "after the deleter ran on another thread: %llu live bytes",
        (unsigned long long)bytes);
  if (bias_supported) CHECK(lock_owner(ctx) == TSMR__LOCK_REVOKED, "not revoked");
  tsmr_ctx_close(ctx);
}

/* test_orphans: exports that outlive their context. The anchor (impl/src/dlx.h) holds
 * one reference for the open context and none for the exports until the close gives
 * each live one its own, which its deleter drops: the last deleter frees the anchor.
 * Then the same with the deleters running on another thread while the owner closes the
 * context, so that each deleter may meet the context open, closing or closed (for the
 * tsan lane; a deleter that touched a freed anchor, or an anchor never freed, is what
 * it and ASan would report). */
#define ORPHANS 64
struct orphans {
  void *managed[ORPHANS];
  pthread_barrier_t start;
  int dropped;
};

static void *drop_orphans(void *arg) {
  struct orphans *o = arg;
  pthread_barrier_wait(&o->start);
  for (int i = 0; i < ORPHANS; i++) {
    if (o->managed[i]) {
      drop_export(o->managed[i]);
      o->dropped++;
    }
  }
  return NULL;
}

static void export_orphans(tsmr_ctx *ctx, struct orphans *o) {
  tsmr_handle root, t;
  OK(tsmr_mgr_root(ctx, &root));
  for (int i = 0; i < ORPHANS; i++) {
    o->managed[i] = NULL;
    OK(tsmr_tensor_new(ctx, root, &desc4, NULL, &t));
    OK(tsmr_dlpack_export(ctx, t, TSMR_DLPACK_VERSIONED, 0, &o->managed[i]));
  }
  o->dropped = 0;
}

static void test_orphans(void) {
  static struct orphans o;
  tsmr_ctx *ctx;
  pthread_t th;
  OK(tsmr_ctx_open("cpu", &ctx));
  export_orphans(ctx, &o);
  struct tsmr__dlx_anchor *a = ctx->dlx_anchor;
  CHECK(a && atomic_load(&a->refs) == 1, "open: the context's reference alone, not %llu",
        a ? (unsigned long long)atomic_load(&a->refs) : 0ull);
  tsmr_ctx_close(ctx);
  CHECK(atomic_load(&a->refs) == ORPHANS, "closed: one reference per export, not %llu",
        (unsigned long long)atomic_load(&a->refs));
  for (int i = 0; i < ORPHANS - 1; i++) drop_export(o.managed[i]);
  CHECK(atomic_load(&a->refs) == 1, "one export left: %llu references",
        (unsigned long long)atomic_load(&a->refs));
  drop_export(o.managed[ORPHANS - 1]);
  for (int round = 0; round < 8; round++) {
    OK(tsmr_ctx_open("cpu", &ctx));
    export_orphans(ctx, &o);
    pthread_barrier_init(&o.start, NULL, 2);
    if (pthread_create(&th, NULL, drop_orphans, &o) != 0) {
      CHECK(0, "pthread_create");
      pthread_barrier_destroy(&o.start);
      tsmr_ctx_close(ctx);
      return;
    }
    pthread_barrier_wait(&o.start);
    tsmr_ctx_close(ctx);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&o.start);
    CHECK(o.dropped == ORPHANS, "round %d: %d deleters returned", round, o.dropped);
  }
}

/* test_fork: a thread of the child process. */
static void *child_call(void *arg) {
  tsmr_ctx *ctx = arg;
  tsmr_handle root, t;
  if (tsmr_mgr_root(ctx, &root) || tsmr_tensor_new(ctx, root, &desc4, NULL, &t) ||
      tsmr_res_release(ctx, t))
    return (void *)1;
  return NULL;
}

/* The child's checks: RETURN 0 when all hold (its exit status). */
static int child_checks(tsmr_ctx *ctx, tsmr_handle t) {
  pthread_t th;
  void *res = (void *)1;
  uint64_t bytes = 1;
  int bad = tsmr_res_release(ctx, t) != 0;
  if (bias_supported) bad |= (lock_owner(ctx) != tsmr__tls.thread_id) << 1;
  if (pthread_create(&th, NULL, child_call, ctx) == 0) pthread_join(th, &res);
  bad |= (res != NULL) << 2;
  if (bias_supported) bad |= (lock_owner(ctx) != TSMR__LOCK_REVOKED) << 3;
  bad |= (tsmr_live_bytes(ctx, &bytes) != 0 || bytes != 0) << 4;
  tsmr_ctx_close(ctx);
  return bad;
}

static void test_fork(void) {
  tsmr_ctx *ctx;
  tsmr_handle root, t;
  OK(tsmr_ctx_open("cpu", &ctx));
  OK(tsmr_mgr_root(ctx, &root));
  OK(tsmr_tensor_new(ctx, root, &desc4, NULL, &t));
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(child_checks(ctx, t));
  int status = -1;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0,
        "the child failed: wait status %#x (exit bits: 1 release, 2 owner, 4 thread, "
        "8 revoked, 16 live bytes)", status);
  uint64_t bytes = 0;
  OK(tsmr_live_bytes(ctx, &bytes));
  CHECK(bytes == 16, "the parent keeps its tensor: %llu live bytes", (unsigned long long)bytes);
  if (bias_supported)
    CHECK(lock_owner(ctx) == tsmr__tls.thread_id, "the parent's lock is biased still");
  tsmr_ctx_close(ctx);
}

int main(void) {
  test_grant();
  test_contend();
  test_lanes();
  test_exit();
  test_two();
  test_deleter();
  test_orphans();
  test_fork();
  printf("# lock: %d checks, %d failed\n", checks, failed);
  return failed != 0;
}
