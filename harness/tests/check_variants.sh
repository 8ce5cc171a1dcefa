#!/usr/bin/env bash
# harness/tests/check_variants.sh: the judge accepts each variant a MAY clause lists, says
# which one a passing case observed, and refuses an implementation that mixes them or
# breaks a neighbouring rule. Each harness/tests/variants/NAME.patch changes the
# reference (impl/) the way another implementation may or may not behave; its header
# says what the judge must make of it (`# expect:`). Per patch: a scratch copy of the
# build inputs, the patch applied, the reference adapter built there (no CUDA), and the
# judge of BUILD_DIR run on the case folders that count statistics:
#
#   stat3-b       SCOPE.STAT.3 variant (b), TorchSharp's: every case passes, those that
#                 tell the variants apart with `# SCOPE.STAT.3 (MAY): variant (b) observed`
#                 after their ok line and none with variant (a); the unpatched reference
#                 gives variant (a) on the same cases;
#   stat3-mixed   variant (a)'s creations with variant (b)'s disposals: Fail, every one
#                 graded by SCOPE.STAT.3;
#   stat4-opener  membership events counted on the scope's opening thread: Fail graded by
#                 SCOPE.STAT.4 (TSM) under --profile strict, Warning under standard.
#
#   bash harness/tests/check_variants.sh BUILD_DIR
set -uo pipefail
# shellcheck source=harness/tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup check_variants.sh "$@"
REF="$BUILD/lib/tsmref_adapter.so"
FOLDERS=(cases/composites cases/peers/torchsharp cases/scopes)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# adapter NAME: builds the reference with variants/NAME.patch in $TMP/NAME; prints the
# adapter's path, or nothing when the patch does not apply or build (a failed check).
adapter() {
  local name=$1
  if ! patched_reference "$TMP/$name" "harness/tests/variants/$name.patch" "$TMP/$name.log"; then
    not_ok "$name: the patch applies and the reference builds"
    show <"$TMP/$name.log"
  fi
}

# run ADAPTER PROFILE OUT: the judge on the folders; the exit status goes to OUT.rc.
run() {
  "$CTS" run --adapter "$1" --profile "$2" -j 2 --no-summary "${FOLDERS[@]}" >"$3" 2>/dev/null
  echo $? >"$3.rc"
}

run "$REF" strict "$TMP/ref.tap"
a=$(grep -c '^# SCOPE.STAT.3 (MAY): variant (a) observed$' "$TMP/ref.tap")
if [ "$(cat "$TMP/ref.tap.rc")" -eq 0 ] && [ "$a" -gt 0 ] &&
  ! grep -q 'variant (b) observed' "$TMP/ref.tap"; then
  ok "the reference passes and shows SCOPE.STAT.3 variant (a) ($a cases)"
else
  not_ok "the reference should pass, naming variant (a) only"
  grep -A12 '^not ok' "$TMP/ref.tap" | show
fi

so=$(adapter stat3-b)
if [ -n "$so" ]; then
  run "$so" strict "$TMP/b.tap"
  b=$(grep -c '^# SCOPE.STAT.3 (MAY): variant (b) observed$' "$TMP/b.tap")
  if [ "$(cat "$TMP/b.tap.rc")" -eq 0 ] && [ "$b" -eq "$a" ] &&
    ! grep -q 'variant (a) observed' "$TMP/b.tap"; then
    ok "stat3-b: every case passes, $b of them showing SCOPE.STAT.3 variant (b)"
  else
    not_ok "stat3-b: every case should pass, the $a that tell the variants apart with variant (b) (got $b)"
    grep -A12 '^not ok' "$TMP/b.tap" | show
  fi
fi

so=$(adapter stat3-mixed)
if [ -n "$so" ]; then
  run "$so" standard "$TMP/mixed.tap"
  fails=$(grep -c '^not ok' "$TMP/mixed.tap")
  graded=$(grep -c "graded_by: 'SCOPE.STAT.3 MAY'" "$TMP/mixed.tap")
  if [ "$(cat "$TMP/mixed.tap.rc")" -eq 1 ] && [ "$fails" -gt 0 ] && [ "$fails" -eq "$graded" ]; then
    ok "stat3-mixed: $fails cases Fail, each graded by SCOPE.STAT.3"
  else
    not_ok "stat3-mixed: every failure should be graded by SCOPE.STAT.3 ($graded of $fails)"
    grep -A12 '^not ok' "$TMP/mixed.tap" | show
  fi
fi

so=$(adapter stat4-opener)
if [ -n "$so" ]; then
  run "$so" strict "$TMP/s4.tap"
  fails=$(grep -c '^not ok' "$TMP/s4.tap")
  graded=$(grep -c "graded_by: 'SCOPE.STAT.4 TSM'" "$TMP/s4.tap")
  if [ "$fails" -gt 0 ] && [ "$fails" -eq "$graded" ]; then
    ok "stat4-opener, strict: $fails cases Fail, each graded by SCOPE.STAT.4"
  else
    not_ok "stat4-opener, strict: every failure should be graded by SCOPE.STAT.4 ($graded of $fails)"
    grep -A12 '^not ok' "$TMP/s4.tap" | show
  fi
  run "$so" standard "$TMP/s4std.tap"
  if [ "$(cat "$TMP/s4std.tap.rc")" -eq 0 ] && ! grep -q '^not ok' "$TMP/s4std.tap" &&
    [ "$(grep -c 'status: Warning' "$TMP/s4std.tap")" -eq "$fails" ]; then
    ok "stat4-opener, standard: the same $fails cases are Warnings"
  else
    not_ok "stat4-opener, standard: the SCOPE.STAT.4 failures should be Warnings"
    grep -A12 '^not ok' "$TMP/s4std.tap" | show
  fi
fi

tap_summary
