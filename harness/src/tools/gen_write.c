/*
 * harness/src/tools/gen_write.c: the generator's writers, named by the rows of the statement
 * table (stmt_table.h, column WRITER), and gen_rows, the rows with their writers: a
 * writer puts the row's keyword and a verb of the row, then operands of the kinds the
 * row's parse function reads, into the line. A block row's writer (BLOCK_WRITER: `wrapped`,
 * whose `result` line it writes itself) writes the whole block into the case, its inner
 * statements drawn like any other; the combination generator, which combines single
 * lines, does not use it. Rows with NO_WRITER (the blocks repeat, thread and parallel,
 * the expectations, the .pytsm rows) are not drawn. A line's first
 * word choice (gen_pick_word,
 * pick_op: a verb, an op, a DLPack form, a flag, a component part) is the variant a
 * combination's hold may name. The final expectations (gen_expectations,
 * gen_expectation_of) give each symbol its state in the model's view, through the
 * expectation rows.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "families.h"
#include "gen_internal.h"
#include "opsem.h"

static void put(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct gen *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cts_buf_vprintf(&g->line, fmt, ap);
  va_end(ap);
}

/* "LEAD NAME = VERB" for a binding row; the verb is one of the row's spellings. */
static void bind_head(struct gen *g, const struct gen_row *row, const char *verb, int elems,
                      int odd) {
  put(g, "%s %s = %s", row->lead, gen_fresh(g, row->binds, elems, odd), verb);
}

/* A shape of 0 to 3 dimensions, mostly small, sometimes empty, and now and then one
 * with a negative extent, which every statement must refuse. An empty shape sometimes
 * has an extent of 2^62 beside its zero: a valid empty tensor (MGR.CREATE.1) whose
 * non-empty op results, such as a [1, 0] x [0, 2^62] product, no memory holds
 * (MGR.CREATE.5: ENOMEM). RETURN its elements (0 for those). */
static int put_shape(struct gen *g) {
  static const char *const odd[] = {" [-1]", " [2, -3]"};
  if (gen_rand(g, 24) == 0) {
    put(g, "%s", odd[gen_rand(g, 2)]);
    return 0;
  }
  int ndim = (int)gen_rand(g, 4), elems = 1;
  int64_t dims[3];
  for (int d = 0; d < ndim; d++) {
    dims[d] = gen_rand(g, 8) ? 1 + (int)gen_rand(g, 3) : 0;
    elems *= (int)dims[d];
  }
  if (elems == 0 && ndim >= 2 && gen_rand(g, 4) == 0) {
    int k = (int)gen_rand(g, (uint64_t)ndim);
    if (dims[k]) dims[k] = (int64_t)1 << 62;
  }
  put(g, " [");
  for (int d = 0; d < ndim; d++) put(g, "%s%lld", d ? ", " : "", (long long)dims[d]);
  put(g, "]");
  return elems;
}

/* n small values: -3..3, or 0..6 for an unsigned dtype (a literal lies in its dtype's
 * range, cases/README.md "Dtypes"). */
static void put_values(struct gen *g, int n, int dtype) {
  double lo = -3, hi;
  if (cts_opsem_int_range(dtype, &lo, &hi)) lo = lo < 0 ? -3 : 0;
  put(g, " [");
  for (int i = 0; i < n; i++) put(g, "%s%d", i ? ", " : "", (int)gen_rand(g, 7) + (int)lo);
  put(g, "]");
}

/* A dtype for a new tensor (MGR.DTYPE.1): f32 (the default, written as nothing) most of
 * the time, i32 a quarter of it, another dtype the adapter holds (g->dtypes) a sixth;
 * written. */
static int put_dtype(struct gen *g) {
  int dtype = TSM_F32;
  if (gen_rand(g, 4) == 0) dtype = TSM_I32;
  else if (gen_rand(g, 6) == 0) {
    int drawn = 1 + (int)gen_rand(g, TSM_DTYPE_LAST);
    if (!g->dtypes || (g->dtypes >> drawn & 1)) dtype = drawn;
  }
  if (dtype != TSM_F32) put(g, " %s", cts_opsem_dtype_name(dtype));
  return dtype;
}

#define NEED(var, mask)                 \
  struct gen_sym *var = gen_pick(g, mask); \
  if (!var) return -1

