/*
 * harness/adapters/common/adapter_mgr.c: the manager layer that the ggml, tvm-ffi and libtorch
 * adapters share (adapter_mgr.h says how an adapter uses it).
 *
 * Borrowing. A tensor has one holder (or none: detached) and a stack of lenders. A
 * temporary attach pushes the previous holder (TSM_NONE when detached) and makes the
 * borrower the holder; when the borrower closes it pops the top lender and goes back
 * there (MGR.TEMP.4, MGR.TEMP.5). The tensor is borrowed while the stack is not empty.
 *
 * Errors. Each slot checks, in the order of ERR.ORDER.1: EINVAL (bad handles and
 * arguments), ERELEASED, EROOT, ECLOSED, ECAPPED, then the slot's own checks; and it
 * changes nothing before every check has passed (ERR.ATOMIC.1).
 *
 * clauses: [ABI.HANDLE.1, ABI.INFO.1, ERR.ORDER.1, ERR.ATOMIC.1, ERR.HANDLE.1, MGR.*]
 */
#include "adapter_mgr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- handles, arrays, checks ------------------------------------------------------ */

tsm_handle am_handle(tsm_handle tag, size_t i) { return tag | (tsm_handle)(i + 1); }

int am_handle_index(tsm_handle h, tsm_handle tag, size_t n, size_t *i) {
  tsm_handle low = h & ~AM_TAG_MASK;
  if ((h & AM_TAG_MASK) != tag || low == 0 || low - 1 >= n) return 0;
  *i = (size_t)(low - 1);
  return 1;
}

struct am_mgr *am_mgr_get(struct am_session *S, tsm_handle h) {
  size_t i;
  return am_handle_index(h, AM_MGR_TAG, S->nmgr, &i) ? &S->mgrs[i] : NULL;
}

struct am_res *am_res_get(struct am_session *S, tsm_handle h) {
  size_t i;
  return am_handle_index(h, AM_RES_TAG, S->nres, &i) ? &S->res[i] : NULL;
}

tsm_handle am_root(void) { return am_handle(AM_MGR_TAG, 0); }
int am_closed(const struct am_mgr *m) { return (m->state & TSM_MGR_CLOSED) != 0; }
int am_capped(const struct am_mgr *m) { return (m->state & TSM_MGR_CAPPED) != 0; }

int am_reserve(void **arr, size_t *cap, size_t n, size_t elem) {
  size_t ncap;
  void *p;
  if (n < *cap) return 0;
  ncap = *cap ? 2 * *cap : 16;
  p = realloc(*arr, ncap * elem);
  if (!p) return TSM_ENOMEM;
  *arr = p;
  *cap = ncap;
  return 0;
}

size_t am_numel(const struct tsm_tensor_desc *d) {
  size_t n = 1;
  for (int i = 0; i < d->ndim; i++) n *= (size_t)d->shape[i];
  return n;
}

/* Every extent is looked at for a negative one before an overflow is reported: EINVAL
 * comes first (ERR.ORDER.1), and an empty shape fits whatever its other extents. */
int am_shape_check(int ndim, const int64_t *shape) {
  int64_t n = 1;
  int empty = 0, overflow = 0;
  if (ndim < 0 || ndim > TSM_MAX_DIMS || (ndim > 0 && !shape)) return TSM_EINVAL;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return TSM_EINVAL;
    empty |= shape[i] == 0;
    overflow |= __builtin_mul_overflow(n, shape[i], &n);
  }
  return !empty && (overflow || n > INT64_MAX / 4) ? TSM_ENOMEM : 0;
}

int am_desc_check(const struct tsm_tensor_desc *desc) {
  if (desc->dtype != TSM_F32 && desc->dtype != TSM_I32) return TSM_EINVAL;
  return am_shape_check(desc->ndim, desc->shape);
}

static int am_new_mgr(struct am_session *S, tsm_handle parent, tsm_handle *out) {
  int rc = am_reserve((void **)&S->mgrs, &S->mgr_cap, S->nmgr, sizeof *S->mgrs);
  if (rc) return rc;
  S->mgrs[S->nmgr] = (struct am_mgr){.state = 0, .closing = 0, .parent = parent};
  *out = am_handle(AM_MGR_TAG, S->nmgr++);
  return 0;
}

