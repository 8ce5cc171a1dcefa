#!/usr/bin/env bash
# ci/check-gpu.sh: the GPU lanes (`make check-gpu`, issue "CUDA"), for a machine with an
# NVIDIA GPU, the CUDA toolkit (nvcc, compute-sanitizer) and, for the interop lane,
# PyTorch, CuPy or JAX with CUDA in the interpreter the bridge runs. Without a GPU it
# says so and exits 1 having run nothing: a GPU result is never claimed that did not run.
#
#   cases-cuda   every case of the library's default tier on cuda:0 through the
#                reference; the run fails when cuda:0 is not present or any case is not
#                ok
#   iree-cuda    the large tier (the IREE seed at full size: 10,000 iterations of two
#                64 MiB imports and their sum) on cuda:0, its wall time against the goal
#                of 10 minutes, and the GPU's used memory sampled twice a second
#                (nvidia-smi) during the run: min, max and the growth after the first
#                minute, which fails the lane past GPU_MEM_GROWTH_MIB (default 256)
#   memcheck     compute-sanitizer memcheck with leak checking over the judge and its
#                case processes (--target-processes all), the default tier on cuda:0
#   racecheck    compute-sanitizer racecheck over the kernels the graph and manager
#                cases launch
#   gen-cuda     GEN_COUNT generated cases (tsm-cts gen --device cuda:0: completed
#                against the model on cuda:0) run on cuda:0
#   combos-cuda  every combination of tsm-cts combos on cuda:0, the model deciding
#   bench-cuda   bench-graphs on cuda:0 (the planner's figures for ci/gpu-runs.md)
#   interop-cuda the capsule cases that name cuda:0 (cases/dlpack/python, `devices:
#                [cuda:0]`) through the bridge on cuda:0 (bridge.py run --device cuda:0)
#                in the machine's own python (GPU_PY, default python3; no .venv:
#                the bridge needs numpy alone), between the reference (its extension's
#                context on cuda:0: TSMREF_PY_DEVICE), numpy and
#                whichever of torch, cupy and jax import there; the reference's
#                extension built for GPU_PY, or carried in $BUILD/python-for-<its path>
#                (`make WHEEL_PY=... wheel-ext-path`); fails unless some peer made
#                arrays on cuda:0 and no run failed
#
# A GPU machine without a network (no `make deps`) runs the lanes over a build made
# elsewhere with the same CUDA toolkit: PREBUILT=1 uses $BUILD as it is. MEMCHECK_CASES
# narrows the memcheck lane (default: every case of the default tier); LANES names the
# lanes to run (default: all).
# Each run is recorded by hand in ci/gpu-runs.md (date, device, commit, this script's
# output). JOBS sets the parallel case runs; BUILD the build folder.
set -u
# The reference and the suite's own checks are judged under the strict profile
# (spec/README.md, "Strengths"), also when this script is run without make.
export TSM_CTS_PROFILE=${TSM_CTS_PROFILE:-strict}
cd "$(dirname "$0")/.."
# shellcheck source=ci/lanes.sh
. ci/lanes.sh

JOBS=${JOBS:-$(nproc)}
# Cases per case process on cuda:0 (tsm-cts run --batch): CUDA's start-up (context,
# cuBLAS, cuSOLVER, about 1.4 s) is paid once per BATCH cases; 1: a process each.
# memcheck and racecheck stay a process per case (their leak check runs at exit).
BATCH=${BATCH:-32}
GEN_COUNT=${GEN_COUNT:-1000}
MEMCHECK_CASES=${MEMCHECK_CASES:-cases}
DEFAULT_LANES="build cases-cuda iree-cuda memcheck racecheck gen-cuda combos-cuda bench-cuda interop-cuda"
GPU_PY=${GPU_PY:-python3}
SANITIZED_TIMEOUT_MS=300000 # a case process under compute-sanitizer runs many times slower
build=${BUILD:-build/check-gpu}
CTS=$build/bin/tsm-cts
ADAPTER=$build/lib/tsmref_adapter.so
SANITIZER_EXIT=90 # apart from the judge's 0-2 and the sanitizer lanes' 66, 86, 88

# SIMULATE=1 runs the lanes that need no GPU tool on the reference's cuda-sim:0 (the CPU
# backend with a CUDA session's semantics, TSMREF_SIMULATE_CUDA=1) instead: a rehearsal
# of this script on a machine without a GPU, never a GPU result (memcheck and racecheck
# are left out, and nothing of it goes into ci/gpu-runs.md).
DEVICE=cuda:0
if [ "${SIMULATE:-0}" = 1 ]; then
  DEVICE=cuda-sim:0
  export TSMREF_SIMULATE_CUDA=1
  DEFAULT_LANES="build cases-cuda gen-cuda combos-cuda bench-cuda"
  echo "check-gpu: SIMULATED on $DEVICE (the CPU): a rehearsal of the lanes, not a GPU result"
