/*
 * harness/src/tools/kinds.c: the cells (clause x kind) a case's statements meet (kinds.h).
 * A walk over the case's statements in order keeps, per symbol, its kind bits, its
 * holder (a manager symbol), its scope and, per manager, its parent; each statement
 * whose row names a clause meets its operands' bits before it runs, then applies what
 * it does to them (the table `effects` says which rows change what). A new row that
 * makes or changes a resource gets a line there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "gen_internal.h"
#include "kinds.h"
#include "tsm/adapter.h"

const char *const cts_kind_names[CTS_N_KINDS] = {
#define CTS_KIND_NAME(e, name, column, about) name,
    CTS_KIND_LIST(CTS_KIND_NAME)
#undef CTS_KIND_NAME
};

const char *const cts_kind_columns[CTS_N_KINDS] = {
#define CTS_KIND_COLUMN(e, name, column, about) column,
    CTS_KIND_LIST(CTS_KIND_COLUMN)
#undef CTS_KIND_COLUMN
};

const char *const cts_kind_abouts[CTS_N_KINDS] = {
#define CTS_KIND_ABOUT(e, name, column, about) about,
    CTS_KIND_LIST(CTS_KIND_ABOUT)
#undef CTS_KIND_ABOUT
};

#define BIT(k) (1u << CTS_KIND_##k)
#define ROOT_SYM 0 /* cts_case_parse binds `root` first */

/* What the walk knows of one symbol. */
struct sym_state {
  unsigned bits;  /* of enum cts_kind */
  int holder;     /* the manager symbol holding a tensor or composite, or -1 */
  int scope;      /* the scope symbol it was made in, or -1 */
  int parent;     /* a manager's parent manager, or -1 */
  int open_scope; /* a scope: 1 while open */
};

struct walk {
  const struct cts_case *c;
  struct sym_state *s;
  struct cts_kind_cell *cells;
  size_t n, cap;
};

static int is_sym(int k) { return k >= 0; }

/* The innermost scope still open (the one a new tensor joins), or -1. */
static int current_scope(const struct walk *w) {
  for (int k = (int)w->c->n_syms - 1; k >= 0; k--)
    if (w->c->syms[k].kind == CTS_SYM_SCOPE && w->s[k].open_scope) return k;
  return -1;
}

static void add_cell(struct walk *w, const char *clause, int kind) {
  for (size_t i = 0; i < w->n; i++)
    if (w->cells[i].kind == kind && !strcmp(w->cells[i].clause, clause)) return;
  struct cts_kind_cell cell = {clause, kind};
  CTS_PUSH(w->cells, w->n, w->cap, cell);
}

/* The bits symbol k has now; a manager's come from its own state. */
static unsigned bits_of(const struct walk *w, int k) {
  if (!is_sym(k)) return 0;
  if (w->c->syms[k].kind == CTS_SYM_MANAGER)
    return w->s[k].bits & BIT(MANAGER_CLOSED) ? BIT(MANAGER_CLOSED) : BIT(MANAGER);
  return w->s[k].bits;
}

static void meet(struct walk *w, const char *clause, int k) {
  unsigned bits = bits_of(w, k);
  for (int kind = 0; kind < CTS_N_KINDS; kind++)
    if (bits & 1u << kind) add_cell(w, clause, kind);
}

/* Every operand of st: a, b, the destination and a list. */
static void meet_operands(struct walk *w, const struct cts_stmt *st, const char *clause) {
  meet(w, clause, st->a);
  meet(w, clause, st->b);
  meet(w, clause, st->out);
  for (size_t i = 0; i < st->n_list; i++) meet(w, clause, st->list[i]);
}

/* A new tensor or composite held by `holder`, in the current scope. */
static void make(struct walk *w, int k, unsigned bits, int holder) {
  if (!is_sym(k)) return;
  w->s[k].bits = bits | (holder == ROOT_SYM ? BIT(ROOT_HELD) : 0);
  if (is_sym(holder) && w->s[holder].bits & BIT(MANAGER_CLOSED)) w->s[k].bits |= BIT(CLOSED_HOLDER);
  w->s[k].holder = holder;
  w->s[k].scope = current_scope(w);
}

