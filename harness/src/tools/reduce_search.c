/*
 * harness/src/tools/reduce_search.c: the oracle and the search of `tsm-cts reduce`. A candidate
 * is parsed (one that does not parse is not interesting and never runs) and run by the
 * runner (runner.c) exactly as `tsm-cts run` runs a case: a forked child, its own process
 * group, a time limit, so that a crash or a hang is that candidate's Crash or Timeout. It
 * is interesting when it fails the same way as the original: the same status, the same
 * kind of failing statement and the same message once the statement's text, numbers,
 * addresses and the case's names are set aside (red_normalise). The search is Zeller's
 * ddmin over the statements of one block at a time, outermost first (hierarchical delta
 * debugging), then each block replaced by its body and each `expect error` by its action,
 * repeated until nothing more goes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "reduce_internal.h"
#include "runner.h"
#include "util.h"

/* ---- the oracle ------------------------------------------------------------------ */

const struct cts_stmt *red_stmt_at(const struct cts_block *b, int line) {
  for (size_t i = 0; i < b->n; i++) {
    if (b->items[i].line == line) return &b->items[i];
    const struct cts_stmt *inside = red_stmt_at(&b->items[i].body, line);
    if (inside) return inside;
  }
  return NULL;
}

static int is_word_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

static int is_case_name(const struct reducer *R, const char *s, size_t n) {
  for (size_t i = 0; i < R->n_names; i++)
    if (strlen(R->names[i].name) == n && !memcmp(R->names[i].name, s, n)) return 1;
  return 0;
}

/* s with each number (decimal or hex, an address among them) as `#` and each name of
 * the case as `$`: what may change while a case shrinks without changing the failure. */
static char *red_normalise(const struct reducer *R, const char *s) {
  struct cts_buf b = {0};
  cts_buf_append(&b, "", 0);
  while (*s) {
    size_t n = 0;
    while (is_word_char(s[n])) n++;
    if (n == 0) n = 1, cts_buf_append(&b, s, 1);
    else if (isdigit((unsigned char)*s)) cts_buf_append(&b, "#", 1);
    else if (is_case_name(R, s, n)) cts_buf_append(&b, "$", 1);
    else cts_buf_append(&b, s, n);
    s += n;
  }
  return cts_buf_take(&b);
}

/* The failing statement and the message of a run of c: the executor writes
 * "PATH:LINE: `STATEMENT`: DETAIL" (exec_observe.c), or "PATH: DETAIL" outside the
 * body; the runner's own verdicts (Crash, Timeout) name no statement. */
static void describe(const struct reducer *R, const struct cts_case *c, const char *msg,
                     struct red_outcome *out) {
  size_t plen = strlen(c->path);
  const char *detail = msg;
  out->kind = -1;
  if (!strncmp(msg, c->path, plen) && msg[plen] == ':') {
    char *end;
    long line = strtol(msg + plen + 1, &end, 10);
    const char *close = end != msg + plen + 1 && !strncmp(end, ": `", 3) ? strstr(end + 3, "`: ")
                                                                          : NULL;
    const struct cts_stmt *st = close ? red_stmt_at(&c->body, (int)line) : NULL;
    if (close) detail = close + 3;
    else if (msg[plen + 1] == ' ') detail = msg + plen + 2;
    out->kind = st ? st->kind : -1;
  }
  out->message = red_normalise(R, detail);
  out->raw = cts_xstrdup(msg);
}

void red_outcome_free(struct red_outcome *o) {
  free(o->message);
  free(o->raw);
  o->message = o->raw = NULL;
}

int red_run(struct reducer *R, const char *text, struct red_outcome *out) {
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse(R->path, text, R->spec, &err);
  if (!c) return -1;
  struct cts_job job = {.c = c, .name = c->name, .path = c->path, .device = R->device,
                        .device_name = R->device_name, .timeout_ms = cts_case_limit_ms(c, R->timeout_ms),
                        .status = -1, .family = "reduce", .family_len = strlen("reduce"),
                        .clauses = c->clauses, .n_clauses = c->n_clauses};
  struct cts_run_opts ro = {.adapter = R->adapter, .jobs = 1, .timeout_ms = job.timeout_ms,
                            .quiet = 1};
  cts_run_jobs(&job, 1, &ro);
  out->status = job.status;
  describe(R, c, job.message ? job.message : "", out);
  R->stop |= cts_run_interrupted();
  free(job.message);
  free(job.output);
  free(job.expected_reason);
  free(job.graded_by);
  cts_case_free(c);
  return 0;
}

int red_same(const struct red_outcome *a, const struct red_outcome *b) {
  return a->status == b->status && a->kind == b->kind && !strcmp(a->message, b->message);
}

