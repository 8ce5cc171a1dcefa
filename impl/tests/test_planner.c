/*
 * impl/tests/test_planner.c: unit tests of the graph memory planner (impl/src/planner.c)
 * on hand-made graphs and random DAGs, against a liveness model of its own: every two
 * placed tensors whose live intervals overlap have disjoint bytes (GRAPH.REUSE.1),
 * except a node computed in place over its source (GRAPH.INPLACE.1, never over an
 * OUTPUT or PARAM source); leaves are at distinct memory (GRAPH.INPUT.1); pinned
 * tensors live to the end (GRAPH.OUT.2, GRAPH.SINK.1); views extend their root
 * (GRAPH.VIEW.1); the peak is at least the liveness lower bound and at most the sum
 * of the sizes (GRAPH.PLAN.3); ENOMEM at any allocation leaves no plan. The placement
 * passes alone (tsmr__plan_place): the online passes' free ranges merging with
 * either neighbour and with the top of the buffer, best fit taking an exact fit, many
 * blocks (the online passes only, as on graphs too large for the offline one), and the
 * same offsets whether the free ranges are in the flat array or in the treaps. In
 * place: the last reader of a source with earlier readers takes it over. graph.c's
 * lazy zeros: what reads as zeros without a fill at planning.
 * Run: $(B)/bin/test-planner [seed]; prints "# planner: N checks, 0 failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"
#include "planner.h"
#include "tsmref_test.h"

#define MAX_NODES 64

/* A graph under test: nodes in creation order, which is also the execution order. */
struct tgraph {
  struct tsmr__gnode n[MAX_NODES];
  uint32_t seq[MAX_NODES];
  uint32_t count;
  int64_t n_exec;
};

/* The sources of a node (the op table gives how many it reads). */
#define SRC(a, b) ((const uint32_t[2]){(a), (b)})

static uint32_t add_node(struct tgraph *g, int op, int64_t rows, int64_t cols,
                         const uint32_t *src) {
  const struct tsmr__op_def *d = tsmr__op_def(op);
  uint32_t a = src[0], b = src[1];
  int n_src = d ? d->arity : 0; /* a leaf: none */
  uint32_t x = g->count++;
  struct tsmr__gnode *nd = &g->n[x];
  memset(nd, 0, sizeof *nd);
  nd->op = op;
  nd->dtype = TSMR_F32;
  nd->ndim = 2;
  nd->shape[0] = rows;
  nd->shape[1] = cols;
  nd->numel = rows * cols;
  nd->nbytes = (size_t)nd->numel * 4;
  nd->src[0] = a;
  nd->src[1] = b;
  nd->n_src = n_src;
  nd->root = op == TSMR_OP_RESHAPE ? g->n[a].root : x;
  nd->sib0 = x;
  nd->in_graph = 1;
  nd->order = tsmr__gnode_is_leaf(nd) ? -1 : g->n_exec++;
  g->seq[x] = x;
  return x;
}

static uint32_t leaf(struct tgraph *g, int64_t rows, int64_t cols) {
  return add_node(g, TSMR_G_LEAF, rows, cols, SRC(0, 0));
}

/* FLAG.1: an OUTPUT view pins its root too. */
static void flag(struct tgraph *g, uint32_t x, uint32_t flags) {
  g->n[x].flags |= flags;
  if (flags & TSMR_GRAPH_OUTPUT) g->n[g->n[x].root].flags |= TSMR_GRAPH_OUTPUT;
}

static int plan(const struct tgraph *g, int mode, struct tsmr__plan *p) {
  struct tsmr__plan_input in = {g->n, g->count, g->seq, g->count, g->n_exec};
  return tsmr__plan_compute(&in, mode, 16, p);
}

/* The model's live interval of every tensor; views pass theirs to the root. */
static void model_liveness(const struct tgraph *g, int64_t *start, int64_t *end) {
  int64_t END = g->n_exec + 1;
  int cons[MAX_NODES] = {0};
  for (uint32_t x = 0; x < g->count; x++) {
    start[x] = end[x] = tsmr__gnode_is_leaf(&g->n[x]) ? 0 : g->n[x].order + 1;
    for (int j = 0; j < g->n[x].n_src; j++) cons[g->n[x].src[j]]++;
  }
  for (uint32_t x = 0; x < g->count; x++)
    for (int j = 0; j < g->n[x].n_src; j++)
      if (end[g->n[x].src[j]] < start[x]) end[g->n[x].src[j]] = start[x];
  for (uint32_t x = 0; x < g->count; x++)
    if ((g->n[x].flags & (TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM)) || !cons[x]) end[x] = END;
  for (uint32_t x = g->count; x-- > 0;) {
    uint32_t r = g->n[x].root;
    if (r != x && end[r] < end[x]) end[r] = end[x];
  }
}

