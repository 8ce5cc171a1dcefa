/*
 * impl/src/device.c: the device list and backend loading. Clauses: DEV.AVAIL.1,
 * ABI.DEV.1, DEV.RUN.1.
 *
 * "cpu" is always device 0. When libtsmref was built with the CUDA backend
 * (TSMREF_HAVE_CUDA), "cuda:0" is listed too; its backend lives in libtsmref_cuda.so,
 * which is looked up next to the object that contains libtsmref (dladdr), or at
 * $TSMREF_CUDA_LIB, and dlopen()ed at listing time, so libtsmref never links cudart.
 * The device is available only when the library loads, its API version matches and
 * its probe (cudaGetDeviceCount() > 0) succeeds; otherwise the reason says why.
 * The list is built once, lazily, by the first caller (pthread_once).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "internal.h"

struct tsmr_device_entry {
  const char *name;
  int available;
  const struct tsmr__backend *be;
  char reason[1024];
};

#ifdef TSMREF_HAVE_CUDA
#define TSMR_NDEV 2
#else
#define TSMR_NDEV 1
#endif

static struct tsmr_device_entry devices[TSMR_NDEV];
#ifdef TSMREF_HAVE_CUDA
static const char lib_anchor = 0; /* an address inside libtsmref, for dladdr */

static void load_cuda(struct tsmr_device_entry *d) {
  char path[4096];
  const char *env = getenv("TSMREF_CUDA_LIB");
  Dl_info info;
  if (env && *env) {
    snprintf(path, sizeof path, "%s", env);
  } else if (dladdr(&lib_anchor, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    int dirlen = slash ? (int)(slash - info.dli_fname) : 1;
    snprintf(path, sizeof path, "%.*s/libtsmref_cuda.so", dirlen,
             slash ? info.dli_fname : ".");
  } else {
    snprintf(d->reason, sizeof d->reason,
             "libtsmref_cuda.so not found: cannot locate libtsmref (dladdr failed)");
    return;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *err = dlerror();
    snprintf(d->reason, sizeof d->reason,
             "libtsmref_cuda.so not found next to libtsmref: %.900s", err ? err : path);
    return;
  }
  void *sym = dlsym(lib, TSMR__CUDA_ENTRY_NAME);
  tsmr__backend_entry_fn entry;
  if (!sym) {
    snprintf(d->reason, sizeof d->reason, "%.600s: symbol %s missing", path,
             TSMR__CUDA_ENTRY_NAME);
    return; /* the library stays loaded; never unloaded */
  }
  memcpy(&entry, &sym, sizeof entry);
  const struct tsmr__backend *be = entry();
  if (!be || be->api_version != TSMR__BACKEND_API_VERSION) {
    snprintf(d->reason, sizeof d->reason,
             "%.600s: incompatible backend API version (backend: %d, current: %d)", path,
             be ? be->api_version : -1, TSMR__BACKEND_API_VERSION);
    return;
  }
  if (be->probe && be->probe(d->reason, sizeof d->reason) != 0) {
    if (!d->reason[0]) snprintf(d->reason, sizeof d->reason, "CUDA device unusable");
    return;
  }
  d->reason[0] = '\0';
  d->be = be;
  d->available = 1;
}
#endif

static void devices_build(void) {
  devices[0].name = "cpu";
  devices[0].available = 1;
  devices[0].be = &tsmr__cpu_backend;
#ifdef TSMREF_HAVE_CUDA
  devices[1].name = "cuda:0";
  load_cuda(&devices[1]);
#endif
}

static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void devices_init(void) { pthread_once(&devices_once, devices_build); }

int tsmr_device_count(void) {
  devices_init();
  return TSMR_NDEV;
}

int tsmr_device_get(int i, const char **name, int *available, const char **reason) {
  devices_init();
  if (i < 0 || i >= TSMR_NDEV) return TSMR_EINVAL;
  if (name) *name = devices[i].name;
  if (available) *available = devices[i].available;
  if (reason) *reason = devices[i].reason;
  return 0;
}

int tsmr__device_backend(const char *name, const struct tsmr__backend **be,
                         const char **device_name) {
  devices_init();
  for (int i = 0; i < TSMR_NDEV; i++) {
    if (strcmp(name, devices[i].name) != 0) continue;
    if (!devices[i].available) return TSMR_EDEVICE;
    *be = devices[i].be;
    *device_name = devices[i].name;
    return 0;
  }
  return TSMR_EINVAL;
}
