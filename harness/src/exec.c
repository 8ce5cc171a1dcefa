/*
 * harness/src/exec.c: the step-by-step judge. Each action runs on the model and on
 * the adapter; their return codes must agree, and after the statement every
 * observable the ABI offers (ABI.INFO.1) must agree too. A disagreement of the
 * adapter is Fail; a case whose statements or expectations contradict the model is
 * Error (a bug in the case, not in the adapter).
 */
#include "exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_load.h"
#include "model.h"

/* A handle value the judge never received: ERR.HANDLE.1 ("tsmbogus"). */
#define BOGUS_HANDLE ((tsm_handle)0x74736d626f677573ull)
/* Above this many live resources only the objects a statement touched are checked. */
#define FULL_CHECK_LIMIT 4096

static const char *const status_names[CTS_N_STATUS] = {
    "Pass", "Fail", "Crash", "Timeout", "NotSupported", "Skip", "XFail", "XPass", "Error"};

const char *cts_status_name(int status) {
  return status >= 0 && status < CTS_N_STATUS ? status_names[status] : "?";
}

int cts_status_from_name(const char *name) {
  for (int i = 0; i < CTS_N_STATUS; i++)
    if (strcmp(status_names[i], name) == 0) return i;
  return -1;
}

int cts_status_ok(int s) {
  return s == CTS_PASS || s == CTS_NOTSUPPORTED || s == CTS_SKIP || s == CTS_XFAIL;
}

struct objinfo {
  tsm_handle h;
  int sym;  /* the symbol it was bound to */
  int line; /* where it was made */
};

struct run {
  const struct cts_case *c;
  const struct tsm_adapter *a;
  void *s;
  struct cts_model m;
  int *sym_obj; /* per symbol: model id, or -1 while unbound */
  struct objinfo *mgr, *res;
  size_t mgr_cap, res_cap;
  const struct cts_stmt *cur;
  struct cts_buf *msg;
  int status;
};

/* ---- diagnostics ----------------------------------------------------------- */

