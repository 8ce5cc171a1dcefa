/*
 * harness/tests/broken/sigkill_self.c: an adapter that kills its own process with
 * SIGKILL in session_open (what the kernel's OOM killer does). Each case: Crash.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int sigkill_session_open(int device, void **s) {
  raise(SIGKILL);
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_sigkill_self", session_open, sigkill_session_open)
