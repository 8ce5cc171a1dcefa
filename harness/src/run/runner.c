/*
 * harness/src/run/runner.c: the process runner. The adapter is probed, and every case run,
 * in a forked child that loads the adapter itself, so a crash, abort, exit or hang in
 * adapter code is that case's Crash, Error or Timeout (or the probe's load error) and
 * the run goes on (libuv's runner, spec adapter.md). Each child leads a process group
 * of its own, killed whole when the case ends; the judge is the subreaper of what the
 * adapter daemonises and kills it too. Children write their result on a pipe and their
 * output on another; the result counts once it is whole, whatever the process does
 * after. Before it, a case process streams its verdict on the same pipe the moment a
 * check decides it, so that a Fail survives a crash, sanitizer exit or hang in the
 * session's teardown that ends the process before the result is written: the result
 * is that Fail, the end noted. An interrupt (SIGINT, SIGTERM, SIGHUP) ends the run with
 * every finished result. With --batch a child is a worker that loads the adapter once
 * and runs several jobs, each in a fresh session, told them one at a time on a command
 * pipe so that what it prints between one job's start and its result is that job's
 * output; a crash, hang or exit is the verdict of the job it happened in and ends the
 * worker, and the next job starts a new one (a CUDA context or a large library's load
 * is paid once per worker, not once per case).
 */
#define _GNU_SOURCE /* prctl's PR_SET_CHILD_SUBREAPER */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "adapter_load.h"
#include "exec.h"
#include "expectations.h"
#include "grade.h"
#include "report.h"
#include "summary.h"
#include "util.h"

#define OUTPUT_LIMIT (64 * 1024)

/* ---- probing the adapter --------------------------------------------------- */

/* RETURN 0, or -1 when fd took not all of it. */
static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Reads once from *fd (non-blocking) into b, keeping at most `limit` bytes and saying
 * once where it dropped the rest; at the end of the stream closes *fd and sets it to -1.
 * RETURN 0 when nothing was there to read, else 1. */
static int drain(int *fd, struct cts_buf *b, size_t limit) {
  char chunk[4096];
  ssize_t n = read(*fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (n <= 0) {
    close(*fd);
    *fd = -1;
    return 1;
  }
  if (b->len > limit) return 1; /* past the limit: the cut is said already */
  size_t room = limit - b->len;
  cts_buf_append(b, chunk, (size_t)n < room ? (size_t)n : room);
  if ((size_t)n > room)
    cts_buf_printf(b, "\n[tsm-cts: output past %zu bytes dropped]\n", limit);
  return 1;
}

/* Takes what is in the pipe now and closes it: its writer has ended, or its writers are
 * helpers that outlived it, whose later output is not the case's. */
static void drain_rest(int *fd, struct cts_buf *b) {
  while (*fd >= 0 && drain(fd, b, OUTPUT_LIMIT)) {
  }
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void sanitize_field(char *s) {
  unsigned char *p = (unsigned char *)s;
  while (*p) {
    size_t n = cts_utf8_sequence(p);
    if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
      *p++ = '?';
      continue;
    }
    p += n;
  }
}

/* Copies src (NULL: fallback) into out, sanitized. */
static void copy_field(char *out, size_t size, const char *src, const char *fallback) {
  snprintf(out, size, "%s", src ? src : fallback);
  sanitize_field(out);
}

static void probe_devices(struct cts_buf *b, const struct tsm_adapter *a,
                          const struct tsm_device *devs, int n) {
  char name[128], version[128];
  copy_field(name, sizeof name, a->name, "unnamed");
  copy_field(version, sizeof version, a->version, "");
  int listed = n > CTS_MAX_DEVICES ? CTS_MAX_DEVICES : n;
  cts_buf_printf(b, "OK\t%s\t%s\t%u\t%u\t%d\t%d\t%d\t%u\n", name, version, a->caps, a->ops,
                 (CTS_HAS_SLOT(a, mgr_dump) ? 1 : 0) | (CTS_HAS_SLOT(a, debug_alloc_fail) ? 2 : 0),
                 listed, n, a->dtypes);
  for (int i = 0; i < listed; i++) {
    char dn[64], reason[256];
    copy_field(dn, sizeof dn, devs[i].name, "?");
    copy_field(reason, sizeof reason, devs[i].unavailable_reason, "no reason given");
    cts_buf_printf(b, "%s\t%d\t%s\n", dn, devs[i].available ? 1 : 0, reason);
  }
}

static void probe_child(const char *path, int fd) {
  char why[512];
  struct cts_buf b = {0};
  const struct tsm_adapter *a = cts_adapter_load(path, why, sizeof why);
  if (!a) {
    sanitize_field(why);
    cts_buf_printf(&b, "ERR\t%s\n", why);
  } else {
    const struct tsm_device *devs = NULL;
    int n = a->device_list(&devs);
    if (n < 1 || !devs)
      cts_buf_printf(&b, "ERR\tadapter device_list returned %d: no devices (ABI.DEV.1)\n", n);
    else
      probe_devices(&b, a, devs, n);
  }
  write_all(fd, b.buf, b.len);
  cts_buf_free(&b);
}

/* Makes the judge the reaper of every process its children leave behind (Linux), so
 * that a helper an adapter daemonised is found and killed (kill_orphans) rather than
 * outliving the run. */
static void become_subreaper(void) {
#ifdef PR_SET_CHILD_SUBREAPER
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
}

/* Kills every child of the judge that is not running a case (`running` of them, pids in
 * `keep`): helpers whose parent, a case or the probe, has ended. Repeats while killing
 * one hands the judge the orphan's own children, a bounded number of times. */
static void kill_orphans(const pid_t *keep, int running) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
  for (int round = 0; round < 8; round++) {
    char *text = cts_read_file(path, NULL);
    if (!text) return;
    int killed = 0;
    for (char *t = text, *end; *t; t = end) {
      pid_t pid = (pid_t)strtol(t, &end, 10);
      if (end == t) break;
      int ours = 0;
      for (int i = 0; i < running; i++) ours |= keep[i] == pid;
      if (ours || pid <= 0) continue;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
      killed++;
    }
    free(text);
    if (!killed) return;
  }
}

