/*
 * harness/src/base/pages.c: the producer's buffers of pages.h, large ones in a quarantine
 * of inaccessible mappings.
 */
#include "pages.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

/* Under AddressSanitizer and Valgrind every buffer is malloc'd and freed, as before the
 * quarantine: they report a read past a buffer's end or after its free, with the stack
 * of both, where a mapping would show only a crash (or, within its last page, nothing). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
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

/* At most this many given-back mappings, and this many bytes, are kept; past either, the
 * oldest is unmapped. */
#define KEEP 8
#define KEEP_BYTES ((size_t)1 << 30)

static struct {
  pthread_mutex_t lock;
  struct {
    void *p;
    size_t len;
  } q[KEEP + 1]; /* oldest first */
  int n;
  size_t bytes, taken, reused;
} pages = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t mapped_len(size_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (n + page - 1) / page * page;
}

static void drop_oldest(void) {
  munmap(pages.q[0].p, pages.q[0].len);
  pages.bytes -= pages.q[0].len;
  memmove(&pages.q[0], &pages.q[1], (size_t)--pages.n * sizeof pages.q[0]);
}

/* A quarantined mapping of len bytes that CTS_PAGES_QUARANTINE others followed, taken out
 * of the queue; NULL when there is none. Called locked. */
static void *reusable(size_t len) {
  for (int k = 0; k < pages.n - CTS_PAGES_QUARANTINE; k++) {
    if (pages.q[k].len != len) continue;
    void *p = pages.q[k].p;
    pages.bytes -= len;
    memmove(&pages.q[k], &pages.q[k + 1], (size_t)(pages.n - k - 1) * sizeof pages.q[0]);
    pages.n--;
    return p;
  }
  return NULL;
}

int cts_pages_mapped(void) { return !SANITIZED && !RUNNING_ON_VALGRIND; }

void *cts_pages_take(size_t n, int zero) {
  if (n < CTS_PAGES_MIN || !cts_pages_mapped()) return zero ? cts_xcalloc(n, 1) : cts_xmalloc(n);
  size_t len = mapped_len(n);
  pthread_mutex_lock(&pages.lock);
  void *p = reusable(len);
  pages.taken++;
  pages.reused += p != NULL;
  pthread_mutex_unlock(&pages.lock);
  if (p && mprotect(p, len, PROT_READ | PROT_WRITE) == 0) {
    if (zero) memset(p, 0, n);
    return p;
  }
  if (p) munmap(p, len);
  p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) cts_out_of_memory();
  return p; /* a new mapping is zeroed */
}

void cts_pages_give(void *p, size_t n) {
  if (!p) return;
  if (n < CTS_PAGES_MIN || !cts_pages_mapped()) {
    free(p);
    return;
  }
  size_t len = mapped_len(n);
  if (mprotect(p, len, PROT_NONE) != 0) {
    munmap(p, len);
    return;
  }
  pthread_mutex_lock(&pages.lock);
  pages.q[pages.n].p = p;
  pages.q[pages.n].len = len;
  pages.n++;
  pages.bytes += len;
  while (pages.n > KEEP || (pages.bytes > KEEP_BYTES && pages.n > 1)) drop_oldest();
  pthread_mutex_unlock(&pages.lock);
}

void cts_pages_counts(size_t *taken, size_t *reused) {
  pthread_mutex_lock(&pages.lock);
  *taken = pages.taken;
  *reused = pages.reused;
  pthread_mutex_unlock(&pages.lock);
}
