/*
 * harness/src/report.c: TAP 14, JSON and JUnit XML writers, and the expectations
 * file (known failures with their reason and reference).
 */
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "util.h"

/* ---- expectations ---------------------------------------------------------- */

/* One line of the expectations file. Owns its strings; `known` owns the entries until
 * cts_expectations_free. */
struct expectation {
  char *name, *device, *reason;
  int status;
};

static struct expectation *known;
static size_t n_known, cap_known;

int cts_expectations_load(const char *path, int optional) {
  char *text = cts_read_file(path, NULL);
  if (!text) {
    if (optional) return 0;
    fprintf(stderr, "%s: cannot read the expectations file\n", path);
    return -1;
  }
  int line = 0, rc = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    line++;
    while (isspace((unsigned char)*l)) l++;
    if (!*l || *l == '#') continue;
    char name[512], device[128], status[64];
    int used = 0;
    if (sscanf(l, "%511s %127s %63s %n", name, device, status, &used) < 3) {
      fprintf(stderr, "%s:%d: expected 'case device status reason | reference'\n", path, line);
      rc = -1;
      continue;
    }
    int st = cts_status_from_name(status);
    if (st != CTS_FAIL && st != CTS_CRASH && st != CTS_TIMEOUT && st != CTS_ERROR) {
      fprintf(stderr, "%s:%d: status must be Fail, Crash, Timeout or Error\n", path, line);
      rc = -1;
      continue;
    }
    const char *reason = l + used;
    if (!*reason) {
      fprintf(stderr, "%s:%d: a known failure needs its reason and reference\n", path, line);
      rc = -1;
      continue;
    }
    struct expectation e = {cts_xstrdup(name), cts_xstrdup(device), cts_xstrdup(reason), st};
    CTS_PUSH(known, n_known, cap_known, e);
  }
  free(text);
  return rc;
}

void cts_expectations_free(void) {
  for (size_t i = 0; i < n_known; i++) {
    free(known[i].name);
    free(known[i].device);
    free(known[i].reason);
  }
  free(known);
  known = NULL;
  n_known = cap_known = 0;
}

void cts_apply_expectation(struct cts_job *job) {
  for (size_t i = 0; i < n_known; i++) {
    const struct expectation *e = &known[i];
    if (strcmp(e->name, job->name) != 0) continue;
    if (strcmp(e->device, "*") != 0 && strcmp(e->device, job->device_name) != 0) continue;
    job->expected_reason = cts_xstrdup(e->reason);
    if (job->status == e->status)
      job->status = CTS_XFAIL;
    else if (job->status == CTS_PASS)
      job->status = CTS_XPASS;
    return;
  }
}

/* ---- TAP 14 ---------------------------------------------------------------- */

void cts_tap_begin(size_t n) {
  printf("TAP version 14\n1..%zu\n", n);
  fflush(stdout);
}

static void yaml_block(const char *key, const char *text) {
  printf("    %s: |-\n", key);
  const char *p = text;
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    printf("      %.*s\n", (int)len, p);
    if (!nl) break;
    p = nl + 1;
  }
}

static void clause_list(FILE *f, const struct cts_job *job) {
  fputc('[', f);
  for (size_t i = 0; job->c && i < job->c->n_clauses; i++)
    fprintf(f, "%s%s", i ? ", " : "", job->c->clauses[i]);
  fputc(']', f);
}

void cts_tap_result(const struct cts_job *job, int number) {
  char label[700];
  if (job->repeat > 0)
    snprintf(label, sizeof label, "%s [%s] #%d", job->name, job->device_name, job->repeat + 1);
  else
    snprintf(label, sizeof label, "%s [%s]", job->name, job->device_name);
  const char *msg = job->message ? job->message : "";
  switch (job->status) {
    case CTS_PASS:
      printf("ok %d - %s\n", number, label);
      break;
    case CTS_NOTSUPPORTED:
    case CTS_SKIP: {
      const char *nl = strchr(msg, '\n');
      printf("ok %d - %s # SKIP %s: %.*s\n", number, label, cts_status_name(job->status),
             nl ? (int)(nl - msg) : (int)strlen(msg), msg);
      break;
    }
    case CTS_XFAIL:
      printf("not ok %d - %s # TODO XFail: %s\n", number, label,
             job->expected_reason ? job->expected_reason : "");
      break;
    default:
      printf("not ok %d - %s\n", number, label);
      printf("  ---\n    status: %s\n    case: %s\n    device: %s\n    clauses: ",
             cts_status_name(job->status), job->path, job->device_name);
      clause_list(stdout, job);
      printf("\n");
      if (job->status == CTS_XPASS)
        yaml_block("message", "listed as a known failure, but passed: remove it from the "
                              "expectations file");
      else
        yaml_block("message", msg);
      if (job->output && *job->output) yaml_block("output", job->output);
      printf("  ...\n");
  }
  fflush(stdout);
}