static int w_use_manager(struct gen *g, const struct gen_row *row) {
  NEED(m, CTS_SYM_MANAGER);
  if (row->binds) {
    bind_head(g, row, row->verb, -1, 0);
    put(g, " %s", m->name);
  } else {
    put(g, "%s %s", row->lead, m->name);
    m->odd = 1;
  }
  return 0;
}

static int w_use_resource(struct gen *g, const struct gen_row *row) {
  NEED(r, CTS_SYM_RESOURCE);
  bind_head(g, row, row->verb, -1, 0);
  put(g, " %s", r->name);
  return 0;
}

static int w_create(struct gen *g, const struct gen_row *row) {
  NEED(m, CTS_SYM_MANAGER);
  char verb[16];
  gen_pick_word(g, row->verb, verb, sizeof verb);
  bind_head(g, row, verb, -1, 0);
  put(g, " %s", m->name);
  int elems = put_shape(g);
  g->pending[g->n_pending - 1].elems = elems;
  if (!strcmp(verb, "full")) put(g, " 2.5");
  int dtype = put_dtype(g);
  if (!strcmp(verb, "values")) put_values(g, elems, dtype);
  return 0;
}

/* A reshape's target shape: the operand's elements in one or two dimensions. */
static void put_reshape(struct gen *g, const struct gen_sym *a) {
  int n = a->elems >= 0 ? a->elems : 1;
  if (gen_rand(g, 2)) put(g, " [%d]", n);
  else put(g, " [1, %d]", n);
}

/* Whether op may stand in a graph node, or in a manager statement when the `op` slot
 * offers it (g->ops: the slot's ops; graph ops come with the graphs family). */
static int op_fits(const struct gen *g, const struct gen_op *op, int in_graphs) {
  if (in_graphs) return op->in_graphs;
  return op->in_managers && (!g->ops || (g->ops >> op->op & 1));
}

/* An op that may stand in a manager statement or a graph node (the line's held variant,
 * counted among those that fit, or a random one); NULL when none fits. */
static const struct gen_op *pick_op(struct gen *g, int in_graphs) {
  size_t fit = 0;
  for (size_t i = 0; i < gen_n_ops; i++) fit += (size_t)op_fits(g, &gen_ops[i], in_graphs);
  int held = gen_held_choice(g, fit);
  if (!fit) return NULL;
  for (size_t i = 0; held >= 0; i++)
    if (op_fits(g, &gen_ops[i], in_graphs) && held-- == 0) return &gen_ops[i];
  for (;;) {
    const struct gen_op *op = &gen_ops[gen_rand(g, gen_n_ops)];
    if (op_fits(g, op, in_graphs)) return op;
  }
}

static int w_op(struct gen *g, const struct gen_row *row) {
  int in_graphs = row->binds == CTS_SYM_NODE;
  const struct gen_op *op = pick_op(g, in_graphs);
  if (!op) return -1;
  NEED(a, row->binds);
  NEED(b, row->binds);
  int view = !strcmp(op->name, "reshape");
  if (!strcmp(op->name, "svd")) {
    put(g, "%s %s, ", row->lead, gen_fresh(g, row->binds, -1, 0));
    put(g, "%s, %s = svd", gen_fresh(g, row->binds, -1, 0), gen_fresh(g, row->binds, -1, 0));
  } else {
    bind_head(g, row, op->name, view ? a->elems : -1, view);
  }
  put(g, " %s", a->name);
  if (op->arity == 2) put(g, " %s", b->name);
  if (view) put_reshape(g, a);
  if (!in_graphs && gen_rand(g, 5) == 0) {
    NEED(m, CTS_SYM_MANAGER);
    put(g, " in %s", m->name);
  }
  return 0;
}

/* attach R to a manager, or to a scope when the row is the scopes family's. */
static int w_attach(struct gen *g, const struct gen_row *row) {
  NEED(r, CTS_SYM_RESOURCE);
  NEED(to, row->family == CTS_FAMILY_SCOPES ? CTS_SYM_SCOPE : CTS_SYM_MANAGER);
  put(g, "%s %s to %s", row->lead, r->name, to->name);
  r->odd = 1;
  return 0;
}

static int w_detach(struct gen *g, const struct gen_row *row) {
  NEED(r, CTS_SYM_RESOURCE);
  put(g, "%s %s", row->lead, r->name);
  if (row->family == CTS_FAMILY_SCOPES) {
    NEED(s, CTS_SYM_SCOPE);
    put(g, " from %s", s->name);
  }
  r->odd = 1;
  return 0;
}

