/*
 * harness/src/exec.c: the step-by-step judge. Each action runs on the model and on
 * the adapter; their return codes must agree, and after the statement every
 * observable the ABI offers (ABI.INFO.1) must agree too (exec_observe.c). A
 * disagreement of the adapter is Fail; a case whose statements or expectations
 * contradict the model is Error (a bug in the case, not in the adapter).
 * `thread` blocks run on worker threads one at a time; `parallel` blocks run on
 * several at once against the adapter alone and are replayed on the model after
 * the join (SCOPE.THREAD.3).
 */
#include "exec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_load.h"
#include "exec_internal.h"

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

/* A wrapped block in progress (SCOPE.WRAP.1). */
struct cts_wrap {
  const struct cts_stmt *st;
  struct cts_wrap *outer;
  int entered;     /* the adapter called the function */
  int scope;       /* the model's scope for the block */
  int result;      /* model id of `result X` */
};

static int exec_block(struct cts_run *r, const struct cts_block *b);

/* ---- operands ---------------------------------------------------------------- */

/* Model ids of a statement's operands, in the table of each symbol's kind. */
struct operands {
  int a, b, out;
  int *list;
  size_t n_list;
};

/* Adapter handles of the same operands. */
struct handles {
  tsm_handle a, b, out;
  tsm_handle *list;
};

static int operand(struct cts_run *r, int sym, int *out) {
  if (sym == -1 || sym == -2) { /* absent, or `none` */
    *out = CTS_NONE;
    return 0;
  }
  if (sym == CTS_SYM_BOGUS) {
    *out = CTS_BOGUS;
    return 0;
  }
  if (r->sym_obj[sym] < 0)
    return cts__report(r, CTS_ERROR, "'%s' is not bound here (its binding failed or never ran)",
                       r->c->syms[sym].name);
  *out = r->sym_obj[sym];
  return 0;
}

static int resolve(struct cts_run *r, const struct cts_stmt *st, struct operands *o) {
  memset(o, 0, sizeof *o);
  if (operand(r, st->a, &o->a) || operand(r, st->b, &o->b) || operand(r, st->out, &o->out))
    return -1;
  if (st->n_list) {
    o->list = cts_xmalloc(st->n_list * sizeof(int));
    o->n_list = st->n_list;
    for (size_t i = 0; i < st->n_list; i++)
      if (operand(r, st->list[i], &o->list[i])) return -1;
  }
  return 0;
}

static tsm_handle handle_of(struct cts_run *r, int sym, int id) {
  if (id == CTS_BOGUS) return CTS_BOGUS_HANDLE;
  if (id == CTS_NONE) return TSM_NONE;
  switch (r->c->syms[sym].kind) {
    case CTS_SYM_MANAGER: return cts__mgr_handle(r, id);
    case CTS_SYM_SCOPE: return cts__scope_handle(r, id);
    default: return cts__res_handle(r, id);
  }
}

static void to_handles(struct cts_run *r, const struct cts_stmt *st, const struct operands *o,
                       struct handles *h) {
  h->a = handle_of(r, st->a, o->a);
  h->b = handle_of(r, st->b, o->b);
  h->out = handle_of(r, st->out, o->out);
  h->list = st->n_list ? cts_xmalloc(st->n_list * sizeof(tsm_handle)) : NULL;
  for (size_t i = 0; i < st->n_list; i++) h->list[i] = handle_of(r, st->list[i], o->list[i]);
}

/* ---- the two sides of an action --------------------------------------------- */

enum made { MADE_NOTHING, MADE_MGR, MADE_RES, MADE_SCOPE };

static int made_kind(const struct cts_stmt *st) {
  switch (st->kind) {
    case CTS_MGR_SUB: case CTS_MGR_SUB_OF: return MADE_MGR;
    case CTS_CREATE: case CTS_OP: case CTS_PACK: case CTS_LIST: case CTS_COMPONENT:
    case CTS_DL_IMPORT:
      return MADE_RES;
    case CTS_SCOPE_OPEN: return MADE_SCOPE;
    default: return MADE_NOTHING;
  }
}

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

static int64_t create_elems(const struct cts_stmt *st) {
  int64_t n = 1; /* a negative extent is refused by both sides (MGR.CREATE.4) */
  for (int i = 0; i < st->ndim; i++) n *= st->shape[i] > 0 ? st->shape[i] : 0;
  return n;
}

