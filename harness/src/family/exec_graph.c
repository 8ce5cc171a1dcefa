/*
 * harness/src/family/exec_graph.c: the graph statements (spec/graphs.md). `compute` is the
 * differential check: the graph runs unplanned (a buffer per tensor) and planned (the
 * implementation's reuse); every tensor of the unplanned run must match the model, the
 * placement of the planned run must respect the liveness rules, and every guaranteed
 * tensor of the planned run must equal the unplanned one byte for byte.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"
#include "opsem.h"

/* The graphs family's state: what the judge knows of each model graph and graph node,
 * and each node's bytes after the last unplanned compute. */
struct graph_state {
  struct cts_objmap graph, node; /* each model graph's and graph node's handle */
  unsigned char **unplanned;
  size_t n_unplanned;
  unsigned char *written; /* per model node: a leaf the judge wrote (write_leaves) */
  size_t written_cap;
  struct cts_buf out3;    /* GRAPH.OUT.3's variant per node read as unspecified */
};

static struct graph_state *gs_of(struct cts_run *r) { return r->family[CTS_FAMILY_GRAPHS]; }

/* ---- handles ------------------------------------------------------------------ */

static tsm_handle graph_h(struct cts_run *r, int g) {
  return g == CTS_BOGUS ? CTS_BOGUS_HANDLE : gs_of(r)->graph.v[g].h;
}

static tsm_handle node_h(struct cts_run *r, int x) {
  return x == CTS_BOGUS ? CTS_BOGUS_HANDLE : x == CTS_NONE ? TSM_NONE : gs_of(r)->node.v[x].h;
}

static const char *node_name(struct cts_run *r, int x, char *buf, size_t n) {
  int sym = x < (int)gs_of(r)->node.cap ? gs_of(r)->node.v[x].sym : -1;
  snprintf(buf, n, "node %s (made at line %d)", sym >= 0 ? r->c->syms[sym].name : "?",
           x < (int)gs_of(r)->node.cap ? gs_of(r)->node.v[x].line : 0);
  return buf;
}

/* What a build statement made: up to three objects (an svd's results), each its model
 * id and the adapter's handle. */
struct built {
  int id[3];
  tsm_handle h[3];
};

/* Binds the statement's i-th result in map to the name the case gave it: one of an svd's
 * three names, or the statement's destination. */
static int bind(struct cts_run *r, struct cts_objmap *map, const struct cts_stmt *st,
                const struct built *made, size_t i) {
  tsm_handle h = made->h[i];
  int sym = st->n_list ? st->list[i] : st->dst;
  if (h == TSM_NONE || h == CTS_BOGUS_HANDLE)
    return cts__report(r, CTS_FAIL, "adapter returned handle 0x%llx (ABI.HANDLE.1)",
                       (unsigned long long)h);
  cts__remember_at(r, (struct cts_obj_slot){&map->v, &map->cap, (size_t)made->id[i]},
                   (struct cts_objinfo){h, sym, st->line});
  r->sym_obj[sym] = made->id[i];
  return 0;
}

/* ---- element bytes ---------------------------------------------------------------- */

static size_t node_bytes(const struct cts_mgnode *n) {
  return (size_t)cts_model_graph_elems(n) * cts_opsem_dtype_size(n->dtype);
}

/* Element i of bytes p holding elements of dtype. */
static double elem_at(int dtype, const unsigned char *p, int64_t i) {
  return cts_opsem_read(dtype, p + (size_t)i * cts_opsem_dtype_size(dtype));
}

/* Values derived from an svd, or f32 reductions, compare to a tolerance (GRAPH.OP.1). */
static int node_equal(const struct cts_mgnode *n, double want, double got) {
  if (n->svd_taint) return cts_opsem_close(want, got, CTS_OPSEM_SVD_TOL);
  if (cts_opsem_approx(n->op, n->dtype)) return cts_opsem_close(want, got, CTS_OPSEM_REL_TOL);
  return want == got;
}

static unsigned char *read_node(struct cts_run *r, int x, int *rc) {
  size_t bytes = node_bytes(&r->m.gnodes[x]);
  unsigned char *buf = cts_xmalloc(bytes ? bytes : 1);
  *rc = r->a->graph_read(r->s, node_h(r, x), buf, bytes);
  return buf;
}

/* ---- building --------------------------------------------------------------------- */

static int adapter_build(struct cts_run *r, const struct cts_stmt *st, int a, int b,
                         tsm_handle *h) {
  const struct tsm_adapter *ad = r->a;
  switch (st->kind) {
    case CTS_G_NEW: return ad->graph_new(r->s, cts__mgr_handle(r, a), &h[0]);
    case CTS_G_LEAF: {
      struct tsm_tensor_desc d;
      memset(&d, 0, sizeof d);
      d.dtype = st->u.literal.dtype;
      d.ndim = st->u.literal.ndim;
      memcpy(d.shape, st->u.literal.shape, sizeof d.shape);
      return ad->graph_leaf(r->s, graph_h(r, a), &d, &h[0]);
    }
    case CTS_G_EXTERNAL:
      return ad->graph_external(r->s, graph_h(r, a), cts__res_handle(r, b), &h[0]);
    case CTS_G_OP: {
      int g = a == CTS_BOGUS ? CTS_BOGUS : r->m.gnodes[a].graph;
      tsm_handle srcs[2] = {node_h(r, a), node_h(r, b)};
      int op = st->u.op.op, reshape = op == TSM_OP_RESHAPE;
      return ad->graph_op(r->s, graph_h(r, g), op, srcs, b == CTS_NONE ? 1 : 2,
                          reshape ? st->u.op.shape : NULL, reshape ? st->u.op.ndim : 0, h,
                          op == TSM_OP_SVD ? 3 : 1);
    }
    case CTS_G_FLAG: return ad->graph_flag(r->s, node_h(r, a), st->u.graph_flags.bits);
    case CTS_G_EXPAND: return ad->graph_expand(r->s, graph_h(r, a), node_h(r, b));
    default: return ad->graph_release(r->s, graph_h(r, a)); /* CTS_G_RELEASE */
  }
}

