/*
 * impl/tests/test_import.c: tsmr_dlpack_try_import (tsmref.h), which leaves a refused
 * managed tensor with its caller, against tsmr_dlpack_import, which consumes it
 * (DLP.IMPORT.2), for foreign tensors and the library's own exports of both DLPack
 * forms, so that a test cannot pass while try_import takes a tensor it refuses, nor
 * while no call is refused at all. The subjects, each in a context of its own, in the
 * legacy form (DLManagedTensor) and the versioned one (DLManagedTensorVersioned):
 *   aliased   a foreign compact [2, 2] f32 tensor, which an import aliases (its
 *             deleter runs at the new tensor's release);
 *   strided   a foreign [2, 2] tensor, the first two columns of a [2, 4] one, which
 *             an import copies (its deleter runs before the call returns);
 *   own       one of the context's own exports of a [4, 4] tensor, which an import
 *             shares (the export's record goes at once). Its deleter is the library's,
 *             so whether it ran is read off the context's export anchor (impl/src/dlx.h:
 *             its list of export records alive), not counted by the test.
 * The tests, each on both calls:
 *   refusals  each refusal class alone: bad arguments (TSMR_EINVAL: no context, no out,
 *             a handle that is not a manager; managed NULL and an unknown form, which
 *             neither call consumes), a closed and a capped manager, a bad version
 *             (versioned form), a tensor the library refuses (a negative extent, a CUDA
 *             device in a cpu session, two lanes), and a capped manager with two lanes
 *             (the manager's code comes first). An own export's source is released
 *             first, so that the versioned form's common case (dlx_form.inc) is the
 *             path that declines. try_import returns the import's code and leaves the
 *             managed struct with its shape and strides, *out, the live bytes, the
 *             root's live count and the thread's created count as they were, its
 *             deleter not run; the same tensor, mended, then imports by try_import (the
 *             caller still owned it). tsmr_dlpack_import runs the deleter once on each
 *             refusal but the two it cannot consume;
 *   faults    the k-th allocation failing (tsmref_test.h), for k = 1, 2, ... until the
 *             call no longer reaches it: each earlier k refuses with TSMR_ENOMEM,
 *             try_import leaving the tensor as above (it imports afterwards),
 *             tsmr_dlpack_import consuming it; the last k imports and takes it: an
 *             alias's deleter runs once, at the release; a copy's once, at once; an own
 *             export's record goes, its storage shared. An own export's source is held,
 *             and held tensors use up the context's slab of records (internal.h), so
 *             that the import needs a record from a new slab. Each loop must see a
 *             refusal: a try_import that called the import fails here, and an import
 *             that did not consume fails the contrast.
 *   kept      an own export imported back keeps its block for the next export: after
 *             the consumer pointed the shape and strides at arrays of its own, and after
 *             a legacy export, the next versioned exports describe their own arrays
 *             and import back.
 * Every subject ends with its deleter run exactly once and no live bytes.
 * Run: $(B)/bin/test-import; prints "# import: N checks, 0 failed".
 */
#include <stdio.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "check.h"
#include "dlx.h"
#include "tsmref_test.h"

#define OK(call) CHECK((call) == 0, "%s", #call)

#define MAX_K 64                        /* allocations of one import, at most */
#define SENTINEL ((tsmr_handle)0x5e5e5e) /* *out before a call */

enum kind { ALIASED, STRIDED, OWN, KINDS };
static const char *const kind_name[KINDS] = {"aliased", "strided", "own export"};
static const char *const form_name[2] = {"legacy", "versioned"};

enum api { IMPORT, TRY_IMPORT, APIS };
typedef int (*import_fn)(tsmr_ctx *ctx, void *managed, int form, tsmr_handle m,
                         tsmr_handle *out);
static const import_fn api_call[APIS] = {tsmr_dlpack_import, tsmr_dlpack_try_import};
static const char *const api_name[APIS] = {"import", "try_import"};

/* A foreign [2, 2] f32 CPU tensor in either form's managed struct; its deleter counts. */
struct foreign {
  DLManagedTensorVersioned v; /* the versioned form's managed struct */
  DLManagedTensor l;          /* the legacy form's */
  int64_t shape[2], strides[2];
  float data[8];
  int deleted; /* runs of its deleter */
};

