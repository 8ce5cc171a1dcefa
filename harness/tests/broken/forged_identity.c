/*
 * harness/tests/broken/forged_identity.c: an adapter whose name, version and device
 * names carry line breaks, tabs, '#', TAP text, ANSI escapes and invalid UTF-8, and a
 * device name past the judge's field width. The behaviour is the example's: each case
 * Pass, on the forged device, and every report valid.
 * clauses: [ABI.DEV.1]
 */
#include "hostile.h"

static struct tsm_adapter broken;

static const struct tsm_device forged_devices[] = {
    {"cpu\n# forged\tnot ok 9 - \xff\xfe \x1b[31m#x\r"
     "0123456789012345678901234567890123456789012345678901234567890\xe2\x82\xac",
     1, NULL},
};

static int forged_device_list(const struct tsm_device **out) {
  *out = forged_devices;
  return 1;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken\nnot ok 1 - forged\tname \xc3\x28 \x1b[2J";
  broken.version = "1.0\r\nBail out! forged\x01";
  broken.device_list = forged_device_list;
  return &broken;
}
