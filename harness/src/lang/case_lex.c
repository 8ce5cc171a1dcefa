/*
 * harness/src/lang/case_lex.c: tokens, names and literals of the case language
 * (cases/README.md). Every error names line and column: the first character of the
 * offending token, or the column just after the last token when something is missing
 * at the end of a line.
 */
#include "case_lex.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opsem.h"
#include "util.h"

void fail_at(struct parser *p, int line, int col, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = 1;
  p->err->line = line;
  p->err->col = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
  va_end(ap);
}

void warn_at(struct parser *p, int line, int col, const char *fmt, ...) {
  struct cts_buf b = {0};
  cts_buf_printf(&b, "%d:%d: warning: ", line, col);
  va_list ap;
  va_start(ap, fmt);
  cts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  CTS_PUSH(p->c->warnings, p->c->n_warnings, p->c->cap_warnings, cts_buf_take(&b));
}

void fail_expected(struct parser *p, struct line_toks *lt, const struct tok *t, const char *what) {
  if (t->kind == T_END)
    fail_at(p, lt->line, t->col, "expected %s at end of line", what);
  else
    fail_at(p, lt->line, t->col, "expected %s, found '%.*s'", what, (int)t->len, t->s);
}

/* ---- tokens ---------------------------------------------------------------- */

static int is_word_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

static size_t scan_word(const char *line, size_t len, size_t i) {
  while (i < len && (is_word_char(line[i]) || line[i] == '.' || line[i] == '-')) i++;
  return i;
}

static size_t scan_number(const char *line, size_t len, size_t i) {
  size_t j = i + 1;
  while (j < len && (isalnum((unsigned char)line[j]) || line[j] == '.' ||
                     ((line[j] == '-' || line[j] == '+') &&
                      (line[j - 1] == 'e' || line[j - 1] == 'E'))))
    j++;
  return j;
}

/* The whole token is read, however long (a cut one would read as another number); a
 * value is finite: `nan` never equals itself and no statement makes an infinity. */
static int read_number(struct parser *p, int lineno, struct tok *t) {
  char *buf = cts_xstrndup(t->s, t->len), *end;
  errno = 0;
  t->num = strtod(buf, &end);
  /* ERANGE with a finite result is a subnormal or a zero: a value all the same */
  int bad = *end != '\0' || (errno != 0 && isinf(t->num)) || end == buf;
  if (bad)
    fail_at(p, lineno, t->col, "bad number '%.40s%s'", buf, t->len > 40 ? "..." : "");
  else if (!isfinite(t->num))
    fail_at(p, lineno, t->col, "'%.40s' is not a finite number", buf);
  free(buf);
  return bad || !isfinite(t->num) ? -1 : 0;
}

/* The line being cut into tokens, and its number. */
struct line_text {
  const char *s;
  size_t len;
  int lineno;
};

/* The length of the punctuation at s[i]: `==` and `<=`, one of `[],={}:|`, and in a
 * capsule-level case `(` and `)`; 0 when there is none. */
static size_t punct_len(const struct parser *p, const struct line_text *l, size_t i) {
  char ch = l->s[i];
  if ((ch == '=' || ch == '<') && i + 1 < l->len && l->s[i + 1] == '=') return 2;
  return strchr("[],={}:|", ch) || (p->c->capsule_level && strchr("()", ch)) ? 1 : 0;
}

/* The token starting at s[i]; RETURN its end, or 0 after failing. */
static size_t scan_token(struct parser *p, const struct line_text *l, size_t i, struct tok *t) {
  char ch = l->s[i];
  size_t j;
  t->s = l->s + i;
  t->col = (int)i + 1;
  if (isalpha((unsigned char)ch) || ch == '_') {
    t->kind = T_WORD;
    j = scan_word(l->s, l->len, i);
  } else if (isdigit((unsigned char)ch) || ch == '-' || ch == '+' || ch == '.') {
    t->kind = T_NUM;
    j = scan_number(l->s, l->len, i);
  } else if ((j = punct_len(p, l, i)) != 0) {
    t->kind = T_PUNCT;
    j += i;
  } else {
    fail_at(p, l->lineno, (int)i + 1, "unexpected character '%c'", ch);
    return 0;
  }
  t->len = j - i;
  if (t->kind == T_NUM && read_number(p, l->lineno, t)) return 0;
  return j;
}