static void delete_versioned(DLManagedTensorVersioned *mt) {
  ((struct foreign *)mt->manager_ctx)->deleted++;
}

static void delete_legacy(DLManagedTensor *mt) {
  ((struct foreign *)mt->manager_ctx)->deleted++;
}

/* RETURN f's managed struct of form: compact (strides {2, 1}), or strided ({4, 1}:
 * the first two columns of a [2, 4] tensor). */
static void *foreign_init(struct foreign *f, int form, int strided) {
  memset(f, 0, sizeof *f);
  f->shape[0] = f->shape[1] = 2;
  f->strides[0] = strided ? 4 : 2;
  f->strides[1] = 1;
  for (int i = 0; i < 8; i++) f->data[i] = (float)i;
  DLTensor *d = form == TSMR_DLPACK_VERSIONED ? &f->v.dl_tensor : &f->l.dl_tensor;
  d->data = f->data;
  d->device.device_type = kDLCPU;
  d->ndim = 2;
  d->dtype.code = kDLFloat;
  d->dtype.bits = 32;
  d->dtype.lanes = 1;
  d->shape = f->shape;
  d->strides = f->strides;
  if (form == TSMR_DLPACK_LEGACY) {
    f->l.manager_ctx = f;
    f->l.deleter = delete_legacy;
    return &f->l;
  }
  f->v.version.major = DLPACK_MAJOR_VERSION;
  f->v.version.minor = DLPACK_MINOR_VERSION;
  f->v.manager_ctx = f;
  f->v.deleter = delete_versioned;
  return &f->v;
}

/* Which subject, through which call. */
struct trial {
  int form;
  enum kind kind;
  enum api api;
};

/* A managed struct's bytes with its shape and strides (every subject has ndim 2). */
struct image {
  unsigned char mt[sizeof(DLManagedTensorVersioned)];
  int64_t dims[4];
};

/* One managed tensor under test, in a context of its own. */
struct subject {
  int form;
  enum kind kind;
  tsmr_ctx *ctx;
  tsmr_handle root;
  tsmr_handle src; /* own: the exported tensor while the test holds it */
  void *managed;
  struct foreign f; /* aliased, strided */
  struct image clean, given; /* as made; as given to the call under test */
  char what[96];             /* for the messages */
  tsmr_handle fill[TSMR__SLAB_RECS]; /* tensors that use up the slab of records */
  unsigned n_fill;
};

static size_t managed_bytes(int form) {
  return form == TSMR_DLPACK_VERSIONED ? sizeof(DLManagedTensorVersioned)
                                       : sizeof(DLManagedTensor);
}

static DLTensor *dl_of(const struct subject *s) {
  if (s->form == TSMR_DLPACK_VERSIONED) return &((DLManagedTensorVersioned *)s->managed)->dl_tensor;
  return &((DLManagedTensor *)s->managed)->dl_tensor;
}

static void take_image(const struct subject *s, struct image *im) {
  const DLTensor *d = dl_of(s);
  memset(im, 0, sizeof *im);
  memcpy(im->mt, s->managed, managed_bytes(s->form));
  for (int i = 0; i < 2; i++) {
    im->dims[i] = d->shape[i];
    im->dims[2 + i] = d->strides[i];
  }
}

static void put_image(struct subject *s, const struct image *im) {
  memcpy(s->managed, im->mt, managed_bytes(s->form));
  DLTensor *d = dl_of(s);
  for (int i = 0; i < 2; i++) {
    d->shape[i] = im->dims[i];
    d->strides[i] = im->dims[2 + i];
  }
}

static int same_image(const struct subject *s, const struct image *im) {
  struct image now;
  take_image(s, &now);
  return memcmp(&now, im, sizeof now) == 0;
}

/* Runs of s's deleter so far: a foreign tensor's counts them; for an own export (the
 * context's only one), 1 once its record is gone (its deleter ran, or an import took
 * it): the anchor's list of live exports (impl/src/dlx.h) is empty then. */
static int deleted(const struct subject *s) {
  if (s->kind != OWN) return s->f.deleted;
  const tsmr__list *exports = &s->ctx->dlx_anchor->exports;
  int live = 0;
  for (const tsmr__list *n = exports->next; n != exports; n = n->next) live++;
  return 1 - live;
}

