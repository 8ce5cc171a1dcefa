/*
 * harness/src/family/exec_dlpack.c: the DLPack statements (spec/dlpack.md). The judge is the
 * other framework: it makes managed tensors with counting deleters for the
 * implementation to import, checks every field and element of what it exports, and
 * runs deleters when it owns a tensor. After every statement each judge-made tensor's
 * deleter must have run exactly as often as the model says (DLP.DEL.1), and a
 * READ_ONLY buffer must be unchanged when it does (DLP.IMPORT.8).
 */
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "exec_internal.h"
#include "opsem.h"

/* A DLPack tensor the judge made or received. */
struct cts_dlobj {
  void *managed;              /* the struct; judge-made ones are freed after the case */
  struct cts_dl_record *rec;  /* judge-made: its counting deleter's record */
  int sym, line;
  int judge_drops;            /* deleter runs by the judge as owner */
  int outlive;                /* an export whose deleter runs after session_close */
};

/* The DLPack family's state: per model DLPack id, what the judge knows of it. */
struct dl_state {
  struct cts_dlobj *v;
  size_t cap;
};

static struct dl_state *dl_of(struct cts_run *r) { return r->family[CTS_FAMILY_DLPACK]; }

static int check_dlpack(struct cts_run *r);

static void *dl_make(int form, const struct cts_dl_view *v, struct cts_dl_record *rec) {
  return form == TSM_DLPACK_VERSIONED ? cts_dl_versioned_make(v, rec) : cts_dl_legacy_make(v, rec);
}

static void dl_view(int form, const void *managed, struct cts_dl_view *v) {
  if (form == TSM_DLPACK_VERSIONED)
    cts_dl_versioned_view(managed, v);
  else
    cts_dl_legacy_view(managed, v);
}

static void dl_delete(int form, void *managed) {
  if (form == TSM_DLPACK_VERSIONED)
    cts_dl_versioned_delete(managed);
  else
    cts_dl_legacy_delete(managed);
}

static const char *dl_name(struct cts_run *r, int x, char *buf, size_t n) {
  snprintf(buf, n, "DLPack tensor %s (made at line %d)",
           dl_of(r)->v[x].sym >= 0 ? r->c->syms[dl_of(r)->v[x].sym].name : "?", dl_of(r)->v[x].line);
  return buf;
}

static void remember_dl(struct cts_run *r, int x, void *managed, struct cts_dl_record *rec,
                        const struct cts_stmt *st) {
  cts_grow((void **)&dl_of(r)->v, &dl_of(r)->cap, (size_t)x + 1, sizeof *dl_of(r)->v);
  dl_of(r)->v[x].managed = managed;
  dl_of(r)->v[x].rec = rec;
  dl_of(r)->v[x].sym = st->dst;
  dl_of(r)->v[x].line = st->line;
  r->sym_obj[st->dst] = x;
}

/* Row-major strides in elements; saturated at INT64_MAX where an empty tensor's huge
 * extents (a [0, 2^62, 2]) would overflow them: no element is ever read through those. */
static void compact_strides(int ndim, const int64_t *shape, int64_t *out) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    out[i] = s;
    if (__builtin_mul_overflow(s, shape[i] > 0 ? shape[i] : 0, &s)) s = INT64_MAX;
  }
}

/* The offset in elements of row-major element i under strides. */
static int64_t linear(int ndim, const int64_t *shape, const int64_t *strides, int64_t i) {
  int64_t at = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    at += (i % shape[d]) * strides[d];
    i /= shape[d];
  }
  return at;
}

/* ---- make: the judge produces ------------------------------------------------ */