int tokenize(struct parser *p, const char *line, size_t len, int lineno, struct line_toks *lt) {
  lt->n = 0;
  lt->pos = 0;
  lt->line = lineno;
  const struct line_text text = {line, len, lineno};
  size_t i = 0;
  while (i < len && line[i] != '#') {
    if (isspace((unsigned char)line[i])) {
      i++;
      continue;
    }
    if (lt->n == MAX_TOKS) {
      fail_at(p, lineno, (int)i + 1, "line has more than %d tokens", MAX_TOKS);
      return -1;
    }
    i = scan_token(p, &text, i, &lt->t[lt->n++]);
    if (i == 0) return -1;
  }
  lt->t[lt->n].kind = T_END;
  lt->t[lt->n].s = "";
  lt->t[lt->n].len = 0;
  /* Missing tokens are reported just after the last one. */
  lt->t[lt->n].col = lt->n ? lt->t[lt->n - 1].col + (int)lt->t[lt->n - 1].len : 1;
  return 0;
}

struct tok *peek(struct line_toks *lt) { return &lt->t[lt->pos]; }
struct tok *next(struct line_toks *lt) {
  struct tok *t = &lt->t[lt->pos];
  if (t->kind != T_END) lt->pos++;
  return t;
}

/* The first character decides most comparisons (the parser tries the table's rows in
 * turn), so it is compared before the lengths. */
int tok_is(const struct tok *t, const char *s) {
  return (t->kind == T_WORD || t->kind == T_PUNCT) && t->len && t->s[0] == s[0] &&
         strncmp(t->s, s, t->len) == 0 && s[t->len] == '\0';
}

int tok_is_one_of(const struct tok *t, const char *alts) {
  if (t->kind != T_WORD) return 0;
  for (const char *a = alts; *a;) {
    const char *bar = strchr(a, '|');
    size_t n = bar ? (size_t)(bar - a) : strlen(a);
    if (n == t->len && memcmp(a, t->s, n) == 0) return 1;
    a += bar ? n + 1 : n;
  }
  return 0;
}

char *tok_str(const struct tok *t) { return cts_xstrndup(t->s, t->len); }

int expect_punct(struct parser *p, struct line_toks *lt, const char *s) {
  struct tok *t = next(lt);
  if (tok_is(t, s)) return 0;
  char what[16];
  snprintf(what, sizeof what, "'%s'", s);
  fail_expected(p, lt, t, what);
  return -1;
}

void trim(const char **s, size_t *len) {
  while (*len && isspace((unsigned char)(*s)[0])) (*s)++, (*len)--;
  while (*len && isspace((unsigned char)(*s)[*len - 1])) (*len)--;
}

/* ---- symbols --------------------------------------------------------------- */

const char *kind_name(int kind) {
  switch (kind) {
    case CTS_SYM_MANAGER: return "manager";
    case CTS_SYM_TENSOR: return "tensor";
    case CTS_SYM_SCOPE: return "scope";
    case CTS_SYM_COMPOSITE: return "composite";
    case CTS_SYM_DLPACK: return "DLPack tensor";
    case CTS_SYM_GRAPH: return "graph";
    case CTS_SYM_NODE: return "graph node";
    case CTS_SYM_RESOURCE: return "tensor or composite";
    case CTS_SYM_MANAGER | CTS_SYM_SCOPE: return "manager or scope";
    case CTS_SYM_ARRAY: return "producer array";
    case CTS_SYM_CAPSULE: return "capsule";
    case CTS_SYM_ARRAY | CTS_SYM_TENSOR: return "producer array or tensor";
    case CTS_SYM_PY_ANY: return "producer array, capsule or tensor";
    default: return "name";
  }
}

static const char *const reserved[] = {"none", "in", "to", "into", "from", "not", NULL};

int sym_find(struct cts_case *c, const struct tok *t) {
  for (size_t i = 0; i < c->n_syms; i++)
    if (strlen(c->syms[i].name) == t->len && memcmp(c->syms[i].name, t->s, t->len) == 0)
      return (int)i;
  return -1;
}

