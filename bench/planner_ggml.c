/*
 * bench/planner_ggml.c: ggml_gallocr's peak bytes against the reference planner's, on
 * the same graphs, in the same run (`make bench-ggml`, bench/README.md).
 *
 * Both implementations are loaded through the adapter ABI (the reference adapter and
 * harness/adapters/ggml), and every graph of the corpus is built in both by the same
 * sequence of calls, planned with TSM_PLAN_REUSE, and its plan's bytes read with
 * graph_info (GRAPH.PLAN.3); TSM_PLAN_NONE's bytes of the reference are printed beside
 * them as the no-reuse scale. The corpus follows bench/bench_graphs.c's without the svd
 * (ggml has none): an MLP, an attention block, a transformer block, a
 * convolutional block, an MLP of 8 residual layers, a chain of 2000 elementwise ops,
 * and random DAGs of 100, 1000, 5000 and 50000 tensors (FAR_BACK below). Every extent is a multiple of 8
 * floats, so ggml's 32-byte alignment of each tensor adds nothing but to the 0-d sums.
 *
 * Planning time: per graph, PAIRS rounds in which each side plans without reuse
 * (untimed: so that the next call is a real plan, the reference skipping a plan that
 * is current) and then with reuse, timed around graph_plan, the reference first in
 * even rounds and ggml first in odd ones; a side's time is the median of its rounds
 * per tensor, the ratio the median of the rounds' ratios (the pairs of
 * bench/bench_util.h: the machine's speed drifts, a round's ratio cancels most of it).
 * Both times are the whole graph_plan call through the adapter ABI: ggml_gallocr_new,
 * _reserve and _alloc_graph with the ggml adapter's own steps, against the reference's
 * plan with its buffer's allocation and zero fill.
 *
 * Usage: planner-ggml REFERENCE_ADAPTER.so GGML_ADAPTER.so [JSON_OUT]
 * Prints a table; JSON_OUT gets {"bench": "ggml-planner", "graphs": [...], "overall":
 * {...}}: per graph the tensors, both peaks and ggml's over the reference's, both plan
 * times per tensor, and overall the sums' ratio and the geometric mean of the ratios.
 * With $BENCH_JSON set, the figures planner_time_vs_gallocr_5000 and _50000 (the
 * reference's plan time per tensor over gallocr's on the random DAG of that many
 * tensors, goal <= 2) and planner_peak_vs_gallocr_sum (the reference's summed peaks over
 * gallocr's, goal <= 1) are appended there, one JSON object per line in the format of
 * bench_util.h's bench_figure (bench/README.md).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tsm/adapter.h>

/* Timing, medians and the figure writer; its BENCH_CHECK names tsmref.h's error
 * names, a header only: this program links no libtsmref (it loads both planners
 * through the adapter ABI). */
#include "bench_util.h"

#define MAXT 65536

/* One implementation: its adapter, session and the graph being built. */
struct side {
  const struct tsm_adapter *a;
  void *s;
  tsm_handle root, g;
  tsm_handle t[MAXT];
};

static struct side sides[2]; /* 0: the reference, 1: ggml */

/* The graph being built, as both sides have it: each tensor's 2-d shape. */
static int n_t;
static int64_t rows[MAXT], cols[MAXT];

static void check(int rc, const char *what) {
  if (rc) {
    fprintf(stderr, "planner-ggml: %s failed with %d\n", what, rc);
    exit(1);
  }
}

static void load(struct side *sd, const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  tsm_adapter_entry_fn entry;
  if (!h) {
    fprintf(stderr, "planner-ggml: %s\n", dlerror());
    exit(1);
  }
  *(void **)&entry = dlsym(h, TSM_ADAPTER_ENTRY_NAME);
  if (!entry || !(sd->a = entry()) || !(sd->a->caps & TSM_CAP_GRAPHS)) {
    fprintf(stderr, "planner-ggml: %s is no graph adapter\n", path);
    exit(1);
  }
  check(sd->a->session_open(0, &sd->s), "session_open");
  check(sd->a->mgr_root(sd->s, &sd->root), "mgr_root");
}

static void begin(void) {
  n_t = 0;
  for (int k = 0; k < 2; k++) check(sides[k].a->graph_new(sides[k].s, sides[k].root, &sides[k].g), "graph_new");
}

