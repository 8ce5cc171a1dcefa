/*
 * harness/src/spec_index.h: the clause ids of the spec chapters (spec/README.md,
 * "Conventions"): a clause is a line starting with **ID**.
 */
#ifndef CTS_SPEC_INDEX_H
#define CTS_SPEC_INDEX_H

#include <stddef.h>

/* One clause. Its id and file strings are owned by the cts_spec that holds it. */
struct cts_clause {
  char *id;
  char *file;  /* chapter file name */
  int line;
  int citations;
};

/* The clauses of the spec chapters. Owns the array and each clause's strings
 * (cts_spec_free). */
struct cts_spec {
  struct cts_clause *clauses;
  size_t n, cap;
};

/* Loads every *.md under dir. Returns 0, or -1 if dir cannot be read. */
int cts_spec_load(struct cts_spec *spec, const char *dir);
struct cts_clause *cts_spec_find(const struct cts_spec *spec, const char *id);
void cts_spec_free(struct cts_spec *spec);
/* 1 if id has the grammar PREFIX.TOPIC.NUMBER. */
int cts_clause_id_valid(const char *id);
/* Finds the spec folder: explicit, $TSM_CTS_SPEC, ./spec, or <exe>/../share/tsm-cts/spec. */
const char *cts_spec_dir(const char *explicit_dir);

#endif