int valid_name(const struct tok *t) {
  if (t->kind != T_WORD) return 0;
  for (size_t i = 0; i < t->len; i++)
    if (!(isalnum((unsigned char)t->s[i]) || t->s[i] == '_')) return 0;
  for (int i = 0; reserved[i]; i++)
    if (tok_is(t, reserved[i])) return 0;
  return 1;
}

/* A name being bound: creates the symbol on first binding. */
int bind_name(struct parser *p, struct line_toks *lt, int kind) {
  struct tok *t = next(lt);
  if (!valid_name(t)) {
    fail_at(p, lt->line, t->col, "expected a name%s", t->kind == T_END ? " at end of line" : "");
    return -1;
  }
  int s = sym_find(p->c, t);
  if (s == CTS_SYM_ROOT || s == CTS_SYM_BOGUS) {
    fail_at(p, lt->line, t->col, "'%.*s' is reserved and cannot be bound", (int)t->len, t->s);
    return -1;
  }
  if (s >= 0) {
    if (p->c->syms[s].kind != kind) {
      fail_at(p, lt->line, t->col, "'%.*s' is a %s and cannot be rebound as a %s", (int)t->len,
              t->s, kind_name(p->c->syms[s].kind), kind_name(kind));
      return -1;
    }
    return s;
  }
  struct cts_symbol sym = {tok_str(t), kind};
  CTS_PUSH(p->c->syms, p->c->n_syms, p->c->cap_syms, sym);
  return (int)p->c->n_syms - 1;
}

/* A name being used: must be bound earlier in the file and of the right kind. */
int use_name(struct parser *p, struct line_toks *lt, int kind) {
  struct tok *t = next(lt);
  if (t->kind == T_END) {
    fail_at(p, lt->line, t->col, "expected a %s name at end of line", kind_name(kind));
    return -1;
  }
  if (!valid_name(t)) {
    fail_at(p, lt->line, t->col, "expected a %s name, found '%.*s'", kind_name(kind),
            (int)t->len, t->s);
    return -1;
  }
  int s = sym_find(p->c, t);
  if (s < 0) {
    fail_at(p, lt->line, t->col, "unknown name '%.*s' (not bound before this line)",
            (int)t->len, t->s);
    return -1;
  }
  if (!(p->c->syms[s].kind & kind)) {
    fail_at(p, lt->line, t->col, "'%.*s' is a %s, expected a %s", (int)t->len, t->s,
            kind_name(p->c->syms[s].kind), kind_name(kind));
    return -1;
  }
  return s;
}

/* `[A, B, ...]` of names of the kind; `[]` parses, so that cases can check its refusal. */
int use_name_list(struct parser *p, struct line_toks *lt, int kind, int **list, size_t *n) {
  size_t cap = 0;
  if (expect_punct(p, lt, "[")) return -1;
  if (tok_is(peek(lt), "]")) {
    next(lt);
    return 0;
  }
  for (;;) {
    int sym = use_name(p, lt, kind);
    if (sym < 0) return -1;
    CTS_PUSH(*list, *n, cap, sym);
    struct tok *t = next(lt);
    if (tok_is(t, "]")) return 0;
    if (!tok_is(t, ",")) {
      fail_at(p, lt->line, t->col, "expected ',' or ']' in name list");
      return -1;
    }
  }
}

/* Either `none` (returns -2) or a name of the kind. */
int use_name_or_none(struct parser *p, struct line_toks *lt, int kind) {
  if (tok_is(peek(lt), "none")) {
    next(lt);
    return -2;
  }
  return use_name(p, lt, kind);
}

/* ---- literals -------------------------------------------------------------- */

/* A number token written as an integer (an optional sign and digits) that fits in int64,
 * read from its text: through a double, 2^62 + 1 would round and a huge one would make
 * the cast undefined. RETURN 0, or -1 when it is not one. */
static int tok_int(const struct tok *t, int64_t *out) {
  size_t i = t->len > 0 && (t->s[0] == '-' || t->s[0] == '+');
  if (t->kind != T_NUM || i == t->len) return -1;
  for (size_t k = i; k < t->len; k++)
    if (!isdigit((unsigned char)t->s[k])) return -1;
  char *text = cts_xstrndup(t->s, t->len);
  errno = 0;
  long long v = strtoll(text, NULL, 10);
  int bad = errno != 0;
  free(text);
  *out = v;
  return bad ? -1 : 0;
}

