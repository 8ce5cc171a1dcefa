/*
 * harness/src/run/summary.h: what a person watching a run sees on stderr: progress while
 * it runs (a live line on a terminal, a line per finished family otherwise) and, at
 * the end, the summary table (family x device x status), every failure with its
 * file:line and message, the wall time and where the reports went.
 */
#ifndef CTS_SUMMARY_H
#define CTS_SUMMARY_H

#include <stdio.h>

#include "report.h"

/* Starts counting the families of jobs[0..n) (borrowed until cts_progress_end). */
void cts_progress_begin(const struct cts_job *jobs, size_t n);
/* Called once per finished job. */
void cts_progress_note(const struct cts_job *job);
void cts_progress_end(void);

/* The summary table of jobs[0..n), then the reports' paths (NULL ones left out). */
void cts_summary_print(FILE *out, const struct cts_job *jobs, size_t n,
                       const struct cts_run_info *info, const struct cts_report_paths *to);

#endif
