/*
 * harness/tests/broken/segv.c: an adapter whose mgr_new_sub dies of SIGSEGV.
 * Every self-test case that runs creates a sub-manager, so each must be reported
 * Crash, and the run must go on to the next case.
 * clauses: [ERR.NOABORT.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

/* A volatile NULL pointer: the compiler cannot see it is NULL, so the store below is
 * a real SIGSEGV, not a trap instruction. */
static int *volatile nowhere;

static int segv_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  (void)s;
  (void)parent;
  *nowhere = 42;
  *out = TSM_NONE;
  return 0;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_segv";
  broken.mgr_new_sub = segv_mgr_new_sub;
  return &broken;
}
