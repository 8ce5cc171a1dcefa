/*
 * impl/src/internal.h: libtsmref's internal types and cross-file (tsmr__) functions:
 * the always-on assertion, the intrusive list, the handle encoding, and the context,
 * manager, tensor, storage and borrow-record structs. Clause ids: MGR.OWN.1-3,
 * ABI.HANDLE.1, ERR.HANDLE.1, MGR.COUNT.1-2, MGR.COUNT.4.
 *
 * Ownership invariant (spec/architecture.md): every live tensor sits on exactly one list: its
 * holder's `owned` list (held, not borrowed), its holder's `borrowed` list (held
 * through a temporary attach; the borrow stack is non-empty) or the context's
 * `detached` list. Every open manager except the root sits on its parent's `children`
 * list. Counters next to each list are kept incrementally.
 */
#ifndef TSMR_INTERNAL_H
#define TSMR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tsmref.h"
#include "backend.h"
#include "lock.h"

/* Internal invariants only; never used for caller errors (ERR.NOABORT.1). */
#define TSMR_ASSERT(x)                                                         \
  do {                                                                         \
    if (!(x)) {                                                                \
      fprintf(stderr, "%s:%d: libtsmref assertion failed: %s\n", __FILE__,     \
              __LINE__, #x);                                                   \
      abort();                                                                 \
    }                                                                          \
  } while (0)

#define tsmr__container_of(ptr, type, member)                                  \
  ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- allocation hook (alloc.c): every host allocation of the library ---------- */
void *tsmr__alloc(size_t n);   /* RETURN: owned by the caller, free with tsmr__free */
/* A mapping of its own of bytes (a power of two) at a multiple of bytes, through the
 * same hook; NULL: ENOMEM. Released with tsmr__unmap(p, bytes). */
void *tsmr__map_aligned(size_t bytes);
void tsmr__unmap(void *p, size_t bytes);
void *tsmr__realloc(void *p, size_t n); /* like realloc; NULL leaves p intact */
void tsmr__free(void *p);      /* p: IN, freed; NULL is a no-op */
/* n bytes at a cache-line boundary, through tsmr__alloc (whose malloc aligns to 16):
 * RETURN them, or NULL (ENOMEM); block: OUT, what tsmr__free frees. */
static inline void *tsmr__alloc_lines(size_t n, void **block) {
  if (!(*block = tsmr__alloc(n + 63))) return NULL;
  return (void *)(((uintptr_t)*block + 63) & ~(uintptr_t)63);
}
/* 1 when an allocation served from memory the library keeps (impl/cpu/block_cache.h)
 * must fail: the hook counts it as one allocation, as if it were new. */
int tsmr__alloc_refused(void);
/* The countdown of the fault injection (alloc.c), 0 when off. */
extern atomic_uint_fast64_t tsmr__alloc_fail_countdown;
/* 1 while a test armed the fault injection: a fast path that would use memory the
 * library keeps (and so call tsmr__alloc_refused) declines then, one relaxed load
 * instead of a call. */
static inline int tsmr__alloc_armed(void) {
  return atomic_load_explicit(&tsmr__alloc_fail_countdown, memory_order_relaxed) != 0;
}
/* Fault injection for tests arms this hook: tsmref_test.h. */

/* ---- intrusive doubly-linked list (Linux/libuv style) ---------------------- */
typedef struct tsmr__list {
  struct tsmr__list *next, *prev;
} tsmr__list;

#define TSMR__POISON1 ((tsmr__list *)(uintptr_t)0xdead000000000100ull)
#define TSMR__POISON2 ((tsmr__list *)(uintptr_t)0xdead000000000200ull)

static inline void tsmr__list_init(tsmr__list *h) { h->next = h->prev = h; }
static inline int tsmr__list_empty(const tsmr__list *h) { return h->next == h; }
static inline void tsmr__list_add(tsmr__list *h, tsmr__list *n) {
  n->next = h->next;
  n->prev = h;
  h->next->prev = n;
  h->next = n;
}
/* n last: a list walked from its head then meets what was added in the order added
 * (a manager's close walks the records of a run of creates up their addresses) */
static inline void tsmr__list_add_tail(tsmr__list *h, tsmr__list *n) {
  n->next = h;
  n->prev = h->prev;
  h->prev->next = n;
  h->prev = n;
}
__attribute__((always_inline)) /* on the release paths */
static inline void tsmr__list_del(tsmr__list *n) {
  TSMR_ASSERT(n->next != TSMR__POISON1 && "double unlink");
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->next = TSMR__POISON1;
  n->prev = TSMR__POISON2;
}

/* ---- handles: kind:4 | slot:28 | generation:32 --------------------------------- */
enum { TSMR__KIND_MGR = 1, TSMR__KIND_TENSOR = 2, TSMR__KIND_SCOPE = 3 };
/* Graphs (graph.c): a graph handle is KIND_GRAPH | graph slot | TSMR__MGR_GEN; a graph
 * tensor handle is KIND_GNODE | graph slot | node index + 1. Graph slots are never
 * reused. */
enum { TSMR__KIND_GRAPH = 4, TSMR__KIND_GNODE = 5 };
#define TSMR__SLOT_MAX ((1u << 28) - 1u)
static inline tsmr_handle tsmr__mkhandle(unsigned kind, uint32_t slot, uint32_t gen) {
  return ((uint64_t)kind << 60) | ((uint64_t)slot << 32) | gen;
}
static inline unsigned tsmr__h_kind(tsmr_handle h) { return (unsigned)(h >> 60); }
static inline uint32_t tsmr__h_slot(tsmr_handle h) {
  return (uint32_t)(h >> 32) & TSMR__SLOT_MAX;
}
static inline uint32_t tsmr__h_gen(tsmr_handle h) { return (uint32_t)h; }

/* A slot of a handle table. Tensor slots: obj is the live tensor or NULL when free;
 * gen is the generation of the current (or next) occupant; a handle with a smaller
 * generation names a released tensor. Manager slots are never reused: obj is NULL
 * once the manager closed, and flags keeps its last state bits. */
struct tsmr__slot {
  void *obj;
  uint32_t gen;
  uint32_t aux; /* tensor slots: next free index + 1 (0 = end), or TSMR__SLOT_KEPT |
                 * the kind of a released component or composite; manager slots: flags */
};
#define TSMR__SLOT_KEPT 0x80000000u /* above any free index + 1 (slot:28) */

struct tsmr__table {
  struct tsmr__slot *slots;
  uint32_t len, cap;  /* slots [0, len) were handed out at least once */
  uint32_t free_head; /* free tensor slot index + 1, 0 = none */
  /* Tensor slots only: per block of TSMR__SLOT_BLOCK slots, the free list its free slots
   * go on: a thread's own (struct tsmr__thread.slot_head) for a block given to it, NULL
   * for free_head. NULL until the first block is given (tsmr__tslot_grant). */
  uint32_t **homes;
};
#define TSMR__SLOT_BLOCK_SHIFT 6u
#define TSMR__SLOT_BLOCK (1u << TSMR__SLOT_BLOCK_SHIFT)

/* ---- objects ------------------------------------------------------------------- */
enum { TSMR__OPEN = 0, TSMR__CLOSING = 1 }; /* a finished manager has no struct */

struct tsmr__mgr {
  tsmr__list sib;       /* in parent's children list (not for the root) */
  tsmr__list children;  /* open child managers */
  tsmr__list owned;     /* tensors held and not borrowed */
  tsmr__list borrowed;  /* tensors held through a temporary attach */
  tsmr__list graphs;    /* live graphs made in it (graph.c, GRAPH.MGR.1) */
  struct tsmr__mgr *parent;
  /* The thread whose lane may create and release in it (tensor.c): the last one that
   * created in it under the lock. Written only by the lock's holder. */
  struct tsmr__thread *lane_owner;
  uint64_t n_owned, n_borrowed, n_children;
  tsmr_handle handle;
  int state;            /* TSMR__OPEN or TSMR__CLOSING (closing refuses additions) */
  int capped;
  int is_root;
};

struct tsmr__storage {
  uint64_t refs;        /* live tensors and DLPack exports sharing it */
  size_t nbytes;        /* bytes counted in live bytes (0 for an aliased import) */
  void *data;           /* device pointer; == small for small host storage */
  struct tsmr__storage *next_free; /* free list; or the pending list (ext set) */
  /* An aliased DLPack import (dlpack.c): the foreign managed struct and the function
   * that runs its deleter; data is the producer's and is never freed here. Such a
   * storage struct is never recycled: once its refs reach 0 it goes on the context's
   * pending list and tsmr__leave runs ext_del(ext) and frees it after unlocking. */
  void *ext;
  void (*ext_del)(void *ext);
  int orphaned;         /* held only by exports that outlived the context (dlpack.c) */
  int embedded;         /* the own storage of a tensor record (struct tsmr__tensor) */
  union {
    unsigned char bytes[64];
    long double align_ld;
    void *align_p;
    uint64_t align_u;
  } small;              /* inline buffer for small host tensors */
};

/* One record per temporary attach; the stack's top is the latest borrow. */
struct tsmr__borrow {
  tsmr_handle lender;   /* previous holder, TSMR_NONE when it was detached */
  struct tsmr__borrow *below;
};

/* Resource kinds (struct tsmr__tensor.rkind). A composite has no storage and no
 * shape; its components are tensors that sit on no list, have no holder, borrow
 * stack or scope of their own and point at their composite (COMP.UNIT.1). */
enum { TSMR__RES_PLAIN = 0, TSMR__RES_COMPONENT = 1, TSMR__RES_COMPOSITE = 2 };
enum { TSMR__COMP_PACKED = 1, TSMR__COMP_LIST = 2 };

struct tsmr__scope;
struct tsmr__graph;

/* A tensor record is two parts in one slab: its head (struct tsmr__tensor, one cache
 * line: its links, holder, borrow stack, storage, handle, scope, kinds, dtype and rank)
 * and its body (struct tsmr__tensor_body: its own storage, with the inline buffer of a
 * small host tensor, and its shape). A slab keeps its heads back to back and its bodies
 * after them, so that a manager's close, which walks a million records and reads only
 * their heads, touches one line per tensor with none skipped between them: each further
 * line per tensor costs more than the bookkeeping itself (bench/README.md). The body is
 * found from the head's address by arithmetic (tsmr__body), never by a load.
 *
 * The own storage is the tensor's storage unless the tensor shares another's (a
 * reshape view, an import of an own export: st points elsewhere, own stays unused).
 * A view or a DLPack export can hold own beyond the tensor's release: the record then
 * stays out of the free list, dead (handle TSMR_NONE), until the last reference goes
 * (tsmr__storage_put), or, orphaned by a context close, until the export's deleter
 * frees it (dlpack.c). A record on the free list holds no reference to own (own.refs is
 * 0, or own_idle says so).
 *
 * Two marks let the common release and a manager's close touch only the head. While
 * own_sole is set, own is the tensor's storage (st == &own) with its one reference and
 * inline data or none, and own_bytes is its byte count, so the release need not read
 * own: it leaves own as it was and sets own_idle, which says that own's refs and data
 * are stale (it holds nothing); every reader of own.refs honours it (tsmr__own_refs),
 * and the next fill of own clears it. Every new reference to a storage goes through
 * tsmr__storage_ref or tsmr__tensor_share, which clear own_sole. */
struct tsmr__tensor {
  union {
    tsmr__list node;        /* see the ownership invariant above (not components) */
    struct tsmr__tensor *next_free; /* on a free list of records: the next one */
  };
  struct tsmr__mgr *holder; /* NULL when detached */
  struct tsmr__borrow *borrows; /* top of the borrow stack, NULL when not borrowed */
  struct tsmr__storage *st; /* &own, another tensor's storage, or NULL (composites) */
  tsmr_handle handle;       /* TSMR_NONE once released */
  struct tsmr__scope *scope;    /* owning scope (scope.c); always NULL for a component */
  uint8_t rkind;                /* TSMR__RES_* */
  uint8_t ckind;                /* composites: TSMR__COMP_* */
  uint8_t own_sole;             /* own holds the tensor's storage alone (above) */
  uint8_t own_idle;             /* own holds nothing; its refs and data are stale */
  uint8_t own_bytes;            /* own.nbytes while own_sole is set (at most 64) */
  uint8_t dtype;                /* TSMR_* dtype */
  uint8_t ndim;                 /* 0..TSMR_MAX_DIMS */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct tsmr__tensor) == 64, "a tensor's head is one cache line");
