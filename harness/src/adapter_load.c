/*
 * harness/src/adapter_load.c: dlopen, entry point and version checks.
 */
#include "adapter_load.h"

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

const char *cts_adapter_missing_slot(const struct tsm_adapter *a, uint32_t families) {
#define CTS__REQUIRE(slot) \
  if (!CTS_HAS_SLOT(a, slot)) return #slot;
  CTS__REQUIRE(mgr_root)
  CTS__REQUIRE(mgr_new_sub)
  CTS__REQUIRE(mgr_sub_of)
  CTS__REQUIRE(mgr_close)
  CTS__REQUIRE(mgr_cap)
  CTS__REQUIRE(mgr_info)
  CTS__REQUIRE(tensor_new)
  CTS__REQUIRE(tensor_desc)
  CTS__REQUIRE(tensor_read)
  CTS__REQUIRE(op)
  CTS__REQUIRE(res_attach)
  CTS__REQUIRE(res_detach)
  CTS__REQUIRE(res_temp_attach)
  CTS__REQUIRE(res_ret)
  CTS__REQUIRE(res_release)
  CTS__REQUIRE(res_info)
  CTS__REQUIRE(live_bytes)
  if (families & (TSM_CAP_SCOPES | TSM_CAP_COMPOSITES)) {
    CTS__REQUIRE(res_links)
  }
  if (families & TSM_CAP_SCOPES) {
    CTS__REQUIRE(scope_open)
    CTS__REQUIRE(scope_dispose)
    CTS__REQUIRE(scope_move_to_outer)
    CTS__REQUIRE(scope_move_to_other)
    CTS__REQUIRE(scope_detach)
    CTS__REQUIRE(scope_attach)
    CTS__REQUIRE(scope_dispose_all)
    CTS__REQUIRE(scope_handover)
    CTS__REQUIRE(scope_wrapped)
    CTS__REQUIRE(scope_current)
    CTS__REQUIRE(scope_info)
    CTS__REQUIRE(thread_stats)
  }
  if (families & TSM_CAP_DLPACK_C) {
    CTS__REQUIRE(dlpack_export)
    CTS__REQUIRE(dlpack_import)
  }
  if (families & TSM_CAP_GRAPHS) {
    CTS__REQUIRE(graph_new)
    CTS__REQUIRE(graph_leaf)
    CTS__REQUIRE(graph_external)
    CTS__REQUIRE(graph_op)
    CTS__REQUIRE(graph_flag)
    CTS__REQUIRE(graph_expand)
    CTS__REQUIRE(graph_plan)
    CTS__REQUIRE(graph_write)
    CTS__REQUIRE(graph_compute)
    CTS__REQUIRE(graph_read)
    CTS__REQUIRE(graph_place)
    CTS__REQUIRE(graph_info)
    CTS__REQUIRE(graph_release)
  }
  if (families & TSM_CAP_COMPOSITES) {
    CTS__REQUIRE(composite_pack)
    CTS__REQUIRE(composite_list)
    CTS__REQUIRE(composite_component)
  }
#undef CTS__REQUIRE
  return NULL;
}