/* x computed in place over s: an elementwise node over a source whose life ends at
 * x, neither OUTPUT nor PARAM (the only overlap allowed to share bytes). */
static int inplace_pair(const struct tgraph *g, const int64_t *end, uint32_t s,
                        uint32_t x) {
  const struct tsmr__gnode *xn = &g->n[x];
  int elementwise = xn->op == TSMR_OP_ADD || xn->op == TSMR_OP_SUB || xn->op == TSMR_OP_MUL;
  int is_src = xn->n_src > 0 && (xn->src[0] == s || (xn->n_src > 1 && xn->src[1] == s));
  int pinned = g->n[s].flags & (TSMR_GRAPH_OUTPUT | TSMR_GRAPH_PARAM);
  return elementwise && is_src && !pinned && end[s] == xn->order + 1;
}

static int bytes_overlap(const struct tsmr__plan *p, const struct tgraph *g, uint32_t a,
                         uint32_t b) {
  if (p->buf[a] != p->buf[b] || !g->n[a].nbytes || !g->n[b].nbytes) return 0;
  return p->off[a] < p->off[b] + g->n[b].nbytes && p->off[b] < p->off[a] + g->n[a].nbytes;
}

/* Every rule the model can check on plan p of g. */
static void check_plan(const struct tgraph *g, int mode, const struct tsmr__plan *p,
                       const char *what) {
  int64_t start[MAX_NODES], end[MAX_NODES];
  model_liveness(g, start, end);
  uint64_t sum = 0;
  for (uint32_t x = 0; x < g->count; x++) {
    int placeable = g->n[x].op != TSMR_OP_RESHAPE;
    CHECK(p->placed[x] == placeable, "%s: node %u placed %d", what, x, p->placed[x]);
    if (placeable) sum += (g->n[x].nbytes + 15) & ~(uint64_t)15;
    if (!placeable) continue;
    CHECK(p->off[x] + g->n[x].nbytes <= p->buf_sz[p->buf[x]], "%s: node %u past its buffer",
          what, x);
    for (uint32_t y = 0; y < x; y++) {
      if (!p->placed[y] || !bytes_overlap(p, g, x, y)) continue;
      int live_together = start[x] <= end[y] && start[y] <= end[x];
      int both_leaves = tsmr__gnode_is_leaf(&g->n[x]) && tsmr__gnode_is_leaf(&g->n[y]);
      CHECK(!both_leaves, "%s: leaves %u and %u share bytes", what, y, x);
      CHECK(!live_together || (mode == TSMR_PLAN_REUSE && inplace_pair(g, end, y, x)),
            "%s: %u [%lld,%lld] and %u [%lld,%lld] live together and share bytes", what,
            y, (long long)start[y], (long long)end[y], x, (long long)start[x],
            (long long)end[x]);
    }
  }
  CHECK(p->st.planned_bytes >= p->st.bound_bytes, "%s: planned %llu below the bound %llu",
        what, (unsigned long long)p->st.planned_bytes, (unsigned long long)p->st.bound_bytes);
  CHECK(p->st.planned_bytes <= sum && p->st.naive_bytes == sum, "%s: planned %llu, sum %llu",
        what, (unsigned long long)p->st.planned_bytes, (unsigned long long)sum);
  if (mode == TSMR_PLAN_NONE) CHECK(p->st.n_inplace == 0, "%s: in place without reuse", what);
}

static void plan_and_check(const struct tgraph *g, int mode, struct tsmr__plan *p,
                           const char *what) {
  int rc = plan(g, mode, p);
  CHECK(rc == 0, "%s: plan rc %d", what, rc);
  if (rc == 0) check_plan(g, mode, p, what);
}

/* b = a + c; d = b * c: b takes a's block and d takes b's (INPLACE.1). */
static void test_inplace_chain(void) {
  struct tgraph g = {0};
  struct tsmr__plan p;
  uint32_t a = leaf(&g, 4, 4), c = leaf(&g, 4, 4);
  uint32_t b = add_node(&g, TSMR_OP_ADD, 4, 4, SRC(a, c));
  uint32_t d = add_node(&g, TSMR_OP_MUL, 4, 4, SRC(b, c));
  flag(&g, d, TSMR_GRAPH_OUTPUT);
  plan_and_check(&g, TSMR_PLAN_REUSE, &p, "inplace chain");
  CHECK(p.st.n_inplace == 2, "n_inplace %llu", (unsigned long long)p.st.n_inplace);
  CHECK(p.off[a] == p.off[b] && p.off[b] == p.off[d], "chain not in one block");
  CHECK(p.st.planned_bytes == p.st.bound_bytes, "chain above the bound");
  tsmr__plan_free(&p);
  plan_and_check(&g, TSMR_PLAN_NONE, &p, "inplace chain, none");
  CHECK(p.n_bufs == 4, "PLAN_NONE: %u buffers", p.n_bufs);
  tsmr__plan_free(&p);
}