static int has_zero(const int64_t *shape, int ndim) {
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) return 1;
  return 0;
}

/* Whether manager m is `closed` or inside it. */
static int within(const struct walk *w, int m, int closed) {
  for (int k = m, hops = 0; is_sym(k) && hops < (int)w->c->n_syms; k = w->s[k].parent, hops++)
    if (k == closed) return 1;
  return 0;
}

static void close_manager(struct walk *w, int m) {
  if (!is_sym(m)) return;
  for (size_t k = 0; k < w->c->n_syms; k++) {
    if (w->c->syms[k].kind == CTS_SYM_MANAGER && within(w, (int)k, m))
      w->s[k].bits |= BIT(MANAGER_CLOSED);
    else if (is_sym(w->s[k].holder) && within(w, w->s[k].holder, m))
      w->s[k].bits |= BIT(CLOSED_HOLDER);
  }
}

static void dispose_scope(struct walk *w, int scope) {
  if (!is_sym(scope)) return;
  w->s[scope].open_scope = 0;
  for (size_t k = 0; k < w->c->n_syms; k++)
    if (w->s[k].scope == scope) w->s[k].bits |= BIT(SCOPE_DISPOSED);
}

static void add_bits(struct walk *w, int k, unsigned bits) {
  if (is_sym(k)) w->s[k].bits |= bits;
}

static void set_holder(struct walk *w, int k, int holder) {
  if (!is_sym(k) || !is_sym(holder)) return;
  w->s[k].holder = holder;
  w->s[k].bits &= ~(BIT(ROOT_HELD) | BIT(CLOSED_HOLDER));
  if (holder == ROOT_SYM) w->s[k].bits |= BIT(ROOT_HELD);
}

/* ---- what each row does to the symbols it names ------------------------------------ */

typedef void effect_fn(struct walk *w, const struct cts_stmt *st);

static void holder_of_dst_from(struct walk *w, const struct cts_stmt *st, unsigned bits) {
  make(w, st->dst, bits, is_sym(st->a) ? w->s[st->a].holder : -1);
}

static void effect_sub(struct walk *w, const struct cts_stmt *st) {
  if (is_sym(st->dst)) w->s[st->dst].parent = st->a;
}
static void effect_sub_of(struct walk *w, const struct cts_stmt *st) {
  if (is_sym(st->dst)) w->s[st->dst].parent = is_sym(st->a) ? w->s[st->a].holder : -1;
}
static void effect_create(struct walk *w, const struct cts_stmt *st) {
  unsigned zero = has_zero(st->u.literal.shape, st->u.literal.ndim) ? BIT(ZERO_SIZE) : 0;
  make(w, st->dst, BIT(PLAIN) | zero, st->a);
}
/* An op's results: in `in M`'s manager, else in its first input's. */
static void effect_op(struct walk *w, const struct cts_stmt *st) {
  int holder = is_sym(st->out) ? st->out : is_sym(st->a) ? w->s[st->a].holder : -1;
  make(w, st->dst, st->u.op.op == TSM_OP_RESHAPE ? BIT(VIEW) : BIT(PLAIN), holder);
  for (size_t i = 0; i < st->n_list; i++) make(w, st->list[i], BIT(PLAIN), holder);
}
static void effect_composite(struct walk *w, const struct cts_stmt *st) {
  int first = st->n_list ? st->list[0] : -1;
  make(w, st->dst, BIT(COMPOSITE), is_sym(first) ? w->s[first].holder : -1);
}
static void effect_component(struct walk *w, const struct cts_stmt *st) {
  holder_of_dst_from(w, st, BIT(COMPONENT));
}
static void effect_adopt(struct walk *w, const struct cts_stmt *st) {
  holder_of_dst_from(w, st, BIT(ADOPTED));
}
static void effect_import(struct walk *w, const struct cts_stmt *st) {
  make(w, st->dst, BIT(IMPORTED), st->out);
}
/* The exported tensor, and the DLPack tensor the export made. */
static void effect_export(struct walk *w, const struct cts_stmt *st) {
  add_bits(w, st->a, BIT(EXPORTED));
  if (is_sym(st->dst)) w->s[st->dst].bits = BIT(EXPORTED);
}
static void effect_borrow(struct walk *w, const struct cts_stmt *st) {
  add_bits(w, st->a, BIT(BORROWED));
  set_holder(w, st->a, st->out);
}
static void effect_attach(struct walk *w, const struct cts_stmt *st) {
  set_holder(w, st->a, st->out);
  add_bits(w, st->a, BIT(MOVED));
}
static void effect_moved(struct walk *w, const struct cts_stmt *st) { add_bits(w, st->a, BIT(MOVED)); }
static void effect_release(struct walk *w, const struct cts_stmt *st) {
  add_bits(w, st->a, BIT(RELEASED));
}
static void effect_close(struct walk *w, const struct cts_stmt *st) { close_manager(w, st->a); }
static void effect_scope_open(struct walk *w, const struct cts_stmt *st) {
  if (is_sym(st->dst)) w->s[st->dst].open_scope = 1;
}
static void effect_dispose(struct walk *w, const struct cts_stmt *st) { dispose_scope(w, st->a); }

