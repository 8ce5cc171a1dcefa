/*
 * harness/tests/broken/hang.c: an adapter whose mgr_new_sub spins forever. Each case
 * that runs must be reported Timeout, and the judge must kill the child and go on.
 * clauses: [ERR.NOABORT.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

/* Nothing ever sets it; volatile, so the loop below is a real busy loop. */
static volatile int stop;

static int hang_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  (void)s;
  (void)parent;
  (void)out;
  while (!stop) {
  }
  return TSM_EINVAL;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_hang";
  broken.mgr_new_sub = hang_mgr_new_sub;
  return &broken;
}
