/*
 * harness/adapters/example/example_adapter.c: a minimal, self-contained adapter to copy.
 *
 * It implements the manager family (spec/managers.md) naively, in host memory: every
 * manager and every tensor is one entry of a plain array, and every question ("what
 * does m hold?", "who are m's children?") is answered by an O(n) scan. It offers
 * caps = TSM_CAP_MANAGERS, the `add` op only, one device "cpu", and f32/i32 tensors.
 * Nothing here is fast; everything here is meant to be obviously right.
 *
 * clauses: [ABI.LOAD.1, ABI.VER.1, ABI.VER.2, ABI.CAP.1, ABI.DEV.1, ABI.SESSION.1,
 *           ABI.HANDLE.1, ABI.INFO.1, ERR.ORDER.1, ERR.ATOMIC.1, ERR.HANDLE.1, MGR.*]
 *
 * Handles. A manager handle is EX_MGR_TAG | (index + 1) into the session's manager
 * array, a tensor handle EX_RES_TAG | (index + 1) into its tensor array. Entries are
 * never removed or reused, so a handle keeps its meaning for the whole session
 * (ABI.HANDLE.1, MGR.OWN.3), and the tag tells a manager from a tensor (ERR.HANDLE.1).
 *
 * Borrowing. A tensor has one holder (or none: detached) and a stack of lenders. A
 * temporary attach pushes the previous holder (TSM_NONE when detached) and makes the
 * borrower the holder; when the borrower closes it pops the top lender and goes back
 * there (MGR.TEMP.4, MGR.TEMP.5). The tensor is borrowed while the stack is not empty.
 *
 * Errors. Each slot checks, in the order of ERR.ORDER.1: EINVAL (bad handles and
 * arguments), ERELEASED, EROOT, ECLOSED, ECAPPED, then the op's own checks; and it
 * changes nothing before every check has passed (ERR.ATOMIC.1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tsm/adapter.h>

/* The one exported symbol (ABI.LOAD.1). The broken adapters of harness/tests rebuild
 * this file with -Dtsm_adapter_entry=tsm_example_entry to reuse it. */
const struct tsm_adapter *tsm_adapter_entry(void);

#define EX_TAG_MASK 0xff00000000000000ull
#define EX_MGR_TAG 0x4d00000000000000ull /* 'M' */
#define EX_RES_TAG 0x5200000000000000ull /* 'R' */

/* A manager. `state` holds the TSM_MGR_* bits that mgr_info reports. */
struct ex_mgr {
  uint32_t state;    /* TSM_MGR_CLOSED, TSM_MGR_CAPPED */
  int closing;       /* 1 while its close is in progress (MGR.CLOSE.3, MGR.CLOSE.4) */
  tsm_handle parent; /* TSM_NONE for the root and once closed */
};

/* A tensor. `data` is owned by the tensor and freed when it is released. */
struct ex_res {
  int valid;                   /* 0 once released; never 1 again */
  tsm_handle holder;           /* TSM_NONE while detached or released */
  tsm_handle *lenders;         /* borrow stack; lenders[nlend - 1] is the current lender */
  size_t nlend, lend_cap;      /* borrowed iff nlend > 0 */
  struct tsm_tensor_desc desc; /* dtype and shape */
  size_t nbytes;               /* 4 bytes per element (f32 and i32) */
  void *data;                  /* nbytes of elements, row-major; NULL when nbytes == 0 */
};

/* A session: one isolated world (ABI.SESSION.1). mgrs[0] is the root. */
struct ex_session {
  struct ex_mgr *mgrs;
  size_t nmgr, mgr_cap;
  struct ex_res *res;
  size_t nres, res_cap;
};

/* ---- handles -------------------------------------------------------------------- */

static tsm_handle ex_mgr_handle(size_t i) { return EX_MGR_TAG | (tsm_handle)(i + 1); }
static tsm_handle ex_res_handle(size_t i) { return EX_RES_TAG | (tsm_handle)(i + 1); }

/* RETURN the manager of handle h, or NULL when h is not a manager this session issued. */
static struct ex_mgr *ex_mgr(struct ex_session *S, tsm_handle h) {
  tsm_handle i = (h & ~EX_TAG_MASK) - 1;
  if ((h & EX_TAG_MASK) != EX_MGR_TAG || (h & ~EX_TAG_MASK) == 0 || i >= S->nmgr) return NULL;
  return &S->mgrs[i];
}

