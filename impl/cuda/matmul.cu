/*
 * impl/cuda/matmul.cu: f32 [m,k] x [k,n] -> [m,n], one thread per output element,
 * accumulated in double (MGR.OP.7 tolerance 1e-5 relative).
 */
#include "tsmr_cuda.cuh"

static __global__ void cuda_matmul_kernel(float *o, const float *a, const float *b,
                                          int64_t m, int64_t k, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n;
       i += (int64_t)blockDim.x * gridDim.x) {
    int64_t r = i / n, c = i % n;
    double acc = 0.0;
    for (int64_t p = 0; p < k; p++) acc += (double)a[r * k + p] * (double)b[p * n + c];
    o[i] = (float)acc;
  }
}

int tsmr_cuda_matmul(float *out, const float *a, const float *b, int64_t m, int64_t k,
                     int64_t n) {
  cuda_matmul_kernel<<<tsmr__cuda_blocks(m * n), TSMR_CUDA_THREADS>>>(out, a, b, m,
                                                                      k, n);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}
