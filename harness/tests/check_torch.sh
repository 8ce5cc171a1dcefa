#!/usr/bin/env bash
# harness/tests/check_torch.sh: today's PyTorch, the newest torch release on PyPI that `make
# deps-torch` installs into its own venv (issue 33, item 4): judged as a Python peer (the
# bridge in that venv between the reference, numpy and torch, cases/**/*.pytsm) and through
# the libtorch adapter built against that wheel's own headers and libraries (cases/dlpack).
#
#   bash harness/tests/check_torch.sh BUILD_DIR
#
# Without that venv it says so and passes (the lane of `make check` runs where it exists).
# Known failures: harness/expectations/torch-pypi/ (python-torch.txt for the bridge,
# libtorch.txt for the adapter), the format of harness/expectations/README.md; any other
# Fail, or a line that no longer fails, fails the lane. Reports: BUILD_DIR/report/
# interop-torch.json (the bridge, --profile standard) and libtorch-pypi.json (the judge).
# Then harness/expectations/torch-pypi/summary.json, the committed record of the lane's
# counts that README's third-party table shows (machines without the venv have only it),
# must be this run's (harness/report/third_parties.py --check-torch-summary): a stale
# record fails the lane; `make torch-summary` rewrites it from these reports.
# Environment (wheel.mk passes them): TORCH_PY, the torch venv's python; VENV_PY.
set -uo pipefail
BUILD=${1:?usage: check_torch.sh BUILD_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
BUILD=$(cd "$BUILD" && pwd) || exit 2
# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
TORCH_PY=${TORCH_PY:-.venv/torch/bin/python}
EXPECT=harness/expectations/torch-pypi
if [ ! -x "$TORCH_PY" ] || ! version=$("$TORCH_PY" -c 'import torch; print(torch.__version__)' 2>/dev/null); then
  ok "skipped: no torch in $(dirname "$(dirname "$TORCH_PY")") ('make deps-torch' installs it)"
  tap_summary
  exit
fi
mkdir -p "$BUILD/report"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- torch as a Python peer ---------------------------------------------------------------
ext=$(make -s --no-print-directory BUILD="$BUILD" WHEEL_PY="$TORCH_PY" wheel-ext-path)
if make -s --no-print-directory BUILD="$BUILD" WHEEL_PY="$TORCH_PY" "$ext" >"$TMP/ext.log" 2>&1; then
  PYTHONPATH="$(dirname "$ext"):harness/python" TSM_CTS_BUILD="$BUILD" PYTHONNOUSERSITE=1 \
    "$TORCH_PY" harness/python/bridge.py run --peers tsmref,numpy,torch --profile standard \
    --expectations "$EXPECT" --json "$BUILD/report/interop-torch.json" cases \
    >"$BUILD/report/interop-torch.txt" 2>&1
  rc=$?
  totals=$(grep -E '^[A-Z][A-Za-z]+ [0-9]+(, [A-Z][A-Za-z]+ [0-9]+)*  \(' "$BUILD/report/interop-torch.txt")
  if [ $rc -eq 0 ]; then
    ok "torch $version as a Python peer with the reference and numpy: $totals"
  else
    not_ok "torch $version as a Python peer: $totals"
    grep -E '^(Fail|XPass|Crash|Error|warning):' "$BUILD/report/interop-torch.txt" | cut -c1-300 | show
  fi
else
  not_ok "the reference's extension for $TORCH_PY"; show <"$TMP/ext.log"
fi

# ---- ATen through the libtorch adapter ----------------------------------------------------
adapter=$BUILD/torch/libtorch_adapter.so
if make --no-print-directory BUILD="$BUILD" "$adapter" "$BUILD/bin/tsm-cts" >"$TMP/adapter.log" 2>&1; then
  known=$EXPECT/libtorch.txt
  [ -f "$known" ] || known=/dev/null
  "$BUILD/bin/tsm-cts" run --adapter "$adapter" --profile standard --strict -j "$(nproc)" \
    --expectations "$known" --json "$BUILD/report/libtorch-pypi.json" cases/dlpack \
    >"$BUILD/report/libtorch-pypi.tap" 2>"$TMP/judge.err"
  rc=$?
  if [ $rc -eq 0 ]; then
    ok "ATen of torch $version through the libtorch adapter: $(tail -n 2 "$BUILD/report/libtorch-pypi.tap" | head -n 1)"
  else
    not_ok "ATen of torch $version through the libtorch adapter: $(tail -n 2 "$BUILD/report/libtorch-pypi.tap" | head -n 1)"
    sed -n '/^failures:/,/^conformance/p' "$TMP/judge.err" | cut -c1-300 | show
  fi
else
  not_ok "the libtorch adapter against torch $version's headers"; tail -n 20 "$TMP/adapter.log" | show
fi
# ---- the committed record of this run (README's third-party table reads it) ----------------
summary=$EXPECT/summary.json
if [ -f "$BUILD/report/interop-torch.json" ] && [ -f "$BUILD/report/libtorch-pypi.json" ]; then
  if "${VENV_PY:-python3}" harness/report/third_parties.py --torch-summary "$summary" \
      --torch-interop "$BUILD/report/interop-torch.json" \
      --torch-adapter "$BUILD/report/libtorch-pypi.json" --check-torch-summary >"$TMP/summary.log" 2>&1; then
    ok "$summary is this run's counts"
  else
    not_ok "$summary is stale against this run ('make torch-summary' rewrites it)"; show <"$TMP/summary.log"
  fi
else
  not_ok "$summary checked: a report of this run is missing"
fi
tap_summary
