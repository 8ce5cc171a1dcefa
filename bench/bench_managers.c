/*
 * bench/bench_managers.c: micro-benchmarks of libtsmref's bookkeeping, each with its
 * baseline measured in the same run (MGR.CREATE.1, MGR.REL.1, MGR.CLOSE.1).
 *   1. scoped create + release of N small tensors (4 f32) in a sub-manager, against
 *      malloc + zero + free of the same byte size: ns/op for both and the ratio.
 *   2. closing a manager that holds N tensors: ns per resource, against free() of as
 *      many buffers, and beside the floor of any close that walks its records: a bare
 *      walk of N blocks of a record head's size along their links.
 *   3. disposing a scope that holds N tensors (SCOPE.DISP.1): ns per resource; and
 *      create + release inside an open scope (registration and statistics).
 *   4. one uncontended pthread mutex lock + unlock pair, for reference: what every
 *      tsmr_ call cost before the context lock was biased (impl/src/lock.h), and what
 *      a call still costs a thread that is not the lock's owner (SCOPE.THREAD.3).
 *   5. bench 1 on 2 threads at once, each in a sub-manager of its own of one context,
 *      against 2 threads doing malloc + memset + free: ns/op of the slower thread
 *      (create_release_vs_malloc_2managers); and the same with both threads in one
 *      sub-manager (create_release_vs_malloc_1manager_2threads, reported: no goal).
 * Benches 1 and 5 alternate with their baselines for PAIRS pairs of rounds of N / 5
 * operations and report the medians and the median of the pairs' ratios
 * (bench_util.h); the others report the best of their rounds. With
 * $BENCH_JSON set, the figures create_release_vs_malloc(_2managers,
 * _1manager_2threads), manager_close_ns_per_resource, manager_close_vs_free,
 * manager_close_vs_walk_floor and walk_floor_vs_free go there too (bench_util.h).
 * --count-instructions N runs the loops of benches 1, 2 and 5 and their baselines once
 * each (not the walks: they measure memory, not instructions), N operations (resources
 * for the close), each in a bench_ir_* function of its own, for
 * callgrind to count (bench/count_instructions.sh; bench_util.h says how).
 * Usage: bench-managers [N]   (default 1000000)
 *        bench-managers --count-instructions N
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "tsmref_test.h"


static double bench_malloc(long n, size_t bytes) {
  void *volatile sink; /* per call: bench 5 runs this on two threads at once */
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    void *p = malloc(bytes);
    if (!p) exit(1);
    memset(p, 0, bytes);
    sink = p;
    free(sink);
  }
  return (now_ns() - t0) / (double)n;
}

static double bench_scoped(tsmr_ctx *ctx, tsmr_handle sub, long n,
                           const struct tsmr_tensor_desc *d) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    tsmr_handle t;
    if (tsmr_tensor_new(ctx, sub, d, NULL, &t) != 0 || tsmr_res_release(ctx, t) != 0) {
      fprintf(stderr, "bench_scoped: create/release failed\n");
      exit(1);
    }
  }
  return (now_ns() - t0) / (double)n;
}

/* How bench 5's threads work: malloc + memset + free, or create + release in a
 * sub-manager each, or both in one sub-manager. */
enum bench_side { BENCH_MALLOC, BENCH_TWO_MANAGERS, BENCH_ONE_MANAGER };

/* One thread of bench 5: after the barrier, n create+release (side not BENCH_MALLOC) or
 * malloc+memset+free; ns_per_op: OUT. counted: --count-instructions, where the thread
 * warms up first and runs its n operations in its side's bench_ir_* function. */
struct bench_thread {
  tsmr_ctx *ctx;
  tsmr_handle sub;
  long n;
  pthread_barrier_t *start;
  enum bench_side side;
  int counted;
  double ns_per_op;
};

/* n operations of b's side on this thread: ns/op. */
static double bench_thread_loop(const struct bench_thread *b, long n) {
  struct tsmr_tensor_desc d = {TSMR_F32, 1, {4}};
  return b->side != BENCH_MALLOC ? bench_scoped(b->ctx, b->sub, n, &d)
                                 : bench_malloc(n, 4 * sizeof(float));
}

