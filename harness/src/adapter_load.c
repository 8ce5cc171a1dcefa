/*
 * harness/src/adapter_load.c: dlopen, entry point and version checks (ABI.LOAD.1,
 * ABI.VER.1, ABI.VER.2), and the slots each family needs.
 */
#include "adapter_load.h"

#include <assert.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const struct tsm_adapter *cts_adapter_load(const char *path, char *why, size_t why_len) {
  /* A bare name would make dlopen search the library path, not the cwd. */
  char buf[4096];
  if (!strchr(path, '/')) {
    snprintf(buf, sizeof buf, "./%s", path);
    path = buf;
  }
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    snprintf(why, why_len, "cannot load adapter: %s", dlerror());
    return NULL;
  }
  void *sym = dlsym(dl, TSM_ADAPTER_ENTRY_NAME);
  if (!sym) {
    snprintf(why, why_len, "adapter exports no '%s' entry point (ABI.LOAD.1)",
             TSM_ADAPTER_ENTRY_NAME);
    return NULL;
  }
  tsm_adapter_entry_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* object-to-function pointer, as POSIX allows */
  const struct tsm_adapter *a = entry();
  if (!a) {
    snprintf(why, why_len, "'%s' returned NULL (ABI.LOAD.1)", TSM_ADAPTER_ENTRY_NAME);
    return NULL;
  }
  if (a->abi_major != TSM_ADAPTER_ABI_MAJOR) {
    snprintf(why, why_len,
             "incompatible adapter ABI: adapter abi_major %u, judge %u (ABI.VER.1)",
             a->abi_major, TSM_ADAPTER_ABI_MAJOR);
    return NULL;
  }
  if (a->struct_size < CTS_ABI_1_0_SIZE) {
    snprintf(why, why_len,
             "adapter struct_size %u is smaller than the ABI 1.0 struct (%zu) (ABI.VER.2)",
             a->struct_size, (size_t)CTS_ABI_1_0_SIZE);
    return NULL;
  }
  if (!CTS_HAS_SLOT(a, device_list) || !CTS_HAS_SLOT(a, session_open) ||
      !CTS_HAS_SLOT(a, session_close)) {
    snprintf(why, why_len, "adapter lacks device_list, session_open or session_close");
    return NULL;
  }
  return a;
}

/* A slot the judge calls: for every adapter (families 0) or for cases of any of the
 * families (enum tsm_cap bits). */
struct slot_need {
  uint32_t families;
  const char *name;
  size_t offset, size;
};

#define NEED(families, slot) \
  {families, #slot, offsetof(struct tsm_adapter, slot), sizeof(((struct tsm_adapter *)0)->slot)}

/* In the order they are reported: the first one missing names the gap. */
static const struct slot_need slot_needs[] = {
    NEED(0, mgr_root), NEED(0, mgr_new_sub), NEED(0, mgr_sub_of), NEED(0, mgr_close),
    NEED(0, mgr_cap), NEED(0, mgr_info), NEED(0, tensor_new), NEED(0, tensor_desc),
    NEED(0, tensor_read), NEED(0, op), NEED(0, res_attach), NEED(0, res_detach),
    NEED(0, res_temp_attach), NEED(0, res_ret), NEED(0, res_release), NEED(0, res_info),
    NEED(0, live_bytes),
    NEED(TSM_CAP_SCOPES | TSM_CAP_COMPOSITES, res_links),
    NEED(TSM_CAP_SCOPES, scope_open), NEED(TSM_CAP_SCOPES, scope_dispose),
    NEED(TSM_CAP_SCOPES, scope_move_to_outer), NEED(TSM_CAP_SCOPES, scope_move_to_other),
    NEED(TSM_CAP_SCOPES, scope_detach), NEED(TSM_CAP_SCOPES, scope_attach),
    NEED(TSM_CAP_SCOPES, scope_dispose_all), NEED(TSM_CAP_SCOPES, scope_handover),
    NEED(TSM_CAP_SCOPES, scope_wrapped), NEED(TSM_CAP_SCOPES, scope_current),
    NEED(TSM_CAP_SCOPES, scope_info), NEED(TSM_CAP_SCOPES, thread_stats),
    NEED(TSM_CAP_DLPACK_C, dlpack_export), NEED(TSM_CAP_DLPACK_C, dlpack_import),
    NEED(TSM_CAP_GRAPHS, graph_new), NEED(TSM_CAP_GRAPHS, graph_leaf),
    NEED(TSM_CAP_GRAPHS, graph_external), NEED(TSM_CAP_GRAPHS, graph_op),
    NEED(TSM_CAP_GRAPHS, graph_flag), NEED(TSM_CAP_GRAPHS, graph_expand),
    NEED(TSM_CAP_GRAPHS, graph_plan), NEED(TSM_CAP_GRAPHS, graph_write),
    NEED(TSM_CAP_GRAPHS, graph_compute), NEED(TSM_CAP_GRAPHS, graph_read),
    NEED(TSM_CAP_GRAPHS, graph_place), NEED(TSM_CAP_GRAPHS, graph_info),
    NEED(TSM_CAP_GRAPHS, graph_release),
    NEED(TSM_CAP_COMPOSITES, composite_pack), NEED(TSM_CAP_COMPOSITES, composite_list),
    NEED(TSM_CAP_COMPOSITES, composite_component),
};

#undef NEED

/* CTS_HAS_SLOT for a slot known by its place in the struct. */
static int has_slot_at(const struct tsm_adapter *a, size_t offset, size_t size) {
  if (offset + size > a->struct_size) return 0;
  void (*fn)(void);
  assert(size == sizeof fn); /* every slot is a function pointer */
  memcpy(&fn, (const char *)a + offset, sizeof fn);
  return fn != NULL;
}

const char *cts_adapter_missing_slot(const struct tsm_adapter *a, uint32_t families) {
  for (size_t i = 0; i < sizeof slot_needs / sizeof slot_needs[0]; i++) {
    const struct slot_need *need = &slot_needs[i];
    if (need->families && !(need->families & families)) continue;
    if (!has_slot_at(a, need->offset, need->size)) return need->name;
  }
  return NULL;
}
