#!/usr/bin/env bash
# harness/tests/check_scenario.sh: the self-test of the scenario fuzz target
# (fuzz/fuzz_scenario.c) and of the way its findings become cases, run by
# run_selftests.sh.
#
#   bash harness/tests/check_scenario.sh BUILD_DIR
#
# - against broken_close_keeps (a close that leaves open a manager holding a tensor)
#   the standalone driver finds the bug within 3,000 generated scenarios (seed 3): it
#   stops with a finding, so the target can fail;
# - the finding's case, as the target prints it, replays through `tsm-cts run` as Fail
#   on that adapter (each refusal the model decided written as `expect error`), and
#   passes on the reference: the case blames the adapter, not the judge;
# - `tsm-cts reduce` shrinks it to at most five statements (and at least one) that still
#   fail;
# - the same 3,000 scenarios pass on the reference.
#
# Prints one line per check (ok / not ok), closes with `N passed, M failed`; exits 1 if
# any check failed.
set -euo pipefail

# shellcheck source=harness/tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup check_scenario.sh "$@"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TARGET=$BUILD/fuzz/bin/scenario
BROKEN=$BUILD/lib/broken_close_keeps.so
REF=$BUILD/lib/tsmref_adapter.so
for need in "$TARGET" "$BROKEN" "$REF"; do
  if [ ! -e "$need" ]; then
    echo "ok - # SKIP $need is not in this build folder"
    tap_summary
    exit 0
  fi
done

# status_of CASE SO: the status `tsm-cts run` gives the case on the adapter.
status_of() {
  { "$CTS" run --adapter "$2" --no-summary "$1" 2>/dev/null || true; } |
    sed -n 's/^ *status: //p' | head -n 1
}

if "$TARGET" -adapter="$BROKEN" -runs=3000 -seed=3 >/dev/null 2>"$TMP/finding.txt"; then
  not_ok "the scenario target found nothing wrong with broken_close_keeps in 3000 runs"
else
  ok "the scenario target finds broken_close_keeps: $(grep -m1 '^fuzz: finding' "$TMP/finding.txt" | cut -c1-120)"
fi
sed -n '/^the finding as a case/,$p' "$TMP/finding.txt" | tail -n +2 |
  sed -n '/^---$/,$p' >"$TMP/finding.tsm"
got=$(status_of "$TMP/finding.tsm" "$BROKEN")
if [ "$got" = Fail ]; then ok "the finding replays as Fail on broken_close_keeps"; else
  not_ok "the finding replays as '$got' on broken_close_keeps, not Fail"; show <"$TMP/finding.tsm"; fi
got=$(status_of "$TMP/finding.tsm" "$REF")
if [ -z "$got" ]; then ok "the finding passes on the reference"; else
  not_ok "the finding gives '$got' on the reference"; fi
if "$CTS" reduce "$TMP/finding.tsm" --adapter "$BROKEN" -o "$TMP/reduced.tsm" >/dev/null 2>&1 &&
  n=$(sed '1,/^---$/d' "$TMP/reduced.tsm" | grep -cv '^ *$') && [ "$n" -ge 1 ] && [ "$n" -le 5 ] &&
  [ "$(status_of "$TMP/reduced.tsm" "$BROKEN")" = Fail ]; then
  ok "tsm-cts reduce shrinks the finding to $n statements that still fail"
else
  not_ok "tsm-cts reduce did not shrink the finding to at most five failing statements"
  [ -f "$TMP/reduced.tsm" ] && show <"$TMP/reduced.tsm"
fi
if "$TARGET" -runs=3000 -seed=3 >/dev/null 2>"$TMP/ref.txt"; then
  ok "the same 3000 scenarios pass on the reference"
else
  not_ok "the reference fails a scenario"; grep -m1 '^fuzz:' "$TMP/ref.txt" | show
fi
tap_summary
