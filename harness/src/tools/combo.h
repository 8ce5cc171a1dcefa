/*
 * harness/src/tools/combo.h: `tsm-cts combos`, the bounded combination generator. Every
 * statement row of the statement table (stmt_table.h) that the scenario generator writes
 * (gen_write.c) makes a focus resource after a fixed background (combo_enum.c); then up
 * to --depth statements, each from any row whose writer takes the focus (or what it was
 * made from) as an operand, follow it, the focus staying or moving to what a statement
 * makes from it. Each combination runs with the model deciding every outcome
 * (cts_exec_model_decides, exec.h) in chunks of forked case processes (runner.c,
 * combo_run.c); the states the focus reached, in the model's view, come from completing
 * each prefix against the model with probing expectations (combo_states.c); the summary,
 * the JSON report and the known divergence classes are combo_report.c's.
 */
#ifndef CTS_COMBO_H
#define CTS_COMBO_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "gen_internal.h"

/* The kinds and states of a focus resource the enumeration can reach. */
enum combo_state {
  COMBO_TENSOR,           /* a plain tensor of a sub manager */
  COMBO_ROOT_HELD,        /* a tensor held by the root manager */
  COMBO_VIEW,             /* a reshape's view */
  COMBO_COMPONENT,        /* a component of a composite */
  COMBO_COMPOSITE,        /* a composite (pack or list) */
  COMBO_BORROWED,
  COMBO_RELEASED,
  COMBO_CLOSED_DIRECT,    /* held by a manager closed by `close` on it */
  COMBO_CLOSED_CASCADE,   /* held by a manager its parent's close closed */
  COMBO_DISPOSED_SCOPE,   /* a member of a disposed scope */
  COMBO_MOVED,            /* moved out of its scope or to another */
  COMBO_DETACHED,         /* detached from its manager or scope */
  COMBO_IMPORTED_LEGACY,
  COMBO_IMPORTED_VERSIONED,
  COMBO_EXPORT_PENDING,   /* a DLPack tensor whose deleter has not run */
  COMBO_EXPORT_DELETED,   /* a DLPack tensor consumed or dropped */
  COMBO_NODE_LEAF,
  COMBO_NODE_EXTERNAL,
  COMBO_NODE_OP,
  COMBO_NODE_RELEASED,    /* a node of a released graph */
  COMBO_GRAPH,
  COMBO_GRAPH_RELEASED,
  COMBO_MANAGER,
  COMBO_MANAGER_CLOSED,
  COMBO_SCOPE,
  COMBO_SCOPE_DISPOSED,
  COMBO_N_STATES
};
extern const char *const combo_state_names[COMBO_N_STATES];

/* What the state probes need of a node's focus: the symbols bound after the node
 * (their names and kinds), which one is the focus, and the states known from how the
 * focus was made (its maker row and words). Owns syms. */
struct combo_focus {
  struct gen_sym *syms;
  size_t n_syms;
  int focus;      /* index into syms */
  unsigned made;  /* bits of enum combo_state */
};

/* One statement of the enumeration: a maker (depth 0) or a statement after its parent.
 * Owns text, focus and message. */
struct combo_node {
  int parent;     /* node index, -1 for a maker */
  int depth;
  int kind;       /* its row (enum cts_stmt_kind) */
  int run;        /* 1: a combination to run; 0: its case text is another's */
  char *text;
  struct gen_sym made; /* the first symbol its line made (name "" when none) */
  struct combo_focus *focus; /* nodes with statements after them: what to probe */
  /* the result: */
  int status;     /* enum cts_status; -1 until run */
  unsigned states; /* bits of enum combo_state reached by the focus after it */
  char *message;  /* the first line of what the run said, when not Pass */
};