/* ---- state changes on a tensor ------------------------------------------------------ */

static void am_end_borrow(struct am_res *r) { r->nlend = 0; }

/* Releases r: gives its storage up, forgets holder and lenders (MGR.REL.1). */
static void am_release(struct am_session *S, struct am_res *r) {
  S->storage->drop(r->store);
  r->store = NULL;
  r->valid = 0;
  r->holder = TSM_NONE;
  am_end_borrow(r);
}

/* r goes back from its closing borrower to its top lender (MGR.TEMP.4, MGR.TEMP.5):
 * to none (detached again), to an open or still-closing lender (MGR.CLOSE.4), or, when
 * the lender has finished closing, it is released. */
static void am_give_back(struct am_session *S, struct am_res *r) {
  tsm_handle lender = r->lenders[--r->nlend];
  struct am_mgr *l = am_mgr_get(S, lender);
  if (lender == TSM_NONE) {
    r->holder = TSM_NONE;
    am_end_borrow(r); /* a detached resource is never borrowed */
  } else if (am_closed(l) && !l->closing) {
    am_release(S, r);
  } else {
    r->holder = lender; /* no cap check (MGR.TEMP.4) */
  }
}

/* Closes m in the order of MGR.CLOSE.3: mark closed, close children, release what it
 * owns (including what came back from the children, MGR.CLOSE.4), give back what it
 * borrowed, let the adapter release what else m had (the `closed` hook), unlink from
 * the parent. No manager or tensor is added meanwhile, so the pointers stay valid. */
static void am_close(struct am_session *S, tsm_handle mh) {
  struct am_mgr *m = am_mgr_get(S, mh);
  size_t i;
  m->state = TSM_MGR_CLOSED; /* refuses every addition from now on */
  m->closing = 1;
  for (i = 0; i < S->nmgr; i++) /* children, recursively */
    if (S->mgrs[i].parent == mh && !am_closed(&S->mgrs[i])) am_close(S, am_handle(AM_MGR_TAG, i));
  for (i = 0; i < S->nres; i++) /* owned: released */
    if (S->res[i].valid && S->res[i].holder == mh && S->res[i].nlend == 0) am_release(S, &S->res[i]);
  for (i = 0; i < S->nres; i++) /* borrowed: back to the lender */
    if (S->res[i].valid && S->res[i].holder == mh) am_give_back(S, &S->res[i]);
  if (S->storage->closed) S->storage->closed(S, mh);
  m->parent = TSM_NONE;
  m->closing = 0;
}

/* ---- devices and sessions ------------------------------------------------------------ */

static const struct tsm_device am_devices[] = {{.name = "cpu", .available = 1, .unavailable_reason = NULL}};

int am_device_list(const struct tsm_device **out) {
  *out = am_devices;
  return 1;
}

int am_session_init(struct am_session *S, const struct am_storage *storage) {
  tsm_handle root;
  S->storage = storage;
  return am_new_mgr(S, TSM_NONE, &root);
}

/* Detached tensors included: the session owns every live one. */
void am_session_fini(struct am_session *S) {
  for (size_t i = 0; i < S->nres; i++) {
    if (S->res[i].valid) S->storage->drop(S->res[i].store);
    free(S->res[i].lenders);
  }
  free(S->res);
  free(S->mgrs);
  S->res = NULL;
  S->mgrs = NULL;
  S->nres = S->res_cap = S->nmgr = S->mgr_cap = 0;
}

/* ---- tensors for the adapter's own slots ---------------------------------------------- */

int am_res_reserve(struct am_session *S) {
  return am_reserve((void **)&S->res, &S->res_cap, S->nres, sizeof *S->res);
}

tsm_handle am_res_add(struct am_session *S, tsm_handle m, const struct tsm_tensor_desc *desc,
                      void *store) {
  S->res[S->nres] = (struct am_res){.valid = 1, .holder = m, .desc = *desc,
                                    .nbytes = am_numel(desc) * 4, .store = store};
  return am_handle(AM_RES_TAG, S->nres++);
}

