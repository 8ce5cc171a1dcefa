#!/usr/bin/env bash
# harness/tests/snapshot.sh BUILD OUTDIR: every output of the judge that a refactoring
# must leave unchanged, written to OUTDIR with run-dependent parts (times, durations,
# process ids, temporary paths) removed, so that two builds (before and after a change)
# are compared with `diff -r`:
#   run-PROFILE.{tap,json,xml}   the case library against the reference under both
#                                profiles, one job (TAP in file order)
#   parse.jsonl                  `parse --json` of every case file
#   statements.md, coverage.txt, list.txt, lint.txt
#   gen/                         `gen` for three seeds (the generated case files)
#   combos.json                  `combos --depth 1`
#   explain/                     `explain` of one case per family folder
# Usage: bash harness/tests/snapshot.sh build /tmp/before; (change, rebuild);
#        bash harness/tests/snapshot.sh build /tmp/after; diff -r /tmp/before /tmp/after
set -u
build=${1:?usage: snapshot.sh BUILD OUTDIR}
out=${2:?usage: snapshot.sh BUILD OUTDIR}
cd "$(dirname "$0")/../.." || exit 2
judge=$build/bin/tsm-cts
adapter=$build/lib/tsmref_adapter.so
for f in "$judge" "$adapter"; do
  [ -e "$f" ] || { echo "snapshot.sh: missing $f: build first (make BUILD=$build all)" >&2; exit 2; }
done
rm -rf "$out" && mkdir -p "$out/gen" "$out/explain"

# Times, durations, scratch paths and the build folder differ run to run; nothing else may.
scrub() {
  sed -E -e "s#(^|[^A-Za-z0-9_./-])$build/#\1BUILD/#g" -e 's/("(duration|duration_ms|time|elapsed|elapsed_ms|start|end|timestamp|seconds|wall_seconds)": *)[0-9.e+-]+/\1T/g' \
    -e 's/("(run_id|started|finished)": *)"[^"]*"/\1"T"/g' \
    -e 's/(time|timestamp|hostname)="[^"]*"/\1="T"/g' \
    -e 's/duration_ms: [0-9.]+/duration_ms: T/g' \
    -e 's/ in [0-9.]+ ?(s|ms)\b/ in T/g' \
    -e 's#/tmp/[A-Za-z0-9._/-]*#/TMP#g' \
    -e 's/pid [0-9]+/pid P/g' \
    -e 's/(name="run_id" value=)"[^"]*"/\1"T"/g'
}

for profile in strict standard; do
  TSM_CTS_PROFILE=$profile "$judge" run --adapter "$adapter" -j 1 --no-summary \
    --json "$out/run-$profile.json.raw" --junit "$out/run-$profile.xml.raw" cases \
    2>/dev/null | scrub >"$out/run-$profile.tap"
  scrub <"$out/run-$profile.json.raw" >"$out/run-$profile.json"
  scrub <"$out/run-$profile.xml.raw" >"$out/run-$profile.xml"
  rm -f "$out/run-$profile".*.raw
done

find cases -name '*.tsm' -o -name '*.pytsm' | LC_ALL=C sort |
  xargs "$judge" parse --json >"$out/parse.jsonl" 2>&1
"$judge" statements --markdown >"$out/statements.md" 2>&1
"$judge" coverage >"$out/coverage.txt" 2>&1
"$judge" list >"$out/list.txt" 2>&1
"$judge" lint cases >"$out/lint.txt" 2>&1
for seed in 1 7 42; do
  "$judge" gen --seed $seed --count 40 --adapter "$adapter" "$out/gen/$seed" >/dev/null 2>&1
done
"$judge" combos --depth 1 -j 2 --adapter "$adapter" --json "$out/combos.json.raw" >/dev/null 2>&1
scrub <"$out/combos.json.raw" >"$out/combos.json" && rm -f "$out/combos.json.raw"
for dir in cases/*/; do
  first=$(find "$dir" -name '*.tsm' | LC_ALL=C sort | head -n 1)
  [ -n "$first" ] || continue
  "$judge" explain "$first" --adapter "$adapter" 2>&1 | scrub >"$out/explain/$(basename "$dir").txt"
done
echo "snapshot: $(find "$out" -type f | wc -l) files in $out"
