/*
 * harness/tests/broken/leak_once.c: the example adapter, but asked for a tensor of 19
 * elements, tensor_new also allocates 64 bytes and drops the pointer: a leak that only
 * LeakSanitizer sees, in one case of harness/tests/leak (2-leaks.tsm) and nowhere else.
 * harness/tests/check_batch_leak.sh runs that folder under an ASan-built judge per case
 * and with --batch: both times the leak is that case's Fail and no other case's.
 * clauses: [MGR.CREATE.1]
 */
#include <stdlib.h>

#include "hostile.h"

/* Where the leaked block's address goes, then is overwritten: volatile, so that the
 * compiler keeps the allocation. */
static void *volatile dropped;

static int leak_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                           const void *data, tsm_handle *out) {
  if (desc && desc->ndim == 1 && desc->shape[0] == 19) {
    dropped = malloc(64);
    dropped = NULL;
  }
  return tsm_example_entry()->tensor_new(s, m, desc, data, out);
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  static struct tsm_adapter broken;
  broken = *tsm_example_entry();
  broken.name = "broken_leak_once";
  broken.tensor_new = leak_tensor_new;
  return &broken;
}
