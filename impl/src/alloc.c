/*
 * impl/src/alloc.c: the one allocation hook of libtsmref. Every host allocation of the
 * library (structs, slot tables, host tensor data) goes through tsmr__alloc, so a test
 * can make the k-th allocation fail and check that nothing is left behind
 * (ERR.ATOMIC.1, MGR.CREATE.3: ENOMEM leaves no trace).
 */
#include "internal.h"

static uint64_t tsmr_fail_countdown; /* 0 = off; else the allocation that fails */

void tsmr__alloc_fail_nth(uint64_t k) { tsmr_fail_countdown = k; }

static int tsmr_should_fail(void) {
  if (tsmr_fail_countdown == 0) return 0;
  return --tsmr_fail_countdown == 0;
}

void *tsmr__alloc(size_t n) {
  if (tsmr_should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *tsmr__realloc(void *p, size_t n) {
  if (tsmr_should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void tsmr__free(void *p) { free(p); }