static uint64_t text_hash(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static void progress(const struct reducer *R) {
  double s = (cts_now_ms() - R->started) / 1000;
  fprintf(stderr, "%stsm-cts reduce: %zu candidates run, %zu did not parse; %zu of %zu "
          "statements left (%.0f s)%s", R->live ? "\r\033[K" : "", R->runs, R->unparsed,
          R->best, R->original, s, R->live ? "" : "\n");
}

int red_interesting(struct reducer *R, const char *text) {
  uint64_t h = text_hash(text);
  for (size_t i = 0; i < R->n_seen; i++)
    if (R->seen[i] == h) return R->seen_same[i];
  struct red_outcome out = {0};
  int same = red_run(R, text, &out) == 0 && red_same(&out, &R->target);
  if (out.message) R->runs++;
  else R->unparsed++;
  int ran = out.message != NULL;
  red_outcome_free(&out);
  size_t n = R->n_seen;
  CTS_PUSH(R->seen, R->n_seen, R->cap_seen, h);
  CTS_PUSH(R->seen_same, n, R->cap_seen_same, (unsigned char)same);
  if (ran && (R->live || R->runs % 25 == 0)) progress(R);
  return same;
}

/* ---- the search ------------------------------------------------------------------ */

/* Whether R->cfg fails the same way; when it does, it is the smallest case so far. */
static int test_config(struct reducer *R) {
  char *text = red_render(&R->text, &R->cfg);
  int same = red_interesting(R, text);
  free(text);
  if (same) {
    R->best = red_count(&R->text, &R->cfg);
    progress(R);
  }
  return same;
}

/* The sibling units ddmin works on: n indexes into the units. */
struct siblings {
  int *items;
  size_t n;
};

/* Keeps, of the siblings, those in chunk `chunk` of `chunks` (or, for the complement,
 * the others). RETURN 1 when that fails the same way; else every one of them stays, as
 * before. */
static int try_chunk(struct reducer *R, const struct siblings *sib, size_t chunks, size_t chunk,
                     int complement) {
  for (size_t i = 0; i < sib->n; i++)
    R->cfg.kept[sib->items[i]] = (i * chunks / sib->n == chunk) != complement;
  if (test_config(R)) return 1;
  for (size_t i = 0; i < sib->n; i++) R->cfg.kept[sib->items[i]] = 1;
  return 0;
}

/* Drops the units that went from the siblings. */
static void compact(const struct reducer *R, struct siblings *sib) {
  size_t k = 0;
  for (size_t i = 0; i < sib->n; i++)
    if (R->cfg.kept[sib->items[i]]) sib->items[k++] = sib->items[i];
  sib->n = k;
}

/* Zeller's ddmin over the n sibling units in items, after trying none of them at all.
 * RETURN how many stay (items is compacted). */
static size_t ddmin(struct reducer *R, int *items, size_t n) {
  struct siblings sib = {items, n};
  if (n && try_chunk(R, &sib, 1, 0, 1)) return 0;
  size_t chunks = 2;
  while (sib.n >= 2 && !R->stop) {
    int found = 0;
    for (size_t k = 0; k < chunks && !found; k++)
      if ((found = try_chunk(R, &sib, chunks, k, 0))) chunks = 2;
    for (size_t k = 0; k < chunks && !found && chunks > 2; k++)
      if ((found = try_chunk(R, &sib, chunks, k, 1))) chunks--;
    if (found) {
      compact(R, &sib);
    } else {
      if (chunks >= sib.n) break;
      chunks = chunks * 2 < sib.n ? chunks * 2 : sib.n;
    }
  }
  return sib.n;
}

/* ddmin over the statements of a block (-1: the body), then inside each block that
 * stays. RETURN 1 when a statement went. */
static int reduce_block(struct reducer *R, int parent) {
  int *items = cts_xmalloc((R->text.n_units ? R->text.n_units : 1) * sizeof *items);
  size_t n = 0;
  for (size_t u = 0; u < R->text.n_units; u++)
    if (R->text.units[u].parent == parent && R->cfg.kept[u]) items[n++] = (int)u;
  size_t left = ddmin(R, items, n);
  int changed = left < n;
  for (size_t i = 0; i < left && !R->stop; i++)
    if (R->text.units[items[i]].is_block) changed |= reduce_block(R, items[i]);
  free(items);
  return changed;
}

/* Each block replaced by its body, each `expect error` by its action, where the case
 * still fails the same way (and parses: a `wrapped` block or a thread of `parallel`
 * cannot go). RETURN 1 when one was. */
static int try_unwraps(struct reducer *R) {
  int changed = 0;
  for (size_t u = 0; u < R->text.n_units && !R->stop; u++) {
    const struct red_unit *x = &R->text.units[u];
    if (R->cfg.unwrapped[u] || !(x->is_block || x->inner_col) ||
        !red_present(&R->text, &R->cfg, (int)u))
      continue;
    R->cfg.unwrapped[u] = 1;
    if (test_config(R)) changed = 1;
    else R->cfg.unwrapped[u] = 0;
  }
  return changed;
}

void red_search(struct reducer *R) {
  int changed = 1;
  while (changed && !R->stop) {
    changed = reduce_block(R, -1);
    changed |= try_unwraps(R);
  }
  if (R->live) fputs("\r\033[K", stderr);
}
