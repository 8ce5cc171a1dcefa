/*
 * harness/src/run/grade.c: a failed result graded by the strength of the clauses it breaks.
 */
#include "grade.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "util.h"

static const struct cts_spec *grading_spec;
static int grading_profile = CTS_PROFILE_STANDARD;

void cts_grade_begin(const struct cts_spec *spec, int profile) {
  grading_spec = spec;
  grading_profile = profile;
}

int cts_profile_from_name(const char *name) {
  if (!strcmp(name, "strict")) return CTS_PROFILE_STRICT;
  if (!strcmp(name, "standard")) return CTS_PROFILE_STANDARD;
  return -1;
}

const char *cts_profile_name(int profile) {
  return profile == CTS_PROFILE_STRICT ? "strict" : "standard";
}

int cts_grade_profile(void) { return grading_profile; }

int cts_grade_strength(const char *id) {
  const struct cts_clause *c = grading_spec ? cts_spec_find(grading_spec, id) : NULL;
  return c ? c->strength : CTS_STRENGTH_NONE;
}

/* 1 when breaking a clause of this strength is a Fail under the profile. A clause
 * without a strength (a spec lint refuses) is judged as a MUST: no failure is ever
 * softened by a missing grade. */
static int breaks_as_fail(int strength) {
  switch (strength) {
    case CTS_STRENGTH_SHOULD: return 0;
    case CTS_STRENGTH_TSM: return grading_profile == CTS_PROFILE_STRICT;
    default: return 1;
  }
}

/* 1 when a clause id may start at p in msg: an upper-case letter that does not go on a
 * word or an id. */
static int id_starts(const char *msg, const char *p) {
  if (!isupper((unsigned char)*p)) return 0;
  return p == msg || !(isalnum((unsigned char)p[-1]) || p[-1] == '.');
}

/* Writes the len characters at p as ids[n]: RETURN 1 when they are a clause of the spec
 * that ids[0..n) does not hold yet, so that the caller keeps it. */
static int add_clause(char ids[][64], size_t n, const char *p, size_t len) {
  if (len >= 64) return 0;
  memcpy(ids[n], p, len);
  ids[n][len] = '\0';
  for (size_t k = 0; k < n; k++)
    if (!strcmp(ids[k], ids[n])) return 0;
  return cts_clause_id_valid(ids[n]) && cts_spec_find(grading_spec, ids[n]) != NULL;
}

/* The clause ids the message names that are clauses of the spec, into ids (at most
 * max_ids, each at most 63 characters). RETURN how many. */
static size_t named_clauses(const char *msg, char ids[][64], size_t max_ids) {
  size_t n = 0;
  for (const char *p = msg; p && *p && n < max_ids;) {
    if (!id_starts(msg, p)) {
      p++;
      continue;
    }
    size_t len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.");
    while (len && p[len - 1] == '.') len--; /* a sentence's full stop */
    n += (size_t)add_clause(ids, n, p, len);
    p += len ? len : 1;
  }
  return n;
}

/* The comment of line `line` of the case file at path (what follows its '#'), into
 * out; "" when there is none. */
static void statement_comment(const char *path, long line, char *out, size_t out_n) {
  out[0] = '\0';
  char *text = cts_read_file(path, NULL);
  const char *p = text;
  for (long l = 1; p && l < line; l++) {
    p = strchr(p, '\n');
    if (p) p++;
  }
  const char *hash = p ? strchr(p, '#') : NULL;
  const char *eol = p ? strchr(p, '\n') : NULL;
  if (hash && (!eol || hash < eol))
    snprintf(out, out_n, "%.*s", (int)(eol ? (size_t)(eol - hash) : strlen(hash)), hash);
  free(text);
}

/* The clauses a failure breaks: those its message names; else those the comment of the
 * statement it stopped at names (a message that begins `CASE:LINE:`, and a statement
 * such as `expect error ECLOSED: close m   # MGR.CLOSE.5`); else none. RETURN how many. */
static size_t failed_clauses(const struct cts_job *job, char ids[][64], size_t max_ids) {
  size_t n = named_clauses(job->message, ids, max_ids);
  size_t path_len = strlen(job->path);
  const char *m = job->message ? job->message : "";
  if (n || strncmp(m, job->path, path_len) != 0 || m[path_len] != ':') return n;
  char *end = NULL;
  long line = strtol(m + path_len + 1, &end, 10);
  if (end == m + path_len + 1 || line < 1) return 0;
  char comment[1024];
  statement_comment(job->path, line, comment, sizeof comment);
  return named_clauses(comment, ids, max_ids);
}

#define CTS__GRADING_IDS 16 /* the most clauses that grade one failure */

