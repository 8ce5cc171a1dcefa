/*
 * impl/cuda/tsmr_cuda.cuh: shared declarations of the CUDA backend: CUDA_CHECK, the
 * launch geometry, and the entries of the kernel files (one file per op family).
 * Clauses: DEV.RUN.1, DEV.VAL.1.
 */
#ifndef TSMR_CUDA_CUH
#define TSMR_CUDA_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "tsmref.h"
#include "backend.h"

/* Checks a CUDA runtime call; on failure prints file:line and returns a TSMR code
 * (ENOMEM for an allocation failure, else EDEVICE). */
#define CUDA_CHECK(call)                                                          \
  do {                                                                            \
    cudaError_t tsmr_err_ = (call);                                               \
    if (tsmr_err_ != cudaSuccess) {                                               \
      if (tsmr_err_ == cudaErrorMemoryAllocation) return TSMR_ENOMEM;             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
              cudaGetErrorString(tsmr_err_));                                     \
      return TSMR_EDEVICE;                                                        \
    }                                                                             \
  } while (0)

#define TSMR_CUDA_THREADS 256

static inline unsigned tsmr__cuda_blocks(int64_t n) {
  int64_t b = (n + TSMR_CUDA_THREADS - 1) / TSMR_CUDA_THREADS;
  return (unsigned)(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}


/* The kernels, one file per family; the vtable lives in cuda_backend.cu. */
/* binary.cu: elementwise (MGR.OP.7) */
int tsmr_cuda_add(int dtype, void *out, const void *a, const void *b, int64_t n);
int tsmr_cuda_sub(int dtype, void *out, const void *a, const void *b, int64_t n);
int tsmr_cuda_mul(int dtype, void *out, const void *a, const void *b, int64_t n);
/* reduce.cu (MGR.OP.7) */
int tsmr_cuda_sum(int dtype, void *out, const void *a, int64_t n);
/* movement.cu: word moves (MGR.CREATE.1, MGR.OP.7, GRAPH.OP.1) */
int tsmr_cuda_fill32(void *dst, int64_t count, uint32_t value);
int tsmr_cuda_gather(void *out, const void *table, const int32_t *idx, int64_t n_idx,
                     size_t row_bytes);
int tsmr_cuda_transpose32(void *out, const void *a, int64_t m, int64_t n);
int tsmr_cuda_diag32(void *out, const void *a, int64_t k);
/* linalg.cu (MGR.OP.7, GRAPH.OP.1) */
int tsmr_cuda_matmul(float *out, const float *a, const float *b,
                     const struct tsmr__mm_dims *d);
int tsmr_cuda_sgemm(float *out, const float *a, const float *b,
                    const struct tsmr__mm_dims *d);
int tsmr_cuda_sgesvd(const struct tsmr__svd_out *o, const float *a, int64_t m, int64_t n);
void tsmr_cuda_release_cache(void);

static inline int tsmr__cuda_d2d_raw(void *dst, const void *src, size_t n) {
  CUDA_CHECK(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToDevice));
  return 0;
}

#endif /* TSMR_CUDA_CUH */
