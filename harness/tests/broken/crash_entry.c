/*
 * harness/tests/broken/crash_entry.c: an adapter whose entry point dies on SIGSEGV.
 * The probe must say it crashed and every case be Error (load).
 * clauses: [ABI.LOAD.1]
 */
#include "hostile.h"

const struct tsm_adapter *tsm_adapter_entry(void) {
  raise(SIGSEGV);
  return tsm_example_entry();
}
