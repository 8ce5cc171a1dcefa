/*
 * impl/src/composite.c: composites: packed sequences (PyTorch pack_sequence) and
 * tensor lists. Clauses: COMP.UNIT.1-4, COMP.PACK.1-2, COMP.LIST.1-2, SCOPE.STAT.3,
 * MGR.OP.1, MGR.OP.4, ERR.ORDER.1, ERR.ATOMIC.1.
 *
 * A composite is a resource struct (rkind COMPOSITE) on its holder's list and in its
 * scope, with no storage; its components are tensor structs that sit on no list and
 * point back at it (impl/src/internal.h). Everything a constructor makes is built
 * aside and linked only once nothing can fail any more, so a refused or failed call
 * leaves no trace (ERR.ATOMIC.1).
 */
#include <string.h>

#include "internal.h"

struct tsmr_len_idx {
  int64_t len;
  int idx;
};

/* Decreasing length, ties by increasing index: a total order, so qsort is stable. */
static int len_idx_cmp(const void *pa, const void *pb) {
  const struct tsmr_len_idx *a = pa, *b = pb;
  if (a->len != b->len) return a->len > b->len ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Copies n host bytes into a component's storage. */
static int put_host(tsmr_ctx *ctx, struct tsmr__tensor *t, const void *src,
                    size_t n) {
  if (ctx->be->host_memory) {
    memcpy(t->st->data, src, n);
    return 0;
  }
  return ctx->be->copy_h2d(t->st->data, src, n);
}

/* A pack's layout, built aside (COMP.PACK.1); the arrays are owned by it and freed
 * with pack_work_free. */
struct pack_work {
  struct tsmr__tensor **in; /* the sequences, in argument order */
  struct tsmr_len_idx *li;  /* lengths, longest first */
  int32_t *sorted, *unsorted, *bs;
  int64_t *off, total, maxlen;
};

/* data[off[t] + j] = seqs[sorted[j]][t] (w's arrays, n sequences): on the host
 * directly; on a device by one gather over the concatenated sequences (all copies stay
 * on the device). */
static int pack_data(tsmr_ctx *ctx, struct tsmr__tensor *data,
                     const struct pack_work *w, int n) {
  struct tsmr__tensor **in = w->in;
  const int32_t *sorted = w->sorted;
  const int64_t *off = w->off, total = w->total;
  const struct tsmr__backend *be = ctx->be;
  if (be->host_memory) {
    float *dst = data->st->data;
    for (int j = 0; j < n; j++) {
      const struct tsmr__tensor *sq = in[sorted[j]];
      const float *src = sq->st->data;
      for (int64_t t = 0, len = tsmr__body(sq)->numel; t < len; t++) dst[off[t] + j] = src[t];
    }
    return 0;
  }
  size_t bytes = (size_t)total * sizeof(float);
  int rc = 0;
  if (total <= INT32_MAX && be->gather) {
    void *cat = NULL, *idx_dev = NULL;
    int32_t *idx = tsmr__alloc((size_t)total * sizeof *idx);
    int64_t *start = tsmr__alloc((size_t)n * sizeof *start);
    if (!idx || !start) rc = TSMR_ENOMEM;
    if (!rc) rc = be->alloc(bytes, &cat);
    if (!rc) rc = be->alloc((size_t)total * sizeof *idx, &idx_dev);
    int64_t pos = 0;
    for (int i = 0; !rc && i < n; i++) { /* concatenate, device to device */
      start[i] = pos;
      rc = be->copy_d2d((float *)cat + pos, in[i]->st->data,
                        (size_t)tsmr__body(in[i])->numel * sizeof(float));
      pos += tsmr__body(in[i])->numel;
    }
    for (int j = 0; !rc && j < n; j++)
      for (int64_t t = 0; t < tsmr__body(in[sorted[j]])->numel; t++)
        idx[off[t] + j] = (int32_t)(start[sorted[j]] + t);
    if (!rc) rc = be->copy_h2d(idx_dev, idx, (size_t)total * sizeof *idx);
    if (!rc) rc = be->gather(data->st->data, cat, idx_dev, total, sizeof(float));
    if (cat) be->free_mem(cat);
    if (idx_dev) be->free_mem(idx_dev);
    tsmr__free(idx);
    tsmr__free(start);
    return rc;
  }
  for (int j = 0; !rc && j < n; j++) { /* fallback: one element per copy */
    const struct tsmr__tensor *sq = in[sorted[j]];
    for (int64_t t = 0; !rc && t < tsmr__body(sq)->numel; t++)
      rc = be->copy_d2d((float *)data->st->data + off[t] + j,
                        (const float *)sq->st->data + t, sizeof(float));
  }
  return rc;
}

/* Makes component k of c: a fresh tensor of dtype and one extent. */
static int new_component(tsmr_ctx *ctx, struct tsmr__tensor *c, int k, int dtype,
                         int64_t extent) {
  struct tsmr__tensor *t;
  const struct tsmr__tensor_spec s = {dtype, 1, &extent, extent, NULL, 0};
  int rc = tsmr__tensor_alloc(ctx, &s, &t);
  if (rc) return rc;
  t->rkind = TSMR__RES_COMPONENT;
  tsmr__body(t)->parent = c;
  tsmr__body(c)->comps[k] = t;
  return 0;
}

/* Steps 1-4 of ERR.ORDER.1 for pack: the call and the handles (a composite has no
 * data; EINVAL), released sequences (ERELEASED), the first sequence's holder
 * (ECLOSED, ECAPPED; COMP.PACK.2, MGR.OP.1/4), then the operation's own checks
 * (COMP.PACK.1): one-dimensional (ESHAPE), f32 (EDTYPE), then lengths >= 1,
 * non-increasing with enforce_sorted (EINVAL). holder: OUT. */
static int pack_args(tsmr_ctx *ctx, const tsmr_handle *seqs, int n, int enforce_sorted,
                     struct tsmr__mgr **out_holder) {
  struct tsmr__tensor *t, *prev = NULL;
  int rc;
  if (!seqs || n < 1) return TSMR_EINVAL;
  for (int i = 0; i < n; i++) {
    if ((rc = tsmr__tensor_get(ctx, seqs[i], &t))) return rc;
    if (tsmr__res_kind(ctx, seqs[i], t) == TSMR__RES_COMPOSITE) return TSMR_EINVAL;
  }
  for (int i = 0; i < n; i++) {
    (void)tsmr__tensor_get(ctx, seqs[i], &t);
    if (!t) return TSMR_ERELEASED;
  }
  (void)tsmr__tensor_get(ctx, seqs[0], &t);
  struct tsmr__mgr *holder = tsmr__holder_res(t)->holder;
  if (!holder) holder = ctx->root;
  if ((rc = tsmr__mgr_accepts(holder))) return rc;
  for (int i = 0; i < n; i++) {
    (void)tsmr__tensor_get(ctx, seqs[i], &t);
    if (t->ndim != 1) return TSMR_ESHAPE;
  }
  for (int i = 0; i < n; i++) {
    (void)tsmr__tensor_get(ctx, seqs[i], &t);
    if (t->dtype != TSMR_F32) return TSMR_EDTYPE;
  }
  for (int i = 0; i < n; i++, prev = t) {
    (void)tsmr__tensor_get(ctx, seqs[i], &t);
    int64_t len = tsmr__body(t)->shape[0];
    if (len < 1) return TSMR_EINVAL;
    if (enforce_sorted && prev && len > tsmr__body(prev)->shape[0]) return TSMR_EINVAL;
  }
  *out_holder = holder;
  return 0;
}

static void pack_work_free(struct pack_work *w) {
  tsmr__free(w->in);
  tsmr__free(w->li);
  tsmr__free(w->sorted);
  tsmr__free(w->unsorted);
  tsmr__free(w->bs);
  tsmr__free(w->off);
}

/* The order of the sequences (sorted, unsorted), the batch sizes and each step's
 * offset into the data. RETURN 0 or TSMR_ENOMEM. */
static int pack_layout(tsmr_ctx *ctx, const tsmr_handle *seqs, int n,
                       struct pack_work *w) {
  memset(w, 0, sizeof *w);
  w->in = tsmr__alloc((size_t)n * sizeof *w->in);
  w->li = tsmr__alloc((size_t)n * sizeof *w->li);
  w->sorted = tsmr__alloc((size_t)n * sizeof *w->sorted);
  w->unsorted = tsmr__alloc((size_t)n * sizeof *w->unsorted);
  if (!w->in || !w->li || !w->sorted || !w->unsorted) return TSMR_ENOMEM;
  for (int i = 0; i < n; i++) {
    (void)tsmr__tensor_get(ctx, seqs[i], &w->in[i]);
    w->li[i].len = tsmr__body(w->in[i])->shape[0];
    w->li[i].idx = i;
    w->total += w->li[i].len;
  }
  qsort(w->li, (size_t)n, sizeof *w->li, len_idx_cmp);
  for (int j = 0; j < n; j++) {
    w->sorted[j] = w->li[j].idx;
    w->unsorted[w->li[j].idx] = j;
  }
  w->maxlen = w->li[0].len;
  w->bs = tsmr__alloc((size_t)w->maxlen * sizeof *w->bs);
  w->off = tsmr__alloc((size_t)w->maxlen * sizeof *w->off);
  if (!w->bs || !w->off) return TSMR_ENOMEM;
  for (int64_t t = 0, b = n, o = 0; t < w->maxlen; t++) { /* sequences longer than t */
    while (b > 0 && w->li[b - 1].len <= t) b--;
    w->bs[t] = (int32_t)b;
    w->off[t] = o;
    o += b;
  }
  return 0;
}

/* The components of pack c with their values (the index pair only when unsorted). */
static int pack_components(tsmr_ctx *ctx, struct tsmr__tensor *c,
                           const struct pack_work *w, int n, int enforce_sorted) {
  int rc;
  if ((rc = new_component(ctx, c, TSMR_COMPONENT_DATA, TSMR_F32, w->total)) ||
      (rc = new_component(ctx, c, TSMR_COMPONENT_BATCH_SIZES, TSMR_I32, w->maxlen)))
    return rc;
  if (!enforce_sorted &&
      ((rc = new_component(ctx, c, TSMR_COMPONENT_SORTED_INDICES, TSMR_I32, n)) ||
       (rc = new_component(ctx, c, TSMR_COMPONENT_UNSORTED_INDICES, TSMR_I32, n))))
    return rc;
  struct tsmr__tensor **comps = tsmr__body(c)->comps;
  if ((rc = pack_data(ctx, comps[TSMR_COMPONENT_DATA], w, n)) ||
      (rc = put_host(ctx, comps[TSMR_COMPONENT_BATCH_SIZES], w->bs,
                     (size_t)w->maxlen * sizeof *w->bs)))
    return rc;
  if (!enforce_sorted &&
      ((rc = put_host(ctx, comps[TSMR_COMPONENT_SORTED_INDICES], w->sorted,
                      (size_t)n * sizeof *w->sorted)) ||
       (rc = put_host(ctx, comps[TSMR_COMPONENT_UNSORTED_INDICES], w->unsorted,
                      (size_t)n * sizeof *w->unsorted))))
    return rc;
  return 0;
}

static int pack_l(tsmr_ctx *ctx, const tsmr_handle *seqs, int n, int enforce_sorted,
                  tsmr_handle *out) {
  struct tsmr__mgr *holder;
  struct pack_work w;
  struct tsmr__tensor *c = NULL;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = pack_args(ctx, seqs, n, enforce_sorted, &holder))) return rc;
  /* Build aside (COMP.PACK.1), then publish: nothing fails from there on. */
  int ncomp = enforce_sorted ? 2 : 4;
  if ((rc = pack_layout(ctx, seqs, n, &w)) ||
      (rc = tsmr__composite_alloc(ctx, TSMR__COMP_PACKED, 4, &c)) ||
      (rc = pack_components(ctx, c, &w, n, enforce_sorted)))
    goto out;
  tsmr__tensor_link(ctx, c, holder);
  ctx->cur->st[TSMR_KIND_TENSOR].c_out += (uint64_t)ncomp; /* SCOPE.STAT.3 */
  tsmr__res_register(ctx, c);
  *out = c->handle;
  c = NULL;
