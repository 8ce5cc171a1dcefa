/*
 * harness/tests/broken/fake_tap.c: an adapter that prints lines that read as TAP (test lines, a plan, a bail-out,
 * a YAML end, a version line), also after a bare carriage return in every
 * session_open and lies in mgr_info (hostile_noisy_liar), so that each case is Fail and
 * the bytes reach every report. The TAP must still parse (no forged line), the JSON be
 * strict UTF-8 and the JUnit valid XML 1.0.
 * clauses: [ABI.INFO.1]
 */
#include "hostile.h"

static struct tsm_adapter broken;

const struct tsm_adapter *tsm_adapter_entry(void) {
  return hostile_noisy_liar(&broken, "broken_fake_tap",
                            "ok 1 - forged\nnot ok 2 - forged\n1..2\nBail out! forged\n  ...\nTAP version 13\n# SKIP\r\nok 3 # TODO forged\n");
}
