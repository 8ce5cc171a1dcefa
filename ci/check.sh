#!/usr/bin/env bash
# ci/check.sh: the lanes of `make check`. Every lane runs even when an earlier one
# failed, so one run shows everything that is wrong; the exit status is 0 only when
# every lane passed. Lane times are printed so the budget (20 minutes on 2 cores) can
# be watched. `make check` runs `make deps` before this script, which
# installs nothing itself: a build lane that lacks a dependency names it.
set -u
# The reference and the suite's own checks are judged under the strict profile
# (spec/README.md, "Strengths"), also when this script is run without make.
export TSM_CTS_PROFILE=${TSM_CTS_PROFILE:-strict}
cd "$(dirname "$0")/.."

CC=${CC:-cc}
JOBS=${JOBS:-$(nproc)}
primary=build/check-$(basename "$CC")
# shellcheck source=ci/lanes.sh
. ci/lanes.sh

tools() {
  local ok=0
  need gcc gcc || ok=1
  need g++ g++ || ok=1
  need clang clang || ok=1
  need python3 python3 || ok=1
  need make make || ok=1
  need pkg-config pkg-config || ok=1
  need valgrind valgrind || ok=1
  need cmake cmake || ok=1
  return $ok
}

build() { make --no-print-directory -j"$JOBS" BUILD="$1" CC="$2" all; }

cts() { "$primary/bin/tsm-cts" "$@"; }

# The case library against the reference built by one compiler: $1 the build folder.
reference() {
  local build=$1
  mkdir -p "$build/report"
  "$build/bin/tsm-cts" run --adapter "$build/lib/tsmref_adapter.so" -j "$JOBS" \
    --json "$build/report/results.json" --junit "$build/report/junit.xml" cases \
    >"$build/report/reference.tap"
  local rc=$?
  tail -n 1 "$build/report/reference.tap"
  grep -A12 '^not ok' "$build/report/reference.tap" | head -n 60
  return $rc
}

example() {
  cts run --adapter "$primary/lib/example_adapter.so" -j "$JOBS" cases >"$primary/example.tap"
  local rc=$?
  tail -n 1 "$primary/example.tap"
  grep -A12 '^not ok' "$primary/example.tap" | head -n 40
  return $rc
}

# A third-party adapter's check target ($1: it runs cases with the adapter's known
# deviations in harness/expectations/, --strict, so that any other Fail, or a line of
# the file that no longer fails, fails the lane), its TAP in $primary/$2.tap:
#   tvmffi-check    apache-tvm-ffi's C DLPack API (harness/adapters/tvm-ffi) on cases/dlpack
#   libtorch-check  ATen's C DLPack conversion, Debian's PyTorch 1.13
#                   (harness/adapters/libtorch) on cases/dlpack, up to 16 cases per
#                   case process (tsm-cts run --batch 16), so that libtorch_cpu (about
#                   0.6 s of CPU to load) is loaded once per 16 cases
adapter_check() {
  make --no-print-directory BUILD="$primary" CC="$CC" "$1" >"$primary/$2.tap"
  local rc=$?
  tail -n 1 "$primary/$2.tap"
  grep -v '# TODO XFail' "$primary/$2.tap" | grep -A12 '^not ok' | head -n 40
  return $rc
}

