/*
 * harness/tests/broken/crash_device_list.c: an adapter whose device_list aborts. The
 * probe must say it crashed and every case be Error (load).
 * clauses: [ABI.DEV.1]
 */
#include <stdlib.h>

#include "hostile.h"

static int crash_device_list(const struct tsm_device **out) {
  (void)out;
  abort();
}

HOSTILE_ENTRY("broken_crash_device_list", device_list, crash_device_list)