_Static_assert(TSMR_MAX_DIMS < 256 && TSMR_BOOL < 256, "dtype and ndim fit a byte");

struct tsmr__tensor_body {
  struct tsmr__storage own;
  int64_t numel;
  /* scopes (scope.c) and composites (composite.c) */
  tsmr__list snode;             /* in scope->members while scope != NULL */
  struct tsmr__tensor *parent;  /* components: their composite */
  struct tsmr__tensor **comps;  /* composites: n_comps entries, NULL = absent */
  int n_comps;
  int64_t shape[TSMR_MAX_DIMS];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct tsmr__tensor_body) == 256, "a tensor's body is four lines");

/* Records come in slabs of TSMR__SLAB_BYTES, each a mapping of its own aligned to that
 * size (tensor.c): a header line, TSMR__SLAB_RECS heads back to back, then as many
 * bodies in the same order. Large, so that a manager's close walks long runs of heads;
 * a mapping of its own, because inside the larger mapping glibc makes for an
 * aligned_alloc of that size the exchange table's round trip ran a fifth slower
 * (bench/README.md). A record's slab is its address rounded down; a record is never
 * freed alone: its slab is, once the context closed and no record of it is held by an
 * export that outlived the context (an orphaned storage, dlpack.c). */
#define TSMR__SLAB_BYTES ((uintptr_t)2097152)
#define TSMR__SLAB_RECS                                                               \
  ((uint32_t)((TSMR__SLAB_BYTES - 64) /                                              \
              (sizeof(struct tsmr__tensor) + sizeof(struct tsmr__tensor_body))))