/* The counted loops of bench 5, one function per side, so that each side's count is
 * its own (both threads of a side add into the one function). Each checks that it runs
 * the side it is named for, which also keeps the compiler from folding their otherwise
 * identical bodies into one function (gcc's identical code folding), whose count would
 * then be all three sides'. */
static void bench_counted_side(struct bench_thread *b, enum bench_side side) {
  if (b->side != side) {
    fprintf(stderr, "bench-managers: counted side %d in the function of side %d\n",
            (int)b->side, (int)side);
    exit(1);
  }
  b->ns_per_op = bench_thread_loop(b, b->n);
}
static BENCH_IR_FN void bench_ir_threads_malloc(struct bench_thread *b) {
  bench_counted_side(b, BENCH_MALLOC);
}
static BENCH_IR_FN void bench_ir_threads_2managers(struct bench_thread *b) {
  bench_counted_side(b, BENCH_TWO_MANAGERS);
}
static BENCH_IR_FN void bench_ir_threads_1manager(struct bench_thread *b) {
  bench_counted_side(b, BENCH_ONE_MANAGER);
}

static void *bench_thread_run(void *arg) {
  struct bench_thread *b = arg;
  if (!b->counted) {
    pthread_barrier_wait(b->start);
    b->ns_per_op = bench_thread_loop(b, b->n);
    return NULL;
  }
  /* Warm-up (bench_util.h), both threads, before either counts: the counted loops then
   * run side by side as the timed ones do. */
  bench_thread_loop(b, b->n / 10 + 1);
  pthread_barrier_wait(b->start);
  if (b->side == BENCH_MALLOC)
    bench_ir_threads_malloc(b);
  else if (b->side == BENCH_TWO_MANAGERS)
    bench_ir_threads_2managers(b);
  else
    bench_ir_threads_1manager(b);
  return NULL;
}

/* Bench 5's figure for one side: the slower of 2 threads. counted: see bench_thread. */
static double bench_two_threads(tsmr_ctx *ctx, tsmr_handle root, long n, enum bench_side side,
                                int counted) {
  pthread_barrier_t start;
  pthread_t th[2];
  struct bench_thread b[2];
  tsmr_handle shared = TSMR_NONE;
  if (side == BENCH_ONE_MANAGER) BENCH_CHECK(tsmr_mgr_new_sub(ctx, root, &shared));
  pthread_barrier_init(&start, NULL, 2);
  for (int i = 0; i < 2; i++) {
    b[i] = (struct bench_thread){ctx, shared, n, &start, side, counted, 0};
    if (side == BENCH_TWO_MANAGERS) BENCH_CHECK(tsmr_mgr_new_sub(ctx, root, &b[i].sub));
    if (pthread_create(&th[i], NULL, bench_thread_run, &b[i])) exit(1);
  }
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&start);
  for (int i = 0; i < 2 && side == BENCH_TWO_MANAGERS; i++)
    BENCH_CHECK(tsmr_mgr_close(ctx, b[i].sub));
  if (shared != TSMR_NONE) BENCH_CHECK(tsmr_mgr_close(ctx, shared));
  return b[0].ns_per_op > b[1].ns_per_op ? b[0].ns_per_op : b[1].ns_per_op;
}

static tsmr_handle bench_close_fill(tsmr_ctx *ctx, tsmr_handle root, long n,
                                    const struct tsmr_tensor_desc *d) {
  tsmr_handle sub, t;
  BENCH_CHECK(tsmr_mgr_new_sub(ctx, root, &sub));
  for (long i = 0; i < n; i++) BENCH_CHECK(tsmr_tensor_new(ctx, sub, d, NULL, &t));
  return sub;
}

/* The close of sub, holding n tensors: ns per tensor. */
static double bench_close_timed(tsmr_ctx *ctx, tsmr_handle sub, long n) {
  double t0 = now_ns();
  BENCH_CHECK(tsmr_mgr_close(ctx, sub));
  return (now_ns() - t0) / (double)n;
}

static double bench_close(tsmr_ctx *ctx, tsmr_handle root, long n,
                          const struct tsmr_tensor_desc *d) {
  return bench_close_timed(ctx, bench_close_fill(ctx, root, n, d), n);
}

