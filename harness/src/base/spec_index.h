/*
 * harness/src/base/spec_index.h: the clause ids of the spec chapters (spec/README.md,
 * "Conventions"): a clause is a line starting with **ID**.
 */
#ifndef CTS_SPEC_INDEX_H
#define CTS_SPEC_INDEX_H

#include <stddef.h>
#include <stdio.h>

/* A clause's strength (spec/README.md, "Strengths"): what breaking it means. */
enum cts_strength {
  CTS_STRENGTH_NONE,   /* the clause names none: lint refuses it */
  CTS_STRENGTH_MUST,   /* a source's text requires it: a Fail */
  CTS_STRENGTH_SHOULD, /* a source (or the suite) recommends it: a Warning */
  CTS_STRENGTH_MAY,    /* implementation-defined among listed variants: outside them, a Fail */
  CTS_STRENGTH_TSM,    /* the suite's own stricter rule: a Fail under --profile strict,
                          a Warning under --profile standard */
  CTS_STRENGTH_WITHDRAWN
};

/* "MUST", "SHOULD", "MAY", "TSM", "withdrawn", or "" for none. */
const char *cts_strength_name(int strength);

/* What the run judges: strict (every clause, TSM ones included: the reference's
 * profile) or standard (what the sources require; a broken TSM clause is a Warning). */
enum cts_profile { CTS_PROFILE_STANDARD, CTS_PROFILE_STRICT };

/* One clause. Its id and file strings are owned by the cts_spec that holds it. */
struct cts_clause {
  char *id;
  char *file;  /* chapter file name */
  int line;
  int citations;
  int strength;    /* enum cts_strength */
  int has_source;  /* a line of its block begins `Source: ` */
};

/* The clauses of the spec chapters. Owns the array and each clause's strings
 * (cts_spec_free). */
struct cts_spec {
  struct cts_clause *clauses;
  size_t n, cap;
};

/* Loads every *.md under dir into *spec (OUT: overwritten, freed by cts_spec_free).
 * Returns 0, or -1 if dir cannot be read. */
int cts_spec_load(struct cts_spec *spec, const char *dir);
struct cts_clause *cts_spec_find(const struct cts_spec *spec, const char *id);
void cts_spec_free(struct cts_spec *spec);
/* Each clause of `spec` without a strength or a `Source:` line, as file:line messages on
 * `out` (the chapters are under spec_dir). RETURN how many. */
int cts_spec_check_grades(const struct cts_spec *spec, const char *spec_dir, FILE *out);
/* 1 if id has the grammar PREFIX.TOPIC.NUMBER. */
int cts_clause_id_valid(const char *id);
/* Finds a folder of the library: explicit_dir, else $env_name, else source_dir when it
 * exists (a run from the source tree), else <exe>/../share/tsm-cts/installed_name (an
 * installed judge), else source_dir. RETURN explicit_dir, the environment's string,
 * source_dir, or a static buffer (valid for the program's life). */
const char *cts_library_dir(const char *explicit_dir, const char *env_name,
                            const char *source_dir, const char *installed_name);
/* The spec folder: explicit, $TSM_CTS_SPEC, ./spec, or <exe>/../share/tsm-cts/spec. */
const char *cts_spec_dir(const char *explicit_dir);

#endif
