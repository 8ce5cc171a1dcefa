/*
 * harness/src/base/opsem.c: the semantics of the model's operations, shared by the manager
 * operations and the graph model (opsem.h). Clauses: MGR.CREATE.4, MGR.OP.7-8,
 * GRAPH.OP.1, DLP.IMPORT.6.
 */
#include "opsem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "util.h"

/* ---- shapes and dtypes --------------------------------------------------------- */

struct cts_opsem_tensor cts_opsem_tensor(int dtype, int ndim, const int64_t *shape,
                                         const double *vals) {
  struct cts_opsem_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.ndim = ndim;
  memcpy(t.shape, shape, (size_t)ndim * sizeof(int64_t));
  t.vals = vals;
  return t;
}

/* The product of the extents (a negative one counted as 0 when literal): 0 as soon as
 * one is 0, whatever the others (an empty [2^62, 4, 0] tensor is valid), else saturated
 * at INT64_MAX, so that a shape no memory holds never wraps to a small count. */
static int64_t extents_product(int ndim, const int64_t *shape, int literal) {
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0 || (literal && shape[i] < 0)) return 0;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    if (__builtin_mul_overflow(n, shape[i], &n)) return INT64_MAX;
  return n;
}

int64_t cts_opsem_elems(int ndim, const int64_t *shape) { return extents_product(ndim, shape, 0); }

int64_t cts_opsem_literal_elems(int ndim, const int64_t *shape) {
  return extents_product(ndim, shape, 1);
}

