#!/usr/bin/env bash
# ci/mutants.sh: the mutant catalog's kill gate and kill matrix. Each
# ci/mutants/NNN-name.patch puts one real bug (a header names its clause, origin and
# family) into impl/; every one of them must be killed by one of four sources:
#
#   cases     the case library (tsm-cts run): a case that passes on the unmutated
#             reference fails on the mutant;
#   combos    the combination generator (tsm-cts combos --adapter SO, exit 1 on a
#             divergence), when the judge has it and the unmutated reference passes it;
#   scenario  the scenario fuzz target's standalone driver (DIR/fuzz/bin/scenario), run
#             as a campaign: -runs=N -seed=S from an empty corpus; a finding whose input
#             also fails on the unmutated reference is a known finding of the reference
#             or the judge (fuzz/known-findings.txt), and the campaign goes on with the
#             next seed; a finding whose input passes there (or a signal, or a hang) is
#             a kill. SCENARIO_RUNS inputs in all (default 20000, about 5 s), in
#             runs of at most SCENARIO_CHUNK (5000) inputs, each from the next seed;
#   asan      the same three on an ASan+UBSan build (clang) of the mutated reference and
#             of the judge, so a leak, overflow or use after free inside an operation is
#             a kill too (the tools are built on first use into DIR/mutants-asan);
#             the campaign runs SCENARIO_ASAN_RUNS inputs there (default 6000, about
#             the same time).
#
# A source whose tool is not built (no combos subcommand, no scenario binary, no clang)
# is `n/a` and skipped; MUTANTS_NO_COMBOS=1 leaves combos out, COMBOS_ARGS sets its
# options (default: --depth 1 in the gate, none in the matrix; the known classes of
# harness/tests/combos-known.txt are always passed).
#
#   ci/mutants.sh [--gate | --matrix | --ttf SECONDS] [--build DIR] [-j N] [PATCH...]
#   ci/mutants.sh --finding RC LOG
#
# --gate (make check, `make mutants-gate`): the sources in the order above, each
#   stopping at its first kill (cases: the mutant's family folders first, then the rest,
#   tsm-cts run --fail-fast), and the next mutant as soon as one source killed it. Runs
#   ci/mutants/*.patch (not pending/). A patch whose header names a known kill
#   (`# known-kill: cases|asan CASE`, a path under cases/: the five leaks only ASan
#   sees) has that case tried first, alone, on the plain or the ASan build; a known kill
#   that no longer kills is reported (stale) and the sources run in order.
# --matrix (`make mutants`): every source for every mutant of ci/mutants/*.patch and
#   ci/mutants/pending/*.patch: the whole library for cases (the number of killing
#   cases, the first few), then combos, scenario (seconds to the kill and the finding)
#   and asan (which source on the ASan build). A case the mutant makes crash keeps the
#   judge's failure message next to Crash.
# --ttf SECONDS (bench/fuzz_ttf.sh): the scenario source alone, per mutant of
#   ci/mutants/ and pending/, once per first seed in TTF_SEEDS (default "1"), with a
#   deadline of SECONDS instead of an input budget: one line per run,
#   `ttf ID FIRST_SEED SECONDS|- DETAIL` (- when it found nothing by the deadline).
#   The scenario target is built two ways, and both run side by side from the same
#   first seed, as two fuzzing workers on two cores would: the plain driver at once,
#   and (with clang, unless TTF_ASAN=0) the ASan+UBSan driver against the ASan-built
#   mutant as soon as that is built, its build time counted; the first finding wins
#   (DETAIL starts with "asan: " when it is the ASan one's) and stops the other.
# --finding RC LOG: what a campaign reports of a scenario driver that exited RC with
#   output LOG (the first finding, assertion, sanitizer report or glibc heap check
#   anywhere in LOG, after the signal or hang); harness/tests/check_mutants_parse.sh
#   checks it on fixtures (LOG relative to the repository root), and the
#   other modes run that check first and stop (exit 2) when it fails.
#
# Per mutant: a scratch copy of the build inputs (Makefile, *.mk, impl/, harness/,
# bench/) with the objects of the main build (DIR/obj/impl, timestamps kept), the patch
# applied, then only libtsmref and the reference adapter rebuilt without CUDA (NVCC=),
# so make recompiles only the patched files (warnings are errors). The judge is
# DIR/bin/tsm-cts, run from the repository root on the cpu device. The repository's
# sources are never written; only DIR/mutants-asan is built there.
#
# Exit status 0 only when every mutant applied, built and was killed (--gate) or
# applied and built (--matrix).
set -u
# The reference and the suite's own checks are judged under the strict profile
# (spec/README.md, "Strengths"), also when this script is run without make.
export TSM_CTS_PROFILE=${TSM_CTS_PROFILE:-strict}
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD

mode=gate
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}
CC=${CC:-cc}
SCENARIO_RUNS=${SCENARIO_RUNS:-20000}
SCENARIO_ASAN_RUNS=${SCENARIO_ASAN_RUNS:-6000}
SCENARIO_CHUNK=${SCENARIO_CHUNK:-5000}
SCENARIO_ASAN_CHUNK=${SCENARIO_ASAN_CHUNK:-1000} # a leak shows when a chunk's process exits
COMBOS_ARGS=${COMBOS_ARGS-unset}
COMBOS_KNOWN=harness/tests/combos-known.txt
SCENARIO_TIMEOUT=${SCENARIO_TIMEOUT:-60}
COMBOS_TIMEOUT=${COMBOS_TIMEOUT:-600}
ASAN_SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
patches=()
while [ $# -gt 0 ]; do
  case $1 in
    --gate) mode=gate ;;
    --matrix) mode=matrix ;;
    --ttf) mode=ttf; TTF_DEADLINE=$2; shift ;;
    --finding) mode=finding; FINDING_RC=${2:-}; FINDING_LOG=${3:-}; shift 2 ;;
    --build) BUILD=$2; shift ;;
    -j) JOBS=$2; shift ;;
    -h|--help) sed -n '2,56p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ci/mutants.sh: unknown option '$1'" >&2; exit 2 ;;
    *) patches+=("$1") ;;
  esac
  shift
