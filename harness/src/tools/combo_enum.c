/*
 * harness/src/tools/combo_enum.c: the combination generator's enumeration (combo.h). After a
 * fixed background (two managers, one the other's sub, two open scopes, three tensors of
 * different shapes, dtypes and holders, a graph with a leaf), every maker row (an action
 * row that binds, in each of its first word's alternatives: verb, op, DLPack form, flag,
 * component) makes the focus; each later statement is any usable row in each of its
 * alternatives whose writer takes a target: the focus, or a symbol the focus was made
 * from (its manager and that one's parent, its scope, its graph, its base, its
 * composite). The focus stays, or moves to what a statement made from it. Operands not
 * held come from the writer's own choice, seeded by the hash of the row sequence, so
 * every run enumerates the same cases; identical case texts run once.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "combo.h"

/* The background: each line, the row it belongs to, what it binds and what that is
 * made from (space-separated names; those the adapter does not run are left out). */
static const struct {
  int kind;
  const char *text, *name;
  int sym_kind, elems;
  const char *from;
} background[] = {
    {CTS_MGR_SUB, "manager m1 = sub root", "m1", CTS_SYM_MANAGER, -1, ""},
    {CTS_MGR_SUB, "manager m2 = sub m1", "m2", CTS_SYM_MANAGER, -1, "m1"},
    {CTS_SCOPE_OPEN, "scope s1 = open", "s1", CTS_SYM_SCOPE, -1, ""},
    {CTS_SCOPE_OPEN, "scope s2 = open", "s2", CTS_SYM_SCOPE, -1, ""},
    {CTS_CREATE, "tensor a = arange m1 [2, 3]", "a", CTS_SYM_TENSOR, 6, "m1 s2"},
    {CTS_CREATE, "tensor b = values m2 [3] i32 [1, -2, 3]", "b", CTS_SYM_TENSOR, 3, "m2 s2"},
    {CTS_CREATE, "tensor c = ones root [3]", "c", CTS_SYM_TENSOR, 3, "s2"},
    {CTS_CREATE, "tensor d = zeros m1 [2]", "d", CTS_SYM_TENSOR, 2, "m1 s2"},
    {CTS_CREATE, "tensor e = arange m1 [2]", "e", CTS_SYM_TENSOR, 2, "m1 s2"},
    {CTS_LIST, "composite p = list [d, e]", "p", CTS_SYM_COMPOSITE, -1, "d e s2"},
    {CTS_G_NEW, "graph g = new m1", "g", CTS_SYM_GRAPH, -1, "m1"},
    {CTS_G_LEAF, "node n = leaf g [3] arange", "n", CTS_SYM_NODE, 3, "g"},
};

/* A set of 64-bit hashes (open addressing; 0 stands for empty, so 0 is stored as 1). */
struct hash_set {
  uint64_t *v;
  size_t cap, n;
};

/* RETURN 1 when h was not in the set (it is now). */
static int hash_set_add(struct hash_set *s, uint64_t h) {
  if (!h) h = 1;
  if (2 * (s->n + 1) > s->cap) {
    struct hash_set grown = {cts_xcalloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)),
                             s->cap ? 2 * s->cap : 1024, 0};
    for (size_t i = 0; i < s->cap; i++)
      if (s->v[i]) hash_set_add(&grown, s->v[i]);
    free(s->v);
    *s = grown;
  }
  size_t i = (size_t)(h % s->cap);
  for (; s->v[i]; i = (i + 1) % s->cap)
    if (s->v[i] == h) return 0;
  s->v[i] = h;
  s->n++;
  return 1;
}

/* FNV-1a over a string, continuing h. */
static uint64_t hash_text(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (h ^ '\n') * 0x100000001b3ull;
}

