/*
 * impl/src/borrow.c: moving resources between holders: attach, detach, temporary
 * attach (borrow), ret, and giving borrows back when a borrower closes.
 * Clauses: MGR.ATTACH.1-4, MGR.DETACH.1-3, MGR.TEMP.1-9, MGR.RET.1-2, MGR.ROOT.4-5,
 * MGR.CAP.1-2, MGR.CLOSE.4, ERR.ORDER.1, ERR.ATOMIC.1.
 *
 * Each tensor carries a stack of borrow records, one per temporary attach still in
 * force; the top names the lender the current holder gives it back to (MGR.TEMP.5).
 * Attach, detach, ret and release clear the whole stack (MGR.ATTACH.4, MGR.DETACH.2,
 * MGR.TEMP.7). Lenders are recorded by handle, so a lender that closed meanwhile is
 * recognised as closed when the borrow comes back (MGR.TEMP.4, MGR.TEMP.6).
 */
#include "internal.h"

static void borrow_put(tsmr_ctx *ctx, struct tsmr__borrow *b) {
  b->below = ctx->free_borrows;
  ctx->free_borrows = b;
}

void tsmr__borrow_clear(tsmr_ctx *ctx, struct tsmr__tensor *t) {
  TSMR_ASSERT(t->holder == NULL && "unlink before changing the borrow stack");
  while (t->borrows) {
    struct tsmr__borrow *b = t->borrows;
    t->borrows = b->below;
    borrow_put(ctx, b);
  }
}

void tsmr__borrow_freelist(tsmr_ctx *ctx) {
  while (ctx->free_borrows) {
    struct tsmr__borrow *b = ctx->free_borrows;
    ctx->free_borrows = b->below;
    tsmr__free(b);
  }
}

void tsmr__borrow_return(tsmr_ctx *ctx, struct tsmr__tensor *t) {
  struct tsmr__borrow *b = t->borrows;
  struct tsmr__mgr *lender = NULL;
  TSMR_ASSERT(b && t->holder && t->holder->state == TSMR__CLOSING);
  if (b->lender != TSMR_NONE) {
    int rc = tsmr__mgr_get(ctx, b->lender, &lender, NULL);
    TSMR_ASSERT(rc == 0 && "borrow record names an unknown lender");
    if (!lender) { /* the lender closed: nobody takes it back (MGR.TEMP.4) */
      tsmr__tensor_release(ctx, t);
      return;
    }
  }
  tsmr__tensor_unlink(ctx, t);
  t->borrows = b->below;
  borrow_put(ctx, b);
  /* An open or closing lender takes it back without a cap check (MGR.TEMP.4,
   * MGR.CLOSE.4); a lender of none means it was detached. */
  tsmr__tensor_link(ctx, t, lender);
}

/* Moves t to m (NULL = detached), ending any borrow. */
static void move_tensor(tsmr_ctx *ctx, struct tsmr__tensor *t, struct tsmr__mgr *m) {
  tsmr__tensor_unlink(ctx, t);
  tsmr__borrow_clear(ctx, t);
  tsmr__tensor_link(ctx, t, m);
}

/* Common argument decoding: EINVAL for bad handles and for a component (which moves
 * only with its composite, COMP.UNIT.3), then ERELEASED. */
static int decode_args(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle mh,
                       struct tsmr__tensor **t, struct tsmr__mgr **m) {
  int rc;
  if (!ctx) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, rh, t))) return rc;
  if (m && (rc = tsmr__mgr_get(ctx, mh, m, NULL))) return rc;
  if (tsmr__res_kind(ctx, rh, *t) == TSMR__RES_COMPONENT) return TSMR_EINVAL;
  if (!*t) return TSMR_ERELEASED;
  return 0;
}

static int res_attach_l(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle mh) {
  struct tsmr__tensor *t;
  struct tsmr__mgr *m;
  int rc;
  if ((rc = decode_args(ctx, rh, mh, &t, &m))) return rc;
  if (m && t->holder == m) return 0; /* MGR.ATTACH.3, even when capped */
  if (!m) return TSMR_ECLOSED;
  if ((rc = tsmr__mgr_accepts(m))) return rc; /* MGR.ATTACH.2 */
  move_tensor(ctx, t, m);
  return 0;
}

static int res_detach_l(tsmr_ctx *ctx, tsmr_handle rh) {
  struct tsmr__tensor *t;
  int rc;
  if ((rc = decode_args(ctx, rh, TSMR_NONE, &t, NULL))) return rc;
  if (!t->holder) return 0; /* MGR.DETACH.1: already detached */
  move_tensor(ctx, t, NULL);
  return 0;
}

static int res_temp_attach_l(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle mh) {
  struct tsmr__tensor *t;
  struct tsmr__mgr *m;
  int rc;
  if ((rc = decode_args(ctx, rh, mh, &t, &m))) return rc;
  if (m && m->is_root) return TSMR_EROOT;                 /* MGR.ROOT.4 */
  if (!m || m->state != TSMR__OPEN) return TSMR_ECLOSED;  /* MGR.TEMP.3 */
  if (t->holder == m) return 0;                           /* MGR.TEMP.8 */
  struct tsmr__borrow *b = ctx->free_borrows;
  if (b) ctx->free_borrows = b->below;
  else if (!(b = tsmr__alloc(sizeof *b))) return TSMR_ENOMEM;
  b->lender = t->holder ? t->holder->handle : TSMR_NONE; /* MGR.TEMP.1: before */
  tsmr__tensor_unlink(ctx, t);
  b->below = t->borrows;
  t->borrows = b;
  tsmr__tensor_link(ctx, t, m); /* no cap check: MGR.TEMP.2 */
  return 0;
}

static int res_ret_l(tsmr_ctx *ctx, tsmr_handle mh, tsmr_handle rh) {
  struct tsmr__tensor *t;
  struct tsmr__mgr *m;
  int rc;
  if ((rc = decode_args(ctx, rh, mh, &t, &m))) return rc;
  if (m && m->is_root) return TSMR_EROOT;                /* MGR.ROOT.5 */
  if (!m || m->state != TSMR__OPEN) return TSMR_ECLOSED; /* MGR.RET.2 */
  if (t->holder != m) return TSMR_EINVAL;                /* MGR.RET.2 */
  if ((rc = tsmr__mgr_accepts(m->parent))) return rc;    /* MGR.RET.1 */
  move_tensor(ctx, t, m->parent);
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_res_attach(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle mh) {
  TSMR__LOCKED(res_attach_l(ctx, rh, mh));
}

int tsmr_res_detach(tsmr_ctx *ctx, tsmr_handle rh) { TSMR__LOCKED(res_detach_l(ctx, rh)); }

int tsmr_res_temp_attach(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle mh) {
  TSMR__LOCKED(res_temp_attach_l(ctx, rh, mh));
}

int tsmr_res_ret(tsmr_ctx *ctx, tsmr_handle mh, tsmr_handle rh) {
  TSMR__LOCKED(res_ret_l(ctx, mh, rh));
}