/* `borrow R into M` and `ret R from M`: a resource and a manager. */
static int w_resource_manager(struct gen *g, const struct gen_row *row, const char *word) {
  NEED(r, CTS_SYM_RESOURCE);
  NEED(m, CTS_SYM_MANAGER);
  put(g, "%s %s %s %s", row->lead, r->name, word, m->name);
  r->odd = 1;
  return 0;
}

static int w_borrow(struct gen *g, const struct gen_row *row) {
  return w_resource_manager(g, row, "into");
}

static int w_ret(struct gen *g, const struct gen_row *row) {
  return w_resource_manager(g, row, "from");
}

/* `LEAD X` on one symbol of `mask`, which becomes odd. */
static int w_one(struct gen *g, const struct gen_row *row, int mask) {
  NEED(x, mask);
  put(g, "%s %s", row->lead, x->name);
  x->odd = 1;
  return 0;
}

static int w_release(struct gen *g, const struct gen_row *row) {
  return w_one(g, row, row->family == CTS_FAMILY_GRAPHS ? CTS_SYM_GRAPH : CTS_SYM_RESOURCE);
}

static int w_dump(struct gen *g, const struct gen_row *row) {
  return w_one(g, row, CTS_SYM_MANAGER);
}

static int w_use_scope(struct gen *g, const struct gen_row *row) {
  return w_one(g, row, CTS_SYM_SCOPE);
}

static int w_use_dlpack(struct gen *g, const struct gen_row *row) {
  return w_one(g, row, CTS_SYM_DLPACK);
}

static int w_use_graph(struct gen *g, const struct gen_row *row) {
  return w_one(g, row, CTS_SYM_GRAPH);
}

static int w_read(struct gen *g, const struct gen_row *row) {
  return w_one(g, row, CTS_SYM_NODE);
}

/* `recompute G`, now and then without writing the leaves (GRAPH.PLAN.4) */
static int w_recompute(struct gen *g, const struct gen_row *row) {
  if (w_one(g, row, CTS_SYM_GRAPH)) return -1;
  if (gen_rand(g, 3) == 0) put(g, " unwritten");
  return 0;
}

static int w_nothing(struct gen *g, const struct gen_row *row) {
  bind_head(g, row, row->verb, -1, 0);
  return 0;
}

/* `dispose S`, or `dispose everything in S [but [R]]` for the SCOPE.ALL row. */
static int w_dispose(struct gen *g, const struct gen_row *row) {
  NEED(s, CTS_SYM_SCOPE);
  s->odd = 1;
  if (strcmp(cts_stmt_kind_name(row->kind), "SCOPE_DISPOSE_ALL")) {
    put(g, "%s %s", row->lead, s->name);
    return 0;
  }
  put(g, "%s everything in %s", row->lead, s->name);
  struct gen_sym *keep = gen_rand(g, 2) ? gen_pick(g, CTS_SYM_RESOURCE) : NULL;
  if (keep) put(g, " but [%s]", keep->name);
  return 0;
}

/* `move R out of S`, or `move R from S to S2|none` for the SCOPE.MOVE.2 row. */
static int w_move(struct gen *g, const struct gen_row *row) {
  NEED(r, CTS_SYM_RESOURCE);
  NEED(s, CTS_SYM_SCOPE);
  NEED(to, CTS_SYM_SCOPE);
  r->odd = 1;
  if (!strcmp(cts_stmt_kind_name(row->kind), "SCOPE_MOVE_OUTER"))
    put(g, "%s %s out of %s", row->lead, r->name, s->name);
  else
    put(g, "%s %s from %s to %s", row->lead, r->name, s->name,
        gen_rand(g, 3) ? to->name : "none");
  return 0;
}

static int w_pack(struct gen *g, const struct gen_row *row) {
  NEED(a, CTS_SYM_TENSOR);
  NEED(b, CTS_SYM_TENSOR);
  bind_head(g, row, row->verb, -1, 0);
  put(g, " [%s, %s] %s", a->name, b->name, gen_rand(g, 4) ? "unsorted" : "sorted");
  return 0;
}

static int w_list_items(struct gen *g, const struct gen_row *row) {
  NEED(a, CTS_SYM_TENSOR);
  NEED(b, CTS_SYM_TENSOR);
  bind_head(g, row, row->verb, -1, 0);
  put(g, " [%s, %s]", a->name, b->name);
  return 0;
}

