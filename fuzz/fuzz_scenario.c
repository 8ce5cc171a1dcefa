/*
 * fuzz/fuzz_scenario.c: fuzz target `scenario`: every input decodes to a valid scenario
 * across the families the adapter offers (managers, scopes and composites, DLPack,
 * graphs, threads), run through the judge's executor with the model deciding every
 * outcome the scenario leaves open (cts_exec_model_decides, exec.h). The oracle is the
 * one `tsm-cts run` applies after every statement: return codes, states, statistics,
 * live bytes and values against the model (ERR.CODE.1, MGR.COUNT.4), and the deleters of
 * everything exchanged. Any status other than Pass (or NotSupported) is a finding;
 * $FUZZ_VERBOSE prints the scenario.
 *
 * The input's bytes are the choices of the judge's generator (harness/src/tools/gen.h: the
 * rows of the statement table, operands biased toward views, components, imported,
 * borrowed, released and closed resources, now and then a `wrapped` block whose result
 * was made inside it, bound before it, or released); the bytes it leaves give the
 * scenario its shape: sections run on worker threads (the main thread waits, so the
 * outcome stays deterministic, SCOPE.THREAD.1), and a graph episode whose externals are
 * tensors the scenario made (GRAPH.EXT.1, GRAPH.PLAN.1). No bytes left: the plain stream.
 *
 * A finding prints the scenario as a case any adapter replays (finding_case).
 * $FUZZ_DECODE prints the case the input decodes to on stdout and runs nothing: the
 * fuzz-replay lane compares it with the finding's stored `<name>.tsm` (fuzz/README.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "exec.h"
#include "fuzz_common.h"
#include "fuzz_episode.h"
#include "gen.h"
#include "util.h"

enum { SHAPE_THREADS = 1, SHAPE_EPISODE = 2 };

static int is_expectation(const struct cts_gen_line *l) { return !strncmp(l->text, "expect ", 7); }

static void add_text(struct cts_gen_case *gc, const char *text, int kind) {
  cts_gen_case_add(gc, cts_xstrdup(text), NULL, kind);
}

/* Sections of the statements moved into `thread wN { ... }` blocks; the lines move from
 * `from` (emptied) to `to`. A generated block (`wrapped`) moves whole: a section starts
 * and ends only between top-level statements. */
static void wrap_threads(struct fuzz_in *in, struct cts_gen_case *from, struct cts_gen_case *to) {
  int left = 0, depth = 0;
  for (size_t i = 0; i < from->n; i++) {
    struct cts_gen_line *l = &from->lines[i];
    if (left && !depth && is_expectation(l)) {
      add_text(to, "}", CTS_THREAD);
      left = 0;
    }
    if (!left && !depth && !is_expectation(l) && fuzz_u8(in) % 4 == 1) {
      add_text(to, fuzz_u8(in) & 1 ? "thread w1 {" : "thread w0 {", CTS_THREAD);
      left = 1 + (int)fuzz_below(in, 6);
    }
    cts_gen_case_add(to, l->text, l->alt, l->kind);
    depth += cts_gen_opens_block(l->text) - cts_gen_closes_block(l->text);
    if (left && !depth && --left == 0) add_text(to, "}", CTS_THREAD);
  }
  if (left) add_text(to, "}", CTS_THREAD);
  free(from->lines);
  memset(from, 0, sizeof *from);
}

/* A graph episode over up to three of the tensors the scenario bound, as externals. */
static void add_episode(struct fuzz_in *in, struct cts_gen_case *gc) {
  const char *tensors[64];
  size_t n = 0;
  for (size_t i = 0; i < gc->n && n < 64; i++)
    if (!strncmp(gc->lines[i].text, "tensor ", 7)) tensors[n++] = gc->lines[i].text + 7;
  struct cts_buf text = {0};
  struct episode e = {.text = &text, .graph = "ge", .prefix = "e", .k = 1 + (int)fuzz_below(in, 3)};
  cts_buf_printf(&text, "graph ge = new root\n");
  for (int k = n ? (int)fuzz_below(in, 4) : 0; k > 0; k--) {
    const char *t = tensors[fuzz_below(in, (uint32_t)n)];
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(t, " ="), t);
    episode_external(&e, name);
  }
  episode_phase(in, &e, 0);
  if (fuzz_u8(in) & 1) episode_phase(in, &e, 1);
  for (char *line = text.buf, *end; *line; line = end + 1) { /* one case line each */
    end = strchr(line, '\n');
    cts_gen_case_add(gc, cts_xstrndup(line, (size_t)(end - line)), NULL, CTS_G_NEW);
  }
  cts_buf_free(&text);
}