done

# finding_message RC LOG LIMIT: what a campaign reports of a scenario driver that ended
# with exit status RC (124: the LIMIT seconds ran out) after writing LOG (its stdout
# and stderr). The finding, assertion, sanitizer report or glibc heap check (the
# "malloc(): ..." or "double free ..." line glibc writes before it aborts) is read
# wherever it starts: the executor's stdout (a `dump` statement's lines) is
# block-buffered into the same file and flushed at a buffer's end, not a line's, so a
# finding written to stderr can begin in the middle of a line of a dump.
FINDING_RE='fuzz: finding|assertion failed|ERROR: (Address|Leak)Sanitizer|runtime error'
FINDING_RE+='|(malloc|free|realloc|munmap_chunk|malloc_consolidate)\(\): |double free or corruption'
FINDING_RE+='|corrupted (size|double-linked|top size)'
finding_message() {
  local rc=$1 log=$2 limit=$3 msg
  msg=$(grep -a -o -m 1 -E "($FINDING_RE).*" "$log" | head -n 1 | cut -c 1-240)
  case $rc in
    124) msg="hang (no end within $limit s)" ;;
    13[0-9]|1[4-9][0-9]) msg="signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))${msg:+: $msg}" ;;
  esac
  [ -n "$msg" ] || msg="exit $rc: $(tail -n 1 "$log" | cut -c 1-200)"
  printf '%s\n' "$msg"
}
if [ "$mode" = finding ]; then
  if [ -z "$FINDING_RC" ] || [ ! -f "$FINDING_LOG" ]; then
    echo "usage: ci/mutants.sh --finding RC LOG (LOG: a file)" >&2
    exit 2
  fi
  finding_message "$FINDING_RC" "$FINDING_LOG" "$SCENARIO_TIMEOUT"
  exit 0
fi

