/*
 * bench/bench_graphs.c: the graph memory planner of libtsmref (spec/graphs.md,
 * GRAPH.REUSE.1, GRAPH.INPLACE.1, GRAPH.PLAN.3) on a corpus of graphs:
 *   - random DAGs of 100, 1000 and 5000 nodes, three of each, and one of 50000
 *     (elementwise ops on equal shapes, matmul, transpose, reshape views; sources mostly
 *     recent, some far back; every created tensor expanded, so unconsumed ones are
 *     sinks);
 *   - an MLP (4 layers, weights and biases PARAM), an attention block, and the SVD
 *     pipeline of the ggml seed (A -> svd -> U diag(S) Vt -> diff = sum(A - recon));
 *   - graphs shaped like real models: a transformer block (attention and a 4x MLP,
 *     both with residuals), a convolutional block (1x1 convolutions as matmuls over
 *     [pixels, channels], a bias, a square as activation, a residual), an MLP of 8
 *     residual layers, and a chain of 2000 elementwise ops.
 * For each graph: the reuse plan's bytes against the liveness lower bound (the largest
 * sum over the execution order of the sizes of the blocks live together; in-place
 * chains count once) and against no reuse, the in-place count, and planning time per
 * graph tensor (best of ROUNDS plans). The small graphs are also computed in both plan
 * modes and their sinks/outputs compared byte for byte (GRAPH.OUT.1).
 * With $BENCH_JSON set, the figures planner_peak_vs_bound_max / _mean (over the
 * corpus) and planner_time_growth_5000_vs_100 (mean ns per tensor of the 5000-node
 * DAGs over that of the 100-node ones) go there (bench_util.h).
 * --count-instructions N builds the six DAGs of that growth figure and runs one reuse
 * plan of each (the call its time is of) in bench_ir_plan_100 and bench_ir_plan_5000,
 * for callgrind to count (bench/count_instructions.sh; bench_util.h says how), and prints
 * the tensors each function planned ("bench_ir_ops FUNCTION COUNT"): bench/callgrind_ir.py
 * divides by them (planner_time_growth_5000_vs_100_instructions). N is checked, not used.
 * Usage: bench-graphs [device]   (default cpu)
 *        bench-graphs --count-instructions N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MAXT 65536

static tsmr_ctx *ctx;
static tsmr_handle root;

/* One graph under construction: its tensors, their shapes and consumer counts. */
struct bg {
  tsmr_handle g;
  int n;
  tsmr_handle t[MAXT];
  int64_t r[MAXT], c[MAXT];
  int leaf[MAXT];
  int used[MAXT];
};

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state % n);
}

static int add_leaf(struct bg *b, int64_t r, int64_t c, uint32_t flags) {
  struct tsmr_tensor_desc d = {TSMR_F32, 2, {r, c}};
  BENCH_CHECK(tsmr_graph_leaf(ctx, b->g, &d, &b->t[b->n]));
  if (flags) BENCH_CHECK(tsmr_graph_flag(ctx, b->t[b->n], flags));
  b->r[b->n] = r;
  b->c[b->n] = c;
  b->leaf[b->n] = 1;
  return b->n++;
}

/* A result's 2-d shape [r, c] (a sum's 0 x 0). */
struct dims {
  int64_t r, c;
};

static struct dims dims(int64_t r, int64_t c) {
  struct dims d = {r, c};
  return d;
}

/* Tensor x's shape, and its transpose's. */
static struct dims shape_of(const struct bg *b, int x) { return dims(b->r[x], b->c[x]); }
static struct dims transposed(const struct bg *b, int x) { return dims(b->c[x], b->r[x]); }

/* op of x (and y, or -1) giving a tensor of shape d (a reshape's target). */
static int add_op(struct bg *b, int op, int x, int y, struct dims d) {
  tsmr_handle s[2] = {b->t[x], y >= 0 ? b->t[y] : 0};
  int64_t shape[2] = {d.r, d.c};
  BENCH_CHECK(tsmr_graph_op(ctx, b->g, op, s, y >= 0 ? 2 : 1, shape,
                            op == TSMR_OP_RESHAPE ? 2 : 0, &b->t[b->n], 1));
  b->r[b->n] = d.r;
  b->c[b->n] = d.c;
  b->leaf[b->n] = 0;
  b->used[x]++;
  if (y >= 0) b->used[y]++;
  return b->n++;
}

