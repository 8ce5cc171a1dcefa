/*
 * impl/src/backend.h: the device backend vtable (ggml style). The core validates every
 * argument (shapes, dtypes, index ranges) before it calls a slot, so a backend only
 * moves bytes and runs kernels. Implements the device side of DEV.RUN.1, DEV.BYTES.1,
 * DEV.VAL.1 and the values of MGR.OP.7.
 *
 * Pointers named dst/src/a/b/out are device pointers of this backend unless the name
 * says host. No slot is called with a byte or element count of 0. Every slot returns
 * 0 or a negative TSMR_* code; a slot the backend lacks is NULL and the op table
 * (impl/src/optable.c, which names each op's slot) answers TSMR_ENOTSUP.
 *
 * C and CUDA C++ both include this header (impl/cuda builds the CUDA instance).
 */
#ifndef TSMR_BACKEND_H
#define TSMR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSMR__BACKEND_API_VERSION 4

/* The dimensions of a matrix product out[m,n] = a[m,k] x b[k,n]. */
struct tsmr__mm_dims {
  int64_t m, k, n;
};

/* The three results of an economy SVD (device pointers). */
struct tsmr__svd_out {
  float *u, *s, *vt;
};

struct tsmr__backend {
  int api_version;       /* TSMR__BACKEND_API_VERSION; the loader refuses others */
  const char *name;      /* "cpu", "cuda" */
  int host_memory;       /* 1 when device pointers are plain host pointers */
  /* Checks the device can be used now. reason: OUT, caller buffer of cap bytes, set
   * when it cannot. Returns 0 or TSMR_EDEVICE. (optional: NULL means always usable) */
  int (*probe)(char *reason, size_t cap);
  /* out: OUT, n bytes of device memory, freed by free_mem. TSMR_ENOMEM on failure. */
  int (*alloc)(size_t n, void **out);
  /* p: IN, from alloc, freed here. */
  void (*free_mem)(void *p);
  int (*copy_h2d)(void *dst, const void *host_src, size_t n);  /* host -> device */
  int (*copy_d2h)(void *host_dst, const void *src, size_t n);  /* device -> host */
  int (*copy_d2d)(void *dst, const void *src, size_t n);       /* device -> device */
  /* dst[0..count) = value, as 32-bit words (both dtypes are 4 bytes wide). */
  int (*fill32)(void *dst, int64_t count, uint32_t value);
  /* out[i] = a[i] op b[i] for i < n, dtype TSMR_F32 or TSMR_I32 (i32 wraps). */
  int (*add)(int dtype, void *out, const void *a, const void *b, int64_t n);
  int (*sub)(int dtype, void *out, const void *a, const void *b, int64_t n);
  int (*mul)(int dtype, void *out, const void *a, const void *b, int64_t n);
  /* out[0] = sum of a[0..n); n may be 0 (out = 0). f32 accumulates in double. */
  int (*sum)(int dtype, void *out, const void *a, int64_t n);
  /* out[r, :] = table[idx[r], :] for r < n_idx; rows of row_bytes bytes; every idx is
   * already checked to lie in the table. */
  int (*gather)(void *out, const void *table, const int32_t *idx, int64_t n_idx,
                size_t row_bytes);
  /* out[m,n] = a[m,k] x b[k,n], f32, accumulated in double. */
  int (*matmul)(float *out, const float *a, const float *b, const struct tsmr__mm_dims *d);
  /* ---- version 2: graph operations (impl/src/graph.c, GRAPH.OP.1) ---- */
  /* Byte alignment of planner offsets (a power of two, >= 4). */
  size_t graph_align;
  /* out[m,n] = a[m,k] x b[k,n], f32, by the platform BLAS (cblas_sgemm, cublasSgemm);
   * k may be 0 (out = 0); m, n >= 1. out never aliases a or b. */
  int (*sgemm)(float *out, const float *a, const float *b, const struct tsmr__mm_dims *d);
  /* out[j, i] = a[i, j] for a [m, n] of 32-bit words; out never aliases a. */
  int (*transpose32)(void *out, const void *a, int64_t m, int64_t n);
  /* out [k, k] = 0 with out[i, i] = a[i], 32-bit words. */
  int (*diag32)(void *out, const void *a, int64_t k);
  /* Economy SVD of f32 a [m, n] (m, n >= 1, not modified), k = min(m, n): u [m, k],
   * s [k] (non-increasing), vt [k, n] (o's three pointers), all row-major, by LAPACK
   * (LAPACKE_sgesvd) or cuSOLVER (cusolverDnSgesvd). */
  int (*sgesvd)(const struct tsmr__svd_out *o, const float *a, int64_t m, int64_t n);
  /* Frees what the backend keeps between calls (library handles, workspaces); called
   * when the last context on the device closes, never during a call. (optional: NULL
   * when it keeps nothing) */
  void (*release_cache)(void);
};

/* The CUDA backend library exports this one C symbol (TSMR__CUDA_ENTRY_NAME). */
#define TSMR__CUDA_ENTRY_NAME "tsmr_cuda_backend_entry"
typedef const struct tsmr__backend *(*tsmr__backend_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* TSMR_BACKEND_H */
