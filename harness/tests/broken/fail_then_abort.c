/*
 * harness/tests/broken/fail_then_abort.c: an adapter whose mgr_info reports a
 * sub-manager that holds something as holding one more (a divergence the judge sees at
 * the check after the statement that put it there), and whose session_close calls
 * abort(), as a library's failed assertion at teardown would. The case process dies
 * before it writes its result, after it streamed the check's Fail: each case with that
 * divergence must be Fail with the check's message and the crash noted, never a bare
 * Crash; a case without it (no sub-manager ever holds anything) is Crash
 * (check_hostile.sh, harness/tests/stream).
 * clauses: [ABI.INFO.1, MGR.COUNT.1, ERR.NOABORT.1]
 */
#include <stdlib.h>

#include "hostile.h"

static int overcounting_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  int rc = tsm_example_entry()->mgr_info(s, m, out);
  if (rc == 0 && !out->is_root && out->live > 0) out->live += 1;
  return rc;
}

static void aborting_session_close(void *s) {
  (void)s;
  abort();
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  static struct tsm_adapter broken;
  broken = *tsm_example_entry();
  broken.name = "broken_fail_then_abort";
  broken.mgr_info = overcounting_mgr_info;
  broken.session_close = aborting_session_close;
  return &broken;
}