/* A source: mostly among the last 12 tensors, sometimes anywhere. */
static int pick(const struct bg *b) {
  if (rnd(10) < 8) {
    int w = b->n < 12 ? b->n : 12;
    return b->n - 1 - (int)rnd((uint32_t)w);
  }
  return (int)rnd((uint32_t)b->n);
}

/* The extents of a random DAG's leaves. */
static const int64_t dag_extents[] = {16, 32, 64, 128};

/* A random DAG's elementwise op on x and a tensor of x's shape, when one turns up among
 * 24 picks; else a transpose of x. */
static void dag_elementwise(struct bg *b, int x) {
  int y = -1;
  for (int tries = 0; tries < 24 && y < 0; tries++) {
    int c = pick(b);
    if (c != x && b->r[c] == b->r[x] && b->c[c] == b->c[x]) y = c;
  }
  if (y >= 0) add_op(b, TSMR_OP_ADD + (int)rnd(3), x, y, shape_of(b, x));
  else add_op(b, TSMR_OP_TRANSPOSE, x, -1, transposed(b, x));
}

/* A random DAG's matmul [r, c] x [c, d]: the right operand a tensor of c rows when one
 * turns up among 24 picks, else a new PARAM leaf. */
static void dag_matmul(struct bg *b, int x) {
  int y = -1;
  for (int tries = 0; tries < 24 && y < 0; tries++) {
    int c = pick(b);
    if (b->r[c] == b->c[x]) y = c;
  }
  if (y < 0) y = add_leaf(b, b->c[x], dag_extents[rnd(4)], TSMR_GRAPH_PARAM);
  add_op(b, TSMR_OP_MATMUL, x, y, dims(b->r[x], b->c[y]));
}

static void random_dag(struct bg *b, int nodes) {
  const int64_t *ext = dag_extents;
  int nleaves = nodes / 8 + 2;
  for (int i = 0; i < nleaves; i++) {
    /* drawn in turn, columns first: as arguments C leaves their order to the compiler */
    uint32_t cols = rnd(4), rows = rnd(4);
    add_leaf(b, ext[rows], ext[cols], TSMR_GRAPH_INPUT);
  }
  for (int k = 0; k < nodes; k++) {
    int x = pick(b);
    uint32_t kind = rnd(100);
    if (kind < 45)
      dag_elementwise(b, x);
    else if (kind < 75)
      dag_matmul(b, x);
    else if (kind < 88)
      add_op(b, TSMR_OP_TRANSPOSE, x, -1, transposed(b, x));
    else
      add_op(b, TSMR_OP_RESHAPE, x, -1, transposed(b, x)); /* a view */
  }
  for (int i = 0; i < b->n; i++)
    if (!b->used[i]) BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[i]));
}

static void mlp(struct bg *b) {
  int h = add_leaf(b, 64, 256, TSMR_GRAPH_INPUT);
  for (int l = 0; l < 4; l++) {
    int w = add_leaf(b, 256, 256, TSMR_GRAPH_PARAM);
    int bias = add_leaf(b, 64, 256, TSMR_GRAPH_PARAM);
    int z = add_op(b, TSMR_OP_MATMUL, h, w, dims(64, 256));
    int a = add_op(b, TSMR_OP_ADD, z, bias, dims(64, 256));
    h = add_op(b, TSMR_OP_MUL, a, a, dims(64, 256)); /* a square as the nonlinearity */
  }
  int s = add_op(b, TSMR_OP_SUM, h, -1, dims(0, 0));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[s]));
}

/* One attention head with its output projection and a residual, over input x [T, D]:
 * RETURN the node of x + ((x Wq (x Wk)^T)^2 x Wv) Wo (a square for the softmax). */
static int attention_residual(struct bg *b, int x, int64_t T, int64_t D) {
  int wq = add_leaf(b, D, D, TSMR_GRAPH_PARAM), wk = add_leaf(b, D, D, TSMR_GRAPH_PARAM);
  int wv = add_leaf(b, D, D, TSMR_GRAPH_PARAM), wo = add_leaf(b, D, D, TSMR_GRAPH_PARAM);
  int q = add_op(b, TSMR_OP_MATMUL, x, wq, dims(T, D));
  int k = add_op(b, TSMR_OP_MATMUL, x, wk, dims(T, D));
  int v = add_op(b, TSMR_OP_MATMUL, x, wv, dims(T, D));
  int kt = add_op(b, TSMR_OP_TRANSPOSE, k, -1, dims(D, T));
  int s = add_op(b, TSMR_OP_MATMUL, q, kt, dims(T, T));
  int p = add_op(b, TSMR_OP_MUL, s, s, dims(T, T));
  int o = add_op(b, TSMR_OP_MATMUL, p, v, dims(T, D));
  int y = add_op(b, TSMR_OP_MATMUL, o, wo, dims(T, D));
  return add_op(b, TSMR_OP_ADD, y, x, dims(T, D));
}

