#!/usr/bin/env bash
# bench/run_bench.sh BUILD PYTHON: `make bench` (bench/bench.mk). Runs every benchmark
# of bench/ against the build in BUILD, each printing its human table on stdout and
# appending its figures to BUILD/bench/figures.jsonl; times the judge on a generated
# case of 100,000 steps and on the case library; then bench/results.py writes
# BUILD/bench/results.json (bench/README.md names every figure and its goal).
set -eu
B=${1:?usage: bench/run_bench.sh BUILD PYTHON}
PY=${2:?usage: bench/run_bench.sh BUILD PYTHON}
out=$B/bench
mkdir -p "$out"
export BENCH_JSON=$out/figures.jsonl
rm -f "$BENCH_JSON"
start=$(date +%s.%N)
for b in managers dlpack graphs iree; do
  echo "== $B/bin/bench-$b"
  "$B/bin/bench-$b"
done
echo "== bench/bench_capsule.py"
PYTHONPATH=$B/python "$PY" bench/bench_capsule.py

# The judge: seconds of one `tsm-cts run`, and the runs its TAP summary counts.
judge_run() { # LOGFILE ARGS...: prints "runs seconds"
  local log=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$B/bin/tsm-cts" run --adapter "$B/lib/tsmref_adapter.so" --no-summary "$@" >"$log" 2>&1 ||
    { echo "run_bench.sh: tsm-cts run $* failed (see $log)" >&2; exit 1; }
  t1=$(date +%s.%N)
  tail -1 "$log" | tr -c '0-9\n' ' ' | awk -v a="$t0" -v b="$t1" \
    '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s, b - a }'
}
figure() { # NAME VALUE UNIT: a figure without baseline or goal
  printf '{"name": "%s", "value": %s, "unit": "%s", "baseline_name": null, "baseline_value": null, "ratio": null, "goal": null, "met": null}\n' \
    "$1" "$2" "$3" >>"$BENCH_JSON"
}

# One case of N judged steps: N/4 times create, count, release, count. A judge that
# observes only what a step changed runs each size at about the same steps/s.
steps_case() { # N
  cat <<CASE
---
description: Bench case (bench/run_bench.sh): $1 judged steps, $(($1 / 4)) times create, count, release, count
clauses: [MGR.CREATE.1, MGR.REL.1]
origin: bench/README.md (judge_steps_per_s_1k, _10k, _100k)
requires: [managers]
devices: [cpu]
tags: [bench]
timeout: 600000
---
manager m = sub root
repeat $(($1 / 4)) {
  tensor x = ones m [4]
  expect count m == 1
  release x
  expect count m == 0
}
CASE
}
for n in 1000 10000 100000; do
  echo "== judge: one case of $n steps (create, count, release, count x $((n / 4)))"
  mkdir -p "$out/steps-$n/managers"
  steps_case "$n" >"$out/steps-$n/managers/steps.tsm"
  read -r runs secs < <(judge_run "$out/steps-$n.tap" --cases "$out/steps-$n" --spec spec "$out/steps-$n")
  steps_per_s=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.0f", (n + 1) / s }')
  echo "  $runs run, $secs s: $steps_per_s steps/s"
  figure "judge_steps_per_s_$((n / 1000))k" "$steps_per_s" "steps/s"
done

echo "== judge: the case library (cases, -j 2)"
read -r runs secs < <(judge_run "$out/suite.tap" -j 2 cases)
cases_per_s=$(awk -v n="$runs" -v s="$secs" 'BEGIN { printf "%.1f", n / s }')
echo "  $runs runs, $secs s: $cases_per_s runs/s"
figure suite_cases_per_s "$cases_per_s" "runs/s"

echo "== results"
"$PY" bench/results.py "$BENCH_JSON" "$out/results.json"
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "make bench: %.0f s\n", b - a }'
