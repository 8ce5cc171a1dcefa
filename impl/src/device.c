/*
 * impl/src/device.c: the device list and backend loading. Clauses: DEV.AVAIL.1,
 * ABI.DEV.1, DEV.RUN.1.
 *
 * "cpu" is always device 0. When libtsmref was built with the CUDA backend
 * (TSMREF_HAVE_CUDA), "cuda:0" is listed too. Listing asks only the CUDA driver
 * (libcuda.so.1: cuInit, cuDeviceGetCount) whether a device is present, which costs
 * nothing on a machine without one; the backend itself, libtsmref_cuda.so with cudart,
 * cuBLAS and cuSOLVER, is dlopen()ed on first use of cuda:0, so a process that runs
 * only on cpu never loads it and libtsmref never links cudart. The backend is looked
 * up next to the object that contains libtsmref (dladdr), or at $TSMREF_CUDA_LIB.
 * If it cannot load where the driver saw a device, every call that wants cuda:0 gets
 * TSMR_EDEVICE and tsmr_device_get's reason says why.
 * With $TSMREF_SIMULATE_CUDA set (and not "0"), "cuda-sim:0" comes last: the CPU
 * backend with a CUDA session's semantics (impl/cpu/sim_cuda.c), for checking on a
 * machine without a GPU that a case holds on a CUDA device too.
 * The list is built once, lazily, by the first caller (pthread_once); the backend is
 * loaded once (its own pthread_once).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct tsmr_device_entry {
  const char *name;
  int available;
  const struct tsmr__backend *be;
  unsigned long open_ctxs; /* contexts open on it, under cache_lock */
  char reason[1024];
};

#ifdef TSMREF_HAVE_CUDA
#define TSMR_NDEV 2
#else
#define TSMR_NDEV 1
#endif

static struct tsmr_device_entry devices[TSMR_NDEV + 1]; /* + cuda-sim:0 */
static int n_devices = TSMR_NDEV;
#ifdef TSMREF_HAVE_CUDA
static const char lib_anchor = 0; /* an address inside libtsmref, for dladdr */

static void load_cuda_backend(struct tsmr_device_entry *d) {
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
  d->be = be;
}

/* The driver API's two calls, by their documented C signatures (CUresult is an int
 * enum, 0 on success). */
typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_count_fn)(int *count);

/* Whether the CUDA driver sees a device; fills d->reason when it does not. */
static int driver_sees_device(struct tsmr_device_entry *d) {
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!drv) {
    snprintf(d->reason, sizeof d->reason, "no CUDA driver (libcuda.so.1 not loadable)");
    return 0;
  }
  void *init_sym = dlsym(drv, "cuInit"), *count_sym = dlsym(drv, "cuDeviceGetCount");
  cu_init_fn cu_init;
  cu_count_fn cu_count;
  memcpy(&cu_init, &init_sym, sizeof cu_init);
  memcpy(&cu_count, &count_sym, sizeof cu_count);
  int n = 0, rc = -1;
  if (cu_init && cu_count && (rc = cu_init(0)) == 0) rc = cu_count(&n);
  dlclose(drv);
  if (rc != 0)
    snprintf(d->reason, sizeof d->reason, "CUDA driver error %d: no usable device", rc);
  else if (n <= 0)
    snprintf(d->reason, sizeof d->reason, "the CUDA driver sees no device");
  return rc == 0 && n > 0;
}

static pthread_once_t cuda_backend_once = PTHREAD_ONCE_INIT;

/* On failure d->be stays NULL and d->reason says why; the listing is not changed
 * afterwards (callers may have copied it), the calls that want cuda:0 get EDEVICE. */
static void cuda_backend_init(void) { load_cuda_backend(&devices[1]); }
#endif

static void devices_build(void) {
  devices[0].name = "cpu";
  devices[0].available = 1;
  devices[0].be = &tsmr__cpu_backend;
#ifdef TSMREF_HAVE_CUDA
  devices[1].name = "cuda:0";
  devices[1].available = driver_sees_device(&devices[1]);
#endif
  const char *sim = getenv("TSMREF_SIMULATE_CUDA");
  if (sim && *sim && strcmp(sim, "0") != 0) {
    devices[n_devices].name = "cuda-sim:0";
    devices[n_devices].available = 1;
    devices[n_devices].be = tsmr__sim_cuda_backend();
    n_devices++;
  }
}

static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void devices_init(void) { pthread_once(&devices_once, devices_build); }

int tsmr_device_count(void) {
  devices_init();
  return n_devices;
}

int tsmr_device_get(int i, const char **name, int *available, const char **reason) {
  devices_init();
  if (i < 0 || i >= n_devices) return TSMR_EINVAL;
  if (name) *name = devices[i].name;
  if (available) *available = devices[i].available;
  if (reason) *reason = devices[i].reason;
  return 0;
}

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last context to close on a device lets its backend free what it keeps between
 * calls (release_cache), so that nothing is held once every session is over. */
void tsmr__device_ctx_count(const struct tsmr__backend *be, int delta) {
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < n_devices; i++) {
    if (devices[i].be != be) continue;
    devices[i].open_ctxs += (unsigned long)(long)delta;
    if (delta < 0 && devices[i].open_ctxs == 0 && be->release_cache) be->release_cache();
    break;
  }
  pthread_mutex_unlock(&cache_lock);
}

int tsmr__device_backend(const char *name, const struct tsmr__backend **be,
                         const char **device_name) {
  devices_init();
  for (int i = 0; i < n_devices; i++) {
    if (strcmp(name, devices[i].name) != 0) continue;
#ifdef TSMREF_HAVE_CUDA
    if (i == 1 && devices[i].available) pthread_once(&cuda_backend_once, cuda_backend_init);
#endif
    if (!devices[i].available || !devices[i].be) return TSMR_EDEVICE;
    *be = devices[i].be;
    *device_name = devices[i].name;
    return 0;
  }
  return TSMR_EINVAL;
}
