#!/usr/bin/env bash
# fuzz/replay.sh BIN_DIR [--findings-only]: the fuzz-replay lane of `make check`
# (fuzz/README.md); --findings-only stops after the findings. With the
# targets built by the standalone driver (fuzz/standalone.c) in BIN_DIR it replays
#   - the parse target's seed corpus, the case library cases/ and the malformed cases
#     of harness/tests/malformed (every file must parse or give a located error, never
#     crash);
#   - every committed finding fuzz/findings/<target>/<name>, each in its own process:
#     a finding listed in fuzz/known-findings.txt must still fail (it flips to an error
#     the day it passes, so the list is kept honest), any other must pass; one marked
#     [clang-only] is replayed only when FUZZ_CC (the compiler of BIN_DIR) is clang;
#   - the decoded case of every finding that keeps one beside its bytes,
#     fuzz/findings/<target>/<name>.tsm (every scenario finding must): the target run
#     with FUZZ_DECODE=1 prints the case the bytes decode to, and a difference is an
#     error: the bytes have drifted (a row picked by position, a writer that changed its
#     choices) and the finding no longer holds the scenario it was kept for;
#   - FUZZ_REPLAY_RUNS generated inputs (seed 1) of each target without an open
#     finding (a target with one would stop at it on the first run).
set -u
cd "$(dirname "$0")/.."
bin=${1:?usage: fuzz/replay.sh BIN_DIR}
runs=${FUZZ_REPLAY_RUNS:-2000}
known=fuzz/known-findings.txt
findings=${FUZZ_FINDINGS:-fuzz/findings} # another folder: the self-test check_fuzz_decode.sh
errors=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

err() { echo "fuzz-replay: $*" >&2; errors=$((errors + 1)); }

is_known() { grep -q "^$1 $2 " "$known" 2>/dev/null; }

replay_finding() {
  local target=$1 file=$2 name
  name=$(basename "$file")
  if grep -q "^$target $name \[clang-only\]" "$known" 2>/dev/null && ! "${FUZZ_CC:-cc}" --version | grep -q clang; then
    echo "fuzz-replay: $target/$name skipped (only clang's sanitizers see it)"
    return
  fi
  if timeout 60 "$bin/$target" "$file" >/dev/null 2>"$log"; then
    is_known "$target" "$name" &&
      err "$target/$name now passes: remove it from $known (keep the file as a regress input)"
  elif is_known "$target" "$name"; then
    echo "fuzz-replay: $target/$name fails as expected (known finding)"
  else
    err "$target/$name fails: $(grep -m1 -E 'finding|ERROR|runtime error' "$log")"
  fi
}

# The targets that print what an input decodes to under FUZZ_DECODE=1; each of their
# findings must keep its decoded case as <name>.tsm.
decoding_targets=" scenario "

check_decoded() {
  local target=$1 file=$2 name
  name=$(basename "$file")
  if [ ! -f "$file.tsm" ]; then
    case $decoding_targets in *" $target "*)
      err "$target/$name keeps no decoded case: write it with FUZZ_DECODE=1 $bin/$target $file >$file.tsm" ;;
    esac
    return
  fi
  if ! FUZZ_DECODE=1 timeout 60 "$bin/$target" "$file" 2>/dev/null | diff -u "$file.tsm" - >"$log"; then
    err "$target/$name no longer decodes to $name.tsm (its bytes drifted: re-derive it, fuzz/README.md):
$(head -n 20 "$log")"
  fi
}

for target in $(ls "$bin"); do
  for f in "$findings/$target"/*; do
    case $f in *.desc|*.tsm) continue ;; esac
    [ -f "$f" ] || continue
    replay_finding "$target" "$f"
    check_decoded "$target" "$f"
  done
done
while read -r target name _; do
  case $target in ''|'#'*) continue ;; esac
  [ -f "$findings/$target/$name" ] || err "$known lists $target $name, which has no file"
done <"$known"

if [ "${2:-}" = --findings-only ]; then
  echo "fuzz-replay: $errors error(s) in the findings"
  [ "$errors" = 0 ]
  exit
fi
"$bin/parse" cases harness/tests/malformed 2>/dev/null ||
  err "parse fails on the case library or harness/tests/malformed"
for target in $(ls "$bin"); do
  if grep -q "^$target " "$known"; then
    echo "fuzz-replay: $target: no generated runs while it has an open finding"
  else
    "$bin/$target" -runs="$runs" -seed=1 2>&1 >/dev/null | tail -n 1 | grep -q "^ran " ||
      err "$target fails within $runs generated inputs (seed 1): rerun with -save=DIR"
  fi
done
echo "fuzz-replay: $errors error(s)"
[ "$errors" = 0 ]
