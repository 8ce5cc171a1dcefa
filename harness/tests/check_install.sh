#!/usr/bin/env bash
# harness/tests/check_install.sh: the installed judge stands alone (issue 15, install).
#
#   bash harness/tests/check_install.sh BUILD_DIR [CC]
#
# Installs into a temporary prefix, then, in a folder outside the source tree: builds
# the example adapter (harness/adapters/example) with the flags of the installed
# tsm-cts.pc, and runs the installed judge with it, which must find the installed spec,
# cases and expectations by itself; its --help and coverage work there too.
set -uo pipefail
BUILD=${1:?usage: check_install.sh BUILD_DIR [CC]}
CC=${2:-cc}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
prefix="$TMP/prefix"

if make --no-print-directory BUILD="$BUILD" CC="$CC" PREFIX="$prefix" install >"$TMP/install.log" 2>&1; then
  ok "make install PREFIX=$prefix"
else
  not_ok "make install"; show <"$TMP/install.log"
fi
for f in bin/tsm-cts include/tsm/adapter.h lib/pkgconfig/tsm-cts.pc share/man/man1/tsm-cts.1 \
  share/tsm-cts/spec/README.md \
  share/tsm-cts/schema/results.schema.json; do
  [ -e "$prefix/$f" ] || not_ok "not installed: $f"
done
[ -d "$prefix/share/tsm-cts/cases/managers" ] || not_ok "not installed: share/tsm-cts/cases"

mkdir -p "$TMP/author"
cp harness/adapters/example/example_adapter.c "$TMP/author/"
cd "$TMP/author" || exit 2
if flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags tsm-cts) &&
   "$CC" -std=c11 -Wall -Wextra -Werror -fPIC -shared $flags example_adapter.c \
     -o example_adapter.so 2>"$TMP/cc.log"; then
  ok "the example adapter builds against tsm-cts.pc outside the source tree ($flags)"
else
  not_ok "building the example adapter against tsm-cts.pc"; show <"$TMP/cc.log"
fi

"$prefix/bin/tsm-cts" run --adapter ./example_adapter.so -j 2 --json run.json \
  >run.tap 2>run.err
rc=$?
runs=$(grep -cE '^(not )?ok ' run.tap)
if [ $rc -eq 0 ] && [ "$runs" -gt 100 ] && grep -q '"spec": "[0-9]' run.json; then
  ok "the installed judge runs the installed cases with the adapter ($runs runs: $(tail -n 1 run.tap))"
else
  not_ok "installed judge: exit $rc, $runs runs"; tail -n 5 run.err | show
fi
help=$("$prefix/bin/tsm-cts" --help)
coverage=$("$prefix/bin/tsm-cts" coverage 2>&1)
if grep -q 'tsm-cts merge' <<<"$help" &&
   grep -Eq '^[0-9]+ clauses, [0-9]+ uncovered' <<<"$coverage"; then
  ok "the installed judge's --help and coverage (installed spec and cases)"
else
  not_ok "installed --help or coverage"
fi
tap_summary
