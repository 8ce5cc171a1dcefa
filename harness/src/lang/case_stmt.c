/*
 * harness/src/lang/case_stmt.c: the statements of the case language (cases/README.md). The
 * statement table (stmt_table.h) selects a row by the statement's first word and its
 * verb, among the rows of the case's dialect (.tsm, or .pytsm: the dlpack-py rows); the
 * row's parse function below reads the rest of the line into the statement's operands
 * and the union member of its shape. The word tables the JSON writer shares are here.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_lex.h"
#include "dlpack_judge.h"
#include "families.h"
#include "opsem.h"
#include "util.h"

typedef int (*parse_fn)(struct parser *p, struct line_toks *lt, struct cts_stmt *st);

/* A row's columns by label (stmt_table.h): PARSE(f) pasted onto a prefix. */
#define CTS__DECLARE_PARSE_PARSE(f)                                                         \
  static int f(struct parser *p, struct line_toks *lt, struct cts_stmt *st);
#define CTS__DECLARE_PARSE(KIND, KEY, DATA, PARSE, ...) CTS__DECLARE_PARSE_##PARSE
CTS_STATEMENTS(CTS__DECLARE_PARSE)
#undef CTS__DECLARE_PARSE

struct stmt_row {
  const char *name; /* the kind's enum name without CTS_ */
  int kind;
  CTS_STMT_DATA_FIELDS; /* .family: CTS_FAMILY_DLPACK_PY rows are .pytsm's */
  parse_fn parse;
};

#define CTS__ROW_DATA(...) __VA_ARGS__
#define CTS__ROW_PARSE(f) f
static const struct stmt_row rows[CTS_N_STMT_KINDS] = {
#define CTS__ROW(KIND, KEY, DATA, PARSE, ...) \
  [CTS_##KIND] = {.name = #KIND, .kind = CTS_##KIND, CTS__ROW_##DATA, .parse = CTS__ROW_##PARSE},
    CTS_STATEMENTS(CTS__ROW)
#undef CTS__ROW
};

static const struct {
  const char *name;
  int op, arity, in_managers, in_graphs;
} ops[] = {
#define CTS__OP(name, op, arity, in_managers, in_graphs) {name, op, arity, in_managers, in_graphs},
    CTS_OPS(CTS__OP)
#undef CTS__OP
    {NULL, 0, 0, 0, 0}};

const char *cts_op_name(int op) {
  for (int i = 0; ops[i].name; i++)
    if (ops[i].op == op) return ops[i].name;
  return "?";
}

const char *cts_stmt_keyword(int kind) {
  return kind >= 0 && kind < CTS_N_STMT_KINDS ? rows[kind].lead : "?";
}

const char *cts_stmt_kind_name(int kind) {
  return kind >= 0 && kind < CTS_N_STMT_KINDS ? rows[kind].name : "?";
}

const char *cts_stmt_verb(int kind) {
  return kind >= 0 && kind < CTS_N_STMT_KINDS ? rows[kind].verb : NULL;
}

int cts_stmt_shape(int kind) { return rows[kind].shape; }

/* The op named t, usable where a statement binding `binds` stands; -1 if none. */
static int find_op(const struct tok *t, int binds) {
  for (int i = 0; ops[i].name; i++)
    if (tok_is(t, ops[i].name) && (binds == CTS_SYM_NODE ? ops[i].in_graphs : ops[i].in_managers))
      return i;
  return -1;
}

static int verb_matches(const struct stmt_row *row, const struct tok *verb) {
  if (!row->verb) return 1;
  if (strcmp(row->verb, CTS_VERB_OP) == 0) return find_op(verb, row->binds) >= 0;
  return tok_is_one_of(verb, row->verb);
}

/* The row is one of the dialect of the case being read (stmt_table.h). */
static int in_dialect(const struct parser *p, const struct stmt_row *row) {
  return CTS_IN_BOTH_DIALECTS(row->kind) ||
         (row->family == CTS_FAMILY_DLPACK_PY) == (p->c->capsule_level != 0);
}

/* The first row for lead (and verb, when given) of the class, in the case's dialect or,
 * with other set, only in the other one; NULL if none. */
static const struct stmt_row *find_row(const struct parser *p, const struct tok *lead,
                                       const struct tok *verb, int cls, int other) {
  for (int k = 0; k < CTS_N_STMT_KINDS; k++)
    if (rows[k].cls == cls && in_dialect(p, &rows[k]) != other && tok_is(lead, rows[k].lead) &&
        (!verb || verb_matches(&rows[k], verb)))
      return &rows[k];
  return NULL;
}

/* Fails when lead (and verb) select a row only of the other dialect. RETURN -1 if so. */
static int other_dialect(struct parser *p, struct line_toks *lt, const struct tok *lead,
                         const struct tok *verb, int cls) {
  if (!find_row(p, lead, verb, cls, 1)) return 0;
  const struct tok *t = verb ? verb : lead;
  int py = p->c->capsule_level;
  fail_at(p, lt->line, t->col, "'%.*s' belongs to %s cases; a %s case cannot use it",
          (int)t->len, t->s, py ? ".tsm" : "capsule-level .pytsm", py ? ".pytsm" : ".tsm");
  return -1;
}

/* The symbol kind lead binds, or 0 when it is no binding statement's lead. */
static int binding_kind(const struct parser *p, const struct tok *lead) {
  for (int k = 0; k < CTS_N_STMT_KINDS; k++)
    if (rows[k].binds && in_dialect(p, &rows[k]) && tok_is(lead, rows[k].lead))
      return rows[k].binds;
  return 0;
}

/* "'sub' or 'sub_of'": the verbs the table has for lead. */
static void list_verbs(const struct parser *p, const struct tok *lead, char *buf, size_t n) {
  const char *words[64];
  char quoted[64][48];
  int nw = 0;
  for (int k = 0; k < CTS_N_STMT_KINDS && nw < 64; k++) {
    if (!rows[k].verb || !in_dialect(p, &rows[k]) || !tok_is(lead, rows[k].lead)) continue;
    int is_op = strcmp(rows[k].verb, CTS_VERB_OP) == 0;
    for (const char *a = rows[k].verb; *a && nw < 64;) {
      size_t len = is_op ? strlen(a) : strcspn(a, "|");
      snprintf(quoted[nw], sizeof quoted[nw], is_op ? "an operation" : "'%.*s'", (int)len, a);
      words[nw] = quoted[nw];
      nw++;
      a += a[len] ? len + 1 : len;
    }
  }
  size_t at = 0;
  buf[0] = '\0';
  for (int i = 0; i < nw && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%s", i == 0 ? "" : i == nw - 1 ? " or " : ", ",
                           words[i]);
}

/* Runs a row's parse; the case needs the capability of the kind the parse settled on. */
static int run_row(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                   const struct stmt_row *row) {
  st->kind = row->kind;
  if (row->parse(p, lt, st)) return -1;
  p->c->families |= rows[st->kind].cap;
  return 0;
}

/* ---- operand shapes ---------------------------------------------------------------- */

static int use_a(struct parser *p, struct line_toks *lt, struct cts_stmt *st, int kind) {
  return (st->a = use_name(p, lt, kind)) < 0 ? -1 : 0;
}

/* The operands `A WORD B`: A of a_kind, the joining word, B of b_kind. */
struct a_word_b {
  int a_kind;
  const char *word;
  int b_kind;
};

static int use_a_word_b(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                        const struct a_word_b *form) {
  if (use_a(p, lt, st, form->a_kind) || expect_punct(p, lt, form->word)) return -1;
  return (st->b = use_name(p, lt, form->b_kind)) < 0 ? -1 : 0;
}

static int parse_nothing(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  (void)p, (void)lt, (void)st;
  return 0;
}

static int parse_use_manager(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_MANAGER);
}

static int parse_use_resource(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_RESOURCE);
}

static int parse_use_scope(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_SCOPE);
}

static int parse_use_dlpack(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_DLPACK);
}

static int parse_use_graph(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_GRAPH);
}

/* `read V`: graph_read of V, judged by its code alone (expect node judges values) */
static int parse_read(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_NODE);
}

/* `recompute G [unwritten]`: unwritten (truth.holds) computes without writing the
 * leaves first, so that they hold what was written before (GRAPH.PLAN.4). */
static int parse_recompute(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_GRAPH)) return -1;
  if (!tok_is(peek(lt), "unwritten")) return 0;
  next(lt);
  st->u.truth.holds = 1;
  return 0;
}

/* ---- managers ---------------------------------------------------------------------- */

/* A literal's LIST: one value per element, two (real, imaginary) for a complex dtype of
 * the capsule level (cts_py_values_per_element). */