static int leaf(int64_t r, int64_t c, uint32_t flags) {
  struct tsm_tensor_desc d = {TSM_F32, 2, {r, c}};
  for (int k = 0; k < 2; k++) {
    struct side *sd = &sides[k];
    check(sd->a->graph_leaf(sd->s, sd->g, &d, &sd->t[n_t]), "graph_leaf");
    if (flags) check(sd->a->graph_flag(sd->s, sd->t[n_t], flags), "graph_flag");
  }
  rows[n_t] = r;
  cols[n_t] = c;
  return n_t++;
}

/* op on x (and y, or -1); the result's shape from the operands'. */
static int op(int o, int x, int y) {
  int64_t shape[2] = {rows[x], cols[x]};
  for (int k = 0; k < 2; k++) {
    struct side *sd = &sides[k];
    tsm_handle src[2] = {sd->t[x], y >= 0 ? sd->t[y] : TSM_NONE};
    check(sd->a->graph_op(sd->s, sd->g, o, src, y >= 0 ? 2 : 1, o == TSM_OP_RESHAPE ? shape : NULL,
                          o == TSM_OP_RESHAPE ? 2 : 0, &sd->t[n_t], 1),
          "graph_op");
  }
  rows[n_t] = o == TSM_OP_TRANSPOSE ? cols[x] : rows[x];
  cols[n_t] = o == TSM_OP_TRANSPOSE ? rows[x] : o == TSM_OP_MATMUL ? cols[y] : cols[x];
  if (o == TSM_OP_SUM) rows[n_t] = cols[n_t] = 1;
  return n_t++;
}

static void expand(int x) {
  for (int k = 0; k < 2; k++) check(sides[k].a->graph_expand(sides[k].s, sides[k].g, sides[k].t[x]), "expand");
}

static uint64_t plan_bytes(struct side *sd, int mode) {
  struct tsm_graph_info info;
  check(sd->a->graph_plan(sd->s, sd->g, mode), "graph_plan");
  check(sd->a->graph_info(sd->s, sd->g, &info), "graph_info");
  return info.planned_bytes;
}

/* ---- the corpus ------------------------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng % n);
}

/* x · W + b, squared: one layer. Weights are plain leaves, not PARAM: ggml places a
 * PARAM leaf at its first use and frees it after its last (deviations D2, D3 of
 * harness/expectations/ggml.txt), where the spec keeps it, so PARAM weights would
 * compare different rules rather than two planners. */
static int dense(int x, int64_t out, int square) {
  int w = leaf(cols[x], out, 0), b = leaf(rows[x], out, 0);
  int h = op(TSM_OP_ADD, op(TSM_OP_MATMUL, x, w), b);
  return square ? op(TSM_OP_MUL, h, h) : h;
}

static void mlp(void) {
  int h = leaf(64, 64, TSM_GRAPH_INPUT);
  for (int i = 0; i < 4; i++) h = dense(h, 64, 1);
  expand(op(TSM_OP_SUM, h, -1));
}

/* softmax(q kᵀ) v with a square standing in for the softmax, plus the residual. */
static int attention_residual(int x) {
  int64_t d = cols[x];
  int q = op(TSM_OP_MATMUL, x, leaf(d, d, 0));
  int k = op(TSM_OP_MATMUL, x, leaf(d, d, 0));
  int v = op(TSM_OP_MATMUL, x, leaf(d, d, 0));
  int s = op(TSM_OP_MATMUL, q, op(TSM_OP_TRANSPOSE, k, -1));
  int o = op(TSM_OP_MATMUL, op(TSM_OP_MUL, s, s), v);
  return op(TSM_OP_ADD, o, x);
}

static void attention(void) { expand(op(TSM_OP_SUM, attention_residual(leaf(64, 64, TSM_GRAPH_INPUT)), -1)); }

static int residual_mlp(int x, int64_t hidden) {
  int h = dense(x, hidden, 1);
  return op(TSM_OP_ADD, dense(h, cols[x], 0), x);
}

static void transformer_block(void) {
  int x = attention_residual(leaf(64, 64, TSM_GRAPH_INPUT));
  int y = residual_mlp(x, 256);
  for (int k = 0; k < 2; k++) check(sides[k].a->graph_flag(sides[k].s, sides[k].t[y], TSM_GRAPH_OUTPUT), "graph_flag");
  expand(y);
}

/* 1x1 convolutions over [pixels, channels] as matmuls, a bias, a square, a residual. */
static void conv_block(void) {
  int x = leaf(256, 32, TSM_GRAPH_INPUT);
  int h = dense(dense(x, 32, 1), 32, 0);
  expand(op(TSM_OP_SUM, op(TSM_OP_ADD, h, x), -1));
}

