/*
 * harness/src/tools/combo_states.c: the kinds and states the combination generator's focus
 * reaches (combo.h), in the model's view. How the focus was made gives its kind (a view,
 * a component, a composite, an import in either DLPack form, a node of each kind, a
 * graph, a manager, a scope); the rest comes from completing the node's case against
 * the model (complete.c) with probing expectations after it: is the focus released,
 * borrowed, held by root, held by a manager that is closed (by `close` on it, or by its
 * parent's cascade), a member of a disposed scope, a DLPack tensor whose deleter ran, a
 * node of a released graph; and whether a `move` or `detach` on it ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "combo.h"
#include "exec.h"

const char *const combo_state_names[COMBO_N_STATES] = {
    "tensor",          "root-held",        "view",
    "component",       "composite",        "borrowed",
    "released",        "held-by-closed-manager", "held-by-cascade-closed-manager",
    "in-disposed-scope", "moved",          "detached",
    "imported-legacy", "imported-versioned", "dlpack-not-deleted",
    "dlpack-deleted",  "node-leaf",        "node-external",
    "node-op",         "node-of-released-graph", "graph",
    "graph-released",  "manager",          "manager-closed",
    "scope",           "scope-disposed",
};

/* Not a state: the DLPack form of a DLPack focus, which an import inherits. */
#define FORM_VERSIONED (1u << 31)

/* The kind each maker row gives its focus. */
static const struct {
  int row, state;
} made_by[] = {
    {CTS_CREATE, COMBO_TENSOR},       {CTS_OP, COMBO_TENSOR},
    {CTS_COMPONENT, COMBO_COMPONENT}, {CTS_PACK, COMBO_COMPOSITE},
    {CTS_LIST, COMBO_COMPOSITE},      {CTS_G_LEAF, COMBO_NODE_LEAF},
    {CTS_G_EXTERNAL, COMBO_NODE_EXTERNAL}, {CTS_G_OP, COMBO_NODE_OP},
    {CTS_G_NEW, COMBO_GRAPH},         {CTS_MGR_SUB, COMBO_MANAGER},
    {CTS_MGR_SUB_OF, COMBO_MANAGER},  {CTS_SCOPE_OPEN, COMBO_SCOPE},
};

unsigned combo_made_states(int kind, const char *text, unsigned from) {
  if (kind == CTS_DL_EXPORT || kind == CTS_DL_MAKE)
    return strstr(text, " versioned") ? FORM_VERSIONED : 0;
  if (kind == CTS_DL_IMPORT)
    return 1u << (from & FORM_VERSIONED ? COMBO_IMPORTED_VERSIONED : COMBO_IMPORTED_LEGACY);
  if (kind == CTS_OP && strstr(text, " = reshape ")) return 1u << COMBO_VIEW;
  for (size_t i = 0; i < sizeof made_by / sizeof made_by[0]; i++)
    if (made_by[i].row == kind) return 1u << made_by[i].state;
  return 0;
}

/* ---- probing ------------------------------------------------------------------- */

static void probe(struct cts_gen_case *gc, char *yes, char *alt) {
  cts_gen_case_add(gc, yes, alt, CTS_EXPECT_STATE);
}

/* Whether the completed case has the line `text` as written (it ran, or held). */
static int has(const struct cts_gen_case *gc, const char *text) {
  for (size_t i = 0; i < gc->n; i++)
    if (!strcmp(gc->lines[i].text, text)) return 1;
  return 0;
}

static int hasf(const struct cts_gen_case *gc, const char *fmt, const char *a, const char *b)
    __attribute__((format(printf, 2, 0)));
static int hasf(const struct cts_gen_case *gc, const char *fmt, const char *a, const char *b) {
  char text[128];
  snprintf(text, sizeof text, fmt, a, b);
  return has(gc, text);
}

/* Whether a line `LEAD NAME ...` ran as written. */
static int ran_on(const struct cts_gen_case *gc, const char *lead, const char *name) {
  size_t n = strlen(lead), m = strlen(name);
  for (size_t i = 0; i < gc->n; i++) {
    const char *t = gc->lines[i].text;
    if (!strncmp(t, lead, n) && t[n] == ' ' && !strncmp(t + n + 1, name, m) &&
        (t[n + 1 + m] == ' ' || !t[n + 1 + m]))
      return 1;
  }
  return 0;
}

