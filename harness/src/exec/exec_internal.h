/*
 * harness/src/exec/exec_internal.h: the executor core's interface to the families. The state
 * of one case run (a run owns its model, its handle maps, its workers and each family's
 * state), the statement dispatch the statement table fills (families.c), the family
 * hooks, and the core's services: operands, binding, judging codes (exec.c),
 * observation (exec_observe.c) and worker threads (exec_thread.c).
 */
#ifndef CTS_EXEC_INTERNAL_H
#define CTS_EXEC_INTERNAL_H

#include "exec.h"
#include "families.h"
#include "model.h"

/* A handle value the judge never received: ERR.HANDLE.1 ("tsmbogus"). */
#define CTS_BOGUS_HANDLE ((tsm_handle)0x74736d626f677573ull)

/* What the judge knows of one model object: its adapter handle and where it came from. */
struct cts_objinfo {
  tsm_handle h;
  int sym;   /* the symbol it was bound to, or -1 (components, wrapped scopes) */
  int line;  /* where it was made */
};

/* The objects of one kind, by model id; zeroed past what was remembered. The array
 * belongs to whoever holds the map (a family's state). */
struct cts_objmap {
  struct cts_objinfo *v;
  size_t cap;
};

struct cts_workers;

/* One handle the judge remembered, and what holds it now: a resource (whose handle may
 * be reused once it is released) or another object. */
struct cts_handle_slot {
  tsm_handle h;
  int id, is_res;
};

/* The handles of the managers, the resources and the families' objects by value (open
 * addressing, linear probing), so that a new handle is checked in constant time however
 * many objects a case made. Owned by the run. */
struct cts_handle_index {
  struct cts_handle_slot *v;
  size_t n, cap;
};

struct cts_run {
  const struct cts_case *c;
  const struct tsm_adapter *a;
  void *s;
  struct cts_model m;
  int *sym_obj;              /* per symbol: model id (in its kind's table), or -1 */
  struct cts_objinfo *mgr, *res; /* managers and resources; a family maps its own kinds */
  size_t mgr_cap, res_cap;
  const struct cts_stmt *cur;
  struct cts_buf *msg;
  int status;
  struct cts_workers *workers;
  int *thread_slot;          /* per case thread number: its model thread and worker now */
  size_t n_thread_slots;     /* (a `join` moves the name to a fresh one, SCOPE.THREAD.4) */
  void *family[CTS_N_FAMILIES]; /* each family's state (its state_new), owned by it */
  int cuda_session;
  int fault;                 /* allocation-failure mode: ENOMEM ends the run cleanly */
  int injected;              /* the armed failure surfaced as ENOMEM */
  int skipped;               /* the model decides: the statement cannot run, go on */
  struct cts_handle_index handles;
  void *read_buf;            /* where tensor_read writes for a check, kept for the next */
  size_t read_cap;           /* (a fresh 64 MiB buffer per check is that many page faults) */
};

/* A family (families.h): the hooks the core calls; any may be NULL. */
struct cts_family {
  void *(*state_new)(struct cts_run *r); /* the session is open, the model empty */
  /* The symbol kinds (enum cts_sym_kind) whose handles the family keeps, and where (in
   * its state): the core binds and resolves them, and checks a new handle is not one of
   * them, through it. */
  int sym_kinds;
  struct cts_objmap *(*objects)(struct cts_run *r);
  /* After every step: 0, or -1 after reporting. */
  int (*observe)(struct cts_run *r);
  /* The family's part of resource id's observation, after the core's (name: its name
   * for messages): 0, or -1 after reporting. */
  int (*observe_res)(struct cts_run *r, int id, const char *name);
  /* The state of the running thread, observed on that thread (after a parallel block):
   * 0, or -1 after reporting. */
  int (*observe_thread)(struct cts_run *r);
  /* Handle h described into buf when it is one of the family's objects, else NULL. */
  char *(*describe_handle)(struct cts_run *r, tsm_handle h, char *buf, size_t n);
  /* Bytes the family holds on the device beyond the model's storages (live bytes):
   * what they are and the clause that counts them, for messages. */
  int (*held_bytes)(struct cts_run *r, uint64_t *bytes);
  const char *held_what, *held_clause;
  void (*before_close)(struct cts_run *r); /* the session is still open */
  void (*after_close)(struct cts_run *r);
  void (*state_free)(void *state);
  /* What a CTS_MADE_FAMILY action made: bind it (0, or -1 after reporting), then check
   * it once bound. */
  int (*bind_made)(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h);
  int (*check_made)(struct cts_run *r, const struct cts_stmt *st, int id);
  /* The model's view of object id, bound to a symbol of `kind`, in words, appended to
   * out (tsm-cts explain): RETURN 1, or 0 when the kind is not the family's. */
  int (*explain)(struct cts_run *r, int kind, int id, struct cts_buf *out);
  /* A `parallel` block's replay (exec_parallel.c) is about to judge statement st of the
   * family on the model: what its EXEC checks of the case before the adapter call (a
   * DLPack tensor still the judge's to give), in the model's state at that point of the
   * replay. 0, or -1 after reporting. */
  int (*can_replay)(struct cts_run *r, const struct cts_stmt *st);
};

