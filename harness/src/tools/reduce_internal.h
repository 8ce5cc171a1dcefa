/*
 * harness/src/tools/reduce_internal.h: `tsm-cts reduce`, shrinking a failing case by delta
 * debugging, shared by its parts: reduce.c (the command), reduce_text.c (the case file
 * as lines and statements, and the text of a candidate), reduce_search.c (the oracle
 * and the search) and reduce_front.c (the frontmatter of the reduced case).
 */
#ifndef CTS_REDUCE_INTERNAL_H
#define CTS_REDUCE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "case.h"

struct cts_spec;

/* One statement of the case, a unit of reduction. Lines are 0-based indexes into
 * red_text.lines. */
struct red_unit {
  int lead;      /* its first line: the comment lines right above it, else `first` */
  int first;     /* the statement's line (a block's header) */
  int last;      /* a block's closing `}` line; else `first` */
  int parent;    /* the enclosing block's unit, or -1 */
  int kind;      /* enum cts_stmt_kind */
  int is_block;
  int inner_col; /* `expect error`: the 0-based column of its action; else 0 */
  int dedent;    /* a block: how much deeper than its header its body is indented */
};

/* The case file as reduce edits it: owns lines (each without its newline), units and
 * owner. */
struct red_text {
  char **lines;
  size_t n_lines;
  int body;                /* the first line after the frontmatter's closing `---` */
  struct red_unit *units;  /* in document order: a block before its body */
  size_t n_units, cap_units;
  int *owner;              /* per line: the innermost unit it belongs to, or -1 */
};

/* A candidate: per unit, whether it stays, and whether it is replaced by its body (a
 * block) or by its action (`expect error`). Owns both arrays, n_units long. */
struct red_config {
  unsigned char *kept, *unwrapped;
};

/* How a run ended, as reduce compares runs: its status, the kind of the statement the
 * message names (-1 if none) and the message without that statement's text, with
 * numbers and the case's names replaced (red_normalise); and the message as written.
 * Owns message and raw (red_outcome_free). */
struct red_outcome {
  int status, kind;
  char *message, *raw;
};

/* One reduction. Borrows path, adapter, spec, names (the original case's symbols) and
 * device_name; owns text, cfg, target and the cache of tested candidates. */
struct reducer {
  const char *path, *adapter, *device_name;
  const struct cts_spec *spec;
  const struct cts_symbol *names;
  size_t n_names;
  int device, timeout_ms;
  struct red_text text;
  struct red_config cfg;
  struct red_outcome target;
  uint64_t *seen;          /* hashes of the candidate texts tested */
  unsigned char *seen_same; /* per hash: it failed the same way */
  size_t n_seen, cap_seen, cap_seen_same;
  size_t runs, unparsed, original, best;
  double started;
  int live;                /* stderr is a terminal: one progress line, rewritten */
  int stop;                /* the user interrupted a run: the search ends */
};

/* reduce_text.c */
int red_text_load(struct red_text *t, const char *text, const struct cts_case *c);
void red_text_free(struct red_text *t);
void red_config_init(struct red_config *cfg, size_t n_units);
void red_config_free(struct red_config *cfg);
/* Whether unit u and every block around it stay. */
int red_present(const struct red_text *t, const struct red_config *cfg, int u);
/* The statements a candidate keeps (an unwrapped block's header is gone). */
size_t red_count(const struct red_text *t, const struct red_config *cfg);
/* The candidate's text (the caller frees it). */
char *red_render(const struct red_text *t, const struct red_config *cfg);

/* reduce_search.c */
/* Parses text (a candidate of R's case) and runs it as `tsm-cts run` does. RETURN 0
 * with *out filled (the caller frees it), or -1 when it does not parse. */
int red_run(struct reducer *R, const char *text, struct red_outcome *out);
void red_outcome_free(struct red_outcome *o);
/* 1 when a and b are the same failure. */
int red_same(const struct red_outcome *a, const struct red_outcome *b);
/* Whether the candidate text fails as R->target does (cached). */
int red_interesting(struct reducer *R, const char *text);
/* Shrinks R->cfg while it keeps failing the same way. */
void red_search(struct reducer *R);
/* The statement of c on `line` (1-based), outermost first; NULL if none. */
const struct cts_stmt *red_stmt_at(const struct cts_block *b, int line);

/* reduce_front.c */
/* What red_front writes into the frontmatter: `removed` of `total` statements went;
 * trim: requires: and clauses: cut to what the reduced body needs. */
struct red_front_edit {
  size_t removed, total;
  int trim;
};
/* text (the reduced case) with the description saying how many statements went and,
 * when how->trim is set, its frontmatter trimmed (requires:, clauses:). RETURN a new
 * string (the caller frees it). */
char *red_front(const char *text, const struct cts_case *orig, const struct cts_case *reduced,
                const struct red_front_edit *how);

#endif
