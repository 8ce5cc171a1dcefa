/*
 * impl/src/planner.c: the graph memory planner (spec/graphs.md, after ggml's graph
 * allocator): liveness, in-place chains and offline placement of a graph's tensors.
 * Clauses: GRAPH.REUSE.1, GRAPH.INPLACE.1, GRAPH.INPUT.1, GRAPH.OUT.2, GRAPH.SINK.1,
 * GRAPH.VIEW.1, GRAPH.PLAN.3.
 *
 * Liveness (REUSE.1). Time 0 is "before the first node" (every leaf is placed then);
 * the node of order i is computed at time i + 1; END = n_exec + 1. A tensor is live
 * from its start (0 for a leaf, its time for a node) to its end: the time of its last
 * consumer, or END for OUTPUT, PARAM and sinks (nothing consumes it, SINK.1). A view
 * has no memory: its end extends its root's (VIEW.1). Intervals are inclusive, so a
 * node and the sources it reads are live together.
 *
 * In place (INPLACE.1). An add/sub/mul node takes over the block of its first source
 * (argument order) that is placed by the planner (not a view, not external), neither
 * OUTPUT nor PARAM, has this node as its only consumer (one edge), no view, and the
 * node's dtype and shape: source and node become one block live over both intervals.
 *
 * Placement. Every block (a tensor, or an in-place chain) has an interval and a size
 * rounded up to the backend's alignment. Blocks are placed offline, greedy by size
 * (largest first; TFLite's "greedy by size" strategy): a block goes at the lowest
 * offset that no placed block live at the same time uses (first fit; on the bench
 * corpus first fit is within 2% of the bound where best fit, the smallest gap, was up
 * to 14% above it: bench/README.md). Two blocks share bytes only when their
 * intervals are disjoint, so OUTPUT, PARAM and sink blocks (live to END) share with
 * nothing placed after them (OUT.2), and all leaves (live at time 0) are at distinct
 * memory (INPUT.1). The peak is at most the sum of the sizes (PLAN.3). Placing a
 * block scans the placed blocks in offset order up to the first gap that fits: the
 * cost grows with the number of blocks live together (bench/README.md).
 * TSMR_PLAN_NONE: one buffer per placed tensor, nothing shared, nothing in place.
 */
#define _POSIX_C_SOURCE 200809L
#include "planner.h"

#include <string.h>
#include <time.h>

#include "internal.h"

#define PLAN_NO_BLOCK UINT32_MAX

/* Placed by the planner: an in-graph leaf or non-view node. */
static int placeable(const struct tsmr__gnode *x) {
  return x->op != TSMR_G_EXT && !tsmr__gnode_is_view(x);
}

static int same_layout(const struct tsmr__gnode *a, const struct tsmr__gnode *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct block {
  uint64_t size, off;
  int64_t start, end;
  uint32_t id; /* its index in plan_ws.bl (a copy in plan_ws.sorted knows its own) */
};

/* The planner's scratch for one call, all owned by it; per node index (tm .. blk),
 * per block (bl, sorted, by_off: S + 1 each) or per time (diff). */
struct plan_ws {
  int64_t *tm, *start, *end; /* computed at, live from, live to */
  uint32_t *cons, *nviews;   /* consumer edges; views of a root */
  uint32_t *blk;             /* a tensor's block, or PLAN_NO_BLOCK */
  struct block *bl, *sorted; /* blocks; a copy sorted for placement */
  uint32_t *by_off;
  int64_t *diff;
  uint32_t nb;               /* blocks made */
};

void tsmr__plan_free(struct tsmr__plan *p) {
  tsmr__free(p->buf_sz);
  tsmr__free(p->placed);
  tsmr__free(p->buf);
  tsmr__free(p->off);
  memset(p, 0, sizeof *p);
}

/* ---- placement ------------------------------------------------------------------ */

/* Largest first; then earliest, then block index: a total order, so the plan does
 * not depend on the sort. */
static int cmp_size_desc(const void *a, const void *b) {
  const struct block *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

/* Where b goes among the placed blocks (sorted by offset, n of them): the lowest
 * offset whose bytes no placed block live at the same time as b uses (first fit).
 * Scanning in offset order stops at the first gap that fits. */
static uint64_t first_fit(const struct block *bl, const struct block *b,
                          const uint32_t *by_off, uint32_t n) {
  uint64_t cur = 0;
  for (uint32_t j = 0; j < n; j++) {
    const struct block *c = &bl[by_off[j]];
    if (c->end < b->start || c->start > b->end) continue; /* not live together */
    if (c->off >= cur + b->size) break;
    if (c->off + c->size > cur) cur = c->off + c->size;
  }
  return cur;
}

/* Inserts block k (placed) into by_off, kept sorted by offset; n: entries before. */
static void insert_by_off(const struct block *bl, uint32_t *by_off, uint32_t n,
                          uint32_t k) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (bl[by_off[mid]].off <= bl[k].off) lo = mid + 1;
    else hi = mid;
  }
  memmove(by_off + lo + 1, by_off + lo, (size_t)(n - lo) * sizeof *by_off);
  by_off[lo] = k;
}

