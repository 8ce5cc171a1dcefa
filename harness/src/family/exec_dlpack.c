/*
 * harness/src/family/exec_dlpack.c: the DLPack statements (spec/dlpack.md). The judge is the
 * other framework: it makes managed tensors with counting deleters for the
 * implementation to import, checks every field and element of what it exports, and
 * runs deleters when it owns a tensor. After every statement each judge-made tensor's
 * deleter must have run exactly as often as the model says (DLP.DEL.1), and a
 * READ_ONLY buffer must be unchanged when it does (DLP.IMPORT.8).
 *
 * Each of export, make, import and drop has two halves, as a generic action has: the
 * adapter half (cts__adapter_dl_*: the implementation's export or import call, the
 * judge's deleter call as owner, the judge's own making of a managed tensor) and the
 * model half (cts__model_dl_*); the judge's bookkeeping of what a statement made is the
 * family's bind_made and check_made. A statement's EXEC composes them on the thread that
 * runs it (the case's, or a `thread W` worker's); a `parallel` block runs the adapter
 * halves on its threads at the same time and the rest in its replay after the join
 * (exec_parallel.c), so that a deleter runs while another thread calls the
 * implementation (DLP.DEL.4).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_judge.h"
#include "exec_internal.h"
#include "opsem.h"
#include "pages.h"

/* A DLPack tensor the judge made or received, shared by its statements' adapter halves
 * and the judge's bookkeeping. Allocated once, so that its address, which is its handle
 * in the family's objects map, stays put while a parallel block's threads hold it. */
struct cts_dlobj {
  void *managed;              /* the struct; judge-made ones are freed after the case */
  int form;                   /* enum tsm_dlpack_form */
  struct cts_dl_record *rec;  /* judge-made: its counting deleter's record */
  int src;                    /* an export: the resource it exported (model id) */
  atomic_int taken;           /* handed over or deleted: no adapter half uses it again */
  int judge_drops;            /* deleter runs by the judge as owner */
  int outlive;                /* an export whose deleter runs after session_close */
  int unchecked;              /* an export whose fields and elements are not checked yet */
  /* An unchecked export handed over or deleted by a parallel block's thread: its fields,
   * and its elements in row-major order, as they were just before (for the replay's
   * check). */
  struct cts_dl_view *seen;
  unsigned char *seen_elems;
};

/* The DLPack family's state: per model DLPack id, its struct cts_dlobj (the handle h,
 * a pointer of the judge's, never an adapter's: the map is written here, not through
 * cts__remember_at, so the index of adapter handles never holds one), symbol and line. */
struct dl_state {
  struct cts_objmap objs;
};

static struct dl_state *dl_of(struct cts_run *r) { return r->family[CTS_FAMILY_DLPACK]; }

static struct cts_dlobj *obj_at(tsm_handle h) { return (struct cts_dlobj *)(uintptr_t)h; }

static tsm_handle handle_of(struct cts_dlobj *o) { return (tsm_handle)(uintptr_t)o; }

/* The judge's record of model DLPack id x, or NULL when none was bound. */
static struct cts_dlobj *obj_of(struct cts_run *r, int x) {
  const struct cts_objmap *m = &dl_of(r)->objs;
  return (size_t)x < m->cap ? obj_at(m->v[x].h) : NULL;
}

static struct cts_dlobj *new_obj(int form) {
  struct cts_dlobj *o = cts_xcalloc(1, sizeof *o);
  o->form = form;
  o->src = CTS_NONE;
  atomic_init(&o->taken, 0);
  return o;
}

static void free_seen(struct cts_dlobj *o) {
  free(o->seen);
  free(o->seen_elems);
  o->seen = NULL;
  o->seen_elems = NULL;
}

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
  const struct cts_objinfo *in = &dl_of(r)->objs.v[x];
  snprintf(buf, n, "DLPack tensor %s (made at line %d)",
           in->sym >= 0 ? r->c->syms[in->sym].name : "?", in->line);
  return buf;
}