/* The baseline of a manager's close: free() of n buffers of bytes each, allocated first
 * (the memory a close gives back, without the bookkeeping); ns per buffer. */
static void **bench_free_fill(long n, size_t bytes) {
  void **p = bench_need(malloc((size_t)n * sizeof *p), "bench-managers");
  for (long i = 0; i < n; i++) {
    p[i] = bench_need(malloc(bytes), "bench-managers");
    memset(p[i], 0, bytes);
  }
  return p;
}

/* free() of the n buffers of p (not of p): ns per buffer. */
static double bench_free_timed(void **p, long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) free(p[i]);
  return (now_ns() - t0) / (double)n;
}

static double bench_free_all(long n, size_t bytes) {
  void **p = bench_free_fill(n, bytes);
  double dt = bench_free_timed(p, n);
  free(p);
  return dt;
}

/* The floor of a close that walks its records along their links: n blocks of stride
 * bytes back to back, 64-byte aligned, linked as a close of records created in order
 * visits them (each create links at the list's tail, so the walk runs up the
 * addresses); the walk reads each block's link and writes one word of it, and does
 * nothing else. ns per block. */
struct walk_block {
  struct walk_block *next;
  uintptr_t word;
};
static double bench_walk_floor(long n, size_t stride) {
  size_t bytes = (size_t)n * stride;
  char *mem = bench_need(aligned_alloc(64, (bytes + 63) & ~(size_t)63), "bench-managers");
  struct walk_block *head = NULL;
  for (long i = n - 1; i >= 0; i--) {
    struct walk_block *b = (struct walk_block *)(mem + (size_t)i * stride);
    b->next = head;
    b->word = (uintptr_t)i;
    head = b;
  }
  uintptr_t sum = 0;
  double t0 = now_ns();
  for (struct walk_block *b = head; b; b = b->next) {
    sum += b->word;
    b->word = 0;
  }
  double dt = (now_ns() - t0) / (double)n;
  free(mem);
  if (sum != (uintptr_t)n * (uintptr_t)(n - 1) / 2) {
    fprintf(stderr, "bench-managers: the walk missed blocks\n");
    exit(1);
  }
  return dt;
}

/* The close beside its floor: the bare walk at the stride the close walks (a record's
 * head), against free() of the close's baseline; best of 3. */
static void run_walk_floor(long n, double close_ns, double free_ns) {
  size_t stride = tsmr_test_close_stride();
  double best = 1e30;
  for (int r = 0; r < 3; r++) {
    double w = bench_walk_floor(n, stride);
    if (w < best) best = w;
  }
  printf("  walk of %ld %zu-byte blocks (floor): %7.2f ns/block   (close %.2f x, free %.2f x)\n",
         n, stride, best, close_ns / best, best / free_ns);
  struct bench_baseline floor = {"walk_of_close_stride_blocks", best, close_ns / best};
  bench_figure("manager_close_vs_walk_floor", close_ns, "ns/resource", &floor, 0);
  struct bench_baseline freed = {"free", free_ns, best / free_ns};
  bench_figure("walk_floor_vs_free", best, "ns/block", &freed, 0);
}

static double bench_scope_dispose(tsmr_ctx *ctx, tsmr_handle root, long n,
                                  const struct tsmr_tensor_desc *d) {
  tsmr_handle sc, t;
  BENCH_CHECK(tsmr_scope_open(ctx, &sc));
  for (long i = 0; i < n; i++) BENCH_CHECK(tsmr_tensor_new(ctx, root, d, NULL, &t));
  double t0 = now_ns();
  BENCH_CHECK(tsmr_scope_dispose(ctx, sc));
  return (now_ns() - t0) / (double)n;
}

static double bench_mutex(long n) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    pthread_mutex_lock(&m);
    __asm__ volatile("" ::: "memory");
    pthread_mutex_unlock(&m);
  }
  double dt = (now_ns() - t0) / (double)n;
  pthread_mutex_destroy(&m);
  return dt;
}