/* What a refused call must leave as it was. */
struct tally {
  uint64_t bytes;   /* live bytes */
  uint64_t held;    /* the root manager's live count */
  uint64_t created; /* tensors this thread created */
};

static struct tally tally_of(const struct subject *s) {
  struct tally t = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
  struct tsmr_mgr_info info;
  struct tsmr_scope_stats st;
  OK(tsmr_live_bytes(s->ctx, &t.bytes));
  if (tsmr_mgr_info(s->ctx, s->root, &info) == 0) t.held = info.live;
  if (tsmr_thread_stats(s->ctx, TSMR_KIND_TENSOR, &st) == 0)
    t.created = st.created_in_scope + st.created_outside;
  return t;
}

/* s: OUT, an own export of a [4, 4] f32 tensor; its source stays held when hold. */
static int own_export(struct subject *s, int hold) {
  static const struct tsmr_tensor_desc d44 = {TSMR_F32, 2, {4, 4}};
  float vals[16];
  for (int i = 0; i < 16; i++) vals[i] = 100.0f + (float)i;
  int rc = tsmr_tensor_new(s->ctx, s->root, &d44, vals, &s->src);
  if (rc == 0) rc = tsmr_dlpack_export(s->ctx, s->src, s->form, 0, &s->managed);
  if (rc == 0 && !hold) {
    rc = tsmr_res_release(s->ctx, s->src);
    s->src = TSMR_NONE;
  }
  CHECK(rc == 0, "%s: the export failed: %s", s->what, tsmr_err_name(rc));
  return rc == 0;
}

/* s: OUT, tr's subject in a new context; an own export's source stays held when hold.
 * RETURN 0 when it could not be made (a failed check; nothing left open). */
static int subject_open(struct subject *s, const struct trial *tr, int hold) {
  memset(s, 0, sizeof *s);
  s->form = tr->form;
  s->kind = tr->kind;
  snprintf(s->what, sizeof s->what, "%s %s, %s", form_name[tr->form], kind_name[tr->kind],
           api_name[tr->api]);
  int rc = tsmr_ctx_open("cpu", &s->ctx);
  if (rc == 0 && (rc = tsmr_mgr_root(s->ctx, &s->root)) != 0) tsmr_ctx_close(s->ctx);
  CHECK(rc == 0, "%s: no context: %s", s->what, tsmr_err_name(rc));
  if (rc) return 0;
  if (tr->kind != OWN) {
    s->managed = foreign_init(&s->f, tr->form, tr->kind == STRIDED);
  } else if (!own_export(s, hold)) {
    tsmr_ctx_close(s->ctx);
    return 0;
  }
  take_image(s, &s->clean);
  return 1;
}

/* Uses up s's slab of records (internal.h) with held tensors, so that the next record
 * the import takes is a new slab's, an allocation that can fail; records are only
 * recycled from the free list, empty here: nothing was released yet. */
static void fill_slab(struct subject *s) {
  static const struct tsmr_tensor_desc d1 = {TSMR_F32, 1, {1}};
  while (s->ctx->slab_left && s->n_fill < TSMR__SLAB_RECS)
    OK(tsmr_tensor_new(s->ctx, s->root, &d1, NULL, &s->fill[s->n_fill++]));
  CHECK(s->ctx->slab_left == 0 && !s->ctx->free_tensors, "%s: the slab is not used up",
        s->what);
}

/* The end of every subject: its deleter ran exactly once, and nothing stays live. */
static void subject_close(struct subject *s) {
  uint64_t bytes = 1;
  while (s->n_fill) OK(tsmr_res_release(s->ctx, s->fill[--s->n_fill]));
  if (s->src != TSMR_NONE) OK(tsmr_res_release(s->ctx, s->src));
  OK(tsmr_live_bytes(s->ctx, &bytes));
  CHECK(deleted(s) == 1 && bytes == 0, "%s: at the end the deleter ran %d times, %llu live bytes",
        s->what, deleted(s), (unsigned long long)bytes);
  tsmr_ctx_close(s->ctx);
  if (s->kind != OWN)
    CHECK(s->f.deleted == 1, "%s: after the context's close the deleter ran %d times", s->what,
          s->f.deleted);
}