static void remember_dl(struct cts_run *r, int x, struct cts_dlobj *o, const struct cts_stmt *st) {
  struct cts_objmap *m = &dl_of(r)->objs;
  cts_grow((void **)&m->v, &m->cap, (size_t)x + 1, sizeof *m->v);
  m->v[x] = (struct cts_objinfo){handle_of(o), st->dst, st->line};
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

static void make_desc(int cuda_session, const struct cts_stmt *st, struct cts_mdl_desc *desc) {
  static const int where_type[] = {0, CTS_DL_CPU, CTS_DL_CUDA_HOST, CTS_DL_CUDA_MANAGED,
                                   CTS_DL_OPENCL, CTS_DL_VULKAN};
  const struct cts_dl_opts *o = &st->u.make.dl;
  const struct cts_literal *lit = &st->u.make.literal;
  memset(desc, 0, sizeof *desc);
  desc->form = o->form;
  desc->major = o->major;
  desc->minor = o->minor;
  desc->device_type = o->where == CTS_DL_WHERE_HOST
                          ? (cuda_session ? CTS_DL_CUDA_HOST : CTS_DL_CPU)
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
static void put_elem(int dtype, unsigned char *at, size_t esize, double v) {
  memset(at, 0, esize);
  if (dtype) cts_opsem_write(dtype, v, at);
}

/* A `make` in progress: the statement, the tensor it describes, its strides in elements
 * (given, or compact), its n logical elements (the model's once made) and the record of
 * its buffer. */
struct making {
  const struct cts_stmt *st;
  struct cts_mdl_desc desc;
  int64_t strides[CTS_DL_MAX_DIMS];
  double *vals;
  int64_t n;
  struct cts_dl_record *rec;
};

/* Its strides in elements: the given ones, or compact. */
static void make_strides(const struct cts_stmt *st, int64_t *strides) {
  const struct cts_literal *lit = &st->u.make.literal;
  if (st->u.make.dl.n_strides)
    memcpy(strides, st->u.make.dl.strides, sizeof(int64_t) * CTS_DL_MAX_DIMS);
  else
    compact_strides(lit->ndim, lit->shape, strides);
}

/* The place, in elements from the lowest one, of each of the n elements of a `make`
 * whose strides place them (NULL: compact, or none placed), and *span the places. */
static int64_t *make_places(const struct cts_stmt *st, const struct cts_mdl_desc *desc,
                            const int64_t *strides, int64_t n, int64_t *span) {
  const struct cts_literal *lit = &st->u.make.literal;
  int dtype = cts_opsem_dtype_of_dl(desc->code, desc->bits, desc->lanes);
  if (n == 0 || !dtype || cts_model_dl_compact(desc) || !st->u.make.dl.n_strides) return NULL;
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < lit->ndim; d++) {
    int64_t extent = (lit->shape[d] - 1) * strides[d];
    if (extent < 0) lo += extent; else hi += extent;
  }
  int64_t *at = cts_xmalloc((size_t)n * sizeof *at);
  for (int64_t i = 0; i < n; i++) at[i] = linear(lit->ndim, lit->shape, strides, i) - lo;
  *span = hi - lo + 1;
  return at;
}

/* What the n elements vals of a `make` read as once its buffer holds them (cases/README.md,
 * `make`): where its strides put several at one place, the one written there last in
 * row-major order, in the tensor's dtype. Both halves of `make` compute them: the
 * adapter half writes them into the buffer, the model half gives them to the model. */
static void held_values(const struct cts_stmt *st, const struct cts_mdl_desc *desc,
                        const int64_t *strides, double *vals, int64_t n) {
  int64_t span = 0;
  int64_t *at = make_places(st, desc, strides, n, &span);
  if (!at) return;
  int dtype = cts_opsem_dtype_of_dl(desc->code, desc->bits, desc->lanes);
  int64_t *last = cts_xmalloc((size_t)span * sizeof *last);
  for (int64_t i = 0; i < n; i++) last[at[i]] = i;
  double *held = cts_xmalloc((size_t)n * sizeof *held);
  unsigned char one[16];
  for (int64_t i = 0; i < n; i++) {
    cts_opsem_write(dtype, vals[last[at[i]]], one);
    held[i] = cts_opsem_read(dtype, one);
  }
  memcpy(vals, held, (size_t)n * sizeof *held);
  free(held);
  free(last);
  free(at);
}

/* Elements per block of an f32 fill: an int index and a constant trip count, so that
 * the compiler vectorizes it at -O2. */
#define FILL_BLOCK 4096

/* FILL_BLOCK f32 elements first + step * (b + j) at p, computed in doubles. */
static void fill_block(unsigned char *p, double first, double step, double b) {
  for (int j = 0; j < FILL_BLOCK; j++) {
    float x = (float)(first + step * (b + (double)j));
    memcpy(p + j * 4, &x, sizeof x);
  }
}

/* The same in 32-bit integers where int32 holds the sequence (cts_opsem_affine_int32):
 * first is the block's first element. */
static void fill_block_int32(unsigned char *p, int32_t first, int32_t step) {
  for (int j = 0; j < FILL_BLOCK; j++) {
    float x = cts_opsem_affine_f32_at(first, step, j);
    memcpy(p + j * 4, &x, sizeof x);
  }
}

/* Writes mk's elements at base, esize bytes each, where the strides put them: its
 * held_values, or with a compact layout (mk->vals NULL) the literal's own elements in
 * order, f32 written directly (a large tensor's fill runs at memory speed, with no
 * double per element). */
static void place_elems(struct making *mk, unsigned char *base, size_t esize) {
  const struct cts_literal *lit = &mk->st->u.make.literal;
  const struct cts_mdl_desc *desc = &mk->desc;
  int dtype = cts_opsem_dtype_of_dl(desc->code, desc->bits, desc->lanes);
  if (!mk->vals && dtype == TSM_F32 && lit->fill != CTS_VALUES && mk->n > 0) {
    double first = cts__literal_at(lit, 0), step = lit->fill == CTS_ARANGE ? 1 : 0;
    int64_t i = 0;
    int32_t first32, step32;
    int in32 = cts_opsem_affine_int32(first, step, mk->n, &first32, &step32);
    for (; i + FILL_BLOCK <= mk->n; i += FILL_BLOCK)
      if (in32)
        fill_block_int32(base + i * 4, (int32_t)((int64_t)first32 + (int64_t)step32 * i), step32);
      else
        fill_block(base + i * 4, first, step, (double)i);
    for (; i < mk->n; i++) {
      float x = (float)(first + step * (double)i);
      memcpy(base + i * 4, &x, sizeof x);
    }
    return;
  }
  for (int64_t i = 0; i < mk->n; i++) {
    if (!mk->vals) {
      put_elem(dtype, base + i * (int64_t)esize, esize, cts__literal_at(lit, i));
      continue;
    }
    int64_t at_elem = linear(lit->ndim, lit->shape, mk->strides, i);
    put_elem(dtype, base + at_elem * (int64_t)esize, esize, mk->vals[i]); /* < 0: negative strides */
  }
}

/* The buffer: strided elements after byte_offset, the rest a pattern that a consumer
 * reading the wrong place (DLP.IMPORT.3) would show. Strides that put several elements
 * at one place (a zero stride, overlapping extents) keep there the last one written in
 * row-major order: the tensor's elements, vals on return, are what the buffer holds
 * (cases/README.md, `make`). RETURN the byte_offset. */
static uint64_t make_buffer(struct making *mk) {
  const struct cts_stmt *st = mk->st;
  const struct cts_literal *lit = &st->u.make.literal;
  const struct cts_mdl_desc *desc = &mk->desc;
  struct cts_dl_record *rec = mk->rec;
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < lit->ndim && mk->n > 0; d++) {
    int64_t span = (lit->shape[d] - 1) * mk->strides[d];
    if (span < 0) lo += span; else hi += span;
  }
  size_t esize = (size_t)(desc->bits * desc->lanes + 7) / 8;
  uint64_t byte_offset = (uint64_t)st->u.make.dl.offset + (uint64_t)(-lo) * esize;
  if (mk->n == 0) return 0;
  if (desc->bits * desc->lanes < 8 && !st->u.make.dl.padded) {
    /* DLP.IMPORT.10: packed, little bit-endian; the judge writes zeros (the model holds
     * no sub-byte dtype) in exactly the bytes the elements take, so that a consumer
     * reading a byte per element reads past the buffer */
    rec->buffer_len =
        (size_t)byte_offset + (size_t)((mk->n * desc->bits * desc->lanes + 7) / 8);
    rec->buffer = cts_pages_take(rec->buffer_len, 1);
    return byte_offset;
  }
  rec->buffer_len = (size_t)byte_offset + (size_t)(hi - lo + 1) * esize;
  rec->buffer = cts_pages_take(rec->buffer_len, 0);
  /* a compact layout's elements cover every byte after byte_offset: the pattern goes
   * before them alone */
  memset(rec->buffer, 0xa5, mk->vals ? rec->buffer_len : (size_t)byte_offset);
  place_elems(mk, rec->buffer + byte_offset, esize);
  return byte_offset;
}