static void make_desc(struct cts_run *r, const struct cts_stmt *st, struct cts_mdl_desc *desc) {
  static const int where_type[] = {0, CTS_DL_CPU, CTS_DL_CUDA_HOST, CTS_DL_CUDA_MANAGED,
                                   CTS_DL_OPENCL, CTS_DL_VULKAN};
  const struct cts_dl_opts *o = &st->u.make.dl;
  const struct cts_literal *lit = &st->u.make.literal;
  memset(desc, 0, sizeof *desc);
  desc->form = o->form;
  desc->major = o->major;
  desc->minor = o->minor;
  desc->device_type = o->where == CTS_DL_WHERE_HOST
                          ? (r->cuda_session ? CTS_DL_CUDA_HOST : CTS_DL_CPU)
                          : where_type[o->where];
  desc->ndim = lit->ndim;
  memcpy(desc->shape, lit->shape, sizeof desc->shape);
  desc->no_strides = o->no_strides;
  desc->n_strides = o->n_strides;
  memcpy(desc->strides, o->strides, sizeof desc->strides);
  desc->code = o->bits ? o->code : cts_opsem_dl_code(lit->dtype);
  desc->bits = o->bits ? o->bits : cts_opsem_dl_bits(lit->dtype);
  desc->lanes = o->lanes;
  desc->null_data = o->null_data;
  desc->dtype = lit->dtype;
}

/* Element i at `at`, when the dtype is one the judge writes (not f8 or c64). */
static void put_elem(const struct cts_mdl_desc *desc, unsigned char *at, size_t esize, double v) {
  int dtype = cts_opsem_dtype_of_dl(desc->code, desc->bits, desc->lanes);
  memset(at, 0, esize);
  if (dtype) cts_opsem_write(dtype, v, at);
}

/* The buffer: strided elements after byte_offset, the rest a pattern that a consumer
 * reading the wrong place (DLP.IMPORT.3) would show. Strides that put several elements
 * at one place (a zero stride, overlapping extents) keep there the last one written in
 * row-major order: the tensor's elements, vals on return, are what the buffer holds
 * (cases/README.md, `make`). RETURN the byte_offset. */
static uint64_t make_buffer(const struct cts_stmt *st, const struct cts_mdl_desc *desc,
                            const int64_t *strides, double *vals, int64_t n,
                            struct cts_dl_record *rec) {
  const struct cts_literal *lit = &st->u.make.literal;
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < lit->ndim && n > 0; d++) {
    int64_t span = (lit->shape[d] - 1) * strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  size_t esize = (size_t)(desc->bits * desc->lanes + 7) / 8;
  uint64_t byte_offset = (uint64_t)st->u.make.dl.offset + (uint64_t)(-lo) * esize;
  if (n == 0) return 0;
  if (desc->bits * desc->lanes < 8 && !st->u.make.dl.padded) {
    /* DLP.IMPORT.10: packed, little bit-endian; the judge writes zeros (the model holds
     * no sub-byte dtype) in exactly the bytes the elements take, so that a consumer
     * reading a byte per element reads past the buffer */
    rec->buffer_len = (size_t)byte_offset + (size_t)((n * desc->bits * desc->lanes + 7) / 8);
    rec->buffer = cts_xcalloc(rec->buffer_len, 1);
    return byte_offset;
  }
  rec->buffer_len = (size_t)byte_offset + (size_t)(hi - lo + 1) * esize;
  rec->buffer = cts_xmalloc(rec->buffer_len);
  memset(rec->buffer, 0xa5, rec->buffer_len);
  int compact = cts_model_dl_compact(desc) || !st->u.make.dl.n_strides;
  unsigned char *base = rec->buffer + byte_offset;
  for (int64_t i = 0; i < n; i++) {
    int64_t at_elem = compact ? i : linear(lit->ndim, lit->shape, strides, i);
    put_elem(desc, base + at_elem * (int64_t)esize, esize, vals[i]); /* < 0: negative strides */
  }
  int dtype = cts_opsem_dtype_of_dl(desc->code, desc->bits, desc->lanes);
  for (int64_t i = 0; i < n && !compact && dtype; i++) {
    int64_t at_elem = linear(lit->ndim, lit->shape, strides, i);
    vals[i] = cts_opsem_read(dtype, base + at_elem * (int64_t)esize);
  }
  return byte_offset;
}