/* The scenario's body lines (into gc, the caller's). */
static void write_scenario(const uint8_t *data, size_t size, uint32_t caps, uint32_t dtypes,
                           struct cts_gen_case *out) {
  struct cts_gen_case gen = {0}, gc = {0};
  size_t used = cts_gen_from_bytes(data, size, caps, dtypes, &gen);
  struct fuzz_in in = {data + used, size - used, 0};
  unsigned shape = fuzz_u8(&in);
  if ((shape & SHAPE_THREADS) && (caps & TSM_CAP_THREADS)) {
    wrap_threads(&in, &gen, &gc);
  } else {
    gc = gen;
    memset(&gen, 0, sizeof gen);
  }
  if ((shape & SHAPE_EPISODE) && (caps & TSM_CAP_GRAPHS)) add_episode(&in, &gc);
  *out = gc;
}

/* What the executor decided per body line while the model decided (exec.h): the refusal
 * code, SKIPPED, or 0; and the line of the first finding. */
#define SKIPPED 1 /* the ABI's error codes are negative */
static struct {
  int *code;
  size_t n;
  int finding_line;
} decided;

static void on_report(int line, int status, int model_rc) {
  size_t i = (size_t)(line - CTS_GEN_FRONT_LINES - 1);
  if (status == CTS_PASS || status == CTS_SKIP) {
    if (line > CTS_GEN_FRONT_LINES && i < decided.n) decided.code[i] = model_rc ? model_rc : SKIPPED;
  } else if (!decided.finding_line) {
    decided.finding_line = line;
  }
}

/* text with its description and origin lines saying the scenario target found it. */
static char *retitle(char *text) {
  struct cts_buf b = {0};
  for (const char *line = text; *line;) {
    size_t len = strcspn(line, "\n");
    if (!strncmp(line, "description: ", 13))
      cts_buf_printf(&b, "description: found by the scenario fuzz target, completed against the "
                     "model (each refusal it decided is an `expect error`)\n");
    else if (!strncmp(line, "origin: ", 8))
      cts_buf_printf(&b, "origin: fuzz target scenario (fuzz/fuzz_scenario.c)\n");
    else
      cts_buf_printf(&b, "%.*s\n", (int)len, line);
    line += len + (line[len] == '\n');
  }
  free(text);
  return cts_buf_take(&b);
}

/* The finding as a case any adapter replays with `tsm-cts run` (and `tsm-cts reduce`
 * shrinks): each refusal the model decided written as `expect error`, skipped lines and
 * refused nodes (which the language cannot write under `expect error`) left out, and the
 * body ending at the finding's line. A skipped `result X` (X's binding was refused) ran
 * as no result: `result none`. A finding on a block's head (judged after its body ran)
 * keeps the whole block; blocks open at the finding are closed (a wrapped one with
 * `result none`: the run stopped before its result). */
/* The blocks open at a line of the finding's case, innermost last: each one's indent and
 * whether it is a `wrapped` block (else a `thread`). */
struct open_blocks {
  int wrapped[64], indent[64];
  int depth;
};

/* Keeps b up to date past line t (statement st at column indent). */
static void track_blocks(struct open_blocks *b, const char *t, const char *st, int indent) {
  if (cts_gen_opens_block(t) && b->depth < 64) {
    b->indent[b->depth] = indent;
    b->wrapped[b->depth++] = !strncmp(st, "wrapped ", 8);
  } else if (cts_gen_closes_block(t) && b->depth) {
    b->depth--;
  }
}

/* Closes the blocks still open at the end of out, innermost first; a wrapped one ends
 * with `result none`: the run stopped before its result. */