static int model_call(struct cts_run *r, const struct cts_stmt *st, const struct operands *o,
                      int *made) {
  struct cts_model *m = &r->m;
  switch (st->kind) {
    case CTS_MGR_SUB: return cts_model_new_sub(m, o->a, made);
    case CTS_MGR_SUB_OF: return cts_model_sub_of(m, o->a, made);
    case CTS_CREATE: {
      int64_t n = create_elems(st);
      double *v = cts_xcalloc(n ? (size_t)n : 1, sizeof(double));
      fill_values(st, n, v);
      int rc = cts_model_create(m, o->a, st->dtype, st->ndim, st->shape, v, made);
      free(v);
      return rc;
    }
    case CTS_OP: return cts_model_op(m, st->sub, o->a, o->b, st->ndim, st->shape, o->out, made);
    case CTS_ATTACH: return cts_model_attach(m, o->a, o->b);
    case CTS_DETACH: return cts_model_detach(m, o->a);
    case CTS_BORROW: return cts_model_borrow(m, o->a, o->b);
    case CTS_RET: return cts_model_ret(m, o->a, o->b);
    case CTS_RELEASE: return cts_model_release(m, o->a);
    case CTS_CLOSE: return cts_model_close(m, o->a);
    case CTS_CAP: return cts_model_cap(m, o->a);
    case CTS_DUMP: return 0;
    case CTS_SCOPE_OPEN: return cts_model_scope_open(m, made);
    case CTS_SCOPE_DISPOSE: return cts_model_scope_dispose(m, o->a);
    case CTS_SCOPE_MOVE_OUTER: return cts_model_scope_move_outer(m, o->b, o->a);
    case CTS_SCOPE_MOVE_OTHER: return cts_model_scope_move_other(m, o->b, o->a, o->out);
    case CTS_SCOPE_DETACH: return cts_model_scope_detach(m, o->b, o->a);
    case CTS_SCOPE_ATTACH: return cts_model_scope_attach(m, o->b, o->a);
    case CTS_SCOPE_DISPOSE_ALL: return cts_model_scope_dispose_all(m, o->a, o->list, o->n_list);
    case CTS_SCOPE_HANDOVER: return cts_model_scope_handover(m, o->a);
    case CTS_PACK: return cts_model_pack(m, o->list, o->n_list, st->flag, made);
    case CTS_LIST: return cts_model_list(m, o->list, o->n_list, made);
    case CTS_COMPONENT: return cts_model_component(m, o->a, st->count, made);
    default: return TSM_EINVAL;
  }
}

static int adapter_call(struct cts_run *r, const struct cts_stmt *st, const struct handles *h,
                        tsm_handle *made) {
  void *s = r->s;
  const struct tsm_adapter *a = r->a;
  int n = (int)st->n_list;
  switch (st->kind) {
    case CTS_MGR_SUB: return a->mgr_new_sub(s, h->a, made);
    case CTS_MGR_SUB_OF: return a->mgr_sub_of(s, h->a, made);
    case CTS_CREATE: {
      struct tsm_tensor_desc d;
      memset(&d, 0, sizeof d);
      d.dtype = st->dtype;
      d.ndim = st->ndim;
      memcpy(d.shape, st->shape, sizeof d.shape);
      int64_t count = create_elems(st);
      double *v = cts_xcalloc(count ? (size_t)count : 1, sizeof(double));
      fill_values(st, count, v);
      void *data = cts_xmalloc(count ? (size_t)count * 4u : 1);
      for (int64_t i = 0; i < count; i++) {
        if (st->dtype == TSM_F32) {
          float f = (float)v[i];
          memcpy((char *)data + i * 4, &f, 4);
        } else {
          int32_t x = (int32_t)(uint32_t)(int64_t)v[i];
          memcpy((char *)data + i * 4, &x, 4);
        }
      }
      int rc = a->tensor_new(s, h->a, &d, st->sub == CTS_ZEROS ? NULL : data, made);
      free(data);
      free(v);
      return rc;
    }
    case CTS_OP: {
      tsm_handle in[2] = {h->a, h->b};
      int reshape = st->sub == TSM_OP_RESHAPE;
      return a->op(s, st->sub, in, st->b < 0 ? 1 : 2, reshape ? st->shape : NULL,
                   reshape ? st->ndim : 0, h->out, made);
    }
    case CTS_ATTACH: return a->res_attach(s, h->a, h->b);
    case CTS_DETACH: return a->res_detach(s, h->a);
    case CTS_BORROW: return a->res_temp_attach(s, h->a, h->b);
    case CTS_RET: return a->res_ret(s, h->b, h->a);
    case CTS_RELEASE: return a->res_release(s, h->a);
    case CTS_CLOSE: return a->mgr_close(s, h->a);
    case CTS_CAP: return a->mgr_cap(s, h->a);
    case CTS_DUMP: {
      char *buf = cts_xcalloc(1, 65536);
      int rc = a->mgr_dump(s, h->a, buf, 65536);
      printf("--- dump at %s:%d ---\n%s\n", r->c->path, st->line, buf);
      free(buf);
      return rc;
    }
    case CTS_SCOPE_OPEN: return a->scope_open(s, made);
    case CTS_SCOPE_DISPOSE: return a->scope_dispose(s, h->a);
    case CTS_SCOPE_MOVE_OUTER: return a->scope_move_to_outer(s, h->b, h->a);
    case CTS_SCOPE_MOVE_OTHER: return a->scope_move_to_other(s, h->b, h->a, h->out);
    case CTS_SCOPE_DETACH: return a->scope_detach(s, h->b, h->a);
    case CTS_SCOPE_ATTACH: return a->scope_attach(s, h->b, h->a);
    case CTS_SCOPE_DISPOSE_ALL: return a->scope_dispose_all(s, h->a, h->list, n);
    case CTS_SCOPE_HANDOVER: return a->scope_handover(s, h->a);
    case CTS_PACK: return a->composite_pack(s, h->list, n, st->flag, made);
    case CTS_LIST: return a->composite_list(s, h->list, n, made);
    case CTS_COMPONENT: return a->composite_component(s, h->a, (int)st->count, made);
    default: return TSM_EINVAL;
  }
}