static void attention(struct bg *b) {
  int res = attention_residual(b, add_leaf(b, 128, 64, TSMR_GRAPH_INPUT), 128, 64);
  BENCH_CHECK(tsmr_graph_flag(ctx, b->t[res], TSMR_GRAPH_OUTPUT));
  int out = add_op(b, TSMR_OP_SUM, res, -1, dims(0, 0));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[out]));
}

static void svd_pipeline(struct bg *b) {
  const int64_t m = 64, n = 48, k = 48;
  int a = add_leaf(b, m, n, TSMR_GRAPH_INPUT);
  tsmr_handle usv[3];
  BENCH_CHECK(tsmr_graph_op(ctx, b->g, TSMR_OP_SVD, &b->t[a], 1, NULL, 0, usv, 3));
  int64_t rs[3] = {m, k, k}, cs[3] = {k, 0, n};
  int idx[3];
  for (int i = 0; i < 3; i++) {
    idx[i] = b->n;
    b->t[b->n] = usv[i];
    b->r[b->n] = rs[i];
    b->c[b->n] = cs[i];
    b->leaf[b->n++] = 0;
  }
  int ds = add_op(b, TSMR_OP_DIAG, idx[1], -1, dims(k, k));
  int us = add_op(b, TSMR_OP_MATMUL, idx[0], ds, dims(m, k));
  int recon = add_op(b, TSMR_OP_MATMUL, us, idx[2], dims(m, n));
  BENCH_CHECK(tsmr_graph_flag(ctx, b->t[recon], TSMR_GRAPH_OUTPUT));
  int d = add_op(b, TSMR_OP_SUB, a, recon, dims(m, n));
  int diff = add_op(b, TSMR_OP_SUM, d, -1, dims(0, 0));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[recon]));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[diff]));
}

/* x + (x W1)^2 W2 style residual pieces: RETURN the sum node of x and f(x). */
static int residual_mlp(struct bg *b, int x, int64_t T, int64_t D, int64_t H) {
  int w1 = add_leaf(b, D, H, TSMR_GRAPH_PARAM), w2 = add_leaf(b, H, D, TSMR_GRAPH_PARAM);
  int h = add_op(b, TSMR_OP_MATMUL, x, w1, dims(T, H));
  int a = add_op(b, TSMR_OP_MUL, h, h, dims(T, H));
  int y = add_op(b, TSMR_OP_MATMUL, a, w2, dims(T, D));
  return add_op(b, TSMR_OP_ADD, y, x, dims(T, D));
}

static void transformer_block(struct bg *b) {
  const int64_t T = 128, D = 64;
  int r1 = attention_residual(b, add_leaf(b, T, D, TSMR_GRAPH_INPUT), T, D);
  int r2 = residual_mlp(b, r1, T, D, 4 * D);
  BENCH_CHECK(tsmr_graph_flag(ctx, b->t[r2], TSMR_GRAPH_OUTPUT));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[add_op(b, TSMR_OP_SUM, r2, -1, dims(0, 0))]));
}

static void conv_block(struct bg *b) {
  const int64_t P = 256, C = 32; /* 16x16 pixels, 32 channels */
  int x = add_leaf(b, P, C, TSMR_GRAPH_INPUT), h = x;
  for (int l = 0; l < 3; l++) {
    int w = add_leaf(b, C, C, TSMR_GRAPH_PARAM), bias = add_leaf(b, P, C, TSMR_GRAPH_PARAM);
    int cols = add_op(b, TSMR_OP_RESHAPE, h, -1, dims(P, C)); /* the im2col view of 1x1 */
    int mm = add_op(b, TSMR_OP_MATMUL, cols, w, dims(P, C));
    int z = add_op(b, TSMR_OP_ADD, mm, bias, dims(P, C));
    h = add_op(b, TSMR_OP_MUL, z, z, dims(P, C));
  }
  int out = add_op(b, TSMR_OP_ADD, h, x, dims(P, C));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[add_op(b, TSMR_OP_SUM, out, -1, dims(0, 0))]));
}