/* The enumeration: the background's lines and symbols, then the nodes, owned. */
struct combo_set {
  struct cts_gen_case background;
  struct gen start;              /* the generator after the background */
  unsigned families;             /* the adapter's capabilities: rows and lines it runs */
  uint32_t ops;                  /* the ops its `op` slot offers (bit 1 << enum tsm_op) */
  uint32_t dtypes;               /* the dtypes it holds (bit 1 << enum tsm_dtype) */
  int has_dump;                  /* it offers mgr_dump: the `dump` row runs */
  uint64_t scope_deps;           /* the background's inner scope, which every resource is in */
  int depth, seeds;
  struct combo_node *nodes;
  size_t n, cap, n_run;
  size_t n_duplicates;
};

#define COMBO_MAX_DEPTH 4

/* What an adapter offers, for the enumeration to leave out what it cannot run. */
struct combo_offer {
  unsigned families; /* capabilities (enum tsm_cap) */
  uint32_t ops;      /* of the `op` slot: bit 1 << enum tsm_op */
  int has_dump;
  uint32_t dtypes;   /* held: bit 1 << enum tsm_dtype */
};

/* combo_enum.c: the background and every node up to depth (1 + depth statements) of the
 * rows, ops and families the adapter offers, the operands and literals the rows leave
 * open drawn `seeds` times over (a maker's shape, strides, copy flag: each seed a
 * different draw; repeated texts run once). */
void combo_enumerate(struct combo_set *set, const struct combo_offer *offer, int depth,
                     int seeds);
void combo_set_free(struct combo_set *set);
/* The body of node i's case: the background, then the path to node i. */
void combo_body(const struct combo_set *set, size_t i, struct cts_gen_case *gc);
/* Node i's case: its body, then a candidate expectation for each symbol the path made
 * (with the model deciding, one the model contradicts is skipped). */
void combo_case(const struct combo_set *set, size_t i, struct cts_gen_case *gc);
/* The path's lines without the background: node i's and its parents', first to last. */
size_t combo_path(const struct combo_set *set, size_t i, size_t path[], size_t max);

/* combo_states.c: node i's focus probed by completing its case (adapter a, device). */
unsigned combo_probe_states(const struct combo_set *set, size_t i, const struct tsm_adapter *a,
                            int device);
/* The states a focus has from how it was made; `from` is the previous focus's. */
unsigned combo_made_states(int kind, const char *text, unsigned from);

/* combo_run.c: how to run the combinations. Borrows its strings. */
struct combo_opts {
  const char *adapter, *save_dir, *device_name; /* device_name: the device's, by index */
  int device, jobs, chunk;
  const struct cts_spec *spec;
};
/* Runs every node with run set, in chunks of forked case processes; a chunk that
 * crashes or hangs runs again one combination per process. */
void combo_run_all(struct combo_set *set, const struct combo_opts *o);
/* Writes each diverging combination, completed against the model, under o->save_dir.
 * RETURN how many were written. */
size_t combo_save(struct combo_set *set, const struct combo_opts *o);

/* combo_report.c: known divergence classes, one `PATTERN | REASON` a line (PATTERN a
 * POSIX extended regular expression over a divergence's message; the last " | " ends
 * it). Owns its strings and compiled patterns. */
struct combo_class {
  char *pattern, *reason;
  regex_t compiled;
};
struct combo_known {
  struct combo_class *classes;
  size_t n, cap;
};
int combo_known_load(struct combo_known *k, const char *path);
void combo_known_free(struct combo_known *k);
/* The class of a divergence message: its index in k, or -1. */
int combo_known_match(const struct combo_known *k, const char *message);
/* The summary on stderr and, when json_path is set, the JSON report. RETURN the
 * number of unknown divergences. */
size_t combo_report(const struct combo_set *set, const struct combo_known *k,
                    const struct cts_spec *spec, const char *json_path, double seconds);

/* combo_main.c: `tsm-cts combos` with its own arguments (argv[0] is "combos"). */
int cts_combos_main(int argc, char **argv);

#endif
