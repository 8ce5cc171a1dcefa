/*
 * impl/tests/test_alloc.c: the CPU backend's cache of freed large blocks
 * (impl/cpu/block_cache.h) through the backend's own slots, so that a test cannot pass
 * while nothing is ever kept or while a kept block escapes the fault-injection hook:
 *   reuse     a freed large block serves the next allocation of about its size, and
 *             only of about its size (a quarter more at most); a small block is never
 *             kept;
 *   bounded   at most four blocks are kept: the fifth freed goes back to the C library;
 *   hook      with the hook armed (tsmref_test.h), an allocation the cache would serve
 *             fails as a new one would, counted once, and the block stays kept;
 *   release   the backend's release_cache (the last context's close) empties it.
 * Under a sanitizer or Valgrind the cache is off (they must see every free): then the
 * test checks that nothing is kept.
 * Run: $(B)/bin/test-alloc; prints "# alloc: N checks, 0 failed".
 */
#include <stdio.h>

#include "../cpu/block_cache.h"
#include "check.h"
#include "internal.h"
#include "tsmref_test.h"

#define BIG ((size_t)2 << 20)

static const struct tsmr__backend *be = &tsmr__cpu_backend;

static void *take(size_t n) {
  void *p = NULL;
  CHECK(be->alloc(n, &p) == 0 && p, "alloc(%zu)", n);
  return p;
}

static void test_reuse(int on) {
  void *p = take(BIG);
  be->free_mem(p);
  void *q = take(BIG);
  CHECK(on ? q == p : 1, "a freed %zu-byte block serves the next allocation of its size", BIG);
  be->free_mem(q);
  void *half = take(BIG / 2 + 4096); /* too small a request for the kept block */
  CHECK(half != q, "a block twice the size asked for is not handed out");
  be->free_mem(half);
  be->release_cache();
  void *small = take(4096);
  be->free_mem(small);
  CHECK(tsmr__block_cache_take(4096 > TSMR__BLOCK_CACHE_MIN ? 4096 : TSMR__BLOCK_CACHE_MIN) ==
            NULL, "a small block is never kept");
}

static void test_bounded(int on) {
  void *p[5];
  for (int k = 0; k < 5; k++) p[k] = take(BIG);
  int kept = 0;
  for (int k = 0; k < 5; k++) {
    int keep = tsmr__block_cache_keep(p[k]);
    kept += keep;
    if (!keep) tsmr__free(p[k]);
  }
  CHECK(kept == (on ? 4 : 0), "%d of 5 freed blocks kept", kept);
  be->release_cache();
}

static void test_hook(int on) {
  be->free_mem(take(BIG));
  tsmr_test_alloc_fail_nth(1);
  void *p = NULL;
  CHECK(be->alloc(BIG, &p) == TSMR_ENOMEM && p == NULL, "the armed allocation fails");
  CHECK(tsmr_test_alloc_fail_left() == 0, "counted as one allocation");
  void *kept = tsmr__block_cache_take(BIG);
  CHECK(on ? kept != NULL : kept == NULL, "the block stays kept");
  if (kept && !tsmr__block_cache_keep(kept)) tsmr__free(kept);
  tsmr_test_alloc_fail_nth(2); /* the second allocation from now fails, not the first */
  p = take(BIG);
  CHECK(tsmr_test_alloc_fail_left() == 1, "a kept block counts as an allocation");
  tsmr_test_alloc_fail_nth(0);
  be->free_mem(p);
  be->release_cache();
}

static void test_release(void) {
  be->free_mem(take(BIG));
  be->release_cache();
  CHECK(tsmr__block_cache_take(BIG) == NULL, "release_cache keeps nothing");
}

int main(void) {
  int on = tsmr__block_cache_enabled();
  test_reuse(on);
  test_bounded(on);
  test_hook(on);
  test_release();
  printf("# alloc: %d checks, %d failed (cache %s)\n", checks, failed, on ? "on" : "off");
  return failed ? 1 : 0;
}
