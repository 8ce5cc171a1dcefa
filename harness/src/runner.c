/*
 * harness/src/runner.c: the process runner. Every case run is a forked child that
 * loads the adapter itself, so a crash, abort, exit or hang in adapter code is
 * that case's Crash, Error or Timeout and the run goes on (libuv's runner, spec
 * adapter.md). Children write their result on a pipe and their output on another.
 */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter_load.h"
#include "exec.h"
#include "report.h"
#include "summary.h"
#include "util.h"

#define OUTPUT_LIMIT (64 * 1024)

/* ---- probing the adapter --------------------------------------------------- */

static void write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static char *read_all(int fd) {
  struct cts_buf b = {0};
  char chunk[4096];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof chunk)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    cts_buf_append(&b, chunk, (size_t)n);
  }
  return cts_buf_take(&b);
}

static void sanitize_field(char *s) {
  for (; *s; s++)
    if (*s == '\t' || *s == '\n') *s = ' ';
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
    if (n < 1 || !devs) {
      cts_buf_printf(&b, "ERR\tadapter device_list returned %d: no devices (ABI.DEV.1)\n", n);
    } else {
      if (n > CTS_MAX_DEVICES) n = CTS_MAX_DEVICES;
      char name[128], version[128];
      snprintf(name, sizeof name, "%s", a->name ? a->name : "unnamed");
      snprintf(version, sizeof version, "%s", a->version ? a->version : "");
      sanitize_field(name);
      sanitize_field(version);
      cts_buf_printf(&b, "OK\t%s\t%s\t%u\t%u\t%d\t%d\n", name, version, a->caps, a->ops,
                     (CTS_HAS_SLOT(a, mgr_dump) ? 1 : 0) | (CTS_HAS_SLOT(a, debug_alloc_fail) ? 2 : 0),
                     n);
      for (int i = 0; i < n; i++) {
        char dn[64], reason[256];
        snprintf(dn, sizeof dn, "%s", devs[i].name ? devs[i].name : "?");
        snprintf(reason, sizeof reason, "%s",
                 devs[i].unavailable_reason ? devs[i].unavailable_reason : "no reason given");
        sanitize_field(dn);
        sanitize_field(reason);
        cts_buf_printf(&b, "%s\t%d\t%s\n", dn, devs[i].available ? 1 : 0, reason);
      }
    }
  }
  write_all(fd, b.buf, b.len);
  cts_buf_free(&b);
}

/* Forks probe_child. RETURN what it wrote (owned by the caller); *wstatus its end. */
static char *run_probe_child(const char *path, int *wstatus, struct cts_adapter_facts *f) {
  int p[2];
  if (pipe(p) != 0) {
    snprintf(f->why, sizeof f->why, "pipe: %s", strerror(errno));
    return NULL;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    probe_child(path, p[1]);
    _exit(0);
  }
  close(p[1]);
  char *text = pid > 0 ? read_all(p[0]) : cts_xstrdup("");
  close(p[0]);
  *wstatus = 0;
  if (pid > 0) waitpid(pid, wstatus, 0);
  return text;
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
  char *fields[7] = {0};
  char *fs = NULL;
  int k = 0;
  for (char *t = strtok_r(line, "\t", &fs); t && k < 7; t = strtok_r(NULL, "\t", &fs))
    fields[k++] = t;
  if (k != 7) return;
  f->loaded = 1;
  snprintf(f->name, sizeof f->name, "%s", fields[1]);
  snprintf(f->version, sizeof f->version, "%s", fields[2]);
  f->caps = (uint32_t)strtoul(fields[3], NULL, 10);
  f->ops = (uint32_t)strtoul(fields[4], NULL, 10);
  f->has_dump = atoi(fields[5]) & 1;
  f->has_fail_alloc = (atoi(fields[5]) & 2) != 0;
  parse_probe_devices(&save, atoi(fields[6]), f);
}

void cts_probe_adapter(const char *path, struct cts_adapter_facts *f) {
  memset(f, 0, sizeof *f);
  int st = 0;
  char *text = run_probe_child(path, &st, f);
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
}