/* What a row's adapter half returns when it did not call the adapter because an operand
 * was no longer its to use (another thread of a `parallel` block handed it over or
 * deleted it first): the replay reports it as a case that cannot run. Never a code of
 * the ABI (TSM_ERRNO_MIN). */
#define CTS_NOT_RUN (-1000)

/* tsm-cts explain (explain.c) hears each statement of a block once it ran: outcome 0
 * (it agreed), 1 (skipped: it cannot run, the model deciding) or -1 (the run ends). */
extern void (*cts__on_step)(struct cts_run *r, const struct cts_stmt *st, int outcome);
/* ", f32 [2, 3], values [...]" (the first few; NULL vals: none yet), for explain hooks
 * (exec_observe.c). */
void cts__explain_values(struct cts_buf *out, int dtype, int ndim, const int64_t *shape,
                         const double *vals);

/* The family table (families.c), indexed by enum cts_family_id. */
extern const struct cts_family *const cts_families[CTS_N_FAMILIES];

/* Model ids of a statement's operands, in the table of each symbol's kind. */
struct cts_operands {
  int a, b, out;
  int *list;
  size_t n_list;
};

/* Adapter handles of the same operands. */
struct cts_handles {
  tsm_handle a, b, out;
  tsm_handle *list;
};

typedef int (*cts_exec_fn)(struct cts_run *r, const struct cts_stmt *st, int expected_err);
typedef int (*cts_model_fn)(struct cts_model *m, const struct cts_stmt *st,
                            const struct cts_operands *o, int *made);
typedef int (*cts_adapter_fn)(struct cts_run *r, const struct cts_stmt *st,
                              const struct cts_handles *h, tsm_handle *made);

/* One statement kind's executor side (its row of stmt_table.h): EXEC, MODEL, ADAPTER and
 * the row's DATA (.made, what a generic action made, enum cts_made; .binds, enum
 * cts_sym_kind; .family, enum cts_family_id; ...). */
struct cts_stmt_exec {
  cts_exec_fn exec;
  cts_model_fn model;
  cts_adapter_fn adapter;
  CTS_STMT_DATA_FIELDS;
};

extern const struct cts_stmt_exec cts_stmt_exec[CTS_N_STMT_KINDS];

/* Every row's functions, declared from the statement table (its labelled columns MODEL,
 * ADAPTER and EXEC, each pasted onto a prefix). */
#define CTS__DECLARE_MODEL(f)                                                               \
  int f(struct cts_model *m, const struct cts_stmt *st, const struct cts_operands *o,       \
        int *made_id);
#define CTS__DECLARE_ADAPTER(f)                                                             \
  int f(struct cts_run *r, const struct cts_stmt *st, const struct cts_handles *h,          \
        tsm_handle *made_h);
#define CTS__DECLARE_EXEC(f) int f(struct cts_run *r, const struct cts_stmt *st, int expected_err);
#define CTS__DECLARE_ROW(KIND, KEY, DATA, PARSE, MODEL, ADAPTER, EXEC, WRITER)              \
  CTS__DECLARE_##MODEL CTS__DECLARE_##ADAPTER CTS__DECLARE_##EXEC
CTS_STATEMENTS(CTS__DECLARE_ROW)
#undef CTS__DECLARE_ROW

/* Runs a block's statements in order. RETURN 0, or -1 after reporting. */
int cts__exec_block(struct cts_run *r, const struct cts_block *b);

/* Operands: resolves the symbols (RETURN -1 after reporting one not bound), and maps
 * model ids to adapter handles. The caller frees o->list and h->list. */
int cts__operand(struct cts_run *r, int sym, int *out);
int cts__resolve(struct cts_run *r, const struct cts_stmt *st, struct cts_operands *o);
tsm_handle cts__handle_of(struct cts_run *r, int sym, int id);

/* In the allocation-failure mode: a statement refused with ENOMEM must have changed
 * nothing (ERR.ATOMIC.1, ERR.NOMEM.1); the run then stops. RETURN -1 always. */
int cts__injected(struct cts_run *r);

