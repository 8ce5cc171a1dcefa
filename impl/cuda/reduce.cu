/*
 * impl/cuda/reduce.cu: the reductions, MGR.OP.7: sum of all elements into a 0-d tensor,
 * per-block partials (double for f32, wrapping uint32 for i32) summed on the host.
 */
#include "tsmr_cuda.cuh"

#include <stdlib.h>

template <typename T, typename Acc>
static __global__ void sum_kernel(const T *a, int64_t n, Acc *partial) {
  __shared__ Acc sh[TSMR_CUDA_THREADS];
  Acc acc = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    acc += (Acc)a[i];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

template <typename T, typename Acc>
static int sum_typed(void *out, const void *a, int64_t n) {
  unsigned blocks = tsmr__cuda_blocks(n);
  if (blocks > 1024) blocks = 1024;
  Acc *dpart = NULL;
  Acc *hpart = (Acc *)malloc(blocks * sizeof(Acc));
  if (!hpart) return TSMR_ENOMEM;
  cudaError_t e = cudaMalloc(&dpart, blocks * sizeof(Acc));
  if (e != cudaSuccess) {
    free(hpart);
    CUDA_CHECK(e);
  }
  sum_kernel<T, Acc><<<blocks, TSMR_CUDA_THREADS>>>((const T *)a, n, dpart);
  e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaMemcpy(hpart, dpart, blocks * sizeof(Acc), cudaMemcpyDeviceToHost);
  cudaError_t ef = cudaFree(dpart);
  if (e == cudaSuccess) e = ef;
  Acc total = 0;
  for (unsigned i = 0; i < blocks; i++) total += hpart[i];
  free(hpart);
  CUDA_CHECK(e);
  T result = (T)total;
  CUDA_CHECK(cudaMemcpy(out, &result, sizeof result, cudaMemcpyHostToDevice));
  return 0;
}

int tsmr_cuda_sum(int dtype, void *out, const void *a, int64_t n) {
  if (dtype == TSMR_F32) return sum_typed<float, double>(out, a, n);
  return sum_typed<uint32_t, uint32_t>(out, a, n);
}