/* RETURN 1 when tensor h holds s's elements. */
static int reads_back(const struct subject *s, tsmr_handle h) {
  int n = s->kind == OWN ? 16 : 4;
  float out[16];
  if (tsmr_tensor_read(s->ctx, h, out, (size_t)n * sizeof *out)) return 0;
  for (int i = 0; i < n; i++) {
    float want = s->kind == OWN ? 100.0f + (float)i
                 : s->kind == STRIDED ? (float)(i / 2 * 4 + i % 2) : (float)i;
    if (out[i] != want) return 0;
  }
  return 1;
}

/* After a call that imported s as h (before: the tally just before it): it took s. An
 * alias's deleter has not run yet, a copy's ran once and its bytes count, an own
 * export's record is gone (its storage shared); h reads s's elements; h released, the
 * deleter has run once. */
static void check_taken(struct subject *s, tsmr_handle h, const struct tally *before) {
  struct tally now = tally_of(s);
  uint64_t added = s->kind == STRIDED ? 4 * sizeof(float) : 0;
  CHECK(deleted(s) == (s->kind != ALIASED), "%s: on the import the deleter ran %d times",
        s->what, deleted(s));
  CHECK(now.bytes == before->bytes + added, "%s: %llu live bytes, %llu before the import",
        s->what, (unsigned long long)now.bytes, (unsigned long long)before->bytes);
  CHECK(now.held == before->held + 1 && now.created == before->created + 1,
        "%s: the root holds %llu (%llu before), %llu created (%llu before)", s->what,
        (unsigned long long)now.held, (unsigned long long)before->held,
        (unsigned long long)now.created, (unsigned long long)before->created);
  CHECK(reads_back(s, h), "%s: the import does not read back its elements", s->what);
  OK(tsmr_res_release(s->ctx, h));
  CHECK(deleted(s) == 1, "%s: after the release the deleter ran %d times", s->what, deleted(s));
}

/* The caller still owns s after a refusal: mended, s imports by try_import into the
 * root, which takes it. */
static void reimport(struct subject *s) {
  put_image(s, &s->clean);
  struct tally before = tally_of(s);
  tsmr_handle h = SENTINEL;
  int rc = tsmr_dlpack_try_import(s->ctx, s->managed, s->form, s->root, &h);
  CHECK(rc == 0, "%s: refused before, mended it does not import: %s", s->what,
        tsmr_err_name(rc));
  if (rc == 0) check_taken(s, h, &before);
}

/* One call of a refusal test. */
struct attempt {
  enum api api;
  int want;            /* the refusal's code */
  int consumes;        /* whether tsmr_dlpack_import runs the deleter on this refusal */
  int rc;              /* what the call returned */
  tsmr_handle h;       /* *out after the call; SENTINEL before */
  struct tally before; /* just before the call */
};

/* After a refused call a (s as s->given then): try_import left everything as it was
 * and s imports again; tsmr_dlpack_import ran the deleter once, where it consumes. */
static void check_refused(struct subject *s, const struct attempt *a) {
  int consumed = a->api == IMPORT && a->consumes;
  CHECK(a->rc == a->want, "%s: %s, expected %s", s->what, tsmr_err_name(a->rc),
        tsmr_err_name(a->want));
  CHECK(deleted(s) == consumed, "%s: refused, the deleter ran %d times", s->what, deleted(s));
  CHECK(a->h == SENTINEL, "%s: a refusal wrote *out", s->what);
  if (consumed || deleted(s) != 0) return; /* s is not the caller's any more */
  struct tally now = tally_of(s);
  CHECK(same_image(s, &s->given), "%s: the refused managed struct was changed", s->what);
  CHECK(now.bytes == a->before.bytes && now.held == a->before.held &&
            now.created == a->before.created,
        "%s: refused, live bytes %llu -> %llu, the root's count %llu -> %llu, created %llu "
        "-> %llu", s->what, (unsigned long long)a->before.bytes, (unsigned long long)now.bytes,
        (unsigned long long)a->before.held, (unsigned long long)now.held,
        (unsigned long long)a->before.created, (unsigned long long)now.created);
  reimport(s);
}