#define TSMR__SLAB_BODIES (64 + (uintptr_t)TSMR__SLAB_RECS * sizeof(struct tsmr__tensor))
struct tsmr__rec_slab {
  struct tsmr__rec_slab *next;  /* the context's slabs */
  atomic_uint_fast64_t refs;    /* 1 for the context, 1 per orphaned record in it */
};
static inline struct tsmr__rec_slab *tsmr__rec_slab_of(const void *rec) {
  return (struct tsmr__rec_slab *)((uintptr_t)rec & ~(TSMR__SLAB_BYTES - 1));
}
/* t's body: its slab's bodies start at TSMR__SLAB_BODIES, in the order of its heads.
 * With o, t's offset in its slab, the body is at slab + TSMR__SLAB_BODIES + (o - 64) *
 * 4 (a body is four times a head), which is t + 3 * o + TSMR__SLAB_BODIES - 256: an
 * AND and two additions. */
static inline struct tsmr__tensor_body *tsmr__body(const struct tsmr__tensor *t) {
  _Static_assert(sizeof(struct tsmr__tensor_body) == 4 * sizeof(struct tsmr__tensor),
                 "a body is four heads");
  uintptr_t o = (uintptr_t)t & (TSMR__SLAB_BYTES - 1);
  return (struct tsmr__tensor_body *)((uintptr_t)t + 3 * o + TSMR__SLAB_BODIES - 256);
}
/* The head of body b. */
static inline struct tsmr__tensor *tsmr__body_head(const struct tsmr__tensor_body *b) {
  uintptr_t base = (uintptr_t)tsmr__rec_slab_of(b);
  uintptr_t i = ((uintptr_t)b - base - TSMR__SLAB_BODIES) / sizeof *b;
  return (struct tsmr__tensor *)(base + 64 + i * sizeof(struct tsmr__tensor));
}
/* The tensor of a scope's member link n (struct tsmr__tensor_body.snode). */
static inline struct tsmr__tensor *tsmr__scope_member(tsmr__list *n) {
  return tsmr__body_head(tsmr__container_of(n, struct tsmr__tensor_body, snode));
}
/* The tensor whose own storage is s (s->embedded). */
static inline struct tsmr__tensor *tsmr__own_head(const struct tsmr__storage *s) {
  return tsmr__body_head(tsmr__container_of(s, struct tsmr__tensor_body, own));
}

/* The references own holds: 0 when idle (its refs field is stale then). */
static inline uint64_t tsmr__own_refs(const struct tsmr__tensor *t) {
  return t->own_idle ? 0 : tsmr__body(t)->own.refs;
}

/* An orphaned record holds its slab; dropped by the context or the last orphan, the
 * slab is freed (any thread: an export's deleter may drop the last orphan). */
static inline void tsmr__rec_hold(struct tsmr__tensor *t) {
  atomic_fetch_add_explicit(&tsmr__rec_slab_of(t)->refs, 1, memory_order_relaxed);
}
static inline void tsmr__slab_put(struct tsmr__rec_slab *s) {
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
    tsmr__unmap(s, TSMR__SLAB_BYTES);
}