static int w_component(struct gen *g, const struct gen_row *row) {
  NEED(p, CTS_SYM_COMPOSITE);
  char part[32];
  gen_pick_word(g, "data|batch_sizes|sorted_indices|unsorted_indices|0|1", part, sizeof part);
  bind_head(g, row, row->verb, -1, 1);
  put(g, " %s %s", p->name, part);
  return 0;
}

/* A DLPack form, into buf. */
static const char *form(struct gen *g, char buf[16]) {
  return gen_pick_word(g, "legacy|versioned", buf, 16);
}

static int w_export(struct gen *g, const struct gen_row *row) {
  NEED(t, CTS_SYM_TENSOR);
  bind_head(g, row, row->verb, t->elems, 0);
  char f[16];
  put(g, " %s %s", t->name, form(g, f));
  if (gen_rand(g, 4) == 0) put(g, " copy");
  if (gen_rand(g, 6) == 0) put(g, " readonly");
  return 0;
}

/* Strides for a `make`: often a zero, a transposed or a negative (reversed) stride. */
static void put_strides(struct gen *g, const char *shape) {
  int ndim = 0;
  for (const char *p = shape; *p; p++) ndim += *p == ',';
  ndim += strcmp(shape, " []") != 0;
  put(g, " strides [");
  for (int d = 0; d < ndim; d++) put(g, "%s%d", d ? ", " : "", (int)gen_rand(g, 6) - 2);
  put(g, "]");
}

/* Option `which` (0, 2, 3 or 4) of put_layout_option: those whose word or meaning
 * depends on the form (versioned or legacy) or on strides given before. */
static void put_form_option(struct gen *g, int which, int versioned, int strided) {
  switch (which) {
  case 0: put(g, strided ? " readonly" : " nostrides"); break;
  case 2: put(g, versioned ? " major %d" : " lanes %d", versioned ? 2 * (int)gen_rand(g, 2) : 2); break;
  case 3: put(g, versioned ? " minor %d" : " readonly", (int)gen_rand(g, 4) * 3); break;
  default: put(g, versioned ? " copied" : " readonly"); break;
  }
}

/* A dtype option: often one no consumer holds; a dtype the adapter does not hold would
 * make the case NotSupported, so f8 stands for it. The word is picked before its length
 * is taken: as two arguments of one call the order was unspecified, and gcc took the
 * length of the buffer not yet written. */
static void put_dtype_option(struct gen *g) {
  /* types no consumer holds, and dtypes a small negative value fits */
  static const char *const dtypes = "f8|c64|bool|bf16|f16|f64|i64|i8";
  char word[16];
  const char *name = gen_pick_word(g, dtypes, word, sizeof word);
  int d = cts_opsem_dtype_by_name(name, strlen(name));
  put(g, " dtype %s", d && g->dtypes && !(g->dtypes >> d & 1) ? "f8" : word);
}

/* One of make's options for the managed tensor's other fields, at legal and illegal
 * values (cases/README.md, `make`): what a consumer must accept, copy or refuse with
 * EDLPACK, EDTYPE, EDEVICE or EVERSION (DLP.IMPORT.*, DLP.VER.*). Byte offsets stay
 * multiples of 4: with an unaligned one the reference aliases the buffer and its CPU
 * kernels load misaligned floats (UBSan), and the spec has no rule on it yet. */
static void put_layout_option(struct gen *g, int versioned, int strided) {
  static const char *const devices = "cpu|cuda_host|cuda_managed|opencl|vulkan";
  char word[16];
  uint64_t which = gen_rand(g, 10);
  switch (which) {
  case 1: put(g, " offset %d", (int)gen_rand(g, 3) * 4); break; /* aligned: see below */
  case 5: put(g, " device %s", gen_pick_word(g, devices, word, sizeof word)); break;
  case 6: put_dtype_option(g); break;
  case 7: put(g, " lanes 2"); break;
  case 8: put(g, " nodeleter"); break;
  case 9: put(g, " nulldata"); break;
  default: put_form_option(g, (int)which, versioned, strided); break;
  }
}

static int w_make(struct gen *g, const struct gen_row *row) {
  bind_head(g, row, row->verb, -1, 0);
  char f[16];
  put(g, " %s", form(g, f));
  size_t at = g->line.len;
  int elems = put_shape(g);
  g->pending[g->n_pending - 1].elems = elems;
  char shape[64];
  snprintf(shape, sizeof shape, "%s", g->line.buf + at);
  int dtype = put_dtype(g);
  if (gen_rand(g, 2)) put(g, " arange");
  else if (gen_rand(g, 2)) put(g, " values"), put_values(g, elems, dtype);
  int strided = gen_rand(g, 3) == 0;
  if (strided) put_strides(g, shape);
  if (gen_rand(g, 3) == 0) put_layout_option(g, !strcmp(f, "versioned"), strided);
  return 0;
}

