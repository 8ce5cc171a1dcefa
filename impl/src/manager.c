/*
 * impl/src/manager.c: managers: creation, cap, info and the close algorithm.
 * Clauses: MGR.ROOT.1-2, MGR.SUB.1-6, MGR.CAP.1-4, MGR.CLOSE.1-6, MGR.TEMP.4-6,
 * MGR.COUNT.1-2, ABI.INFO.1, ERR.ORDER.1.
 *
 * Close (MGR.CLOSE.3) is iterative, so nesting depth is bounded by memory, not the C
 * stack (MGR.SUB.6): a manager is marked closing (it refuses additions, but still
 * takes back what a closing child returns, MGR.CLOSE.4) before its children are
 * visited; when a manager has no children left it releases what it owns, gives back
 * what it borrowed (MGR.TEMP.4), unlinks from its parent and is freed; its slot keeps
 * its final state bits. Only the managers on the path being closed are ever in the
 * closing state, and none of them has finished, so a resource returned to a closing
 * lender is always processed by that lender's own finish step.
 */
#include "internal.h"

int tsmr__mgr_create(tsmr_ctx *ctx, struct tsmr__mgr *parent, struct tsmr__mgr **out) {
  if (tsmr__table_reserve(&ctx->mgrs)) return TSMR_ENOMEM;
  struct tsmr__mgr *m = tsmr__alloc(sizeof *m);
  if (!m) return TSMR_ENOMEM;
  tsmr__list_init(&m->children);
  tsmr__list_init(&m->owned);
  tsmr__list_init(&m->borrowed);
  tsmr__list_init(&m->graphs);
  m->n_owned = m->n_borrowed = m->n_children = 0;
  m->state = TSMR__OPEN;
  m->capped = 0;
  m->is_root = parent == NULL;
  m->parent = parent;
  m->lane_owner = ctx->cur;
  uint32_t idx = tsmr__mslot_alloc(&ctx->mgrs, m);
  m->handle = tsmr__mkhandle(TSMR__KIND_MGR, idx, ctx->mgrs.slots[idx].gen);
  if (parent) {
    tsmr__list_add(&parent->children, &m->sib);
    parent->n_children++;
  } else {
    m->sib.next = m->sib.prev = TSMR__POISON1;
  }
  *out = m;
  return 0;
}

/* Last step of closing cur: everything below it is closed already. */
static void mgr_finish(tsmr_ctx *ctx, struct tsmr__mgr *cur) {
  TSMR_ASSERT(tsmr__list_empty(&cur->children) && cur->n_children == 0);
  while (!tsmr__list_empty(&cur->owned) || !tsmr__list_empty(&cur->borrowed)) {
    tsmr__mgr_release_owned(ctx, cur); /* MGR.CLOSE.1: release what it owns */
    while (!tsmr__list_empty(&cur->borrowed)) /* MGR.TEMP.4: give back borrows */
      tsmr__borrow_return(
          ctx, tsmr__container_of(cur->borrowed.next, struct tsmr__tensor, node));
  }
  TSMR_ASSERT(cur->n_owned == 0 && cur->n_borrowed == 0);
  while (!tsmr__list_empty(&cur->graphs)) /* GRAPH.MGR.1: its graphs' buffers go */
    tsmr__graph_release(ctx, tsmr__graph_of_mnode(cur->graphs.next));
  if (cur->parent) {
    tsmr__list_del(&cur->sib);
    TSMR_ASSERT(cur->parent->n_children > 0);
    cur->parent->n_children--;
  }
  struct tsmr__slot *s = &ctx->mgrs.slots[tsmr__h_slot(cur->handle)];
  s->obj = NULL;
  s->aux = TSMR_MGR_CLOSED | (cur->capped ? TSMR_MGR_CAPPED : 0u);
  tsmr__free(cur);
}

void tsmr__mgr_close(tsmr_ctx *ctx, struct tsmr__mgr *m) {
  struct tsmr__mgr *cur = m;
  m->state = TSMR__CLOSING; /* MGR.CLOSE.3: marked closed first */
  for (;;) {
    if (!tsmr__list_empty(&cur->children)) {
      struct tsmr__mgr *c = tsmr__container_of(cur->children.next, struct tsmr__mgr, sib);
      c->state = TSMR__CLOSING;
      cur = c;
      continue;
    }
    struct tsmr__mgr *parent = cur->parent;
    int done = cur == m;
    mgr_finish(ctx, cur);
    if (done) return;
    cur = parent;
  }
}

