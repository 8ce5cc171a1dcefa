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
