/*
 * impl/src/tensor.c: tensors and their refcounted storage: creation, release, the
 * holder lists, introspection and reads. Clauses: MGR.CREATE.1-4, MGR.REL.1-5,
 * MGR.OP.9 (views share storage), MGR.COUNT.1, MGR.COUNT.4, DEV.BYTES.1,
 * ABI.INFO.1, ERR.ATOMIC.1, MGR.ADOPT.1.
 *
 * A tensor is one record with its own storage inside (internal.h); records, the
 * storages of copied exports and slots are recycled through per-context free lists,
 * and storages of at most 64 bytes on a host backend use the inline buffer, so a
 * scoped create + release costs about as much as one malloc + free.
 *
 * Lanes (lock.h). Once a second thread uses a context, a thread's create and release
 * can run without the mutex, in its lane, when they touch nothing another lane does:
 * records from the thread's own free list, slots from blocks of the table given to it
 * (tsmr__tslot_grant: a freed slot goes back to its block's thread), live bytes into
 * its own count, in a manager whose lane owner it is (the last thread that created in
 * it under the lock), a plain tensor in no scope whose storage nothing else references.
 * Anything else declines, changing nothing, and runs under the mutex, which closes the
 * lanes. A create under the mutex stocks the thread's lane (lane_stock) and a release
 * there gives the thread's records back to it, so a thread that keeps to its own
 * manager soon works in its lane alone.
 */
#include <string.h>

#include "internal.h"
#include "tsmref_test.h"

size_t tsmr_test_close_stride(void) { return sizeof(struct tsmr__tensor); }

int tsmr__shape_check(int dtype, int ndim, const int64_t *shape, int64_t *numel,
                      size_t *nbytes) {
  size_t size = tsmr__dtype_size(dtype);
  if (!size || (unsigned)ndim > TSMR_MAX_DIMS) return TSMR_EINVAL;
  if (ndim > 0 && !shape) return TSMR_EINVAL;
  int64_t n = 1, bytes;
  int overflow = 0, empty = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return TSMR_EINVAL;
    empty |= shape[i] == 0;
    overflow |= __builtin_mul_overflow(n, shape[i], &n);
  }
  /* the byte count's overflow check is a multiply, not a division by size */
  overflow |= __builtin_mul_overflow(n, (int64_t)size, &bytes);
  if (empty) n = 0;
  else if (overflow) return TSMR_ENOMEM; /* MGR.CREATE.5 */
  if (numel) *numel = n;
  if (nbytes) *nbytes = (size_t)n * size;
  return 0;
}

void tsmr__storage_put(tsmr_ctx *ctx, struct tsmr__storage *s) {
  TSMR_ASSERT(s->refs > 0 && "storage refcount UAF");
  if (--s->refs) return;
  TSMR_ASSERT(!s->orphaned);
  TSMR_ASSERT(ctx->live_bytes >= s->nbytes && "live bytes underflow");
  ctx->live_bytes -= s->nbytes;
  if (s->ext_del) { /* an aliased import: its deleter runs after unlocking */
    s->next_free = ctx->dlx_pending;
    ctx->dlx_pending = s;
    return;
  }
  if (s->data && s->data != (void *)s->small.bytes) ctx->be->free_mem(s->data);
  s->data = NULL;
  if (s->embedded) {
    /* its tensor was released first (a view or an export held on): the record is free
     * now; while the tensor lives, its release recycles the record (res_free) */
    struct tsmr__tensor *t = tsmr__own_head(s);
    if (t->handle == TSMR_NONE) tsmr__rec_push(&ctx->free_tensors, t);
    return;
  }
  s->next_free = ctx->free_storages;
  ctx->free_storages = s;
}

int tsmr__storage_wrap(tsmr_ctx *ctx, void *data, void *ext, void (*ext_del)(void *),
                       struct tsmr__storage **out) {
  (void)ctx;
  struct tsmr__storage *s = tsmr__alloc(sizeof *s); /* never recycled: see internal.h */
  if (!s) return TSMR_ENOMEM;
  s->refs = 1;
  s->nbytes = 0; /* the producer's memory (DLP.MGR.3) */
  s->data = data;
  s->next_free = NULL;
  s->ext = ext;
  s->ext_del = ext_del;
  s->orphaned = 0;
  s->embedded = 0;
  *out = s;
  return 0;
}

/* Gives s (refs 0, no data; ext, ext_del, orphaned and embedded already set) nbytes of
 * memory, zero-filled when zero: refs 1, counted in live bytes. On failure s is as it
 * was. Inline: on the create path it is most of a tensor's storage work. */
