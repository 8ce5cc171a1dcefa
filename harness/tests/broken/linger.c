/*
 * harness/tests/broken/linger.c: an adapter whose session_open forks a helper that
 * closes its stdio and sleeps forever in the case's process group. The cases are
 * correct (Pass); the helper must be killed with the group when the case ends.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int linger_session_open(int device, void **s) {
  if (fork() == 0) {
    close(0);
    close(1);
    close(2);
    hostile_helper_forever();
  }
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_linger", session_open, linger_session_open)
