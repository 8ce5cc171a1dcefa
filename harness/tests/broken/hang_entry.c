/*
 * harness/tests/broken/hang_entry.c: an adapter whose entry point never returns. The
 * probe must be killed at the case timeout and every case reported Error (load).
 * clauses: [ABI.LOAD.1]
 */
#include <stddef.h>

#include "hostile.h"

const struct tsm_adapter *tsm_adapter_entry(void) {
  for (;;) pause();
  return NULL; /* never reached */
}