static int model_build(struct cts_run *r, const struct cts_stmt *st, int a, int b, int *made) {
  struct cts_model *m = &r->m;
  switch (st->kind) {
    case CTS_G_NEW: return cts_model_graph_new(m, a, &made[0]);
    case CTS_G_LEAF: {
      const struct cts_literal *lit = &st->u.literal;
      int64_t n;
      double *init = cts__literal_data(lit, &n);
      if (init) cts_opsem_round_all(lit->dtype, init, init, n);
      struct cts_mtype type = {lit->dtype, lit->ndim, lit->shape};
      return cts_model_graph_leaf(m, a, &type, init, &made[0]);
    }
    case CTS_G_EXTERNAL: return cts_model_graph_external(m, a, b, &made[0]);
    case CTS_G_OP: {
      struct cts_mop call = {st->u.op.op, a, b, st->u.op.ndim, st->u.op.shape};
      return cts_model_graph_op(m, &call, made);
    }
    case CTS_G_FLAG: return cts_model_graph_flag(m, a, st->u.graph_flags.bits);
    case CTS_G_EXPAND: return cts_model_graph_expand(m, a, b);
    default: return cts_model_graph_release(m, a);
  }
}

/* Binds what a statement that succeeded made: a graph, or its nodes (an svd's three). */
static int bind_built(struct cts_run *r, const struct cts_stmt *st, const struct built *made) {
  struct graph_state *gs = gs_of(r);
  if (st->kind == CTS_G_NEW) return bind(r, &gs->graph, st, made, 0);
  if (st->kind != CTS_G_LEAF && st->kind != CTS_G_EXTERNAL && st->kind != CTS_G_OP) return 0;
  for (size_t i = 0; i < (st->n_list ? st->n_list : 1); i++)
    if (bind(r, &gs->node, st, made, i)) return -1;
  return 0;
}

int cts__exec_graph_build(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  int a, b;
  if (cts__operand(r, st->a, &a) || cts__operand(r, st->b, &b)) return -1;
  struct built made = {{CTS_NONE, CTS_NONE, CTS_NONE}, {0, 0, 0}};
  int adapter_rc = adapter_build(r, st, a, b, made.h);
  if (r->fault && adapter_rc == TSM_ENOMEM) return cts__injected(r);
  int model_rc = model_build(r, st, a, b, made.id);
  if (cts__judge_codes(r, model_rc, adapter_rc, &expected_err)) return -1;
  if (!expected_err && bind_built(r, st, &made)) return -1;
  return cts__check_state(r);
}

/* ---- compute ------------------------------------------------------------------------ */

static int write_leaves(struct cts_run *r, int g, int *adapter_rc) {
  const struct cts_ids *order = &r->m.graphs[g].order;
  for (size_t i = 0; i < order->n; i++) {
    const struct cts_mgnode *n = &r->m.gnodes[order->v[i]];
    if (n->kind != CTS_GN_LEAF) continue;
    size_t bytes = node_bytes(n);
    unsigned char *buf = cts_xcalloc(bytes ? bytes : 1, 1); /* zeros: no init (all 0 bits) */
    if (n->init) cts_opsem_encode(n->dtype, n->init, cts_model_graph_elems(n), buf);
    *adapter_rc = r->a->graph_write(r->s, node_h(r, order->v[i]), buf, bytes);
    free(buf);
    if (*adapter_rc) return -1;
    struct graph_state *gs = gs_of(r);
    cts_grow((void **)&gs->written, &gs->written_cap, (size_t)order->v[i] + 1, 1);
    gs->written[order->v[i]] = 1;
  }
  return 0;
}

/* `recompute G unwritten` reads the leaves as the judge last wrote them: every leaf of
 * g must have been written (what a leaf holds before its first write is not specified)
 * and be PARAM or OUTPUT (another one's memory the last compute may have reused,
 * GRAPH.FLAG.2). 0, or -1 after saying why the statement cannot run. */
static int leaves_written(struct cts_run *r, int g) {
  const struct cts_ids *order = &r->m.graphs[g].order;
  const struct graph_state *gs = gs_of(r);
  char name[200];
  for (size_t i = 0; i < order->n; i++) {
    int x = order->v[i];
    const struct cts_mgnode *n = &r->m.gnodes[x];
    if (n->kind != CTS_GN_LEAF) continue;
    if ((size_t)x >= gs->written_cap || !gs->written[x])
      return cts__cannot_run(r, "recompute unwritten: leaf %s was never written (a compute or "
                             "recompute writes every leaf)", node_name(r, x, name, sizeof name));
    if (!(n->flags & (TSM_GRAPH_PARAM | TSM_GRAPH_OUTPUT)))
      return cts__cannot_run(r, "recompute unwritten: leaf %s is neither PARAM nor OUTPUT, so "
                             "a compute may have reused its memory (GRAPH.FLAG.2)",
                             node_name(r, x, name, sizeof name));
  }
  return 0;
}

struct factors {
  struct cts_run *r;
  unsigned char **bytes; /* per node, n of them; NULL entries: none */
  size_t n;
  double *scratch;
  int missing;           /* an svd had no factors: values derived from it are not judged */
};

static const double *factor_of(void *ctx, int x) {
  struct factors *f = ctx;
  const struct cts_mgnode *n = &f->r->m.gnodes[x];
  int64_t e = cts_model_graph_elems(n);
  free(f->scratch);
  f->scratch = cts_xcalloc(e ? (size_t)e : 1, sizeof(double));
  if ((size_t)x >= f->n || !f->bytes[x]) {
    f->missing = 1;
    return f->scratch;
  }
  cts_opsem_decode(TSM_F32, f->bytes[x], e, f->scratch);
  return f->scratch;
}

/* GRAPH.OP.2: an svd the implementation computed is a valid one: S non-increasing
 * and non-negative, and U · diag(S) · Vt within 1e-4 of the input. */
