/*
 * impl/cuda/gather.cu: rows of a 2-d table at i32 indices, any 4-byte dtype
 * (MGR.OP.7). Indices are range-checked by the core before the launch (ERANGE).
 */
#include "tsmr_cuda.cuh"

static __global__ void cuda_gather_kernel(uint32_t *o, const uint32_t *t,
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
  cuda_gather_kernel<<<tsmr__cuda_blocks(total), TSMR_CUDA_THREADS>>>(
      (uint32_t *)out, (const uint32_t *)table, idx, total, row_words);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}
