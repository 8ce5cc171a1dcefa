/*
 * impl/src/dlpack.c: DLPack exchange, the form-independent core: export and import
 * through the DLPack C ABI (the general path of tsmr_dlpack_export / tsmr_dlpack_import,
 * whose entry points and common cases are the versioned form's, dlx_form.inc), the
 * export records and their anchor, aliasing vs copying. The managed structs themselves
 * are built and read by the form source dlx_form.inc (compiled once per form, as
 * dlpack_legacy.c and dlpack_versioned.c) through dlx.h.
 * Clauses: DLP.DEL.1-3, DLP.EXPORT.1-5, DLP.IMPORT.1-8, DLP.MGR.1-3.
 *
 * Ownership. An export holds one reference on the source's refcounted storage (or on
 * a storage of its own with TSMR_DLPACK_COPY), so the buffer outlives the source and
 * counts in live bytes until the deleter runs (DLP.EXPORT.3). Every export also points
 * at its context's anchor (dlx.h), which is how a deleter that runs on any thread, even
 * after tsmr_ctx_close, finds the lock that guards the storage; the anchor lives while
 * the context is open or an export that outlived it is.
 *
 * Import. A compact tensor in memory the session can use is aliased: a storage struct
 * wraps the producer's pointer, counts no bytes, and its last release queues the
 * foreign deleter, which tsmr__leave runs after unlocking (never under the lock: a
 * foreign deleter is arbitrary code). Anything else accepted is copied into compact
 * storage of our own and the deleter runs before the call returns. One of this
 * context's own exports is recognised (our deleter and our anchor) and the new tensor
 * shares the exported storage, so it stays counted once; the export record is dropped
 * at once. The import itself (dlpack_import_l) takes the managed struct only once
 * nothing is left that can fail (the tensor record and slot, the copy; a wrapping
 * storage whose tensor cannot be made is freed unused), so a refusal leaves the struct
 * as it was given: tsmr_dlpack_import then runs its deleter (consumed whatever happens,
 * DLP.IMPORT.2), tsmr_dlpack_try_import leaves it with the caller (what an exchange
 * table's to-object call needs, DLP.XAPI.TO.2).
 */
#include <string.h>

#include "dlx.h"

int tsmr_dlpack_versioned_minor(void) { return tsmr__dlx_versioned_minor; }

static const struct tsmr__dlx_form *dlx_form_of(int form) {
  if (form == TSMR_DLPACK_LEGACY) return &tsmr__dlx_legacy;
  if (form == TSMR_DLPACK_VERSIONED) return &tsmr__dlx_versioned;
  return NULL;
}

/* ---- foreign deleters and export records --------------------------------------- */

void tsmr__dlx_run_pending(struct tsmr__storage *p) {
  while (p) {
    struct tsmr__storage *next = p->next_free;
    TSMR_ASSERT(p->ext_del && p->refs == 0);
    p->ext_del(p->ext); /* DLP.DEL.1: once, for the last reference */
    tsmr__free(p);
    p = next;
  }
}

static void dlx_anchor_unref(struct tsmr__dlx_anchor *a) {
  if (atomic_fetch_sub(&a->refs, 1) != 1) return;
  TSMR_ASSERT(!a->ctx && tsmr__list_empty(&a->exports));
  pthread_mutex_destroy(&a->lock);
  tsmr__free(a);
}

/* Drops a reference on an orphaned storage (anchor lock held). */
static void dlx_orphan_put(struct tsmr__dlx_anchor *a, struct tsmr__storage *s,
                           struct tsmr__storage **pending) {
  TSMR_ASSERT(s->orphaned && s->refs > 0);
  if (--s->refs) return;
  if (s->ext_del) { /* an aliased import exported again: the producer's deleter */
    s->next_free = *pending;
    *pending = s;
    return;
  }
  if (s->data && s->data != (void *)s->small.bytes) a->be->free_mem(s->data);
  /* an embedded storage's tensor was released when its context closed */
  if (s->embedded) tsmr__slab_put(tsmr__rec_slab_of(s));
  else tsmr__free(s);
}

