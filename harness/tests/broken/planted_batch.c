/*
 * harness/tests/broken/planted_batch.c: an adapter that breaks on three particular
 * cases of harness/tests/batch and nowhere else, each known by the length of a tensor
 * it makes: asked for 13 elements, tensor_new dies of SIGSEGV; for 17, it hangs; when
 * the session's first tensor has 11, mgr_info reports a sub-manager that holds
 * something as holding one more (a Fail the case process streams) and session_close
 * aborts. Every session_open prints the process id and how many sessions the process
 * has opened (and a line of dots), so that the self-test (harness/tests/check_batch.sh) sees, in each case's
 * own output, which cases shared a worker under --batch and in what order: the crash,
 * the hang and the streamed Fail are the verdicts of their own cases, the cases before
 * them ran in the same worker, and those after them run in a new one and pass.
 * clauses: [ERR.NOABORT.1, MGR.COUNT.1]
 */
#include <stdio.h>
#include <stdlib.h>

#include "hostile.h"

/* Sessions this process has opened, and what the current one's first tensor asked for
 * (0: none yet). */
static int sessions;
static int64_t first_length;

/* The dots session_open prints after its line: more than the judge reads from a pipe at
 * once, so that output read late would show in the next case's. */
#define PADDING 10000

/* A volatile NULL pointer: the store below is a real SIGSEGV (as in segv.c). */
static int *volatile nowhere;

static int planted_session_open(int device, void **s) {
  sessions++;
  first_length = 0;
  char dots[PADDING + 2];
  memset(dots, '.', PADDING);
  dots[PADDING] = '\n';
  dots[PADDING + 1] = '\0';
  dprintf(1, "planted_batch: pid %d session %d\n%s", (int)getpid(), sessions, dots);
  return hostile_open(device, s);
}

static int planted_tensor_new(void *s, tsm_handle m, const struct tsm_tensor_desc *desc,
                              const void *data, tsm_handle *out) {
  if (!first_length && desc && desc->ndim == 1) first_length = desc->shape[0];
  if (desc && desc->ndim == 1 && desc->shape[0] == 13) *nowhere = 13;
  if (desc && desc->ndim == 1 && desc->shape[0] == 17)
    for (;;) pause();
  return tsm_example_entry()->tensor_new(s, m, desc, data, out);
}

static int planted_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  int rc = tsm_example_entry()->mgr_info(s, m, out);
  if (rc == 0 && first_length == 11 && !out->is_root && out->live > 0) out->live += 1;
  return rc;
}

static void planted_session_close(void *s) {
  if (first_length == 11) abort();
  tsm_example_entry()->session_close(s);
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  static struct tsm_adapter broken;
  broken = *tsm_example_entry();
  broken.name = "broken_planted_batch";
  broken.session_open = planted_session_open;
  broken.tensor_new = planted_tensor_new;
  broken.mgr_info = planted_mgr_info;
  broken.session_close = planted_session_close;
  return &broken;
}