static int parse_values_for(struct parser *p, struct line_toks *lt, struct cts_literal *lit) {
  struct tok *list = peek(lt);
  if (parse_values(p, lt, &lit->vals, &lit->nvals)) return -1;
  int per = cts_py_values_per_element(lit->dtype);
  long long elems = (long long)cts_opsem_literal_elems(lit->ndim, lit->shape);
  if ((long long)lit->nvals == per * elems) return 0;
  if (per == 1)
    fail_at(p, lt->line, list->col, "%zu values for a shape of %lld elements", lit->nvals,
            elems);
  else
    fail_at(p, lt->line, list->col, "%zu values for a complex shape of %lld elements: two "
            "(real, imaginary) per element", lit->nvals, elems);
  return -1;
}

const char *const cts_fill_names[] = {"zeros", "ones", "full", "arange", "values", NULL};

/* The judge writes each element of a literal other than zeros, and each element of a
 * DLPack tensor it makes (judge_made): at most CTS_OPSEM_MAX_MODELED of them
 * (cases/README.md, "Limits"), so that what a case declares never costs the judge more.
 * col: the shape's. */
static int literal_within_limit(struct parser *p, struct line_toks *lt, int col,
                                const struct cts_literal *lit, int judge_made) {
  if ((lit->fill == CTS_ZEROS && !judge_made) ||
      cts_opsem_literal_elems(lit->ndim, lit->shape) <= CTS_OPSEM_MAX_MODELED)
    return 0;
  fail_at(p, lt->line, col, "more than %lld elements: the judge writes each one of a %s "
          "(cases/README.md, \"Limits\")", (long long)CTS_OPSEM_MAX_MODELED,
          judge_made ? "tensor it makes" : "tensor that is not zeros");
  return -1;
}

/* The literal's values lie in its integer dtype's range (cts_opsem_int_range): a value
 * out of it is an author's slip, and a 64-bit one past 2^53 is no double. col: the
 * values'. */
static int literal_in_range(struct parser *p, struct line_toks *lt, int col,
                            const struct cts_literal *lit) {
  double lo, hi;
  if (!cts_opsem_int_range(lit->dtype, &lo, &hi)) return 0;
  const double *v = lit->fill == CTS_FULL ? &lit->scalar : lit->vals;
  size_t n = lit->fill == CTS_FULL ? 1 : lit->fill == CTS_VALUES ? lit->nvals : 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] >= lo && v[i] <= hi) continue;
    fail_at(p, lt->line, col, "%.17g is outside %s's range [%.17g, %.17g] (cases/README.md, "
            "\"Dtypes\")", v[i], cts_opsem_dtype_name(lit->dtype), lo, hi);
    return -1;
  }
  return 0;
}

static int parse_create(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_literal *lit = &st->u.literal;
  for (int i = 0; cts_fill_names[i]; i++)
    if (tok_is(p->verb, cts_fill_names[i])) lit->fill = i;
  if (use_a(p, lt, st, CTS_SYM_MANAGER)) return -1;
  int shape_col = peek(lt)->col;
  if (parse_shape(p, lt, &lit->ndim, lit->shape)) return -1;
  if (lit->fill == CTS_FULL) {
    struct tok *t = next(lt);
    if (t->kind != T_NUM) {
      fail_at(p, lt->line, t->col, "expected the fill value");
      return -1;
    }
    lit->scalar = t->num;
  }
  if (parse_dtype_opt(p, lt, &lit->dtype) || literal_within_limit(p, lt, shape_col, lit, 0))
    return -1;
  p->c->dtypes_used |= 1u << lit->dtype;
  int values_col = peek(lt)->col;
  if (lit->fill == CTS_VALUES && parse_values_for(p, lt, lit)) return -1;
  return literal_in_range(p, lt, lit->fill == CTS_FULL ? shape_col : values_col, lit);
}

/* The op's operands of kind, and reshape's shape. */
static int parse_op_operands(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                             int kind) {
  int i = find_op(p->verb, kind == CTS_SYM_NODE ? CTS_SYM_NODE : CTS_SYM_TENSOR);
  st->u.op.op = ops[i].op;
  if (use_a(p, lt, st, kind)) return -1;
  if (ops[i].arity == 2 && (st->b = use_name(p, lt, kind)) < 0) return -1;
  if (st->u.op.op == TSM_OP_RESHAPE && parse_shape(p, lt, &st->u.op.ndim, st->u.op.shape))
    return -1;
  return 0;
}

static int parse_op(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (parse_op_operands(p, lt, st, CTS_SYM_TENSOR)) return -1;
  p->c->ops_used |= 1u << st->u.op.op;
  if (!tok_is(peek(lt), "in")) return 0;
  next(lt);
  return (st->out = use_name(p, lt, CTS_SYM_MANAGER)) < 0 ? -1 : 0;
}

static int parse_attach(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct a_word_b to_holder = {CTS_SYM_RESOURCE, "to",
                                            CTS_SYM_MANAGER | CTS_SYM_SCOPE};
  if (use_a_word_b(p, lt, st, &to_holder)) return -1;
  st->kind = p->c->syms[st->b].kind == CTS_SYM_SCOPE ? CTS_SCOPE_ATTACH : CTS_ATTACH;
  return 0;
}

/* `detach A`, or `detach A from S` (a scope). */
static int parse_detach(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  st->kind = CTS_DETACH;
  if (use_a(p, lt, st, CTS_SYM_RESOURCE)) return -1;
  if (!tok_is(peek(lt), "from")) return 0;
  next(lt);
  st->kind = CTS_SCOPE_DETACH;
  return (st->b = use_name(p, lt, CTS_SYM_SCOPE)) < 0 ? -1 : 0;
}

static int parse_borrow(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct a_word_b into_manager = {CTS_SYM_RESOURCE, "into", CTS_SYM_MANAGER};
  return use_a_word_b(p, lt, st, &into_manager);
}

static int parse_ret(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct a_word_b from_manager = {CTS_SYM_RESOURCE, "from", CTS_SYM_MANAGER};
  return use_a_word_b(p, lt, st, &from_manager);
}

/* `release A`: a resource, or a graph. */
static int parse_release(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_RESOURCE | CTS_SYM_GRAPH)) return -1;
  st->kind = p->c->syms[st->a].kind == CTS_SYM_GRAPH ? CTS_G_RELEASE : CTS_RELEASE;
  return 0;
}

static int parse_dump(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  p->c->uses_dump = 1;
  return use_a(p, lt, st, CTS_SYM_MANAGER);
}

/* ---- scopes and composites --------------------------------------------------------- */

/* `dispose S`, or `dispose everything in S [but [A, ...]]`. */
static int parse_dispose(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  st->kind = CTS_SCOPE_DISPOSE;
  if (!tok_is(peek(lt), "everything")) return use_a(p, lt, st, CTS_SYM_SCOPE);
  next(lt);
  st->kind = CTS_SCOPE_DISPOSE_ALL;
  if (expect_punct(p, lt, "in") || use_a(p, lt, st, CTS_SYM_SCOPE)) return -1;
  if (!tok_is(peek(lt), "but")) return 0;
  next(lt);
  return use_name_list(p, lt, CTS_SYM_RESOURCE, &st->list, &st->n_list);
}

/* `move A out of S`, or `move A from S to T|none`. */
static int parse_move(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_RESOURCE)) return -1;
  struct tok *how = next(lt);
  if (tok_is(how, "out")) {
    st->kind = CTS_SCOPE_MOVE_OUTER;
    if (expect_punct(p, lt, "of")) return -1;
    return (st->b = use_name(p, lt, CTS_SYM_SCOPE)) < 0 ? -1 : 0;
  }
  if (!tok_is(how, "from")) {
    fail_at(p, lt->line, how->col, "expected 'out of' or 'from'");
    return -1;
  }
  st->kind = CTS_SCOPE_MOVE_OTHER;
  if ((st->b = use_name(p, lt, CTS_SYM_SCOPE)) < 0 || expect_punct(p, lt, "to")) return -1;
  return (st->out = use_name_or_none(p, lt, CTS_SYM_SCOPE)) == -1 ? -1 : 0;
}

static int parse_pack(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_name_list(p, lt, CTS_SYM_RESOURCE, &st->list, &st->n_list)) return -1;
  struct tok *order = next(lt);
  if (!tok_is(order, "sorted") && !tok_is(order, "unsorted")) {
    fail_at(p, lt->line, order->col, "expected 'sorted' or 'unsorted'");
    return -1;
  }
  st->u.pack.sorted = tok_is(order, "sorted");
  return 0;
}

static int parse_list_items(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_name_list(p, lt, CTS_SYM_RESOURCE, &st->list, &st->n_list);
}

