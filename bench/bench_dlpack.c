/*
 * bench/bench_dlpack.c: micro-benchmarks of libtsmref's DLPack C ABI (spec/dlpack.md),
 * each against a baseline measured in the same run: create + release of the same
 * small tensor (4 f32) in the root manager.
 *   1. round trip through the C ABI: tsmr_dlpack_export (versioned) + tsmr_dlpack_import
 *      of that export (recognised as our own: aliases the storage) + tsmr_res_release.
 *   2. export + the consumer running the deleter (what another framework costs us).
 *   3. import of a foreign compact tensor (aliased) + release (runs its deleter).
 * The source tensor lives for the whole run. Each figure is the best of ROUNDS rounds.
 * Built against the DLPack 1.x header of apache-tvm-ffi (deps.mk). With $BENCH_JSON
 * set, figure 1 goes there as dlpack_c_roundtrip_ns (bench_util.h).
 * --count-instructions N runs figure 1's loop and its baseline once, N operations each,
 * in bench_ir_* functions, for callgrind to count (bench/count_instructions.sh,
 * bench_util.h).
 * Usage: bench-dlpack [N]   (default 1000000)
 *        bench-dlpack --count-instructions N
 */
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"


static const struct tsmr_tensor_desc bench_desc = {TSMR_F32, 1, {4}};

static double bench_create(tsmr_ctx *ctx, tsmr_handle m, long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    tsmr_handle t;
    BENCH_CHECK(tsmr_tensor_new(ctx, m, &bench_desc, NULL, &t));
    BENCH_CHECK(tsmr_res_release(ctx, t));
  }
  return (now_ns() - t0) / (double)n;
}

static double bench_export_delete(tsmr_ctx *ctx, tsmr_handle src, long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    struct DLManagedTensorVersioned *e;
    BENCH_CHECK(tsmr_dlpack_export(ctx, src, TSMR_DLPACK_VERSIONED, 0, (void **)&e));
    e->deleter(e);
  }
  return (now_ns() - t0) / (double)n;
}

static long bench_foreign_deleted;
static void bench_foreign_deleter(struct DLManagedTensorVersioned *mt) {
  (void)mt;
  bench_foreign_deleted++;
}

static double bench_foreign_import(tsmr_ctx *ctx, tsmr_handle m, long n) {
  static float data[4] = {1, 2, 3, 4};
  static int64_t shape[1] = {4}, strides[1] = {1};
  struct DLManagedTensorVersioned mt = {0};
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    tsmr_handle t;
    mt.version.major = 1;
    mt.version.minor = DLPACK_MINOR_VERSION;
    mt.deleter = bench_foreign_deleter;
    mt.dl_tensor.data = data;
    mt.dl_tensor.device.device_type = kDLCPU;
    mt.dl_tensor.ndim = 1;
    mt.dl_tensor.dtype.code = kDLFloat;
    mt.dl_tensor.dtype.bits = 32;
    mt.dl_tensor.dtype.lanes = 1;
    mt.dl_tensor.shape = shape;
    mt.dl_tensor.strides = strides;
    BENCH_CHECK(tsmr_dlpack_import(ctx, &mt, TSMR_DLPACK_VERSIONED, m, &t));
    BENCH_CHECK(tsmr_res_release(ctx, t));
  }
  return (now_ns() - t0) / (double)n;
}

static double min2(double a, double b) { return a < b ? a : b; }

/* The counted loops of figure 1 and its baseline (bench_util.h): the timed loops
 * themselves, so that the count is of the code the wall time measures (its two clock
 * reads are noise over n operations); the time they return is not used. */
static BENCH_IR_FN void bench_ir_create_release(tsmr_ctx *ctx, tsmr_handle m, long n) {
  bench_create(ctx, m, n);
}
static BENCH_IR_FN void bench_ir_round_trip(tsmr_ctx *ctx, tsmr_handle m, tsmr_handle src,
                                            long n) {
  bench_dlpack_round_trip(ctx, m, src, n);
}

/* --count-instructions n: each loop once after its warm-up (bench_util.h), in the root
 * manager with the source tensor alive, as in the timed run. RETURN the exit status. */
static int count_instructions(long n) {
  tsmr_ctx *ctx;
  tsmr_handle root, src;
  BENCH_CHECK(tsmr_ctx_open("cpu", &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  BENCH_CHECK(tsmr_tensor_new(ctx, root, &bench_desc, NULL, &src));
  bench_create(ctx, root, n / 10 + 1);
  bench_ir_create_release(ctx, root, n);
  bench_dlpack_round_trip(ctx, root, src, n / 10 + 1);
  bench_ir_round_trip(ctx, root, src, n);
  uint64_t live = 0;
  BENCH_CHECK(tsmr_live_bytes(ctx, &live));
  tsmr_ctx_close(ctx);
  printf("bench-dlpack: counted loops of %ld operations each (bench_ir_*)\n", n);
  return live == 16 ? 0 : 1;
}

int main(int argc, char **argv) {
  long counted = bench_count_mode(argc, argv, "bench-dlpack");
  if (counted) return counted < 0 ? 2 : count_instructions(counted);
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  tsmr_ctx *ctx;
  tsmr_handle root, src;
  if (n <= 0) n = 1000000;
  BENCH_CHECK(tsmr_ctx_open("cpu", &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  BENCH_CHECK(tsmr_tensor_new(ctx, root, &bench_desc, NULL, &src));
  double best_c = 1e30, best_rt = 1e30, best_ed = 1e30, best_fi = 1e30;
  bench_create(ctx, root, n / 10 + 1); /* warm the free lists */
  for (int r = 0; r < ROUNDS; r++) {
    best_c = min2(best_c, bench_create(ctx, root, n));
    best_rt = min2(best_rt, bench_dlpack_round_trip(ctx, root, src, n));
    best_ed = min2(best_ed, bench_export_delete(ctx, src, n));
    best_fi = min2(best_fi, bench_foreign_import(ctx, root, n));
  }
  uint64_t live = 0;
  BENCH_CHECK(tsmr_live_bytes(ctx, &live));
  if (live != 16 || bench_foreign_deleted != (long)ROUNDS * n) {
    fprintf(stderr, "bench-dlpack: bookkeeping off (live %llu, deleted %ld)\n",
            (unsigned long long)live, bench_foreign_deleted);
    return 1;
  }
  printf("bench dlpack: %ld iterations, best of %d, 4 f32 on cpu\n", n, ROUNDS);
  printf("  tensor_new + release (baseline)      : %8.2f ns/op\n", best_c);
  printf("  export(versioned) + import + release : %8.2f ns/round trip  (%.2f x)\n",
         best_rt, best_rt / best_c);
  printf("  export(versioned) + deleter          : %8.2f ns/op          (%.2f x)\n",
         best_ed, best_ed / best_c);
  printf("  foreign import (alias) + release     : %8.2f ns/op          (%.2f x)\n",
         best_fi, best_fi / best_c);
  struct bench_baseline create_release = {"create_release", best_c, best_rt / best_c};
  bench_figure("dlpack_c_roundtrip_ns", best_rt, "ns/round trip", &create_release, 0);
  bench_figure("dlpack_c_roundtrip_vs_create_release", best_rt, "ns/round trip",
               &create_release, 1.5);
  tsmr_ctx_close(ctx);
  return 0;
}
