/*
 * harness/tests/broken/no_entry.c: an adapter that exports no tsm_adapter_entry (its
 * author misspelled it). The judge must report every case Error, naming the missing
 * symbol.
 * clauses: [ABI.LOAD.1]
 */
#include "broken.h"

/* The wrong name: dlsym(TSM_ADAPTER_ENTRY_NAME) finds nothing in this object. */
const struct tsm_adapter *tsm_adapter_entrypoint(void);

const struct tsm_adapter *tsm_adapter_entrypoint(void) { return tsm_example_entry(); }