static inline int storage_fill(tsmr_ctx *ctx, struct tsmr__storage *s, size_t nbytes,
                               int zero) {
  s->nbytes = nbytes;
  s->data = NULL;
  if (nbytes == 0) {
    /* empty tensor: no device memory */
  } else if (ctx->be->host_memory && nbytes <= sizeof s->small.bytes) {
    s->data = s->small.bytes;
    if (zero) memset(s->small.bytes, 0, sizeof s->small.bytes); /* a few stores, no call */
  } else {
    /* whole 32-bit words, so that fill32 zeroes a tensor of 1- or 2-byte elements too */
    size_t words = (nbytes + 3) / 4;
    int rc = ctx->be->alloc(words * 4, &s->data);
    if (rc == 0 && zero) {
      rc = ctx->be->fill32(s->data, (int64_t)words, 0);
      if (rc) ctx->be->free_mem(s->data);
    }
    if (rc) {
      s->data = NULL;
      return rc;
    }
  }
  s->refs = 1;
  ctx->live_bytes += nbytes;
  return 0;
}

int tsmr__storage_new(tsmr_ctx *ctx, size_t nbytes, int zero,
                      struct tsmr__storage **out) {
  struct tsmr__storage *s = ctx->free_storages;
  if (s) ctx->free_storages = s->next_free;
  else if (!(s = tsmr__alloc(sizeof *s))) return TSMR_ENOMEM;
  s->ext = NULL;
  s->ext_del = NULL;
  s->orphaned = 0;
  s->embedded = 0;
  int rc = storage_fill(ctx, s, nbytes, zero);
  if (rc) {
    s->next_free = ctx->free_storages;
    ctx->free_storages = s;
    return rc;
  }
  *out = s;
  return 0;
}

/* A new slab of records (internal.h), the context's newest: RETURN 0 or TSMR_ENOMEM.
 * Its header takes the first line, its heads and bodies the rest. */
static int slab_new(tsmr_ctx *ctx) {
  struct tsmr__rec_slab *s = tsmr__map_aligned(TSMR__SLAB_BYTES);
  if (!s) return TSMR_ENOMEM;
  _Static_assert(sizeof *s <= 64, "a slab's header is one line");
  _Static_assert(TSMR__SLAB_BODIES % 64 == 0 &&
                     TSMR__SLAB_BODIES + TSMR__SLAB_RECS * sizeof(struct tsmr__tensor_body) <=
                         TSMR__SLAB_BYTES,
                 "a slab's heads and bodies fit it, the bodies on a line");
  s->next = ctx->slabs;
  atomic_init(&s->refs, 1);
  ctx->slabs = s;
  ctx->slab_next = (struct tsmr__tensor *)(void *)((char *)s + 64);
  ctx->slab_left = TSMR__SLAB_RECS;
  return 0;
}

/* A new record in the state every record on ctx->free_tensors is in (res_free leaves it
 * so): linked nowhere, no holder, borrow stack, scope, composite or components, its own
 * storage unreferenced and empty, so that res_new writes only what differs between
 * tensors. NULL: ENOMEM. */
static struct tsmr__tensor *tensor_fresh(tsmr_ctx *ctx) {
  if (!ctx->slab_left && slab_new(ctx)) return NULL;
  struct tsmr__tensor *t = ctx->slab_next++;
  ctx->slab_left--;
  struct tsmr__tensor_body *b = tsmr__body(t);
  t->node.next = t->node.prev = TSMR__POISON1; /* linked nowhere */
  b->snode.next = b->snode.prev = TSMR__POISON1;
  t->holder = NULL;
  t->borrows = NULL;
  t->scope = NULL;
  t->rkind = TSMR__RES_PLAIN;
  t->ckind = 0;
  b->parent = NULL;
  b->comps = NULL;
  b->n_comps = 0;
  b->own.refs = 0;
  b->own.data = NULL;
  b->own.ext = NULL;
  b->own.ext_del = NULL;
  b->own.orphaned = 0;
  b->own.embedded = 1;
  t->own_sole = 0;
  t->own_idle = 1; /* own holds nothing */
  t->own_bytes = 0;
  return t;
}

/* A fresh resource struct with its slot and handle, linked nowhere, as s says. s->st:
 * IN, shared storage (a ref is taken), or NULL to allocate nbytes (zero-filled when
 * s->zero), or ignored when nbytes is (size_t)-1 (a composite: no storage at all). */