/* The resource whose holder, lender and borrow state t reports (COMP.UNIT.1). */
static inline const struct tsmr__tensor *tsmr__holder_res(const struct tsmr__tensor *t) {
  return t->rkind == TSMR__RES_COMPONENT ? tsmr__body(t)->parent : t;
}

/* ---- scopes and per-thread state (scope.c) ------------------------------------ */
struct tsmr__stats {
  uint64_t c_in, c_out, d_in, d_out, attached, detached;
};

/* One per (context, thread that called into it); freed with the context. Cache-line
 * aligned: what the thread's lane calls write (lock.h) shares no line with another
 * thread's. */
struct tsmr__thread {
  struct tsmr__lane lane;       /* its way into the lock without the mutex */
  struct tsmr__tensor *lane_recs; /* free records its lane calls take and give back */
  uint32_t slot_head;           /* free slots of its blocks (index + 1, 0 = none) */
  uint32_t grant;               /* slots given to it the last time (tsmr__tslot_grant) */
  uint64_t lane_calls;          /* creates and releases its lane took (test-lock reads it) */
  struct tsmr__scope *innermost; /* current scope (SCOPE.STACK.2), NULL = none */
  struct tsmr__stats st[2];     /* [TSMR_KIND_TENSOR], [TSMR_KIND_COMPOSITE] */
  uint64_t tid;                 /* tsmr__tid of its thread, never reused */
  struct tsmr__thread *next;
  void *block;                  /* what tsmr__alloc gave (this struct is aligned in it) */
} __attribute__((aligned(64)));

/* An open scope; a disposed scope has no struct (its slot's obj is NULL). The chain of
 * a thread runs innermost -> outer; inner is the reverse link (NULL for the
 * innermost). */
struct tsmr__scope {
  tsmr__list members;
  uint64_t n_members;
  struct tsmr__scope *outer, *inner;
  struct tsmr__thread *thr;     /* the thread whose chain it is in */
  tsmr_handle handle;
};

struct tsmr_ctx {
  const struct tsmr__backend *be;
  const char *device_name;
  struct tsmr__table mgrs, tensors;
  struct tsmr__mgr *root;
  tsmr__list detached;          /* live tensors with no holder */
  uint64_t n_detached;
  uint64_t live_bytes;          /* sum of live storages' bytes (MGR.COUNT.4) */
  struct tsmr__tensor *free_tensors;   /* recycled records, chained through next_free */
  struct tsmr__storage *free_storages; /* recycled storages of their own (not embedded) */
  struct tsmr__rec_slab *slabs; /* where every record lives (tensor_fresh in tensor.c) */
  struct tsmr__tensor *slab_next; /* the newest slab's next unused record */
  uint32_t slab_left;           /* unused records after it */
  struct tsmr__borrow *free_borrows;   /* recycled records, chained through below */
  /* Threads (SCOPE.THREAD.3): every public entry point holds lock; cur is the state
   * of the thread holding it (NULL while the context closes); owner_ts is the state of
   * the thread the lock is biased toward (lock.h), set with the grant. */
  struct tsmr__lock lock;
  uint64_t serial;              /* unique per context, never reused */
  struct tsmr__thread *threads, *cur, *owner_ts;
  struct tsmr__table scopes;    /* never-reused slots, obj NULL once disposed */
  /* DLPack (dlpack.c): the anchor of this context's exports (NULL until the first
   * export) and the aliased-import storages whose deleters run at the next leave. */
  struct tsmr__dlx_anchor *dlx_anchor;
  int dlx_device_type;          /* its memory's DLDeviceType, as its exports give it */
  struct tsmr__storage *dlx_pending;
  void *dlx_free_blocks;        /* recycled export blocks, chained through their first word */
  /* Graphs (graph.c): never-reused slots; obj is the graph struct, kept (released)
   * until the context closes. */
  struct tsmr__table graphs;
};

/* The calling thread's identity and its cache of the last context's thread state
 * (scope.c): one thread-local struct, so that a call computes one thread-local address. */
struct tsmr__tls {
  uint64_t thread_id;        /* never reused; 0 until the thread's first call */
  uint64_t serial;           /* the context ts belongs to */
  struct tsmr__thread *ts;
};
/* initial-exec: in a shared library the default model reaches it through a call of
 * __tls_get_addr on every entry (about a tenth of a scoped create + release); 24 bytes
 * of static TLS, which glibc keeps in reserve for a library loaded by dlopen too. */
extern _Thread_local struct tsmr__tls tsmr__tls __attribute__((tls_model("initial-exec")));
/* Slow path of tsmr__enter: finds or makes the calling thread's state (NULL: ENOMEM). */
struct tsmr__thread *tsmr__thread_lookup(tsmr_ctx *ctx);
/* Slow path of tsmr__enter (scope.c): through the mutex. c: the caller's tsmr__tls.
 * to_lanes: see tsmr__lock_acquire_slow; RETURN TSMR__TO_LANES (nothing held) then. */
int tsmr__enter_slow(tsmr_ctx *ctx, struct tsmr__tls *c, int to_lanes);
#define TSMR__TO_LANES (-1) /* no TSMR_E* code */

/* The fast half of tsmr__enter: RETURN 1 when the calling thread, the one the lock is
 * biased toward, holds it now and ctx->cur is set, else 0 and nothing is held. */
static inline int tsmr__enter_owner(tsmr_ctx *ctx) {
  if (__builtin_expect(tsmr__lock_owner_enter(&ctx->lock, tsmr__tls.thread_id), 1)) {
    ctx->cur = ctx->owner_ts;
    return 1;
  }
  return 0;
}

/* Takes the context lock and sets ctx->cur. RETURN 0, or TSMR_ENOMEM (lock not held)
 * when a thread's first call cannot allocate its state. */
