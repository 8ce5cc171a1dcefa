/*
 * fuzz/fuzz_parse.c: fuzz target `parse`: the case-language parser
 * (harness/src/lang/case_parse.c) on any bytes. Every input must give a case or a located
 * error (line >= 1, col >= 1, a message), never a crash, a leak or undefined
 * behaviour (issue 14's class: a located error for every malformed case). The
 * clause ids are checked against the spec when spec/ is found, as `tsm-cts lint` does;
 * the bytes are checked as text first (cts_case_text_check), as a case file's are.
 */
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "fuzz_common.h"
#include "spec_index.h"

static const struct cts_spec *spec_or_null(void) {
  static struct cts_spec spec;
  static int state; /* 0 not tried, 1 loaded, -1 absent */
  if (!state) state = cts_spec_load(&spec, cts_spec_dir(NULL)) == 0 ? 1 : -1;
  return state == 1 ? &spec : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct cts_parse_error err;
  memset(&err, 0, sizeof err);
  struct cts_case *c = cts_case_text_check(text, size, &err)
                           ? NULL
                           : cts_case_parse("fuzz.cts", text, spec_or_null(), &err);
  if (c) {
    cts_case_free(c);
  } else {
    FUZZ_CHECK(err.line >= 1 && err.col >= 1, "issue 14: located error",
               "parse error without a location (line %d, col %d): %.200s", err.line,
               err.col, err.msg);
    FUZZ_CHECK(err.msg[0] != '\0' && memchr(err.msg, '\0', sizeof err.msg),
               "issue 14: located error", "parse error at %d:%d without a message",
               err.line, err.col);
  }
  free(text);
  return 0;
}
