/*
 * harness/tests/broken/hang_exit.c: an adapter that hangs at process exit (an atexit
 * handler that never returns). Its cases are correct and reported complete before the
 * exit: each must keep its result (Pass), the hung process must be killed.
 * clauses: [ERR.NOABORT.1]
 */
#include <stdlib.h>

#include "hostile.h"

static struct tsm_adapter broken;

static void hang_forever(void) {
  for (;;) pause();
}

const struct tsm_adapter *tsm_adapter_entry(void) {
  static int registered;
  if (!registered++) atexit(hang_forever);
  broken = *tsm_example_entry();
  broken.name = "broken_hang_exit";
  return &broken;
}