/* The last reader of a source takes it over though an earlier node read it too
 * (INPLACE.1: consumers before it may exist, as ggml_gallocr does): t = a + c,
 * u = t - c, v = t * u; u is c's last reader and takes c over, v is t's and takes t
 * over, and u, an earlier reader of t, does not. */
static void test_inplace_last_reader(void) {
  struct tgraph g = {0};
  struct tsmr__plan p;
  uint32_t a = leaf(&g, 4, 4), c = leaf(&g, 4, 4);
  uint32_t t = add_node(&g, TSMR_OP_ADD, 4, 4, SRC(a, c));
  uint32_t u = add_node(&g, TSMR_OP_SUB, 4, 4, SRC(t, c));
  uint32_t v = add_node(&g, TSMR_OP_MUL, 4, 4, SRC(t, u));
  flag(&g, v, TSMR_GRAPH_OUTPUT);
  plan_and_check(&g, TSMR_PLAN_REUSE, &p, "last reader in place");
  CHECK(p.off[u] == p.off[c] && p.off[v] == p.off[t] && p.off[t] == p.off[a],
        "last readers not in place: a %llu c %llu t %llu u %llu v %llu",
        (unsigned long long)p.off[a], (unsigned long long)p.off[c],
        (unsigned long long)p.off[t], (unsigned long long)p.off[u],
        (unsigned long long)p.off[v]);
  CHECK(p.st.n_inplace == 3, "n_inplace %llu", (unsigned long long)p.st.n_inplace);
  CHECK(!bytes_overlap(&p, &g, t, u), "an earlier reader took its source over");
  tsmr__plan_free(&p);
}

/* No node takes over a pinned source, a source with two consumers, a viewed source or
 * a source of another shape. */
static void test_inplace_refused(void) {
  static const uint32_t pins[] = {TSMR_GRAPH_OUTPUT, TSMR_GRAPH_PARAM};
  for (int k = 0; k < 2; k++) {
    struct tgraph g = {0};
    struct tsmr__plan p;
    uint32_t a = leaf(&g, 4, 4), c = leaf(&g, 4, 4);
    flag(&g, a, pins[k]);
    flag(&g, c, pins[k]);
    uint32_t b = add_node(&g, TSMR_OP_ADD, 4, 4, SRC(a, c));
    flag(&g, b, TSMR_GRAPH_OUTPUT);
    plan_and_check(&g, TSMR_PLAN_REUSE, &p, "pinned sources");
    CHECK(p.st.n_inplace == 0, "in place over a pinned source (%u)", pins[k]);
    tsmr__plan_free(&p);
  }
  struct tgraph g = {0};
  struct tsmr__plan p;
  uint32_t a = leaf(&g, 4, 4), c = leaf(&g, 2, 8);
  uint32_t v = add_node(&g, TSMR_OP_RESHAPE, 2, 8, SRC(a, 0));
  uint32_t b = add_node(&g, TSMR_OP_ADD, 4, 4, SRC(a, a));   /* two edges from a */
  uint32_t e = add_node(&g, TSMR_OP_SUB, 2, 8, SRC(v, c));   /* c: other shape than b */
  uint32_t f = add_node(&g, TSMR_OP_MUL, 4, 4, SRC(b, b));
  flag(&g, e, TSMR_GRAPH_OUTPUT);
  flag(&g, f, TSMR_GRAPH_OUTPUT);
  plan_and_check(&g, TSMR_PLAN_REUSE, &p, "refused in place");
  CHECK(p.off[b] != p.off[a] || p.buf[b] != p.buf[a], "b in place over a viewed source");
  tsmr__plan_free(&p);
}

