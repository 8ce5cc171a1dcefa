#!/usr/bin/env bash
# harness/tests/check_layers.sh: the judge's layers are enforced by its build
# (harness/src/README.md, its table of layers; issue 29).
#
#   bash harness/tests/check_layers.sh BUILD_DIR [CC]
#
# In a scratch copy of harness/src, harness/include and harness/harness.mk, built with a
# makefile of a few lines that includes that harness.mk (BUILD_DIR only lends the path of
# the versioned DLPack header, deps.mk's):
# (a) the unplanted copy builds: every layer's library and tsm-cts, which runs;
# (b) every header compiles alone with its own layer's include path;
# (c) for each layer but the top, one of its sources given an #include of a header of
#     the layer above it fails to compile, naming that header; and a header of the case
#     language (lang/case.h) including the model's (model.h) fails too.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=harness/tests/tap.sh
. "$HERE/tap.sh"
if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: bash harness/tests/check_layers.sh BUILD_DIR [CC]" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
CC=${2:-cc}
cd "$HERE/../.." || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
tree=$TMP/tree
mkdir -p "$tree/harness" "$tree/build/deps"
cp -R harness/src harness/include harness/harness.mk "$tree/harness/"
if [ -f "$BUILD/deps/dlpack_v1_include" ]; then
  cp "$BUILD/deps/dlpack_v1_include" "$tree/build/deps/"
else
  not_ok "no $BUILD/deps/dlpack_v1_include (run make first)"
  tap_summary
  exit 1
fi
cat >"$tree/Makefile" <<'EOF'
B := build
CFLAGS_ALL := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O0 -MMD -MP
DLPACK_V1_INC_FILE := $(B)/deps/dlpack_v1_include
include harness/harness.mk
-include $(DEPS)
EOF
build() { make --no-print-directory -C "$tree" CC="$CC" -j2 "$@" >"$TMP/make.log" 2>&1; }

# The layers, lowest first, as harness.mk lists them.
read -r -a layers <<<"$(sed -n 's/^CTS_LAYERS := //p' harness/harness.mk)"
if [ "${#layers[@]}" -lt 3 ]; then
  not_ok "harness.mk lists no CTS_LAYERS"
  tap_summary
  exit 1
fi

# ---- (a) the unplanted copy builds ---------------------------------------------------
if build build/bin/tsm-cts && "$tree/build/bin/tsm-cts" --help >/dev/null 2>&1; then
  libs=("$tree"/build/lib/libcts_*.a)
  ok "the unplanted copy builds (${layers[*]}: ${#libs[@]} libraries) and its tsm-cts runs"
else
  not_ok "the unplanted copy does not build"; show <"$TMP/make.log"
fi

# ---- (b) every header alone, with its own layer's include path -----------------------
inc=(-Iharness/include)
bad=0
for l in "${layers[@]}"; do
  inc+=("-Iharness/src/$l")
  for h in harness/src/"$l"/*.h; do
    [ -e "$h" ] || continue
    if ! "$CC" -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror \
         -fsyntax-only "${inc[@]}" -x c "$h" >"$TMP/h.log" 2>&1; then
      not_ok "$h does not compile alone with layer $l's include path"; show <"$TMP/h.log"
      bad=1
    fi
  done
done
[ "$bad" = 0 ] && ok "every header compiles alone with its own layer's include path"

# ---- (c) planted upward includes -----------------------------------------------------
# plant FILE HEADER LIBRARY_LAYER: FILE (under harness/src) includes HEADER after its
# first local include; building LIBRARY_LAYER's library must fail, naming HEADER.
plant() {
  local file=$1 header=$2 layer=$3 f=$tree/harness/src/$1
  cp "$f" "$TMP/saved"
  awk -v h="$header" '{print} /^#include "/ && !done {print "#include \"" h "\""; done = 1}' \
    "$TMP/saved" >"$f"
  if ! grep -q "^#include \"$header\"" "$f"; then
    not_ok "could not plant $header in $file"
  elif build "build/lib/libcts_$layer.a"; then
    not_ok "$file including $header (an upper layer's) still builds"
  elif grep -Eq "${header}['\"]?: No such file|'${header}' file not found" "$TMP/make.log"; then
    ok "$file including $header (an upper layer's) fails the build: $(grep -m1 -E 'error:' "$TMP/make.log")"
  else
    not_ok "$file including $header fails, but not for want of $header"; show <"$TMP/make.log"
  fi
  cp "$TMP/saved" "$f"
}
for ((i = 0; i + 1 < ${#layers[@]}; i++)); do
  low=${layers[$i]} up=${layers[$((i + 1))]}
  srcs=("$tree/harness/src/$low"/*.c) hdrs=("$tree/harness/src/$up"/*.h)
  [ -e "${hdrs[0]}" ] || continue # the top layer (cli) has no header to include
  src=$(basename "${srcs[0]}") hdr=$(basename "${hdrs[0]}")
  plant "$low/$src" "$hdr" "$low"
done
plant lang/case.h model.h lang

# The copy builds again once every plant is gone.
if build build/bin/tsm-cts; then ok "the copy builds again without the plants"
else not_ok "the copy does not build after the plants were removed"; show <"$TMP/make.log"; fi
tap_summary
