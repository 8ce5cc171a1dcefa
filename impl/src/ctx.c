/*
 * impl/src/ctx.c: contexts (one session on one device) and live bytes.
 * Clauses: ABI.SESSION.1 (isolated worlds; close releases everything), MGR.ROOT.1,
 * MGR.COUNT.4, DEV.BYTES.1.
 */
#include <string.h>

#include "internal.h"

int tsmr_ctx_open(const char *device, tsmr_ctx **out) {
  const struct tsmr__backend *be;
  const char *name;
  int rc;
  if (!device || !out) return TSMR_EINVAL;
  if ((rc = tsmr__device_backend(device, &be, &name))) return rc;
  tsmr_ctx *ctx = tsmr__alloc(sizeof *ctx);
  if (!ctx) return TSMR_ENOMEM;
  memset(ctx, 0, sizeof *ctx);
  ctx->be = be;
  ctx->device_name = name;
  tsmr__list_init(&ctx->detached);
  if ((rc = tsmr__mgr_create(ctx, NULL, &ctx->root))) {
    tsmr__table_free(&ctx->mgrs);
    tsmr__free(ctx);
    return rc;
  }
  *out = ctx;
  return 0;
}

void tsmr_ctx_close(tsmr_ctx *ctx) {
  if (!ctx) return;
  tsmr__mgr_close(ctx, ctx->root); /* the root closes only here */
  ctx->root = NULL;
  while (!tsmr__list_empty(&ctx->detached))
    tsmr__tensor_release(
        ctx, tsmr__container_of(ctx->detached.next, struct tsmr__tensor, node));
  TSMR_ASSERT(ctx->live_bytes == 0 && "storage LEAK at context close");
  while (ctx->free_tensors) {
    struct tsmr__tensor *t = ctx->free_tensors;
    ctx->free_tensors = t->next_free;
    tsmr__free(t);
  }
  while (ctx->free_storages) {
    struct tsmr__storage *s = ctx->free_storages;
    ctx->free_storages = s->next_free;
    tsmr__free(s);
  }
  tsmr__borrow_freelist(ctx);
  tsmr__table_free(&ctx->mgrs);
  tsmr__table_free(&ctx->tensors);
  tsmr__free(ctx);
}

const char *tsmr_ctx_device(const tsmr_ctx *ctx) { return ctx ? ctx->device_name : ""; }

int tsmr_live_bytes(tsmr_ctx *ctx, uint64_t *out) {
  if (!ctx || !out) return TSMR_EINVAL;
  *out = ctx->live_bytes;
  return 0;
}
