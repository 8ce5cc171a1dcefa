/*
 * fuzz/fuzz_dlpack.c: fuzz target `dlpack-consume`: the adapter's DLPack consumer
 * (dlpack_import, spec/dlpack.md) fed managed tensors of both forms, every DLTensor
 * field at legal and illegal values: versions, flags, devices, dtypes, ndim (negative,
 * 0, past TSM_MAX_DIMS), NULL or overflowing or negative shapes, NULL, compact,
 * negative, zero and overflowing strides, byte_offset, NULL data, NULL deleter, and
 * target managers that are open, closed or capped. The judge's producer
 * (harness/src/base/dlpack_judge.h) makes the tensors with counting deleters; the judge's
 * model (harness/src/model/model.h) gives the expected result of every tensor it can
 * describe; a layout it cannot describe (too many dimensions, NULL shape, a byte span
 * past int64 or past the buffer) must be refused with EDLPACK once the manager and
 * version checks pass (DLP.IMPORT.2). Checked per input: the return code, the deleter
 * count right after the import (DLP.IMPORT.2, DLP.MGR.3) and after the tensor's release
 * or the session's close (DLP.DEL.1-2, DLP.MGR.1), the imported values (DLP.IMPORT.3-4),
 * a READ_ONLY buffer unchanged (DLP.IMPORT.8) and no live bytes left (MGR.COUNT.4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "fuzz_common.h"
#include "fuzz_dlpack.h"
#include "adapter_load.h"
#include "case.h"
#include "model.h"

#define FUZZ_DIMS (2 * TSM_MAX_DIMS)
#define FUZZ_MAX_BYTES 65536

enum mgr_kind { MGR_ROOT, MGR_SUB, MGR_CLOSED, MGR_CAPPED, N_MGR_KINDS };

/* One decoded input. Owns buf and vals; shape and strides are what the tensor's
 * DLTensor points at (NULL pointers when null_shape/null_strides). */
struct dl_input {
  int form, mgr_kind, release_by_close;
  struct cts_dl_view view;   /* version, flags, device, dtype, data, byte_offset */
  int ndim, null_shape, null_strides;
  int64_t shape[FUZZ_DIMS], strides[FUZZ_DIMS];
  int describable;           /* the model can describe it (see the file comment) */
  int huge_fits;             /* huge extents whose byte size fits int64: given NULL data */
  int64_t n_elems;           /* when describable */
  size_t esize;
  unsigned char *buf;
  size_t buf_len;
};

static const int64_t majors[] = {1, 1, 1, 1, 0, 2, 255};
static const int64_t minors[] = {0, 1, 2, 3, 255};
static const int64_t flag_values[] = {0, 0, CTS_DL_READ_ONLY, CTS_DL_IS_COPIED,
                                      CTS_DL_READ_ONLY | CTS_DL_IS_COPIED, 1ull << 63};
static const int64_t devices[] = {CTS_DL_CPU, CTS_DL_CPU, CTS_DL_CPU, CTS_DL_CUDA_HOST,
                                  CTS_DL_CUDA_MANAGED, CTS_DL_CUDA, CTS_DL_OPENCL,
                                  CTS_DL_VULKAN, 0, 99};
/* code, bits, lanes */
static const int dtypes[][3] = {
    {CTS_DL_FLOAT, 32, 1}, {CTS_DL_FLOAT, 32, 1}, {CTS_DL_INT, 32, 1}, {CTS_DL_INT, 32, 1},
    {CTS_DL_UINT, 32, 1}, {CTS_DL_FLOAT, 64, 1}, {CTS_DL_INT, 8, 1}, {CTS_DL_BOOL, 8, 1},
    {CTS_DL_BFLOAT, 16, 1}, {CTS_DL_F8_E4M3, 8, 1}, {CTS_DL_COMPLEX, 64, 1},
    {CTS_DL_FLOAT, 32, 2}, {CTS_DL_INT, 64, 1}};
static const int64_t small_ndims[] = {0, 1, 1, 2, 2, 3, 4, TSM_MAX_DIMS};
static const int64_t bad_ndims[] = {-1, -100, TSM_MAX_DIMS + 1, FUZZ_DIMS};
static const int64_t negative_extents[] = {-1, -3, INT64_MIN};
static const int64_t huge_values[] = {INT64_MAX, INT64_MIN + 1, 1ll << 62, -(1ll << 62),
                                      1ll << 40, -(1ll << 40), 3ll << 61, 1ll << 33};