/* ---- binding what an action made ------------------------------------------- */

/* Learns the handles of a new composite's components and checks them: absent ones
 * are TSM_NONE (COMP.PACK.1), list components are the items (COMP.LIST.1). */
static int learn_components(struct cts_run *r, int c, int line) {
  const struct cts_ids *comps = &r->m.res[c].components;
  char name[200];
  cts__res_name(r, c, name, sizeof name);
  for (size_t i = 0; i < comps->n; i++) {
    int id = comps->v[i];
    tsm_handle h = TSM_NONE;
    int rc = r->a->composite_component(r->s, r->res[c].h, (int)i, &h);
    if (rc) return cts__report(r, CTS_FAIL, "composite_component(%s, %zu) failed with %s", name, i,
                               cts_err_name(rc));
    if (id == CTS_NONE) {
      if (h != TSM_NONE)
        return cts__report(r, CTS_FAIL, "%s: component %zu must be absent (COMP.PACK.1)", name, i);
      continue;
    }
    if ((size_t)id < r->res_cap && r->res[id].h) {
      if (r->res[id].h != h)
        return cts__report(r, CTS_FAIL, "%s: component %zu is not the item it was made from", name, i);
      continue;
    }
    if (h == TSM_NONE || h == CTS_BOGUS_HANDLE || cts__handle_in_use(r, h))
      return cts__report(r, CTS_FAIL, "%s: component %zu has handle 0x%llx, which is 0 or already "
                         "in use (ABI.HANDLE.1)", name, i, (unsigned long long)h);
    cts__remember(&r->res, &r->res_cap, (size_t)id, h, -1, line);
  }
  return 0;
}

int cts__bind_made(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h) {
  int kind = made_kind(st);
  if (kind == MADE_NOTHING || st->dst < 0) return 0;
  if (st->kind == CTS_COMPONENT) {
    if (id == CTS_NONE)
      return cts__report(r, CTS_ERROR, "that component is absent: write `expect absent`");
    if (h != r->res[id].h)
      return cts__report(r, CTS_FAIL, "composite_component returned 0x%llx, not the component's "
                         "handle 0x%llx", (unsigned long long)h, (unsigned long long)r->res[id].h);
    r->sym_obj[st->dst] = id;
    return 0;
  }
  if (h == TSM_NONE || h == CTS_BOGUS_HANDLE || cts__handle_in_use(r, h))
    return cts__report(r, CTS_FAIL, "adapter returned handle 0x%llx, which is 0 or already in "
                       "use (ABI.HANDLE.1)", (unsigned long long)h);
  if (kind == MADE_MGR)
    cts__remember(&r->mgr, &r->mgr_cap, (size_t)id, h, st->dst, st->line);
  else if (kind == MADE_SCOPE)
    cts__remember(&r->scope, &r->scope_cap, (size_t)id, h, st->dst, st->line);
  else
    cts__remember(&r->res, &r->res_cap, (size_t)id, h, st->dst, st->line);
  r->sym_obj[st->dst] = id;
  if (st->kind == CTS_PACK || st->kind == CTS_LIST) return learn_components(r, id, st->line);
  return 0;
}

/* The elements of what the statement made: a tensor, or a packed sequence's parts. */
int cts__check_made_values(struct cts_run *r, const struct cts_stmt *st, int id) {
  if (st->kind == CTS_CREATE || st->kind == CTS_OP || st->kind == CTS_DL_IMPORT)
    return cts__check_tensor(r, id, cts_model_values(&r->m, id),
                             (size_t)cts_model_elems(&r->m.res[id]), cts_model_approx(&r->m, id),
                             "value");
  if (st->kind != CTS_PACK) return 0;
  const struct cts_ids *comps = &r->m.res[id].components;
  for (size_t i = 0; i < comps->n; i++) {
    int c = comps->v[i];
    if (c != CTS_NONE && cts__check_tensor(r, c, cts_model_values(&r->m, c),
                                           (size_t)cts_model_elems(&r->m.res[c]), 0, "value"))
      return -1;
  }
  return 0;
}

/* Compares the two sides' codes. RETURN 0 when the statement may go on. */
int cts__judge_codes(struct cts_run *r, int model_rc, int adapter_rc, int expected_err) {
  if (expected_err) {
    if (model_rc != expected_err)
      return cts__report(r, CTS_ERROR, "the case expects %s but the spec model gives %s",
                         cts_err_name(expected_err), cts_err_name(model_rc));
    if (adapter_rc != expected_err)
      return cts__report(r, CTS_FAIL, "expected error %s, adapter returned %s",
                         cts_err_name(expected_err), cts_err_name(adapter_rc));
    return 0;
  }
  if (model_rc)
    return cts__report(r, CTS_ERROR, "the spec model refuses this with %s: the case must say "
                       "`expect error %s: ...`", cts_err_name(model_rc), cts_err_name(model_rc));
  if (adapter_rc)
    return cts__report(r, CTS_FAIL, "adapter returned %s, the spec requires success",
                       cts_err_name(adapter_rc));
  return 0;
}

