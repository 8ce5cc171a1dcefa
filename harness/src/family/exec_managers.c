/*
 * harness/src/family/exec_managers.c: the managers family (spec/managers.md) and the generic
 * actions of the scopes-and-composites family (spec/scopes.md, spec/composites.md):
 * each generic action's model function and adapter call (their rows in stmt_table.h).
 * The scopes family's own executors and hooks are in exec_scopes.c; the expectations of
 * both are in exec_expect.c.
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
  double *v = cts__literal_data(lit, &count);
  struct cts_mtype type = {lit->dtype, lit->ndim, lit->shape};
  int rc = cts_model_create(m, o->a, &type, v, made);
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
  double *v = cts__literal_data(lit, &count);
  void *data = NULL;
  if (v) {
    data = cts_xmalloc(count ? (size_t)count * cts_opsem_dtype_size(lit->dtype) : 1);
    cts_opsem_encode(lit->dtype, v, count, data);
  }
  int rc = r->a->tensor_new(r->s, h->a, &d, data, made);
  free(data);
  free(v);
  return rc;
}

int cts__model_op(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,
                  int *made) {
  struct cts_mop call = {st->u.op.op, o->a, o->b, st->u.op.ndim, st->u.op.shape};
  return cts_model_op(m, &call, o->out, made);
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
CTS__PAIR(adopt, cts_model_adopt(m, o->a, made), r->a->res_adopt(r->s, h->a, made))
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

/* The number after the word `key` in line (up to end), or -1 when it has none. */
static long long dump_count(const char *line, const char *end, const char *key) {
  size_t k = strlen(key);
  for (const char *at = line; (at = strstr(at, key)) && at < end; at += k)
    if (at == line || at[-1] == ' ') /* the word, not the end of another */
      return at[k] >= '0' && at[k] <= '9' ? strtoll(at + k, NULL, 10) : -1;
  return -1;
}

/* The model's manager of handle mh, or CTS_NONE. */
static int mgr_of_handle(struct cts_run *r, tsm_handle mh) {
  for (size_t g = 0; g < r->m.n_mgrs; g++)
    if (g < r->mgr_cap && r->mgr[g].h == mh) return (int)g;
  return CTS_NONE;
}

/* What a dump of a manager is checked against (MGR.DUMP.1): want[x], manager x belongs
 * in it; seen[x], a line listed it. Both n_mgrs entries, owned. */
struct dump_marks {
  char *want, *seen;
};

/* Marks g and its open descendants, through the model's child lists. */
static void mark_subtree(const struct cts_model *m, int g, char *want) {
  size_t n = m->n_mgrs, top = 0;
  int *stack = cts_xmalloc((n ? n : 1) * sizeof *stack);
  stack[top++] = g;
  while (top) {
    int x = stack[--top];
    want[x] = 1;
    const struct cts_ids *kids = &m->mgrs[x].children;
    for (size_t k = 0; k < kids->n; k++) stack[top++] = kids->v[k];
  }
  free(stack);
}

/* One line of the dump, [line, end): a manager it lists must be wanted, listed once and
 * carry the model's live and child counts. 0, or -1 after reporting. */
static int check_dump_line(struct cts_run *r, struct dump_marks *marks, const char *line,
                           const char *end) {
  const char *at = strstr(line, "mgr 0x");
  if (!at || at >= end) return 0;
  char name[160];
  int x = mgr_of_handle(r, (tsm_handle)strtoull(at + 6, NULL, 16));
  long long live = dump_count(line, end, "live="), kids = dump_count(line, end, "children=");
  if (x == CTS_NONE || !marks->want[x])
    return cts__report(r, CTS_FAIL, "the dump lists %.*s, which is not an open manager of "
                       "the dumped subtree (MGR.DUMP.1)", (int)(end - line), line);
  if (marks->seen[x]++)
    return cts__report(r, CTS_FAIL, "the dump lists manager %s twice (MGR.DUMP.1)",
                       cts__describe_mgr(r, x, name, sizeof name));
  if (live != (long long)r->m.mgrs[x].held.n || kids != (long long)r->m.mgrs[x].children.n)
    return cts__report(r, CTS_FAIL, "the dump gives manager %s live=%lld children=%lld, the "
                       "model live=%zu children=%zu (MGR.DUMP.1; -1: no such word)",
                       cts__describe_mgr(r, x, name, sizeof name), live, kids,
                       r->m.mgrs[x].held.n, r->m.mgrs[x].children.n);
  return 0;
}

/* MGR.DUMP.1: the dump of open manager g lists g and its open descendants, each once,
 * with the model's live and child counts. 0, or -1 after reporting. */
static int check_dump(struct cts_run *r, int g, const char *dump) {
  size_t n = r->m.n_mgrs;
  struct dump_marks marks = {cts_xcalloc(n ? n : 1, 1), cts_xcalloc(n ? n : 1, 1)};
  mark_subtree(&r->m, g, marks.want);
  char name[160];
  int rc = 0;
  for (const char *line = dump; *line && !rc;) {
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    rc = check_dump_line(r, &marks, line, end);
    line = *end ? end + 1 : end;
  }
  for (size_t i = 0; i < n && !rc; i++)
    if (marks.want[i] && !marks.seen[i])
      rc = cts__report(r, CTS_FAIL, "the dump leaves out manager %s (MGR.DUMP.1)",
                       cts__describe_mgr(r, (int)i, name, sizeof name));
  free(marks.want);
  free(marks.seen);
  return rc;
}

int cts__adapter_dump(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                      tsm_handle *made) {
  (void)made;
  char *buf = cts_xcalloc(1, 65536);
  int rc = r->a->mgr_dump(r->s, h->a, buf, 65536);
  printf("--- dump at %s:%d ---\n%s\n", r->c->path, st->line, buf);
  int g = rc ? CTS_NONE : mgr_of_handle(r, h->a);
  if (g != CTS_NONE && r->m.mgrs[g].state == CTS_M_OPEN && check_dump(r, g, buf))
    rc = -1;
  free(buf);
  return rc;
}

/* ---- the family ----------------------------------------------------------------- */

const struct cts_family cts_family_managers = {0};