/* Bench 1: RETURN nothing; prints and records create_release_vs_malloc. */
static void run_create_release(tsmr_ctx *ctx, tsmr_handle sub, long n,
                               const struct tsmr_tensor_desc *d, size_t bytes) {
  struct bench_pairs p;
  bench_scoped(ctx, sub, n / 10 + 1, d); /* warm the free lists */
  bench_malloc(n / 10 + 1, bytes);
  for (int r = 0; r < PAIRS; r++) {
    p.a[r] = bench_scoped(ctx, sub, n / 5 + 1, d);
    p.b[r] = bench_malloc(n / 5 + 1, bytes);
  }
  double s = bench_median(p.a), m = bench_median(p.b), ratio = bench_median_ratio(&p);
  printf("bench 1: scoped create+release of %ld tensors of %zu bytes (4 f32), median of %d\n",
         n / 5 + 1, bytes, PAIRS);
  printf("  tsmr_tensor_new + tsmr_res_release : %8.2f ns/op\n", s);
  printf("  malloc + memset + free (baseline)  : %8.2f ns/op\n", m);
  printf("  ratio (median of the pairs)        : %8.2f x\n", ratio);
  struct bench_baseline base = {"malloc_memset_free", m, ratio};
  bench_figure("create_release_vs_malloc", s, "ns/op", &base, 1.3);
}

/* Benches 2 to 4. */
static void run_close_dispose(tsmr_ctx *ctx, tsmr_handle root, long n,
                              const struct tsmr_tensor_desc *d, size_t bytes) {
  double best_c = 1e30, best_d = 1e30, best_in = 1e30, best_x = 1e30, best_f = 1e30;
  for (int r = 0; r < 3; r++) {
    double c = bench_close(ctx, root, n, d), f = bench_free_all(n, bytes);
    double dd = bench_scope_dispose(ctx, root, n, d);
    if (c < best_c) best_c = c;
    if (f < best_f) best_f = f;
    if (dd < best_d) best_d = dd;
  }
  printf("bench 2: close of a manager holding %ld tensors\n", n);
  printf("  tsmr_mgr_close                     : %8.2f ns/resource\n", best_c);
  printf("  free() of as many buffers (baseline): %7.2f ns/buffer  (%.2f x)\n", best_f,
         best_c / best_f);
  bench_figure("manager_close_ns_per_resource", best_c, "ns/resource", NULL, 0);
  struct bench_baseline freed = {"free", best_f, best_c / best_f};
  bench_figure("manager_close_vs_free", best_c, "ns/resource", &freed, 1.3);
  run_walk_floor(n, best_c, best_f);
  tsmr_handle sc;
  BENCH_CHECK(tsmr_scope_open(ctx, &sc));
  for (int r = 0; r < ROUNDS; r++) {
    double s = bench_scoped(ctx, root, n, d), x = bench_mutex(n);
    if (s < best_in) best_in = s;
    if (x < best_x) best_x = x;
  }
  BENCH_CHECK(tsmr_scope_dispose(ctx, sc));
  printf("bench 3: dispose scopes (spec/scopes.md)\n");
  printf("  tsmr_scope_dispose of %ld tensors  : %8.2f ns/resource\n", n, best_d);
  printf("  create+release inside a scope      : %8.2f ns/op\n", best_in);
  printf("bench 4: a mutex, what a thread that does not own the context lock pays\n");
  printf("  pthread mutex lock+unlock pair     : %8.2f ns (2 pairs per create+release)\n",
         best_x);
}

/* Bench 5: side against malloc on 2 threads, PAIRS pairs of rounds; its figure. */
static void run_two_threads(tsmr_ctx *ctx, tsmr_handle root, long n, enum bench_side side) {
  struct bench_pairs p;
  for (int r = 0; r < PAIRS; r++) {
    p.a[r] = bench_two_threads(ctx, root, n / 5 + 1, side, 0);
    p.b[r] = bench_two_threads(ctx, root, n / 5 + 1, BENCH_MALLOC, 0);
  }
  double s = bench_median(p.a), m = bench_median(p.b), ratio = bench_median_ratio(&p);
  int two = side == BENCH_TWO_MANAGERS;
  printf("bench 5: bench 1 on 2 threads, %s, one context\n",
         two ? "a sub-manager each" : "both in one sub-manager");
  printf("  create+release, slower thread      : %8.2f ns/op\n", s);
  printf("  malloc+memset+free, slower thread  : %8.2f ns/op\n", m);
  printf("  ratio (median of the pairs)        : %8.2f x\n", ratio);
  struct bench_baseline base = {"malloc_memset_free_2threads", m, ratio};
  if (two)
    bench_figure("create_release_vs_malloc_2managers", s, "ns/op", &base, 1.3);
  else
    bench_figure("create_release_vs_malloc_1manager_2threads", s, "ns/op", &base, 0);
}