/* Places the blocks largest first (TFLite's greedy by size), each at the lowest
 * offset free over its whole interval, and sets bl's offsets; RETURN the peak (buffer
 * bytes). sorted, by_off: scratch of nb entries each. */
static uint64_t place_reuse(struct block *bl, uint32_t nb, struct block *sorted,
                            uint32_t *by_off) {
  uint32_t n_placed = 0;
  uint64_t peak = 0;
  memcpy(sorted, bl, (size_t)nb * sizeof *sorted);
  qsort(sorted, nb, sizeof *sorted, cmp_size_desc);
  for (uint32_t i = 0; i < nb; i++) {
    struct block *b = &sorted[i];
    b->off = 0;
    if (b->size != 0) {
      b->off = first_fit(sorted, b, by_off, n_placed);
      if (b->off + b->size > peak) peak = b->off + b->size;
      insert_by_off(sorted, by_off, n_placed++, i);
    }
    bl[b->id].off = b->off;
  }
  return peak;
}

/* ---- liveness and blocks -------------------------------------------------------- */

static void liveness(const struct tsmr__plan_input *in, struct plan_ws *w, int64_t END) {
  const struct tsmr__gnode *n = in->n;
  uint32_t S = in->n_seq;
  int64_t *tm = w->tm, *end = w->end;
  uint32_t *cons = w->cons;
  /* times, consumers, views */
  for (uint32_t i = 0; i < S; i++) {
    uint32_t x = in->seq[i];
    tm[x] = tsmr__gnode_is_leaf(&n[x]) ? 0 : n[x].order + 1;
    w->blk[x] = PLAN_NO_BLOCK;
    if (n[x].op != TSMR_OP_SVD || x == n[x].sib0) /* an SVD reads its source once */
      for (int j = 0; j < n[x].n_src; j++) cons[n[x].src[j]]++;
    if (tsmr__gnode_is_view(&n[x])) w->nviews[n[x].root]++;
  }
  /* ends: last consumer; END when pinned or a sink; views extend their root */
  for (uint32_t i = 0; i < S; i++) end[in->seq[i]] = tm[in->seq[i]];
  for (uint32_t i = 0; i < S; i++) {
    uint32_t x = in->seq[i];
    for (int j = 0; j < n[x].n_src; j++)
      if (end[n[x].src[j]] < tm[x]) end[n[x].src[j]] = tm[x];
  }
  for (uint32_t i = 0; i < S; i++) {
    uint32_t x = in->seq[i];
    if ((n[x].flags & (TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM)) || cons[x] == 0) end[x] = END;
  }
  for (uint32_t i = 0; i < S; i++) {
    uint32_t x = in->seq[i];
    if (tsmr__gnode_is_view(&n[x]) && end[n[x].root] < end[x]) end[n[x].root] = end[x];
  }
  for (uint32_t i = 0; i < S; i++) w->start[in->seq[i]] = tm[in->seq[i]];
}

