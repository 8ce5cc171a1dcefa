/*
 * harness/src/tools/gen.h: `tsm-cts gen`, the scenario generator (cases/README.md, "Generated
 * cases"). gen.c writes a seeded random stream of statements per case from the rows of
 * the statement table (stmt_table.h); complete.c completes each case against the model
 * (refusals become `expect error`, final states become expectations).
 */
#ifndef CTS_GEN_H
#define CTS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"
#include "util.h"

struct cts_spec;

/* One body line of a generated case. `alt` is the line to try instead when the model
 * contradicts `text` (an expectation's other state), or NULL. `kind` is the statement
 * row that wrote it (enum cts_stmt_kind). The lines own their strings. */
struct cts_gen_line {
  char *text, *alt;
  int kind;
};

/* A generated case: its body lines, owned; device (borrowed; NULL: none named) the
 * device it is completed on. */
struct cts_gen_case {
  struct cts_gen_line *lines;
  size_t n, cap;
  const char *device;
};

void cts_gen_case_add(struct cts_gen_case *gc, char *text, char *alt, int kind);
void cts_gen_case_free(struct cts_gen_case *gc);
/* A line's statement, past its indentation (the generator indents a block's lines). */
const char *cts_gen_stmt(const char *text);
/* Whether a line heads a block (ends with `{`) or closes one (is `}`). */
int cts_gen_opens_block(const char *text);
int cts_gen_closes_block(const char *text);
/* The index of the `}` that closes the block whose head is line i (gc->n - 1 if none). */
size_t cts_gen_block_end(const struct cts_gen_case *gc, size_t i);
/* The case file's text: frontmatter (always CTS_GEN_FRONT_LINES lines) and body. */
#define CTS_GEN_FRONT_LINES 8
char *cts_gen_render(const struct cts_gen_case *gc, unsigned long long seed, size_t index,
                     const struct cts_spec *spec);
/* The same with another origin (the command that generated it) than a seed of `gen`. */
char *cts_gen_render_as(const struct cts_gen_case *gc, const char *origin, size_t index,
                        const struct cts_spec *spec);
/* The clauses of the rows of gc's lines from index `from` on (each row's clause that the
 * spec has, when spec is set; ERR.CODE.1 for an `expect error`), once each, into ids
 * (borrowed strings). RETURN how many, at most max. */
size_t cts_gen_clauses(const struct cts_gen_case *gc, size_t from, const struct cts_spec *spec,
                       const char **ids, size_t max);

/* One case's statements (1 to 40, from rows of the families in the capability mask
 * `families`, 0: all; new tensors of the dtypes in `dtypes`, 1 << enum tsm_dtype) drawn from a fuzzer's input instead of a seed: each choice reads
 * the next bytes, and past the end every choice is its first, so a small change of the
 * bytes is a small change of the scenario (fuzz/fuzz_scenario.c). RETURN the bytes
 * it read. */
size_t cts_gen_from_bytes(const uint8_t *data, size_t size, unsigned families,
                          uint32_t dtypes, struct cts_gen_case *gc);

/* What completion ended with. */
enum cts_gen_outcome { CTS_GEN_AGREES, CTS_GEN_DIVERGES, CTS_GEN_UNFINISHED };

/* How a case is completed: the seed and index that name it in messages, the adapter
 * (a) and its device it runs through, the spec its clauses are checked against (NULL:
 * none). Borrows everything. */
struct cts_completion {
  unsigned long long seed;
  size_t index;
  const struct tsm_adapter *a;
  const struct cts_spec *spec;
  int device;
};

/* Completes gc against the model, running it through how->a on how->device: an action
 * the model refuses becomes `expect error CODE: ...`, an expectation the model
 * contradicts takes its alt or goes, a statement the case cannot run goes; where the
 * adapter first diverges from the model the body ends. RETURN enum cts_gen_outcome. */
int cts_complete(struct cts_gen_case *gc, const struct cts_completion *how);

/* The adapter generated cases are completed through when none is named:
 * $TSM_CTS_GEN_ADAPTER, else build/lib/tsmref_adapter.so (the build's reference). */
const char *cts_gen_default_adapter(void);

/* `tsm-cts gen` with its own arguments (argv[0] is "gen"). RETURN the exit status. */
int cts_gen_main(int argc, char **argv);
/* `tsm-cts gen --seed SEED --count COUNT --jobs JOBS DIR` through the default adapter
 * (`run --generated`). RETURN its exit status. */
int cts_gen_into(const char *dir, unsigned long long seed, int count, int jobs);
/* Removes the .tsm files of dir. RETURN 0, or -1 when one could not go. */
int cts_gen_clear(const char *dir);

/* `tsm-cts statements [--markdown | --check FILE | --write FILE]`: the language reference
 * from the statement table's rows (stmt_table.h), as text or Markdown; --check fails when
 * FILE's block between the statement markers (cases/README.md) differs from it or a row
 * is inconsistent (a writer without a clause, no writer and no reason), --write rewrites
 * the block. RETURN the exit status. */
int cts_statements_main(int argc, char **argv);

#endif
