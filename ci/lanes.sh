#!/usr/bin/env bash
# ci/lanes.sh: what ci/check.sh (`make check`) and ci/check-gpu.sh (`make check-gpu`)
# share, sourced by both: `lane NAME COMMAND...` runs one lane, times it and counts it
# (every lane runs even when an earlier one failed, so one run shows everything that is
# wrong); `lanes_end TITLE` prints the closing line and returns 0 only when every lane
# passed; `need TOOL PACKAGE` names the Debian package of a missing tool.
passed=0
failed=0
failed_lanes=()

lane() {
  local name=$1
  shift
  local start=$SECONDS
  echo "=== lane $name: $*"
  if "$@"; then
    passed=$((passed + 1))
    echo "=== lane $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    failed_lanes+=("$name")
    echo "=== lane $name: FAILED ($((SECONDS - start)) s)"
  fi
}

lanes_end() { # title
  echo
  if [ "$failed" -ne 0 ]; then
    echo "failed lanes: ${failed_lanes[*]}"
  fi
  echo "$1: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# The folders of the hand-written case library: every folder of cases/ but generated/.
# The sanitizer lanes run these; the generated cases are the combinations the generator
# reaches, already judged on the reference (lanes reference, generated) and, as scenario
# inputs, under ASan and UBSan (fuzz-replay, the mutant gate's ASan source), so they stay
# out of the per-allocation and sanitizer runs that the 20-minute budget cannot carry.
hand_written_cases() {
  find cases -mindepth 1 -maxdepth 1 -type d ! -name generated | LC_ALL=C sort
}

need() {
  command -v "$1" >/dev/null 2>&1 && return 0
  echo "missing tool '$1': install the Debian package '$2' (apt-get install $2)" >&2
  return 1
}