/* What the managed tensor of mk holds, its buffer's elements at byte_offset. */
static void make_view(const struct making *mk, uint64_t byte_offset, struct cts_dl_view *v) {
  const struct cts_dl_opts *o = &mk->st->u.make.dl;
  const struct cts_mdl_desc *desc = &mk->desc;
  memset(v, 0, sizeof *v);
  v->major = (uint32_t)o->major;
  v->minor = (uint32_t)o->minor;
  v->flags = (o->readonly ? CTS_DL_READ_ONLY : 0) | (o->copied ? CTS_DL_IS_COPIED : 0) |
             (o->padded ? CTS_DL_SUBBYTE_PADDED : 0);
  v->device_type = desc->device_type;
  v->ndim = desc->ndim;
  memcpy(v->shape, desc->shape, sizeof v->shape);
  v->has_strides = !o->no_strides;
  memcpy(v->strides, mk->strides, sizeof v->strides);
  v->code = desc->code;
  v->bits = desc->bits;
  v->lanes = desc->lanes;
  v->byte_offset = byte_offset;
  v->data = o->null_data ? NULL : mk->rec->buffer;
  v->has_deleter = !o->no_deleter;
}

/* The adapter half of `make`: the judge, as the producer, builds the managed tensor and
 * its buffer; *made: its struct cts_dlobj. */
