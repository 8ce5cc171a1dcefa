/*
 * harness/tests/broken/liar.c: an adapter whose mgr_info lies: it reports every
 * manager's live count one higher than the truth. Everything else is the example's
 * correct behaviour, so only the judge's comparison of observed state with its model
 * can catch it; each case that runs must be reported Fail.
 * clauses: [ABI.INFO.1, MGR.COUNT.1]
 */
#include "broken.h"

static struct tsm_adapter broken;

static int liar_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  int rc = tsm_example_entry()->mgr_info(s, m, out);
  if (rc == 0) out->live += 1;
  return rc;
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  broken = *tsm_example_entry();
  broken.name = "broken_liar";
  broken.mgr_info = liar_mgr_info;
  return &broken;
}