/* Leaves are live together from time 0; a pinned output is never reused. */
static void test_leaves_and_outputs(void) {
  struct tgraph g = {0};
  struct tsmr__plan p;
  uint32_t l[4];
  for (int i = 0; i < 4; i++) l[i] = leaf(&g, 8, 1 + i);
  uint32_t m = add_node(&g, TSMR_OP_MATMUL, 8, 8, SRC(l[0], l[0]));
  flag(&g, m, TSMR_GRAPH_OUTPUT);
  uint32_t s = add_node(&g, TSMR_OP_ADD, 8, 8, SRC(m, m));
  uint32_t t = add_node(&g, TSMR_OP_ADD, 8, 8, SRC(s, s));
  flag(&g, t, TSMR_GRAPH_OUTPUT);
  plan_and_check(&g, TSMR_PLAN_REUSE, &p, "leaves and outputs");
  CHECK(!bytes_overlap(&p, &g, m, t) && !bytes_overlap(&p, &g, m, s), "output m reused");
  tsmr__plan_free(&p);
}

/* A view keeps its root alive until the view's last consumer. */
static void test_view_extends_root(void) {
  struct tgraph g = {0};
  struct tsmr__plan p;
  uint32_t a = leaf(&g, 4, 4);
  uint32_t b = add_node(&g, TSMR_OP_ADD, 4, 4, SRC(a, a));
  uint32_t v = add_node(&g, TSMR_OP_RESHAPE, 16, 1, SRC(b, 0));
  uint32_t c = add_node(&g, TSMR_OP_MUL, 4, 4, SRC(a, a));
  uint32_t d = add_node(&g, TSMR_OP_ADD, 4, 4, SRC(c, c));
  uint32_t e = add_node(&g, TSMR_OP_ADD, 16, 1, SRC(v, v));
  flag(&g, d, TSMR_GRAPH_OUTPUT);
  flag(&g, e, TSMR_GRAPH_OUTPUT);
  plan_and_check(&g, TSMR_PLAN_REUSE, &p, "view extends root");
  CHECK(!bytes_overlap(&p, &g, b, c) && !bytes_overlap(&p, &g, b, d), "root of a view reused");
  tsmr__plan_free(&p);
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

/* A random DAG: leaves, then elementwise, matmul, sum and reshape nodes over earlier
 * tensors, random pins; shapes from a small set so that layouts sometimes match. */
static void random_graph(struct tgraph *g) {
  static const int64_t dims[] = {1, 2, 3, 4};
  static const int ops[] = {TSMR_OP_ADD, TSMR_OP_SUB, TSMR_OP_MUL, TSMR_OP_MATMUL,
                            TSMR_OP_SUM, TSMR_OP_RESHAPE};
  memset(g, 0, sizeof *g);
  uint32_t n_leaves = 1 + rnd(5), total = n_leaves + 1 + rnd(MAX_NODES - 6);
  for (uint32_t i = 0; i < n_leaves; i++) { /* one rnd() per statement: same graphs */
    int64_t rows = dims[rnd(4)];                /* whatever the compiler's argument order */
    leaf(g, rows, dims[rnd(4)]);
  }
  while (g->count < total) {
    int op = ops[rnd(6)];
    uint32_t a = rnd(g->count);
    uint32_t b = rnd(g->count);
    int64_t r = g->n[a].shape[0], c = g->n[a].shape[1];
    if (op == TSMR_OP_MATMUL) c = g->n[b].shape[1];
    if (op == TSMR_OP_SUM) r = c = 1;
    if (op == TSMR_OP_RESHAPE) r = r * c, c = 1;
    uint32_t x = add_node(g, op, r, c, SRC(a, b));
    if (rnd(6) == 0) flag(g, x, TSMR_GRAPH_OUTPUT);
  }
  for (uint32_t x = 0; x < n_leaves; x++)
    if (rnd(4) == 0) flag(g, x, TSMR_GRAPH_PARAM);
}

static void test_random(uint64_t seed, int rounds) {
  static struct tgraph g;
  rng_state = seed;
  for (int i = 0; i < rounds; i++) {
    struct tsmr__plan p;
    char what[64];
    random_graph(&g);
    for (int mode = TSMR_PLAN_REUSE; mode <= TSMR_PLAN_NONE; mode++) {
      snprintf(what, sizeof what, "random graph %d (seed %llu), mode %d", i,
               (unsigned long long)seed, mode);
      plan_and_check(&g, mode, &p, what);
      tsmr__plan_free(&p);
    }
  }
}

/* ERR.ATOMIC.1: a failing allocation gives ENOMEM and an empty plan, at every k. */
static void test_enomem(void) {
  static struct tgraph g;
  rng_state = 7;
  random_graph(&g);
  for (uint64_t k = 1;; k++) {
    struct tsmr__plan p;
    tsmr_test_alloc_fail_nth(k);
    int rc = plan(&g, TSMR_PLAN_REUSE, &p);
    int fired = tsmr_test_alloc_fail_left() == 0;
    tsmr_test_alloc_fail_nth(0);
    if (!fired) {
      CHECK(rc == 0, "rc %d with no failed allocation", rc);
      tsmr__plan_free(&p);
      break;
    }
    CHECK(rc == TSMR_ENOMEM && !p.buf_sz && !p.placed && !p.buf && !p.off,
          "allocation %llu failed: rc %d, plan left", (unsigned long long)k, rc);
  }
}

/* ---- the placement passes ------------------------------------------------------- */

/* Places n blocks by pass: RETURN the peak; off: OUT. */
static uint64_t place(uint32_t n, const uint64_t *size, const int64_t *start,
                      const int64_t *end, int64_t END, int pass, uint64_t *off) {
  uint64_t peak = 0;
  int rc = tsmr__plan_place(n, size, start, end, END, pass, off, &peak);
  CHECK(rc == 0, "place rc %d", rc);
  return peak;
}

/* No two blocks live together share bytes; every block is under the peak; the peak
 * is at least the liveness bound. RETURN how many pairs overlap. */
static int check_placement(uint32_t n, const uint64_t *size, const int64_t *start,
                           const int64_t *end, int64_t END, const uint64_t *off,
                           uint64_t peak, const char *what) {
  int bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    bad += off[i] + size[i] > peak;
    for (uint32_t j = i + 1; j < n; j++)
      if (size[i] && size[j] && start[i] <= end[j] && start[j] <= end[i] &&
          off[i] < off[j] + size[j] && off[j] < off[i] + size[i])
        bad++;
  }
  uint64_t bound = 0;
  for (int64_t t = 0; t <= END; t++) {
    uint64_t live = 0;
    for (uint32_t i = 0; i < n; i++) live += start[i] <= t && t <= end[i] ? size[i] : 0;
    if (live > bound) bound = live;
  }
  CHECK(bad == 0 && peak >= bound, "%s: %d overlaps, peak %llu, bound %llu", what, bad,
        (unsigned long long)peak, (unsigned long long)bound);
  return bad;
}