void tsmr__dlx_rec_drop(struct tsmr__dlx_rec *rec) {
  struct tsmr__dlx_anchor *a = rec->anchor;
  struct tsmr__storage *pending = NULL;
  TSMR_ASSERT(a && rec->st && "export deleter called twice");
  /* a lives: rec is on its list until below, so the context holds a's reference, or
   * its close gave rec one (tsmr__dlx_close_orphan) */
  pthread_mutex_lock(&a->lock);
  tsmr_ctx *ctx = a->ctx;
  if (ctx) {
    tsmr__lock_acquire(&ctx->lock, tsmr__tls.thread_id);
    tsmr__list_del(&rec->node);
    tsmr__storage_put(ctx, rec->st);
    pending = ctx->dlx_pending;
    ctx->dlx_pending = NULL;
    tsmr__lock_release(&ctx->lock);
  } else {
    tsmr__list_del(&rec->node);
    dlx_orphan_put(a, rec->st, &pending);
  }
  rec->st = NULL;
  rec->anchor = NULL;
  pthread_mutex_unlock(&a->lock); /* a is not touched after this while ctx lives */
  if (!ctx) dlx_anchor_unref(a); /* the reference the close gave rec */
  if (pending) tsmr__dlx_run_pending(pending);
}

/* An own export imported into its context: the record goes, the storage stays with
 * the new tensor (context lock held; the anchor keeps the context's reference). */
static void dlx_drop_own_l(tsmr_ctx *ctx, struct tsmr__dlx_rec *rec) {
  tsmr__list_del(&rec->node);
  tsmr__storage_put(ctx, rec->st);
  rec->primed = 0; /* the consumer may have changed what the import does not read */
  /* the form's block starts with the record: kept for the next export */
  *(void **)rec = ctx->dlx_free_blocks;
  ctx->dlx_free_blocks = rec;
}

/* A block for an export (TSMR__DLX_BLOCK_BYTES), recycled when one is kept; NULL:
 * ENOMEM. A kept block counts as an allocation for the fault injection of tests. */
static void *dlx_block_get(tsmr_ctx *ctx) {
  void *b = ctx->dlx_free_blocks;
  if (!b) return tsmr__alloc(TSMR__DLX_BLOCK_BYTES);
  if (tsmr__alloc_refused()) return NULL;
  ctx->dlx_free_blocks = *(void **)b;
  return b;
}

void tsmr__dlx_free_blocks(tsmr_ctx *ctx) {
  while (ctx->dlx_free_blocks) {
    void *b = ctx->dlx_free_blocks;
    ctx->dlx_free_blocks = *(void **)b;
    tsmr__free(b);
  }
}

void tsmr__dlx_close_begin(tsmr_ctx *ctx) {
  if (ctx->dlx_anchor) pthread_mutex_lock(&ctx->dlx_anchor->lock);
}

void tsmr__dlx_close_orphan(tsmr_ctx *ctx) {
  struct tsmr__dlx_anchor *a = ctx->dlx_anchor;
  if (!a) return;
  for (tsmr__list *n = a->exports.next; n != &a->exports; n = n->next) {
    struct tsmr__storage *s =
        tsmr__container_of(n, struct tsmr__dlx_rec, node)->st;
    atomic_fetch_add(&a->refs, 1); /* the export's, dropped by its deleter */
    if (s->orphaned) continue; /* shared by several exports */
    TSMR_ASSERT(ctx->live_bytes >= s->nbytes);
    ctx->live_bytes -= s->nbytes;
    s->orphaned = 1;
    if (s->embedded) tsmr__rec_hold(tsmr__own_head(s));
  }
  a->ctx = NULL;
  ctx->dlx_anchor = NULL;
}

