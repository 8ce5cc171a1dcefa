/*
 * harness/tests/broken/stop_self.c: an adapter that stops its own process (SIGSTOP) in
 * session_open. A stopped case never ends by itself: each must be Timeout.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int stop_session_open(int device, void **s) {
  raise(SIGSTOP);
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_stop_self", session_open, stop_session_open)
