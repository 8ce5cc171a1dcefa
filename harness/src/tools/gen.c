/*
 * harness/src/tools/gen.c: the scenario generator's statement stream. Every action row of the
 * statement table (stmt_table.h) whose WRITER column names a writer (gen_write.c) is a
 * candidate at every step, so a new row with an existing argument shape is generated the
 * day it is added; its keyword and verbs come from the row, its operands from the symbols bound so
 * far (right kinds, bound before use), biased toward odd resources: views, components,
 * imported tensors, and whatever a release, close, dispose, move or borrow touched.
 * A block row with a block writer (gen_write.c: `wrapped`) is a candidate too while
 * fewer than GEN_MAX_DEPTH blocks are open: its inner statements are drawn the same way,
 * one level deeper, and what they bind stays usable after the block, as names are.
 * Clauses come from the rows' .clause; the frontmatter from the rows used. The
 * combination generator (combo_enum.c) writes single lines through the same writers
 * under a hold (gen_hold): gen_pick returns its target and focus first, and the line's
 * first word choice is the alternative it names; each kept symbol records what it was
 * made from (gen_keep). It never writes blocks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "families.h"
#include "gen_internal.h"
#include "spec_index.h"

/* The rows by stable key (stmt_table.h, KEY): 1 + the row's kind, 0 for a free key.
 * The build fails when a row has no KEY column (a macro given too few arguments), when
 * a key is past the key space (an initializer out of the array) and when two rows share
 * one (a duplicate case in row_of_key). */
#define GEN__KEY_KEY(k) k
#define GEN__BY_KEY(KIND, KEY, ...) [GEN__KEY_##KEY] = CTS_##KIND + 1,
static const unsigned char kind_of_key[CTS_STMT_KEY_SPACE] = {CTS_STATEMENTS(GEN__BY_KEY)};
#undef GEN__BY_KEY

/* The row of a stable key, or NULL for a free one. */
#define GEN__KEY_CASE(KIND, KEY, ...) case GEN__KEY_##KEY:
static const struct gen_row *row_of_key(uint64_t key) {
  switch (key) {
    CTS_STATEMENTS(GEN__KEY_CASE)
    return &gen_rows[kind_of_key[key] - 1];
  default:
    return NULL;
  }
}
#undef GEN__KEY_CASE

/* The op table: name, tensor operands, where it may stand. */
#define GEN__OP(name, op, arity, in_mgr, in_graph) {name, op, arity, in_mgr, in_graph},
const struct gen_op gen_ops[] = {CTS_OPS(GEN__OP)};
#undef GEN__OP
const size_t gen_n_ops = sizeof gen_ops / sizeof gen_ops[0];

/* The clause each row's statement checks first (stmt_table.h, DATA's .clause). */
const char *gen_row_clause(int kind) { return gen_rows[kind].clause; }

int gen_rows_check(void) {
  int bad = 0;
  for (size_t k = 0; k < gen_n_rows; k++) {
    const struct gen_row *row = &gen_rows[k];
    const char *name = cts_stmt_kind_name(row->kind);
    if (row->kind != (int)k || !row->syntax || !row->about || !row->lead) {
      fprintf(stderr, "stmt_table.h: row %zu (%s) lacks its kind, lead, syntax or about\n", k, name);
      bad++;
    }
    if ((row->write || row->write_block) && !row->clause) {
      fprintf(stderr, "stmt_table.h: %s has a writer but no .clause\n", name);
      bad++;
    }
    if (!row->write && !row->write_block && (!row->why_not || !*row->why_not)) {
      fprintf(stderr, "stmt_table.h: %s has no writer and no NO_WRITER reason\n", name);
      bad++;
    }
  }
  return bad;
}

uint32_t gen_row_cap(int kind) { return gen_rows[kind].cap; }

/* ---- randomness and symbols ------------------------------------------------- */

/* The next byte of a fuzzer's input; past the end, 0 (every choice its first). */
static uint64_t next_byte(struct gen *g) { return g->at < g->n_bytes ? g->bytes[g->at++] : 0; }