/* Reads fd until it ends, the child has exited (a helper may hold the pipe open) or
 * `deadline` passes; then kills the child's process group. RETURN 1 when it exited. */
static int read_probe(int fd, pid_t pid, double deadline, struct cts_buf *b, int *wstatus) {
  int exited = 0;
  while (!exited && cts_now_ms() < deadline) {
    struct pollfd pfd = {fd, POLLIN, 0};
    poll(&pfd, 1, fd >= 0 ? 20 : 2); /* fd < 0 is ignored: then a short sleep */
    if (pfd.revents) drain(&fd, b, OUTPUT_LIMIT);
    exited = waitpid(pid, wstatus, WNOHANG) == pid;
  }
  kill(-pid, SIGKILL);
  if (!exited) waitpid(pid, wstatus, 0);
  drain_rest(&fd, b);
  return exited;
}

/* Forks probe_child in a process group of its own, under timeout_ms. RETURN what it
 * wrote (owned by the caller), or NULL with f->why; *wstatus its end. */
static char *run_probe_child(const char *path, int timeout_ms, int *wstatus,
                             struct cts_adapter_facts *f) {
  int p[2];
  if (pipe(p) != 0) {
    snprintf(f->why, sizeof f->why, "pipe: %s", strerror(errno));
    return NULL;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    close(p[0]);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    probe_child(path, p[1]);
    _exit(0);
  }
  close(p[1]);
  struct cts_buf b = {0};
  *wstatus = 0;
  if (pid < 0) {
    close(p[0]);
    snprintf(f->why, sizeof f->why, "fork: %s", strerror(errno));
    return NULL;
  }
  setpgid(pid, pid);
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  if (!read_probe(p[0], pid, cts_now_ms() + timeout_ms, &b, wstatus) && !b.len) {
    snprintf(f->why, sizeof f->why,
             "loading the adapter or listing its devices ran past %d ms and was killed",
             timeout_ms);
    cts_buf_free(&b);
    return NULL;
  }
  return cts_buf_take(&b);
}

/* The device lines that follow the OK line: name, availability, reason. */
static void parse_probe_devices(char **save, int n, struct cts_adapter_facts *f) {
  for (int i = 0; i < n; i++) {
    char *dl = strtok_r(NULL, "\n", save);
    if (!dl) break;
    char *ds = NULL;
    char *dn = strtok_r(dl, "\t", &ds);
    char *av = strtok_r(NULL, "\t", &ds);
    char *rs = strtok_r(NULL, "\n", &ds);
    snprintf(f->device[i], sizeof f->device[i], "%s", dn ? dn : "?");
    f->available[i] = av ? atoi(av) : 0;
    snprintf(f->reason[i], sizeof f->reason[i], "%s", rs ? rs : "");
    f->n_devices++;
  }
}

/* probe_child's OK report: the adapter's facts, then one line per device. */
static void parse_probe_ok(char *text, struct cts_adapter_facts *f) {
  char *save = NULL;
  char *line = strtok_r(text, "\n", &save);
  char *fields[9] = {0};
  char *fs = NULL;
  int k = 0;
  for (char *t = strtok_r(line, "\t", &fs); t && k < 9; t = strtok_r(NULL, "\t", &fs))
    fields[k++] = t;
  if (k != 9) return;
  f->loaded = 1;
  snprintf(f->name, sizeof f->name, "%s", fields[1]);
  snprintf(f->version, sizeof f->version, "%s", fields[2]);
  f->caps = (uint32_t)strtoul(fields[3], NULL, 10);
  f->ops = (uint32_t)strtoul(fields[4], NULL, 10);
  f->dtypes = (uint32_t)strtoul(fields[8], NULL, 10);
  f->has_dump = atoi(fields[5]) & 1;
  f->has_fail_alloc = (atoi(fields[5]) & 2) != 0;
  parse_probe_devices(&save, atoi(fields[6]), f);
  f->n_devices_listed = atoi(fields[7]);
}

int cts_adapter_device_index(const struct cts_adapter_facts *f, const char *name,
                             const char *command) {
  for (int i = 0; i < f->n_devices; i++)
    if (!name || !strcmp(f->device[i], name)) {
      if (f->available[i]) return i;
      fprintf(stderr, "%s: device %s is not available: %s\n", command, f->device[i],
              f->reason[i]);
      return -1;
    }
  fprintf(stderr, "%s: the adapter has no device %s\n", command, name);
  return -1;
}

