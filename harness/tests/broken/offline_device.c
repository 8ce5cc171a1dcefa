/*
 * harness/tests/broken/offline_device.c: a correct adapter that lists a second device
 * it cannot use now, the way the reference lists cuda:0 on a machine without a GPU.
 * The judge must run every case on cpu and report every case on the offline device
 * NotSupported with the adapter's reason, never Fail (DEV.AVAIL.1); cases needing an
 * op or family the adapter lacks are NotSupported too (ABI.CAP.1).
 * clauses: [DEV.AVAIL.1, ABI.CAP.1, ABI.DEV.1]
 */
#include <stddef.h>

#include "broken.h"

static struct tsm_adapter offline;

static const struct tsm_device devices[] = {
    {"cpu", 1, NULL},
    {"gpu:0", 0, "offline for this self-test"},
};

static int offline_device_list(const struct tsm_device **out) {
  *out = devices;
  return 2;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  offline = *tsm_example_entry();
  offline.name = "offline_device";
  offline.device_list = offline_device_list;
  return &offline;
}