static int w_import(struct gen *g, const struct gen_row *row) {
  NEED(x, CTS_SYM_DLPACK);
  NEED(m, CTS_SYM_MANAGER);
  bind_head(g, row, row->verb, x->elems, 1);
  put(g, " %s into %s", x->name, m->name);
  return 0;
}

static int w_leaf(struct gen *g, const struct gen_row *row) {
  NEED(gr, CTS_SYM_GRAPH);
  bind_head(g, row, row->verb, -1, 0);
  put(g, " %s", gr->name);
  g->pending[g->n_pending - 1].elems = put_shape(g);
  if (gen_rand(g, 2)) put(g, " arange");
  return 0;
}

static int w_external(struct gen *g, const struct gen_row *row) {
  NEED(gr, CTS_SYM_GRAPH);
  NEED(t, CTS_SYM_TENSOR);
  bind_head(g, row, row->verb, t->elems, 1);
  put(g, " %s %s", gr->name, t->name);
  return 0;
}

static int w_flag(struct gen *g, const struct gen_row *row) {
  static const char flags[] = "input|output|param";
  NEED(n, CTS_SYM_NODE);
  char flag[16];
  put(g, "%s %s %s", row->lead, n->name, gen_pick_word(g, flags, flag, sizeof flag));
  if (gen_rand(g, 3) == 0) put(g, " %s", gen_pick_word(g, flags, flag, sizeof flag));
  return 0;
}

static int w_expand(struct gen *g, const struct gen_row *row) {
  NEED(gr, CTS_SYM_GRAPH);
  NEED(n, CTS_SYM_NODE);
  put(g, "%s %s %s", row->lead, gr->name, n->name);
  return 0;
}

/* ---- blocks ------------------------------------------------------------------------ */

/* The result of a wrapped block whose inner statements bound syms[from] on: usually
 * one of those (it moves to the outer scope, or out of scopes); else one bound before the
 * block (owned by an outer scope, by none, or only by a manager: it stays where it is,
 * SCOPE.WRAP.1); else an odd one (released: the call fails with ERELEASED; a component:
 * EINVAL; moved, borrowed, imported). A choice that has none falls back on any resource;
 * NULL when the case has none at all (`result none`). */
static struct gen_sym *wrapped_result(struct gen *g, size_t from, uint64_t choice) {
  size_t lo = choice < 5 ? from : 0, hi = choice >= 5 && choice < 7 ? from : g->n_syms;
  int odd = choice == 7;
  for (int pass = 0; pass < 2; pass++, lo = 0, hi = g->n_syms, odd = 0) {
    size_t n = 0;
    for (size_t i = lo; i < hi; i++)
      n += (g->syms[i].kind & CTS_SYM_RESOURCE) && (!odd || g->syms[i].odd);
    if (!n) continue;
    size_t k = (size_t)gen_rand(g, n);
    for (size_t i = lo; i < hi; i++)
      if ((g->syms[i].kind & CTS_SYM_RESOURCE) && (!odd || g->syms[i].odd) && k-- == 0)
        return &g->syms[i];
  }
  return NULL;
}

static int made_resource(const struct gen *g, size_t from) {
  for (size_t i = from; i < g->n_syms; i++)
    if (g->syms[i].kind & CTS_SYM_RESOURCE) return 1;
  return 0;
}

/* `wrapped R {`, 1 to 3 inner statements (a nested block among them, at most
 * GEN_MAX_DEPTH deep), `result X` (its alt `result none`, for when completion finds X's
 * binding refused) and `}`. When X is to be made inside and no inner statement made a
 * resource, more are drawn from the rows that make one (at most 4). R is bound to X's
 * object; what the block bound stays bound after it, released with the wrapped scope or
 * moved out, so odd. */
