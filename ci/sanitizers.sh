#!/usr/bin/env bash
# shellcheck disable=SC2046,SC2054 # $(broken_targets) splits into targets on purpose
# ci/sanitizers.sh: the sanitizer and Valgrind lanes of `make check` (ci/check.sh).
#
#   bash ci/sanitizers.sh asan       ASan + UBSan + LSan (clang)
#   bash ci/sanitizers.sh valgrind   Valgrind memcheck (gcc)
#
# Each subcommand builds what it needs into its own build folder, runs, prints one
# plain summary line (`asan: ok ...` or `asan: FAILED ...`) and exits non-zero on any
# failure. JOBS (default nproc) sets the parallel case runs.
#
# asan: impl and harness built by clang with ASan and UBSan (no CUDA), then
#   1. the judge's model tests (test-model), the reference's lock and import tests
#      (test-lock: its deleters that race a context's close; test-import: every refusal
#      and allocation failure of an import), and `tsm-cts lint cases` and `coverage`
#      (judged here only for sanitizer reports: their verdicts are other lanes');
#   2. the hand-written case library (--device cpu) through the judge and the reference. Every
#      case process exit()s after writing its result (harness/src/run/runner.c), so its
#      exit-time leak check runs, and a report there turns a passing case into Fail;
#      the judge (the parent) must exit 0: a report in the judge itself exits 86;
#   3. harness/tests/run_selftests.sh: the ASan judge against the deliberately broken
#      adapters (crash, abort, hang, exit, lie, refuse to load), which must not make the
#      judge report anything itself, and the ASan-built example adapter.
# valgrind: impl and harness built plainly, then
#   1. the case library through `valgrind tsm-cts` with the reference: Valgrind follows
#      the fork()ed batch workers (the same image), each of which writes a log; a
#      definite or indirect leak or a memory error in a case's code makes its worker exit
#      with 88 and leaves a report in that log, which fails the lane;
#   2. run_selftests.sh with the judge under Valgrind and the broken adapters, light
#      (TSM_SELFTEST_LIGHT: without its checks that run many case processes, which the
#      ASan lane runs).
#   OpenBLAS (graph matmul and SVD) starts a thread pool when it loads, whose stacks are
#   only "possibly lost": --errors-for-leak-kinds leaves that kind out.
#   Which cases run: VALGRIND_CASES (below); the measured times are noted there.
set -u
# The reference and the suite's own checks are judged under the strict profile
# (spec/README.md, "Strengths"), also when this script is run without make.
export TSM_CTS_PROFILE=${TSM_CTS_PROFILE:-strict}
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=ci/lanes.sh
. ci/lanes.sh

JOBS=${JOBS:-$(nproc)}

# Exit codes of the tools, chosen apart from the judge's own (0 all ok, 1 a result not
# ok, 2 usage), from TSan's 66 in ci/check.sh and from 77 and 99 (skip and hard error to
# automake-style drivers). ASan, UBSan and LSan share one runtime in a -fsanitize=
# address,undefined build and one `exitcode` flag: UBSAN_OPTIONS is read after
# ASAN_OPTIONS and its value wins, so both name the same code, 86; the report in the
# output says which tool spoke.
ASAN_EXIT=86
VALGRIND_EXIT=88

BROKEN_NAMES="segv abort hang exit0 abi_major small_struct no_entry null_entry liar \
bad_device offline_device close_keeps no_borrow_slot no_managers leak_once far_element"

summary() { # lane start rc what
  local lane=$1 start=$2 rc=$3
  shift 3
  if [ "$rc" -eq 0 ]; then
    echo "$lane: ok, $* ($((SECONDS - start)) s)"
  else
    echo "$lane: FAILED, $* ($((SECONDS - start)) s)"
  fi
  return "$rc"
}

# Prints the TAP's closing counts and the first failures of a library run.
tap_report() { # tap
  tail -n 1 "$1"
  grep -A24 '^not ok' "$1" | head -n 80
}

