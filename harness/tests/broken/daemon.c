/*
 * harness/tests/broken/daemon.c: an adapter whose session_open daemonises a helper
 * (fork, setsid, fork again: a new session, out of the case's process group) that
 * keeps stdout and stderr open. Each case Pass; the daemon must not outlive the run.
 * clauses: [ERR.NOABORT.1]
 */
#include <stdlib.h>

#include "hostile.h"

static int daemon_session_open(int device, void **s) {
  pid_t first = fork();
  if (first == 0) {
    setsid();
    hostile_spawn_helper();
    _exit(0);
  }
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_daemon", session_open, daemon_session_open)
