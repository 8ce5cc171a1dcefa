#!/usr/bin/env bash
# harness/tests/check_batch.sh: `tsm-cts run --batch N` (a worker process runs up to N
# cases, each in a fresh session, the adapter loaded once) against the default, a
# process per case (issue 31, item 2).
#
#   bash harness/tests/check_batch.sh BUILD_DIR
#
# - The case library on the reference, -j 2, per case and with --batch 16: every result
#   the same (case, device, repeat, status, message, graded_by, expected reason, output)
#   in the same order, so that nothing a case leaves in the worker (the judge's state,
#   the adapter's) changes the verdict of the next; both wall times are printed.
# - A slice with -j 1 --repeat 2 --seed 7 --shard 1/2 both ways: the TAP byte for byte,
#   the JSON and JUnit but for times and run ids; --fail-alloc on a slice: the same
#   results.
# - broken_planted_batch (harness/tests/broken/planted_batch.c) on harness/tests/batch:
#   it crashes in 3-crash.tsm, hangs in 5-hang.tsm, and streams a Fail then aborts in
#   7-fail-then-abort.tsm. Per case, with --batch 16 and --batch 2 (-j 1, and -j 2 for
#   the statuses): each of those is its own case's Crash, Timeout and Fail (the abort
#   noted), every other case passes, and each case's output (the adapter prints its pid
#   and session count in session_open, then 10000 dots: more than the judge reads at
#   once) is whole and shows which cases shared a worker: under --batch
#   16, 1-2-3 | 4-5 | 6-7 | 8, under --batch 2, 1-2 | 3 | 4-5 | 6-7 | 8, per case one
#   process each. With --fail-fast the crash stops both runs alike.
# - Hostile adapters of harness/tests/broken under --batch 4 -j 2: the same statuses and
#   messages as per case, and no process left behind.
# Prints one TAP line per check.
set -uo pipefail
BUILD=$(cd "${1:?usage: check_batch.sh BUILD_DIR}" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
CTS="$BUILD/bin/tsm-cts"
REF="$BUILD/lib/tsmref_adapter.so"
PLANTED="$BUILD/lib/broken_planted_batch.so"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/runs"

# run NAME SECONDS-LIMIT OPTIONS...: one judge run, its reports $TMP/NAME.{json,xml,tap},
# a line "NAME rc ms" in $TMP/runs.
run() {
  local name=$1 limit=$2 start rc=0
  shift 2
  start=$(date +%s%N)
  timeout -k 5 "$limit" "$CTS" run --no-summary --json "$TMP/$name.json" --junit "$TMP/$name.xml" \
    "$@" >"$TMP/$name.tap" 2>"$TMP/$name.err" || rc=$?
  printf '%s %s %s\n' "$name" "$rc" "$((($(date +%s%N) - start) / 1000000))" >>"$TMP/runs"
}

run lib-case 600 --adapter "$REF" -j 2 cases
run lib-batch 600 --adapter "$REF" -j 2 --batch 16 cases
SLICE=(--adapter "$REF" -j 1 --repeat 2 --seed 7 --shard 1/2 cases/managers cases/scopes/move
  cases/dlpack/export)
run slice-case 300 "${SLICE[@]}"
run slice-batch 300 "${SLICE[@]}" --batch 5
ALLOC=(--adapter "$REF" -j 2 --device cpu --fail-alloc 40 cases/managers/temp cases/managers/attach)
run alloc-case 300 "${ALLOC[@]}"
run alloc-batch 300 "${ALLOC[@]}" --batch 16
P=(--adapter "$PLANTED" --cases harness/tests/batch --timeout 1500 harness/tests/batch)
run planted-case 60 "${P[@]}" -j 1
run planted-b16 60 "${P[@]}" -j 1 --batch 16
run planted-b2 60 "${P[@]}" -j 1 --batch 2
run planted-j2 60 "${P[@]}" -j 2 --batch 3
run planted-ff-case 60 "${P[@]}" -j 1 --fail-fast
run planted-ff-batch 60 "${P[@]}" -j 1 --fail-fast --batch 16

HOSTILE="segv hang exit0 liar fail_then_abort close_fds linger hold_stdio daemon escape_group
many_helpers flood noise_utf8 fake_tap"
: >"$TMP/survivors"
for name in $HOSTILE; do
  so="$BUILD/lib/broken_$name.so"
  for mode in case batch; do
    extra=()
    [ "$mode" = batch ] && extra=(--batch 4)
    run "hostile-$name-$mode" 60 --adapter "$so" --cases harness/tests/cases --timeout 1000 -j 2 \
      "${extra[@]}" harness/tests/cases
    left=$({ pgrep -x tsm-hostile-hlp; pgrep -f -- "$so"; } 2>/dev/null | sort -u | tr '\n' ' ')
    if [ -n "$left" ]; then
      # shellcheck disable=SC2086 # a list of pids
      kill -9 $left 2>/dev/null
    fi
    printf '%s %s\n' "hostile-$name-$mode" "${left:-none}" >>"$TMP/survivors"
  done
done

python3 - "$TMP" "$HOSTILE" <<'PY'
import json, re, sys

tmp, hostile = sys.argv[1], sys.argv[2].split()
runs = {}
for line in open(f"{tmp}/runs"):
    name, rc, ms = line.split()
    runs[name] = (int(rc), int(ms))
survivors = dict(line.split(" ", 1) for line in open(f"{tmp}/survivors").read().splitlines())
number = failed = 0


def report(good, text, details=()):
    global number, failed
    number += 1
    failed += not good
    print(f"{'ok' if good else 'not ok'} {number} - {text}")
    for d in ([] if good else list(details)[:10]):
        print(f"#   {d}")


def doc(name):
    try:
        return json.load(open(f"{tmp}/{name}.json"))
    except (OSError, ValueError) as e:
        return {"results": [], "error": str(e)}


FIELDS = ("case", "device", "repeat", "status", "message", "graded_by", "expected_reason",
          "output")


def rows(name, fields=FIELDS):
    return [tuple(r.get(f) for f in fields) for r in doc(name)["results"]]


def differences(a, b, fields=FIELDS):
    ra, rb = rows(a, fields), rows(b, fields)
    bad = [f"{len(ra)} results per case, {len(rb)} with --batch"] if len(ra) != len(rb) else []
    for x, y in zip(ra, rb):
        if x != y:
            bad.append(f"{x[0]} [{x[1]}] #{x[2]}: " + "; ".join(
                f"{f} {u!r:.100} vs {v!r:.100}" for f, u, v in zip(fields, x, y) if u != v))
    return bad


def same_run(a, b, title, fields=FIELDS):
    bad = differences(a, b, fields)
    if runs[a][0] != runs[b][0]:
        bad.insert(0, f"exit {runs[a][0]} per case, {runs[b][0]} with --batch")
    report(not bad and rows(a), f"{title}: {len(rows(a))} results alike", bad or ["no results"])


same_run("lib-case", "lib-batch", "the library on the reference, -j 2, --batch 16")
print(f"# the library, -j 2: {runs['lib-case'][1] / 1000:.1f} s per case, "
      f"{runs['lib-batch'][1] / 1000:.1f} s with --batch 16")
statuses = {}
for r in doc("lib-case")["results"]:
    statuses[r["status"]] = statuses.get(r["status"], 0) + 1
report(runs["lib-case"][0] == 0 and statuses.get("Pass", 0) > 500,
       f"the library passes on the reference ({statuses})")

same_run("slice-case", "slice-batch", "-j 1 --repeat 2 --seed 7 --shard 1/2, --batch 5")
tap = [open(f"{tmp}/slice-{m}.tap").read() for m in ("case", "batch")]
report(tap[0] == tap[1] and tap[0].count("\nok ") > 20, "that slice's TAP byte for byte")


def volatile(text):
    text = re.sub(r'(time|timestamp)="[^"]*"', r'\1=""', text)
    return re.sub(r'name="run_id" value="[^"]*"', 'name="run_id" value=""', text)


xml = [volatile(open(f"{tmp}/slice-{m}.xml").read()) for m in ("case", "batch")]
report(xml[0] == xml[1], "that slice's JUnit but for times and the run id")
heads = []
for m in ("case", "batch"):
    d = doc(f"slice-{m}")
    for k in ("run_id", "started", "finished", "wall_seconds"):
        d.pop(k, None)
    for r in d["results"]:
        r.pop("duration_ms", None)
    heads.append(d)
report(heads[0] == heads[1], "that slice's JSON but for times and the run id")
same_run("alloc-case", "alloc-batch", "--fail-alloc 40 on managers/temp and managers/attach")

# The planted adapter: each case's status, message and who ran it.
WANT = {
    "1-ok.tsm": ("Pass", r"^$"),
    "2-ok.tsm": ("Pass", r"^$"),
    "3-crash.tsm": ("Crash", r"^the case process died on signal 11 "),
    "4-ok.tsm": ("Pass", r"^$"),
    "5-hang.tsm": ("Timeout", r"^ran past its limit of 1500 ms"),
    "6-ok.tsm": ("Pass", r"^$"),
    "7-fail-then-abort.tsm": ("Fail", r":7: .*live count expected 1, observed 2; then the "
                                      r"case process died on signal 6 \(Aborted\)$"),
    "8-ok.tsm": ("Pass", r"^$"),
}
WORKERS = {
    "planted-case": [["1"], ["2"], ["3"], ["4"], ["5"], ["6"], ["7"], ["8"]],
    "planted-b16": [["1", "2", "3"], ["4", "5"], ["6", "7"], ["8"]],
    "planted-b2": [["1", "2"], ["3"], ["4", "5"], ["6", "7"], ["8"]],
}


def planted(name):
    bad, seen = [], {}
    for r in doc(name)["results"]:
        status, regex = WANT.get(r["case"], ("?", ""))
        if r["status"] != status or not re.search(regex, r.get("message", "")):
            bad.append(f"{r['case']}: {r['status']} {r.get('message', '')!r:.160}, expected "
                       f"{status} /{regex}/")
        m = re.fullmatch(r"planted_batch: pid (\d+) session (\d+)\n\.{10000}\n", r.get("output", ""))
        if not m:
            bad.append(f"{r['case']}: output {r.get('output', '')!r:.160}, expected its one "
                       f"session_open line and 10000 dots")
        seen[r["case"].split("-")[0]] = m.groups() if m else None
    if sorted(seen) != sorted(c.split("-")[0] for c in WANT):
        bad.append(f"cases reported: {sorted(seen)}")
    return bad, seen


for name, workers in WORKERS.items():
    bad, seen = planted(name)
    pids = []
    for group in workers:
        got = [seen.get(c) for c in group]
        want = [str(k + 1) for k in range(len(group))]
        if None in got or len({g[0] for g in got}) != 1 or [g[1] for g in got] != want:
            bad.append(f"cases {'-'.join(group)}: (pid, session) {got}, expected one pid, "
                       f"sessions {want}")
        else:
            pids.append(got[0][0])
    if len(set(pids)) != len(pids):
        bad.append(f"a worker's pid twice: {pids}")
    shape = " | ".join("-".join(g) for g in workers)
    report(not bad and runs[name][0] == 1,
           f"broken_planted_batch, {name}: crash, hang and streamed Fail are their own cases' "
           f"verdicts, the rest pass; processes {shape} (exit {runs[name][0]})", bad)
bad, _ = planted("planted-j2")
report(not bad, "broken_planted_batch, -j 2 --batch 3: every case's verdict as per case", bad)
same_run("planted-ff-case", "planted-ff-batch", "broken_planted_batch with --fail-fast",
         FIELDS[:5])
got = [r["status"] for r in doc("planted-ff-batch")["results"]]
report(got == ["Pass", "Pass", "Crash"] + ["Skip"] * 5,
       f"--fail-fast --batch 16: the crash stops the run, the rest Skip ({got})")

for name in hostile:
    a, b = f"hostile-{name}-case", f"hostile-{name}-batch"
    bad = differences(a, b, FIELDS[:5])
    if runs[a][0] != runs[b][0]:
        bad.insert(0, f"exit {runs[a][0]} per case, {runs[b][0]} with --batch")
    for run in (a, b):
        if survivors[run] != "none":
            bad.append(f"{run}: left behind {survivors[run]}")
    if not rows(b):
        bad.append("no results")
    report(not bad, f"broken_{name}, --batch 4 -j 2: the same verdicts as per case, no "
           f"process left behind ({runs[b][1] / 1000:.1f} s, per case {runs[a][1] / 1000:.1f} s)",
           bad)
kept = max((len(r.get("output", "")) for r in doc("hostile-flood-batch")["results"]), default=0)
report(0 < kept < 70000 and "dropped" in json.dumps(doc("hostile-flood-batch")),
       f"broken_flood under --batch: each case's output kept bounded ({kept} characters), the cut said")

print(f"# {number - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
