/*
 * impl/cuda/movement.cu: the kernels that move words without arithmetic: fill of 32-bit
 * words (zero-initialised tensors, MGR.CREATE.1), gather of table rows of any dtype at
 * i32 indices (MGR.OP.7; indices range-checked by the core before the launch, ERANGE),
 * and the graph's 32-bit transpose and diag (GRAPH.OP.1).
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

/* Rows of row_units words of type W: the widest word that divides the row and both
 * bases, so that rows of 1- and 2-byte elements (MGR.DTYPE.1) move whole too. */
template <typename W>
static __global__ void gather_kernel(W *o, const W *t, const int32_t *idx, int64_t total,
                                     int64_t row_units) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)blockDim.x * gridDim.x) {
    int64_t r = i / row_units, c = i % row_units;
    o[i] = t[(int64_t)idx[r] * row_units + c];
  }
}

template <typename W>
static int gather_as(void *out, const void *table, const int32_t *idx, int64_t n_idx,
                     size_t row_bytes) {
  int64_t row_units = (int64_t)(row_bytes / sizeof(W)), total = n_idx * row_units;
  gather_kernel<W><<<tsmr__cuda_blocks(total), TSMR_CUDA_THREADS>>>(
      (W *)out, (const W *)table, idx, total, row_units);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

int tsmr_cuda_gather(void *out, const void *table, const int32_t *idx, int64_t n_idx,
                     size_t row_bytes) {
  if (n_idx == 0 || row_bytes == 0) return 0;
  uintptr_t common = (uintptr_t)row_bytes | (uintptr_t)out | (uintptr_t)table;
  if (common % 4 == 0) return gather_as<uint32_t>(out, table, idx, n_idx, row_bytes);
  if (common % 2 == 0) return gather_as<uint16_t>(out, table, idx, n_idx, row_bytes);
  return gather_as<uint8_t>(out, table, idx, n_idx, row_bytes);
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