static int check_svd(struct cts_run *r, int u, unsigned char **bytes) {
  const struct cts_mgnode *nu = &r->m.gnodes[u];
  const struct cts_mgnode *a = &r->m.gnodes[nu->src[0]];
  int64_t rows = a->shape[0], cols = a->shape[1], k = nu->shape[1];
  const unsigned char *U = bytes[u], *S = bytes[u + 1], *V = bytes[u + 2];
  double scale = 1.0;
  for (int64_t i = 0; i < rows * cols; i++) scale = fmax(scale, fabs(a->vals[i]));
  char name[200];
  for (int64_t i = 0; i < k; i++) {
    double s = elem_at(TSM_F32, S, i);
    if (s < 0 || (i && s > elem_at(TSM_F32, S, i - 1) * (1 + 1e-6) + 1e-6))
      return cts__report(r, CTS_FAIL, "%s: singular values are not non-increasing and "
                         "non-negative (GRAPH.OP.2)", node_name(r, u + 1, name, sizeof name));
  }
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      double s = 0;
      for (int64_t t = 0; t < k; t++)
        s += elem_at(TSM_F32, U, i * k + t) * elem_at(TSM_F32, S, t) * elem_at(TSM_F32, V, t * cols + j);
      if (fabs(s - a->vals[i * cols + j]) > 1e-4 * scale)
        return cts__report(r, CTS_FAIL, "%s: U·diag(S)·Vt differs from the input at (%lld, %lld): "
                           "%.9g, expected %.9g (GRAPH.OP.2)", node_name(r, u, name, sizeof name),
                           (long long)i, (long long)j, s, a->vals[i * cols + j]);
    }
  return 0;
}

/* -1 when got holds node x's model values (to node_equal's tolerances), else the index
 * of the first element that differs. */
static int64_t model_differs(struct cts_run *r, int x, const unsigned char *got) {
  const struct cts_mgnode *n = &r->m.gnodes[x];
  for (int64_t i = 0; i < cts_model_graph_elems(n); i++)
    if (!node_equal(n, n->vals[i], elem_at(n->dtype, got, i))) return i;
  return -1;
}

/* got must hold node x's model values; else Fail naming clause (what the value breaks). */
static int compare_model(struct cts_run *r, int x, const unsigned char *got, const char *run,
                         const char *clause) {
  const struct cts_mgnode *n = &r->m.gnodes[x];
  char name[200];
  int64_t i = model_differs(r, x, got);
  if (i < 0) return 0;
  return cts__report(r, CTS_FAIL, "%s, %s run: element %lld is %.9g, expected %.9g (%s)",
                     node_name(r, x, name, sizeof name), run, (long long)i,
                     elem_at(n->dtype, got, i), n->vals[i], clause);
}

/* The clause that makes node x's value guaranteed after a compute (what breaks when it
 * is lost): an external GRAPH.EXT.1, an OUTPUT tensor or view GRAPH.OUT.1 (both MUST),
 * else a PARAM one GRAPH.FLAG.2, else a sink GRAPH.SINK.1 (both TSM). */
static const char *guarantee_clause(struct cts_run *r, int x) {
  const struct cts_mgnode *root = &r->m.gnodes[cts_model_graph_root(&r->m, x)];
  if (root->kind == CTS_GN_EXTERNAL) return "GRAPH.EXT.1: an external is never written";
  if (root->flags & TSM_GRAPH_OUTPUT) return "GRAPH.OUT.1: an OUTPUT keeps its value";
  if (root->flags & TSM_GRAPH_PARAM) return "GRAPH.FLAG.2: a PARAM tensor keeps its value";
  return "GRAPH.SINK.1: a sink keeps its value";
}

/* Each node's own placement: placed or not, its root, its size. */
static int check_each_place(struct cts_run *r, const struct cts_ids *order,
                            struct tsm_graph_place *pl) {
  char an[200];
  for (size_t i = 0; i < order->n; i++) {
    int x = order->v[i];
    const struct cts_mgnode *nd = &r->m.gnodes[x];
    int e = r->a->graph_place(r->s, node_h(r, x), &pl[i]);
    int view = nd->kind == CTS_GN_OP && nd->op == TSM_OP_RESHAPE;
    int placed = !view && nd->kind != CTS_GN_EXTERNAL;
    node_name(r, x, an, sizeof an);
    if (e)
      return cts__report(r, CTS_FAIL, "graph_place(%s) failed with %s", an, cts_err_name(e));
    if (!pl[i].in_graph)
      return cts__report(r, CTS_FAIL, "%s is in the graph, graph_place says not (GRAPH.BUILD.1)", an);
    if (pl[i].placed != placed)
      return cts__report(r, CTS_FAIL, "%s: placed is %d, expected %d (%s)", an, pl[i].placed, placed,
                         view ? "GRAPH.VIEW.1: a view owns no memory"
                         : nd->kind == CTS_GN_EXTERNAL ? "GRAPH.EXT.1"
                         : nd->kind == CTS_GN_OP && nd->op == TSM_OP_TRANSPOSE
                             ? "GRAPH.OP.2: a transpose is a node of its own"
                             : "GRAPH.PLAN.3");
    if (view && pl[i].root != node_h(r, cts_model_graph_root(&r->m, x)))
      return cts__report(r, CTS_FAIL, "%s: reported root is not its source's root", an);
    if (placed && pl[i].nbytes < node_bytes(nd))
      return cts__report(r, CTS_FAIL, "%s: placed in %llu bytes, needs %zu", an,
                         (unsigned long long)pl[i].nbytes, node_bytes(nd));
  }
  return 0;
}

/* Two placed nodes of a graph (build order `order`) whose bytes overlap: x at offset xb
 * and y, after it in the order, at yb. */
struct overlap {
  const struct cts_ids *order;
  int x, y;
  uint64_t xb, yb;
};

/* GRAPH.INPLACE.2: y's operation may take a source over: add, sub or mul, or with
 * CTS_RELAX_ANY_OP any operation but a view. */
static int op_takes_over(const struct cts_mgnode *ny, unsigned relax) {
  if (ny->kind != CTS_GN_OP) return 0;
  if (relax & CTS_RELAX_ANY_OP) return ny->op != TSM_OP_RESHAPE;
  return ny->op == TSM_OP_ADD || ny->op == TSM_OP_SUB || ny->op == TSM_OP_MUL;
}

/* x may be taken over: never an OUTPUT, and a PARAM tensor only with CTS_RELAX_PARAM
 * (GRAPH.INPLACE.2, GRAPH.FLAG.2). */
static int source_given_up(const struct cts_mgnode *nx, unsigned relax) {
  uint32_t xflags = cts_model_graph_flags_as(nx, relax);
  return !(xflags & TSM_GRAPH_OUTPUT) &&
         (!(xflags & TSM_GRAPH_PARAM) || (relax & CTS_RELAX_PARAM));
}

