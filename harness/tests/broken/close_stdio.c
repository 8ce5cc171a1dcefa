/*
 * harness/tests/broken/close_stdio.c: an adapter whose session_open closes stdin,
 * stdout and stderr. The judge's result pipe is not stdio: each case Pass.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int close_session_open(int device, void **s) {
  close(0);
  close(1);
  close(2);
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_close_stdio", session_open, close_session_open)
