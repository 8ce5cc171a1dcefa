/*
 * harness/src/lang/case_parse.c: a case file (cases/README.md), `.tsm` or capsule-level
 * `.pytsm` (cases/dlpack/python/README.md; the suffix picks the dialect): its frontmatter
 * (`roles:` only in .pytsm), its body's blocks, and the case's lifetime. The statements themselves are read by their rows of
 * the statement table (case_stmt.c); tokens, names and literals are case_lex.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_lex.h"
#include "spec_index.h"
#include "util.h"

/* ---- frontmatter ----------------------------------------------------------- */

struct text_cursor {
  const char *p;
  int line;
};

static int next_line(struct text_cursor *tc, const char **s, size_t *len) {
  if (!tc->p || !*tc->p) return 0;
  const char *eol = strchr(tc->p, '\n');
  *s = tc->p;
  *len = eol ? (size_t)(eol - tc->p) : strlen(tc->p);
  if (*len && (*s)[*len - 1] == '\r') (*len)--;
  tc->p = eol ? eol + 1 : tc->p + strlen(tc->p);
  tc->line++;
  return 1;
}

/* The value of one `key: value` line. */
struct fm_value {
  const char *raw;  /* after the colon */
  size_t raw_len;
  const char *text; /* trimmed */
  size_t len;
  int line, col;    /* col: the colon's column + 1 */
};

/* The frontmatter keys, in the order of fm_key's dispatch. */
enum fm_key_id { FM_DESCRIPTION, FM_ORIGIN, FM_CLAUSES, FM_REQUIRES, FM_ROLES, FM_DEVICES,
                 FM_TAGS, FM_TIMEOUT, FM_N_KEYS };
static const char *const fm_key_names[FM_N_KEYS] = {
    "description", "origin", "clauses", "requires", "roles", "devices", "tags", "timeout"};

/* What parse_frontmatter has seen: the line of each key, 0 when absent. A key given
 * twice is an error: a second value would either be ignored or replace the first, and
 * the case author meant one of them. */
struct fm_seen {
  int line[FM_N_KEYS];
};

static size_t skip_space(const struct fm_value *v, size_t i) {
  while (i < v->raw_len && isspace((unsigned char)v->raw[i])) i++;
  return i;
}

/* The end of the list item that starts at raw[start], its trailing blanks left out
 * (start when it is empty); *i moves to the ',' or ']' after it, or to the end of the value. */
static size_t list_item_end(const struct fm_value *v, size_t start, size_t *i) {
  while (*i < v->raw_len && v->raw[*i] != ',' && v->raw[*i] != ']') (*i)++;
  size_t end = *i;
  while (end > start && isspace((unsigned char)v->raw[end - 1])) end--;
  return end;
}

/* A `[a, b]` value into items (and each item's column into cols, when not NULL). */
static int parse_list(struct parser *p, const struct fm_value *v, char ***items, size_t *n,
                      int **cols) {
  const char *s = v->raw;
  size_t len = v->raw_len, cap = 0, capc = 0, nc = 0;
  size_t i = skip_space(v, 0);
  if (i >= len || s[i] != '[') {
    fail_at(p, v->line, v->col + (int)i, "expected a list '[a, b]'");
    return -1;
  }
  i++;
  for (;;) {
    i = skip_space(v, i);
    if (i < len && s[i] == ']' && *n == 0) {
      i++;
      break;
    }
    size_t start = i, end = list_item_end(v, start, &i);
    if (end == start) {
      fail_at(p, v->line, v->col + (int)start, "empty list item");
      return -1;
    }
    CTS_PUSH(*items, *n, cap, cts_xstrndup(s + start, end - start));
    if (cols) CTS_PUSH(*cols, nc, capc, v->col + (int)start);
    if (i >= len) {
      fail_at(p, v->line, v->col + (int)i, "unterminated list: expected ']'");
      return -1;
    }
    if (s[i++] == ']') break;
  }
  i = skip_space(v, i);
  if (i < len) {
    fail_at(p, v->line, v->col + (int)i, "unexpected text after the list");
    return -1;
  }
  return 0;
}

