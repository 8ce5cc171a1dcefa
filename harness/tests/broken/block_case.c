/*
 * harness/tests/broken/block_case.c: an adapter whose session_open blocks in a system
 * call (pause), not a busy loop. Each case that runs must be reported Timeout.
 * clauses: [ERR.NOABORT.1]
 */
#include "hostile.h"

static int block_session_open(int device, void **s) {
  (void)device;
  (void)s;
  for (;;) pause();
  return TSM_EINVAL; /* never reached */
}

HOSTILE_ENTRY("broken_block_case", session_open, block_session_open)
