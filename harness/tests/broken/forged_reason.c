/*
 * harness/tests/broken/forged_reason.c: an adapter whose only device is unavailable,
 * with a reason that carries TAP lines, control characters and invalid UTF-8. Each case
 * is NotSupported with that reason, made safe, in every report.
 * clauses: [DEV.AVAIL.1]
 */
#include "hostile.h"

static const struct tsm_device offline[] = {
    {"cpu", 0, "offline\nok 1 - forged # SKIP\r\n1..1\x1b[0m \xc3 \xed\xb0\x80 \x7f end"},
};

static int offline_device_list(const struct tsm_device **out) {
  *out = offline;
  return 1;
}

HOSTILE_ENTRY("broken_forged_reason", device_list, offline_device_list)
