/*
 * harness/src/report.h: results out (TAP 14 on stdout, JSON, JUnit XML) and known
 * failures in (the adapter's expectations file, spec/adapter.md).
 */
#ifndef CTS_REPORT_H
#define CTS_REPORT_H

#include <stddef.h>

#include "runner.h"

/* The "tsm_cts" field of the JSON report: the version of the report format, which
 * changes only when a field changes meaning or goes away. */
#define CTS_REPORT_FORMAT_VERSION "1.0"

/* Loads `path`; returns 0, or -1 with a message on stderr naming file:line. A
 * missing file is no error when `optional`. */
int cts_expectations_load(const char *path, int optional);
void cts_expectations_free(void);
/* Turns a listed failure into XFail and a listed case that passed into XPass. */
void cts_apply_expectation(struct cts_job *job);

void cts_tap_begin(size_t n);
void cts_tap_result(const struct cts_job *job, int number);
/* The closing comment; RETURN the number of results that fail the run. */
int cts_tap_end(const struct cts_job *jobs, size_t n);

int cts_write_json(const char *path, const struct cts_job *jobs, size_t n,
                   const struct cts_adapter_facts *f, const char *adapter_path,
                   unsigned long long seed);
int cts_write_junit(const char *path, const struct cts_job *jobs, size_t n,
                    const struct cts_adapter_facts *f, unsigned long long seed);

#endif