# The thread cases (every case citing SCOPE.THREAD) on a ThreadSanitizer build of the
# judge and the reference (clang). A race report ends the case process with status 66,
# which the judge reports as Error (or as the Fail it had streamed). First the biased
# lock's own tests (test-lock), where a revocation that does not wait for the owner, or a
# lane that touches a manager another thread works in, is a
# race TSan sees; then a reference whose export deleter skips the context lock
# (harness/tests/tsan-plants/) must fail the DLPack thread cases
# (harness/tests/check_tsan_plant.sh).
tsan() {
  local build=build/check-tsan
  make --no-print-directory -j"$JOBS" BUILD=$build CC=clang SAN=-fsanitize=thread \
    OPT="-O1 -g" $build/bin/tsm-cts $build/lib/tsmref_adapter.so $build/bin/test-lock || return 1
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" $build/bin/test-lock || return 1
  TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
    $build/bin/tsm-cts run --adapter $build/lib/tsmref_adapter.so -j "$JOBS" \
    --timeout 60000 SCOPE.THREAD >$build/tsan.tap
  local rc=$?
  tail -n 1 $build/tsan.tap
  grep '^ok' $build/tsan.tap | grep -vc '# SKIP' | sed 's/^/case runs passed under TSan: /'
  grep -A20 '^not ok' $build/tsan.tap | head -n 60
  # A reference whose export deleter skips the context lock must fail the DLPack thread
  # cases (harness/tests/tsan-plants/, DLP.DEL.4); the unpatched one passes them.
  bash harness/tests/check_tsan_plant.sh $build || rc=1
  return $rc
}

# Every hand-written case (ci/lanes.sh) again with the reference's k-th allocation
# failing, for every k up to the case's allocation count (capped at 300): each refused
# call must change nothing, and the ASan build's leak checker sees what the failure
# paths leave behind. In --batch workers of 32 cases (a leak is still its own case's
# Fail: the worker asks LeakSanitizer after each case; the asan lane checks that).
# clauses: [ERR.NOMEM.1, ERR.ATOMIC.1, MGR.CREATE.3]
fail_alloc() {
  local build=build/check-asan
  [ -x $build/bin/tsm-cts ] || build=$primary
  ASAN_OPTIONS="detect_leaks=1:exitcode=86" UBSAN_OPTIONS="halt_on_error=1:exitcode=86" \
    $build/bin/tsm-cts run --adapter $build/lib/tsmref_adapter.so --device cpu -j "$JOBS" \
    --batch 32 --timeout 120000 --fail-alloc 300 $(hand_written_cases) >$build/fail-alloc.tap
  local rc=$?
  tail -n 1 $build/fail-alloc.tap
  grep -A12 '^not ok' $build/fail-alloc.tap | head -n 40
  return $rc
}

# The combination lane: generated cases (fixed seeds) completed against the model and
# judged through the reference; harness/tests/check_gen.sh. Then every maker and pair of
# statements on one resource, enumerated from the statement table and judged with the
# model deciding (tsm-cts combos); harness/tests/check_combos.sh.
combinations() {
  local rc=0
  bash harness/tests/check_gen.sh "$primary" || rc=1
  bash harness/tests/check_combos.sh "$primary" || rc=1
  return $rc
}

# The Python capsule protocol between every producer and consumer of the peers
# (harness/python/peers/: the reference, numpy, apache-tvm-ffi, jax, ONNX Runtime, mlx),
# then the bridge's own self-tests with deliberately broken consumers (the IREE leak,
# the turbine rename-back) and a peer plug-in of its own.
interop() { make --no-print-directory BUILD="$primary" CC="$CC" interop; }
# The same capsule cases in Debian's /usr/bin/python3 between {reference, numpy 1.24,
# torch 1.13} (Debian's python3-numpy and python3-torch: the old-but-common versions),
# their known deviations in harness/expectations/python-system/.
interop_system() { make --no-print-directory BUILD="$primary" CC="$CC" interop-system; }
interop_selftest() { make --no-print-directory BUILD="$primary" CC="$CC" interop-selftest; }

# Every mutant of ci/mutants/ applies, builds and is killed. It runs after the asan lane
# and takes that lane's build (the same clang flags) for its ASan judge and reference.
mutants() {
  local asan=build/check-asan
  [ -x $asan/bin/tsm-cts ] || asan=
  MUTANTS_ASAN_BUILD=$asan make --no-print-directory BUILD="$primary" CC="$CC" mutants-gate
}

