/*
 * harness/tests/broken/abi_major.c: an adapter built against a future ABI major
 * (TSM_ADAPTER_ABI_MAJOR + 1). The judge must refuse it, naming abi_major and both
 * numbers, and report every case Error.
 * clauses: [ABI.VER.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_abi_major";
  broken.abi_major = TSM_ADAPTER_ABI_MAJOR + 1;
  return &broken;
}
