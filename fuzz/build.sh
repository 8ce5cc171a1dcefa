#!/usr/bin/env bash
# fuzz/build.sh: builds the fuzz targets the way OSS-Fuzz and ClusterFuzzLite expect
# (fuzz/README.md): compilers and flags from $CC and $CFLAGS (the engine's
# instrumentation and sanitizer), the engine from $LIB_FUZZING_ENGINE, everything
# into $OUT: one binary per target, <target>.dict and <target>_seed_corpus.zip beside
# it, and the reference adapter the targets load by default (tsmref_adapter.so).
# Run from the repository root, or as the project's build.sh in an OSS-Fuzz image.
set -eu
cd "$(dirname "$0")/.."
: "${CC:=clang}" "${CFLAGS:=-fsanitize=address,undefined -fsanitize=fuzzer-no-link}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}" "${OUT:=build/fuzz/out}"
work=${WORK:-build/fuzz/oss}
mkdir -p "$OUT"
make --no-print-directory -j"${JOBS:-2}" BUILD="$work" CC="$CC" SAN="$CFLAGS" \
  OPT="-O1 -g" FUZZ_ENGINE=libfuzzer LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  fuzz-bins "$work/lib/tsmref_adapter.so"
cp "$work/lib/tsmref_adapter.so" "$OUT/"
for bin in "$work"/fuzz/bin/*; do
  target=$(basename "$bin")
  cp "$bin" "$OUT/$target"
  [ -f "fuzz/$target.dict" ] && cp "fuzz/$target.dict" "$OUT/$target.dict"
  rm -f "$OUT/${target}_seed_corpus.zip"
  seeds=$(ls fuzz/findings/"$target"/* 2>/dev/null | grep -Ev '\.(desc|tsm)$' || true)
  [ "$target" = parse ] && seeds="$seeds $(find cases harness/tests/malformed -name '*.tsm' | sort)"
  # Flat names (cases/ has the same file name in several folders): a/b.tsm -> a__b.tsm.
  # shellcheck disable=SC2086 # the list is a list of paths without spaces
  [ -n "${seeds// }" ] && python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for p in sys.argv[2:]: z.write(p, p.replace("/", "__"))' "$OUT/${target}_seed_corpus.zip" $seeds
done
echo "fuzz/build.sh: targets, dictionaries and seed corpora in $OUT"