static int fm_text(struct parser *p, const char *key, const struct fm_value *v, char **out) {
  if (v->len == 0) {
    fail_at(p, v->line, v->col + 1, "empty %s", key);
    return -1;
  }
  *out = cts_xstrndup(v->text, v->len); /* fm_key refuses a key given twice */
  return 0;
}

static int fm_clauses(struct parser *p, const struct fm_value *v) {
  struct cts_case *c = p->c;
  if (parse_list(p, v, &c->clauses, &c->n_clauses, &c->clause_cols)) return -1;
  size_t nl = 0, capl = 0;
  for (size_t i = 0; i < c->n_clauses; i++) {
    CTS_PUSH(c->clause_lines, nl, capl, v->line);
    if (!cts_clause_id_valid(c->clauses[i])) {
      fail_at(p, v->line, c->clause_cols[i], "malformed clause id '%s' (PREFIX.TOPIC.N)",
              c->clauses[i]);
      return -1;
    }
    if (p->spec && !cts_spec_find(p->spec, c->clauses[i])) {
      fail_at(p, v->line, c->clause_cols[i], "unknown clause '%s' (not in spec/)", c->clauses[i]);
      return -1;
    }
  }
  if (c->n_clauses > 0) return 0;
  fail_at(p, v->line, v->col + 1, "a case cites at least one clause");
  return -1;
}

static int fm_requires(struct parser *p, const struct fm_value *v) {
  struct cts_case *c = p->c;
  int *cols = NULL, rc = parse_list(p, v, &c->requires, &c->n_requires, &cols);
  for (size_t i = 0; rc == 0 && i < c->n_requires; i++) {
    if (!cts_family_cap(c->requires[i])) {
      fail_at(p, v->line, cols[i], "unknown family '%s'", c->requires[i]);
      rc = -1;
    }
  }
  free(cols);
  return rc;
}

/* `roles:`, of capsule-level cases only: which peers the Python runner pairs. */
static int fm_roles(struct parser *p, int key_col, const struct fm_value *v) {
  struct cts_case *c = p->c;
  if (!c->capsule_level) {
    fail_at(p, v->line, key_col, "'roles' belongs to capsule-level .pytsm cases");
    return -1;
  }
  int *cols = NULL, rc = parse_list(p, v, &c->roles, &c->n_roles, &cols);
  for (size_t i = 0; rc == 0 && i < c->n_roles; i++) {
    if (strcmp(c->roles[i], "producer") && strcmp(c->roles[i], "consumer")) {
      fail_at(p, v->line, cols[i], "unknown role '%s' (producer or consumer)", c->roles[i]);
      rc = -1;
    }
  }
  free(cols);
  return rc;
}

/* At most a day: times any $TSM_CTS_TIMEOUT_MULTIPLIER it stays far inside int64. */
static int fm_timeout(struct parser *p, const struct fm_value *v) {
  char *end;
  char *num = cts_xstrndup(v->text, v->len);
  errno = 0;
  long ms = strtol(num, &end, 10);
  int bad = v->len == 0 || *end || errno || ms <= 0 || ms > CTS_TIMEOUT_MAX_MS;
  free(num);
  if (bad) {
    fail_at(p, v->line, v->col + 1, "timeout is a number of milliseconds from 1 to %d (a day)",
            CTS_TIMEOUT_MAX_MS);
    return -1;
  }
  p->c->timeout_ms = (int)ms;
  return 0;
}

static int fm_value(struct parser *p, int id, int key_col, const struct fm_value *v) {
  struct cts_case *c = p->c;
  switch (id) {
  case FM_DESCRIPTION: return fm_text(p, fm_key_names[id], v, &c->description);
  case FM_ORIGIN: return fm_text(p, fm_key_names[id], v, &c->origin);
  case FM_CLAUSES: return fm_clauses(p, v);
  case FM_REQUIRES: return fm_requires(p, v);
  case FM_ROLES: return fm_roles(p, key_col, v);
  case FM_DEVICES:
    return parse_list(p, v, &c->devices, &c->n_devices, NULL);
  case FM_TAGS:
    return parse_list(p, v, &c->tags, &c->n_tags, NULL);
  default: return fm_timeout(p, v);
  }
}

