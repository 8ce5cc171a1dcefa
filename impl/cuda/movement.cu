/*
 * impl/cuda/movement.cu: the kernels that move 32-bit words without arithmetic: fill
 * (zero-initialised tensors, MGR.CREATE.1), gather of table rows at i32 indices
 * (MGR.OP.7; indices range-checked by the core before the launch, ERANGE), and the
 * graph's transpose and diag (GRAPH.OP.1).
 */
#include "tsmr_cuda.cuh"

static __global__ void fill_kernel(uint32_t *d, int64_t n, uint32_t v) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    d[i] = v;
}

int tsmr_cuda_fill32(void *dst, int64_t count, uint32_t value) {
  if (value == 0) {
    CUDA_CHECK(cudaMemset(dst, 0, (size_t)count * 4));
    return 0;
  }
  fill_kernel<<<tsmr__cuda_blocks(count), TSMR_CUDA_THREADS>>>(
      (uint32_t *)dst, count, value);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

static __global__ void gather_kernel(uint32_t *o, const uint32_t *t,
                                     const int32_t *idx, int64_t total,
                                     int64_t row_words) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)blockDim.x * gridDim.x) {
    int64_t r = i / row_words, c = i % row_words;
    o[i] = t[(int64_t)idx[r] * row_words + c];
  }
}

int tsmr_cuda_gather(void *out, const void *table, const int32_t *idx, int64_t n_idx,
                     size_t row_bytes) {
  int64_t row_words = (int64_t)(row_bytes / 4), total = n_idx * row_words;
  if (total == 0) return 0;
  gather_kernel<<<tsmr__cuda_blocks(total), TSMR_CUDA_THREADS>>>(
      (uint32_t *)out, (const uint32_t *)table, idx, total, row_words);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

static __global__ void transpose_kernel(uint32_t *o, const uint32_t *a, int64_t m,
                                        int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n;
       i += (int64_t)blockDim.x * gridDim.x) {
    int64_t r = i / n, c = i % n;
    o[c * m + r] = a[i];
  }
}

int tsmr_cuda_transpose32(void *out, const void *a, int64_t m, int64_t n) {
  transpose_kernel<<<tsmr__cuda_blocks(m * n), TSMR_CUDA_THREADS>>>(
      (uint32_t *)out, (const uint32_t *)a, m, n);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

static __global__ void diag_kernel(uint32_t *o, const uint32_t *a, int64_t k) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < k * k;
       i += (int64_t)blockDim.x * gridDim.x)
    o[i] = (i / k == i % k) ? a[i / k] : 0u;
}

int tsmr_cuda_diag32(void *out, const void *a, int64_t k) {
  diag_kernel<<<tsmr__cuda_blocks(k * k), TSMR_CUDA_THREADS>>>(
      (uint32_t *)out, (const uint32_t *)a, k);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}