void tsmr__dlx_close_end(struct tsmr__dlx_anchor *a) {
  if (!a) return;
  pthread_mutex_unlock(&a->lock);
  dlx_anchor_unref(a);
}

static int dlx_anchor_get(tsmr_ctx *ctx, struct tsmr__dlx_anchor **out) {
  struct tsmr__dlx_anchor *a = ctx->dlx_anchor;
  if (!a) {
    if (!(a = tsmr__alloc(sizeof *a))) return TSMR_ENOMEM;
    if (pthread_mutex_init(&a->lock, NULL) != 0) {
      tsmr__free(a);
      return TSMR_ENOMEM;
    }
    atomic_init(&a->refs, 1);
    a->ctx = ctx;
    a->be = ctx->be;
    tsmr__list_init(&a->exports);
    ctx->dlx_anchor = a;
  }
  *out = a;
  return 0;
}

/* ---- export ---------------------------------------------------------------------- */

/* The storage an export holds a reference on (st: OUT): the tensor's own, shared
 * (DLP.EXPORT.4), or with TSMR_DLPACK_COPY a counted copy of its own (DLP.EXPORT.5). */
static int export_storage(tsmr_ctx *ctx, struct tsmr__tensor *t, uint32_t request,
                          struct tsmr__storage **out) {
  struct tsmr__storage *st;
  int rc;
  size_t nbytes = (size_t)tsmr__tensor_nbytes(t);
  if (request & TSMR_DLPACK_COPY) { /* DLP.EXPORT.5: a buffer of its own, counted */
    if ((rc = tsmr__storage_new(ctx, nbytes, 0, &st))) return rc;
    if (nbytes && (rc = ctx->be->copy_d2d(st->data, t->st->data, nbytes))) {
      tsmr__storage_put(ctx, st);
      return rc;
    }
  } else { /* DLP.EXPORT.4: shared storage, one more reference */
    st = t->st;
    tsmr__tensor_share(t);
  }
  *out = st;
  return 0;
}

struct export_desc {
  struct tsmr__dlx_out o;
  int64_t strides[TSMR_MAX_DIMS]; /* o.strides points here */
};

/* What the export of t over st describes (e->o: OUT; e->strides: OUT, its compact
 * strides, like PyTorch's: extent 0 counts as 1; saturated at INT64_MAX where an empty
 * tensor's huge extents, a [0, 2^62, 2], would overflow them: nothing is read through
 * those). */
static void export_describe(const tsmr_ctx *ctx, const struct tsmr__tensor *t,
                            const struct tsmr__storage *st, uint32_t request,
                            struct export_desc *e) {
  struct tsmr__dlx_out *o = &e->o;
  int64_t *strides = e->strides, acc = 1;
  const int64_t *shape = tsmr__body(t)->shape;
  for (int i = t->ndim - 1; i >= 0; i--) {
    strides[i] = acc;
    if (__builtin_mul_overflow(acc, shape[i] > 1 ? shape[i] : 1, &acc)) acc = INT64_MAX;
  }
  o->data = st->data; /* NULL for zero elements (DLP.EXPORT.1) */
  o->device_type = ctx->dlx_device_type;
  o->device_id = 0;
  o->flags = 0; /* every field of o is written: no memset */
  o->ndim = t->ndim;
  o->shape = shape;
  o->strides = strides;
  struct tsmr__dlx_dt dt = tsmr__dlx_dtype(t->dtype);
  o->code = dt.code;
  o->bits = dt.bits;
  o->dtype = t->dtype;
  o->numel = tsmr__body(t)->numel;
  if (request & TSMR_DLPACK_READ_ONLY) o->flags |= TSMR__DLX_FLAG_READ_ONLY;
  if (request & TSMR_DLPACK_COPY) o->flags |= TSMR__DLX_FLAG_IS_COPIED;
}

