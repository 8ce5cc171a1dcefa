#!/usr/bin/env bash
# bench/count_instructions.sh BUILD [PYTHON]: the instruction figures of bench/README.md
# (NAME_instructions, one beside each wall-time figure of bench-managers,
# bench-dlpack and bench-xapi, and beside bench-graphs' planner_time_growth_5000_vs_100),
# appended to the file $BENCH_JSON names. Runs each program's
# --count-instructions mode under valgrind's callgrind, collecting only inside the
# counted loops (bench_ir_*; bench_util.h says why and how), and bench/callgrind_ir.py
# turns each loop's inclusive count into instructions per operation (bench-graphs'
# operations are the tensors it planned, which it prints: its output under callgrind is
# kept, BUILD/bench/callgrind.PROGRAM.stdout). Part of `make
# bench` (bench/run_bench.sh); `make bench-instructions` runs it alone.
#   BENCH_IR_N      operations per counted loop (default 100000: bench_util.h; bench-graphs
#                   counts one plan of each DAG whatever N)
#   BENCH_CALLGRIND 0 skips the count (as without valgrind): the figures are written
#                   with value null, so that results.py still finds each one
# Without valgrind the figures are written with value null too, and it says so. A
# callgrind run that fails fails the step (a benchmark that stopped early): its log is
# BUILD/bench/callgrind.PROGRAM.log.
set -eu
B=${1:?usage: bench/count_instructions.sh BUILD [PYTHON]}
PY=${2:-python3}
n=${BENCH_IR_N:-100000}
out=$B/bench
mkdir -p "$out"
programs="managers dlpack graphs xapi"
# bench-xapi exits with this status when it was built without Python (it names what is
# missing): its figure is null then, as without valgrind.
NO_PYTHON=77

if [ "${BENCH_CALLGRIND:-1}" = 0 ] || ! command -v valgrind >/dev/null 2>&1; then
  if [ "${BENCH_CALLGRIND:-1}" = 0 ]; then
    echo "  BENCH_CALLGRIND=0: no instruction count; the *_instructions figures are null"
  else
    echo "  valgrind not found: no instruction count; the *_instructions figures are null"
  fi
  for p in $programs; do "$PY" bench/callgrind_ir.py null "$p"; done
  exit 0
fi

for p in $programs; do
  echo "== callgrind: $B/bin/bench-$p --count-instructions $n"
  # The output file is rewritten, not numbered by pid, so that a stale one is never read.
  rm -f "$out/callgrind.$p.out" "$out/callgrind.$p.stdout"
  rc=0
  valgrind --tool=callgrind --toggle-collect='bench_ir_*' \
    --callgrind-out-file="$out/callgrind.$p.out" --log-file="$out/callgrind.$p.log" \
    "$B/bin/bench-$p" --count-instructions "$n" >"$out/callgrind.$p.stdout" || rc=$?
  if [ "$rc" = "$NO_PYTHON" ] && [ "$p" = xapi ]; then
    echo "  bench-xapi is built without Python: its instruction figure is null"
    "$PY" bench/callgrind_ir.py null "$p"
    continue
  elif [ "$rc" != 0 ]; then
    echo "count_instructions.sh: bench-$p under callgrind failed (see $out/callgrind.$p.log;" \
      "BENCH_CALLGRIND=0 skips the count)" >&2
    exit 1
  fi
  "$PY" bench/callgrind_ir.py figures "$p" "$n" "$out/callgrind.$p.out" \
    "$out/callgrind.$p.stdout"
done