int cts_tap_end(const struct cts_job *jobs, size_t n) {
  int count[CTS_N_STATUS] = {0};
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    count[jobs[i].status]++;
    bad += !cts_status_ok(jobs[i].status);
  }
  printf("#");
  for (int s = 0; s < CTS_N_STATUS; s++) printf(" %s %d%s", cts_status_name(s), count[s],
                                               s + 1 < CTS_N_STATUS ? "," : "\n");
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

static void json_adapter(FILE *o, const struct cts_adapter_facts *f, const char *adapter_path) {
  fprintf(o, "  \"adapter\": {\"name\": ");
  cts_json_string(o, f->loaded ? f->name : "");
  fprintf(o, ", \"version\": ");
  cts_json_string(o, f->loaded ? f->version : "");
  fprintf(o, ", \"path\": ");
  cts_json_string(o, adapter_path);
  fprintf(o, ", \"devices\": [");
  for (int d = 0; d < f->n_devices; d++) {
    fprintf(o, "%s{\"name\": ", d ? ", " : "");
    cts_json_string(o, f->device[d]);
    fprintf(o, ", \"available\": %s, \"reason\": ", f->available[d] ? "true" : "false");
    cts_json_string(o, f->available[d] ? "" : f->reason[d]);
    fprintf(o, "}");
  }
  fprintf(o, "]},\n");
}

static void json_result(FILE *o, const struct cts_job *j) {
  fprintf(o, "    {\"case\": ");
  cts_json_string(o, j->name);
  fprintf(o, ", \"device\": ");
  cts_json_string(o, j->device_name);
  fprintf(o, ", \"repeat\": %d, \"status\": \"%s\", \"message\": ", j->repeat,
          cts_status_name(j->status));
  cts_json_string(o, j->message);
  if (j->expected_reason) {
    fprintf(o, ", \"expected\": ");
    cts_json_string(o, j->expected_reason);
  }
  if (j->output && *j->output) {
    fprintf(o, ", \"output\": ");
    cts_json_string(o, j->output);
  }
  fprintf(o, ", \"clauses\": ");
  json_string_list(o, j->c ? j->c->clauses : NULL, j->c ? j->c->n_clauses : 0);
  fprintf(o, ", \"duration_ms\": %.3f}", j->ms);
}

int cts_write_json(const char *path, const struct cts_job *jobs, size_t n,
                   const struct cts_adapter_facts *f, const char *adapter_path,
                   unsigned long long seed) {
  FILE *o = fopen(path, "w");
  if (!o) return -1;
  fprintf(o, "{\n  \"tsm_cts\": \"%s\",\n  \"seed\": %llu,\n", CTS_REPORT_FORMAT_VERSION, seed);
  json_adapter(o, f, adapter_path);
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
  fprintf(o, "}\n}\n");
  return fclose(o) == 0 ? 0 : -1;
}

/* ---- JUnit XML ------------------------------------------------------------- */

/* The suite of a case is its first folder: managers, scopes, dlpack, graphs. */
static size_t suite_len(const char *name) {
  const char *slash = strchr(name, '/');
  return slash ? (size_t)(slash - name) : strlen(name);
}

/* The JUnit element a status becomes inside <testcase>, or NULL for a pass. */
static const char *junit_tag(int status) {
  switch (status) {
    case CTS_FAIL: return "failure";
    case CTS_CRASH: case CTS_TIMEOUT: case CTS_ERROR: case CTS_XPASS: return "error";
    case CTS_NOTSUPPORTED: case CTS_SKIP: case CTS_XFAIL: return "skipped";
    default: return NULL;
  }
}

