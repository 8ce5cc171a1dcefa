/*
 * fuzz/fuzz_planner.c: fuzz target `planner`: random graph episodes (spec/graphs.md)
 * written in the case language and run through the judge's own executor
 * (harness/src/exec.h), so the oracle is the one `tsm-cts run` applies: every
 * `compute` and `recompute` runs the graph unplanned and planned and compares the
 * guaranteed tensors byte for byte (GRAPH.OUT.1), checks the placement introspection
 * against the model's live ranges (GRAPH.REUSE.1, GRAPH.INPLACE.1, GRAPH.OUT.2,
 * GRAPH.INPUT.1) and the values against the model (GRAPH.OP.1). An episode: a DAG of
 * [k, k] f32 leaves and nodes (add, sub, mul, matmul, transpose, sum, reshape views,
 * an external), flags INPUT/OUTPUT/PARAM at random, expand, compute; then optionally
 * more nodes and flags, expand and recompute (GRAPH.PLAN.1). Any status other than
 * Pass (or NotSupported) is a finding; $FUZZ_VERBOSE prints the episode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "exec.h"
#include "fuzz_common.h"
#include "util.h"

#define MAX_NODES 48

/* The episode being written: the case text and each node's shape class
 * ('2': [k, k], '1': [k*k] view, '0': 0-d) and whether it is a leaf. Owns text. */
struct episode {
  struct cts_buf text;
  int k, n;
  char cls[MAX_NODES];
  int leaf[MAX_NODES];
};

static void put_values(struct fuzz_in *in, struct episode *e, int count) {
  for (int i = 0; i < count; i++)
    cts_buf_printf(&e->text, "%s%d", i ? ", " : "[", (int)fuzz_below(in, 7) - 3);
  cts_buf_printf(&e->text, "]");
}

static int add_leaf(struct fuzz_in *in, struct episode *e) {
  cts_buf_printf(&e->text, "node n%d = leaf g [%d, %d] values ", e->n, e->k, e->k);
  put_values(in, e, e->k * e->k);
  cts_buf_printf(&e->text, "\n");
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
    cts_buf_printf(&e->text, "node n%d = %s n%d n%d\n", x, binary_ops[kind], a,
                   pick_node(in, e, c));
  } else if (kind == 4) {
    cts_buf_printf(&e->text, "node n%d = transpose n%d\n", x, a);
  } else if (kind == 5) {
    cts_buf_printf(&e->text, "node n%d = sum n%d\n", x, a);
    c = '0';
  } else if (e->cls[a] == '2') {
    cts_buf_printf(&e->text, "node n%d = reshape n%d [%d]\n", x, a, e->k * e->k);
    c = '1';
  } else {
    cts_buf_printf(&e->text, "node n%d = reshape n%d [%d, %d]\n", x, a, e->k, e->k);
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
  cts_buf_printf(&e->text, "flag n%d %s\n", x, (const char *[]){"input", "output", "param"}[which]);
}

/* Builds, flags, expands and computes (recompute: a later phase of the same graph). */
static void phase(struct fuzz_in *in, struct episode *e, int recompute) {
  if (!recompute) add_leaf(in, e);
  for (int steps = 1 + (int)fuzz_below(in, 12); steps > 0 && e->n < MAX_NODES - 1; steps--) {
    int what = (int)fuzz_below(in, 10);
    if (what < 2) add_leaf(in, e);
    else if (what < 8) add_op(in, e);
    else add_flag(in, e);
  }
  cts_buf_printf(&e->text, "expand g n%d\n", e->n - 1);
  for (int more = (int)fuzz_below(in, 3); more > 0; more--)
    cts_buf_printf(&e->text, "expand g n%d\n", (int)fuzz_below(in, (uint32_t)e->n));
  cts_buf_printf(&e->text, "%s g\n", recompute ? "recompute" : "compute");
}

static void write_episode(struct fuzz_in *in, struct episode *e) {
  e->k = 1 + (int)fuzz_below(in, 3);
  cts_buf_printf(&e->text, "---\ndescription: planner fuzz episode\n"
                           "clauses: [GRAPH.OUT.1, GRAPH.REUSE.1]\nrequires: [graphs]\n"
                           "devices: [any]\n---\nmanager m = sub root\ngraph g = new m\n");
  if (fuzz_u8(in) & 1) { /* an external: never placed, freed or written (GRAPH.EXT.1) */
    cts_buf_printf(&e->text, "tensor W = values m [%d, %d] ", e->k, e->k);
    put_values(in, e, e->k * e->k);
    cts_buf_printf(&e->text, "\nnode n0 = external g W\n");
    e->cls[0] = '2';
    e->n = 1;
  }
  phase(in, e, 0);
  if (fuzz_u8(in) & 1) phase(in, e, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const struct tsm_adapter *a = fuzz_adapter();
  if (!(a->caps & TSM_CAP_GRAPHS)) return 0;
  struct fuzz_in in = {data, size, 0};
  struct episode e;
  memset(&e, 0, sizeof e);
  write_episode(&in, &e);
  if (getenv("FUZZ_VERBOSE")) fputs(e.text.buf, stderr);
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse("planner.tsm", e.text.buf, NULL, &err);
  FUZZ_CHECK(c, "fuzz/fuzz_planner.c", "the episode does not parse: %d:%d: %s\n%s", err.line,
             err.col, err.msg, e.text.buf);
  struct cts_buf msg = {0};
  int status = cts_exec_case(c, a, 0, &msg, 0);
  FUZZ_CHECK(status == CTS_PASS || status == CTS_NOTSUPPORTED, "spec/graphs.md",
             "%s: %s\n%s", cts_status_name(status), msg.buf ? msg.buf : "", e.text.buf);
  cts_buf_free(&msg);
  cts_case_free(c);
  cts_buf_free(&e.text);
  return 0;
}
