#!/usr/bin/env bash
# ci/mutants.sh: the mutant catalog's kill gate. Each ci/mutants/NNN-name.patch puts one
# real bug (a header names its clause, origin and family) into impl/; the case library
# must kill every one of them: at least one case that passes on the reference must fail
# on the mutant.
#
#   ci/mutants.sh [--gate | --matrix] [--build DIR] [-j N] [PATCH...]
#
# --gate (make check): per mutant, the cases of its family folders first, then the rest
#   of the library, stopping at the first killing result (tsm-cts run --fail-fast).
# --matrix (make mutants): per mutant, the whole library; prints the kill matrix
#   (killing cases, the first few of them, time to the first kill).
#
# Per mutant: a scratch copy of the build inputs (Makefile, *.mk, impl/, harness/,
# bench/) with the objects of the main build (DIR/obj/impl, timestamps kept), the patch
# applied, then only libtsmref and the reference adapter rebuilt without CUDA (NVCC=),
# so make recompiles only the patched files. The judge is DIR/bin/tsm-cts, run from the
# repository root on the cpu device. The repository's own tree is never written.
#
# A kill counts only when the killing case passes on the unmutated scratch build (gate:
# the first killing cases are re-run on it at the end; matrix: the whole library is run
# on it first). Exit status 0 only when every mutant applied, built and was killed.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD

mode=gate
BUILD=${BUILD:-build}
JOBS=${JOBS:-$(nproc)}
CC=${CC:-cc}
patches=()
while [ $# -gt 0 ]; do
  case $1 in
    --gate) mode=gate ;;
    --matrix) mode=matrix ;;
    --build) BUILD=$2; shift ;;
    -j) JOBS=$2; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ci/mutants.sh: unknown option '$1'" >&2; exit 2 ;;
    *) patches+=("$1") ;;
  esac
  shift
