#!/usr/bin/env bash
# harness/tests/check_reports.sh: the judge's reports as CI tools read them, and its
# command line (issue 15: reports, sharding, CLI).
#
#   bash harness/tests/check_reports.sh BUILD_DIR
#
# - TAP: Debian's `prove` (TAP::Harness) parses the output of a passing run, of a run
#   with failures (YAML diagnostics), of case names holding '#' and '\' run with
#   --repeat, and of runs with Warnings (an `ok` line with YAML diagnostics), and counts
#   what the judge counts;
# - Warnings (report format 3.0): harness/tests/grades holds a spec of one clause per
#   strength and a case citing each alone, which broken_liar fails: under --profile
#   standard the SHOULD and TSM cases are Warnings (exit 0, graded_by, the summary's Warn
#   column, warnings list and conformance line), under --profile strict the TSM case
#   fails; the JUnit report's Warning is a passing <testcase status="Warning"> with its
#   "warning (...)" line, each suite has the properties profile and warnings; merge
#   keeps the Warnings, their graded_by, the profile and the score;
# - JUnit: the Jenkins xunit plugin's junit-10 rules (checked element by element below,
#   no third-party schema file), and PyPI's junitparser reads the counts of the JSON
#   report, for a run, the runs with Warnings and a run merged with the build's
#   interop.json (make interop);
# - JSON: results.json, a merged report, the runs with Warnings and the bridge's
#   interop.json (when the build has one) validate against
#   harness/schema/results.schema.json (format 3.0) with PyPI's jsonschema;
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

# ---- Warnings and profiles (report format 3.0) -----------------------------------------

# broken_liar misreports every live count, so every case of harness/tests/grades fails a
# check; the one clause each case cites decides what that failure is.
GRADES=harness/tests/grades
GR=(--adapter "$BUILD/lib/broken_liar.so" --spec "$GRADES/spec" --cases "$GRADES/cases")
"$CTS" run "${GR[@]}" --profile standard --json "$TMP/warn.json" --junit "$TMP/warn.xml" \
  "$GRADES/cases/should.tsm" "$GRADES/cases/tsm.tsm" >"$TMP/warn.tap" 2>"$TMP/warn.err"
warn_rc=$?
yaml_warnings=$(grep -A12 '^ok ' "$TMP/warn.tap" | grep -c '^    status: Warning$')
if [ $warn_rc -eq 0 ] && prove_counts "$TMP/warn.tap" 2 0 && [ "$yaml_warnings" = 2 ] &&
   grep -q "^    graded_by: 'GRADE.SHOULD.1 SHOULD'$" "$TMP/warn.tap" &&
   grep -q "^    graded_by: 'GRADE.TSM.1 TSM'$" "$TMP/warn.tap" &&
   grep -q '^    profile: standard$' "$TMP/warn.tap"; then
  ok "a broken SHOULD clause and a TSM rule under --profile standard: exit 0, prove passes 2 ok lines with YAML diagnostics (status: Warning, graded_by, profile)"
else
  not_ok "Warnings in TAP (exit $warn_rc, $yaml_warnings YAML blocks with status: Warning)"
  show <"$TMP/warn.tap"
fi
if grep -Eq '^ +family +device +Pass +Fail +Warn ' "$TMP/warn.err" &&
   grep -q '^warnings' "$TMP/warn.err" &&
   grep -q '^  Warning \[cpu\] .*should.tsm (GRADE.SHOULD.1 SHOULD)' "$TMP/warn.err" &&
   grep -q '^conformance (profile standard): MUST clauses passed 0 of 0 applicable, 2 Warnings$' "$TMP/warn.err"; then
  ok "the summary has a Warn column, the warnings list and the conformance line"
else
  not_ok "the summary of a run with Warnings"
  show <"$TMP/warn.err"
fi

"$CTS" run "${GR[@]}" --profile strict --json "$TMP/strict.json" --junit "$TMP/strict.xml" \
  "$GRADES/cases" >"$TMP/strict.tap" 2>"$TMP/strict.err"
strict_rc=$?
if [ $strict_rc -eq 1 ] && prove_counts "$TMP/strict.tap" 3 2 &&
   grep -q '^not ok [0-9]* - tsm.tsm' "$TMP/strict.tap" && grep -q '^ok [0-9]* - should.tsm' "$TMP/strict.tap" &&
   grep -q '^conformance (profile strict): MUST clauses passed 0 of 1 applicable, 1 Warnings\?$' "$TMP/strict.err"; then
  ok "--profile strict: the TSM rule fails (exit 1), the SHOULD clause stays a Warning, the MUST clause fails"
else
  not_ok "--profile strict (exit $strict_rc)"
  grep -E '^(not )?ok|^conformance' "$TMP/strict.tap" "$TMP/strict.err" | show
fi

# The same three cases in two shards under standard, merged: the merge keeps the
# statuses, graded_by, the profile and the score (against the grades spec, --spec), and
# fails for the MUST clause's Fail; the Warnings alone merge to exit 0.
for i in 1 2; do
  "$CTS" run "${GR[@]}" --profile standard --shard "$i/2" --no-summary --json "$TMP/gshard$i.json" \
    "$GRADES/cases" >/dev/null 2>&1
done
"$CTS" run "${GR[@]}" --profile standard --no-summary --json "$TMP/gfull.json" "$GRADES/cases" \
  >/dev/null 2>&1
"$CTS" merge --spec "$GRADES/spec" --json "$TMP/gmerged.json" --junit "$TMP/gmerged.xml" \
  "$TMP/gshard1.json" "$TMP/gshard2.json" >"$TMP/gmerge.txt" 2>&1
