/*
 * harness/tests/broken/term_group.c: an adapter that sends SIGTERM and SIGINT to its
 * process group in session_open, as a Ctrl-C would. Only the case's own group may get
 * them: each case Crash, and the judge goes on.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int term_group_session_open(int device, void **s) {
  kill(0, SIGINT);
  kill(0, SIGTERM);
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_term_group", session_open, term_group_session_open)