int parse_int(struct parser *p, struct line_toks *lt, int64_t min, int64_t *out,
              const char *what) {
  struct tok *t = next(lt);
  if (t->kind != T_NUM) {
    fail_at(p, lt->line, t->col, "expected %s%s", what, t->kind == T_END ? " at end of line" : "");
    return -1;
  }
  if (tok_int(t, out) || *out < min) {
    fail_at(p, lt->line, t->col, "%s must be an integer >= %lld", what, (long long)min);
    return -1;
  }
  return 0;
}

int parse_shape(struct parser *p, struct line_toks *lt, int *ndim, int64_t *shape) {
  return parse_shape_max(p, lt, TSM_MAX_DIMS, ndim, shape);
}

int parse_shape_max(struct parser *p, struct line_toks *lt, int max, int *ndim, int64_t *shape) {
  if (expect_punct(p, lt, "[")) return -1;
  *ndim = 0;
  if (tok_is(peek(lt), "]")) {
    next(lt);
    return 0;
  }
  for (;;) {
    struct tok *t = peek(lt);
    if (*ndim == max) {
      fail_at(p, lt->line, t->col, "a shape has at most %d dimensions", max);
      return -1;
    }
    /* Negative extents parse, so that cases can check their refusal (MGR.CREATE.4). */
    if (tok_int(t, &shape[*ndim])) {
      fail_at(p, lt->line, t->col, "a shape extent is an integer of int64");
      return -1;
    }
    next(lt);
    (*ndim)++;
    t = next(lt);
    if (tok_is(t, "]")) return 0;
    if (!tok_is(t, ",")) {
      fail_at(p, lt->line, t->col, "expected ',' or ']' in shape");
      return -1;
    }
  }
}

int parse_values(struct parser *p, struct line_toks *lt, double **vals, size_t *n) {
  if (expect_punct(p, lt, "[")) return -1;
  size_t cap = 0;
  *n = 0;
  *vals = NULL;
  if (tok_is(peek(lt), "]")) {
    next(lt);
    return 0;
  }
  for (;;) {
    struct tok *t = next(lt);
    if (t->kind != T_NUM) {
      fail_at(p, lt->line, t->col, "expected a number in value list");
      return -1;
    }
    CTS_PUSH(*vals, *n, cap, t->num);
    t = next(lt);
    if (tok_is(t, "]")) return 0;
    if (!tok_is(t, ",")) {
      fail_at(p, lt->line, t->col, "expected ',' or ']' in value list");
      return -1;
    }
  }
}

/* The dtype names (opsem.h, CTS_DTYPES). A long name (float32, uint8) is read with a
 * warning to write the short one: float32 and int32 are the spellings .pytsm cases used
 * before the grammars were one. */
int dtype_of(struct parser *p, int line, const struct tok *t) {
  if (t->kind != T_WORD) return 0;
  int dtype = cts_opsem_dtype_by_name(t->s, t->len);
  if (dtype && !tok_is(t, cts_opsem_dtype_name(dtype)))
    warn_at(p, line, t->col, "'%.*s' is retired: write '%s'", (int)t->len, t->s,
            cts_opsem_dtype_name(dtype));
  return dtype;
}

int take_dtype(struct parser *p, struct line_toks *lt, int *dtype) {
  int d = dtype_of(p, lt->line, peek(lt));
  if (d) *dtype = d, next(lt);
  return d != 0;
}

int parse_dtype(struct parser *p, struct line_toks *lt, int *dtype) {
  struct tok *t = peek(lt);
  if (take_dtype(p, lt, dtype)) return 0;
  fail_expected(p, lt, t, "a dtype (" CTS_DTYPE_LIST ")");
  return -1;
}

int parse_dtype_opt(struct parser *p, struct line_toks *lt, int *dtype) {
  struct tok *t = peek(lt);
  *dtype = TSM_F32;
  if (t->kind != T_WORD || tok_is(t, "in") || take_dtype(p, lt, dtype)) return 0;
  fail_at(p, lt->line, t->col, "unknown dtype '%.*s' (" CTS_DTYPE_LIST ")", (int)t->len, t->s);
  return -1;
}