gmerge_rc=$?
"$CTS" merge --spec "$GRADES/spec" --json "$TMP/wmerged.json" "$TMP/warn.json" >/dev/null 2>&1
wmerge_rc=$?
if out=$(python3 - "$TMP/gfull.json" "$TMP/gmerged.json" "$TMP/warn.json" "$TMP/strict.json" <<'PY' 2>&1
import json, sys
full, merged, warn, strict = (json.load(open(p)) for p in sys.argv[1:5])
bad = []
key = lambda r: (r["case"], r["device"], r["status"], r.get("graded_by"))
want = [("must.tsm", "cpu", "Fail", "GRADE.MUST.1 MUST"),
        ("should.tsm", "cpu", "Warning", "GRADE.SHOULD.1 SHOULD"),
        ("tsm.tsm", "cpu", "Warning", "GRADE.TSM.1 TSM")]
if sorted(map(key, full["results"])) != want:
    bad.append(f"standard run: {sorted(map(key, full['results']))}, expected {want}")
if sorted(map(key, merged["results"])) != sorted(map(key, full["results"])):
    bad.append(f"merged: {sorted(map(key, merged['results']))}")
for name, doc, profile, score in (
        ("standard", full, "standard", {"must_applicable": 1, "must_passed": 0, "warnings": 2}),
        ("merged", merged, "standard", {"must_applicable": 1, "must_passed": 0, "warnings": 2}),
        ("warnings only", warn, "standard", {"must_applicable": 0, "must_passed": 0, "warnings": 2}),
        ("strict", strict, "strict", {"must_applicable": 1, "must_passed": 0, "warnings": 1})):
    if doc.get("tsm_cts") != "3.0" or doc.get("profile") != profile or doc.get("score") != score:
        bad.append(f"{name}: format {doc.get('tsm_cts')}, profile {doc.get('profile')}, "
                   f"score {doc.get('score')}; expected 3.0, {profile}, {score}")
    warned = sum(r["status"] == "Warning" for r in doc["results"])
    if doc.get("summary", {}).get("Warning") != warned:
        bad.append(f"{name}: summary {doc.get('summary')} for {warned} Warnings")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
) && [ $gmerge_rc -eq 1 ] && [ $wmerge_rc -eq 0 ] &&
   grep -q '^conformance (profile standard): MUST clauses passed 0 of 1 applicable, 2 Warnings$' "$TMP/gmerge.txt"; then
  ok "the JSON reports' Warnings, graded_by, profile and score; merge keeps them and prints the conformance line"
else
  not_ok "Warnings in the JSON reports and merge (merge exit $gmerge_rc, of the Warnings alone $wmerge_rc): $out"
  show <"$TMP/gmerge.txt"
fi

py_check "JUnit: a Warning is a passing <testcase status=\"Warning\"> with its 'warning (...)' line; each suite has the properties profile and warnings" \
  "JUnit Warnings:" "$TMP/warn.xml" "$TMP/warn.json" "$TMP/strict.xml" "$TMP/strict.json" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
bad = []
for xml, report in zip(sys.argv[1::2], sys.argv[2::2]):
    doc = json.load(open(report))
    root = ET.parse(xml).getroot()
    warned = 0
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        if props.get("profile") != doc["profile"] or "warnings" not in props:
            bad.append(f"{xml}: suite {suite.get('name')}: properties {props}")
        n = 0
        for case in suite.iter("testcase"):
            if case.get("status") != "Warning":
                continue
            n += 1
            out = case.findtext("system-out") or ""
            if case.find("failure") is not None or case.find("error") is not None or \
               case.find("skipped") is not None:
                bad.append(f"{xml}: {case.get('name')}: a Warning is not a passing test case")
            if f"warning (GRADE." not in out or f"; profile {doc['profile']})" not in out:
                bad.append(f"{xml}: {case.get('name')}: system-out has no 'warning (...)' line: {out!r}")
        if int(props.get("warnings", -1)) != n:
            bad.append(f"{xml}: suite {suite.get('name')}: warnings {props.get('warnings')}, {n} Warning test cases")
        warned += n
    want = sum(r["status"] == "Warning" for r in doc["results"])
    if warned != want or want == 0:
        bad.append(f"{xml}: {warned} Warning test cases, the JSON report {want}")
print("\n".join(bad[:20]))
sys.exit(1 if bad else 0)
PY

# ---- JUnit: the junit-10 rules and junitparser ----------------------------------------

# The interop matrix's report joined with the C cases' (when the build has run it); the
# runs with Warnings.
pairs=("$TMP/full.xml" "$TMP/full.json" "$TMP/warn.xml" "$TMP/warn.json"
       "$TMP/strict.xml" "$TMP/strict.json" "$TMP/gmerged.xml" "$TMP/gmerged.json")
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

reports=("$TMP/full.json" "$TMP/merged.json" "$TMP/shard2.json" "$TMP/warn.json"
         "$TMP/strict.json" "$TMP/gmerged.json")
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
missing=$(sed -n 's/^ *{"\([a-z-]*\)", .*_argument.*/\1/p' harness/src/cli/main.c | while read -r opt; do
  grep -q -- "--$opt" <<<"$help" || echo "--$opt"; done)
if [ -z "$missing" ] && "$CTS" run --bogus >/dev/null 2>&1; [ $? -eq 2 ]; then
  ok "--help names every long option; an unknown option is a usage error"
else
  not_ok "--help lacks: $missing"
fi

tap_summary