static void mlp_residual(void) {
  int x = leaf(64, 64, TSM_GRAPH_INPUT);
  for (int i = 0; i < 8; i++) x = residual_mlp(x, 128);
  expand(op(TSM_OP_SUM, x, -1));
}

static void long_chain(void) {
  int x = leaf(16, 16, TSM_GRAPH_INPUT), k = leaf(16, 16, 0);
  for (int i = 0; i < 2000; i++) x = op(i % 2 ? TSM_OP_MUL : TSM_OP_ADD, x, k);
  expand(op(TSM_OP_SUM, x, -1));
}

/* How far back a random DAG's far source may be: ggml_gallocr keeps at most 256 free
 * blocks (MAX_FREE_BLOCKS) and aborts past that, which sources from anywhere in a graph
 * of 50000 tensors reach; from the last 2000 they do not. */
#define FAR_BACK 2000

/* [16, 16] tensors; sources mostly among the last 8, sometimes anywhere among the last
 * FAR_BACK (all of them in the graphs of up to FAR_BACK tensors); every tensor
 * expanded, so the unconsumed ones are sinks. */
static int pick(void) {
  if (rnd(4)) return n_t - 1 - (int)rnd(n_t < 8 ? (uint32_t)n_t : 8);
  return n_t <= FAR_BACK ? (int)rnd((uint32_t)n_t) : n_t - FAR_BACK + (int)rnd(FAR_BACK);
}

static void random_dag(int tensors) {
  static const int ops[] = {TSM_OP_ADD, TSM_OP_SUB, TSM_OP_MUL, TSM_OP_MATMUL, TSM_OP_TRANSPOSE,
                            TSM_OP_RESHAPE};
  for (int i = 0; i < 4; i++) leaf(16, 16, TSM_GRAPH_INPUT);
  while (n_t < tensors) {
    int o = ops[rnd(6)], x = pick();
    op(o, x, o == TSM_OP_TRANSPOSE || o == TSM_OP_RESHAPE ? -1 : pick());
  }
  for (int i = 0; i < n_t; i++) expand(i);
}

static void random_100(void) { random_dag(100); }
static void random_1000(void) { random_dag(1000); }
static void random_5000(void) { random_dag(5000); }
static void random_50000(void) { random_dag(50000); }

/* ---- timing and figures ------------------------------------------------------------ */

/* One reuse plan of sd's graph, after a plan without reuse: RETURN its nanoseconds. */
static double timed_plan(struct side *sd) {
  check(sd->a->graph_plan(sd->s, sd->g, TSM_PLAN_NONE), "graph_plan");
  double t0 = now_ns();
  check(sd->a->graph_plan(sd->s, sd->g, TSM_PLAN_REUSE), "graph_plan");
  return now_ns() - t0;
}

/* Plan times per tensor of the graph just built: both medians and the median ratio. */
struct timing {
  double ref_ns, ggml_ns, ratio;
};

static struct timing time_plans(void) {
  double t[2][PAIRS], r[PAIRS];
  for (int i = 0; i < PAIRS; i++) {
    for (int k = 0; k < 2; k++) {
      int side = (k + i) % 2; /* the reference first in even rounds */
      t[side][i] = timed_plan(&sides[side]) / n_t;
    }
    r[i] = t[0][i] / t[1][i];
  }
  struct timing m = {bench_median(t[0]), bench_median(t[1]), bench_median(r)};
  return m;
}

/* The corpus's running totals: both sides' summed peaks, the sum of the ratios'
 * logarithms, the worst ratio of the reference's peak over ggml's. */
struct totals {
  double ref, ggml, log_ratio, worst;
};

/* Plans the graph just built on both sides: a row of the table, and of JSON_OUT when
 * json is set (i: its index in the corpus), then the graphs' release. */