/* A component: a packed sequence's name, or a list position. */
static int parse_component_index(struct parser *p, struct line_toks *lt, int64_t *out) {
  static const char *const names[] = {"data", "batch_sizes", "sorted_indices",
                                      "unsorted_indices", NULL};
  struct tok *t = peek(lt);
  for (int i = 0; names[i]; i++) {
    if (tok_is(t, names[i])) {
      next(lt);
      *out = i;
      return 0;
    }
  }
  if (parse_int(p, lt, 0, out, "a component name or position")) return -1;
  if (*out <= INT_MAX) return 0;
  fail_at(p, lt->line, t->col, "a component position is at most %d", INT_MAX);
  return -1;
}

static int parse_component(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_COMPOSITE)) return -1;
  return parse_component_index(p, lt, &st->u.component.index);
}

/* ---- DLPack -------------------------------------------------------------------------- */

static int parse_import(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct a_word_b into_manager = {CTS_SYM_DLPACK, "into", CTS_SYM_MANAGER};
  return use_a_word_b(p, lt, st, &into_manager);
}

static int parse_form(struct parser *p, struct line_toks *lt, int *form) {
  struct tok *t = next(lt);
  if (tok_is(t, "versioned") || tok_is(t, "legacy")) {
    *form = tok_is(t, "versioned") ? TSM_DLPACK_VERSIONED : TSM_DLPACK_LEGACY;
    return 0;
  }
  fail_at(p, lt->line, t->col, "expected 'versioned' or 'legacy'");
  return -1;
}

static int parse_export(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_RESOURCE) || parse_form(p, lt, &st->u.export.form)) return -1;
  while (peek(lt)->kind != T_END) {
    struct tok *t = next(lt);
    if (tok_is(t, "copy")) {
      st->u.export.request |= TSM_DLPACK_COPY;
    } else if (tok_is(t, "readonly")) {
      st->u.export.request |= TSM_DLPACK_READ_ONLY;
    } else {
      fail_at(p, lt->line, t->col, "expected 'copy' or 'readonly'");
      return -1;
    }
  }
  return 0;
}

/* A statement's options are written once each: the next token, checked against the
 * option words seen before it on the line (a second `values` list leaked the first, a
 * second `strides` or `max_version` silently replaced the first). */
static int option_once(struct parser *p, struct line_toks *lt, const struct tok **seen,
                       size_t *n_seen) {
  const struct tok *t = peek(lt);
  for (size_t i = 0; i < *n_seen; i++)
    if (seen[i]->len == t->len && !memcmp(seen[i]->s, t->s, t->len)) {
      fail_at(p, lt->line, t->col, "option '%.*s' given twice (first at column %d)",
              (int)t->len, t->s, seen[i]->col);
      return -1;
    }
  if (t->kind == T_WORD && *n_seen < MAX_TOKS) seen[(*n_seen)++] = t;
  return 0;
}

/* The index of t among the words, or -1 after failing with msg. */
static int pick_word(struct parser *p, struct line_toks *lt, const char *const *words,
                     const char *msg) {
  struct tok *t = next(lt);
  for (int i = 0; words[i]; i++)
    if (tok_is(t, words[i])) return i;
  fail_at(p, lt->line, t->col, "%s", msg);
  return -1;
}

/* `dtype NAME`: a dtype of the case language (as the positional one), or a DLPack type
 * the model holds none of (f8, an e4m3 float8; c64, a complex64; f4, an e2m1 float4 of
 * 4 bits, packed unless `padded`), which a consumer refuses (DLP.IMPORT.6). */
static int parse_make_dtype(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const char *const names[] = {"f8", "c64", "f4", NULL};
  static const int codes[] = {CTS_DL_F8_E4M3, CTS_DL_COMPLEX, CTS_DL_F4_E2M1FN},
                   bits[] = {8, 64, 4};
  struct cts_dl_opts *dl = &st->u.make.dl;
  if (take_dtype(p, lt, &st->u.make.literal.dtype)) return 0;
  int i = pick_word(p, lt, names, "expected a dtype (" CTS_DTYPE_LIST "), f8, c64 or f4");
  if (i < 0) return -1;
  dl->code = codes[i];
  dl->bits = bits[i];
  return 0;
}

const char *const cts_where_names[] = {"host",   "cpu",    "cuda_host", "cuda_managed",
                                      "opencl", "vulkan", NULL};

static int parse_make_device(struct parser *p, struct line_toks *lt, struct cts_dl_opts *dl) {
  dl->where = pick_word(p, lt, cts_where_names, "expected host, cpu, cuda_host, cuda_managed, opencl or "
                        "vulkan (the judge's memory is host memory)");
  return dl->where < 0 ? -1 : 0;
}

static int parse_make_strides(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                              const struct tok *t) {
  struct cts_dl_opts *dl = &st->u.make.dl;
  int ndim = 0;
  if (parse_shape_max(p, lt, CTS_DL_MAX_DIMS, &ndim, dl->strides)) return -1;
  if (ndim != st->u.make.literal.ndim) {
    fail_at(p, lt->line, t->col, "%d strides for %d dimensions", ndim, st->u.make.literal.ndim);
    return -1;
  }
  dl->n_strides = ndim;
  return 0;
}

/* An option that takes a non-negative integer; 0 if t is none of them. */
static int64_t *int_option(struct cts_dl_opts *dl, const struct tok *t, int64_t *lanes) {
  if (tok_is(t, "offset")) return &dl->offset;
  if (tok_is(t, "major")) return &dl->major;
  if (tok_is(t, "minor")) return &dl->minor;
  return tok_is(t, "lanes") ? lanes : NULL;
}

/* A flag option; NULL if t is none of them. */
static int *flag_option(struct cts_dl_opts *dl, const struct tok *t) {
  if (tok_is(t, "nostrides")) return &dl->no_strides;
  if (tok_is(t, "readonly")) return &dl->readonly;
  if (tok_is(t, "copied")) return &dl->copied;
  if (tok_is(t, "nodeleter")) return &dl->no_deleter;
  if (tok_is(t, "padded")) return &dl->padded;
  return tok_is(t, "nulldata") ? &dl->null_data : NULL;
}

static int parse_make_option(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_dl_opts *dl = &st->u.make.dl;
  struct cts_literal *lit = &st->u.make.literal;
  struct tok *t = next(lt);
  int64_t lanes = dl->lanes, *num = int_option(dl, t, &lanes);
  int *flag = flag_option(dl, t);
  if (num) {
    struct tok *v = peek(lt);
    if (parse_int(p, lt, 0, num, "a non-negative integer")) return -1;
    /* The DLTensor's fields: lanes a uint16_t, the versions uint32_t (the offset is
     * bounded with the buffer, make_buffer_within_limit). */
    int64_t most = num == &lanes ? UINT16_MAX : num == &dl->offset ? INT64_MAX : UINT32_MAX;
    if (*num > most) {
      fail_at(p, lt->line, v->col, "%.*s is at most %lld", (int)t->len, t->s, (long long)most);
      return -1;
    }
    dl->lanes = (int)lanes;
    return 0;
  }
  if (flag) return *flag = 1, 0;
  if (tok_is(t, "values")) return lit->fill = CTS_VALUES, parse_values(p, lt, &lit->vals, &lit->nvals);
  if (tok_is(t, "arange")) return lit->fill = CTS_ARANGE, 0;
  if (tok_is(t, "strides")) return parse_make_strides(p, lt, st, t);
  if (tok_is(t, "device")) return parse_make_device(p, lt, dl);
  if (tok_is(t, "dtype")) return parse_make_dtype(p, lt, st);
  fail_at(p, lt->line, t->col, "unknown option '%.*s' of make", (int)t->len, t->s);
  return -1;
}

/* The judge allocates a make's buffer: byte_offset, then the strided span of its
 * elements (exec_dlpack.c, make_buffer). It holds at most CTS_MAKE_MAX_BYTES
 * (cases/README.md, "Limits"), computed without overflow; an empty tensor has none. */
static int make_buffer_within_limit(struct parser *p, struct line_toks *lt, int col,
                                    const struct cts_stmt *st) {
  const struct cts_dl_opts *dl = &st->u.make.dl;
  const struct cts_literal *lit = &st->u.make.literal;
  if (cts_opsem_literal_elems(lit->ndim, lit->shape) == 0) return 0;
  int64_t bits = dl->bits ? dl->bits : (int64_t)cts_opsem_dtype_size(lit->dtype) * 8;
  int64_t esize = (bits * dl->lanes + 7) / 8, span = 0, stride = 1, step, bytes;
  int over = 0;
  for (int d = lit->ndim; d-- > 0;) {
    int64_t s = dl->n_strides ? dl->strides[d] : stride;
    over |= __builtin_mul_overflow(lit->shape[d] - 1, s < 0 ? -s : s, &step) ||
            __builtin_add_overflow(span, step, &span) ||
            __builtin_mul_overflow(stride, lit->shape[d], &stride);
  }
  over |= __builtin_add_overflow(span, 1, &span) || __builtin_mul_overflow(span, esize, &bytes) ||
          __builtin_add_overflow(bytes, dl->offset, &bytes);
  if (!over && bytes <= CTS_MAKE_MAX_BYTES) return 0;
  fail_at(p, lt->line, col, "the buffer of this make (byte_offset and the strided span of "
          "its elements) is more than %lld bytes: the judge allocates it (cases/README.md, "
          "\"Limits\")", (long long)CTS_MAKE_MAX_BYTES);
  return -1;
}

