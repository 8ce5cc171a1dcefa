#!/usr/bin/env bash
# harness/tests/check_combos.sh BUILD: the combination generator's part of the
# combination lane of ci/check.sh. `tsm-cts combos` (harness/src/tools/combo.h) enumerates,
# from the rows of the statement table, every maker of a focus resource after a fixed
# background and every pair of statements on it (its default depth, 2), judges each
# combination through the reference with the model deciding every outcome, and prints
# how many it ran, the clauses each touched and the states the focus reached. The lane
# fails on a divergence of no known class (harness/tests/combos-known.txt: the classes
# that regress cases under cases/regress/ keep until the wrong side is fixed), and when
# the combinations fall below the floor: a writer that stops writing a row, or a row
# that stops taking an operand, must not shrink the coverage silently.
set -u
build=${1:-build}
here=$(dirname "$0")
cts=$build/bin/tsm-cts
floor=290000

start=$(date +%s)
"$cts" combos -j 2 --adapter "$build/lib/tsmref_adapter.so" --known "$here/combos-known.txt" \
  --json "$build/combos.json" 2>"$build/combos.progress"
rc=$?
echo "check_combos: $(($(date +%s) - start)) s wall"
if [ "$rc" -ne 0 ]; then
  tail -n 5 "$build/combos.progress"
  echo "check_combos: tsm-cts combos exited with $rc (1: a divergence of no known class)"
  exit 1
fi
count=$(sed -n 's/^  "combinations": \([0-9]*\),$/\1/p' "$build/combos.json")
if [ -z "$count" ] || [ "$count" -lt "$floor" ]; then
  echo "check_combos: ${count:-no} combinations, below the floor of $floor"
  exit 1
fi
echo "check_combos: $count combinations (floor $floor), no divergence of an unknown class"