static int res_new(tsmr_ctx *ctx, const struct tsmr__tensor_spec *s, size_t nbytes,
                   struct tsmr__tensor **out) {
  struct tsmr__storage *st = s->st;
  struct tsmr__thread *cur = ctx->cur;
  int rc;
  /* the calling thread's own slots and records first, so that its lane can release
   * what it makes here (lock.h) */
  uint32_t *slots = cur && cur->slot_head ? &cur->slot_head : NULL;
  if (!slots && (rc = tsmr__tslot_ready(&ctx->tensors))) return rc;
  struct tsmr__tensor **recs = cur && cur->lane_recs ? &cur->lane_recs : &ctx->free_tensors;
  struct tsmr__tensor *t = *recs ? tsmr__rec_pop(recs) : tensor_fresh(ctx);
  if (!t) return TSMR_ENOMEM;
  struct tsmr__tensor_body *b = tsmr__body(t);
  if (nbytes == (size_t)-1) {
    st = NULL;
  } else if (st) {
    tsmr__storage_ref(st);
  } else if ((rc = storage_fill(ctx, st = &b->own, nbytes, s->zero))) {
    tsmr__rec_push(&ctx->free_tensors, t);
    return rc;
  } else {
    t->own_sole = !st->data || st->data == (void *)st->small.bytes;
    t->own_idle = 0;
    t->own_bytes = t->own_sole ? (uint8_t)nbytes : 0; /* at most the inline buffer's 64 */
  }
  /* links, holder, borrows, scope and the composite fields are clean already (see
   * tensor_fresh); ckind is also a plain tensor's mark in composite.c, so it is set */
  t->st = st;
  t->dtype = s->dtype;
  t->ndim = s->ndim;
  for (int i = 0; i < s->ndim; i++) b->shape[i] = s->shape[i];
  b->numel = s->numel;
  t->ckind = 0;
  uint32_t idx = slots ? tsmr__tslot_pop(&ctx->tensors, slots, t)
                       : tsmr__tslot_alloc(&ctx->tensors, t);
  t->handle = tsmr__mkhandle(TSMR__KIND_TENSOR, idx, ctx->tensors.slots[idx].gen);
  *out = t;
  return 0;
}

int tsmr__tensor_alloc(tsmr_ctx *ctx, const struct tsmr__tensor_spec *s,
                       struct tsmr__tensor **out) {
  return res_new(ctx, s, (size_t)s->numel * tsmr__dtype_size(s->dtype), out);
}

int tsmr__composite_alloc(tsmr_ctx *ctx, int ckind, int n_comps,
                          struct tsmr__tensor **out) {
  struct tsmr__tensor **comps = tsmr__alloc((size_t)n_comps * sizeof *comps);
  struct tsmr__tensor *t;
  if (!comps) return TSMR_ENOMEM;
  const struct tsmr__tensor_spec none = {0, 0, NULL, 0, NULL, 0};
  int rc = res_new(ctx, &none, (size_t)-1, &t);
  if (rc) {
    tsmr__free(comps);
    return rc;
  }
  for (int i = 0; i < n_comps; i++) comps[i] = NULL;
  t->rkind = TSMR__RES_COMPOSITE;
  t->ckind = ckind;
  tsmr__body(t)->comps = comps;
  tsmr__body(t)->n_comps = n_comps;
  *out = t;
  return 0;
}

int tsmr__tensor_create(tsmr_ctx *ctx, struct tsmr__mgr *m,
                        const struct tsmr__tensor_spec *s, struct tsmr__tensor **out) {
  int rc = tsmr__tensor_alloc(ctx, s, out);
  if (rc == 0) tsmr__tensor_link(ctx, *out, m);
  return rc;
}

/* The common release, decided once: a plain tensor held by a manager (not borrowed,
 * in no scope) whose storage is its own with one reference, or another's that keeps
 * further references (a view, the import of an own export). The same steps as
 * res_free_all below, without the branches this case never takes: RETURN 1 when done,
 * 0 (nothing touched) for any other resource, which res_free_all then releases. A bad
 * refcount (0) goes there too, to its assertion. ts: the thread it counts on (NULL:
 * none); recs: where the record goes; bytes: the live-byte count it leaves, which a
 * lane's (lane 1) may take below 0 (lock.h); unlink: 0 when the caller unlinks t from
 * its holder's list itself (tsmr__mgr_release_owned). */
__attribute__((always_inline)) /* its callers save no registers for it */
static inline int res_free_plain(tsmr_ctx *ctx, struct tsmr__tensor *t, int count,
                                 struct tsmr__thread *ts, struct tsmr__tensor **recs,
                                 uint64_t *bytes, int lane, int unlink) {
  struct tsmr__storage *s = t->st;
  struct tsmr__mgr *m = t->holder;
  if (t->rkind != TSMR__RES_PLAIN || !m || t->borrows || t->scope || !s) return 0;
  /* own held alone (read in the head, not in own), or a storage that keeps further
   * references; own held alone but not known so, another's last reference and a bad
   * count (0) are res_free_all's */
  int sole = t->own_sole;
  uint64_t refs = sole ? 1 : s->refs;
  if (!sole && refs <= 1) return 0;
  if (count && ts) ts->st[0].d_out++;
  if (unlink) { /* else the caller unlinks t and counts it off */
    tsmr__list_del(&t->node);
    TSMR_ASSERT(m->n_owned > 0);
    m->n_owned--;
  }
  t->holder = NULL;
  if (sole) { /* tsmr__storage_put of own while its tensor lives, own left as it was */
    TSMR_ASSERT((lane || *bytes >= t->own_bytes) && "live bytes underflow");
    *bytes -= t->own_bytes;
    t->own_sole = 0;
    t->own_idle = 1;
  } else {
    s->refs = refs - 1;
  }
  t->st = NULL;
  tsmr__tslot_release(&ctx->tensors, tsmr__h_slot(t->handle), TSMR__RES_PLAIN);
  t->handle = TSMR_NONE;
  if (tsmr__own_refs(t)) return 1; /* a view or an export holds on: see tsmr__storage_put */
  tsmr__rec_push(recs, t);
  return 1;
}