static void decode_header(struct fuzz_in *in, struct dl_input *d) {
  d->form = fuzz_u8(in) & 1 ? TSM_DLPACK_VERSIONED : TSM_DLPACK_LEGACY;
  d->mgr_kind = fuzz_u8(in) % 8 < 5 ? MGR_ROOT : 1 + (int)fuzz_below(in, N_MGR_KINDS - 1);
  d->release_by_close = fuzz_u8(in) & 1;
  struct cts_dl_view *v = &d->view;
  v->major = (uint32_t)FUZZ_PICK(in, majors);
  v->minor = (uint32_t)FUZZ_PICK(in, minors);
  v->flags = (uint64_t)FUZZ_PICK(in, flag_values);
  v->device_type = (int)FUZZ_PICK(in, devices);
  v->device_id = fuzz_u8(in) % 8 == 0 ? 1 : 0;
  const int *dt = dtypes[fuzz_below(in, sizeof dtypes / sizeof dtypes[0])];
  v->code = dt[0], v->bits = dt[1], v->lanes = dt[2];
  d->esize = (size_t)(dt[1] / 8 * dt[2]);
  v->has_deleter = fuzz_u8(in) % 8 != 0;
}

/* The shape classes decode_shape draws from: 0..4 small extents, then these. */
enum { SHAPE_NEGATIVE = 5, SHAPE_HUGE = 6, SHAPE_BAD_NDIM = 7, N_SHAPE_CLASSES = 8 };

/* The n extents of the small class, 0..3, a 0 one time in five. */
static void small_extents(struct fuzz_in *in, struct dl_input *d, int n) {
  for (int i = 0; i < n; i++) d->shape[i] = fuzz_below(in, 5) == 0 ? 0 : 1 + fuzz_below(in, 3);
}

/* The huge class: every one of the n extents huge; huge_fits while their byte size
 * still fits int64. */
static void huge_extents(struct fuzz_in *in, struct dl_input *d, int n) {
  int64_t bytes = (int64_t)d->esize;
  d->huge_fits = n > 0;
  for (int i = 0; i < n; i++) {
    d->shape[i] = FUZZ_PICK(in, huge_values) & INT64_MAX;
    if (__builtin_mul_overflow(bytes, d->shape[i], &bytes)) d->huge_fits = 0;
  }
}

/* Shape classes: small extents (0..3), a negative extent, huge extents, a NULL shape,
 * a bad ndim. Sets describable for the small ones. */
static void decode_shape(struct fuzz_in *in, struct dl_input *d) {
  int cls = (int)fuzz_below(in, N_SHAPE_CLASSES);
  d->ndim = (int)(cls == SHAPE_BAD_NDIM ? FUZZ_PICK(in, bad_ndims) : FUZZ_PICK(in, small_ndims));
  int n = d->ndim > 0 ? d->ndim : 0;
  small_extents(in, d, n);
  d->describable = (cls < SHAPE_NEGATIVE || n == 0) && d->ndim >= 0 && d->ndim <= TSM_MAX_DIMS;
  if (cls == SHAPE_NEGATIVE && n > 0)
    d->shape[fuzz_below(in, (uint32_t)n)] = FUZZ_PICK(in, negative_extents);
  if (cls == SHAPE_HUGE) huge_extents(in, d, n);
  d->null_shape = d->ndim > 0 ? fuzz_below(in, 16) == 0 : fuzz_u8(in) & 1;
  if (d->null_shape && d->ndim > 0) d->describable = 0;
}

static void decode_strides(struct fuzz_in *in, struct dl_input *d) {
  int mode = (int)fuzz_below(in, 5), n = d->ndim > 0 ? d->ndim : 0;
  d->null_strides = mode == 0 || d->ndim > TSM_MAX_DIMS;
  int64_t compact = 1;
  for (int i = n - 1; i >= 0; i--) {
    if (mode == 0 || mode == 1) d->strides[i] = compact;
    if (mode == 2) d->strides[i] = (int64_t)fuzz_below(in, 7) - 3;
    if (mode == 4) d->strides[i] = fuzz_u8(in) & 1 ? FUZZ_PICK(in, huge_values) : 1;
    if (d->shape[i] < 0 || __builtin_mul_overflow(compact, d->shape[i], &compact)) compact = 0;
  }
}

/* The lowest and highest element offsets the layout reaches, in elements; 0 when one
 * or the byte span overflows int64 (DLP.IMPORT.2: such a tensor is refused). A tensor
 * of no elements reaches nothing (DLP.IMPORT.5). */
