#!/usr/bin/env bash
# bench/fuzz_execs.sh BIN_DIR: execs/s of each fuzz target (fuzz/README.md) built with
# the standalone driver in BIN_DIR: FUZZ_BENCH_RUNS generated inputs (seed 1, default
# 20000) timed, against the adapter the targets load (TSM_FUZZ_ADAPTER or the build's
# reference). A target that stops at a known finding is timed on the inputs it ran.
set -u
bin=${1:?usage: bench/fuzz_execs.sh BIN_DIR}
runs=${FUZZ_BENCH_RUNS:-20000}
printf '%-16s %10s %10s\n' target inputs execs/s
for t in $(ls "$bin"); do
  start=$(date +%s.%N)
  if "$bin/$t" -runs="$runs" -seed=1 >/dev/null 2>&1; then n=$runs; else n=finding; fi
  end=$(date +%s.%N)
  [ "$n" = finding ] && { printf '%-16s %10s %10s\n' "$t" "stopped" "-"; continue; }
  awk -v t="$t" -v n="$n" -v s="$start" -v e="$end" \
    'BEGIN { printf "%-16s %10d %10.0f\n", t, n, n / (e - s) }'
done