/* RETURN the tensor of handle h, or NULL when h is not a tensor this session issued. */
static struct ex_res *ex_res(struct ex_session *S, tsm_handle h) {
  tsm_handle i = (h & ~EX_TAG_MASK) - 1;
  if ((h & EX_TAG_MASK) != EX_RES_TAG || (h & ~EX_TAG_MASK) == 0 || i >= S->nres) return NULL;
  return &S->res[i];
}

static tsm_handle ex_root(void) { return ex_mgr_handle(0); }
static int ex_closed(const struct ex_mgr *m) { return (m->state & TSM_MGR_CLOSED) != 0; }
static int ex_capped(const struct ex_mgr *m) { return (m->state & TSM_MGR_CAPPED) != 0; }

/* ---- growing the arrays ----------------------------------------------------------- */

/* Makes room for one more manager / tensor. Only grows capacity, so a later refusal
 * still leaves nothing observable behind. Returns 0 or TSM_ENOMEM. */
static int ex_reserve(void **arr, size_t *cap, size_t n, size_t elem) {
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

/* Appends a new open manager under parent. OUT *out. Returns 0 or TSM_ENOMEM. */
static int ex_new_mgr(struct ex_session *S, tsm_handle parent, tsm_handle *out) {
  int rc = ex_reserve((void **)&S->mgrs, &S->mgr_cap, S->nmgr, sizeof *S->mgrs);
  if (rc) return rc;
  S->mgrs[S->nmgr] = (struct ex_mgr){.state = 0, .closing = 0, .parent = parent};
  *out = ex_mgr_handle(S->nmgr++);
  return 0;
}

/* ---- state changes on a tensor ---------------------------------------------------- */

static void ex_end_borrow(struct ex_res *r) { r->nlend = 0; }

/* Releases r: frees its storage, forgets holder and lenders (MGR.REL.1). */
static void ex_release(struct ex_res *r) {
  free(r->data);
  r->data = NULL;
  r->valid = 0;
  r->holder = TSM_NONE;
  ex_end_borrow(r);
}

/* r goes back from its closing borrower to its top lender (MGR.TEMP.4, MGR.TEMP.5):
 * to none (detached again), to an open or still-closing lender (MGR.CLOSE.4), or, when
 * the lender has finished closing, it is released. */
static void ex_give_back(struct ex_session *S, struct ex_res *r) {
  tsm_handle lender = r->lenders[--r->nlend];
  struct ex_mgr *l = ex_mgr(S, lender);
  if (lender == TSM_NONE) {
    r->holder = TSM_NONE;
    ex_end_borrow(r); /* a detached resource is never borrowed */
  } else if (ex_closed(l) && !l->closing) {
    ex_release(r);
  } else {
    r->holder = lender; /* no cap check (MGR.TEMP.4) */
  }
}

/* ---- close ------------------------------------------------------------------------ */

/* Closes m in the order of MGR.CLOSE.3: mark closed, close children, release what it
 * owns (including what came back from the children, MGR.CLOSE.4), give back what it
 * borrowed, unlink from the parent. */
static void ex_close(struct ex_session *S, tsm_handle mh) {
  struct ex_mgr *m = ex_mgr(S, mh);
  size_t i;
  m->state = TSM_MGR_CLOSED; /* refuses every addition from now on */
  m->closing = 1;
  for (i = 0; i < S->nmgr; i++) /* children, recursively (no manager is added meanwhile) */
    if (S->mgrs[i].parent == mh && !ex_closed(&S->mgrs[i])) ex_close(S, ex_mgr_handle(i));
  for (i = 0; i < S->nres; i++) /* owned: released */
    if (S->res[i].valid && S->res[i].holder == mh && S->res[i].nlend == 0) ex_release(&S->res[i]);
  for (i = 0; i < S->nres; i++) /* borrowed: back to the lender */
    if (S->res[i].valid && S->res[i].holder == mh) ex_give_back(S, &S->res[i]);
  m->parent = TSM_NONE;
  m->closing = 0;
}

/* ---- slots: devices and sessions -------------------------------------------------- */

static const struct tsm_device ex_devices[] = {{.name = "cpu", .available = 1, .unavailable_reason = NULL}};

/* OUT *out: the adapter's static list. RETURN its length, >= 1 (ABI.DEV.1). */
static int ex_device_list(const struct tsm_device **out) {
  *out = ex_devices;
  return 1;
}

/* A fresh world with its root manager (ABI.SESSION.1, MGR.ROOT.1). OUT *s_out, owned by
 * the adapter until session_close. */
static int ex_session_open(int device_index, void **s_out) {
  struct ex_session *S;
  tsm_handle root;
  if (device_index != 0 || !s_out) return TSM_EINVAL;
  S = calloc(1, sizeof *S);
  if (!S) return TSM_ENOMEM;
  if (ex_new_mgr(S, TSM_NONE, &root)) {
    free(S);
    return TSM_ENOMEM;
  }
  *s_out = S;
  return 0;
}

/* Releases everything the session still holds, detached tensors included. */
static void ex_session_close(void *s) {
  struct ex_session *S = s;
  size_t i;
  if (!S) return;
  for (i = 0; i < S->nres; i++) {
    free(S->res[i].data);
    free(S->res[i].lenders);
  }
  free(S->res);
  free(S->mgrs);
  free(S);
}

/* ---- slots: managers -------------------------------------------------------------- */

/* OUT *out: the root manager (MGR.ROOT.1). */
static int ex_mgr_root(void *s, tsm_handle *out) {
  (void)s;
  if (!out) return TSM_EINVAL;
  *out = ex_root();
  return 0;
}

/* A new open, uncapped child of parent; a capped parent is fine (MGR.SUB.1-3). */
static int ex_mgr_new_sub(void *s, tsm_handle parent, tsm_handle *out) {
  struct ex_session *S = s;
  struct ex_mgr *p = ex_mgr(S, parent);
  if (!p || !out) return TSM_EINVAL;
  if (ex_closed(p)) return TSM_ECLOSED;
  return ex_new_mgr(S, parent, out);
}

/* A new child of the resource's holder, or of the root when detached (MGR.SUB.4). */
static int ex_mgr_sub_of(void *s, tsm_handle resource, tsm_handle *out) {
  struct ex_session *S = s;
  struct ex_res *r = ex_res(S, resource);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  return ex_new_mgr(S, r->holder != TSM_NONE ? r->holder : ex_root(), out);
}

/* Closes m (MGR.CLOSE.*); the root refuses (MGR.ROOT.2); a second close is a no-op. */
static int ex_mgr_close(void *s, tsm_handle m) {
  struct ex_session *S = s;
  struct ex_mgr *mg = ex_mgr(S, m);
  if (!mg) return TSM_EINVAL;
  if (m == ex_root()) return TSM_EROOT;
  if (!ex_closed(mg)) ex_close(S, m);
  return 0;
}

/* Caps m: idempotent, permanent, m alone; the root may be capped (MGR.CAP.3-4). */
static int ex_mgr_cap(void *s, tsm_handle m) {
  struct ex_mgr *mg = ex_mgr(s, m);
  if (!mg) return TSM_EINVAL;
  if (ex_closed(mg)) return TSM_ECLOSED;
  mg->state |= TSM_MGR_CAPPED;
  return 0;
}

/* Live count: live tensors held by m, owned or borrowed (MGR.COUNT.1). */
static uint64_t ex_live(struct ex_session *S, tsm_handle m) {
  uint64_t n = 0;
  size_t i;
  for (i = 0; i < S->nres; i++) n += S->res[i].valid && S->res[i].holder == m;
  return n;
}

/* Child count: open children of m (MGR.COUNT.2). */
static uint64_t ex_children(struct ex_session *S, tsm_handle m) {
  uint64_t n = 0;
  size_t i;
  for (i = 0; i < S->nmgr; i++) n += S->mgrs[i].parent == m && !ex_closed(&S->mgrs[i]);
  return n;
}

/* OUT *out: m's state; no side effects (ABI.INFO.1). A closed manager reports
 * TSM_MGR_CLOSED alone, no parent, and zero counts (MGR.CLOSE.1, MGR.CLOSE.5). */
static int ex_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  struct ex_session *S = s;
  struct ex_mgr *mg = ex_mgr(S, m);
  if (!mg || !out) return TSM_EINVAL;
  out->state = mg->state;
  out->is_root = m == ex_root();
  out->parent = mg->parent;
  out->live = ex_live(S, m);
  out->children = ex_children(S, m);
  return 0;
}

