/*
 * impl/cpu/cpu_backend.c: the CPU backend: host memory through the library's
 * allocation hook and plain C kernels. Clauses: MGR.OP.7 (values: i32 exact with
 * two's-complement wrap, f32 sum and matmul accumulated in double), DEV.VAL.1; the
 * graph operations of GRAPH.OP.1: matmul by OpenBLAS's cblas_sgemm, SVD by LAPACKE's
 * sgesvd (Debian's libopenblas-dev and liblapacke-dev; no hand-written linear algebra),
 * both loaded on the first graph matmul or SVD of the process (la_get).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "block_cache.h"
#include "internal.h"

/* OpenBLAS and LAPACKE are dlopen()ed on first use, not linked: the judge loads the
 * adapter with RTLD_NOW in every case process, and resolving OpenBLAS', LAPACK's and
 * gfortran's symbols there was over half the CPU time of the case library, most of
 * whose cases never multiply a matrix (bench/README.md). Loaded once (pthread_once),
 * never unloaded; the types come from the headers. */
static struct {
  __typeof__(cblas_sgemm) *sgemm;
  __typeof__(LAPACKE_sgesvd) *sgesvd;
} la;
static pthread_once_t la_once = PTHREAD_ONCE_INIT;

static void la_load(void) {
  void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  void *lapacke = dlopen("liblapacke.so.3", RTLD_NOW | RTLD_LOCAL);
  void *sgemm = blas ? dlsym(blas, "cblas_sgemm") : NULL;
  void *sgesvd = lapacke ? dlsym(lapacke, "LAPACKE_sgesvd") : NULL;
  memcpy(&la.sgemm, &sgemm, sizeof sgemm); /* object to function pointer (POSIX) */
  memcpy(&la.sgesvd, &sgesvd, sizeof sgesvd);
}

/* 0 once the linear algebra is loaded, else TSMR_EDEVICE: the CPU cannot run the
 * operation without Debian's libopenblas0 and liblapacke (`make deps`). */
static int la_get(void) {
  pthread_once(&la_once, la_load);
  return la.sgemm && la.sgesvd ? 0 : TSMR_EDEVICE;
}

/* A large block comes from the cache of freed ones when it has one (block_cache.h). */
static int cpu_alloc(size_t n, void **out) {
  void *p = n >= TSMR__BLOCK_CACHE_MIN ? tsmr__block_cache_take(n) : NULL;
  if (p && tsmr__alloc_refused()) {
    if (!tsmr__block_cache_keep(p)) tsmr__free(p);
    return TSMR_ENOMEM;
  }
  if (!p) p = tsmr__alloc(n);
  if (!p) return TSMR_ENOMEM;
  *out = p;
  return 0;
}

static void cpu_free(void *p) {
  if (!tsmr__block_cache_keep(p)) tsmr__free(p);
}

static int cpu_copy(void *dst, const void *src, size_t n) {
  memcpy(dst, src, n);
  return 0;
}

static int cpu_fill32(void *dst, int64_t count, uint32_t value) {
  uint32_t *d = dst;
  for (int64_t i = 0; i < count; i++) d[i] = value;
  return 0;
}

/* i32 arithmetic goes through uint32_t so overflow wraps instead of being UB. */
#define TSMR_CPU_BINARY(NAME, EXPR_F, EXPR_U)                                    \
  static int tsmr_cpu_##NAME(int dtype, void *out, const void *a, const void *b,  \
                             int64_t n) {                                         \
    if (dtype == TSMR_F32) {                                                      \
      float *o = out;                                                             \
      const float *x = a, *y = b;                                                 \
      for (int64_t i = 0; i < n; i++) o[i] = EXPR_F;                              \
    } else {                                                                      \
      int32_t *o = out;                                                           \
      const int32_t *x = a, *y = b;                                               \
      for (int64_t i = 0; i < n; i++)                                             \
        o[i] = (int32_t)(EXPR_U);                                                 \
    }                                                                             \
    return 0;                                                                     \
  }

TSMR_CPU_BINARY(add, x[i] + y[i], (uint32_t)x[i] + (uint32_t)y[i])
TSMR_CPU_BINARY(sub, x[i] - y[i], (uint32_t)x[i] - (uint32_t)y[i])
TSMR_CPU_BINARY(mul, x[i] * y[i], (uint32_t)x[i] * (uint32_t)y[i])

