/*
 * harness/tests/broken/flood.c: an adapter whose session_open writes 4 MiB to stdout
 * and stderr, more than any pipe holds. The judge must keep reading (no deadlock), keep
 * a bounded part and say so: each case Pass.
 * clauses: [ERR.NOABORT.1]
 */
#include <string.h>

#include "hostile.h"

static int flood_session_open(int device, void **s) {
  char line[4096];
  memset(line, 'x', sizeof line);
  line[sizeof line - 1] = '\n';
  for (int i = 0; i < 512; i++) {
    if (write(1 + i % 2, line, sizeof line) < 0) break;
  }
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_flood", session_open, flood_session_open)
