/*
 * impl/cpu/sim_cuda.c: the CPU backend dressed as a CUDA device, so that a machine
 * without a GPU can run the case library with a CUDA session's semantics (lane
 * portability of make check). Its pointers are host memory, but the core is told they
 * are not (host_memory 0): it moves every byte through the copy slots, as it does for
 * cuda:0, so a session on it copies host imports (DLP.MGR.3, DLP.IMPORT.7), exports
 * kDLCUDA tensors, keeps no small tensor inline and places graph tensors at the CUDA
 * backend's alignment. What it cannot show is a kernel's own rounding (DEV.VAL.1) or a
 * host dereference of a device pointer: those need a GPU (make check-gpu).
 * The device is listed as "cuda-sim:0" only when $TSMREF_SIMULATE_CUDA is set
 * (impl/src/device.c).
 */
#include <pthread.h>

#include "internal.h"

static struct tsmr__backend sim_cuda;
static pthread_once_t sim_cuda_once = PTHREAD_ONCE_INIT;

static void sim_cuda_build(void) {
  sim_cuda = tsmr__cpu_backend;
  sim_cuda.name = "cuda";
  sim_cuda.host_memory = 0;
  sim_cuda.graph_align = 256; /* impl/cuda/cuda_backend.cu's: cudaMalloc's alignment */
}

const struct tsmr__backend *tsmr__sim_cuda_backend(void) {
  pthread_once(&sim_cuda_once, sim_cuda_build);
  return &sim_cuda;
}
