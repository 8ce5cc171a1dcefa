/*
 * harness/tests/broken/hang_device_list.c: an adapter whose device_list never returns.
 * The probe must be killed at the case timeout and every case reported Error (load).
 * clauses: [ABI.DEV.1]
 */
#include "hostile.h"

static int hang_device_list(const struct tsm_device **out) {
  (void)out;
  for (;;) pause();
  return 0; /* never reached */
}

HOSTILE_ENTRY("broken_hang_device_list", device_list, hang_device_list)
