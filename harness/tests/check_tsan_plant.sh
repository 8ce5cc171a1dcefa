#!/usr/bin/env bash
# harness/tests/check_tsan_plant.sh: the DLPack thread cases (cases/dlpack/threads) find a
# producer whose export deleter touches shared state without its lock (DLP.DEL.4,
# SCOPE.THREAD.3). BUILD_DIR is a ThreadSanitizer build of the judge and the reference
# (ci/check.sh, `tsan`: clang, SAN=-fsanitize=thread). Checks:
#
#   1. the reference of BUILD_DIR passes every case of the folder, with no race report;
#   2. each harness/tests/tsan-plants/NAME.patch applies to a scratch copy of the build
#      inputs, whose reference builds with the same sanitizer;
#   3. that reference fails the folder under the tsan lane's TSAN_OPTIONS (a race report
#      halts the case process: exit 66, not ok);
#   4. and, with halt_on_error=0, a case is a Fail ("the case passed but its process
#      exited with status 66") whose output holds the race report, with the deleter
#      (tsmr__dlx_rec_drop) on one side.
#
# A race needs the threads to interleave, so 3 and 4 allow up to ATTEMPTS runs each
# (the first kill ends them); the number used is printed. The patches live here, not in
# ci/mutants/, because only a sanitizer sees them: the mutant gate's case runs would not.
#
#   bash harness/tests/check_tsan_plant.sh BUILD_DIR
# clauses: [DLP.DEL.4, SCOPE.THREAD.3]
set -uo pipefail
# shellcheck source=harness/tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup check_tsan_plant.sh "$@"
FOLDER=cases/dlpack/threads
ATTEMPTS=${ATTEMPTS:-3}
LANE_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if ! nm "$CTS" 2>/dev/null | grep '__tsan_init' >/dev/null; then
  not_ok "$CTS is not a ThreadSanitizer build (make BUILD=... CC=clang SAN=-fsanitize=thread)"
  tap_summary
  exit 1
fi

# run ADAPTER OPTIONS OUT: the judge on the folder; its exit status goes to OUT.rc.
run() {
  TSAN_OPTIONS="$2" "$CTS" run --adapter "$1" --device cpu -j 2 --timeout 60000 --no-summary \
    "$FOLDER" >"$3" 2>&1
  echo $? >"$3.rc"
}

run "$BUILD/lib/tsmref_adapter.so" "$LANE_OPTIONS" "$TMP/ref.tap"
n=$(grep -c '^ok' "$TMP/ref.tap")
if [ "$(cat "$TMP/ref.tap.rc")" -eq 0 ] && [ "$n" -gt 0 ] &&
  ! grep -q 'ThreadSanitizer' "$TMP/ref.tap"; then
  ok "the reference passes the $n cases of $FOLDER under TSan, no race reported"
else
  not_ok "the reference should pass $FOLDER under TSan with no race report"
  grep -A12 -E '^not ok|WARNING: ThreadSanitizer' "$TMP/ref.tap" | show
fi

# adapter NAME: the reference with tsan-plants/NAME.patch, built with the sanitizer in
# $TMP/NAME; prints the adapter's path, or nothing when the patch does not apply or build.
adapter() {
  local name=$1 so
  if ! so=$(patched_reference "$TMP/$name" "harness/tests/tsan-plants/$name.patch" \
    "$TMP/$name.log" CC=clang SAN=-fsanitize=thread OPT="-O1 -g"); then
    not_ok "$name: the patch applies and the reference builds with TSan"
    show <"$TMP/$name.log"
    return
  fi
  ok "$name: the patch applies and the reference builds with TSan"
  echo "$so" >"$TMP/$name.so"
}

# killed SO OPTIONS OUT TEST: runs until TEST OUT succeeds, at most ATTEMPTS times;
# prints the attempt that succeeded, or nothing.
killed() {
  local k
  for k in $(seq 1 "$ATTEMPTS"); do
    run "$1" "$2" "$3"
    if "$4" "$3"; then
      echo "$k"
      return
    fi
  done
}

# The lane's options: some case not ok, with a race report.
lane_kill() { [ "$(cat "$1.rc")" -ne 0 ] && grep -q '^not ok' "$1" && grep -q 'WARNING: ThreadSanitizer: data race' "$1"; }
# halt_on_error=0: a Fail that names the exit status 66, the deleter in the race report.
fail_kill() {
  grep -q '^not ok' "$1" && grep -q 'status: Fail' "$1" &&
    grep -q 'exited with status 66' "$1" && grep -q 'tsmr__dlx_rec_drop' "$1"
}

for patch in harness/tests/tsan-plants/*.patch; do
  name=$(basename "$patch" .patch)
  adapter "$name"
  [ -s "$TMP/$name.so" ] || continue
  so=$(cat "$TMP/$name.so")
  k=$(killed "$so" "$LANE_OPTIONS" "$TMP/$name.tap" lane_kill)
  if [ -n "$k" ]; then
    ok "$name: $(grep -c '^not ok' "$TMP/$name.tap") of the cases fail under the tsan lane's options (run $k of at most $ATTEMPTS)"
  else
    not_ok "$name: some case of $FOLDER should fail under TSan with a race report ($ATTEMPTS runs)"
    grep -E '^(not )?ok' "$TMP/$name.tap" | show
  fi
  k=$(killed "$so" "halt_on_error=0 exitcode=66" "$TMP/$name-fail.tap" fail_kill)
  if [ -n "$k" ]; then
    ok "$name: with halt_on_error=0, $(grep -c 'status: Fail' "$TMP/$name-fail.tap") cases Fail on exit 66, the race report naming the export deleter (run $k)"
  else
    not_ok "$name: with halt_on_error=0 a case should Fail on exit 66, its race report naming tsmr__dlx_rec_drop ($ATTEMPTS runs)"
    grep -A12 '^not ok' "$TMP/$name-fail.tap" | show
  fi
done

tap_summary