static int fm_key(struct parser *p, const char *key, int key_col, const struct fm_value *v,
                  struct fm_seen *seen) {
  int id = 0;
  while (id < FM_N_KEYS && strcmp(key, fm_key_names[id]) != 0) id++;
  if (id == FM_N_KEYS) {
    fail_at(p, v->line, key_col, "unknown frontmatter key '%s'", key);
    return -1;
  }
  if (seen->line[id]) {
    fail_at(p, v->line, key_col, "frontmatter key '%s' given twice (first on line %d)", key,
            seen->line[id]);
    return -1;
  }
  seen->line[id] = v->line;
  return fm_value(p, id, key_col, v);
}

/* One line inside the frontmatter; blank and comment lines are skipped. */
static int fm_line(struct parser *p, const char *s, size_t len, int line, struct fm_seen *seen) {
  const char *t = s;
  size_t tl = len;
  trim(&t, &tl);
  if (tl == 0 || t[0] == '#') return 0;
  const char *colon = memchr(s, ':', len);
  int key_col = (int)(t - s) + 1;
  if (!colon) {
    fail_at(p, line, key_col, "expected 'key: value'");
    return -1;
  }
  struct fm_value v = {colon + 1, len - (size_t)(colon + 1 - s), colon + 1, 0, line,
                       (int)(colon + 1 - s) + 1};
  v.len = v.raw_len;
  trim(&v.text, &v.len);
  char *key = cts_xstrndup(t, (size_t)(colon - t));
  int rc = fm_key(p, key, key_col, &v, seen);
  free(key);
  return rc;
}

/* What a key left out means: requires: [managers] (a .tsm case; a .pytsm case names
 * dlpack-py), roles: [producer, consumer]. */
static int frontmatter_defaults(struct parser *p, const struct fm_seen *seen) {
  struct cts_case *c = p->c;
  int has_py = 0;
  for (size_t i = 0; i < c->n_requires; i++) has_py |= !strcmp(c->requires[i], "dlpack-py");
  if (c->capsule_level && !has_py) {
    fail_at(p, seen->line[FM_REQUIRES] ? seen->line[FM_REQUIRES] : 1, 1,
            "a capsule-level case requires [dlpack-py]");
    return -1;
  }
  size_t cap = 0;
  if (c->n_requires == 0) CTS_PUSH(c->requires, c->n_requires, cap, cts_xstrdup("managers"));
  if (c->capsule_level && c->n_roles == 0) {
    cap = 0;
    CTS_PUSH(c->roles, c->n_roles, cap, cts_xstrdup("producer"));
    CTS_PUSH(c->roles, c->n_roles, cap, cts_xstrdup("consumer"));
  }
  return 0;
}

static int parse_frontmatter(struct parser *p, struct text_cursor *tc) {
  const char *s;
  size_t len;
  if (!next_line(tc, &s, &len) || len != 3 || memcmp(s, "---", 3) != 0) {
    fail_at(p, 1, 1, "missing frontmatter: a case starts with a '---' line");
    return -1;
  }
  struct fm_seen seen = {{0}};
  for (;;) {
    if (!next_line(tc, &s, &len)) {
      fail_at(p, 1, 1, "unterminated frontmatter: no closing '---' line");
      return -1;
    }
    if (len == 3 && memcmp(s, "---", 3) == 0) break;
    if (fm_line(p, s, len, tc->line, &seen)) return -1;
  }
  if (!seen.line[FM_DESCRIPTION] || !seen.line[FM_CLAUSES]) {
    fail_at(p, tc->line, 1, "frontmatter lacks '%s'",
            seen.line[FM_DESCRIPTION] ? "clauses" : "description");
    return -1;
  }
  return frontmatter_defaults(p, &seen);
}

/* ---- body ------------------------------------------------------------------ */

#define MAX_DEPTH 16

