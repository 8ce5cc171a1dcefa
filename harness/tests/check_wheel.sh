#!/usr/bin/env bash
# harness/tests/check_wheel.sh: the tsm-cts wheel as a new user gets it (issue 33): built
# by `make wheel`, installed into a fresh venv outside the checkout from the wheelhouse
# of `make deps` alone, then pytest with the plugin against numpy and against an array
# module written there (tinyarray), each run's status the same as the bridge's own run
# of that pair, and the plugin's self-tests (harness/tests/wheel/test_plugin.py).
#
#   bash harness/tests/check_wheel.sh BUILD_DIR [INTEROP_JSON]
#
# INTEROP_JSON: a report of `make interop` (the full matrix, --profile standard) to take
# the bridge's runs of numpy from; without it the bridge runs {tsmref, numpy} here.
# Environment (wheel.mk passes them): VENV_PY, the .venv's python, whose base interpreter
# makes the fresh venv; WHEELHOUSE, the folder of pinned wheels whose pins.txt names them.
# The runs outside the checkout happen in parallel (most of their time is the cases'
# loops waiting for deleters). Prints one line per check (ok / not ok), then
# `N passed, M failed`; exits 1 if any check failed.
set -uo pipefail
BUILD=${1:?usage: check_wheel.sh BUILD_DIR [INTEROP_JSON]}
INTEROP=${2:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
BUILD=$(cd "$BUILD" && pwd) || exit 2
# a report the interop lane did not write (it failed early) is run here instead
[ -f "$INTEROP" ] && INTEROP=$(cd "$(dirname "$INTEROP")" && pwd)/$(basename "$INTEROP") || INTEROP=
# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
VENV_PY=${VENV_PY:-.venv/bin/python}
WHEELHOUSE=${WHEELHOUSE:-.venv/wheelhouse}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tsm-cts-wheel.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export TSM_CTS_PROFILE=standard  # what a library's CI runs; the bridge's runs below too
# A user's shell has none of the checkout's variables.
unset TSM_CTS_BUILD TSM_CTS_PEERS TSM_CTS_SPEC TSM_CTS_CASES TSM_CTS_EXPECTATIONS PYTHONPATH

# ---- build, install ---------------------------------------------------------------------
if make --no-print-directory BUILD="$BUILD" WHEEL_DIST="$TMP/dist" VENV_PY="$VENV_PY" wheel \
    >"$TMP/wheel.log" 2>&1; then
  whl=$(ls "$TMP"/dist/tsm_cts-*.whl)
  ok "make wheel: $(basename "$whl") ($(( $(stat -c %s "$whl") / 1024 )) KiB)"
else
  not_ok "make wheel"; tail -n 20 "$TMP/wheel.log" | show; tap_summary; exit
fi
pins=$(cat "$WHEELHOUSE/pins.txt" 2>/dev/null) ||
  { not_ok "no $WHEELHOUSE/pins.txt: run 'make deps'"; tap_summary; exit; }
base=$("$VENV_PY" -c 'import sys; print(sys._base_executable)')
venv=$TMP/venv
# The .venv's pip installs into the new venv (--python), which needs no pip of its own.
# shellcheck disable=SC2086
if "$base" -m venv --without-pip "$venv" &&
   "$VENV_PY" -m pip --python "$venv/bin/python" install -q --no-compile --no-index \
     --disable-pip-version-check --find-links "$WHEELHOUSE" "$whl" $pins >"$TMP/pip.log" 2>&1; then
  ok "installed into a fresh venv outside the checkout ($venv) with $pins"
else
  not_ok "pip install of the wheel into a fresh venv"; show <"$TMP/pip.log"; tap_summary; exit
fi
py=$venv/bin/python
mkdir -p "$TMP/user" "$TMP/selftest"
cp "$HERE/wheel/tinyarray.py" "$TMP/user/"
cp "$HERE/wheel/test_plugin.py" "$HERE/wheel/tinyarray.py" "$TMP/selftest/"

where=$(cd "$TMP/user" && "$py" -m tsm_cts paths)
if grep -q "^judge: $venv/" <<<"$where" && ! grep -q "$ROOT" <<<"$where" &&
   (cd "$TMP/user" && "$venv/bin/tsm-cts" --version >/dev/null); then
  ok "the installed package finds its judge, cases and spec in the venv, none in the checkout"
else
  not_ok "python -m tsm_cts paths"; show <<<"$where"
fi

# ---- the runs ---------------------------------------------------------------------------
plugin() { # NAME PEER: pytest with the plugin in the user's folder
  (cd "$TMP/user" && PYTHONPATH="$TMP/user" "$py" -m pytest -p no:cacheprovider -q \
    --tsm-peer="$2" --tsm-json "$TMP/$1.json" --junitxml "$TMP/$1.xml" >"$TMP/$1.out" 2>&1)
}
bridge() { # NAME PEERS [ARGS...]: the bridge from the checkout, as `make interop` runs it
  local name=$1 peers=$2
  shift 2
  PYTHONPATH="$TMP/user:$BUILD/python:harness/python" TSM_CTS_BUILD="$BUILD" JAX_PLATFORMS=cpu \
    "$VENV_PY" harness/python/bridge.py run --peers "$peers" --profile standard "$@" \
    --json "$TMP/bridge-$name.json" cases >"$TMP/bridge-$name.out" 2>&1
}
start=$SECONDS
plugin numpy numpy & p1=$!
plugin tinyarray tinyarray & p2=$!
(cd "$TMP/selftest" && "$py" -m pytest -p pytester -p no:cacheprovider -q test_plugin.py \
  >"$TMP/selftest.out" 2>&1) & p3=$!
if [ -z "$INTEROP" ]; then
  bridge numpy tsmref,numpy & b1=$!
else
  cp "$INTEROP" "$TMP/bridge-numpy.json"; b1=
fi
TSM_CTS_ARRAY_MODULES=tinyarray bridge tinyarray tsmref,tinyarray \
  --peer-path harness/python/tsm_cts/_array_api_peer.py & b2=$!
wait $p1; rc_numpy=$?
wait $p2; rc_tiny=$?
wait $p3; rc_self=$?
[ -z "$b1" ] || wait "$b1"
wait $b2
echo "# the runs took $((SECONDS - start)) s"

# ---- the counts -------------------------------------------------------------------------
# compare NAME PEER RC: the plugin's runs (its JSON report) are the bridge's runs in which
# PEER takes part with the reference or itself, each with the same status, and pytest's
# junit-xml counts are those statuses (passed: Pass, Warning; skipped: NotSupported, Skip;
# xfailed: XFail, which junit-xml counts as skipped; failed: the rest).
compare() {
  local name=$1 peer=$2 rc=$3 out
  if out=$("$VENV_PY" - "$TMP/bridge-$name.json" "$TMP/$name.json" "$TMP/$name.xml" "$peer" <<'PY'
import collections, json, sys
import xml.etree.ElementTree as ET
bridge_json, plugin_json, junit, peer = sys.argv[1:]
mine = {peer, "tsmref", "-"}
b = {(r["case"], r["producer"], r["consumer"]): r["status"]
     for r in json.load(open(bridge_json))["results"]
     if peer in (r["producer"], r["consumer"]) and {r["producer"], r["consumer"]} <= mine}
p = {(r["case"], r["producer"], r["consumer"]): r["status"]
     for r in json.load(open(plugin_json))["results"]}
count = collections.Counter(p.values())
differ = sorted(k for k in set(b) | set(p) if b.get(k) != p.get(k))
suite = ET.parse(junit).getroot().find("testsuite")
failed = sum(count[s] for s in ("Fail", "XPass", "Crash", "Timeout", "Error"))
want = (len(p), failed, count["NotSupported"] + count["Skip"] + count["XFail"])
got = (int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors")),
       int(suite.get("skipped")))
print(", ".join(f"{k} {v}" for k, v in sorted(count.items())) + f" ({len(p)} runs)")
for k in differ[:10]:
    print(f"  {k[0]} {k[1]}->{k[2]}: bridge {b.get(k)}, plugin {p.get(k)}")
if got != want:
    print(f"  junit-xml tests/failed/skipped {got}, the statuses give {want}")
sys.exit(1 if differ or got != want or not p else 0)
PY
  ); then
    ok "pytest --tsm-peer=$peer: the bridge's runs and statuses: $out"
  else
    not_ok "pytest --tsm-peer=$peer (exit $rc) against the bridge: $out"
    tail -n 15 "$TMP/$name.out" | show
  fi
  if [ "$rc" -ne 0 ] && ! grep -q '"Fail"\|"XPass"\|"Crash"\|"Error"' "$TMP/$name.json" 2>/dev/null; then
    not_ok "pytest --tsm-peer=$peer exited $rc with no failing run"; tail -n 15 "$TMP/$name.out" | show
  fi
}
compare numpy numpy $rc_numpy
compare tinyarray tinyarray $rc_tiny
summary=$(tail -n 1 "$TMP/selftest.out")
if [ $rc_self -eq 0 ]; then
  ok "the plugin's self-tests: $summary"
else
  not_ok "the plugin's self-tests: $summary"; grep -E '^(FAILED|ERROR|E )' "$TMP/selftest.out" | show
fi
tap_summary