static inline int tsmr__enter(tsmr_ctx *ctx) {
  if (tsmr__enter_owner(ctx)) return 0;
  return tsmr__enter_slow(ctx, &tsmr__tls, 0);
}
/* Runs the foreign DLPack deleters of a pending list and frees its storage structs
 * (dlpack.c); called without any lock. */
void tsmr__dlx_run_pending(struct tsmr__storage *p);
/* Drops the lock; foreign deleters that became due meanwhile run after unlocking (a
 * foreign deleter is arbitrary code and may call back). */
static inline void tsmr__leave(tsmr_ctx *ctx) {
  struct tsmr__storage *p = ctx->dlx_pending;
  if (__builtin_expect(p != NULL, 0)) ctx->dlx_pending = NULL;
  tsmr__lock_release(&ctx->lock);
  if (__builtin_expect(p != NULL, 0)) tsmr__dlx_run_pending(p);
}

/* Public wrappers: NAME(ctx, ...) runs NAME##_l under the lock. */
#define TSMR__LOCKED(call)                                                     \
  do {                                                                         \
    if (!ctx) return TSMR_EINVAL;                                              \
    int rc_ = tsmr__enter(ctx);                                                \
    if (rc_) return rc_;                                                       \
    rc_ = (call);                                                              \
    tsmr__leave(ctx);                                                          \
    return rc_;                                                                \
  } while (0)

/* optable.c: the op table, one row per operation (name, arity, results, where it runs,
 * shape rule, the backend kernel slots), which managers (ops.c) and graphs (graph.c)
 * dispatch through; the clauses are MGR.OP.7-9 and GRAPH.OP.1. An operand as the shape
 * rules read it (borrowed from a tensor or a graph tensor). */
struct tsmr__operand {
  int dtype, ndim;
  const int64_t *shape;
  int64_t numel;
};

/* One call of tsmr_op or tsmr_graph_op: the public argument lists, packed once at the
 * entry point. into: the result's manager (tsmr_op: TSMR_NONE for the first input's
 * holder) or the graph (tsmr_graph_op). outs: OUT, n_outs handles (tsmr_op: 1). */
struct tsmr__op_call {
  int op;
  const tsmr_handle *inputs;
  int n;
  const int64_t *params;
  int n_params;
  tsmr_handle into;
  tsmr_handle *outs;
  int n_outs;
};

/* A shape rule's question and answer. a, b: the operands (b zeroed for one input).
 * ndim, shape: OUT, per result; zero: OUT, the result is all zeros without a kernel
 * (a sum of nothing, an empty inner dimension; managers skip the kernel then). */
struct tsmr__shape_call {
  struct tsmr__operand a, b;
  const int64_t *params;
  int n_params;
  int ndim[3];
  int64_t shape[3][TSMR_MAX_DIMS];
  int zero;
};

/* A kernel's arguments: device pointers of this backend (out: per result), the
 * operands' and the (first) result's shapes. */
struct tsmr__kernel_call {
  const struct tsmr__backend *be;
  int dtype;
  void *out[3];
  const void *a, *b;
  const struct tsmr__operand *oa, *ob, *res;
};

#define TSMR__OP_MGR 1u   /* tsmr_op runs it */
#define TSMR__OP_GRAPH 2u /* tsmr_graph_op builds it */

/* A row of the op table. Each kernel is the backend's function in slot (an offsetof
 * in struct tsmr__backend; 0: no kernel, a view), called through run with the
 * operands unpacked; a backend whose slot is NULL answers TSMR_ENOTSUP (the slots are
 * optional). Managers and graphs each have their own slot (matmul: the backend's own
 * loop for managers, the platform BLAS for graphs). */
struct tsmr__op_def {
  const char *name;
  int arity, n_results;
  unsigned where; /* TSMR__OP_MGR | TSMR__OP_GRAPH */
  /* The checks (ESHAPE, EDTYPE in that order; ENOMEM for a result too large) and the
   * results' shapes. */
  int (*shape)(struct tsmr__shape_call *c);
  size_t mgr_slot, graph_slot;
  int (*mgr_run)(const struct tsmr__kernel_call *k);
  int (*graph_run)(const struct tsmr__kernel_call *k);
};
/* The row of op (enum tsmr_op), NULL for an unknown op. */
const struct tsmr__op_def *tsmr__op_def(int op);
/* Does be fill the kernel slot (a tsmr__op_def slot; 0: none needed)? */
int tsmr__backend_has(const struct tsmr__backend *be, size_t slot);
/* EINVAL for a reshape's bad target dims (count, NULL, negative); 0 for other ops. */
int tsmr__op_params_check(int op, int n_params, const int64_t *params);

/* handle.c */
void tsmr__table_free(struct tsmr__table *t);
int tsmr__table_reserve(struct tsmr__table *t);  /* room for one more new slot */
/* Gives the free list head (a thread's slot_head) whole blocks of new tensor slots, n
 * (a multiple of TSMR__SLOT_BLOCK) of them, that go back there whenever freed (the
 * slots left in the last block before them go to the table's own list). RETURN 0 or
 * TSMR_ENOMEM (nothing changed). */
int tsmr__tslot_grant(struct tsmr__table *t, uint32_t *head, uint32_t n);
uint32_t tsmr__mslot_alloc(struct tsmr__table *t, void *obj); /* after reserve */

#define TSMR__MGR_GEN 1u

/* Tensor slots, inline for the create/release fast path. tslot_ready makes room for
 * one more slot; tslot_alloc then cannot fail and RETURNs the slot index. unalloc
 * gives back a slot whose handle was never issued; release bumps the generation.
 * Lookups: EINVAL for a handle never issued or of the wrong kind; a released tensor
 * gives 0 with *out = NULL; a closed manager gives 0 with *out = NULL. */
