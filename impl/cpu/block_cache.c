/*
 * impl/cpu/block_cache.c: the freed large blocks of block_cache.h.
 */
#include "block_cache.h"

#include <malloc.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* At most this many blocks, and this many bytes, are kept. */
#define KEEP 4
#define KEEP_BYTES ((size_t)512 << 20)

static struct {
  pthread_mutex_t lock;
  struct {
    void *p;
    size_t size;
  } b[KEEP];
  int n;
  size_t bytes;
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER};

int tsmr__block_cache_enabled(void) { return !SANITIZED && !RUNNING_ON_VALGRIND; }

void *tsmr__block_cache_take(size_t n) {
  void *p = NULL;
  pthread_mutex_lock(&cache.lock);
  for (int k = 0; k < cache.n; k++) {
    if (cache.b[k].size < n || cache.b[k].size - n > n / 4) continue;
    p = cache.b[k].p;
    cache.bytes -= cache.b[k].size;
    cache.b[k] = cache.b[--cache.n];
    break;
  }
  pthread_mutex_unlock(&cache.lock);
  return p;
}

int tsmr__block_cache_keep(void *p) {
  if (!p || !tsmr__block_cache_enabled()) return 0;
  size_t size = malloc_usable_size(p);
  if (size < TSMR__BLOCK_CACHE_MIN) return 0;
  int kept = 0;
  pthread_mutex_lock(&cache.lock);
  if (cache.n < KEEP && cache.bytes + size <= KEEP_BYTES) {
    cache.b[cache.n].p = p;
    cache.b[cache.n].size = size;
    cache.n++;
    cache.bytes += size;
    kept = 1;
  }
  pthread_mutex_unlock(&cache.lock);
  return kept;
}

void tsmr__block_cache_release(void) {
  pthread_mutex_lock(&cache.lock);
  for (int k = 0; k < cache.n; k++) tsmr__free(cache.b[k].p);
  cache.n = 0;
  cache.bytes = 0;
  pthread_mutex_unlock(&cache.lock);
}
