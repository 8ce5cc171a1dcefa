/*
 * harness/tests/broken/close_keeps.c: an adapter whose mgr_close reports success but
 * leaves a sub-manager that still holds a live resource open, with what it holds (the
 * leak of a close that skips a non-empty manager). Closing an empty manager, the root
 * or a closed one behaves as the example does, so a case shows the bug only with a
 * manager, a tensor in it and its close: the self-test of `tsm-cts reduce`
 * (harness/tests/check_reduce.sh) shrinks a padded case to those three statements.
 * Every self-test case that closes a manager holding a tensor is Fail.
 * clauses: [MGR.CLOSE.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

static int keeps_mgr_close(void *s, tsm_handle m) {
  const struct tsm_adapter *example = tsm_example_entry();
  struct tsm_mgr_info info;
  if (example->mgr_info(s, m, &info) == 0 && !info.is_root && !(info.state & TSM_MGR_CLOSED) &&
      info.live > 0)
    return 0;
  return example->mgr_close(s, m);
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_close_keeps";
  broken.mgr_close = keeps_mgr_close;
  return &broken;
}