static int dlpack_export_l(tsmr_ctx *ctx, tsmr_handle th, int form, uint32_t request,
                           void **out) {
  const struct tsmr__dlx_form *f = dlx_form_of(form);
  const uint32_t known = TSMR_DLPACK_COPY | TSMR_DLPACK_READ_ONLY;
  struct tsmr__tensor *t;
  struct tsmr__dlx_anchor *a;
  struct tsmr__storage *st;
  int rc;
  if (!f || !out || (request & ~known)) return TSMR_EINVAL;
  if (form == TSMR_DLPACK_LEGACY && request) return TSMR_EINVAL; /* DLP.EXPORT.5 */
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  if (tsmr__res_kind(ctx, th, t) == TSMR__RES_COMPOSITE) return TSMR_EINVAL;
  if (!t) return TSMR_ERELEASED;
  if ((rc = dlx_anchor_get(ctx, &a))) return rc;
  if ((rc = export_storage(ctx, t, request, &st))) return rc;
  struct export_desc e;
  export_describe(ctx, t, st, request, &e);
  struct tsmr__dlx_rec *rec;
  void *managed, *block = dlx_block_get(ctx);
  if (!block) {
    tsmr__storage_put(ctx, st);
    return TSMR_ENOMEM;
  }
  f->build(&e.o, block, &rec, &managed);
  rec->anchor = a;
  rec->st = st;
  tsmr__list_add(&a->exports, &rec->node);
  *out = managed;
  return 0;
}

int tsmr__dlx_export_any(tsmr_ctx *ctx, tsmr_handle t, int form, uint32_t request,
                         void **out) {
  TSMR__LOCKED(dlpack_export_l(ctx, t, form, request, out));
}

int tsmr__dlx_export_held(tsmr_ctx *ctx, tsmr_handle t, int form, uint32_t request,
                          void **out) {
  int rc = dlpack_export_l(ctx, t, form, request, out);
  tsmr__leave(ctx);
  return rc;
}

/* ---- import ---------------------------------------------------------------------- */

/* dst[k] = the k-th element in row-major order of v's strided tensor (numel elements)
 * whose element 0 is at element offset origin of base (elements of esize bytes). */
static void dlx_gather(void *dst, const unsigned char *base, int64_t origin,
                       const struct tsmr__dlx_view *v, int64_t numel) {
  size_t esize = ((size_t)v->bits + 7) / 8;
  int ndim = v->ndim;
  const int64_t *shape = v->shape, *strides = v->strides;
  unsigned char *d = dst;
  int64_t idx[TSMR_MAX_DIMS] = {0};
  int64_t off = origin;
  for (int64_t k = 0; k < numel; k++) {
    memcpy(d + (size_t)k * esize, base + off * (int64_t)esize, esize); /* off < 0: negative strides */
    for (int i = ndim - 1; i >= 0; i--) {
      if (++idx[i] < shape[i]) {
        off += strides[i];
        break;
      }
      off -= strides[i] * (shape[i] - 1);
      idx[i] = 0;
    }
  }
}

/* What an import reads off the managed struct's fields, once they are accepted. */
struct import_layout {
  int64_t numel;
  int compact;     /* row-major contiguous (or no strides) */
  int64_t lo, hi;  /* element offsets spanned, relative to element 0 */
  int src_dev;     /* the data is device memory of the session, else host-accessible */
  int dtype;
};

/* Copies v's numel elements (element 0 at src; l's layout) compactly into dst, device
 * memory of ctx. l->src_dev: src is device memory of the session, else host-accessible
 * memory. */
