/*
 * harness/src/exec_managers.c: the managers family and the scopes-and-composites family
 * (spec/managers.md, spec/scopes.md, spec/composites.md): each generic action's model
 * function and adapter call (their rows in stmt_table.h), the wrapped block
 * (SCOPE.WRAP.1), and the two families' hooks: the scopes observed after every step, and
 * what pack, list and component made bound and checked. Their expectations are in
 * exec_expect.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "opsem.h"

/* ---- managers -------------------------------------------------------------------- */

int cts__model_create(struct cts_model *m, const struct cts_stmt *st,
                      const struct cts_operands *o, int *made) {
  const struct cts_literal *lit = &st->u.literal;
  int64_t count;
  double *v = cts__literal_values(lit, &count);
  int rc = cts_model_create(m, o->a, lit->dtype, lit->ndim, lit->shape, v, made);
  free(v);
  return rc;
}

int cts__adapter_create(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                        tsm_handle *made) {
  const struct cts_literal *lit = &st->u.literal;
  struct tsm_tensor_desc d;
  memset(&d, 0, sizeof d);
  d.dtype = lit->dtype;
  d.ndim = lit->ndim;
  memcpy(d.shape, lit->shape, sizeof d.shape);
  int64_t count;
  double *v = cts__literal_values(lit, &count);
  void *data = cts_xmalloc(count ? (size_t)count * cts_opsem_dtype_size(lit->dtype) : 1);
  cts_opsem_encode(lit->dtype, v, count, data);
  int rc = r->a->tensor_new(r->s, h->a, &d, lit->fill == CTS_ZEROS ? NULL : data, made);
  free(data);
  free(v);
  return rc;
}

int cts__model_op(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,
                  int *made) {
  return cts_model_op(m, st->u.op.op, o->a, o->b, st->u.op.ndim, st->u.op.shape, o->out, made);
}

int cts__adapter_op(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                    tsm_handle *made) {
  tsm_handle in[2] = {h->a, h->b};
  int reshape = st->u.op.op == TSM_OP_RESHAPE;
  return r->a->op(r->s, st->u.op.op, in, st->b < 0 ? 1 : 2, reshape ? st->u.op.shape : NULL,
                  reshape ? st->u.op.ndim : 0, h->out, made);
}

/* The rows whose two sides are one call each: the model function, then the adapter call. */
#define CTS__PAIR(name, model_expr, adapter_expr)                                             \
  int cts__model_##name(struct cts_model *m, const struct cts_stmt *st,                      \
                        const struct cts_operands *o, int *made) {                           \
    (void)st, (void)o, (void)made;                                                           \
    return model_expr;                                                                       \
  }                                                                                          \
  int cts__adapter_##name(struct cts_run *r, const struct cts_stmt *st,                      \
                          const struct cts_handles *h, tsm_handle *made) {                   \
    (void)st, (void)h, (void)made;                                                           \
    return adapter_expr;                                                                     \
  }

CTS__PAIR(sub, cts_model_new_sub(m, o->a, made), r->a->mgr_new_sub(r->s, h->a, made))
CTS__PAIR(sub_of, cts_model_sub_of(m, o->a, made), r->a->mgr_sub_of(r->s, h->a, made))

CTS__PAIR(attach, cts_model_attach(m, o->a, o->b), r->a->res_attach(r->s, h->a, h->b))
CTS__PAIR(detach, cts_model_detach(m, o->a), r->a->res_detach(r->s, h->a))
CTS__PAIR(borrow, cts_model_borrow(m, o->a, o->b), r->a->res_temp_attach(r->s, h->a, h->b))
CTS__PAIR(ret, cts_model_ret(m, o->a, o->b), r->a->res_ret(r->s, h->b, h->a))
CTS__PAIR(release, cts_model_release(m, o->a), r->a->res_release(r->s, h->a))
CTS__PAIR(close, cts_model_close(m, o->a), r->a->mgr_close(r->s, h->a))
CTS__PAIR(cap, cts_model_cap(m, o->a), r->a->mgr_cap(r->s, h->a))
CTS__PAIR(dispose, cts_model_scope_dispose(m, o->a), r->a->scope_dispose(r->s, h->a))
CTS__PAIR(move_outer, cts_model_scope_move_outer(m, o->b, o->a),
          r->a->scope_move_to_outer(r->s, h->b, h->a))
CTS__PAIR(move_other, cts_model_scope_move_other(m, o->b, o->a, o->out),
          r->a->scope_move_to_other(r->s, h->b, h->a, h->out))
CTS__PAIR(scope_detach, cts_model_scope_detach(m, o->b, o->a),
          r->a->scope_detach(r->s, h->b, h->a))
CTS__PAIR(scope_attach, cts_model_scope_attach(m, o->b, o->a),
          r->a->scope_attach(r->s, h->b, h->a))
CTS__PAIR(dispose_all, cts_model_scope_dispose_all(m, o->a, o->list, o->n_list),
          r->a->scope_dispose_all(r->s, h->a, h->list, (int)st->n_list))
CTS__PAIR(handover, cts_model_scope_handover(m, o->a), r->a->scope_handover(r->s, h->a))
CTS__PAIR(scope_open, cts_model_scope_open(m, made), r->a->scope_open(r->s, made))
CTS__PAIR(pack, cts_model_pack(m, o->list, o->n_list, st->u.pack.sorted, made),
          r->a->composite_pack(r->s, h->list, (int)st->n_list, st->u.pack.sorted, made))