/* Appends m's subtree to buf at *len, one line per open manager in MGR.DUMP.1's words. */
static void ex_dump_tree(struct ex_session *S, tsm_handle m, int depth, char *buf, size_t cap,
                         size_t *len) {
  size_t i;
  int n;
  if (*len < cap) {
    n = snprintf(buf + *len, cap - *len, "%*smgr 0x%016llx%s live=%llu children=%llu\n",
                 2 * depth, "", (unsigned long long)m, m == ex_root() ? " root" : "",
                 (unsigned long long)ex_live(S, m), (unsigned long long)ex_children(S, m));
    if (n > 0) *len += (size_t)n;
  }
  for (i = 0; i < S->nmgr; i++)
    if (S->mgrs[i].parent == m && !ex_closed(&S->mgrs[i]))
      ex_dump_tree(S, ex_mgr_handle(i), depth + 1, buf, cap, len);
}

/* (optional) OUT buf: m's subtree with live counts, NUL-terminated, truncated to cap. */
static int ex_mgr_dump(void *s, tsm_handle m, char *buf, size_t cap) {
  struct ex_session *S = s;
  size_t len = 0;
  if (!ex_mgr(S, m) || !buf || cap == 0) return TSM_EINVAL;
  buf[0] = '\0';
  ex_dump_tree(S, m, 0, buf, cap, &len);
  return 0;
}