static inline int tsmr__tslot_ready(struct tsmr__table *t) {
  return t->free_head ? 0 : tsmr__table_reserve(t);
}

static inline uint32_t tsmr__tslot_alloc(struct tsmr__table *t, void *obj) {
  uint32_t idx;
  if (t->free_head) {
    idx = t->free_head - 1;
    t->free_head = t->slots[idx].aux;
  } else {
    TSMR_ASSERT(t->len < t->cap && "tsmr__tslot_ready not called");
    idx = t->len++;
    t->slots[idx].gen = 1;
  }
  t->slots[idx].obj = obj;
  t->slots[idx].aux = 0;
  return idx;
}

/* Takes the first slot of the free list head (not empty) for obj: RETURN its index. */
static inline uint32_t tsmr__tslot_pop(struct tsmr__table *t, uint32_t *head, void *obj) {
  uint32_t idx = *head - 1;
  *head = t->slots[idx].aux;
  t->slots[idx].obj = obj;
  t->slots[idx].aux = 0;
  return idx;
}

/* The free list slot idx goes back to: its block's thread's, or the table's own. */
static inline uint32_t *tsmr__tslot_home(struct tsmr__table *t, uint32_t idx) {
  uint32_t *home = t->homes ? t->homes[idx >> TSMR__SLOT_BLOCK_SHIFT] : NULL;
  return home ? home : &t->free_head;
}

__attribute__((always_inline)) /* on the release paths */
static inline void tsmr__tslot_push(struct tsmr__table *t, uint32_t idx) {
  uint32_t *home = tsmr__tslot_home(t, idx);
  t->slots[idx].obj = NULL;
  t->slots[idx].aux = *home;
  *home = idx + 1;
}

static inline void tsmr__tslot_unalloc(struct tsmr__table *t, uint32_t idx) {
  tsmr__tslot_push(t, idx);
}

/* rkind: what the slot held (TSMR__RES_*). A component's or composite's slot is never
 * recycled: it keeps the kind in aux, so that its handle is still known as one after
 * the release (COMP.UNIT.3 comes before ERELEASED, ERR.ORDER.1); the cost is one slot
 * per composite and component ever made. */
__attribute__((always_inline)) /* on the release's fast path */
static inline void tsmr__tslot_release(struct tsmr__table *t, uint32_t idx, int rkind) {
  struct tsmr__slot *s = &t->slots[idx];
  ++s->gen;
  if (rkind != TSMR__RES_PLAIN) {
    s->obj = NULL;
    s->aux = TSMR__SLOT_KEPT | (uint32_t)rkind;
    return;
  }
  if (s->gen == UINT32_MAX) { /* retire: the generation space is used up */
    s->obj = NULL;
    return;
  }
  tsmr__tslot_push(t, idx);
}

static inline int tsmr__tensor_get(tsmr_ctx *ctx, tsmr_handle h,
                                   struct tsmr__tensor **out) {
  if (tsmr__h_kind(h) != TSMR__KIND_TENSOR) return TSMR_EINVAL;
  uint32_t idx = tsmr__h_slot(h), gen = tsmr__h_gen(h);
  if (idx >= ctx->tensors.len || gen == 0) return TSMR_EINVAL;
  const struct tsmr__slot *s = &ctx->tensors.slots[idx];
  if (gen < s->gen) {
    *out = NULL; /* released */
    return 0;
  }
  if (gen != s->gen || !s->obj) return TSMR_EINVAL;
  *out = s->obj;
  return 0;
}

/* The resource kind (TSMR__RES_*) handle h was issued for, live or released; t is
 * what tsmr__tensor_get gave for h. Only the last occupant of a kept slot is a
 * released component or composite (tsmr__tslot_release). */
static inline int tsmr__res_kind(const tsmr_ctx *ctx, tsmr_handle h,
                                 const struct tsmr__tensor *t) {
  if (t) return t->rkind;
  const struct tsmr__slot *s = &ctx->tensors.slots[tsmr__h_slot(h)];
  if (!(s->aux & TSMR__SLOT_KEPT) || tsmr__h_gen(h) + 1 != s->gen) return TSMR__RES_PLAIN;
  return (int)(s->aux & ~TSMR__SLOT_KEPT);
}

static inline int tsmr__mgr_get(tsmr_ctx *ctx, tsmr_handle h, struct tsmr__mgr **out,
                                uint32_t *closed_flags) {
  if (tsmr__h_kind(h) != TSMR__KIND_MGR) return TSMR_EINVAL;
  uint32_t idx = tsmr__h_slot(h);
  if (idx >= ctx->mgrs.len || tsmr__h_gen(h) != TSMR__MGR_GEN) return TSMR_EINVAL;
  const struct tsmr__slot *s = &ctx->mgrs.slots[idx];
  *out = s->obj;
  if (closed_flags) *closed_flags = s->aux;
  return 0;
}

static inline int tsmr__scope_get(tsmr_ctx *ctx, tsmr_handle h,
                                  struct tsmr__scope **out) {
  if (tsmr__h_kind(h) != TSMR__KIND_SCOPE) return TSMR_EINVAL;
  uint32_t idx = tsmr__h_slot(h);
  if (idx >= ctx->scopes.len || tsmr__h_gen(h) != TSMR__MGR_GEN) return TSMR_EINVAL;
  *out = ctx->scopes.slots[idx].obj; /* NULL: disposed */
  return 0;
}

static inline void tsmr__scope_add(struct tsmr__scope *s, struct tsmr__tensor *t) {
  t->scope = s;
  tsmr__list_add(&s->members, &tsmr__body(t)->snode);
  s->n_members++;
}
static inline void tsmr__scope_del(struct tsmr__tensor *t) {
  struct tsmr__scope *s = t->scope;
  tsmr__list_del(&tsmr__body(t)->snode);
  TSMR_ASSERT(s->n_members > 0);
  s->n_members--;
  t->scope = NULL;
}

