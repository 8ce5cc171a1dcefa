/*
 * fuzz/fuzz_episode.c: graph episodes from a fuzzer's bytes (fuzz/fuzz_episode.h): a
 * DAG of [k, k] f32 leaves and nodes (add, sub, mul, matmul, transpose, sum, reshape
 * views), flags INPUT/OUTPUT/PARAM at random, expand, compute or recompute.
 */
#include "fuzz_episode.h"

void episode_external(struct episode *e, const char *tensor) {
  if (e->n >= EPISODE_MAX_NODES - 1) return;
  cts_buf_printf(e->text, "node %s%d = external %s %s\n", e->prefix, e->n, e->graph, tensor);
  e->cls[e->n] = '2';
  e->leaf[e->n++] = 0;
}

static void put_values(struct fuzz_in *in, struct episode *e, int count) {
  for (int i = 0; i < count; i++)
    cts_buf_printf(e->text, "%s%d", i ? ", " : "[", (int)fuzz_below(in, 7) - 3);
  cts_buf_printf(e->text, "]");
}

static int add_leaf(struct fuzz_in *in, struct episode *e) {
  cts_buf_printf(e->text, "node %s%d = leaf %s [%d, %d] values ", e->prefix, e->n, e->graph, e->k, e->k);
  put_values(in, e, e->k * e->k);
  cts_buf_printf(e->text, "\n");
  e->cls[e->n] = '2';
  e->leaf[e->n] = 1;
  return e->n++;
}

/* A node of class c, or -1 when there is none; biased toward recent nodes. */
static int pick_node(struct fuzz_in *in, const struct episode *e, char c) {
  int start = e->n - 1 - (int)fuzz_below(in, (uint32_t)e->n);
  for (int i = 0; i < e->n; i++) {
    int x = ((start - i) % e->n + e->n) % e->n;
    if (c == '*' ? e->cls[x] != '0' : e->cls[x] == c) return x;
  }
  return -1;
}

static const char *const binary_ops[] = {"add", "sub", "mul", "matmul"};

static void add_op(struct fuzz_in *in, struct episode *e) {
  int kind = (int)fuzz_below(in, 8), x = e->n;
  char c = kind < 3 && fuzz_u8(in) % 4 == 0 ? '1' : '2';
  int a = pick_node(in, e, kind >= 5 ? '*' : c);
  if (a < 0) return;
  if (kind < 4) {
    cts_buf_printf(e->text, "node %s%d = %s %s%d %s%d\n", e->prefix, x, binary_ops[kind], e->prefix, a,
                   e->prefix, pick_node(in, e, c));
  } else if (kind == 4) {
    cts_buf_printf(e->text, "node %s%d = transpose %s%d\n", e->prefix, x, e->prefix, a);
  } else if (kind == 5) {
    cts_buf_printf(e->text, "node %s%d = sum %s%d\n", e->prefix, x, e->prefix, a);
    c = '0';
  } else if (e->cls[a] == '2') {
    cts_buf_printf(e->text, "node %s%d = reshape %s%d [%d]\n", e->prefix, x, e->prefix, a, e->k * e->k);
    c = '1';
  } else {
    cts_buf_printf(e->text, "node %s%d = reshape %s%d [%d, %d]\n", e->prefix, x, e->prefix, a, e->k, e->k);
    c = '2';
  }
  e->cls[x] = c;
  e->leaf[x] = 0;
  e->n++;
}

/* INPUT and PARAM on leaves only (GRAPH.FLAG.2), OUTPUT on anything. */
static void add_flag(struct fuzz_in *in, struct episode *e) {
  int x = pick_node(in, e, "2*"[fuzz_u8(in) & 1]);
  if (x < 0) return;
  int which = e->leaf[x] ? (int)fuzz_below(in, 3) : 1;
  cts_buf_printf(e->text, "flag %s%d %s\n", e->prefix, x, (const char *[]){"input", "output", "param"}[which]);
}

/* Builds, flags, expands and computes (recompute: a later phase of the same graph). */
void episode_phase(struct fuzz_in *in, struct episode *e, int recompute) {
  if (!recompute) add_leaf(in, e);
  for (int steps = 1 + (int)fuzz_below(in, 12); steps > 0 && e->n < EPISODE_MAX_NODES - 1; steps--) {
    int what = (int)fuzz_below(in, 10);
    if (what < 2) add_leaf(in, e);
    else if (what < 8) add_op(in, e);
    else add_flag(in, e);
  }
  cts_buf_printf(e->text, "expand %s %s%d\n", e->graph, e->prefix, e->n - 1);
  for (int more = (int)fuzz_below(in, 3); more > 0; more--)
    cts_buf_printf(e->text, "expand %s %s%d\n", e->graph, e->prefix,
                   (int)fuzz_below(in, (uint32_t)e->n));
  cts_buf_printf(e->text, "%s %s\n", recompute ? "recompute" : "compute", e->graph);
}

