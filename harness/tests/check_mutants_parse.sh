#!/usr/bin/env bash
# harness/tests/check_mutants_parse.sh: the self-test of how ci/mutants.sh reads a
# scenario driver's output (its scenario source, the kill matrix and the time-to-find
# bench, bench/fuzz_ttf.sh). `ci/mutants.sh --finding RC LOG` prints what a campaign
# reports of a driver that exited RC after writing LOG; on each fixture below it must
# give the finding itself, wherever in the output it starts. The driver writes a
# `dump` statement's lines to stdout, block-buffered into the same file as stderr, so a
# finding can begin in the middle of a dump's line, and the reader once reported such a
# finding as a bare "signal 6 (ABRT)". Needs no build.
#
#   bash harness/tests/check_mutants_parse.sh
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
# shellcheck source=harness/tests/tap.sh
. harness/tests/tap.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

finding='fuzz: finding (ERR.CODE.1): Fail: scenario.tsm:7: owner of t2: adapter says none, the model m1 (MGR.OP.1)'
asan='ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x7f0000000000'

# expect NAME RC WANT: the message of $tmp/NAME.log with exit status RC is WANT.
expect() {
  local name=$1 rc=$2 want=$3 got
  got=$(bash ci/mutants.sh --finding "$rc" "$tmp/$name.log")
  if [ "$got" = "$want" ]; then
    ok "$name: $got"
  else
    not_ok "$name: expected '$want', got '$got'"
    show <"$tmp/$name.log"
  fi
}

# A dump's last line cut by the buffer's flush, the finding glued after it, then the
# case the target prints after the finding.
{
  printf -- '--- dump at scenario.tsm:5 ---\nmanager m1 (open, 2 live, 0 children)\n'
  printf '  tensor t1 f32 [4] 16 B held'
  printf '%s\n' "$finding"
  printf 'the finding as a case (save it under cases/regress/, shrink it with tsm-cts reduce):\n'
  printf -- '---\ndescription: found by the scenario fuzz target\n---\nmanager m1 = sub root\n'
} >"$tmp/glued-after-dump.log"
expect glued-after-dump 134 "signal 6 (ABRT): $finding"

# The same finding at the start of its line.
{
  printf -- '--- dump at scenario.tsm:5 ---\nmanager m1 (open, 2 live, 0 children)\n'
  printf '%s\nmanager m1 = sub root\n' "$finding"
} >"$tmp/at-line-start.log"
expect at-line-start 134 "signal 6 (ABRT): $finding"

# A finding with no dump before it and no newline after it (the output cut at the abort).
printf '%s' "$finding" >"$tmp/alone.log"
expect alone 134 "signal 6 (ABRT): $finding"

# A sanitizer's report glued after a dump line, the driver exiting with ASAN's exit code.
{
  printf -- '--- dump at scenario.tsm:3 ---\nmanager root (open'
  printf '==4242==%s\nREAD of size 8 at 0x602000000010 thread T0\n' "$asan"
} >"$tmp/asan-glued.log"
expect asan-glued 86 "$asan"

# glibc's heap check, the driver's only output, without a newline (abort() flushes nothing).
printf 'malloc(): unaligned tcache chunk detected' >"$tmp/glibc-heap.log"
expect glibc-heap 134 "signal 6 (ABRT): malloc(): unaligned tcache chunk detected"
{
  printf -- '--- dump at scenario.tsm:9 ---\nmanager root (open'
  printf 'free(): double free detected in tcache 2\n'
} >"$tmp/glibc-free-glued.log"
expect glibc-free-glued 134 "signal 6 (ABRT): free(): double free detected in tcache 2"

# No finding at all: the exit status and the last line.
printf 'INFO: Running with entropic power schedule\nfuzz: adapter refused to load\n' >"$tmp/no-finding.log"
expect no-finding 2 "exit 2: fuzz: adapter refused to load"

# A signal without a finding: the signal alone.
printf -- '--- dump at scenario.tsm:2 ---\nmanager root (open' >"$tmp/bare-signal.log"
expect bare-signal 139 "signal 11 (SEGV)"

# A hang: the limit, whatever the output holds.
printf '%s\n' "$finding" >"$tmp/hang.log"
expect hang 124 "hang (no end within ${SCENARIO_TIMEOUT:-60} s)"

tap_summary