int cts__report(struct cts_run *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Where cts__remember_at puts an object: array *v of *cap entries (grown to fit), at
 * model id `id`. */
struct cts_obj_slot {
  struct cts_objinfo **v;
  size_t *cap;
  size_t id;
};
/* Remembers an object's handle, symbol and line at `at`, and its handle in the run's
 * handle index when *at.v is the managers', the resources' or a family's objects map
 * (what cts__handle_in_use asks). */
void cts__remember_at(struct cts_run *r, struct cts_obj_slot at, struct cts_objinfo info);
tsm_handle cts__mgr_handle(struct cts_run *r, int g);
tsm_handle cts__res_handle(struct cts_run *r, int id);
/* The map of the family that keeps symbol kind `kind`, or NULL (managers, resources). */
struct cts_objmap *cts__family_objects(struct cts_run *r, int kind);
int cts__handle_in_use(struct cts_run *r, tsm_handle h);

/* Observation (exec_observe.c): each returns 0, or -1 after reporting. */
int cts__check_mgr(struct cts_run *r, int g);
int cts__check_res(struct cts_run *r, int id);
int cts__check_bytes(struct cts_run *r);
int cts__check_state(struct cts_run *r);
/* Each family's observe_thread hook, on the running thread. */
int cts__observe_thread(struct cts_run *r);
/* What a tensor's elements must be: n values (the model's, or an expectation's list),
 * within MGR.OP.7's tolerance when approx; `what` names them in messages. Borrowed. */
struct cts_want {
  const double *v; /* the values, when m is NULL (an empty list may be NULL) */
  size_t n;
  int approx;
  const char *what;
  const struct cts_model *m; /* else tensor res's elements in m, read one at a time */
  int res;
};
int cts__check_values(struct cts_run *r, int id, const struct cts_want *want);
/* A run begins: forget what the last passing check of an earlier run in this process
 * saw. */
void cts__observe_begin(void);
int cts__values_equal(double want, double got, int approx);
/* A symbol's name, or "(unnamed)" for none (sym < 0). */
const char *cts__sym_name(struct cts_run *r, int sym);
char *cts__describe_mgr(struct cts_run *r, int g, char *buf, size_t n);
char *cts__describe_handle(struct cts_run *r, tsm_handle h, char *buf, size_t n);
const char *cts__res_name(struct cts_run *r, int id, char *buf, size_t n);

/* A literal's elements as its fill gives them, *n of them (cts_opsem_literal_elems);
 * the caller frees them. cts__literal_data is the same but NULL for zeros, which the
 * adapter and the model fill themselves: a zeros tensor of any declared size costs the
 * judge nothing (the parser bounds the other fills, cases/README.md "Limits"). */
double *cts__literal_values(const struct cts_literal *lit, int64_t *n);
/* Element i (row-major) of lit, as cts__literal_values gives it. */
double cts__literal_at(const struct cts_literal *lit, int64_t i);
double *cts__literal_data(const struct cts_literal *lit, int64_t *n);

/* Shared by the statement executors (exec.c). cts__bind_handle binds the fresh handle h
 * of what st made, model id `id`, to st's name. */
int cts__bind_handle(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h);
int cts__bind_made(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h);
int cts__check_made_values(struct cts_run *r, const struct cts_stmt *st, int id);
/* Compares the two sides' codes; *expected_err is the code the case expects (0: none),
 * which becomes the model's refusal when the model decides. RETURN 0 when the statement
 * may go on. */
int cts__judge_codes(struct cts_run *r, int model_rc, int adapter_rc, int *expected_err);
/* A statement the case cannot run (fmt says why): Error, or skipped when the model
 * decides. RETURN -1 always. */
int cts__cannot_run(struct cts_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Symbol sym's binding failed or never ran: cts__cannot_run. */
int cts__unbound(struct cts_run *r, int sym);
/* An expectation the model must agree with first: otherwise the case is wrong (Error). */
int cts__model_agrees(struct cts_run *r, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Threads (exec_thread.c). Thread 0 is the caller's. */
typedef void (*cts_job_fn)(struct cts_run *r, void *arg);
/* Runs fn on thread t and waits for it. */
void cts__on_thread(struct cts_run *r, int t, cts_job_fn fn, void *arg);
/* Runs fns[i](args[i]) on threads ts[i] at the same time and waits for all. */
void cts__on_threads(struct cts_run *r, size_t n, const int *ts, cts_job_fn fn, void **args);
void cts__stop_workers(struct cts_run *r);
/* The model thread and worker that case thread `number` runs on now. */
int cts__thread_slot(struct cts_run *r, int number);

#endif
