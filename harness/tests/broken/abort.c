/*
 * harness/tests/broken/abort.c: an adapter whose mgr_new_sub calls abort(), as a
 * library's failed assertion would. Each case that runs must be reported Crash.
 * clauses: [ERR.NOABORT.1]
 */
#include <stdlib.h>

#include "broken.h"

static struct tsm_adapter broken;

static int abort_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  (void)s;
  (void)parent;
  (void)out;
  abort();
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_abort";
  broken.mgr_new_sub = abort_mgr_new_sub;
  return &broken;
}