# run_selftests.sh takes one build folder holding bin/tsm-cts and lib/*.so; this makes
# one from a judge (a program, or a wrapper script) and the adapters given: the example,
# the reference (the malformed cases and explain run on it) and the broken ones.
selftest_dir() { # dir judge example_adapter broken_lib_dir reference_adapter
  local dir=$1 judge=$2 example=$3 broken=$4 reference=$5 n
  rm -rf "$dir"
  mkdir -p "$dir/bin" "$dir/lib"
  ln -s "$(realpath "$judge")" "$dir/bin/tsm-cts"
  ln -s "$(realpath "$example")" "$dir/lib/example_adapter.so"
  ln -s "$(realpath "$reference")" "$dir/lib/tsmref_adapter.so"
  for n in $BROKEN_NAMES; do
    ln -s "$(realpath "$broken/broken_$n.so")" "$dir/lib/broken_$n.so"
  done
}

broken_targets() { # build
  local n
  for n in $BROKEN_NAMES; do echo "$1/lib/broken_$n.so"; done
}

# ---- asan -----------------------------------------------------------------------------

asan() {
  local start=$SECONDS build=build/check-asan
  local san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  local rc=0 lib_rc=0 self_rc=0 model_rc=0
  echo "asan: building $build (clang, $san)"
  make --no-print-directory -j"$JOBS" BUILD=$build CC=clang NVCC= SAN="$san" OPT="-O1 -g" \
    $build/bin/tsm-cts $build/bin/test-model $build/bin/test-lock $build/bin/test-import \
    $build/lib/tsmref_adapter.so $build/lib/example_adapter.so >$build.log 2>&1 ||
    { tail -n 30 $build.log; summary asan "$start" 1 "the build failed (see $build.log)"; return; }
  # The broken adapters stand for someone else's adapter: built without sanitizers, so
  # that UBSan does not catch broken_segv's store through NULL before it is a SIGSEGV.
  make --no-print-directory -j"$JOBS" BUILD=$build/plain CC=clang NVCC= SAN= OPT="-O1 -g" \
    $(broken_targets $build/plain) >$build/plain.log 2>&1 ||
    { tail -n 30 $build/plain.log; summary asan "$start" 1 "the broken adapters did not build"; return; }

  export ASAN_OPTIONS="detect_leaks=1:exitcode=$ASAN_EXIT:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:detect_invalid_pointer_pairs=0"
  export UBSAN_OPTIONS="halt_on_error=1:exitcode=$ASAN_EXIT:print_stacktrace=1"
  export TSM_CTS_TIMEOUT_MULTIPLIER=${TSM_CTS_TIMEOUT_MULTIPLIER:-4}

  # 1. The judge's own code on its own: the model's unit tests must pass; `lint cases`
  # and `coverage` (whose verdicts are the lint and coverage lanes') must end without a
  # sanitizer report or a signal.
  local test cmd r
  for test in test-model test-lock test-import; do
    r=0
    $build/bin/$test >$build/$test.log 2>&1 || r=$?
    [ $r -eq 0 ] || { echo "asan: $test exit $r:"; tail -n 30 $build/$test.log; model_rc=$r; }
  done
  for cmd in "lint cases" coverage; do
    r=0
    $build/bin/tsm-cts $cmd >$build/judge-${cmd%% *}.log 2>&1 || r=$?
    if [ $r -eq $ASAN_EXIT ] || [ $r -ge 128 ]; then
      echo "asan: tsm-cts $cmd exit $r:"
      tail -n 30 $build/judge-${cmd%% *}.log
      model_rc=$r
    fi
  done

  # 2. The hand-written case library (ci/lanes.sh, hand_written_cases).
  $build/bin/tsm-cts run --adapter $build/lib/tsmref_adapter.so --device cpu -j "$JOBS" \
    --json $build/results.json $(hand_written_cases) >$build/library.tap 2>$build/library.err || lib_rc=$?
  tap_report $build/library.tap
  if [ $lib_rc -eq $ASAN_EXIT ]; then
    echo "asan: the judge itself has a sanitizer report:"
    tail -n 40 $build/library.err
  fi

  # 3. The judge with the broken adapters. A SIGSEGV in an adapter must stay a signal
  # (Crash), so ASan leaves SIGSEGV alone here (it leaves SIGABRT alone by default);
  # the judge is still checked: a report in it changes its exit status, which the
  # self-tests require to be 1.
  # Reports go to files here (log_path), one per process, so that one in a case process
  # whose status the broken adapter already spoils (liar: Fail, exit0: Error) shows too:
  # there must be none.
  selftest_dir $build/selftest $build/bin/tsm-cts $build/lib/example_adapter.so $build/plain/lib \
    $build/lib/tsmref_adapter.so
  rm -rf $build/asan-self
  mkdir -p $build/asan-self
  ASAN_OPTIONS="$ASAN_OPTIONS:handle_segv=0:log_path=$PWD/$build/asan-self/report" \
    UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$PWD/$build/asan-self/report" \
    bash harness/tests/run_selftests.sh $build/selftest >$build/selftests.log 2>&1 || self_rc=$?
  grep -v '^ok' $build/selftests.log | head -n 40
  local reports
  reports=$(find $build/asan-self -type f | sort)
  if [ -n "$reports" ]; then
    echo "asan: $(echo "$reports" | wc -l) sanitizer report(s) during the self-tests; the first:"
    head -n 40 "$(echo "$reports" | head -n 1)"
    self_rc=1
  fi
  # 4. A leak is the verdict of its own case, per case and in a --batch worker, which
  # asks LeakSanitizer after each case (the fail-alloc lane runs in batches).
  bash harness/tests/check_batch_leak.sh $build/bin/tsm-cts $build/plain/lib/broken_leak_once.so \
    >$build/batch-leak.log 2>&1 || self_rc=1
  grep -v '^ok' $build/batch-leak.log | head -n 40

  [ $model_rc -eq 0 ] && [ $lib_rc -eq 0 ] && [ $self_rc -eq 0 ] || rc=1
  summary asan "$start" $rc "library: $(tail -n 1 $build/library.tap | sed 's/^# //') (exit $lib_rc);" \
    "self-tests: $(tail -n 1 $build/selftests.log) (exit $self_rc); model, lock and import tests, lint," \
    "coverage: $([ $model_rc -eq 0 ] && echo clean || echo "exit $model_rc")"
}