/* Each thread appears once in a parallel block. */
static int close_parallel(struct parser *p, const struct cts_stmt *st) {
  for (size_t i = 0; i < st->body.n; i++) {
    for (size_t k = 0; k < i; k++) {
      if (st->body.items[k].u.thread.number == st->body.items[i].u.thread.number) {
        fail_at(p, st->body.items[i].line, st->body.items[i].col,
                "each thread appears once in a parallel block");
        return -1;
      }
    }
  }
  return 0;
}

/* Closes a block at `}`; a wrapped block binds its result name. */
static int close_block(struct parser *p, struct open_block *ob, int line, int col) {
  struct cts_stmt *st = ob->st;
  if (st->kind == CTS_PARALLEL) return close_parallel(p, st);
  if (st->kind != CTS_WRAPPED) return 0;
  if (st->body.n == 0 || st->body.items[st->body.n - 1].kind != CTS_RESULT) {
    fail_at(p, line, col, "a wrapped block ends with 'result NAME'");
    return -1;
  }
  int a = st->body.items[st->body.n - 1].a, kind = a >= 0 ? p->c->syms[a].kind : 0;
  struct line_toks one;
  one.t[0] = ob->result_name;
  one.t[0].s = ob->name_buf; /* the block record moved since the head was parsed */
  one.t[0].kind = T_WORD;
  one.t[1].kind = T_END;
  one.n = 1;
  one.pos = 0;
  one.line = st->line;
  if (!kind) { /* `result none` (a is -2): R names nothing; any resource use of it parses
                * (and, as after a refused binding, cannot run) */
    int s = sym_find(p->c, &one.t[0]);
    kind = s >= 0 && (p->c->syms[s].kind & CTS_SYM_RESOURCE) ? p->c->syms[s].kind
                                                               : CTS_SYM_RESOURCE;
  }
  st->dst = bind_name(p, &one, kind == CTS_SYM_ANY ? CTS_SYM_TENSOR : kind);
  return st->dst < 0 ? -1 : 0;
}

/* The blocks open while the body is read. */
struct body_state {
  struct cts_block *stack[MAX_DEPTH];
  struct open_block open[MAX_DEPTH];
  int depth;
};

/* What the innermost open block refuses to hold at this line; 0 if it takes it. */
static int refused_here(struct parser *p, struct line_toks *lt, const struct open_block *top) {
  const struct tok *first = peek(lt);
  const char *msg = NULL;
  if (!top) return 0;
  const struct cts_block *b = &top->st->body;
  if (top->st->kind == CTS_WRAPPED && b->n && b->items[b->n - 1].kind == CTS_RESULT)
    msg = "'result' must be the last statement of its block";
  else if (top->st->kind == CTS_PARALLEL && !tok_is(first, "thread"))
    msg = "a parallel block holds only thread blocks";
  else if (top->in_parallel && top->st->kind != CTS_PARALLEL &&
           (tok_is(first, "expect") || tok_is(first, "wrapped") || tok_is(first, "dump")))
    msg = "a thread inside 'parallel' holds only actions and repeat: check after the block";
  if (!msg) return 0;
  fail_at(p, lt->line, first->col, "%s", msg);
  return -1;
}

static void init_stmt(struct cts_stmt *st, const struct line_toks *lt, const char *s, size_t len) {
  memset(st, 0, sizeof *st);
  st->line = lt->line;
  st->col = lt->t[lt->pos].col;
  const char *txt = s;
  size_t tl = len;
  trim(&txt, &tl);
  const char *hash = memchr(txt, '#', tl);
  if (hash) tl = (size_t)(hash - txt);
  trim(&txt, &tl);
  st->text = cts_xstrndup(txt, tl);
  st->dst = st->a = st->b = st->out = -1;
}

/* Pushes the block statement just parsed as the innermost open block. */
static int open_block(struct parser *p, struct body_state *bs, struct open_block *ob,
                      const struct cts_stmt *st) {
  if (bs->depth + 1 == MAX_DEPTH) {
    fail_at(p, st->line, st->col, "blocks nest at most %d deep", MAX_DEPTH - 1);
    return -1;
  }
  struct cts_block *blk = bs->stack[bs->depth];
  ob->st = &blk->items[blk->n - 1];
  bs->open[bs->depth] = *ob;
  bs->stack[bs->depth + 1] = &ob->st->body;
  bs->depth++;
  return 0;
}