static int dlx_copy_in(tsmr_ctx *ctx, void *dst, const struct tsmr__dlx_view *v,
                       const unsigned char *src, const struct import_layout *l) {
  int64_t numel = l->numel, lo = l->lo, hi = l->hi;
  int compact = l->compact, src_dev = l->src_dev;
  const struct tsmr__backend *be = ctx->be;
  size_t esize = ((size_t)v->bits + 7) / 8, nbytes = (size_t)numel * esize;
  int rc = 0;
  if (compact) { /* only host memory into a device session */
    TSMR_ASSERT(!src_dev && !be->host_memory);
    return be->copy_h2d(dst, src, nbytes);
  }
  if (!src_dev && be->host_memory) {
    dlx_gather(dst, src, 0, v, numel);
    return 0;
  }
  unsigned char *tmp = tsmr__alloc(nbytes), *span = NULL;
  if (!tmp) return TSMR_ENOMEM;
  if (src_dev) { /* fetch the elements' span from the device, gather on the host */
    size_t span_bytes = (size_t)(hi - lo + 1) * esize;
    if (!(span = tsmr__alloc(span_bytes))) rc = TSMR_ENOMEM;
    else rc = be->copy_d2h(span, src + lo * (int64_t)esize, span_bytes);
    if (rc == 0)
      dlx_gather(tmp, span, -lo, v, numel);
  } else {
    dlx_gather(tmp, src, 0, v, numel);
  }
  if (rc == 0) rc = be->copy_h2d(dst, tmp, nbytes);
  tsmr__free(span);
  tsmr__free(tmp);
  return rc;
}

/* DLP.IMPORT.2: the bytes the elements span, lo..hi elements of the declared element
 * size from byte_offset, must be addressable: no int64 overflow anywhere on the way
 * (the element offsets alone can fit while their bytes do not). */
static int span_fits(const struct tsmr__dlx_view *v, const struct import_layout *l) {
  int64_t elem = ((int64_t)v->bits * v->lanes + 7) / 8, span, bytes, lo_bytes, hi_bytes;
  if (elem < 1) elem = 1;
  return v->byte_offset <= (uint64_t)INT64_MAX && !__builtin_sub_overflow(l->hi, l->lo, &span) &&
         !__builtin_add_overflow(span, 1, &span) &&
         !__builtin_mul_overflow(span, elem, &bytes) &&
         !__builtin_mul_overflow(l->lo, elem, &lo_bytes) &&
         !__builtin_mul_overflow(l->hi, elem, &hi_bytes) &&
         !__builtin_add_overflow(hi_bytes, (int64_t)v->byte_offset, &hi_bytes) &&
         !__builtin_add_overflow(lo_bytes, (int64_t)v->byte_offset, &lo_bytes);
}

/* The shape and strides (DLP.IMPORT.4-5): EDLPACK for what no tensor can be. */
static int import_shape(const struct tsmr__dlx_view *v, struct import_layout *l) {
  if (v->ndim < 0 || v->ndim > TSMR_MAX_DIMS) return TSMR_EDLPACK;
  if (v->ndim > 0 && !v->shape) return TSMR_EDLPACK;
  int64_t numel = 1;
  int empty = 0, overflow = 0;
  for (int i = 0; i < v->ndim; i++) {
    if (v->shape[i] < 0) return TSMR_EDLPACK;
    empty |= v->shape[i] == 0;
    overflow |= __builtin_mul_overflow(numel, v->shape[i], &numel);
  }
  if (empty) numel = 0;
  else if (overflow || numel > (int64_t)(SIZE_MAX / 8)) return TSMR_EDLPACK;
  if (!v->data && numel > 0) return TSMR_EDLPACK;
  if (v->strides_refused) return TSMR_EDLPACK;
  l->numel = numel;
  l->compact = 1;
  l->lo = l->hi = 0;
  if (!v->strides || numel == 0) {
    l->hi = numel > 0 ? numel - 1 : 0;
    return 0;
  }
  int64_t want = 1;
  for (int i = v->ndim - 1; i >= 0; i--) {
    int64_t ext;
    if (v->shape[i] != 1 && v->strides[i] != want) l->compact = 0;
    want *= v->shape[i];
    if (__builtin_mul_overflow(v->strides[i], v->shape[i] - 1, &ext) ||
        __builtin_add_overflow(ext < 0 ? l->lo : l->hi, ext, ext < 0 ? &l->lo : &l->hi))
      return TSMR_EDLPACK;
  }
  return span_fits(v, l) ? 0 : TSMR_EDLPACK;
}

