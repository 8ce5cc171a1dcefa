/*
 * harness/src/model/model_graph.c: the executable model of spec/graphs.md: building
 * (post-order expansion), flags, values (through the operation rules of opsem.c), and
 * the liveness rules a plan must respect. The model never chooses a placement: it says
 * which placements are legal.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "opsem.h"
#include "util.h"

#define KEPT INT64_MAX

static int bad_graph(const struct cts_model *m, int g) {
  return g == CTS_BOGUS || g < 0 || (size_t)g >= m->n_graphs;
}

static int bad_node(const struct cts_model *m, int x) {
  return x == CTS_BOGUS || x < 0 || (size_t)x >= m->n_gnodes;
}

int cts_model_graph_check(const struct cts_model *m, int g) {
  if (bad_graph(m, g)) return TSM_EINVAL;
  return m->graphs[g].released ? TSM_ERELEASED : 0;
}

int64_t cts_model_graph_elems(const struct cts_mgnode *n) {
  return cts_opsem_elems(n->ndim, n->shape);
}

int cts_model_graph_new(struct cts_model *m, int mgr, int *out) {
  if (mgr == CTS_BOGUS || mgr < 0 || (size_t)mgr >= m->n_mgrs) return TSM_EINVAL;
  if (m->mgrs[mgr].state != CTS_M_OPEN) return TSM_ECLOSED;
  struct cts_mgraph gr;
  memset(&gr, 0, sizeof gr);
  gr.mgr = mgr;
  gr.dirty = 1;
  CTS_PUSH(m->graphs, m->n_graphs, m->cap_graphs, gr);
  *out = (int)m->n_graphs - 1;
  return 0;
}

static int new_node(struct cts_model *m, int g, int kind, const struct cts_mtype *type) {
  struct cts_mgnode n;
  memset(&n, 0, sizeof n);
  n.graph = g;
  n.kind = kind;
  n.res = CTS_NONE;
  n.first = CTS_NONE;
  n.dtype = type->dtype;
  n.ndim = type->ndim;
  memcpy(n.shape, type->shape, (size_t)type->ndim * sizeof(int64_t));
  n.order = -1;
  CTS_PUSH(m->gnodes, m->n_gnodes, m->cap_gnodes, n);
  return (int)m->n_gnodes - 1;
}

/* A node the model cannot hold the values of: the judge takes the adapter's ENOMEM for
 * it (where a graph allocates is its own choice, so an overflowing byte size is no
 * build-time rule here, unlike MGR.CREATE.5). */
static int too_large(int dtype, int ndim, const int64_t *shape) {
  return cts_opsem_check_size(dtype, ndim, shape) ? CTS_OPSEM_TOO_LARGE : 0;
}

/* ERR.ORDER.1: a bad argument (EINVAL) comes before a released graph (ERELEASED). */
int cts_model_graph_leaf(struct cts_model *m, int g, const struct cts_mtype *type, double *init,
                         int *out) {
  int rc = bad_graph(m, g) ? TSM_EINVAL : 0;
  for (int i = 0; !rc && i < type->ndim; i++)
    if (type->shape[i] < 0) rc = TSM_EINVAL;
  if (!rc) rc = cts_model_graph_check(m, g);
  if (!rc) rc = too_large(type->dtype, type->ndim, type->shape);
  if (rc) {
    free(init);
    return rc;
  }
  *out = new_node(m, g, CTS_GN_LEAF, type);
  m->gnodes[*out].init = init;
  return 0;
}

int cts_model_graph_external(struct cts_model *m, int g, int r, int *out) {
  int rc = bad_graph(m, g) || r == CTS_BOGUS || m->res[r].kind != TSM_KIND_TENSOR ? TSM_EINVAL : 0;
  if (!rc) rc = cts_model_graph_check(m, g);
  if (!rc && !m->res[r].valid) rc = TSM_ERELEASED;
  if (!rc && !cts_opsem_dtype_arith(m->res[r].dtype)) rc = TSM_EDTYPE; /* GRAPH.DTYPE.1 */
  if (rc) return rc;
  const struct cts_mres *t = &m->res[r];
  *out = new_node(m, g, CTS_GN_EXTERNAL, &(struct cts_mtype){t->dtype, t->ndim, t->shape});
  m->gnodes[*out].res = r;
  return 0;
}