/* ---- public ------------------------------------------------------------------ */

static int mgr_root_l(tsmr_ctx *ctx, tsmr_handle *out) {
  if (!ctx || !out) return TSMR_EINVAL;
  *out = ctx->root->handle;
  return 0;
}

static int mgr_new_sub_l(tsmr_ctx *ctx, tsmr_handle ph, tsmr_handle *out) {
  struct tsmr__mgr *p, *m;
  int rc;
  if (!ctx || !out) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, ph, &p, NULL))) return rc;
  if (!p || p->state != TSMR__OPEN) return TSMR_ECLOSED; /* MGR.SUB.2; caps allow */
  if ((rc = tsmr__mgr_create(ctx, p, &m))) return rc;
  *out = m->handle;
  return 0;
}

static int mgr_sub_of_l(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle *out) {
  struct tsmr__tensor *t;
  struct tsmr__mgr *m;
  int rc;
  if (!ctx || !out) return TSMR_EINVAL;
  if ((rc = tsmr__tensor_get(ctx, rh, &t))) return rc;
  if (!t) return TSMR_ERELEASED;
  const struct tsmr__tensor *h = tsmr__holder_res(t); /* a component: its composite's */
  struct tsmr__mgr *p = h->holder ? h->holder : ctx->root; /* MGR.SUB.4 */
  if (p->state != TSMR__OPEN) return TSMR_ECLOSED;
  if ((rc = tsmr__mgr_create(ctx, p, &m))) return rc;
  *out = m->handle;
  return 0;
}

static int mgr_close_l(tsmr_ctx *ctx, tsmr_handle mh) {
  struct tsmr__mgr *m;
  int rc;
  if (!ctx) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, NULL))) return rc;
  if (!m) return 0;                  /* MGR.CLOSE.2 */
  if (m->is_root) return TSMR_EROOT; /* MGR.ROOT.2 */
  if (m->state != TSMR__OPEN) return 0;
  tsmr__mgr_close(ctx, m);
  return 0;
}

static int mgr_cap_l(tsmr_ctx *ctx, tsmr_handle mh) {
  struct tsmr__mgr *m;
  int rc;
  if (!ctx) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, NULL))) return rc;
  if (!m || m->state != TSMR__OPEN) return TSMR_ECLOSED; /* MGR.CAP.4 */
  m->capped = 1;
  return 0;
}

static int mgr_info_l(tsmr_ctx *ctx, tsmr_handle mh, struct tsmr_mgr_info *out) {
  struct tsmr__mgr *m;
  uint32_t flags;
  int rc;
  if (!ctx || !out) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, &flags))) return rc;
  out->state = 0;
  out->is_root = 0;
  out->parent = TSMR_NONE;
  out->live = out->children = 0;
  if (!m) { /* closed: no parent, counts 0 (MGR.CLOSE.5) */
    out->state = flags;
    return 0;
  }
  out->state = (m->state != TSMR__OPEN ? TSMR_MGR_CLOSED : 0u) |
               (m->capped ? TSMR_MGR_CAPPED : 0u);
  out->is_root = m->is_root;
  out->parent = m->parent ? m->parent->handle : TSMR_NONE;
  out->live = m->n_owned + m->n_borrowed;
  out->children = m->n_children;
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_mgr_root(tsmr_ctx *ctx, tsmr_handle *out) { TSMR__LOCKED(mgr_root_l(ctx, out)); }

int tsmr_mgr_new_sub(tsmr_ctx *ctx, tsmr_handle ph, tsmr_handle *out) {
  TSMR__LOCKED(mgr_new_sub_l(ctx, ph, out));
}

int tsmr_mgr_sub_of(tsmr_ctx *ctx, tsmr_handle rh, tsmr_handle *out) {
  TSMR__LOCKED(mgr_sub_of_l(ctx, rh, out));
}

int tsmr_mgr_close(tsmr_ctx *ctx, tsmr_handle mh) { TSMR__LOCKED(mgr_close_l(ctx, mh)); }

int tsmr_mgr_cap(tsmr_ctx *ctx, tsmr_handle mh) { TSMR__LOCKED(mgr_cap_l(ctx, mh)); }

int tsmr_mgr_info(tsmr_ctx *ctx, tsmr_handle mh, struct tsmr_mgr_info *out) {
  TSMR__LOCKED(mgr_info_l(ctx, mh, out));
}