int cts__adapter_dl_make(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                         tsm_handle *made) {
  (void)h;
  const struct cts_dl_opts *o = &st->u.make.dl;
  struct making mk;
  mk.st = st;
  make_desc(r->cuda_session, st, &mk.desc);
  make_strides(st, mk.strides);
  mk.n = cts_opsem_literal_elems(st->u.make.literal.ndim, st->u.make.literal.shape);
  mk.vals = NULL; /* a compact layout writes the literal as it is (place_elems) */
  if (!cts_model_dl_compact(&mk.desc) && st->u.make.dl.n_strides) {
    mk.vals = cts__literal_values(&st->u.make.literal, &mk.n);
    held_values(st, &mk.desc, mk.strides, mk.vals, mk.n);
  }
  struct cts_dl_record *rec = mk.rec = cts_xcalloc(1, sizeof *rec);
  uint64_t byte_offset = make_buffer(&mk);
  free(mk.vals);
  rec->readonly = o->readonly;
  if (rec->readonly) rec->checksum = cts_dl_checksum(rec->buffer, rec->buffer_len);
  struct cts_dl_view v;
  make_view(&mk, byte_offset, &v);
  struct cts_dlobj *obj = new_obj(o->form);
  obj->rec = rec;
  obj->managed = dl_make(o->form, &v, rec);
  if (o->no_deleter) rec->deletes = -1; /* never called: counted as if run once (DLP.DEL.2) */
  *made = handle_of(obj);
  return 0;
}

/* The model half of `make`: the tensor as the case describes it. */
int cts__model_dl_make(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,
                       int *made) {
  (void)o;
  struct cts_mdl_desc desc;
  int64_t strides[CTS_DL_MAX_DIMS], n;
  make_desc(m->cuda_session, st, &desc);
  make_strides(st, strides);
  const struct cts_literal *lit = &st->u.make.literal;
  n = cts_opsem_literal_elems(lit->ndim, lit->shape);
  /* a fill of a compact layout, exact in the dtype, stays in closed form in the model */
  if (lit->fill != CTS_VALUES && (cts_model_dl_compact(&desc) || !st->u.make.dl.n_strides) &&
      desc.dtype) {
    struct cts_maffine aff = {1, cts__literal_at(lit, 0), lit->fill == CTS_ARANGE ? 1 : 0};
    if (cts_opsem_affine_exact(desc.dtype, aff.first, aff.step, n))
      return cts_model_dl_make_affine(m, &desc, aff, made);
  }
  double *vals = cts__literal_values(lit, &n);
  held_values(st, &desc, strides, vals, n);
  return cts_model_dl_make(m, &desc, vals, made);
}

