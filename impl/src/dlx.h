/*
 * impl/src/dlx.h: the internal interface between libtsmref's DLPack core (dlpack.c)
 * and its two form translation units, dlpack_legacy.c (Debian's libdlpack-dev 0.6,
 * DLManagedTensor) and dlpack_versioned.c (the DLPack 1.x header of apache-tvm-ffi,
 * DLManagedTensorVersioned), which compile the one form source dlx_form.inc each
 * against its own header. Both headers define the same type names, so each form
 * lives in its own TU and this header uses no DLPack type: values are the DLPack
 * enum values (dlx_form.inc checks them against each header at compile time).
 * Clauses: DLP.DEL.*, DLP.EXPORT.*, DLP.IMPORT.*, DLP.MGR.*.
 */
#ifndef TSMR_DLX_H
#define TSMR_DLX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

/* DLDeviceType and DLDataTypeCode values used here (same in 0.6 and 1.x). */
enum {
  TSMR__DLX_CPU = 1,
  TSMR__DLX_CUDA = 2,
  TSMR__DLX_CUDA_HOST = 3,
  TSMR__DLX_CUDA_MANAGED = 13
};
/* DLPACK_FLAG_BITMASK_* */
#define TSMR__DLX_FLAG_READ_ONLY (1ull << 0)
#define TSMR__DLX_FLAG_IS_COPIED (1ull << 1)

/* The fields of a managed tensor, as the core reads them (parse). */
struct tsmr__dlx_view {
  void *data;
  uint64_t byte_offset;
  int device_type, device_id;
  int ndim;
  const int64_t *shape, *strides; /* strides NULL: compact */
  int strides_refused;            /* NULL strides a versioned minor >= 2 may not give */
  uint8_t code, bits;
  uint16_t lanes;
};

/* What an export describes (build). strides are compact, computed by the core. */
struct tsmr__dlx_out {
  void *data;
  int device_type, device_id;
  int ndim;
  const int64_t *shape, *strides;
  uint8_t code, bits;
  int dtype;      /* the tensor's, kept in the block (dlx_form.inc) */
  int64_t numel;  /* the tensor's, kept in the block too */
  uint64_t flags; /* versioned only */
};

/* Every context that exported keeps one anchor. The context holds a reference while
 * it is open; each export still alive when it closes is given one then, which its
 * deleter drops (so neither an export nor the import of one touches the count, an
 * atomic, while the context lives). lock orders before the context lock. While ctx is
 * set, the export list and the exports' storages belong to the context (its lock);
 * tsmr_ctx_close sets ctx to NULL and the storages become orphaned: the anchor's lock
 * then guards them and be frees their memory (DLP.EXPORT.3 after the session ended). */
struct tsmr__dlx_anchor {
  pthread_mutex_t lock;
  atomic_uint_fast64_t refs;    /* 1 for the context while open + 1 per orphaned export */
  tsmr_ctx *ctx;                /* NULL once the context closed */
  const struct tsmr__backend *be;
  tsmr__list exports;           /* struct tsmr__dlx_rec.node */
};

/* The head of every block a form TU allocates for an export (freed with tsmr__free
 * of the record: it is the block's first member). The form's managed struct is its
 * manager_ctx. */
struct tsmr__dlx_rec {
  struct tsmr__dlx_anchor *anchor;
  struct tsmr__storage *st;     /* one reference */
  tsmr__list node;              /* in anchor->exports */
  /* Set by the versioned form's common export (dlx_form.inc) once it wrote the fields
   * every such export has alike (the deleter, manager_ctx, the shape and strides
   * pointers, byte_offset), which its common import checks before keeping the block:
   * a kept block so marked still has them, and the next export writes only the rest.
   * Every other writer of a block clears it (the form's build; dlx_drop_own_l, whose
   * import does not check them). */
  int primed;
};

/* One per form. */
struct tsmr__dlx_form {
  /* Reads managed: the version first (versioned: major != 1 gives TSMR_EVERSION and
   * nothing else is read), then the fields into v. RETURN 0 or TSMR_EVERSION. */
  int (*parse)(void *managed, struct tsmr__dlx_view *v);
  /* Runs managed's deleter when it is not NULL (DLP.DEL.2); reads nothing else. */
  void (*call_deleter)(void *managed);
  /* RETURN managed's record when managed is one of libtsmref's exports of this form
   * (our deleter), else NULL. Call only after parse succeeded. */
  struct tsmr__dlx_rec *(*own)(void *managed);
  /* Fills block (TSMR__DLX_BLOCK_BYTES from tsmr__alloc, or recycled) with a record
   * at its start and the managed struct from o with libtsmref's deleter. rec,
   * managed: OUT. */
  void (*build)(const struct tsmr__dlx_out *o, void *block, struct tsmr__dlx_rec **rec,
                void **managed);
};