/* The block node x (an add/sub/mul) takes over from a source (INPLACE.1), or
 * PLAN_NO_BLOCK. */
static uint32_t inplace_block(const struct tsmr__gnode *n, const struct plan_ws *w,
                              uint32_t x) {
  if (n[x].op != TSMR_OP_ADD && n[x].op != TSMR_OP_SUB && n[x].op != TSMR_OP_MUL)
    return PLAN_NO_BLOCK;
  for (int j = 0; j < n[x].n_src; j++) {
    uint32_t s = n[x].src[j];
    const struct tsmr__gnode *sn = &n[s];
    if (!placeable(sn) || (sn->flags & (TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM)) ||
        w->cons[s] != 1 || w->nviews[s] != 0 || !same_layout(sn, &n[x]) ||
        w->blk[s] == PLAN_NO_BLOCK || w->end[s] != w->tm[x])
      continue;
    return w->blk[s];
  }
  return PLAN_NO_BLOCK;
}

/* Blocks, in execution order; in-place chains share one (INPLACE.1). RETURN the sum
 * of the placed tensors' aligned sizes. */
static uint64_t make_blocks(const struct tsmr__plan_input *in, int mode, size_t align,
                            struct plan_ws *w, struct tsmr__plan *p) {
  const struct tsmr__gnode *n = in->n;
  uint64_t naive = 0;
  w->nb = 0;
  for (uint32_t i = 0; i < in->n_seq; i++) {
    uint32_t x = in->seq[i];
    if (!placeable(&n[x])) continue;
    uint64_t sz = ((uint64_t)n[x].nbytes + align - 1) & ~(uint64_t)(align - 1);
    naive += sz;
    uint32_t shared = mode == TSMR_PLAN_REUSE ? inplace_block(n, w, x) : PLAN_NO_BLOCK;
    if (shared != PLAN_NO_BLOCK) {
      w->blk[x] = shared;
      if (w->bl[shared].end < w->end[x]) w->bl[shared].end = w->end[x];
      p->st.n_inplace++;
      continue;
    }
    struct block *b = &w->bl[w->nb];
    b->size = sz;
    b->start = w->start[x];
    b->end = w->end[x];
    b->off = 0;
    b->id = w->nb;
    w->blk[x] = w->nb++;
  }
  return naive;
}

/* The liveness lower bound of the blocks: the largest sum of sizes live together. */
static int64_t lower_bound(const struct plan_ws *w, int64_t END) {
  memset(w->diff, 0, ((size_t)END + 2) * sizeof *w->diff);
  for (uint32_t b = 0; b < w->nb; b++) {
    w->diff[w->bl[b].start] += (int64_t)w->bl[b].size;
    w->diff[w->bl[b].end + 1] -= (int64_t)w->bl[b].size;
  }
  int64_t run = 0, bound = 0;
  for (int64_t t = 0; t <= END; t++) {
    run += w->diff[t];
    if (run > bound) bound = run;
  }
  return bound;
}

/* ---- the plan ------------------------------------------------------------------- */