int cts_opsem_same_dims(int a_ndim, const int64_t *a, int b_ndim, const int64_t *b) {
  if (a_ndim != b_ndim) return 0;
  for (int i = 0; i < a_ndim; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

int cts_opsem_same_shape(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b) {
  return cts_opsem_same_dims(a->ndim, a->shape, b->ndim, b->shape);
}

struct dtype_row {
  int dtype;
  const char *name, *long_name;
  int code, bits;
};

static const struct dtype_row dtype_rows[] = {
#define CTS__ROW(dtype, name, long_name, code, bits) {dtype, name, long_name, code, bits},
    CTS_DTYPES(CTS__ROW)
#undef CTS__ROW
};
#define N_DTYPE_ROWS (sizeof dtype_rows / sizeof dtype_rows[0])

static const struct dtype_row *dtype_row(int dtype) {
  for (size_t i = 0; i < N_DTYPE_ROWS; i++)
    if (dtype_rows[i].dtype == dtype) return &dtype_rows[i];
  return NULL;
}

int cts_opsem_dtype_known(int dtype) { return dtype_row(dtype) != NULL; }

size_t cts_opsem_dtype_size(int dtype) {
  const struct dtype_row *row = dtype_row(dtype);
  return row ? (size_t)row->bits / 8 : 4u;
}

const char *cts_opsem_dtype_name(int dtype) {
  const struct dtype_row *row = dtype_row(dtype);
  return row ? row->name : "?";
}

int cts_opsem_dtype_by_name(const char *name, size_t len) {
  for (size_t i = 0; i < N_DTYPE_ROWS; i++) {
    const struct dtype_row *row = &dtype_rows[i];
    if ((strlen(row->name) == len && !memcmp(row->name, name, len)) ||
        (strlen(row->long_name) == len && !memcmp(row->long_name, name, len)))
      return row->dtype;
  }
  return 0;
}

int cts_opsem_dl_code(int dtype) {
  const struct dtype_row *row = dtype_row(dtype);
  return row ? row->code : CTS_DL_FLOAT;
}

int cts_opsem_dl_bits(int dtype) {
  const struct dtype_row *row = dtype_row(dtype);
  return row ? row->bits : 32;
}

int cts_opsem_dtype_of_dl(int code, int bits, int lanes) {
  if (lanes != 1) return 0;
  for (size_t i = 0; i < N_DTYPE_ROWS; i++)
    if (dtype_rows[i].code == code && dtype_rows[i].bits == bits) return dtype_rows[i].dtype;
  return 0;
}

/* 2^53: the 64-bit integer dtypes' literals stay where a double is exact. */
#define EXACT_INT 9007199254740992.0

int cts_opsem_int_range(int dtype, double *lo, double *hi) {
  const struct dtype_row *row = dtype_row(dtype);
  if (!row || (row->code != CTS_DL_INT && row->code != CTS_DL_UINT)) return 0;
  double span = row->bits == 64 ? EXACT_INT : ldexp(1.0, row->bits);
  *lo = row->code == CTS_DL_UINT ? 0 : row->bits == 64 ? -EXACT_INT : -span / 2;
  *hi = row->code == CTS_DL_UINT || row->bits == 64 ? span : span / 2 - 1;
  if (row->code == CTS_DL_UINT && row->bits < 64) *hi = span - 1;
  return 1;
}

/* The power of two that divides the whole number v (v = 0: none, 2^64 stands for it). */
static double pow2_dividing(double v) {
  if (v == 0) return ldexp(1.0, 64);
  double p = 1;
  while (fmod(v, 2 * p) == 0) p *= 2;
  return p;
}

int cts_opsem_affine_exact(int dtype, double first, double step, int64_t n) {
  if (n <= 0) return 1;
  double last = first + step * (double)(n - 1);
  if (first != trunc(first) || step != trunc(step) || fabs(first) > EXACT_INT ||
      fabs(last) > EXACT_INT || fabs(step) > EXACT_INT)
    return 0;
  double lo, hi, big = fmax(fabs(first), fabs(last));
  if (cts_opsem_int_range(dtype, &lo, &hi)) return fmin(first, last) >= lo && fmax(first, last) <= hi;
  if (dtype == TSM_F64) return 1; /* whole numbers within 2^53 */
  if (dtype != TSM_F32) return 0;
  /* every element is a multiple of the largest power of two dividing first and step; a
   * float holds such a multiple exactly up to 2^24 times that power */
  double unit = fmin(pow2_dividing(first), pow2_dividing(step));
  return big <= ldexp(unit, 24);
}

static int in_int32(double x) { return x >= INT32_MIN && x <= INT32_MAX; }

int cts_opsem_affine_int32(double first, double step, int64_t n, int32_t *first32,
                           int32_t *step32) {
  double last = first + step * (double)(n > 0 ? n - 1 : 0);
  if (first != trunc(first) || step != trunc(step) || !in_int32(first) || !in_int32(step) ||
      !in_int32(last))
    return 0;
  *first32 = (int32_t)first;
  *step32 = (int32_t)step;
  return 1;
}

int cts_opsem_check_desc(int dtype, int ndim, const int64_t *shape) {
  if (!cts_opsem_dtype_known(dtype)) return TSM_EINVAL;
  if (ndim < 0 || ndim > TSM_MAX_DIMS) return TSM_EINVAL;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return TSM_EINVAL;
  return 0;
}

int cts_opsem_check_size(int dtype, int ndim, const int64_t *shape) {
  int64_t n = cts_opsem_elems(ndim, shape), bytes;
  if (n == INT64_MAX || __builtin_mul_overflow(n, (int64_t)cts_opsem_dtype_size(dtype), &bytes))
    return TSM_ENOMEM;
  return n > CTS_OPSEM_MAX_MODELED ? CTS_OPSEM_TOO_LARGE : 0;
}

/* ---- operations: which, and their shape and dtype rules ---------------------------- */

int cts_opsem_offered(int op, int family) {
  switch (op) {
    case TSM_OP_ADD: case TSM_OP_SUB: case TSM_OP_MUL: case TSM_OP_SUM:
    case TSM_OP_RESHAPE: case TSM_OP_MATMUL:
      return 1;
    case TSM_OP_GATHER:
      return family == CTS_OPSEM_MANAGER;
    case TSM_OP_TRANSPOSE: case TSM_OP_DIAG: case TSM_OP_SVD:
      return family == CTS_OPSEM_GRAPH;
    default:
      return 0;
  }
}

int cts_opsem_n_results(int op) { return op == TSM_OP_SVD ? 3 : 1; }

static void set_shape(struct cts_opsem_tensor *t, int dtype, int ndim, int64_t d0, int64_t d1) {
  const int64_t shape[2] = {d0, d1};
  *t = cts_opsem_tensor(dtype, ndim, shape, NULL);
}

int cts_opsem_dtype_arith(int dtype) {
  return dtype > 0 && dtype < 32 && (CTS_DTYPES_ARITH >> dtype & 1);
}

static int elementwise_rule(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b) {
  if (!cts_opsem_same_shape(a, b)) return TSM_ESHAPE;
  return a->dtype == b->dtype && cts_opsem_dtype_arith(a->dtype) ? 0 : TSM_EDTYPE;
}

static int gather_rule(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b) {
  if (a->ndim != 2 || b->ndim != 1) return TSM_ESHAPE;
  if (b->dtype != TSM_I32) return TSM_EDTYPE;
  for (int64_t i = 0; i < b->shape[0]; i++)
    if (b->vals[i] < 0 || b->vals[i] >= (double)a->shape[0]) return TSM_ERANGE;
  return 0;
}

static int reshape_rule(const struct cts_opsem_tensor *a, int ndim, const int64_t *shape) {
  if (ndim < 0 || ndim > TSM_MAX_DIMS) return TSM_EINVAL;
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) return TSM_EINVAL;
  return cts_opsem_elems(ndim, shape) == cts_opsem_elems(a->ndim, a->shape) ? 0 : TSM_ESHAPE;
}

static int matmul_rule(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b) {
  if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) return TSM_ESHAPE;
  return a->dtype == TSM_F32 && b->dtype == TSM_F32 ? 0 : TSM_EDTYPE;
}

