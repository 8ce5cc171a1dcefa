/*
 * harness/src/tools/combo_report.c: what `tsm-cts combos` reports (combo.h): the known
 * divergence classes it reads (--known), then the summary on stderr and the JSON
 * report (--json): the combinations run by depth, their statuses, the divergences by
 * known class and every unknown one with its statements, the clauses the rows of each
 * combination cite (cts_gen_clauses, complete.c) with how many combinations touched
 * each, and the states the focus reached in the model's view, with those none reached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case.h"
#include "combo.h"
#include "exec.h"

int combo_known_load(struct combo_known *k, const char *path) {
  memset(k, 0, sizeof *k);
  char *text = cts_read_file(path, NULL);
  if (!text) return -1;
  int rc = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#' || !line[strspn(line, " \t")]) continue;
    char *bar = NULL;
    for (char *p = strstr(line, " | "); p; p = strstr(p + 1, " | ")) bar = p;
    struct combo_class c = {0};
    if (bar) c.pattern = cts_xstrndup(line, (size_t)(bar - line));
    if (!bar || regcomp(&c.compiled, c.pattern, REG_EXTENDED | REG_NOSUB)) {
      fprintf(stderr, "tsm-cts combos: %s: not `PATTERN | REASON` with an extended regular "
              "expression: %s\n", path, line);
      free(c.pattern);
      rc = -1;
      continue;
    }
    c.reason = cts_xstrdup(bar + 3);
    CTS_PUSH(k->classes, k->n, k->cap, c);
  }
  free(text);
  return rc;
}

void combo_known_free(struct combo_known *k) {
  for (size_t i = 0; i < k->n; i++) {
    free(k->classes[i].pattern);
    free(k->classes[i].reason);
    regfree(&k->classes[i].compiled);
  }
  free(k->classes);
  memset(k, 0, sizeof *k);
}

int combo_known_match(const struct combo_known *k, const char *message) {
  for (size_t i = 0; k && i < k->n; i++)
    if (!regexec(&k->classes[i].compiled, message ? message : "", 0, NULL, 0)) return (int)i;
  return -1;
}

/* ---- tallies ----------------------------------------------------------------- */

/* A clause and how many combinations touched it; the id is borrowed. */
struct clause_count {
  const char *id;
  size_t n;
};

/* What the report says, counted from the nodes. Owns its arrays. */
struct tally {
  size_t by_depth[COMBO_MAX_DEPTH + 1], by_status[CTS_N_STATUS];
  size_t *by_class;      /* per known class */
  size_t *unknown, n_unknown, cap_unknown;
  struct clause_count *clauses;
  size_t n_clauses, cap_clauses;
  size_t states[COMBO_N_STATES], n_probed;
};

static void count_clauses(struct tally *t, const struct combo_set *set, size_t i,
                          const struct cts_spec *spec) {
  struct cts_gen_case path = {0};
  size_t nodes[COMBO_MAX_DEPTH + 1];
  size_t n = combo_path(set, i, nodes, COMBO_MAX_DEPTH + 1);
  for (size_t k = 0; k < n; k++)
    cts_gen_case_add(&path, cts_xstrdup(set->nodes[nodes[k]].text), NULL,
                     set->nodes[nodes[k]].kind);
  const char *ids[CTS_N_STMT_KINDS];
  size_t n_ids = cts_gen_clauses(&path, 0, spec, ids, CTS_N_STMT_KINDS);
  cts_gen_case_free(&path);
  for (size_t k = 0; k < n_ids; k++) {
    size_t c = 0;
    while (c < t->n_clauses && strcmp(t->clauses[c].id, ids[k])) c++;
    if (c == t->n_clauses) {
      struct clause_count fresh = {ids[k], 0};
      CTS_PUSH(t->clauses, t->n_clauses, t->cap_clauses, fresh);
    }
    t->clauses[c].n++;
  }
}

