/*
 * harness/tests/broken/close_fds.c: an adapter whose session_open closes every
 * descriptor from 3 up, the judge's result pipe among them. The case cannot report:
 * each must be Error (no result), never Pass.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int close_fds_session_open(int device, void **s) {
  for (int fd = 3; fd < 1024; fd++) close(fd);
  return hostile_open(device, s);
}

HOSTILE_ENTRY("broken_close_fds", session_open, close_fds_session_open)
