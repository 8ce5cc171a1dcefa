/*
 * fuzz/fuzz_planner.c: fuzz target `planner`: random graph episodes (spec/graphs.md)
 * written in the case language and run through the judge's own executor
 * (harness/src/exec/exec.h), so the oracle is the one `tsm-cts run` applies: every
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
#include "fuzz_episode.h"
#include "util.h"

static void write_episode(struct fuzz_in *in, struct episode *e) {
  e->k = 1 + (int)fuzz_below(in, 3);
  cts_buf_printf(e->text, "---\ndescription: planner fuzz episode\n"
                           "clauses: [GRAPH.OUT.1, GRAPH.REUSE.1]\nrequires: [graphs]\n"
                           "devices: [any]\n---\nmanager m = sub root\ngraph g = new m\n");
  if (fuzz_u8(in) & 1) { /* an external: never placed, freed or written (GRAPH.EXT.1) */
    cts_buf_printf(e->text, "tensor W = values m [%d, %d] [", e->k, e->k);
    for (int i = 0; i < e->k * e->k; i++)
      cts_buf_printf(e->text, "%s%d", i ? ", " : "", (int)fuzz_below(in, 7) - 3);
    cts_buf_printf(e->text, "]\n");
    episode_external(e, "W");
  }
  episode_phase(in, e, 0);
  if (fuzz_u8(in) & 1) episode_phase(in, e, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const struct tsm_adapter *a = fuzz_adapter();
  if (!(a->caps & TSM_CAP_GRAPHS)) return 0;
  struct fuzz_in in = {data, size, 0};
  struct cts_buf text = {0};
  struct episode e;
  memset(&e, 0, sizeof e);
  e.text = &text;
  e.graph = "g";
  e.prefix = "n";
  write_episode(&in, &e);
  if (getenv("FUZZ_VERBOSE")) fputs(text.buf, stderr);
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse("planner.tsm", text.buf, NULL, &err);
  FUZZ_CHECK(c, "fuzz/fuzz_planner.c", "the episode does not parse: %d:%d: %s\n%s", err.line,
             err.col, err.msg, text.buf);
  struct cts_buf msg = {0};
  int status = cts_exec_case(c, a, 0, &msg, 0);
  FUZZ_CHECK(status == CTS_PASS || status == CTS_NOTSUPPORTED, "spec/graphs.md",
             "%s: %s\n%s", cts_status_name(status), msg.buf ? msg.buf : "", text.buf);
  cts_buf_free(&msg);
  cts_case_free(c);
  cts_buf_free(&text);
  return 0;
}