/* What a successful statement of each row does; rows not listed change nothing the cells
 * see (expectations, blocks, graphs). */
static const struct {
  int row;
  effect_fn *fn;
} effects[] = {
    {CTS_MGR_SUB, effect_sub},           {CTS_MGR_SUB_OF, effect_sub_of},
    {CTS_CREATE, effect_create},         {CTS_OP, effect_op},
    {CTS_PACK, effect_composite},        {CTS_LIST, effect_composite},
    {CTS_COMPONENT, effect_component},   {CTS_ADOPT, effect_adopt},
    {CTS_DL_IMPORT, effect_import},      {CTS_DL_EXPORT, effect_export},
    {CTS_BORROW, effect_borrow},         {CTS_ATTACH, effect_attach},
    {CTS_DETACH, effect_moved},          {CTS_SCOPE_DETACH, effect_moved},
    {CTS_SCOPE_MOVE_OUTER, effect_moved}, {CTS_SCOPE_MOVE_OTHER, effect_moved},
    {CTS_RELEASE, effect_release},       {CTS_CLOSE, effect_close},
    {CTS_SCOPE_OPEN, effect_scope_open}, {CTS_SCOPE_DISPOSE, effect_dispose},
    {CTS_SCOPE_DISPOSE_ALL, effect_dispose},
};

static void apply(struct walk *w, const struct cts_stmt *st) {
  for (size_t i = 0; i < sizeof effects / sizeof effects[0]; i++)
    if (effects[i].row == st->kind) effects[i].fn(w, st);
}

static void walk_block(struct walk *w, const struct cts_block *b);

static void walk_stmt(struct walk *w, const struct cts_stmt *st) {
  if (st->kind == CTS_EXPECT_ERROR && st->u.error.inner) {
    const char *clause = gen_row_clause(st->u.error.inner->kind);
    if (clause) meet_operands(w, st->u.error.inner, clause);
    return;
  }
  const char *clause = gen_row_clause(st->kind);
  if (clause) meet_operands(w, st, clause);
  apply(w, st);
  walk_block(w, &st->body);
}

static void walk_block(struct walk *w, const struct cts_block *b) {
  for (size_t i = 0; i < b->n; i++) walk_stmt(w, &b->items[i]);
}

size_t cts_kind_cells(const struct cts_case *c, struct cts_kind_cell **cells) {
  *cells = NULL;
  if (c->capsule_level) return 0;
  struct walk w = {.c = c, .s = cts_xcalloc(c->n_syms ? c->n_syms : 1, sizeof(struct sym_state))};
  for (size_t k = 0; k < c->n_syms; k++) w.s[k] = (struct sym_state){0, -1, -1, -1, 0};
  walk_block(&w, &c->body);
  free(w.s);
  *cells = w.cells;
  return w.n;
}
