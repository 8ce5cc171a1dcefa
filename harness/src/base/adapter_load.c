/*
 * harness/src/base/adapter_load.c: dlopen, entry point and version checks (ABI.LOAD.1,
 * ABI.VER.1, ABI.VER.2), the slots each family needs, and the defaults of the optional
 * ones (ABI.SLOT.1).
 */
#include "adapter_load.h"

#include <assert.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "opsem.h"
#include "util.h"

/* ---- optional slots (ABI.SLOT.1) --------------------------------------------------
 * A slot that only one kind of statement calls, and that the judge never needs to
 * observe state, is optional: left NULL, it answers ENOTSUP, and the cases that use the
 * statement are NotSupported (exec.c, cts__judge_codes) while the rest of its family
 * runs. Unused parameters are the point of these defaults. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static int no_mgr_sub_of(void *s, tsm_handle r, tsm_handle *out) { return TSM_ENOTSUP; }
static int no_mgr_cap(void *s, tsm_handle m) { return TSM_ENOTSUP; }
static int no_res_pair(void *s, tsm_handle a, tsm_handle b) { return TSM_ENOTSUP; }
static int no_res_one(void *s, tsm_handle r) { return TSM_ENOTSUP; }
static int no_scope_move_to_other(void *s, tsm_handle sc, tsm_handle r, tsm_handle other) {
  return TSM_ENOTSUP;
}
static int no_scope_dispose_all(void *s, tsm_handle sc, const tsm_handle *keep, int n_keep) {
  return TSM_ENOTSUP;
}
static int no_scope_wrapped(void *s, int (*fn)(void *arg, tsm_handle *result), void *arg,
                            tsm_handle *out) {
  return TSM_ENOTSUP;
}
static int no_composite_list(void *s, const tsm_handle *items, int n, tsm_handle *out) {
  return TSM_ENOTSUP;
}
static int no_dlpack_export(void *s, tsm_handle r, int form, uint32_t request, void **out) {
  return TSM_ENOTSUP;
}
static int no_dlpack_import(void *s, void *managed, int form, tsm_handle m, tsm_handle *out) {
  return TSM_ENOTSUP;
}
static int no_graph_external(void *s, tsm_handle g, tsm_handle tensor, tsm_handle *out) {
  return TSM_ENOTSUP;
}
static int no_graph_flag(void *s, tsm_handle t, uint32_t flags) { return TSM_ENOTSUP; }
static int no_res_adopt(void *s, tsm_handle r, tsm_handle *out) { return TSM_ENOTSUP; }
#pragma GCC diagnostic pop

/* The optional slots and their defaults. */
#define CTS_OPTIONAL_SLOTS(X)                                                             \
  X(mgr_sub_of, no_mgr_sub_of) X(mgr_cap, no_mgr_cap) X(res_attach, no_res_pair)           \
  X(res_detach, no_res_one) X(res_temp_attach, no_res_pair) X(res_ret, no_res_pair)        \
  X(scope_move_to_outer, no_res_pair) X(scope_move_to_other, no_scope_move_to_other)      \
  X(scope_detach, no_res_pair) X(scope_attach, no_res_pair)                               \
  X(scope_dispose_all, no_scope_dispose_all) X(scope_handover, no_res_one)                \
  X(scope_wrapped, no_scope_wrapped) X(composite_list, no_composite_list)                 \
  X(dlpack_export, no_dlpack_export) X(dlpack_import, no_dlpack_import)                   \
  X(graph_external, no_graph_external) X(graph_flag, no_graph_flag) X(graph_expand, no_res_pair) \
  X(res_adopt, no_res_adopt)

/* The judge's copies of the adapters it loaded, kept for the life of the process as the
 * objects stay loaded (reachable, so that no leak checker counts them). */
static struct loaded_copy {
  struct tsm_adapter a;
  struct loaded_copy *next;
} *loaded_copies;

/* The judge's own copy of the adapter's struct (only its struct_size bytes are read),
 * its struct_size the judge's, every optional slot it leaves NULL given its default. */
static const struct tsm_adapter *with_defaults(const struct tsm_adapter *a) {
  struct loaded_copy *kept = cts_xcalloc(1, sizeof *kept);
  kept->next = loaded_copies;
  loaded_copies = kept;
  struct tsm_adapter *copy = &kept->a;
  memcpy(copy, a, a->struct_size < sizeof *copy ? a->struct_size : sizeof *copy);
  copy->struct_size = sizeof *copy;
#define CTS__DEFAULT(slot, fallback) \
  if (!copy->slot) copy->slot = fallback;
  CTS_OPTIONAL_SLOTS(CTS__DEFAULT)
#undef CTS__DEFAULT
  if (!copy->dtypes) copy->dtypes = CTS_DTYPES_DEFAULT; /* ABI 1.0 to 1.4 (MGR.DTYPE.1) */
  return copy;
}

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
  return with_defaults(a);
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

/* The slots the judge cannot do without (the optional ones have defaults, above), in
 * the order they are reported: the first one missing names the gap. */
static const struct slot_need slot_needs[] = {
    NEED(0, mgr_root), NEED(0, mgr_new_sub), NEED(0, mgr_close), NEED(0, mgr_info),
    NEED(0, tensor_new), NEED(0, tensor_desc), NEED(0, tensor_read), NEED(0, op),
    NEED(0, res_release), NEED(0, res_info), NEED(0, live_bytes),
    NEED(TSM_CAP_SCOPES | TSM_CAP_COMPOSITES, res_links),
    NEED(TSM_CAP_SCOPES, scope_open), NEED(TSM_CAP_SCOPES, scope_dispose),
    NEED(TSM_CAP_SCOPES, scope_current), NEED(TSM_CAP_SCOPES, scope_info),
    NEED(TSM_CAP_SCOPES, thread_stats),
    NEED(TSM_CAP_GRAPHS, graph_new), NEED(TSM_CAP_GRAPHS, graph_leaf),
    NEED(TSM_CAP_GRAPHS, graph_op), NEED(TSM_CAP_GRAPHS, graph_plan),
    NEED(TSM_CAP_GRAPHS, graph_write), NEED(TSM_CAP_GRAPHS, graph_compute),
    NEED(TSM_CAP_GRAPHS, graph_read), NEED(TSM_CAP_GRAPHS, graph_place),
    NEED(TSM_CAP_GRAPHS, graph_info), NEED(TSM_CAP_GRAPHS, graph_release),
    NEED(TSM_CAP_COMPOSITES, composite_pack), NEED(TSM_CAP_COMPOSITES, composite_component),
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
