/*
 * bench/bench_iree.c: the IREE seed loop (cases/dlpack/seeds/iree-add-loop*.tsm) on
 * the CPU, straight against libtsmref, against a plain C loop over the same bytes,
 * in the same run (DLP.DEL.1, DLP.MGR.1, MGR.COUNT.4).
 *   seed loop: a producer allocates and fills two [64,64,64] float32 tensors (arange)
 *     and hands them out as DLPack 1.x tensors; the consumer imports both into a
 *     per-call sub-manager, adds them, sums the result, checks the sum, and closes the
 *     per-call manager, which runs both deleters (the producer frees its buffers).
 *   C floor: malloc two buffers, fill them (arange), malloc the result, add, sum,
 *     check, free the three.
 * PAIRS pairs of rounds of ITER iterations, alternating; the figures are the medians
 * and the ratio the median of the pairs' ratios (bench_util.h). Memory
 * stays flat: live bytes are 0 after every iteration and the peak RSS after the last
 * round is the one after the first (ru_maxrss, within one result tensor).
 * With $BENCH_JSON set, the ratio goes there as iree_cpu_loop_vs_c_floor.
 * Usage: bench-iree [iterations per round]   (default 10)
 */
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench_util.h"

#define EDGE 64
#define NUMEL ((int64_t)EDGE * EDGE * EDGE)

static int64_t bench_shape[3] = {EDGE, EDGE, EDGE};
static int64_t bench_strides[3] = {EDGE * EDGE, EDGE, 1}; /* mandatory from DLPack 1.2 */

/* The sum of x + y when both are arange(NUMEL); float sums in different orders
 * differ in the last places, so a check allows a relative 1e-3. */
static const double expected_sum = (double)NUMEL * (double)(NUMEL - 1);

static int sum_ok(float s) {
  double d = (double)s - expected_sum;
  return (d < 0 ? -d : d) <= 1e-3 * expected_sum;
}

static void fill_arange(float *p) {
  for (int64_t i = 0; i < NUMEL; i++) p[i] = (float)i;
}

static float sum_of(const float *p) {
  float s = 0;
  for (int64_t i = 0; i < NUMEL; i++) s += p[i];
  return s;
}

static double c_floor(long iter) {
  double t0 = now_ns();
  for (long k = 0; k < iter; k++) {
    float *x = malloc(NUMEL * sizeof *x), *y = malloc(NUMEL * sizeof *y);
    float *z = malloc(NUMEL * sizeof *z);
    if (!x || !y || !z) exit(1);
    fill_arange(x);
    fill_arange(y);
    for (int64_t i = 0; i < NUMEL; i++) z[i] = x[i] + y[i];
    if (!sum_ok(sum_of(z))) exit(2);
    free(x);
    free(y);
    free(z);
  }
  return (now_ns() - t0) / (double)iter;
}

/* The producer's side: its deleter frees the buffer and the managed struct. */
static void producer_deleter(struct DLManagedTensorVersioned *mt) {
  free(mt->dl_tensor.data);
  free(mt);
}

static struct DLManagedTensorVersioned *produce(void) {
  struct DLManagedTensorVersioned *mt = calloc(1, sizeof *mt);
  float *data = malloc(NUMEL * sizeof *data);
  if (!mt || !data) exit(1);
  fill_arange(data);
  mt->version.major = 1;
  mt->version.minor = DLPACK_MINOR_VERSION;
  mt->deleter = producer_deleter;
  mt->dl_tensor.data = data;
  mt->dl_tensor.device.device_type = kDLCPU;
  mt->dl_tensor.ndim = 3;
  mt->dl_tensor.dtype.code = kDLFloat;
  mt->dl_tensor.dtype.bits = 32;
  mt->dl_tensor.dtype.lanes = 1;
  mt->dl_tensor.shape = bench_shape;
  mt->dl_tensor.strides = bench_strides;
  return mt;
}

static double seed_loop(tsmr_ctx *ctx, tsmr_handle consumer, long iter) {
  double t0 = now_ns();
  for (long k = 0; k < iter; k++) {
    tsmr_handle call, ab[2], z, s;
    float total;
    uint64_t live;
    BENCH_CHECK(tsmr_mgr_new_sub(ctx, consumer, &call));
    for (int i = 0; i < 2; i++)
      BENCH_CHECK(tsmr_dlpack_import(ctx, produce(), TSMR_DLPACK_VERSIONED, call, &ab[i]));
    BENCH_CHECK(tsmr_op(ctx, TSMR_OP_ADD, ab, 2, NULL, 0, TSMR_NONE, &z));
    BENCH_CHECK(tsmr_op(ctx, TSMR_OP_SUM, &z, 1, NULL, 0, TSMR_NONE, &s));
    BENCH_CHECK(tsmr_tensor_read(ctx, s, &total, sizeof total));
    if (!sum_ok(total)) exit(2);
    BENCH_CHECK(tsmr_mgr_close(ctx, call));
    BENCH_CHECK(tsmr_live_bytes(ctx, &live));
    if (live != 0) exit(3);
  }
  return (now_ns() - t0) / (double)iter;
}

static long max_rss_kib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int main(int argc, char **argv) {
  long iter = argc > 1 ? atol(argv[1]) : 10;
  if (iter <= 0) iter = 10;
  tsmr_ctx *ctx;
  tsmr_handle root, consumer;
  BENCH_CHECK(tsmr_ctx_open("cpu", &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  BENCH_CHECK(tsmr_mgr_new_sub(ctx, root, &consumer));
  struct bench_pairs p;
  long rss_first = 0;
  for (int r = 0; r < PAIRS; r++) {
    p.a[r] = seed_loop(ctx, consumer, iter);
    p.b[r] = c_floor(iter);
    if (r == 0) rss_first = max_rss_kib();
  }
  double best_s = bench_median(p.a), best_c = bench_median(p.b), ratio = bench_median_ratio(&p);
  long rss_last = max_rss_kib(), slack = (long)(NUMEL * 4 / 1024);
  BENCH_CHECK(tsmr_mgr_close(ctx, consumer));
  tsmr_ctx_close(ctx);
  printf("bench iree: %ld iterations of two [%d,%d,%d] f32 imports, add, sum, close; median of %d\n",
         iter, EDGE, EDGE, EDGE, PAIRS);
  printf("  seed loop through libtsmref        : %10.0f ns/iteration\n", best_s);
  printf("  plain C loop (floor)               : %10.0f ns/iteration\n", best_c);
  printf("  ratio (median of the pairs)        : %10.2f x\n", ratio);
  printf("  peak RSS after round 1 / last      : %ld / %ld KiB (%s)\n", rss_first, rss_last,
         rss_last <= rss_first + slack ? "flat" : "GREW");
  struct bench_baseline c_floor = {"c_floor", best_c, ratio};
  bench_figure("iree_cpu_loop_vs_c_floor", best_s, "ns/iteration", &c_floor, 1.5);
  return rss_last <= rss_first + slack ? 0 : 1;
}
