/*
 * harness/src/base/adapter_load.h: loading an adapter shared object and checking its ABI
 * (spec/adapter.md ABI.LOAD.1, ABI.VER.1, ABI.VER.2, ABI.DEV.1). The judge loads
 * adapters only in forked children (runner.c), never in its own process.
 */
#ifndef CTS_ADAPTER_LOAD_H
#define CTS_ADAPTER_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"

/* The size of the ABI 1.0 struct: the smallest struct_size accepted. */
#define CTS_ABI_1_0_SIZE                                                                \
  (offsetof(struct tsm_adapter, live_bytes) + sizeof(((struct tsm_adapter *)0)->live_bytes))

/* 1 if the adapter's struct reaches `slot` and the slot is set. */
#define CTS_HAS_SLOT(a, slot)                                                           \
  (offsetof(struct tsm_adapter, slot) + sizeof((a)->slot) <= (a)->struct_size &&       \
   (a)->slot != NULL)

/* RETURN the adapter, or NULL with a reason in why. The handle stays open for the
 * life of the process. */
const struct tsm_adapter *cts_adapter_load(const char *path, char *why, size_t why_len);

/* The first slot that the families (enum tsm_cap bits) need and the adapter leaves
 * NULL, or NULL. */
const char *cts_adapter_missing_slot(const struct tsm_adapter *a, uint32_t families);

#endif
