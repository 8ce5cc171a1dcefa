/*
 * bench/bench_util.h: what every benchmark of bench/ shares: a fatal check on
 * libtsmref calls, the round count, a monotonic clock in nanoseconds, paired rounds
 * (a figure and its baseline measured in turn, summarised by medians: the machine's
 * speed drifts between rounds, and a pair's ratio cancels most of it), and
 * bench_figure, which appends one named figure to the file $BENCH_JSON names (a JSON
 * object per line; bench/results.py gathers them into results.json), and BENCH_IR_FN.
 *
 * Instructions. On this shared machine single wall-time runs move by tens of percent,
 * so each wall-time ratio has an instructions ratio beside it (NAME_instructions),
 * which does not move with the machine's load. A program's --count-instructions N mode
 * runs each measured loop and each baseline loop once, N operations, in a function of
 * its own named bench_ir_*; bench/count_instructions.sh runs it under valgrind's
 * callgrind collecting only inside those functions (--toggle-collect=bench_ir_*), and
 * bench/callgrind_ir.py reads each one's inclusive count (the library calls in it
 * included) and divides by N. Each counted loop follows a warm-up of N / 10 + 1
 * operations of the same loop (a close: a whole close of N tensors): the first calls
 * touch fresh memory and take the slow paths (free lists empty, tables growing), which
 * the timed runs pay once among millions. N is 100,000 by default: the function's own setup (two clock reads, the
 * loop's entry) is then under 0.01 instruction per operation, and callgrind runs the
 * programs in about 15 s. bench-graphs counts plans, not loops of N: one reuse plan of
 * each DAG of its growth figure after a warm-up plan, divided by the tensors planned,
 * which it prints (bench_graphs.c, bench/callgrind_ir.py).
 */
#ifndef TSM_BENCH_UTIL_H
#define TSM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tsmref.h"

#define ROUNDS 7 /* best-of rounds */
/* A counted loop of --count-instructions (above): never inlined, so that it stays a
 * function callgrind can toggle on by name (a clone the compiler makes, such as
 * bench_ir_x.constprop.0, matches bench_ir_* too). */
#define BENCH_IR_FN __attribute__((noinline))
#define PAIRS 21 /* paired rounds: short and many, so that a pair sees one machine speed */
#define BENCH_CHECK(call)                                                          \
  do {                                                                             \
    int rc_ = (call);                                                              \
    if (rc_ != 0) {                                                                \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
              tsmr_err_name(rc_));                                                 \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

/* The --count-instructions N mode of program's command line (above): RETURN N (> 0) in
 * that mode, 0 outside it, -1 after printing the usage when N is missing or not > 0
 * (the program exits 2 then). */
static inline long bench_count_mode(int argc, char **argv, const char *program) {
  if (argc < 2 || strcmp(argv[1], "--count-instructions")) return 0;
  long n = argc > 2 ? atol(argv[2]) : 0;
  if (n > 0) return n;
  fprintf(stderr, "usage: %s --count-instructions N (N > 0)\n", program);
  return -1;
}

/* p, memory the benchmark program asked for: RETURN it, or exit(1) naming program when
 * it is NULL (a benchmark has nothing to measure without it). */
static inline void *bench_need(void *p, const char *program) {
  if (p) return p;
  fprintf(stderr, "%s: out of memory\n", program);
  exit(1);
}

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* PAIRS rounds of a figure (a) and its baseline (b), measured in turn. */
struct bench_pairs {
  double a[PAIRS], b[PAIRS];
};

/* The median of PAIRS values. */
static inline double bench_median(const double *v) {
  double s[PAIRS];
  for (int i = 0; i < PAIRS; i++) { /* insertion sort: PAIRS is small */
    int j = i;
    for (; j > 0 && s[j - 1] > v[i]; j--) s[j] = s[j - 1];
    s[j] = v[i];
  }
  return s[PAIRS / 2];
}

/* The median of the rounds' ratios a / b. */
static inline double bench_median_ratio(const struct bench_pairs *p) {
  double r[PAIRS];
  for (int i = 0; i < PAIRS; i++) r[i] = p->a[i] / p->b[i];
  return bench_median(r);
}

/* What a figure is measured against: the baseline's name and value, and the figure's
 * ratio to it (the one a goal bounds). */
struct bench_baseline {
  const char *name;
  double value, ratio;
};

/* One figure of results.json (bench/README.md). base NULL: no baseline (its fields
 * null). goal <= 0: no goal (goal and met null); else met = ratio <= goal, or value <=
 * goal without a baseline. */
static inline void bench_figure(const char *name, double value, const char *unit,
                                const struct bench_baseline *base, double goal) {
  const char *path = getenv("BENCH_JSON");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  double measured = base ? base->ratio : value;
  fprintf(f, "{\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\", ", name, value, unit);
  if (base)
    fprintf(f, "\"baseline_name\": \"%s\", \"baseline_value\": %.6g, \"ratio\": %.4f, ",
            base->name, base->value, measured);
  else
    fprintf(f, "\"baseline_name\": null, \"baseline_value\": null, \"ratio\": null, ");
  if (goal > 0)
    fprintf(f, "\"goal\": \"<= %g\", \"met\": %s}\n", goal,
            measured <= goal ? "true" : "false");
  else
    fprintf(f, "\"goal\": null, \"met\": null}\n");
  fclose(f);
}

/* The DLPack C round trip (bench-dlpack's figure, bench-xapi's baseline): n times a
 * versioned export of src, its import into m and the release of the import; RETURN
 * nanoseconds per round trip. */
static inline double bench_dlpack_round_trip(tsmr_ctx *ctx, tsmr_handle m, tsmr_handle src,
                                             long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    void *e;
    tsmr_handle t;
    BENCH_CHECK(tsmr_dlpack_export(ctx, src, TSMR_DLPACK_VERSIONED, 0, &e));
    BENCH_CHECK(tsmr_dlpack_import(ctx, e, TSMR_DLPACK_VERSIONED, m, &t));
    BENCH_CHECK(tsmr_res_release(ctx, t));
  }
  return (now_ns() - t0) / (double)n;
}

#endif