/* A view of x is in the graph: x's bytes are read through it, so nothing takes x over. */
static int has_view(const struct cts_model *m, const struct cts_ids *order, int x) {
  for (size_t k = 0; k < order->n; k++) {
    const struct cts_mgnode *v = &m->gnodes[order->v[k]];
    if (v->kind == CTS_GN_OP && v->op == TSM_OP_RESHAPE && v->src[0] == x) return 1;
  }
  return 0;
}

/* GRAPH.INPLACE.1: y takes over x, at the same offset, at the step x is last read (y is
 * x's last reader; earlier consumers of x have run), with GRAPH.INPLACE.2 (add, sub or mul
 * only, no PARAM source) unless relax (enum cts_graph_relax) leaves it out. */
static int takes_over(struct cts_run *r, const struct overlap *o, unsigned relax) {
  const struct cts_mgnode *nx = &r->m.gnodes[o->x], *ny = &r->m.gnodes[o->y];
  int64_t xs, xe, ys, ye;
  cts_model_graph_live_as(&r->m, o->x, relax, &xs, &xe);
  cts_model_graph_live_as(&r->m, o->y, relax, &ys, &ye);
  int inplace = op_takes_over(ny, relax) && source_given_up(nx, relax) &&
                (ny->src[0] == o->x || ny->src[1] == o->x) && xe == ys &&
                nx->dtype == ny->dtype &&
                cts_opsem_same_dims(nx->ndim, nx->shape, ny->ndim, ny->shape) && o->xb == o->yb;
  return inplace && !has_view(&r->m, o->order, o->x);
}

/* 1 when the pair may share its bytes under the rules relax does not leave out: their
 * live ranges are apart, or y takes x over. */
static int may_share(struct cts_run *r, const struct overlap *o, unsigned relax) {
  int64_t xs, xe, ys, ye;
  cts_model_graph_live_as(&r->m, o->x, relax, &xs, &xe);
  cts_model_graph_live_as(&r->m, o->y, relax, &ys, &ye);
  return xe < ys || ye < xs || takes_over(r, o, relax);
}

/* The suite's own (TSM) rules a shared placement can break alone, in the order the
 * judge tries to do without them (enum cts_graph_relax), each with the clause it names. */
static const struct {
  unsigned relax;
  const char *clause;
} tsm_rules[] = {
    {CTS_RELAX_ANY_OP, "GRAPH.INPLACE.2: only add, sub and mul take a source over"},
    {CTS_RELAX_SINK, "GRAPH.SINK.1: a sink is kept to the end"},
    {CTS_RELAX_PARAM, "GRAPH.FLAG.2: a PARAM tensor is kept to the end, never taken over"},
    {CTS_RELAX_LEAF_START, "GRAPH.REUSE.2: every leaf is live from before the first node"},
    {CTS_RELAX_PLAN_FLAGS, "GRAPH.PLAN.5: a flag added since the last plan made it stale"},
};
#define N_TSM_RULES (sizeof tsm_rules / sizeof *tsm_rules)

/* Every TSM rule the judge may do without; GRAPH.PLAN.5's only with plan_flags. */
static unsigned tsm_rules_all(int plan_flags) {
  unsigned relax = 0;
  for (size_t k = 0; k < N_TSM_RULES; k++)
    if (tsm_rules[k].relax != CTS_RELAX_PLAN_FLAGS || plan_flags) relax |= tsm_rules[k].relax;
  return relax;
}

/* Of the TSM rules in relax, without which the pair may share, those it cannot do without:
 * in turn, each stays in force when the pair may share without it too. */
static unsigned tsm_rules_needed(struct cts_run *r, const struct overlap *o, unsigned relax) {
  for (size_t k = 0; k < N_TSM_RULES; k++)
    if ((relax & tsm_rules[k].relax) && may_share(r, o, relax & ~tsm_rules[k].relax))
      relax &= ~tsm_rules[k].relax;
  return relax;
}

/* The clauses a pair that may not share breaks, into why (n bytes): the TSM rules it
 * cannot do without where the documented rules alone allow it, else the MUST rules. */
static void overlap_clauses(struct cts_run *r, const struct overlap *o, int plan_flags, char *why,
                            size_t n) {
  unsigned relax = tsm_rules_all(plan_flags);
  why[0] = 0;
  if (!may_share(r, o, relax)) {
    int out = (r->m.gnodes[o->x].flags | r->m.gnodes[o->y].flags) & TSM_GRAPH_OUTPUT;
    snprintf(why, n, "%s",
             out ? "GRAPH.OUT.2: an OUTPUT never shares" : "GRAPH.REUSE.1, GRAPH.INPLACE.1");
    return;
  }
  relax = tsm_rules_needed(r, o, relax);
  for (size_t k = 0; k < N_TSM_RULES; k++)
    if (relax & tsm_rules[k].relax)
      snprintf(why + strlen(why), n - strlen(why), "%s%s", why[0] ? "; " : "",
               tsm_rules[k].clause);
}

/* Fail: the pair shares memory while both are live, for the reasons why. */
static int report_overlap(struct cts_run *r, const struct overlap *o, const char *why) {
  int x = o->x, y = o->y;
  uint64_t xz = o->xb + node_bytes(&r->m.gnodes[x]), yz = o->yb + node_bytes(&r->m.gnodes[y]);
  int64_t xs, xe, ys, ye;
  cts_model_graph_live(&r->m, x, &xs, &xe);
  cts_model_graph_live(&r->m, y, &ys, &ye);
  char an[200], bn[200], xend[24] = "end", yend[24] = "end"; /* kept: to the end */
  if (xe != INT64_MAX) snprintf(xend, sizeof xend, "%lld", (long long)xe);
  if (ye != INT64_MAX) snprintf(yend, sizeof yend, "%lld", (long long)ye);
  return cts__report(r, CTS_FAIL, "%s [%llu, %llu) and %s [%llu, %llu) share memory while both "
                     "are live (steps %lld..%s and %lld..%s; %s)",
                     node_name(r, x, an, sizeof an), (unsigned long long)o->xb,
                     (unsigned long long)xz, node_name(r, y, bn, sizeof bn),
                     (unsigned long long)o->yb, (unsigned long long)yz, (long long)xs, xend,
                     (long long)ys, yend, why);
}