static int element_span(const struct dl_input *d, int64_t *lo, int64_t *hi) {
  *lo = *hi = 0;
  for (int i = 0; i < d->ndim; i++)
    if (d->shape[i] == 0) return 1;
  for (int i = 0; i < d->ndim; i++) {
    int64_t reach;
    if (d->shape[i] <= 1) continue;
    if (__builtin_mul_overflow(d->shape[i] - 1, d->strides[i], &reach)) return 0;
    if (__builtin_add_overflow(reach > 0 ? *hi : *lo, reach, reach > 0 ? hi : lo)) return 0;
  }
  int64_t bytes;
  return !__builtin_sub_overflow(*hi, *lo, &bytes) && !__builtin_add_overflow(bytes, 1, &bytes) &&
         !__builtin_mul_overflow(bytes, (int64_t)d->esize, &bytes);
}

/* The elements of a describable layout (1 for none: the count is not read then). */
static int64_t count_elems(const struct dl_input *d) {
  int64_t n = 1;
  for (int i = 0; i < d->ndim && d->describable; i++) n *= d->shape[i] > 0 ? d->shape[i] : 0;
  return n;
}

/* The span of elements the buffer holds, *lo..*hi: the layout's, or 0..0 for no element
 * or a layout the model cannot describe (as one whose span overflows becomes). */
static void buffer_span(struct dl_input *d, int64_t *lo, int64_t *hi) {
  if (d->describable && !element_span(d, lo, hi)) d->describable = 0;
  if (!d->describable || d->n_elems == 0) *lo = *hi = 0;
}

/* 1 when a buffer of the span lo..hi and `extra` elements before it gets bytes: its
 * size fits int64 and FUZZ_MAX_BYTES, and the extents are not the huge ones. */
static int buffer_fits(const struct dl_input *d, int64_t lo, int64_t hi, int64_t extra) {
  int64_t need;
  return !(d->huge_fits || __builtin_add_overflow(hi - lo + 1, extra, &need) ||
           __builtin_mul_overflow(need, (int64_t)d->esize, &need) || need > FUZZ_MAX_BYTES);
}

/* Gives a describable layout its buffer, byte_offset and data; a span past int64
 * makes it one the model cannot describe, a span past FUZZ_MAX_BYTES gets NULL data. */
static void place_buffer(struct fuzz_in *in, struct dl_input *d) {
  d->n_elems = count_elems(d);
  int64_t lo, hi, extra = fuzz_below(in, 3);
  buffer_span(d, &lo, &hi);
  if (!buffer_fits(d, lo, hi, extra)) {
    d->view.data = NULL;
    return;
  }
  d->view.byte_offset = (uint64_t)((extra - lo) * (int64_t)d->esize);
  d->buf_len = (size_t)(extra + hi - lo + 1) * d->esize;
  d->buf = malloc(d->buf_len ? d->buf_len : 1);
  if (!d->buf) abort();
  for (size_t i = 0; i < d->buf_len; i++) d->buf[i] = (unsigned char)(fuzz_u8(in) ^ (i * 131u));
  d->view.data = d->n_elems == 0 && fuzz_u8(in) & 1 ? NULL : d->buf;
}

static void decode(struct fuzz_in *in, struct dl_input *d) {
  memset(d, 0, sizeof *d);
  decode_header(in, d);
  decode_shape(in, d);
  decode_strides(in, d);
  place_buffer(in, d);
}

/* The model's answer for the same tensor and manager; *x: its DLPack record. */
static int expected_rc(const struct dl_input *d, struct cts_model *m, int mgr, int *x) {
  struct cts_mdl_desc k;
  memset(&k, 0, sizeof k);
  k.form = d->form, k.major = d->view.major, k.minor = d->view.minor;
  k.device_type = CTS_DL_CPU, k.code = CTS_DL_FLOAT, k.bits = 32, k.lanes = 1;
  k.dtype = TSM_F32;
  if (d->describable) {
    k.device_type = d->view.device_type, k.ndim = d->ndim;
    memcpy(k.shape, d->shape, sizeof k.shape);
    memcpy(k.strides, d->strides, sizeof k.strides);
    k.no_strides = d->null_strides, k.n_strides = d->null_strides ? 0 : d->ndim;
    k.code = d->view.code, k.bits = d->view.bits, k.lanes = d->view.lanes;
    k.dtype = k.code == CTS_DL_FLOAT ? TSM_F32 : TSM_I32;
    k.null_data = d->view.data == NULL;
  }
  cts_model_dl_make(m, &k, calloc((size_t)d->n_elems + 1, sizeof(double)), x);
  int out, rc = cts_model_dl_import(m, *x, mgr, &out);
  if (!d->describable && rc != TSM_EINVAL && rc != TSM_ECLOSED && rc != TSM_ECAPPED &&
      rc != TSM_EVERSION)
    rc = TSM_EDLPACK;
  return rc;
}