/* ---- slots: tensors --------------------------------------------------------------- */

/* Element count of a valid desc; 0 when any extent is 0 (whatever the others are). */
static size_t ex_numel(const struct tsm_tensor_desc *d) {
  size_t n = 1;
  int i;
  for (i = 0; i < d->ndim; i++)
    if (d->shape[i] == 0) return 0;
  for (i = 0; i < d->ndim; i++) n *= (size_t)d->shape[i];
  return n;
}

/* Appends a live tensor held by m, owning a copy of data (or zeros). Returns 0 or
 * TSM_ENOMEM, with nothing created. */
static int ex_new_res(struct ex_session *S, tsm_handle m, const struct tsm_tensor_desc *desc,
                      const void *data, tsm_handle *out) {
  size_t nbytes = ex_numel(desc) * 4;
  void *buf = NULL;
  if (ex_reserve((void **)&S->res, &S->res_cap, S->nres, sizeof *S->res)) return TSM_ENOMEM;
  if (nbytes) {
    buf = calloc(1, nbytes);
    if (!buf) return TSM_ENOMEM;
    if (data) memcpy(buf, data, nbytes);
  }
  S->res[S->nres] = (struct ex_res){.valid = 1, .holder = m, .desc = *desc, .nbytes = nbytes, .data = buf};
  *out = ex_res_handle(S->nres++);
  return 0;
}

/* A tensor held by m (MGR.CREATE.1): EINVAL for a bad desc (MGR.CREATE.4), then ECLOSED,
 * then ECAPPED (MGR.CREATE.2); a refusal leaves nothing behind (MGR.CREATE.3). */
static int ex_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                         const void *data, tsm_handle *out) {
  struct ex_session *S = s;
  struct ex_mgr *mg = ex_mgr(S, m);
  size_t n = 1;
  int i, empty = 0;
  if (!mg || !desc || !out) return TSM_EINVAL;
  if (desc->dtype != TSM_F32 && desc->dtype != TSM_I32) return TSM_EINVAL;
  if (desc->ndim < 0 || desc->ndim > TSM_MAX_DIMS) return TSM_EINVAL;
  for (i = 0; i < desc->ndim; i++) {
    if (desc->shape[i] < 0) return TSM_EINVAL;
    empty |= desc->shape[i] == 0;
  }
  /* A zero extent makes 0 elements whatever the others are: no overflow (MGR.CREATE.5). */
  for (i = 0; i < desc->ndim && !empty; i++) {
    if (n > SIZE_MAX / 4 / (size_t)desc->shape[i]) return TSM_ENOMEM;
    n *= (size_t)desc->shape[i];
  }
  if (ex_closed(mg)) return TSM_ECLOSED;
  if (ex_capped(mg)) return TSM_ECAPPED;
  return ex_new_res(S, m, desc, data, out);
}

/* OUT *out: t's dtype and shape. */
static int ex_tensor_desc(void *s, tsm_handle t, struct tsm_tensor_desc *out) {
  struct ex_res *r = ex_res(s, t);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  *out = r->desc;
  return 0;
}

/* OUT dst: t's elements, row-major; cap must hold them all. */
static int ex_tensor_read(void *s, tsm_handle t, void *dst, size_t cap) {
  struct ex_res *r = ex_res(s, t);
  if (!r || (!dst && cap)) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (cap < r->nbytes) return TSM_EINVAL;
  if (r->nbytes) memcpy(dst, r->data, r->nbytes);
  return 0;
}

