/*
 * impl/cuda/sub.cu: elementwise a - b for f32 and i32 (i32 wraps), MGR.OP.7.
 */
#include "tsmr_cuda.cuh"

struct tsmr_cuda_sub_f {
  __device__ float operator()(float x, float y) const { return __fsub_rn(x, y); }
};
struct tsmr_cuda_sub_u {
  __device__ uint32_t operator()(uint32_t x, uint32_t y) const { return x - y; }
};

int tsmr_cuda_sub(int dtype, void *out, const void *a, const void *b, int64_t n) {
  return launch_binary<tsmr_cuda_sub_f, tsmr_cuda_sub_u>(dtype, out, a, b, n);
}