/* ---- refusals ----------------------------------------------------------------------- */

/* The arguments of the call under test. */
struct call {
  tsmr_ctx *ctx;
  void *managed;
  int form;
  tsmr_handle m;
  tsmr_handle *out;
};

static void no_ctx(struct subject *s, struct call *c) {
  (void)s;
  c->ctx = NULL;
}
static void no_out(struct subject *s, struct call *c) {
  (void)s;
  c->out = NULL;
}
static void not_mgr(struct subject *s, struct call *c) {
  (void)s;
  c->m = TSMR_NONE;
}
static void no_managed(struct subject *s, struct call *c) {
  (void)s;
  c->managed = NULL;
}
static void bad_form(struct subject *s, struct call *c) {
  (void)s;
  c->form = 7;
}

static void closed_mgr(struct subject *s, struct call *c) {
  OK(tsmr_mgr_new_sub(s->ctx, s->root, &c->m));
  OK(tsmr_mgr_close(s->ctx, c->m));
}

static void capped_mgr(struct subject *s, struct call *c) {
  OK(tsmr_mgr_new_sub(s->ctx, s->root, &c->m));
  OK(tsmr_mgr_cap(s->ctx, c->m));
}

static void bad_version(struct subject *s, struct call *c) {
  (void)c;
  ((DLManagedTensorVersioned *)s->managed)->version.major = 2;
}

static void negative_extent(struct subject *s, struct call *c) {
  (void)c;
  dl_of(s)->shape[0] = -1;
}

static void cuda_device(struct subject *s, struct call *c) {
  (void)c;
  dl_of(s)->device.device_type = kDLCUDA;
}

static void two_lanes(struct subject *s, struct call *c) {
  (void)c;
  dl_of(s)->dtype.lanes = 2;
}

static void capped_two_lanes(struct subject *s, struct call *c) {
  capped_mgr(s, c);
  two_lanes(s, c);
}

static const struct refusal {
  const char *what;
  int code;
  int consumes;  /* tsmr_dlpack_import runs the deleter */
  int versioned; /* of the versioned form only */
  void (*spoil)(struct subject *s, struct call *c);
} refusals[] = {
    {"no context", TSMR_EINVAL, 1, 0, no_ctx},
    {"no out", TSMR_EINVAL, 1, 0, no_out},
    {"not a manager", TSMR_EINVAL, 1, 0, not_mgr},
    {"managed NULL", TSMR_EINVAL, 0, 0, no_managed},
    {"an unknown form", TSMR_EINVAL, 0, 0, bad_form},
    {"a closed manager", TSMR_ECLOSED, 1, 0, closed_mgr},
    {"a capped manager", TSMR_ECAPPED, 1, 0, capped_mgr},
    {"major version 2", TSMR_EVERSION, 1, 1, bad_version},
    {"a negative extent", TSMR_EDLPACK, 1, 0, negative_extent},
    {"a CUDA device", TSMR_EDEVICE, 1, 0, cuda_device},
    {"two lanes", TSMR_EDTYPE, 1, 0, two_lanes},
    {"a capped manager and two lanes", TSMR_ECAPPED, 1, 0, capped_two_lanes},
};
#define N_REFUSALS (sizeof refusals / sizeof *refusals)

static void refuse(const struct trial *tr, const struct refusal *r) {
  struct subject s;
  if (!subject_open(&s, tr, 0)) return;
  size_t len = strlen(s.what);
  snprintf(s.what + len, sizeof s.what - len, ": %s", r->what);
  tsmr_handle h = SENTINEL;
  struct call c = {s.ctx, s.managed, s.form, s.root, &h};
  r->spoil(&s, &c);
  take_image(&s, &s.given);
  struct attempt a = {tr->api, r->code, r->consumes, 0, SENTINEL, tally_of(&s)};
  a.rc = api_call[tr->api](c.ctx, c.managed, c.form, c.m, c.out);
  a.h = h;
  check_refused(&s, &a);
  subject_close(&s);
}