int cts__exec_dl_make(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  tsm_handle made_h = TSM_NONE;
  int x = CTS_NONE;
  cts__adapter_dl_make(r, st, NULL, &made_h);
  cts__model_dl_make(&r->m, st, NULL, &x);
  if (cts__bind_made(r, st, x, made_h)) return -1;
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

/* The elements a tensor must show: n of dtype, with values vals. */
struct elems {
  const double *vals;
  int dtype;
  int64_t n;
};

/* The strides of view v in elements: its own, or compact when it has none. */
static void view_strides(const struct cts_dl_view *v, int64_t *strides) {
  if (v->has_strides)
    memcpy(strides, v->strides, CTS_DL_MAX_DIMS * sizeof *strides);
  else
    compact_strides(v->ndim, v->shape, strides);
}

/* Every element read through data, byte_offset and strides: those of want (DLP.EXPORT.1;
 * after the session closed, DLP.EXPORT.6). */
static int check_elems(struct cts_run *r, const struct cts_dl_view *v, const struct elems *want,
                       const char *name, const char *clause) {
  int64_t n = want->n;
  int dtype = want->dtype;
  if (n == 0 || r->cuda_session) return 0; /* device memory is checked through a re-import */
  if (!v->data) return cts__report(r, CTS_FAIL, "%s: NULL data with %lld elements", name, (long long)n);
  int64_t strides[CTS_DL_MAX_DIMS];
  view_strides(v, strides);
  const unsigned char *base = (const unsigned char *)v->data + v->byte_offset;
  size_t size = cts_opsem_dtype_size(dtype);
  for (int64_t i = 0; i < n; i++) {
    const unsigned char *at = base + linear(v->ndim, v->shape, strides, i) * (int64_t)size;
    double got = cts_opsem_read(dtype, at);
    if (got != want->vals[i])
      return cts__report(r, CTS_FAIL, "%s: element %lld reads %.9g through data, byte_offset and "
                         "strides, expected %.9g (%s)", name, (long long)i, got, want->vals[i],
                         clause);
  }
  return 0;
}

/* The views check_export reads: *fields, the export's fields, and *elems, what its
 * elements are read through; both the live export's, or what an adapter half copied
 * before it handed the export over or deleted it (elements compact, from the copy). */
static void export_views(struct cts_dlobj *o, struct cts_dl_view *fields, struct cts_dl_view *elems) {
  if (!o->seen) {
    dl_view(o->form, o->managed, fields);
    *elems = *fields;
    return;
  }
  *fields = *o->seen;
  *elems = *fields;
  elems->data = o->seen_elems; /* NULL: no element to copy, or NULL data */
  elems->byte_offset = 0;
  elems->has_strides = 1;
  compact_strides(elems->ndim, elems->shape, elems->strides);
}

static int check_export(struct cts_run *r, const struct cts_stmt *st, int x) {
  char name[200];
  dl_name(r, x, name, sizeof name);
  struct cts_dlobj *o = obj_of(r, x);
  struct cts_dl_view v, ev;
  export_views(o, &v, &ev);
  o->unchecked = 0;
  const struct cts_mres *mr = &r->m.res[o->src];
  if (st->u.export.form == TSM_DLPACK_VERSIONED && check_versioned(r, st, &v, name)) return -1;
  int want_device = r->cuda_session ? CTS_DL_CUDA : CTS_DL_CPU;
  if (v.device_type != want_device || v.device_id != 0)
    return cts__report(r, CTS_FAIL, "%s: device (%d, %d), expected (%d, 0) (DLP.EXPORT.1)", name,
                       v.device_type, v.device_id, want_device);
  if (!cts_opsem_same_dims(v.ndim, v.shape, mr->ndim, mr->shape) ||
      cts_opsem_dtype_of_dl(v.code, v.bits, v.lanes) != mr->dtype)
    return cts__report(r, CTS_FAIL, "%s: shape or dtype differs from the tensor (DLP.EXPORT.1)",
                       name);
  struct elems want = {cts_model_values(&r->m, o->src), mr->dtype, cts_model_elems(mr)};
  int rc = check_elems(r, &ev, &want, name, "DLP.EXPORT.1");
  free_seen(o);
  return rc;
}

/* The adapter half of `export`: the implementation's call; *made: a struct cts_dlobj
 * holding what it returned, when it succeeded. */
int cts__adapter_dl_export(struct cts_run *r, const struct cts_stmt *st,
                           const struct cts_handles *h, tsm_handle *made) {
  void *managed = NULL;
  int rc = r->a->dlpack_export(r->s, h->a, st->u.export.form, st->u.export.request, &managed);
  if (rc) return rc;
  struct cts_dlobj *o = new_obj(st->u.export.form);
  o->managed = managed;
  o->unchecked = 1;
  *made = handle_of(o);
  return 0;
}

int cts__model_dl_export(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,
                         int *made) {
  return cts_model_dl_export(m, o->a, st->u.export.form, st->u.export.request, made);
}

int cts__exec_dl_export(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  struct cts_operands o = {CTS_NONE, CTS_NONE, CTS_NONE, NULL, 0};
  if (cts__operand(r, st->a, &o.a)) return -1;
  int x = CTS_NONE;
  tsm_handle made_h = TSM_NONE;
  struct cts_handles h = {cts__res_handle(r, o.a), TSM_NONE, TSM_NONE, NULL};
  int adapter_rc = cts__adapter_dl_export(r, st, &h, &made_h);
  if (r->fault && adapter_rc == TSM_ENOMEM) return cts__injected(r);
  int model_rc = cts__model_dl_export(&r->m, st, &o, &x);
  /* An export the case does not keep (refused by the model, or expected to fail) is
   * deleted here: nothing else would run its deleter. */
  struct cts_dlobj *obj = obj_at(made_h);
  if (obj && (model_rc || expected_err)) {
    if (obj->managed) dl_delete(obj->form, obj->managed);
    free(obj);
  }
  if (cts__judge_codes(r, model_rc, adapter_rc, &expected_err)) return -1;
  if (expected_err) return cts__check_state(r);
  if (cts__bind_made(r, st, x, made_h)) return -1;
  if (check_export(r, st, x)) return -1;
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

/* The elements of view v in row-major order, as its strides place them, esize bytes
 * each (NULL: none, no data, or more than the judge models, CTS_OPSEM_MAX_MODELED). */
static unsigned char *copy_elems(const struct cts_dl_view *v) {
  size_t esize = ((size_t)v->bits * (size_t)v->lanes + 7) / 8;
  if (!v->data || !esize || v->ndim < 0 || v->ndim > CTS_DL_MAX_DIMS) return NULL;
  int64_t n = cts_opsem_elems(v->ndim, v->shape);
  if (n <= 0 || n > CTS_OPSEM_MAX_MODELED) return NULL;
  int64_t strides[CTS_DL_MAX_DIMS];
  view_strides(v, strides);
  const unsigned char *base = (const unsigned char *)v->data + v->byte_offset;
  unsigned char *out = cts_xmalloc((size_t)n * esize);
  for (int64_t i = 0; i < n; i++)
    memcpy(out + (size_t)i * esize, base + linear(v->ndim, v->shape, strides, i) * (int64_t)esize,
           esize);
  return out;
}

/* An adapter half is about to hand o over or delete it: RETURN 1 when it is still the
 * judge's to give (it is not from now on), else 0. An export not checked yet (a parallel
 * block's, checked in the replay) is seen first: its fields and, on a CPU session, its
 * elements are copied for that check. */
static int take(struct cts_run *r, struct cts_dlobj *o) {
  if (!o || atomic_exchange(&o->taken, 1)) return 0;
  if (!o->unchecked || !o->managed) return 1;
  o->seen = cts_xmalloc(sizeof *o->seen);
  dl_view(o->form, o->managed, o->seen);
  o->seen_elems = r->cuda_session ? NULL : copy_elems(o->seen);
  return 1;
}

/* The adapter half of `import`: the implementation consumes the DLPack tensor h->a into
 * manager h->b (whatever it answers, DLP.IMPORT.2). */
int cts__adapter_dl_import(struct cts_run *r, const struct cts_stmt *st,
                           const struct cts_handles *h, tsm_handle *made) {
  (void)st;
  struct cts_dlobj *o = obj_at(h->a);
  if (!take(r, o)) return CTS_NOT_RUN;
  return r->a->dlpack_import(r->s, o->managed, o->form, h->b, made);
}

int cts__model_dl_import(struct cts_model *m, const struct cts_stmt *st,
                         const struct cts_operands *o, int *made) {
  (void)st;
  return cts_model_dl_import(m, o->a, o->b, made);
}

int cts__exec_dl_import(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  struct cts_operands o = {CTS_NONE, CTS_NONE, CTS_NONE, NULL, 0};
  if (judge_owned(r, st->a, &o.a) || cts__operand(r, st->b, &o.b)) return -1;
  int made = CTS_NONE;
  tsm_handle h = TSM_NONE;
  struct cts_handles hs = {handle_of(obj_of(r, o.a)), cts__mgr_handle(r, o.b), TSM_NONE, NULL};
  int adapter_rc = cts__adapter_dl_import(r, st, &hs, &h);
  if (r->fault && adapter_rc == TSM_ENOMEM) { /* consumed all the same (DLP.IMPORT.2) */
    cts_model_dl_drop(&r->m, o.a);
    return cts__injected(r);
  }
  int model_rc = cts__model_dl_import(&r->m, st, &o, &made);
  if (cts__judge_codes(r, model_rc, adapter_rc, &expected_err)) return -1;
  if (!expected_err && cts__bind_made(r, st, made, h)) return -1;
  if (cts__check_state(r)) return -1;
  return expected_err ? 0 : cts__check_made_values(r, st, made);
}

/* `outlive X`: the judge keeps export X past session_close, then reads it and runs its
 * deleter (DLP.EXPORT.6, dlpack_after_close). No halves: a judge's decision, made on the
 * case's thread. */
int cts__exec_dl_outlive(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x;
  if (judge_owned(r, st->a, &x)) return -1;
  if (r->m.dls[x].judge_made)
    return cts__cannot_run(r, "'%s' was made by the judge: outlive takes an export of the "
                           "implementation", r->c->syms[st->a].name);
  obj_of(r, x)->outlive = 1;
  return cts__check_state(r);
}

/* The adapter half of `drop`: the judge, as owner, runs the deleter of h->a on this
 * thread. */
int cts__adapter_dl_drop(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,
                         tsm_handle *made) {
  (void)st, (void)made;
  struct cts_dlobj *o = obj_at(h->a);
  if (!take(r, o)) return CTS_NOT_RUN;
  dl_delete(o->form, o->managed);
  o->judge_drops++;
  return 0;
}

int cts__model_dl_drop(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,
                       int *made) {
  (void)st, (void)made;
  cts_model_dl_drop(m, o->a);
  return 0;
}

int cts__exec_dl_drop(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  struct cts_operands o = {CTS_NONE, CTS_NONE, CTS_NONE, NULL, 0};
  if (judge_owned(r, st->a, &o.a)) return -1;
  struct cts_handles h = {handle_of(obj_of(r, o.a)), TSM_NONE, TSM_NONE, NULL};
  cts__adapter_dl_drop(r, st, &h, NULL);
  cts__model_dl_drop(&r->m, st, &o, NULL);
  return cts__check_state(r);
}

/* ---- the judge's bookkeeping: binding, checks, replays ----------------------- */

/* What export or make made: model id x, its struct cts_dlobj h. */
static int dl_bind_made(struct cts_run *r, const struct cts_stmt *st, int x, tsm_handle h) {
  struct cts_dlobj *o = obj_at(h);
  if (st->kind == CTS_DL_EXPORT && !o->managed) {
    free(o);
    return cts__report(r, CTS_FAIL, "dlpack_export succeeded with a NULL tensor");
  }
  if (st->kind == CTS_DL_EXPORT && cts__operand(r, st->a, &o->src)) return -1;
  remember_dl(r, x, o, st);
  return 0;
}

static int dl_check_made(struct cts_run *r, const struct cts_stmt *st, int x) {
  return st->kind == CTS_DL_EXPORT ? check_export(r, st, x) : 0;
}

/* What the EXECs of import and drop check before their adapter call. */
static int dl_can_replay(struct cts_run *r, const struct cts_stmt *st) {
  int x;
  if (st->kind != CTS_DL_IMPORT && st->kind != CTS_DL_DROP) return 0;
  return judge_owned(r, st->a, &x);
}

static struct cts_objmap *dl_objects(struct cts_run *r) { return &dl_of(r)->objs; }

/* ---- observation ------------------------------------------------------------- */

static int deletes_seen(struct cts_run *r, int x) {
  const struct cts_dlobj *o = obj_of(r, x);
  if (!o->rec) return o->judge_drops;
  return o->rec->deletes < 0 ? r->m.dls[x].deletes : o->rec->deletes;
}

int cts__expect_deleted(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  int x = r->sym_obj[st->a];
  if (x < 0) return cts__unbound(r, st->a);
  const struct cts_mdl *d = &r->m.dls[x];
  int model = d->judge_made ? d->deletes : obj_of(r, x)->judge_drops;
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
    const struct cts_dlobj *o = obj_of(r, (int)x);
    if (!o || !o->rec) continue;
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
      cts_pages_give(o->rec->buffer, o->rec->buffer_len);
      o->rec->buffer = NULL;
    }
  }
  return 0;
}