void cts_probe_adapter(const char *path, int timeout_ms, struct cts_adapter_facts *f) {
  memset(f, 0, sizeof *f);
  become_subreaper();
  int st = 0;
  char *text = run_probe_child(path, timeout_ms, &st, f);
  kill_orphans(NULL, 0);
  if (!text) return;
  if (strncmp(text, "OK\t", 3) == 0) {
    parse_probe_ok(text, f);
  } else if (strncmp(text, "ERR\t", 4) == 0) {
    char *nl = strchr(text, '\n');
    if (nl) *nl = '\0';
    snprintf(f->why, sizeof f->why, "%s", text + 4);
  } else if (WIFSIGNALED(st)) {
    snprintf(f->why, sizeof f->why, "loading the adapter crashed: signal %d (%s)",
             WTERMSIG(st), strsignal(WTERMSIG(st)));
  } else {
    snprintf(f->why, sizeof f->why, "loading the adapter ended the process (exit status %d)",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  }
  free(text);
  if (f->loaded && f->n_devices_listed > f->n_devices)
    fprintf(stderr, "tsm-cts: warning: the adapter lists %d devices; the judge runs the first "
            "%d and no case on the others\n", f->n_devices_listed, f->n_devices);
}

/* ---- one child ------------------------------------------------------------- */

/* After a case process reported its result, how long it may take to exit (atexit
 * handlers, a sanitizer's exit-time report) before its process group is killed. */
#define EXIT_GRACE_MS 2000

/* One running case process and its process group. Owns the read ends of its two pipes
 * (closed once drained) and their buffers, which finish() hands to the job, and the
 * streamed step's message and the end it preceded (settle() frees them); a batch
 * worker's, also the write end of its command pipe. */
struct slot {
  pid_t pid;          /* also the process group id */
  size_t job;
  int has_job;        /* 0: a batch worker whose last job is concluded, let go to exit */
  int worker;         /* a batch worker (--batch): results come framed, jobs on cmd_fd */
  int cmd_fd;         /* the worker's command pipe, -1 once closed (or per case) */
  int ran;            /* the jobs given to the worker */
  int last;           /* the worker said its job's result is its last (it leaked) */
  int result_fd, output_fd;
  struct cts_buf result, output; /* result: what follows the step records */
  double deadline, started; /* of the job */
  int reported;       /* the result pipe ended with a whole result (a worker: framed) */
  int exited, wstatus; /* set by reap() */
  int stepped;        /* a step record came: its status (or -1) and message */
  int step_status;
  char *step_msg;
  int end_status;     /* a streamed Fail stands for the result: how the process ended */
  char *end_msg;      /* (its Crash, Timeout or Error message), else NULL */
};

/* The longest message a step record carries, so that one fits the judge's buffer whole
 * (OUTPUT_LIMIT): the message stands in for a result only when the process then dies. */
#define STEP_LIMIT (16 * 1024)

/* In the case process: the result pipe's descriptor, for stream_step. */
static int step_fd = -1;

/* cts_exec_on_step in the case process: "step STATUS LEN\n" and LEN bytes of the
 * message, written at once with write(2) (no stdio buffer to lose), so that the judge
 * has them whatever the process does next. */
static void stream_step(int status, const char *message) {
  size_t len = message ? strlen(message) : 0;
  if (len > STEP_LIMIT) len = STEP_LIMIT;
  char head[64];
  int n = snprintf(head, sizeof head, "step %s %zu\n", cts_status_name(status), len);
  write_all(step_fd, head, (size_t)n);
  write_all(step_fd, message, len);
}

/* The adapter as a case process has it: loaded at its first job, kept for the rest. */
struct loaded {
  int tried;
  const struct tsm_adapter *a; /* NULL: why */
  char why[512];
};

/* Runs one job in the case process (step_fd set). RETURN its status; msg its message. */
static int run_one(const struct cts_job *job, const struct cts_run_opts *o, struct loaded *ld,
                   struct cts_buf *msg) {
  if (!ld->tried) {
    ld->tried = 1;
    ld->a = cts_adapter_load(o->adapter, ld->why, sizeof ld->why);
  }
  if (!ld->a) {
    cts_buf_printf(msg, "%s", ld->why);
    return CTS_ERROR;
  }
  if (o->run_job) return o->run_job(job, ld->a, msg);
  cts_exec_on_step = stream_step;
  return cts_exec_case(job->c, ld->a, job->device, msg, o->fail_max);
}

static void child_main(const struct cts_job *job, const struct cts_run_opts *o, int result_fd) {
  struct loaded ld = {0};
  struct cts_buf msg = {0};
  step_fd = result_fd;
  int status = run_one(job, o, &ld, &msg);
  fflush(stdout);
  struct cts_buf out = {0};
  cts_buf_printf(&out, "%s\n%s", cts_status_name(status), msg.buf ? msg.buf : "");
  write_all(result_fd, out.buf, out.len);
  cts_buf_free(&out);
  cts_buf_free(&msg);
  close(result_fd);
  /* exit, not _exit: a sanitizer's exit-time report is part of the verdict. */
  exit(0);
}

/* ---- a batch worker (--batch) ---------------------------------------------- */

/* What the judge's result buffer of a worker holds at most: a step record and a framed
 * result, each within its own limit, with their heads. */
#define WORKER_RESULT_LIMIT (OUTPUT_LIMIT + STEP_LIMIT + 1024)

/* In a worker: the index of the next job, a decimal line on the command pipe. RETURN 0,
 * or -1 when the judge closed it (no more jobs) or it cannot be read. */
static int next_command(int fd, size_t *j) {
  char line[32];
  size_t n = 0;
  while (n < sizeof line - 1) {
    ssize_t r = read(fd, line + n, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    if (line[n] == '\n') {
      line[n] = '\0';
      *j = (size_t)strtoull(line, NULL, 10);
      return 0;
    }
    n++;
  }
  return -1;
}

/* In a worker: "result LEN\n" (or "result LEN last\n": the worker ends after this job)
 * and the LEN bytes a case process writes before it ends, cut where the judge cuts a
 * case process's (drain), since the pipe stays open. RETURN 0, or -1 when the pipe took
 * not all of it (the adapter closed it, say). */
static int write_framed(int fd, int status, const struct cts_buf *msg, int last) {
  struct cts_buf out = {0};
  cts_buf_printf(&out, "%s\n%s", cts_status_name(status), msg->buf ? msg->buf : "");
  if (out.len > OUTPUT_LIMIT) {
    out.len = OUTPUT_LIMIT;
    cts_buf_printf(&out, "\n[tsm-cts: output past %d bytes dropped]\n", OUTPUT_LIMIT);
  }
  char head[64];
  int n = snprintf(head, sizeof head, "result %zu%s\n", out.len, last ? " last" : "");
  int rc = write_all(fd, head, (size_t)n) || write_all(fd, out.buf, out.len) ? -1 : 0;
  cts_buf_free(&out);
  return rc;
}

/* LeakSanitizer's check on demand, present when the judge is built with ASan or LSan
 * (weak: NULL otherwise). It prints a report of what is unreachable now and returns
 * nonzero when there is any. */
extern int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

/* In a worker under LeakSanitizer, after a job: what the job leaked is its verdict, as a
 * case process's exit-time report is (finish_reported): a job that passed is Fail. The
 * report (on stderr) is the job's output. RETURN 1 when it leaked: the worker then ends,
 * so that the next job's check does not see the same leak again. */
static int leaked_during(int *status, struct cts_buf *msg) {
  if (!__lsan_do_recoverable_leak_check || !__lsan_do_recoverable_leak_check()) return 0;
  if (cts_status_ok(*status)) {
    *status = CTS_FAIL;
    cts_buf_free(msg);
    cts_buf_printf(msg, "the case passed but LeakSanitizer found memory it leaked (the report "
                   "is in the output)");
  }
  return 1;
}

/* A worker: runs the jobs the judge names on cmd_fd one after another, each in a fresh
 * session of the adapter it loads once, its output flushed before its result so that
 * the judge finds all of it in the pipe when the result comes; ends when the judge
 * closes cmd_fd, or after a job that leaked. jobs: the judge's, as they were at the
 * fork. */
static void worker_main(const struct cts_job *jobs, size_t n, const struct cts_run_opts *o,
                        int result_fd, int cmd_fd) {
  struct loaded ld = {0};
  size_t j;
  int written = 0;
  step_fd = result_fd;
  while (written == 0 && next_command(cmd_fd, &j) == 0 && j < n) {
    struct cts_buf msg = {0};
    int status = run_one(&jobs[j], o, &ld, &msg);
    int leaked = leaked_during(&status, &msg);
    fflush(stdout);
    fflush(stderr);
    written = write_framed(result_fd, status, &msg, leaked);
    cts_buf_free(&msg);
    if (leaked) _exit(0); /* reported; LeakSanitizer's exit-time check would say it again */
  }
  close(result_fd);
  /* exit, not _exit: a sanitizer's exit-time report counts for the worker's last job. */
  exit(0);
}

/* The run loop's buffers, held here too: a case process inherits them and ends with
 * exit() from inside the loop, so LeakSanitizer checks its heap at exit, when the
 * loop's own pointers may live only in registers the child has since reused. */
static struct {
  size_t *order;
  struct slot *slots;
  struct pollfd *pfd;
  int width;
} run_loop;

/* In a new worker: the other workers' command pipes, which the fork copied, closed, so
 * that a worker the judge lets go sees the end of its own. */
static void close_other_commands(void) {
  for (int i = 0; i < run_loop.width; i++) {
    const struct slot *o = &run_loop.slots[i];
    if (o->pid && o->worker && o->cmd_fd >= 0) close(o->cmd_fd);
  }
}

/* In the case process, before any adapter code: its own process group (so that a
 * kill(0, ...) or a killed group never reaches the judge), stdio on the output pipe,
 * and the --memory-limit. */
static void child_setup(int output_fd, uint64_t memory_limit_mib) {
  setpgid(0, 0);
  const int judge_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  for (size_t i = 0; i < sizeof judge_signals / sizeof judge_signals[0]; i++)
    signal(judge_signals[i], SIG_DFL); /* the judge's handlers are not the case's */
  dup2(output_fd, 1);
  dup2(output_fd, 2);
  close(output_fd);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  if (devnull > 2) close(devnull);
  if (memory_limit_mib) {
    rlim_t bytes = (rlim_t)memory_limit_mib << 20;
    struct rlimit rl = {bytes, bytes};
    setrlimit(RLIMIT_AS, &rl);
  }
}

static void close_all(const int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

/* The pipes of a new case process, read end then write end: result, output and, for a
 * worker, its commands (else -1). RETURN 0, or -1 with none left open. */
static int open_pipes(int p[6], int worker) {
  for (int i = 0; i < 6; i++) p[i] = -1;
  for (int k = 0; k < (worker ? 3 : 2); k++)
    if (pipe(p + 2 * k) != 0) {
      close_all(p, 6);
      return -1;
    }
  return 0;
}

/* Slot s's process runs job j from now: its clock, and nothing heard of it yet. */
static void begin_job(struct slot *s, size_t j, int timeout_ms) {
  s->job = j;
  s->has_job = 1;
  s->reported = s->stepped = 0;
  cts_buf_free(&s->result);
  s->started = cts_now_ms();
  s->deadline = s->started + timeout_ms;
}

/* Names job j to slot s's worker. RETURN 0, or -1 when the worker has gone. */
static int send_command(struct slot *s, size_t j) {
  char line[32];
  int n = snprintf(line, sizeof line, "%zu\n", j);
  s->ran++;
  return write(s->cmd_fd, line, (size_t)n) == n ? 0 : -1;
}

/* Forks the process of job j (of n): a case process, or with --batch a worker given j as
 * its first job (a worker that dies before it reads it dies in that job). */
static int start(struct slot *s, struct cts_job *jobs, size_t n, size_t j,
                 const struct cts_run_opts *o) {
  int worker = o->batch > 1, p[6];
  if (open_pipes(p, worker) != 0) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close_all(p, 6);
    return -1;
  }
  if (pid == 0) {
    close_all((int[3]){p[0], p[2], p[5]}, 3);
    if (worker) close_other_commands();
    child_setup(p[3], o->memory_limit_mib);
    if (worker) worker_main(jobs, n, o, p[1], p[4]);
    child_main(&jobs[j], o, p[1]);
  }
  setpgid(pid, pid); /* also here: the group must exist before the judge may kill it */
  close_all((int[3]){p[1], p[3], p[4]}, 3);
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  fcntl(p[2], F_SETFL, O_NONBLOCK);
  memset(s, 0, sizeof *s);
  s->pid = pid;
  s->worker = worker;
  s->cmd_fd = p[5];
  s->result_fd = p[0];
  s->output_fd = p[2];
  begin_job(s, j, jobs[j].timeout_ms);
  if (worker) send_command(s, j);
  return 0;
}

/* The verdict of a process that did not report a whole result: killed at its deadline,
 * killed by a signal, or ended without a word. */
static void finish_unreported(struct cts_job *job, int wstatus, int timed_out,
                              uint64_t memory_limit_mib) {
  if (timed_out) {
    job->status = CTS_TIMEOUT;
    job->message = cts_printf_dup("ran past its limit of %d ms and was killed", job->timeout_ms);
    return;
  }
  const char *limit_note = memory_limit_mib ? " (the case ran under --memory-limit: an "
                                              "allocation past it fails)" : "";
  if (WIFSIGNALED(wstatus)) {
    job->status = CTS_CRASH;
    job->message = cts_printf_dup("the case process died on signal %d (%s)%s",
                                  WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)), limit_note);
    return;
  }
  job->status = CTS_ERROR;
  job->message = cts_printf_dup(
      "the case process exited with status %d without reporting a result "
      "(an adapter that called exit, or a sanitizer report: see the output)%s",
      WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, limit_note);
}

