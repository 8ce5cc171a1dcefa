/*
 * harness/tests/broken/noise_utf8.c: an adapter that prints invalid UTF-8 (stray continuation bytes, overlong and surrogate
 * sequences, a truncated sequence, Latin-1) in every
 * session_open and lies in mgr_info (hostile_noisy_liar), so that each case is Fail and
 * the bytes reach every report. The TAP must still parse (no forged line), the JSON be
 * strict UTF-8 and the JUnit valid XML 1.0.
 * clauses: [ABI.INFO.1]
 */
#include "hostile.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  return hostile_noisy_liar(&broken, "broken_noise_utf8",
                            "caf\xe9 \x80\xbf \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xff\xfe ok\n\xe2\x82");
}
