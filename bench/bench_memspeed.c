/*
 * bench/bench_memspeed.c: the floor of the judge's large-tensor figure
 * (judge_s_per_gib_vs_memcmp, bench/run_bench.sh): the seconds per GiB of writing a
 * buffer (memset) and comparing it with another (memcmp), the least any judge does
 * with bytes it makes and checks. Buffers of 64 MiB (one tensor of the IREE seed),
 * PAIRS rounds, the median; prints the seconds per GiB alone on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define BYTES ((size_t)64 << 20)

int main(void) {
  unsigned char *a = bench_need(malloc(BYTES), "bench-memspeed");
  unsigned char *b = bench_need(malloc(BYTES), "bench-memspeed");
  double s[PAIRS];
  int differ = 0;
  memset(b, 7, BYTES);
  for (int i = 0; i < PAIRS; i++) {
    double t0 = now_ns();
    memset(a, 7, BYTES);
    differ += memcmp(a, b, BYTES) != 0;
    s[i] = (now_ns() - t0) * 1e-9 * (double)((size_t)1 << 30) / (double)BYTES;
  }
  free(a);
  free(b);
  if (differ) {
    fprintf(stderr, "bench-memspeed: equal buffers compared unequal\n");
    return 1;
  }
  printf("%.6f\n", bench_median(s));
  return 0;
}