uint64_t am_res_bytes(const struct am_session *S) {
  uint64_t n = 0;
  for (size_t i = 0; i < S->nres; i++)
    if (S->res[i].valid) n += S->res[i].nbytes;
  return n;
}

int am_op_target(struct am_session *S, tsm_handle out_mgr, const struct am_res *first,
                 tsm_handle *dst) {
  tsm_handle h = out_mgr != TSM_NONE ? out_mgr : first->holder != TSM_NONE ? first->holder : am_root();
  struct am_mgr *m = am_mgr_get(S, h);
  if (am_closed(m)) return TSM_ECLOSED;
  if (am_capped(m)) return TSM_ECAPPED;
  *dst = h;
  return 0;
}

/* Inputs per op of the manager family: sum and reshape take one. */
static int am_op_arity(int op) { return op == TSM_OP_SUM || op == TSM_OP_RESHAPE ? 1 : 2; }

/* An op as its slot asks for it: op on a (and b, NULL for one input), with reshape's
 * target shape in params. */
struct am_op_call {
  int op;
  const struct am_res *a, *b;
  const int64_t *params;
  int n_params;
};

/* add, sub, mul: one shape (ESHAPE), one dtype (EDTYPE), the result alike. */
static int am_op_elementwise(const struct tsm_tensor_desc *x, const struct tsm_tensor_desc *y,
                             struct tsm_tensor_desc *d) {
  if (x->ndim != y->ndim || memcmp(x->shape, y->shape, (size_t)x->ndim * sizeof x->shape[0]))
    return TSM_ESHAPE;
  if (x->dtype != y->dtype) return TSM_EDTYPE;
  d->ndim = x->ndim;
  memcpy(d->shape, x->shape, sizeof d->shape);
  return 0;
}

/* matmul: [m, k] by [k, n] (ESHAPE), both f32 (EDTYPE); the result [m, n]. */
static int am_op_matmul(const struct tsm_tensor_desc *x, const struct tsm_tensor_desc *y,
                        struct tsm_tensor_desc *d) {
  if (x->ndim != 2 || y->ndim != 2 || x->shape[1] != y->shape[0]) return TSM_ESHAPE;
  if (x->dtype != TSM_F32 || y->dtype != TSM_F32) return TSM_EDTYPE;
  d->ndim = 2;
  d->shape[0] = x->shape[0];
  d->shape[1] = y->shape[1];
  return 0;
}

/* reshape: the params' shape, of as many elements (ESHAPE). The params are well-formed
 * (am_op_prepare): ENOMEM is an overflow. */
static int am_op_reshape(const struct tsm_tensor_desc *x, const int64_t *params, int n_params,
                         struct tsm_tensor_desc *d) {
  struct tsm_tensor_desc want = {.ndim = n_params};
  if (n_params) memcpy(want.shape, params, (size_t)n_params * sizeof *params);
  if (am_shape_check(n_params, params) || am_numel(&want) != am_numel(x)) return TSM_ESHAPE;
  d->ndim = n_params;
  memcpy(d->shape, want.shape, sizeof d->shape);
  return 0;
}

/* gather: rows of a 2-d table by a 1-d i32 index (ESHAPE, EDTYPE), each index inside the
 * table (ERANGE, read through the storage hooks); the result [n, columns]. */
static int am_op_gather(struct am_session *S, const struct am_res *a, const struct am_res *b,
                        struct tsm_tensor_desc *d) {
  const struct tsm_tensor_desc *x = &a->desc, *y = &b->desc;
  const int32_t *idx;
  if (x->ndim != 2 || y->ndim != 1) return TSM_ESHAPE;
  if (y->dtype != TSM_I32) return TSM_EDTYPE;
  idx = S->storage->elems(b->store);
  for (int64_t i = 0; i < y->shape[0]; i++)
    if (idx[i] < 0 || idx[i] >= x->shape[0]) return TSM_ERANGE;
  d->ndim = 2;
  d->shape[0] = y->shape[0];
  d->shape[1] = x->shape[1];
  return 0;
}

