#!/usr/bin/env bash
# harness/tests/check_parse.sh: the one case front end, `tsm-cts parse --json`
# (cases/README.md, "Reading cases from a tool"), and the Python runner's use of it.
#
#   bash harness/tests/check_parse.sh BUILD_DIR
#
# - every case of cases/ (.tsm and .pytsm) and every harness/tests/parse/good-* parses
#   with exit 0 into one line of JSON that python3 -m json.tool accepts;
# - every harness/tests/parse/bad-*.pytsm and bad-*.tsm, all in one process, exits 1,
#   prints nothing on stdout, and its first line on stderr starts with FILE:LINE:COL:
#   from the .pos file;
# - a retired spelling (float32, int32) is read with a located warning;
# - harness/python/caselang.py reads every .pytsm case through the judge, and
#   `bridge.py lint` reports a bad case as FILE:LINE:COL.
#
# Prints one line per check (ok / not ok), closes with `N passed, M failed`; exits 1 if
# any check failed.
set -euo pipefail

# shellcheck source=harness/tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup check_parse.sh "$@"
PARSE=harness/tests/parse
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Every case in one judge process (one per file cost minutes under Valgrind): exit 0 and
# one line of valid JSON per file, in order.
mapfile -t files < <(find cases "$PARSE" \( -name '*.tsm' -o -name '*.pytsm' \) ! -name 'bad-*' | sort)
rc=0
"$CTS" parse --json "${files[@]}" >"$TMP/out.jsonl" 2>"$TMP/err" || rc=$?
if [ "$rc" -ne 0 ]; then
  not_ok "parse --json of ${#files[@]} cases: exit $rc, expected 0"
  show <"$TMP/err"
elif out=$(python3 - "$TMP/out.jsonl" "${files[@]}" 2>&1 <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
files = sys.argv[2:]
if len(lines) != len(files):
    sys.exit(f"{len(lines)} lines of JSON for {len(files)} cases")
for f, line in zip(files, lines):
    if json.loads(line).get("path") not in (f, None):
        sys.exit(f"{f}: its JSON line names {json.loads(line).get('path')}")
PY
); then
  ok "parse --json: ${#files[@]} cases are valid JSON, one line each"
else
  not_ok "parse --json: $out"
fi

check_located_all "$TMP" "$PARSE"/bad-*.pytsm "$PARSE"/bad-*.tsm

f=$PARSE/good-py-everything.pytsm
"$CTS" parse --json "$f" 2>"$TMP/err" >"$TMP/out.json"
if grep -q "^$f:13:19: warning: 'float32' is retired: write 'f32'" "$TMP/err" &&
  python3 -c 'import json,sys; sys.exit(len(json.load(open(sys.argv[1]))["warnings"]) != 2)' \
    "$TMP/out.json"; then
  ok "retired spellings are read with a located warning"
else
  not_ok "retired spellings: expected two warnings, the first at $f:13:19"
  show <"$TMP/err"
fi

PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
if TSM_CTS_BUILD="$BUILD" $PY -c '
import sys
sys.path.insert(0, "harness/python")
import caselang
files = caselang.collect(["cases/dlpack/python", "cases/peers/numpy", "cases/peers/pytorch", sys.argv[1]])
bad = [str(c) for _, c in caselang.parse_files(files) if not isinstance(c, dict)]
print("\n".join(bad))
sys.exit(1 if bad or len(files) < 2 else 0)' "$f" >"$TMP/err" 2>&1; then
  ok "caselang.py reads every .pytsm case through tsm-cts parse --json"
else
  not_ok "caselang.py could not read the .pytsm cases"
  show <"$TMP/err"
fi

rc=0
TSM_CTS_BUILD="$BUILD" $PY harness/python/bridge.py lint "$PARSE/bad-py-kind.pytsm" \
  >"$TMP/out" 2>/dev/null || rc=$?
if [ "$rc" -eq 1 ] && grep -q "^$PARSE/bad-py-kind.pytsm:$(cat "$PARSE/bad-py-kind.pos"): error: " "$TMP/out"; then
  ok "bridge.py lint reports FILE:LINE:COL"
else
  not_ok "bridge.py lint: exit $rc, expected 1 and a located error"
  show <"$TMP/out"
fi

tap_summary
