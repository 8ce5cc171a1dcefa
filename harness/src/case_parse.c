/*
 * harness/src/case_parse.c: the case-language parser (cases/README.md). Every error
 * names line and column: the first character of the offending token, or the column
 * just after the last token when something is missing at the end of a line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "spec_index.h"
#include "util.h"

enum tok_kind { T_WORD, T_NUM, T_PUNCT, T_END };

struct tok {
  int kind;
  const char *s; /* into the line */
  size_t len;
  int col;
  double num;
};

#define MAX_TOKS 512

struct line_toks {
  struct tok t[MAX_TOKS + 1];
  int n;
  int pos;
  int line;
};

struct parser {
  struct cts_case *c;
  const struct cts_spec *spec;
  struct cts_parse_error *err;
  int failed;
};

static void fail_at(struct parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fail_at(struct parser *p, int line, int col, const char *fmt, ...) {
  if (p->failed) return;
  p->failed = 1;
  p->err->line = line;
  p->err->col = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
  va_end(ap);
}

/* ---- tokens ---------------------------------------------------------------- */

static int tokenize(struct parser *p, const char *line, size_t len, int lineno,
                    struct line_toks *lt) {
  lt->n = 0;
  lt->pos = 0;
  lt->line = lineno;
  size_t i = 0;
  while (i < len) {
    char ch = line[i];
    if (ch == '#') break;
    if (isspace((unsigned char)ch)) {
      i++;
      continue;
    }
    if (lt->n == MAX_TOKS) {
      fail_at(p, lineno, (int)i + 1, "line has more than %d tokens", MAX_TOKS);
      return -1;
    }
    struct tok *t = &lt->t[lt->n++];
    t->s = line + i;
    t->col = (int)i + 1;
    if (isalpha((unsigned char)ch) || ch == '_') {
      size_t j = i;
      while (j < len && (isalnum((unsigned char)line[j]) || line[j] == '_' ||
                         line[j] == '.' || line[j] == '-'))
        j++;
      t->kind = T_WORD;
      t->len = j - i;
      i = j;
    } else if (isdigit((unsigned char)ch) || ch == '-' || ch == '+' || ch == '.') {
      size_t j = i + 1;
      while (j < len && (isalnum((unsigned char)line[j]) || line[j] == '.' ||
                         ((line[j] == '-' || line[j] == '+') &&
                          (line[j - 1] == 'e' || line[j - 1] == 'E'))))
        j++;
      char buf[64];
      size_t n = j - i < sizeof buf - 1 ? j - i : sizeof buf - 1;
      memcpy(buf, line + i, n);
      buf[n] = '\0';
      char *end;
      errno = 0;
      t->num = strtod(buf, &end);
      if (*end != '\0' || errno != 0 || end == buf) {
        fail_at(p, lineno, t->col, "bad number '%s'", buf);
        return -1;
      }
      t->kind = T_NUM;
      t->len = j - i;
      i = j;
    } else if ((ch == '=' || ch == '<') && i + 1 < len && line[i + 1] == '=') {
      t->kind = T_PUNCT;
      t->len = 2;
      i += 2;
    } else if (strchr("[],={}:", ch)) {
      t->kind = T_PUNCT;
      t->len = 1;
      i++;
    } else {
      fail_at(p, lineno, (int)i + 1, "unexpected character '%c'", ch);
      return -1;
    }
  }
  lt->t[lt->n].kind = T_END;
  lt->t[lt->n].s = "";
  lt->t[lt->n].len = 0;
  /* Missing tokens are reported just after the last one. */
  lt->t[lt->n].col = lt->n ? lt->t[lt->n - 1].col + (int)lt->t[lt->n - 1].len : 1;
  return 0;
}

static struct tok *peek(struct line_toks *lt) { return &lt->t[lt->pos]; }
static struct tok *next(struct line_toks *lt) {
  struct tok *t = &lt->t[lt->pos];
  if (t->kind != T_END) lt->pos++;
  return t;
}

static int tok_is(const struct tok *t, const char *s) {
  return (t->kind == T_WORD || t->kind == T_PUNCT) && t->len == strlen(s) &&
         memcmp(t->s, s, t->len) == 0;
}

static char *tok_str(const struct tok *t) { return cts_xstrndup(t->s, t->len); }

static int expect_punct(struct parser *p, struct line_toks *lt, const char *s) {
  struct tok *t = next(lt);
  if (!tok_is(t, s)) {
    if (t->kind == T_END)
      fail_at(p, lt->line, t->col, "expected '%s' at end of line", s);
    else
      fail_at(p, lt->line, t->col, "expected '%s', found '%.*s'", s, (int)t->len, t->s);
    return -1;
  }
  return 0;
}

static int expect_word(struct parser *p, struct line_toks *lt, const char *s) {
  return expect_punct(p, lt, s);
}

/* ---- symbols --------------------------------------------------------------- */

static const char *kind_name(int kind) {
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
    default: return "name";
  }
}

static const char *const reserved[] = {"none", "in", "to", "into", "from", "not", NULL};

static int sym_find(struct cts_case *c, const struct tok *t) {
  for (size_t i = 0; i < c->n_syms; i++)
    if (strlen(c->syms[i].name) == t->len && memcmp(c->syms[i].name, t->s, t->len) == 0)
      return (int)i;
  return -1;
}

static int valid_name(const struct tok *t) {
  if (t->kind != T_WORD) return 0;
  for (size_t i = 0; i < t->len; i++)
    if (!(isalnum((unsigned char)t->s[i]) || t->s[i] == '_')) return 0;
  for (int i = 0; reserved[i]; i++)
    if (tok_is(t, reserved[i])) return 0;
  return 1;
}