/* The operand an opsem rule reads: n's dtype, shape and last computed elements. */
static struct cts_opsem_tensor operand(const struct cts_mgnode *n) {
  return cts_opsem_tensor(n->dtype, n->ndim, n->shape, n->vals);
}

/* Adds the results of `call` to graph g; an svd's three share their source and know
 * the first (GRAPH.BUILD.1). */
static void add_results(struct cts_model *m, int g, const struct cts_mop *call,
                        const struct cts_opsem_tensor *res, int *outs) {
  int op = call->op, n_results = cts_opsem_n_results(op);
  for (int i = 0; i < n_results; i++) {
    struct cts_mtype type = {res[i].dtype, res[i].ndim, res[i].shape};
    outs[i] = new_node(m, g, CTS_GN_OP, &type);
  }
  for (int i = 0; i < n_results; i++) {
    struct cts_mgnode *n = &m->gnodes[outs[i]];
    n->op = op;
    n->src[0] = call->a;
    n->src[1] = call->b;
    n->n_src = call->b != CTS_NONE ? 2 : 1;
    n->out = i;
    if (op == TSM_OP_SVD) n->first = outs[0];
  }
}

int cts_model_graph_op(struct cts_model *m, const struct cts_mop *call, int *outs) {
  int op = call->op, a = call->a, b = call->b;
  if (bad_node(m, a) || (b != CTS_NONE && bad_node(m, b))) return TSM_EINVAL;
  int g = m->gnodes[a].graph;
  if (b != CTS_NONE && m->gnodes[b].graph != g) return TSM_EINVAL;
  int rc = cts_model_graph_check(m, g);
  if (rc) return rc;
  if (!cts_opsem_offered(op, CTS_OPSEM_GRAPH)) return TSM_EINVAL;
  struct cts_opsem_tensor x = operand(&m->gnodes[a]), y, res[3];
  if (b != CTS_NONE) y = operand(&m->gnodes[b]);
  rc = cts_opsem_result(op, &x, b != CTS_NONE ? &y : NULL,
                        &(struct cts_opsem_target){call->ndim, call->shape}, res);
  if (rc) return rc;
  for (int i = 0; i < cts_opsem_n_results(op); i++)
    if ((rc = too_large(res[i].dtype, res[i].ndim, res[i].shape))) return rc;
  add_results(m, g, call, res, outs);
  return 0;
}

int cts_model_graph_root(const struct cts_model *m, int x) {
  while (m->gnodes[x].kind == CTS_GN_OP && m->gnodes[x].op == TSM_OP_RESHAPE) x = m->gnodes[x].src[0];
  return x;
}

/* A planned graph's plan is stale through new nodes (GRAPH.PLAN.1) or through new flags
 * (GRAPH.PLAN.5): the judge tells the two apart when it names what a reused plan broke. */
static void mark_stale(struct cts_model *m, int g, int through_flags) {
  if (m->graphs[g].planned) {
    if (through_flags) m->graphs[g].stale_flags = 1;
    else m->graphs[g].stale_nodes = 1;
  }
  m->graphs[g].dirty = 1;
}

int cts_model_graph_flag(struct cts_model *m, int x, uint32_t flags) {
  if (bad_node(m, x)) return TSM_EINVAL;
  int rc = cts_model_graph_check(m, m->gnodes[x].graph);
  if (rc) return rc;
  if ((flags & TSM_GRAPH_PARAM) && m->gnodes[x].kind == CTS_GN_OP) return TSM_EINVAL; /* FLAG.2 */
  uint32_t before = m->gnodes[x].flags;
  m->gnodes[x].flags |= flags;
  if (flags & TSM_GRAPH_OUTPUT) m->gnodes[cts_model_graph_root(m, x)].flags |= TSM_GRAPH_OUTPUT;
  if (m->gnodes[x].flags != before && m->gnodes[x].in_graph) mark_stale(m, m->gnodes[x].graph, 1);
  return 0;
}

/* GRAPH.BUILD.3: post-order, sources in argument order; an svd's three results are
 * produced together, at one step (GRAPH.OP.2). */
