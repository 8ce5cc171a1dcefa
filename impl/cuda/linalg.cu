/*
 * impl/cuda/linalg.cu: the linear algebra of the CUDA backend. The manager op matmul
 * (MGR.OP.7): f32 [m,k] x [k,n], one thread per output element accumulated in double
 * (tolerance 1e-5 relative). The graph ops (GRAPH.OP.1): matmul by cublasSgemm and
 * economy SVD by cusolverDnSgesvd (no hand-written linear algebra). The cuBLAS and
 * cuSOLVER handles are made on first use and kept until the last context on the device
 * closes (tsmr_cuda_release_cache, the backend's release_cache), so that a leak checker
 * sees none of their memory at exit; every call through them holds one mutex (contexts
 * may compute on several threads). Row-major data is column-major data
 * transposed: see each function.
 */
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <mutex>

#include "tsmr_cuda.cuh"

static __global__ void matmul_kernel(float *o, const float *a, const float *b,
                                     struct tsmr__mm_dims d) {
  const int64_t m = d.m, k = d.k, n = d.n;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n;
       i += (int64_t)blockDim.x * gridDim.x) {
    int64_t r = i / n, c = i % n;
    double acc = 0.0;
    for (int64_t p = 0; p < k; p++) acc += (double)a[r * k + p] * (double)b[p * n + c];
    o[i] = (float)acc;
  }
}