/* Elementwise a + b into a new tensor. Only TSM_OP_ADD is offered (ABI.CAP.1). The
 * result goes to out_mgr, or to the holder of the first input, or to the root when that
 * input is detached (MGR.OP.1-3); the inputs do not move (MGR.OP.6). */
static int ex_op(void *s, int op, const tsm_handle *inputs, int n, const int64_t *params,
                 int n_params, tsm_handle out_mgr, tsm_handle *out) {
  struct ex_session *S = s;
  struct ex_res *a, *b;
  struct ex_mgr *dst;
  struct tsm_tensor_desc desc;
  tsm_handle dst_h;
  void *o;
  size_t i, numel;
  int rc;
  (void)params;
  if (op != TSM_OP_ADD) return TSM_ENOTSUP;
  if (n != 2 || !inputs || n_params != 0 || !out) return TSM_EINVAL;
  a = ex_res(S, inputs[0]);
  b = ex_res(S, inputs[1]);
  if (!a || !b || (out_mgr != TSM_NONE && !ex_mgr(S, out_mgr))) return TSM_EINVAL;
  if (!a->valid || !b->valid) return TSM_ERELEASED; /* MGR.OP.5 */
  dst_h = out_mgr != TSM_NONE ? out_mgr : a->holder != TSM_NONE ? a->holder : ex_root();
  dst = ex_mgr(S, dst_h);
  if (ex_closed(dst)) return TSM_ECLOSED; /* MGR.OP.4 */
  if (ex_capped(dst)) return TSM_ECAPPED;
  if (a->desc.ndim != b->desc.ndim ||
      memcmp(a->desc.shape, b->desc.shape, (size_t)a->desc.ndim * sizeof a->desc.shape[0]))
    return TSM_ESHAPE; /* MGR.OP.8 */
  if (a->desc.dtype != b->desc.dtype) return TSM_EDTYPE;
  desc = a->desc; /* a copy: ex_new_res may move the array that a points into */
  rc = ex_new_res(S, dst_h, &desc, NULL, out);
  if (rc) return rc;
  a = ex_res(S, inputs[0]); /* re-read after the possible move */
  b = ex_res(S, inputs[1]);
  o = S->res[S->nres - 1].data;
  numel = ex_numel(&a->desc);
  for (i = 0; i < numel; i++) {
    if (a->desc.dtype == TSM_F32) {
      ((float *)o)[i] = ((const float *)a->data)[i] + ((const float *)b->data)[i];
    } else { /* i32 wraps around, computed in unsigned arithmetic to stay defined */
      ((int32_t *)o)[i] =
          (int32_t)((uint32_t)((const int32_t *)a->data)[i] + (uint32_t)((const int32_t *)b->data)[i]);
    }
  }
  return 0;
}

/* ---- slots: resources ------------------------------------------------------------- */

/* m becomes r's holder and any borrow ends (MGR.ATTACH.1, .4); attaching to the current
 * holder changes nothing, even when it is capped (MGR.ATTACH.3). */
static int ex_res_attach(void *s, tsm_handle rh, tsm_handle m) {
  struct ex_session *S = s;
  struct ex_res *r = ex_res(S, rh);
  struct ex_mgr *mg = ex_mgr(S, m);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (r->holder == m) return 0;
  if (ex_closed(mg)) return TSM_ECLOSED; /* MGR.ATTACH.2 */
  if (ex_capped(mg)) return TSM_ECAPPED;
  r->holder = m;
  ex_end_borrow(r);
  return 0;
}

/* r stays live with no holder, and any borrow ends (MGR.DETACH.1-3). */
static int ex_res_detach(void *s, tsm_handle rh) {
  struct ex_res *r = ex_res(s, rh);
  if (!r) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  r->holder = TSM_NONE;
  ex_end_borrow(r);
  return 0;
}

/* b borrows r: the holder before the call is pushed as lender (MGR.TEMP.1); no cap check
 * (MGR.TEMP.2); the root may not borrow (MGR.ROOT.4); borrowing into the current holder
 * changes nothing (MGR.TEMP.8). */
static int ex_res_temp_attach(void *s, tsm_handle rh, tsm_handle b) {
  struct ex_session *S = s;
  struct ex_res *r = ex_res(S, rh);
  struct ex_mgr *mg = ex_mgr(S, b);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (b == ex_root()) return TSM_EROOT;
  if (ex_closed(mg)) return TSM_ECLOSED;
  if (r->holder == b) return 0;
  if (ex_reserve((void **)&r->lenders, &r->lend_cap, r->nlend, sizeof *r->lenders))
    return TSM_ENOMEM;
  r->lenders[r->nlend++] = r->holder;
  r->holder = b;
  return 0;
}