/* The options of a make that only make sense together: padded and a sub-byte dtype of
 * the versioned form, a sub-byte dtype compact, as many values as the shape has elements. */
static int make_options_agree(struct parser *p, struct line_toks *lt, const struct cts_stmt *st) {
  const struct cts_dl_opts *dl = &st->u.make.dl;
  const struct cts_literal *lit = &st->u.make.literal;
  if (dl->padded && (dl->form != TSM_DLPACK_VERSIONED || !dl->bits || dl->bits * dl->lanes >= 8)) {
    fail_at(p, lt->line, st->col, "padded is a flag of the versioned form, for a sub-byte "
            "dtype (dtype f4)");
    return -1;
  }
  if (dl->bits && dl->bits * dl->lanes < 8 && dl->n_strides) {
    fail_at(p, lt->line, st->col, "a sub-byte dtype is compact: no strides");
    return -1;
  }
  if (lit->fill == CTS_VALUES && (int64_t)lit->nvals != cts_opsem_literal_elems(lit->ndim, lit->shape)) {
    fail_at(p, lt->line, st->col, "%zu values for a shape of %lld elements", lit->nvals,
            (long long)cts_opsem_literal_elems(lit->ndim, lit->shape));
    return -1;
  }
  return 0;
}

/* `make FORM SHAPE [f32|i32] OPTIONS...`, the options in any order. */
static int parse_make(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_dl_opts *dl = &st->u.make.dl;
  struct cts_literal *lit = &st->u.make.literal;
  dl->major = 1;
  dl->minor = 3;
  dl->lanes = 1;
  if (parse_form(p, lt, &dl->form)) return -1;
  int shape_col = peek(lt)->col;
  if (parse_shape_max(p, lt, CTS_DL_MAX_DIMS, &lit->ndim, lit->shape)) return -1;
  lit->dtype = TSM_F32;
  take_dtype(p, lt, &lit->dtype);
  const struct tok *seen[MAX_TOKS];
  size_t n_seen = 0;
  while (peek(lt)->kind != T_END)
    if (option_once(p, lt, seen, &n_seen) || parse_make_option(p, lt, st)) return -1;
  if (literal_within_limit(p, lt, shape_col, lit, 1) ||
      make_buffer_within_limit(p, lt, shape_col, st) || make_options_agree(p, lt, st))
    return -1;
  if (!dl->bits) p->c->dtypes_used |= 1u << lit->dtype; /* what an import creates */
  return literal_in_range(p, lt, st->col, lit);
}

/* ---- capsule-level DLPack (.pytsm) ----------------------------------------------------- */

#define ANY_INT_MIN (-(int64_t)9e15)

static int parse_inner_action(struct parser *p, struct line_toks *lt, const struct cts_stmt *st,
                              struct cts_stmt **inner);

const char *const cts_py_expect_names[] = {"name",    "version", "flag",   "not",
                                           "deleted", "values",  "shape",  "dtype",
                                           "device",  "strides", "offset", "alive",
                                           "xapi",    "workstream", "view", "shares",
                                           "writeable", NULL};
const char *const cts_py_capsule_names[] = {"dltensor", "dltensor_versioned", "used_dltensor",
                                            "used_dltensor_versioned", NULL};
const char *const cts_py_exc_names[] = {"BufferError", "ValueError", "TypeError",
                                        "RuntimeError", "any", NULL};
const char *const cts_py_form_names[] = {"none", "versioned", "legacy", NULL};
const char *const cts_py_flag_names[] = {"copied", "readonly", NULL};
/* What makes a producer's array one no DLTensor describes (DLP.PY.EXPORT.1). */
const char *const cts_py_unexportable_names[] = {"dtype", "byteorder", "layout", "conj",
                                                 "grad", NULL};

/* `(A, B)`: two integers, as __dlpack__'s device and max_version are written. */
static int parse_pair(struct parser *p, struct line_toks *lt, int64_t *pair) {
  if (expect_punct(p, lt, "(") || parse_int(p, lt, ANY_INT_MIN, &pair[0], "an integer") ||
      expect_punct(p, lt, ",") || parse_int(p, lt, ANY_INT_MIN, &pair[1], "an integer"))
    return -1;
  return expect_punct(p, lt, ")");
}

/* A dtype of the capsule-level statements and of graph leaves, which hold f32 and i32
 * alone (cases/README.md, "Dtypes"). */
static int parse_leaf_dtype(struct parser *p, struct line_toks *lt, int *dtype) {
  struct tok *t = peek(lt);
  if (parse_dtype(p, lt, dtype)) return -1;
  if ((CTS_DTYPES_DEFAULT >> *dtype) & 1) return 0;
  fail_at(p, lt->line, t->col, "%s: graph leaves take f32 or i32 (GRAPH.DTYPE.1)",
          cts_opsem_dtype_name(*dtype));
  return -1;
}

static int dtype_word(const struct tok *t) {
  return t->kind == T_WORD && cts_opsem_dtype_by_name(t->s, t->len);
}

#define CTS_PY_DTYPE_ROW(e, name, per) {name, per},
static const struct {
  const char *name;
  int per;
} py_exchange_dtypes[] = {CTS_PY_EXCHANGE_DTYPES(CTS_PY_DTYPE_ROW)};
#undef CTS_PY_DTYPE_ROW
#define N_PY_EXCHANGE_DTYPES (sizeof py_exchange_dtypes / sizeof py_exchange_dtypes[0])

static int is_exchange_dtype(int dtype) {
  return dtype > TSM_DTYPE_LAST && dtype < CTS_PY_DTYPES_END;
}

const char *cts_py_dtype_name(int dtype) {
  return is_exchange_dtype(dtype) ? py_exchange_dtypes[dtype - TSM_DTYPE_LAST - 1].name
                                  : cts_opsem_dtype_name(dtype);
}

int cts_py_values_per_element(int dtype) {
  return is_exchange_dtype(dtype) ? py_exchange_dtypes[dtype - TSM_DTYPE_LAST - 1].per : 1;
}

/* A dtype of the capsule level: MGR.DTYPE.1's, or an exchange-only one (case.h). */
static int parse_py_dtype(struct parser *p, struct line_toks *lt, int *dtype) {
  for (size_t i = 0; i < N_PY_EXCHANGE_DTYPES; i++)
    if (tok_is(peek(lt), py_exchange_dtypes[i].name))
      return next(lt), *dtype = TSM_DTYPE_LAST + 1 + (int)i, 0;
  struct tok *t = peek(lt);
  if (take_dtype(p, lt, dtype)) return 0;
  fail_at(p, lt->line, t->col, "expected a dtype: " CTS_DTYPE_LIST ", or c64, c128, f8e3m4, "
          "f8e4m3fn, f8e5m2 or f4e2m1fn");
  return -1;
}

/* `array A = make SHAPE DTYPE zeros|arange|values LIST` (a complex DTYPE: two values,
 * real and imaginary, per element) */
static int parse_py_make(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const char *const fills[] = {"zeros", "arange", "values", NULL};
  static const int fill_kinds[] = {CTS_ZEROS, CTS_ARANGE, CTS_VALUES};
  struct cts_literal *lit = &st->u.literal;
  int shape_col = peek(lt)->col;
  if (parse_shape(p, lt, &lit->ndim, lit->shape) || parse_py_dtype(p, lt, &lit->dtype))
    return -1;
  int i = pick_word(p, lt, fills, "expected zeros, arange or values");
  if (i < 0) return -1;
  lit->fill = fill_kinds[i];
  if (literal_within_limit(p, lt, shape_col, lit, 1)) return -1; /* the peer allocates it */
  return lit->fill == CTS_VALUES ? parse_values_for(p, lt, lit) : 0;
}

/* One keyword of __dlpack__ after `export A`. */
static int parse_py_export_option(struct parser *p, struct line_toks *lt,
                                  struct cts_py_export *e) {
  static const char *const words[] = {"none", "versioned", "legacy", "max_version",
                                      "copy", "stream", "device", NULL};
  static const char *const truth[] = {"false", "true", NULL};
  int i = pick_word(p, lt, words, "expected versioned, legacy, none, max_version, copy, "
                    "stream or device");
  if (i < 0) return -1;
  if (i <= CTS_PY_FORM_LEGACY) return e->form = i, 0;
  if (i == 3) return e->has_max_version = 1, parse_pair(p, lt, e->max_version);
  if (i == 5 && tok_is(peek(lt), "object")) /* a stream that is no integer */
    return next(lt), e->has_stream = e->stream_object = 1, 0;
  if (i == 5 && tok_is(peek(lt), "new")) /* a stream the run makes on the device */
    return next(lt), e->has_stream = e->stream_new = 1, 0;
  if (i == 5) return e->has_stream = 1, parse_int(p, lt, ANY_INT_MIN, &e->stream, "a stream");
  if (i == 6) return e->has_device = 1, parse_pair(p, lt, e->device);
  e->has_copy = 1;
  e->copy = pick_word(p, lt, truth, "expected true or false");
  return e->copy < 0 ? -1 : 0;
}