/* Placed nodes x and y of one buffer that share bytes must not be live at once
 * (GRAPH.REUSE.1 with the suite's GRAPH.REUSE.2, FLAG.2, SINK.1 and INPLACE.2). A pair
 * that the documented rules alone allow (the TSM rules left out, and with plan_flags the
 * flags as of the last plan, GRAPH.PLAN.5) breaks only the TSM rules it cannot do
 * without: the message names those alone, so that the failure is graded by them. */
static int check_overlap(struct cts_run *r, const struct overlap *o, int plan_flags) {
  uint64_t xz = o->xb + node_bytes(&r->m.gnodes[o->x]);
  uint64_t yz = o->yb + node_bytes(&r->m.gnodes[o->y]);
  if (xz <= o->yb || yz <= o->xb || xz == o->xb || yz == o->yb) return 0; /* disjoint or empty */
  if (may_share(r, o, 0)) return 0;
  char why[400];
  overlap_clauses(r, o, plan_flags, why, sizeof why);
  return report_overlap(r, o, why);
}

/* The placement of the current plan against GRAPH.REUSE.1, INPLACE.1, OUT.2, EXT.1,
 * VIEW.1, INPUT.1 (and the suite's REUSE.2, FLAG.2, SINK.1, INPLACE.2). plan_flags: the
 * plan may predate flags added since (a recompute of a graph stale through flags alone,
 * GRAPH.PLAN.5). */
static int check_placement(struct cts_run *r, int g, int plan_flags) {
  const struct cts_ids *order = &r->m.graphs[g].order;
  size_t n = order->n;
  struct tsm_graph_place *pl = cts_xcalloc(n ? n : 1, sizeof *pl);
  int rc = check_each_place(r, order, pl);
  for (size_t i = 0; i < n && !rc; i++)
    for (size_t j = i + 1; j < n && !rc && pl[i].placed; j++) {
      struct overlap o = {order, order->v[i], order->v[j], pl[i].offset, pl[j].offset};
      if (pl[j].placed && pl[j].buffer == pl[i].buffer) rc = check_overlap(r, &o, plan_flags);
    }
  free(pl);
  return rc ? -1 : 0;
}

static int compute_check(struct cts_model *m, int g) {
  int rc = cts_model_graph_check(m, g);
  if (rc) return rc;
  const struct cts_ids *order = &m->graphs[g].order;
  for (size_t i = 0; i < order->n; i++) {
    const struct cts_mgnode *n = &m->gnodes[order->v[i]];
    if (n->kind == CTS_GN_EXTERNAL && !m->res[n->res].valid) return TSM_ERELEASED;
  }
  return 0;
}

static uint64_t planned_bytes(struct cts_run *r, int g) {
  struct tsm_graph_info info;
  memset(&info, 0, sizeof info);
  r->a->graph_info(r->s, graph_h(r, g), &info);
  return info.planned_bytes;
}

static void free_bytes(struct cts_run *r) {
  for (size_t i = 0; i < gs_of(r)->n_unplanned; i++) free(gs_of(r)->unplanned[i]);
  free(gs_of(r)->unplanned);
  gs_of(r)->unplanned = NULL;
  gs_of(r)->n_unplanned = 0;
}

/* A compute that failed: ENOMEM ends an allocation-failure run, else Fail. */
static int compute_failed(struct cts_run *r, int adapter_rc, const char *run) {
  if (r->fault && adapter_rc == TSM_ENOMEM) return cts__injected(r);
  return cts__report(r, CTS_FAIL, "the %s compute failed with %s", run, cts_err_name(adapter_rc));
}

/* The unplanned run: every tensor's bytes kept, each matching the model. */
static int unplanned_run(struct cts_run *r, int g) {
  struct graph_state *gs = gs_of(r);
  const struct cts_ids *order = &r->m.graphs[g].order;
  int adapter_rc = 0;
  if (write_leaves(r, g, &adapter_rc) || (adapter_rc = r->a->graph_compute(r->s, graph_h(r, g))))
    return compute_failed(r, adapter_rc, "unplanned");
  free_bytes(r);
  gs->n_unplanned = r->m.n_gnodes;
  gs->unplanned = cts_xcalloc(gs->n_unplanned ? gs->n_unplanned : 1, sizeof(unsigned char *));
  char name[200];
  for (size_t i = 0; i < order->n; i++) {
    int rc, x = order->v[i];
    gs->unplanned[x] = read_node(r, x, &rc);
    if (rc) return cts__report(r, CTS_FAIL, "graph_read(%s) failed with %s",
                               node_name(r, x, name, sizeof name), cts_err_name(rc));
  }
  struct factors f = {r, gs->unplanned, gs->n_unplanned, NULL, 0};
  cts_model_graph_compute(&r->m, g, factor_of, &f);
  free(f.scratch);
  for (size_t i = 0; i < order->n; i++) {
    const struct cts_mgnode *n = &r->m.gnodes[order->v[i]];
    if (n->kind == CTS_GN_OP && n->op == TSM_OP_SVD && n->out == 0 &&
        check_svd(r, order->v[i], gs->unplanned))
      return -1;
  }
  for (size_t i = 0; i < order->n; i++)
    if (compare_model(r, order->v[i], gs->unplanned[order->v[i]], "unplanned", "GRAPH.OUT.1"))
      return -1;
  return 0;
}

/* The planned run: a valid placement, no more bytes than no reuse, and every guaranteed
 * tensor byte for byte the unplanned one. */