if [ ${#patches[@]} -eq 0 ]; then
  patches=(ci/mutants/*.patch)
  [ "$mode" != gate ] && [ -d ci/mutants/pending ] &&
    for p in ci/mutants/pending/*.patch; do [ -e "$p" ] && patches+=("$p"); done
fi
# The gate runs the combinations at depth 1 (about a second; the default depth 2 takes
# some 20 s a mutant), the matrix at the generator's default depth.
if [ "$COMBOS_ARGS" = unset ]; then
  COMBOS_ARGS=
  [ "$mode" = gate ] && COMBOS_ARGS="--depth 1"
fi
BUILD=${BUILD%/}
case $BUILD in /*) BUILD=$(realpath --relative-to="$ROOT" "$BUILD") ;; esac
# The ASan tools' build folder: MUTANTS_ASAN_BUILD names another built with the same
# flags (make check passes the asan lane's, so that they are built once).
ASAN_BUILD=${MUTANTS_ASAN_BUILD:-$BUILD/mutants-asan}

JUDGE=$BUILD/bin/tsm-cts
for need in "$JUDGE" "$BUILD/obj/impl" "$BUILD/deps/dlpack_v1_include"; do
  if [ ! -e "$need" ]; then
    echo "ci/mutants.sh: missing $need: build first (make BUILD=$BUILD all)" >&2
    exit 2
  fi
done
if ! "$JUDGE" --help | grep -q -- --fail-fast; then
  echo "ci/mutants.sh: $JUDGE has no --fail-fast: rebuild it" >&2
  exit 2
fi

# The reading of a scenario finding (finding_message) on its fixtures, before a
# campaign relies on it.
if ! parse_check=$(bash harness/tests/check_mutants_parse.sh 2>&1); then
  printf '%s\n' "$parse_check" | grep -v '^ok - ' >&2
  echo "ci/mutants.sh: harness/tests/check_mutants_parse.sh fails: a finding would be misread" >&2
  exit 2
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/tsm-mutants.XXXXXX")
# MUTANTS_KEEP=1 keeps the scratch folder (the last mutant's copy and logs) for a look.
if [ -n "${MUTANTS_KEEP:-}" ]; then
  echo "# scratch kept: $SCRATCH" >&2
else
  trap 'rm -rf "$SCRATCH"' EXIT
fi
B=b # the build folder inside a scratch copy
export ASAN_OPTIONS="detect_leaks=1:exitcode=86:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:exitcode=86:print_stacktrace=1"

# ---- scratch bases: build inputs + a build's impl objects -----------------------------

# make_base DIR BUILD_FOLDER: a copy of the build inputs with BUILD_FOLDER's impl objects
# renamed to the scratch build folder.
make_base() {
  local dir=$1 from=$2 bre
  mkdir -p "$dir/$B/obj"
  cp -a Makefile ./*.mk impl harness "$dir"/
  [ -d bench ] && cp -a bench "$dir"/
  [ -e .venv ] && ln -s "$ROOT/.venv" "$dir/.venv"
  cp -a "$from/obj/impl" "$dir/$B/obj/"
  cp -a "$from/deps" "$dir/$B/"
  # The dependency files name their objects under the build folder: rename them.
  bre=$(printf '%s' "$from" | sed 's/[.[\*^$/]/\\&/g')
  find "$dir/$B/obj" -name '*.d' -exec sed -i "s/^$bre\\/obj\\//$B\\/obj\\//" {} +
  # device.c is the only source that depends on NVCC (TSMREF_HAVE_CUDA): build it without.
  touch "$dir/impl/src/device.c"
}
# mk DIR [make variables...]: libtsmref and the reference adapter of a scratch copy.
mk() {
  local dir=$1
  shift
  make --no-print-directory -C "$dir" BUILD=$B NVCC= CC="$CC" "$@" "$B/lib/tsmref_adapter.so"
}
mk_asan() { mk "$1" CC=clang SAN="$ASAN_SAN" OPT="-O1 -g"; }

base=$SCRATCH/base
start=$SECONDS
make_base "$base" "$BUILD"
if ! mk "$base" >"$SCRATCH/base.log" 2>&1; then
  cat "$SCRATCH/base.log" >&2
  echo "ci/mutants.sh: the unmutated reference does not build" >&2
  exit 2
fi

# ---- the sources --------------------------------------------------------------------

have_combos=0
"$JUDGE" --help 2>&1 | grep -q 'tsm-cts combos' && have_combos=1
[ "${MUTANTS_NO_COMBOS:-}" ] && have_combos=0
SCENARIO=$BUILD/fuzz/bin/scenario
have_scenario=0
[ -x "$SCENARIO" ] && have_scenario=1
have_asan=0
command -v clang >/dev/null 2>&1 && have_asan=1
asan_ready=0  # 1 once the ASan tools and base are built, 2 if that failed
combos_base="" # unknown until first needed: ok, or why the source is unusable
asan_combos_base=""
echo "# mutants: $mode, ${#patches[@]} patches, judge $JUDGE, -j $JOBS, base built in" \
  "$((SECONDS - start)) s; sources: cases" \
  "combos($([ $have_combos = 1 ] && echo "yes${COMBOS_ARGS:+ $COMBOS_ARGS}" || echo n/a))" \
  "scenario($([ $have_scenario = 1 ] && echo "$SCENARIO_RUNS inputs" || echo n/a))" \
  "asan($([ $have_asan = 1 ] && echo clang || echo n/a))"

# The ASan tools (judge, scenario driver, reference) in $ASAN_BUILD and a scratch base
# with their impl objects; built the first time a mutant reaches the asan source.
asan_setup() {
  [ $asan_ready -ne 0 ] && return $((asan_ready - 1))
  local t0=$SECONDS targets=("$ASAN_BUILD/bin/tsm-cts" "$ASAN_BUILD/lib/tsmref_adapter.so")
  asan_ready=2
  if ! make --no-print-directory -j"$JOBS" BUILD="$ASAN_BUILD" CC=clang NVCC= \
    SAN="$ASAN_SAN" OPT="-O1 -g" "${targets[@]}" >"$SCRATCH/asan-tools.log" 2>&1; then
    tail -n 20 "$SCRATCH/asan-tools.log" >&2
    echo "# asan: the ASan tools did not build: source n/a" >&2
    have_asan=0
    return 1
  fi
  make_base "$SCRATCH/abase" "$ASAN_BUILD"
  if ! mk_asan "$SCRATCH/abase" >"$SCRATCH/abase.log" 2>&1; then
    tail -n 20 "$SCRATCH/abase.log" >&2
    have_asan=0
    return 1
  fi
  asan_ready=1
  echo "# asan: judge and base built in $((SECONDS - t0)) s ($ASAN_BUILD)" >&2
  return 0
}
# asan_scenario: the ASan scenario driver, built the first time a campaign needs it (a
# known kill on the ASan build needs only the judge). RETURN 1 when it does not build.
asan_scenario_ready=0 # 1 built, 2 failed
asan_scenario() {
  [ $asan_scenario_ready -ne 0 ] && return $((asan_scenario_ready - 1))
  asan_scenario_ready=2
  make --no-print-directory -j"$JOBS" BUILD="$ASAN_BUILD" CC=clang NVCC= SAN="$ASAN_SAN" \
    OPT="-O1 -g" "$ASAN_BUILD/fuzz/bin/scenario" >"$SCRATCH/asan-scenario.log" 2>&1 || {
    tail -n 20 "$SCRATCH/asan-scenario.log" >&2
    echo "# asan: the ASan scenario driver did not build: its campaign is n/a" >&2
    return 1
  }
  asan_scenario_ready=1
}

judge_run() { # judge adapter, then selectors and options: TAP on stdout
  local judge=$1 adapter=$2
  shift 2
  "$judge" run --adapter "$adapter" --device cpu -j "$JOBS" "$@"
}
# TAP lines prefixed with the seconds since $1 (EPOCHREALTIME at the start).
stamp() {
  local t0=${1/./} line t
  while IFS= read -r line; do
    t=$(( (${EPOCHREALTIME/./} - t0) / 100000 ))
    printf '%d.%d %s\n' $((t / 10)) $((t % 10)) "$line"
  done
}
# The names of the failing results of a stamped TAP file: "seconds name".
failures() { sed -n 's/^\([0-9.]*\) not ok [0-9]* - \(.*\) \[cpu\]$/\1 \2/p' "$1"; }
elapsed() { # EPOCHREALTIME at the start: seconds since, one decimal
  local t=$(( (${EPOCHREALTIME/./} - ${1/./}) / 100000 ))
  printf '%d.%d' $((t / 10)) $((t % 10))
}

# cases_source JUDGE ADAPTER FAMILY FAILFAST OUT BASEFAIL [ONLY]: runs the library, the
# FAMILY's folders (or cases: paths under cases/) first; with ONLY=only, those alone.
# Writes the killing cases (not in the associative array named BASEFAIL) to OUT.kills,
# one per line as "seconds name", and the judge's Crash messages to OUT.crash. RETURN 0
# on a kill.
cases_source() {
  local judge=$1 adapter=$2 family=$3 ff=$4 out=$5 d sel=() opts=()
  local -n bf=$6
  for d in $family; do [ -e "cases/$d" ] && sel+=("cases/$d"); done
  [ "${7:-}" = only ] || sel+=(cases)
  [ ${#sel[@]} -gt 0 ] || return 1
  [ "$ff" = 1 ] && opts=(--fail-fast)
  judge_run "$judge" "$adapter" "${opts[@]}" "${sel[@]}" 2>"$out.err" |
    stamp "$EPOCHREALTIME" >"$out.tap"
  : >"$out.kills"
  while read -r t name; do
    [ -n "${bf[$name]:-}" ] && continue
    echo "$t $name" >>"$out.kills"
  done < <(failures "$out.tap")
  # The judge's summary names each failure with its message: keep those of crashes.
  sed -n 's/^  Crash \[cpu\] cases\/\(.*\)$/\1/p' "$out.err" >"$out.crash"
  [ -s "$out.kills" ]
}

# combos_run JUDGE ADAPTER: the combination generator through ADAPTER, with the known
# classes of divergence of the reference (COMBOS_KNOWN) and COMBOS_ARGS.
combos_run() {
  local known=()
  [ -f "$COMBOS_KNOWN" ] && known=(--known "$COMBOS_KNOWN")
  # shellcheck disable=SC2086 # COMBOS_ARGS is a list of options
  timeout "$COMBOS_TIMEOUT" "$1" combos -j "$JOBS" --adapter "$2" "${known[@]}" $COMBOS_ARGS
}
# combos_source JUDGE ADAPTER OUT: RETURN 0 on a kill (exit 1), 1 when it passed, 2 on
# another exit status (recorded in OUT).
combos_source() {
  local rc=0
  combos_run "$1" "$2" >"$3" 2>&1 || rc=$?
  case $rc in 0) return 1 ;; 1) return 0 ;; *) echo "exit $rc" >>"$3"; return 2 ;; esac
}
# combos_detail LOG: how many divergences and the first one's message.
combos_detail() {
  local n first
  n=$(grep -m 1 -o '[0-9]* unknown divergences' "$1")
  first=$(grep -m 1 -A 1 '^  combination' "$1" | tail -n 1 | sed 's/^ *//' | cut -c 1-180)
  echo "${n:-a divergence}${first:+; first: $first}"
}
# combos_base_ok JUDGE ADAPTER: the combination run passes on the unmutated reference.
combos_base_ok() {
  local rc=0
  combos_run "$1" "$2" >"$SCRATCH/combos-base.log" 2>&1 || rc=$?
  [ $rc -eq 0 ] && echo ok || echo "the unmutated reference fails it (exit $rc)"
}

# scenario_source BIN ADAPTER BASE_ADAPTER OUT [FIRST_SEED DEADLINE]: the campaign (see
# the header) from seed FIRST_SEED (default 1) on: SCENARIO_RUNS inputs in all, or, with
# DEADLINE, as many as DEADLINE seconds allow. Writes "seconds seed input (known
# findings passed) message" of the kill to OUT. RETURN 0 on a kill.
scenario_source() {
  local bin=$1 adapter=$2 base_adapter=$3 out=$4 seed=${5:-1} deadline=${6:-0}
  local done=0 rc n last msg dir=$out.inputs t0=$EPOCHREALTIME known=0 runs limit left
  : >"$out"
  while :; do
    runs=$((SCENARIO_RUNS - done)) limit=$SCENARIO_TIMEOUT
    if [ "$deadline" -gt 0 ]; then
      left=$(( deadline - (${EPOCHREALTIME/./} - ${t0/./}) / 1000000 ))
      [ $left -gt 0 ] || return 1
      runs=$SCENARIO_CHUNK limit=$left
    fi
    [ $runs -gt 0 ] || return 1
    [ $runs -gt "$SCENARIO_CHUNK" ] && runs=$SCENARIO_CHUNK
    rm -rf "$dir"
    mkdir -p "$dir"
    rc=0
    # --foreground: timeout stays in the caller's process group, which ttf_race kills.
    { timeout --foreground "$limit" "$bin" -adapter="$adapter" -runs=$runs -seed=$seed -save="$dir" \
      >"$out.log" 2>&1; } 2>/dev/null || rc=$?
    n=$(find "$dir" -type f | wc -l)
    if [ $rc -eq 0 ]; then # a chunk without a finding: the next one
      done=$((done + n))
      seed=$((seed + 1))
      continue
    fi
    [ $rc -eq 124 ] && [ "$deadline" -gt 0 ] && [ "$limit" -lt "$SCENARIO_TIMEOUT" ] && return 1
    last=$(find "$dir" -type f | sort | tail -n 1)
    [ -n "$last" ] || { echo "- scenario driver exit $rc before any input" >"$out"; return 1; }
    if { timeout --foreground "$SCENARIO_TIMEOUT" "$bin" -adapter="$base_adapter" "$last" >/dev/null 2>&1; } 2>/dev/null; then
      msg=$(finding_message "$rc" "$out.log" "$limit")
      echo "$(elapsed "$t0") seed $seed input $((n - 1)) ($known known findings passed): $msg" >"$out"
      return 0
    fi
    known=$((known + 1))
    done=$((done + n))
    seed=$((seed + 1))
  done
}

# ---- one mutant -----------------------------------------------------------------------

# prepare_mutant PATCH DIR BASE BUILDFN: copy, patch, build; RETURN 0, or 1 (did not
# apply) or 2 (did not build) with the reason in DIR.why.
prepare_mutant() {
  local p=$1 m=$2 b=$3 buildfn=$4
  rm -rf "$m"
  cp -a "$b" "$m"
  if ! patch -p1 -d "$m" --dry-run --batch --forward -s <"$p" >"$m.why" 2>&1; then
    return 1
  fi
  patch -p1 -d "$m" --batch --forward -s --no-backup-if-mismatch <"$p" >/dev/null
  if ! $buildfn "$m" >"$m.build" 2>&1; then
    grep -m 5 -E 'error|warning' "$m.build" >"$m.why"
    return 2
  fi
  return 0
}

declare -A base_fail=() abase_fail=()
if [ "$mode" = matrix ]; then
  start=$SECONDS
  judge_run "$JUDGE" "$base/$B/lib/tsmref_adapter.so" cases 2>/dev/null |
    stamp "$EPOCHREALTIME" >"$SCRATCH/base.tap"
  while read -r _ name; do base_fail[$name]=1; done < <(failures "$SCRATCH/base.tap")
  echo "# baseline: the whole library on the unmutated scratch build in $((SECONDS - start)) s," \
    "${#base_fail[@]} failing (not counted as kills)"
fi

killed=0
survived=0
noapply=0
bad=()
declare -A first_kill=() afirst_kill=()
known_tried=0 # mutants whose header names a known kill, tried first by the gate
known_stale=() # ... whose known kill no longer kills
declare -A by_source=([cases]=0 [combos]=0 [scenario]=0 [asan]=0 [none]=0)
# The asan kills by the source that made them on the ASan build: a kill of `cases` there
# is the case library's alone, as a plain `cases` kill is, with a sanitizer watching.
declare -A by_asan=([cases]=0 [combos]=0 [scenario]=0)

# The row of a mutant: its cells and the details under it.
row() { printf '%-46s %-16s %-6s %-6s %-9s %-7s %s\n' "$@"; }

# asan_sources ID FAMILY FAILFAST: the three sources on the ASan build of the mutant in
# $SCRATCH/am (built here); sets ASAN_CELL and keeps the detail in $SCRATCH/asan.detail.
# RETURN 0 on a kill.
asan_sources() {
  local id=$1 family=$2 ff=$3 p=$4 r
  : >"$SCRATCH/asan.detail"
  asan_setup || { ASAN_CELL=n/a; return 1; }
  prepare_mutant "$p" "$SCRATCH/am" "$SCRATCH/abase" mk_asan
  r=$?
  if [ $r -ne 0 ]; then
    echo "ASan build: $(head -c 200 "$SCRATCH/am.why" | tr '\n' ' ')" >"$SCRATCH/asan.detail"
    ASAN_CELL=err
    return 1
  fi
  local ad=$SCRATCH/am/$B/lib/tsmref_adapter.so abase=$SCRATCH/abase/$B/lib/tsmref_adapter.so
  if cases_source "$ASAN_BUILD/bin/tsm-cts" "$ad" "$family" "$ff" "$SCRATCH/ac" abase_fail; then
    read -r _ name <"$SCRATCH/ac.kills"
    afirst_kill[$id]=$name
    echo "cases on ASan: $name$(crash_note "$SCRATCH/ac" "$name")" >"$SCRATCH/asan.detail"
    ASAN_CELL=cases
    return 0
  fi
  if [ $have_combos = 1 ]; then
    [ -n "$asan_combos_base" ] || asan_combos_base=$(combos_base_ok "$ASAN_BUILD/bin/tsm-cts" "$abase")
    if [ "$asan_combos_base" = ok ] && combos_source "$ASAN_BUILD/bin/tsm-cts" "$ad" "$SCRATCH/acombos.log"; then
      echo "combos on ASan: $(combos_detail "$SCRATCH/acombos.log")" >"$SCRATCH/asan.detail"
      ASAN_CELL=combos
      return 0
    fi
  fi
  if [ $have_scenario = 1 ] && asan_scenario && SCENARIO_RUNS=$SCENARIO_ASAN_RUNS \
    scenario_source "$ASAN_BUILD/fuzz/bin/scenario" "$ad" "$abase" "$SCRATCH/ascn"; then
    echo "scenario on ASan: $(cat "$SCRATCH/ascn")" >"$SCRATCH/asan.detail"
    ASAN_CELL=scenario
    return 0
  fi
  ASAN_CELL=-
  return 1
}

# crash_note DIR NAME: ", Crash: <the judge's message>" when NAME crashed.
crash_note() {
  local msg
  msg=$(grep -m 1 -F "$2" "$1.crash" 2>/dev/null | sed 's/^[^:]*: //')
  [ -n "$msg" ] && printf '; Crash: %s' "$msg"
}

# known_kill ID KNOWN PATCH: the patch's known kill ("SOURCE CASE": cases or asan, and
# a path under cases/) tried alone: that case on the plain or the ASan build. Prints
# the row and RETURNs 0 when it kills; otherwise notes that it did not, for the header
# to be brought up to date, and RETURNs 1 (the sources then run in order).
known_kill() {
  local id=$1 src=${2%% *} kcase=${2#* } p=$3 t name
  if [ ! -f "cases/$kcase" ]; then
    echo "# $id: known kill: no case cases/$kcase" >&2
  elif [ "$src" = cases ] &&
    cases_source "$JUDGE" "$SCRATCH/m/$B/lib/tsmref_adapter.so" "$kcase" 1 "$SCRATCH/c" base_fail only; then
    read -r t name <"$SCRATCH/c.kills"
    first_kill[$id]=$name
    row "$id" "$clause" K - - - "cases ${t}s (known kill): $name$(crash_note "$SCRATCH/c" "$name")"
    by_source[cases]=$((by_source[cases] + 1))
    return 0
  elif [ "$src" = asan ] && [ $have_asan = 1 ] && asan_setup &&
    prepare_mutant "$p" "$SCRATCH/am" "$SCRATCH/abase" mk_asan &&
    cases_source "$ASAN_BUILD/bin/tsm-cts" "$SCRATCH/am/$B/lib/tsmref_adapter.so" "$kcase" 1 \
      "$SCRATCH/ac" abase_fail only; then
    read -r t name <"$SCRATCH/ac.kills"
    afirst_kill[$id]=$name
    row "$id" "$clause" - - - K \
      "asan cases on ASan ${t}s (known kill): $name$(crash_note "$SCRATCH/ac" "$name")"
    by_source[asan]=$((by_source[asan] + 1))
    by_asan[cases]=$((by_asan[cases] + 1))
    return 0
  fi
  echo "# $id: its known kill ($2) did not kill: the sources in order; update its header" >&2
  known_stale+=("$id")
  return 1
}

# gate_mutant ID FAMILY PATCH: the patch's known kill, if it names one; then the sources
# in order, stopping at the first kill.
gate_mutant() {
  local id=$1 family=$2 p=$3 m=$SCRATCH/m ad name t known
  ad=$m/$B/lib/tsmref_adapter.so
  known=$(sed -n 's/^# known-kill: //p' "$p" | head -n 1)
  if [ -n "$known" ]; then
    known_tried=$((known_tried + 1))
    known_kill "$id" "$known" "$p" && return 0
  fi
  if cases_source "$JUDGE" "$ad" "$family" 1 "$SCRATCH/c" base_fail; then
    read -r t name <"$SCRATCH/c.kills"
    first_kill[$id]=$name
    row "$id" "$clause" K - - - "cases ${t}s: $name$(crash_note "$SCRATCH/c" "$name")"
    by_source[cases]=$((by_source[cases] + 1))
    return 0
  fi
  if [ $have_combos = 1 ]; then
    [ -n "$combos_base" ] || combos_base=$(combos_base_ok "$JUDGE" "$base/$B/lib/tsmref_adapter.so")
    if [ "$combos_base" = ok ] && combos_source "$JUDGE" "$ad" "$SCRATCH/combos.log"; then
      row "$id" "$clause" - K - - "combos: $(combos_detail "$SCRATCH/combos.log")"
      by_source[combos]=$((by_source[combos] + 1))
      return 0
    fi
  fi
  if [ $have_scenario = 1 ] &&
    scenario_source "$SCENARIO" "$ad" "$base/$B/lib/tsmref_adapter.so" "$SCRATCH/scn.out"; then
    row "$id" "$clause" - - K - "scenario $(cat "$SCRATCH/scn.out")"
    by_source[scenario]=$((by_source[scenario] + 1))
    return 0
  fi
  if [ $have_asan = 1 ]; then
    asan_sources "$id" "$family" 1 "$p"
    if [ "$ASAN_CELL" != - ] && [ "$ASAN_CELL" != n/a ] && [ "$ASAN_CELL" != err ]; then
      row "$id" "$clause" - - - K "asan $(cat "$SCRATCH/asan.detail")"
      by_source[asan]=$((by_source[asan] + 1))
      by_asan[$ASAN_CELL]=$((by_asan[$ASAN_CELL] + 1))
      return 0
    fi
  fi
  row "$id" "$clause" - - - - "SURVIVED $(cat "$SCRATCH/asan.detail" 2>/dev/null)"
  by_source[none]=$((by_source[none] + 1))
  return 1
}

# matrix_mutant ID FAMILY PATCH: every source.
matrix_mutant() {
  local id=$1 family=$2 p=$3 m=$SCRATCH/m ad n=0 t name c_cell=- x_cell s_cell=- a_cell=- any=0
  local details=()
  ad=$m/$B/lib/tsmref_adapter.so
  if cases_source "$JUDGE" "$ad" "$family" 0 "$SCRATCH/c" base_fail; then
    n=$(wc -l <"$SCRATCH/c.kills")
    c_cell=$n
    any=1
    read -r t name <"$SCRATCH/c.kills"
    local shown
    shown=$(awk '{print $2}' "$SCRATCH/c.kills" | head -n 3 | paste -sd, - | sed 's/,/, /g')
    [ "$n" -gt 3 ] && shown="$shown, ..."
    details+=("cases (first at ${t}s): $shown")
    while read -r _ name; do
      local note
      note=$(crash_note "$SCRATCH/c" "$name")
      [ -n "$note" ] && details+=("  $name${note}")
    done < <(head -n 3 "$SCRATCH/c.kills")
  fi
  x_cell=n/a
  if [ $have_combos = 1 ]; then
    [ -n "$combos_base" ] || combos_base=$(combos_base_ok "$JUDGE" "$base/$B/lib/tsmref_adapter.so")
    if [ "$combos_base" != ok ]; then
      x_cell=n/a
      details+=("combos: n/a: $combos_base")
    else
      combos_source "$JUDGE" "$ad" "$SCRATCH/combos.log"
      case $? in
        0) x_cell=K; any=1; details+=("combos: $(combos_detail "$SCRATCH/combos.log")") ;;
        1) x_cell=- ;;
        *) x_cell=err; details+=("combos: $(tail -n 1 "$SCRATCH/combos.log")") ;;
      esac
    fi
  fi
  if [ $have_scenario = 0 ]; then
    s_cell=n/a
  elif scenario_source "$SCENARIO" "$ad" "$base/$B/lib/tsmref_adapter.so" "$SCRATCH/scn.out"; then
    s_cell="K $(cut -d' ' -f1 "$SCRATCH/scn.out")s"
    any=1
    details+=("scenario: $(cut -d' ' -f2- "$SCRATCH/scn.out")")
  fi
  if [ $have_asan = 0 ]; then
    a_cell=n/a
  else
    asan_sources "$id" "$family" 1 "$p"
    a_cell=$ASAN_CELL
    [ -s "$SCRATCH/asan.detail" ] && details+=("asan: $(cat "$SCRATCH/asan.detail")")
    case $a_cell in -|n/a|err) ;; *) any=1; a_cell="K:$a_cell" ;; esac
  fi
  row "$id" "$clause" "$c_cell" "$x_cell" "$s_cell" "$a_cell" "$([ $any = 1 ] || echo SURVIVED)"
  local d
  for d in "${details[@]}"; do echo "    $d"; done
  if [ $any = 1 ]; then
    if [ "$c_cell" != - ]; then by_source[cases]=$((by_source[cases] + 1))
    elif [ "$x_cell" = K ]; then by_source[combos]=$((by_source[combos] + 1))
    elif [ "$s_cell" != - ]; then by_source[scenario]=$((by_source[scenario] + 1))
    else
      by_source[asan]=$((by_source[asan] + 1))
      by_asan[${a_cell#K:}]=$((by_asan[${a_cell#K:}] + 1))
    fi
    return 0
  fi
  by_source[none]=$((by_source[none] + 1))
  return 1
}

# ttf_race SEED PATCH: the plain campaign and (when ASan is ready) the ASan one, side by
# side in process groups of their own (set -m), each stopped by the deadline counted
# from the race's start; the first finding stops the other. Writes "seconds detail" of
# the finding to $SCRATCH/ttf.out. RETURN 0 on a finding.
ttf_race() {
  local seed=$1 p=$2 t0=$EPOCHREALTIME pid rc found=1 engine
  local -A engine_of=()
  set -m
  scenario_source "$SCENARIO" "$SCRATCH/m/$B/lib/tsmref_adapter.so" \
    "$base/$B/lib/tsmref_adapter.so" "$SCRATCH/scn.out" "$seed" "$TTF_DEADLINE" &
  engine_of[$!]=plain
  if [ "$asan_ready" = 1 ] && [ "$asan_scenario_ready" = 1 ]; then
    (
      if [ ! -e "$SCRATCH/am.ttf" ] || [ "$(cat "$SCRATCH/am.ttf")" != "$p" ]; then
        prepare_mutant "$p" "$SCRATCH/am" "$SCRATCH/abase" mk_asan || exit 2
        echo "$p" >"$SCRATCH/am.ttf"
      fi
      left=$(( TTF_DEADLINE - (${EPOCHREALTIME/./} - ${t0/./}) / 1000000 ))
      [ "$left" -gt 0 ] || exit 1
      SCENARIO_CHUNK=$SCENARIO_ASAN_CHUNK scenario_source "$ASAN_BUILD/fuzz/bin/scenario" \
        "$SCRATCH/am/$B/lib/tsmref_adapter.so" "$SCRATCH/abase/$B/lib/tsmref_adapter.so" \
        "$SCRATCH/ascn.out" "$seed" "$left"
    ) &
    engine_of[$!]=asan
  fi
  set +m
  while [ ${#engine_of[@]} -gt 0 ]; do
    wait -n -p pid "${!engine_of[@]}"
    rc=$?
    engine=${engine_of[$pid]}
    unset "engine_of[$pid]"
    [ "$rc" -eq 0 ] || continue
    found=0
    if [ "$engine" = plain ]; then
      echo "$(elapsed "$t0") $(cut -d' ' -f2- "$SCRATCH/scn.out")" >"$SCRATCH/ttf.out"
    else
      echo "$(elapsed "$t0") asan: $(cut -d' ' -f2- "$SCRATCH/ascn.out")" >"$SCRATCH/ttf.out"
    fi
    for pid in "${!engine_of[@]}"; do kill -- "-$pid" 2>/dev/null; done
    wait 2>/dev/null
    break
  done
  return $found
}

# ttf_mutant ID PATCH: the race per first seed.
ttf_mutant() {
  local id=$1 p=$2 seed any=1
  case $id in *" (pending)") id="pending/${id%% *}" ;; esac
  rm -f "$SCRATCH/am.ttf"
  for seed in ${TTF_SEEDS:-1}; do
    if ttf_race "$seed" "$p"; then
      echo "ttf $id $seed $(cat "$SCRATCH/ttf.out")"
      any=0
    else
      echo "ttf $id $seed - nothing found in $TTF_DEADLINE s"
    fi
  done
  return $any
}

if [ "$mode" = ttf ] && [ $have_scenario = 0 ]; then
  echo "ci/mutants.sh: --ttf needs $SCENARIO (make BUILD=$BUILD all)" >&2
  exit 2
fi
if [ "$mode" = ttf ] && [ "${TTF_ASAN:-1}" = 1 ] && [ $have_asan = 1 ]; then
  { asan_setup && asan_scenario; } ||
    echo "# ttf: no ASan engine (its build failed): the plain driver alone" >&2
fi
if [ "$mode" = matrix ] && [ $have_asan = 1 ] && asan_setup; then
  judge_run "$ASAN_BUILD/bin/tsm-cts" "$SCRATCH/abase/$B/lib/tsmref_adapter.so" cases 2>/dev/null |
    stamp "$EPOCHREALTIME" >"$SCRATCH/abase.tap"
  while read -r _ name; do abase_fail[$name]=1; done < <(failures "$SCRATCH/abase.tap")
  echo "# baseline on ASan: ${#abase_fail[@]} failing (not counted as kills)"
fi

[ "$mode" = ttf ] || row mutant clause cases combos scenario asan "first kill / details"
for p in "${patches[@]}"; do
  id=$(basename "$p" .patch)
  case $p in */pending/*) id="$id (pending)" ;; esac
  clause=$(sed -n 's/^# clause: //p' "$p" | head -n 1)
  family=$(sed -n 's/^# family: //p' "$p" | head -n 1)
  prepare_mutant "$p" "$SCRATCH/m" "$base" mk
  case $? in
    1) row "$id" "$clause" - - - - "DID NOT APPLY: $(head -c 200 "$SCRATCH/m.why" | tr '\n' ' ')"
       noapply=$((noapply + 1)); bad+=("$id (did not apply)"); continue ;;
    2) row "$id" "$clause" - - - - "DID NOT BUILD:"; sed 's/^/    /' "$SCRATCH/m.why"
       noapply=$((noapply + 1)); bad+=("$id (did not build)"); continue ;;
  esac
  case $mode in
    gate) gate_mutant "$id" "$family" "$p" ;;
    matrix) matrix_mutant "$id" "$family" "$p" ;;
    ttf) ttf_mutant "$id" "$p" ;;
  esac
  if [ $? -eq 0 ]; then
    killed=$((killed + 1))
  else
    survived=$((survived + 1))
    bad+=("$id (survived)")
  fi
done

# Gate: a case kill counts only if the killing case passes on the unmutated build (the
# scenario source checks its finding on the unmutated reference as it goes).
verify_first_kills() { # judge adapter array-name label
  local judge=$1 adapter=$2 label=$4 id
  local -n fk=$3
  [ ${#fk[@]} -gt 0 ] || return 0
  local -A bf=()
  mapfile -t cases_run < <(printf 'cases/%s\n' "${fk[@]}" | sort -u)
  judge_run "$judge" "$adapter" "${cases_run[@]}" 2>/dev/null | stamp "$EPOCHREALTIME" >"$SCRATCH/verify.tap"
  while read -r _ name; do bf[$name]=1; done < <(failures "$SCRATCH/verify.tap")
  for id in "${!fk[@]}"; do
    if [ -n "${bf[${fk[$id]}]:-}" ]; then
      echo "$id: its killing case ${fk[$id]} fails on the unmutated $label reference too: not a kill"
      killed=$((killed - 1))
      survived=$((survived + 1))
      bad+=("$id (killed only by a case that fails on the reference)")
    fi
  done
  echo "# the ${#cases_run[@]} killing cases pass on the unmutated $label build:" \
    "$([ ${#bf[@]} -eq 0 ] && echo yes || echo "no (${#bf[@]} fail)")"
}
if [ "$mode" = gate ]; then
  verify_first_kills "$JUDGE" "$base/$B/lib/tsmref_adapter.so" first_kill plain
  [ $asan_ready -eq 1 ] &&
    verify_first_kills "$ASAN_BUILD/bin/tsm-cts" "$SCRATCH/abase/$B/lib/tsmref_adapter.so" afirst_kill ASan
fi

[ ${#bad[@]} -gt 0 ] && printf 'not killed: %s\n' "${bad[@]}"
echo "killed by (first source): cases ${by_source[cases]}, combos ${by_source[combos]}," \
  "scenario ${by_source[scenario]}, asan ${by_source[asan]} (of which cases ${by_asan[cases]}," \
  "combos ${by_asan[combos]}, scenario ${by_asan[scenario]}), none ${by_source[none]}"
[ "$mode" = gate ] && [ $known_tried -gt 0 ] &&
  echo "known kills tried first: $known_tried, of which stale (killed otherwise or not at all):" \
    "${#known_stale[@]}${known_stale[*]:+ (${known_stale[*]})}"
echo "mutants: $killed killed, $survived survived, $noapply did not apply ($((SECONDS)) s)"
if [ "$mode" = gate ]; then
  [ "$survived" -eq 0 ] && [ "$noapply" -eq 0 ]
elif [ "$mode" = ttf ]; then
  true
else
  [ "$noapply" -eq 0 ]
fi