uint64_t gen_rand(struct gen *g, uint64_t n) {
  if (g->bytes) {
    uint64_t v = next_byte(g);
    if (n > 256) v = v << 8 | next_byte(g);
    return n ? v % n : 0;
  }
  g->rng ^= g->rng << 13;
  g->rng ^= g->rng >> 7;
  g->rng ^= g->rng << 17;
  return n ? g->rng % n : 0;
}

/* The line's first word choice under a combination's hold: alternative `variant`, or
 * no_variant when there are fewer. RETURN the index, or -1 when the choice is free. */
int gen_held_choice(struct gen *g, size_t count) {
  if (!g->hold.variant || g->hold.words++) return -1;
  if ((size_t)g->hold.variant > count) {
    g->hold.no_variant = 1;
    return 0;
  }
  return g->hold.variant - 1;
}

/* One of the '|'-separated alternatives of a row's verb, into buf. */
const char *gen_pick_word(struct gen *g, const char *alternatives, char *buf, size_t n) {
  size_t count = 1;
  for (const char *p = alternatives; *p; p++) count += *p == '|';
  int held = gen_held_choice(g, count);
  size_t want = held >= 0 ? (size_t)held : (size_t)gen_rand(g, count);
  const char *start = alternatives;
  for (size_t k = 0; k < want; k++) start = strchr(start, '|') + 1;
  size_t len = strcspn(start, "|");
  snprintf(buf, n, "%.*s", (int)len, start);
  return buf;
}

/* The held symbol `which` (1 + index, 0: none) when the line has not taken it yet and
 * its kind is in mask; then it is taken. */
static struct gen_sym *held_sym(struct gen *g, int which, int *used, int mask) {
  if (!which || *used || !(g->syms[which - 1].kind & mask)) return NULL;
  *used = 1;
  g->hold.picked |= which <= 64 ? 1ull << (which - 1) : 0;
  return &g->syms[which - 1];
}

/* Puts symbol i in the ring of recent ones. */
static void remember(struct gen *g, size_t i) { g->recent[g->n_recent++ % GEN_RECENT] = (int)i; }

/* One of the recent symbols of a kind in mask, or NULL when none is. */
static struct gen_sym *recent_sym(struct gen *g, int mask) {
  size_t n = g->n_recent < GEN_RECENT ? g->n_recent : GEN_RECENT, fits = 0;
  for (size_t k = 0; k < n; k++) fits += (g->syms[g->recent[k]].kind & mask) != 0;
  if (!fits) return NULL;
  size_t want = (size_t)gen_rand(g, fits);
  for (size_t k = 0; k < n; k++) {
    int i = g->recent[k];
    if (!(g->syms[i].kind & mask) || want-- > 0) continue;
    g->hold.picked |= i < 64 ? 1ull << i : 0;
    return &g->syms[i];
  }
  return NULL;
}

/* Any bound symbol of the kinds in mask, an odd one half of the time when there is one;
 * NULL when there is none. */
static struct gen_sym *draw_sym(struct gen *g, int mask) {
  size_t n = 0, n_odd = 0;
  for (size_t i = 0; i < g->n_syms; i++)
    if (g->syms[i].kind & mask) {
      n++;
      n_odd += g->syms[i].odd != 0;
    }
  if (!n) return NULL;
  int odd_only = n_odd && gen_rand(g, 2);
  size_t k = (size_t)gen_rand(g, odd_only ? n_odd : n);
  for (size_t i = 0; i < g->n_syms; i++) {
    struct gen_sym *s = &g->syms[i];
    if (!(s->kind & mask) || (odd_only && !s->odd)) continue;
    if (k-- > 0) continue;
    g->hold.picked |= i < 64 ? 1ull << i : 0;
    remember(g, i);
    return s;
  }
  return NULL;
}

/* A bound symbol of one of the kinds in mask, or NULL. Under a combination's hold, its
 * target and then its focus come first. Otherwise a
 * third of the time one of the symbols the last lines took or made, so that statements
 * meet on one resource (a borrow chain, a close of its lender, a return), where bugs
 * between two rules live; else odd ones first half of the time. */