static int exec_action(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  struct operands o;
  struct handles h = {0};
  int rc = resolve(r, st, &o);
  int made = CTS_NONE;
  tsm_handle made_h = TSM_NONE;
  if (rc == 0) {
    to_handles(r, st, &o, &h);
    int adapter_rc = adapter_call(r, st, &h, &made_h);
    if (r->fault && adapter_rc == TSM_ENOMEM) {
      free(o.list);
      free(h.list);
      return cts__injected(r);
    }
    int model_rc = model_call(r, st, &o, &made);
    rc = cts__judge_codes(r, model_rc, adapter_rc, expected_err);
    if (rc == 0 && !expected_err) rc = cts__bind_made(r, st, made, made_h);
    if (rc == 0) rc = cts__check_state(r);
    if (rc == 0 && !expected_err && made != CTS_NONE) rc = cts__check_made_values(r, st, made);
  }
  free(o.list);
  free(h.list);
  return rc;
}

/* ---- wrapped blocks (SCOPE.WRAP.1) ------------------------------------------ */

struct wrap_call {
  struct cts_wrap w;
  struct cts_run *r;
};

static int wrapped_body(void *arg, tsm_handle *result) {
  struct wrap_call *call = arg;
  struct cts_run *r = call->r;
  struct cts_wrap *w = &call->w;
  w->entered = 1;
  cts_model_scope_open(&r->m, &w->scope);
  tsm_handle h = TSM_NONE;
  int rc = r->a->scope_current(r->s, &h);
  if (rc || h == TSM_NONE || cts__handle_in_use(r, h)) {
    cts__report(r, CTS_FAIL, "inside scope_wrapped, scope_current gave %s and handle 0x%llx: "
                "no fresh scope is current (SCOPE.WRAP.1)", cts_err_name(rc), (unsigned long long)h);
    return TSM_EINVAL;
  }
  cts__remember(&r->scope, &r->scope_cap, (size_t)w->scope, h, -1, w->st->line);
  if (cts__check_state(r) || exec_block(r, &w->st->body)) return TSM_EINVAL;
  *result = cts__res_handle(r, w->result);
  return 0;
}

static int exec_wrapped(struct cts_run *r, const struct cts_stmt *st) {
  struct wrap_call call;
  memset(&call, 0, sizeof call);
  call.r = r;
  call.w.st = st;
  call.w.outer = r->wrap;
  call.w.result = CTS_NONE;
  r->wrap = &call.w;
  tsm_handle out = TSM_NONE;
  int rc = r->a->scope_wrapped(r->s, wrapped_body, &call, &out);
  r->wrap = call.w.outer;
  r->cur = st;
  if (r->status != CTS_PASS) return -1;
  if (!call.w.entered)
    return cts__report(r, CTS_FAIL, "scope_wrapped returned %s without calling the function",
                       cts_err_name(rc));
  if (rc) return cts__report(r, CTS_FAIL, "scope_wrapped returned %s", cts_err_name(rc));
  cts_model_scope_move_outer(&r->m, call.w.scope, call.w.result);
  cts_model_scope_dispose(&r->m, call.w.scope);
  if (out != cts__res_handle(r, call.w.result))
    return cts__report(r, CTS_FAIL, "scope_wrapped gave 0x%llx, not the block's result",
                       (unsigned long long)out);
  r->sym_obj[st->dst] = call.w.result;
  return cts__check_state(r);
}

/* ---- threads ----------------------------------------------------------------- */

struct block_job {
  const struct cts_block *body;
  int rc;
};

static void run_block_job(struct cts_run *r, void *arg) {
  struct block_job *job = arg;
  job->rc = exec_block(r, job->body);
}

static int exec_thread(struct cts_run *r, const struct cts_stmt *st) {
  int running = r->m.thread;
  struct block_job job = {&st->body, 0};
  cts_model_set_thread(&r->m, st->flag);
  cts__on_thread(r, st->flag, run_block_job, &job);
  cts_model_set_thread(&r->m, running);
  return job.rc;
}

/* What one action of a parallel thread did on the adapter. */
struct record {
  int rc;
  tsm_handle made;
};

struct recorder {
  const struct cts_stmt *thread;
  struct record *v;
  size_t n, cap;
  tsm_handle *local;      /* per symbol: bound in this block, else 0 */
  int unbound_sym;        /* >= 0: a name with no binding stopped the recording */
};

