/*
 * impl/cuda/binary.cu: the binary elementwise ops a + b, a - b, a * b for f32 (rounded
 * to nearest) and i32 (wrapping), MGR.OP.7: one grid-stride kernel over an op functor.
 */
#include "tsmr_cuda.cuh"

/* Grid-stride elementwise kernel; Op is a functor. */
template <typename T, typename Op>
static __global__ void binary_kernel(T *o, const T *a, const T *b, int64_t n, Op op) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    o[i] = op(a[i], b[i]);
}

template <typename OpF, typename OpI>
static int launch_binary(int dtype, void *out, const void *a, const void *b,
                         int64_t n) {
  if (dtype == TSMR_F32)
    binary_kernel<<<tsmr__cuda_blocks(n), TSMR_CUDA_THREADS>>>(
        (float *)out, (const float *)a, (const float *)b, n, OpF());
  else
    binary_kernel<<<tsmr__cuda_blocks(n), TSMR_CUDA_THREADS>>>(
        (uint32_t *)out, (const uint32_t *)a, (const uint32_t *)b, n, OpI());
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

struct add_f32 {
  __device__ float operator()(float x, float y) const { return __fadd_rn(x, y); }
};
struct add_u32 {
  __device__ uint32_t operator()(uint32_t x, uint32_t y) const { return x + y; }
};

int tsmr_cuda_add(int dtype, void *out, const void *a, const void *b, int64_t n) {
  return launch_binary<add_f32, add_u32>(dtype, out, a, b, n);
}

struct sub_f32 {
  __device__ float operator()(float x, float y) const { return __fsub_rn(x, y); }
};
struct sub_u32 {
  __device__ uint32_t operator()(uint32_t x, uint32_t y) const { return x - y; }
};

int tsmr_cuda_sub(int dtype, void *out, const void *a, const void *b, int64_t n) {
  return launch_binary<sub_f32, sub_u32>(dtype, out, a, b, n);
}

struct mul_f32 {
  __device__ float operator()(float x, float y) const { return __fmul_rn(x, y); }
};
struct mul_u32 {
  __device__ uint32_t operator()(uint32_t x, uint32_t y) const { return x * y; }
};

int tsmr_cuda_mul(int dtype, void *out, const void *a, const void *b, int64_t n) {
  return launch_binary<mul_f32, mul_u32>(dtype, out, a, b, n);
}
