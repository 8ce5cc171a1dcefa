/*
 * harness/tests/broken/many_helpers.c: an adapter whose session_open forks a chain of
 * helpers, each forking the next, some of them leaving their group. Each case Pass;
 * none of them may outlive the run.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

/* The chain: each link forks the next and sleeps; every other one leaves its group. */
static void chain(void) {
  for (int depth = 0; depth < 5; depth++) {
    if (depth % 2) setpgid(0, 0);
    if (fork() != 0) break; /* this link stays; its child goes on */
  }
  hostile_helper_forever();
}

static int many_session_open(int device, void **s) {
  if (fork() == 0) chain();
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_many_helpers", session_open, many_session_open)
