/*
 * harness/src/tools/kinds.h: the resource kinds and states a case's statements meet, for
 * `tsm-cts coverage --kinds` and the generated library (library.c). A cell is a clause
 * (the .clause of a statement's row, stmt_table.h) and a kind or state of one of the
 * statement's operands when it runs: the cell (MGR.REL.1, view) is a `release` of a
 * reshape's view. Kinds and states come from the case's text alone, read in order the
 * way the model would apply it (a symbol made by `reshape` is a view, a `borrow` makes
 * its operand borrowed, a `close` closes the manager and its subtree), so the same cells
 * are found in a hand-written case, a generated one and a combination, without running
 * anything. A statement under `expect error` meets its operands as they are (it fails,
 * so it changes nothing).
 */
#ifndef CTS_KINDS_H
#define CTS_KINDS_H

#include <stddef.h>

struct cts_case;

/* X(ENUM, name, column: at most 4 characters, what it is). Structural kinds first,
 * then states. */
#define CTS_KIND_LIST(X)                                                                  \
  X(PLAIN, "plain", "pln", "a tensor made by a create or an op, not a view")                    \
  X(ZERO_SIZE, "zero-size", "zero", "a tensor with a 0 in its shape")                            \
  X(VIEW, "view", "view", "a reshape's view of another tensor's storage")                        \
  X(COMPONENT, "component", "cmpt", "a tensor taken out of a composite (`component`)")           \
  X(COMPOSITE, "composite", "cmps", "a pack or a list")                                          \
  X(IMPORTED, "imported", "imp", "a tensor made by a DLPack import")                            \
  X(ADOPTED, "adopted", "adpt", "a tensor made by `adopt` of another")                           \
  X(EXPORTED, "exported", "exp", "a tensor exported to DLPack, or the DLPack tensor itself")     \
  X(BORROWED, "borrowed", "borr", "a tensor lent into another manager (`borrow`)")              \
  X(RELEASED, "released", "rel", "a tensor after `release` on it")                              \
  X(ROOT_HELD, "root-held", "root", "a tensor the root manager holds")                           \
  X(CLOSED_HOLDER, "closed-holder", "clsd", "a tensor whose manager was closed (or its parent)") \
  X(SCOPE_DISPOSED, "scope-disposed", "disp", "a tensor of a scope that was disposed")           \
  X(MOVED, "moved-or-detached", "move", "a tensor moved or detached from its scope or manager")  \
  X(MANAGER, "manager", "mgr", "an open manager")                                               \
  X(MANAGER_CLOSED, "manager-closed", "mgr-", "a closed manager")

enum cts_kind {
#define CTS_KIND_ENUM(e, name, column, about) CTS_KIND_##e,
  CTS_KIND_LIST(CTS_KIND_ENUM)
#undef CTS_KIND_ENUM
  CTS_N_KINDS
};

extern const char *const cts_kind_names[CTS_N_KINDS];
extern const char *const cts_kind_abouts[CTS_N_KINDS];
extern const char *const cts_kind_columns[CTS_N_KINDS];

/* One cell: a clause id (borrowed from the statement table) and a kind. */
struct cts_kind_cell {
  const char *clause;
  int kind; /* enum cts_kind */
};

/* The cells c's statements meet, each once, in the order first met; *cells is
 * malloc'ed (the caller frees it). A capsule-level case (.pytsm) meets none.
 * RETURN how many. */
size_t cts_kind_cells(const struct cts_case *c, struct cts_kind_cell **cells);

/* `tsm-cts coverage --kinds [--json FILE] [--spec DIR] [--cases DIR] [--min K]`: the clause x
 * kind matrix of the case library, each cell with its case count; a cell that the
 * combination generator reaches (library.c) with fewer than K (2) cases is a hole, and a
 * hole fails the command. argv[0] is "coverage". RETURN the exit status. */
int cts_kinds_main(int argc, char **argv);

/* `tsm-cts library [--check] [--min K] [--depth N] [--adapter SO] [--cases DIR] OUTDIR`: the
 * generated part of the case library (library.c). RETURN the exit status. */
int cts_library_main(int argc, char **argv);

#endif