/* The manager the import targets, made the same way in the adapter and the model. */
static tsm_handle target_manager(const struct tsm_adapter *a, void *s, struct cts_model *m,
                                 int kind, int *model_mgr) {
  tsm_handle root, sub;
  FUZZ_CHECK(a->mgr_root(s, &root) == 0, "MGR.ROOT", "mgr_root failed");
  *model_mgr = 0;
  if (kind == MGR_ROOT) return root;
  FUZZ_CHECK(a->mgr_new_sub(s, root, &sub) == 0 && cts_model_new_sub(m, 0, model_mgr) == 0,
             "MGR.SUB", "mgr_new_sub failed");
  if (kind == MGR_CLOSED)
    FUZZ_CHECK(a->mgr_close(s, sub) == 0 && cts_model_close(m, *model_mgr) == 0, "MGR.CLOSE",
               "mgr_close failed");
  if (kind == MGR_CAPPED)
    FUZZ_CHECK(a->mgr_cap(s, sub) == 0 && cts_model_cap(m, *model_mgr) == 0, "MGR.CAP",
               "mgr_cap failed");
  return sub;
}

/* The imported tensor holds exactly the elements the layout describes (DLP.IMPORT.3-4). */
static void check_values(const struct tsm_adapter *a, void *s, tsm_handle t,
                         const struct dl_input *d) {
  size_t n = (size_t)d->n_elems, es = d->esize;
  unsigned char *got = malloc(n * es + 1), *want = malloc(n * es + 1);
  if (!got || !want) abort();
  FUZZ_CHECK(a->tensor_read(s, t, got, n * es) == 0, "DLP.IMPORT.4", "tensor_read failed");
  const unsigned char *origin = d->buf + d->view.byte_offset;
  for (size_t i = 0; i < n; i++) {
    int64_t off = 0;
    size_t rest = i;
    for (int k = d->ndim - 1; k >= 0; k--) {
      off += (int64_t)(rest % (size_t)d->shape[k]) * d->strides[k];
      rest /= (size_t)d->shape[k];
    }
    memcpy(want + i * es, origin + off * (int64_t)es, es);
  }
  FUZZ_CHECK(!memcmp(got, want, n * es), "DLP.IMPORT.3-4",
             "imported values differ from the producer's elements");
  free(got);
  free(want);
}

static void *make_managed(struct dl_input *d, struct cts_dl_record *rec) {
  if (d->form == TSM_DLPACK_VERSIONED && d->view.major != 1) /* DLP.IMPORT.1: untouched */
    d->view.data = (void *)(uintptr_t)16;
  void *managed = d->form == TSM_DLPACK_VERSIONED ? cts_dl_versioned_make(&d->view, rec)
                                                  : cts_dl_legacy_make(&d->view, rec);
  int poison = d->form == TSM_DLPACK_VERSIONED && d->view.major != 1;
  int64_t *bad = (int64_t *)(uintptr_t)16;
  fuzz_dl_set_layout(managed, d->form, d->ndim,
                     poison ? bad : d->null_shape ? NULL : d->shape,
                     poison ? bad : d->null_strides ? NULL : d->strides);
  return managed;
}

static int session_is_cuda(const struct tsm_adapter *a) {
  const struct tsm_device *devs;
  return a->device_list(&devs) >= 1 && strncmp(devs[0].name, "cpu", 3) != 0;
}

/* One input's run: the adapter's session with the model beside it, the manager the
 * import targets in each, and the managed tensor with its deleter's record. */
struct dl_run {
  const struct tsm_adapter *a;
  void *s;
  struct cts_model m;
  tsm_handle mgr;
  int model_mgr;
  struct cts_dl_record rec;
  void *managed;
};

/* After the import: the result, the deleter runs so far, the values, then the release
 * (or the session's close) and what is left. */
