/*
 * harness/src/tools/merge.h: `tsm-cts merge`: the JSON reports of several runs (the shards
 * of one run, or the judge's and the Python bridge's) joined into one JSON report,
 * one JUnit report and one summary.
 */
#ifndef CTS_MERGE_H
#define CTS_MERGE_H

#include <stddef.h>

/* Reads inputs[0..n) (format 3.x); writes json and junit when not NULL; prints the
 * summary on stdout, with the score counted against the spec under spec_dir (NULL: the
 * default, cts_spec_dir). RETURN 0, 1 when a merged result fails the run, 2 when an input cannot be
 * read or a report cannot be written. */
int cts_merge(char **inputs, size_t n, const char *json, const char *junit,
              const char *spec_dir);

#endif