/* The verdict of a process that reported one; hung_at_exit: it did not exit within
 * EXIT_GRACE_MS after and was killed, which keeps the result and says so. */
static void finish_reported(struct cts_job *job, int reported, const char *message,
                            int wstatus, int hung_at_exit) {
  job->status = reported;
  if (!hung_at_exit && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0 &&
      cts_status_ok(reported)) {
    job->status = CTS_FAIL;
    job->message = cts_printf_dup(
        "the case passed but its process exited with status %d (a sanitizer or "
        "leak report: see the output)", WEXITSTATUS(wstatus));
    return;
  }
  job->message = cts_xstrdup(message);
}

/* A process that streamed a step and then ended without a result (job: that end). A
 * Fail stands for the result with the end noted, until settle() has seen it graded;
 * any other step is noted after the end. */
static void after_step(struct slot *s, struct cts_job *job) {
  if (s->step_status != CTS_FAIL) {
    char *end = job->message;
    job->message = cts_printf_dup("%s; before it, the case had reported %s: %s", end,
                                  cts_status_name(s->step_status), s->step_msg);
    free(end);
    return;
  }
  s->end_status = job->status;
  s->end_msg = job->message;
  job->status = CTS_FAIL;
  job->message = cts_printf_dup("%s; then %s%s", s->step_msg,
                                s->end_status == CTS_TIMEOUT ? "the case process " : "",
                                s->end_msg);
}