static tsm_handle record_handle(struct cts_run *r, struct recorder *rec, int sym) {
  if (sym == -1 || sym == -2) return TSM_NONE;
  if (sym == CTS_SYM_BOGUS) return CTS_BOGUS_HANDLE;
  if (rec->local[sym]) return rec->local[sym];
  if (r->sym_obj[sym] < 0) {
    rec->unbound_sym = sym;
    return TSM_NONE;
  }
  return handle_of(r, sym, r->sym_obj[sym]);
}

static void record_block(struct cts_run *r, struct recorder *rec, const struct cts_block *b) {
  for (size_t i = 0; i < b->n && rec->unbound_sym < 0; i++) {
    const struct cts_stmt *st = &b->items[i];
    if (st->kind == CTS_REPEAT) {
      for (int64_t k = 0; k < st->count && rec->unbound_sym < 0; k++) record_block(r, rec, &st->body);
      continue;
    }
    struct handles h;
    h.a = record_handle(r, rec, st->a);
    h.b = record_handle(r, rec, st->b);
    h.out = record_handle(r, rec, st->out);
    h.list = st->n_list ? cts_xmalloc(st->n_list * sizeof(tsm_handle)) : NULL;
    for (size_t k = 0; k < st->n_list; k++) h.list[k] = record_handle(r, rec, st->list[k]);
    struct record one = {0, TSM_NONE};
    if (rec->unbound_sym < 0) {
      one.rc = adapter_call(r, st, &h, &one.made);
      if (one.rc == 0 && st->dst >= 0) rec->local[st->dst] = one.made;
      CTS_PUSH(rec->v, rec->n, rec->cap, one);
    }
    free(h.list);
  }
}

static void record_job(struct cts_run *r, void *arg) {
  struct recorder *rec = arg;
  record_block(r, rec, &rec->thread->body);
}

/* Resources a parallel block made, for their value checks once all threads are replayed. */
struct made_res {
  int id;
  const struct cts_stmt *st;
};

struct made_list {
  struct made_res *v;
  size_t n, cap;
};

/* Replays a recorded block on the model, in the same order, comparing codes. */
static int replay_block(struct cts_run *r, struct recorder *rec, const struct cts_block *b,
                        size_t *at, struct made_list *made_list) {
  for (size_t i = 0; i < b->n; i++) {
    const struct cts_stmt *st = &b->items[i];
    r->cur = st;
    if (st->kind == CTS_REPEAT) {
      for (int64_t k = 0; k < st->count; k++)
        if (replay_block(r, rec, &st->body, at, made_list)) return -1;
      continue;
    }
    if (*at >= rec->n)
      return cts__report(r, CTS_ERROR, "'%s' is not bound when thread %s runs this",
                         r->c->syms[rec->unbound_sym].name, r->c->threads[rec->thread->flag]);
    struct record one = rec->v[(*at)++];
    struct operands o;
    int made = CTS_NONE;
    int rc = resolve(r, st, &o);
    if (rc == 0) {
      rc = cts__judge_codes(r, model_call(r, st, &o, &made), one.rc, 0);
      if (rc == 0) rc = cts__bind_made(r, st, made, one.made);
      if (rc == 0 && made_kind(st) == MADE_RES && made != CTS_NONE) {
        struct made_res one_made = {made, st};
        CTS_PUSH(made_list->v, made_list->n, made_list->cap, one_made);
      }
    }
    free(o.list);
    if (rc) return -1;
  }
  return 0;
}

static void check_thread_job(struct cts_run *r, void *arg) {
  int *rc = arg;
  *rc = cts__check_thread(r);
}

static int exec_parallel(struct cts_run *r, const struct cts_stmt *st) {
  size_t n = st->body.n;
  struct recorder *recs = cts_xcalloc(n, sizeof *recs);
  int *ts = cts_xcalloc(n, sizeof(int));
  void **args = cts_xcalloc(n, sizeof(void *));
  for (size_t i = 0; i < n; i++) {
    recs[i].thread = &st->body.items[i];
    recs[i].local = cts_xcalloc(r->c->n_syms, sizeof(tsm_handle));
    recs[i].unbound_sym = -1;
    ts[i] = st->body.items[i].flag;
    args[i] = &recs[i];
  }
  cts__on_threads(r, n, ts, record_job, args);
  int running = r->m.thread, rc = 0;
  struct made_list made = {0};
  for (size_t i = 0; rc == 0 && i < n; i++) {
    size_t at = 0;
    cts_model_set_thread(&r->m, ts[i]);
    rc = replay_block(r, &recs[i], &st->body.items[i].body, &at, &made);
  }
  for (size_t i = 0; rc == 0 && i < made.n; i++) {
    r->cur = made.v[i].st;
    if (r->m.res[made.v[i].id].valid) rc = cts__check_made_values(r, made.v[i].st, made.v[i].id);
  }
  free(made.v);
  r->cur = st;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    cts_model_set_thread(&r->m, ts[i]);
    cts__on_thread(r, ts[i], check_thread_job, &rc);
  }
  cts_model_set_thread(&r->m, running);
  if (rc == 0) rc = cts__check_state(r);
  for (size_t i = 0; i < n; i++) {
    free(recs[i].v);
    free(recs[i].local);
  }
  free(recs);
  free(ts);
  free(args);
  return rc;
}

