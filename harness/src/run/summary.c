/*
 * harness/src/run/summary.c: progress lines and the closing summary table (summary.h).
 */
#include "summary.h"

#include "grade.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"
#include "util.h"

/* One family's progress. Borrows name from a job. */
struct family_progress {
  const char *name;
  size_t len, total, done, bad;
};

/* The progress of the run under way: owns families; live when stderr is a terminal. */
static struct {
  struct family_progress *families;
  size_t n, cap, total, done, bad;
  int live;
  double start_ms;
} progress;

static struct family_progress *family_of(const struct cts_job *job) {
  for (size_t i = 0; i < progress.n; i++)
    if (progress.families[i].len == job->family_len &&
        !strncmp(progress.families[i].name, job->family, job->family_len))
      return &progress.families[i];
  struct family_progress f = {.name = job->family, .len = job->family_len};
  CTS_PUSH(progress.families, progress.n, progress.cap, f);
  return &progress.families[progress.n - 1];
}

void cts_progress_begin(const struct cts_job *jobs, size_t n) {
  memset(&progress, 0, sizeof progress);
  progress.live = isatty(2);
  progress.start_ms = cts_now_ms();
  progress.total = n;
  for (size_t i = 0; i < n; i++) family_of(&jobs[i])->total++;
}

void cts_progress_note(const struct cts_job *job) {
  struct family_progress *f = family_of(job);
  int bad = !cts_status_ok(job->status);
  f->done++, f->bad += bad;
  progress.done++, progress.bad += bad;
  double s = (cts_now_ms() - progress.start_ms) / 1000;
  if (progress.live)
    fprintf(stderr, "\r\033[K[%zu/%zu] %zu not ok, %.0f s: %.*s %zu/%zu", progress.done,
            progress.total, progress.bad, s, (int)f->len, f->name, f->done, f->total);
  else if (f->done == f->total)
    fprintf(stderr, "tsm-cts: %-12.*s %5zu runs done, %zu not ok (%.1f s; %zu/%zu in all)\n",
            (int)f->len, f->name, f->total, f->bad, s, progress.done, progress.total);
}

void cts_progress_end(void) {
  if (progress.live && progress.done) fputs("\r\033[K", stderr);
  free(progress.families);
  memset(&progress, 0, sizeof progress);
}

/* ---- the summary ----------------------------------------------------------- */

static const char *const short_status[CTS_N_STATUS] = {
    "Pass", "Fail", "Warn", "Crash", "Timeout", "NotSup", "Skip", "XFail", "XPass", "Error"};

/* RETURN 1 when no job before `i` has the family and device of jobs[i]. */
static int first_of_row(const struct cts_job *jobs, size_t i) {
  for (size_t k = 0; k < i; k++)
    if (!jobs[k].absent && jobs[k].family_len == jobs[i].family_len &&
        !strncmp(jobs[k].family, jobs[i].family, jobs[i].family_len) &&
        !strcmp(jobs[k].device_name, jobs[i].device_name))
      return 0;
  return 1;
}

static void print_row(FILE *out, const struct cts_job *jobs, size_t n, size_t i) {
  int count[CTS_N_STATUS] = {0};
  for (size_t k = i; k < n; k++)
    if (!jobs[k].absent && jobs[k].family_len == jobs[i].family_len &&
        !strncmp(jobs[k].family, jobs[i].family, jobs[i].family_len) &&
        !strcmp(jobs[k].device_name, jobs[i].device_name))
      count[jobs[k].status]++;
  fprintf(out, "  %-12.*s %-16s", (int)jobs[i].family_len, jobs[i].family, jobs[i].device_name);
  for (int s = 0; s < CTS_N_STATUS; s++) fprintf(out, " %7d", count[s]);
  fputc('\n', out);
}

static void print_table(FILE *out, const struct cts_job *jobs, size_t n) {
  fprintf(out, "  %-12s %-16s", "family", "device");
  for (int s = 0; s < CTS_N_STATUS; s++) fprintf(out, " %7s", short_status[s]);
  fputc('\n', out);
  for (size_t i = 0; i < n; i++)
    if (!jobs[i].absent && first_of_row(jobs, i)) print_row(out, jobs, n, i);
  for (size_t i = 0; i < n; i++) {
    if (!jobs[i].absent) continue;
    size_t count = 0, first = 1;
    for (size_t k = 0; k < n; k++)
      if (jobs[k].absent && !strcmp(jobs[k].device_name, jobs[i].device_name))
        count++, first &= k >= i;
    if (first) fprintf(out, "  %s not present: %zu cases not run\n", jobs[i].device_name, count);
  }
}

/* Each result that fails the run: status, file (with the line when the message gives
 * it), device and the message's first line. */
static size_t print_failures(FILE *out, const struct cts_job *jobs, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    const struct cts_job *j = &jobs[i];
    if (cts_status_ok(j->status)) continue;
    const char *m = j->message && *j->message ? j->message : "(no message)";
    size_t len = strcspn(m, "\n");
    int located = !strncmp(m, j->path, strlen(j->path));
    fprintf(out, "  %s [%s] %s%s%.*s\n", cts_status_name(j->status), j->device_name,
            located ? "" : j->path, located ? "" : ": ", (int)len, m);
    bad++;
  }
  return bad;
}

/* Each Warning: the clauses that graded it and the message's first line. */
static void print_warnings(FILE *out, const struct cts_job *jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const struct cts_job *j = &jobs[i];
    if (j->status != CTS_WARNING) continue;
    const char *m = j->message && *j->message ? j->message : "(no message)";
    fprintf(out, "  Warning [%s] %s (%s): %.*s\n", j->device_name, j->path,
            j->graded_by ? j->graded_by : "", (int)strcspn(m, "\n"), m);
  }
}

void cts_summary_print(FILE *out, const struct cts_job *jobs, size_t n,
                       const struct cts_run_info *info, const struct cts_report_paths *to) {
  fprintf(out, "\ntsm-cts summary: adapter %s %s, %zu runs", info->facts.name,
          info->facts.version, n);
  if (info->shard_count > 1) fprintf(out, " (shard %d/%d)", info->shard_index, info->shard_count);
  fputs("\n", out);
  print_table(out, jobs, n);
  fputs("failures:\n", out);
  if (print_failures(out, jobs, n) == 0) fputs("  none\n", out);
  struct cts_score sc = cts_grade_score(jobs, n);
  if (sc.warnings) {
    fputs("warnings (a broken SHOULD, or a TSM rule under --profile standard):\n", out);
    print_warnings(out, jobs, n);
  }
  fprintf(out, "conformance (profile %s): MUST clauses passed %d of %d applicable, %d Warning%s\n",
          cts_profile_name(info->profile), sc.must_passed, sc.must_applicable, sc.warnings,
          sc.warnings == 1 ? "" : "s");
  fprintf(out, "wall time: %.1f s\n", info->wall_s);
  if (to->json) fprintf(out, "JSON report: %s\n", to->json);
  if (to->junit) fprintf(out, "JUnit report: %s\n", to->junit);
}