/* After grading and the expectations: a streamed Fail that is no Fail any more (a
 * Warning under the profile, a known failure) does not excuse the end, which is the
 * result again, the check noted. Frees what the slot kept of the step. */
static void settle(struct slot *s, struct cts_job *job) {
  if (s->end_msg && job->status != CTS_FAIL) {
    free(job->message);
    job->message = cts_printf_dup("%s; before it, a check failed, which alone is graded %s: %s",
                                  s->end_msg, cts_status_name(job->status), s->step_msg);
    job->status = s->end_status;
    free(job->graded_by);
    job->graded_by = NULL;
  }
  free(s->end_msg);
  free(s->step_msg);
  s->end_msg = s->step_msg = NULL;
}

static void finish(struct slot *s, struct cts_job *job, int timed_out,
                   const struct cts_run_opts *o) {
  job->ms = cts_now_ms() - s->started;
  if (timed_out && s->reported)
    cts_buf_printf(&s->output, "\n[tsm-cts: the case process reported its result but did "
                   "not exit; its process group was killed]\n");
  job->output = cts_buf_take(&s->output);
  char *res = cts_buf_take(&s->result);
  char *nl = strchr(res, '\n');
  int reported = -1;
  if (nl && s->reported) {
    *nl = '\0';
    reported = cts_status_from_name(res);
  }
  if (reported < 0) {
    finish_unreported(job, s->wstatus, timed_out, o->memory_limit_mib);
    if (s->stepped) after_step(s, job);
  } else
    finish_reported(job, reported, nl + 1, s->wstatus, timed_out);
  free(res);
}