/* r, which m must hold, is attached to m's parent (MGR.RET.1-2, MGR.ROOT.5). */
static int ex_res_ret(void *s, tsm_handle m, tsm_handle rh) {
  struct ex_session *S = s;
  struct ex_res *r = ex_res(S, rh);
  struct ex_mgr *mg = ex_mgr(S, m);
  if (!r || !mg) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  if (m == ex_root()) return TSM_EROOT;
  if (ex_closed(mg)) return TSM_ECLOSED;
  if (r->holder != m) return TSM_EINVAL;
  return ex_res_attach(s, rh, mg->parent); /* the parent of an open m is open */
}

/* Releases r; releasing a released resource is a no-op (MGR.REL.1-2). */
static int ex_res_release(void *s, tsm_handle rh) {
  struct ex_res *r = ex_res(s, rh);
  if (!r) return TSM_EINVAL;
  if (r->valid) ex_release(r);
  return 0;
}

/* OUT *out: a new entry with r's holder, lenders and data; r is marked released without
 * freeing anything, since the new entry owns it now (MGR.ADOPT.1). */
static int ex_res_adopt(void *s, tsm_handle rh, tsm_handle *out) {
  struct ex_session *S = s;
  struct ex_res *r = ex_res(S, rh);
  if (!r || !out) return TSM_EINVAL;
  if (!r->valid) return TSM_ERELEASED;
  size_t i = (size_t)(r - S->res);
  if (ex_reserve((void **)&S->res, &S->res_cap, S->nres, sizeof *S->res)) return TSM_ENOMEM;
  r = &S->res[i]; /* the array may have moved */
  S->res[S->nres] = *r;
  *r = (struct ex_res){.valid = 0, .holder = TSM_NONE, .desc = r->desc};
  *out = ex_res_handle(S->nres++);
  return 0;
}

/* OUT *out: r's state; no side effects (ABI.INFO.1). Released: all fields 0. */
static int ex_res_info(void *s, tsm_handle rh, struct tsm_res_info *out) {
  struct ex_res *r = ex_res(s, rh);
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

/* OUT *out: bytes of all live tensors of the session (MGR.COUNT.4). */
static int ex_live_bytes(void *s, uint64_t *out) {
  struct ex_session *S = s;
  uint64_t n = 0;
  size_t i;
  if (!out) return TSM_EINVAL;
  for (i = 0; i < S->nres; i++)
    if (S->res[i].valid) n += S->res[i].nbytes;
  *out = n;
  return 0;
}

/* ---- the vtable ------------------------------------------------------------------- */

/* Designated initializers: slots this adapter does not offer (the scope and composite
 * slots of ABI 1.1) stay NULL, and the judge reports those cases NotSupported. */
static const struct tsm_adapter ex_adapter = {
    .abi_major = TSM_ADAPTER_ABI_MAJOR,
    .abi_minor = TSM_ADAPTER_ABI_MINOR,
    .struct_size = sizeof(struct tsm_adapter),
    .caps = TSM_CAP_MANAGERS,
    .ops = 1u << TSM_OP_ADD,
    .name = "example",
    .version = "1.0 (naive in-memory example)",
    .device_list = ex_device_list,
    .session_open = ex_session_open,
    .session_close = ex_session_close,
    .mgr_root = ex_mgr_root,
    .mgr_new_sub = ex_mgr_new_sub,
    .mgr_sub_of = ex_mgr_sub_of,
    .mgr_close = ex_mgr_close,
    .mgr_cap = ex_mgr_cap,
    .mgr_info = ex_mgr_info,
    .mgr_dump = ex_mgr_dump,
    .tensor_new = ex_tensor_new,
    .tensor_desc = ex_tensor_desc,
    .tensor_read = ex_tensor_read,
    .op = ex_op,
    .res_attach = ex_res_attach,
    .res_detach = ex_res_detach,
    .res_temp_attach = ex_res_temp_attach,
    .res_ret = ex_res_ret,
    .res_release = ex_res_release,
    .res_info = ex_res_info,
    .live_bytes = ex_live_bytes,
    .res_adopt = ex_res_adopt,
};

/* RETURN the adapter; static, valid until the object is unloaded (ABI.LOAD.1). */
const struct tsm_adapter *tsm_adapter_entry(void) { return &ex_adapter; }