/* The result's desc of the op (MGR.OP.7-9): ESHAPE, EDTYPE, ERANGE. */
static int am_op_result(struct am_session *S, const struct am_op_call *c,
                        struct tsm_tensor_desc *d) {
  const struct tsm_tensor_desc *x = &c->a->desc, *y = c->b ? &c->b->desc : NULL;
  memset(d, 0, sizeof *d);
  d->dtype = x->dtype;
  switch (c->op) {
  case TSM_OP_ADD:
  case TSM_OP_SUB:
  case TSM_OP_MUL: return am_op_elementwise(x, y, d);
  case TSM_OP_SUM: return 0; /* 0-d */
  case TSM_OP_MATMUL: return am_op_matmul(x, y, d);
  case TSM_OP_RESHAPE: return am_op_reshape(x, c->params, c->n_params, d);
  default: return am_op_gather(S, c->a, c->b, d); /* TSM_OP_GATHER */
  }
}

/* The op's own arguments: a manager op, its arity, reshape's well-formed params or no
 * params at all (EINVAL). */
static int am_op_check_form(int op, int n, const int64_t *params, int n_params) {
  if (op < TSM_OP_ADD || op > TSM_OP_MATMUL || n != am_op_arity(op)) return TSM_EINVAL;
  if (op == TSM_OP_RESHAPE ? am_shape_check(n_params, params) == TSM_EINVAL : n_params != 0)
    return TSM_EINVAL;
  return 0;
}

/* The n inputs' handles and out_mgr's (EINVAL), then each input live (ERELEASED,
 * MGR.OP.5). OUT in: the inputs, as far as they were found. */
static int am_op_inputs(struct am_session *S, const tsm_handle *inputs, int n,
                        tsm_handle out_mgr, struct am_res *in[2]) {
  for (int i = 0; i < n; i++)
    if (!(in[i] = am_res_get(S, inputs[i]))) return TSM_EINVAL;
  if (out_mgr != TSM_NONE && !am_mgr_get(S, out_mgr)) return TSM_EINVAL;
  for (int i = 0; i < n; i++)
    if (!in[i]->valid) return TSM_ERELEASED; /* MGR.OP.5 */
  return 0;
}

int am_op_prepare(struct am_session *S, const struct am_op_args *args, struct am_op_plan *plan) {
  int rc;
  struct am_op_call call;
  struct am_res **in = plan->in;
  in[0] = in[1] = NULL;
  if (!args->out || !args->inputs || am_op_check_form(args->op, args->n, args->params, args->n_params))
    return TSM_EINVAL;
  if ((rc = am_op_inputs(S, args->inputs, args->n, args->out_mgr, in))) return rc;
  if ((rc = am_op_target(S, args->out_mgr, in[0], &plan->dst))) return rc;
  call.op = args->op;
  call.a = in[0];
  call.b = in[1];
  call.params = args->params;
  call.n_params = args->n_params;
  if ((rc = am_op_result(S, &call, &plan->d))) return rc;
  if (am_shape_check(plan->d.ndim, plan->d.shape)) return TSM_ENOMEM; /* MGR.CREATE.5 */
  if (am_res_reserve(S)) return TSM_ENOMEM;
  for (int i = 0; i < args->n; i++) in[i] = am_res_get(S, args->inputs[i]); /* the array may have moved */
  return 0;
}

/* ---- DLPack imports ------------------------------------------------------------------- */

/* The element count of t's shape in *numel: EDLPACK for a rank this layer cannot hold,
 * a negative extent, or a count that overflows (with no zero extent). */
static int am_dl_numel(const struct am_dl_fields *t, int64_t *numel) {
  int empty = 0, overflow = 0;
  *numel = 1;
  if (t->ndim < 0 || t->ndim > TSM_MAX_DIMS || (t->ndim > 0 && !t->shape)) return TSM_EDLPACK;
  for (int i = 0; i < t->ndim; i++) {
    if (t->shape[i] < 0) return TSM_EDLPACK;
    empty |= t->shape[i] == 0;
    overflow |= __builtin_mul_overflow(*numel, t->shape[i], numel);
  }
  if (empty) *numel = 0;
  else if (overflow) return TSM_EDLPACK;
  return 0;
}

/* Where t's numel elements lie, in elements from the first: span[0] the lowest offset,
 * span[1] the highest; *compact, row-major contiguous. EDLPACK when an offset overflows. */
