/*
 * harness/src/run/report.c: the TAP 13, JSON (harness/schema/results.schema.json) and
 * JUnit XML (junit-10) writers and the run's identity. Whatever text they write (an adapter's
 * output and names, a file's name) comes out strict UTF-8, with no control character
 * that could start a TAP line or break an XML 1.0 parser.
 */
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "grade.h"
#include "tsm/adapter.h"
#include "util.h"

/* ---- run identity ---------------------------------------------------------- */

static void utc_now(char *out, size_t n) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The `Spec version **X.Y**` line of the spec's README.md, or "unknown". */
static void read_spec_version(const char *spec_dir, char *out, size_t n) {
  char path[4200];
  snprintf(path, sizeof path, "%s/README.md", spec_dir);
  char *text = cts_read_file(path, NULL);
  const char *at = text ? strstr(text, "Spec version **") : NULL;
  unsigned major = 0, minor = 0;
  if (at && sscanf(at, "Spec version **%u.%u**", &major, &minor) == 2)
    snprintf(out, n, "%u.%u", major, minor);
  else
    snprintf(out, n, "unknown");
  free(text);
}

void cts_run_info_begin(struct cts_run_info *info, const char *spec_dir) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  utc_now(info->started, sizeof info->started);
  snprintf(info->run_id, sizeof info->run_id, "%lx-%lx-%x", (unsigned long)ts.tv_sec,
           (unsigned long)ts.tv_nsec, (unsigned)getpid());
  read_spec_version(spec_dir, info->spec_version, sizeof info->spec_version);
}

void cts_run_info_end(struct cts_run_info *info, double start_ms) {
  utc_now(info->finished, sizeof info->finished);
  info->wall_s = (cts_now_ms() - start_ms) / 1000;
}

/* ---- TAP 13 ---------------------------------------------------------------- */

void cts_tap_begin(const struct cts_job *jobs, size_t n) {
  size_t shown = 0;
  for (size_t i = 0; i < n; i++) shown += !jobs[i].absent;
  printf("TAP version 13\n1..%zu\n", shown);
  fflush(stdout);
}

/* The label of a result: "case [device]", "(repeat N)" after the first repetition. */
static void job_label(const struct cts_job *job, char *out, size_t n) {
  if (job->repeat > 0)
    snprintf(out, n, "%s [%s] (repeat %d)", job->name, job->device_name, job->repeat + 1);
  else
    snprintf(out, n, "%s [%s]", job->name, job->device_name);
}

/* How tap_put writes one line of text: in a test line's description (where '#' and '\'
 * are escaped so that no part reads as a directive, and a line break is "\n"), in a YAML
 * single-quoted scalar (a quote doubled, a line break a space), or in a YAML block line. */
enum tap_context { TAP_DESCRIPTION, TAP_YAML_QUOTED, TAP_YAML_BLOCK };

/* Writes len bytes of s (less at a NUL) for `context`. Whatever the text (an adapter's
 * output, a file's name), it stays on its line: a carriage return or any other control
 * character is written as \xNN and a byte that is not UTF-8 as U+FFFD, so that no text
 * can start a TAP line of its own or move the cursor of the terminal showing it. */
/* One byte of a one-byte sequence, as tap_put writes it in context. */
static void tap_put_byte(unsigned char c, enum tap_context context) {
  if (c == '\n') fputs(context == TAP_DESCRIPTION ? "\\n" : " ", stdout);
  else if ((c < 0x20 && c != '\t') || c == 0x7f) printf("\\x%02x", c);
  else if (context == TAP_DESCRIPTION && (c == '#' || c == '\\')) printf("\\%c", c);
  else if (context == TAP_YAML_QUOTED && c == '\'') fputs("''", stdout);
  else putchar(c);
}

static void tap_put(const char *s, size_t len, enum tap_context context) {
  const unsigned char *p = (const unsigned char *)s;
  const unsigned char *end = p + len;
  while (p < end && *p) {
    size_t n = cts_utf8_sequence(p);
    if (n == 0 || p + n > end) {
      fputs(CTS_REPLACEMENT_CHARACTER, stdout);
      p++;
      continue;
    }
    if (n > 1)
      fwrite(p, 1, n, stdout);
    else
      tap_put_byte(*p, context);
    p += n;
  }
}