int tsmr_cuda_matmul(float *out, const float *a, const float *b,
                     const struct tsmr__mm_dims *d) {
  matmul_kernel<<<tsmr__cuda_blocks(d->m * d->n), TSMR_CUDA_THREADS>>>(out, a, b, *d);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

static std::mutex la_lock;
static cublasHandle_t cublas;
static cusolverDnHandle_t cusolver;

/* Makes the handles; call with the lock held. */
static int la_init(void) {
  if (!cublas && cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) {
    cublas = NULL;
    fprintf(stderr, "%s:%d: cublasCreate failed\n", __FILE__, __LINE__);
    return TSMR_EDEVICE;
  }
  if (!cusolver && cusolverDnCreate(&cusolver) != CUSOLVER_STATUS_SUCCESS) {
    cusolver = NULL;
    fprintf(stderr, "%s:%d: cusolverDnCreate failed\n", __FILE__, __LINE__);
    return TSMR_EDEVICE;
  }
  return 0;
}

void tsmr_cuda_release_cache(void) {
  std::lock_guard<std::mutex> guard(la_lock);
  if (cublas) cublasDestroy(cublas);
  if (cusolver) cusolverDnDestroy(cusolver);
  cublas = NULL;
  cusolver = NULL;
}

/* Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T: B's memory is
 * column-major B^T [n,k] (ld n), A's is A^T [k,m] (ld k). */
int tsmr_cuda_sgemm(float *out, const float *a, const float *b,
                    const struct tsmr__mm_dims *d) {
  const int64_t m = d->m, k = d->k, n = d->n;
  if (m > INT32_MAX || k > INT32_MAX || n > INT32_MAX) return TSMR_ENOMEM;
  if (k == 0) {
    CUDA_CHECK(cudaMemset(out, 0, (size_t)m * (size_t)n * sizeof(float)));
    return 0;
  }
  std::lock_guard<std::mutex> guard(la_lock);
  int rc = la_init();
  if (rc) return rc;
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t st = cublasSgemm(cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                                  (int)k, &one, b, (int)n, a, (int)k, &zero, out, (int)n);
  if (st != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "%s:%d: cublasSgemm: status %d\n", __FILE__, __LINE__, (int)st);
    return TSMR_EDEVICE;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return 0;
}

/* Column-major gesvd of M x N (M >= N) matrix w (destroyed): o->s, o->u (M x N, ld M),
 * o->vt (N x N, ld N). Lock held. */
static int gesvd_col_major(float *w, int M, int N, const struct tsmr__svd_out *o) {
  float *u = o->u, *s = o->s, *vt = o->vt;
  int lwork = 0, info = 0, rc = 0;
  float *work = NULL;
  int *dinfo = NULL;
  if (cusolverDnSgesvd_bufferSize(cusolver, M, N, &lwork) != CUSOLVER_STATUS_SUCCESS)
    return TSMR_EDEVICE;
  CUDA_CHECK(cudaMalloc(&dinfo, sizeof(int)));
  if (cudaMalloc(&work, (size_t)(lwork > 0 ? lwork : 1) * sizeof(float)) != cudaSuccess) {
    cudaFree(dinfo);
    return TSMR_ENOMEM;
  }
  signed char jobu = 'S', jobvt = 'S';
  cusolverStatus_t st = cusolverDnSgesvd(cusolver, jobu, jobvt, M, N, w, M, s, u, M,
                                         vt, N, work, lwork, NULL, dinfo);
  if (st != CUSOLVER_STATUS_SUCCESS) {
    fprintf(stderr, "%s:%d: cusolverDnSgesvd: status %d\n", __FILE__, __LINE__, (int)st);
    rc = TSMR_EDEVICE;
  } else if (cudaMemcpy(&info, dinfo, sizeof info, cudaMemcpyDeviceToHost) != cudaSuccess) {
    rc = TSMR_EDEVICE;
  } else if (info != 0) {
    rc = info < 0 ? TSMR_EINVAL : TSMR_ERANGE; /* > 0: no convergence */
  }
  cudaFree(work);
  cudaFree(dinfo);
  return rc;
}

/* Row-major A [m,n] is column-major A^T [n,m].
 * m <= n: gesvd of A^T (n x m, tall): A^T = U' S V'^T, so A = V' S U'^T: the
 *   column-major V'^T [m,m] (ld m) is row-major U [m,k] and the column-major U' [n,m]
 *   (ld n) is row-major Vt [k,n]: both written in place.
 * m > n: gesvd of A itself (column-major m x n, made by a transpose): U (column-major
 *   [m,n]) and Vt (column-major [n,n]) are transposed into row-major. */
int tsmr_cuda_sgesvd(const struct tsmr__svd_out *o, const float *a, int64_t m, int64_t n) {
  float *u = o->u, *s = o->s, *vt = o->vt;
  if (m > INT32_MAX || n > INT32_MAX) return TSMR_ENOMEM;
  std::lock_guard<std::mutex> guard(la_lock);
  int rc = la_init();
  if (rc) return rc;
  size_t mn = (size_t)m * (size_t)n * sizeof(float);
  float *w = NULL, *uc = NULL, *vc = NULL;
  CUDA_CHECK(cudaMalloc(&w, mn));
  if (m <= n) {
    rc = tsmr__cuda_d2d_raw(w, a, mn);
    const struct tsmr__svd_out t = {vt, s, u}; /* A^T's U' is Vt, its V'^T is U */
    if (!rc) rc = gesvd_col_major(w, (int)n, (int)m, &t);
  } else {
    rc = tsmr_cuda_transpose32(w, a, m, n);
    if (!rc && cudaMalloc(&uc, mn) != cudaSuccess) rc = TSMR_ENOMEM;
    if (!rc && cudaMalloc(&vc, (size_t)n * (size_t)n * sizeof(float)) != cudaSuccess)
      rc = TSMR_ENOMEM;
    const struct tsmr__svd_out c = {uc, s, vc};
    if (!rc) rc = gesvd_col_major(w, (int)m, (int)n, &c);
    if (!rc) rc = tsmr_cuda_transpose32(u, uc, n, m);  /* row-major [n,m] -> [m,n] */
    if (!rc) rc = tsmr_cuda_transpose32(vt, vc, n, n); /* row-major [n,n] -> [n,n]^T */
  }
  if (!rc && cudaDeviceSynchronize() != cudaSuccess) rc = TSMR_EDEVICE;
  cudaFree(w);
  cudaFree(uc);
  cudaFree(vc);
  return rc;
}