out:
  if (c) tsmr__tensor_discard(ctx, c);
  pack_work_free(&w);
  return rc;
}

/* Among the live items: distinct, one holder (or all detached), none borrowed
 * (COMP.LIST.1; EINVAL). first: OUT, the first live item. */
static int list_items_check(tsmr_ctx *ctx, const tsmr_handle *items, int n,
                            struct tsmr__tensor **first) {
  struct tsmr__tensor *t = NULL;
  int rc = 0;
  int marked = 0; /* ckind (unused by plain tensors) marks items seen */
  for (; marked < n; marked++) {
    (void)tsmr__tensor_get(ctx, items[marked], &t);
    if (!t) continue;
    if (t->ckind || t->borrows || (*first && t->holder != (*first)->holder)) {
      rc = TSMR_EINVAL;
      break;
    }
    if (!*first) *first = t;
    t->ckind = 1;
  }
  for (int i = 0; i < marked; i++) { /* unmark (a duplicate stopped the loop) */
    (void)tsmr__tensor_get(ctx, items[i], &t);
    if (t) t->ckind = 0;
  }
  return rc;
}

static int list_l(tsmr_ctx *ctx, const tsmr_handle *items, int n, tsmr_handle *out) {
  struct tsmr__tensor *t, *first = NULL;
  int rc;
  /* 1. EINVAL: the call, the handles, plain tensors only, then among the live items:
   *    distinct, one holder (or all detached), none borrowed (COMP.LIST.1). */
  if (!out || !items || n < 1) return TSMR_EINVAL;
  for (int i = 0; i < n; i++) {
    if ((rc = tsmr__tensor_get(ctx, items[i], &t))) return rc;
    if (tsmr__res_kind(ctx, items[i], t) != TSMR__RES_PLAIN) return TSMR_EINVAL;
  }
  if ((rc = list_items_check(ctx, items, n, &first))) return rc;
  /* 2. ERELEASED. */
  for (int i = 0; i < n; i++) {
    (void)tsmr__tensor_get(ctx, items[i], &t);
    if (!t) return TSMR_ERELEASED;
  }
  /* 3. ECLOSED / ECAPPED on the common holder: the list is one addition to it. */
  struct tsmr__mgr *holder = first->holder;
  if (holder && (rc = tsmr__mgr_accepts(holder))) return rc;
  struct tsmr__tensor *c;
  if ((rc = tsmr__composite_alloc(ctx, TSMR__COMP_LIST, n, &c))) return rc;
  /* 4. Publish: the items leave their holder's list and their scope (SCOPE.STAT.3). */
  for (int i = 0; i < n; i++) {
    (void)tsmr__tensor_get(ctx, items[i], &t);
    tsmr__tensor_unlink(ctx, t);
    if (t->scope) {
      tsmr__scope_del(t);
      ctx->cur->st[TSMR_KIND_TENSOR].detached++;
    }
    t->rkind = TSMR__RES_COMPONENT;
    tsmr__body(t)->parent = c;
    tsmr__body(c)->comps[i] = t;
  }
  tsmr__tensor_link(ctx, c, holder);
  tsmr__res_register(ctx, c);
  *out = c->handle;
  return 0;
}

static int component_l(tsmr_ctx *ctx, tsmr_handle ch, int index, tsmr_handle *out) {
  struct tsmr__tensor *c;
  int rc;
  if (!out) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, ch, &c))) return rc;
  if (tsmr__res_kind(ctx, ch, c) != TSMR__RES_COMPOSITE) return TSMR_EINVAL;
  if (!c) return TSMR_ERELEASED;
  const struct tsmr__tensor_body *cb = tsmr__body(c);
  if (index < 0 || index >= cb->n_comps) return TSMR_EINVAL;
  *out = cb->comps[index] ? cb->comps[index]->handle : TSMR_NONE;
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_pack(tsmr_ctx *ctx, const tsmr_handle *seqs, int n, int enforce_sorted,
              tsmr_handle *out) {
  TSMR__LOCKED(pack_l(ctx, seqs, n, enforce_sorted, out));
}

int tsmr_list(tsmr_ctx *ctx, const tsmr_handle *items, int n, tsmr_handle *out) {
  TSMR__LOCKED(list_l(ctx, items, n, out));
}

int tsmr_component(tsmr_ctx *ctx, tsmr_handle c, int index, tsmr_handle *out) {
  TSMR__LOCKED(component_l(ctx, c, index, out));
}