/* A statement line (not `}`), with the block statement's `{` when it opens one. */
static int body_statement(struct parser *p, struct line_toks *lt, struct body_state *bs,
                          const char *s, size_t len) {
  struct open_block *top = bs->depth ? &bs->open[bs->depth - 1] : NULL;
  if (refused_here(p, lt, top)) return -1;
  struct cts_stmt st;
  struct open_block ob;
  init_stmt(&st, lt, s, len);
  int opens = stmt_class(p, peek(lt)) == CTS_CLASS_BLOCK;
  memset(&ob, 0, sizeof ob);
  ob.in_parallel = top ? top->in_parallel : 0;
  ob.in_thread = top ? top->in_thread : 0;
  ob.st = &st;
  p->outer = top;
  p->open = &ob;
  int rc = parse_statement(p, lt, &st);
  if (rc == 0 && opens) rc = expect_punct(p, lt, "{");
  struct cts_block *blk = bs->stack[bs->depth];
  CTS_PUSH(blk->items, blk->n, blk->cap, st);
  if (rc == 0 && opens) rc = open_block(p, bs, &ob, &st);
  return rc;
}

static int body_line(struct parser *p, struct line_toks *lt, struct body_state *bs,
                     const char *s, size_t len) {
  struct tok *first = peek(lt);
  if (!tok_is(first, "}")) return body_statement(p, lt, bs, s, len);
  if (bs->depth == 0) {
    fail_at(p, lt->line, first->col, "'}' without an open block");
    return -1;
  }
  next(lt);
  bs->depth--;
  return close_block(p, &bs->open[bs->depth], lt->line, first->col);
}

static int parse_body(struct parser *p, struct text_cursor *tc) {
  struct body_state *bs = cts_xcalloc(1, sizeof *bs);
  struct line_toks *lt = cts_xmalloc(sizeof *lt);
  bs->stack[0] = &p->c->body;
  const char *s;
  size_t len;
  int rc = 0;
  while (rc == 0 && next_line(tc, &s, &len)) {
    rc = tokenize(p, s, len, tc->line, lt);
    if (rc || lt->n == 0) continue;
    rc = body_line(p, lt, bs, s, len);
    struct tok *rest = peek(lt);
    if (rc == 0 && rest->kind != T_END) {
      fail_at(p, lt->line, rest->col, "unexpected '%.*s' after the statement", (int)rest->len,
              rest->s);
      rc = -1;
    }
  }
  if (rc == 0 && bs->depth > 0) {
    struct cts_stmt *r = bs->open[bs->depth - 1].st;
    fail_at(p, r->line, r->col, "'%s' block is not closed with '}'", cts_stmt_keyword(r->kind));
    rc = -1;
  }
  free(lt);
  free(bs);
  return rc;
}

/* ---- API ------------------------------------------------------------------- */

int cts_case_has_tag(const struct cts_case *c, const char *tag) {
  for (size_t i = 0; i < c->n_tags; i++)
    if (strcmp(c->tags[i], tag) == 0) return 1;
  return 0;
}

struct cts_case *cts_case_parse(const char *path, const char *text,
                                const struct cts_spec *spec, struct cts_parse_error *err) {
  struct cts_case *c = cts_xcalloc(1, sizeof *c);
  c->path = cts_xstrdup(path);
  c->name = cts_xstrdup(path);
  struct cts_symbol root = {cts_xstrdup("root"), CTS_SYM_MANAGER};
  struct cts_symbol bogus = {cts_xstrdup("bogus"), CTS_SYM_ANY};
  CTS_PUSH(c->syms, c->n_syms, c->cap_syms, root);
  CTS_PUSH(c->syms, c->n_syms, c->cap_syms, bogus);
  size_t plen = strlen(path);
  c->capsule_level = plen > 6 && !strcmp(path + plen - 6, ".pytsm");
  struct parser p = {.c = c, .spec = spec, .err = err};
  memset(err, 0, sizeof *err);
  struct text_cursor tc = {text, 0};
  if (parse_frontmatter(&p, &tc) || parse_body(&p, &tc)) {
    cts_case_free(c);
    return NULL;
  }
  for (size_t i = 0; i < c->n_requires; i++) c->families |= cts_family_cap(c->requires[i]);
  if (c->n_threads == 0) CTS_PUSH(c->threads, c->n_threads, c->cap_threads, cts_xstrdup("main"));
  return c;
}