/* U [m,k], S [k], Vt [k,n] with k = min(m,n). */
static int svd_rule(const struct cts_opsem_tensor *a, struct cts_opsem_tensor *out) {
  if (a->ndim != 2) return TSM_ESHAPE;
  if (a->dtype != TSM_F32) return TSM_EDTYPE;
  int64_t rows = a->shape[0], cols = a->shape[1], k = rows < cols ? rows : cols;
  set_shape(&out[0], TSM_F32, 2, rows, k);
  set_shape(&out[1], TSM_F32, 1, k, 0);
  set_shape(&out[2], TSM_F32, 2, k, cols);
  return 0;
}

/* The ops whose result is a matrix shaped from a's and b's extents: gather, matmul,
 * transpose, diag. */
static int matrix_result(int op, const struct cts_opsem_tensor *a,
                         const struct cts_opsem_tensor *b, struct cts_opsem_tensor *out) {
  int rc = 0;
  switch (op) {
    case TSM_OP_GATHER:
      if (!(rc = gather_rule(a, b))) set_shape(out, a->dtype, 2, b->shape[0], a->shape[1]);
      return rc;
    case TSM_OP_MATMUL:
      if (!(rc = matmul_rule(a, b))) set_shape(out, TSM_F32, 2, a->shape[0], b->shape[1]);
      return rc;
    case TSM_OP_TRANSPOSE:
      if (a->ndim != 2) return TSM_ESHAPE;
      set_shape(out, a->dtype, 2, a->shape[1], a->shape[0]);
      return 0;
    case TSM_OP_DIAG:
      if (a->ndim != 1) return TSM_ESHAPE;
      set_shape(out, a->dtype, 2, a->shape[0], a->shape[0]);
      return 0;
    default:
      return TSM_EINVAL;
  }
}

/* reshape: the target shape, of a's element count. */
static int reshape_result(const struct cts_opsem_tensor *a, int ndim, const int64_t *shape,
                          struct cts_opsem_tensor *out) {
  int rc = reshape_rule(a, ndim, shape);
  if (rc) return rc;
  out->ndim = ndim;
  memcpy(out->shape, shape, (size_t)ndim * sizeof(int64_t));
  return 0;
}