# make install into a scratch prefix, then build and run a program against it
# through pkg-config, as a user of the library would. (The installed judge with an
# adapter built against tsm-cts.pc: lane install-judge, harness/tests/check_install.sh.
# The reports as prove, junitparser, jsonschema and the junit-10 rules read them, and
# --shard with merge: lane reports, harness/tests/check_reports.sh, after the interop
# lane so that it also checks the interop report merged with the C cases'.)
install_lane() {
  local prefix
  prefix=$(mktemp -d)
  make --no-print-directory BUILD="$primary" CC="$CC" PREFIX="$prefix" install >/dev/null || return 1
  cat >"$prefix/use.c" <<'C'
#include <stdio.h>
#include <tsmref.h>
int main(void) {
  tsmr_ctx *ctx = NULL;
  if (tsmr_ctx_open("cpu", &ctx) != 0) return 1;
  tsmr_ctx_close(ctx);
  puts("tsmref from the installed prefix: ok");
  return 0;
}
C
  local flags
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tsmref) || return 1
  "$CC" -std=c11 -Wall -Wextra -Werror "$prefix/use.c" $flags -Wl,-rpath,"$prefix/lib" \
    -o "$prefix/use" && "$prefix/use" && test -x "$prefix/bin/tsm-cts" &&
    test -f "$prefix/include/tsm/adapter.h"
  local rc=$?
  rm -rf "$prefix"
  return $rc
}

other=build/check-clang
[ "$(basename "$CC")" = clang ] && other=build/check-gcc
other_cc=clang
[ "$(basename "$CC")" = clang ] && other_cc=gcc

# The fuzz targets with the standalone driver: seed corpora, committed findings and a
# few generated inputs (fuzz/replay.sh, fuzz/README.md).
fuzz_replay() { make --no-print-directory BUILD="$primary" CC="$CC" fuzz-replay; }

# The function metrics (lizard, in the .venv), after the check can fail on planted code.
metrics() {
  .venv/bin/python harness/tests/check_metrics.py --self-test &&
    .venv/bin/python harness/tests/check_metrics.py
}

