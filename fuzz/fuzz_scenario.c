/*
 * fuzz/fuzz_scenario.c: fuzz target `scenario`: every input decodes to a valid scenario
 * across the families the adapter offers (managers, scopes and composites, DLPack,
 * graphs), written by the judge's own generator (harness/src/gen.h, the rows of the
 * statement table, operands biased toward views, components, imported, borrowed,
 * released and closed resources) with the input's bytes as its choices, and run through
 * the judge's executor with the model deciding every outcome the scenario leaves open
 * (cts_exec_model_decides, exec.h). The oracle is the one `tsm-cts run` applies after
 * every statement: return codes, states, statistics, live bytes and values against the
 * model (ERR.CODE.1, MGR.COUNT.4), and the deleters of everything exchanged. Any status
 * other than Pass (or NotSupported) is a finding; $FUZZ_VERBOSE prints the scenario.
 */
#include <stdio.h>
#include <stdlib.h>

#include "case.h"
#include "exec.h"
#include "fuzz_common.h"
#include "gen.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const struct tsm_adapter *a = fuzz_adapter();
  struct cts_gen_case gc = {0};
  cts_gen_from_bytes(data, size, a->caps, &gc);
  char *text = cts_gen_render(&gc, 0, 0, NULL);
  cts_gen_case_free(&gc);
  if (getenv("FUZZ_VERBOSE")) fputs(text, stderr);
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse("scenario.tsm", text, NULL, &err);
  FUZZ_CHECK(c, "harness/src/gen.c", "the scenario does not parse: %d:%d: %s\n%s", err.line,
             err.col, err.msg, text);
  struct cts_buf msg = {0};
  cts_exec_model_decides = 1;
  int status = cts_exec_case(c, a, 0, &msg, 0);
  FUZZ_CHECK(status == CTS_PASS || status == CTS_NOTSUPPORTED, "ERR.CODE.1", "%s: %s\n%s",
             cts_status_name(status), msg.buf ? msg.buf : "", text);
  cts_buf_free(&msg);
  cts_case_free(c);
  free(text);
  return 0;
}