static void tap_escaped(const char *s, size_t len) { tap_put(s, len, TAP_DESCRIPTION); }

static void yaml_quoted(const char *s) {
  putchar('\'');
  tap_put(s, strlen(s), TAP_YAML_QUOTED);
  putchar('\'');
}

/* A YAML literal block, `|` (TAP::Parser's YAMLish reads no `|-`); an empty text is ''
 * (a block needs a line). */
static void yaml_block(const char *key, const char *text) {
  if (!*text) {
    printf("    %s: ''\n", key);
    return;
  }
  printf("    %s: |\n", key);
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    fputs("      ", stdout);
    tap_put(p, len, TAP_YAML_BLOCK);
    putchar('\n');
    if (!nl) break;
    p = nl + 1;
  }
}

/* The YAML diagnostics of a result that is not ok. */
static void tap_diagnostics(const struct cts_job *job, const char *msg) {
  printf("  ---\n    status: %s\n    case: ", cts_status_name(job->status));
  yaml_quoted(job->path);
  printf("\n    device: ");
  yaml_quoted(job->device_name);
  printf("\n    clauses:\n");
  for (size_t i = 0; i < job->n_clauses; i++) printf("      - %s\n", job->clauses[i]);
  if (job->graded_by) {
    printf("    graded_by: ");
    yaml_quoted(job->graded_by);
    printf("\n    profile: %s\n", cts_profile_name(cts_grade_profile()));
  }
  if (job->expected_reason) {
    printf("    expected: ");
    yaml_quoted(job->expected_reason);
    putchar('\n');
  }
  if (job->status == CTS_XPASS)
    yaml_block("message", "listed as a known failure, but passed: remove it from the "
                          "expectations file");
  else
    yaml_block("message", msg);
  if (job->output && *job->output) yaml_block("output", job->output);
  printf("  ...\n");
}

/* The test line's directive: SKIP with the first line of the reason for a result that
 * did not run, TODO with the known failure's reason for an XFail, else none. */
static void tap_directive(const struct cts_job *job, const char *msg) {
  if (job->status == CTS_NOTSUPPORTED || job->status == CTS_SKIP) {
    const char *nl = strchr(msg, '\n');
    printf(" # SKIP %s: ", cts_status_name(job->status));
    tap_escaped(msg, nl ? (size_t)(nl - msg) : strlen(msg));
  } else if (job->status == CTS_XFAIL) {
    printf(" # TODO XFail: ");
    const char *reason = job->expected_reason ? job->expected_reason : "";
    tap_escaped(reason, strlen(reason));
  }
}

/* A Pass may say what it observed (the variant of a MAY clause): a comment per line. */
static void tap_comments(const char *msg) {
  for (const char *at = msg; *at;) {
    const char *nl = strchr(at, '\n');
    size_t n = nl ? (size_t)(nl - at) : strlen(at);
    printf("# %.*s\n", (int)n, at);
    at += nl ? n + 1 : n;
  }
}

void cts_tap_result(const struct cts_job *job, int number) {
  if (job->absent) return;
  char label[700];
  job_label(job, label, sizeof label);
  const char *msg = job->message ? job->message : "";
  int ok = job->status == CTS_PASS || job->status == CTS_WARNING ||
           job->status == CTS_NOTSUPPORTED || job->status == CTS_SKIP;
  printf("%s %d - ", ok ? "ok" : "not ok", number);
  tap_escaped(label, strlen(label));
  tap_directive(job, msg);
  putchar('\n');
  if (job->status == CTS_PASS) tap_comments(msg);
  /* A Warning is an ok line with its diagnostics: counted apart, never failing. */
  if ((!ok && job->status != CTS_XFAIL) || job->status == CTS_WARNING) tap_diagnostics(job, msg);
  fflush(stdout);
}

/* One comment per device that is not present: how many runs it did not get. */
static void tap_absent_devices(const struct cts_job *jobs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!jobs[i].absent) continue;
    int first = 1, count = 0;
    for (size_t k = 0; k < n; k++) {
      if (!jobs[k].absent || strcmp(jobs[k].device_name, jobs[i].device_name)) continue;
      first &= k >= i;
      count++;
    }
    if (first)
      printf("# %s not present: %d cases not run (recorded as NotSupported in the JSON "
             "report)\n", jobs[i].device_name, count);
  }
}

