/*
 * harness/tests/broken/escape_group.c: an adapter whose session_open forks a helper
 * that moves to a process group of its own (setpgid) and sleeps, so that killing the
 * case's group misses it. Each case Pass; the helper must not outlive the run.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int escape_session_open(int device, void **s) {
  if (fork() == 0) {
    setpgid(0, 0);
    hostile_helper_forever();
  }
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_escape_group", session_open, escape_session_open)
