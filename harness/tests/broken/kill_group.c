/*
 * harness/tests/broken/kill_group.c: an adapter that sends SIGKILL to its whole process
 * group (kill(0, ...)) in session_open. It must kill only the case's own group, never
 * the judge: each case Crash, and the run completes with every report.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int kill_group_session_open(int device, void **s) {
  kill(0, SIGKILL);
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_kill_group", session_open, kill_group_session_open)