int cts_opsem_result(int op, const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b,
                     const struct cts_opsem_target *target, struct cts_opsem_tensor *out) {
  *out = *a; /* elementwise results are shaped like a, of a's dtype */
  out->vals = NULL;
  switch (op) {
    case TSM_OP_ADD: case TSM_OP_SUB: case TSM_OP_MUL:
      return elementwise_rule(a, b);
    case TSM_OP_SUM:
      out->ndim = 0;
      return cts_opsem_dtype_arith(a->dtype) ? 0 : TSM_EDTYPE;
    case TSM_OP_RESHAPE:
      return target ? reshape_result(a, target->ndim, target->shape, out) : TSM_EINVAL;
    case TSM_OP_SVD:
      return svd_rule(a, out);
    default:
      return matrix_result(op, a, b, out);
  }
}

/* ---- operations: values ---------------------------------------------------------- */

/* add, sub, mul of a and b into v, rounded to out's dtype. */
static void elementwise(int op, const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b,
                        const struct cts_opsem_tensor *out, double *v) {
  const double *x = a->vals, *y = b->vals;
  int64_t n = cts_opsem_elems(out->ndim, out->shape);
  if (op == TSM_OP_ADD)
    for (int64_t i = 0; i < n; i++) v[i] = x[i] + y[i];
  else if (op == TSM_OP_SUB)
    for (int64_t i = 0; i < n; i++) v[i] = x[i] - y[i];
  else
    for (int64_t i = 0; i < n; i++) v[i] = x[i] * y[i];
  cts_opsem_round_all(out->dtype, v, v, n);
}

static void matmul(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b,
                   double *v) {
  int64_t rows = a->shape[0], k = a->shape[1], cols = b->shape[1];
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      double s = 0;
      for (int64_t t = 0; t < k; t++) s += a->vals[i * k + t] * b->vals[t * cols + j];
      v[i * cols + j] = cts_opsem_round(TSM_F32, s);
    }
}

static void gather(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b,
                   double *v) {
  int64_t rows = b->shape[0], cols = a->shape[1];
  for (int64_t i = 0; i < rows; i++)
    memcpy(&v[i * cols], &a->vals[(int64_t)b->vals[i] * cols], (size_t)cols * sizeof(double));
}

static void transpose(const struct cts_opsem_tensor *a, double *v) {
  for (int64_t i = 0; i < a->shape[0]; i++)
    for (int64_t j = 0; j < a->shape[1]; j++)
      v[j * a->shape[0] + i] = a->vals[i * a->shape[1] + j];
}

double *cts_opsem_values(int op, const struct cts_opsem_tensor *a,
                         const struct cts_opsem_tensor *b, const struct cts_opsem_tensor *out) {
  int64_t n_in = cts_opsem_elems(a->ndim, a->shape);
  int64_t n_out = cts_opsem_elems(out->ndim, out->shape);
  double *v = cts_xcalloc(n_out ? (size_t)n_out : 1, sizeof(double));
  double s = 0;
  if (n_out == 0) return v; /* an empty result: no loop over a huge extent beside a zero */
  switch (op) {
    case TSM_OP_ADD: case TSM_OP_SUB: case TSM_OP_MUL:
      elementwise(op, a, b, out, v);
      break;
    case TSM_OP_SUM:
      for (int64_t i = 0; i < n_in; i++) s += a->vals[i];
      v[0] = cts_opsem_round(out->dtype, s);
      break;
    case TSM_OP_GATHER: gather(a, b, v); break;
    case TSM_OP_RESHAPE: memcpy(v, a->vals, (size_t)n_out * sizeof(double)); break;
    case TSM_OP_MATMUL: matmul(a, b, v); break;
    case TSM_OP_TRANSPOSE: transpose(a, v); break;
    case TSM_OP_DIAG:
      for (int64_t i = 0; i < a->shape[0]; i++) v[i * a->shape[0] + i] = a->vals[i];
      break;
    default: /* TSM_OP_SVD: the factors are the implementation's */
      break;
  }
  return v;
}

