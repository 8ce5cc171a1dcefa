#!/usr/bin/env bash
# harness/tests/check_generated.sh BUILD: lane generated. cases/generated/ is what
# `tsm-cts library` writes now (not stale against the statement table, the generator and
# the hand-written cases), the clause x kind matrix has no hole (`tsm-cts coverage
# --kinds`), and each check can fail: a copy of the library with one generated case
# removed and one byte of another changed is stale, both named; without
# cases/generated/ the matrix has holes. The checks run two at a time (each enumerates
# the combinations, about 15 s).
set -u
build=${1:?usage: check_generated.sh BUILD}
cd "$(dirname "$0")/../.." || exit 2
judge=$build/bin/tsm-cts
adapter=$build/lib/tsmref_adapter.so
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
say() { echo "check_generated: $*"; }

victim=$(find cases/generated -name '*.tsm' 2>/dev/null | LC_ALL=C sort | head -n 1)
other=$(find cases/generated -name '*.tsm' 2>/dev/null | LC_ALL=C sort | tail -n 1)
if [ -z "$victim" ] || [ "$victim" = "$other" ]; then
  say "FAIL: cases/generated holds fewer than two cases (make generated)"
  exit 1
fi
mkdir -p "$scratch/stale" "$scratch/holes"
cp -R cases "$scratch/stale/cases"
rm "$scratch/stale/$victim"
sed -i '$ s/$/ /' "$scratch/stale/$other"
cp -R cases "$scratch/holes/cases"
rm -rf "$scratch/holes/cases/generated"

"$judge" library --check --adapter "$adapter" cases/generated >"$scratch/current.out" 2>&1 &
current=$!
"$judge" coverage --kinds --adapter "$adapter" >"$scratch/matrix.out" 2>&1 &
matrix=$!
wait $current; current_rc=$?
wait $matrix; matrix_rc=$?
"$judge" library --check --adapter "$adapter" --cases "$scratch/stale/cases" \
  "$scratch/stale/cases/generated" >"$scratch/stale.out" 2>&1 &
stale=$!
"$judge" coverage --kinds --adapter "$adapter" --cases "$scratch/holes/cases" \
  >"$scratch/holes.out" 2>&1 &
holes=$!
wait $stale; stale_rc=$?
wait $holes; holes_rc=$?

fail=0
if [ $current_rc -ne 0 ]; then
  cat "$scratch/current.out"; say "FAIL: cases/generated is stale (make generated)"; fail=1
fi
if [ $matrix_rc -ne 0 ]; then
  grep -E 'hole|cannot|no case' "$scratch/matrix.out" | head -n 40
  say "FAIL: the clause x kind matrix has holes (tsm-cts coverage --kinds)"; fail=1
fi
if [ $stale_rc -ne 1 ] || ! grep -q "$(basename "$victim")" "$scratch/stale.out" ||
  ! grep -q "$(basename "$other") differs" "$scratch/stale.out"; then
  cat "$scratch/stale.out"
  say "FAIL: a removed and a changed generated case were not both seen as stale"; fail=1
fi
if [ $holes_rc -ne 1 ] || ! grep -q 'hole:' "$scratch/holes.out"; then
  tail -n 3 "$scratch/holes.out"
  say "FAIL: the matrix without cases/generated shows no hole"; fail=1
fi
[ $fail = 0 ] && say "ok: $(tail -n 1 "$scratch/matrix.out"); cases/generated is current;" \
  "a planted stale library and a planted hole both fail"
exit $fail