/* The probes of a resource focus: released, borrowed, each manager as its holder and
 * each scope as its scope, each manager's and scope's state. */
static void probe_resource(struct cts_gen_case *gc, const struct combo_focus *f) {
  const char *name = f->syms[f->focus].name;
  probe(gc, cts_printf_dup("expect released %s", name), cts_printf_dup("expect valid %s", name));
  probe(gc, cts_printf_dup("expect borrowed %s", name),
        cts_printf_dup("expect not borrowed %s", name));
  for (size_t i = 0; i < f->n_syms; i++) {
    const char *other = f->syms[i].name;
    if (f->syms[i].kind == CTS_SYM_MANAGER) {
      probe(gc, cts_printf_dup("expect owner %s == %s", name, other), NULL);
      if (i) probe(gc, cts_printf_dup("expect state %s == closed", other),
                   cts_printf_dup("expect state %s == open", other));
    } else if (f->syms[i].kind == CTS_SYM_SCOPE) {
      probe(gc, cts_printf_dup("expect scope %s == %s", name, other), NULL);
      probe(gc, cts_printf_dup("expect state %s == disposed", other),
            cts_printf_dup("expect state %s == open", other));
    }
  }
}

/* The probes of any other focus: its own state, or its graph's. */
static void probe_other(struct cts_gen_case *gc, const struct combo_focus *f) {
  const struct gen_sym *s = &f->syms[f->focus];
  if (s->kind == CTS_SYM_DLPACK)
    probe(gc, cts_printf_dup("expect deleted %s == 1", s->name),
          cts_printf_dup("expect deleted %s == 0", s->name));
  const char *gone = s->kind == CTS_SYM_MANAGER ? "closed"
                     : s->kind == CTS_SYM_SCOPE ? "disposed" : "released";
  for (size_t i = 0; i < f->n_syms && s->kind != CTS_SYM_DLPACK; i++) {
    int graph_of_node = s->kind == CTS_SYM_NODE && f->syms[i].kind == CTS_SYM_GRAPH &&
                        i < 64 && (s->deps >> i & 1);
    if (s->kind == CTS_SYM_NODE ? !graph_of_node : (int)i != f->focus) continue;
    probe(gc, cts_printf_dup("expect state %s == %s", f->syms[i].name, gone),
          cts_printf_dup("expect state %s == open", f->syms[i].name));
  }
}

/* The holder of kind `kind` (a manager or a scope) of a resource focus: the one the
 * completed case names as its owner (`expect owner`) or its scope (`expect scope`);
 * else, when that went (the focus was released with it), the nearest one the focus was
 * made from. RETURN its index, or -1. */
static int holder(const struct cts_gen_case *gc, const struct combo_focus *f, int kind) {
  const char *name = f->syms[f->focus].name;
  const char *fmt = kind == CTS_SYM_MANAGER ? "expect owner %s == %s" : "expect scope %s == %s";
  for (size_t i = 0; i < f->n_syms; i++)
    if (f->syms[i].kind == kind && hasf(gc, fmt, name, f->syms[i].name)) return (int)i;
  uint64_t deps = f->syms[f->focus].deps;
  int nearest = -1;
  for (size_t i = 0; i < f->n_syms && i < 64; i++) {
    if (f->syms[i].kind != kind || !(deps >> i & 1)) continue;
    if (nearest < 0 || (f->syms[i].deps >> nearest & 1)) nearest = (int)i;
  }
  return nearest;
}

