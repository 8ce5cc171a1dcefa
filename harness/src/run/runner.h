/*
 * harness/src/run/runner.h: probing the adapter and running jobs (one case on one device,
 * one repetition; or a caller's batch, such as a chunk of tsm-cts combos) in forked
 * children, each its own process group, with timeouts, an optional memory limit and -j
 * parallelism, and the reports they feed; with --batch, a child runs several jobs.
 */
#ifndef CTS_RUNNER_H
#define CTS_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "case.h"
#include "util.h"

#define CTS_MAX_DEVICES 16

/* What the probe child learned about the adapter. Plain data, copied by value. */
struct cts_adapter_facts {
  int loaded;
  char why[512];   /* when !loaded */
  char name[128];
  char version[128];
  uint32_t caps, ops;
  uint32_t dtypes;     /* 1u << enum tsm_dtype, with the ABI 1.0-1.4 default filled in */
  int has_dump;
  int has_fail_alloc;  /* the optional debug_alloc_fail slot */
  int n_devices;         /* at most CTS_MAX_DEVICES: the ones the judge runs */
  int n_devices_listed;  /* how many device_list returned */
  char device[CTS_MAX_DEVICES][64];
  int available[CTS_MAX_DEVICES];
  char reason[CTS_MAX_DEVICES][256];
};

/* One result row. Owns name, path, message, output, expected_reason and graded_by; borrows c
 * (the case library's), device_name (the adapter facts'), family and clauses (the
 * case's, or a merged report's: see merge.c). */
struct cts_job {
  struct cts_case *c;   /* NULL when the file did not parse; owned by the runner's caller */
  char *name;           /* case id, relative to the cases root */
  char *path;
  int device;           /* index into the facts, or -1 */
  const char *device_name;
  int repeat;
  int timeout_ms;
  int status;           /* enum cts_status; -1 while to be run */
  int absent;           /* the adapter offers the device but it is not present here */
  char *message;
  char *output;         /* what the child printed (dumps, adapter noise, sanitizer reports) */
  char *expected_reason; /* from the expectations file, when listed */
  char *graded_by;      /* a Fail or Warning: the clauses that decided it, "ID STRENGTH, ..." */
  double ms;
  const char *family;   /* the summary's row: the case id's first folder, or "interop" */
  size_t family_len;
  char **clauses;       /* the clauses the case cites */
  size_t n_clauses;
};

/* How to run. Borrows the adapter path from the caller. */
struct cts_run_opts {
  const char *adapter;
  int jobs;
  int timeout_ms;     /* default per case */
  uint64_t seed;      /* 0: run in order */
  int fail_fast;      /* after the first result that is not ok, launch no more runs */
  uint64_t fail_max;  /* > 0: the allocation-failure mode (ERR.NOMEM.1) */
  uint64_t memory_limit_mib; /* > 0: RLIMIT_AS of every case process */
  int quiet;          /* no TAP line and no progress: the caller reports (tsm-cts reduce) */
  /* A job that is not one case (a chunk of generated combinations, combo_run.c): the
   * case process runs run_job instead of the job's case, and each result goes to
   * on_result instead of the TAP stream and the progress lines. NULL: a case. */
  int (*run_job)(const struct cts_job *job, const struct tsm_adapter *a, struct cts_buf *msg);
  void (*on_result)(const struct cts_job *job);
  /* > 1: --batch, a case process is a worker that loads the adapter once and runs up to
   * this many jobs one after another, each in a fresh session, each under its own
   * timeout and with its own output; a job that crashes, hangs or exits ends its worker
   * and is that job's verdict, and the next job starts a new worker. 0 or 1: a process
   * per job. */
  int batch;
};

/* How long gen and combos wait for the probe of their adapter. */
#define CTS_PROBE_TIMEOUT_MS 10000

/* Loads the adapter and lists its devices in a child process (its own process group)
 * that is killed after timeout_ms; a failure, crash or hang there is f->why. Warns on
 * stderr, once, when the adapter lists more devices than the judge runs. */
void cts_probe_adapter(const char *path, int timeout_ms, struct cts_adapter_facts *f);
/* The index of device `name` (NULL: the first) among f's, or -1 after a message on
 * stderr that begins with `command` when the adapter has no such device or it is not
 * available. */
int cts_adapter_device_index(const struct cts_adapter_facts *f, const char *name,
                             const char *command);
/* Runs every job whose status is -1; prints TAP lines to stdout as results arrive,
 * after the caller's cts_tap_begin, unless opts->quiet. Jobs decided beforehand are
 * printed first. */
void cts_run_jobs(struct cts_job *jobs, size_t n, const struct cts_run_opts *opts);
/* 1 once SIGINT, SIGTERM or SIGHUP has interrupted a cts_run_jobs call: the running job
 * is Error, and every later call runs nothing (its jobs are Skip). */
int cts_run_interrupted(void);

#endif