/* `capsule C = export A [OPTION...]` */
static int parse_py_export(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_ARRAY | CTS_SYM_TENSOR)) return -1;
  const struct tok *seen[MAX_TOKS];
  size_t n_seen = 0;
  while (peek(lt)->kind != T_END)
    if (option_once(p, lt, seen, &n_seen) || parse_py_export_option(p, lt, &st->u.py_export))
      return -1;
  return 0;
}

static int parse_py_use_capsule(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_CAPSULE);
}

static int parse_py_use_array(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return use_a(p, lt, st, CTS_SYM_ARRAY);
}

enum { XAPI_OPT_DEVICE = 1, XAPI_OPT_MAJOR = 2, XAPI_OPT_CHAIN = 4, XAPI_OPT_CODE = 8 };

/* The options of an exchange-table statement, each at most once, among allowed
 * (XAPI_OPT_* bits). */
static int parse_py_xapi_options(struct parser *p, struct line_toks *lt, struct cts_py_xapi *x,
                                 unsigned allowed) {
  static const char *const words[] = {"device", "major", "chain", "code", NULL};
  static const char *const expected[] = {"", "expected device", "expected major",
                                         "expected device or major", "expected chain",
                                         "expected device or chain", "expected major or chain",
                                         "expected device, major or chain", "expected code",
                                         "expected device or code", "expected major or code",
                                         "expected device, major or code"};
  const struct tok *seen[MAX_TOKS];
  size_t n_seen = 0;
  while (peek(lt)->kind != T_END) {
    int col = peek(lt)->col;
    if (option_once(p, lt, seen, &n_seen)) return -1;
    int i = pick_word(p, lt, words, expected[allowed]);
    if (i < 0) return -1;
    if (!(allowed & (1u << i))) {
      fail_at(p, lt->line, col, "%s", expected[allowed]);
      return -1;
    }
    if (i == 0 && (x->has_device = 1, parse_pair(p, lt, x->device))) return -1;
    if (i == 1 && (x->has_major = 1, parse_int(p, lt, 0, &x->major, "a major version")))
      return -1;
    if (i == 2) x->chain = 1;
    if (i == 3 && (x->has_code = 1, parse_pair(p, lt, x->code))) return -1;
  }
  return 0;
}

/* SHAPE DTYPE of `xalloc` and `forge`: the bridge writes 0, 1, 2, ... into each element. */
static int parse_py_proto(struct parser *p, struct line_toks *lt, struct cts_py_xapi *x) {
  struct cts_literal lit = {.fill = CTS_ARANGE};
  int shape_col = peek(lt)->col;
  if (parse_shape(p, lt, &x->ndim, x->shape) || parse_dtype(p, lt, &x->dtype)) return -1;
  x->has_proto = 1;
  lit.ndim = x->ndim;
  memcpy(lit.shape, x->shape, sizeof x->shape);
  return literal_within_limit(p, lt, shape_col, &lit, 1);
}

/* `capsule C = xalloc SHAPE DTYPE [device (T, I)]` */
static int parse_py_xalloc(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_py_xapi *x = &st->u.py_xapi;
  return parse_py_proto(p, lt, x) || parse_py_xapi_options(p, lt, x, XAPI_OPT_DEVICE) ? -1 : 0;
}

/* `capsule C = forge SHAPE DTYPE [major N] [device (T, I)] [code (C, B)]` */
static int parse_py_forge(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_py_xapi *x = &st->u.py_xapi;
  if (parse_py_proto(p, lt, x) ||
      parse_py_xapi_options(p, lt, x, XAPI_OPT_DEVICE | XAPI_OPT_MAJOR | XAPI_OPT_CODE))
    return -1;
  if (x->has_code && (x->code[0] < 0 || x->code[0] > 255 || x->code[1] < 1 ||
                      x->code[1] > 255 || x->code[1] % 8)) {
    fail_at(p, lt->line, st->col, "forge's code (C, B) takes a type code 0..255 and bits "
            "1..255 that are whole bytes");
    return -1;
  }
  return 0;
}

/* `tensor T = exchange A [major N] [chain]` */
static int parse_py_exchange(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_ARRAY)) return -1;
  return parse_py_xapi_options(p, lt, &st->u.py_xapi, XAPI_OPT_MAJOR | XAPI_OPT_CHAIN);
}

/* `tensor T = from A [copy true|false] [device (T, I)] [as C]`: C names the capsule the
 * consumer was handed. */
static int parse_py_from(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const char *const truth[] = {"false", "true", NULL};
  if (use_a(p, lt, st, CTS_SYM_ARRAY | CTS_SYM_TENSOR)) return -1; /* a tensor: re-import */
  struct cts_py_export *e = &st->u.py_export;
  if (tok_is(peek(lt), "copy")) { /* from_dlpack(A, copy=...) */
    next(lt);
    if ((e->copy = pick_word(p, lt, truth, "expected true or false")) < 0) return -1;
    e->has_copy = 1;
  }
  if (tok_is(peek(lt), "device")) { /* from_dlpack(A, device=the consumer's device) */
    next(lt);
    if (parse_pair(p, lt, e->device)) return -1;
    e->has_device = 1;
  }
  if (!tok_is(peek(lt), "as")) return 0;
  next(lt);
  return (st->out = bind_name(p, lt, CTS_SYM_CAPSULE)) < 0 ? -1 : 0;
}

/* `array B = slice A DIM START STOP STEP`: the producer's view A[..., START:STOP:STEP]
 * along DIM, with Python's slice semantics (a negative index counts from the end). */
static int parse_py_slice(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_ARRAY)) return -1;
  struct tok *step_at;
  if (parse_int(p, lt, 0, &st->u.py_view.dim, "a dimension") ||
      parse_int(p, lt, ANY_INT_MIN, &st->u.py_view.start, "a start") ||
      parse_int(p, lt, ANY_INT_MIN, &st->u.py_view.stop, "a stop") ||
      (step_at = peek(lt), parse_int(p, lt, ANY_INT_MIN, &st->u.py_view.step, "a step")))
    return -1;
  if (st->u.py_view.dim >= TSM_MAX_DIMS || st->u.py_view.step == 0) {
    fail_at(p, lt->line, step_at->col, "a slice takes a dimension below %d and a step other "
            "than 0", TSM_MAX_DIMS);
    return -1;
  }
  return 0;
}

/* `array B = strided A SHAPE bytes LIST`: the producer's view of A's memory with that
 * shape and those strides in bytes (numpy's as_strided). */
static int parse_py_strided(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_ARRAY)) return -1;
  int ndim = 0, shape_col = peek(lt)->col;
  if (parse_shape(p, lt, &st->u.py_strided.ndim, st->u.py_strided.shape)) return -1;
  if (cts_opsem_literal_elems(st->u.py_strided.ndim, st->u.py_strided.shape) >
      CTS_OPSEM_MAX_MODELED) { /* every consumer copies a strided view element by element */
    fail_at(p, lt->line, shape_col, "more than %lld elements in a strided view "
            "(cases/README.md, \"Limits\")", (long long)CTS_OPSEM_MAX_MODELED);
    return -1;
  }
  if (expect_punct(p, lt, "bytes")) return -1;
  int strides_col = peek(lt)->col;
  if (expect_punct(p, lt, "[")) return -1;
  while (!tok_is(peek(lt), "]")) {
    if (ndim && expect_punct(p, lt, ",")) return -1;
    if (ndim == TSM_MAX_DIMS) {
      fail_at(p, lt->line, peek(lt)->col, "at most %d strides", TSM_MAX_DIMS);
      return -1;
    }
    if (parse_int(p, lt, ANY_INT_MIN, &st->u.py_strided.bytes[ndim++], "a stride in bytes"))
      return -1;
  }
  next(lt);
  if (ndim != st->u.py_strided.ndim) {
    fail_at(p, lt->line, strides_col, "%d stride%s for the %d dimensions of the shape at "
            "column %d", ndim, ndim == 1 ? "" : "s", st->u.py_strided.ndim, shape_col);
    return -1;
  }
  return 0;
}

/* `array A = unexportable dtype|byteorder|layout|conj|grad` */
static int parse_py_unexportable(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  st->u.py_unexportable.what =
      pick_word(p, lt, cts_py_unexportable_names,
                "expected dtype, byteorder, layout, conj or grad");
  return st->u.py_unexportable.what < 0 ? -1 : 0;
}