static inline struct tsmr__stats *tsmr__stats_of(tsmr_ctx *ctx,
                                                 const struct tsmr__tensor *t) {
  return ctx->cur ? &ctx->cur->st[t->rkind == TSMR__RES_COMPOSITE] : NULL;
}

/* A new plain resource or composite joins the current scope of th (the calling
 * thread's state) and counts as created (SCOPE.REG.1, SCOPE.STAT.2). Called once the
 * creating call can no longer fail. */
static inline void tsmr__res_register_on(struct tsmr__thread *th, struct tsmr__tensor *t) {
  struct tsmr__stats *st = &th->st[t->rkind == TSMR__RES_COMPOSITE];
  if (th->innermost) {
    tsmr__scope_add(th->innermost, t);
    st->c_in++;
  } else {
    st->c_out++;
  }
}
/* The same, on the calling thread of a call that holds the lock (ctx->cur). */
static inline void tsmr__res_register(tsmr_ctx *ctx, struct tsmr__tensor *t) {
  tsmr__res_register_on(ctx->cur, t);
}

/* manager.c */
int tsmr__mgr_create(tsmr_ctx *ctx, struct tsmr__mgr *parent, struct tsmr__mgr **out);
void tsmr__mgr_close(tsmr_ctx *ctx, struct tsmr__mgr *m); /* also the root */
/* Returns 0 when m may receive an addition, else TSMR_ECLOSED / TSMR_ECAPPED. */
static inline int tsmr__mgr_accepts(const struct tsmr__mgr *m) {
  if (m->state != TSMR__OPEN) return TSMR_ECLOSED;
  if (m->capped) return TSMR_ECAPPED;
  return 0;
}

/* tensor.c */
/* What a new tensor is: dtype, ndim, shape with numel elements (already checked by
 * tsmr__shape_check); st: IN, shared storage (refs taken on creation) or NULL to
 * allocate fresh storage, zero-filled when zero != 0. */
struct tsmr__tensor_spec {
  int dtype, ndim;
  const int64_t *shape;
  int64_t numel;
  struct tsmr__storage *st;
  int zero;
};
/* Creates the tensor s describes, held by m (not NULL, already checked). Leaves
 * nothing behind on failure (ENOMEM). */
int tsmr__tensor_create(tsmr_ctx *ctx, struct tsmr__mgr *m,
                        const struct tsmr__tensor_spec *s, struct tsmr__tensor **out);
/* Same, but the tensor is linked nowhere (a component-to-be). */
int tsmr__tensor_alloc(tsmr_ctx *ctx, const struct tsmr__tensor_spec *s,
                       struct tsmr__tensor **out);
/* A composite of ckind with n_comps absent components, no storage, linked nowhere. */
int tsmr__composite_alloc(tsmr_ctx *ctx, int ckind, int n_comps,
                          struct tsmr__tensor **out);
/* Releases a live resource (MGR.REL.1, SCOPE.REL.1): a composite with its
 * components; counts the disposal on the calling thread (SCOPE.STAT.2). */
void tsmr__tensor_release(tsmr_ctx *ctx, struct tsmr__tensor *t);
/* Releases every resource m owns, first to last, as tsmr__tensor_release does one
 * (MGR.CLOSE.1). */
void tsmr__mgr_release_owned(tsmr_ctx *ctx, struct tsmr__mgr *m);
/* Throws away a resource made by the failing call itself: counts nothing
 * (ERR.ATOMIC.1). Components of a composite are discarded with it. */
void tsmr__tensor_discard(tsmr_ctx *ctx, struct tsmr__tensor *t);
/* Validates dtype/ndim/extents; numel/nbytes: OUT. EINVAL or ENOMEM (overflow). */
int tsmr__shape_check(int dtype, int ndim, const int64_t *shape, int64_t *numel,
                      size_t *nbytes);
/* DLDataTypeCode values (dlx_form.inc checks them against the headers). */
enum { TSMR__DLX_INT = 0, TSMR__DLX_UINT = 1, TSMR__DLX_FLOAT = 2, TSMR__DLX_BFLOAT = 4,
       TSMR__DLX_BOOL = 6 };
/* The dtypes: X(dtype, DLPack type code, bits). */
#define TSMR__DTYPES(X)                                                                  \
  X(TSMR_F32, TSMR__DLX_FLOAT, 32) X(TSMR_I32, TSMR__DLX_INT, 32)                          \
  X(TSMR_F64, TSMR__DLX_FLOAT, 64) X(TSMR_F16, TSMR__DLX_FLOAT, 16)                        \
  X(TSMR_BF16, TSMR__DLX_BFLOAT, 16) X(TSMR_I8, TSMR__DLX_INT, 8)                          \
  X(TSMR_I16, TSMR__DLX_INT, 16) X(TSMR_I64, TSMR__DLX_INT, 64) X(TSMR_U8, TSMR__DLX_UINT, 8) \
  X(TSMR_U16, TSMR__DLX_UINT, 16) X(TSMR_U32, TSMR__DLX_UINT, 32)                          \
  X(TSMR_U64, TSMR__DLX_UINT, 64) X(TSMR_BOOL, TSMR__DLX_BOOL, 8)
/* Bytes of one element, 0 for no dtype. A table, not a switch: one bounded load on the
 * create path. */