static void make_view(const struct cts_stmt *st, const struct cts_mdl_desc *desc,
                      const int64_t *strides, uint64_t byte_offset,
                      const struct cts_dl_record *rec, struct cts_dl_view *v) {
  const struct cts_dl_opts *o = &st->u.make.dl;
  memset(v, 0, sizeof *v);
  v->major = (uint32_t)o->major;
  v->minor = (uint32_t)o->minor;
  v->flags = (o->readonly ? CTS_DL_READ_ONLY : 0) | (o->copied ? CTS_DL_IS_COPIED : 0) |
             (o->padded ? CTS_DL_SUBBYTE_PADDED : 0);
  v->device_type = desc->device_type;
  v->ndim = desc->ndim;
  memcpy(v->shape, desc->shape, sizeof v->shape);
  v->has_strides = !o->no_strides;
  memcpy(v->strides, strides, sizeof v->strides);
  v->code = desc->code;
  v->bits = desc->bits;
  v->lanes = desc->lanes;
  v->byte_offset = byte_offset;
  v->data = o->null_data ? NULL : rec->buffer;
  v->has_deleter = !o->no_deleter;
}

int cts__exec_dl_make(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  const struct cts_dl_opts *o = &st->u.make.dl;
  const struct cts_literal *lit = &st->u.make.literal;
  struct cts_mdl_desc desc;
  make_desc(r, st, &desc);
  int64_t n;
  double *vals = cts__literal_values(lit, &n);
  int64_t strides[CTS_DL_MAX_DIMS];
  if (o->n_strides)
    memcpy(strides, o->strides, sizeof strides);
  else
    compact_strides(lit->ndim, lit->shape, strides);
  struct cts_dl_record *rec = cts_xcalloc(1, sizeof *rec);
  uint64_t byte_offset = make_buffer(st, &desc, strides, vals, n, rec);
  rec->readonly = o->readonly;
  if (rec->readonly) rec->checksum = cts_dl_checksum(rec->buffer, rec->buffer_len);
  struct cts_dl_view v;
  make_view(st, &desc, strides, byte_offset, rec, &v);
  int x;
  cts_model_dl_make(&r->m, &desc, vals, &x);
  remember_dl(r, x, dl_make(o->form, &v, rec), rec, st);
  if (o->no_deleter) rec->deletes = -1; /* never called: counted as if run once (DLP.DEL.2) */
  return cts__check_state(r);
}

/* ---- export: the implementation produces, the judge checks ------------------ */

/* The versioned form's own fields (DLP.EXPORT.2, DLP.EXPORT.5). */
static int check_versioned(struct cts_run *r, const struct cts_stmt *st,
                           const struct cts_dl_view *v, const char *name) {
  if (v->major != 1)
    return cts__report(r, CTS_FAIL, "%s: version %u.%u, major must be 1 (DLP.EXPORT.2)", name,
                       v->major, v->minor);
  uint64_t want = ((st->u.export.request & TSM_DLPACK_READ_ONLY) ? CTS_DL_READ_ONLY : 0) |
                  ((st->u.export.request & TSM_DLPACK_COPY) ? CTS_DL_IS_COPIED : 0);
  if (v->flags != want) /* IS_COPIED: DLP.EXPORT.5 (MUST); READ_ONLY: DLP.EXPORT.8 (TSM) */
    return cts__report(r, CTS_FAIL, "%s: flags 0x%llx, expected 0x%llx (%s)", name,
                       (unsigned long long)v->flags, (unsigned long long)want,
                       ((v->flags ^ want) & CTS_DL_IS_COPIED) ? "DLP.EXPORT.5" : "DLP.EXPORT.8");
  if (v->ndim > 0 && !v->has_strides) /* forbidden from 1.2 on; before, the suite's rule */
    return cts__report(r, CTS_FAIL, "%s: NULL strides in a versioned export of minor %u (%s)",
                       name, v->minor, v->minor >= 2 ? "DLP.EXPORT.2" : "DLP.EXPORT.7");
  return 0;
}

