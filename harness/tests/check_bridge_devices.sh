#!/usr/bin/env bash
# harness/tests/check_bridge_devices.sh: the bridge's device paths on a CPU stand-in for a
# CUDA framework (issue 31, item 4): the cases of cases/dlpack/python that name cuda:0
# (`devices: [cuda:0]`), run with `bridge.py run --device cuda:0`, pass for the stand-in
# of harness/tests/devices/cuda_standin.py (arrays that say kDLCUDA over host memory)
# and catch its broken twin; never a GPU result (ci/check-gpu.sh, lane interop-cuda).
#
#   bash harness/tests/check_bridge_devices.sh BUILD_DIR
#
# Checks: the stand-in with the reference and numpy on cuda:0 passes every device case,
# the reference and numpy are NotSupported as producers there (counted against them)
# and the report names the device ("P->C@cuda:0") and merges; cuda-standin-broken
# (dl_device ignored, copy=False across devices accepted, stream 0 accepted, a real
# stream refused) fails the dl_device, copy=False and from_dlpack(device=) cases and gets
# a Warning for each stream case (DLP.PY.STREAM.1 is a SHOULD);
# the reference's extension with its context on cuda-sim:0 (TSMREF_PY_DEVICE; the CPU
# backend with a CUDA session's semantics) passes the device cases as producer and as
# consumer, and is NotSupported where it does not export to the host; a CPU run leaves
# the device cases out. Environment: VENV_PY (default .venv/bin/python).
set -uo pipefail
BUILD=${1:?usage: check_bridge_devices.sh BUILD_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
BUILD=$(cd "$BUILD" && pwd) || exit 2
# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
PY=${VENV_PY:-.venv/bin/python}
STANDIN=harness/tests/devices/cuda_standin.py
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mapfile -t CASES < <(grep -l '^devices: \[cuda' cases/dlpack/python/*.pytsm)

bridge() { # name peers device: a run of the device cases into $TMP/name.{json,txt}
  PYTHONPATH="$BUILD/python:harness/python" TSM_CTS_BUILD="$BUILD" JAX_PLATFORMS=cpu \
    "$PY" harness/python/bridge.py run --profile standard --peer-path "$STANDIN" \
    --peers "$2" --device "$3" --json "$TMP/$1.json" "${CASES[@]}" >"$TMP/$1.txt" 2>&1
}

# status NAME CASE PRODUCER CONSUMER: the status of that run in $TMP/NAME.json
status() {
  "$PY" - "$TMP/$1.json" "$2" "$3" "$4" <<'EOF'
import json, sys
doc, case, p, c = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
print(next((r["status"] for r in doc["results"] if r["case"].endswith("/" + case)
            and r["producer"] == p and r["consumer"] == c), "absent"))
EOF
}

expect_status() { # name case producer consumer want
  local got
  got=$(status "$1" "$2" "$3" "$4")
  if [ "$got" = "$5" ]; then
    ok "$1: $2 [$3->$4] $got"
  else
    not_ok "$1: $2 [$3->$4] is $got, expected $5"
    grep -F "$2 [$3->$4]" "$TMP/$1.txt" | cut -c1-300 | show
  fi
}

if [ "${#CASES[@]}" -lt 8 ]; then
  not_ok "device cases: ${#CASES[@]} files say devices: [cuda...], expected the 8 of cases/dlpack/python"
fi

# ---- the stand-in: every device case passes -----------------------------------------------
if bridge good tsmref,numpy,cuda-standin cuda:0; then
  ok "cuda-standin with tsmref and numpy on cuda:0: $(grep -E '^[A-Z][a-zA-Z]+ [0-9]+.*\(' "$TMP/good.txt")"
else
  not_ok "cuda-standin on cuda:0: the run failed"
  grep -E '^(Fail|XPass|Crash|Error)' "$TMP/good.txt" | cut -c1-300 | show
fi
for f in "${CASES[@]}"; do
  c=$(basename "$f")
  if grep -q '^roles: \[producer\]' "$f"; then
    expect_status good "$c" cuda-standin - Pass
  else
    expect_status good "$c" cuda-standin cuda-standin Pass
  fi
done
expect_status good cuda-from-host.pytsm cuda-standin numpy Pass
expect_status good cuda-from-host.pytsm cuda-standin tsmref Pass
if "$PY" - "$TMP/good.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
rs = doc["results"]
assert rs and all(r["device"] == f"{r['producer']}->{r['consumer']}@cuda:0" for r in rs), \
    [r["device"] for r in rs][:3]
# a producer without cuda:0 is NotSupported, counted against it
for r in rs:
    if r["producer"] in ("tsmref", "numpy"):
        assert r["status"] == "NotSupported" and r.get("attributed_to") == r["producer"], r
# a consumer without it that refuses the tensor there, likewise
roundtrip = [r for r in rs if r["case"].endswith("cuda-roundtrip.pytsm")
             and r["producer"] == "cuda-standin" and r["consumer"] == "numpy"]
assert roundtrip and roundtrip[0]["status"] == "NotSupported" and \
    roundtrip[0].get("attributed_to") == "numpy", roundtrip
EOF
then
  ok "the report names the device (P->C@cuda:0); tsmref and numpy NotSupported on cuda:0, counted against them"
else
  not_ok "the device run's report"
fi
if "$BUILD/bin/tsm-cts" merge --json "$TMP/merged.json" "$TMP/good.json" >"$TMP/merge.txt" 2>&1; then
  ok "tsm-cts merge takes the device run's report"
else
  not_ok "tsm-cts merge of the device run's report"; show <"$TMP/merge.txt"
fi

# ---- the broken stand-in: caught ------------------------------------------------------------
if bridge broken numpy,cuda-standin,cuda-standin-broken cuda:0; then
  not_ok "cuda-standin-broken on cuda:0: the run passed"
else
  ok "cuda-standin-broken on cuda:0: the run fails ($(grep -cE '^Fail:' "$TMP/broken.txt") Fail lines)"
fi
expect_status broken cuda-dl-device-host.pytsm cuda-standin-broken - Fail
expect_status broken cuda-copy-false-host.pytsm cuda-standin-broken - Fail
expect_status broken cuda-from-host.pytsm cuda-standin-broken numpy Fail
expect_status broken cuda-from-host.pytsm cuda-standin-broken cuda-standin Fail
expect_status broken cuda-stream.pytsm cuda-standin-broken - Warning
expect_status broken cuda-stream-real.pytsm cuda-standin-broken - Warning
expect_status broken cuda-iree-loop.pytsm cuda-standin-broken cuda-standin Pass
expect_status broken cuda-dl-device-host.pytsm cuda-standin - Pass

# ---- the reference on cuda:0: its extension's context on cuda-sim:0 -------------------------
# (TSMREF_PY_DEVICE, TSMREF_SIMULATE_CUDA: the CPU backend with a CUDA session's semantics)
if TSMREF_SIMULATE_CUDA=1 TSMREF_PY_DEVICE=cuda-sim:0 bridge reference tsmref,cuda-standin cuda:0; then
  ok "the reference on cuda-sim:0 with cuda-standin: $(grep -E '^[A-Z][a-zA-Z]+ [0-9]+.*\(' "$TMP/reference.txt")"
else
  not_ok "the reference on cuda-sim:0: the run failed"
  grep -E '^(Fail|XPass|Crash|Error)' "$TMP/reference.txt" | cut -c1-300 | show
fi
for c in cuda-device-query cuda-stream cuda-copy-false-host; do
  expect_status reference "$c.pytsm" tsmref - Pass
done
for c in cuda-roundtrip cuda-iree-loop; do
  expect_status reference "$c.pytsm" tsmref tsmref Pass
  expect_status reference "$c.pytsm" tsmref cuda-standin Pass
  expect_status reference "$c.pytsm" cuda-standin tsmref Pass
done
# it makes no streams of its own: a real stream's case is NotSupported for it
expect_status reference cuda-stream-real.pytsm tsmref - NotSupported
expect_status reference cuda-stream-real.pytsm cuda-standin - Pass
# it exports on its own device alone: dl_device (1, 0) is BufferError, NotSupported
expect_status reference cuda-dl-device-host.pytsm tsmref - NotSupported
expect_status reference cuda-from-host.pytsm tsmref cuda-standin NotSupported

# ---- on the CPU the device cases are left out --------------------------------------------
bridge cpu tsmref,numpy cpu
if grep -q "^bridge.py: ${#CASES[@]} cases left out on cpu" "$TMP/cpu.txt" &&
  "$PY" -c 'import json, sys; sys.exit(len(json.load(open(sys.argv[1]))["results"]) != 0)' "$TMP/cpu.json"; then
  ok "a CPU run leaves the ${#CASES[@]} device cases out"
else
  not_ok "a CPU run of the device cases"; show <"$TMP/cpu.txt"
fi
tap_summary