static void res_free_all(tsmr_ctx *ctx, struct tsmr__tensor *t, int count);

/* The general release (res_free_all) is out of line and cold, so that the common
 * case's callers (the public release, a manager's close) save no registers for it. */
static inline void res_free(tsmr_ctx *ctx, struct tsmr__tensor *t, int count) {
  if (__builtin_expect(
          !res_free_plain(ctx, t, count, ctx->cur, &ctx->free_tensors, &ctx->live_bytes, 0, 1),
          0))
    res_free_all(ctx, t, count);
}

__attribute__((noinline, cold))
static void res_free_all(tsmr_ctx *ctx, struct tsmr__tensor *t, int count) {
  if (t->rkind == TSMR__RES_COMPOSITE) {
    struct tsmr__tensor_body *b = tsmr__body(t);
    for (int i = 0; i < b->n_comps; i++) /* SCOPE.STAT.3: disposed_outside */
      if (b->comps[i]) res_free_all(ctx, b->comps[i], count);
    tsmr__free(b->comps);
    b->comps = NULL;
    b->n_comps = 0;
  }
  if (count && ctx->cur) {
    struct tsmr__stats *st = &ctx->cur->st[t->rkind == TSMR__RES_COMPOSITE];
    if (t->scope) st->d_in++;
    else st->d_out++;
  }
  if (t->scope) tsmr__scope_del(t); /* SCOPE.REL.1 */
  if (t->node.next != TSMR__POISON1) tsmr__tensor_unlink(ctx, t);
  t->holder = NULL;
  if (t->borrows) tsmr__borrow_clear(ctx, t);
  if (t->st) tsmr__storage_put(ctx, t->st); /* own's fields are exact unless idle */
  t->own_sole = 0;
  t->st = NULL;
  tsmr__tslot_release(&ctx->tensors, tsmr__h_slot(t->handle), t->rkind);
  t->handle = TSMR_NONE;
  if (t->rkind != TSMR__RES_PLAIN) { /* back to the free list's state (tensor_fresh) */
    tsmr__body(t)->parent = NULL;
    t->rkind = TSMR__RES_PLAIN;
  }
  if (tsmr__own_refs(t)) return; /* a view or an export holds on: see tsmr__storage_put */
  tsmr__rec_push(&ctx->free_tensors, t);
}

void tsmr__tensor_release(tsmr_ctx *ctx, struct tsmr__tensor *t) { res_free(ctx, t, 1); }

void tsmr__mgr_release_owned(tsmr_ctx *ctx, struct tsmr__mgr *m) {
  tsmr__list *end = &m->owned;
  struct tsmr__thread *ts = ctx->cur;
  while (!tsmr__list_empty(end)) {
    /* a run of common releases down the list, the next link read before each (the
     * release reuses it), unlinked from the list at once when the run ends; what they
     * count is kept in registers until then */
    tsmr__list *n = end->next;
    struct tsmr__tensor *recs = ctx->free_tensors;
    uint64_t bytes = ctx->live_bytes, run = 0;
    while (n != end) {
      tsmr__list *next = n->next;
      if (!res_free_plain(ctx, tsmr__container_of(n, struct tsmr__tensor, node), 0, ts,
                          &recs, &bytes, 0, 0))
        break;
      run++;
      n = next;
    }
    ctx->free_tensors = recs;
    ctx->live_bytes = bytes;
    if (ts) ts->st[0].d_out += run;
    TSMR_ASSERT(m->n_owned >= run);
    m->n_owned -= run;
    end->next = n;
    n->prev = end;
    if (n != end) res_free_all(ctx, tsmr__container_of(n, struct tsmr__tensor, node), 1);
  }
}

void tsmr__tensor_discard(tsmr_ctx *ctx, struct tsmr__tensor *t) { res_free(ctx, t, 0); }

/* ---- public ------------------------------------------------------------------ */

