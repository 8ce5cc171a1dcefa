/*
 * harness/src/base/dlpack_judge.h: the judge's side of DLPack (spec/dlpack.md): it produces
 * managed tensors with counting deleters for the implementation to import, and it
 * inspects and deletes the ones the implementation exports. Both DLPack forms are
 * read through the packaged headers: dlpack_form.c is compiled once per form (with
 * Debian's 0.6 header into cts_dl_legacy_*, with apache-tvm-ffi's 1.x header into
 * cts_dl_versioned_*), since the two headers declare the same names; this header uses
 * no DLPack type. dlpack_judge.c holds the deleter bookkeeping both forms share.
 */
#ifndef CTS_DLPACK_JUDGE_H
#define CTS_DLPACK_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"

/* The most dimensions of a DLTensor the judge makes (`make`) or reads: more than a tensor
 * of the ABI can have (TSM_MAX_DIMS), so that a case can check the refusal of the rest
 * (DLP.IMPORT.9). */
#define CTS_DL_MAX_DIMS 16

/* DLDeviceType and DLDataTypeCode values, the same in every DLPack version. */
enum { CTS_DL_CPU = 1, CTS_DL_CUDA = 2, CTS_DL_CUDA_HOST = 3, CTS_DL_OPENCL = 4,
       CTS_DL_VULKAN = 7, CTS_DL_CUDA_MANAGED = 13 };
enum { CTS_DL_INT = 0, CTS_DL_UINT = 1, CTS_DL_FLOAT = 2, CTS_DL_BFLOAT = 4,
       CTS_DL_COMPLEX = 5, CTS_DL_BOOL = 6, CTS_DL_F8_E4M3 = 8, CTS_DL_F4_E2M1FN = 17 };
#define CTS_DL_READ_ONLY (1ull << 0)
#define CTS_DL_IS_COPIED (1ull << 1)
#define CTS_DL_SUBBYTE_PADDED (1ull << 2) /* DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED */

/* A managed tensor's fields, whatever its form. Plain values; data is borrowed. */
struct cts_dl_view {
  uint32_t major, minor;      /* versioned only */
  uint64_t flags;             /* versioned only */
  int device_type, device_id;
  int ndim;
  int64_t shape[CTS_DL_MAX_DIMS];
  int has_strides;
  int64_t strides[CTS_DL_MAX_DIMS];
  int code, bits, lanes;
  uint64_t byte_offset;
  void *data;
  int has_deleter;
};

/* What the judge knows of a tensor it produced; lives until the case ends, so that a
 * second deleter call is seen, not undefined (DLP.DEL.1). */
struct cts_dl_record {
  int deletes;          /* calls of its deleter */
  int readonly;
  unsigned char *buffer; /* the data buffer the judge allocated; owned by the record */
  size_t buffer_len;
  uint64_t checksum;    /* of buffer when made; a READ_ONLY buffer must keep it */
  int written;          /* the checksum differed at a deletion (DLP.IMPORT.8) */
};

uint64_t cts_dl_checksum(const unsigned char *p, size_t n);
/* Called by the judge's deleters of either form. */
void cts_dl_record_deleted(struct cts_dl_record *rec);

/* Per form: build a managed tensor describing `view` (data: rec->buffer, or NULL) whose
 * deleter counts into rec. RETURN the managed struct; the judge frees it with
 * cts_dl_*_free once the case is over. */
void *cts_dl_legacy_make(const struct cts_dl_view *view, struct cts_dl_record *rec);
void *cts_dl_versioned_make(const struct cts_dl_view *view, struct cts_dl_record *rec);
void cts_dl_legacy_free(void *managed);
void cts_dl_versioned_free(void *managed);
/* Reads the fields of a managed tensor (made by anyone). */
void cts_dl_legacy_view(const void *managed, struct cts_dl_view *out);
void cts_dl_versioned_view(const void *managed, struct cts_dl_view *out);
/* Runs the managed tensor's deleter, as its owner (a NULL deleter: nothing). */
void cts_dl_legacy_delete(void *managed);
void cts_dl_versioned_delete(void *managed);

#endif