done
[ ${#patches[@]} -gt 0 ] || patches=(ci/mutants/*.patch)
BUILD=${BUILD%/}
case $BUILD in /*) BUILD=$(realpath --relative-to="$ROOT" "$BUILD") ;; esac

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

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/tsm-mutants.XXXXXX")
# MUTANTS_KEEP=1 keeps the scratch folder (the last mutant's copy and TAP) for a look.
if [ -n "${MUTANTS_KEEP:-}" ]; then
  echo "# scratch kept: $SCRATCH" >&2
else
  trap 'rm -rf "$SCRATCH"' EXIT
fi
base=$SCRATCH/base
B=b # the build folder inside a scratch copy

# ---- the scratch base: build inputs + the main build's impl objects ------------------
mkdir -p "$base/$B/obj"
cp -a Makefile ./*.mk impl harness "$base"/
[ -d bench ] && cp -a bench "$base"/
[ -e .venv ] && ln -s "$ROOT/.venv" "$base/.venv"
cp -a "$BUILD/obj/impl" "$base/$B/obj/"
cp -a "$BUILD/deps" "$base/$B/"
# The dependency files name their objects under $BUILD: rename to the scratch folder.
bre=$(printf '%s' "$BUILD" | sed 's/[.[\*^$/]/\\&/g')
find "$base/$B/obj" -name '*.d' -exec sed -i "s/^$bre\\/obj\\//$B\\/obj\\//" {} +
# device.c is the only source that depends on NVCC (TSMREF_HAVE_CUDA): build it without.
touch "$base/impl/src/device.c"
mk() { make --no-print-directory -C "$1" BUILD=$B NVCC= CC="$CC" "$B/lib/tsmref_adapter.so"; }
start=$SECONDS
if ! mk "$base" >"$SCRATCH/base.log" 2>&1; then
  cat "$SCRATCH/base.log" >&2
  echo "ci/mutants.sh: the unmutated reference does not build" >&2
  exit 2
fi
echo "# mutants: $mode, ${#patches[@]} patches, judge $JUDGE, -j $JOBS, base built in $((SECONDS - start)) s"

judge() { # adapter, then selectors and options
  local adapter=$1
  shift
  "$JUDGE" run --adapter "$adapter" --device cpu -j "$JOBS" "$@"
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

declare -A base_fail=()
if [ "$mode" = matrix ]; then
  start=$SECONDS
  judge "$base/$B/lib/tsmref_adapter.so" cases | stamp "$EPOCHREALTIME" >"$SCRATCH/base.tap"
  while read -r _ name; do base_fail[$name]=1; done < <(failures "$SCRATCH/base.tap")
  echo "# baseline: the whole library on the unmutated scratch build in $((SECONDS - start)) s," \
    "${#base_fail[@]} failing (not counted as kills)"
fi

killed=0
survived=0
noapply=0
bad=()
declare -A first_kill=()
printf '%-46s %-14s %6s %8s  %s\n' mutant clause kills first_s "killing cases"
for p in "${patches[@]}"; do
  id=$(basename "$p" .patch)
  clause=$(sed -n 's/^# clause: //p' "$p" | head -n 1)
  family=$(sed -n 's/^# family: //p' "$p" | head -n 1)
  m=$SCRATCH/m
  rm -rf "$m"
  cp -a "$base" "$m"
  if ! patch -p1 -d "$m" --dry-run --batch --forward -s <"$p" >"$SCRATCH/patch.log" 2>&1; then
    printf '%-46s %-14s %6s %8s  %s\n' "$id" "$clause" - - "DID NOT APPLY: $(head -c 200 "$SCRATCH/patch.log" | tr '\n' ' ')"
    noapply=$((noapply + 1))
    bad+=("$id (did not apply)")
    continue
  fi
  patch -p1 -d "$m" --batch --forward -s --no-backup-if-mismatch <"$p" >/dev/null
  if ! mk "$m" >"$SCRATCH/build.log" 2>&1; then
    printf '%-46s %-14s %6s %8s  %s\n' "$id" "$clause" - - "DID NOT BUILD:"
    grep -m 5 -E 'error|warning' "$SCRATCH/build.log" | sed 's/^/    /'
    noapply=$((noapply + 1))
    bad+=("$id (did not build)")
    continue
  fi
  sel=()
  for d in $family; do [ -d "cases/$d" ] && sel+=("cases/$d"); done
  sel+=(cases)
  ff=()
  [ "$mode" = gate ] && ff=(--fail-fast)
  judge "$m/$B/lib/tsmref_adapter.so" "${ff[@]}" "${sel[@]}" | stamp "$EPOCHREALTIME" >"$SCRATCH/m.tap"
  kills=()
  t_first=
  while read -r t name; do
    [ -n "${base_fail[$name]:-}" ] && continue
    [ -z "$t_first" ] && t_first=$t
    kills+=("$name")
  done < <(failures "$SCRATCH/m.tap")
  if [ ${#kills[@]} -eq 0 ]; then
    printf '%-46s %-14s %6s %8s  %s\n' "$id" "$clause" 0 - "SURVIVED"
    survived=$((survived + 1))
    bad+=("$id (survived)")
    continue
  fi
  killed=$((killed + 1))
  first_kill[$id]=${kills[0]}
  shown=$(printf '%s, ' "${kills[@]:0:3}")
  [ ${#kills[@]} -gt 3 ] && shown="$shown..." || shown=${shown%, }
  n=${#kills[@]}
  [ "$mode" = gate ] && n=">=1"
  printf '%-46s %-14s %6s %8s  %s\n' "$id" "$clause" "$n" "$t_first" "$shown"
done

# Gate: a kill counts only if the killing case passes on the unmutated build.
if [ "$mode" = gate ] && [ ${#first_kill[@]} -gt 0 ]; then
  mapfile -t cases_run < <(printf 'cases/%s\n' "${first_kill[@]}" | sort -u)
  judge "$base/$B/lib/tsmref_adapter.so" "${cases_run[@]}" | stamp "$EPOCHREALTIME" >"$SCRATCH/base.tap"
  while read -r _ name; do base_fail[$name]=1; done < <(failures "$SCRATCH/base.tap")
  for id in "${!first_kill[@]}"; do
    if [ -n "${base_fail[${first_kill[$id]}]:-}" ]; then
      echo "$id: its killing case ${first_kill[$id]} fails on the unmutated reference too: not a kill"
      killed=$((killed - 1))
      survived=$((survived + 1))
      bad+=("$id (killed only by a case that fails on the reference)")
    fi
  done
  echo "# the ${#cases_run[@]} killing cases pass on the unmutated build:" \
    "$([ ${#base_fail[@]} -eq 0 ] && echo yes || echo "no (${#base_fail[@]} fail)")"
fi

[ ${#bad[@]} -gt 0 ] && printf 'not killed: %s\n' "${bad[@]}"
echo "mutants: $killed killed, $survived survived, $noapply did not apply"
[ "$survived" -eq 0 ] && [ "$noapply" -eq 0 ]