static void mlp_residual(struct bg *b) {
  int h = add_leaf(b, 64, 128, TSMR_GRAPH_INPUT);
  for (int l = 0; l < 8; l++) h = residual_mlp(b, h, 64, 128, 256);
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[add_op(b, TSMR_OP_SUM, h, -1, dims(0, 0))]));
}

static void long_chain(struct bg *b) {
  int h = add_leaf(b, 32, 32, TSMR_GRAPH_INPUT), p = add_leaf(b, 32, 32, TSMR_GRAPH_PARAM);
  for (int k = 0; k < 2000; k++)
    h = k % 4 == 3 ? add_op(b, TSMR_OP_TRANSPOSE, h, -1, dims(32, 32))
                   : add_op(b, TSMR_OP_ADD + k % 3, h, p, dims(32, 32));
  BENCH_CHECK(tsmr_graph_expand(ctx, b->g, b->t[h]));
}

/* Computes b in both modes (leaves: a fixed pseudo-random pattern) and compares the
 * guaranteed tensors' bytes. RETURN the number that differ. */
static int differential(struct bg *b, int n_check, const int *check) {
  static float buf[2][1 << 16];
  int bad = 0;
  unsigned char *keep[64];
  for (int mode = 1; mode >= 0; mode--) {
    BENCH_CHECK(tsmr_graph_plan(ctx, b->g, mode));
    for (int i = 0; i < b->n; i++) {
      struct tsmr_graph_place p;
      if (!b->leaf[i]) continue;
      BENCH_CHECK(tsmr_graph_place(ctx, b->t[i], &p));
      if (!p.in_graph) continue;
      for (uint64_t e = 0; e < p.nbytes / 4; e++)
        buf[0][e] = (float)((int)((e * 2654435761u + (uint64_t)i * 40503u) % 17) - 8) / 8.0f;
      BENCH_CHECK(tsmr_graph_write(ctx, b->t[i], buf[0], p.nbytes));
    }
    BENCH_CHECK(tsmr_graph_compute(ctx, b->g));
    for (int j = 0; j < n_check && j < 64; j++) {
      struct tsmr_graph_place p;
      BENCH_CHECK(tsmr_graph_place(ctx, b->t[check[j]], &p));
      BENCH_CHECK(tsmr_graph_read(ctx, b->t[check[j]], buf[1], sizeof buf[1]));
      if (mode == 1) {
        keep[j] = malloc(p.nbytes + 1);
        memcpy(keep[j], buf[1], p.nbytes);
      } else {
        bad += memcmp(keep[j], buf[1], p.nbytes) != 0;
        free(keep[j]);
      }
    }
  }
  return bad;
}

static double g_ratio_sum, g_ratio_max, g_planned_sum, g_bound_sum;
static int g_count;
static double g_ns_per_tensor; /* of the last graph reported */

/* The reuse plan's stats in *st; RETURN the best planning time of ROUNDS plans. */
static uint64_t best_plan(struct bg *b, struct tsmr_graph_stats *st) {
  uint64_t best_ns = UINT64_MAX;
  for (int r = 0; r < ROUNDS; r++) { /* alternate modes so every plan is a real one */
    BENCH_CHECK(tsmr_graph_plan(ctx, b->g, TSMR_PLAN_NONE));
    BENCH_CHECK(tsmr_graph_plan(ctx, b->g, TSMR_PLAN_REUSE));
    BENCH_CHECK(tsmr_graph_stats(ctx, b->g, st));
    if (st->plan_ns < best_ns) best_ns = st->plan_ns;
  }
  return best_ns;
}

/* Computes b in both modes and compares its first 64 sinks (GRAPH.OUT.1): RETURN how
 * many differ. */
static int compare_sinks(struct bg *b) {
  int check[64], nc = 0;
  for (int i = 0; i < b->n && nc < 64; i++) {
    struct tsmr_graph_place p;
    BENCH_CHECK(tsmr_graph_place(ctx, b->t[i], &p));
    if (p.in_graph && !b->used[i] && !b->leaf[i]) check[nc++] = i;
  }
  return differential(b, nc, check);
}

/* Adds a graph's figures to the corpus's. */
static void tally(const struct tsmr_graph_stats *st, double ratio, uint64_t best_ns) {
  g_ratio_sum += ratio;
  if (ratio > g_ratio_max) g_ratio_max = ratio;
  g_ns_per_tensor = st->n_tensors ? (double)best_ns / (double)st->n_tensors : 0.0;
  g_planned_sum += (double)st->planned_bytes;
  g_bound_sum += (double)st->bound_bytes;
  g_count++;
}