/* The bytes of an export's block, enough for either form's (dlx_form.inc checks): one
 * size, so that the core allocates the blocks and keeps those of its own exports
 * imported again for the next export (ctx->dlx_free_blocks) instead of freeing them. */
#define TSMR__DLX_BLOCK_BYTES 288

/* The DLPack type code and bits of a record's dtype (struct tsmr__tensor.dtype), as
 * every export describes it: a table, so that the export paths of the core and of the
 * forms load it instead of calling. Every index a byte can take is in it, so it is read
 * with no bound check; a live tensor's dtype is one of TSMR__DTYPES. */
struct tsmr__dlx_dt {
  uint8_t code, bits;
};
static inline struct tsmr__dlx_dt tsmr__dlx_dtype(uint8_t dtype) {
  static const struct tsmr__dlx_dt dl[256] = {
#define TSMR__DL_ENTRY(dtype, dl_code, dl_bits) [dtype] = {dl_code, dl_bits},
      TSMR__DTYPES(TSMR__DL_ENTRY)
#undef TSMR__DL_ENTRY
  };
  return dl[dtype];
}

extern const struct tsmr__dlx_form tsmr__dlx_legacy;
extern const struct tsmr__dlx_form tsmr__dlx_versioned;
extern const int tsmr__dlx_versioned_minor; /* DLPACK_MINOR_VERSION built against */

/* The deleter of every export (both forms call it before freeing their block): drops
 * the record's storage reference, and its anchor reference when the context closed
 * before it (tsmr__dlx_close_orphan gave it one). Any thread; takes the
 * anchor lock then the context lock; runs foreign deleters that became due after
 * unlocking both. */
void tsmr__dlx_rec_drop(struct tsmr__dlx_rec *rec);

/* The general export and import (dlpack.c), of either form: the whole call (_any), or
 * its rest with the lock held by the caller, which they release (_held). The public
 * entry points (dlx_form.inc, in the versioned form's unit) take their common case
 * inline (the lock's owner thread; the versioned export of a plain tensor without
 * requests; the versioned import of one of this context's own exports, as it was
 * exported, into an open manager) and hand every other call to these by a tail call,
 * which find the same errors in the same order. An import's refusal runs managed's
 * deleter (tsmr__dlx_import_*: tsmr_dlpack_import, DLP.IMPORT.2) or leaves managed
 * untouched (tsmr__dlx_try_import_*: tsmr_dlpack_try_import); managed NULL or an
 * unknown form runs nothing either way. */
int tsmr__dlx_export_any(tsmr_ctx *ctx, tsmr_handle t, int form, uint32_t request,
                         void **out);
int tsmr__dlx_export_held(tsmr_ctx *ctx, tsmr_handle t, int form, uint32_t request,
                          void **out);
int tsmr__dlx_import_any(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                         tsmr_handle *out);
int tsmr__dlx_import_held(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                          tsmr_handle *out);
int tsmr__dlx_try_import_any(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                             tsmr_handle *out);
int tsmr__dlx_try_import_held(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                              tsmr_handle *out);

/* tsmr_ctx_close, before it takes the context lock: locks the anchor (if any) so no
 * export deleter runs meanwhile. */
void tsmr__dlx_close_begin(tsmr_ctx *ctx);
/* tsmr_ctx_close with the context lock held, after every tensor is released: the
 * remaining exports' storages leave the context's live bytes and become orphaned. */
void tsmr__dlx_close_orphan(tsmr_ctx *ctx);
/* tsmr_ctx_close: frees the kept export blocks. */
void tsmr__dlx_free_blocks(tsmr_ctx *ctx);
/* tsmr_ctx_close after unlocking the context: unlocks the anchor and drops the
 * context's reference to it. */
void tsmr__dlx_close_end(struct tsmr__dlx_anchor *a);

#endif /* TSMR_DLX_H */
