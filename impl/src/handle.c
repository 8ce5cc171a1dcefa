/*
 * impl/src/handle.c: handle tables with O(1) lookup. A handle is kind:4 | slot:28 |
 * generation:32 and is never 0. Tensor slots are recycled with a bumped generation, so
 * a released tensor's handle answers ERELEASED forever and never names a live tensor
 * again (MGR.OWN.3, ABI.HANDLE.1); a slot whose generation would wrap is retired, and
 * so is a released component's or composite's, which keeps its kind (COMP.UNIT.3).
 * Manager slots are never recycled: a closed manager's handle keeps reporting a closed
 * manager. Handles never issued or of the wrong kind are EINVAL (ERR.HANDLE.1).
 */
#include "internal.h"

/* The lookups and tensor slot functions are inline in internal.h. */

void tsmr__table_free(struct tsmr__table *t) {
  tsmr__free(t->slots);
  tsmr__free(t->homes);
  t->slots = NULL;
  t->homes = NULL;
  t->len = t->cap = t->free_head = 0;
}

/* Room for at least need slots (cap a power of two, at least 64 = one block), homes
 * grown with it once there is one. */
static int table_grow(struct tsmr__table *t, uint32_t need) {
  if (need <= t->cap) return 0;
  if (need > TSMR__SLOT_MAX) return TSMR_ENOMEM;
  uint32_t ncap = t->cap ? t->cap : 64;
  while (ncap < need) ncap *= 2;
  if (t->homes) {
    uint32_t **h = tsmr__realloc(t->homes, (size_t)(ncap / TSMR__SLOT_BLOCK) * sizeof *h);
    if (!h) return TSMR_ENOMEM;
    for (uint32_t b = t->cap / TSMR__SLOT_BLOCK; b < ncap / TSMR__SLOT_BLOCK; b++) h[b] = NULL;
    t->homes = h;
  }
  struct tsmr__slot *s = tsmr__realloc(t->slots, (size_t)ncap * sizeof *s);
  if (!s) return TSMR_ENOMEM; /* homes may be longer than needed: harmless */
  t->slots = s;
  t->cap = ncap;
  return 0;
}

int tsmr__table_reserve(struct tsmr__table *t) {
  if (t->len < t->cap) return 0;
  if (t->cap > TSMR__SLOT_MAX / 2) return TSMR_ENOMEM;
  return table_grow(t, t->cap ? t->cap * 2 : 64);
}

int tsmr__tslot_grant(struct tsmr__table *t, uint32_t *head, uint32_t n) {
  TSMR_ASSERT(n && n % TSMR__SLOT_BLOCK == 0);
  uint32_t start = (t->len + TSMR__SLOT_BLOCK - 1) & ~(TSMR__SLOT_BLOCK - 1);
  if (start > TSMR__SLOT_MAX - n) return TSMR_ENOMEM;
  if (table_grow(t, start + n)) return TSMR_ENOMEM;
  if (!t->homes) {
    size_t blocks = t->cap / TSMR__SLOT_BLOCK;
    if (!(t->homes = tsmr__alloc(blocks * sizeof *t->homes))) return TSMR_ENOMEM;
    for (size_t b = 0; b < blocks; b++) t->homes[b] = NULL;
  }
  while (t->len < start) { /* the rest of the last block: the table's own list */
    t->slots[t->len].gen = 1;
    tsmr__tslot_push(t, t->len++);
  }
  for (uint32_t b = start / TSMR__SLOT_BLOCK; b < (start + n) / TSMR__SLOT_BLOCK; b++)
    t->homes[b] = head;
  for (uint32_t i = start + n; i-- > start;) { /* pushed last to first: taken in order */
    t->slots[i].gen = 1;
    tsmr__tslot_push(t, i);
  }
  t->len = start + n;
  return 0;
}

uint32_t tsmr__mslot_alloc(struct tsmr__table *t, void *obj) {
  TSMR_ASSERT(t->len < t->cap && "tsmr__table_reserve not called");
  uint32_t idx = t->len++;
  t->slots[idx].obj = obj;
  t->slots[idx].gen = TSMR__MGR_GEN;
  t->slots[idx].aux = 0;
  return idx;
}