static void close_blocks(struct cts_gen_case *out, struct open_blocks *b) {
  while (b->depth-- > 0) {
    int at = b->indent[b->depth], wrapped = b->wrapped[b->depth];
    if (wrapped)
      cts_gen_case_add(out, cts_printf_dup("%*sresult none", at + 2, ""), NULL, CTS_RESULT);
    cts_gen_case_add(out, cts_printf_dup("%*s}", at, ""), NULL,
                     wrapped ? CTS_WRAPPED : CTS_THREAD);
  }
}

/* 1 when a line the model decided (code) stays out of the finding's case: skipped, or a
 * refused node that is not the finding's own line. */
static int left_out(int code, const char *st, int last) {
  return code == SKIPPED || (code && !strncmp(st, "node ", 5) && !last);
}

/* The finding's case line for statement st of line t at column indent: a refusal the
 * model decided (code) as `expect error`, else the line itself. */
static char *case_line(const char *t, const char *st, int indent, int code) {
  if (!code) return cts_xstrdup(t);
  return cts_printf_dup("%*sexpect error %s: %s", indent, "", cts_err_name(code), st);
}

static char *finding_case(struct cts_gen_case *gc) {
  struct cts_gen_case out = {0};
  struct open_blocks blocks = {{0}, {0}, 0};
  size_t end = gc->n; /* past the finding: the end of the block it heads */
  for (size_t i = 0; i < gc->n && i < end; i++) {
    const char *t = gc->lines[i].text, *st = cts_gen_stmt(t);
    int code = decided.code[i], last = (int)i + CTS_GEN_FRONT_LINES + 1 == decided.finding_line;
    int indent = (int)(st - t);
    if (code == SKIPPED && !strncmp(st, "result ", 7)) {
      cts_gen_case_add(&out, cts_printf_dup("%*sresult none", indent, ""), NULL,
                       gc->lines[i].kind);
      continue;
    }
    if (left_out(code, st, last)) continue;
    track_blocks(&blocks, t, st, indent);
    cts_gen_case_add(&out, case_line(t, st, indent, code), NULL, gc->lines[i].kind);
    if (last) end = cts_gen_opens_block(t) ? cts_gen_block_end(gc, i) + 1 : i + 1;
  }
  close_blocks(&out, &blocks);
  char *text = cts_gen_render(&out, 0, 0, NULL);
  cts_gen_case_free(&out);
  return retitle(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const struct tsm_adapter *a = fuzz_adapter();
  struct cts_gen_case gc = {0};
  write_scenario(data, size, a->caps, a->dtypes, &gc);
  char *text = cts_gen_render(&gc, 0, 0, NULL);
  if (getenv("FUZZ_VERBOSE")) fputs(text, stderr);
  static int decode_only = -1; /* $FUZZ_DECODE: print the case the bytes decode to, run nothing */
  if (decode_only < 0) decode_only = getenv("FUZZ_DECODE") != NULL;
  if (decode_only) {
    fputs(text, stdout);
    cts_gen_case_free(&gc);
    free(text);
    return 0;
  }
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse("scenario.tsm", text, NULL, &err);
  FUZZ_CHECK(c, "harness/src/tools/gen.c", "the scenario does not parse: %d:%d: %s\n%s", err.line,
             err.col, err.msg, text);
  if ((c->ops_used & ~a->ops) || (c->dtypes_used & ~a->dtypes) ||
      (c->uses_dump && !a->mgr_dump)) { /* NotSupported */
    cts_case_free(c);
    cts_gen_case_free(&gc);
    free(text);
    return 0;
  }
  struct cts_buf msg = {0};
  decided.code = cts_xcalloc(gc.n + 1, sizeof *decided.code);
  decided.n = gc.n;
  decided.finding_line = 0;
  cts_exec_model_decides = 1;
  cts_exec_on_report = on_report;
  int status = cts_exec_case(c, a, 0, &msg, 0);
  if (status != CTS_PASS && status != CTS_NOTSUPPORTED)
    fuzz_fail("ERR.CODE.1", "%s: %s\nthe finding as a case (save it under cases/regress/, "
              "shrink it with tsm-cts reduce):\n%s", cts_status_name(status),
              msg.buf ? msg.buf : "", finding_case(&gc));
  free(decided.code);
  cts_buf_free(&msg);
  cts_case_free(c);
  cts_gen_case_free(&gc);
  free(text);
  return 0;
}