static int planned_run(struct cts_run *r, int g, uint64_t none_bytes) {
  const struct cts_ids *order = &r->m.graphs[g].order;
  int adapter_rc = 0;
  if ((adapter_rc = r->a->graph_plan(r->s, graph_h(r, g), TSM_PLAN_REUSE)) ||
      write_leaves(r, g, &adapter_rc) || (adapter_rc = r->a->graph_compute(r->s, graph_h(r, g))))
    return compute_failed(r, adapter_rc, "planned");
  if (check_placement(r, g, 0)) return -1;
  uint64_t reuse_bytes = planned_bytes(r, g);
  if (reuse_bytes > none_bytes)
    return cts__report(r, CTS_FAIL, "the reuse plan takes %llu bytes, more than the %llu of no "
                       "reuse (GRAPH.PLAN.3)", (unsigned long long)reuse_bytes,
                       (unsigned long long)none_bytes);
  char name[200];
  for (size_t i = 0; i < order->n; i++) {
    int rc, x = order->v[i];
    if (!cts_model_graph_guaranteed(&r->m, x)) continue;
    unsigned char *got = read_node(r, x, &rc);
    size_t bytes = node_bytes(&r->m.gnodes[x]);
    int same = rc == 0 && !memcmp(got, gs_of(r)->unplanned[x], bytes);
    /* A computed tensor whose planned bytes differ but whose values are the operations'
     * (MGR.OP.7's tolerances) breaks only the byte-for-byte identity (GRAPH.OUT.4); a
     * leaf or an external holds what the judge wrote, so any difference is a loss. */
    int computed = r->m.gnodes[cts_model_graph_root(&r->m, x)].kind == CTS_GN_OP;
    int close = rc == 0 && !same && computed && model_differs(r, x, got) < 0;
    free(got);
    if (rc)
      return cts__report(r, CTS_FAIL, "%s is guaranteed but reading it after the planned run "
                         "failed with %s (%s)", node_name(r, x, name, sizeof name),
                         cts_err_name(rc), guarantee_clause(r, x));
    if (!same)
      return cts__report(r, CTS_FAIL, "%s is guaranteed but the planned run's bytes differ from "
                         "the unplanned run's (%s)", node_name(r, x, name, sizeof name),
                         close ? "GRAPH.OUT.4: the planned bytes are the unplanned ones"
                               : guarantee_clause(r, x));
  }
  return 0;
}

int cts__exec_graph_compute(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  int g;
  if (cts__operand(r, st->a, &g)) return -1;
  int model_rc = g == CTS_BOGUS ? TSM_EINVAL : compute_check(&r->m, g);
  int adapter_rc = r->a->graph_plan(r->s, graph_h(r, g), TSM_PLAN_NONE);
  /* A plan reads no external tensor (GRAPH.EXT.3): a released one is the compute's
   * refusal. */
  if (adapter_rc == 0 && (model_rc || expected_err))
    adapter_rc = r->a->graph_compute(r->s, graph_h(r, g));
  if (r->fault && adapter_rc == TSM_ENOMEM) return cts__injected(r);
  if (model_rc || adapter_rc || expected_err)
    return cts__judge_codes(r, model_rc, adapter_rc, &expected_err) ? -1 : cts__check_state(r);
  if (unplanned_run(r, g)) return -1;
  cts_model_graph_planned(&r->m, g);
  /* planned_bytes before the reuse plan replaces the unplanned one */
  if (planned_run(r, g, planned_bytes(r, g))) return -1;
  return cts__check_state(r);
}

/* What a recompute of graph g judges. */
struct recompute {
  int g;
  int unwritten;  /* `recompute G unwritten`: the leaves keep their values (GRAPH.PLAN.4) */
  int flags_only; /* the plan is stale through flags alone (GRAPH.PLAN.5) */
  int replans;    /* no plan yet, or a stale one: the compute plans anew */
  int missing;    /* an svd had no factors: values derived from it are not judged */
};

/* A recompute of graph gr, number g: whether it plans anew, and why. */
static struct recompute recompute_of(const struct cts_mgraph *gr, int g, int unwritten) {
  struct recompute rc = {g, unwritten, 0, 0, 0};
  rc.flags_only = gr->planned && gr->stale_flags && !gr->stale_nodes;
  rc.replans = !gr->planned || gr->stale_flags || gr->stale_nodes;
  return rc;
}

/* The clause node x's value after a recompute is judged by: GRAPH.PLAN.5 where only the
 * flags as of the last plan guarantee it, GRAPH.PLAN.4 for a leaf a re-plan must keep,
 * else what guarantees it. */
static const char *recompute_clause(struct cts_run *r, const struct recompute *rc, int x,
                                    int leaf) {
  if (rc->flags_only && !cts_model_graph_guaranteed_as(&r->m, x, CTS_RELAX_PLAN_FLAGS))
    return "GRAPH.PLAN.5: a flag added since the last plan made it stale";
  if (leaf && rc->unwritten && rc->replans)
    return "GRAPH.PLAN.4: a re-plan keeps what was written to PARAM and OUTPUT leaves";
  return guarantee_clause(r, x);
}

/* The guaranteed leaves (leaf 1) or other nodes (leaf 0) after a recompute hold the
 * model's values, but for those derived from an svd without factors. */
static int check_recomputed(struct cts_run *r, const struct recompute *rc, int leaf) {
  const struct cts_ids *order = &r->m.graphs[rc->g].order;
  int bad = 0;
  for (size_t i = 0; bad == 0 && i < order->n; i++) {
    int x = order->v[i], e;
    const struct cts_mgnode *n = &r->m.gnodes[x];
    if ((n->kind == CTS_GN_LEAF) != leaf || !cts_model_graph_guaranteed(&r->m, x) ||
        (rc->missing && n->svd_taint))
      continue;
    const char *clause = recompute_clause(r, rc, x, leaf);
    unsigned char *got = read_node(r, x, &e);
    bad = e ? cts__report(r, CTS_FAIL, "graph_read failed with %s", cts_err_name(e))
            : compare_model(r, x, got, "re-planned", clause);
    free(got);
  }
  return bad;
}

/* The recompute on the adapter: the leaves written again unless `unwritten`, then the
 * compute; the adapter's code. */
static int run_recompute(struct cts_run *r, const struct recompute *rc) {
  int adapter_rc = 0;
  if (rc->unwritten || write_leaves(r, rc->g, &adapter_rc) == 0)
    adapter_rc = r->a->graph_compute(r->s, graph_h(r, rc->g));
  return adapter_rc;
}

/* A recompute the adapter did not complete: ENOMEM ends an allocation-failure run, a
 * refusal (stale) is allowed, anything else fails. */
