/*
 * harness/src/base/dlpack_judge.c: the counting deleter's bookkeeping, shared by both forms.
 */
#include "dlpack_judge.h"

uint64_t cts_dl_checksum(const unsigned char *p, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

void cts_dl_record_deleted(struct cts_dl_record *rec) {
  if (rec->deletes == 0 && rec->readonly && rec->buffer &&
      cts_dl_checksum(rec->buffer, rec->buffer_len) != rec->checksum)
    rec->written = 1;
  rec->deletes++;
}