static int am_dl_span(const struct am_dl_fields *t, int64_t numel, int64_t span[2],
                      int *compact) {
  int64_t want = 1, x;
  *compact = 1;
  span[0] = span[1] = 0;
  if (numel > 0 && !t->strides) span[1] = numel - 1;
  for (int i = t->ndim - 1; i >= 0 && numel > 0 && t->strides; i--) {
    if (t->shape[i] != 1 && t->strides[i] != want) *compact = 0;
    want *= t->shape[i];
    if (__builtin_mul_overflow(t->strides[i], t->shape[i] - 1, &x) ||
        __builtin_add_overflow(span[x < 0 ? 0 : 1], x, &span[x < 0 ? 0 : 1]))
      return TSM_EDLPACK;
  }
  return 0;
}

/* The bytes from the lowest element to past the highest, from data, of the elements at
 * span (am_dl_span): EDLPACK when they overflow. */
static int am_dl_bytes(const struct am_dl_fields *t, const int64_t span[2]) {
  int64_t esize = ((int64_t)t->bits * t->lanes + 7) / 8, lo = span[0], hi = span[1];
  if (t->byte_offset > (uint64_t)INT64_MAX || __builtin_add_overflow(hi, 1, &hi) ||
      __builtin_mul_overflow(lo, esize, &lo) || __builtin_mul_overflow(hi, esize, &hi) ||
      __builtin_add_overflow(lo, (int64_t)t->byte_offset, &lo) ||
      __builtin_add_overflow(hi, (int64_t)t->byte_offset, &hi))
    return TSM_EDLPACK;
  return 0;
}

int am_dl_import_check(const struct am_dl_fields *t, struct tsm_tensor_desc *d, int *compact) {
  int64_t numel, span[2];
  int rc = am_dl_numel(t, &numel);
  if (rc) return rc;
  if (numel > 0 && !t->data) return TSM_EDLPACK;
  if ((rc = am_dl_span(t, numel, span, compact)) || (rc = am_dl_bytes(t, span))) return rc;
  if (t->device_type != AM_DL_CPU && t->device_type != AM_DL_CUDA_HOST &&
      t->device_type != AM_DL_CUDA_MANAGED)
    return TSM_EDEVICE;
  if (t->lanes != 1 || t->bits != 32 || (t->code != AM_DL_FLOAT && t->code != AM_DL_INT))
    return TSM_EDTYPE;
  memset(d, 0, sizeof *d);
  d->dtype = t->code == AM_DL_FLOAT ? TSM_F32 : TSM_I32;
  d->ndim = t->ndim;
  memcpy(d->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
  return 0;
}

/* ---- slots: managers ------------------------------------------------------------------ */

/* OUT *out: the root manager (MGR.ROOT.1). */
int am_mgr_root(void *s, tsm_handle *out) {
  (void)s;
  if (!out) return TSM_EINVAL;
  *out = am_root();
  return 0;
}

/* A new open, uncapped child of parent; a capped parent is fine (MGR.SUB.1-3). */
int am_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  struct am_session *S = s;
  struct am_mgr *p = am_mgr_get(S, parent);
  if (!p || !out) return TSM_EINVAL;
  if (am_closed(p)) return TSM_ECLOSED;
  return am_new_mgr(S, parent, out);
}

/* A new child of the resource's holder, or of the root when detached (MGR.SUB.4). */
int am_mgr_sub_of(void *s, tsm_handle resource, tsm_handle *out) {
  struct am_session *S = s;
  struct am_res *r = am_res_get(S, resource);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  return am_new_mgr(S, r->holder != TSM_NONE ? r->holder : am_root(), out);
}

/* Closes m (MGR.CLOSE.*); the root refuses (MGR.ROOT.2); a second close is a no-op. */
int am_mgr_close(void *s, tsm_handle m) {
  struct am_session *S = s;
  struct am_mgr *mg = am_mgr_get(S, m);
  if (!mg) return TSM_EINVAL;
  if (m == am_root()) return TSM_EROOT;
  if (!am_closed(mg)) am_close(S, m);
  return 0;
}