static void check_import(struct dl_run *run, const struct dl_input *d) {
  const struct tsm_adapter *a = run->a;
  void *s = run->s;
  struct cts_model *m = &run->m;
  const struct cts_dl_record *rec = &run->rec;
  int x, want = expected_rc(d, m, run->model_mgr, &x);
  tsm_handle t = TSM_NONE;
  int rc = a->dlpack_import(s, run->managed, d->form, run->mgr, &t);
  FUZZ_CHECK(rc == want, "DLP.IMPORT.2", "import returned %s, the spec requires %s",
             cts_err_name(rc), cts_err_name(want));
  /* A refusal consumes the tensor; an accepted copy too, an alias not (DLP.MGR.3). */
  int deletes_now = !d->view.has_deleter ? 0 : want ? 1 : m->dls[x].deletes;
  FUZZ_CHECK(rec->deletes == deletes_now, rc ? "DLP.IMPORT.2" : "DLP.MGR.3",
             "deleter ran %d times right after the import (%s), the spec requires %d",
             rec->deletes, cts_err_name(rc), deletes_now);
  if (rc) return;
  if (d->n_elems > 0) check_values(a, s, t, d);
  if (d->release_by_close) return;
  uint64_t live = 1;
  FUZZ_CHECK(a->res_release(s, t) == 0, "MGR.REL.1", "release of the import failed");
  FUZZ_CHECK(a->live_bytes(s, &live) == 0 && live == 0, "MGR.COUNT.4",
             "%llu live bytes left after the import's release", (unsigned long long)live);
}

/* With $FUZZ_VERBOSE set, what an input decoded to: how a finding is read. */
static void describe(const struct dl_input *d) {
  if (!getenv("FUZZ_VERBOSE")) return;
  const struct cts_dl_view *v = &d->view;
  fprintf(stderr, "form %d mgr %d version %u.%u flags %llx device %d:%d dtype %d/%d/%d "
          "deleter %d ndim %d%s%s describable %d elems %lld data %s offset %llu shape",
          d->form, d->mgr_kind, v->major, v->minor, (unsigned long long)v->flags,
          v->device_type, v->device_id, v->code, v->bits, v->lanes, v->has_deleter, d->ndim,
          d->null_shape ? " null-shape" : "", d->null_strides ? " null-strides" : "",
          d->describable, (long long)d->n_elems, v->data ? "set" : "NULL",
          (unsigned long long)v->byte_offset);
  for (int i = 0; i < d->ndim && i < FUZZ_DIMS; i++) fprintf(stderr, " %lld", (long long)d->shape[i]);
  fprintf(stderr, " strides");
  for (int i = 0; i < d->ndim && i < FUZZ_DIMS; i++) fprintf(stderr, " %lld", (long long)d->strides[i]);
  fputc('\n', stderr);
}

static void run_input(const struct tsm_adapter *a, struct dl_input *d) {
  struct dl_run run;
  run.a = a;
  FUZZ_CHECK(a->session_open(0, &run.s) == 0, "ABI.SESSION", "session_open failed");
  cts_model_init(&run.m);
  run.m.cuda_session = session_is_cuda(a);
  run.mgr = target_manager(a, run.s, &run.m, d->mgr_kind, &run.model_mgr);
  struct cts_dl_record *rec = &run.rec;
  memset(rec, 0, sizeof *rec);
  rec->buffer = d->buf, rec->buffer_len = d->buf_len;
  rec->readonly = d->form == TSM_DLPACK_VERSIONED && (d->view.flags & CTS_DL_READ_ONLY);
  rec->checksum = cts_dl_checksum(d->buf, d->buf_len);
  run.managed = make_managed(d, rec);
  check_import(&run, d);
  a->session_close(run.s);
  FUZZ_CHECK(rec->deletes == d->view.has_deleter, "DLP.DEL.1",
             "deleter ran %d times by the end of the session", rec->deletes);
  FUZZ_CHECK(!rec->written, "DLP.IMPORT.8", "a READ_ONLY buffer was written");
  if (d->form == TSM_DLPACK_VERSIONED) cts_dl_versioned_free(run.managed);
  else cts_dl_legacy_free(run.managed);
  cts_model_free(&run.m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const struct tsm_adapter *a = fuzz_adapter();
  if (!(a->caps & TSM_CAP_DLPACK_C) || !CTS_HAS_SLOT(a, dlpack_import)) return 0;
  struct fuzz_in in = {data, size, 0};
  struct dl_input d;
  decode(&in, &d);
  describe(&d);
  run_input(a, &d);
  free(d.buf);
  return 0;
}