/* Every element read through data, byte_offset and strides: the n elements want of
 * dtype (DLP.EXPORT.1; after the session closed, DLP.EXPORT.6). */
static int check_elems(struct cts_run *r, const struct cts_dl_view *v, const double *want,
                       int dtype, int64_t n, const char *name, const char *clause) {
  if (n == 0 || r->cuda_session) return 0; /* device memory is checked through a re-import */
  if (!v->data) return cts__report(r, CTS_FAIL, "%s: NULL data with %lld elements", name, (long long)n);
  int64_t strides[CTS_DL_MAX_DIMS];
  if (v->has_strides)
    memcpy(strides, v->strides, sizeof strides);
  else
    compact_strides(v->ndim, v->shape, strides);
  const unsigned char *base = (const unsigned char *)v->data + v->byte_offset;
  size_t size = cts_opsem_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *at = base + linear(v->ndim, v->shape, strides, i) * (int64_t)size;
    double got = cts_opsem_read(dtype, at);
    if (got != want[i])
      return cts__report(r, CTS_FAIL, "%s: element %lld reads %.9g through data, byte_offset and "
                         "strides, expected %.9g (%s)", name, (long long)i, got, want[i], clause);
  }
  return 0;
}

static int check_export(struct cts_run *r, const struct cts_stmt *st, int x, int src) {
  char name[200];
  dl_name(r, x, name, sizeof name);
  struct cts_dl_view v;
  dl_view(st->u.export.form, dl_of(r)->v[x].managed, &v);
  const struct cts_mres *mr = &r->m.res[src];
  if (st->u.export.form == TSM_DLPACK_VERSIONED && check_versioned(r, st, &v, name)) return -1;
  int want_device = r->cuda_session ? CTS_DL_CUDA : CTS_DL_CPU;
  if (v.device_type != want_device || v.device_id != 0)
    return cts__report(r, CTS_FAIL, "%s: device (%d, %d), expected (%d, 0) (DLP.EXPORT.1)", name,
                       v.device_type, v.device_id, want_device);
  if (!cts_opsem_same_dims(v.ndim, v.shape, mr->ndim, mr->shape) ||
      cts_opsem_dtype_of_dl(v.code, v.bits, v.lanes) != mr->dtype)
    return cts__report(r, CTS_FAIL, "%s: shape or dtype differs from the tensor (DLP.EXPORT.1)",
                       name);
  return check_elems(r, &v, cts_model_values(&r->m, src), mr->dtype, cts_model_elems(mr), name,
                     "DLP.EXPORT.1");
}

int cts__exec_dl_export(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  int src = CTS_NONE;
  if (cts__operand(r, st->a, &src)) return -1;
  int x = CTS_NONE;
  void *managed = NULL;
  int adapter_rc = r->a->dlpack_export(r->s, cts__res_handle(r, src), st->u.export.form,
                                       st->u.export.request, &managed);
  if (r->fault && adapter_rc == TSM_ENOMEM) return cts__injected(r);
  int model_rc = cts_model_dl_export(&r->m, src, st->u.export.form, st->u.export.request, &x);
  /* An export the case does not keep (refused by the model, or expected to fail) is
   * deleted here: nothing else would run its deleter. */
  if (adapter_rc == 0 && managed && (model_rc || expected_err))
    dl_delete(st->u.export.form, managed);
  if (cts__judge_codes(r, model_rc, adapter_rc, &expected_err)) return -1;
  if (expected_err) return cts__check_state(r);
  if (!managed) return cts__report(r, CTS_FAIL, "dlpack_export succeeded with a NULL tensor");
  remember_dl(r, x, managed, NULL, st);
  if (check_export(r, st, x, src)) return -1;
  return cts__check_state(r);
}

/* ---- import and drop ---------------------------------------------------------- */