/* Caps m: idempotent, permanent, m alone; the root may be capped (MGR.CAP.3-4). */
int am_mgr_cap(void *s, tsm_handle m) {
  struct am_mgr *mg = am_mgr_get(s, m);
  if (!mg) return TSM_EINVAL;
  if (am_closed(mg)) return TSM_ECLOSED;
  mg->state |= TSM_MGR_CAPPED;
  return 0;
}

/* Live count: live tensors held by m, owned or borrowed (MGR.COUNT.1). */
static uint64_t am_live(const struct am_session *S, tsm_handle m) {
  uint64_t n = 0;
  for (size_t i = 0; i < S->nres; i++) n += S->res[i].valid && S->res[i].holder == m;
  return n;
}

/* Child count: open children of m (MGR.COUNT.2). */
static uint64_t am_children(const struct am_session *S, tsm_handle m) {
  uint64_t n = 0;
  for (size_t i = 0; i < S->nmgr; i++) n += S->mgrs[i].parent == m && !am_closed(&S->mgrs[i]);
  return n;
}

/* OUT *out: m's state; no side effects (ABI.INFO.1). A closed manager reports
 * TSM_MGR_CLOSED alone, no parent, and zero counts (MGR.CLOSE.1, MGR.CLOSE.5). */
int am_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  struct am_session *S = s;
  struct am_mgr *mg = am_mgr_get(S, m);
  if (!mg || !out) return TSM_EINVAL;
  memset(out, 0, sizeof *out);
  out->state = mg->state;
  out->is_root = m == am_root();
  out->parent = mg->parent;
  out->live = am_live(S, m);
  out->children = am_children(S, m);
  return 0;
}

/* Text written into a caller's buffer of cap bytes: len, what it would take (past cap
 * once truncated). */
struct am_text {
  char *buf;
  size_t cap, len;
};

/* Appends m's subtree to out, one line per open manager in MGR.DUMP.1's words. */
static void am_dump_tree(const struct am_session *S, tsm_handle m, int depth,
                         struct am_text *out) {
  int n;
  if (out->len < out->cap) {
    n = snprintf(out->buf + out->len, out->cap - out->len,
                 "%*smgr 0x%016llx%s live=%llu children=%llu\n", 2 * depth, "",
                 (unsigned long long)m, m == am_root() ? " root" : "",
                 (unsigned long long)am_live(S, m), (unsigned long long)am_children(S, m));
    if (n > 0) out->len += (size_t)n;
  }
  for (size_t i = 0; i < S->nmgr; i++)
    if (S->mgrs[i].parent == m && !am_closed(&S->mgrs[i]))
      am_dump_tree(S, am_handle(AM_MGR_TAG, i), depth + 1, out);
}

/* (optional slot) OUT buf: m's subtree with live counts, NUL-terminated, truncated to
 * cap. */
int am_mgr_dump(void *s, tsm_handle m, char *buf, size_t cap) {
  struct am_session *S = s;
  struct am_text out = {buf, cap, 0};
  if (!am_mgr_get(S, m) || !buf || cap == 0) return TSM_EINVAL;
  buf[0] = '\0';
  am_dump_tree(S, m, 0, &out);
  return 0;
}

/* ---- slots: tensors ------------------------------------------------------------------- */

/* A tensor held by m (MGR.CREATE.1) over the adapter's new storage: EINVAL for a bad
 * desc (MGR.CREATE.4), ENOMEM for one no memory holds (MGR.CREATE.5), then ECLOSED, then
 * ECAPPED (MGR.CREATE.2); a refusal leaves nothing behind (MGR.CREATE.3). */
int am_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc, const void *data,
                  tsm_handle *out) {
  struct am_session *S = s;
  struct am_mgr *mg = am_mgr_get(S, m);
  void *store;
  int rc;
  if (!mg || !desc || !out) return TSM_EINVAL;
  if ((rc = am_desc_check(desc))) return rc;
  if (am_closed(mg)) return TSM_ECLOSED;
  if (am_capped(mg)) return TSM_ECAPPED;
  if (am_res_reserve(S)) return TSM_ENOMEM;
  if ((rc = S->storage->alloc(S, desc, am_numel(desc) * 4, data, &store))) return rc;
  *out = am_res_add(S, m, desc, store);
  return 0;
}

