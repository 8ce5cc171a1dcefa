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
  t->slots = NULL;
  t->len = t->cap = t->free_head = 0;
}

int tsmr__table_reserve(struct tsmr__table *t) {
  if (t->len < t->cap) return 0;
  if (t->cap > TSMR__SLOT_MAX / 2) return TSMR_ENOMEM;
  uint32_t ncap = t->cap ? t->cap * 2 : 64;
  struct tsmr__slot *s = tsmr__realloc(t->slots, (size_t)ncap * sizeof *s);
  if (!s) return TSMR_ENOMEM;
  t->slots = s;
  t->cap = ncap;
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
