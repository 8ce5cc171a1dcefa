/*
 * impl/src/alloc.c: the one allocation hook of libtsmref. Every host allocation of the
 * library (structs, slot tables, host tensor data) goes through tsmr__alloc, and every
 * slab of tensor records through tsmr__map_aligned (a mapping of its own), so a test
 * can make the k-th allocation fail and check that nothing is left behind
 * (ERR.ATOMIC.1, MGR.CREATE.3: ENOMEM leaves no trace). The arming functions are the
 * test hooks of tsmref_test.h.
 */
#include <stdatomic.h>
#include <sys/mman.h>

#include "internal.h"
#include "tsmref_test.h"

/* 0 = off; else the allocation that fails. Atomic: contexts on different threads
 * allocate concurrently (a relaxed load is all the fast path costs). Not static: the
 * DLPack fast paths read it inline (tsmr__alloc_armed, internal.h). */
atomic_uint_fast64_t tsmr__alloc_fail_countdown;

void tsmr_test_alloc_fail_nth(uint64_t k) { atomic_store(&tsmr__alloc_fail_countdown, k); }

uint64_t tsmr_test_alloc_fail_left(void) {
  return (uint64_t)atomic_load(&tsmr__alloc_fail_countdown);
}

static int should_fail(void) {
  uint_fast64_t c = atomic_load_explicit(&tsmr__alloc_fail_countdown, memory_order_relaxed);
  while (c != 0) {
    if (atomic_compare_exchange_weak(&tsmr__alloc_fail_countdown, &c, c - 1)) return c == 1;
  }
  return 0;
}

int tsmr__alloc_refused(void) { return should_fail(); }

void *tsmr__alloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *tsmr__map_aligned(size_t bytes) {
  if (should_fail()) return NULL;
  char *m = mmap(NULL, 2 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  char *a = (char *)(((uintptr_t)m + bytes - 1) & ~(uintptr_t)(bytes - 1));
  if (a > m) munmap(m, (size_t)(a - m));
  if (a < m + bytes) munmap(a + bytes, (size_t)(m + bytes - a)); /* the tail */
  return a;
}

void tsmr__unmap(void *p, size_t bytes) {
  if (p) munmap(p, bytes);
}

void *tsmr__realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void tsmr__free(void *p) { free(p); }
