/*
 * harness/tests/broken/ignore_signals.c: an adapter that ignores SIGTERM, SIGINT and
 * SIGHUP and then spins in session_open. Each case that runs must be Timeout.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static volatile int stop;

static int stubborn_session_open(int device, void **s) {
  signal(SIGTERM, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  while (!stop) {
  }
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_ignore_signals", session_open, stubborn_session_open)