int cts_tap_end(const struct cts_job *jobs, size_t n) {
  int count[CTS_N_STATUS] = {0};
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    count[jobs[i].status]++;
    bad += !cts_status_ok(jobs[i].status);
  }
  tap_absent_devices(jobs, n);
  printf("#");
  for (int s = 0; s < CTS_N_STATUS; s++) printf(" %s %d%s", cts_status_name(s), count[s],
                                               s + 1 < CTS_N_STATUS ? "," : "\n");
  struct cts_score sc = cts_grade_score(jobs, n);
  printf("# profile %s: MUST clauses passed %d of %d applicable, %d Warning%s\n",
         cts_profile_name(cts_grade_profile()), sc.must_passed, sc.must_applicable, sc.warnings,
         sc.warnings == 1 ? "" : "s");
  fflush(stdout);
  return bad;
}

/* ---- JSON ------------------------------------------------------------------ */

/* A JSON array of strings. */
static void json_string_list(FILE *o, char **items, size_t n) {
  fprintf(o, "[");
  for (size_t k = 0; k < n; k++) {
    fprintf(o, "%s", k ? ", " : "");
    cts_json_string(o, items[k]);
  }
  fprintf(o, "]");
}

/* `"key": "value"` with the value escaped, after `sep`. */
static void json_field(FILE *o, const char *sep, const char *key, const char *value) {
  fprintf(o, "%s\"%s\": ", sep, key);
  cts_json_string(o, value);
}

static void json_adapter(FILE *o, const struct cts_run_info *info) {
  const struct cts_adapter_facts *f = &info->facts;
  json_field(o, "  \"adapter\": {", "name", f->loaded ? f->name : "");
  json_field(o, ", ", "version", f->loaded ? f->version : "");
  json_field(o, ", ", "path", info->adapter_path ? info->adapter_path : "");
  fprintf(o, ", \"devices\": [");
  for (int d = 0; d < f->n_devices; d++) {
    json_field(o, d ? ", {" : "{", "name", f->device[d]);
    fprintf(o, ", \"available\": %s", f->available[d] ? "true" : "false");
    json_field(o, ", ", "reason", f->available[d] ? "" : f->reason[d]);
    fprintf(o, "}");
  }
  fprintf(o, "]},\n");
}

static void json_header(FILE *o, const struct cts_run_info *info) {
  fprintf(o, "{\n  \"tsm_cts\": \"%s\",\n", CTS_REPORT_FORMAT_VERSION);
  json_field(o, "  ", "run_id", info->run_id);
  json_field(o, ",\n  ", "started", info->started);
  json_field(o, ",\n  ", "finished", info->finished);
  fprintf(o, ",\n  \"wall_seconds\": %.3f,\n", info->wall_s);
  fprintf(o, "  \"tool\": {\"name\": \"tsm-cts\", \"abi\": \"%d.%d\", \"report_format\": \"%s\", ",
          TSM_ADAPTER_ABI_MAJOR, TSM_ADAPTER_ABI_MINOR, CTS_REPORT_FORMAT_VERSION);
  json_field(o, "", "spec", info->spec_version);
  fprintf(o, "},\n  \"seed\": %llu,\n", info->seed);
  fprintf(o, "  \"shard\": {\"index\": %d, \"count\": %d},\n", info->shard_index,
          info->shard_count);
  fprintf(o, "  \"profile\": \"%s\",\n", cts_profile_name(info->profile));
  json_adapter(o, info);
}

static void json_result(FILE *o, const struct cts_job *j) {
  json_field(o, "    {", "case", j->name);
  char *family = cts_xstrndup(j->family, j->family_len);
  json_field(o, ", ", "family", family);
  free(family);
  json_field(o, ", ", "path", j->path);
  json_field(o, ", ", "device", j->device_name);
  fprintf(o, ", \"device_present\": %s", j->absent ? "false" : "true");
  fprintf(o, ", \"repeat\": %d, \"status\": \"%s\"", j->repeat, cts_status_name(j->status));
  json_field(o, ", ", "message", j->message ? j->message : "");
  if (j->expected_reason) json_field(o, ", ", "expected", j->expected_reason);
  if (j->graded_by) json_field(o, ", ", "graded_by", j->graded_by);
  if (j->output && *j->output) json_field(o, ", ", "output", j->output);
  fprintf(o, ", \"clauses\": ");
  json_string_list(o, j->clauses, j->n_clauses);
  fprintf(o, ", \"duration_ms\": %.3f}", j->ms);
}

