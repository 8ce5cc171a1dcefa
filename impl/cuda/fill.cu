/*
 * impl/cuda/fill.cu: fill 32-bit words (zero-initialised tensors, MGR.CREATE.1).
 */
#include "tsmr_cuda.cuh"

static __global__ void cuda_fill_kernel(uint32_t *d, int64_t n, uint32_t v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    d[i] = v;
}

int tsmr_cuda_fill32(void *dst, int64_t count, uint32_t value) {
  if (value == 0) {
    CUDA_CHECK(cudaMemset(dst, 0, (size_t)count * 4));
    return 0;
  }
  cuda_fill_kernel<<<tsmr__cuda_blocks(count), TSMR_CUDA_THREADS>>>(
      (uint32_t *)dst, count, value);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}