/* The judge, as owner, runs the deleters it still owes before the session closes (not
 * those a parallel block's thread ran when the replay stopped before it). */
static void dlpack_before_close(struct cts_run *r) {
  for (size_t x = 0; x < r->m.n_dls; x++) {
    struct cts_dlobj *o = obj_of(r, (int)x);
    if (r->m.dls[x].state != CTS_DL_JUDGE || !o || !o->managed || o->outlive) continue;
    if (atomic_exchange(&o->taken, 1)) continue;
    dl_delete(o->form, o->managed);
    o->judge_drops++;
    cts_model_dl_drop(&r->m, (int)x);
  }
}

/* The exports kept past session_close: read, then deleted (DLP.EXPORT.6). */
static void outlived(struct cts_run *r) {
  char name[200];
  for (size_t x = 0; x < r->m.n_dls; x++) {
    struct cts_dlobj *o = obj_of(r, (int)x);
    const struct cts_mdl *d = &r->m.dls[x];
    if (!o || !o->outlive || d->state != CTS_DL_JUDGE) continue;
    struct cts_dl_view v;
    dl_view(d->form, o->managed, &v);
    const struct cts_mstorage *s = &r->m.st[d->storage];
    struct elems want = {s->vals, d->desc.dtype, s->n};
    check_elems(r, &v, &want, dl_name(r, (int)x, name, sizeof name),
                "after session_close, DLP.EXPORT.6");
    dl_delete(d->form, o->managed);
    o->judge_drops++;
    cts_model_dl_drop(&r->m, (int)x);
  }
}