static inline size_t tsmr__dtype_size(int dtype) {
  static const unsigned char size[] = {
#define TSMR__SIZE_ENTRY(dtype, code, bits) [dtype] = (bits) / 8,
      TSMR__DTYPES(TSMR__SIZE_ENTRY)
#undef TSMR__SIZE_ENTRY
  };
  return (unsigned)dtype < sizeof size ? size[dtype] : 0;
}
/* The bytes of t's elements. */
static inline uint64_t tsmr__tensor_nbytes(const struct tsmr__tensor *t) {
  return (uint64_t)tsmr__body(t)->numel * tsmr__dtype_size(t->dtype);
}
/* The dtype of a DLPack (code, bits, lanes), or 0 for one the library holds none of. */
int tsmr__dtype_of_dl(int code, int bits, int lanes);
/* 1 for the dtypes add, sub, mul and sum take (MGR.OP.10). */
static inline int tsmr__dtype_arith(int dtype) { return dtype == TSMR_F32 || dtype == TSMR_I32; }

/* Storage (tensor.c). new: a fresh storage of nbytes (zero-filled when zero), refs 1,
 * counted in live bytes, not embedded in a tensor (a copied export's). put: drops a
 * reference; the last one frees it (an aliased import's goes on ctx->dlx_pending; an
 * embedded one's record goes on the free list once its tensor is released). wrap:
 * refs 1, an aliased import of foreign memory data, counting no bytes; ext/ext_del as
 * in struct tsmr__storage. */
int tsmr__storage_new(tsmr_ctx *ctx, size_t nbytes, int zero,
                      struct tsmr__storage **out);
void tsmr__storage_put(tsmr_ctx *ctx, struct tsmr__storage *s);
/* One more reference to s (a view's): the record s is embedded in, if any, no longer
 * holds it alone (struct tsmr__tensor.own_sole). */
static inline void tsmr__storage_ref(struct tsmr__storage *s) {
  s->refs++;
  if (s->embedded) tsmr__own_head(s)->own_sole = 0;
}
/* One more reference to t's storage (an export of t). own_sole is set only while st is
 * &own, and a storage t shares with another record is held by that one with t already,
 * so clearing t's mark is all it takes. */
static inline void tsmr__tensor_share(struct tsmr__tensor *t) {
  t->st->refs++;
  t->own_sole = 0;
}
/* Takes the first record of a free list (not empty): RETURN it, linked nowhere. */
static inline struct tsmr__tensor *tsmr__rec_pop(struct tsmr__tensor **recs) {
  struct tsmr__tensor *t = *recs;
  *recs = t->next_free;
  t->node.next = TSMR__POISON1;
  return t;
}
/* Puts t (linked nowhere, holding no reference to own) on a free list of records. */
static inline void tsmr__rec_push(struct tsmr__tensor **recs, struct tsmr__tensor *t) {
  t->next_free = *recs;
  *recs = t;
}
int tsmr__storage_wrap(tsmr_ctx *ctx, void *data, void *ext, void (*ext_del)(void *),
                       struct tsmr__storage **out);

/* Links t into m's owned (or borrowed, when its stack is non-empty) list, or into
 * the detached list when m is NULL. */
static inline void tsmr__tensor_link(tsmr_ctx *ctx, struct tsmr__tensor *t,
                                     struct tsmr__mgr *m) {
  t->holder = m;
  if (!m) {
    TSMR_ASSERT(!t->borrows && "a detached tensor is never borrowed");
    tsmr__list_add(&ctx->detached, &t->node);
    ctx->n_detached++;
  } else if (t->borrows) {
    tsmr__list_add(&m->borrowed, &t->node);
    m->n_borrowed++;
  } else {
    tsmr__list_add_tail(&m->owned, &t->node);
    m->n_owned++;
  }
}

/* Unlinks t from whatever list it is on (holder owned/borrowed or detached). */
static inline void tsmr__tensor_unlink(tsmr_ctx *ctx, struct tsmr__tensor *t) {
  struct tsmr__mgr *m = t->holder;
  tsmr__list_del(&t->node);
  if (!m) {
    TSMR_ASSERT(ctx->n_detached > 0);
    ctx->n_detached--;
  } else if (t->borrows) {
    TSMR_ASSERT(m->n_borrowed > 0);
    m->n_borrowed--;
  } else {
    TSMR_ASSERT(m->n_owned > 0);
    m->n_owned--;
  }
  t->holder = NULL;
}

/* borrow.c */
void tsmr__borrow_clear(tsmr_ctx *ctx, struct tsmr__tensor *t); /* frees the stack */
/* A borrower finished closing: t goes back to its lender (MGR.TEMP.4). */
void tsmr__borrow_return(tsmr_ctx *ctx, struct tsmr__tensor *t);
void tsmr__borrow_freelist(tsmr_ctx *ctx);

/* graph.c */
/* Releases a live graph's buffers and node arrays (its manager closes). */
void tsmr__graph_release(tsmr_ctx *ctx, struct tsmr__graph *g);
/* Frees every graph struct (context close, after the root closed). */
void tsmr__graph_free_all(tsmr_ctx *ctx);
/* The graph whose manager-list link is n. */
struct tsmr__graph *tsmr__graph_of_mnode(tsmr__list *n);

/* device.c */
/* be: OUT, the backend of device name (static, not owned). EINVAL for an unknown
 * name, EDEVICE for a listed but unavailable one. device_name: OUT, static copy. */
int tsmr__device_backend(const char *name, const struct tsmr__backend **be,
                         const char **device_name);
/* delta +1 when a context opens on backend be, -1 when it closes (device.c). */
void tsmr__device_ctx_count(const struct tsmr__backend *be, int delta);
extern const struct tsmr__backend tsmr__cpu_backend;
/* The CPU backend as a CUDA device (impl/cpu/sim_cuda.c), listed as "cuda-sim:0" when
 * $TSMREF_SIMULATE_CUDA is set. */
const struct tsmr__backend *tsmr__sim_cuda_backend(void);

#endif /* TSMR_INTERNAL_H */
