/*
 * harness/src/exec_internal.h: the state of one case run, shared by exec.c (statements),
 * exec_observe.c (comparing the adapter with the model) and exec_thread.c (worker
 * threads). A run owns its model, its handle maps and its workers.
 */
#ifndef CTS_EXEC_INTERNAL_H
#define CTS_EXEC_INTERNAL_H

#include "exec.h"
#include "model.h"

/* A handle value the judge never received: ERR.HANDLE.1 ("tsmbogus"). */
#define CTS_BOGUS_HANDLE ((tsm_handle)0x74736d626f677573ull)

/* What the judge knows of one model object: its adapter handle and where it came from. */
struct cts_objinfo {
  tsm_handle h;
  int sym;   /* the symbol it was bound to, or -1 (components, wrapped scopes) */
  int line;  /* where it was made */
};

struct cts_workers;
struct cts_wrap;
struct cts_dl_record;

/* A DLPack tensor the judge made or received (exec_dlpack.c). */
struct cts_dlobj {
  void *managed;              /* the struct; judge-made ones are freed after the case */
  struct cts_dl_record *rec;  /* judge-made: its counting deleter's record */
  int sym, line;
  int judge_drops;            /* deleter runs by the judge as owner */
};

struct cts_run {
  const struct cts_case *c;
  const struct tsm_adapter *a;
  void *s;
  struct cts_model m;
  int *sym_obj;              /* per symbol: model id (in its kind's table), or -1 */
  struct cts_objinfo *mgr, *res, *scope;
  size_t mgr_cap, res_cap, scope_cap;
  const struct cts_stmt *cur;
  struct cts_buf *msg;
  int status;
  int observe_links;         /* the case uses scopes or composites: res_links exists */
  int observe_scopes;        /* the case uses scopes: scope_info, current, stats */
  struct cts_workers *workers;
  struct cts_wrap *wrap;     /* the innermost wrapped block running, or NULL */
  struct cts_dlobj *dl;      /* per model DLPack id */
  size_t dl_cap;
  struct cts_objinfo *graph, *node; /* per model graph and graph-node id */
  size_t graph_cap, node_cap;
  unsigned char **unplanned; /* per node: its bytes after the last unplanned compute */
  size_t n_unplanned;
  int cuda_session;
  int fault;                 /* allocation-failure mode: ENOMEM ends the run cleanly */
  int injected;              /* the armed failure surfaced as ENOMEM */
};

/* In the allocation-failure mode: a statement refused with ENOMEM must have changed
 * nothing (ERR.ATOMIC.1, ERR.NOMEM.1); the run then stops. RETURN -1 always. */
int cts__injected(struct cts_run *r);

int cts__report(struct cts_run *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void cts__remember(struct cts_objinfo **v, size_t *cap, size_t id, tsm_handle h, int sym,
                   int line);
tsm_handle cts__mgr_handle(struct cts_run *r, int g);
tsm_handle cts__res_handle(struct cts_run *r, int id);
tsm_handle cts__scope_handle(struct cts_run *r, int sc);
int cts__handle_in_use(struct cts_run *r, tsm_handle h);

/* Observation (exec_observe.c): each returns 0, or -1 after reporting. */
int cts__check_mgr(struct cts_run *r, int g);
int cts__check_res(struct cts_run *r, int id);
int cts__check_scope(struct cts_run *r, int sc);
int cts__check_bytes(struct cts_run *r);
int cts__check_thread(struct cts_run *r); /* the running thread's current scope, stats */
int cts__check_state(struct cts_run *r);
int cts__check_tensor(struct cts_run *r, int id, const double *want, size_t n_want,
                      int approx, const char *what);
int cts__values_equal(double want, double got, int approx);
char *cts__describe_mgr(struct cts_run *r, int g, char *buf, size_t n);
char *cts__describe_scope(struct cts_run *r, int sc, char *buf, size_t n);
const char *cts__res_name(struct cts_run *r, int id, char *buf, size_t n);

/* Shared by the statement executors (exec.c). */
int cts__bind_made(struct cts_run *r, const struct cts_stmt *st, int id, tsm_handle h);
int cts__check_made_values(struct cts_run *r, const struct cts_stmt *st, int id);
int cts__judge_codes(struct cts_run *r, int model_rc, int adapter_rc, int expected_err);

/* DLPack (exec_dlpack.c). */
int cts__exec_dlpack(struct cts_run *r, const struct cts_stmt *st, int expected_err);
int cts__expect_deleted(struct cts_run *r, const struct cts_stmt *st);
int cts__check_dlpack(struct cts_run *r);
void cts__dlpack_before_close(struct cts_run *r);
void cts__dlpack_after_close(struct cts_run *r);

/* Graphs (exec_graph.c). */
int cts__exec_graph(struct cts_run *r, const struct cts_stmt *st, int expected_err);
int cts__expect_graph(struct cts_run *r, const struct cts_stmt *st);
int cts__check_graphs(struct cts_run *r, uint64_t *graph_bytes);
void cts__graph_free(struct cts_run *r);

/* Threads (exec_thread.c). Thread 0 is the caller's. */
typedef void (*cts_job_fn)(struct cts_run *r, void *arg);
/* Runs fn on thread t and waits for it. */
void cts__on_thread(struct cts_run *r, int t, cts_job_fn fn, void *arg);
/* Runs fns[i](args[i]) on threads ts[i] at the same time and waits for all. */
void cts__on_threads(struct cts_run *r, size_t n, const int *ts, cts_job_fn fn, void **args);
void cts__stop_workers(struct cts_run *r);

#endif