static int cpu_sum(int dtype, void *out, const void *a, int64_t n) {
  if (dtype == TSMR_F32) {
    const float *x = a;
    double acc = 0.0;
    for (int64_t i = 0; i < n; i++) acc += x[i];
    *(float *)out = (float)acc;
  } else {
    const int32_t *x = a;
    uint32_t acc = 0;
    for (int64_t i = 0; i < n; i++) acc += (uint32_t)x[i];
    *(int32_t *)out = (int32_t)acc;
  }
  return 0;
}

static int cpu_gather(void *out, const void *table, const int32_t *idx,
                      int64_t n_idx, size_t row_bytes) {
  unsigned char *o = out;
  const unsigned char *t = table;
  for (int64_t r = 0; r < n_idx; r++)
    memcpy(o + (size_t)r * row_bytes, t + (size_t)idx[r] * row_bytes, row_bytes);
  return 0;
}

static int cpu_matmul(float *out, const float *a, const float *b,
                      const struct tsmr__mm_dims *d) {
  int64_t m = d->m, k = d->k, n = d->n;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; p++) acc += (double)a[i * k + p] * (double)b[p * n + j];
      out[i * n + j] = (float)acc;
    }
  return 0;
}

static int cpu_sgemm(float *out, const float *a, const float *b,
                     const struct tsmr__mm_dims *d) {
  int64_t m = d->m, k = d->k, n = d->n;
  if (m > INT32_MAX || k > INT32_MAX || n > INT32_MAX) return TSMR_ENOMEM;
  if (k == 0) {
    memset(out, 0, (size_t)m * (size_t)n * sizeof(float));
    return 0;
  }
  int rc = la_get();
  if (rc) return rc;
  la.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f, a,
              (int)k, b, (int)n, 0.0f, out, (int)n);
  return 0;
}

static int cpu_transpose32(void *out, const void *a, int64_t m, int64_t n) {
  uint32_t *o = out;
  const uint32_t *x = a;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) o[j * m + i] = x[i * n + j];
  return 0;
}

static int cpu_diag32(void *out, const void *a, int64_t k) {
  uint32_t *o = out;
  const uint32_t *x = a;
  memset(o, 0, (size_t)k * (size_t)k * sizeof(uint32_t));
  for (int64_t i = 0; i < k; i++) o[i * k + i] = x[i];
  return 0;
}

static int cpu_sgesvd(const struct tsmr__svd_out *o, const float *a, int64_t m,
                      int64_t n) {
  float *u = o->u, *s = o->s, *vt = o->vt;
  if (m > INT32_MAX || n > INT32_MAX) return TSMR_ENOMEM;
  int rc = la_get();
  if (rc) return rc;
  int64_t k = m < n ? m : n;
  float *w = tsmr__alloc((size_t)m * (size_t)n * sizeof(float)); /* sgesvd destroys a */
  float *superb = tsmr__alloc((size_t)k * sizeof(float));
  if (!w || !superb) {
    rc = TSMR_ENOMEM;
    goto out;
  }
  memcpy(w, a, (size_t)m * (size_t)n * sizeof(float));
  lapack_int info = la.sgesvd(LAPACK_ROW_MAJOR, 'S', 'S', (lapack_int)m, (lapack_int)n,
                                   w, (lapack_int)n, s, u, (lapack_int)k, vt,
                                   (lapack_int)n, superb);
  if (info != 0) rc = info < 0 ? TSMR_EINVAL : TSMR_ERANGE; /* > 0: no convergence */
out:
  tsmr__free(w);
  tsmr__free(superb);
  return rc;
}

const struct tsmr__backend tsmr__cpu_backend = {
    /* .api_version = */ TSMR__BACKEND_API_VERSION,
    /* .name        = */ "cpu",
    /* .host_memory = */ 1,
    /* .probe       = */ NULL, /* always usable */
    /* .alloc       = */ cpu_alloc,
    /* .free_mem    = */ cpu_free,
    /* .copy_h2d    = */ cpu_copy,
    /* .copy_d2h    = */ cpu_copy,
    /* .copy_d2d    = */ cpu_copy,
    /* .fill32      = */ cpu_fill32,
    /* .add         = */ tsmr_cpu_add,
    /* .sub         = */ tsmr_cpu_sub,
    /* .mul         = */ tsmr_cpu_mul,
    /* .sum         = */ cpu_sum,
    /* .gather      = */ cpu_gather,
    /* .matmul      = */ cpu_matmul,
    /* .graph_align = */ 4, /* exact sizes: f32 and i32 are 4 bytes */
    /* .sgemm       = */ cpu_sgemm,
    /* .transpose32 = */ cpu_transpose32,
    /* .diag32      = */ cpu_diag32,
    /* .sgesvd      = */ cpu_sgesvd,
    /* .release_cache = */ tsmr__block_cache_release, /* LAPACK stays loaded */
};
