/*
 * harness/src/run/expectations.c: the expectations file (harness/expectations/README.md):
 * one known failure per line, `CASE DEVICE STATUS reason | upstream reference`, where
 * CASE and DEVICE are shell globs and the first matching line decides; the stale-line
 * warnings after a run; and `tsm-cts baseline`, which writes a file from a run's JSON
 * report (as deqp-runner's baseline does) with a placeholder reason per line.
 */
#include "expectations.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "grade.h"
#include "json_read.h"
#include "spec_index.h"
#include "util.h"

/* What `tsm-cts baseline` writes where the author's reason goes. */
#define PLACEHOLDER "TODO: why it fails | upstream reference"

/* One line of the expectations file and what the run made of it. Owns its strings;
 * `known` owns the entries until cts_expectations_free. */
struct expectation {
  char *name, *device, *reason, *path;
  int status, line;
  size_t matched, failed_so; /* runs it decided, and those that failed as it says */
};

static struct expectation *known;
static size_t n_known, cap_known;

/* One line into e. RETURN 0, 1 for a blank or comment line, -1 after a message. */
static int parse_line(const char *path, int line, const char *l, struct expectation *e) {
  while (isspace((unsigned char)*l)) l++;
  if (!*l || *l == '#') return 1;
  char name[512], device[128], status[64];
  int used = 0;
  if (sscanf(l, "%511s %127s %63s %n", name, device, status, &used) < 3) {
    fprintf(stderr, "%s:%d: expected 'case device status reason | reference'\n", path, line);
    return -1;
  }
  int st = cts_status_from_name(status);
  if (st != CTS_FAIL && st != CTS_CRASH && st != CTS_TIMEOUT && st != CTS_ERROR) {
    fprintf(stderr, "%s:%d: status must be Fail, Crash, Timeout or Error\n", path, line);
    return -1;
  }
  if (!l[used]) {
    fprintf(stderr, "%s:%d: a known failure needs its reason and reference\n", path, line);
    return -1;
  }
  *e = (struct expectation){cts_xstrdup(name), cts_xstrdup(device), cts_xstrdup(l + used),
                            cts_xstrdup(path), st, line, 0, 0};
  return 0;
}

int cts_expectations_load(const char *path, int optional) {
  char *text = cts_read_file(path, NULL);
  if (!text) {
    if (optional) return 0;
    fprintf(stderr, "%s: cannot read the expectations file\n", path);
    return -1;
  }
  int line = 0, rc = 0;
  for (char *l = text, *end; l; l = end ? end + 1 : NULL) {
    end = strchr(l, '\n');
    if (end) *end = '\0';
    struct expectation e;
    int got = parse_line(path, ++line, l, &e);
    if (got < 0) rc = -1;
    if (got == 0) CTS_PUSH(known, n_known, cap_known, e);
  }
  free(text);
  return rc;
}

void cts_expectations_free(void) {
  for (size_t i = 0; i < n_known; i++) {
    free(known[i].name);
    free(known[i].device);
    free(known[i].reason);
    free(known[i].path);
  }
  free(known);
  known = NULL;
  n_known = cap_known = 0;
}

/* The clause list that begins a reason ("ID STRENGTH[, ID STRENGTH]: ..."), or NULL. */
static char *claimed_clauses(const char *reason) {
  const char *colon = strchr(reason, ':');
  if (!colon) return NULL;
  char *list = cts_xstrndup(reason, (size_t)(colon - reason));
  char *copy = cts_xstrdup(list), *save = NULL;
  int ok = 1, words = 0;
  for (char *w = strtok_r(copy, " ,", &save); w && ok; w = strtok_r(NULL, " ,", &save))
    ok = words++ % 2 == 0 ? cts_clause_id_valid(w) : isupper((unsigned char)*w) != 0;
  free(copy);
  if (ok && words >= 2 && words % 2 == 0) return list;
  free(list);
  return NULL;
}

