/*
 * harness/src/base/opsem.h: the semantics of the model's operations, written once for the
 * manager operations (model.c, spec/managers.md MGR.OP.*) and the graph operations
 * (model_graph.c, spec/graphs.md GRAPH.OP.1): which operations each family offers,
 * the shape and dtype rules with their error codes, the element values, the rounding
 * to a dtype, the element codecs (elements of any supported dtype to and from bytes)
 * and the formatting of shapes for messages. Pure functions of their arguments.
 */
#ifndef CTS_OPSEM_H
#define CTS_OPSEM_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"

/* The families an operation is offered in (enum tsm_op says which are graph-only). */
enum cts_opsem_family { CTS_OPSEM_MANAGER = 1, CTS_OPSEM_GRAPH = 2 };

/* An operand or a result. vals is borrowed from the caller (an operand's elements,
 * row-major, already rounded to dtype); results leave it NULL. */
struct cts_opsem_tensor {
  int dtype; /* enum tsm_dtype */
  int ndim;
  int64_t shape[TSM_MAX_DIMS];
  const double *vals;
};

/* ---- shapes and dtypes --------------------------------------------------------- */

/* An operand of ndim dims (shape copied) whose elements vals stay the caller's. */
struct cts_opsem_tensor cts_opsem_tensor(int dtype, int ndim, const int64_t *shape,
                                         const double *vals);

int64_t cts_opsem_elems(int ndim, const int64_t *shape);
/* The elements of a shape a case wrote, which may hold a negative extent that both sides
 * refuse (MGR.CREATE.4): such an extent counts as 0, so nothing is read for it. */
int64_t cts_opsem_literal_elems(int ndim, const int64_t *shape);
int cts_opsem_same_shape(const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b);
/* The same for bare shapes; b is read only when the ranks agree, so a reported rank out
 * of range is safe as a. */
int cts_opsem_same_dims(int a_ndim, const int64_t *a, int b_ndim, const int64_t *b);
/* The dtypes (spec/managers.md MGR.DTYPE.1), once: X(dtype, name, long name, DLPack
 * type code, bits). The codes are dlpack_judge.h's CTS_DL_*. */
#define CTS_DTYPES(X)                                                         \
  X(TSM_BOOL, "bool", "bool", CTS_DL_BOOL, 8)                                 \
  X(TSM_I8, "i8", "int8", CTS_DL_INT, 8) X(TSM_I16, "i16", "int16", CTS_DL_INT, 16) \
  X(TSM_I32, "i32", "int32", CTS_DL_INT, 32) X(TSM_I64, "i64", "int64", CTS_DL_INT, 64) \
  X(TSM_U8, "u8", "uint8", CTS_DL_UINT, 8) X(TSM_U16, "u16", "uint16", CTS_DL_UINT, 16) \
  X(TSM_U32, "u32", "uint32", CTS_DL_UINT, 32) X(TSM_U64, "u64", "uint64", CTS_DL_UINT, 64) \
  X(TSM_F16, "f16", "float16", CTS_DL_FLOAT, 16)                              \
  X(TSM_BF16, "bf16", "bfloat16", CTS_DL_BFLOAT, 16)                          \
  X(TSM_F32, "f32", "float32", CTS_DL_FLOAT, 32) X(TSM_F64, "f64", "float64", CTS_DL_FLOAT, 64)
#define CTS__DTYPE_BIT(dtype, name, long_name, code, bits) | (1u << dtype)
/* Every dtype of the table. */
#define CTS_DTYPES_ALL (0u CTS_DTYPES(CTS__DTYPE_BIT))
/* The dtypes an adapter holds when it declares none (ABI 1.0 to 1.4). */
#define CTS_DTYPES_DEFAULT ((1u << TSM_F32) | (1u << TSM_I32))
/* The dtypes the operations add, sub, mul and sum take; matmul takes f32 alone
 * (MGR.OP.10). */
#define CTS_DTYPES_ARITH CTS_DTYPES_DEFAULT
/* 1 for a dtype add, sub, mul and sum take (MGR.OP.10), which graph tensors are
 * (GRAPH.DTYPE.1). */
int cts_opsem_dtype_arith(int dtype);
/* 1 for a dtype the model holds (enum tsm_dtype). */
int cts_opsem_dtype_known(int dtype);
/* Bytes of one element of a known dtype. */
size_t cts_opsem_dtype_size(int dtype);
/* "f32", "u8", ..., or "?" for an unknown dtype. */
const char *cts_opsem_dtype_name(int dtype);
/* The dtype named name (short or long: "u8", "uint8"), or 0. */
int cts_opsem_dtype_by_name(const char *name, size_t len);
/* The dtype a DLPack (code, bits, lanes) is read as, or 0 when the model holds none
 * (DLP.IMPORT.6); cts_opsem_dl_code and cts_opsem_dl_bits are the reverse for a known
 * dtype. */
int cts_opsem_dtype_of_dl(int code, int bits, int lanes);
int cts_opsem_dl_code(int dtype);
int cts_opsem_dl_bits(int dtype);
/* The smallest and largest integer a literal of an integer dtype may hold (cases/README.md,
 * "Dtypes": the dtype's range, and within 2^53 for the 64-bit ones, which the model holds
 * as doubles); 0 for a dtype that is not an integer. */
int cts_opsem_int_range(int dtype, double *lo, double *hi);
/* 1 when every element first + step * i (i < n) is an integer that dtype holds exactly
 * and a double computes exactly (f32, f64 and the integer dtypes; first and step whole
 * numbers): then cts_opsem_round leaves each as it is, and the sum or difference of two
 * such sequences is one too. The model keeps such elements in closed form. */