# ---- valgrind ---------------------------------------------------------------------------

# The cases for the Valgrind lane: the hand-written library (VALGRIND_CASES=all: the
# generated cases too), in --batch workers of VALGRIND_BATCH (32) cases each. Under
# Valgrind a case process costs about a second (loading OpenBLAS and LAPACK, the leak
# check at exit); a worker pays it once for its batch, so the whole hand-written library
# takes about 16 s on 2 cores where 215 of its cases, a process each, took 40 s. A
# report is in the log of the process that made it (its stack names the code); the
# batch's last case carries the exit status, and any report fails the lane.
VALGRIND_CASES=${VALGRIND_CASES:-hand-written}
VALGRIND_BATCH=${VALGRIND_BATCH:-32}

valgrind_lane() {
  local start=$SECONDS build=build/check-valgrind
  local rc=0 lib_rc=0 self_rc=0
  command -v valgrind >/dev/null 2>&1 || {
    echo "missing tool 'valgrind': install the Debian package 'valgrind' (apt-get install valgrind)" >&2
    summary valgrind "$start" 1 "no valgrind"
    return
  }
  echo "valgrind: building $build (gcc -O1 -g)"
  make --no-print-directory -j"$JOBS" BUILD=$build CC=gcc NVCC= SAN= OPT="-O1 -g" \
    $build/bin/tsm-cts $build/lib/tsmref_adapter.so $build/lib/example_adapter.so \
    $(broken_targets $build) >$build.log 2>&1 ||
    { tail -n 30 $build.log; summary valgrind "$start" 1 "the build failed (see $build.log)"; return; }

  local supp=()
  [ -f ci/valgrind.supp ] && supp=(--suppressions=ci/valgrind.supp)
  # One log per process (%p: the judge, its adapter probe, each case process).
  rm -rf $build/vg
  mkdir -p $build/vg
  local vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect "--error-exitcode=$VALGRIND_EXIT"
    "${supp[@]}" --log-file="$PWD/$build/vg/%p.log")

  # 1. The case library with the reference.
  local what=(cases)
  [ "$VALGRIND_CASES" = all ] || mapfile -t what < <(hand_written_cases)
  TSM_CTS_TIMEOUT_MULTIPLIER=${TSM_CTS_TIMEOUT_MULTIPLIER:-20} \
    "${vg[@]}" $build/bin/tsm-cts run --adapter $build/lib/tsmref_adapter.so --device cpu \
    -j "$JOBS" --batch "$VALGRIND_BATCH" --json $build/results.json "${what[@]}" >$build/library.tap \
    2>$build/library.err || lib_rc=$?
  tap_report $build/library.tap
  if [ $lib_rc -eq $VALGRIND_EXIT ]; then
    echo "valgrind: the judge itself has a Valgrind report:"
  fi
  local logs
  logs=$(find $build/vg -name '*.log' -size +0 | sort)
  if [ -n "$logs" ]; then
    echo "valgrind: reports in $(echo "$logs" | wc -l) process log(s); the first:"
    head -n 40 "$(echo "$logs" | head -n 1)"
  fi

  # 2. The judge under Valgrind with the broken adapters (a wrapper stands for the judge
  # in the self-tests' build folder). Their deliberate errors (broken_segv's store
  # through NULL) are in case processes that die of a signal and are judged by it; the
  # judge must still exit 1 as the self-tests require, not 88.
  mkdir -p $build/vg-self
  rm -f $build/vg-self/*.log
  cat >$build/tsm-cts-valgrind <<EOF
#!/bin/sh
exec valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \\
  --show-leak-kinds=definite,indirect --error-exitcode=$VALGRIND_EXIT ${supp[*]} \\
  --log-file="$PWD/$build/vg-self/%p.log" "$PWD/$build/bin/tsm-cts" "\$@"
EOF
  chmod +x $build/tsm-cts-valgrind
  selftest_dir $build/selftest $build/tsm-cts-valgrind $build/lib/example_adapter.so $build/lib \
    $build/lib/tsmref_adapter.so
  TSM_SELFTEST_LIGHT=1 bash harness/tests/run_selftests.sh $build/selftest >$build/selftests.log \
    2>&1 || self_rc=$?
  grep -v '^ok' $build/selftests.log | head -n 40
  # The only reports expected are broken_segv's store through NULL, each in a case
  # process that then died of SIGSEGV; any other (in the judge, or in a case process
  # whose status the broken adapter already spoils, such as liar's Fail) is a failure.
  local log other=0
  for log in $(find $build/vg-self -name '*.log' -size +0 | sort); do
    if ! grep -q 'Process terminating with default action of signal 11' "$log"; then
      [ $other -eq 0 ] && { echo "valgrind: a report during the self-tests:"; head -n 40 "$log"; }
      other=$((other + 1))
    fi
  done
  if [ $other -ne 0 ]; then
    echo "valgrind: $other unexpected report(s) during the self-tests (in $build/vg-self)"
    self_rc=1
  fi

  [ $lib_rc -eq 0 ] && [ $self_rc -eq 0 ] || rc=1
  summary valgrind "$start" $rc \
    "library ($VALGRIND_CASES): $(tail -n 1 $build/library.tap | sed 's/^# //') (exit $lib_rc);" \
    "self-tests: $(tail -n 1 $build/selftests.log) (exit $self_rc)"
}

case "${1:-}" in
asan) asan ;;
valgrind) valgrind_lane ;;
*)
  echo "usage: bash ci/sanitizers.sh asan|valgrind" >&2
  exit 2
  ;;
esac
