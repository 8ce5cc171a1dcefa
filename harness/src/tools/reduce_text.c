/*
 * harness/src/tools/reduce_text.c: the case file as `tsm-cts reduce` edits it. The file's lines
 * stay as written; the parser's statement tree says which lines each statement holds (a
 * block: its header, its body and its closing `}`; any statement: the comment lines right
 * above it), and a candidate is rendered by leaving out the lines of the statements it
 * drops, the header and `}` of each block it replaces by its body (dedented), and the
 * `expect error CODE:` of each wrapper it replaces by its action.
 */
#include <stdlib.h>
#include <string.h>

#include "reduce_internal.h"
#include "util.h"

static int indent_of(const char *s) {
  int n = 0;
  while (s[n] == ' ' || s[n] == '\t') n++;
  return n;
}

static int is_comment(const char *s) { return s[indent_of(s)] == '#'; }

static int is_block_kind(int kind) {
  int shape = cts_stmt_shape(kind);
  return shape == CTS_SHAPE_REPEAT || shape == CTS_SHAPE_THREAD || shape == CTS_SHAPE_BLOCK ||
         shape == CTS_SHAPE_FLAT;
}

/* The `}` that closes a block whose statements end on line `from`: the parser has
 * checked that it is the next line that starts with one. */
static int closing_line(const struct red_text *t, int from) {
  for (size_t i = (size_t)from + 1; i < t->n_lines; i++)
    if (t->lines[i][indent_of(t->lines[i])] == '}') return (int)i;
  return (int)t->n_lines - 1;
}

static int add_units(struct red_text *t, const struct cts_block *b, int parent, int end);

/* Unit for st; a block's body follows it. RETURN the last line it holds. */
static int add_unit(struct red_text *t, const struct cts_stmt *st, int parent) {
  struct red_unit u = {.first = st->line - 1, .parent = parent, .kind = st->kind};
  u.lead = u.last = u.first;
  while (u.lead - 1 >= t->body && is_comment(t->lines[u.lead - 1])) u.lead--;
  u.is_block = is_block_kind(st->kind);
  if (cts_stmt_shape(st->kind) == CTS_SHAPE_ERROR && st->u.error.inner)
    u.inner_col = st->u.error.inner->col - 1;
  int me = (int)t->n_units;
  CTS_PUSH(t->units, t->n_units, t->cap_units, u);
  if (!u.is_block) return u.first;
  int end = add_units(t, &st->body, me, u.first);
  struct red_unit *blk = &t->units[me];
  blk->last = closing_line(t, end);
  if (st->body.n) {
    int deeper = indent_of(t->lines[st->body.items[0].line - 1]) - indent_of(t->lines[blk->first]);
    blk->dedent = deeper > 0 ? deeper : 0;
  }
  return blk->last;
}

/* The units of b's statements. RETURN the last line they hold, or `end` if none. */
static int add_units(struct red_text *t, const struct cts_block *b, int parent, int end) {
  for (size_t i = 0; i < b->n; i++) end = add_unit(t, &b->items[i], parent);
  return end;
}

static void split_lines(struct red_text *t, const char *text) {
  size_t cap = 0;
  for (const char *p = text; *p;) {
    size_t len = strcspn(p, "\n");
    size_t keep = len && p[len - 1] == '\r' ? len - 1 : len;
    CTS_PUSH(t->lines, t->n_lines, cap, cts_xstrndup(p, keep));
    p += len + (p[len] == '\n');
  }
}

int red_text_load(struct red_text *t, const char *text, const struct cts_case *c) {
  memset(t, 0, sizeof *t);
  split_lines(t, text);
  size_t close = 1;
  while (close < t->n_lines && strcmp(t->lines[close], "---")) close++;
  if (close >= t->n_lines) return -1; /* not reached: the case parsed */
  t->body = (int)close + 1;
  add_units(t, &c->body, -1, t->body);
  t->owner = cts_xmalloc((t->n_lines ? t->n_lines : 1) * sizeof *t->owner);
  for (size_t i = 0; i < t->n_lines; i++) t->owner[i] = -1;
  /* In document order a block comes before its body, which then claims its own lines. */
  for (size_t u = 0; u < t->n_units; u++)
    for (int i = t->units[u].lead; i <= t->units[u].last; i++) t->owner[i] = (int)u;
  return 0;
}

void red_text_free(struct red_text *t) {
  for (size_t i = 0; i < t->n_lines; i++) free(t->lines[i]);
  free(t->lines);
  free(t->units);
  free(t->owner);
  memset(t, 0, sizeof *t);
}

void red_config_init(struct red_config *cfg, size_t n_units) {
  cfg->kept = cts_xmalloc(n_units ? n_units : 1);
  memset(cfg->kept, 1, n_units ? n_units : 1);
  cfg->unwrapped = cts_xcalloc(n_units ? n_units : 1, 1);
}

void red_config_free(struct red_config *cfg) {
  free(cfg->kept);
  free(cfg->unwrapped);
  cfg->kept = cfg->unwrapped = NULL;
}

int red_present(const struct red_text *t, const struct red_config *cfg, int u) {
  for (; u >= 0; u = t->units[u].parent)
    if (!cfg->kept[u]) return 0;
  return 1;
}

static int unwrapped_block(const struct red_text *t, const struct red_config *cfg, int u) {
  return t->units[u].is_block && cfg->unwrapped[u];
}

size_t red_count(const struct red_text *t, const struct red_config *cfg) {
  size_t n = 0;
  for (size_t u = 0; u < t->n_units; u++)
    n += red_present(t, cfg, (int)u) && !unwrapped_block(t, cfg, (int)u);
  return n;
}

/* Whether line i, of unit u, is left out. */
static int line_dropped(const struct red_text *t, const struct red_config *cfg, int u, int i) {
  if (!red_present(t, cfg, u)) return 1;
  return unwrapped_block(t, cfg, u) && (i <= t->units[u].first || i == t->units[u].last);
}

/* How far line i, of unit u, moves left: the body indentation of each unwrapped block
 * it lies in. */
static int shift_of(const struct red_text *t, const struct red_config *cfg, int u, int i) {
  int shift = 0;
  for (; u >= 0; u = t->units[u].parent)
    if (unwrapped_block(t, cfg, u) && i > t->units[u].first && i < t->units[u].last)
      shift += t->units[u].dedent;
  return shift;
}

char *red_render(const struct red_text *t, const struct red_config *cfg) {
  struct cts_buf b = {0};
  for (int i = 0; i < (int)t->n_lines; i++) {
    int u = i < t->body ? -1 : t->owner[i];
    if (u >= 0 && line_dropped(t, cfg, u, i)) continue;
    const char *s = t->lines[i];
    int indent = indent_of(s), shift = u >= 0 ? shift_of(t, cfg, u, i) : 0;
    if (shift > indent) shift = indent;
    if (u >= 0 && cfg->unwrapped[u] && t->units[u].inner_col && i == t->units[u].first)
      cts_buf_printf(&b, "%.*s%s\n", indent - shift, s, s + t->units[u].inner_col);
    else
      cts_buf_printf(&b, "%s\n", s + shift);
  }
  return b.buf ? cts_buf_take(&b) : cts_xstrdup("");
}