/* ---- the loop -------------------------------------------------------------- */

static uint64_t next_random(uint64_t *state) {
  /* splitmix64: a fixed, portable sequence for a given --seed */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* One cts_run_jobs call. Owns order, slots and pfd (mirrored in run_loop). */
struct loop {
  struct cts_job *jobs;
  size_t n;           /* jobs */
  const struct cts_run_opts *opts;
  size_t *order;      /* the jobs still to run, in launch order */
  size_t n_order, next;
  struct slot *slots; /* width of them; pid 0 when free */
  struct pollfd *pfd; /* two per slot */
  pid_t *keep;        /* scratch for kill_orphans: the pids of running cases */
  int width, running, number;
  int stop;           /* --fail-fast: a result was not ok */
};

/* Set by SIGINT, SIGTERM or SIGHUP during cts_run_jobs: stop, and write the reports. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
  (void)sig;
  interrupted = 1;
}

int cts_run_interrupted(void) { return interrupted; }

/* A result is known: its TAP line, and the progress. */
static void publish(struct loop *L, struct cts_job *job) {
  if (L->opts->on_result) {
    L->opts->on_result(job);
    return;
  }
  if (L->opts->quiet) return;
  cts_tap_result(job, job->absent ? 0 : ++L->number);
  cts_progress_note(job);
}

/* Prints the results decided before the run; queues the others, shuffled by --seed. */
static void queue_jobs(struct loop *L, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (L->jobs[i].status >= 0) {
      cts_grade_job(&L->jobs[i]);
      cts_apply_expectation(&L->jobs[i]);
      publish(L, &L->jobs[i]);
    } else
      L->order[L->n_order++] = i;
  }
  if (!L->opts->seed) return;
  uint64_t state = L->opts->seed;
  for (size_t i = L->n_order; i > 1; i--) {
    size_t k = (size_t)(next_random(&state) % i);
    size_t t = L->order[i - 1];
    L->order[i - 1] = L->order[k];
    L->order[k] = t;
  }
}

static void launch_into_free_slots(struct loop *L) {
  for (int i = 0; i < L->width && L->next < L->n_order && !L->stop && !interrupted; i++) {
    if (L->slots[i].pid) continue;
    size_t j = L->order[L->next++];
    if (start(&L->slots[i], L->jobs, L->n, j, L->opts) != 0) {
      L->jobs[j].status = CTS_ERROR;
      L->jobs[j].message = cts_xstrdup("could not fork the case process");
      publish(L, &L->jobs[j]);
      continue;
    }
    L->running++;
  }
}

/* Waits for output of a running child or its deadline. RETURN the pfd entries used. */
static int wait_for_children(struct loop *L) {
  int np = 0;
  double now = cts_now_ms();
  double wait = 50;
  for (int i = 0; i < L->width; i++) {
    const struct slot *s = &L->slots[i];
    if (!s->pid) continue;
    if (s->result_fd >= 0) L->pfd[np++] = (struct pollfd){s->result_fd, POLLIN, 0};
    if (s->output_fd >= 0) L->pfd[np++] = (struct pollfd){s->output_fd, POLLIN, 0};
    if (s->deadline - now < wait) wait = s->deadline - now;
  }
  if (wait < 0) wait = 0;
  if (np) poll(L->pfd, (nfds_t)np, (int)wait + 1);
  return np;
}

/* Collects every child that ended: a case process is marked in its slot; any other is
 * a helper orphaned to the judge (become_subreaper) and is only reaped. */