/* `<property name="NAME" value="VALUE"/>` on a line of its own, indented. */
static void junit_property(FILE *o, const char *indent, const char *name, const char *value) {
  fprintf(o, "%s<property name=\"%s\" value=\"", indent, name);
  cts_xml_escaped(o, value);
  fprintf(o, "\"/>\n");
}

/* The <failure>, <error> or <skipped> element: its message attribute is the first line. */
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
  fprintf(o, "\" type=\"%s\">", cts_status_name(j->status));
  cts_xml_escaped(o, m);
  fprintf(o, "</%s>\n", tag);
}

static void junit_testcase(FILE *o, const struct cts_job *j, const char *suite) {
  char label[700];
  if (j->repeat > 0)
    snprintf(label, sizeof label, "%s [%s] #%d", j->name, j->device_name, j->repeat + 1);
  else
    snprintf(label, sizeof label, "%s [%s]", j->name, j->device_name);
  fprintf(o, "    <testcase name=\"");
  cts_xml_escaped(o, label);
  fprintf(o, "\" classname=\"");
  cts_xml_escaped(o, suite);
  fprintf(o, "\" file=\"");
  cts_xml_escaped(o, j->path);
  fprintf(o, "\" time=\"%.3f\">\n      <properties>\n", j->ms / 1000);
  junit_property(o, "        ", "device", j->device_name);
  junit_property(o, "        ", "status", cts_status_name(j->status));
  for (size_t k = 0; j->c && k < j->c->n_clauses; k++)
    junit_property(o, "        ", "clause", j->c->clauses[k]);
  fprintf(o, "      </properties>\n");
  junit_outcome(o, j);
  if (j->output && *j->output) {
    fprintf(o, "      <system-out>");
    cts_xml_escaped(o, j->output);
    fprintf(o, "</system-out>\n");
  }
  fprintf(o, "    </testcase>\n");
}

/* One <testsuite> for jobs [first, end), which share a suite. RETURN end. */
static size_t junit_suite(FILE *o, const struct cts_job *jobs, size_t first, size_t n,
                          const struct cts_adapter_facts *f, unsigned long long seed) {
  size_t len = suite_len(jobs[first].name);
  size_t end = first;
  while (end < n && suite_len(jobs[end].name) == len &&
         strncmp(jobs[end].name, jobs[first].name, len) == 0)
    end++;
  char suite[256];
  snprintf(suite, sizeof suite, "%.*s", (int)len, jobs[first].name);
  fprintf(o, "  <testsuite name=\"");
  cts_xml_escaped(o, suite);
  fprintf(o, "\" tests=\"%zu\">\n    <properties>\n", end - first);
  junit_property(o, "      ", "adapter", f->name);
  fprintf(o, "      <property name=\"seed\" value=\"%llu\"/>\n    </properties>\n", seed);
  for (size_t i = first; i < end; i++) junit_testcase(o, &jobs[i], suite);
  fprintf(o, "  </testsuite>\n");
  return end;
}

int cts_write_junit(const char *path, const struct cts_job *jobs, size_t n,
                    const struct cts_adapter_facts *f, unsigned long long seed) {
  FILE *o = fopen(path, "w");
  if (!o) return -1;
  int failures = 0, errors = 0, skipped = 0;
  double total = 0;
  for (size_t i = 0; i < n; i++) {
    const char *tag = junit_tag(jobs[i].status);
    failures += tag && !strcmp(tag, "failure");
    errors += tag && !strcmp(tag, "error");
    skipped += tag && !strcmp(tag, "skipped");
    total += jobs[i].ms;
  }
  fprintf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(o, "<testsuites name=\"tsm-cts\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" "
             "skipped=\"%d\" time=\"%.3f\">\n", n, failures, errors, skipped, total / 1000);
  for (size_t i = 0; i < n;) i = junit_suite(o, jobs, i, n, f, seed);
  fprintf(o, "</testsuites>\n");
  return fclose(o) == 0 ? 0 : -1;
}
