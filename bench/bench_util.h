/*
 * bench/bench_util.h: what every benchmark of bench/ shares: a fatal check on
 * libtsmref calls, the round count, and a monotonic clock in nanoseconds.
 */
#ifndef TSM_BENCH_UTIL_H
#define TSM_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tsmref.h"

#define ROUNDS 5
#define BENCH_CHECK(call)                                                          \
  do {                                                                             \
    int rc_ = (call);                                                              \
    if (rc_ != 0) {                                                                \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
              tsmr_err_name(rc_));                                                 \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static inline double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#endif