/* A name being bound: creates the symbol on first binding. */
static int bind_name(struct parser *p, struct line_toks *lt, int kind) {
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
static int use_name(struct parser *p, struct line_toks *lt, int kind) {
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
static int use_name_list(struct parser *p, struct line_toks *lt, int kind, int **list,
                         size_t *n) {
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
static int use_name_or_none(struct parser *p, struct line_toks *lt, int kind) {
  if (tok_is(peek(lt), "none")) {
    next(lt);
    return -2;
  }
  return use_name(p, lt, kind);
}

/* ---- literals -------------------------------------------------------------- */

static int parse_int(struct parser *p, struct line_toks *lt, int64_t min, int64_t *out,
                     const char *what) {
  struct tok *t = next(lt);
  if (t->kind != T_NUM) {
    fail_at(p, lt->line, t->col, "expected %s%s", what, t->kind == T_END ? " at end of line" : "");
    return -1;
  }
  if (t->num != (double)(int64_t)t->num || t->num < (double)min || t->num > 9.0e15) {
    fail_at(p, lt->line, t->col, "%s must be an integer >= %lld", what, (long long)min);
    return -1;
  }
  *out = (int64_t)t->num;
  return 0;
}

static int parse_shape(struct parser *p, struct line_toks *lt, int *ndim, int64_t *shape) {
  if (expect_punct(p, lt, "[")) return -1;
  *ndim = 0;
  if (tok_is(peek(lt), "]")) {
    next(lt);
    return 0;
  }
  for (;;) {
    struct tok *t = peek(lt);
    if (*ndim == TSM_MAX_DIMS) {
      fail_at(p, lt->line, t->col, "a shape has at most %d dimensions", TSM_MAX_DIMS);
      return -1;
    }
    /* Negative extents parse, so that cases can check their refusal (MGR.CREATE.4). */
    if (t->kind != T_NUM || t->num != (double)(int64_t)t->num) {
      fail_at(p, lt->line, t->col, "a shape extent is an integer");
      return -1;
    }
    next(lt);
    shape[(*ndim)++] = (int64_t)t->num;
    t = next(lt);
    if (tok_is(t, "]")) return 0;
    if (!tok_is(t, ",")) {
      fail_at(p, lt->line, t->col, "expected ',' or ']' in shape");
      return -1;
    }
  }
}

static int parse_values(struct parser *p, struct line_toks *lt, double **vals, size_t *n) {
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

static int parse_dtype_opt(struct parser *p, struct line_toks *lt, int *dtype) {
  struct tok *t = peek(lt);
  *dtype = TSM_F32;
  if (t->kind != T_WORD || tok_is(t, "in")) return 0;
  if (tok_is(t, "f32")) {
    *dtype = TSM_F32;
  } else if (tok_is(t, "i32")) {
    *dtype = TSM_I32;
  } else {
    fail_at(p, lt->line, t->col, "unknown dtype '%.*s' (f32 or i32)", (int)t->len, t->s);
    return -1;
  }
  next(lt);
  return 0;
}

static int64_t shape_elems(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i] > 0 ? shape[i] : 0;
  return n;
}

/* ---- statements ------------------------------------------------------------ */

static const struct {
  const char *name;
  int op;
  int arity; /* tensor operands */
} ops[] = {
    {"add", TSM_OP_ADD, 2},       {"sub", TSM_OP_SUB, 2},       {"mul", TSM_OP_MUL, 2},
    {"sum", TSM_OP_SUM, 1},       {"gather", TSM_OP_GATHER, 2}, {"reshape", TSM_OP_RESHAPE, 1},
    {"matmul", TSM_OP_MATMUL, 2}, {NULL, 0, 0}};

const char *cts_op_name(int op) {
  for (int i = 0; ops[i].name; i++)
    if (ops[i].op == op) return ops[i].name;
  return "?";
}

static const struct {
  const char *name;
  int kind;
} creates[] = {{"zeros", CTS_ZEROS},   {"ones", CTS_ONES},     {"full", CTS_FULL},
               {"arange", CTS_ARANGE}, {"values", CTS_VALUES}, {NULL, 0}};

static int parse_tensor_rhs(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct tok *verb = next(lt);
  for (int i = 0; creates[i].name; i++) {
    if (!tok_is(verb, creates[i].name)) continue;
    st->kind = CTS_CREATE;
    st->sub = creates[i].kind;
    if ((st->a = use_name(p, lt, CTS_SYM_MANAGER)) < 0) return -1;
    if (parse_shape(p, lt, &st->ndim, st->shape)) return -1;
    if (st->sub == CTS_FULL) {
      struct tok *t = next(lt);
      if (t->kind != T_NUM) {
        fail_at(p, lt->line, t->col, "expected the fill value");
        return -1;
      }
      st->scalar = t->num;
    }
    if (parse_dtype_opt(p, lt, &st->dtype)) return -1;
    if (st->sub == CTS_VALUES) {
      struct tok *list = peek(lt);
      if (parse_values(p, lt, &st->vals, &st->nvals)) return -1;
      if ((int64_t)st->nvals != shape_elems(st->ndim, st->shape)) {
        fail_at(p, lt->line, list->col, "%zu values for a shape of %lld elements", st->nvals,
                (long long)shape_elems(st->ndim, st->shape));
        return -1;
      }
    }
    return 0;
  }
  for (int i = 0; ops[i].name; i++) {
    if (!tok_is(verb, ops[i].name)) continue;
    st->kind = CTS_OP;
    st->sub = ops[i].op;
    p->c->ops_used |= 1u << ops[i].op;
    if ((st->a = use_name(p, lt, CTS_SYM_TENSOR)) < 0) return -1;
    if (ops[i].arity == 2 && (st->b = use_name(p, lt, CTS_SYM_TENSOR)) < 0) return -1;
    if (st->sub == TSM_OP_RESHAPE && parse_shape(p, lt, &st->ndim, st->shape)) return -1;
    if (tok_is(peek(lt), "in")) {
      next(lt);
      if ((st->out = use_name(p, lt, CTS_SYM_MANAGER)) < 0) return -1;
    }
    return 0;
  }
  if (verb->kind == T_END)
    fail_at(p, lt->line, verb->col, "expected a creation or an operation at end of line");
  else
    fail_at(p, lt->line, verb->col, "unknown creation or operation '%.*s'", (int)verb->len,
            verb->s);
  return -1;
}

static const struct {
  const char *name;
  int code;
} codes[] = {
#define CTS__CODE(name, value, text) {#name, value},
    TSM_ERRNO_MAP(CTS__CODE)
#undef CTS__CODE
    {NULL, 0}};

const char *cts_err_name(int code) {
  if (code == 0) return "OK";
  for (int i = 0; codes[i].name; i++)
    if (codes[i].code == code) return codes[i].name + 1; /* without the E */
  return "?";
}

static int parse_action(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                        int binds);

static const char *const component_names[] = {"data", "batch_sizes", "sorted_indices",
                                              "unsorted_indices", NULL};

/* A component: a packed sequence's name, or a list position. */
static int parse_component_index(struct parser *p, struct line_toks *lt, int64_t *out) {
  struct tok *t = peek(lt);
  for (int i = 0; component_names[i]; i++) {
    if (tok_is(t, component_names[i])) {
      next(lt);
      *out = i;
      return 0;
    }
  }
  return parse_int(p, lt, 0, out, "a component name or position");
}

static int parse_form(struct parser *p, struct line_toks *lt, struct cts_dl_opts *dl) {
  struct tok *t = next(lt);
  if (tok_is(t, "versioned") || tok_is(t, "legacy")) {
    dl->form = tok_is(t, "versioned") ? TSM_DLPACK_VERSIONED : TSM_DLPACK_LEGACY;
    return 0;
  }
  fail_at(p, lt->line, t->col, "expected 'versioned' or 'legacy'");
  return -1;
}

/* The options of `make`, in any order (cases/README.md, DLPack). */
static int parse_make_options(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct {
    const char *name;
    int code, bits;
  } dtypes[] = {{"bool", 6, 8}, {"bf16", 4, 16}, {"f8", 8, 8},  {"c64", 5, 64},
                {"f64", 2, 64}, {"i64", 0, 64},  {"u8", 1, 8},  {NULL, 0, 0}};
  static const char *const wheres[] = {"host", "cpu", "cuda_host", "cuda_managed", "opencl",
                                       "vulkan", NULL};
  struct cts_dl_opts *dl = st->dl;
  while (peek(lt)->kind != T_END) {
    struct tok *t = next(lt);
    int64_t n;
    if (tok_is(t, "values")) {
      dl->fill = CTS_VALUES;
      if (parse_values(p, lt, &st->vals, &st->nvals)) return -1;
    } else if (tok_is(t, "arange")) {
      dl->fill = CTS_ARANGE;
    } else if (tok_is(t, "strides")) {
      int ndim = 0;
      if (parse_shape(p, lt, &ndim, dl->strides)) return -1;
      if (ndim != st->ndim) {
        fail_at(p, lt->line, t->col, "%d strides for %d dimensions", ndim, st->ndim);
        return -1;
      }
      dl->n_strides = ndim;
    } else if (tok_is(t, "nostrides")) {
      dl->no_strides = 1;
    } else if (tok_is(t, "offset") || tok_is(t, "major") || tok_is(t, "minor") ||
               tok_is(t, "lanes")) {
      if (parse_int(p, lt, 0, &n, "a non-negative integer")) return -1;
      if (tok_is(t, "offset")) dl->offset = n;
      else if (tok_is(t, "major")) dl->major = n;
      else if (tok_is(t, "minor")) dl->minor = n;
      else dl->lanes = (int)n;
    } else if (tok_is(t, "readonly")) {
      dl->readonly = 1;
    } else if (tok_is(t, "copied")) {
      dl->copied = 1;
    } else if (tok_is(t, "nodeleter")) {
      dl->no_deleter = 1;
    } else if (tok_is(t, "nulldata")) {
      dl->null_data = 1;
    } else if (tok_is(t, "device")) {
      struct tok *w = next(lt);
      int found = -1;
      for (int i = 0; wheres[i]; i++)
        if (tok_is(w, wheres[i])) found = i;
      if (found < 0) {
        fail_at(p, lt->line, w->col, "expected host, cpu, cuda_host, cuda_managed, opencl or "
                "vulkan (the judge's memory is host memory)");
        return -1;
      }
      dl->where = found;
    } else if (tok_is(t, "dtype")) {
      struct tok *d = next(lt);
      int found = -1;
      for (int i = 0; dtypes[i].name; i++)
        if (tok_is(d, dtypes[i].name)) found = i;
      if (found < 0) {
        fail_at(p, lt->line, d->col, "expected bool, bf16, f8, c64, f64, i64 or u8");
        return -1;
      }
      dl->code = dtypes[found].code;
      dl->bits = dtypes[found].bits;
    } else {
      fail_at(p, lt->line, t->col, "unknown option '%.*s' of make", (int)t->len, t->s);
      return -1;
    }
  }
  if (dl->fill == CTS_VALUES && (int64_t)st->nvals != shape_elems(st->ndim, st->shape)) {
    fail_at(p, lt->line, st->col, "%zu values for a shape of %lld elements", st->nvals,
            (long long)shape_elems(st->ndim, st->shape));
    return -1;
  }
  return 0;
}

static int parse_dlpack_rhs(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct tok *verb = next(lt);
  p->c->families |= TSM_CAP_DLPACK_C;
  st->dl = cts_xcalloc(1, sizeof *st->dl);
  st->dl->major = 1;
  st->dl->minor = 3;
  st->dl->lanes = 1;
  if (tok_is(verb, "export")) {
    st->kind = CTS_DL_EXPORT;
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0 || parse_form(p, lt, st->dl)) return -1;
    while (peek(lt)->kind != T_END) {
      struct tok *t = next(lt);
      if (tok_is(t, "copy")) {
        st->dl->request |= TSM_DLPACK_COPY;
      } else if (tok_is(t, "readonly")) {
        st->dl->request |= TSM_DLPACK_READ_ONLY;
      } else {
        fail_at(p, lt->line, t->col, "expected 'copy' or 'readonly'");
        return -1;
      }
    }
    return 0;
  }
  if (tok_is(verb, "make")) {
    st->kind = CTS_DL_MAKE;
    if (parse_form(p, lt, st->dl) || parse_shape(p, lt, &st->ndim, st->shape)) return -1;
    struct tok *t = peek(lt);
    st->dtype = TSM_F32;
    if (tok_is(t, "f32") || tok_is(t, "i32")) {
      st->dtype = tok_is(t, "f32") ? TSM_F32 : TSM_I32;
      next(lt);
    }
    return parse_make_options(p, lt, st);
  }
  fail_at(p, lt->line, verb->col, "expected 'export' or 'make'%s",
          verb->kind == T_END ? " at end of line" : "");
  return -1;
}

static const struct {
  const char *name;
  int op, arity;
} graph_ops[] = {{"add", TSM_OP_ADD, 2},      {"sub", TSM_OP_SUB, 2},
                 {"mul", TSM_OP_MUL, 2},      {"matmul", TSM_OP_MATMUL, 2},
                 {"sum", TSM_OP_SUM, 1},      {"transpose", TSM_OP_TRANSPOSE, 1},
                 {"diag", TSM_OP_DIAG, 1},    {"reshape", TSM_OP_RESHAPE, 1},
                 {"svd", TSM_OP_SVD, 1},      {NULL, 0, 0}};

/* `node X = ...` and `node U, S, Vt = svd A` (cases/README.md, Graphs). */
static int parse_node(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  p->c->families |= TSM_CAP_GRAPHS;
  int name_pos[3], n_names = 0;
  for (;;) {
    if (n_names == 3) {
      fail_at(p, lt->line, peek(lt)->col, "at most three names");
      return -1;
    }
    name_pos[n_names++] = lt->pos;
    struct tok *name = next(lt);
    if (!valid_name(name)) {
      fail_at(p, lt->line, name->col, "expected a name%s", name->kind == T_END ? " at end of line" : "");
      return -1;
    }
    if (!tok_is(peek(lt), ",")) break;
    next(lt);
  }
  if (expect_punct(p, lt, "=")) return -1;
  struct tok *verb = next(lt);
  if (tok_is(verb, "leaf")) {
    st->kind = CTS_G_LEAF;
    if ((st->a = use_name(p, lt, CTS_SYM_GRAPH)) < 0 || parse_shape(p, lt, &st->ndim, st->shape))
      return -1;
    st->dtype = TSM_F32;
    struct tok *t = peek(lt);
    if (tok_is(t, "f32") || tok_is(t, "i32")) {
      st->dtype = tok_is(t, "f32") ? TSM_F32 : TSM_I32;
      next(lt);
    }
    st->sub = CTS_ZEROS;
    if (tok_is(peek(lt), "arange")) {
      next(lt);
      st->sub = CTS_ARANGE;
    } else if (tok_is(peek(lt), "values")) {
      next(lt);
      st->sub = CTS_VALUES;
      struct tok *list = peek(lt);
      if (parse_values(p, lt, &st->vals, &st->nvals)) return -1;
      if ((int64_t)st->nvals != shape_elems(st->ndim, st->shape)) {
        fail_at(p, lt->line, list->col, "%zu values for a shape of %lld elements", st->nvals,
                (long long)shape_elems(st->ndim, st->shape));
        return -1;
      }
    }
  } else if (tok_is(verb, "external")) {
    st->kind = CTS_G_EXTERNAL;
    if ((st->a = use_name(p, lt, CTS_SYM_GRAPH)) < 0) return -1;
    if ((st->b = use_name(p, lt, CTS_SYM_TENSOR)) < 0) return -1;
  } else {
    int found = -1;
    for (int i = 0; graph_ops[i].name; i++)
      if (tok_is(verb, graph_ops[i].name)) found = i;
    if (found < 0) {
      fail_at(p, lt->line, verb->col, "expected leaf, external or a graph operation");
      return -1;
    }
    st->kind = CTS_G_OP;
    st->sub = graph_ops[found].op;
    if ((st->a = use_name(p, lt, CTS_SYM_NODE)) < 0) return -1;
    if (graph_ops[found].arity == 2 && (st->b = use_name(p, lt, CTS_SYM_NODE)) < 0) return -1;
    if (st->sub == TSM_OP_RESHAPE && parse_shape(p, lt, &st->ndim, st->shape)) return -1;
  }
  int want = st->kind == CTS_G_OP && st->sub == TSM_OP_SVD ? 3 : 1;
  if (n_names != want) {
    fail_at(p, lt->line, verb->col, "'%.*s' binds %d name%s", (int)verb->len, verb->s, want,
            want == 1 ? "" : "s");
    return -1;
  }
  int end_pos = lt->pos;
  size_t cap = 0;
  for (int i = 0; i < n_names; i++) {
    lt->pos = name_pos[i];
    int sym = bind_name(p, lt, CTS_SYM_NODE);
    if (sym < 0) return -1;
    if (i == 0) st->dst = sym;
    if (want == 3) CTS_PUSH(st->list, st->n_list, cap, sym);
  }
  lt->pos = end_pos;
  return 0;
}

static int parse_binding_rhs(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                             int kind) {
  struct tok *verb = peek(lt);
  switch (kind) {
    case CTS_SYM_MANAGER:
      next(lt);
      if (tok_is(verb, "sub")) {
        st->kind = CTS_MGR_SUB;
        return (st->a = use_name(p, lt, CTS_SYM_MANAGER)) < 0 ? -1 : 0;
      }
      if (tok_is(verb, "sub_of")) {
        st->kind = CTS_MGR_SUB_OF;
        return (st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0 ? -1 : 0;
      }
      fail_at(p, lt->line, verb->col, "expected 'sub' or 'sub_of'%s",
              verb->kind == T_END ? " at end of line" : "");
      return -1;
    case CTS_SYM_SCOPE:
      p->c->families |= TSM_CAP_SCOPES;
      st->kind = CTS_SCOPE_OPEN;
      return expect_word(p, lt, "open");
    case CTS_SYM_COMPOSITE:
      next(lt);
      p->c->families |= TSM_CAP_COMPOSITES;
      if (tok_is(verb, "pack")) {
        st->kind = CTS_PACK;
        if (use_name_list(p, lt, CTS_SYM_RESOURCE, &st->list, &st->n_list)) return -1;
        struct tok *order = next(lt);
        if (!tok_is(order, "sorted") && !tok_is(order, "unsorted")) {
          fail_at(p, lt->line, order->col, "expected 'sorted' or 'unsorted'");
          return -1;
        }
        st->flag = tok_is(order, "sorted");
        return 0;
      }
      if (tok_is(verb, "list")) {
        st->kind = CTS_LIST;
        return use_name_list(p, lt, CTS_SYM_RESOURCE, &st->list, &st->n_list);
      }
      fail_at(p, lt->line, verb->col, "expected 'pack' or 'list'%s",
              verb->kind == T_END ? " at end of line" : "");
      return -1;
    case CTS_SYM_DLPACK:
      return parse_dlpack_rhs(p, lt, st);
    case CTS_SYM_GRAPH:
      p->c->families |= TSM_CAP_GRAPHS;
      st->kind = CTS_G_NEW;
      if (expect_word(p, lt, "new")) return -1;
      return (st->a = use_name(p, lt, CTS_SYM_MANAGER)) < 0 ? -1 : 0;
    default:
      if (tok_is(verb, "import")) {
        next(lt);
        p->c->families |= TSM_CAP_DLPACK_C;
        st->kind = CTS_DL_IMPORT;
        if ((st->a = use_name(p, lt, CTS_SYM_DLPACK)) < 0 || expect_word(p, lt, "into")) return -1;
        return (st->b = use_name(p, lt, CTS_SYM_MANAGER)) < 0 ? -1 : 0;
      }
      if (tok_is(verb, "component")) {
        next(lt);
        p->c->families |= TSM_CAP_COMPOSITES;
        st->kind = CTS_COMPONENT;
        if ((st->a = use_name(p, lt, CTS_SYM_COMPOSITE)) < 0) return -1;
        return parse_component_index(p, lt, &st->count);
      }
      return parse_tensor_rhs(p, lt, st);
  }
}

static int parse_expect(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                        struct tok *kw) {
  struct tok *what = next(lt);
  if (tok_is(what, "error")) {
    st->kind = CTS_EXPECT_ERROR;
    struct tok *code = next(lt);
    int found = 0;
    for (int i = 0; codes[i].name; i++) {
      if (code->kind == T_WORD && code->len == strlen(codes[i].name) - 1 &&
          memcmp(code->s, codes[i].name + 1, code->len) == 0) {
        st->err = codes[i].code;
        found = 1;
      }
    }
    if (!found) {
      fail_at(p, lt->line, code->col, "unknown error code '%.*s' (see spec/errors.md)",
              (int)code->len, code->s);
      return -1;
    }
    if (expect_punct(p, lt, ":")) return -1;
    struct tok *inner_kw = peek(lt);
    if (tok_is(inner_kw, "expect") || tok_is(inner_kw, "repeat")) {
      fail_at(p, lt->line, inner_kw->col, "'expect error' takes an action, not '%.*s'",
              (int)inner_kw->len, inner_kw->s);
      return -1;
    }
    st->inner = cts_xcalloc(1, sizeof *st->inner);
    st->inner->line = st->line;
    st->inner->col = inner_kw->col;
    st->inner->text = cts_xstrdup(st->text);
    return parse_action(p, lt, st->inner, 0);
  }
  (void)kw;
  if (tok_is(what, "owner") || tok_is(what, "lender")) {
    st->kind = tok_is(what, "owner") ? CTS_EXPECT_OWNER : CTS_EXPECT_LENDER;
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    if ((st->b = use_name_or_none(p, lt, CTS_SYM_MANAGER)) == -1) return -1;
    return 0;
  }
  if (tok_is(what, "borrowed") || tok_is(what, "not")) {
    st->kind = CTS_EXPECT_BORROWED;
    st->flag = 1;
    if (tok_is(what, "not")) {
      if (expect_word(p, lt, "borrowed")) return -1;
      st->flag = 0;
    }
    return (st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0 ? -1 : 0;
  }
  if (tok_is(what, "valid") || tok_is(what, "released")) {
    st->kind = CTS_EXPECT_VALID;
    st->flag = tok_is(what, "valid");
    return (st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0 ? -1 : 0;
  }
  if (tok_is(what, "count") || tok_is(what, "children")) {
    st->kind = tok_is(what, "count") ? CTS_EXPECT_COUNT : CTS_EXPECT_CHILDREN;
    if ((st->a = use_name(p, lt, CTS_SYM_MANAGER)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    return parse_int(p, lt, 0, &st->count, "a count");
  }
  if (tok_is(what, "state")) {
    st->kind = CTS_EXPECT_STATE;
    if ((st->a = use_name(p, lt, CTS_SYM_MANAGER | CTS_SYM_SCOPE | CTS_SYM_GRAPH)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    int scope = p->c->syms[st->a].kind == CTS_SYM_SCOPE;
    int graph = p->c->syms[st->a].kind == CTS_SYM_GRAPH;
    struct tok *t = next(lt);
    if (graph) {
      if (!tok_is(t, "open") && !tok_is(t, "released")) {
        fail_at(p, lt->line, t->col, "expected open or released");
        return -1;
      }
      st->flag = tok_is(t, "open") ? CTS_STATE_OPEN : CTS_STATE_RELEASED;
      return 0;
    }
    if (tok_is(t, "open")) {
      st->flag = CTS_STATE_OPEN;
    } else if (!scope && tok_is(t, "capped")) {
      st->flag = CTS_STATE_CAPPED;
    } else if (!scope && tok_is(t, "closed")) {
      st->flag = CTS_STATE_CLOSED;
    } else if (scope && tok_is(t, "disposed")) {
      st->flag = CTS_STATE_DISPOSED;
    } else {
      fail_at(p, lt->line, t->col, scope ? "expected open or disposed"
                                         : "expected open, capped or closed");
      return -1;
    }
    return 0;
  }
  if (tok_is(what, "scope") || tok_is(what, "composite")) {
    int scope = tok_is(what, "scope");
    st->kind = scope ? CTS_EXPECT_SCOPE : CTS_EXPECT_COMPOSITE;
    p->c->families |= scope ? TSM_CAP_SCOPES : TSM_CAP_COMPOSITES;
    if ((st->a = use_name(p, lt, scope ? CTS_SYM_RESOURCE : CTS_SYM_TENSOR)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    return (st->b = use_name_or_none(p, lt, scope ? CTS_SYM_SCOPE : CTS_SYM_COMPOSITE)) == -1
               ? -1
               : 0;
  }
  if (tok_is(what, "current")) {
    st->kind = CTS_EXPECT_CURRENT;
    p->c->families |= TSM_CAP_SCOPES;
    if (expect_punct(p, lt, "==")) return -1;
    return (st->b = use_name_or_none(p, lt, CTS_SYM_SCOPE)) == -1 ? -1 : 0;
  }
  if (tok_is(what, "members")) {
    st->kind = CTS_EXPECT_MEMBERS;
    p->c->families |= TSM_CAP_SCOPES;
    if ((st->a = use_name(p, lt, CTS_SYM_SCOPE)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    return parse_int(p, lt, 0, &st->count, "a member count");
  }
  if (tok_is(what, "outer")) {
    st->kind = CTS_EXPECT_OUTER;
    p->c->families |= TSM_CAP_SCOPES;
    if ((st->a = use_name(p, lt, CTS_SYM_SCOPE)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    return (st->b = use_name_or_none(p, lt, CTS_SYM_SCOPE)) == -1 ? -1 : 0;
  }
  if (tok_is(what, "absent")) {
    st->kind = CTS_EXPECT_ABSENT;
    p->c->families |= TSM_CAP_COMPOSITES;
    if ((st->a = use_name(p, lt, CTS_SYM_COMPOSITE)) < 0) return -1;
    return parse_component_index(p, lt, &st->count);
  }
  if (tok_is(what, "node")) {
    st->kind = CTS_EXPECT_NODE;
    if ((st->a = use_name(p, lt, CTS_SYM_NODE)) < 0) return -1;
    if (tok_is(peek(lt), "unspecified")) {
      next(lt);
      st->flag = 1;
      return 0;
    }
    if (expect_punct(p, lt, "==")) return -1;
    return parse_values(p, lt, &st->vals, &st->nvals);
  }
  if (tok_is(what, "planned")) {
    st->kind = CTS_EXPECT_PLANNED;
    if ((st->a = use_name(p, lt, CTS_SYM_GRAPH)) < 0) return -1;
    if (expect_punct(p, lt, "<=")) return -1;
    return parse_int(p, lt, 0, &st->count, "a byte count");
  }
  if (tok_is(what, "deleted")) {
    st->kind = CTS_EXPECT_DELETED;
    p->c->families |= TSM_CAP_DLPACK_C;
    if ((st->a = use_name(p, lt, CTS_SYM_DLPACK)) < 0 || expect_punct(p, lt, "==")) return -1;
    return parse_int(p, lt, 0, &st->count, "a count");
  }
  if (tok_is(what, "stats")) {
    static const char *const counters[CTS_N_STATS] = {
        "created_in", "created_outside", "disposed_in", "disposed_outside",
        "attached",   "detached",        "live"};
    st->kind = CTS_EXPECT_STATS;
    p->c->families |= TSM_CAP_SCOPES;
    struct tok *k = next(lt);
    if (!tok_is(k, "tensor") && !tok_is(k, "composite")) {
      fail_at(p, lt->line, k->col, "expected 'tensor' or 'composite'");
      return -1;
    }
    st->flag = tok_is(k, "tensor") ? TSM_KIND_TENSOR : TSM_KIND_COMPOSITE;
    if (expect_punct(p, lt, "==")) return -1;
    do {
      struct tok *name = next(lt);
      int which = -1;
      for (int i = 0; i < CTS_N_STATS; i++)
        if (tok_is(name, counters[i])) which = i;
      if (which < 0) {
        fail_at(p, lt->line, name->col, "expected a counter: created_in, created_outside, "
                "disposed_in, disposed_outside, attached, detached or live");
        return -1;
      }
      if (parse_int(p, lt, which == CTS_STAT_LIVE ? -(int64_t)9e15 : 0, &st->stats[which],
                    "a count"))
        return -1;
      st->stats_mask |= 1u << which;
    } while (peek(lt)->kind != T_END);
    return 0;
  }
  if (tok_is(what, "parent")) {
    st->kind = CTS_EXPECT_PARENT;
    if ((st->a = use_name(p, lt, CTS_SYM_MANAGER)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    return (st->b = use_name_or_none(p, lt, CTS_SYM_MANAGER)) == -1 ? -1 : 0;
  }
  if (tok_is(what, "values") || tok_is(what, "shape")) {
    int values = tok_is(what, "values");
    st->kind = values ? CTS_EXPECT_VALUES : CTS_EXPECT_SHAPE;
    if ((st->a = use_name(p, lt, CTS_SYM_TENSOR)) < 0) return -1;
    if (expect_punct(p, lt, "==")) return -1;
    return values ? parse_values(p, lt, &st->vals, &st->nvals)
                  : parse_shape(p, lt, &st->ndim, st->shape);
  }
  if (tok_is(what, "bytes")) {
    st->kind = CTS_EXPECT_BYTES;
    if (expect_punct(p, lt, "==")) return -1;
    return parse_int(p, lt, 0, &st->count, "a byte count");
  }
  if (what->kind == T_END)
    fail_at(p, lt->line, what->col, "expected what to expect at end of line");
  else
    fail_at(p, lt->line, what->col, "unknown expectation '%.*s'", (int)what->len, what->s);
  return -1;
}

/* Actions: everything but expect and repeat. `binds` is 0 inside `expect error`,
 * where a failing binding binds nothing. */
static int parse_action(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                        int binds) {
  struct tok *kw = next(lt);
  st->dst = st->a = st->b = st->out = -1;
  if (tok_is(kw, "node") && binds) return parse_node(p, lt, st);
  if (tok_is(kw, "manager") || tok_is(kw, "tensor") || tok_is(kw, "scope") ||
      tok_is(kw, "composite") || tok_is(kw, "dlpack") || tok_is(kw, "graph")) {
    int kind = tok_is(kw, "manager")     ? CTS_SYM_MANAGER
               : tok_is(kw, "tensor")    ? CTS_SYM_TENSOR
               : tok_is(kw, "scope")     ? CTS_SYM_SCOPE
               : tok_is(kw, "composite") ? CTS_SYM_COMPOSITE
               : tok_is(kw, "graph")     ? CTS_SYM_GRAPH
                                         : CTS_SYM_DLPACK;
    /* Bind after the right-hand side so `tensor x = add x x` uses the old x. */
    int name_pos = lt->pos;
    struct tok *name = next(lt);
    if (!valid_name(name)) {
      fail_at(p, lt->line, name->col, "expected a name%s",
              name->kind == T_END ? " at end of line" : "");
      return -1;
    }
    if (expect_punct(p, lt, "=")) return -1;
    if (parse_binding_rhs(p, lt, st, kind)) return -1;
    int end_pos = lt->pos;
    lt->pos = name_pos;
    int sym = binds ? bind_name(p, lt, kind) : -1;
    if (!binds) {
      /* Inside expect error: the name must not change kind, but is not bound. */
      int s = sym_find(p->c, name);
      if (s >= 0 && (s == CTS_SYM_ROOT || s == CTS_SYM_BOGUS || p->c->syms[s].kind != kind)) {
        fail_at(p, lt->line, name->col, "'%.*s' cannot be bound as a %s here", (int)name->len,
                name->s, kind_name(kind));
        return -1;
      }
      sym = s; /* may be -1: no binding */
    } else if (sym < 0) {
      return -1;
    }
    st->dst = sym;
    lt->pos = end_pos;
    return 0;
  }
  if (tok_is(kw, "attach")) {
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0 || expect_word(p, lt, "to")) return -1;
    if ((st->b = use_name(p, lt, CTS_SYM_MANAGER | CTS_SYM_SCOPE)) < 0) return -1;
    st->kind = p->c->syms[st->b].kind == CTS_SYM_SCOPE ? CTS_SCOPE_ATTACH : CTS_ATTACH;
    if (st->kind == CTS_SCOPE_ATTACH) p->c->families |= TSM_CAP_SCOPES;
    return 0;
  }
  if (tok_is(kw, "borrow") || tok_is(kw, "ret")) {
    st->kind = tok_is(kw, "borrow") ? CTS_BORROW : CTS_RET;
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0) return -1;
    if (expect_word(p, lt, st->kind == CTS_BORROW ? "into" : "from")) return -1;
    return (st->b = use_name(p, lt, CTS_SYM_MANAGER)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "detach")) {
    st->kind = CTS_DETACH;
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0) return -1;
    if (!tok_is(peek(lt), "from")) return 0;
    next(lt);
    st->kind = CTS_SCOPE_DETACH;
    p->c->families |= TSM_CAP_SCOPES;
    return (st->b = use_name(p, lt, CTS_SYM_SCOPE)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "drop")) {
    st->kind = CTS_DL_DROP;
    p->c->families |= TSM_CAP_DLPACK_C;
    return (st->a = use_name(p, lt, CTS_SYM_DLPACK)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "release")) {
    st->kind = CTS_RELEASE;
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE | CTS_SYM_GRAPH)) < 0) return -1;
    if (p->c->syms[st->a].kind == CTS_SYM_GRAPH) st->kind = CTS_G_RELEASE;
    return 0;
  }
  if (tok_is(kw, "flag")) {
    static const char *const flags[] = {"input", "output", "param", NULL};
    st->kind = CTS_G_FLAG;
    if ((st->a = use_name(p, lt, CTS_SYM_NODE)) < 0) return -1;
    do {
      struct tok *f = next(lt);
      int found = -1;
      for (int i = 0; flags[i]; i++)
        if (tok_is(f, flags[i])) found = i;
      if (found < 0) {
        fail_at(p, lt->line, f->col, "expected input, output or param");
        return -1;
      }
      st->flag |= 1 << found;
    } while (peek(lt)->kind != T_END);
    return 0;
  }
  if (tok_is(kw, "expand")) {
    st->kind = CTS_G_EXPAND;
    if ((st->a = use_name(p, lt, CTS_SYM_GRAPH)) < 0) return -1;
    return (st->b = use_name(p, lt, CTS_SYM_NODE)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "compute") || tok_is(kw, "recompute")) {
    st->kind = tok_is(kw, "compute") ? CTS_G_COMPUTE : CTS_G_RECOMPUTE;
    return (st->a = use_name(p, lt, CTS_SYM_GRAPH)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "close") || tok_is(kw, "cap") || tok_is(kw, "dump")) {
    st->kind = tok_is(kw, "close") ? CTS_CLOSE : tok_is(kw, "cap") ? CTS_CAP : CTS_DUMP;
    if (st->kind == CTS_DUMP) p->c->uses_dump = 1;
    return (st->a = use_name(p, lt, CTS_SYM_MANAGER)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "dispose") || tok_is(kw, "handover")) {
    p->c->families |= TSM_CAP_SCOPES;
    st->kind = tok_is(kw, "dispose") ? CTS_SCOPE_DISPOSE : CTS_SCOPE_HANDOVER;
    if (st->kind == CTS_SCOPE_DISPOSE && tok_is(peek(lt), "everything")) {
      next(lt);
      st->kind = CTS_SCOPE_DISPOSE_ALL;
      if (expect_word(p, lt, "in")) return -1;
      if ((st->a = use_name(p, lt, CTS_SYM_SCOPE)) < 0) return -1;
      if (!tok_is(peek(lt), "but")) return 0;
      next(lt);
      st->flag = 1;
      return use_name_list(p, lt, CTS_SYM_RESOURCE, &st->list, &st->n_list);
    }
    return (st->a = use_name(p, lt, CTS_SYM_SCOPE)) < 0 ? -1 : 0;
  }
  if (tok_is(kw, "move")) {
    p->c->families |= TSM_CAP_SCOPES;
    if ((st->a = use_name(p, lt, CTS_SYM_RESOURCE)) < 0) return -1;
    struct tok *how = next(lt);
    if (tok_is(how, "out")) {
      st->kind = CTS_SCOPE_MOVE_OUTER;
      if (expect_word(p, lt, "of")) return -1;
      return (st->b = use_name(p, lt, CTS_SYM_SCOPE)) < 0 ? -1 : 0;
    }
    if (!tok_is(how, "from")) {
      fail_at(p, lt->line, how->col, "expected 'out of' or 'from'");
      return -1;
    }
    st->kind = CTS_SCOPE_MOVE_OTHER;
    if ((st->b = use_name(p, lt, CTS_SYM_SCOPE)) < 0 || expect_word(p, lt, "to")) return -1;
    return (st->out = use_name_or_none(p, lt, CTS_SYM_SCOPE)) == -1 ? -1 : 0;
  }
  if (kw->kind == T_END)
    fail_at(p, lt->line, kw->col, "expected a statement");
  else
    fail_at(p, lt->line, kw->col, "unknown statement '%.*s'", (int)kw->len, kw->s);
  return -1;
}

static void trim(const char **s, size_t *len) {
  while (*len && isspace((unsigned char)(*s)[0])) (*s)++, (*len)--;
  while (*len && isspace((unsigned char)(*s)[*len - 1])) (*len)--;
}

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

static int parse_list(struct parser *p, const char *s, size_t len, int line, int col0,
                      char ***items, size_t *n, int **cols) {
  size_t cap = 0, capc = 0, nc = 0;
  size_t i = 0;
  while (i < len && isspace((unsigned char)s[i])) i++;
  if (i >= len || s[i] != '[') {
    fail_at(p, line, col0 + (int)i, "expected a list '[a, b]'");
    return -1;
  }
  i++;
  for (;;) {
    while (i < len && isspace((unsigned char)s[i])) i++;
    if (i < len && s[i] == ']' && *n == 0) {
      i++;
      break;
    }
    size_t start = i;
    while (i < len && s[i] != ',' && s[i] != ']') i++;
    size_t end = i;
    while (end > start && isspace((unsigned char)s[end - 1])) end--;
    if (end == start) {
      fail_at(p, line, col0 + (int)start, "empty list item");
      return -1;
    }
    CTS_PUSH(*items, *n, cap, cts_xstrndup(s + start, end - start));
    if (cols) CTS_PUSH(*cols, nc, capc, col0 + (int)start);
    if (i >= len) {
      fail_at(p, line, col0 + (int)i, "unterminated list: expected ']'");
      return -1;
    }
    if (s[i++] == ']') break;
  }
  while (i < len && isspace((unsigned char)s[i])) i++;
  if (i < len) {
    fail_at(p, line, col0 + (int)i, "unexpected text after the list");
    return -1;
  }
  return 0;
}

static int parse_frontmatter(struct parser *p, struct text_cursor *tc) {
  const char *s;
  size_t len;
  struct cts_case *c = p->c;
  if (!next_line(tc, &s, &len) || len != 3 || memcmp(s, "---", 3) != 0) {
    fail_at(p, 1, 1, "missing frontmatter: a case starts with a '---' line");
    return -1;
  }
  int have_description = 0, have_clauses = 0;
  for (;;) {
    if (!next_line(tc, &s, &len)) {
      fail_at(p, 1, 1, "unterminated frontmatter: no closing '---' line");
      return -1;
    }
    int line = tc->line;
    if (len == 3 && memcmp(s, "---", 3) == 0) break;
    const char *t = s;
    size_t tl = len;
    trim(&t, &tl);
    if (tl == 0 || t[0] == '#') continue;
    const char *colon = memchr(s, ':', len);
    int key_col = (int)(t - s) + 1;
    if (!colon) {
      fail_at(p, line, key_col, "expected 'key: value'");
      return -1;
    }
    char *key = cts_xstrndup(t, (size_t)(colon - t));
    const char *v = colon + 1;
    size_t vl = len - (size_t)(v - s);
    int vcol = (int)(v - s) + 1;
    const char *vt = v;
    size_t vtl = vl;
    trim(&vt, &vtl);
    int rc = 0;
    if (strcmp(key, "description") == 0 || strcmp(key, "origin") == 0) {
      if (vtl == 0) {
        fail_at(p, line, vcol + 1, "empty %s", key);
        rc = -1;
      } else if (key[0] == 'd') {
        free(c->description);
        c->description = cts_xstrndup(vt, vtl);
        have_description = 1;
      } else {
        free(c->origin);
        c->origin = cts_xstrndup(vt, vtl);
      }
    } else if (strcmp(key, "clauses") == 0) {
      rc = parse_list(p, v, vl, line, vcol, &c->clauses, &c->n_clauses, &c->clause_cols);
      have_clauses = 1;
      size_t nl = 0, capl = 0;
      for (size_t i = 0; rc == 0 && i < c->n_clauses; i++) {
        CTS_PUSH(c->clause_lines, nl, capl, line);
        if (!cts_clause_id_valid(c->clauses[i])) {
          fail_at(p, line, c->clause_cols[i], "malformed clause id '%s' (PREFIX.TOPIC.N)",
                  c->clauses[i]);
          rc = -1;
        } else if (p->spec && !cts_spec_find(p->spec, c->clauses[i])) {
          fail_at(p, line, c->clause_cols[i], "unknown clause '%s' (not in spec/)",
                  c->clauses[i]);
          rc = -1;
        }
      }
      if (rc == 0 && c->n_clauses == 0) {
        fail_at(p, line, vcol + 1, "a case cites at least one clause");
        rc = -1;
      }
    } else if (strcmp(key, "requires") == 0) {
      int *cols = NULL;
      rc = parse_list(p, v, vl, line, vcol, &c->requires, &c->n_requires, &cols);
      for (size_t i = 0; rc == 0 && i < c->n_requires; i++) {
        if (!cts_family_cap(c->requires[i])) {
          fail_at(p, line, cols[i], "unknown family '%s'", c->requires[i]);
          rc = -1;
        }
      }
      free(cols);
    } else if (strcmp(key, "devices") == 0) {
      rc = parse_list(p, v, vl, line, vcol, &c->devices, &c->n_devices, NULL);
    } else if (strcmp(key, "tags") == 0) {
      rc = parse_list(p, v, vl, line, vcol, &c->tags, &c->n_tags, NULL);
    } else if (strcmp(key, "timeout") == 0) {
      char *end;
      char *num = cts_xstrndup(vt, vtl);
      long ms = strtol(num, &end, 10);
      if (vtl == 0 || *end || ms <= 0 || ms > 86400000) {
        fail_at(p, line, vcol + 1, "timeout is a positive number of milliseconds");
        rc = -1;
      }
      c->timeout_ms = (int)ms;
      free(num);
    } else {
      fail_at(p, line, key_col, "unknown frontmatter key '%s'", key);
      rc = -1;
    }
    free(key);
    if (rc) return -1;
  }
  if (!have_description) {
    fail_at(p, tc->line, 1, "frontmatter lacks 'description'");
    return -1;
  }
  if (!have_clauses) {
    fail_at(p, tc->line, 1, "frontmatter lacks 'clauses'");
    return -1;
  }
  return 0;
}

/* ---- body ------------------------------------------------------------------ */

#define MAX_DEPTH 16

/* An open block and what it allows inside. */
struct open_block {
  struct cts_stmt *st;   /* the repeat, wrapped, thread or parallel statement */
  int in_parallel;       /* inside a parallel block: actions and repeat only */
  int in_thread;         /* inside a thread block: no nested threads */
  struct tok result_name; /* wrapped: the name to bind at '}' */
  char name_buf[64];
};

static int thread_number(struct cts_case *c, const struct tok *t) {
  if (c->n_threads == 0) CTS_PUSH(c->threads, c->n_threads, c->cap_threads, cts_xstrdup("main"));
  for (size_t i = 0; i < c->n_threads; i++)
    if (strlen(c->threads[i]) == t->len && !memcmp(c->threads[i], t->s, t->len)) return (int)i;
  CTS_PUSH(c->threads, c->n_threads, c->cap_threads, tok_str(t));
  return (int)c->n_threads - 1;
}

/* Opens a block statement (repeat, wrapped, thread, parallel); the `{` ends the line. */
static int parse_block_head(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                            struct open_block *outer, struct open_block *ob) {
  struct tok *kw = next(lt);
  memset(ob, 0, sizeof *ob);
  ob->in_parallel = outer ? outer->in_parallel : 0;
  ob->in_thread = outer ? outer->in_thread : 0;
  if (tok_is(kw, "repeat")) {
    st->kind = CTS_REPEAT;
    if (parse_int(p, lt, 0, &st->count, "a repeat count")) return -1;
  } else if (tok_is(kw, "wrapped")) {
    st->kind = CTS_WRAPPED;
    p->c->families |= TSM_CAP_SCOPES;
    p->c->uses_wrapped = 1;
    struct tok *name = next(lt);
    if (!valid_name(name) || name->len >= sizeof ob->name_buf) {
      fail_at(p, lt->line, name->col, "expected the name the result is bound to");
      return -1;
    }
    memcpy(ob->name_buf, name->s, name->len);
    ob->result_name = *name;
    ob->result_name.s = ob->name_buf;
  } else if (tok_is(kw, "thread")) {
    if (ob->in_thread) {
      fail_at(p, lt->line, kw->col, "thread blocks do not nest");
      return -1;
    }
    if (outer && outer->st->kind != CTS_PARALLEL && ob->in_parallel) {
      fail_at(p, lt->line, kw->col, "a thread block goes directly inside 'parallel'");
      return -1;
    }
    st->kind = CTS_THREAD;
    p->c->families |= TSM_CAP_THREADS;
    struct tok *name = next(lt);
    if (!valid_name(name) || tok_is(name, "main")) {
      fail_at(p, lt->line, name->col, "expected a worker thread name");
      return -1;
    }
    st->flag = thread_number(p->c, name);
    ob->in_thread = 1;
  } else {
    if (ob->in_thread || ob->in_parallel) {
      fail_at(p, lt->line, kw->col, "'parallel' does not go inside a thread block");
      return -1;
    }
    st->kind = CTS_PARALLEL;
    p->c->families |= TSM_CAP_THREADS;
    ob->in_parallel = 1;
  }
  ob->st = st;
  return expect_punct(p, lt, "{");
}

/* Closes a block at `}`; a wrapped block binds its result name. */
static int close_block(struct parser *p, struct open_block *ob, int line, int col) {
  struct cts_stmt *st = ob->st;
  if (st->kind == CTS_PARALLEL) {
    for (size_t i = 0; i < st->body.n; i++) {
      for (size_t k = 0; k < i; k++) {
        if (st->body.items[k].flag == st->body.items[i].flag) {
          fail_at(p, st->body.items[i].line, st->body.items[i].col,
                  "each thread appears once in a parallel block");
          return -1;
        }
      }
    }
    return 0;
  }
  if (st->kind != CTS_WRAPPED) return 0;
  if (st->body.n == 0 || st->body.items[st->body.n - 1].kind != CTS_RESULT) {
    fail_at(p, line, col, "a wrapped block ends with 'result NAME'");
    return -1;
  }
  int kind = p->c->syms[st->body.items[st->body.n - 1].a].kind;
  struct line_toks one;
  one.t[0] = ob->result_name;
  one.t[0].s = ob->name_buf; /* the block record moved since the head was parsed */
  one.t[0].kind = T_WORD;
  one.t[1].kind = T_END;
  one.n = 1;
  one.pos = 0;
  one.line = st->line;
  st->dst = bind_name(p, &one, kind == CTS_SYM_ANY ? CTS_SYM_TENSOR : kind);
  return st->dst < 0 ? -1 : 0;
}

static int is_block_keyword(const struct tok *t) {
  return tok_is(t, "repeat") || tok_is(t, "wrapped") || tok_is(t, "thread") ||
         tok_is(t, "parallel");
}

static int parse_body(struct parser *p, struct text_cursor *tc) {
  struct cts_block *stack[MAX_DEPTH];
  struct open_block open[MAX_DEPTH];
  int depth = 0;
  stack[0] = &p->c->body;
  struct line_toks *lt = cts_xmalloc(sizeof *lt);
  const char *s;
  size_t len;
  int rc = 0;
  while (rc == 0 && next_line(tc, &s, &len)) {
    if (tokenize(p, s, len, tc->line, lt)) {
      rc = -1;
      break;
    }
    if (lt->n == 0) continue;
    struct tok *first = peek(lt);
    struct open_block *top = depth ? &open[depth - 1] : NULL;
    if (tok_is(first, "}")) {
      if (depth == 0) {
        fail_at(p, lt->line, first->col, "'}' without an open block");
        rc = -1;
        break;
      }
      next(lt);
      rc = close_block(p, top, lt->line, first->col);
      depth--;
    } else if (top && top->st->kind == CTS_WRAPPED && top->st->body.n &&
               top->st->body.items[top->st->body.n - 1].kind == CTS_RESULT) {
      fail_at(p, lt->line, first->col, "'result' must be the last statement of its block");
      rc = -1;
    } else if (top && top->st->kind == CTS_PARALLEL && !tok_is(first, "thread")) {
      fail_at(p, lt->line, first->col, "a parallel block holds only thread blocks");
      rc = -1;
    } else if (top && top->in_parallel && top->st->kind != CTS_PARALLEL &&
               (tok_is(first, "expect") || tok_is(first, "wrapped") || tok_is(first, "dump"))) {
      fail_at(p, lt->line, first->col,
              "a thread inside 'parallel' holds only actions and repeat: check after the block");
      rc = -1;
    } else {
      struct cts_stmt st;
      memset(&st, 0, sizeof st);
      st.line = lt->line;
      st.col = first->col;
      const char *txt = s;
      size_t tl = len;
      trim(&txt, &tl);
      const char *hash = memchr(txt, '#', tl);
      if (hash) tl = (size_t)(hash - txt);
      trim(&txt, &tl);
      st.text = cts_xstrndup(txt, tl);
      st.dst = st.a = st.b = st.out = -1;
      struct open_block ob;
      int opens = is_block_keyword(first);
      if (opens) {
        rc = parse_block_head(p, lt, &st, top, &ob);
      } else if (tok_is(first, "result")) {
        next(lt);
        st.kind = CTS_RESULT;
        if (!top || top->st->kind != CTS_WRAPPED) {
          fail_at(p, lt->line, first->col, "'result' belongs at the end of a wrapped block");
          rc = -1;
        } else {
          st.a = use_name(p, lt, CTS_SYM_RESOURCE);
          if (st.a < 0) rc = -1;
        }
      } else if (tok_is(first, "expect")) {
        next(lt);
        rc = parse_expect(p, lt, &st, first);
      } else {
        rc = parse_action(p, lt, &st, 1);
      }
      struct cts_block *blk = stack[depth];
      CTS_PUSH(blk->items, blk->n, blk->cap, st);
      if (rc) break;
      if (opens) {
        if (depth + 1 == MAX_DEPTH) {
          fail_at(p, lt->line, first->col, "blocks nest at most %d deep", MAX_DEPTH - 1);
          rc = -1;
          break;
        }
        ob.st = &blk->items[blk->n - 1];
        open[depth] = ob;
        stack[depth + 1] = &ob.st->body;
        depth++;
      }
    }
    if (rc) break;
    struct tok *rest = peek(lt);
    if (rest->kind != T_END) {
      fail_at(p, lt->line, rest->col, "unexpected '%.*s' after the statement", (int)rest->len,
              rest->s);
      rc = -1;
    }
  }
  if (rc == 0 && depth > 0) {
    struct cts_stmt *r = open[depth - 1].st;
    fail_at(p, r->line, r->col, "'%s' block is not closed with '}'",
            r->kind == CTS_REPEAT    ? "repeat"
            : r->kind == CTS_WRAPPED ? "wrapped"
            : r->kind == CTS_THREAD  ? "thread"
                                     : "parallel");
    rc = -1;
  }
  free(lt);
  return rc;
}

/* ---- API ------------------------------------------------------------------- */

uint32_t cts_family_cap(const char *family) {
  static const struct {
    const char *name;
    uint32_t cap;
  } families[] = {{"managers", TSM_CAP_MANAGERS},   {"scopes", TSM_CAP_SCOPES},
                  {"composites", TSM_CAP_COMPOSITES}, {"dlpack-c", TSM_CAP_DLPACK_C},
                  {"dlpack-py", TSM_CAP_DLPACK_PY},   {"graphs", TSM_CAP_GRAPHS},
                  {"threads", TSM_CAP_THREADS},     {NULL, 0}};
  for (int i = 0; families[i].name; i++)
    if (strcmp(families[i].name, family) == 0) return families[i].cap;
  return 0;
}

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
  struct parser p = {c, spec, err, 0};
  memset(err, 0, sizeof *err);
  struct text_cursor tc = {text, 0};
  if (parse_frontmatter(&p, &tc) || parse_body(&p, &tc)) {
    cts_case_free(c);
    return NULL;
  }
  if (c->n_requires == 0) {
    c->requires = cts_xcalloc(1, sizeof(char *));
    c->requires[0] = cts_xstrdup("managers");
    c->n_requires = 1;
  }
  for (size_t i = 0; i < c->n_requires; i++) c->families |= cts_family_cap(c->requires[i]);
  if (c->n_threads == 0) CTS_PUSH(c->threads, c->n_threads, c->cap_threads, cts_xstrdup("main"));
  return c;
}

struct cts_case *cts_case_load(const char *path, const struct cts_spec *spec,
                               struct cts_parse_error *err) {
  char *text = cts_read_file(path, NULL);
  if (!text) {
    memset(err, 0, sizeof *err);
    err->line = 1;
    err->col = 1;
    snprintf(err->msg, sizeof err->msg, "cannot read: %s", strerror(errno));
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

static void free_stmt(struct cts_stmt *st) {
  free(st->text);
  free(st->vals);
  free(st->list);
  free(st->dl);
  if (st->inner) {
    free_stmt(st->inner);
    free(st->inner);
  }
  free_block(&st->body);
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
  for (size_t i = 0; i < c->n_syms; i++) free(c->syms[i].name);
  free(c->syms);
  free_block(&c->body);
  free(c);
}