int cts_write_json(const char *path, const struct cts_job *jobs, size_t n,
                   const struct cts_run_info *info) {
  FILE *o = fopen(path, "w");
  if (!o) return -1;
  json_header(o, info);
  fprintf(o, "  \"results\": [\n");
  int count[CTS_N_STATUS] = {0};
  for (size_t i = 0; i < n; i++) {
    count[jobs[i].status]++;
    json_result(o, &jobs[i]);
    fprintf(o, "%s\n", i + 1 < n ? "," : "");
  }
  fprintf(o, "  ],\n  \"summary\": {");
  for (int s = 0; s < CTS_N_STATUS; s++)
    fprintf(o, "\"%s\": %d%s", cts_status_name(s), count[s], s + 1 < CTS_N_STATUS ? ", " : "");
  struct cts_score sc = cts_grade_score(jobs, n);
  fprintf(o, "},\n  \"score\": {\"must_applicable\": %d, \"must_passed\": %d, "
             "\"warnings\": %d}\n}\n", sc.must_applicable, sc.must_passed, sc.warnings);
  return fclose(o) == 0 ? 0 : -1;
}

/* The --json and --junit reports. RETURN 0, or 2 when one could not be written. */
int cts_write_reports(const struct cts_report_paths *to, const struct cts_job *jobs, size_t n,
                      const struct cts_run_info *info) {
  int rc = 0;
  if (to->json && cts_write_json(to->json, jobs, n, info) != 0) {
    fprintf(stderr, "tsm-cts: cannot write %s\n", to->json);
    rc = 2;
  }
  if (to->junit && cts_write_junit(to->junit, jobs, n, info) != 0) {
    fprintf(stderr, "tsm-cts: cannot write %s\n", to->junit);
    rc = 2;
  }
  return rc;
}

/* ---- JUnit XML (the Jenkins xunit plugin's junit-10 schema) ----------------- */

/* The JUnit element a status becomes inside <testcase>, or NULL for a pass. */
static const char *junit_tag(int status) {
  switch (status) {
    case CTS_FAIL: return "failure";
    case CTS_CRASH: case CTS_TIMEOUT: case CTS_ERROR: case CTS_XPASS: return "error";
    case CTS_NOTSUPPORTED: case CTS_SKIP: case CTS_XFAIL: return "skipped";
    default: return NULL;
  }
}

/* Counts of jobs [first, end) by JUnit element, and their time in seconds. */
struct junit_counts {
  size_t tests;
  int failures, errors, skipped;
  double seconds;
};

static struct junit_counts junit_count(const struct cts_job *jobs, size_t first, size_t end) {
  struct junit_counts c = {.tests = end - first};
  for (size_t i = first; i < end; i++) {
    const char *tag = junit_tag(jobs[i].status);
    c.failures += tag && !strcmp(tag, "failure");
    c.errors += tag && !strcmp(tag, "error");
    c.skipped += tag && !strcmp(tag, "skipped");
    c.seconds += jobs[i].ms / 1000;
  }
  return c;
}

/* The <failure>, <error> or <skipped> element: its message attribute is the first line,
 * its type (not on <skipped>) the status. */
static void junit_outcome(FILE *o, const struct cts_job *j) {
  const char *tag = junit_tag(j->status);
  if (!tag) return;
  fprintf(o, "      <%s message=\"", tag);
  char first[512];
  const char *m = j->status == CTS_XFAIL && j->expected_reason ? j->expected_reason
                  : j->message                                ? j->message
                                                              : "";
  snprintf(first, sizeof first, "%s: %s", cts_status_name(j->status), m);
  char *nl = strchr(first, '\n');
  if (nl) *nl = '\0';
  cts_xml_escaped(o, first);
  /* junit-10 gives <skipped> a message only. */
  if (strcmp(tag, "skipped")) fprintf(o, "\" type=\"%s", cts_status_name(j->status));
  fprintf(o, "\">");
  cts_xml_escaped(o, m);
  fprintf(o, "</%s>\n", tag);
}