static void report(const char *name, struct bg *b, int compute) {
  struct tsmr_graph_stats st;
  uint64_t best_ns = best_plan(b, &st);
  double ratio = st.bound_bytes ? (double)st.planned_bytes / (double)st.bound_bytes : 1.0;
  int bad = compute ? compare_sinks(b) : -1;
  printf("%-14s %6llu %6llu %12llu %12llu %12llu %7.4f %7.4f %6llu %9.1f  %s\n", name,
         (unsigned long long)st.n_tensors, (unsigned long long)st.n_nodes,
         (unsigned long long)st.naive_bytes, (unsigned long long)st.bound_bytes,
         (unsigned long long)st.planned_bytes, ratio,
         st.naive_bytes ? (double)st.planned_bytes / (double)st.naive_bytes : 1.0,
         (unsigned long long)st.n_inplace,
         st.n_tensors ? (double)best_ns / (double)st.n_tensors : 0.0,
         bad < 0 ? "-" : (bad ? "DIFFER" : "same"));
  tally(&st, ratio, best_ns);
}

static struct bg *bg_new(void) {
  struct bg *b = calloc(1, sizeof *b);
  if (!b) exit(1);
  BENCH_CHECK(tsmr_graph_new(ctx, root, &b->g));
  return b;
}

static void bg_free(struct bg *b) {
  BENCH_CHECK(tsmr_graph_release(ctx, b->g));
  free(b);
}

/* The random DAG of the corpus of `nodes` nodes and seed `seed` (its rng_state). */
static struct bg *dag_new(int nodes, int seed) {
  rng_state = 0x9E3779B97F4A7C15ull + (uint64_t)seed * 7919u + (uint64_t)nodes;
  struct bg *b = bg_new();
  random_dag(b, nodes);
  return b;
}

/* The random DAGs, three of each size up to 5000 nodes and one of 50000; RETURN in
 * ns_sum the sum over each size's DAGs of their planning ns per tensor. */
static void run_dags(double ns_sum[4]) {
  static const int sizes[] = {100, 1000, 5000, 50000};
  for (int s = 0; s < 4; s++)
    for (int seed = 0; seed < (sizes[s] > 5000 ? 1 : 3); seed++) {
      char name[32];
      struct bg *b = dag_new(sizes[s], seed);
      snprintf(name, sizeof name, "dag%d.%d", sizes[s], seed);
      report(name, b, sizes[s] <= 100);
      ns_sum[s] += g_ns_per_tensor;
      bg_free(b);
    }
}

static void run_models(void) {
  static const struct {
    const char *name;
    void (*build)(struct bg *);
    int compute;
  } models[] = {{"mlp4", mlp, 1},           {"attention", attention, 1},
                {"svd-seed", svd_pipeline, 1}, {"transformer", transformer_block, 1},
                {"conv-block", conv_block, 1}, {"mlp-residual", mlp_residual, 1},
                {"chain2000", long_chain, 0}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    struct bg *b = bg_new();
    models[i].build(b);
    report(models[i].name, b, models[i].compute);
    bg_free(b);
  }
}

/* ---- --count-instructions (bench_util.h) ---------------------------------------- */

/* The DAGs of the growth figure, per size (0: 100 nodes, 1: 5000), three each. */
#define IR_DAGS 3
static const int ir_nodes[2] = {100, 5000};
static struct bg *ir_dags[2][IR_DAGS];

/* Plans every DAG of size s in mode. */
static void ir_plan(int s, int mode) {
  for (int i = 0; i < IR_DAGS; i++)
    BENCH_CHECK(tsmr_graph_plan(ctx, ir_dags[s][i]->g, mode));
}

/* The counted plans: the call whose time report() takes (best_plan: st.plan_ns of
 * tsmr_graph_plan in TSMR_PLAN_REUSE), once for each DAG of a size. The count is of the
 * whole call; plan_ns times the planning inside it (tsmr__plan_compute, about four
 * fifths of its instructions at either size), not its lock, buffers and install. Two
 * bodies that differ (the size), so that the compiler never folds one into the other. */
static BENCH_IR_FN void bench_ir_plan_100(void) { ir_plan(0, TSMR_PLAN_REUSE); }
static BENCH_IR_FN void bench_ir_plan_5000(void) { ir_plan(1, TSMR_PLAN_REUSE); }

