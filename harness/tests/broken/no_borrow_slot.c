/*
 * harness/tests/broken/no_borrow_slot.c: the example adapter without res_temp_attach, an
 * optional slot (spec/adapter.md ABI.SLOT.1): the cases with a `borrow` statement are
 * NotSupported and every other case keeps the example's status (run_selftests.sh (i)).
 * clauses: [ABI.SLOT.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.res_temp_attach = NULL;
  return &broken;
}
