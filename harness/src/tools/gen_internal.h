/*
 * harness/src/tools/gen_internal.h: the generator's state shared by gen.c (rows, symbols, the
 * statement stream), gen_write.c (one writer per PARSE function of the statement table),
 * gen_main.c (the command) and the combination generator (combo.h), which holds a line's
 * operands and first word (struct gen_hold).
 */
#ifndef CTS_GEN_INTERNAL_H
#define CTS_GEN_INTERNAL_H

#include <stdint.h>

#include "gen.h"
#include "stmt_table.h"

#define GEN_MAX_SYMS 256
#define GEN_RECENT 4 /* symbols gen_pick comes back to: statements meet on one resource */
#define GEN_MAX_DEPTH 2 /* blocks the generator nests: a wrapped block in a wrapped block */

struct gen;
struct gen_row;
typedef int (*gen_writer)(struct gen *g, const struct gen_row *row);
/* A block row's writer: the whole block (its head, inner statements drawn through
 * gen_statement, its closing lines) into gc. RETURN the statements written, 0 if none. */
typedef int (*gen_block_writer)(struct gen *g, const struct gen_row *row,
                                struct cts_gen_case *gc);

/* A statement table row as the generator reads it (stmt_table.h): its kind, key and data,
 * and its WRITER (write), BLOCK_WRITER (write_block) or NO_WRITER (why_not). */
struct gen_row {
  int kind, key;
  CTS_STMT_DATA_FIELDS;
  gen_writer write;             /* NULL: not one line the generator writes */
  gen_block_writer write_block; /* NULL: not a block the generator writes */
  const char *writer;           /* the writer's name, NULL with NO_WRITER */
  const char *why_not;          /* NO_WRITER's reason, NULL with a writer */
};

/* An op table row. */
struct gen_op {
  const char *name;
  int op; /* enum tsm_op */
  int arity, in_managers, in_graphs;
};

/* A symbol the case has bound: its kind (enum cts_sym_kind), its element count when
 * the generator knows it (else -1), whether it is an odd resource (a view, a
 * component, an imported tensor, or one a destructive statement touched), and the
 * symbols it was made from, directly or through theirs (bit i: syms[i], i < 64). */
struct gen_sym {
  char name[16];
  int kind, elems, odd;
  uint64_t deps;
};

/* The combination generator's hold on a line (combo.c); all 0 elsewhere. focus and
 * target (1 + an index into syms, 0: none) are the symbols gen_pick returns first, once
 * each, when their kind is asked for; used_* say whether it did. variant (1 + an index,
 * 0: random) picks the line's first word choice (a verb, an op, a DLPack form, a flag, a
 * component); past the last one, no_variant is set. picked: the symbols the line took
 * (bit i: syms[i]). */
struct gen_hold {
  int focus, target, used_focus, used_target;
  int variant, words, no_variant;
  uint64_t picked;
};

/* One generator: its random state (a seed's xorshift stream, or a fuzzer's bytes when
 * bytes is set: each choice reads the next ones) and the case being written; owns line,
 * never bytes. */
struct gen {
  uint64_t rng;
  const uint8_t *bytes;
  size_t n_bytes, at;
  int min, max;
  unsigned families;             /* capabilities to draw rows from; 0: all */
  uint32_t ops;                  /* manager ops to draw from (bit 1 << enum tsm_op); 0: all */
  uint32_t dtypes;               /* dtypes to create (bit 1 << enum tsm_dtype); 0: all */
  struct gen_sym syms[GEN_MAX_SYMS];
  size_t n_syms;
  struct gen_sym pending[4];     /* what the line being written binds */
  size_t n_pending;
  int next_name;
  int depth;                     /* blocks open around the line being written */
  int recent[GEN_RECENT];        /* the symbols the last lines took or made (a ring) */
  size_t n_recent;               /* how many were ever put in the ring */
  int want;                      /* when set, gen_statement draws only rows binding these */
  struct gen_hold hold;
  struct cts_buf line;
};

extern const struct gen_row gen_rows[];
extern const size_t gen_n_rows;
extern const struct gen_op gen_ops[];
extern const size_t gen_n_ops;

uint64_t gen_rand(struct gen *g, uint64_t n);
/* The line's first word choice under a combination's hold (gen_hold.variant): RETURN
 * the alternative's index among count, or -1 when the choice is free. */
int gen_held_choice(struct gen *g, size_t count);
const char *gen_pick_word(struct gen *g, const char *alternatives, char *buf, size_t n);
struct gen_sym *gen_pick(struct gen *g, int mask);
const char *gen_fresh(struct gen *g, int kind, int elems, int odd);
/* The name of the symbol numbered `number` of kind (its kind's letter, then the number). */
void gen_sym_name(char *buf, size_t n, int kind, int number);
/* Binds what the line made (its pending symbols), each made from what the line took. */
void gen_keep(struct gen *g);
/* One line of row into g->line (the hold set by the caller). RETURN 0, or -1 when the
 * row's writer cannot write it with the symbols bound. */
int gen_write_row(struct gen *g, const struct gen_row *row);
/* Rows the generator writes one line of: action rows of .tsm cases with a writer (the
 * rows the combination generator combines). */
int gen_row_usable(const struct gen_row *row);
/* The block rows it writes (gen_case and the fuzzer only): those with a block writer. */
int gen_block_usable(const struct gen_row *row);
const char *gen_row_clause(int kind); /* NULL when the row has none */
uint32_t gen_row_cap(int kind);
/* The rows' consistency: every row with a writer has a clause, every row without one
 * says why. Writes each problem to stderr. RETURN the number of problems. */
int gen_rows_check(void);
/* text as a body line of gc, indented by g->depth; alt likewise (NULL: none); takes
 * neither string. */
void gen_add_line(struct gen *g, struct cts_gen_case *gc, const char *text, const char *alt,
                  int kind);
/* One statement from a random usable row into gc: a line, or a whole block while fewer
 * than GEN_MAX_DEPTH are open. RETURN the statements written (0: none fitted). */
int gen_statement(struct gen *g, struct cts_gen_case *gc);
void gen_case(struct gen *g, struct cts_gen_case *gc);
void gen_expectations(struct gen *g, struct cts_gen_case *gc);
/* The candidate expectation of one symbol's state (none for a node), its alt the other. */
void gen_expectation_of(struct cts_gen_case *gc, const struct gen_sym *sym);

#endif
