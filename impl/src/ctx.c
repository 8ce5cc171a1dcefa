/*
 * impl/src/ctx.c: contexts (one session on one device) and live bytes.
 * Clauses: ABI.SESSION.1 (isolated worlds; close releases everything), MGR.ROOT.1,
 * MGR.COUNT.4, DEV.BYTES.1, SCOPE.THREAD.3 (one lock per context, lock.h).
 */
#include <stdatomic.h>
#include <string.h>

#include "dlx.h"

static atomic_uint_fast64_t ctx_serials;

int tsmr_ctx_open(const char *device, tsmr_ctx **out) {
  const struct tsmr__backend *be;
  const char *name;
  int rc;
  if (!device || !out) return TSMR_EINVAL;
  if ((rc = tsmr__device_backend(device, &be, &name))) return rc;
  tsmr_ctx *ctx = tsmr__alloc(sizeof *ctx);
  if (!ctx) return TSMR_ENOMEM;
  memset(ctx, 0, sizeof *ctx);
  if (tsmr__lock_init(&ctx->lock, &ctx->live_bytes) != 0) {
    tsmr__free(ctx);
    return TSMR_ENOMEM;
  }
  ctx->serial = atomic_fetch_add(&ctx_serials, 1) + 1; /* 0 = no context */
  ctx->be = be;
  ctx->dlx_device_type = be->host_memory ? TSMR__DLX_CPU : TSMR__DLX_CUDA;
  ctx->device_name = name;
  tsmr__list_init(&ctx->detached);
  if ((rc = tsmr__mgr_create(ctx, NULL, &ctx->root))) {
    tsmr__table_free(&ctx->mgrs);
    tsmr__lock_destroy(&ctx->lock);
    tsmr__free(ctx);
    return rc;
  }
  tsmr__device_ctx_count(be, +1);
  *out = ctx;
  return 0;
}

/* Frees every thread's state (the records its lane kept go with their slabs). */
static void free_threads(tsmr_ctx *ctx) {
  while (ctx->threads) {
    struct tsmr__thread *t = ctx->threads;
    ctx->threads = t->next;
    tsmr__free(t->block);
  }
}

/* Drops the context's hold on every slab of records: freed now, or by the deleter of
 * the last export that holds an orphaned record of it (dlpack.c). */
static void put_slabs(tsmr_ctx *ctx) {
  while (ctx->slabs) {
    struct tsmr__rec_slab *s = ctx->slabs;
    ctx->slabs = s->next;
    tsmr__slab_put(s);
  }
}

void tsmr_ctx_close(tsmr_ctx *ctx) {
  if (!ctx) return;
  struct tsmr__dlx_anchor *anchor = ctx->dlx_anchor;
  tsmr__dlx_close_begin(ctx);     /* export deleters wait (DLP.EXPORT.3) */
  tsmr__lock_acquire(&ctx->lock, tsmr__tls.thread_id); /* no other call may run now */
  ctx->cur = NULL;                /* nothing counts any more */
  tsmr__mgr_close(ctx, ctx->root); /* the root closes only here */
  ctx->root = NULL;
  while (!tsmr__list_empty(&ctx->detached))
    tsmr__tensor_release(
        ctx, tsmr__container_of(ctx->detached.next, struct tsmr__tensor, node));
  tsmr__dlx_close_orphan(ctx); /* storages of live exports leave the context */
  TSMR_ASSERT(ctx->live_bytes == 0 && "storage LEAK at context close");
  for (uint32_t i = 0; i < ctx->scopes.len; i++) { /* open scopes: empty by now */
    struct tsmr__scope *s = ctx->scopes.slots[i].obj;
    if (!s) continue;
    TSMR_ASSERT(s->n_members == 0 && tsmr__list_empty(&s->members));
    tsmr__free(s);
  }
  while (ctx->free_storages) {
    struct tsmr__storage *s = ctx->free_storages;
    ctx->free_storages = s->next_free;
    tsmr__free(s);
  }
  tsmr__dlx_free_blocks(ctx);
  tsmr__borrow_freelist(ctx);
  tsmr__table_free(&ctx->mgrs);
  tsmr__table_free(&ctx->tensors);
  tsmr__table_free(&ctx->scopes);
  tsmr__graph_free_all(ctx);
  struct tsmr__storage *pending = ctx->dlx_pending; /* aliased imports' deleters */
  tsmr__lock_release(&ctx->lock);
  tsmr__lock_destroy(&ctx->lock);
  free_threads(ctx); /* after the release: a lane is in a thread's state */
  put_slabs(ctx);
  tsmr__dlx_close_end(anchor);
  const struct tsmr__backend *be = ctx->be;
  tsmr__free(ctx);
  if (pending) tsmr__dlx_run_pending(pending);
  tsmr__device_ctx_count(be, -1);
}

const char *tsmr_ctx_device(const tsmr_ctx *ctx) { return ctx ? ctx->device_name : ""; }

static int live_bytes_l(tsmr_ctx *ctx, uint64_t *out) {
  if (!out) return TSMR_EINVAL;
  *out = ctx->live_bytes;
  return 0;
}

int tsmr_live_bytes(tsmr_ctx *ctx, uint64_t *out) {
  TSMR__LOCKED(live_bytes_l(ctx, out));
}