int cts_opsem_affine_exact(int dtype, double first, double step, int64_t n);
/* 1 when first + step * i is a whole number within int32 for every i < n (first and
 * step whole): *first32 and *step32 then hold them, so that a loop over a block can
 * compute each element in 32-bit integers, four to a vector instruction, and convert it
 * to float (exact for a sequence cts_opsem_affine_exact takes in f32). */
int cts_opsem_affine_int32(double first, double step, int64_t n, int32_t *first32,
                           int32_t *step32);
/* Element j of such a sequence from first, as a float: unsigned arithmetic, since each
 * element, not each product, is known to lie within int32. Inline, for the blocked
 * loops of the judge's fill and comparison to vectorize. */
static inline float cts_opsem_affine_f32_at(int32_t first, int32_t step, int32_t j) {
  return (float)(int32_t)((uint32_t)first + (uint32_t)step * (uint32_t)j);
}
/* A tensor description a manager accepts (MGR.CREATE.4): 0 or TSM_EINVAL. */
int cts_opsem_check_desc(int dtype, int ndim, const int64_t *shape);

/* The most elements the model holds for one tensor (cases/README.md, "Limits"): its
 * values are doubles, so what a case merely declares never costs the judge more. */
#define CTS_OPSEM_MAX_MODELED ((int64_t)1 << 24)
/* The most bytes of a DLPack tensor's buffer the judge allocates for a `make`. */
#define CTS_MAKE_MAX_BYTES ((int64_t)1 << 28)
/* Not an error code of the ABI: a size the model does not hold (the judge accepts the
 * adapter's ENOMEM for it and ends the case with Error if the adapter made it). */
#define CTS_OPSEM_TOO_LARGE (-1000)
/* The size of a new tensor of a valid description: 0, TSM_ENOMEM when its byte size
 * does not fit in int64 (MGR.CREATE.5), or CTS_OPSEM_TOO_LARGE. */
int cts_opsem_check_size(int dtype, int ndim, const int64_t *shape);

/* ---- operations ---------------------------------------------------------------- */

/* 1 when op is offered in `family` (enum cts_opsem_family). */
int cts_opsem_offered(int op, int family);
/* How many results op has: 3 for TSM_OP_SVD, else 1. */
int cts_opsem_n_results(int op);
/* reshape's target shape (the other ops take none). */
struct cts_opsem_target {
  int ndim;
  const int64_t *shape;
};
/* The operation's own checks (MGR.OP.8, GRAPH.OP.1) and its results' dtype and shape:
 * 0 or TSM_ESHAPE, TSM_EDTYPE, TSM_ERANGE (gather indices, read from b->vals),
 * TSM_EINVAL (a bad reshape target, an unknown op). b is NULL for a unary op; target
 * is reshape's (NULL for the other ops). out: cts_opsem_n_results(op) entries. */
int cts_opsem_result(int op, const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b,
                     const struct cts_opsem_target *target, struct cts_opsem_tensor *out);
/* The elements of a result `out` (from cts_opsem_result) of a checked op, computed in
 * double and rounded to out's dtype (MGR.OP.7). RETURN a malloc'ed array of at least
 * one element the caller owns; an svd's factors are the implementation's, so zeros. */
double *cts_opsem_values(int op, const struct cts_opsem_tensor *a,
                         const struct cts_opsem_tensor *b, const struct cts_opsem_tensor *out);
/* 1 when a result of op in dtype is compared to a tolerance: f32 sums and products
 * (MGR.OP.7). */
int cts_opsem_approx(int op, int dtype);

/* ---- elements ------------------------------------------------------------------ */

/* v as the dtype holds it: a float dtype rounds to nearest even, an integer dtype
 * truncates and wraps to its bits, bool is 1 for any non-zero v. */
double cts_opsem_round(int dtype, double v);
/* dst[i] = cts_opsem_round(dtype, src[i]) for i < n (dst may be src): one loop per dtype,
 * since large tensors take it per element. */
void cts_opsem_round_all(int dtype, double *dst, const double *src, int64_t n);
/* A value a case expects, as it is compared with an element of dtype: a float dtype
 * rounds like the element (a decimal literal is rarely a float); an integer or bool
 * stays as written, so an expectation with a fraction or out of range never matches
 * instead of wrapping. */
double cts_opsem_expected(int dtype, double v);
/* One element at `at` (cts_opsem_dtype_size bytes, any alignment). */
void cts_opsem_write(int dtype, double v, void *at);
double cts_opsem_read(int dtype, const void *at);
/* 1 when got is within rel_tol of want, relative to max(1, |want|): how a result
 * computed in another order is compared (MGR.OP.7, GRAPH.OP.1). */
int cts_opsem_close(double want, double got, double rel_tol);
/* The tolerances: f32 sums and products (MGR.OP.7, GRAPH.OP.1), and values derived from
 * an svd the implementation computed (GRAPH.OP.1). */
#define CTS_OPSEM_REL_TOL 1e-5
#define CTS_OPSEM_SVD_TOL 1e-4
/* n elements, packed. */
void cts_opsem_encode(int dtype, const double *v, int64_t n, void *out);
void cts_opsem_decode(int dtype, const void *in, int64_t n, double *out);

/* "[2, 3]" ("[]" for a scalar) into buf; RETURN buf. */
char *cts_opsem_format_shape(int ndim, const int64_t *shape, char *buf, size_t size);

#endif
