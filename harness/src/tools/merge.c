/*
 * harness/src/tools/merge.c: `tsm-cts merge` (merge.h). The results keep every field the
 * reports share (harness/schema/results.schema.json); the adapter and its devices
 * come from the first report, the seed too; the wall time is the inputs' sum.
 */
#include "merge.h"

#include "grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "json_read.h"
#include "report.h"
#include "summary.h"
#include "util.h"

/* The merge under way. Owns the parsed reports (whose strings the jobs borrow for
 * device, family and clause names), the jobs and their clause arrays. */
struct merge {
  struct cts_json *docs;
  size_t n_docs;
  struct cts_job *jobs;
  size_t n_jobs, cap_jobs;
  struct cts_run_info info;
};

static void take_adapter(struct merge *m, const struct cts_json *doc) {
  struct cts_adapter_facts *f = &m->info.facts;
  const struct cts_json *a = cts_json_get(doc, "adapter");
  const struct cts_json *devs = cts_json_get(a, "devices");
  f->loaded = 1;
  snprintf(f->name, sizeof f->name, "%s", cts_json_str(a, "name", ""));
  snprintf(f->version, sizeof f->version, "%s", cts_json_str(a, "version", ""));
  for (size_t d = 0; devs && d < devs->n && d < CTS_MAX_DEVICES; d++) {
    snprintf(f->device[d], sizeof f->device[d], "%s", cts_json_str(&devs->items[d], "name", ""));
    f->available[d] = cts_json_num(&devs->items[d], "available", 0) != 0;
    snprintf(f->reason[d], sizeof f->reason[d], "%s",
             cts_json_str(&devs->items[d], "reason", ""));
    f->n_devices++;
  }
  m->info.adapter_path = cts_json_str(a, "path", "");
  m->info.seed = (unsigned long long)cts_json_num(doc, "seed", 0);
  snprintf(m->info.started, sizeof m->info.started, "%s", cts_json_str(doc, "started", ""));
  const struct cts_json *tool = cts_json_get(doc, "tool");
  snprintf(m->info.spec_version, sizeof m->info.spec_version, "%s",
           cts_json_str(tool, "spec", "unknown"));
  int profile = cts_profile_from_name(cts_json_str(doc, "profile", "standard"));
  m->info.profile = profile < 0 ? CTS_PROFILE_STANDARD : profile;
}

static char *dup_or_null(const char *s) { return s ? cts_xstrdup(s) : NULL; }

static void add_result(struct merge *m, const struct cts_json *r) {
  const struct cts_json *clauses = cts_json_get(r, "clauses");
  struct cts_job j = {
      .name = cts_xstrdup(cts_json_str(r, "case", "?")),
      .path = cts_xstrdup(cts_json_str(r, "path", cts_json_str(r, "case", "?"))),
      .device = -1,
      .device_name = cts_json_str(r, "device", "-"),
      .repeat = (int)cts_json_num(r, "repeat", 0),
      .status = cts_status_from_name(cts_json_str(r, "status", "")),
      .absent = cts_json_num(r, "device_present", 1) == 0,
      .message = cts_xstrdup(cts_json_str(r, "message", "")),
      .output = dup_or_null(cts_json_str(r, "output", NULL)),
      .expected_reason = dup_or_null(cts_json_str(r, "expected", NULL)),
      .graded_by = dup_or_null(cts_json_str(r, "graded_by", NULL)),
      .ms = cts_json_num(r, "duration_ms", 0),
      .family = cts_json_str(r, "family", "?"),
      .n_clauses = clauses ? clauses->n : 0};
  if (j.status < 0) j.status = CTS_ERROR;
  j.family_len = strlen(j.family);
  j.clauses = cts_xcalloc(j.n_clauses, sizeof *j.clauses);
  for (size_t k = 0; k < j.n_clauses; k++)
    j.clauses[k] = clauses->items[k].str ? clauses->items[k].str : "?";
  CTS_PUSH(m->jobs, m->n_jobs, m->cap_jobs, j);
}

