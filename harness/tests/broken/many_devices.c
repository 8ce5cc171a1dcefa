/*
 * harness/tests/broken/many_devices.c: an adapter that lists 40 devices, more than the
 * judge runs (16). The judge must warn once on stderr and run every case on the first
 * 16: each Pass. Every device is the example's cpu (sessions open device 0).
 * clauses: [ABI.DEV.1]
 */
#include "hostile.h"

static struct tsm_adapter broken;

#define N_DEVICES 40

static struct tsm_device devices[N_DEVICES];
static char names[N_DEVICES][16];

static int many_device_list(const struct tsm_device **out) {
  for (int i = 0; i < N_DEVICES; i++) {
    names[i][0] = 'c', names[i][1] = 'p', names[i][2] = 'u';
    names[i][3] = (char)('0' + i / 10), names[i][4] = (char)('0' + i % 10);
    devices[i] = (struct tsm_device){names[i], 1, NULL};
  }
  *out = devices;
  return N_DEVICES;
}

static int first_device_session_open(int device, void **s) {
  (void)device;
  return hostile_open(0, s);
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_many_devices";
  broken.device_list = many_device_list;
  broken.session_open = first_device_session_open;
  return &broken;
}