# The tools the lanes need, each named with its Debian package.
lane tools tools
# The library, the judge, the adapters, the tests and benches, built by each compiler.
lane build-$(basename "$CC") build "$primary" "$CC"
lane build-$other_cc build "$other" "$other_cc"
lane versions bash harness/tests/check_versions.sh "$primary"
lane model-tests "$primary/bin/test-model"
lane planner-tests "$primary/bin/test-planner"
lane lock-tests "$primary/bin/test-lock"
lane alloc-tests "$primary/bin/test-alloc"
lane import-tests "$primary/bin/test-import"
# The judge's layers (harness/src/README.md): a scratch copy of harness/src builds, and an
# upper layer's header planted in a lower layer fails its build (harness/tests/check_layers.sh).
lane layers bash harness/tests/check_layers.sh "$primary" "$CC"
# No C function over 50 lines; under 2% above CCN 15, under 2% with 6 or more parameters
# (lizard, harness/tests/check_metrics.py; its self-test plants one function past each).
lane metrics metrics
# Every case's syntax and citations, and every clause's strength and Source line (tsm-cts lint).
lane lint cts lint cases
# cases/README.md's statement list is the statement table's (tsm-cts statements), and
# every row the generator draws has a writer and a clause.
lane statements cts statements --check cases/README.md
# README.md's table of these lanes is the one this file gives, and every link of README.md,
# CONTRIBUTING.md, bench/README.md and docs/*.md leads to a file of the repository
# (harness/tests/lanes_table.py; `--write` rewrites the table).
lane docs python3 harness/tests/lanes_table.py --check
# Clauses no case cites (tsm-cts coverage).
lane coverage cts coverage
# cases/generated/ is what `make generated` writes now, and every cell of the clause x
# kind matrix a combination reaches has two cases (tsm-cts library --check, coverage
# --kinds; harness/tests/check_generated.sh plants a stale library and a hole).
lane generated bash harness/tests/check_generated.sh "$primary"
# Every known failure of a third party names its clause with the strength spec/ gives
# it, the source sentence, the upstream location then and at HEAD, and its report.
lane expectations python3 harness/tests/check_expectations.py
# A MAY clause's variants: the reference patched to count components as TorchSharp does
# (SCOPE.STAT.3 (b)) passes and says so; one that mixes the variants fails (harness/tests/variants/).
lane may-variants bash harness/tests/check_variants.sh "$primary"
lane reference reference "$primary"
lane reference-$other_cc reference "$other"
# Every case on a CUDA-kind device simulated on the CPU (the reference's cuda-sim:0, with
# TSMREF_SIMULATE_CUDA=1): a case that holds on the CPU alone without `devices: [cpu]`
# is Error there, as on cuda:0 (harness/tests/check_portability.sh plants one).
lane portability bash harness/tests/check_portability.sh "$primary"
lane combinations combinations
# The case library through the copy-me example adapter (harness/adapters/example).
lane example-adapter example
lane ggml-adapter make --no-print-directory BUILD="$primary" CC="$CC" ggml-check
lane tvm-ffi-adapter adapter_check tvmffi-check tvmffi
lane libtorch-adapter adapter_check libtorch-check libtorch
lane tsan tsan
lane asan bash ci/sanitizers.sh asan
lane mutants mutants
lane valgrind bash ci/sanitizers.sh valgrind
lane fail-alloc fail_alloc
lane interop interop
lane interop-system interop_system
lane interop-selftest interop_selftest
# The bridge's device paths (bridge.py run --device cuda:0) on a CPU stand-in for a CUDA
# framework: the device cases pass for it and catch its broken twin, never a GPU result
# (harness/tests/check_bridge_devices.sh; the GPU's own lane is interop-cuda of ci/check-gpu.sh).
lane interop-devices bash harness/tests/check_bridge_devices.sh "$primary"
# The tsm-cts wheel as a new user gets it: built, installed into a fresh venv outside the
# checkout, pytest with its plugin against numpy and an array module of a user's, each
# run's status the bridge's (the interop lane's report), and the plugin's self-tests
# (harness/tests/check_wheel.sh, docs/python.md).
lane wheel make --no-print-directory BUILD="$primary" CC="$CC" wheel-check WHEEL_INTEROP_JSON="$primary/report/interop.json"
# Today's PyTorch from PyPI (`make deps-torch`, its own venv) as a Python peer and through
# the libtorch adapter built against its wheel, with its known failures
# (harness/expectations/torch-pypi/) and the record of its counts README's table shows;
# without that venv it says so and passes (harness/tests/check_torch.sh).
lane torch make --no-print-directory BUILD="$primary" CC="$CC" torch-check
# README's third-party table against the reports the ggml, tvm-ffi, libtorch and interop
# lanes just wrote, and today's PyTorch's committed record (harness/expectations/torch-pypi/
# summary.json, which lane torch checks against its run) (harness/report/third_parties.py;
# `make third-party-table` rewrites it).
lane third-party-table make --no-print-directory BUILD="$primary" CC="$CC" third-party-table-check
lane fuzz-capsules make --no-print-directory BUILD="$primary" CC="$CC" fuzz-capsules-check
lane selftests bash harness/tests/run_selftests.sh "$primary"
# The judge against the hostile adapters of harness/tests/broken: each run completes,
# leaves no process behind, gets the expected statuses and valid reports (issue 14).
lane hostile bash harness/tests/check_hostile.sh "$primary"
# --batch N against a process per case: the library on the reference both ways, every
# verdict compared, and an adapter planted to crash, hang and fail mid-batch
# (harness/tests/check_batch.sh).
lane batch bash harness/tests/check_batch.sh "$primary"
lane install install_lane
lane install-judge bash harness/tests/check_install.sh "$primary" "$CC"
lane reports bash harness/tests/check_reports.sh "$primary"
lane report-html make --no-print-directory BUILD="$primary" CC="$CC" report-check
lane fuzz-replay fuzz_replay

lanes_end "make check"