static void reap(struct loop *L) {
  int wstatus;
  pid_t pid;
  while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
    for (int i = 0; i < L->width; i++) {
      struct slot *s = &L->slots[i];
      if (s->pid != pid) continue;
      s->exited = 1;
      s->wstatus = wstatus;
    }
  }
}

/* Takes the whole step records (stream_step's) at the front of s->result out of it,
 * keeping the first one's status and message; one not yet whole waits for more. */
static void take_steps(struct slot *s) {
  struct cts_buf *b = &s->result;
  while (b->buf && !strncmp(b->buf, "step ", 5)) {
    char *nl = memchr(b->buf, '\n', b->len), status[32];
    size_t len = 0;
    int used = 0;
    if (!nl || sscanf(b->buf + 5, "%31s %zu%n", status, &len, &used) != 2 ||
        b->buf + 5 + used != nl)
      return; /* not whole yet, or not a record: left as it is */
    size_t head = (size_t)(nl + 1 - b->buf);
    if (b->len - head < len) return;
    if (!s->stepped) {
      s->stepped = 1;
      s->step_status = cts_status_from_name(status);
      s->step_msg = cts_xstrndup(nl + 1, len);
    }
    b->len -= head + len;
    memmove(b->buf, b->buf + head + len, b->len + 1);
  }
}

/* A worker's whole result record ("result LEN\n" and LEN bytes, write_framed's) at the
 * front of s->result, after the step records, becomes s->result, as a case process's
 * whole pipe would be; one not yet whole waits for more. */
static void take_result(struct slot *s) {
  struct cts_buf *b = &s->result;
  size_t len = 0;
  int used = 0;
  if (s->reported || !b->buf || strncmp(b->buf, "result ", 7)) return;
  char *nl = memchr(b->buf, '\n', b->len);
  if (!nl || sscanf(b->buf + 7, "%zu%n", &len, &used) != 1) return;
  if (b->buf + 7 + used + 5 == nl && !strncmp(b->buf + 7 + used, " last", 5)) {
    s->last = 1;
  } else if (b->buf + 7 + used != nl) {
    return;
  }
  size_t head = (size_t)(nl + 1 - b->buf);
  if (b->len - head < len) return;
  memmove(b->buf, nl + 1, len);
  b->len = len;
  b->buf[len] = '\0';
  s->reported = 1;
}

/* Reads once from slot s's result pipe (drain), taking out the step records and, from a
 * worker, the framed result. */
static int drain_result(struct slot *s) {
  int more = drain(&s->result_fd, &s->result, s->worker ? WORKER_RESULT_LIMIT : OUTPUT_LIMIT);
  take_steps(s);
  if (s->worker) take_result(s);
  return more;
}

/* Reads what slot s's child wrote; notes a whole result, after which the process has
 * EXIT_GRACE_MS to exit. */
