/*
 * harness/tests/broken/oom.c: an adapter whose session_open allocates and touches
 * memory until an allocation fails, then aborts. Run with --memory-limit, each case
 * must be Crash with a message naming the limit, and the machine keeps its memory.
 * clauses: [ERR.NOABORT.1]
 */
#include <stdlib.h>
#include <string.h>

#include "hostile.h"

/* The blocks allocated so far, chained: kept where the compiler must assume they are
 * read, so that it cannot elide the allocations. */
static void *volatile allocated;

static int oom_session_open(int device, void **s) {
  for (;;) {
    char *p = malloc(16u << 20);
    if (!p) abort();
    memset(p, 1, 16u << 20);
    *(void **)p = allocated;
    allocated = p;
  }
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_oom", session_open, oom_session_open)