/* The device (DLP.IMPORT.7), then the dtype (DLP.IMPORT.6). */
static int import_device_dtype(const tsmr_ctx *ctx, const struct tsmr__dlx_view *v,
                               struct import_layout *l) {
  int host = ctx->be->host_memory;
  switch (v->device_type) {
  case TSMR__DLX_CPU:
    if (!host) return TSMR_EDEVICE;
    l->src_dev = 0;
    break;
  case TSMR__DLX_CUDA:
    if (host || v->device_id != 0) return TSMR_EDEVICE;
    l->src_dev = 1;
    break;
  case TSMR__DLX_CUDA_HOST:
  case TSMR__DLX_CUDA_MANAGED:
    l->src_dev = 0;
    break;
  default:
    return TSMR_EDEVICE;
  }
  l->dtype = tsmr__dtype_of_dl(v->code, v->bits, v->lanes);
  return l->dtype ? 0 : TSMR_EDTYPE;
}

int tsmr__dtype_of_dl(int code, int bits, int lanes) {
  if (lanes != 1) return 0;
#define TSMR__OF_DL(dtype, dl_code, dl_bits) \
  if (code == (dl_code) && bits == (dl_bits)) return dtype;
  TSMR__DTYPES(TSMR__OF_DL)
#undef TSMR__OF_DL
  return 0;
}

/* One of this context's own exports, as we made it (rec), at src: RETURN 1 when the
 * new tensor can share its storage. */
static int import_is_own(const tsmr_ctx *ctx, const struct tsmr__dlx_rec *rec,
                         const struct tsmr__dlx_view *v, const struct import_layout *l,
                         const unsigned char *src) {
  return rec && ctx->dlx_anchor && rec->anchor == ctx->dlx_anchor && l->compact &&
         v->byte_offset == 0 && src == rec->st->data &&
         (rec->st->ext_del || (size_t)l->numel * tsmr__dtype_size(l->dtype) == rec->st->nbytes);
}

/* A tensor of m as s says (the import's dtype and shape) over storage st (NULL: a new
 * compact one of its own). */
static int import_tensor(tsmr_ctx *ctx, struct tsmr__mgr *m,
                         const struct tsmr__tensor_spec *s, struct tsmr__storage *st,
                         struct tsmr__tensor **t) {
  struct tsmr__tensor_spec over = *s;
  over.st = st;
  return tsmr__tensor_create(ctx, m, &over, t);
}

/* One tsmr_dlpack_import or tsmr_dlpack_try_import: managed in form f into manager mh;
 * out: OUT. */
struct import_call {
  void *managed;
  const struct tsmr__dlx_form *f;
  tsmr_handle mh;
  tsmr_handle *out;
};

/* managed is taken only once nothing is left that can fail, so a refusal leaves it as
 * it was given. *del: OUT, 1 when managed is still whole after the call (a refusal, or
 * a copy), 0 when it now belongs to a tensor or was one of our exports. */
