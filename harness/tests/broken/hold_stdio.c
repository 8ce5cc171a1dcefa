/*
 * harness/tests/broken/hold_stdio.c: an adapter whose session_open forks a helper that
 * keeps the case's stdout and stderr (the judge's output pipe) open and sleeps. The
 * judge must not wait for the pipe to close: each case Pass, in about its own time.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int hold_session_open(int device, void **s) {
  hostile_spawn_helper();
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_hold_stdio", session_open, hold_session_open)
