/*
 * impl/cuda/cuda_backend.cu: the CUDA backend vtable, device probe, memory and copies.
 * Built into libtsmref_cuda.so (cudart linked statically) and found by
 * impl/src/device.c through its one exported symbol, tsmr_cuda_backend_entry.
 * Clauses: DEV.AVAIL.1 (probe gives the reason), DEV.BYTES.1, DEV.RUN.1.
 *
 * Memory is stream-ordered (cudaMallocAsync and cudaFreeAsync on the legacy default
 * stream, which every kernel, copy and library call of the backend uses) from the
 * device's default pool: a free does not wait for the device, as cudaFree does. Where
 * the device has no memory pools, cudaMalloc and cudaFree.
 */
#include "tsmr_cuda.cuh"

static int use_pool; /* set once by cuda_probe, before any allocation */

/* Whether device 0 has stream-ordered allocation; its default pool keeps the default
 * release threshold (0), so what is freed goes back to the device at the next
 * synchronisation and cudaMemGetInfo sees the device as the cases left it. */
static void pool_setup(void) {
  int supported = 0;
  cudaError_t e = cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0);
  use_pool = e == cudaSuccess && supported;
}

static int cuda_probe(char *reason, size_t cap) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(reason, cap, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    return TSMR_EDEVICE;
  }
  if (n <= 0) {
    snprintf(reason, cap, "cudaGetDeviceCount: no CUDA-capable device is detected");
    return TSMR_EDEVICE;
  }
  e = cudaSetDevice(0);
  if (e != cudaSuccess) {
    snprintf(reason, cap, "cudaSetDevice(0): %s", cudaGetErrorString(e));
    return TSMR_EDEVICE;
  }
  pool_setup();
  return 0;
}

static int cuda_alloc(size_t n, void **out) {
  void *p = NULL;
  if (use_pool) CUDA_CHECK(cudaMallocAsync(&p, n, 0));
  else CUDA_CHECK(cudaMalloc(&p, n));
  *out = p;
  return 0;
}

static void cuda_free(void *p) {
  cudaError_t e = use_pool ? cudaFreeAsync(p, 0) : cudaFree(p);
  if (e != cudaSuccess)
    fprintf(stderr, "%s:%d: cudaFree: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));
}

static int cuda_h2d(void *dst, const void *src, size_t n) {
  CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice));
  return 0;
}

static int cuda_d2h(void *dst, const void *src, size_t n) {
  CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost));
  return 0;
}

static int cuda_d2d(void *dst, const void *src, size_t n) {
  CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice));
  return 0;
}

static const struct tsmr__backend cuda_backend_vtable = {
    /* .api_version = */ TSMR__BACKEND_API_VERSION,
    /* .name        = */ "cuda",
    /* .host_memory = */ 0,
    /* .probe       = */ cuda_probe,
    /* .alloc       = */ cuda_alloc,
    /* .free_mem    = */ cuda_free,
    /* .copy_h2d    = */ cuda_h2d,
    /* .copy_d2h    = */ cuda_d2h,
    /* .copy_d2d    = */ cuda_d2d,
    /* .fill32      = */ tsmr_cuda_fill32,
    /* .add         = */ tsmr_cuda_add,
    /* .sub         = */ tsmr_cuda_sub,
    /* .mul         = */ tsmr_cuda_mul,
    /* .sum         = */ tsmr_cuda_sum,
    /* .gather      = */ tsmr_cuda_gather,
    /* .matmul      = */ tsmr_cuda_matmul,
    /* .graph_align = */ 256, /* cudaMalloc's alignment: cuBLAS picks the same kernels
                                 for planned and unplanned runs (GRAPH.OUT.1) */
    /* .sgemm       = */ tsmr_cuda_sgemm,
    /* .transpose32 = */ tsmr_cuda_transpose32,
    /* .diag32      = */ tsmr_cuda_diag32,
    /* .sgesvd      = */ tsmr_cuda_sgesvd,
    /* .release_cache = */ tsmr_cuda_release_cache,
};

extern "C" __attribute__((visibility("default"))) const struct tsmr__backend *
tsmr_cuda_backend_entry(void) {
  return &cuda_backend_vtable;
}
