/*
 * harness/src/run/report.h: results out (TAP 13 on stdout, JSON, JUnit XML) and known
 * failures in (the adapter's expectations file, spec/adapter.md).
 */
#ifndef CTS_REPORT_H
#define CTS_REPORT_H

#include <stddef.h>

#include "runner.h"

/* The "tsm_cts" field of the JSON report: the version of the report format
 * (harness/schema/results.schema.json), which changes its major number only when a
 * field changes meaning or goes away. 2.0: run id, timestamps, tool, shard, family.
 * 3.0: the Warning status, a result's graded_by and strength, the run's profile and
 * score (a Fail of 2.x may be a Warning now). */
#define CTS_REPORT_FORMAT_VERSION "3.0"

/* What a report says about the run besides its results. Plain data, copied by value;
 * adapter_path is borrowed from the command line. */
struct cts_run_info {
  char run_id[48];
  char started[32], finished[32]; /* UTC, ISO 8601 */
  double wall_s;
  char spec_version[32];
  const char *adapter_path;
  struct cts_adapter_facts facts;
  unsigned long long seed;
  int shard_index, shard_count;
  int profile; /* enum cts_profile */
};

/* Fills the run id, the start time and the spec version (from spec_dir/README.md). */
void cts_run_info_begin(struct cts_run_info *info, const char *spec_dir);
/* Records the end time and the wall time since `start_ms` (cts_now_ms). */
void cts_run_info_end(struct cts_run_info *info, double start_ms);

/* TAP 13 (what TAP::Harness reads), YAML diagnostics under each failure. A job whose
 * device is not present prints no line: cts_tap_end counts them per device in one
 * comment line each. */
void cts_tap_begin(const struct cts_job *jobs, size_t n);
void cts_tap_result(const struct cts_job *job, int number);
/* The closing comments; RETURN the number of results that fail the run. */
int cts_tap_end(const struct cts_job *jobs, size_t n);

int cts_write_json(const char *path, const struct cts_job *jobs, size_t n,
                   const struct cts_run_info *info);
int cts_write_junit(const char *path, const struct cts_job *jobs, size_t n,
                    const struct cts_run_info *info);
/* Where a run's reports go; a NULL path: that report is not written. */
struct cts_report_paths {
  const char *json, *junit;
};
/* The JSON and JUnit reports. RETURN 0, or 2 when one could not be written (with a
 * message). */
int cts_write_reports(const struct cts_report_paths *to, const struct cts_job *jobs, size_t n,
                      const struct cts_run_info *info);

#endif