/* The clauses that grade a failure: those it breaks (failed_clauses, written into
 * named), else the case's own. RETURN how many, ids pointing into named or job. */
static size_t grading_ids(const struct cts_job *job, char named[][64], const char **ids) {
  size_t n = failed_clauses(job, named, CTS__GRADING_IDS);
  for (size_t i = 0; i < n; i++) ids[i] = named[i];
  if (n) return n;
  n = job->n_clauses < CTS__GRADING_IDS ? job->n_clauses : CTS__GRADING_IDS;
  for (size_t i = 0; i < n; i++) ids[i] = job->clauses[i];
  return n;
}

/* "ID STRENGTH, ..." of those ids whose grade is the failure's (fail: a Fail, else a
 * Warning); NULL for none. */
static char *graded_by(const char *const *ids, size_t n, int fail) {
  struct cts_buf by = {0};
  for (size_t i = 0; i < n; i++) {
    int s = cts_grade_strength(ids[i]);
    if (breaks_as_fail(s) != fail) continue;
    cts_buf_printf(&by, "%s%s %s", by.len ? ", " : "", ids[i],
                   s == CTS_STRENGTH_NONE ? "ungraded" : cts_strength_name(s));
  }
  return by.buf;
}

void cts_grade_job(struct cts_job *job) {
  if (job->status != CTS_FAIL || !grading_spec) return;
  char named[CTS__GRADING_IDS][64];
  const char *ids[CTS__GRADING_IDS];
  size_t n = grading_ids(job, named, ids);
  int fail = 0;
  for (size_t i = 0; i < n; i++) fail |= breaks_as_fail(cts_grade_strength(ids[i]));
  free(job->graded_by);
  job->graded_by = graded_by(ids, n, fail);
  if (!fail && n > 0) job->status = CTS_WARNING;
}

int cts_grade_claimed(struct cts_job *job, char *claimed) {
  free(job->graded_by);
  job->graded_by = claimed;
  int fail = 0;
  char *copy = cts_xstrdup(claimed), *save = NULL;
  for (char *w = strtok_r(copy, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
    fail |= breaks_as_fail(cts_grade_strength(w));
    w = strtok_r(NULL, " ,", &save); /* its strength, as spec/ gives it */
    if (!w) break;
  }
  free(copy);
  return fail;
}

/* 1 when `list` ("ID STRENGTH, ...") names clause `id`. */
static int names_clause(const char *list, const char *id) {
  size_t len = strlen(id);
  for (const char *p = list; p && (p = strstr(p, id)) != NULL; p += len)
    if ((p == list || p[-1] == ' ') && p[len] == ' ') return 1;
  return 0;
}

/* 1 when job j's case cites clause id. */
static int cites(const struct cts_job *j, const char *id) {
  for (size_t k = 0; k < j->n_clauses; k++)
    if (!strcmp(j->clauses[k], id)) return 1;
  return 0;
}

/* What one result says of a MUST clause. */
enum verdict { VERDICT_NONE, VERDICT_KEPT, VERDICT_BROKEN };

/* The verdict of job j on clause id: none where it neither cites the clause nor is graded
 * by it, or did not judge (absent, not supported, skipped); broken by a failure the
 * clause grades, a crash, a timeout or an error; else kept. */
static enum verdict verdict_on(const struct cts_job *j, const char *id) {
  int graded = j->graded_by && names_clause(j->graded_by, id);
  if (j->absent || (!graded && !cites(j, id))) return VERDICT_NONE;
  switch (j->status) {
    case CTS_NOTSUPPORTED:
    case CTS_SKIP: return VERDICT_NONE;
    case CTS_FAIL:
    case CTS_XFAIL: return graded ? VERDICT_BROKEN : VERDICT_KEPT;
    case CTS_CRASH:
    case CTS_TIMEOUT:
    case CTS_ERROR: return VERDICT_BROKEN;
    default: return VERDICT_KEPT;
  }
}

struct cts_score cts_grade_score(const struct cts_job *jobs, size_t n) {
  struct cts_score score = {0};
  if (!grading_spec) return score;
  for (size_t c = 0; c < grading_spec->n; c++) {
    const struct cts_clause *cl = &grading_spec->clauses[c];
    if (cl->strength != CTS_STRENGTH_MUST) continue;
    int applicable = 0, broken = 0;
    for (size_t i = 0; i < n; i++) {
      enum verdict v = verdict_on(&jobs[i], cl->id);
      applicable |= v != VERDICT_NONE;
      broken |= v == VERDICT_BROKEN;
    }
    score.must_applicable += applicable;
    score.must_passed += applicable && !broken;
  }
  for (size_t i = 0; i < n; i++) score.warnings += jobs[i].status == CTS_WARNING;
  return score;
}