elif ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "check-gpu: no NVIDIA GPU on this machine (nvidia-smi lists none): the GPU lanes" \
    "need one, and nothing was run (SIMULATE=1 rehearses them on the CPU)" >&2
  exit 1
else
  nvidia-smi -L
fi
LANES=${LANES:-$DEFAULT_LANES}
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

build_gpu() {
  if [ -n "${PREBUILT:-}" ]; then
    ls "$CTS" "$ADAPTER" "$build/lib/libtsmref_cuda.so" "$build/bin/bench-graphs" || return 1
    echo "PREBUILT: the binaries in $build as they are"
    return 0
  fi
  need nvcc nvidia-cuda-toolkit || return 1
  make --no-print-directory -j"$JOBS" BUILD="$build" all
}

# A library run on $DEVICE into $build/report/NAME.{tap,json}; ok when the judge exits 0
# and the device was present. The arguments after NAME are tsm-cts run's: options and
# what to run.
cases_on_cuda() { # name tsm-cts-run-arguments...
  local name=$1
  shift
  mkdir -p "$build/report"
  "$CTS" run --adapter "$ADAPTER" --device "$DEVICE" --json "$build/report/$name.json" "$@" \
    >"$build/report/$name.tap"
  local rc=$?
  tail -n 1 "$build/report/$name.tap"
  grep -A12 '^not ok' "$build/report/$name.tap" | head -n 60
  if grep -q "$DEVICE not present" "$build/report/$name.tap" ||
    ! grep -q " \[$DEVICE\]\$" "$build/report/$name.tap"; then
    echo "$DEVICE is not present to the reference adapter (no case ran there): see its device_list" >&2
    return 1
  fi
  return $rc
}

compute_sanitizer() { # tool name [tsm-cts run options...]
  local tool=$1 name=$2
  shift 2
  need compute-sanitizer nvidia-cuda-toolkit || return 1
  local extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  mkdir -p "$build/report"
  compute-sanitizer --tool "$tool" "${extra[@]}" --target-processes all \
    --error-exitcode "$SANITIZER_EXIT" --log-file "$build/report/$name.%p.log" \
    "$CTS" run --adapter "$ADAPTER" --device cuda:0 -j "$JOBS" --timeout "$SANITIZED_TIMEOUT_MS" \
    "$@" >"$build/report/$name.tap"
  local rc=$?
  tail -n 1 "$build/report/$name.tap"
  grep -A12 '^not ok' "$build/report/$name.tap" | head -n 40
  local reports
  reports=$(grep -l 'ERROR SUMMARY: [1-9]' "$build/report/$name".*.log 2>/dev/null)
  if [ -n "$reports" ]; then
    echo "$tool: reports in:" $reports
    # each kind of report once, with how often it came
    cat $reports | grep -E '^========= [A-Z]' | grep -v 'SUMMARY' | sed 's/0x[0-9a-f]*/0x_/g' |
      sort | uniq -c | sort -rn | head -n 30
    grep -h -m 3 -A 14 -E '^========= (Invalid|Program hit|Leaked|Race|Error)' $reports | head -n 60
    return 1
  fi
  return $rc
}

# GEN_COUNT cases completed against the model on cuda:0, then run there.
gen_on_cuda() {
  rm -rf "$build/gen-cuda"
  "$CTS" gen --seed "$(date +%Y%m%d)" --count "$GEN_COUNT" --device "$DEVICE" --jobs "$JOBS" \
    --adapter "$ADAPTER" "$build/gen-cuda" || return 1
  cases_on_cuda gen-cuda -j "$JOBS" --batch "$BATCH" --cases "$build" "$build/gen-cuda"
}

combos_on_cuda() {
  "$CTS" combos --device "$DEVICE" -j "$JOBS" --adapter "$ADAPTER" \
    --json "$build/report/combos-cuda.json" | tail -n 4
  [ "${PIPESTATUS[0]}" -eq 0 ]
}

bench_cuda() {
  "$build/bin/bench-graphs" "$DEVICE" | tail -n 4
  [ "${PIPESTATUS[0]}" -eq 0 ]
}