/* The states of a resource focus's manager and scope in the completed case. */
static unsigned holder_states(const struct cts_gen_case *gc, const struct combo_focus *f) {
  unsigned states = 0;
  int m = holder(gc, f, CTS_SYM_MANAGER), s = holder(gc, f, CTS_SYM_SCOPE);
  if (m == 0 && hasf(gc, "expect owner %s == %s", f->syms[f->focus].name, "root"))
    states |= 1u << COMBO_ROOT_HELD;
  if (m > 0 && hasf(gc, "expect state %s == %s", f->syms[m].name, "closed"))
    states |= 1u << (ran_on(gc, "close", f->syms[m].name) ? COMBO_CLOSED_DIRECT
                                                           : COMBO_CLOSED_CASCADE);
  if (s >= 0 && hasf(gc, "expect state %s == %s", f->syms[s].name, "disposed"))
    states |= 1u << COMBO_DISPOSED_SCOPE;
  return states;
}

/* The states of a resource focus (a tensor or a composite) beside how it was made:
 * its holders', released, borrowed, moved, detached. */
static unsigned resource_states(const struct cts_gen_case *gc, const struct combo_focus *f,
                                unsigned states) {
  const struct gen_sym *s = &f->syms[f->focus];
  states |= holder_states(gc, f);
  if (states & 1u << COMBO_ROOT_HELD) states &= ~(1u << COMBO_TENSOR);
  if (hasf(gc, "expect %s %s", "released", s->name)) states |= 1u << COMBO_RELEASED;
  if (hasf(gc, "expect %s %s", "borrowed", s->name)) states |= 1u << COMBO_BORROWED;
  if (ran_on(gc, "move", s->name)) states |= 1u << COMBO_MOVED;
  if (ran_on(gc, "detach", s->name)) states |= 1u << COMBO_DETACHED;
  return states;
}

/* The states of a focus that is no resource and no DLPack export: a manager closed, a
 * scope disposed, a graph or a node released (a node's with its graph). */
static unsigned gone_states(const struct cts_gen_case *gc, const struct combo_focus *f) {
  static const struct {
    int kind, state;
    const char *gone;
  } gone[] = {{CTS_SYM_MANAGER, COMBO_MANAGER_CLOSED, "closed"},
              {CTS_SYM_SCOPE, COMBO_SCOPE_DISPOSED, "disposed"},
              {CTS_SYM_GRAPH, COMBO_GRAPH_RELEASED, "released"},
              {CTS_SYM_NODE, COMBO_NODE_RELEASED, "released"}};
  int kind = f->syms[f->focus].kind;
  unsigned states = 0;
  for (size_t k = 0; k < sizeof gone / sizeof gone[0]; k++)
    for (size_t i = 0; i < f->n_syms && gone[k].kind == kind; i++)
      if (hasf(gc, "expect state %s == %s", f->syms[i].name, gone[k].gone) &&
          ((int)i == f->focus || f->syms[i].kind == CTS_SYM_GRAPH))
        states |= 1u << gone[k].state;
  return states;
}

/* The focus's states in the completed case. */
static unsigned classify(const struct cts_gen_case *gc, const struct combo_focus *f) {
  const struct gen_sym *s = &f->syms[f->focus];
  unsigned states = f->made & ~FORM_VERSIONED;
  if (s->kind & CTS_SYM_RESOURCE) return resource_states(gc, f, states);
  if (s->kind != CTS_SYM_DLPACK) return states | gone_states(gc, f);
  if (hasf(gc, "expect deleted %s == %s", s->name, "1")) states |= 1u << COMBO_EXPORT_DELETED;
  if (hasf(gc, "expect deleted %s == %s", s->name, "0")) states |= 1u << COMBO_EXPORT_PENDING;
  return states;
}

unsigned combo_probe_states(const struct combo_set *set, size_t i, const struct tsm_adapter *a,
                            int device) {
  const struct combo_focus *f = set->nodes[i].focus;
  struct cts_gen_case gc = {0};
  combo_body(set, i, &gc);
  if (f->syms[f->focus].kind & CTS_SYM_RESOURCE) probe_resource(&gc, f);
  else probe_other(&gc, f);
  int decides = cts_exec_model_decides;
  cts_exec_model_decides = 0;
  int outcome = cts_complete(&gc, &(struct cts_completion){0, i, a, NULL, device});
  cts_exec_model_decides = decides;
  unsigned states = outcome == CTS_GEN_UNFINISHED ? f->made & ~FORM_VERSIONED : classify(&gc, f);
  cts_gen_case_free(&gc);
  return states;
}