int cts_opsem_approx(int op, int dtype) {
  return dtype == TSM_F32 && (op == TSM_OP_SUM || op == TSM_OP_MATMUL);
}

/* ---- elements ------------------------------------------------------------------ */

/* ---- the 16-bit floats: IEEE binary formats with m fraction and e exponent bits --- */

/* The bits of v rounded to nearest even (overflow to infinity, NaN to a quiet NaN). */
static uint32_t small_float_bits(double v, int m, int e) {
  const int bias = (1 << (e - 1)) - 1;
  const uint32_t sign = signbit(v) ? 1u << (m + e) : 0, inf = ((1u << e) - 1) << m;
  double a = fabs(v);
  if (isnan(v)) return inf | (1u << (m - 1));
  /* halfway between the largest finite value and 2^(bias+1) rounds to the even one */
  if (a >= ldexp(2.0 - ldexp(1.0, -(m + 1)), bias)) return sign | inf;
  if (a == 0) return sign;
  int ex;
  frexp(a, &ex);
  int exp = ex - 1; /* a in [2^exp, 2^(exp+1)) */
  if (exp < 1 - bias) /* subnormal, in units of 2^(1-bias-m); 2^m carries into the exponent */
    return sign | (uint32_t)nearbyint(ldexp(a, m - (1 - bias)));
  double q = nearbyint(ldexp(a, m - exp)); /* in [2^m, 2^(m+1)] */
  if (q == ldexp(1.0, m + 1)) {
    q = ldexp(1.0, m);
    exp++;
  }
  return sign | ((uint32_t)(exp + bias) << m) | ((uint32_t)q - (1u << m));
}

static double small_float_value(uint32_t bits, int m, int e) {
  const int bias = (1 << (e - 1)) - 1;
  uint32_t frac = bits & ((1u << m) - 1), ex = (bits >> m) & ((1u << e) - 1);
  double sign = (bits >> (m + e)) & 1 ? -1.0 : 1.0;
  if (ex == (1u << e) - 1) return frac ? NAN : sign * INFINITY;
  if (ex == 0) return sign * ldexp((double)frac, 1 - bias - m);
  return sign * ldexp((double)(frac | (1u << m)), (int)ex - bias - m);
}

#define F16_FORMAT 10, 5
#define BF16_FORMAT 7, 8

/* v truncated and wrapped to `bits` bits, as a signed or unsigned integer. A 64-bit
 * value is only truncated: its literals lie within 2^53 (cts_opsem_int_range) and no
 * operation computes one (MGR.OP.10), while wrapping it in a double would round. */
static double wrap_int(double v, int bits, int is_signed) {
  if (bits >= 64) return trunc(v);
  double span = ldexp(1.0, bits), w = fmod(trunc(v), span);
  if (w < 0) w += span;
  if (is_signed && w >= span / 2) w -= span;
  return w;
}

double cts_opsem_round(int dtype, double v) {
  switch (dtype) { /* per element on large tensors: the table is read for integers alone */
    case TSM_F32: return (double)(float)v;
    case TSM_F64: return v;
    case TSM_F16: return small_float_value(small_float_bits(v, F16_FORMAT), F16_FORMAT);
    case TSM_BF16: return small_float_value(small_float_bits(v, BF16_FORMAT), BF16_FORMAT);
    case TSM_BOOL: return v != 0;
    default: {
      const struct dtype_row *row = dtype_row(dtype);
      return row ? wrap_int(v, row->bits, row->code == CTS_DL_INT) : v;
    }
  }
}