static int tensor_new_l(tsmr_ctx *ctx, tsmr_handle mh, const struct tsmr_tensor_desc *desc,
                    const void *data, tsmr_handle *out) {
  struct tsmr__mgr *m;
  struct tsmr__tensor *t;
  int64_t numel = 0;
  size_t nbytes = 0;
  int rc;
  if (!ctx || !desc || !out) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, NULL))) return rc;
  int shape_rc = tsmr__shape_check(desc->dtype, desc->ndim, desc->shape, &numel, &nbytes);
  if (shape_rc == TSMR_EINVAL) return shape_rc; /* EINVAL first (ERR.ORDER.1) */
  if (!m) return TSMR_ECLOSED;
  if ((rc = tsmr__mgr_accepts(m))) return rc;
  if (shape_rc) return shape_rc; /* too large to allocate: ENOMEM */
  const struct tsmr__tensor_spec s = {desc->dtype, desc->ndim, desc->shape, numel, NULL,
                                      !data};
  rc = tsmr__tensor_create(ctx, m, &s, &t);
  if (rc) return rc;
  if (data && nbytes) {
    if (ctx->be->host_memory) {
      memcpy(t->st->data, data, nbytes);
    } else if ((rc = ctx->be->copy_h2d(t->st->data, data, nbytes))) {
      tsmr__tensor_discard(ctx, t);
      return rc;
    }
  }
  tsmr__res_register(ctx, t);
  *out = t->handle;
  return 0;
}

static int tensor_desc_l(tsmr_ctx *ctx, tsmr_handle th, struct tsmr_tensor_desc *out) {
  struct tsmr__tensor *t;
  int rc;
  if (!ctx || !out) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  if (tsmr__res_kind(ctx, th, t) == TSMR__RES_COMPOSITE) return TSMR_EINVAL;
  if (!t) return TSMR_ERELEASED;
  memset(out, 0, sizeof *out);
  out->dtype = t->dtype;
  out->ndim = t->ndim;
  const int64_t *shape = tsmr__body(t)->shape;
  for (int i = 0; i < t->ndim; i++) out->shape[i] = shape[i];
  return 0;
}

static int tensor_read_l(tsmr_ctx *ctx, tsmr_handle th, void *dst, size_t cap) {
  struct tsmr__tensor *t;
  int rc;
  if (!ctx || (!dst && cap)) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  if (tsmr__res_kind(ctx, th, t) == TSMR__RES_COMPOSITE) return TSMR_EINVAL;
  if (!t) return TSMR_ERELEASED;
  size_t n = (size_t)tsmr__tensor_nbytes(t);
  if (cap < n) return TSMR_EINVAL;
  if (n == 0) return 0;
  if (ctx->be->host_memory) {
    memcpy(dst, t->st->data, n);
    return 0;
  }
  return ctx->be->copy_d2h(dst, t->st->data, n);
}

static int res_release_l(tsmr_ctx *ctx, tsmr_handle th) {
  struct tsmr__tensor *t;
  int rc;
  if (!ctx) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  if (tsmr__res_kind(ctx, th, t) == TSMR__RES_COMPONENT) return TSMR_EINVAL; /* COMP.UNIT.3 */
  if (t) tsmr__tensor_release(ctx, t); /* releasing a released tensor: MGR.REL.2 */
  return 0;
}

/* MGR.ADOPT.1: the tensor struct stays where it is (holder list, borrow stack, scope
 * members, storage); only its slot changes, and the old slot's generation moves on. */
static int res_adopt_l(tsmr_ctx *ctx, tsmr_handle th, tsmr_handle *out) {
  struct tsmr__tensor *t;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  if (tsmr__res_kind(ctx, th, t) != TSMR__RES_PLAIN) return TSMR_EINVAL; /* COMP.UNIT.3 */
  if (!t) return TSMR_ERELEASED;
  if ((rc = tsmr__tslot_ready(&ctx->tensors))) return rc;
  uint32_t old = tsmr__h_slot(t->handle);
  uint32_t idx = tsmr__tslot_alloc(&ctx->tensors, t);
  t->handle = tsmr__mkhandle(TSMR__KIND_TENSOR, idx, ctx->tensors.slots[idx].gen);
  tsmr__tslot_release(&ctx->tensors, old, TSMR__RES_PLAIN);
  *out = t->handle;
  return 0;
}

static int res_info_l(tsmr_ctx *ctx, tsmr_handle th, struct tsmr_res_info *out) {
  struct tsmr__tensor *t;
  int rc;
  if (!ctx || !out) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, th, &t))) return rc;
  memset(out, 0, sizeof *out);
  if (!t) return 0;
  const struct tsmr__tensor *h = tsmr__holder_res(t); /* COMP.UNIT.1 */
  out->valid = 1;
  out->borrowed = h->borrows != NULL;
  out->owner = h->holder ? h->holder->handle : TSMR_NONE;
  out->lender = h->borrows ? h->borrows->lender : TSMR_NONE;
  if (t->rkind == TSMR__RES_COMPOSITE) {
    const struct tsmr__tensor_body *b = tsmr__body(t);
    for (int i = 0; i < b->n_comps; i++)
      if (b->comps[i]) out->nbytes += tsmr__tensor_nbytes(b->comps[i]);
  } else {
    out->nbytes = tsmr__tensor_nbytes(t);
  }
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