/* Parses one report into m. RETURN 0, or -1 with a message. */
static int read_report(struct merge *m, const char *path) {
  char *text = cts_read_file(path, NULL);
  char err[128];
  struct cts_json *doc = &m->docs[m->n_docs];
  if (!text || cts_json_parse(text, doc, err, sizeof err) != 0) {
    fprintf(stderr, "tsm-cts merge: %s: %s\n", path, text ? err : "cannot read");
    free(text);
    return -1;
  }
  free(text);
  m->n_docs++;
  const char *format = cts_json_str(doc, "tsm_cts", "");
  const struct cts_json *results = cts_json_get(doc, "results");
  /* Format 3 only: a Fail of 2.x may be a Warning of 3.x, so the two do not mix. */
  if (strncmp(format, "3.", 2) || !results || results->type != CTS_JSON_ARRAY) {
    fprintf(stderr, "tsm-cts merge: %s: not a tsm-cts report of format 3.x\n", path);
    return -1;
  }
  if (m->n_docs == 1) take_adapter(m, doc);
  m->info.wall_s += cts_json_num(doc, "wall_seconds", 0);
  const char *finished = cts_json_str(doc, "finished", "");
  if (strcmp(finished, m->info.finished) > 0)
    snprintf(m->info.finished, sizeof m->info.finished, "%s", finished);
  for (size_t i = 0; i < results->n; i++) add_result(m, &results->items[i]);
  return 0;
}

/* The order of an unsharded run: family, case, repetition, device. */
static int compare_jobs(const void *pa, const void *pb) {
  const struct cts_job *a = pa, *b = pb;
  int c = strcmp(a->family, b->family);
  if (!c) c = strcmp(a->name, b->name);
  if (!c) c = a->repeat - b->repeat;
  if (!c) c = strcmp(a->device_name, b->device_name);
  return c;
}

static void free_merge(struct merge *m) {
  for (size_t i = 0; i < m->n_jobs; i++) {
    struct cts_job *j = &m->jobs[i];
    free(j->name), free(j->path), free(j->message), free(j->output), free(j->expected_reason);
    free(j->graded_by);
    free(j->clauses);
  }
  free(m->jobs);
  for (size_t i = 0; i < m->n_docs; i++) cts_json_free(&m->docs[i]);
  free(m->docs);
}

int cts_merge(char **inputs, size_t n, const char *json, const char *junit,
              const char *spec_dir) {
  if (n == 0) {
    fprintf(stderr, "tsm-cts merge: name the JSON reports to merge\n");
    return 2;
  }
  struct merge m = {.docs = cts_xcalloc(n, sizeof *m.docs)};
  struct cts_spec spec = {0};
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = read_report(&m, inputs[i]) ? 2 : 0;
  if (rc == 0) {
    char started[32];
    snprintf(started, sizeof started, "%s", m.info.started);
    cts_run_info_begin(&m.info, "");
    snprintf(m.info.started, sizeof m.info.started, "%s", started);
    m.info.shard_index = m.info.shard_count = 1;
    qsort(m.jobs, m.n_jobs, sizeof *m.jobs, compare_jobs);
    /* The score counts MUST clauses: it needs the spec's strengths (the results keep
     * the grading their runs gave them). */
    if (cts_spec_load(&spec, cts_spec_dir(spec_dir)) == 0) cts_grade_begin(&spec, m.info.profile);
    const struct cts_report_paths to = {json, junit};
    rc = cts_write_reports(&to, m.jobs, m.n_jobs, &m.info);
    cts_summary_print(stdout, m.jobs, m.n_jobs, &m.info, &to);
    for (size_t i = 0; i < m.n_jobs && !rc; i++) rc = !cts_status_ok(m.jobs[i].status);
  }
  free_merge(&m);
  cts_grade_begin(NULL, CTS_PROFILE_STANDARD);
  cts_spec_free(&spec);
  return rc;
}