/* Ranges given back merge: two freed neighbours into one range a larger block takes
 * whole; a block freed between two free ranges joins both; a block freed at the top
 * of the buffer, and the free range below it, go back to the top. Forward and
 * mirrored (the same scenario with the time axis mirrored). */
static void test_online_merge(void) {
  uint64_t off[8];
  for (int mirrored = 0; mirrored < 2; mirrored++) {
    int pass = mirrored ? TSMR_PLACE_MIRRORED : TSMR_PLACE_FORWARD;
    /* a, b freed at 2 merge: d (their size together) takes both at 0 */
    { uint64_t sz[] = {32, 32, 32, 64};
      int64_t s[] = {0, 0, 0, 2}, e[] = {1, 1, 5, 3}, E = 5;
      int64_t ms[4], me[4];
      for (int i = 0; i < 4; i++) ms[i] = mirrored ? E - e[i] : s[i], me[i] = mirrored ? E - s[i] : e[i];
      uint64_t peak = place(4, sz, ms, me, E, pass, off);
      check_placement(4, sz, ms, me, E, off, peak, "merge two");
      CHECK(peak == 96 && off[3] == 0, "merge two (mirrored %d): peak %llu, d at %llu",
            mirrored, (unsigned long long)peak, (unsigned long long)off[3]); }
    /* a and c freed first, then b between them: one range of 96 for d */
    { uint64_t sz[] = {32, 32, 32, 32, 96};
      int64_t s[] = {0, 0, 0, 0, 3}, e[] = {1, 2, 1, 9, 4}, E = 9;
      int64_t ms[5], me[5];
      for (int i = 0; i < 5; i++) ms[i] = mirrored ? E - e[i] : s[i], me[i] = mirrored ? E - s[i] : e[i];
      uint64_t peak = place(5, sz, ms, me, E, pass, off);
      check_placement(5, sz, ms, me, E, off, peak, "merge both sides");
      CHECK(peak == 128 && off[4] == 0, "merge both sides (mirrored %d): peak %llu, d at %llu",
            mirrored, (unsigned long long)peak, (unsigned long long)off[4]); }
    /* b at the top, then c above it: both go back to the top, d starts at 32 */
    { uint64_t sz[] = {32, 32, 32, 96};
      int64_t s[] = {0, 1, 1, 3}, e[] = {9, 1, 2, 4}, E = 9;
      int64_t ms[4], me[4];
      for (int i = 0; i < 4; i++) ms[i] = mirrored ? E - e[i] : s[i], me[i] = mirrored ? E - s[i] : e[i];
      uint64_t peak = place(4, sz, ms, me, E, pass, off);
      check_placement(4, sz, ms, me, E, off, peak, "merge at the top");
      CHECK(peak == 128 && off[3] == 32, "merge at the top (mirrored %d): peak %llu, d at %llu",
            mirrored, (unsigned long long)peak, (unsigned long long)off[3]); }
  }
}