static void test_refusals(void) {
  int calls = 0;
  for (int form = 0; form < 2; form++)
    for (int kind = 0; kind < KINDS; kind++)
      for (int api = 0; api < APIS; api++)
        for (size_t i = 0; i < N_REFUSALS; i++) {
          if (refusals[i].versioned && form != TSMR_DLPACK_VERSIONED) continue;
          const struct trial tr = {form, (enum kind)kind, (enum api)api};
          refuse(&tr, &refusals[i]);
          calls++;
        }
  printf("# refusals: %d refused calls\n", calls);
}

/* ---- faults ------------------------------------------------------------------------- */

/* One k of a fault loop: tr's call with the k-th allocation from now failing; refused
 * and imported: IN/OUT, counted. RETURN 1 when the call did not reach that allocation. */
static int fault_once(const struct trial *tr, uint64_t k, int *refused, int *imported) {
  struct subject s;
  if (!subject_open(&s, tr, 1)) return 1;
  size_t len = strlen(s.what);
  snprintf(s.what + len, sizeof s.what - len, ": allocation %llu failing", (unsigned long long)k);
  if (tr->kind == OWN) fill_slab(&s);
  take_image(&s, &s.given);
  struct attempt a = {tr->api, TSMR_ENOMEM, 1, 0, SENTINEL, tally_of(&s)};
  tsmr_test_alloc_fail_nth(k);
  a.rc = api_call[tr->api](s.ctx, s.managed, s.form, s.root, &a.h);
  int reached = tsmr_test_alloc_fail_left() == 0;
  tsmr_test_alloc_fail_nth(0);
  CHECK((a.rc != 0) == reached, "%s: %s, the failing allocation %sreached", s.what,
        tsmr_err_name(a.rc), reached ? "" : "not ");
  if (a.rc) {
    ++*refused;
    check_refused(&s, &a);
  } else {
    ++*imported;
    check_taken(&s, a.h, &a.before);
  }
  subject_close(&s);
  return !reached;
}

static void test_faults(void) {
  for (int form = 0; form < 2; form++)
    for (int kind = 0; kind < KINDS; kind++)
      for (int api = 0; api < APIS; api++) {
        const struct trial tr = {form, (enum kind)kind, (enum api)api};
        int refused = 0, imported = 0;
        uint64_t k = 1;
        while (k <= MAX_K && !fault_once(&tr, k, &refused, &imported)) k++;
        CHECK(imported == 1 && refused >= 1 && (uint64_t)refused == k - 1,
              "%s %s, %s: %d refused, %d imported in %llu calls", form_name[form],
              kind_name[kind], api_name[api], refused, imported, (unsigned long long)k);
        printf("# faults: %s %s, %s: %d ENOMEM refusals, then imported\n",
               form_name[form], kind_name[kind], api_name[api], refused);
      }
}

/* test_kept: the block of an own export imported again is kept for the next export
 * (impl/src/dlx.h, struct tsmr__dlx_rec.primed), which writes only what changes from
 * export to export when the import checked the rest. A consumer may point the shape and
 * strides elsewhere (the same values) before it imports back: the general import takes
 * that, so the block it keeps must not pass the consumer's pointers on; and a block of
 * either form may come back to a versioned export. Each next export must describe its
 * own arrays in full, and import back. */
static void check_kept_export(struct subject *s, const int64_t *consumer_arrays[2],
                              const char *after) {
  DLManagedTensorVersioned *mt = s->managed;
  const DLTensor *d = &mt->dl_tensor;
  CHECK(mt->version.major == 1 && mt->flags == 0 && mt->deleter != NULL &&
            mt->manager_ctx != NULL && d->ndim == 2 && d->byte_offset == 0,
        "%s: the versioned export's fields", after);
  CHECK(d->shape != consumer_arrays[0] && d->strides != consumer_arrays[1] &&
            d->shape[0] == 4 && d->shape[1] == 4 && d->strides[0] == 4 && d->strides[1] == 1,
        "%s: the export's shape and strides are not its own compact [4, 4]", after);
  tsmr_handle h = TSMR_NONE;
  OK(tsmr_dlpack_import(s->ctx, s->managed, TSMR_DLPACK_VERSIONED, s->root, &h));
  CHECK(h != TSMR_NONE && reads_back(s, h), "%s: the export does not import back", after);
  if (h != TSMR_NONE) OK(tsmr_res_release(s->ctx, h));
}