/* The common create, decided once: a host tensor of at most the inline buffer's 64
 * bytes, none empty, in an open manager that is not capped, with a recycled record and
 * a free slot at hand. Such a call passes every check of tensor_new_l and gets what it
 * would make; any other call (a bad one included, which must get tensor_new_l's error
 * in its order, ERR.ORDER.1) RETURNs NULL having changed nothing but the unused shape
 * of the free record, and goes there. The extents' check is one OR per dimension: each
 * extent - 1 is below 64 exactly when the OR of them all is, and a product of eight
 * such extents cannot overflow. */
/* Where a create takes its record and slot and counts its bytes: the context's lists
 * and count, or a thread's own (lock.h). */
struct pool {
  struct tsmr__tensor **recs;
  uint32_t *slots;
  uint64_t *bytes;
};

/* ts: the calling thread's state; lane: 1 for a lane call (lock.h), which makes only
 * in a manager whose lane owner ts is (tsmr__mgr.lane_owner) and otherwise declines;
 * any other call makes ts the manager's lane owner. */
__attribute__((always_inline)) /* specialized for each pool: its callers save no registers */
static inline struct tsmr__tensor *tensor_new_fast(tsmr_ctx *ctx, struct tsmr__thread *ts,
                                                   struct pool p, int lane, tsmr_handle mh,
                                                   const struct tsmr_tensor_desc *desc) {
  uint32_t idx = tsmr__h_slot(mh);
  if (tsmr__h_kind(mh) != TSMR__KIND_MGR || idx >= ctx->mgrs.len ||
      tsmr__h_gen(mh) != TSMR__MGR_GEN)
    return NULL;
  struct tsmr__mgr *m = ctx->mgrs.slots[idx].obj;
  struct tsmr__tensor *t = *p.recs;
  if (!m || m->state != TSMR__OPEN || m->capped || !t || !*p.slots ||
      !ctx->be->host_memory || (lane && m->lane_owner != ts))
    return NULL;
  unsigned ndim = (unsigned)desc->ndim;
  if (ndim > TSMR_MAX_DIMS) return NULL;
  struct tsmr__tensor_body *b = tsmr__body(t);
  uint64_t n = 1, ored = 0;
  for (unsigned i = 0; i < ndim; i++) {
    uint64_t e = (uint64_t)desc->shape[i];
    ored |= e - 1;
    n *= e;
    b->shape[i] = (int64_t)e;
  }
  size_t nbytes = (size_t)n * tsmr__dtype_size(desc->dtype); /* 0: no such dtype */
  if (ored >= sizeof b->own.small.bytes || nbytes - 1 >= sizeof b->own.small.bytes)
    return NULL;
  /* res_new + storage_fill + tsmr__tensor_link + tsmr__res_register of this case */
  *p.recs = t->next_free; /* linked below */
  b->own.nbytes = nbytes;
  b->own.data = b->own.small.bytes;
  memset(b->own.small.bytes, 0, sizeof b->own.small.bytes); /* a few stores, no call */
  b->own.refs = 1;
  t->own_sole = 1;
  t->own_idle = 0;
  t->own_bytes = (uint8_t)nbytes; /* 1 to 64 */
  *p.bytes += nbytes;
  t->st = &b->own;
  t->dtype = desc->dtype;
  t->ndim = (int)ndim;
  b->numel = (int64_t)n;
  t->ckind = 0;
  uint32_t slot = tsmr__tslot_pop(&ctx->tensors, p.slots, t);
  t->handle = tsmr__mkhandle(TSMR__KIND_TENSOR, slot, ctx->tensors.slots[slot].gen);
  t->holder = m;
  tsmr__list_add_tail(&m->owned, &t->node); /* a recycled record is never borrowed */
  m->n_owned++;
  if (!lane) m->lane_owner = ts;
  tsmr__res_register_on(ts, t);
  return t;
}

/* The two calls of a scoped create + release take the common case inline and
 * release the lock; any other call goes to the general path (flattened, as both calls
 * were before) by a tail call, and so does the entry of a thread the lock is not
 * biased toward (lock.h), which then takes the common case too. So the common case
 * saves no registers and makes no call (bench/README.md). It queues no foreign deleter
 * (only the last reference of an aliased import does, tsmr__storage_put) and every
 * leave drains that list, so it releases the lock without looking there. */

/* Releases the lock after a common case; RETURN 0. Only the mutex's release is a call
 * (out of line, a tail call), so the biased one needs no saved register either. */
__attribute__((noinline))
static int unlock_ok(tsmr_ctx *ctx) {
  tsmr__lock_release(&ctx->lock);
  return 0;
}
static inline int leave_ok(tsmr_ctx *ctx) {
  if (!ctx->lock.held_by_owner) return unlock_ok(ctx);
  tsmr__lock_release(&ctx->lock);
  return 0;
}

/* The general create, the lock held (tensor_new_fast declined). */
__attribute__((noinline, flatten))
static int tensor_new_held(tsmr_ctx *ctx, tsmr_handle mh, const struct tsmr_tensor_desc *desc,
                           const void *data, tsmr_handle *out) {
  int rc = tensor_new_l(ctx, mh, desc, data, out);
  tsmr__leave(ctx);
  return rc;
}