static int judge_owned(struct cts_run *r, int sym, int *x) {
  if (r->sym_obj[sym] < 0)
    return cts__unbound(r, sym);
  *x = r->sym_obj[sym];
  if (r->m.dls[*x].state != CTS_DL_JUDGE)
    return cts__cannot_run(r, "'%s' is no longer the judge's: it was handed over or deleted",
                           r->c->syms[sym].name);
  return 0;
}

int cts__exec_dl_import(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  int x, g = CTS_NONE;
  if (judge_owned(r, st->a, &x) || cts__operand(r, st->b, &g)) return -1;
  int made = CTS_NONE;
  tsm_handle h = TSM_NONE;
  int form = r->m.dls[x].form;
  int adapter_rc = r->a->dlpack_import(r->s, dl_of(r)->v[x].managed, form, cts__mgr_handle(r, g), &h);
  if (r->fault && adapter_rc == TSM_ENOMEM) { /* consumed all the same (DLP.IMPORT.2) */
    cts_model_dl_drop(&r->m, x);
    return cts__injected(r);
  }
  int model_rc = cts_model_dl_import(&r->m, x, g, &made);
  if (cts__judge_codes(r, model_rc, adapter_rc, &expected_err)) return -1;
  if (!expected_err && cts__bind_made(r, st, made, h)) return -1;
  if (cts__check_state(r)) return -1;
  return expected_err ? 0 : cts__check_made_values(r, st, made);
}

/* `outlive X`: the judge keeps export X past session_close, then reads it and runs its
 * deleter (DLP.EXPORT.6, dlpack_after_close). */
int cts__exec_dl_outlive(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x;
  if (judge_owned(r, st->a, &x)) return -1;
  if (r->m.dls[x].judge_made)
    return cts__cannot_run(r, "'%s' was made by the judge: outlive takes an export of the "
                           "implementation", r->c->syms[st->a].name);
  dl_of(r)->v[x].outlive = 1;
  return cts__check_state(r);
}

int cts__exec_dl_drop(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x;
  if (judge_owned(r, st->a, &x)) return -1;
  dl_delete(r->m.dls[x].form, dl_of(r)->v[x].managed);
  dl_of(r)->v[x].judge_drops++;
  cts_model_dl_drop(&r->m, x);
  return cts__check_state(r);
}


/* ---- observation ------------------------------------------------------------- */

static int deletes_seen(struct cts_run *r, int x) {
  const struct cts_dlobj *o = &dl_of(r)->v[x];
  if (!o->rec) return o->judge_drops;
  return o->rec->deletes < 0 ? r->m.dls[x].deletes : o->rec->deletes;
}

int cts__expect_deleted(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x = r->sym_obj[st->a];
  if (x < 0) return cts__unbound(r, st->a);
  const struct cts_mdl *d = &r->m.dls[x];
  int model = d->judge_made ? d->deletes : dl_of(r)->v[x].judge_drops;
  if (cts__model_agrees(r, model == st->u.count.want, "the deleter has run %d times in the model",
                        model))
    return -1;
  return check_dlpack(r);
}

static int check_dlpack(struct cts_run *r) {
  if (!r->m.n_dls) return 0;
  char name[200];
  const struct cts_watch *w = &r->m.watch_dls; /* a deleter ran twice later: after_close */
  for (size_t k = 0; k < w->n; k++) {
    size_t x = (size_t)w->v[k];
    if (x >= dl_of(r)->cap) continue;
    const struct cts_dlobj *o = &dl_of(r)->v[x];
    if (!o->rec) continue;
    int seen = deletes_seen(r, (int)x), want = r->m.dls[x].deletes;
    if (seen > 1)
      return cts__report(r, CTS_FAIL, "the deleter of %s ran %d times: a double release "
                         "(DLP.DEL.1)", dl_name(r, (int)x, name, sizeof name), seen);
    if (seen != want)
      return cts__report(r, CTS_FAIL, "the deleter of %s ran %d times, the spec requires %d by "
                         "now (DLP.DEL.1, DLP.IMPORT.2, DLP.MGR.1)",
                         dl_name(r, (int)x, name, sizeof name), seen, want);
    if (o->rec->written)
      return cts__report(r, CTS_FAIL, "the consumer wrote into the READ_ONLY buffer of %s "
                         "(DLP.IMPORT.8)", dl_name(r, (int)x, name, sizeof name));
    if (seen == 1 && o->rec->buffer) { /* checked: the data can go, the struct stays */
      free(o->rec->buffer);
      o->rec->buffer = NULL;
    }
  }
  return 0;
}

