/*
 * harness/tests/broken/bad_device.c: an adapter whose device_list returns 0 devices.
 * The judge must report every case Error, saying the adapter offers no devices.
 * clauses: [ABI.DEV.1]
 */
#include <stddef.h>

#include "broken.h"

static struct tsm_adapter broken;

static int bad_device_list(const struct tsm_device **out) {
  *out = NULL;
  return 0;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_bad_device";
  broken.device_list = bad_device_list;
  return &broken;
}
