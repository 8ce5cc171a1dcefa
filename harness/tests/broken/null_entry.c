/*
 * harness/tests/broken/null_entry.c: an adapter whose tsm_adapter_entry returns NULL.
 * The judge must report every case Error, saying the entry returned NULL.
 * clauses: [ABI.LOAD.1]
 */
#include <stddef.h>

#include "broken.h"

const struct tsm_adapter *tsm_adapter_entry(void) { return NULL; }