/* The counted loops of benches 1 and 2 and their baselines (bench_util.h): each the
 * timed loop itself, so that the count is of the code the wall time measures (its two
 * clock reads are noise over n operations); the time it returns is not used. */
static BENCH_IR_FN void bench_ir_create_release(tsmr_ctx *ctx, tsmr_handle sub, long n,
                                                const struct tsmr_tensor_desc *d) {
  bench_scoped(ctx, sub, n, d);
}
static BENCH_IR_FN void bench_ir_malloc(long n, size_t bytes) { bench_malloc(n, bytes); }
static BENCH_IR_FN void bench_ir_close(tsmr_ctx *ctx, tsmr_handle sub, long n) {
  bench_close_timed(ctx, sub, n);
}
static BENCH_IR_FN void bench_ir_free(void **p, long n) { bench_free_timed(p, n); }

/* --count-instructions n: each loop once, warmed up first (bench_util.h), in the order of
 * the timed run, so that the context's lock is in the same state (biased toward this
 * thread until bench 5's threads revoke it, impl/src/lock.h). RETURN the exit status. */
static int count_instructions(long n) {
  struct tsmr_tensor_desc d = {TSMR_F32, 1, {4}};
  size_t bytes = 4 * sizeof(float);
  tsmr_ctx *ctx;
  tsmr_handle root, sub;
  BENCH_CHECK(tsmr_ctx_open("cpu", &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  BENCH_CHECK(tsmr_mgr_new_sub(ctx, root, &sub));
  bench_scoped(ctx, sub, n / 10 + 1, &d);
  bench_ir_create_release(ctx, sub, n, &d);
  bench_malloc(n / 10 + 1, bytes);
  bench_ir_malloc(n, bytes);
  /* The close's warm-up is a whole close of as many tensors: the first fills grow the
   * handle table and the free lists, which the counted fill then reuses. */
  bench_close(ctx, root, n, &d);
  bench_ir_close(ctx, bench_close_fill(ctx, root, n, &d), n);
  bench_free_all(n, bytes);
  void **p = bench_free_fill(n, bytes);
  bench_ir_free(p, n);
  free(p);
  bench_two_threads(ctx, root, n, BENCH_TWO_MANAGERS, 1);
  bench_two_threads(ctx, root, n, BENCH_ONE_MANAGER, 1);
  bench_two_threads(ctx, root, n, BENCH_MALLOC, 1);
  BENCH_CHECK(tsmr_mgr_close(ctx, sub));
  uint64_t live;
  BENCH_CHECK(tsmr_live_bytes(ctx, &live));
  tsmr_ctx_close(ctx);
  printf("bench-managers: counted loops of %ld operations each (bench_ir_*)\n", n);
  return live == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  long counted = bench_count_mode(argc, argv, "bench-managers");
  if (counted) return counted < 0 ? 2 : count_instructions(counted);
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (n <= 0) n = 1000000;
  struct tsmr_tensor_desc d = {TSMR_F32, 1, {4}};
  tsmr_ctx *ctx;
  tsmr_handle root, sub;
  BENCH_CHECK(tsmr_ctx_open("cpu", &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  BENCH_CHECK(tsmr_mgr_new_sub(ctx, root, &sub));
  run_create_release(ctx, sub, n, &d, 4 * sizeof(float));
  run_close_dispose(ctx, root, n, &d, 4 * sizeof(float));
  run_two_threads(ctx, root, n, BENCH_TWO_MANAGERS);
  run_two_threads(ctx, root, n, BENCH_ONE_MANAGER);
  uint64_t live;
  BENCH_CHECK(tsmr_live_bytes(ctx, &live));
  tsmr_ctx_close(ctx);
  return live == 0 ? 0 : 1;
}
