#!/usr/bin/env bash
# harness/tests/check_reduce.sh: the self-test of `tsm-cts reduce` (harness/src/tools/reduce.c),
# run by run_selftests.sh.
#
#   bash harness/tests/check_reduce.sh BUILD_DIR
#
# - each padded failing case NAME.tsm of harness/tests/reduce reduces, exit 0, to exactly
#   NAME.expected.tsm: close-keeps.tsm against broken_close_keeps (a close that skips a
#   manager holding a tensor: Fail) to the manager, the tensor (out of their repeat
#   block, with the comment above them) and the close; crash.tsm against broken_segv
#   (mgr_new_sub dies: Crash) to the one statement that crashes; contradiction.tsm
#   against the reference (an expectation the model contradicts: Error) to two
#   statements, its requires: trimmed to [managers]; each with the clauses of the rows
#   that went dropped and the description saying how many statements went;
# - each reduced case lints clean and, run by `tsm-cts run`, fails the way the padded
#   one does: the same status, and the same message once paths and numbers are set
#   aside (a reduction whose adapter the build folder lacks is skipped: the sanitizer
#   lanes' self-test folders hold the example and the broken adapters, not the reference);
# - reduce exits 1 on a case that passes and on one the adapter does not run
#   (NotSupported), writing nothing, and 2 on a case that does not parse, with its
#   FILE:LINE:COL.
#
# Prints one line per check (ok / not ok), closes with `N passed, M failed`; exits 1 if
# any check failed.
set -euo pipefail

# shellcheck source=harness/tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup check_reduce.sh "$@"
DIR=harness/tests/reduce
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LIMIT=()
if command -v timeout >/dev/null 2>&1; then LIMIT=(timeout 120); fi

# run_json CASE SO JSON: the judge's run of one case, its report in JSON.
run_json() {
  "${LIMIT[@]}" "$CTS" run --adapter "$2" --json "$3" --no-summary "$1" >/dev/null 2>&1 || true
}

# same_failure PADDED.json REDUCED.json STATUS: both runs end with STATUS and the same
# message, once the case path and the numbers are set aside. Prints what differs.
same_failure() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, re, sys

def failure(path):
    r = json.load(open(path))["results"][0]
    message = re.sub(r"^\S+\.tsm(:\d+)?: ", "", r.get("message") or "")
    return r["status"], re.sub(r"\d+", "N", message)

padded, reduced = failure(sys.argv[1]), failure(sys.argv[2])
same = padded == reduced and padded[0] == sys.argv[3]
if not same:
    print(f"expected {sys.argv[3]}\npadded: {padded}\nreduced: {reduced}")
sys.exit(not same)
EOF
}

# reduce_to NAME SO STATUS: NAME.tsm fails with STATUS on SO and reduces to
# NAME.expected.tsm, which lints clean and fails the same way.
reduce_to() {
  local name=$1 so=$2 status=$3 out="$TMP/$1.reduced.tsm" rc=0
  if [ ! -f "$so" ]; then # the sanitizer lanes' self-test folders hold no reference
    ok "reduce $name.tsm # SKIP $so is not in this build folder"
    return
  fi
  "${LIMIT[@]}" "$CTS" reduce "$DIR/$name.tsm" --adapter "$so" -o "$out" --timeout 5 \
    >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  if [ "$rc" -ne 0 ] || [ "$(cat "$TMP/$name.out")" != "$out" ]; then
    not_ok "reduce $name.tsm: exit $rc, expected 0 and the path written on stdout"
    show <"$TMP/$name.err"
    return
  fi
  if diff -u "$DIR/$name.expected.tsm" "$out" >"$TMP/$name.diff"; then
    ok "reduce $name.tsm ($status) -> $name.expected.tsm: $(tail -n 1 "$TMP/$name.err")"
  else
    not_ok "reduce $name.tsm: not $name.expected.tsm"
    show <"$TMP/$name.diff"
  fi
  if "$CTS" lint "$out" >"$TMP/$name.lint" 2>&1; then
    ok "the reduced $name case lints clean"
  else
    not_ok "the reduced $name case does not lint"
    show <"$TMP/$name.lint"
  fi
  run_json "$DIR/$name.tsm" "$so" "$TMP/$name.padded.json"
  run_json "$out" "$so" "$TMP/$name.reduced.json"
  if diff_out=$(same_failure "$TMP/$name.padded.json" "$TMP/$name.reduced.json" "$status" 2>&1); then
    ok "the reduced $name case still fails the same way ($status)"
  else
    not_ok "the reduced $name case fails another way"
    printf '%s\n' "$diff_out" | show
  fi
}

reduce_to close-keeps "$BUILD/lib/broken_close_keeps.so" Fail
reduce_to crash "$BUILD/lib/broken_segv.so" Crash
reduce_to contradiction "$BUILD/lib/tsmref_adapter.so" Error

# does_not_fail CASE SO WHY: reduce exits 1 and writes nothing.
does_not_fail() {
  local out="$TMP/none.reduced.tsm" rc=0
  "${LIMIT[@]}" "$CTS" reduce "$1" --adapter "$2" -o "$out" >/dev/null 2>"$TMP/none.err" || rc=$?
  if [ "$rc" -eq 1 ] && [ ! -e "$out" ] && grep -q 'does not fail' "$TMP/none.err"; then
    ok "reduce exits 1 on $1 ($3): $(head -n 1 "$TMP/none.err")"
  else
    not_ok "reduce on $1 ($3): exit $rc, expected 1, nothing written, 'does not fail'"
    show <"$TMP/none.err"
  fi
}
does_not_fail harness/tests/cases/sub-close.tsm "$BUILD/lib/example_adapter.so" "it passes"
does_not_fail harness/tests/cases/matmul.tsm "$BUILD/lib/example_adapter.so" "NotSupported"

bad=$(find harness/tests/parse -name 'bad-*.tsm' | sort | head -n 1)
pos=$(tr -d ' \r\n' <"${bad%.tsm}.pos")
rc=0
"$CTS" reduce "$bad" --adapter "$BUILD/lib/example_adapter.so" >/dev/null 2>"$TMP/bad.err" || rc=$?
if [ "$rc" -eq 2 ] && [[ "$(head -n 1 "$TMP/bad.err")" == "$bad:$pos:"* ]]; then
  ok "reduce exits 2 on $bad, located at $pos"
else
  not_ok "reduce on $bad: exit $rc, expected 2 and '$bad:$pos:'"
  show <"$TMP/bad.err"
fi

tap_summary