/* Node i's result into the tally. */
static void count_node(struct tally *t, const struct combo_set *set, size_t i,
                       const struct combo_known *k, const struct cts_spec *spec) {
  const struct combo_node *node = &set->nodes[i];
  if (node->focus && node->status >= 0) {
    t->n_probed++;
    for (int s = 0; s < COMBO_N_STATES; s++) t->states[s] += node->states >> s & 1;
  }
  if (!node->run) return;
  t->by_depth[node->depth]++;
  t->by_status[node->status >= 0 ? node->status : CTS_ERROR]++;
  count_clauses(t, set, i, spec);
  if (cts_status_ok(node->status)) return;
  int c = combo_known_match(k, node->message);
  if (c >= 0) t->by_class[c]++;
  else CTS_PUSH(t->unknown, t->n_unknown, t->cap_unknown, i);
}

static int by_clause_id(const void *a, const void *b) {
  return strcmp(((const struct clause_count *)a)->id, ((const struct clause_count *)b)->id);
}

static void tally_all(struct tally *t, const struct combo_set *set, const struct combo_known *k,
                      const struct cts_spec *spec) {
  memset(t, 0, sizeof *t);
  t->by_class = cts_xcalloc(k->n ? k->n : 1, sizeof(size_t));
  for (size_t i = 0; i < set->n; i++) count_node(t, set, i, k, spec);
  if (t->n_clauses) qsort(t->clauses, t->n_clauses, sizeof t->clauses[0], by_clause_id);
}

static void tally_free(struct tally *t) {
  free(t->by_class);
  free(t->unknown);
  free(t->clauses);
}

/* ---- the summary -------------------------------------------------------------- */

/* Node i's statements after the background, ` / `-separated. */
static void print_path(FILE *f, const struct combo_set *set, size_t i) {
  size_t nodes[COMBO_MAX_DEPTH + 1];
  size_t n = combo_path(set, i, nodes, COMBO_MAX_DEPTH + 1);
  for (size_t k = 0; k < n; k++) fprintf(f, "%s%s", k ? " / " : "", set->nodes[nodes[k]].text);
}

static void print_counts(const struct combo_set *set, const struct tally *t, double seconds) {
  printf("tsm-cts combos: %zu combinations, depth %d (", set->n_run, set->depth);
  for (int d = 0; d <= set->depth; d++)
    printf("%s%zu with %d statement%s after the maker", d ? ", " : "", t->by_depth[d], d,
           d == 1 ? "" : "s");
  printf("), %zu repeated texts left out, %.1f s\n", set->n_duplicates, seconds);
  printf("tsm-cts combos:");
  for (int s = 0; s < CTS_N_STATUS; s++)
    if (t->by_status[s] || s == CTS_PASS || s == CTS_FAIL)
      printf(" %s %zu", cts_status_name(s), t->by_status[s]);
  printf("\n");
}

static void print_divergences(const struct combo_set *set, const struct tally *t,
                              const struct combo_known *k) {
  for (size_t c = 0; c < k->n; c++)
    printf("tsm-cts combos: known %6zu  %s\n", t->by_class[c], k->classes[c].reason);
  printf("tsm-cts combos: %zu unknown divergences\n", t->n_unknown);
  for (size_t u = 0; u < t->n_unknown && u < 20; u++) {
    const struct combo_node *node = &set->nodes[t->unknown[u]];
    printf("  combination %zu, %s: ", t->unknown[u], cts_status_name(node->status));
    print_path(stdout, set, t->unknown[u]);
    printf("\n    %s\n", node->message ? node->message : "");
  }
}

