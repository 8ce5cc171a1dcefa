/*
 * harness/src/gen_internal.h: the generator's state shared by gen.c (rows, symbols, the
 * statement stream), gen_write.c (one writer per PARSE function of the statement table)
 * and gen_main.c (the command).
 */
#ifndef CTS_GEN_INTERNAL_H
#define CTS_GEN_INTERNAL_H

#include <stdint.h>

#include "gen.h"

#define GEN_MAX_SYMS 256

/* A statement table row as the generator reads it (stmt_table.h). */
struct gen_row {
  int kind, cls;
  const char *lead, *verb;
  int binds, family;
  unsigned cap;
  const char *parse; /* the PARSE function's name: it picks the writer */
};

/* An op table row. */
struct gen_op {
  const char *name;
  int arity, in_managers, in_graphs;
};

/* A symbol the case has bound: its kind (enum cts_sym_kind), its element count when
 * the generator knows it (else -1), and whether it is an odd resource (a view, a
 * component, an imported tensor, or one a destructive statement touched). */
struct gen_sym {
  char name[16];
  int kind, elems, odd;
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
  struct gen_sym syms[GEN_MAX_SYMS];
  size_t n_syms;
  struct gen_sym pending[4];     /* what the line being written binds */
  size_t n_pending;
  int next_name;
  struct cts_buf line;
};

typedef int (*gen_writer)(struct gen *g, const struct gen_row *row);

extern const struct gen_row gen_rows[];
extern const size_t gen_n_rows;
extern const struct gen_op gen_ops[];
extern const size_t gen_n_ops;

uint64_t gen_rand(struct gen *g, uint64_t n);
const char *gen_pick_word(struct gen *g, const char *alternatives, char *buf, size_t n);
struct gen_sym *gen_pick(struct gen *g, int mask);
const char *gen_fresh(struct gen *g, int kind, int elems, int odd);
const char *gen_row_clause(int kind); /* NULL when the row has none */
uint32_t gen_row_cap(int kind);
/* The writer of a PARSE function (gen_write.c), or NULL when none is written yet. */
gen_writer gen_writer_of(const char *parse);
void gen_case(struct gen *g, struct cts_gen_case *gc);
void gen_expectations(struct gen *g, struct cts_gen_case *gc);

#endif
