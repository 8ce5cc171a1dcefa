#!/usr/bin/env bash
# harness/tests/check_portability.sh BUILD: lane portability. Every case of the library
# (hand-written and generated) on the reference's CUDA-kind device simulated on the
# CPU (TSMREF_SIMULATE_CUDA=1 lists "cuda-sim:0": impl/cpu/sim_cuda.c): the judge runs
# the model with a CUDA session's semantics (a compact host import is copied, its
# deleter runs at the import: DLP.IMPORT.7, DLP.MGR.4) and the reference behaves so, so
# a case that holds on the CPU alone, written without `devices: [cpu]`, is Error there
# ("the case contradicts the spec model"), as it would be on cuda:0, and the cases that
# say `devices: [cuda]` run in CPU CI too. The lane fails on any result but Pass and
# NotSupported (a case restricted to another device), and first proves that it can:
# a planted case that assumes the CPU's aliasing (harness/tests/portability/) passes on
# cpu and is Error on cuda-sim:0; and without the variable the device is not listed.
# Then 100 cases generated on each kind (tsm-cts gen --device) are judged on the other,
# and every combination of tsm-cts combos runs on cuda-sim:0 (about 25 s on 2 cores).
set -u
build=${1:?usage: check_portability.sh BUILD}
cd "$(dirname "$0")/../.." || exit 2
judge=$build/bin/tsm-cts
adapter=$build/lib/tsmref_adapter.so
out=$build/portability
mkdir -p "$out"
export TSM_CTS_PROFILE=${TSM_CTS_PROFILE:-strict}
rc=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; rc=1; }
sim() { TSMREF_SIMULATE_CUDA=1 "$judge" run --adapter "$adapter" --device cuda-sim:0 "$@"; }

# 1. The simulated device exists only on demand.
"$judge" run --adapter "$adapter" cases/managers/adopt/refused.tsm 2>/dev/null |
  grep -m 1 '^# tsm-cts: adapter' >"$out/plain.head"
if grep -q 'cuda-sim' "$out/plain.head"; then
  bad "the reference lists cuda-sim:0 without TSMREF_SIMULATE_CUDA: $(cat "$out/plain.head")"
else
  ok "cuda-sim:0 is listed only with TSMREF_SIMULATE_CUDA"
fi

# 2. The planted case: Pass on cpu, Error on cuda-sim:0 for contradicting the model.
planted=harness/tests/portability/cpu-aliasing-assumed.tsm
"$judge" run --adapter "$adapter" --device cpu "$planted" >"$out/planted-cpu.tap" 2>&1
cpu_rc=$?
sim "$planted" >"$out/planted-sim.tap" 2>&1
if [ $cpu_rc -eq 0 ] && grep -q '^ok 1 .*\[cpu\]$' "$out/planted-cpu.tap"; then
  ok "the planted case passes on cpu"
else
  bad "the planted case does not pass on cpu (see $out/planted-cpu.tap)"
fi
if grep -q '^not ok 1 .*\[cuda-sim:0\]' "$out/planted-sim.tap" &&
  grep -q 'Error.*contradicts the spec model' "$out/planted-sim.tap"; then
  ok "the planted case is Error on cuda-sim:0: $(grep -m 1 -o 'the case contradicts.*' "$out/planted-sim.tap")"
else
  bad "the planted case is not Error on cuda-sim:0: the lane could not see a case that holds on cpu alone (see $out/planted-sim.tap)"
fi

# 3. The library on cuda-sim:0.
sim -j "${JOBS:-$(nproc)}" --json "$out/results.json" cases >"$out/library.tap" 2>"$out/library.err"
lib_rc=$?
ran=$(grep -c ' \[cuda-sim:0\]' "$out/library.tap")
total=$(grep -c '^\(not \)\{0,1\}ok ' "$out/library.tap")
if [ $lib_rc -eq 0 ] && [ "$ran" -gt 0 ]; then
  ok "the library on cuda-sim:0: $ran of $total cases ran there, $(tail -n 2 "$out/library.tap" | head -n 1 | sed 's/^# //')"
else
  bad "the library on cuda-sim:0 (exit $lib_rc, $ran of $total cases ran there)"
  grep '^not ok' "$out/library.tap" | head -n 40
  # A contradiction of the model on a CUDA device by a case that passes on the CPU is a
  # portability finding: say what to do about it.
  grep -o '^  Error \[cuda-sim:0\] cases/[^:]*:[0-9]*: .*contradicts the spec model.*' \
    "$out/library.err" | sed 's/^  Error \[cuda-sim:0\] /  not portable: /' |
    sed 's/$/ (restrict it with `devices: [cpu]` and write its CUDA counterpart with `devices: [cuda]`)/'
fi
# 4. Generated cases both ways: completed on one device kind (tsm-cts gen marks a case
# that imports a tensor the judge made with that kind alone), judged on the other, where
# each passes or is NotSupported.
gen_other() { # NAME COMPLETE_ON RUN_ON SEED
  local name=$1 on=$2 run_on=$3 seed=$4 dir=$out/gen-$1
  rm -rf "$dir"
  if ! TSMREF_SIMULATE_CUDA=1 "$judge" gen --seed "$seed" --count 100 --adapter "$adapter" \
    --device "$on" "$dir" >"$dir.log" 2>&1; then
    bad "tsm-cts gen --device $on failed (see $dir.log)"
    return
  fi
  TSMREF_SIMULATE_CUDA=1 "$judge" run --adapter "$adapter" --device "$run_on" -j "${JOBS:-$(nproc)}" \
    --cases "$dir" "$dir" >"$dir.tap" 2>"$dir.err"
  local r=$? n held
  n=$(grep -c '^\(not \)\{0,1\}ok ' "$dir.tap")
  held=$(grep -c "\[$run_on\]" "$dir.tap")
  if [ $r -eq 0 ] && [ "$held" -gt 0 ]; then
    ok "$n cases generated on $on (seed $seed), judged on $run_on: $held ran there and passed, the rest hold on $on alone"
  else
    bad "cases generated on $on (seed $seed) do not hold on $run_on (exit $r)"
    grep -A8 '^not ok' "$dir.tap" | head -n 30
  fi
}
gen_other cpu-to-sim cpu cuda-sim:0 11
gen_other sim-to-cpu cuda-sim:0 cpu 12

# 5. Every combination of tsm-cts combos on cuda-sim:0, the model deciding with a CUDA
# session's semantics (the combos-cuda lane of make check-gpu, on the CPU).
if TSMREF_SIMULATE_CUDA=1 "$judge" combos --device cuda-sim:0 -j "${JOBS:-$(nproc)}" \
  --adapter "$adapter" >"$out/combos.log" 2>&1; then
  ok "combos on cuda-sim:0: $(grep -o 'ran [0-9]* of [0-9]*' "$out/combos.log" | tail -n 1), $(grep -m 1 -o '[0-9]* unknown divergences' "$out/combos.log")"
else
  bad "combos on cuda-sim:0 (see $out/combos.log)"
  grep -A3 -m 3 'combination' "$out/combos.log" | head -n 20
fi
exit $rc
