/*
 * harness/src/run/grade.h: what a failed check means, by the strength of the clause it breaks
 * (spec/README.md, "Strengths"): a broken MUST (or a behaviour outside a MAY's variants)
 * is a Fail, a broken SHOULD a Warning, a broken TSM rule a Fail under --profile strict
 * and a Warning under --profile standard. A failure's clauses are those its message
 * names, else those the comment of the statement it stopped at names, else those its
 * case cites.
 */
#ifndef CTS_GRADE_H
#define CTS_GRADE_H

#include "runner.h"
#include "spec_index.h"

/* The spec whose strengths grade this run's results, and the profile. Borrows spec for
 * the run's length. */
void cts_grade_begin(const struct cts_spec *spec, int profile);
/* enum cts_profile from "strict" or "standard"; -1 for anything else. */
int cts_profile_from_name(const char *name);
const char *cts_profile_name(int profile);
/* The run's profile (standard before cts_grade_begin). */
int cts_grade_profile(void);
/* The strength of clause `id` (CTS_STRENGTH_NONE when unknown or before begin). */
int cts_grade_strength(const char *id);
/* A Fail becomes Warning when none of its clauses is judged a Fail under the profile;
 * either way job->graded_by names the clauses that decided, with their strengths. Other
 * statuses are left as they are. */
void cts_grade_job(struct cts_job *job);

/* A listed failure graded by the clauses its expectation line names (`claimed`, "ID
 * STRENGTH, ..."; owned by the job afterwards): job->graded_by becomes them, and the
 * RETURN is 1 when one of them is a Fail under the profile, 0 when the failure is a
 * Warning. */
int cts_grade_claimed(struct cts_job *job, char *claimed);

/* The conformance score of a run (README.md, "Third parties"): the MUST clauses its
 * run cases cite (those of a NotSupported or Skip result left out), how many of them no
 * result breaks (a Fail or XFail graded by it, or a Crash, Timeout or Error of a case
 * citing it), and the Warnings. */
struct cts_score {
  int must_applicable, must_passed, warnings;
};
struct cts_score cts_grade_score(const struct cts_job *jobs, size_t n);

#endif
