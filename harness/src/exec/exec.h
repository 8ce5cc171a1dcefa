/*
 * harness/src/exec/exec.h: running one case on one device of a loaded adapter, statement
 * by statement, against the model. Runs inside the forked child (runner.c).
 */
#ifndef CTS_EXEC_H
#define CTS_EXEC_H

#include "case.h"
#include "util.h"

enum cts_status {
  CTS_PASS,
  CTS_FAIL,
  CTS_WARNING, /* a failed check of a clause that is no requirement here (grade.h) */
  CTS_CRASH,
  CTS_TIMEOUT,
  CTS_NOTSUPPORTED,
  CTS_SKIP,
  CTS_XFAIL,
  CTS_XPASS,
  CTS_ERROR,
  CTS_N_STATUS
};

const char *cts_status_name(int status);
int cts_status_from_name(const char *name); /* -1 if unknown */
/* Pass, Warning, NotSupported, Skip and XFail keep the exit status 0. */
int cts_status_ok(int status);

/* RETURN enum cts_status; msg receives the diagnostic (statement, expected, observed).
 * Case output (dumps) goes to stdout. fail_max > 0: the allocation-failure mode
 * (ERR.NOMEM.1): the case runs again with its k-th allocation failing, for k = 1, 2,
 * ... until a run finishes before the k-th allocation, or k passes fail_max. */
int cts_exec_case(const struct cts_case *c, const struct tsm_adapter *a, int device_index,
                  struct cts_buf *msg, uint64_t fail_max);

/* Completion (tsm-cts gen, complete.c) sets this to learn where a run stops: called with
 * the line of the statement being judged (0 outside the body), the status, and, when the
 * model refuses an action the case does not expect to fail, the model's code (else 0). */
extern void (*cts_exec_on_report)(int line, int status, int model_rc);

/* The runner's case process sets this to hear the verdict the moment it is decided:
 * called once per run, at its first result other than Pass (a failed check, or a
 * statement that is NotSupported or Error), with that status and the whole message
 * cts_exec_case will return (with fail_max, the message of the run that stopped). The
 * session's teardown runs after it, in the adapter's code: a crash or hang there must
 * not hide it (runner.c). */
extern void (*cts_exec_on_step)(int status, const char *message);

/* The scenario fuzzer and the combination generator (fuzz/fuzz_scenario.c, combo.c)
 * set this to let the model decide every outcome a case leaves open: an action the
 * model refuses is judged as if the case said `expect error CODE` (the adapter must
 * refuse with the same code, ERR.CODE.1), and a statement the case cannot run (its
 * operand's binding was refused, or an expectation the model contradicts) is skipped.
 * Then any divergence of the adapter from the model is a Fail, and Error means a bug
 * of the judge. cts_exec_on_report hears each decision: (line, CTS_PASS, code) for a
 * refusal the model decided, (line, CTS_SKIP, 0) for a statement skipped. */
extern int cts_exec_model_decides;

#endif