static int w_wrapped(struct gen *g, const struct gen_row *row, struct cts_gen_case *gc) {
  size_t head = gc->n, from = g->n_syms;
  int number = g->next_name++, written = 1;
  uint64_t choice = gen_rand(g, 8);
  gen_add_line(g, gc, "", NULL, row->kind); /* named once the result's kind is known */
  g->depth++;
  for (int k = 1 + (int)gen_rand(g, 3); k > 0; k--) written += gen_statement(g, gc);
  g->want = CTS_SYM_RESOURCE;
  for (int k = 0; k < 4 && choice < 5 && !made_resource(g, from); k++)
    written += gen_statement(g, gc);
  g->want = 0;
  struct gen_sym *x = wrapped_result(g, from, choice);
  const char *result = gen_rows[CTS_RESULT].lead;
  char *line = cts_printf_dup("%s %s", result, x ? x->name : "none");
  char *alt = cts_printf_dup("%s none", result);
  gen_add_line(g, gc, line, x ? alt : NULL, CTS_RESULT);
  free(line);
  free(alt);
  g->depth--;
  gen_add_line(g, gc, "}", NULL, row->kind);
  for (size_t i = from; i < g->n_syms; i++) g->syms[i].odd = 1;
  struct gen_sym r = {"", x ? x->kind : CTS_SYM_TENSOR, x ? x->elems : -1, 1, 0};
  gen_sym_name(r.name, sizeof r.name, r.kind, number);
  free(gc->lines[head].text);
  gc->lines[head].text = cts_printf_dup("%*s%s %s {", 2 * g->depth, "", row->lead, r.name);
  if (x) {
    x->odd = 1;
    if (g->n_syms < GEN_MAX_SYMS) g->syms[g->n_syms++] = r;
  }
  return written;
}

/* ---- expectations at the end -------------------------------------------------- */

/* A symbol's candidate expectation and its other state, by its kind. */
static const struct {
  int kind;    /* enum cts_sym_kind */
  int stmt;    /* the expectation's row */
  const char *fmt, *yes, *no;
} final_checks[] = {
    {CTS_SYM_TENSOR, CTS_EXPECT_VALID, "expect %s %s", "valid", "released"},
    {CTS_SYM_COMPOSITE, CTS_EXPECT_VALID, "expect %s %s", "valid", "released"},
    {CTS_SYM_MANAGER, CTS_EXPECT_STATE, "expect state %s == %s", "open", "closed"},
    {CTS_SYM_SCOPE, CTS_EXPECT_SCOPE_STATE, "expect state %s == %s", "open", "disposed"},
    {CTS_SYM_GRAPH, CTS_EXPECT_GRAPH_STATE, "expect state %s == %s", "open", "released"},
    {CTS_SYM_DLPACK, CTS_EXPECT_DELETED, "expect deleted %s == %s", "0", "1"},
};

static char *format_check(const char *fmt, const char *name, const char *state) {
  struct cts_buf b = {0};
  if (!strncmp(fmt, "expect %s", 9)) cts_buf_printf(&b, fmt, state, name);
  else cts_buf_printf(&b, fmt, name, state);
  return cts_buf_take(&b);
}

void gen_expectation_of(struct cts_gen_case *gc, const struct gen_sym *sym) {
  for (size_t k = 0; k < sizeof final_checks / sizeof final_checks[0]; k++) {
    if (final_checks[k].kind != sym->kind) continue;
    const char *fmt = final_checks[k].fmt;
    cts_gen_case_add(gc, format_check(fmt, sym->name, final_checks[k].yes),
                     format_check(fmt, sym->name, final_checks[k].no), final_checks[k].stmt);
  }
}

void gen_expectations(struct gen *g, struct cts_gen_case *gc) {
  for (size_t i = 1; i < g->n_syms; i++) gen_expectation_of(gc, &g->syms[i]);
}

/* ---- the rows ------------------------------------------------------------------------ */

/* The statement table's rows as the generator reads them, with their writers (its
 * WRITER, BLOCK_WRITER or NO_WRITER column), in kind order. */
#define GEN__ROW_KEY(k) k
#define GEN__ROW_DATA(...) __VA_ARGS__
#define GEN__ROW_WRITER(w) .write = w, .writer = #w
#define GEN__ROW_BLOCK_WRITER(w) .write_block = w, .writer = #w
#define GEN__ROW_NO_WRITER(why) .why_not = why
#define GEN__ROW(KIND, KEY, DATA, PARSE, MODEL, ADAPTER, EXEC, WRITER)                      \
  [CTS_##KIND] = {.kind = CTS_##KIND, .key = GEN__ROW_##KEY, GEN__ROW_##DATA, GEN__ROW_##WRITER},
const struct gen_row gen_rows[] = {CTS_STATEMENTS(GEN__ROW)};
#undef GEN__ROW
const size_t gen_n_rows = sizeof gen_rows / sizeof gen_rows[0];
