#!/usr/bin/env bash
# bench/run_bench.sh BUILD PYTHON: `make bench` (bench/bench.mk). Runs every benchmark
# of bench/ against the build in BUILD, each printing its human table on stdout and
# appending its figures to BUILD/bench/figures.jsonl (bench-xapi, the DLPack 1.3
# exchange table's round trip from C, embeds Python: bench/bench_xapi.c); counts the
# instructions of bench-managers', bench-dlpack's and bench-xapi's loops and of
# bench-graphs' plans under callgrind where valgrind is installed
# (bench/count_instructions.sh: an instructions ratio beside each of their wall-time
# ratios, which does not move with the machine's load); times the judge on a generated
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
for b in managers dlpack graphs iree xapi; do
  echo "== $B/bin/bench-$b"
  "$B/bin/bench-$b"
done
bash bench/count_instructions.sh "$B" "$PY"
# The planner against ggml_gallocr on the same graphs, both through the adapter ABI
# (bench/planner_ggml.c): plan time per tensor at 5,000 and 50,000 nodes and the summed
# peaks; its per-graph table also goes to ggml-planner.json.
echo "== $B/bin/planner-ggml"
"$B/bin/planner-ggml" "$B/lib/tsmref_adapter.so" "$B/lib/ggml_adapter.so" "$out/ggml-planner.json"
echo "== bench/bench_capsule.py"
PYTHONPATH=$B/python "$PY" bench/bench_capsule.py

# The judge: seconds of one `tsm-cts run`, and the runs its TAP summary line ("# Pass N,
# Fail N, ...") counts as run: NotSupported (a device the machine lacks) and Skip are not.
# The summary is found by its words, not as the last line, which is the profile's.
judge_run() { # LOGFILE ARGS...: prints "runs seconds"
  local log=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$B/bin/tsm-cts" run --adapter "$B/lib/tsmref_adapter.so" --no-summary "$@" >"$log" 2>&1 ||
    { echo "run_bench.sh: tsm-cts run $* failed (see $log)" >&2; exit 1; }
  t1=$(date +%s.%N)
  grep -m1 '^# Pass [0-9]' "$log" | tr -d ',#' | awk -v a="$t0" -v b="$t1" '
    { s = 0; for (i = 1; i < NF; i += 2) if ($i != "NotSupported" && $i != "Skip") s += $(i + 1) }
    END { if (NR == 0) { print "run_bench.sh: no TAP summary line" > "/dev/stderr"; exit 1 }
          print s, b - a }'
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

# The judge on large tensors: K iterations of the IREE seed's loop (as
# cases/dlpack/seeds/iree-add-loop-large.tsm: two [256, 256, 256] f32 imports of 64 MiB
# each, their sum, the manager closed), against memset + memcmp of the same bytes
# (bench-memspeed): the
# judge's seconds per GiB it makes, imports and adds, and the full-size seed's time on
# the CPU estimated from them (10,000 iterations).
iree_case() { # K
  cat <<CASE
---
description: Bench case (bench/run_bench.sh): $1 iterations of the IREE seed's loop at full size
clauses: [DLP.DEL.1, DLP.MGR.1]
origin: bench/README.md (judge_s_per_gib_vs_memcmp, iree_seed_full_cpu_s_estimate)
requires: [dlpack-c]
devices: [cpu]
tags: [bench]
timeout: 3600000
---
manager consumer = sub root
repeat $1 {
  manager call = sub consumer
  dlpack x = make versioned [256, 256, 256] arange
  dlpack y = make versioned [256, 256, 256] arange
  tensor a = import x into call
  tensor b = import y into call
  tensor z = add a b
  close call
  expect deleted x == 1
  expect deleted y == 1
  expect bytes == 0
}
close consumer
CASE
}
# Runs of FROM and of ITERATIONS iterations: the difference of their medians is what an
# iteration costs once the process, the case and the first fresh buffers are paid for,
# which is what 10,000 iterations cost each (the first run's time is the rest of the
# estimate).
iree_lo=${BENCH_IREE_FROM:-2}
iree_hi=${BENCH_IREE_ITERATIONS:-6}
echo "== judge: the IREE seed's loop at full size (3 x 64 MiB an iteration), $iree_lo and $iree_hi iterations"
for k in "$iree_lo" "$iree_hi"; do
  mkdir -p "$out/iree-$k/dlpack"
  iree_case "$k" >"$out/iree-$k/dlpack/iree.tsm"
done
# IREE_ROUNDS runs of each, alternating; the medians (single runs move by a fifth here).
iree_rounds=${BENCH_IREE_ROUNDS:-3}
lo_times=() hi_times=()
for ((r = 0; r < iree_rounds; r++)); do
  read -r runs secs < <(judge_run "$out/iree-$iree_lo.tap" --cases "$out/iree-$iree_lo" --spec spec "$out/iree-$iree_lo")
  lo_times+=("$secs")
  read -r runs secs < <(judge_run "$out/iree-$iree_hi.tap" --cases "$out/iree-$iree_hi" --spec spec "$out/iree-$iree_hi")
  hi_times+=("$secs")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
secs_lo=$(median "${lo_times[@]}")
secs_hi=$(median "${hi_times[@]}")
floor=$("$B/bin/bench-memspeed")
awk -v lo="$iree_lo" -v hi="$iree_hi" -v a="$secs_lo" -v b="$secs_hi" -v f="$floor" 'BEGIN {
  it = (b - a) / (hi - lo); gib = 3 * 64 / 1024; per = it / gib; full = a + it * (10000 - lo)
  printf "  %.2f s and %.2f s (medians): %.3f s an iteration, %.3f s/GiB; memset+memcmp %.4f s/GiB: %.1fx; the full seed ~%.0f s\n", a, b, it, per, f, per / f, full
  printf "{\"name\": \"judge_s_per_gib_vs_memcmp\", \"value\": %.6g, \"unit\": \"s/GiB\", \"baseline_name\": \"memset_memcmp\", \"baseline_value\": %.6g, \"ratio\": %.4f, \"goal\": \"<= 3\", \"met\": %s}\n", per, f, per / f, per / f <= 3 ? "true" : "false" >> ENVIRON["BENCH_JSON"]
  printf "{\"name\": \"iree_seed_full_cpu_s_estimate\", \"value\": %.6g, \"unit\": \"s\", \"baseline_name\": null, \"baseline_value\": null, \"ratio\": null, \"goal\": \"<= 1800\", \"met\": %s}\n", full, full <= 1800 ? "true" : "false" >> ENVIRON["BENCH_JSON"]
}'

echo "== judge: the case library (cases, -j 2)"
read -r runs secs < <(judge_run "$out/suite.tap" -j 2 cases)
cases_per_s=$(awk -v n="$runs" -v s="$secs" 'BEGIN { printf "%.1f", n / s }')
echo "  $runs runs, $secs s: $cases_per_s runs/s"
figure suite_cases_per_s "$cases_per_s" "runs/s"

echo "== results"
"$PY" bench/results.py "$BENCH_JSON" "$out/results.json"
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "make bench: %.0f s\n", b - a }'