/* splitmix64 of a value mixed into a seed. */
static uint64_t mix(uint64_t seed, uint64_t v) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (v + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int sym_index(const struct gen *g, const char *name) {
  for (size_t i = 0; i < g->n_syms; i++)
    if (!strcmp(g->syms[i].name, name)) return (int)i;
  return -1;
}

/* The background symbol's deps from its `from` names. */
static uint64_t background_deps(const struct gen *g, const char *from) {
  uint64_t deps = 0;
  char names[64];
  snprintf(names, sizeof names, "%s", from);
  char *save = NULL;
  for (char *w = strtok_r(names, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    int k = sym_index(g, w);
    if (k >= 0) deps |= 1ull << k | g->syms[k].deps;
  }
  return deps;
}

static void add_background(struct combo_set *set) {
  struct gen *g = &set->start;
  g->syms[g->n_syms++] = (struct gen_sym){"root", CTS_SYM_MANAGER, 0, 0, 0};
  for (size_t i = 0; i < sizeof background / sizeof background[0]; i++) {
    uint32_t cap = gen_row_cap(background[i].kind);
    if (cap && !(set->families & cap)) continue;
    cts_gen_case_add(&set->background, cts_xstrdup(background[i].text), NULL,
                     background[i].kind);
    struct gen_sym *s = &g->syms[g->n_syms];
    snprintf(s->name, sizeof s->name, "%s", background[i].name);
    s->kind = background[i].sym_kind;
    s->elems = background[i].elems;
    s->odd = 0;
    s->deps = background_deps(g, background[i].from);
    g->n_syms++;
  }
  g->next_name = 10; /* fresh names (a letter and a number) never meet the background's */
  g->families = set->families;
  g->ops = set->ops;
  g->dtypes = set->dtypes;
  int scope = sym_index(g, "s2");
  set->scope_deps = scope >= 0 ? 1ull << scope : 0;
}

/* ---- the walk ---------------------------------------------------------------- */

/* A step of the walk: the generator after a node's line, the focus (an index into its
 * syms; -1 before the maker), what the focus is made as, the seed of the row sequence
 * and the hash of the case text so far. */
struct level {
  struct gen g;
  int focus, node, depth;
  unsigned made;
  uint64_t seed, hash;
};

/* The walk's state: the set it fills, the texts seen, the (text, focus) pairs
 * expanded, and the line buffer the writers share. Owns the hash sets and line. */
struct walk {
  struct combo_set *set;
  struct hash_set texts, expanded;
  struct cts_buf line;
};

static void level_copy(struct walk *w, struct level *to, const struct level *from) {
  memcpy(&to->g, &from->g, offsetof(struct gen, syms));
  memcpy(to->g.syms, from->g.syms, from->g.n_syms * sizeof from->g.syms[0]);
  to->g.n_syms = from->g.n_syms;
  to->g.next_name = from->g.next_name;
  to->g.n_pending = 0;
  to->g.hold = (struct gen_hold){0};
  to->g.line = w->line;
  to->depth = from->depth + 1;
}

/* A line just written into a child level: its row kind, its text, the index of the
 * first symbol it made (-1: none), and whether the text is new (cleared once a node
 * carries it: that node runs). */
struct written {
  int kind;
  const char *text;
  int made;
  int text_new;
};

/* Node of child c's line w, under node `parent`. */
static size_t add_node(struct combo_set *set, const struct level *c, int parent,
                       const struct written *w) {
  struct combo_node node = {0};
  node.parent = parent;
  node.depth = c->depth;
  node.kind = w->kind;
  node.run = w->text_new;
  node.text = cts_xstrdup(w->text);
  node.status = -1;
  if (w->made >= 0) node.made = c->g.syms[w->made];
  CTS_PUSH(set->nodes, set->n, set->cap, node);
  set->n_run += (size_t)w->text_new;
  return set->n - 1;
}

static void snapshot_focus(struct combo_node *node, const struct level *l) {
  struct combo_focus *f = cts_xcalloc(1, sizeof *f);
  f->n_syms = l->g.n_syms;
  f->syms = cts_xmalloc(f->n_syms * sizeof f->syms[0]);
  memcpy(f->syms, l->g.syms, f->n_syms * sizeof f->syms[0]);
  f->focus = l->focus;
  f->made = l->made;
  node->focus = f;
}

static void expand(struct walk *w, const struct level *l);

/* Line `line` just written after level `parent` into child c with the focus at
 * c->focus: a node when its text or its (text, focus) is new, expanded while the depth
 * allows. */
static void place(struct walk *w, const struct level *parent, struct level *c,
                  struct written *line) {
  int expand_new = c->depth < w->set->depth &&
                   hash_set_add(&w->expanded, hash_text(c->hash, c->g.syms[c->focus].name));
  if (!line->text_new && !expand_new) return;
  c->node = (int)add_node(w->set, c, parent->node, line);
  line->text_new = 0;
  if (!expand_new) return;
  snapshot_focus(&w->set->nodes[c->node], c);
  expand(w, c);
}

/* A statement tried after a level: its row, the variant (1-based) and the target held
 * (an index into the syms, -1: a maker, which holds nothing). */
struct step {
  const struct gen_row *row;
  int v, t;
};

/* Child c was written from level l by step s: its nodes with the focus staying and,
 * when the line made something from it, moving. */
static void place_both(struct walk *w, const struct level *l, struct level *c,
                       const struct step *s) {
  char *text = cts_xstrndup(c->g.line.buf, c->g.line.len);
  w->line = c->g.line;
  int made = c->g.n_pending ? (int)c->g.n_syms : -1;
  int took_focus = s->t == l->focus ? c->g.hold.used_target : c->g.hold.used_focus;
  gen_keep(&c->g);
  for (size_t i = (size_t)(made >= 0 ? made : 0); made >= 0 && i < c->g.n_syms; i++)
    if (c->g.syms[i].kind & CTS_SYM_RESOURCE) c->g.syms[i].deps |= w->set->scope_deps;
  c->hash = hash_text(l->hash, text);
  struct written line = {s->row->kind, text, made, hash_set_add(&w->texts, c->hash)};
  w->set->n_duplicates += (size_t)!line.text_new;
  if (l->focus >= 0) {
    c->focus = l->focus;
    c->made = l->made;
    place(w, l, c, &line);
  }
  if (made >= 0 && (took_focus || l->focus < 0)) {
    c->focus = made;
    c->made = combo_made_states(s->row->kind, text, l->made);
    place(w, l, c, &line);
  }
  free(text);
}

/* Writes step s after level l into c. RETURN 1 when written and placed, 0 when the
 * writer cannot take the target this way, -1 when there is no variant s->v (or the
 * row's writer chooses no word, past the first). */
static int try_row(struct walk *w, const struct level *l, struct level *c, const struct step *s) {
  level_copy(w, c, l);
  c->g.hold.variant = s->v;
  if (s->t >= 0) c->g.hold.target = s->t + 1;
  if (s->t >= 0 && s->t != l->focus) c->g.hold.focus = l->focus + 1;
  c->seed = mix(mix(mix(l->seed, (uint64_t)s->row->kind), (uint64_t)s->v), (uint64_t)(s->t + 1));
  c->g.rng = c->seed | 1;
  int rc = gen_write_row(&c->g, s->row);
  int last = c->g.hold.words == 0;
  if (c->g.hold.no_variant || (last && s->v > 1)) {
    w->line = c->g.line;
    return -1;
  }
  int fits = rc == 0 && (s->t >= 0 ? c->g.hold.used_target : c->g.n_pending > 0);
  if (fits) place_both(w, l, c, s);
  else w->line = c->g.line;
  return fits;
}

/* The targets of the statements after level l: its focus, then what the focus was made
 * from but the root manager. RETURN how many. */
static size_t targets(const struct level *l, int out[64]) {
  size_t n = 0;
  out[n++] = l->focus;
  uint64_t deps = l->g.syms[l->focus].deps;
  for (int i = 1; i < 64 && (size_t)i < l->g.n_syms; i++)
    if ((deps >> i & 1) && i != l->focus) out[n++] = i;
  return n;
}

static int row_runs(const struct combo_set *set, const struct gen_row *row) {
  return gen_row_usable(row) && (!row->cap || (set->families & row->cap)) &&
         (row->kind != CTS_DUMP || set->has_dump);
}

/* Every child of level l: makers (l has no focus) or statements on a target. */
static void expand(struct walk *w, const struct level *l) {
  int t[64];
  size_t n_targets = l->focus >= 0 ? targets(l, t) : 1;
  if (l->focus < 0) t[0] = -1;
  struct level *c = cts_xmalloc(sizeof *c);
  for (size_t k = 0; k < n_targets; k++)
    for (size_t r = 0; r < gen_n_rows; r++) {
      struct step s = {&gen_rows[r], 1, t[k]};
      if (!row_runs(w->set, s.row) || (t[k] < 0 && !s.row->binds)) continue;
      for (; try_row(w, l, c, &s) >= 0; s.v++) {
      }
    }
  free(c);
}

void combo_enumerate(struct combo_set *set, const struct combo_offer *offer, int depth,
                     int seeds) {
  memset(set, 0, sizeof *set);
  set->families = offer->families;
  set->ops = offer->ops;
  set->dtypes = offer->dtypes;
  set->has_dump = offer->has_dump;
  set->depth = depth;
  set->seeds = seeds;
  add_background(set);
  struct walk w = {set, {0}, {0}, {0}};
  struct level *top = cts_xcalloc(1, sizeof *top);
  top->g = set->start;
  top->focus = top->node = top->depth = -1;
  top->hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < set->background.n; i++)
    top->hash = hash_text(top->hash, set->background.lines[i].text);
  for (int k = 0; k < seeds; k++) {
    top->seed = mix(0x636f6d626f73ull /* "combos" */, (uint64_t)k);
    expand(&w, top);
  }
  free(top);
  cts_buf_free(&w.line);
  free(w.texts.v);
  free(w.expanded.v);
}

void combo_set_free(struct combo_set *set) {
  for (size_t i = 0; i < set->n; i++) {
    free(set->nodes[i].text);
    free(set->nodes[i].message);
    if (set->nodes[i].focus) free(set->nodes[i].focus->syms);
    free(set->nodes[i].focus);
  }
  free(set->nodes);
  cts_gen_case_free(&set->background);
  memset(set, 0, sizeof *set);
}

size_t combo_path(const struct combo_set *set, size_t i, size_t path[], size_t max) {
  size_t n = 0;
  for (int k = (int)i; k >= 0 && n < max; k = set->nodes[k].parent) path[n++] = (size_t)k;
  for (size_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
    size_t t = path[a];
    path[a] = path[b];
    path[b] = t;
  }
  return n;
}

void combo_body(const struct combo_set *set, size_t i, struct cts_gen_case *gc) {
  for (size_t k = 0; k < set->background.n; k++)
    cts_gen_case_add(gc, cts_xstrdup(set->background.lines[k].text), NULL,
                     set->background.lines[k].kind);
  size_t path[COMBO_MAX_DEPTH + 1];
  size_t n = combo_path(set, i, path, COMBO_MAX_DEPTH + 1);
  for (size_t k = 0; k < n; k++) {
    const struct combo_node *node = &set->nodes[path[k]];
    cts_gen_case_add(gc, cts_xstrdup(node->text), NULL, node->kind);
  }
}

void combo_case(const struct combo_set *set, size_t i, struct cts_gen_case *gc) {
  combo_body(set, i, gc);
  size_t path[COMBO_MAX_DEPTH + 1];
  size_t n = combo_path(set, i, path, COMBO_MAX_DEPTH + 1);
  for (size_t k = 0; k < n; k++)
    if (set->nodes[path[k]].made.name[0]) gen_expectation_of(gc, &set->nodes[path[k]].made);
}