static void test_kept(void) {
  for (int form = 0; form < 2; form++) {
    const struct trial tr = {TSMR_DLPACK_VERSIONED, OWN, IMPORT};
    struct subject s;
    int64_t shape[2] = {4, 4}, strides[2] = {4, 1};
    tsmr_handle h = TSMR_NONE;
    if (!subject_open(&s, &tr, 1)) continue;
    /* two round trips first: the second export's block, kept by the first import, is
     * primed; the second import keeps it primed */
    for (int trip = 0; trip < 2; trip++) {
      if (trip) OK(tsmr_dlpack_export(s.ctx, s.src, TSMR_DLPACK_VERSIONED, 0, &s.managed));
      OK(tsmr_dlpack_import(s.ctx, s.managed, TSMR_DLPACK_VERSIONED, s.root, &h));
      if (h != TSMR_NONE) OK(tsmr_res_release(s.ctx, h));
    }
    s.form = form; /* the export the consumer changes, in its block */
    OK(tsmr_dlpack_export(s.ctx, s.src, form, 0, &s.managed));
    dl_of(&s)->shape = shape; /* the consumer's own arrays, the same values */
    dl_of(&s)->strides = strides;
    OK(tsmr_dlpack_import(s.ctx, s.managed, form, s.root, &h));
    if (h != TSMR_NONE) OK(tsmr_res_release(s.ctx, h));
    s.form = TSMR_DLPACK_VERSIONED;
    for (int again = 0; again < 2; again++) { /* the block as kept, then as kept again */
      OK(tsmr_dlpack_export(s.ctx, s.src, TSMR_DLPACK_VERSIONED, 0, &s.managed));
      snprintf(s.what, sizeof s.what, "a versioned export after a %s one imported back (%d)",
               form_name[form], again);
      check_kept_export(&s, (const int64_t *[2]){shape, strides}, s.what);
    }
    subject_close(&s); /* releases s.src */
  }
}

/* test_resized: a consumer that writes a smaller outer extent into an own export's shape
 * before it imports the export back describes fewer elements than the storage holds, so
 * the import cannot share the storage (import_is_own): it takes the export as any
 * producer's, an alias whose deleter runs when the tensor goes, of the elements
 * described. Both the block of a first export and a kept, primed one (the common
 * import's path). */
static void test_resized(void) {
  const struct trial tr = {TSMR_DLPACK_VERSIONED, OWN, IMPORT};
  struct subject s;
  if (!subject_open(&s, &tr, 1)) return;
  for (int trip = 0; trip < 3; trip++) {
    int resized = trip != 1; /* the round trip between them keeps the block, primed */
    tsmr_handle h = TSMR_NONE;
    if (trip) OK(tsmr_dlpack_export(s.ctx, s.src, TSMR_DLPACK_VERSIONED, 0, &s.managed));
    snprintf(s.what, sizeof s.what, "an own export resized to [2, 4] (%s block)",
             trip ? "a kept" : "its first");
    if (resized) dl_of(&s)->shape[0] = 2;
    OK(tsmr_dlpack_import(s.ctx, s.managed, TSMR_DLPACK_VERSIONED, s.root, &h));
    if (h == TSMR_NONE) continue;
    if (resized) {
      struct tsmr_tensor_desc d;
      float out[8];
      int same = tsmr_tensor_desc(s.ctx, h, &d) == 0 && d.ndim == 2 && d.shape[0] == 2 &&
                 d.shape[1] == 4 && tsmr_tensor_read(s.ctx, h, out, sizeof out) == 0;
      for (int i = 0; same && i < 8; i++) same = out[i] == 100.0f + (float)i;
      CHECK(same, "%s: the import is not the 8 elements described", s.what);
      CHECK(deleted(&s) == 0,
            "%s: imported as the whole storage's (the deleter ran on the import)", s.what);
    }
    OK(tsmr_res_release(s.ctx, h));
    CHECK(deleted(&s) == 1, "%s: after the release the deleter ran %d times", s.what,
          deleted(&s));
  }
  subject_close(&s);
}

int main(void) {
  test_refusals();
  test_faults();
  test_kept();
  test_resized();
  printf("# import: %d checks, %d failed\n", checks, failed);
  return failed != 0;
}
