/*
 * harness/tests/broken/exit_in_entry.c: an adapter whose entry point calls exit(0).
 * The probe must say so and every case be Error (load), never Pass.
 * clauses: [ABI.LOAD.1]
 */
#include <stdlib.h>

#include "hostile.h"

const struct tsm_adapter *tsm_adapter_entry(void) { exit(0); }
