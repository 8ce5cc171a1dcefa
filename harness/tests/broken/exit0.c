/*
 * harness/tests/broken/exit0.c: an adapter whose tensor_new calls exit(0) mid-case,
 * after the case has already made progress. A child that exits before finishing its
 * case, even with status 0, must be reported Error, never Pass.
 * clauses: [ERR.NOABORT.1]
 */
#include <stdlib.h>

#include "broken.h"

static struct tsm_adapter broken;

static int exit0_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                            const void *data, tsm_handle *out) {
  (void)s;
  (void)m;
  (void)desc;
  (void)data;
  (void)out;
  exit(0);
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_exit0";
  broken.tensor_new = exit0_tensor_new;
  return &broken;
}
