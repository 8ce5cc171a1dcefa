/*
 * harness/src/model.h: the executable model of spec/managers.md, the judge's oracle.
 * It is written from the spec alone, never from impl/ (architecture rule 3): plain
 * arrays and scans, clarity over speed. Objects are numbered from 0 in creation
 * order and are never freed before cts_model_free, so a released resource or a closed
 * manager keeps answering questions about itself.
 */
#ifndef CTS_MODEL_H
#define CTS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"

#define CTS_NONE (-1)  /* no manager: detached, no parent, no lender */
#define CTS_BOGUS (-2) /* a handle the session never issued (ERR.HANDLE.1) */

enum cts_model_state { CTS_M_OPEN, CTS_M_CLOSING, CTS_M_CLOSED };

struct cts_ids {
  int *v;
  size_t n, cap;
};

struct cts_mmgr {
  int state;          /* enum cts_model_state */
  int capped;
  int parent;         /* CTS_NONE for the root and once closed */
  struct cts_ids held;     /* live resources held, owned or borrowed (MGR.COUNT.1) */
  struct cts_ids children; /* open children (MGR.COUNT.2) */
  int dirty;          /* changed by the last statement */
};

/* One step of a borrow chain: `borrower` holds it and gives it back to `lender`. */
struct cts_borrow {
  int borrower, lender;
};

struct cts_mres {
  int valid;
  int holder;                 /* CTS_NONE when detached or released */
  struct cts_borrow *borrows; /* chain, innermost last; empty when owned (MGR.TEMP.5) */
  size_t n_borrows, cap_borrows;
  int storage;
  int dtype, ndim;
  int64_t shape[TSM_MAX_DIMS];
  int dirty;
};

struct cts_mstorage {
  uint64_t bytes;
  int refs;       /* live resources viewing it (MGR.OP.9) */
  double *vals;   /* elements, f32 rounded to float, i32 as integers */
  int64_t n;
  int approx;     /* f32 sum or matmul: compared to a tolerance (MGR.OP.7) */
};

struct cts_model {
  struct cts_mmgr *mgrs;
  size_t n_mgrs, cap_mgrs;
  struct cts_mres *res;
  size_t n_res, cap_res;
  struct cts_mstorage *st;
  size_t n_st, cap_st;
  uint64_t live_bytes;
};

/* Creates the model with its root manager, id 0. */
void cts_model_init(struct cts_model *m);
void cts_model_free(struct cts_model *m);
void cts_model_clear_dirty(struct cts_model *m);

/* Each returns 0 or the negative code the spec requires; on error nothing changed.
 * Manager and resource arguments may be CTS_BOGUS. */
int cts_model_new_sub(struct cts_model *m, int parent, int *out);
int cts_model_sub_of(struct cts_model *m, int r, int *out);
int cts_model_close(struct cts_model *m, int mgr);
int cts_model_cap(struct cts_model *m, int mgr);
/* vals: n elements (NULL for zeros) */
int cts_model_create(struct cts_model *m, int mgr, int dtype, int ndim, const int64_t *shape,
                     const double *vals, int *out);
/* b: second input or CTS_NONE; out_mgr: explicit output manager or CTS_NONE */
int cts_model_op(struct cts_model *m, int op, int a, int b, int ndim, const int64_t *shape,
                 int out_mgr, int *out);
int cts_model_attach(struct cts_model *m, int r, int mgr);
int cts_model_detach(struct cts_model *m, int r);
int cts_model_borrow(struct cts_model *m, int r, int mgr);
int cts_model_ret(struct cts_model *m, int r, int mgr);
int cts_model_release(struct cts_model *m, int r);

/* Queries. */
int cts_model_lender(const struct cts_model *m, int r); /* CTS_NONE if not borrowed */
int64_t cts_model_elems(const struct cts_mres *r);
const double *cts_model_values(const struct cts_model *m, int r);
int cts_model_approx(const struct cts_model *m, int r);

#endif