struct gen_sym *gen_pick(struct gen *g, int mask) {
  struct gen_sym *held = held_sym(g, g->hold.target, &g->hold.used_target, mask);
  if (!held) held = held_sym(g, g->hold.focus, &g->hold.used_focus, mask);
  if (held) return held;
  int holding = g->hold.target || g->hold.focus || g->hold.variant;
  if (!holding && gen_rand(g, 3) == 0 && (held = recent_sym(g, mask))) {
    remember(g, (size_t)(held - g->syms));
    return held;
  }
  return draw_sym(g, mask);
}

void gen_sym_name(char *buf, size_t n, int kind, int number) {
  static const char prefix[] = "mtspxgn"; /* by the kind's bit */
  int bit = 0;
  while ((1 << bit) < kind) bit++;
  snprintf(buf, n, "%c%d", prefix[bit], number);
}

/* A fresh name for a symbol of `kind`, bound when the line is kept (gen_keep). */
const char *gen_fresh(struct gen *g, int kind, int elems, int odd) {
  struct gen_sym *s = &g->pending[g->n_pending++];
  gen_sym_name(s->name, sizeof s->name, kind, g->next_name++);
  s->kind = kind;
  s->elems = elems;
  s->odd = odd;
  s->deps = 0;
  return s->name;
}

/* ---- a case ------------------------------------------------------------------ */

/* Generated cases are .tsm: the capsule-level rows (.pytsm, run by the Python bridge)
 * are not theirs, even where a writer exists for the same argument shape. */
int gen_row_usable(const struct gen_row *row) {
  return row->cls == CTS_CLASS_ACTION && row->family != CTS_FAMILY_DLPACK_PY &&
         row->write != NULL;
}

int gen_block_usable(const struct gen_row *row) {
  return row->cls == CTS_CLASS_BLOCK && row->family != CTS_FAMILY_DLPACK_PY &&
         row->write_block != NULL;
}

int gen_write_row(struct gen *g, const struct gen_row *row) {
  g->line.len = 0;
  g->n_pending = 0;
  g->hold.used_focus = g->hold.used_target = g->hold.words = g->hold.no_variant = 0;
  g->hold.picked = 0;
  return row->write(g, row);
}

void gen_add_line(struct gen *g, struct cts_gen_case *gc, const char *text, const char *alt,
                  int kind) {
  int indent = 2 * g->depth;
  cts_gen_case_add(gc, cts_printf_dup("%*s%s", indent, "", text),
                   alt ? cts_printf_dup("%*s%s", indent, "", alt) : NULL, kind);
}

static int wanted(const struct gen *g, const struct gen_row *row) {
  return gen_row_usable(row) && (row->binds & g->want) &&
         (!g->families || (g->families & row->cap));
}

/* A row drawn by stable key, never by position (stmt_table.h, KEY): NULL for
 * a free key. Under g->want, the first row at or after the drawn key (cyclically) that
 * is usable and binds what it names, NULL when none is: a row added later at a free
 * key changes only the draws that landed on or before it in a gap. */
static const struct gen_row *draw_row(struct gen *g) {
  uint64_t key = gen_rand(g, CTS_STMT_KEY_SPACE);
  if (!g->want) return row_of_key(key);
  for (uint64_t i = 0; i < CTS_STMT_KEY_SPACE; i++) {
    const struct gen_row *row = row_of_key((key + i) % CTS_STMT_KEY_SPACE);
    if (row && wanted(g, row)) return row;
  }
  return NULL;
}

/* A drawn block row, written half of the time while the depth allows. RETURN the lines
 * written, 0 when none were. */
static int write_drawn_block(struct gen *g, const struct gen_row *row, struct cts_gen_case *gc) {
  if (g->depth >= GEN_MAX_DEPTH || gen_rand(g, 2)) return 0;
  int n = row->write_block(g, row, gc);
  return n > 0 ? n : 0;
}

/* A drawn statement row, written and kept when it is usable and binds what g->want
 * names; a row that binds nothing only a third of the time (makers first: more to act
 * on). RETURN 1 when its line was added, 0 otherwise. */