/* `drop X [Y ...]` */
static int parse_py_drop(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  size_t cap = 0;
  do {
    int sym = use_name(p, lt, CTS_SYM_PY_ANY);
    if (sym < 0) return -1;
    CTS_PUSH(st->list, st->n_list, cap, sym);
  } while (peek(lt)->kind != T_END);
  return 0;
}

/* `flat memory N MiB {` */
static int parse_py_flat(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (expect_punct(p, lt, "memory")) return -1;
  if (parse_int(p, lt, 1, &st->u.flat.mib, "a size in MiB")) return -1;
  return expect_punct(p, lt, "MiB");
}

/* `expect error EXC[|EXC...]: ACTION` */
static int parse_py_expect_error(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  do {
    int i = pick_word(p, lt, cts_py_exc_names, "expected BufferError, ValueError, TypeError, "
                      "RuntimeError or any");
    if (i < 0) return -1;
    st->u.py_error.exc |= 1u << i;
  } while (tok_is(peek(lt), "|") && next(lt));
  return parse_inner_action(p, lt, st, &st->u.py_error.inner);
}

/* `== V` of an expectation, V as the expectation's kind takes it. */
static int parse_py_expected(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_py_expectation *e = &st->u.py_expect;
  if (expect_punct(p, lt, "==")) return -1;
  switch (e->what) {
    case CTS_PY_NAME:
      e->word = pick_word(p, lt, cts_py_capsule_names, "expected a capsule name: dltensor, "
                          "dltensor_versioned, used_dltensor or used_dltensor_versioned");
      return e->word < 0 ? -1 : 0;
    case CTS_PY_VALUES:
      if (peek(lt)->kind != T_NUM) return parse_values(p, lt, &e->v, &e->n);
      e->scalar = 1;
      e->v = cts_xmalloc(sizeof *e->v);
      e->v[0] = next(lt)->num;
      e->n = 1;
      return 0;
    case CTS_PY_SHAPE:
    case CTS_PY_STRIDES: return parse_shape(p, lt, &e->ndim, e->dims);
    case CTS_PY_DTYPE: return parse_py_dtype(p, lt, &e->word);
    case CTS_PY_DEVICE: return parse_pair(p, lt, e->pair);
    case CTS_PY_VIEW: return parse_values(p, lt, &e->v, &e->n);
    default: return parse_int(p, lt, 0, &e->want, "a non-negative integer");
  }
}

/* The expectation's kind: its word, and after `not` the word it negates (`not shares`,
 * `not writeable`, `not flag`). */
static int read_py_expect_what(struct parser *p, struct line_toks *lt,
                               struct cts_py_expectation *e) {
  for (int i = 0; cts_py_expect_names[i]; i++)
    if (tok_is(p->verb, cts_py_expect_names[i])) e->what = i;
  if (e->what != CTS_PY_NOFLAG) return 0;
  if (tok_is(peek(lt), "shares")) {
    next(lt);
    e->what = CTS_PY_NOSHARES;
  } else if (tok_is(peek(lt), "writeable")) {
    next(lt);
    e->what = CTS_PY_NOWRITEABLE;
  } else if (expect_punct(p, lt, "flag")) {
    return -1;
  }
  return 0;
}

/* What follows X: `shares`'s second operand, a flag's name, a workstream's device, and
 * `== V` where the kind compares with a value. */
static int parse_py_expect_rest(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_py_expectation *e = &st->u.py_expect;
  switch (e->what) {
    case CTS_PY_SHARES:
    case CTS_PY_NOSHARES: /* `shares A T` */
      return (st->b = use_name(p, lt, CTS_SYM_TENSOR | CTS_SYM_ARRAY | CTS_SYM_CAPSULE)) < 0 ? -1 : 0;
    case CTS_PY_FLAG:
    case CTS_PY_NOFLAG:
      e->flag = pick_word(p, lt, cts_py_flag_names, "expected copied or readonly");
      return e->flag < 0 ? -1 : 0;
    case CTS_PY_WRITEABLE:
    case CTS_PY_NOWRITEABLE:
    case CTS_PY_ALIVE:
    case CTS_PY_XAPI: return 0;
    case CTS_PY_WORKSTREAM:
      if (parse_pair(p, lt, e->pair)) return -1;
      break;
    default: break;
  }
  return parse_py_expected(p, lt, st);
}

/* `expect WHAT X ...`: what X must be, and what follows it. */
static int parse_py_expect(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const int kinds[CTS_N_PY_EXPECTS] = {
      CTS_SYM_CAPSULE, CTS_SYM_CAPSULE, CTS_SYM_CAPSULE, CTS_SYM_CAPSULE,
      CTS_SYM_CAPSULE, CTS_SYM_PY_ANY,  CTS_SYM_PY_ANY,  CTS_SYM_PY_ANY,
      CTS_SYM_ARRAY | CTS_SYM_TENSOR,   CTS_SYM_CAPSULE, CTS_SYM_CAPSULE, CTS_SYM_PY_ANY,
      CTS_SYM_ARRAY,   CTS_SYM_ARRAY,   CTS_SYM_ARRAY,    CTS_SYM_ARRAY,  CTS_SYM_TENSOR,
      CTS_SYM_ARRAY,   CTS_SYM_TENSOR};
  struct cts_py_expectation *e = &st->u.py_expect;
  if (read_py_expect_what(p, lt, e) || use_a(p, lt, st, kinds[e->what])) return -1;
  return parse_py_expect_rest(p, lt, st);
}

/* ---- graphs -------------------------------------------------------------------------- */

static int parse_leaf(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct cts_literal *lit = &st->u.literal;
  if (use_a(p, lt, st, CTS_SYM_GRAPH)) return -1;
  int shape_col = peek(lt)->col;
  if (parse_shape(p, lt, &lit->ndim, lit->shape)) return -1;
  lit->dtype = TSM_F32;
  if (dtype_word(peek(lt)) && parse_leaf_dtype(p, lt, &lit->dtype)) return -1;
  lit->fill = CTS_ZEROS;
  if (tok_is(peek(lt), "arange")) {
    next(lt);
    lit->fill = CTS_ARANGE;
    return literal_within_limit(p, lt, shape_col, lit, 0);
  } else if (tok_is(peek(lt), "values")) {
    next(lt);
    lit->fill = CTS_VALUES;
    return parse_values_for(p, lt, lit);
  }
  return 0;
}

static int parse_external(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_GRAPH)) return -1;
  return (st->b = use_name(p, lt, CTS_SYM_TENSOR)) < 0 ? -1 : 0;
}

static int parse_graph_op(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return parse_op_operands(p, lt, st, CTS_SYM_NODE);
}

const char *const cts_graph_flag_names[] = {"input", "output", "param", NULL};

static int parse_flag(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  const char *const *flags = cts_graph_flag_names;
  if (use_a(p, lt, st, CTS_SYM_NODE)) return -1;
  do {
    int i = pick_word(p, lt, flags, "expected input, output or param");
    if (i < 0) return -1;
    st->u.graph_flags.bits |= 1u << i;
  } while (peek(lt)->kind != T_END);
  return 0;
}

static int parse_expand(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_GRAPH)) return -1;
  return (st->b = use_name(p, lt, CTS_SYM_NODE)) < 0 ? -1 : 0;
}

/* ---- blocks -------------------------------------------------------------------------- */

/* A .pytsm loop runs at least once, as the Python runner always required. */
static int parse_repeat(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return parse_int(p, lt, p->c->capsule_level ? 1 : 0, &st->u.repeat.times, "a repeat count");
}

static int parse_wrapped(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct open_block *ob = p->open;
  (void)st;
  p->c->uses_wrapped = 1;
  struct tok *name = next(lt);
  if (!valid_name(name) || name->len >= sizeof ob->name_buf) {
    fail_at(p, lt->line, name->col, "expected the name the result is bound to");
    return -1;
  }
  memcpy(ob->name_buf, name->s, name->len);
  ob->result_name = *name;
  ob->result_name.s = ob->name_buf;
  return 0;
}

static int thread_number(struct cts_case *c, const struct tok *t) {
  if (c->n_threads == 0) CTS_PUSH(c->threads, c->n_threads, c->cap_threads, cts_xstrdup("main"));
  for (size_t i = 0; i < c->n_threads; i++)
    if (strlen(c->threads[i]) == t->len && !memcmp(c->threads[i], t->s, t->len)) return (int)i;
  CTS_PUSH(c->threads, c->n_threads, c->cap_threads, tok_str(t));
  return (int)c->n_threads - 1;
}

/* A worker thread's name (not main) into st->u.thread.number. */
static int parse_worker(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct tok *name = next(lt);
  if (!valid_name(name) || tok_is(name, "main")) {
    fail_at(p, lt->line, name->col, "expected a worker thread name");
    return -1;
  }
  st->u.thread.number = thread_number(p->c, name);
  return 0;
}