# The large tier on cuda:0 with the GPU's used memory sampled (the lane's comment above):
# $build/report/iree-cuda.{tap,json} and gpu-memory.csv (ms since the start, MiB used).
iree_cuda() {
  local mem=$build/report/gpu-memory.csv start=$SECONDS rc
  mkdir -p "$build/report"
  nvidia-smi --id=0 --query-gpu=timestamp,memory.used --format=csv,noheader,nounits -lms 500 \
    >"$mem.raw" 2>/dev/null &
  local sampler=$!
  # shellcheck disable=SC2046 # one selector per case file of the large tier
  cases_on_cuda iree-cuda --large -j "$JOBS" --timeout 14400000 $(grep -rlE --include='*.tsm' '^tags:.*\blarge\b' cases)
  rc=$?
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  echo "iree-cuda: $((SECONDS - start)) s (goal: 600 s for the full-size IREE seed)"
  awk -F', *' -v limit="${GPU_MEM_GROWTH_MIB:-256}" '
    { n++; t[n] = $1; m[n] = $2 + 0 }
    END {
      if (n < 4) { print "iree-cuda: " n " memory samples: too few to judge"; exit 1 }
      lo = hi = m[1]; base = m[n < 120 ? int(n / 2) : 120]; top = 0
      for (i = 1; i <= n; i++) { if (m[i] < lo) lo = m[i]; if (m[i] > hi) hi = m[i] }
      for (i = (n < 120 ? int(n / 2) : 120); i <= n; i++) if (m[i] - base > top) top = m[i] - base
      printf "iree-cuda: GPU memory used %d to %d MiB in %d samples; growth after the first minute %d MiB (limit %d)\n", lo, hi, n, top, limit
      exit top > limit }' "$mem.raw" || rc=1
  mv "$mem.raw" "$mem"
  return $rc
}

# The bridge on cuda:0 in GPU_PY with the peers that import there (the lane's comment above).
interop_cuda() {
  local ext peers="tsmref,numpy" p py
  py=$(command -v "$GPU_PY") && "$py" -c 'import numpy' ||
    { echo "interop-cuda: $GPU_PY is missing or has no numpy" >&2; return 1; }
  local abs
  abs=$(cd "$build" && pwd) || return 1
  ext=$(make -s --no-print-directory BUILD="$abs" WHEEL_PY="$py" wheel-ext-path)
  if [ ! -f "$ext" ] && ! make -s --no-print-directory BUILD="$abs" WHEEL_PY="$py" "$ext"; then
    echo "interop-cuda: no reference extension for $py at $ext (build it where make runs," \
      "with WHEEL_PY naming the same path and Python version, and carry it)" >&2
    return 1
  fi
  for p in torch cupy jax; do
    if "$py" -c "import $p" 2>/dev/null; then peers="$peers,$p"; fi
  done
  echo "interop-cuda: $py ($("$py" -V 2>&1)), peers $peers"
  mkdir -p "$build/report"
  PYTHONPATH="$(dirname "$ext"):harness/python" TSM_CTS_BUILD="$build" \
    TSMREF_PY_DEVICE="${TSMREF_PY_DEVICE:-cuda:0}" "$py" harness/python/bridge.py run --device cuda:0 --profile standard --peers "$peers" \
    --expectations "${GPU_EXPECTATIONS:-harness/expectations/python-cuda}" \
    --json "$build/report/interop-cuda.json" cases/dlpack/python >"$build/report/interop-cuda.txt" 2>&1
  local rc=$?
  grep -E '^(bridge.py|producer|[a-z-]+ +[0-9]+/|NotSupported|Pass|Fail|Warning|conformance|XPass|Crash|Error)' \
    "$build/report/interop-cuda.txt" | cut -c1-300 | head -n 40
  # Something ran on cuda:0: a Pass of a producer other than the reference and numpy.
  if ! "$py" -c 'import json, sys
rs = json.load(open(sys.argv[1]))["results"]
sys.exit(not any(r["status"] == "Pass" and r["producer"] not in ("tsmref", "numpy", "-") for r in rs))' \
    "$build/report/interop-cuda.json"; then
    echo "interop-cuda: no peer made arrays on cuda:0 (none of torch, cupy, jax has CUDA here?)" >&2
    return 1
  fi
  return $rc
}

gpu_lane() { # name command...: runs the lane when LANES names it
  case " $LANES " in *" $1 "*) lane "$@" ;; esac
}
gpu_lane build build_gpu
gpu_lane cases-cuda cases_on_cuda cases-cuda -j "$JOBS" --batch "$BATCH" --timeout 600000 cases
gpu_lane iree-cuda iree_cuda
# shellcheck disable=SC2086 # MEMCHECK_CASES: several selectors
gpu_lane memcheck compute_sanitizer memcheck memcheck $MEMCHECK_CASES
gpu_lane racecheck compute_sanitizer racecheck racecheck cases/graphs cases/managers/op
gpu_lane gen-cuda gen_on_cuda
gpu_lane combos-cuda combos_on_cuda
gpu_lane bench-cuda bench_cuda
gpu_lane interop-cuda interop_cuda
lanes_end "make check-gpu"