int cts_case_limit_ms(const struct cts_case *c, int default_ms) {
  const char *env = getenv("TSM_CTS_TIMEOUT_MULTIPLIER");
  double mult = env && atof(env) > 0 ? atof(env) : 1.0;
  double ms = (c && c->timeout_ms ? c->timeout_ms : default_ms) * mult;
  return ms >= INT_MAX ? INT_MAX : ms < 1 ? 1 : (int)ms;
}

int cts_case_text_check(const char *text, size_t len, struct cts_parse_error *err) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < len;) {
    const unsigned char *p = (const unsigned char *)text + i;
    size_t n = *p ? cts_utf8_sequence(p) : 0;
    if (n == 0 || n > len - i) {
      memset(err, 0, sizeof *err);
      err->line = line;
      err->col = (int)(i - line_start) + 1;
      if (*p) snprintf(err->msg, sizeof err->msg, "byte 0x%02x is not UTF-8 text", *p);
      else snprintf(err->msg, sizeof err->msg, "a NUL byte: a case file is UTF-8 text");
      return -1;
    }
    if (*p == '\n') {
      line++;
      line_start = i + 1;
    }
    i += n;
  }
  return 0;
}

struct cts_case *cts_case_load(const char *path, const struct cts_spec *spec,
                               struct cts_parse_error *err) {
  size_t len = 0;
  char *text = cts_read_file(path, &len);
  if (!text) {
    memset(err, 0, sizeof *err);
    err->line = 1;
    err->col = 1;
    snprintf(err->msg, sizeof err->msg, "cannot read: %s", strerror(errno));
    return NULL;
  }
  if (cts_case_text_check(text, len, err)) {
    free(text);
    return NULL;
  }
  struct cts_case *c = cts_case_parse(path, text, spec, err);
  free(text);
  return c;
}

static void free_stmt(struct cts_stmt *st);

static void free_block(struct cts_block *b) {
  for (size_t i = 0; i < b->n; i++) free_stmt(&b->items[i]);
  free(b->items);
}

static void free_inner(struct cts_stmt *inner) {
  if (inner) free_stmt(inner);
  free(inner);
}

static void free_stmt(struct cts_stmt *st) {
  free(st->text);
  free(st->list);
  free_block(&st->body);
  switch (cts_stmt_shape(st->kind)) {
    case CTS_SHAPE_LITERAL: free(st->u.literal.vals); break;
    case CTS_SHAPE_MAKE: free(st->u.make.literal.vals); break;
    case CTS_SHAPE_VALUES: free(st->u.values.v); break;
    case CTS_SHAPE_ERROR: free_inner(st->u.error.inner); break;
    case CTS_SHAPE_PY_ERROR: free_inner(st->u.py_error.inner); break;
    case CTS_SHAPE_PY_EXPECT: free(st->u.py_expect.v); break;
    default: break;
  }
}

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

void cts_case_free(struct cts_case *c) {
  if (!c) return;
  free(c->path);
  free(c->name);
  free(c->description);
  free(c->origin);
  free_strings(c->clauses, c->n_clauses);
  free(c->clause_lines);
  free(c->clause_cols);
  free_strings(c->requires, c->n_requires);
  free_strings(c->devices, c->n_devices);
  free_strings(c->tags, c->n_tags);
  free_strings(c->threads, c->n_threads);
  free_strings(c->roles, c->n_roles);
  free_strings(c->warnings, c->n_warnings);
  for (size_t i = 0; i < c->n_syms; i++) free(c->syms[i].name);
  free(c->syms);
  free_block(&c->body);
  free(c);
}