/* Best fit: of a free range of 64 and one of 32, a block of 32 takes the 32 (an exact
 * fit, though higher), and a block of 64 then the 64; nothing goes to the top. */
static void test_online_exact_fit(void) {
  uint64_t off[6], sz[] = {64, 32, 32, 32, 32, 64};
  int64_t s[] = {0, 0, 0, 0, 2, 2}, e[] = {1, 9, 1, 9, 3, 3};
  uint64_t peak = place(6, sz, s, e, 9, TSMR_PLACE_FORWARD, off);
  check_placement(6, sz, s, e, 9, off, peak, "exact fit");
  CHECK(off[0] == 0 && off[2] == 96 && off[4] == 96 && off[5] == 0 && peak == 160,
        "exact fit: a %llu b %llu d %llu e %llu, peak %llu", (unsigned long long)off[0],
        (unsigned long long)off[2], (unsigned long long)off[4], (unsigned long long)off[5],
        (unsigned long long)peak);
}

/* Random blocks (sizes 0 to 4 KiB, intervals mostly short, some to the end): every
 * pass valid; the choice no worse than any pass; the same offsets on a second run. */
static void test_place_random(uint32_t n, int64_t END, uint64_t seed) {
  uint64_t *sz = malloc(n * sizeof *sz), *off = malloc(n * sizeof *off);
  uint64_t *off2 = malloc(n * sizeof *off2);
  int64_t *s = malloc(n * sizeof *s), *e = malloc(n * sizeof *e);
  if (!sz || !off || !off2 || !s || !e) {
    CHECK(0, "test_place_random: out of memory");
    goto done;
  }
  rng_state = seed;
  for (uint32_t i = 0; i < n; i++) {
    sz[i] = rnd(8) ? 16u * (1 + rnd(256)) : rnd(2) * 16u; /* some zero-sized */
    s[i] = rnd((uint32_t)END + 1);
    e[i] = rnd(5) ? s[i] + rnd(8) : END;
    if (e[i] > END) e[i] = END;
  }
  uint64_t best = UINT64_MAX;
  for (int pass = TSMR_PLACE_OFFLINE; pass <= TSMR_PLACE_MIRRORED; pass++) {
    char what[64];
    snprintf(what, sizeof what, "%u random blocks, pass %d", n, pass);
    uint64_t peak = place(n, sz, s, e, END, pass, off);
    if (n <= 4000) check_placement(n, sz, s, e, END, off, peak, what);
    if (peak < best) best = peak;
  }
  uint64_t peak = place(n, sz, s, e, END, TSMR_PLACE_CHOICE, off);
  uint64_t again = place(n, sz, s, e, END, TSMR_PLACE_CHOICE, off2);
  CHECK(peak == again && !memcmp(off, off2, n * sizeof *off), "%u blocks: not deterministic", n);
  CHECK(n > 256 || peak == best, "%u blocks: the choice %llu, the best pass %llu", n,
        (unsigned long long)peak, (unsigned long long)best);
done:
  free(sz), free(off), free(off2), free(s), free(e);
}

/* The online passes give the same offsets with the free ranges in the flat array (and
 * moved to the treaps past its 256) as in the treaps from the start: random blocks,
 * and 600 blocks of which every other one ends early, leaving 300 separate free ranges
 * that blocks of both sizes then fill or pass over. */