/* After session_close every deleter has run exactly once (ABI.SESSION.1, DLP.DEL.1);
 * then the judge frees what it made. */
static void dlpack_after_close(struct cts_run *r) {
  char name[200];
  r->cur = NULL;
  outlived(r);
  for (size_t x = 0; x < r->m.n_dls; x++) {
    struct cts_dlobj *o = obj_of(r, (int)x);
    if (o && o->rec) {
      int seen = o->rec->deletes < 0 ? 1 : o->rec->deletes;
      if (seen != 1)
        cts__report(r, CTS_FAIL, "after session_close, the deleter of %s has run %d times, not "
                    "once (DLP.DEL.1)", dl_name(r, (int)x, name, sizeof name), seen);
      if (r->m.dls[x].form == TSM_DLPACK_VERSIONED)
        cts_dl_versioned_free(o->managed);
      else
        cts_dl_legacy_free(o->managed);
      cts_pages_give(o->rec->buffer, o->rec->buffer_len);
      free(o->rec);
    }
    if (o) free_seen(o);
    free(o);
  }
  free(dl_of(r)->objs.v);
  dl_of(r)->objs.v = NULL;
  dl_of(r)->objs.cap = 0;
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
    .sym_kinds = CTS_SYM_DLPACK,
    .objects = dl_objects,
    .observe = check_dlpack,
    .before_close = dlpack_before_close,
    .after_close = dlpack_after_close,
    .state_free = free,
    .bind_made = dl_bind_made,
    .check_made = dl_check_made,
    .explain = explain_dl,
    .can_replay = dl_can_replay,
};
