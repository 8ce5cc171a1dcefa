# harness/tests/tap.sh: the check counters of the self-test scripts, sourced by
# run_selftests.sh and check_versions.sh. Each check prints `ok - ...` or
# `not ok - ...`; tap_summary closes with `N passed, M failed` and fails if any failed.

passed=0
failed=0
ok() {
  passed=$((passed + 1))
  echo "ok - $*"
}
not_ok() {
  failed=$((failed + 1))
  echo "not ok - $*"
}
# Indents captured output under a failing check.
show() { sed -e 's/^/    # /' | head -n 20; }
tap_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# check_located FILE POS SCRATCH: `tsm-cts parse --json FILE` exits 1, prints no JSON, and
# its first line on stderr starts with `FILE:POS: error: ` (POS is LINE:COL); one check.
check_located() {
  local f=$1 pos=$2 tmp=$3 rc=0 first
  "$CTS" parse --json "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
  first=$(head -n 1 "$tmp/err")
  if [ "$rc" -ne 1 ] || [ -s "$tmp/out" ]; then
    not_ok "parse $f: exit $rc and $(wc -c <"$tmp/out") bytes of JSON, expected 1 and none"
  elif [[ "$first" != "$f:$pos: error: "* ]]; then
    not_ok "parse $f: stderr should start with '$f:$pos: error: ', got: $first"
  else
    ok "parse $f -> $pos: ${first#"$f:$pos: error: "}"
  fi
}

# first_line_of FILE OUT: the first line of OUT (a multi-file run's diagnostics) that is
# about FILE (starts with `FILE:`).
first_line_of() { awk -v p="$1:" 'index($0, p) == 1 { print; exit }' "$2"; }

# located_lines VERB OUT SUFFIX FILE...: each FILE's first line in OUT (first_line_of)
# starts with `FILE:POS:SUFFIX`, POS from the sibling .pos; one check per FILE.
located_lines() {
  local verb=$1 out=$2 suffix=$3 f pos first
  shift 3
  for f in "$@"; do
    pos=$(tr -d ' \r\n' <"${f%.*}.pos")
    first=$(first_line_of "$f" "$out")
    if [[ "$first" != "$f:$pos:$suffix"* ]]; then
      not_ok "$verb $f: its first line should start with '$f:$pos:$suffix', got: ${first:-nothing}"
    elif [ -n "$suffix" ]; then
      ok "$verb $f -> $pos: ${first#"$f:$pos:$suffix"}"
    else
      ok "$verb $f -> $pos"
    fi
  done
}

# check_located_all SCRATCH FILE...: one `tsm-cts parse --json` of every FILE (one
# process: a process per file costs a second each under Valgrind) exits 1 and prints no
# JSON, and each FILE's first line on stderr starts with `FILE:POS: error: ` (POS from the
# sibling .pos); one check per FILE.
check_located_all() {
  local tmp=$1 rc=0
  shift
  "$CTS" parse --json "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [ "$rc" -ne 1 ] || [ -s "$tmp/out" ]; then
    not_ok "parse of $# bad files: exit $rc and $(wc -c <"$tmp/out") bytes of JSON, expected 1 and none"
    show <"$tmp/err"
    return
  fi
  located_lines parse "$tmp/err" " error: " "$@"
}

# patched_reference DIR PATCH LOG [MAKE_VAR...]: a copy of the build inputs in DIR with
# PATCH applied and the reference adapter built there (BUILD=b, no CUDA, MAKE_VARs added);
# prints the adapter's path. RETURN 1, the why in LOG, when the patch does not apply or
# the reference does not build.
patched_reference() {
  local dir=$1 patch=$2 log=$3
  shift 3
  mkdir -p "$dir"
  cp -a Makefile ./*.mk impl harness "$dir"/
  [ -d bench ] && cp -a bench "$dir"/
  [ -e .venv ] && ln -s "$PWD/.venv" "$dir/.venv"
  patch -s -d "$dir" -p1 <"$patch" >"$log" 2>&1 &&
    make --no-print-directory -C "$dir" -j2 BUILD=b NVCC= "$@" b/lib/tsmref_adapter.so \
      >>"$log" 2>&1 &&
    echo "$dir/b/lib/tsmref_adapter.so"
}

# The start of a self-test script that takes one build folder: checks its argument,
# sets BUILD (absolute) and CTS (its judge) and moves to the repository root.
#   tap_setup SCRIPT_NAME "$@"
tap_setup() {
  if [ $# -ne 2 ] || [ ! -d "$2" ]; then
    echo "usage: bash harness/tests/$1 BUILD_DIR" >&2
    exit 2
  fi
  BUILD=$(cd "$2" && pwd)
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
  CTS="$BUILD/bin/tsm-cts"
}