/* Builds the DAGs of size s (the corpus's seeds), plans each once as warm-up, counts
 * one plan of each, and prints the tensors the counted function planned in all: the
 * divisor of its count (bench/callgrind_ir.py reads the "bench_ir_ops" line). As in
 * best_plan, a plan in the other mode comes before each reuse plan: a graph planned
 * again in the mode of its current plan is not planned again (graph.c). */
static void ir_count_size(int s) {
  static const char *const fn[2] = {"bench_ir_plan_100", "bench_ir_plan_5000"};
  for (int seed = 0; seed < IR_DAGS; seed++) ir_dags[s][seed] = dag_new(ir_nodes[s], seed);
  ir_plan(s, TSMR_PLAN_NONE);
  ir_plan(s, TSMR_PLAN_REUSE);
  ir_plan(s, TSMR_PLAN_NONE);
  if (s == 0) bench_ir_plan_100();
  else bench_ir_plan_5000();
  uint64_t tensors = 0;
  for (int i = 0; i < IR_DAGS; i++) {
    struct tsmr_graph_stats st;
    BENCH_CHECK(tsmr_graph_stats(ctx, ir_dags[s][i]->g, &st));
    tensors += st.n_tensors;
    bg_free(ir_dags[s][i]);
  }
  printf("bench_ir_ops %s %llu\n", fn[s], (unsigned long long)tensors);
}

/* --count-instructions n: one reuse plan of each DAG of the growth figure counted,
 * whatever n (> 0; count_instructions.sh passes every program the same n, 100,000, a
 * number of plans callgrind would take hours over). One plan is the count: the planner
 * is deterministic, and the plans of one graph after the first differ by under 0.3% in
 * instructions (malloc's state). The whole run takes about 2 s under callgrind.
 * RETURN the exit status. */
static int count_instructions(long n) {
  BENCH_CHECK(tsmr_ctx_open("cpu", &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  for (int s = 0; s < 2; s++) ir_count_size(s);
  uint64_t live;
  BENCH_CHECK(tsmr_live_bytes(ctx, &live));
  tsmr_ctx_close(ctx);
  printf("bench-graphs: counted one reuse plan of each DAG (bench_ir_*; N = %ld unused)\n",
         n);
  return live == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  long counted = bench_count_mode(argc, argv, "bench-graphs");
  if (counted) return counted < 0 ? 2 : count_instructions(counted);
  const char *dev = argc > 1 ? argv[1] : "cpu";
  BENCH_CHECK(tsmr_ctx_open(dev, &ctx));
  BENCH_CHECK(tsmr_mgr_root(ctx, &root));
  printf("bench-graphs on %s: reuse plan vs liveness lower bound (ratio) and no reuse\n", dev);
  printf("%-14s %6s %6s %12s %12s %12s %7s %7s %6s %9s  %s\n", "graph", "tensor", "steps",
         "no-reuse B", "bound B", "planned B", "p/bound", "p/none", "inpl", "ns/tensor",
         "OUT.1");
  double ns_sum[4] = {0, 0, 0, 0};
  run_dags(ns_sum);
  run_models();
  printf("overall: mean p/bound %.4f, max %.4f, sum planned / sum bound %.4f over %d graphs\n",
         g_ratio_sum / g_count, g_ratio_max, g_planned_sum / g_bound_sum, g_count);
  printf("planning ns/tensor, mean of 3 DAGs: 100 nodes %.1f, 1000 nodes %.1f, 5000 nodes "
         "%.1f (5000/100: %.2f x); one DAG of 50000 nodes %.1f\n", ns_sum[0] / 3,
         ns_sum[1] / 3, ns_sum[2] / 3, ns_sum[2] / ns_sum[0], ns_sum[3]);
  struct bench_baseline bound_max = {"liveness_lower_bound", 1.0, g_ratio_max};
  struct bench_baseline bound_mean = {"liveness_lower_bound", 1.0, g_ratio_sum / g_count};
  struct bench_baseline dag100 = {"ns_per_tensor_100_nodes", ns_sum[0] / 3, ns_sum[2] / ns_sum[0]};
  bench_figure("planner_peak_vs_bound_max", g_ratio_max, "x", &bound_max, 1.05);
  bench_figure("planner_peak_vs_bound_mean", g_ratio_sum / g_count, "x", &bound_mean, 1.02);
  bench_figure("planner_time_growth_5000_vs_100", ns_sum[2] / 3, "ns/tensor", &dag100, 2.0);
  tsmr_ctx_close(ctx);
  return 0;
}
