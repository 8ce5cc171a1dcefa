#!/usr/bin/env bash
# harness/tests/check_gen.sh BUILD: the combination lane of ci/check.sh. `tsm-cts gen`
# writes a bounded, deterministic set of generated cases (fixed seeds) into
# BUILD/gen, completed against the model; the lane lints them, judges them through the
# reference, and fails on a disagreement that is not a known finding: each known class
# below names the regress case (cases/regress/) that keeps it, listed as a known
# failure in harness/expectations/tsmref.txt until the wrong side is fixed. It prints
# the cases and statements it ran and the clauses they touched.
set -u
build=${1:-build}
cts=$build/bin/tsm-cts
adapter=$build/lib/tsmref_adapter.so
out=$build/gen
seeds=(1 2 3)
per_seed=100

# A finding class: an extended regex over the first line of a Fail's message, then the
# regress case that keeps the class. Every class found so far is fixed (their regress
# cases pass); a new one is added here only with its regress case and its line in
# harness/expectations/tsmref.txt.
known=()

rm -rf "$out" && mkdir -p "$out" || exit 1
for seed in "${seeds[@]}"; do
  "$cts" gen --seed "$seed" --count "$per_seed" --jobs 2 --adapter "$adapter" "$out" || exit 1
done
"$cts" lint "$out" || exit 1
cases=$(ls "$out" | wc -l)
statements=$(awk 'FNR == 1 {fences = 0} /^---$/ {fences++; next}
  fences >= 2 && !/^expect [a-df-z]/ && !/^ *}$/ {n++} END {print n}' "$out"/*.tsm)
echo "check_gen: $cases cases, $statements statements (without the final expectations)"
echo "check_gen: clauses touched: $(sed -n 's/^clauses: \[\(.*\)\]/\1/p' "$out"/*.tsm |
  tr ',' '\n' | tr -d ' ' | sort -u | tr '\n' ' ')"

tap=$out.tap
"$cts" run --adapter "$adapter" -j 2 --no-summary "$out" >"$tap" 2>/dev/null
# The first line of each Fail's message (the line after `message: |-`).
awk '/^not ok/ {want = 1; next} want && /message:/ {getline; print; want = 0}' "$tap" >"$out.fails"
classify() {
  local line entry
  while IFS= read -r line; do
    for entry in "${known[@]}"; do
      if grep -Eq -- "${entry%|*}" <<<"$line"; then echo "known ${entry##*|}"; continue 2; fi
    done
    echo "unknown $line"
  done
}
classify <"$out.fails" >"$out.classes"
grep '^known' "$out.classes" | sort | uniq -c | sed 's/^/check_gen: /'
grep '^unknown' "$out.classes" | sed 's/^unknown /check_gen: a disagreement of no known class: /'
echo "check_gen: $(tail -1 "$tap")"
! grep -q '^unknown' "$out.classes"