CTS__PAIR(list, cts_model_list(m, o->list, o->n_list, made),
          r->a->composite_list(r->s, h->list, (int)st->n_list, made))
CTS__PAIR(component, cts_model_component(m, o->a, st->u.component.index, made),
          r->a->composite_component(r->s, h->a, (int)st->u.component.index, made))
#undef CTS__PAIR

int cts__model_dump(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,
                    int *made) {
  (void)m, (void)st, (void)o, (void)made;
  return 0;
}

int cts__adapter_dump(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                      tsm_handle *made) {
  (void)made;
  char *buf = cts_xcalloc(1, 65536);
  int rc = r->a->mgr_dump(r->s, h->a, buf, 65536);
  printf("--- dump at %s:%d ---\n%s\n", r->c->path, st->line, buf);
  free(buf);
  return rc;
}

/* ---- scopes: wrapped blocks -------------------------------------------------------- */

/* A wrapped block in progress (SCOPE.WRAP.1). */
struct cts_wrap {
  const struct cts_stmt *st;
  struct cts_wrap *outer;
  struct cts_run *r;
  int entered;     /* the adapter called the function */
  int scope;       /* the model's scope for the block */
  int result;      /* model id of `result X` */
};

/* The scopes family's state: the innermost wrapped block running, or NULL. */
struct scopes_state {
  struct cts_wrap *wrap;
};

static struct scopes_state *scopes_of(struct cts_run *r) { return r->family[CTS_FAMILY_SCOPES]; }

static int wrapped_body(void *arg, tsm_handle *result) {
  struct cts_wrap *w = arg;
  struct cts_run *r = w->r;
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
  if (cts__check_state(r) || cts__exec_block(r, &w->st->body)) return TSM_EINVAL;
  *result = cts__res_handle(r, w->result);
  return 0;
}

int cts__exec_wrapped(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  struct scopes_state *ss = scopes_of(r);
  struct cts_wrap w = {st, ss->wrap, r, 0, 0, CTS_NONE};
  ss->wrap = &w;
  tsm_handle out = TSM_NONE;
  int rc = r->a->scope_wrapped(r->s, wrapped_body, &w, &out);
  ss->wrap = w.outer;
  r->cur = st;
  if (r->status != CTS_PASS) return -1;
  if (!w.entered)
    return cts__report(r, CTS_FAIL, "scope_wrapped returned %s without calling the function",
                       cts_err_name(rc));
  if (rc) return cts__report(r, CTS_FAIL, "scope_wrapped returned %s", cts_err_name(rc));
  cts_model_scope_move_outer(&r->m, w.scope, w.result);
  cts_model_scope_dispose(&r->m, w.scope);
  if (out != cts__res_handle(r, w.result))
    return cts__report(r, CTS_FAIL, "scope_wrapped gave 0x%llx, not the block's result",
                       (unsigned long long)out);
  r->sym_obj[st->dst] = w.result;
  return cts__check_state(r);
}

int cts__exec_result(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  return cts__operand(r, st->a, &scopes_of(r)->wrap->result);
}

/* What the judge observes follows what the case uses: res_links exists with scopes or
 * composites, scope_info and the thread's statistics with scopes. */
static void *scopes_new(struct cts_run *r) {
  r->observe_scopes = (r->c->families & TSM_CAP_SCOPES) != 0;
  r->observe_links = (r->c->families & (TSM_CAP_SCOPES | TSM_CAP_COMPOSITES)) != 0;
  return cts_xcalloc(1, sizeof(struct scopes_state));
}

/* After every step: open or just-disposed scopes, and the running thread's current scope
 * and statistics. */
static int observe_scopes(struct cts_run *r) {
  if (!r->observe_scopes) return 0;
  for (size_t sc = 0; sc < r->m.n_scopes; sc++)
    if (!r->m.scopes[sc].disposed || r->m.scopes[sc].dirty)
      if (cts__check_scope(r, (int)sc)) return -1;
  return cts__check_thread(r);
}

/* ---- composites: what pack, list and component made ----------------------------- */

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

/* A component is an existing resource: the adapter must hand back its handle. */
static int bind_component(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h) {
  if (id == CTS_NONE)
    return cts__report(r, CTS_ERROR, "that component is absent: write `expect absent`");
  if (h != r->res[id].h)
    return cts__report(r, CTS_FAIL, "composite_component returned 0x%llx, not the component's "
                       "handle 0x%llx", (unsigned long long)h, (unsigned long long)r->res[id].h);
  r->sym_obj[st->dst] = id;
  return 0;
}

static int composite_bind_made(struct cts_run *r, const struct cts_stmt *st, int id,
                               tsm_handle h) {
  if (st->kind == CTS_COMPONENT) return bind_component(r, st, id, h);
  if (cts__bind_handle(r, st, id, h)) return -1;
  return learn_components(r, id, st->line);
}

/* A packed sequence's parts hold the elements of the tensors it was made from. */
static int composite_check_made(struct cts_run *r, const struct cts_stmt *st, int id) {
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

/* ---- the families ---------------------------------------------------------------- */

const struct cts_family cts_family_managers = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
const struct cts_family cts_family_scopes = {scopes_new, observe_scopes, NULL, NULL, NULL, free,
                                             composite_bind_made, composite_check_made};
