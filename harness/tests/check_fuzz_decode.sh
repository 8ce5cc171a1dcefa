#!/usr/bin/env bash
# harness/tests/check_fuzz_decode.sh BUILD: the self-test of the fuzz findings' decoded
# cases (fuzz/README.md, "Findings that cannot drift"). With the standalone targets of
# BUILD/fuzz/bin it replays a scratch copy of fuzz/findings through fuzz/replay.sh
# --findings-only three times: as committed (must pass), with one scenario finding's
# stored case changed by one statement, as a row picked by position would change it
# (must fail and name that finding), and with a scenario finding's case removed (must
# fail). It also checks that every scenario finding keeps its case.
set -u
build=${1:-build}
bin=$build/fuzz/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
not_ok() { echo "check_fuzz_decode: not ok: $*"; fails=$((fails + 1)); }

[ -x "$bin/scenario" ] || { echo "check_fuzz_decode: no $bin/scenario (make first)"; exit 1; }
replay() { FUZZ_FINDINGS="$tmp/findings" bash fuzz/replay.sh "$bin" --findings-only >"$tmp/out" 2>&1; }

cp -r fuzz/findings "$tmp/findings"
replay || { not_ok "the committed findings do not replay clean"; cat "$tmp/out"; }

victim=$(ls "$tmp/findings/scenario/"*.tsm | head -n 1)
name=$(basename "${victim%.tsm}")
# The first statement of the body replaced by another: what a stored input decodes to
# when the row its bytes chose moved.
awk '/^---$/ {f++; print; next} f == 2 && !done {print "dump root"; done = 1; next} {print}' \
  "$victim" >"$tmp/changed" && mv "$tmp/changed" "$victim"
if replay; then not_ok "a changed decoded case of $name passes"
elif ! grep -q "scenario/$name no longer decodes" "$tmp/out"; then
  not_ok "the drift of $name is not named"; cat "$tmp/out"; fi
cp "fuzz/findings/scenario/$name.tsm" "$victim"

rm "$victim"
if replay; then not_ok "a scenario finding without its decoded case passes"
elif ! grep -q "scenario/$name keeps no decoded case" "$tmp/out"; then
  not_ok "the missing case of $name is not named"; cat "$tmp/out"; fi

for f in fuzz/findings/scenario/*; do
  case $f in *.desc|*.tsm) continue ;; esac
  [ -f "$f.tsm" ] || not_ok "$f keeps no decoded case"
done
[ "$fails" = 0 ] && echo "check_fuzz_decode: ok (a changed or missing decoded case fails the lane)"
[ "$fails" = 0 ]