/* ---- one child ------------------------------------------------------------- */

/* One running case process. Owns the read ends of its two pipes (closed once drained)
 * and their buffers, which finish() hands to the job. */
struct slot {
  pid_t pid;
  size_t job;
  int result_fd, output_fd;
  struct cts_buf result, output;
  double deadline, started;
};

static void child_main(const struct cts_job *job, const char *adapter, uint64_t fail_max,
                       int result_fd) {
  char why[512];
  struct cts_buf msg = {0};
  int status;
  const struct tsm_adapter *a = cts_adapter_load(adapter, why, sizeof why);
  if (!a) {
    status = CTS_ERROR;
    cts_buf_printf(&msg, "%s", why);
  } else {
    status = cts_exec_case(job->c, a, job->device, &msg, fail_max);
  }
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

/* The run loop's buffers, held here too: a case process inherits them and ends with
 * exit() from inside the loop, so LeakSanitizer checks its heap at exit, when the
 * loop's own pointers may live only in registers the child has since reused. */
static struct {
  size_t *order;
  struct slot *slots;
  struct pollfd *pfd;
} run_loop;

static int start(struct slot *s, struct cts_job *jobs, size_t j, const char *adapter,
                 uint64_t fail_max) {
  int rp[2], op[2];
  if (pipe(rp) != 0) return -1;
  if (pipe(op) != 0) {
    close(rp[0]);
    close(rp[1]);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(rp[0]), close(rp[1]), close(op[0]), close(op[1]);
    return -1;
  }
  if (pid == 0) {
    close(rp[0]);
    close(op[0]);
    dup2(op[1], 1);
    dup2(op[1], 2);
    close(op[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    child_main(&jobs[j], adapter, fail_max, rp[1]);
  }
  close(rp[1]);
  close(op[1]);
  memset(s, 0, sizeof *s);
  s->pid = pid;
  s->job = j;
  s->result_fd = rp[0];
  s->output_fd = op[0];
  s->started = cts_now_ms();
  s->deadline = s->started + jobs[j].timeout_ms;
  return 0;
}

static void drain(int *fd, struct cts_buf *b, size_t limit) {
  char chunk[4096];
  ssize_t n = read(*fd, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close(*fd);
    *fd = -1;
    return;
  }
  if (b->len < limit) cts_buf_append(b, chunk, (size_t)n);
}

static void finish(struct slot *s, struct cts_job *job, int wstatus, int timed_out) {
  job->ms = cts_now_ms() - s->started;
  job->output = cts_buf_take(&s->output);
  char *res = cts_buf_take(&s->result);
  char *nl = strchr(res, '\n');
  int reported = -1;
  if (nl) {
    *nl = '\0';
    reported = cts_status_from_name(res);
  }
  if (timed_out) {
    job->status = CTS_TIMEOUT;
    char m[128];
    snprintf(m, sizeof m, "ran past its limit of %d ms and was killed", job->timeout_ms);
    job->message = cts_xstrdup(m);
  } else if (WIFSIGNALED(wstatus)) {
    job->status = CTS_CRASH;
    char m[160];
    snprintf(m, sizeof m, "the case process died on signal %d (%s)", WTERMSIG(wstatus),
             strsignal(WTERMSIG(wstatus)));
    job->message = cts_xstrdup(m);
  } else if (reported < 0) {
    job->status = CTS_ERROR;
    char m[200];
    snprintf(m, sizeof m,
             "the case process exited with status %d without reporting a result "
             "(an adapter that called exit, or a sanitizer report: see the output)",
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    job->message = cts_xstrdup(m);
  } else {
    job->status = reported;
    job->message = cts_xstrdup(nl + 1);
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0 && cts_status_ok(reported)) {
      job->status = CTS_FAIL;
      free(job->message);
      char m[200];
      snprintf(m, sizeof m,
               "the case passed but its process exited with status %d (a sanitizer or "
               "leak report: see the output)",
               WEXITSTATUS(wstatus));
      job->message = cts_xstrdup(m);
    }
  }
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
  const struct cts_run_opts *opts;
  size_t *order;      /* the jobs still to run, in launch order */
  size_t n_order, next;
  struct slot *slots; /* width of them; pid 0 when free */
  struct pollfd *pfd; /* two per slot */
  int width, running, number;
  int stop;           /* --fail-fast: a result was not ok */
};

/* A result is known: its TAP line, and the progress. */
static void publish(struct loop *L, struct cts_job *job) {
  cts_tap_result(job, job->absent ? 0 : ++L->number);
  cts_progress_note(job);
}

/* Prints the results decided before the run; queues the others, shuffled by --seed. */
static void queue_jobs(struct loop *L, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (L->jobs[i].status >= 0) {
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
  for (int i = 0; i < L->width && L->next < L->n_order && !L->stop; i++) {
    if (L->slots[i].pid) continue;
    size_t j = L->order[L->next++];
    if (start(&L->slots[i], L->jobs, j, L->opts->adapter, L->opts->fail_max) != 0) {
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

/* Reads what slot s's child wrote; when it ended or ran past its deadline, records
 * and prints its result and frees the slot. */
static void service_slot(struct loop *L, struct slot *s, int np) {
  for (int k = 0; k < np; k++) {
    if (!(L->pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (L->pfd[k].fd == s->result_fd) drain(&s->result_fd, &s->result, OUTPUT_LIMIT);
    else if (L->pfd[k].fd == s->output_fd) drain(&s->output_fd, &s->output, OUTPUT_LIMIT);
  }
  int wstatus = 0;
  int timed_out = cts_now_ms() > s->deadline;
  pid_t done = 0;
  if (timed_out) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &wstatus, 0);
    done = s->pid;
  } else if (s->result_fd < 0 && s->output_fd < 0) {
    done = waitpid(s->pid, &wstatus, WNOHANG);
  }
  if (done != s->pid) return;
  /* A child that finished may have left output in its pipes. */
  while (s->result_fd >= 0) drain(&s->result_fd, &s->result, OUTPUT_LIMIT);
  while (!timed_out && s->output_fd >= 0) drain(&s->output_fd, &s->output, OUTPUT_LIMIT);
  if (s->output_fd >= 0) close(s->output_fd);
  struct cts_job *job = &L->jobs[s->job];
  finish(s, job, wstatus, timed_out);
  cts_apply_expectation(job);
  publish(L, job);
  if (L->opts->fail_fast && !cts_status_ok(job->status)) L->stop = 1;
  s->pid = 0;
  L->running--;
}

void cts_run_jobs(struct cts_job *jobs, size_t n, const struct cts_run_opts *opts) {
  struct loop L = {.jobs = jobs, .opts = opts};
  L.order = cts_xmalloc((n ? n : 1) * sizeof(size_t));
  queue_jobs(&L, n);
  L.width = opts->jobs > 0 ? opts->jobs : 1;
  L.slots = cts_xcalloc((size_t)L.width, sizeof *L.slots);
  L.pfd = cts_xcalloc((size_t)L.width * 2, sizeof *L.pfd);
  run_loop.order = L.order, run_loop.slots = L.slots, run_loop.pfd = L.pfd;
  signal(SIGPIPE, SIG_IGN);
  while ((L.next < L.n_order && !L.stop) || L.running > 0) {
    launch_into_free_slots(&L);
    int np = wait_for_children(&L);
    for (int i = 0; i < L.width; i++)
      if (L.slots[i].pid) service_slot(&L, &L.slots[i], np);
  }
  /* --fail-fast: what was never launched is reported as Skip. */
  for (; L.next < L.n_order; L.next++) {
    struct cts_job *job = &jobs[L.order[L.next]];
    job->status = CTS_SKIP;
    job->message = cts_xstrdup("fail-fast: an earlier result was not ok");
    publish(&L, job);
  }
  memset(&run_loop, 0, sizeof run_loop);
  free(L.slots);
  free(L.pfd);
  free(L.order);
}