static void print_reach(const struct tally *t) {
  printf("tsm-cts combos: clauses touched (combinations each):");
  for (size_t c = 0; c < t->n_clauses; c++)
    printf(" %s %zu", t->clauses[c].id, t->clauses[c].n);
  printf("\ntsm-cts combos: states the focus reached (of %zu prefixes probed):", t->n_probed);
  for (int s = 0; s < COMBO_N_STATES; s++)
    if (t->states[s]) printf(" %s %zu", combo_state_names[s], t->states[s]);
  printf("\ntsm-cts combos: states no prefix reached:");
  int none = 1;
  for (int s = 0; s < COMBO_N_STATES; s++)
    if (!t->states[s]) printf(" %s", combo_state_names[s]), none = 0;
  printf("%s\n", none ? " none" : "");
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_divergence(FILE *f, const struct combo_set *set, size_t i,
                            const struct combo_known *k, int first) {
  const struct combo_node *node = &set->nodes[i];
  int c = combo_known_match(k, node->message);
  fprintf(f, "%s\n    {\"combination\": %zu, \"status\": \"%s\", \"known\": ", first ? "" : ",",
          i, cts_status_name(node->status));
  if (c >= 0) cts_json_string(f, k->classes[c].reason);
  else fputs("null", f);
  fputs(", \"statements\": [", f);
  size_t nodes[COMBO_MAX_DEPTH + 1];
  size_t n = combo_path(set, i, nodes, COMBO_MAX_DEPTH + 1);
  for (size_t s = 0; s < n; s++) {
    fputs(s ? ", " : "", f);
    cts_json_string(f, set->nodes[nodes[s]].text);
  }
  fputs("], \"message\": ", f);
  cts_json_string(f, node->message ? node->message : "");
  fputs("}", f);
}

static void json_counts(FILE *f, const struct combo_set *set, const struct tally *t,
                        double seconds) {
  fprintf(f, "{\n  \"depth\": %d,\n  \"seconds\": %.1f,\n  \"combinations\": %zu,\n"
          "  \"repeated_texts\": %zu,\n  \"by_depth\": [", set->depth, seconds, set->n_run,
          set->n_duplicates);
  for (int d = 0; d <= set->depth; d++) fprintf(f, "%s%zu", d ? ", " : "", t->by_depth[d]);
  fputs("],\n  \"statuses\": {", f);
  for (int s = 0; s < CTS_N_STATUS; s++)
    fprintf(f, "%s\"%s\": %zu", s ? ", " : "", cts_status_name(s), t->by_status[s]);
  fputs("},\n  \"clauses\": {", f);
  for (size_t c = 0; c < t->n_clauses; c++)
    fprintf(f, "%s\"%s\": %zu", c ? ", " : "", t->clauses[c].id, t->clauses[c].n);
  fprintf(f, "},\n  \"probed\": %zu,\n  \"states\": {", t->n_probed);
  for (int s = 0; s < COMBO_N_STATES; s++)
    fprintf(f, "%s\"%s\": %zu", s ? ", " : "", combo_state_names[s], t->states[s]);
  fputs("},\n", f);
}

static int write_json(const char *path, const struct combo_set *set, const struct tally *t,
                      const struct combo_known *k, double seconds) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  json_counts(f, set, t, seconds);
  fputs("  \"known\": [", f);
  for (size_t c = 0; c < k->n; c++) {
    fprintf(f, "%s\n    {\"reason\": ", c ? "," : "");
    cts_json_string(f, k->classes[c].reason);
    fputs(", \"pattern\": ", f);
    cts_json_string(f, k->classes[c].pattern);
    fprintf(f, ", \"combinations\": %zu}", t->by_class[c]);
  }
  fprintf(f, "],\n  \"unknown\": %zu,\n  \"divergences\": [", t->n_unknown);
  int first = 1;
  for (size_t i = 0; i < set->n; i++)
    if (set->nodes[i].run && !cts_status_ok(set->nodes[i].status))
      json_divergence(f, set, i, k, first), first = 0;
  fputs("]\n}\n", f);
  return fclose(f);
}

size_t combo_report(const struct combo_set *set, const struct combo_known *k,
                    const struct cts_spec *spec, const char *json_path, double seconds) {
  struct tally t;
  tally_all(&t, set, k, spec);
  print_counts(set, &t, seconds);
  print_divergences(set, &t, k);
  print_reach(&t);
  if (json_path && write_json(json_path, set, &t, k, seconds))
    fprintf(stderr, "tsm-cts combos: cannot write %s\n", json_path);
  size_t unknown = t.n_unknown;
  tally_free(&t);
  return unknown;
}
