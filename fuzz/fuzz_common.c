/*
 * fuzz/fuzz_common.c: the byte reader, the adapter under test (with the targets'
 * LLVMFuzzerInitialize, which reads -adapter=) and the failure report shared by the
 * fuzz targets (fuzz/fuzz_common.h).
 */
#include "fuzz_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_load.h"

#ifndef FUZZ_DEFAULT_ADAPTER
#define FUZZ_DEFAULT_ADAPTER "build/lib/tsmref_adapter.so"
#endif

uint8_t fuzz_u8(struct fuzz_in *in) { return in->pos < in->size ? in->data[in->pos++] : 0; }

uint64_t fuzz_u64(struct fuzz_in *in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | fuzz_u8(in);
  return v;
}

uint32_t fuzz_below(struct fuzz_in *in, uint32_t n) {
  uint32_t v = fuzz_u8(in);
  if (n > 256) v = v << 8 | fuzz_u8(in);
  return v % n;
}

int64_t fuzz_pick(struct fuzz_in *in, const int64_t *table, size_t n) {
  return table[fuzz_below(in, (uint32_t)n)];
}

static const char *adapter_path;

/* Every engine calls it once with the command line: -adapter=PATH names the adapter. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  for (int i = 1; i < *argc; i++)
    if (!strncmp((*argv)[i], "-adapter=", 9)) adapter_path = (*argv)[i] + 9;
  return 0;
}

const struct tsm_adapter *fuzz_adapter(void) {
  static const struct tsm_adapter *adapter;
  if (adapter) return adapter;
  const char *path = adapter_path ? adapter_path : getenv("TSM_FUZZ_ADAPTER");
  if (!path || !*path) path = FUZZ_DEFAULT_ADAPTER;
  char why[512];
  adapter = cts_adapter_load(path, why, sizeof why);
  if (!adapter) {
    fprintf(stderr, "fuzz: %s: %s\n", path, why);
    exit(2);
  }
  return adapter;
}

void fuzz_fail(const char *clause, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz: finding (%s): ", clause);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}
