/*
 * harness/src/opsem.h: the semantics of the model's operations, written once for the
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
/* 1 for a dtype the model holds (enum tsm_dtype). */
int cts_opsem_dtype_known(int dtype);
/* Bytes of one element of a known dtype. */
size_t cts_opsem_dtype_size(int dtype);
/* "f32", "i32", or "?" for an unknown dtype. */
const char *cts_opsem_dtype_name(int dtype);
/* The dtype a DLPack (code, bits, lanes) is read as, or 0 when the model holds none
 * (DLP.IMPORT.6); cts_opsem_dl_code is the reverse for a known dtype. */
int cts_opsem_dtype_of_dl(int code, int bits, int lanes);
int cts_opsem_dl_code(int dtype);
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
/* The operation's own checks (MGR.OP.8, GRAPH.OP.1) and its results' dtype and shape:
 * 0 or TSM_ESHAPE, TSM_EDTYPE, TSM_ERANGE (gather indices, read from b->vals),
 * TSM_EINVAL (a bad reshape target, an unknown op). b is NULL for a unary op;
 * ndim/shape are the reshape target. out: cts_opsem_n_results(op) entries. */
int cts_opsem_result(int op, const struct cts_opsem_tensor *a, const struct cts_opsem_tensor *b,
                     int ndim, const int64_t *shape, struct cts_opsem_tensor *out);
/* The elements of a result `out` (from cts_opsem_result) of a checked op, computed in
 * double and rounded to out's dtype (MGR.OP.7). RETURN a malloc'ed array of at least
 * one element the caller owns; an svd's factors are the implementation's, so zeros. */
double *cts_opsem_values(int op, const struct cts_opsem_tensor *a,
                         const struct cts_opsem_tensor *b, const struct cts_opsem_tensor *out);
/* 1 when a result of op in dtype is compared to a tolerance: f32 sums and products
 * (MGR.OP.7). */
int cts_opsem_approx(int op, int dtype);

/* ---- elements ------------------------------------------------------------------ */

/* v as the dtype holds it: f32 rounds to float, i32 wraps to 32 bits. */
double cts_opsem_round(int dtype, double v);
/* A value a case expects, as it is compared with an element of dtype: f32 rounds like
 * the element (a decimal literal is rarely a float); i32 stays as written, so an
 * expectation with a fraction or out of range never matches instead of wrapping. */
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