/* A create, the lock held. */
static inline int tensor_new_in(tsmr_ctx *ctx, tsmr_handle mh,
                                const struct tsmr_tensor_desc *desc, const void *data,
                                tsmr_handle *out) {
  struct tsmr__tensor *t;
  const struct pool shared = {&ctx->free_tensors, &ctx->tensors.free_head, &ctx->live_bytes};
  if (!desc || !out || data || !(t = tensor_new_fast(ctx, ctx->cur, shared, 0, mh, desc)))
    return tensor_new_held(ctx, mh, desc, data, out);
  *out = t->handle;
  return leave_ok(ctx);
}

/* The calling thread's state in ctx when its one-entry cache holds it (scope.c), for a
 * lane call; NULL otherwise (its first call, or another context's last). */
static inline struct tsmr__thread *lane_thread(const tsmr_ctx *ctx) {
  return tsmr__tls.serial == ctx->serial ? tsmr__tls.ts : NULL;
}

/* A lane call (lock.h): the thread ts inside its lane; RETURN 1 when it did its work,
 * 0 when it declined, having touched nothing. */
typedef int (*lane_fn)(tsmr_ctx *ctx, struct tsmr__thread *ts, const void *args);

/* The entry of a create or a release by a thread the lock is not biased toward: call
 * inside the thread's lane when the lanes are open and want (the call may take one),
 * else the mutex (tsmr__enter's slow half), going back to the lane when the lanes
 * opened while it waited there. RETURN 1 when call did the work; else 0 with the mutex
 * held (*rc 0) or nothing held (*rc the error). Inlined with call a constant. */
__attribute__((always_inline))
static inline int lane_or_mutex(tsmr_ctx *ctx, int want, lane_fn call, const void *args,
                                int *rc) {
  struct tsmr__thread *ts = lane_thread(ctx);
  int lane = want && ts;
  do {
    if (lane && tsmr__lock_lane_enter(&ctx->lock, &ts->lane)) {
      int done = call(ctx, ts, args);
      tsmr__lock_lane_leave(&ts->lane);
      if (done) {
        ts->lane_calls++;
        return 1;
      }
      lane = 0; /* declined: the mutex, closing the lanes */
    }
  } while ((*rc = tsmr__enter_slow(ctx, &tsmr__tls, lane)) == TSMR__TO_LANES);
  return 0;
}

/* Before a create under the mutex, once lanes may open: the calling thread gets slots
 * of its own when it has none left (64, then twice its last grant, 4,096 at most), so
 * that its lane can create and release what it makes here. Best effort: without them
 * the create takes the context's slots. */
static void lane_stock(tsmr_ctx *ctx, struct tsmr__thread *cur) {
  if (cur->slot_head || tsmr__alloc_armed() ||
      atomic_load_explicit(&ctx->lock.owner, memory_order_relaxed) != TSMR__LOCK_REVOKED)
    return;
  uint32_t n = cur->grant ? cur->grant * 2 : TSMR__SLOT_BLOCK;
  if (n > 4096) n = 4096;
  if (tsmr__tslot_grant(&ctx->tensors, &cur->slot_head, n) == 0) cur->grant = n;
}

/* A create's arguments, for lane_create. */
struct create_args {
  tsmr_handle mh;
  const struct tsmr_tensor_desc *desc;
  tsmr_handle *out;
};

/* A lane create (lane_fn): the common case in a manager ts works in, from ts's own
 * records, slots and byte count. */
static inline int lane_create(tsmr_ctx *ctx, struct tsmr__thread *ts, const void *args) {
  const struct create_args *a = args;
  const struct pool own = {&ts->lane_recs, &ts->slot_head, &ts->lane.bytes};
  struct tsmr__tensor *t = tensor_new_fast(ctx, ts, own, 1, a->mh, a->desc);
  if (!t) return 0;
  *a->out = t->handle; /* inside: once out, another call may release t */
  return 1;
}

/* A create by a thread the lock is not biased toward: in its lane (lane_create), else
 * under the mutex, where the common case takes the thread's own slots and records
 * when it has them. */
__attribute__((noinline))
static int tensor_new_locked(tsmr_ctx *ctx, tsmr_handle mh,
                             const struct tsmr_tensor_desc *desc, const void *data,
                             tsmr_handle *out) {
  const struct create_args a = {mh, desc, out};
  struct tsmr__tensor *t;
  int rc;
  if (lane_or_mutex(ctx, desc && out && !data, lane_create, &a, &rc)) return 0;
  if (rc) return rc;
  struct tsmr__thread *cur = ctx->cur;
  lane_stock(ctx, cur);
  const struct pool p = {cur->lane_recs ? &cur->lane_recs : &ctx->free_tensors,
                         cur->slot_head ? &cur->slot_head : &ctx->tensors.free_head,
                         &ctx->live_bytes};
  if (desc && out && !data && (t = tensor_new_fast(ctx, cur, p, 0, mh, desc)))
    *out = t->handle;
  else
    rc = tensor_new_l(ctx, mh, desc, data, out);
  tsmr__lock_tally(&ctx->lock);
  tsmr__leave(ctx);
  return rc;
}