static int dlpack_import_l(tsmr_ctx *ctx, const struct import_call *c, int *del) {
  void *managed = c->managed;
  const struct tsmr__dlx_form *f = c->f;
  tsmr_handle mh = c->mh, *out = c->out;
  struct tsmr__mgr *m;
  struct tsmr__tensor *t;
  struct tsmr__dlx_view v;
  struct import_layout l;
  int rc;
  *del = 1;
  /* DLP.IMPORT.2: the target manager (MGR.CREATE.2) */
  if (!out) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, NULL))) return rc;
  if (!m) return TSMR_ECLOSED;
  if ((rc = tsmr__mgr_accepts(m))) return rc;
  /* the version (DLP.IMPORT.1), the layout, the device, the dtype */
  memset(&v, 0, sizeof v);
  if ((rc = f->parse(managed, &v))) return rc;
  if ((rc = import_shape(&v, &l)) || (rc = import_device_dtype(ctx, &v, &l))) return rc;
  int64_t numel = l.numel;
  const struct tsmr__tensor_spec spec = {l.dtype, v.ndim, v.shape, numel, NULL, 0};
  unsigned char *src = numel > 0 ? (unsigned char *)v.data + v.byte_offset : NULL;
  struct tsmr__dlx_rec *rec = f->own(managed);
  if (import_is_own(ctx, rec, &v, &l, src)) { /* share the exported storage */
    if ((rc = import_tensor(ctx, m, &spec, rec->st, &t))) return rc; /* nothing taken */
    dlx_drop_own_l(ctx, rec); /* taken: its storage reference is the tensor's now */
    *del = 0;
  } else if (l.compact && (ctx->be->host_memory || l.src_dev)) {
    struct tsmr__storage *st; /* DLP.MGR.3: alias, deleter at the release */
    if ((rc = tsmr__storage_wrap(ctx, src, managed, f->call_deleter, &st))) return rc;
    *del = 0; /* the storage owns managed now */
    rc = import_tensor(ctx, m, &spec, st, &t);
    if (rc == 0) {
      tsmr__storage_put(ctx, st); /* the tensor's reference is the last: deleter at its release */
    } else { /* unused: freed as tsmr__dlx_run_pending frees one but without the deleter */
      tsmr__free(st);
      *del = 1; /* refused as it was given */
    }
  } else { /* DLP.IMPORT.4, DLP.MGR.3: a compact copy of our own, deleter at once */
    if ((rc = import_tensor(ctx, m, &spec, NULL, &t))) return rc;
    if (numel > 0 && (rc = dlx_copy_in(ctx, t->st->data, &v, src, &l))) {
      tsmr__tensor_discard(ctx, t);
      return rc;
    }
  }
  if (rc) return rc;
  tsmr__res_register(ctx, t);
  *out = t->handle;
  return 0;
}

/* consume: 1 for tsmr_dlpack_import, whose refusal runs managed's deleter (DLP.IMPORT.2),
 * 0 for tsmr_dlpack_try_import, whose refusal leaves managed with its caller. */
static int import_held(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                       tsmr_handle *out, int consume) {
  const struct tsmr__dlx_form *f = dlx_form_of(form);
  int rc, del = 1;
  const struct import_call c = {managed, f, m, out};
  rc = dlpack_import_l(ctx, &c, &del);
  del &= rc == 0 || consume; /* a refusal took nothing: the caller's, unless consumed */
  tsmr__leave(ctx); /* also runs foreign deleters that became due */
  if (del) f->call_deleter(managed); /* DLP.IMPORT.2: never under the lock */
  return rc;
}

static int import_any(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                      tsmr_handle *out, int consume) {
  const struct tsmr__dlx_form *f = dlx_form_of(form);
  int rc;
  if (!managed || !f) return TSMR_EINVAL; /* nothing we could consume */
  if (!ctx) {
    if (consume) f->call_deleter(managed);
    return TSMR_EINVAL;
  }
  if ((rc = tsmr__enter(ctx))) {
    if (consume) f->call_deleter(managed); /* DLP.IMPORT.2: consumed whatever happens */
    return rc;
  }
  return import_held(ctx, managed, form, m, out, consume);
}

int tsmr__dlx_import_any(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                         tsmr_handle *out) {
  return import_any(ctx, managed, form, m, out, 1);
}

int tsmr__dlx_import_held(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                          tsmr_handle *out) {
  return import_held(ctx, managed, form, m, out, 1);
}

int tsmr__dlx_try_import_any(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                             tsmr_handle *out) {
  return import_any(ctx, managed, form, m, out, 0);
}

int tsmr__dlx_try_import_held(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                              tsmr_handle *out) {
  return import_held(ctx, managed, form, m, out, 0);
}