/* A <testcase>: junit-10 allows no properties there, so the case file, device and
 * clauses go into its system-out, ahead of what the case process printed. */
static void junit_testcase(FILE *o, const struct cts_job *j, const char *suite, int profile) {
  char label[700];
  job_label(j, label, sizeof label);
  fprintf(o, "    <testcase name=\"");
  cts_xml_escaped(o, label);
  fprintf(o, "\" classname=\"");
  cts_xml_escaped(o, suite);
  fprintf(o, "\" status=\"%s\" time=\"%.3f\">\n", cts_status_name(j->status), j->ms / 1000);
  junit_outcome(o, j);
  fprintf(o, "      <system-out>case: ");
  cts_xml_escaped(o, j->path);
  fprintf(o, "\ndevice: ");
  cts_xml_escaped(o, j->device_name);
  fprintf(o, "\nclauses:");
  for (size_t k = 0; k < j->n_clauses; k++) fprintf(o, " %s", j->clauses[k]);
  fprintf(o, "\n");
  if (j->status == CTS_WARNING) { /* junit-10 has no warning element: a pass that says so */
    fprintf(o, "warning (");
    cts_xml_escaped(o, j->graded_by ? j->graded_by : "");
    fprintf(o, "; profile %s): ", cts_profile_name(profile));
    cts_xml_escaped(o, j->message ? j->message : "");
    fprintf(o, "\n");
  }
  if (j->output && *j->output) cts_xml_escaped(o, j->output);
  fprintf(o, "</system-out>\n    </testcase>\n");
}

/* One <testsuite> for jobs [first, end), which share a family. RETURN end. */
static size_t junit_suite(FILE *o, const struct cts_job *jobs, size_t first, size_t n,
                          const struct cts_run_info *info) {
  size_t end = first;
  while (end < n && jobs[end].family_len == jobs[first].family_len &&
         !strncmp(jobs[end].family, jobs[first].family, jobs[first].family_len))
    end++;
  char suite[256];
  snprintf(suite, sizeof suite, "%.*s", (int)jobs[first].family_len, jobs[first].family);
  struct junit_counts c = junit_count(jobs, first, end);
  fprintf(o, "  <testsuite name=\"");
  cts_xml_escaped(o, suite);
  fprintf(o, "\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\" "
             "timestamp=\"%.19s\">\n    <properties>\n", c.tests, c.failures, c.errors,
          c.skipped, c.seconds, info->started);
  fprintf(o, "      <property name=\"adapter\" value=\"");
  cts_xml_escaped(o, info->facts.name);
  fprintf(o, "\"/>\n      <property name=\"seed\" value=\"%llu\"/>\n", info->seed);
  int warnings = 0;
  for (size_t i = first; i < end; i++) warnings += jobs[i].status == CTS_WARNING;
  fprintf(o, "      <property name=\"profile\" value=\"%s\"/>\n", cts_profile_name(info->profile));
  fprintf(o, "      <property name=\"warnings\" value=\"%d\"/>\n", warnings);
  fprintf(o, "      <property name=\"run_id\" value=\"%s\"/>\n    </properties>\n",
          info->run_id);
  for (size_t i = first; i < end; i++) junit_testcase(o, &jobs[i], suite, info->profile);
  fprintf(o, "  </testsuite>\n");
  return end;
}

int cts_write_junit(const char *path, const struct cts_job *jobs, size_t n,
                    const struct cts_run_info *info) {
  FILE *o = fopen(path, "w");
  if (!o) return -1;
  struct junit_counts c = junit_count(jobs, 0, n);
  fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(o, "<testsuites name=\"tsm-cts\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" "
             "time=\"%.3f\">\n", c.tests, c.failures, c.errors, c.seconds);
  for (size_t i = 0; i < n;) i = junit_suite(o, jobs, i, n, info);
  fprintf(o, "</testsuites>\n");
  return fclose(o) == 0 ? 0 : -1;
}