static void test_flat_and_trees(uint64_t seed) {
  enum { N = 3000 };
  static uint64_t sz[N], off[N], off2[N];
  static int64_t s[N], e[N];
  for (int round = 0; round < 12; round++) {
    uint32_t n = round < 11 ? 40u + (uint32_t)round * 290u : 900u;
    int64_t END = round < 11 ? (int64_t)n / 4 + 5 : 9;
    rng_state = seed + (uint64_t)round;
    for (uint32_t i = 0; i < n; i++) {
      if (round < 11) {
        sz[i] = rnd(8) ? 16u * (1 + rnd(64)) : rnd(2) * 16u;
        s[i] = rnd((uint32_t)END + 1);
        e[i] = rnd(5) ? s[i] + rnd(12) : END;
        if (e[i] > END) e[i] = END;
      } else { /* 600 of 16 bytes from 0, the even ones to 1; then 300 from 2 */
        sz[i] = i < 600 ? 16 : 16u * (1 + rnd(2));
        s[i] = i < 600 ? 0 : 2 + rnd(3);
        e[i] = i < 600 ? (i % 2 ? END : 1) : s[i] + rnd(3);
      }
    }
    for (int pass = TSMR_PLACE_FORWARD; pass <= TSMR_PLACE_MIRRORED; pass++) {
      char what[64];
      snprintf(what, sizeof what, "flat and trees, round %d, pass %d", round, pass);
      uint64_t peak = place(n, sz, s, e, END, pass, off);
      uint64_t peak2 = place(n, sz, s, e, END, pass | TSMR_PLACE_TREES, off2);
      CHECK(peak == peak2 && !memcmp(off, off2, n * sizeof *off), "%s: peaks %llu, %llu",
            what, (unsigned long long)peak, (unsigned long long)peak2);
      if (round == 0 || round == 11) check_placement(n, sz, s, e, END, off, peak, what);
    }
  }
  CHECK(tsmr__plan_place(0, NULL, NULL, NULL, 0, TSMR_PLACE_TREES | 7, off,
                         &(uint64_t){0}) == TSMR_EINVAL, "bad pass with TREES accepted");
}

/* Large counts: on graphs above 256 blocks only the online passes run; tens of
 * thousands of blocks with thousands of free ranges at once stay valid. */
static void test_place_large(void) {
  for (uint64_t seed = 1; seed <= 4; seed++) test_place_random(300 * (uint32_t)seed, 200, seed);
  test_place_random(3000, 3000, 11);
  uint64_t off[1];
  CHECK(tsmr__plan_place(1, (const uint64_t[]){16}, (const int64_t[]){3},
                         (const int64_t[]){2}, 5, TSMR_PLACE_CHOICE, off,
                         &(uint64_t){0}) == TSMR_EINVAL, "start after end accepted");
  CHECK(tsmr__plan_place(0, NULL, NULL, NULL, 0, 7, off, &(uint64_t){0}) == TSMR_EINVAL,
        "bad pass accepted");
  /* many: a 200000-block placement, checked by a sweep over time of each pass's plan */
  const uint32_t n = 200000;
  const int64_t END = 100000;
  uint64_t *sz = malloc(n * sizeof *sz), *o = malloc(n * sizeof *o);
  int64_t *s = malloc(n * sizeof *s), *e = malloc(n * sizeof *e);
  if (sz && o && s && e) {
    rng_state = 99;
    for (uint32_t i = 0; i < n; i++) {
      sz[i] = 16u * (1 + rnd(64));
      s[i] = (int64_t)i / 2;
      e[i] = rnd(50) ? s[i] + rnd(16) : END;
      if (e[i] > END) e[i] = END;
    }
    for (int pass = TSMR_PLACE_CHOICE; pass <= TSMR_PLACE_MIRRORED; pass++) {
      if (pass == TSMR_PLACE_OFFLINE) continue; /* O(n^2) */
      uint64_t peak = place(n, sz, s, e, END, pass, o);
      /* blocks starting at one time must not overlap any block live then: each pair
       * (i, j) of a window of blocks whose starts are close is checked */
      int bad = 0;
      for (uint32_t i = 0; i < n && bad < 5; i++) {
        bad += o[i] + sz[i] > peak;
        for (uint32_t j = i + 1; j < n && j < i + 64; j++)
          if (s[i] <= e[j] && s[j] <= e[i] && o[i] < o[j] + sz[j] && o[j] < o[i] + sz[i]) bad++;
      }
      CHECK(bad == 0, "200000 blocks, pass %d: %d overlaps", pass, bad);
    }
  } else {
    CHECK(0, "test_place_large: out of memory");
  }
  free(sz), free(o), free(s), free(e);
}

/* ---- lazy zeros (graph.c) ------------------------------------------------------- */

/* One graph of a = leaf, b = leaf (both [64] f32), c = a + b (in place over a),
 * d = sum(c), planned; a written with 64 times va. RETURN the graph. */