static int parse_thread(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct open_block *ob = p->open, *outer = p->outer;
  if (ob->in_thread) {
    fail_at(p, lt->line, p->verb->col, "thread blocks do not nest");
    return -1;
  }
  if (outer && outer->st->kind != CTS_PARALLEL && ob->in_parallel) {
    fail_at(p, lt->line, p->verb->col, "a thread block goes directly inside 'parallel'");
    return -1;
  }
  if (parse_worker(p, lt, st)) return -1;
  ob->in_thread = 1;
  return 0;
}

/* `join W`: worker W's thread ends; a later `thread W` runs on a new one. */
static int parse_join(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (p->open->in_thread || p->open->in_parallel) {
    fail_at(p, lt->line, p->verb->col, "'join' goes on the main thread, outside thread and "
            "parallel blocks");
    return -1;
  }
  return parse_worker(p, lt, st);
}

static int parse_parallel(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  (void)st;
  if (p->open->in_thread || p->open->in_parallel) {
    fail_at(p, lt->line, p->verb->col, "'parallel' does not go inside a thread block");
    return -1;
  }
  p->open->in_parallel = 1;
  return 0;
}

/* `result X`, or `result none`: the block's function gives no result (st->a is -2). */
static int parse_result(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (!p->outer || p->outer->st->kind != CTS_WRAPPED) {
    fail_at(p, lt->line, st->col, "'result' belongs at the end of a wrapped block");
    return -1;
  }
  return (st->a = use_name_or_none(p, lt, CTS_SYM_RESOURCE)) == -1 ? -1 : 0;
}

/* ---- expectations -------------------------------------------------------------------- */

/* `: ACTION` after the error an `expect error` names, into *inner. */
static int parse_inner_action(struct parser *p, struct line_toks *lt, const struct cts_stmt *st,
                              struct cts_stmt **inner) {
  if (expect_punct(p, lt, ":")) return -1;
  struct tok *inner_kw = peek(lt);
  if (tok_is(inner_kw, "expect") || tok_is(inner_kw, "repeat")) {
    fail_at(p, lt->line, inner_kw->col, "'expect error' takes an action, not '%.*s'",
            (int)inner_kw->len, inner_kw->s);
    return -1;
  }
  struct cts_stmt *in = *inner = cts_xcalloc(1, sizeof *in);
  in->line = st->line;
  in->col = inner_kw->col;
  in->text = cts_xstrdup(st->text);
  if (parse_action(p, lt, in, 0)) return -1;
  /* The judge's own statements: no adapter call answers them, so nothing can refuse. */
  if (in->kind != CTS_DL_MAKE && in->kind != CTS_DL_DROP) return 0;
  fail_at(p, lt->line, in->col, "'expect error' takes an action that can fail; `make` and "
          "`drop` are the judge's own statements and cannot");
  return -1;
}

static int parse_expect_error(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct tok *code = next(lt);
  int found = 0;
#define CTS__CODE(name, value, text) \
  if (code->kind == T_WORD && tok_is(code, &#name[1])) st->u.error.code = value, found = 1;
  TSM_ERRNO_MAP(CTS__CODE)
#undef CTS__CODE
  if (!found) {
    fail_at(p, lt->line, code->col, "unknown error code '%.*s' (see spec/errors.md)",
            (int)code->len, code->s);
    return -1;
  }
  return parse_inner_action(p, lt, st, &st->u.error.inner);
}

/* `== NAME|none` of kind into st->b. */
static int parse_eq_name(struct parser *p, struct line_toks *lt, struct cts_stmt *st, int kind) {
  if (expect_punct(p, lt, "==")) return -1;
  return (st->b = use_name_or_none(p, lt, kind)) == -1 ? -1 : 0;
}

/* A count expectation `[A] OP N`: A of a_kind (none when a_kind is 0), the comparison,
 * and what N is, for messages. */
struct count_form {
  int a_kind;
  const char *op;
  const char *what;
};

static int parse_count(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                       const struct count_form *form) {
  if ((form->a_kind && use_a(p, lt, st, form->a_kind)) || expect_punct(p, lt, form->op))
    return -1;
  return parse_int(p, lt, 0, &st->u.count.want, form->what);
}

static int parse_expect_holder(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_RESOURCE)) return -1;
  return parse_eq_name(p, lt, st, CTS_SYM_MANAGER);
}

static int parse_expect_borrowed(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  st->u.truth.holds = !tok_is(p->verb, "not");
  if (!st->u.truth.holds && expect_punct(p, lt, "borrowed")) return -1;
  return use_a(p, lt, st, CTS_SYM_RESOURCE);
}

static int parse_expect_valid(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  st->u.truth.holds = tok_is(p->verb, "valid");
  return use_a(p, lt, st, CTS_SYM_RESOURCE);
}

static int parse_expect_mgr_count(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct count_form count = {CTS_SYM_MANAGER, "==", "a count"};
  return parse_count(p, lt, st, &count);
}

static int parse_expect_members(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct count_form members = {CTS_SYM_SCOPE, "==", "a member count"};
  return parse_count(p, lt, st, &members);
}

static int parse_expect_bytes(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct count_form bytes = {0, "==", "a byte count"};
  return parse_count(p, lt, st, &bytes);
}

static int parse_expect_deleted(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct count_form deleted = {CTS_SYM_DLPACK, "==", "a count"};
  return parse_count(p, lt, st, &deleted);
}

static int parse_expect_planned(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const struct count_form planned = {CTS_SYM_GRAPH, "<=", "a byte count"};
  return parse_count(p, lt, st, &planned);
}

/* `expect state X == S`: the row follows X's kind (a manager, a scope or a graph). */
static int parse_expect_state(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const char *const mgr[] = {"open", "capped", "closed", NULL};
  static const char *const scope[] = {"open", "disposed", NULL};
  static const char *const graph[] = {"open", "released", NULL};
  static const int mgr_states[] = {CTS_STATE_OPEN, CTS_STATE_CAPPED, CTS_STATE_CLOSED};
  static const int scope_states[] = {CTS_STATE_OPEN, CTS_STATE_DISPOSED};
  static const int graph_states[] = {CTS_STATE_OPEN, CTS_STATE_RELEASED};
  if (use_a(p, lt, st, CTS_SYM_MANAGER | CTS_SYM_SCOPE | CTS_SYM_GRAPH)) return -1;
  if (expect_punct(p, lt, "==")) return -1;
  int kind = p->c->syms[st->a].kind, i;
  if (kind == CTS_SYM_GRAPH) {
    st->kind = CTS_EXPECT_GRAPH_STATE;
    i = pick_word(p, lt, graph, "expected open or released");
    st->u.state.want = i < 0 ? 0 : graph_states[i];
  } else if (kind == CTS_SYM_SCOPE) {
    st->kind = CTS_EXPECT_SCOPE_STATE;
    i = pick_word(p, lt, scope, "expected open or disposed");
    st->u.state.want = i < 0 ? 0 : scope_states[i];
  } else {
    i = pick_word(p, lt, mgr, "expected open, capped or closed");
    st->u.state.want = i < 0 ? 0 : mgr_states[i];
  }
  return i < 0 ? -1 : 0;
}

static int parse_expect_parent(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_MANAGER)) return -1;
  return parse_eq_name(p, lt, st, CTS_SYM_MANAGER);
}

static int parse_expect_values(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_TENSOR) || expect_punct(p, lt, "==")) return -1;
  return parse_values(p, lt, &st->u.values.v, &st->u.values.n);
}

static int parse_expect_shape(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_TENSOR) || expect_punct(p, lt, "==")) return -1;
  return parse_shape(p, lt, &st->u.dims.ndim, st->u.dims.shape);
}

/* `expect scope A == S|none`, `expect composite T == C|none`. */
static int parse_expect_scope(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  int scope = st->kind == CTS_EXPECT_SCOPE;
  if (use_a(p, lt, st, scope ? CTS_SYM_RESOURCE : CTS_SYM_TENSOR)) return -1;
  return parse_eq_name(p, lt, st, scope ? CTS_SYM_SCOPE : CTS_SYM_COMPOSITE);
}

static int parse_expect_current(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return parse_eq_name(p, lt, st, CTS_SYM_SCOPE);
}

static int parse_expect_outer(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_SCOPE)) return -1;
  return parse_eq_name(p, lt, st, CTS_SYM_SCOPE);
}

static int parse_expect_absent(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  return parse_component(p, lt, st);
}

static int parse_expect_node(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  if (use_a(p, lt, st, CTS_SYM_NODE)) return -1;
  if (tok_is(peek(lt), "unspecified")) {
    next(lt);
    st->u.values.unspecified = 1;
    return 0;
  }
  if (expect_punct(p, lt, "==")) return -1;
  return parse_values(p, lt, &st->u.values.v, &st->u.values.n);
}

