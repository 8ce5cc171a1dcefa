/*
 * harness/tests/broken/no_managers.c: the example adapter with none of the manager slots,
 * as a graphs-only or DLPack-only third party would be without harness/adapters/common:
 * it loads (loading needs device_list, session_open and session_close alone), and every
 * case is Error naming the first manager slot it lacks (spec/adapter.md, "The slots each
 * family needs"; run_selftests.sh (b)).
 * clauses: [ABI.SLOT.1, ABI.LOAD.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.mgr_root = NULL;
  broken.mgr_new_sub = NULL;
  broken.mgr_close = NULL;
  broken.mgr_info = NULL;
  broken.res_release = NULL;
  broken.res_info = NULL;
  return &broken;
}