/* Allocates w's arrays and p's per-node arrays; RETURN 0 or TSMR_ENOMEM. */
static int plan_alloc(struct plan_ws *w, struct tsmr__plan *p, uint32_t N, uint32_t S,
                      int64_t END) {
  memset(w, 0, sizeof *w);
  w->tm = tsmr__alloc(((size_t)N + 1) * sizeof *w->tm);
  w->start = tsmr__alloc(((size_t)N + 1) * sizeof *w->start);
  w->end = tsmr__alloc(((size_t)N + 1) * sizeof *w->end);
  w->cons = tsmr__alloc(((size_t)N + 1) * sizeof *w->cons);
  w->nviews = tsmr__alloc(((size_t)N + 1) * sizeof *w->nviews);
  w->blk = tsmr__alloc(((size_t)N + 1) * sizeof *w->blk);
  w->bl = tsmr__alloc(((size_t)S + 1) * sizeof *w->bl);
  w->sorted = tsmr__alloc(((size_t)S + 1) * sizeof *w->sorted);
  w->by_off = tsmr__alloc(((size_t)S + 1) * sizeof *w->by_off);
  w->diff = tsmr__alloc(((size_t)END + 2) * sizeof *w->diff);
  p->placed = tsmr__alloc((size_t)N + 1);
  p->buf = tsmr__alloc(((size_t)N + 1) * sizeof *p->buf);
  p->off = tsmr__alloc(((size_t)N + 1) * sizeof *p->off);
  if (!w->tm || !w->start || !w->end || !w->cons || !w->nviews || !w->blk || !w->bl ||
      !w->sorted || !w->by_off || !w->diff || !p->placed || !p->buf || !p->off)
    return TSMR_ENOMEM;
  memset(w->cons, 0, (size_t)N * sizeof *w->cons);
  memset(w->nviews, 0, (size_t)N * sizeof *w->nviews);
  memset(p->placed, 0, (size_t)N + 1);
  return 0;
}

static void plan_ws_free(struct plan_ws *w) {
  tsmr__free(w->tm);
  tsmr__free(w->start);
  tsmr__free(w->end);
  tsmr__free(w->cons);
  tsmr__free(w->nviews);
  tsmr__free(w->blk);
  tsmr__free(w->bl);
  tsmr__free(w->sorted);
  tsmr__free(w->by_off);
  tsmr__free(w->diff);
}

/* Buffers and per-node places from the placed blocks. RETURN 0 or TSMR_ENOMEM. */
static int plan_fill(const struct tsmr__plan_input *in, int mode, const struct plan_ws *w,
                     uint64_t total, struct tsmr__plan *p) {
  int reuse = mode == TSMR_PLAN_REUSE;
  p->n_bufs = reuse ? 1 : w->nb;
  p->buf_sz = tsmr__alloc(((size_t)p->n_bufs + 1) * sizeof *p->buf_sz);
  if (!p->buf_sz) return TSMR_ENOMEM;
  if (reuse) p->buf_sz[0] = total;
  else
    for (uint32_t b = 0; b < w->nb; b++) p->buf_sz[b] = w->bl[b].size;
  for (uint32_t i = 0; i < in->n_seq; i++) {
    uint32_t x = in->seq[i];
    if (w->blk[x] == PLAN_NO_BLOCK) continue;
    p->placed[x] = 1;
    p->buf[x] = reuse ? 0 : w->blk[x];
    p->off[x] = reuse ? w->bl[w->blk[x]].off : 0;
  }
  return 0;
}

int tsmr__plan_compute(const struct tsmr__plan_input *in, int mode, size_t align,
                       struct tsmr__plan *p) {
  uint64_t t0 = now_ns();
  uint32_t S = in->n_seq;
  int64_t END = in->n_exec + 1;
  struct plan_ws w;
  memset(p, 0, sizeof *p);
  int rc = plan_alloc(&w, p, in->n_nodes, S, END);
  if (rc == 0) {
    liveness(in, &w, END);
    uint64_t naive = make_blocks(in, mode, align, &w, p);
    int64_t bound = lower_bound(&w, END);
    uint64_t total = 0;
    if (mode == TSMR_PLAN_REUSE) total = place_reuse(w.bl, w.nb, w.sorted, w.by_off);
    else
      for (uint32_t b = 0; b < w.nb; b++) total += w.bl[b].size;
    rc = plan_fill(in, mode, &w, total, p);
    p->st.n_tensors = S;
    p->st.n_nodes = (uint64_t)in->n_exec;
    p->st.planned_bytes = total;
    p->st.bound_bytes = (uint64_t)bound;
    p->st.naive_bytes = naive;
  }
  plan_ws_free(&w);
  if (rc) tsmr__plan_free(p);
  else p->st.plan_ns = now_ns() - t0;
  return rc;
}