static struct timing measure(const char *name, int i, FILE *json, struct totals *sum) {
  uint64_t none = plan_bytes(&sides[0], TSM_PLAN_NONE);
  uint64_t ref = plan_bytes(&sides[0], TSM_PLAN_REUSE), gg = plan_bytes(&sides[1], TSM_PLAN_REUSE);
  double ratio = (double)gg / (double)ref;
  struct timing tm = time_plans();
  sum->ref += (double)ref;
  sum->ggml += (double)gg;
  sum->log_ratio += log(ratio);
  if (1 / ratio > sum->worst) sum->worst = 1 / ratio;
  printf("%-18s %8d %12llu %12llu %12llu %8.3f %9.1f %9.1f %8.2f\n", name, n_t,
         (unsigned long long)none, (unsigned long long)ref, (unsigned long long)gg, ratio,
         tm.ref_ns, tm.ggml_ns, tm.ratio);
  if (json)
    fprintf(json, "%s\n  {\"name\": \"%s\", \"tensors\": %d, \"no_reuse_bytes\": %llu, "
            "\"reference_bytes\": %llu, \"ggml_bytes\": %llu, \"ratio\": %.4f, "
            "\"reference_plan_ns_per_tensor\": %.1f, \"ggml_plan_ns_per_tensor\": %.1f, "
            "\"plan_time_ratio\": %.3f}", i ? "," : "", name, n_t, (unsigned long long)none,
            (unsigned long long)ref, (unsigned long long)gg, ratio, tm.ref_ns, tm.ggml_ns,
            tm.ratio);
  for (int k = 0; k < 2; k++) check(sides[k].a->graph_release(sides[k].s, sides[k].g), "graph_release");
  return tm;
}

/* The overall line over n graphs, and JSON_OUT's "overall" object (which closes it). */
static void overall(const struct totals *sum, int n, FILE *json) {
  printf("overall: ggml/ref of the summed peaks %.3f, geometric mean of the ratios %.3f, "
         "worst ref/ggml %.3f\n", sum->ggml / sum->ref, exp(sum->log_ratio / n), sum->worst);
  if (!json) return;
  fprintf(json, "],\n \"overall\": {\"reference_bytes\": %.0f, \"ggml_bytes\": %.0f, "
          "\"ratio\": %.4f, \"geomean_ratio\": %.4f}}\n", sum->ref, sum->ggml,
          sum->ggml / sum->ref, exp(sum->log_ratio / n));
  fclose(json);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*build)(void);
  } corpus[] = {{"mlp", mlp},
                {"attention", attention},
                {"transformer_block", transformer_block},
                {"conv_block", conv_block},
                {"mlp_residual_8", mlp_residual},
                {"chain_2000", long_chain},
                {"random_dag_100", random_100},
                {"random_dag_1000", random_1000},
                {"random_dag_5000", random_5000},
                {"random_dag_50000", random_50000}};
  int n = (int)(sizeof corpus / sizeof corpus[0]);
  FILE *json = NULL;
  struct totals sum = {0, 0, 0, 0};
  struct timing t5k = {0, 0, 0}, t50k = {0, 0, 0};
  if (argc < 3) {
    fprintf(stderr, "usage: planner-ggml REFERENCE_ADAPTER.so GGML_ADAPTER.so [JSON_OUT]\n");
    return 2;
  }
  load(&sides[0], argv[1]);
  load(&sides[1], argv[2]);
  if (argc > 3 && !(json = fopen(argv[3], "w"))) {
    perror(argv[3]);
    return 1;
  }
  printf("%-18s %8s %12s %12s %12s %8s %9s %9s %8s\n", "graph", "tensors", "no reuse",
         "reference", "ggml", "ggml/ref", "ref ns/t", "ggml ns/t", "time r/g");
  if (json) fprintf(json, "{\"bench\": \"ggml-planner\", \"graphs\": [");
  for (int i = 0; i < n; i++) {
    begin();
    corpus[i].build();
    struct timing tm = measure(corpus[i].name, i, json, &sum);
    if (corpus[i].build == random_5000) t5k = tm;
    if (corpus[i].build == random_50000) t50k = tm;
  }
  overall(&sum, n, json);
  printf("plan time per tensor, reference / gallocr (median of %d pairs): 5000 tensors "
         "%.2f x, 50000 tensors %.2f x\n", PAIRS, t5k.ratio, t50k.ratio);
  const struct bench_baseline b5k = {"ggml_gallocr_ns_per_tensor", t5k.ggml_ns, t5k.ratio},
                              b50k = {"ggml_gallocr_ns_per_tensor", t50k.ggml_ns, t50k.ratio},
                              bsum = {"ggml_gallocr_bytes", sum.ggml, sum.ref / sum.ggml};
  bench_figure("planner_time_vs_gallocr_5000", t5k.ref_ns, "ns/tensor", &b5k, 2.0);
  bench_figure("planner_time_vs_gallocr_50000", t50k.ref_ns, "ns/tensor", &b50k, 2.0);
  bench_figure("planner_peak_vs_gallocr_sum", sum.ref, "bytes", &bsum, 1.0);
  for (int k = 0; k < 2; k++) sides[k].a->session_close(sides[k].s);
  return 0;
}