static int64_t next_order(const struct cts_model *m, int g) {
  int64_t k = 0;
  const struct cts_ids *o = &m->graphs[g].order;
  for (size_t i = 0; i < o->n; i++)
    if (m->gnodes[o->v[i]].order >= k) k = m->gnodes[o->v[i]].order + 1;
  return k;
}

static void visit(struct cts_model *m, int x) {
  struct cts_mgnode *n = &m->gnodes[x];
  if (n->in_graph) return;
  for (int i = 0; i < n->n_src; i++) visit(m, m->gnodes[x].src[i]);
  n = &m->gnodes[x];
  int g = n->graph;
  if (n->kind == CTS_GN_OP && n->op == TSM_OP_SVD) {
    int64_t k = next_order(m, g);
    for (int i = 0; i < 3; i++) {
      struct cts_mgnode *r = &m->gnodes[n->first + i];
      r->in_graph = 1;
      r->order = k;
      CTS_PUSH(m->graphs[g].order.v, m->graphs[g].order.n, m->graphs[g].order.cap, n->first + i);
    }
    return;
  }
  n->in_graph = 1;
  n->order = n->kind == CTS_GN_OP ? next_order(m, g) : -1;
  CTS_PUSH(m->graphs[g].order.v, m->graphs[g].order.n, m->graphs[g].order.cap, x);
}

int cts_model_graph_expand(struct cts_model *m, int g, int x) {
  if (bad_node(m, x) || bad_graph(m, g) || m->gnodes[x].graph != g) return TSM_EINVAL;
  int rc = cts_model_graph_check(m, g); /* ERR.ORDER.1: a foreign node first */
  if (rc) return rc;
  size_t before = m->graphs[g].order.n;
  visit(m, x);
  if (m->graphs[g].order.n != before) mark_stale(m, g, 0);
  return 0;
}

int cts_model_graph_release(struct cts_model *m, int g) {
  if (bad_graph(m, g)) return TSM_EINVAL;
  m->graphs[g].released = 1; /* GRAPH.MGR.1; releasing again changes nothing */
  m->graphs[g].dirty = 1;
  return 0;
}

/* ---- liveness (GRAPH.REUSE.1) ------------------------------------------------ */

uint32_t cts_model_graph_flags_as(const struct cts_mgnode *n, unsigned relax) {
  return relax & CTS_RELAX_PLAN_FLAGS ? n->plan_flags : n->flags;
}

/* The first step that reads x (a view of x counts at its own step); -1 when none. */
static int64_t first_read(const struct cts_model *m, int x) {
  int64_t first = -1;
  for (size_t i = 0; i < m->n_gnodes; i++) {
    const struct cts_mgnode *n = &m->gnodes[i];
    if (!n->in_graph || n->kind != CTS_GN_OP) continue;
    for (int k = 0; k < n->n_src; k++)
      if (n->src[k] == x && (first < 0 || n->order < first)) first = n->order;
  }
  return first;
}

/* The step x's live range starts at: a node's own step; every leaf before the first node
 * (-1: GRAPH.REUSE.2), or, with CTS_RELAX_LEAF_START, a non-INPUT leaf at its first
 * reader's (GRAPH.REUSE.1). */
static int64_t live_start(const struct cts_model *m, int x, unsigned relax) {
  const struct cts_mgnode *n = &m->gnodes[x];
  if (n->kind == CTS_GN_OP) return n->order;
  if (!(relax & CTS_RELAX_LEAF_START) || (cts_model_graph_flags_as(n, relax) & TSM_GRAPH_INPUT))
    return -1;
  return first_read(m, x);
}

/* The last step that reads x, directly or through views of it; KEPT when nothing
 * reads it (a sink, GRAPH.SINK.1) or a view of it nobody reads, or with
 * CTS_RELAX_SINK that sink's own step. */
static int64_t last_read(const struct cts_model *m, int x, unsigned relax) {
  int64_t end = -1;
  int read = 0;
  for (size_t i = 0; i < m->n_gnodes; i++) {
    const struct cts_mgnode *n = &m->gnodes[i];
    if (!n->in_graph || n->kind != CTS_GN_OP) continue;
    for (int k = 0; k < n->n_src; k++) {
      if (n->src[k] != x) continue;
      int64_t at = n->op == TSM_OP_RESHAPE ? last_read(m, (int)i, relax) : n->order;
      if (at == KEPT) return KEPT;
      if (at > end) end = at;
      read = 1;
    }
  }
  if (read) return end;
  return relax & CTS_RELAX_SINK ? live_start(m, x, relax) : KEPT;
}