void cts_opsem_round_all(int dtype, double *dst, const double *src, int64_t n) {
  if (dtype == TSM_F32) {
    for (int64_t i = 0; i < n; i++) dst[i] = (double)(float)src[i];
  } else if (dtype == TSM_F64) {
    if (dst != src) memcpy(dst, src, (size_t)n * sizeof *dst);
  } else {
    for (int64_t i = 0; i < n; i++) dst[i] = cts_opsem_round(dtype, src[i]);
  }
}

double cts_opsem_expected(int dtype, double v) {
  const struct dtype_row *row = dtype_row(dtype);
  int is_float = row && (row->code == CTS_DL_FLOAT || row->code == CTS_DL_BFLOAT);
  return is_float ? cts_opsem_round(dtype, v) : v;
}

void cts_opsem_write(int dtype, double v, void *at) {
  double r = cts_opsem_round(dtype, v);
  switch (dtype) {
#define CTS__PUT(type, value)       \
  {                                 \
    type x_ = (type)(value);        \
    memcpy(at, &x_, sizeof x_);     \
    return;                         \
  }
    case TSM_F32: CTS__PUT(float, r)
    case TSM_F64: CTS__PUT(double, r)
    case TSM_F16: CTS__PUT(uint16_t, small_float_bits(v, F16_FORMAT))
    case TSM_BF16: CTS__PUT(uint16_t, small_float_bits(v, BF16_FORMAT))
    case TSM_BOOL: CTS__PUT(uint8_t, r)
    case TSM_I8: CTS__PUT(int8_t, r)
    case TSM_I16: CTS__PUT(int16_t, r)
    case TSM_I64: CTS__PUT(int64_t, r)
    case TSM_U8: CTS__PUT(uint8_t, r)
    case TSM_U16: CTS__PUT(uint16_t, r)
    case TSM_U32: CTS__PUT(uint32_t, r)
    case TSM_U64: CTS__PUT(uint64_t, r)
    default: CTS__PUT(int32_t, r)
#undef CTS__PUT
  }
}

double cts_opsem_read(int dtype, const void *at) {
  switch (dtype) {
#define CTS__GET(type, as)        \
  {                               \
    type x_;                      \
    memcpy(&x_, at, sizeof x_);   \
    return as;                    \
  }
    case TSM_F32: CTS__GET(float, x_)
    case TSM_F64: CTS__GET(double, x_)
    case TSM_F16: CTS__GET(uint16_t, small_float_value(x_, F16_FORMAT))
    case TSM_BF16: CTS__GET(uint16_t, small_float_value(x_, BF16_FORMAT))
    case TSM_BOOL: CTS__GET(uint8_t, x_) /* the byte itself: a true stored as 2 shows */
    case TSM_I8: CTS__GET(int8_t, x_)
    case TSM_I16: CTS__GET(int16_t, x_)
    case TSM_I64: CTS__GET(int64_t, (double)x_)
    case TSM_U8: CTS__GET(uint8_t, x_)
    case TSM_U16: CTS__GET(uint16_t, x_)
    case TSM_U32: CTS__GET(uint32_t, x_)
    case TSM_U64: CTS__GET(uint64_t, (double)x_)
    default: CTS__GET(int32_t, x_)
#undef CTS__GET
  }
}

int cts_opsem_close(double want, double got, double rel_tol) {
  return fabs(want - got) <= rel_tol * fmax(1.0, fabs(want));
}

void cts_opsem_encode(int dtype, const double *v, int64_t n, void *out) {
  size_t size = cts_opsem_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++) cts_opsem_write(dtype, v[i], (unsigned char *)out + i * size);
}

void cts_opsem_decode(int dtype, const void *in, int64_t n, double *out) {
  size_t size = cts_opsem_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++) out[i] = cts_opsem_read(dtype, (const unsigned char *)in + i * size);
}

char *cts_opsem_format_shape(int ndim, const int64_t *shape, char *buf, size_t size) {
  size_t at = 0;
  at += (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && at < size; i++)
    at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (at < size) snprintf(buf + at, size - at, "]");
  return buf;
}