const char *const cts_stat_names[CTS_N_STATS + 1] = {
    "created_in", "created_outside", "disposed_in", "disposed_outside",
    "attached",   "detached",        "live",        NULL};

/* `counter N ...` up to the end of the line or a `|`: want and *mask. */
static int parse_stat_list(struct parser *p, struct line_toks *lt, int64_t *want,
                           unsigned *mask) {
  do {
    int which = pick_word(p, lt, cts_stat_names, "expected a counter: created_in, "
                          "created_outside, disposed_in, disposed_outside, attached, detached "
                          "or live");
    if (which < 0) return -1;
    if (parse_int(p, lt, which == CTS_STAT_LIVE ? -(int64_t)9e15 : 0, &want[which], "a count"))
      return -1;
    *mask |= 1u << which;
  } while (peek(lt)->kind != T_END && !tok_is(peek(lt), "|"));
  return 0;
}

/* `expect stats KIND == LIST`, or for tensors `== LIST | LIST`: the lists of SCOPE.STAT.3's
 * variants (a) and (b), naming the same counters. */
static int parse_expect_stats(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  static const char *const kinds[] = {"tensor", "composite", NULL};
  int k = pick_word(p, lt, kinds, "expected 'tensor' or 'composite'");
  if (k < 0 || expect_punct(p, lt, "==")) return -1;
  st->u.stats.kind = k == 0 ? TSM_KIND_TENSOR : TSM_KIND_COMPOSITE;
  if (parse_stat_list(p, lt, st->u.stats.want, &st->u.stats.mask)) return -1;
  if (peek(lt)->kind == T_END) return 0;
  struct tok *bar = next(lt);
  if (st->u.stats.kind != TSM_KIND_TENSOR) {
    fail_at(p, lt->line, bar->col, "the composite counters have one list: only the tensor "
            "counters have two variants (SCOPE.STAT.3)");
    return -1;
  }
  unsigned mask_b = 0;
  if (parse_stat_list(p, lt, st->u.stats.want_b, &mask_b)) return -1;
  if (peek(lt)->kind != T_END) {
    fail_at(p, lt->line, peek(lt)->col, "expected the end of the line: two lists at most, "
            "variant (a)'s and variant (b)'s");
    return -1;
  }
  if (mask_b != st->u.stats.mask) {
    fail_at(p, lt->line, bar->col, "the two lists must name the same counters");
    return -1;
  }
  st->u.stats.variants = 1;
  return 0;
}

/* ---- statements ---------------------------------------------------------------------- */

/* Fails at t, the word that selects a row: at_end when the line ended, else
 * "unknown NOUN 'T'". RETURN -1. */
static int fail_unknown(struct parser *p, struct line_toks *lt, const struct tok *t,
                        const char *at_end, const char *noun) {
  if (t->kind == T_END)
    fail_at(p, lt->line, t->col, "%s", at_end);
  else
    fail_at(p, lt->line, t->col, "unknown %s '%.*s'", noun, (int)t->len, t->s);
  return -1;
}

/* The names a binding `KIND NAME[, ...] = ...` binds: their kind, where each is in the
 * line's tokens, and whether they are bound (0 inside `expect error`). */
struct bound_names {
  int kind;
  int pos[3];
  int n;
  int binds;
};

/* The names before `=`: one, or up to three for a node (svd binds U, S, Vt). */
static int read_bound_names(struct parser *p, struct line_toks *lt, struct bound_names *bn) {
  bn->n = 0;
  for (;;) {
    if (bn->n == 3) {
      fail_at(p, lt->line, peek(lt)->col, "at most three names");
      return -1;
    }
    bn->pos[bn->n++] = lt->pos;
    struct tok *name = next(lt);
    if (!valid_name(name)) {
      fail_at(p, lt->line, name->col, "expected a name%s", name->kind == T_END ? " at end of line" : "");
      return -1;
    }
    if (bn->kind != CTS_SYM_NODE || !tok_is(peek(lt), ",")) return 0;
    next(lt);
  }
}

/* Inside expect error the name is not bound, but must not change kind either. */
static int unbound_name(struct parser *p, struct line_toks *lt, int kind) {
  struct tok *name = next(lt);
  int s = sym_find(p->c, name);
  if (s >= 0 && (s == CTS_SYM_ROOT || s == CTS_SYM_BOGUS || p->c->syms[s].kind != kind)) {
    fail_at(p, lt->line, name->col, "'%.*s' cannot be bound as a %s here", (int)name->len,
            name->s, kind_name(kind));
    return -2;
  }
  return s; /* may be -1: no binding */
}

/* Binds the names once the right-hand side is read, so that `tensor x = add x x` uses the
 * old x. */
static int bind_names(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                      const struct bound_names *bn) {
  int end_pos = lt->pos;
  size_t cap = 0;
  for (int i = 0; i < bn->n; i++) {
    lt->pos = bn->pos[i];
    int sym = bn->binds ? bind_name(p, lt, bn->kind) : unbound_name(p, lt, bn->kind);
    if (sym < (bn->binds ? 0 : -1)) return -1;
    if (i == 0) st->dst = sym;
    if (bn->n == 3) CTS_PUSH(st->list, st->n_list, cap, sym);
  }
  lt->pos = end_pos;
  return 0;
}

/* `KIND NAME[, ...] = VERB ...` */
static int parse_binding(struct parser *p, struct line_toks *lt, struct cts_stmt *st,
                         const struct tok *lead, struct bound_names *bn) {
  if (read_bound_names(p, lt, bn) || expect_punct(p, lt, "=")) return -1;
  struct tok *verb = next(lt);
  const struct stmt_row *row = find_row(p, lead, verb, CTS_CLASS_ACTION, 0);
  if (!row) {
    char verbs[512];
    if (other_dialect(p, lt, lead, verb, CTS_CLASS_ACTION)) return -1;
    list_verbs(p, lead, verbs, sizeof verbs);
    fail_expected(p, lt, verb, verbs);
    return -1;
  }
  p->verb = verb;
  if (run_row(p, lt, st, row)) return -1;
  int want = st->kind == CTS_G_OP && st->u.op.op == TSM_OP_SVD ? 3 : 1;
  if (bn->n != want) {
    fail_at(p, lt->line, verb->col, "'%.*s' binds %d name%s", (int)verb->len, verb->s, want,
            want == 1 ? "" : "s");
    return -1;
  }
  return bind_names(p, lt, st, bn);
}

int parse_action(struct parser *p, struct line_toks *lt, struct cts_stmt *st, int binds) {
  struct tok *kw = next(lt);
  st->dst = st->a = st->b = st->out = -1;
  struct bound_names bn = {.kind = binding_kind(p, kw), .binds = binds};
  if (bn.kind) return parse_binding(p, lt, st, kw, &bn);
  const struct stmt_row *row = find_row(p, kw, NULL, CTS_CLASS_ACTION, 0);
  if (row && !row->binds) {
    p->verb = kw;
    return run_row(p, lt, st, row);
  }
  for (int cls = CTS_CLASS_ACTION; cls <= CTS_CLASS_RESULT; cls++)
    if (other_dialect(p, lt, kw, NULL, cls)) return -1;
  return fail_unknown(p, lt, kw, "expected a statement", "statement");
}

static int parse_expect(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct tok *lead = next(lt);
  struct tok *what = next(lt);
  const struct stmt_row *row = find_row(p, lead, what, CTS_CLASS_EXPECT, 0);
  if (row) {
    p->verb = what;
    return run_row(p, lt, st, row);
  }
  if (other_dialect(p, lt, lead, what, CTS_CLASS_EXPECT)) return -1;
  return fail_unknown(p, lt, what, "expected what to expect at end of line", "expectation");
}

int stmt_class(const struct parser *p, const struct tok *first) {
  for (int k = 0; k < CTS_N_STMT_KINDS; k++)
    if (in_dialect(p, &rows[k]) && tok_is(first, rows[k].lead)) return rows[k].cls;
  return CTS_CLASS_ACTION;
}

int parse_statement(struct parser *p, struct line_toks *lt, struct cts_stmt *st) {
  struct tok *first = peek(lt);
  int cls = stmt_class(p, first);
  if (cls == CTS_CLASS_EXPECT) return parse_expect(p, lt, st);
  if (cls == CTS_CLASS_ACTION) return parse_action(p, lt, st, 1);
  p->verb = next(lt);
  return run_row(p, lt, st, find_row(p, first, NULL, cls, 0));
}

const char *cts_err_name(int code) {
  if (code == 0) return "OK";
#define CTS__CODE(name, value, text) \
  if (code == value) return &#name[1]; /* without the E */
  TSM_ERRNO_MAP(CTS__CODE)
#undef CTS__CODE
  return "?";
}
