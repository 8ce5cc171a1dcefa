#!/usr/bin/env bash
# harness/tests/check_batch_leak.sh JUDGE ADAPTER: under a judge built with ASan (the asan
# lane's), a leak is the verdict of the case it happened in, per case and under --batch.
# ADAPTER is broken_leak_once (harness/tests/broken/leak_once.c), which leaks in
# harness/tests/leak/2-leaks.tsm alone. Per case, that case's process exits with
# LeakSanitizer's status after it passed (Fail); under --batch 4 the worker checks for
# leaks after each case (runner.c), so the same case is Fail and the cases after it in
# the batch, which a check at the worker's exit alone would blame, pass.
set -uo pipefail
judge=${1:?usage: check_batch_leak.sh JUDGE ADAPTER}
adapter=${2:?usage: check_batch_leak.sh JUDGE ADAPTER}
cd "$(dirname "$0")/../.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:detect_leaks=1:exitcode=86"
rc=0
for mode in per-case batch; do
  opts=()
  [ $mode = batch ] && opts=(--batch 4)
  "$judge" run --adapter "$adapter" --device cpu -j 1 "${opts[@]}" --json "$tmp/$mode.json" \
    --no-summary harness/tests/leak >"$tmp/$mode.tap" 2>"$tmp/$mode.err"
  got=$(python3 - "$tmp/$mode.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["results"]
print(" ".join(f"{r['case'].rsplit('/', 1)[-1]}={r['status']}" for r in sorted(runs, key=lambda r: r["case"])))
PY
)
  want="1-ok.tsm=Pass 2-leaks.tsm=Fail 3-ok.tsm=Pass 4-ok.tsm=Pass"
  if [ "$got" = "$want" ] && grep -q 'LeakSanitizer' "$tmp/$mode.tap"; then
    echo "ok - $mode: the leak is 2-leaks.tsm's Fail, with LeakSanitizer's report as its output"
  else
    echo "not ok - $mode: expected $want and LeakSanitizer's report, got $got"
    sed 's/^/    # /' "$tmp/$mode.tap" | head -n 30
    rc=1
  fi
done
exit $rc