/* ---- expectations ------------------------------------------------------------ */

/* The model must agree with the case first: otherwise the case is wrong. */
static int model_agrees(struct cts_run *r, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int model_agrees(struct cts_run *r, int ok, const char *fmt, ...) {
  if (ok) return 0;
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return cts__report(r, CTS_ERROR, "the case contradicts the spec model: %s", detail);
}

static int expect_stats(struct cts_run *r, const struct cts_stmt *st) {
  static const char *const names[CTS_N_STATS] = {
      "created_in", "created_outside", "disposed_in", "disposed_outside",
      "attached",   "detached",        "live"};
  int64_t model[CTS_N_STATS];
  cts_model_stats(&r->m, r->m.thread, st->flag, model);
  for (int i = 0; i < CTS_N_STATS; i++)
    if ((st->stats_mask & (1u << i)) &&
        model_agrees(r, model[i] == st->stats[i], "%s is %lld in the model", names[i],
                     (long long)model[i]))
      return -1;
  return cts__check_thread(r);
}

static int exec_expect(struct cts_run *r, const struct cts_stmt *st) {
  int x = CTS_NONE, y = CTS_NONE;
  if (operand(r, st->a, &x) || operand(r, st->b, &y)) return -1;
  if (x == CTS_BOGUS || y == CTS_BOGUS)
    return cts__report(r, CTS_ERROR, "'bogus' can only be an argument of an action");
  char buf[200];
  struct cts_model *m = &r->m;
  switch (st->kind) {
    case CTS_EXPECT_OWNER: {
      int holder = cts_model_holder(m, x);
      if (model_agrees(r, holder == y, "the model's owner is %s",
                       cts__describe_mgr(r, holder, buf, sizeof buf)))
        return -1;
      return cts__check_res(r, x);
    }
    case CTS_EXPECT_LENDER: {
      int lender = cts_model_lender(m, x);
      if (model_agrees(r, lender == y, "the model's lender is %s",
                       cts__describe_mgr(r, lender, buf, sizeof buf)))
        return -1;
      return cts__check_res(r, x);
    }
    case CTS_EXPECT_BORROWED:
      if (model_agrees(r, cts_model_borrowed(m, x) == st->flag, "the model says %s",
                       cts_model_borrowed(m, x) ? "borrowed" : "not borrowed"))
        return -1;
      return cts__check_res(r, x);
    case CTS_EXPECT_VALID:
      if (model_agrees(r, m->res[x].valid == st->flag, "the model says %s",
                       m->res[x].valid ? "live" : "released"))
        return -1;
      return cts__check_res(r, x);
    case CTS_EXPECT_COUNT:
      if (model_agrees(r, (int64_t)m->mgrs[x].held.n == st->count, "the model's count is %zu",
                       m->mgrs[x].held.n))
        return -1;
      return cts__check_mgr(r, x);
    case CTS_EXPECT_CHILDREN:
      if (model_agrees(r, (int64_t)m->mgrs[x].children.n == st->count,
                       "the model's child count is %zu", m->mgrs[x].children.n))
        return -1;
      return cts__check_mgr(r, x);
    case CTS_EXPECT_STATE: {
      if (r->c->syms[st->a].kind == CTS_SYM_GRAPH) {
        int released = m->graphs[x].released;
        if (model_agrees(r, released == (st->flag == CTS_STATE_RELEASED), "the model says %s",
                         released ? "released" : "open"))
          return -1;
        uint64_t bytes;
        return cts__check_graphs(r, &bytes);
      }
      if (r->c->syms[st->a].kind == CTS_SYM_SCOPE) {
        int disposed = m->scopes[x].disposed;
        if (model_agrees(r, disposed == (st->flag == CTS_STATE_DISPOSED), "the model says %s",
                         disposed ? "disposed" : "open"))
          return -1;
        return cts__check_scope(r, x);
      }
      const struct cts_mmgr *mg = &m->mgrs[x];
      int state = mg->state == CTS_M_CLOSED ? CTS_STATE_CLOSED
                  : mg->capped                ? CTS_STATE_CAPPED
                                              : CTS_STATE_OPEN;
      if (model_agrees(r, state == st->flag, "the model's state differs")) return -1;
      return cts__check_mgr(r, x);
    }
    case CTS_EXPECT_PARENT:
      if (model_agrees(r, m->mgrs[x].parent == y, "the model's parent is %s",
                       cts__describe_mgr(r, m->mgrs[x].parent, buf, sizeof buf)))
        return -1;
      return cts__check_mgr(r, x);
    case CTS_EXPECT_VALUES: {
      const struct cts_mres *mr = &m->res[x];
      if (model_agrees(r, mr->valid, "the tensor is released")) return -1;
      int64_t n = cts_model_elems(mr);
      if (model_agrees(r, (size_t)n == st->nvals, "%zu values for %lld elements", st->nvals,
                       (long long)n))
        return -1;
      const double *mv = cts_model_values(m, x);
      int approx = cts_model_approx(m, x);
      for (int64_t i = 0; i < n; i++) {
        double w = mr->dtype == TSM_F32 ? (double)(float)st->vals[i] : st->vals[i];
        if (model_agrees(r, cts__values_equal(w, mv[i], approx),
                         "element %lld is %.9g in the model", (long long)i, mv[i]))
          return -1;
      }
      return cts__check_tensor(r, x, st->vals, st->nvals, approx, "expected");
    }
    case CTS_EXPECT_SHAPE: {
      const struct cts_mres *mr = &m->res[x];
      int same = mr->valid && mr->ndim == st->ndim;
      for (int i = 0; same && i < st->ndim; i++) same = mr->shape[i] == st->shape[i];
      if (model_agrees(r, same, "the model's shape differs")) return -1;
      struct tsm_tensor_desc d;
      memset(&d, 0, sizeof d);
      int rc = r->a->tensor_desc(r->s, r->res[x].h, &d);
      if (rc) return cts__report(r, CTS_FAIL, "tensor_desc failed with %s", cts_err_name(rc));
      same = d.ndim == st->ndim;
      for (int i = 0; same && i < st->ndim; i++) same = d.shape[i] == st->shape[i];
      return same ? 0 : cts__report(r, CTS_FAIL, "shape differs (ndim %d observed)", d.ndim);
    }
    case CTS_EXPECT_BYTES:
      if (model_agrees(r, m->live_bytes == (uint64_t)st->count, "the model has %llu live bytes",
                       (unsigned long long)m->live_bytes))
        return -1;
      return cts__check_bytes(r);
    case CTS_EXPECT_SCOPE:
      if (model_agrees(r, m->res[x].scope == y, "the model's scope is %s",
                       cts__describe_scope(r, m->res[x].scope, buf, sizeof buf)))
        return -1;
      return cts__check_res(r, x);
    case CTS_EXPECT_CURRENT: {
      int cur = m->threads[m->thread].current;
      if (model_agrees(r, cur == y, "the model's current scope is %s",
                       cts__describe_scope(r, cur, buf, sizeof buf)))
        return -1;
      return cts__check_thread(r);
    }
    case CTS_EXPECT_MEMBERS:
      if (model_agrees(r, (int64_t)m->scopes[x].members.n == st->count,
                       "the model's member count is %zu", m->scopes[x].members.n))
        return -1;
      return cts__check_scope(r, x);
    case CTS_EXPECT_OUTER:
      if (model_agrees(r, m->scopes[x].outer == y, "the model's outer scope is %s",
                       cts__describe_scope(r, m->scopes[x].outer, buf, sizeof buf)))
        return -1;
      return cts__check_scope(r, x);
    case CTS_EXPECT_COMPOSITE:
      if (model_agrees(r, m->res[x].composite == y, "the model says otherwise")) return -1;
      return cts__check_res(r, x);
    case CTS_EXPECT_ABSENT: {
      int comp = CTS_NONE;
      int rc = cts_model_component(m, x, st->count, &comp);
      if (model_agrees(r, rc == 0 && comp == CTS_NONE, "the component is present in the model"))
        return -1;
      tsm_handle h = TSM_NONE;
      rc = r->a->composite_component(r->s, r->res[x].h, (int)st->count, &h);
      if (rc || h != TSM_NONE)
        return cts__report(r, CTS_FAIL, "composite_component gave %s and handle 0x%llx, "
                           "expected an absent component", cts_err_name(rc), (unsigned long long)h);
      return 0;
    }
    case CTS_EXPECT_STATS:
      return expect_stats(r, st);
    default:
      return cts__report(r, CTS_ERROR, "internal: statement kind %d is no expectation", st->kind);
  }
}

static int exec_block(struct cts_run *r, const struct cts_block *b) {
  for (size_t i = 0; i < b->n; i++) {
    const struct cts_stmt *st = &b->items[i];
    r->cur = st;
    int rc = 0;
    switch (st->kind) {
      case CTS_REPEAT:
        for (int64_t k = 0; rc == 0 && k < st->count; k++) rc = exec_block(r, &st->body);
        break;
      case CTS_THREAD: rc = exec_thread(r, st); break;
      case CTS_PARALLEL: rc = exec_parallel(r, st); break;
      case CTS_WRAPPED: rc = exec_wrapped(r, st); break;
      case CTS_RESULT: rc = operand(r, st->a, &r->wrap->result); break;
      case CTS_EXPECT_ERROR:
        if (st->inner->kind >= CTS_DL_EXPORT && st->inner->kind <= CTS_DL_DROP)
          rc = cts__exec_dlpack(r, st->inner, st->err);
        else if (st->inner->kind >= CTS_G_NEW && st->inner->kind <= CTS_G_RELEASE)
          rc = cts__exec_graph(r, st->inner, st->err);
        else
          rc = exec_action(r, st->inner, st->err);
        break;
      case CTS_DL_EXPORT: case CTS_DL_MAKE: case CTS_DL_IMPORT: case CTS_DL_DROP:
        rc = cts__exec_dlpack(r, st, 0);
        break;
      case CTS_EXPECT_DELETED: rc = cts__expect_deleted(r, st); break;
      case CTS_G_NEW: case CTS_G_LEAF: case CTS_G_EXTERNAL: case CTS_G_OP: case CTS_G_FLAG:
      case CTS_G_EXPAND: case CTS_G_COMPUTE: case CTS_G_RECOMPUTE: case CTS_G_RELEASE:
        rc = cts__exec_graph(r, st, 0);
        break;
      case CTS_EXPECT_NODE: case CTS_EXPECT_PLANNED: rc = cts__expect_graph(r, st); break;
      default:
        rc = st->kind >= CTS_FIRST_EXPECT ? exec_expect(r, st) : exec_action(r, st, 0);
    }
    if (rc) return -1;
  }
  return 0;
}

int cts__injected(struct cts_run *r) {
  r->injected = 1;
  cts__check_state(r);
  return -1;
}

/* One run of the case on a fresh session; arm > 0 fails that allocation. *fired: the
 * armed failure happened. */
static int run_once(const struct cts_case *c, const struct tsm_adapter *a, int device_index,
                    struct cts_buf *msg, uint64_t arm, int *fired) {
  struct cts_run r;
  memset(&r, 0, sizeof r);
  r.c = c;
  r.a = a;
  r.msg = msg;
  r.status = CTS_PASS;
  r.fault = arm > 0;
  r.observe_scopes = (c->families & TSM_CAP_SCOPES) != 0;
  r.observe_links = (c->families & (TSM_CAP_SCOPES | TSM_CAP_COMPOSITES)) != 0;
  const struct tsm_device *devs = NULL;
  if (a->device_list(&devs) > device_index && devs[device_index].name)
    r.m.cuda_session = r.cuda_session = !strncmp(devs[device_index].name, "cuda", 4);
  const char *missing = cts_adapter_missing_slot(a, c->families);
  if (missing) {
    cts__report(&r, CTS_ERROR, "adapter declares the case's families but its '%s' slot is NULL",
                missing);
    return r.status;
  }
  int rc = a->session_open(device_index, &r.s);
  if (rc) {
    cts__report(&r, CTS_FAIL, "session_open(%d) failed with %s", device_index, cts_err_name(rc));
    return r.status;
  }
  int cuda = r.m.cuda_session;
  cts_model_init(&r.m);
  r.m.cuda_session = cuda;
  r.sym_obj = cts_xmalloc(c->n_syms * sizeof(int));
  for (size_t i = 0; i < c->n_syms; i++) r.sym_obj[i] = -1;
  tsm_handle root = TSM_NONE;
  rc = a->mgr_root(r.s, &root);
  if (rc || root == TSM_NONE) {
    cts__report(&r, CTS_FAIL, "mgr_root failed with %s (MGR.ROOT.1)", cts_err_name(rc));
  } else {
    cts__remember(&r.mgr, &r.mgr_cap, 0, root, CTS_SYM_ROOT, 0);
    r.sym_obj[CTS_SYM_ROOT] = 0;
    uint64_t left = 0;
    if (arm) a->debug_alloc_fail(r.s, arm, &left);
    if (cts__check_state(&r) == 0) exec_block(&r, &c->body);
    if (arm) {
      a->debug_alloc_fail(r.s, TSM_ALLOC_QUERY, &left);
      *fired = left == 0;
      a->debug_alloc_fail(r.s, 0, &left); /* nothing fails while the session closes */
      r.cur = NULL;
      if (*fired && !r.injected)
        cts__report(&r, CTS_FAIL, "allocation %llu failed but no call reported ENOMEM "
                    "(ERR.NOMEM.1)", (unsigned long long)arm);
    }
  }
  cts__stop_workers(&r);
  cts__dlpack_before_close(&r);
  a->session_close(r.s);
  cts__dlpack_after_close(&r);
  cts__graph_free(&r);
  cts_model_free(&r.m);
  free(r.sym_obj);
  free(r.mgr);
  free(r.res);
  free(r.scope);
  return r.status;
}

int cts_exec_case(const struct cts_case *c, const struct tsm_adapter *a, int device_index,
                  struct cts_buf *msg, uint64_t fail_max) {
  int fired = 0;
  if (!fail_max) return run_once(c, a, device_index, msg, 0, &fired);
  for (uint64_t k = 1; k <= fail_max; k++) {
    struct cts_buf one = {0};
    fired = 0;
    int status = run_once(c, a, device_index, &one, k, &fired);
    if (status != CTS_PASS) {
      cts_buf_printf(msg, "with allocation %llu failing: %s", (unsigned long long)k,
                     one.buf ? one.buf : "");
      cts_buf_free(&one);
      return status;
    }
    cts_buf_free(&one);
    if (!fired) {
      cts_buf_printf(msg, "every one of its %llu allocations failed in turn, cleanly",
                     (unsigned long long)(k - 1));
      return CTS_PASS;
    }
  }
  cts_buf_printf(msg, "the first %llu allocations failed in turn, cleanly (the cap)",
                 (unsigned long long)fail_max);
  return CTS_PASS;
}
