#!/usr/bin/env bash
# harness/tests/check_reports.sh: the judge's reports as CI tools read them, and its
# command line (issue 15: reports, sharding, CLI).
#
#   bash harness/tests/check_reports.sh BUILD_DIR
#
# - TAP: Debian's `prove` (TAP::Harness) parses the output of a passing run, of a run
#   with failures (YAML diagnostics) and of case names holding '#' and '\' run with
#   --repeat, and counts what the judge counts;
# - JUnit: the Jenkins xunit plugin's junit-10 rules (checked element by element below,
#   no third-party schema file), and PyPI's junitparser reads the counts of the JSON
#   report, for a run and for a run merged with the build's interop.json (make interop);
# - JSON: results.json, a merged report and the bridge's interop.json (when the build has
#   one) validate against harness/schema/results.schema.json with PyPI's jsonschema;
# - --shard I/N over N = 3 merged with `tsm-cts merge` equals the unsharded run;
# - case discovery lists each case once under a symlink loop and a symlinked file;
# - --help names every long option of the judge.
# Needs the .venv of `make deps` (junitparser, jsonschema) and prove (perl).
set -uo pipefail
BUILD=${1:?usage: check_reports.sh BUILD_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
CTS="$BUILD/bin/tsm-cts"
REF="$BUILD/lib/tsmref_adapter.so"
PY=.venv/bin/python
SCHEMA=harness/schema/results.schema.json
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SELECT=(cases/managers/temp cases/managers/create)

# py_check OK_TEXT FAIL_TEXT ARGS...: runs the Python program on stdin with ARGS in the
# .venv; ok when it exits 0, else not ok with what it printed.
py_check() {
  local ok_text=$1 fail_text=$2 out
  shift 2
  if out=$("$PY" - "$@" 2>&1); then ok "$ok_text"; else not_ok "$fail_text"; echo "$out" | show; fi
}

# ---- TAP through prove -------------------------------------------------------------

# prove_counts TAP WANT_TESTS WANT_FAILED: prove parses TAP with no parse error and
# counts WANT_TESTS tests of which WANT_FAILED fail.
prove_counts() {
  local out
  out=$(prove -e cat "$1" 2>&1)
  if grep -q "Parse errors" <<<"$out"; then
    echo "$out" | show
    return 1
  fi
  grep -q "Tests=$2," <<<"$out" || { echo "$out" | tail -n 4 | show; return 1; }
  if [ "$3" -eq 0 ]; then grep -q "Result: PASS" <<<"$out"
  else grep -q "Failed $3/$2 subtests" <<<"$out"; fi || { echo "$out" | tail -n 6 | show; return 1; }
}

"$CTS" run --adapter "$REF" -j 2 --json "$TMP/full.json" --junit "$TMP/full.xml" \
  --no-summary "${SELECT[@]}" >"$TMP/full.tap" 2>/dev/null
shown=$(grep -cE '^(not )?ok ' "$TMP/full.tap")
if prove_counts "$TMP/full.tap" "$shown" 0; then ok "prove passes the TAP of a passing run ($shown tests)"
else not_ok "prove on a passing run"; fi

"$CTS" run --adapter "$BUILD/lib/broken_liar.so" -j 2 --no-summary "${SELECT[@]}" \
  >"$TMP/liar.tap" 2>/dev/null
total=$(grep -cE '^(not )?ok ' "$TMP/liar.tap")
bad=$(grep -cE '^not ok ' "$TMP/liar.tap")
if [ "$bad" -gt 0 ] && prove_counts "$TMP/liar.tap" "$total" "$bad"; then
  ok "prove reads a run with failures and YAML diagnostics ($bad of $total not ok)"
else
  not_ok "prove on a run with failures ($bad of $total not ok)"
fi

mkdir -p "$TMP/odd"
first=$(ls cases/managers/temp/*.tsm | head -n 1)
cp "$first" "$TMP/odd/hash#name.tsm"
cp "$first" "$TMP/odd/back\\slash.tsm"
"$CTS" run --adapter "$REF" --repeat 2 --cases "$TMP/odd" --no-summary "$TMP/odd" \
  >"$TMP/odd.tap" 2>/dev/null
n=$(grep -cE '^ok ' "$TMP/odd.tap")
if prove_counts "$TMP/odd.tap" "$n" 0 && ! grep -E '^ok ' "$TMP/odd.tap" | grep -Eq '[^\\]#'; then
  ok "names with '#' and '\\' and --repeat labels stay descriptions ($n tests)"
else
  not_ok "escaped names: $(grep -E '^ok ' "$TMP/odd.tap" | head -n 3)"
fi

# ---- JUnit: the junit-10 rules and junitparser ----------------------------------------

# The interop matrix's report joined with the C cases' (when the build has run it).
pairs=("$TMP/full.xml" "$TMP/full.json")
if [ -f "$BUILD/report/interop.json" ] &&
   "$CTS" merge --json "$TMP/with-interop.json" --junit "$TMP/with-interop.xml" \
     "$TMP/full.json" "$BUILD/report/interop.json" >/dev/null 2>&1; then
  pairs+=("$TMP/with-interop.xml" "$TMP/with-interop.json")
fi
py_check "JUnit follows the junit-10 rules; junitparser counts what the JSON counts ($((${#pairs[@]} / 2)) reports)" \
  "JUnit:" "${pairs[@]}" <<'PY'
import runpy, sys
sys.argv[0] = "harness/tests/junit10.py"
runpy.run_path(sys.argv[0], run_name="__main__")
PY

# ---- shard and merge ---------------------------------------------------------------

for i in 1 2 3; do
  "$CTS" run --adapter "$REF" -j 2 --shard "$i/3" --no-summary --json "$TMP/shard$i.json" \
    "${SELECT[@]}" >/dev/null 2>&1
done
"$CTS" merge --json "$TMP/merged.json" --junit "$TMP/merged.xml" \
  "$TMP/shard1.json" "$TMP/shard2.json" "$TMP/shard3.json" >"$TMP/merge.txt" 2>&1
merge_rc=$?
if out=$(python3 - "$TMP/full.json" "$TMP/merged.json" "$TMP/shard1.json" <<'PY' 2>&1
import json, sys
key = lambda r: (r["case"], r["device"], r["repeat"], r["status"], tuple(r["clauses"]))
full, merged, one = (json.load(open(p)) for p in sys.argv[1:4])
a, b = sorted(map(key, full["results"])), sorted(map(key, merged["results"]))
if a != b:
    sys.exit(f"merged shards differ: {len(a)} runs unsharded, {len(b)} merged")
if not 0 < len(one["results"]) < len(a) or one["shard"] != {"index": 1, "count": 3}:
    sys.exit("shard 1/3 does not hold a proper part of the runs")
PY
) && [ $merge_rc -eq 0 ] && grep -q "tsm-cts summary" "$TMP/merge.txt"; then
  ok "--shard 1/3, 2/3, 3/3 merged equal the unsharded run; merge prints the summary"
else
  not_ok "shard + merge (merge exit $merge_rc): $out"
fi

# ---- JSON Schema ---------------------------------------------------------------------

reports=("$TMP/full.json" "$TMP/merged.json" "$TMP/shard2.json")
[ -f "$BUILD/report/interop.json" ] && reports+=("$BUILD/report/interop.json")
[ -f "$TMP/with-interop.json" ] && reports+=("$TMP/with-interop.json")
py_check "${#reports[@]} reports validate against $SCHEMA" "JSON Schema:" "$SCHEMA" "${reports[@]}" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
bad = []
for p in sys.argv[2:]:
    for e in v.iter_errors(json.load(open(p))):
        bad.append(f"{p}: {'/'.join(map(str, e.path))}: {e.message[:200]}")
print("\n".join(bad[:20]))
sys.exit(1 if bad else 0)
PY

# ---- case discovery and the command line -----------------------------------------------

mkdir -p "$TMP/loop/sub"
cp "$first" "$TMP/loop/sub/one.tsm"
ln -s .. "$TMP/loop/sub/up"
ln -s sub/one.tsm "$TMP/loop/alias.tsm"
listed=$(timeout 20 "$CTS" list --cases "$TMP/loop" "$TMP/loop" 2>&1 | grep -c 'one.tsm\|alias.tsm')
if [ "$listed" = 1 ]; then ok "a symlink loop and a symlinked file: the case is listed once"
else not_ok "symlink loop: the case is listed $listed times"; fi

help=$("$CTS" --help)
missing=$(sed -n 's/^ *{"\([a-z-]*\)", .*_argument.*/\1/p' harness/src/main.c | while read -r opt; do
  grep -q -- "--$opt" <<<"$help" || echo "--$opt"; done)
if [ -z "$missing" ] && "$CTS" run --bogus >/dev/null 2>&1; [ $? -eq 2 ]; then
  ok "--help names every long option; an unknown option is a usage error"
else
  not_ok "--help lacks: $missing"
fi

tap_summary