int tsmr_tensor_new(tsmr_ctx *ctx, tsmr_handle mh, const struct tsmr_tensor_desc *desc,
                    const void *data, tsmr_handle *out) {
  if (!ctx) return TSMR_EINVAL;
  if (!tsmr__enter_owner(ctx)) return tensor_new_locked(ctx, mh, desc, data, out);
  return tensor_new_in(ctx, mh, desc, data, out);
}

int tsmr_tensor_desc(tsmr_ctx *ctx, tsmr_handle th, struct tsmr_tensor_desc *out) {
  TSMR__LOCKED(tensor_desc_l(ctx, th, out));
}

int tsmr_tensor_read(tsmr_ctx *ctx, tsmr_handle th, void *dst, size_t cap) {
  TSMR__LOCKED(tensor_read_l(ctx, th, dst, cap));
}

/* The general release, the lock held (res_free_plain declined). */
__attribute__((noinline, flatten))
static int res_release_held(tsmr_ctx *ctx, tsmr_handle th) {
  int rc = res_release_l(ctx, th);
  tsmr__leave(ctx);
  return rc;
}

/* A release, the lock held: of a live tensor's handle (tsmr__tensor_get) of the common
 * case (res_free_plain), or the general one. */
static inline int res_release_in(tsmr_ctx *ctx, tsmr_handle th) {
  uint32_t idx = tsmr__h_slot(th);
  if (tsmr__h_kind(th) != TSMR__KIND_TENSOR || idx >= ctx->tensors.len ||
      tsmr__h_gen(th) != ctx->tensors.slots[idx].gen || !ctx->tensors.slots[idx].obj ||
      !res_free_plain(ctx, ctx->tensors.slots[idx].obj, 1, ctx->cur, &ctx->free_tensors,
                      &ctx->live_bytes, 0, 1))
    return res_release_held(ctx, th);
  return leave_ok(ctx);
}

/* A lane release (lane_fn; args: the handle): of the common case (res_free_plain)
 * whose slot is of a block of ts's, whose storage nothing else references and whose
 * holder ts works in; so it touches nothing another lane does. */
static inline int lane_release(tsmr_ctx *ctx, struct tsmr__thread *ts, const void *args) {
  const tsmr_handle th = *(const tsmr_handle *)args;
  const struct tsmr__table *tab = &ctx->tensors;
  uint32_t idx = tsmr__h_slot(th);
  if (tsmr__h_kind(th) != TSMR__KIND_TENSOR || idx >= tab->len || !tab->homes ||
      tab->homes[idx >> TSMR__SLOT_BLOCK_SHIFT] != &ts->slot_head)
    return 0;
  const struct tsmr__slot *slot = &tab->slots[idx];
  struct tsmr__tensor *t = slot->obj;
  if (tsmr__h_gen(th) != slot->gen || !t || !t->own_sole || !t->holder ||
      t->holder->lane_owner != ts)
    return 0;
  return res_free_plain(ctx, t, 1, ts, &ts->lane_recs, &ts->lane.bytes, 1, 1);
}

/* A release by a thread the lock is not biased toward: in its lane (lane_release),
 * else under the mutex. */
__attribute__((noinline))
static int res_release_locked(tsmr_ctx *ctx, tsmr_handle th) {
  int rc;
  if (lane_or_mutex(ctx, 1, lane_release, &th, &rc)) return 0;
  if (rc) return rc;
  /* the records of a thread with slots of its own stock its lane (lane_stock) */
  struct tsmr__thread *cur = ctx->cur;
  struct tsmr__tensor *t;
  if (tsmr__tensor_get(ctx, th, &t) || !t ||
      !res_free_plain(ctx, t, 1, cur, cur->grant ? &cur->lane_recs : &ctx->free_tensors,
                      &ctx->live_bytes, 0, 1))
    rc = res_release_l(ctx, th);
  tsmr__lock_tally(&ctx->lock);
  tsmr__leave(ctx);
  return rc;
}

int tsmr_res_release(tsmr_ctx *ctx, tsmr_handle th) {
  if (!ctx) return TSMR_EINVAL;
  if (!tsmr__enter_owner(ctx)) return res_release_locked(ctx, th);
  return res_release_in(ctx, th);
}

int tsmr_res_adopt(tsmr_ctx *ctx, tsmr_handle th, tsmr_handle *out) {
  TSMR__LOCKED(res_adopt_l(ctx, th, out));
}

int tsmr_res_info(tsmr_ctx *ctx, tsmr_handle th, struct tsmr_res_info *out) {
  TSMR__LOCKED(res_info_l(ctx, th, out));
}
