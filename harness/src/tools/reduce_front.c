/*
 * harness/src/tools/reduce_front.c: the frontmatter of a case `tsm-cts reduce` wrote. What the
 * reduced body no longer needs goes: each family of `requires:` whose statement rows no
 * longer appear (the statement table's CAP column; `managers`, every case's, stays), and
 * each clause of `clauses:` that is the clause of rows the original used and the reduced
 * case does not (the rows' clauses of gen.c), unless none would stay. The
 * description says how many statements went; `origin:` and the other keys stay as
 * written.
 */
#include <stdlib.h>
#include <string.h>

#include "gen_internal.h"
#include "reduce_internal.h"
#include "util.h"

/* The kinds b's statements use, the actions of `expect error` and the bodies included. */
static void kinds_used(const struct cts_block *b, unsigned char *used) {
  for (size_t i = 0; i < b->n; i++) {
    const struct cts_stmt *st = &b->items[i];
    used[st->kind] = 1;
    if (cts_stmt_shape(st->kind) == CTS_SHAPE_ERROR && st->u.error.inner)
      used[st->u.error.inner->kind] = 1;
    kinds_used(&st->body, used);
  }
}

static int family_needed(const char *family, const unsigned char *used) {
  uint32_t cap = cts_family_cap(family);
  if (!strcmp(family, "managers")) return 1;
  for (int k = 0; k < CTS_N_STMT_KINDS; k++)
    if (used[k] && (gen_row_cap(k) & cap)) return 1;
  return 0;
}

/* Whether clause id belongs to rows the original used and the reduced case does not. */
static int clause_went(const char *id, const unsigned char *before, const unsigned char *now) {
  int was = 0;
  for (int k = 0; k < CTS_N_STMT_KINDS; k++) {
    const char *row = gen_row_clause(k);
    if (!row || strcmp(row, id)) continue;
    if (now[k]) return 0;
    was |= before[k];
  }
  return was;
}

static void put_requires(struct cts_buf *b, const struct cts_case *reduced,
                         const unsigned char *now) {
  int n = 0;
  cts_buf_printf(b, "requires: [");
  for (size_t i = 0; i < reduced->n_requires; i++)
    if (family_needed(reduced->requires[i], now))
      cts_buf_printf(b, "%s%s", n++ ? ", " : "", reduced->requires[i]);
  cts_buf_printf(b, "%s]", n ? "" : "managers");
}

/* The clauses that stay; all of them when none would (a case cites at least one). */
static void put_clauses(struct cts_buf *b, const struct cts_case *reduced,
                        const unsigned char *before, const unsigned char *now) {
  size_t staying = 0;
  for (size_t i = 0; i < reduced->n_clauses; i++)
    staying += !clause_went(reduced->clauses[i], before, now);
  int n = 0;
  cts_buf_printf(b, "clauses: [");
  for (size_t i = 0; i < reduced->n_clauses; i++)
    if (!staying || !clause_went(reduced->clauses[i], before, now))
      cts_buf_printf(b, "%s%s", n++ ? ", " : "", reduced->clauses[i]);
  cts_buf_printf(b, "]");
}

/* What reduce makes of one frontmatter line: the keys it edits, or the line as is. */
struct front_edit {
  const struct cts_case *reduced;
  const unsigned char *before, *now;
  size_t removed, total;
  int trim;
};

static void put_front_line(struct cts_buf *b, const char *line, const struct front_edit *e) {
  size_t indent = strspn(line, " \t");
  const char *key = line + indent;
  cts_buf_append(b, line, indent);
  if (e->trim && !strncmp(key, "requires:", 9))
    put_requires(b, e->reduced, e->now);
  else if (e->trim && !strncmp(key, "clauses:", 8))
    put_clauses(b, e->reduced, e->before, e->now);
  else if (!strncmp(key, "description:", 12))
    cts_buf_printf(b, "%s (tsm-cts reduce: %zu of %zu statements removed)", key, e->removed,
                   e->total);
  else
    cts_buf_printf(b, "%s", key);
  cts_buf_printf(b, "\n");
}

char *red_front(const char *text, const struct cts_case *orig, const struct cts_case *reduced,
                const struct red_front_edit *how) {
  unsigned char before[CTS_N_STMT_KINDS] = {0}, now[CTS_N_STMT_KINDS] = {0};
  kinds_used(&orig->body, before);
  kinds_used(&reduced->body, now);
  struct front_edit e = {reduced, before, now, how->removed, how->total, how->trim};
  struct cts_buf b = {0};
  int dashes = 0;
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, "\n");
    char *line = cts_xstrndup(p, len);
    if (dashes == 1 && strcmp(line, "---")) put_front_line(&b, line, &e);
    else cts_buf_printf(&b, "%s\n", line);
    dashes += dashes < 2 && !strcmp(line, "---");
    free(line);
    p += len + (p[len] == '\n');
  }
  return b.buf ? cts_buf_take(&b) : cts_xstrdup("");
}
