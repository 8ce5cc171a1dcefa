#!/usr/bin/env bash
# harness/tests/check_versions.sh: the three versions of the project against their
# single sources (spec/architecture.md, Versions; spec/README.md, Versioning).
#
#   bash harness/tests/check_versions.sh [BUILD_DIR]
#
# - the adapter ABI: TSM_ADAPTER_ABI_MAJOR.MINOR in harness/include/tsm/adapter.h. The
#   `ABI **X.Y**` line of spec/adapter.md states it; the header's `---- ABI X.N`
#   sections and the chapter's `## ABI X.N` sections both run from X.1 to X.MINOR; no
#   document names an ABI newer than the header.
# - the spec: the one `Spec version **X.Y**` line, in spec/README.md, whose history
#   ends with X.Y; no other file states a spec version.
# - libtsmref: TSMREF_VERSION_MAJOR.MINOR.PATCH in impl/include/tsmref.h, from which
#   TSMREF_VERSION_STRING is built; no build file types a version. With BUILD_DIR: its
#   tsmref.pc and the version the reference adapter reports agree.
#
# TSM_VERSIONS_ROOT (default: this checkout) is the tree to check, so that the
# self-tests can show the check fails on a tree whose spec and header disagree.
# Prints one line per check (ok / not ok), then `N passed, M failed`; exits 1 if any
# check failed.
set -uo pipefail

BUILD=${1:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=${TSM_VERSIONS_ROOT:-$(cd "$HERE/../.." && pwd)}
cd "$ROOT" || exit 2
[ -z "$BUILD" ] || BUILD=$(cd "$BUILD" && pwd) || exit 2

# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
# check DESCRIPTION WANT GOT
check() {
  if [ "$2" = "$3" ]; then ok "$1${2:+: $2}"; else not_ok "$1: want '$2', found '$3'"; fi
}
# macro FILE NAME: the number a `#define NAME N` line gives.
macro() { sed -n "s/^#define $2 \\([0-9][0-9]*\\)\$/\\1/p" "$1"; }

# ---- the adapter ABI ---------------------------------------------------------------

HEADER=harness/include/tsm/adapter.h
major=$(macro $HEADER TSM_ADAPTER_ABI_MAJOR)
minor=$(macro $HEADER TSM_ADAPTER_ABI_MINOR)
abi="$major.$minor"
if [ -z "$major" ] || [ -z "$minor" ]; then
  not_ok "$HEADER defines TSM_ADAPTER_ABI_MAJOR and TSM_ADAPTER_ABI_MINOR"
  abi=unknown
fi
check "spec/adapter.md states the header's ABI" "$abi" \
  "$(sed -n 's/^ABI \*\*\([0-9.]*\)\*\*.*/\1/p' spec/adapter.md | paste -sd' ')"
want_sections=$(seq 1 "${minor:-0}" | sed "s/^/$major./" | paste -sd' ')
check "the header's ABI sections" "$want_sections" \
  "$(sed -n 's/.*---- ABI \([0-9]*\.[0-9]*\):.*/\1/p' $HEADER | sort -t. -k2 -n -u | paste -sd' ')"
check "spec/adapter.md's ABI sections" "$want_sections" \
  "$(sed -n 's/^## ABI \([0-9]*\.[0-9]*\):.*/\1/p' spec/adapter.md | paste -sd' ')"
newer=$(grep -n -o -E 'ABI [0-9]+\.[0-9]+' spec/*.md README.md $HEADER |
  awk -F'ABI ' -v M="$major" -v m="$minor" '{split($2, v, ".");
    if (v[1] > M || (v[1] == M && v[2] > m)) print}')
check "no document names an ABI newer than the header" "" "$newer"

# ---- the spec ------------------------------------------------------------------------

stated=$(grep -n -E '^Spec version \*\*[0-9]+\.[0-9]+\*\*' spec/*.md)
check "one spec version line, in spec/README.md" "1 spec/README.md" \
  "$(printf '%s\n' "$stated" | grep -c . | tr -d ' ') $(printf '%s\n' "$stated" | cut -d: -f1 | sort -u | paste -sd' ')"
spec=$(sed -n 's/^Spec version \*\*\([0-9.]*\)\*\*.*/\1/p' spec/README.md)
history=$(sed -n '/^Spec version \*\*/,/^$/p' spec/README.md | tr '\n' ' ')
last=$(printf '%s' "$history" | grep -o -E '[0-9]+\.[0-9]+ adds' | tail -n 1 | cut -d' ' -f1)
check "the spec version's history ends with it" "$spec" "$last"
others=$(grep -rn -i -E 'spec version [*]*[0-9]+\.[0-9]+' --include='*.md' --include='*.[ch]' \
  --include='*.py' --include='*.mk' --include=Makefile --exclude-dir='build*' \
  --exclude-dir=.venv . 2>/dev/null | grep -v '^\./spec/README\.md:' || true)
check "no other file states a spec version" "" "$others"

# ---- libtsmref -----------------------------------------------------------------------

LIBH=impl/include/tsmref.h
lib="$(macro $LIBH TSMREF_VERSION_MAJOR).$(macro $LIBH TSMREF_VERSION_MINOR).$(macro $LIBH TSMREF_VERSION_PATCH)"
case $lib in
  *..* | .* | *.) not_ok "$LIBH defines TSMREF_VERSION_MAJOR, _MINOR and _PATCH" ;;
  *) ok "$LIBH defines the library version $lib" ;;
esac
check "TSMREF_VERSION_STRING is built from the macros, not typed" "" \
  "$(grep -n -E 'define TSMREF_VERSION_STRING.*"[0-9]' $LIBH)"
check "no build file types a library version" "" \
  "$(grep -n -E "Version: *[0-9]|TSMREF_VERSION *:?= *[0-9]" Makefile ./*.mk impl/*.mk 2>/dev/null)"
if [ -n "$BUILD" ]; then
  check "$BUILD/lib/pkgconfig/tsmref.pc" "$lib" \
    "$(sed -n 's/^Version: //p' "$BUILD/lib/pkgconfig/tsmref.pc" 2>/dev/null)"
  header=$("$BUILD/bin/tsm-cts" run --adapter "$BUILD/lib/tsmref_adapter.so" \
    'no-case-matches-this-*' 2>/dev/null | grep '^# tsm-cts: adapter')
  check "the reference adapter reports the library version" "libtsmref $lib" \
    "$(printf '%s' "$header" | grep -o -E 'libtsmref [0-9.]+')"
fi

tap_summary