/* The judge, as owner, runs the deleters it still owes before the session closes. */
static void dlpack_before_close(struct cts_run *r) {
  for (size_t x = 0; x < r->m.n_dls && x < dl_of(r)->cap; x++) {
    if (r->m.dls[x].state != CTS_DL_JUDGE || !dl_of(r)->v[x].managed || dl_of(r)->v[x].outlive)
      continue;
    dl_delete(r->m.dls[x].form, dl_of(r)->v[x].managed);
    dl_of(r)->v[x].judge_drops++;
    cts_model_dl_drop(&r->m, (int)x);
  }
}

/* After session_close every deleter has run exactly once (ABI.SESSION.1, DLP.DEL.1);
 * then the judge frees what it made. */
static void dlpack_after_close(struct cts_run *r) {
  char name[200];
  r->cur = NULL;
  for (size_t x = 0; x < r->m.n_dls && x < dl_of(r)->cap; x++) { /* DLP.EXPORT.6 */
    struct cts_dlobj *o = &dl_of(r)->v[x];
    const struct cts_mdl *d = &r->m.dls[x];
    if (!o->outlive || d->state != CTS_DL_JUDGE) continue;
    struct cts_dl_view v;
    dl_view(d->form, o->managed, &v);
    const struct cts_mstorage *s = &r->m.st[d->storage];
    check_elems(r, &v, s->vals, d->desc.dtype, s->n, dl_name(r, (int)x, name, sizeof name),
                "after session_close, DLP.EXPORT.6");
    dl_delete(d->form, o->managed);
    o->judge_drops++;
    cts_model_dl_drop(&r->m, (int)x);
  }
  for (size_t x = 0; x < r->m.n_dls && x < dl_of(r)->cap; x++) {
    struct cts_dlobj *o = &dl_of(r)->v[x];
    if (!o->rec) continue;
    int seen = o->rec->deletes < 0 ? 1 : o->rec->deletes;
    if (seen != 1)
      cts__report(r, CTS_FAIL, "after session_close, the deleter of %s has run %d times, not once "
                  "(DLP.DEL.1)", dl_name(r, (int)x, name, sizeof name), seen);
    if (r->m.dls[x].form == TSM_DLPACK_VERSIONED)
      cts_dl_versioned_free(o->managed);
    else
      cts_dl_legacy_free(o->managed);
    free(o->rec->buffer);
    free(o->rec);
  }
  free(dl_of(r)->v);
  dl_of(r)->v = NULL;
}

static int explain_dl(struct cts_run *r, int kind, int id, struct cts_buf *out) {
  static const char *const owner[] = {"held by the judge", "handed to the implementation",
                                      "gone"};
  if (kind != CTS_SYM_DLPACK) return 0;
  const struct cts_mdl *d = &r->m.dls[id];
  cts_buf_printf(out, "DLPack %s, %s, %s", d->form == TSM_DLPACK_VERSIONED ? "versioned" : "legacy",
                 d->judge_made ? "made by the judge" : "an export", owner[d->state]);
  if (d->judge_made) cts_buf_printf(out, ", deleter runs %d", d->deletes);
  return 1;
}

static void *dlpack_new(struct cts_run *r) {
  (void)r; return cts_xcalloc(1, sizeof(struct dl_state)); }

const struct cts_family cts_family_dlpack = {
    .state_new = dlpack_new,
    .observe = check_dlpack,
    .before_close = dlpack_before_close,
    .after_close = dlpack_after_close,
    .state_free = free,
    .explain = explain_dl,
};