static void read_slot(struct loop *L, struct slot *s, int np) {
  for (int k = 0; k < np; k++) {
    if (!(L->pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (L->pfd[k].fd == s->result_fd) drain_result(s);
    else if (L->pfd[k].fd == s->output_fd) drain(&s->output_fd, &s->output, OUTPUT_LIMIT);
  }
  if (s->result_fd < 0 && !s->reported && s->result.buf && strchr(s->result.buf, '\n')) {
    s->reported = 1;
    double grace = cts_now_ms() + EXIT_GRACE_MS;
    if (grace < s->deadline) s->deadline = grace;
  }
}

/* Kills the rest of the case's process group and every helper orphaned to the judge
 * while no other case runs (one that still runs may own them). */
static void end_group(struct loop *L, struct slot *s) {
  kill(-s->pid, SIGKILL);
  int n = 0;
  for (int i = 0; i < L->width; i++)
    if (L->slots[i].pid && &L->slots[i] != s) L->keep[n++] = L->slots[i].pid;
  if (!n) kill_orphans(L->keep, 0);
}

/* Slot s's job is decided: its verdict graded, matched against the expectations,
 * published; --fail-fast stops the run at one that is not ok. */
static void conclude(struct loop *L, struct slot *s, int timed_out) {
  struct cts_job *job = &L->jobs[s->job];
  finish(s, job, timed_out, L->opts);
  cts_grade_job(job);
  cts_apply_expectation(job);
  settle(s, job);
  publish(L, job);
  if (L->opts->fail_fast && !cts_status_ok(job->status)) L->stop = 1;
  s->has_job = 0;
}

/* Closes a worker's command pipe: it ends after its last job, within EXIT_GRACE_MS. */
static void let_go(struct slot *s) {
  if (s->cmd_fd >= 0) close(s->cmd_fd);
  s->cmd_fd = -1;
  double grace = cts_now_ms() + EXIT_GRACE_MS;
  if (!s->has_job || grace < s->deadline) s->deadline = grace;
}

/* 1 when slot s's worker is to run another job after the one it reported. */
static int more_for(const struct loop *L, const struct slot *s) {
  return !s->last && s->ran < L->opts->batch && L->next < L->n_order && !L->stop &&
         !interrupted;
}

/* Slot s's worker reported its job's whole result and lives on. Its last job (the batch
 * full, nothing left, the run stopped) waits for the worker's end, as a case process's
 * result does; any other is decided now, as a case process's that then exited cleanly,
 * with the output the worker wrote before the result (all in the pipe by then), and the
 * worker gets the next job. One that has gone by then leaves that job to a new one. */
static void next_in_batch(struct loop *L, struct slot *s) {
  if (!more_for(L, s)) {
    let_go(s);
    return;
  }
  for (int k = 0; k < 64 && s->output_fd >= 0 && drain(&s->output_fd, &s->output, OUTPUT_LIMIT);
       k++) {
  } /* bounded: a helper that floods the pipe does not hold the judge */
  conclude(L, s, 0);
  if (more_for(L, s) && send_command(s, L->order[L->next]) == 0) {
    size_t j = L->order[L->next++];
    begin_job(s, j, L->jobs[j].timeout_ms);
    return;
  }
  let_go(s);
}

/* When slot s's child ended or ran past its deadline: kills its group, records and
 * prints its job's result (unless a worker's last job was decided already), and frees
 * the slot. A helper that holds the pipes open does not hold the verdict: what is in
 * them when the child ends is its output. */
static void service_slot(struct loop *L, struct slot *s, int np) {
  read_slot(L, s, np);
  if (s->cmd_fd >= 0 && s->reported && !s->exited) {
    next_in_batch(L, s);
    return;
  }
  int timed_out = !s->exited && cts_now_ms() > s->deadline;
  if (!s->exited && !timed_out) return;
  if (timed_out) {
    kill(-s->pid, SIGKILL);
    waitpid(s->pid, &s->wstatus, 0);
  }
  while (s->result_fd >= 0 && drain_result(s)) {
  }
  if (s->result_fd >= 0) close(s->result_fd); /* as drain_rest, the records taken out */
  s->result_fd = -1;
  if (!s->reported && s->result.buf && strchr(s->result.buf, '\n')) s->reported = 1;
  drain_rest(&s->output_fd, &s->output);
  end_group(L, s);
  if (s->has_job) conclude(L, s, timed_out);
  cts_buf_free(&s->result);
  cts_buf_free(&s->output);
  let_go(s);
  s->pid = 0;
  L->running--;
}

/* The run was interrupted: every running case's group is killed and its job (a worker
 * let go after its last one has none) is Error. */
static void abandon_running(struct loop *L) {
  for (int i = 0; i < L->width; i++) {
    struct slot *s = &L->slots[i];
    if (!s->pid) continue;
    kill(-s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    close_all((int[3]){s->result_fd, s->output_fd, s->cmd_fd}, 3);
    cts_buf_free(&s->result);
    if (s->has_job) {
      struct cts_job *job = &L->jobs[s->job];
      job->status = CTS_ERROR;
      job->message = cts_xstrdup("the run was interrupted while this case ran");
      job->output = cts_buf_take(&s->output);
      settle(s, job);
      publish(L, job);
    }
    cts_buf_free(&s->output);
    s->pid = 0;
    L->running--;
  }
}

/* What was never launched is Skip: after --fail-fast, or an interrupted run. */
static void skip_the_rest(struct loop *L) {
  for (; L->next < L->n_order; L->next++) {
    struct cts_job *job = &L->jobs[L->order[L->next]];
    job->status = CTS_SKIP;
    job->message = cts_xstrdup(interrupted ? "the run was interrupted before this case"
                                           : "fail-fast: an earlier result was not ok");
    publish(L, job);
  }
}

static void run_loop_body(struct loop *L) {
  while (((L->next < L->n_order && !L->stop) || L->running > 0) && !interrupted) {
    launch_into_free_slots(L);
    int np = wait_for_children(L);
    reap(L);
    for (int i = 0; i < L->width; i++)
      if (L->slots[i].pid) service_slot(L, &L->slots[i], np);
  }
  if (interrupted) abandon_running(L);
  skip_the_rest(L);
  kill_orphans(NULL, 0);
}

void cts_run_jobs(struct cts_job *jobs, size_t n, const struct cts_run_opts *opts) {
  struct loop L = {.jobs = jobs, .n = n, .opts = opts};
  L.order = cts_xmalloc((n ? n : 1) * sizeof(size_t));
  queue_jobs(&L, n);
  L.width = opts->jobs > 0 ? opts->jobs : 1;
  L.slots = cts_xcalloc((size_t)L.width, sizeof *L.slots);
  L.pfd = cts_xcalloc((size_t)L.width * 2, sizeof *L.pfd);
  L.keep = cts_xcalloc((size_t)L.width, sizeof *L.keep);
  run_loop.order = L.order, run_loop.slots = L.slots, run_loop.pfd = L.pfd;
  run_loop.width = L.width;
  signal(SIGPIPE, SIG_IGN);
  become_subreaper();
  struct sigaction sa = {.sa_handler = on_interrupt, .sa_flags = SA_RESETHAND}, old[3];
  sigemptyset(&sa.sa_mask);
  const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; i++) sigaction(sigs[i], &sa, &old[i]);
  run_loop_body(&L);
  for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);
  memset(&run_loop, 0, sizeof run_loop);
  free(L.keep);
  free(L.slots);
  free(L.pfd);
  free(L.order);
}
