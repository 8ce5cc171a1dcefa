/*
 * harness/src/run/expectations.h: the expectations file, an adapter's known failures with
 * their reason and upstream reference (harness/expectations/README.md), and
 * `tsm-cts baseline`, which writes one from a run.
 */
#ifndef CTS_EXPECTATIONS_H
#define CTS_EXPECTATIONS_H

#include "runner.h"

/* Loads `path`; returns 0, or -1 with a message on stderr naming file:line. A
 * missing file is no error when `optional`. */
int cts_expectations_load(const char *path, int optional);
void cts_expectations_free(void);
/* The first line whose case and device patterns (shell globs) match: a listed failure
 * becomes XFail and a listed case that passed XPass. */
void cts_apply_expectation(struct cts_job *job);
/* After a run: warns on stderr about each stale line (it matched no case, when the run
 * was the whole library on every device; or no case it matched failed as it says) and
 * each reason still the baseline's placeholder. RETURN how many it warned about. */
int cts_expectations_warn_stale(int whole_library);

/* `tsm-cts baseline RESULTS.json [-o FILE]`: an expectations file listing every run of
 * the report that failed, each with a placeholder reason the author must replace.
 * RETURN the exit status. */
int cts_baseline_main(const char *results_json, const char *out_path);

#endif