/* OUT *out: t's dtype and shape. */
int am_tensor_desc(void *s, tsm_handle t, struct tsm_tensor_desc *out) {
  struct am_res *r = am_res_get(s, t);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  *out = r->desc;
  return 0;
}

/* OUT dst: t's elements, row-major, read where the storage hooks say they are; cap must
 * hold them all. */
int am_tensor_read(void *s, tsm_handle t, void *dst, size_t cap) {
  struct am_session *S = s;
  struct am_res *r = am_res_get(S, t);
  if (!r || (!dst && cap)) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (cap < r->nbytes) return TSM_EINVAL;
  if (r->nbytes) memcpy(dst, S->storage->elems(r->store), r->nbytes);
  return 0;
}

/* ---- slots: resources ----------------------------------------------------------------- */

/* m becomes r's holder and any borrow ends (MGR.ATTACH.1, .4); attaching to the current
 * holder changes nothing, even when it is capped (MGR.ATTACH.3). */
int am_res_attach(void *s, tsm_handle rh, tsm_handle m) {
  struct am_session *S = s;
  struct am_res *r = am_res_get(S, rh);
  struct am_mgr *mg = am_mgr_get(S, m);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (r->holder == m) return 0;
  if (am_closed(mg)) return TSM_ECLOSED; /* MGR.ATTACH.2 */
  if (am_capped(mg)) return TSM_ECAPPED;
  r->holder = m;
  am_end_borrow(r);
  return 0;
}

/* r stays live with no holder, and any borrow ends (MGR.DETACH.1-3). */
int am_res_detach(void *s, tsm_handle rh) {
  struct am_res *r = am_res_get(s, rh);
  if (!r) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  r->holder = TSM_NONE;
  am_end_borrow(r);
  return 0;
}

/* b borrows r: the holder before the call is pushed as lender (MGR.TEMP.1); no cap check
 * (MGR.TEMP.2); the root may not borrow (MGR.ROOT.4); borrowing into the current holder
 * changes nothing (MGR.TEMP.8). */
int am_res_temp_attach(void *s, tsm_handle rh, tsm_handle b) {
  struct am_session *S = s;
  struct am_res *r = am_res_get(S, rh);
  struct am_mgr *mg = am_mgr_get(S, b);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (b == am_root()) return TSM_EROOT;
  if (am_closed(mg)) return TSM_ECLOSED;
  if (r->holder == b) return 0;
  if (am_reserve((void **)&r->lenders, &r->lend_cap, r->nlend, sizeof *r->lenders))
    return TSM_ENOMEM;
  r->lenders[r->nlend++] = r->holder;
  r->holder = b;
  return 0;
}

/* r, which m must hold, is attached to m's parent (MGR.RET.1-2, MGR.ROOT.5). */
int am_res_ret(void *s, tsm_handle m, tsm_handle rh) {
  struct am_session *S = s;
  struct am_res *r = am_res_get(S, rh);
  struct am_mgr *mg = am_mgr_get(S, m);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (m == am_root()) return TSM_EROOT;
  if (am_closed(mg)) return TSM_ECLOSED;
  if (r->holder != m) return TSM_EINVAL;
  return am_res_attach(s, rh, mg->parent); /* the parent of an open m is open */
}

/* Releases r; releasing a released resource is a no-op (MGR.REL.1-2). */
int am_res_release(void *s, tsm_handle rh) {
  struct am_session *S = s;
  struct am_res *r = am_res_get(S, rh);
  if (!r) return TSM_EINVAL;
  if (r->valid) am_release(S, r);
  return 0;
}

/* OUT *out: r's state; no side effects (ABI.INFO.1). Released: all fields 0. */
int am_res_info(void *s, tsm_handle rh, struct tsm_res_info *out) {
  struct am_res *r = am_res_get(s, rh);
  if (!r || !out) return TSM_EINVAL;
  memset(out, 0, sizeof *out);
  if (!r->valid) return 0;
  out->valid = 1;
  out->borrowed = r->nlend > 0;
  out->owner = r->holder;
  out->lender = r->nlend ? r->lenders[r->nlend - 1] : TSM_NONE;
  out->nbytes = r->nbytes;
  return 0;
}