static int write_drawn_row(struct gen *g, const struct gen_row *row, struct cts_gen_case *gc) {
  if (!gen_row_usable(row) || (g->want && !(row->binds & g->want))) return 0;
  if (!row->binds && gen_rand(g, 3)) return 0;
  if (gen_write_row(g, row) != 0) return 0;
  gen_keep(g);
  gen_add_line(g, gc, g->line.buf, NULL, row->kind); /* cts_buf keeps a NUL */
  return 1;
}

/* A block is drawn half as often as a row (it binds what its inner statements make, so
 * it counts as a maker). */
int gen_statement(struct gen *g, struct cts_gen_case *gc) {
  for (int tries = 0; tries < 16; tries++) {
    const struct gen_row *row = draw_row(g);
    if (!row && g->want) return 0;
    if (!row) continue; /* a free key */
    if (g->families && !(g->families & row->cap)) continue;
    int n = gen_block_usable(row) && !g->want ? write_drawn_block(g, row, gc)
                                               : write_drawn_row(g, row, gc);
    if (n > 0) return n;
  }
  return 0;
}

void gen_keep(struct gen *g) {
  uint64_t from = 0;
  for (size_t i = 0; i < g->n_syms && i < 64; i++)
    if (g->hold.picked >> i & 1) from |= 1ull << i | g->syms[i].deps;
  for (size_t i = 0; i < g->n_pending && g->n_syms < GEN_MAX_SYMS; i++) {
    remember(g, g->n_syms);
    g->pending[i].deps = from;
    g->syms[g->n_syms++] = g->pending[i];
  }
  g->n_pending = 0;
  g->hold.picked = 0;
}

void cts_gen_case_add(struct cts_gen_case *gc, char *text, char *alt, int kind) {
  struct cts_gen_line line = {text, alt, kind};
  CTS_PUSH(gc->lines, gc->n, gc->cap, line);
}

const char *cts_gen_stmt(const char *text) { return text + strspn(text, " "); }

int cts_gen_opens_block(const char *text) {
  size_t n = strlen(text);
  return n && text[n - 1] == '{';
}

int cts_gen_closes_block(const char *text) { return !strcmp(cts_gen_stmt(text), "}"); }

size_t cts_gen_block_end(const struct cts_gen_case *gc, size_t i) {
  int depth = 0;
  for (size_t j = i; j < gc->n; j++) {
    depth += cts_gen_opens_block(gc->lines[j].text) - cts_gen_closes_block(gc->lines[j].text);
    if (!depth) return j;
  }
  return gc->n - 1;
}

void cts_gen_case_free(struct cts_gen_case *gc) {
  for (size_t i = 0; i < gc->n; i++) {
    free(gc->lines[i].text);
    free(gc->lines[i].alt);
  }
  free(gc->lines);
  memset(gc, 0, sizeof *gc);
}

/* The generated statements of one case (from bytes: until they run out), then a
 * candidate expectation per symbol. */
void gen_case(struct gen *g, struct cts_gen_case *gc) {
  g->n_syms = 0;
  g->n_recent = 0;
  g->syms[g->n_syms++] = (struct gen_sym){"root", CTS_SYM_MANAGER, 0, 0, 0};
  g->depth = 0;
  int n = g->min + (int)gen_rand(g, (uint64_t)(g->max - g->min + 1));
  for (int i = 0; i < n && !(g->bytes && g->at >= g->n_bytes);) {
    int written = gen_statement(g, gc);
    i += written > 0 ? written : 1; /* a block counts its inner statements too */
  }
  gen_expectations(g, gc);
}

size_t cts_gen_from_bytes(const uint8_t *data, size_t size, unsigned families,
                          uint32_t dtypes, struct cts_gen_case *gc) {
  struct gen *g = cts_xcalloc(1, sizeof *g);
  g->bytes = data;
  g->n_bytes = size;
  g->min = 1;
  g->max = 40;
  g->families = families;
  g->dtypes = dtypes;
  gen_case(g, gc);
  size_t used = g->at < size ? g->at : size;
  cts_buf_free(&g->line);
  free(g);
  return used;
}
