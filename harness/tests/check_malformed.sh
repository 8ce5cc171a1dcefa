#!/usr/bin/env bash
# harness/tests/check_malformed.sh: a malformed case costs its own result and nothing
# else (issue 14: a located error for every malformed case, never a crash, a hang, a
# silent truncation or a judge out of memory).
#
#   bash harness/tests/check_malformed.sh BUILD_DIR
#
# harness/tests/malformed/ holds one case file per class of malformed case, with
#   NAME.pos     LINE:COL: `tsm-cts parse` exits 1 with `FILE:LINE:COL: error: ...` first
#                on stderr, and `tsm-cts run` reports the case as Error;
#   NAME.status  STATUS[: TEXT]: `tsm-cts run` on the reference reports STATUS (and TEXT
#                in its message), for the classes that parse but must not fool the judge.
# All of them then run in one `tsm-cts run` (TSM_CTS_TIMEOUT_MULTIPLIER=1000000, so a
# timeout times the multiplier that overflowed would kill a case at once): the run ends,
# with one result per file, and its reports are what CI tools read: TAP through
# `prove`, JSON as strict UTF-8 against results.schema.json (jsonschema) and JUnit by
# the junit-10 rules (junit10.py).
set -uo pipefail
# shellcheck source=harness/tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
tap_setup check_malformed.sh "$@"
DIR=harness/tests/malformed
REF="$BUILD/lib/tsmref_adapter.so"
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

n=0
for f in "$DIR"/*.tsm; do
  n=$((n + 1))
  base=${f%.tsm}
  if [ -f "$base.pos" ] && [ -f "$base.status" ]; then
    not_ok "$f: both a .pos and a .status file"
  elif [ -f "$base.pos" ]; then
    check_located "$f" "$(tr -d ' \r\n' <"$base.pos")" "$TMP"
  elif [ ! -f "$base.status" ]; then
    not_ok "$f: neither a .pos nor a .status file"
  fi
done

rc=0
TSM_CTS_TIMEOUT_MULTIPLIER=1000000 timeout 120 "$CTS" run --adapter "$REF" --device cpu -j 2 \
  --json "$TMP/run.json" --junit "$TMP/run.xml" --no-summary "$DIR" >"$TMP/run.tap" \
  2>"$TMP/run.err" || rc=$?
if [ "$rc" -ne 1 ]; then
  not_ok "tsm-cts run $DIR: exit $rc, expected 1 (some results are Error)"
  show <"$TMP/run.err"
fi

# Each file's result against its .pos or .status; the reports validated.
if out=$("$PY" - "$TMP/run.json" "$DIR" "$n" 2>&1 <<'PY'
import json, os, sys
path, folder, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
report = json.loads(open(path, "rb").read().decode("utf-8", errors="strict"))
results = {os.path.basename(r["case"]): r for r in report["results"]}
bad = []
if len(results) != n:
    bad.append(f"{len(results)} results for {n} files")
for name in sorted(os.listdir(folder)):
    if not name.endswith(".tsm"):
        continue
    base = os.path.join(folder, name[:-4])
    r = results.get(name)
    if r is None:
        bad.append(f"{name}: no result")
        continue
    if os.path.exists(base + ".pos"):
        want, text = "Error", open(base + ".pos").read().strip() + ": error: "
    else:
        want, _, text = open(base + ".status").read().strip().partition(": ")
    msg = r.get("message") or ""
    if r["status"] != want or text not in msg:
        bad.append(f"{name}: {r['status']} ({msg[:160]!r}), expected {want} with {text!r}")
    else:
        print(f"{name}: {want}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
); then
  ok "run $DIR: every file's status and message as its .pos or .status says ($n files)"
else
  not_ok "run $DIR: results differ from the .pos and .status files"
  echo "$out" | grep -v ': [A-Z][a-z]*$' | show
fi

proved=$(prove -e cat "$TMP/run.tap" 2>&1) # exits 1: the run has failures
if grep -q "Tests=$n," <<<"$proved" && ! grep -q "Parse errors" <<<"$proved"; then
  ok "prove reads the TAP of the run ($n tests, no parse error)"
else
  not_ok "prove does not read $n tests in the TAP of the run"
  tail -n 5 <<<"$proved" | show
fi

if out=$("$PY" -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open("harness/schema/results.schema.json"))
report = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", errors="strict"))
errors = [e.message for e in Draft202012Validator(schema).iter_errors(report)]
print("\n".join(errors[:5]))
sys.exit(1 if errors else 0)' "$TMP/run.json" 2>&1); then
  ok "the JSON report is strict UTF-8 and valid against results.schema.json"
else
  not_ok "the JSON report is not valid"
  echo "$out" | show
fi

if out=$("$PY" harness/tests/junit10.py "$TMP/run.xml" "$TMP/run.json" 2>&1); then
  ok "the JUnit report follows the junit-10 rules and agrees with the JSON"
else
  not_ok "the JUnit report"
  echo "$out" | show
fi

tap_summary