static int recompute_failed(struct cts_run *r, const struct recompute *rc, int adapter_rc) {
  if (r->fault && adapter_rc == TSM_ENOMEM) return cts__injected(r);
  if (adapter_rc == TSM_ESTALE) return cts__check_state(r);
  return cts__report(r, CTS_FAIL, "recompute failed with %s (%s allows only STALE)",
                     cts_err_name(adapter_rc), rc->flags_only ? "GRAPH.PLAN.5" : "GRAPH.PLAN.1");
}

/* The model's values after the recompute, the svd factors from the last unplanned run. */
static void model_recompute(struct cts_run *r, struct recompute *rc) {
  struct factors f = {r, gs_of(r)->unplanned, gs_of(r)->n_unplanned, NULL, 0};
  cts_model_graph_compute(&r->m, rc->g, factor_of, &f);
  free(f.scratch);
  rc->missing = f.missing;
}

/* GRAPH.PLAN.1: compute without planning first; a stale plan is re-planned or refused.
 * An svd's factors come from the last unplanned run: after a planned run they may be
 * overwritten (GRAPH.OUT.3); an svd that has none leaves its derived values unjudged.
 * A graph stale through flags alone (GRAPH.PLAN.5, TSM): what the flags as of the last
 * plan allow names that clause. Leaves are judged before nodes: after a re-plan with
 * no leaf written again, a leaf that lost its values breaks GRAPH.PLAN.4. */
int cts__exec_graph_recompute(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  int g;
  if (cts__operand(r, st->a, &g)) return -1;
  int model_rc = g == CTS_BOGUS ? TSM_EINVAL : compute_check(&r->m, g);
  if (model_rc || expected_err) {
    int adapter_rc = r->a->graph_compute(r->s, graph_h(r, g));
    return cts__judge_codes(r, model_rc, adapter_rc, &expected_err) ? -1 : cts__check_state(r);
  }
  struct recompute rc = recompute_of(&r->m.graphs[g], g, st->u.truth.holds);
  if (rc.unwritten && leaves_written(r, g)) return -1;
  int adapter_rc = run_recompute(r, &rc);
  if (adapter_rc) return recompute_failed(r, &rc, adapter_rc);
  model_recompute(r, &rc);
  int bad = check_placement(r, g, rc.flags_only);
  for (int leaf = 1; leaf >= 0 && !bad; leaf--) bad = check_recomputed(r, &rc, leaf);
  if (bad) return -1;
  cts_model_graph_planned(&r->m, g);
  return cts__check_state(r);
}


/* ---- expectations and observation ------------------------------------------- */

int cts__expect_planned(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x;
  if (cts__operand(r, st->a, &x)) return -1;
  uint64_t none = 0;
  for (size_t i = 0; i < r->m.graphs[x].order.n; i++) {
    const struct cts_mgnode *n = &r->m.gnodes[r->m.graphs[x].order.v[i]];
    if (n->kind == CTS_GN_LEAF || (n->kind == CTS_GN_OP && n->op != TSM_OP_RESHAPE))
      none += node_bytes(n);
  }
  int64_t want = st->u.count.want;
  if (cts__model_agrees(r, (uint64_t)want >= none, "the spec bounds a plan only by the "
                        "unplanned %llu bytes (GRAPH.PLAN.3)", (unsigned long long)none))
    return -1;
  uint64_t got = planned_bytes(r, x);
  return got <= (uint64_t)want ? 0
                               : cts__report(r, CTS_FAIL, "the plan takes %llu bytes, more than %lld",
                                             (unsigned long long)got, (long long)want);
}

/* The model's values of node x must be the expected ones. */
static int node_model_agrees(struct cts_run *r, int x, const double *want, size_t n_want) {
  const struct cts_mgnode *n = &r->m.gnodes[x];
  int64_t e = cts_model_graph_elems(n);
  if ((int64_t)n_want != e)
    return cts__report(r, CTS_ERROR, "%zu values for %lld elements", n_want, (long long)e);
  for (int64_t i = 0; i < e; i++) {
    double w = cts_opsem_expected(n->dtype, want[i]);
    if (cts__model_agrees(r, node_equal(n, w, n->vals[i]), "element %lld is %.9g in the model",
                          (long long)i, n->vals[i]))
      return -1;
  }
  return 0;
}

/* The adapter's values of node x must be the expected ones. */
static int node_reads(struct cts_run *r, int x, const double *want) {
  const struct cts_mgnode *n = &r->m.gnodes[x];
  char name[200];
  int rc;
  unsigned char *got = read_node(r, x, &rc);
  if (rc) {
    free(got);
    return cts__report(r, CTS_FAIL, "graph_read failed with %s", cts_err_name(rc));
  }
  for (int64_t i = 0; i < cts_model_graph_elems(n); i++) {
    double w = cts_opsem_expected(n->dtype, want[i]);
    double g = elem_at(n->dtype, got, i);
    if (!node_equal(n, w, g)) {
      free(got);
      return cts__report(r, CTS_FAIL, "%s: element %lld is %.9g, expected %.9g",
                         node_name(r, x, name, sizeof name), (long long)i, g, w);
    }
  }
  free(got);
  return 0;
}

/* GRAPH.OUT.3 (MAY): a computed node without a guaranteed value reads successfully and
 * holds (a) its computed value or (b) another tensor's bytes; which one is noted for the
 * Pass message (graphs_before_close). */
static int note_unspecified(struct cts_run *r, int x) {
  const struct cts_mgnode *n = &r->m.gnodes[x];
  char name[200];
  node_name(r, x, name, sizeof name);
  int rc;
  unsigned char *got = read_node(r, x, &rc);
  if (rc) {
    free(got);
    return cts__report(r, CTS_FAIL, "%s: graph_read failed with %s (GRAPH.OUT.3: reading a "
                       "node without a guaranteed value succeeds)", name, cts_err_name(rc));
  }
  int kept = 1;
  for (int64_t i = 0; i < cts_model_graph_elems(n) && kept; i++)
    kept = node_equal(n, n->vals[i], elem_at(n->dtype, got, i));
  free(got);
  struct cts_buf *b = &gs_of(r)->out3;
  cts_buf_printf(b, "%s%s (%c)", b->len ? ", " : "", name, kept ? 'a' : 'b');
  return 0;
}