static int report(struct run *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int report(struct run *r, int status, const char *fmt, ...) {
  if (r->status != CTS_PASS) return -1;
  r->status = status;
  if (r->cur)
    cts_buf_printf(r->msg, "%s:%d: `%s`: ", r->c->path, r->cur->line, r->cur->text);
  else
    cts_buf_printf(r->msg, "%s: ", r->c->path);
  va_list ap;
  va_start(ap, fmt);
  cts_buf_vprintf(r->msg, fmt, ap);
  va_end(ap);
  return -1;
}

static char *describe_mgr(struct run *r, int g, char *buf, size_t n) {
  if (g == CTS_NONE) {
    snprintf(buf, n, "none");
  } else if (g == 0) {
    snprintf(buf, n, "root");
  } else {
    snprintf(buf, n, "%s (manager made at line %d)", r->c->syms[r->mgr[g].sym].name,
             r->mgr[g].line);
  }
  return buf;
}

static char *describe_handle(struct run *r, tsm_handle h, char *buf, size_t n) {
  if (h == TSM_NONE) {
    snprintf(buf, n, "none");
    return buf;
  }
  for (size_t g = 0; g < r->m.n_mgrs && g < r->mgr_cap; g++)
    if (r->mgr[g].h == h) return describe_mgr(r, (int)g, buf, n);
  snprintf(buf, n, "unknown handle 0x%llx", (unsigned long long)h);
  return buf;
}

static const char *res_name(struct run *r, int id, char *buf, size_t n) {
  snprintf(buf, n, "tensor %s (made at line %d)", r->c->syms[r->res[id].sym].name,
           r->res[id].line);
  return buf;
}

/* ---- handle maps ----------------------------------------------------------- */

static tsm_handle mgr_handle(struct run *r, int g) {
  return g == CTS_BOGUS ? BOGUS_HANDLE : g == CTS_NONE ? TSM_NONE : r->mgr[g].h;
}

static tsm_handle res_handle(struct run *r, int id) {
  return id == CTS_BOGUS ? BOGUS_HANDLE : r->res[id].h;
}

/* The model may already count an object the maps do not hold yet: bound by cap. */
static int handle_in_use(struct run *r, tsm_handle h) {
  for (size_t i = 0; i < r->m.n_mgrs && i < r->mgr_cap; i++)
    if (r->mgr[i].h == h) return 1;
  for (size_t i = 0; i < r->m.n_res && i < r->res_cap; i++)
    if (r->res[i].h == h && r->m.res[i].valid) return 1;
  return 0;
}

static void remember(struct objinfo **v, size_t *cap, size_t id, tsm_handle h, int sym,
                     int line) {
  cts_grow((void **)v, cap, id + 1, sizeof **v);
  (*v)[id].h = h;
  (*v)[id].sym = sym;
  (*v)[id].line = line;
}

/* Model id of an operand symbol; -1 (and Error) when unbound. */
static int operand(struct run *r, int sym, int *out) {
  if (sym == CTS_SYM_BOGUS) {
    *out = CTS_BOGUS;
    return 0;
  }
  if (r->sym_obj[sym] < 0)
    return report(r, CTS_ERROR, "'%s' is not bound here (its binding failed or never ran)",
                  r->c->syms[sym].name);
  *out = r->sym_obj[sym];
  return 0;
}

/* ---- observation ----------------------------------------------------------- */

static int check_mgr(struct run *r, int g) {
  struct tsm_mgr_info info;
  memset(&info, 0, sizeof info);
  char want[160], got[160];
  int rc = r->a->mgr_info(r->s, r->mgr[g].h, &info);
  if (rc) return report(r, CTS_FAIL, "mgr_info(%s) failed with %s (ABI.INFO.1)",
                        describe_mgr(r, g, want, sizeof want), cts_err_name(rc));
  const struct cts_mmgr *mg = &r->m.mgrs[g];
  int closed = mg->state == CTS_M_CLOSED;
  describe_mgr(r, g, want, sizeof want);
  if (!!(info.state & TSM_MGR_CLOSED) != closed)
    return report(r, CTS_FAIL, "manager %s: expected %s, observed %s", want,
                  closed ? "closed" : "open", closed ? "open" : "closed");
  if (!closed && !!(info.state & TSM_MGR_CAPPED) != mg->capped)
    return report(r, CTS_FAIL, "manager %s: expected %s, observed %s", want,
                  mg->capped ? "capped" : "not capped", mg->capped ? "not capped" : "capped");
  if (!!info.is_root != (g == 0))
    return report(r, CTS_FAIL, "manager %s: is_root is %d", want, info.is_root);
  if (info.parent != mgr_handle(r, mg->parent)) {
    char wp[160];
    return report(r, CTS_FAIL, "manager %s: parent expected %s, observed %s", want,
                  describe_mgr(r, mg->parent, wp, sizeof wp),
                  describe_handle(r, info.parent, got, sizeof got));
  }
  if (info.live != mg->held.n)
    return report(r, CTS_FAIL, "manager %s: live count expected %zu, observed %llu", want,
                  mg->held.n, (unsigned long long)info.live);
  if (info.children != mg->children.n)
    return report(r, CTS_FAIL, "manager %s: child count expected %zu, observed %llu", want,
                  mg->children.n, (unsigned long long)info.children);
  return 0;
}

static int check_res(struct run *r, int id) {
  struct tsm_res_info info;
  memset(&info, 0, sizeof info);
  char name[160], want[160], got[160];
  res_name(r, id, name, sizeof name);
  int rc = r->a->res_info(r->s, r->res[id].h, &info);
  if (rc) return report(r, CTS_FAIL, "res_info(%s) failed with %s (ABI.INFO.1)", name,
                        cts_err_name(rc));
  const struct cts_mres *mr = &r->m.res[id];
  if (!!info.valid != mr->valid)
    return report(r, CTS_FAIL, "%s: expected %s, observed %s", name,
                  mr->valid ? "live" : "released", mr->valid ? "released" : "live");
  if (!mr->valid) return 0;
  if (info.owner != mgr_handle(r, mr->holder))
    return report(r, CTS_FAIL, "%s: owner expected %s, observed %s", name,
                  describe_mgr(r, mr->holder, want, sizeof want),
                  describe_handle(r, info.owner, got, sizeof got));
  if (!!info.borrowed != (mr->n_borrows > 0))
    return report(r, CTS_FAIL, "%s: expected %s, observed %s", name,
                  mr->n_borrows ? "borrowed" : "not borrowed",
                  mr->n_borrows ? "not borrowed" : "borrowed");
  int lender = cts_model_lender(&r->m, id);
  if (info.lender != mgr_handle(r, lender))
    return report(r, CTS_FAIL, "%s: lender expected %s, observed %s", name,
                  describe_mgr(r, lender, want, sizeof want),
                  describe_handle(r, info.lender, got, sizeof got));
  uint64_t bytes = (uint64_t)cts_model_elems(mr) * 4u;
  if (info.nbytes != bytes)
    return report(r, CTS_FAIL, "%s: nbytes expected %llu, observed %llu", name,
                  (unsigned long long)bytes, (unsigned long long)info.nbytes);
  return 0;
}

static int check_bytes(struct run *r) {
  uint64_t bytes = 0;
  int rc = r->a->live_bytes(r->s, &bytes);
  if (rc) return report(r, CTS_FAIL, "live_bytes failed with %s", cts_err_name(rc));
  if (bytes != r->m.live_bytes)
    return report(r, CTS_FAIL, "live bytes expected %llu, observed %llu (MGR.COUNT.4)",
                  (unsigned long long)r->m.live_bytes, (unsigned long long)bytes);
  return 0;
}

/* After every statement: open or just-changed managers, live or just-released
 * resources, and the device's live bytes. */
static int check_state(struct run *r) {
  size_t live = 0;
  for (size_t i = 0; i < r->m.n_res; i++) live += r->m.res[i].valid;
  int full = live <= FULL_CHECK_LIMIT;
  for (size_t g = 0; g < r->m.n_mgrs; g++) {
    const struct cts_mmgr *mg = &r->m.mgrs[g];
    if ((mg->state != CTS_M_CLOSED && (full || mg->held.n <= FULL_CHECK_LIMIT)) || mg->dirty)
      if (check_mgr(r, (int)g)) return -1;
  }
  for (size_t i = 0; i < r->m.n_res; i++)
    if ((full && r->m.res[i].valid) || r->m.res[i].dirty)
      if (check_res(r, (int)i)) return -1;
  cts_model_clear_dirty(&r->m);
  return check_bytes(r);
}

static int values_equal(double want, double got, int approx) {
  if (!approx) return want == got;
  return fabs(want - got) <= 1e-5 * fmax(1.0, fabs(want));
}

/* Reads tensor id from the adapter and compares dtype, shape and elements with
 * `want` (model values, or an expectation's list). */
static int check_tensor(struct run *r, int id, const double *want, size_t n_want, int approx,
                        const char *what) {
  char name[160];
  res_name(r, id, name, sizeof name);
  const struct cts_mres *mr = &r->m.res[id];
  struct tsm_tensor_desc d;
  memset(&d, 0, sizeof d);
  int rc = r->a->tensor_desc(r->s, r->res[id].h, &d);
  if (rc) return report(r, CTS_FAIL, "tensor_desc(%s) failed with %s", name, cts_err_name(rc));
  int shape_ok = d.ndim == mr->ndim && d.dtype == mr->dtype;
  for (int i = 0; shape_ok && i < d.ndim; i++) shape_ok = d.shape[i] == mr->shape[i];
  if (!shape_ok) return report(r, CTS_FAIL, "%s: dtype or shape differs from the model", name);
  int64_t n = cts_model_elems(mr);
  if ((size_t)n != n_want)
    return report(r, CTS_ERROR, "%s: %zu values expected for %lld elements", name, n_want,
                  (long long)n);
  size_t bytes = (size_t)n * 4u;
  void *buf = cts_xmalloc(bytes ? bytes : 1);
  rc = r->a->tensor_read(r->s, r->res[id].h, buf, bytes);
  if (rc) {
    free(buf);
    return report(r, CTS_FAIL, "tensor_read(%s) failed with %s", name, cts_err_name(rc));
  }
  for (int64_t i = 0; i < n; i++) {
    double got;
    if (mr->dtype == TSM_F32) {
      float f;
      memcpy(&f, (char *)buf + i * 4, 4);
      got = f;
    } else {
      int32_t v;
      memcpy(&v, (char *)buf + i * 4, 4);
      got = v;
    }
    double w = mr->dtype == TSM_F32 ? (double)(float)want[i] : want[i];
    if (!values_equal(w, got, approx)) {
      free(buf);
      return report(r, CTS_FAIL, "%s: %s element %lld expected %.9g, observed %.9g", name, what,
                    (long long)i, w, got);
    }
  }
  free(buf);
  return 0;
}

/* ---- actions --------------------------------------------------------------- */

static void fill_values(const struct cts_stmt *st, int64_t n, double *v) {
  for (int64_t i = 0; i < n; i++) {
    switch (st->sub) {
      case CTS_ZEROS: v[i] = 0; break;
      case CTS_ONES: v[i] = 1; break;
      case CTS_FULL: v[i] = st->scalar; break;
      case CTS_ARANGE: v[i] = (double)i; break;
      default: v[i] = st->vals[i]; break;
    }
  }
}

static void *host_data(const struct cts_stmt *st, const double *v, int64_t n) {
  void *data = cts_xmalloc(n ? (size_t)n * 4u : 1);
  for (int64_t i = 0; i < n; i++) {
    if (st->dtype == TSM_F32) {
      float f = (float)v[i];
      memcpy((char *)data + i * 4, &f, 4);
    } else {
      int32_t x = (int32_t)(uint32_t)(int64_t)v[i];
      memcpy((char *)data + i * 4, &x, 4);
    }
  }
  return data;
}

struct outcome {
  int model_rc, adapter_rc;
  int model_out;         /* new model id, or -1 */
  tsm_handle adapter_out;
  int made;              /* 1 manager, 2 tensor */
};

static int run_action(struct run *r, const struct cts_stmt *st, struct outcome *o) {
  int x = CTS_NONE, y = CTS_NONE, out = CTS_NONE;
  if (st->a >= 0 && operand(r, st->a, &x)) return -1;
  if (st->b >= 0 && operand(r, st->b, &y)) return -1;
  if (st->out >= 0 && operand(r, st->out, &out)) return -1;
  memset(o, 0, sizeof *o);
  o->model_out = -1;
  void *s = r->s;
  const struct tsm_adapter *a = r->a;
  switch (st->kind) {
    case CTS_MGR_SUB:
      o->made = 1;
      o->model_rc = cts_model_new_sub(&r->m, x, &o->model_out);
      o->adapter_rc = a->mgr_new_sub(s, mgr_handle(r, x), &o->adapter_out);
      break;
    case CTS_MGR_SUB_OF:
      o->made = 1;
      o->model_rc = cts_model_sub_of(&r->m, x, &o->model_out);
      o->adapter_rc = a->mgr_sub_of(s, res_handle(r, x), &o->adapter_out);
      break;
    case CTS_CREATE: {
      o->made = 2;
      struct tsm_tensor_desc d;
      memset(&d, 0, sizeof d);
      d.dtype = st->dtype;
      d.ndim = st->ndim;
      memcpy(d.shape, st->shape, sizeof d.shape);
      int64_t n = 1; /* a negative extent is refused by both sides (MGR.CREATE.4) */
      for (int i = 0; i < st->ndim; i++) n *= st->shape[i] > 0 ? st->shape[i] : 0;
      double *v = cts_xcalloc(n ? (size_t)n : 1, sizeof(double));
      fill_values(st, n, v);
      void *data = host_data(st, v, n);
      o->model_rc = cts_model_create(&r->m, x, st->dtype, st->ndim, st->shape, v, &o->model_out);
      o->adapter_rc = a->tensor_new(s, mgr_handle(r, x), &d,
                                    st->sub == CTS_ZEROS ? NULL : data, &o->adapter_out);
      free(data);
      free(v);
      break;
    }
    case CTS_OP: {
      o->made = 2;
      tsm_handle in[2] = {res_handle(r, x), y == CTS_NONE ? TSM_NONE : res_handle(r, y)};
      int n = y == CTS_NONE ? 1 : 2;
      o->model_rc =
          cts_model_op(&r->m, st->sub, x, y, st->ndim, st->shape, out, &o->model_out);
      o->adapter_rc = a->op(s, st->sub, in, n, st->sub == TSM_OP_RESHAPE ? st->shape : NULL,
                            st->sub == TSM_OP_RESHAPE ? st->ndim : 0, mgr_handle(r, out),
                            &o->adapter_out);
      break;
    }
    case CTS_ATTACH:
      o->model_rc = cts_model_attach(&r->m, x, y);
      o->adapter_rc = a->res_attach(s, res_handle(r, x), mgr_handle(r, y));
      break;
    case CTS_DETACH:
      o->model_rc = cts_model_detach(&r->m, x);
      o->adapter_rc = a->res_detach(s, res_handle(r, x));
      break;
    case CTS_BORROW:
      o->model_rc = cts_model_borrow(&r->m, x, y);
      o->adapter_rc = a->res_temp_attach(s, res_handle(r, x), mgr_handle(r, y));
      break;
    case CTS_RET:
      o->model_rc = cts_model_ret(&r->m, x, y);
      o->adapter_rc = a->res_ret(s, mgr_handle(r, y), res_handle(r, x));
      break;
    case CTS_RELEASE:
      o->model_rc = cts_model_release(&r->m, x);
      o->adapter_rc = a->res_release(s, res_handle(r, x));
      break;
    case CTS_CLOSE:
      o->model_rc = cts_model_close(&r->m, x);
      o->adapter_rc = a->mgr_close(s, mgr_handle(r, x));
      break;
    case CTS_CAP:
      o->model_rc = cts_model_cap(&r->m, x);
      o->adapter_rc = a->mgr_cap(s, mgr_handle(r, x));
      break;
    case CTS_DUMP: {
      char *buf = cts_xcalloc(1, 65536);
      o->adapter_rc = a->mgr_dump(s, mgr_handle(r, x), buf, 65536);
      printf("--- dump at %s:%d ---\n%s\n", r->c->path, st->line, buf);
      free(buf);
      break;
    }
    default:
      return report(r, CTS_ERROR, "internal: statement kind %d is no action", st->kind);
  }
  return 0;
}

/* Binds the new object after both sides succeeded (MGR.OWN.3, ABI.HANDLE.1). */
static int bind_result(struct run *r, const struct cts_stmt *st, struct outcome *o) {
  if (!o->made || o->model_out < 0) return 0;
  if (o->adapter_out == TSM_NONE || o->adapter_out == BOGUS_HANDLE ||
      handle_in_use(r, o->adapter_out))
    return report(r, CTS_FAIL, "adapter returned handle 0x%llx, which is 0 or already in use "
                  "(ABI.HANDLE.1)", (unsigned long long)o->adapter_out);
  if (o->made == 1)
    remember(&r->mgr, &r->mgr_cap, (size_t)o->model_out, o->adapter_out, st->dst, st->line);
  else
    remember(&r->res, &r->res_cap, (size_t)o->model_out, o->adapter_out, st->dst, st->line);
  r->sym_obj[st->dst] = o->model_out;
  return 0;
}

static int exec_action(struct run *r, const struct cts_stmt *st, int expected_err) {
  struct outcome o;
  if (run_action(r, st, &o)) return -1;
  if (expected_err) {
    if (o.model_rc != expected_err)
      return report(r, CTS_ERROR, "the case expects %s but the spec model gives %s",
                    cts_err_name(expected_err), cts_err_name(o.model_rc));
    if (o.adapter_rc != expected_err)
      return report(r, CTS_FAIL, "expected error %s, adapter returned %s",
                    cts_err_name(expected_err), cts_err_name(o.adapter_rc));
  } else {
    if (o.model_rc)
      return report(r, CTS_ERROR, "the spec model refuses this with %s: the case must say "
                    "`expect error %s: ...`", cts_err_name(o.model_rc), cts_err_name(o.model_rc));
    if (o.adapter_rc)
      return report(r, CTS_FAIL, "adapter returned %s, the spec requires success",
                    cts_err_name(o.adapter_rc));
    if (bind_result(r, st, &o)) return -1;
  }
  if (check_state(r)) return -1;
  if (!expected_err && o.made == 2) {
    int id = o.model_out;
    const struct cts_mres *mr = &r->m.res[id];
    return check_tensor(r, id, cts_model_values(&r->m, id), (size_t)cts_model_elems(mr),
                        cts_model_approx(&r->m, id), "value");
  }
  return 0;
}

/* ---- expectations ---------------------------------------------------------- */

/* The model must agree with the case first: otherwise the case is wrong. */
static int model_agrees(struct run *r, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int model_agrees(struct run *r, int ok, const char *fmt, ...) {
  if (ok) return 0;
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return report(r, CTS_ERROR, "the case contradicts the spec model: %s", detail);
}

static int exec_expect(struct run *r, const struct cts_stmt *st) {
  int x = CTS_NONE, y = CTS_NONE;
  if (st->a >= 0 && operand(r, st->a, &x)) return -1;
  if (st->b >= 0 && operand(r, st->b, &y)) return -1;
  if (x == CTS_BOGUS || y == CTS_BOGUS)
    return report(r, CTS_ERROR, "'bogus' can only be an argument of an action");
  char buf[160];
  switch (st->kind) {
    case CTS_EXPECT_OWNER:
      if (model_agrees(r, r->m.res[x].holder == y,
                       "the model's owner is %s", describe_mgr(r, r->m.res[x].holder, buf, sizeof buf)))
        return -1;
      return check_res(r, x);
    case CTS_EXPECT_LENDER: {
      int lender = cts_model_lender(&r->m, x);
      if (model_agrees(r, lender == y, "the model's lender is %s",
                       describe_mgr(r, lender, buf, sizeof buf)))
        return -1;
      return check_res(r, x);
    }
    case CTS_EXPECT_BORROWED:
      if (model_agrees(r, (r->m.res[x].n_borrows > 0) == st->flag,
                       "the model says %s", r->m.res[x].n_borrows ? "borrowed" : "not borrowed"))
        return -1;
      return check_res(r, x);
    case CTS_EXPECT_VALID:
      if (model_agrees(r, r->m.res[x].valid == st->flag, "the model says %s",
                       r->m.res[x].valid ? "live" : "released"))
        return -1;
      return check_res(r, x);
    case CTS_EXPECT_COUNT:
      if (model_agrees(r, (int64_t)r->m.mgrs[x].held.n == st->count, "the model's count is %zu",
                       r->m.mgrs[x].held.n))
        return -1;
      return check_mgr(r, x);
    case CTS_EXPECT_CHILDREN:
      if (model_agrees(r, (int64_t)r->m.mgrs[x].children.n == st->count,
                       "the model's child count is %zu", r->m.mgrs[x].children.n))
        return -1;
      return check_mgr(r, x);
    case CTS_EXPECT_STATE: {
      const struct cts_mmgr *mg = &r->m.mgrs[x];
      int state = mg->state == CTS_M_CLOSED ? CTS_STATE_CLOSED
                  : mg->capped                ? CTS_STATE_CAPPED
                                              : CTS_STATE_OPEN;
      if (model_agrees(r, state == st->flag, "the model's state differs")) return -1;
      return check_mgr(r, x);
    }
    case CTS_EXPECT_PARENT:
      if (model_agrees(r, r->m.mgrs[x].parent == y, "the model's parent is %s",
                       describe_mgr(r, r->m.mgrs[x].parent, buf, sizeof buf)))
        return -1;
      return check_mgr(r, x);
    case CTS_EXPECT_VALUES: {
      const struct cts_mres *mr = &r->m.res[x];
      if (model_agrees(r, mr->valid, "the tensor is released")) return -1;
      int64_t n = cts_model_elems(mr);
      if (model_agrees(r, (size_t)n == st->nvals, "%zu values for %lld elements", st->nvals,
                       (long long)n))
        return -1;
      const double *mv = cts_model_values(&r->m, x);
      int approx = cts_model_approx(&r->m, x);
      for (int64_t i = 0; i < n; i++) {
        double w = mr->dtype == TSM_F32 ? (double)(float)st->vals[i] : st->vals[i];
        if (model_agrees(r, values_equal(w, mv[i], approx),
                         "element %lld is %.9g in the model", (long long)i, mv[i]))
          return -1;
      }
      return check_tensor(r, x, st->vals, st->nvals, approx, "expected");
    }
    case CTS_EXPECT_SHAPE: {
      const struct cts_mres *mr = &r->m.res[x];
      int same = mr->valid && mr->ndim == st->ndim;
      for (int i = 0; same && i < st->ndim; i++) same = mr->shape[i] == st->shape[i];
      if (model_agrees(r, same, "the model's shape differs")) return -1;
      struct tsm_tensor_desc d;
      memset(&d, 0, sizeof d);
      int rc = r->a->tensor_desc(r->s, r->res[x].h, &d);
      if (rc) return report(r, CTS_FAIL, "tensor_desc failed with %s", cts_err_name(rc));
      same = d.ndim == st->ndim;
      for (int i = 0; same && i < st->ndim; i++) same = d.shape[i] == st->shape[i];
      return same ? 0 : report(r, CTS_FAIL, "shape differs (ndim %d observed)", d.ndim);
    }
    case CTS_EXPECT_BYTES:
      if (model_agrees(r, r->m.live_bytes == (uint64_t)st->count, "the model has %llu live bytes",
                       (unsigned long long)r->m.live_bytes))
        return -1;
      return check_bytes(r);
    default:
      return report(r, CTS_ERROR, "internal: statement kind %d is no expectation", st->kind);
  }
}

static int exec_block(struct run *r, const struct cts_block *b) {
  for (size_t i = 0; i < b->n; i++) {
    const struct cts_stmt *st = &b->items[i];
    r->cur = st;
    int rc;
    if (st->kind == CTS_REPEAT) {
      rc = 0;
      for (int64_t k = 0; rc == 0 && k < st->count; k++) rc = exec_block(r, &st->body);
    } else if (st->kind == CTS_EXPECT_ERROR) {
      rc = exec_action(r, st->inner, st->err);
    } else if (st->kind >= CTS_EXPECT_OWNER) {
      rc = exec_expect(r, st);
    } else {
      rc = exec_action(r, st, 0);
    }
    if (rc) return -1;
  }
  return 0;
}

int cts_exec_case(const struct cts_case *c, const struct tsm_adapter *a, int device_index,
                  struct cts_buf *msg) {
  struct run r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.a = a;
  r.msg = msg;
  r.status = CTS_PASS;
  const char *missing = cts_adapter_missing_slot(a);
  if (missing) {
    report(&r, CTS_ERROR, "adapter declares managers but its '%s' slot is NULL", missing);
    return r.status;
  }
  int rc = a->session_open(device_index, &r.s);
  if (rc) {
    report(&r, CTS_FAIL, "session_open(%d) failed with %s", device_index, cts_err_name(rc));
    return r.status;
  }
  cts_model_init(&r.m);
  r.sym_obj = cts_xmalloc(c->n_syms * sizeof(int));
  for (size_t i = 0; i < c->n_syms; i++) r.sym_obj[i] = -1;
  tsm_handle root = TSM_NONE;
  rc = a->mgr_root(r.s, &root);
  if (rc || root == TSM_NONE) {
    report(&r, CTS_FAIL, "mgr_root failed with %s (MGR.ROOT.1)", cts_err_name(rc));
  } else {
    remember(&r.mgr, &r.mgr_cap, 0, root, CTS_SYM_ROOT, 0);
    r.sym_obj[CTS_SYM_ROOT] = 0;
    if (check_state(&r) == 0) exec_block(&r, &c->body);
  }
  a->session_close(r.s);
  cts_model_free(&r.m);
  free(r.sym_obj);
  free(r.mgr);
  free(r.res);
  return r.status;
}
