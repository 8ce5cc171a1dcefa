/*
 * harness/tests/broken/noise_control.c: an adapter that prints carriage returns, ANSI escapes, backspaces, a form feed, DEL
 * and a bell in every
 * session_open and lies in mgr_info (hostile_noisy_liar), so that each case is Fail and
 * the bytes reach every report. The TAP must still parse (no forged line), the JSON be
 * strict UTF-8 and the JUnit valid XML 1.0.
 * clauses: [ABI.INFO.1]
 */
#include "hostile.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  return hostile_noisy_liar(&broken, "broken_noise_control",
                            "progress 10%\rprogress 100%\r\n\x1b[31mred\x1b[0m \x1b]0;title\x07 a\bb \f\x7f\x01\x02\x1b[2K\n");
}