int cts__expect_node(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x;
  if (cts__operand(r, st->a, &x)) return -1;
  char name[200];
  const struct cts_mgnode *n = &r->m.gnodes[x];
  int guaranteed = n->in_graph && r->m.graphs[n->graph].computed && cts_model_graph_guaranteed(&r->m, x);
  if (st->u.values.unspecified) {
    if (cts__model_agrees(r, !guaranteed, "%s is guaranteed", node_name(r, x, name, sizeof name)))
      return -1;
    return n->in_graph && r->m.graphs[n->graph].computed && n->vals ? note_unspecified(r, x) : 0;
  }
  if (cts__model_agrees(r, guaranteed, "%s has no guaranteed value (GRAPH.OUT.3): flag it "
                        "output, or `expect node ... unspecified`", node_name(r, x, name, sizeof name)))
    return -1;
  if (node_model_agrees(r, x, st->u.values.v, st->u.values.n)) return -1;
  return node_reads(r, x, st->u.values.v);
}

/* Whether node x can be read now, in the model: its graph not released (GRAPH.MGR.1),
 * x in it (GRAPH.BUILD.2), a released external under it refused (GRAPH.EXT.2), else
 * placed by a compute. */
static int read_check(const struct cts_model *m, int x) {
  if (x == CTS_BOGUS) return TSM_EINVAL;
  const struct cts_mgnode *n = &m->gnodes[x];
  int rc = cts_model_graph_check(m, n->graph);
  if (rc) return rc;
  if (!n->in_graph) return TSM_EINVAL;
  const struct cts_mgnode *root = &m->gnodes[cts_model_graph_root(m, x)];
  if (root->kind == CTS_GN_EXTERNAL) return m->res[root->res].valid ? 0 : TSM_ERELEASED;
  return n->vals ? 0 : TSM_EINVAL;
}

int cts__exec_graph_read(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  int x;
  if (cts__operand(r, st->a, &x)) return -1;
  int adapter_rc;
  if (x == CTS_BOGUS) {
    unsigned char byte;
    adapter_rc = r->a->graph_read(r->s, CTS_BOGUS_HANDLE, &byte, 0);
  } else {
    free(read_node(r, x, &adapter_rc));
  }
  return cts__judge_codes(r, read_check(&r->m, x), adapter_rc, &expected_err) ? -1
                                                                             : cts__check_state(r);
}

/* Each graph's state, and the bytes its plan holds (counted in live bytes). */
static int check_graphs(struct cts_run *r, uint64_t *graph_bytes) {
  *graph_bytes = 0;
  for (size_t g = 0; g < r->m.n_graphs && g < gs_of(r)->graph.cap; g++) {
    if (!gs_of(r)->graph.v[g].h) continue;
    struct tsm_graph_info info;
    memset(&info, 0, sizeof info);
    int rc = r->a->graph_info(r->s, gs_of(r)->graph.v[g].h, &info);
    if (rc) return cts__report(r, CTS_FAIL, "graph_info failed with %s", cts_err_name(rc));
    if (!!info.released != r->m.graphs[g].released)
      return cts__report(r, CTS_FAIL, "graph made at line %d: expected %s, observed %s (GRAPH.MGR.1)",
                         gs_of(r)->graph.v[g].line, r->m.graphs[g].released ? "released" : "open",
                         info.released ? "released" : "open");
    if (!info.released) *graph_bytes += info.planned_bytes;
  }
  return 0;
}

static int held_bytes(struct cts_run *r, uint64_t *bytes) {
  *bytes = 0;
  return r->m.n_graphs ? check_graphs(r, bytes) : 0;
}

int cts__expect_graph_state(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x;
  if (cts__operand(r, st->a, &x)) return -1;
  int released = r->m.graphs[x].released;
  if (cts__model_agrees(r, released == (st->u.state.want == CTS_STATE_RELEASED),
                        "the model says %s", released ? "released" : "open"))
    return -1;
  uint64_t bytes;
  return check_graphs(r, &bytes);
}

static void *graphs_new(struct cts_run *r) {
  (void)r;
  return cts_xcalloc(1, sizeof(struct graph_state));
}

/* A case that passed says which variant of GRAPH.OUT.3 each node it read showed. */
static void graphs_before_close(struct cts_run *r) {
  const struct graph_state *gs = gs_of(r);
  if (r->status != CTS_PASS || !gs->out3.len) return;
  cts_buf_printf(r->msg, "%sGRAPH.OUT.3 (MAY): variant per node observed: %s",
                 r->msg->buf && r->msg->buf[0] ? "\n" : "", gs->out3.buf);
}

static void graphs_free(void *state) {
  struct graph_state *gs = state;
  cts_buf_free(&gs->out3);
  for (size_t i = 0; i < gs->n_unplanned; i++) free(gs->unplanned[i]);
  free(gs->unplanned);
  free(gs->graph.v);
  free(gs->node.v);
  free(gs->written);
  free(gs);
}

static int explain_graph(struct cts_run *r, int kind, int id, struct cts_buf *out) {
  static const char *const node_kinds[] = {"leaf", "external", "op result"};
  if (kind == CTS_SYM_GRAPH) {
    const struct cts_mgraph *g = &r->m.graphs[id];
    cts_buf_printf(out, "graph, %s%s%s%s, %zu tensors in build order",
                   g->released ? "released" : "open", g->planned ? ", planned" : "",
                   g->stale_nodes ? ", stale (nodes)" : g->stale_flags ? ", stale (flags)" : "",
                   g->computed ? ", computed" : "", g->order.n);
    return 1;
  }
  if (kind != CTS_SYM_NODE) return 0;
  const struct cts_mgnode *n = &r->m.gnodes[id];
  cts_buf_printf(out, "%s, %s", node_kinds[n->kind], n->in_graph ? "in the graph" : "not expanded");
  if (n->flags) cts_buf_printf(out, ", flags 0x%x", (unsigned)n->flags);
  cts__explain_values(out, n->dtype, n->ndim, n->shape, n->vals);
  return 1;
}

const struct cts_family cts_family_graphs = {
    .state_new = graphs_new,
    .held_bytes = held_bytes,
    .held_what = "graph buffers",
    .held_clause = "GRAPH.MGR.1",
    .state_free = graphs_free,
    .before_close = graphs_before_close,
    .explain = explain_graph,
};