int cts_model_graph_guaranteed_as(const struct cts_model *m, int x, unsigned relax) {
  int root = cts_model_graph_root(m, x);
  const struct cts_mgnode *r = &m->gnodes[root];
  uint32_t flags = cts_model_graph_flags_as(r, relax);
  if ((flags & TSM_GRAPH_OUTPUT) || r->kind == CTS_GN_EXTERNAL) return 1;
  if ((flags & TSM_GRAPH_PARAM) && !(relax & CTS_RELAX_PARAM)) return 1;
  return last_read(m, root, relax) == KEPT;
}

int cts_model_graph_guaranteed(const struct cts_model *m, int x) {
  return cts_model_graph_guaranteed_as(m, x, 0);
}

void cts_model_graph_live_as(const struct cts_model *m, int x, unsigned relax, int64_t *start,
                             int64_t *end) {
  uint32_t flags = cts_model_graph_flags_as(&m->gnodes[x], relax);
  *start = live_start(m, x, relax);
  if ((flags & TSM_GRAPH_OUTPUT) || ((flags & TSM_GRAPH_PARAM) && !(relax & CTS_RELAX_PARAM)))
    *end = KEPT;
  else
    *end = last_read(m, x, relax);
}

void cts_model_graph_live(const struct cts_model *m, int x, int64_t *start, int64_t *end) {
  cts_model_graph_live_as(m, x, 0, start, end);
}

/* ---- values (GRAPH.OP.1) ------------------------------------------------------- */

/* The elements of op node x from its sources' (GRAPH.OP.1). */
static double *op_values(struct cts_model *m, int x, const double *(*factor)(void *, int),
                         void *ctx) {
  struct cts_mgnode *n = &m->gnodes[x];
  struct cts_opsem_tensor a = operand(&m->gnodes[n->src[0]]), b;
  struct cts_opsem_tensor out = cts_opsem_tensor(n->dtype, n->ndim, n->shape, NULL);
  if (n->n_src > 1) b = operand(&m->gnodes[n->src[1]]);
  double *v = cts_opsem_values(n->op, &a, n->n_src > 1 ? &b : NULL, &out);
  if (n->op == TSM_OP_SVD) { /* the implementation's factors, validated by the judge */
    memcpy(v, factor(ctx, x), (size_t)cts_model_graph_elems(n) * sizeof(double));
    n->svd_taint = 1;
  }
  return v;
}

static void compute_node(struct cts_model *m, int x, const double *(*factor)(void *, int),
                         void *ctx) {
  struct cts_mgnode *n = &m->gnodes[x];
  int64_t e = cts_model_graph_elems(n);
  n->svd_taint = 0;
  for (int i = 0; i < n->n_src; i++) n->svd_taint |= m->gnodes[n->src[i]].svd_taint;
  double *v;
  if (n->kind == CTS_GN_OP) {
    v = op_values(m, x, factor, ctx);
  } else {
    v = cts_xcalloc(e ? (size_t)e : 1, sizeof(double));
    if (n->kind == CTS_GN_EXTERNAL) memcpy(v, cts_model_values(m, n->res), (size_t)e * sizeof(double));
    else if (n->init) memcpy(v, n->init, (size_t)e * sizeof(double));
  }
  free(n->vals);
  n->vals = v;
}

void cts_model_graph_compute(struct cts_model *m, int g,
                             const double *(*factor)(void *ctx, int node), void *ctx) {
  struct cts_mgraph *gr = &m->graphs[g];
  for (size_t i = 0; i < gr->order.n; i++) compute_node(m, gr->order.v[i], factor, ctx);
  m->graphs[g].computed = 1;
}

void cts_model_graph_planned(struct cts_model *m, int g) {
  struct cts_mgraph *gr = &m->graphs[g];
  for (size_t i = 0; i < gr->order.n; i++)
    m->gnodes[gr->order.v[i]].plan_flags = m->gnodes[gr->order.v[i]].flags;
  gr->planned = 1;
  gr->stale_nodes = gr->stale_flags = 0;
}