static tsmr_handle zeros_graph(tsmr_ctx *ctx, tsmr_handle root, float va, tsmr_handle *t) {
  struct tsmr_tensor_desc d = {TSMR_F32, 1, {64}};
  tsmr_handle g = 0;
  float v[64];
  CHECK(tsmr_graph_new(ctx, root, &g) == 0, "graph_new");
  CHECK(tsmr_graph_leaf(ctx, g, &d, &t[0]) == 0 && tsmr_graph_leaf(ctx, g, &d, &t[1]) == 0,
        "leaves");
  CHECK(tsmr_graph_op(ctx, g, TSMR_OP_ADD, t, 2, NULL, 0, &t[2], 1) == 0, "add");
  CHECK(tsmr_graph_op(ctx, g, TSMR_OP_SUM, &t[2], 1, NULL, 0, &t[3], 1) == 0, "sum");
  CHECK(tsmr_graph_expand(ctx, g, t[3]) == 0, "expand");
  CHECK(tsmr_graph_plan(ctx, g, TSMR_PLAN_REUSE) == 0, "plan");
  for (int i = 0; i < 64; i++) v[i] = va;
  CHECK(tsmr_graph_write(ctx, t[0], v, sizeof v) == 0, "write a");
  return g;
}

/* RETURN 1 when t reads n times v. */
static int reads(tsmr_ctx *ctx, tsmr_handle t, int n, float v) {
  float got[64];
  if (tsmr_graph_read(ctx, t, got, sizeof got)) return 0;
  for (int i = 0; i < n; i++)
    if (got[i] != v) return 0;
  return 1;
}

/* The buffers are not filled at planning, yet read as tsmref.h says: a graph like one
 * computed and released before it (its blocks back in the cpu backend's cache, holding
 * 7s and a sum) reads zeros for its unwritten leaf b and, before its first compute, for
 * its node d; c, in place over the written a, reads a's values, as over a zero-filled
 * buffer; a compute reads b as zeros; and a leaf added by an expand after the plan
 * reads zeros after the re-plan's compute. */
static void test_lazy_zeros(void) {
  tsmr_ctx *ctx = NULL;
  tsmr_handle root = 0, t[4], u[4];
  if (tsmr_ctx_open("cpu", &ctx) || tsmr_mgr_root(ctx, &root)) {
    CHECK(0, "lazy zeros: no cpu context");
    return;
  }
  tsmr_handle g = zeros_graph(ctx, root, 7, t);
  float v[64];
  for (int i = 0; i < 64; i++) v[i] = 7;
  CHECK(tsmr_graph_write(ctx, t[1], v, sizeof v) == 0, "write b");
  CHECK(tsmr_graph_compute(ctx, g) == 0 && reads(ctx, t[3], 1, 896), "first graph");
  CHECK(tsmr_graph_release(ctx, g) == 0, "release");
  g = zeros_graph(ctx, root, 3, u);
  struct tsmr_graph_place pa, pc, pd;
  CHECK(tsmr_graph_place(ctx, u[0], &pa) == 0 && tsmr_graph_place(ctx, u[2], &pc) == 0 &&
            tsmr_graph_place(ctx, u[3], &pd) == 0 && pa.offset == pc.offset &&
            pd.offset != pa.offset,
        "c not in place over a, or d over it");
  CHECK(reads(ctx, u[3], 1, 0), "a node read before the first compute is not zeros");
  CHECK(reads(ctx, u[1], 64, 0), "an unwritten leaf does not read zeros");
  CHECK(reads(ctx, u[2], 64, 3), "a node in place over a written leaf does not read it");
  CHECK(reads(ctx, u[0], 64, 3), "a written leaf lost its value");
  CHECK(tsmr_graph_compute(ctx, g) == 0 && reads(ctx, u[3], 1, 192), "compute over zeros");
  struct tsmr_tensor_desc d = {TSMR_F32, 1, {64}};
  tsmr_handle e, f;
  CHECK(tsmr_graph_leaf(ctx, g, &d, &e) == 0 &&
            tsmr_graph_op(ctx, g, TSMR_OP_ADD, (tsmr_handle[]){e, e}, 2, NULL, 0, &f, 1) ==
                0 &&
            tsmr_graph_expand(ctx, g, f) == 0 && tsmr_graph_compute(ctx, g) == 0,
        "expand and compute again");
  CHECK(reads(ctx, e, 64, 0) && reads(ctx, f, 64, 0), "the re-plan's new leaf is not zeros");
  CHECK(tsmr_graph_release(ctx, g) == 0, "release");
  tsmr_ctx_close(ctx);
}

int main(int argc, char **argv) {
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
  test_inplace_chain();
  test_inplace_refused();
  test_inplace_last_reader();
  test_leaves_and_outputs();
  test_view_extends_root();
  test_random(seed, 2000);
  test_enomem();
  test_online_merge();
  test_online_exact_fit();
  test_place_random(40, 30, seed);
  test_place_large();
  test_flat_and_trees(seed);
  test_lazy_zeros();
  printf("# planner: %d checks, %d failed\n", checks, failed);
  return failed ? 1 : 0;
}
