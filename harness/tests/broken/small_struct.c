/*
 * harness/tests/broken/small_struct.c: an adapter whose struct_size is smaller than
 * the ABI 1.0 struct (as if built from a truncated header). The judge must refuse it,
 * naming struct_size, and report every case Error.
 * clauses: [ABI.VER.2]
 */
#include <stddef.h>

#include "broken.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_small_struct";
  broken.struct_size = (uint32_t)offsetof(struct tsm_adapter, mgr_root);
  return &broken;
}