void cts_apply_expectation(struct cts_job *job) {
  for (size_t i = 0; i < n_known; i++) {
    struct expectation *e = &known[i];
    if (fnmatch(e->name, job->name, 0) != 0 || fnmatch(e->device, job->device_name, 0) != 0)
      continue;
    job->expected_reason = cts_xstrdup(e->reason);
    e->matched++;
    if (job->status == e->status) {
      /* A known failure is graded by the clause its line names (reviewed against the
       * source, harness/expectations/README.md), not by every clause its case cites:
       * one that breaks no requirement under the profile is a Warning. */
      char *claimed = claimed_clauses(e->reason);
      job->status = !claimed || cts_grade_claimed(job, claimed) ? CTS_XFAIL : CTS_WARNING;
      e->failed_so++;
    } else if (job->status == CTS_WARNING && e->status == CTS_FAIL) {
      e->failed_so++; /* it still deviates; the profile or the clause's strength makes it
                         a Warning, which needs no expectation (grade.h) */
    } else if (job->status == CTS_PASS) {
      job->status = CTS_XPASS;
    }
    return;
  }
}

int cts_expectations_warn_stale(int whole_library) {
  int stale = 0;
  for (size_t i = 0; i < n_known; i++) {
    const struct expectation *e = &known[i];
    if (!e->matched && !whole_library) continue;
    const char *why = !e->matched    ? "matches no case of the library on any device"
                      : !e->failed_so ? "no case it matches fails that way any more"
                      : !strncmp(e->reason, "TODO", 4) ? "its reason is still the placeholder"
                                                         : NULL;
    if (!why) continue;
    fprintf(stderr, "%s:%d: warning: %sexpectation (%s %s): %s\n", e->path, e->line,
            e->matched && e->failed_so ? "" : "stale ", e->name, e->device, why);
    stale++;
  }
  return stale;
}

/* ---- tsm-cts baseline ------------------------------------------------------------- */

static int write_baseline(FILE *out, const struct cts_json *results) {
  fprintf(out, "# Known failures written by tsm-cts baseline: replace each TODO with why the\n"
               "# case fails and the upstream reference (harness/expectations/README.md).\n"
               "# case id  device  status  reason | upstream reference\n");
  int n = 0;
  for (size_t i = 0; results && i < results->n; i++) {
    const struct cts_json *r = &results->items[i];
    const char *status = cts_json_str(r, "status", "");
    int st = cts_status_from_name(status);
    if (st != CTS_FAIL && st != CTS_CRASH && st != CTS_TIMEOUT && st != CTS_ERROR) continue;
    fprintf(out, "%s  %s  %s  %s\n", cts_json_str(r, "case", "?"), cts_json_str(r, "device", "*"),
            status, PLACEHOLDER);
    n++;
  }
  return n;
}

int cts_baseline_main(const char *results_json, const char *out_path) {
  char *text = results_json ? cts_read_file(results_json, NULL) : NULL;
  if (!text) {
    fprintf(stderr, "tsm-cts baseline: cannot read %s\n", results_json ? results_json : "(none)");
    return 2;
  }
  struct cts_json doc;
  char err[256];
  int rc = cts_json_parse(text, &doc, err, sizeof err);
  free(text);
  if (rc) {
    fprintf(stderr, "tsm-cts baseline: %s: %s\n", results_json, err);
    return 2;
  }
  FILE *out = out_path ? fopen(out_path, "w") : stdout;
  if (!out) {
    perror(out_path);
    cts_json_free(&doc);
    return 2;
  }
  int n = write_baseline(out, cts_json_get(&doc, "results"));
  if (out != stdout) fclose(out);
  cts_json_free(&doc);
  fprintf(stderr, "tsm-cts baseline: %d known failure%s written%s%s\n", n, n == 1 ? "" : "s",
          out_path ? " to " : "", out_path ? out_path : "");
  return 0;
}
