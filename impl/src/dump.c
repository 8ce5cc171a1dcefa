/*
 * impl/src/dump.c: a text dump of a manager's subtree with each manager's live and
 * child counts (MGR.COUNT.3, DJL debugDump). Iterative, so any nesting depth works
 * (MGR.SUB.6). Output lines: "<indent>mgr 0x<handle> [root] [capped] live=N
 * children=M", where live counts owned and borrowed resources (MGR.COUNT.1).
 */
#include <stdarg.h>
#include <string.h>

#include "internal.h"

struct tsmr_sink {
  char *buf;
  size_t cap, len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void emit(struct tsmr_sink *s, const char *fmt, ...) {
  if (s->len + 1 >= s->cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  s->len += (size_t)n;
  if (s->len >= s->cap) s->len = s->cap - 1;
}

static void emit_mgr(struct tsmr_sink *s, const struct tsmr__mgr *m, int depth) {
  int indent = depth > 32 ? 64 : depth * 2;
  emit(s,
       "%*smgr 0x%016llx%s%s%s live=%llu (owned=%llu borrowed=%llu) children=%llu",
       indent, "", (unsigned long long)m->handle, m->is_root ? " root" : "",
       m->capped ? " capped" : "", m->state != TSMR__OPEN ? " closing" : "",
       (unsigned long long)(m->n_owned + m->n_borrowed),
       (unsigned long long)m->n_owned, (unsigned long long)m->n_borrowed,
       (unsigned long long)m->n_children);
  if (depth > 32) emit(s, " depth=%d", depth);
  emit(s, "\n");
}

static int mgr_dump_l(tsmr_ctx *ctx, tsmr_handle mh, char *buf, size_t cap) {
  struct tsmr__mgr *m;
  uint32_t flags;
  int rc;
  if (!ctx || (!buf && cap)) return TSMR_EINVAL;
  if ((rc = tsmr__mgr_get(ctx, mh, &m, &flags))) return rc;
  if (cap == 0) return 0;
  struct tsmr_sink s = {buf, cap, 0};
  buf[0] = '\0';
  if (!m) {
    emit(&s, "mgr 0x%016llx closed%s\n", (unsigned long long)mh,
         (flags & TSMR_MGR_CAPPED) ? " capped" : "");
    return 0;
  }
  const struct tsmr__mgr *cur = m;
  int depth = 0;
  emit_mgr(&s, cur, depth);
  for (;;) {
    if (!tsmr__list_empty(&cur->children)) {
      cur = tsmr__container_of(cur->children.next, struct tsmr__mgr, sib);
      emit_mgr(&s, cur, ++depth);
      continue;
    }
    /* next sibling, climbing while a level is exhausted */
    while (cur != m) {
      const struct tsmr__mgr *p = cur->parent;
      if (cur->sib.next != &p->children) {
        cur = tsmr__container_of(cur->sib.next, struct tsmr__mgr, sib);
        emit_mgr(&s, cur, depth);
        break;
      }
      cur = p;
      depth--;
    }
    if (cur == m) break;
  }
  return 0;
}

/* ---- locked entry points (SCOPE.THREAD.3) --------------------------------------- */

int tsmr_mgr_dump(tsmr_ctx *ctx, tsmr_handle mh, char *buf, size_t cap) {
  TSMR__LOCKED(mgr_dump_l(ctx, mh, buf, cap));
}
