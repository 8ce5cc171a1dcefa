/*
 * harness/src/tools/combo_run.c: running the combinations (combo.h). The nodes to run (each
 * combination, and each node whose focus's states are probed) go in chunks, one job of
 * the process runner (runner.c) each: a forked case process per chunk, killed at its
 * time limit, -j of them at once. In the case process each combination runs with the
 * model deciding (cts_exec_model_decides, exec.h: a refusal of the model must be the
 * adapter's refusal with the same code, ERR.CODE.1; then every observable against the
 * model) and reports one line: node, status, states, the first line of its message. A
 * chunk that crashed, hung or reported less than its nodes runs again one node per
 * process, which names the node that crashed. --save completes each diverging
 * combination against the model (complete.c) in the same way and writes it as a case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case.h"
#include "combo.h"
#include "exec.h"
#include "runner.h"

/* A combination takes well under a millisecond on the reference, under Valgrind some
 * tens; a chunk's limit leaves room for both, and for a loaded machine. */
#define ONE_TIMEOUT_MS 20000
#define CHUNK_TIMEOUT_MS(per) (ONE_TIMEOUT_MS + 250 * (int)(per))
#define MESSAGE_MAX 400

/* What a pass of jobs runs, shared with its case processes (they inherit it): the
 * nodes of each job, items[first[j]] to items[first[j + 1]] (owned), the jobs, and
 * whether the jobs save cases instead of judging them. */
static struct {
  struct combo_set *set;
  const struct combo_opts *o;
  struct cts_job *jobs;
  size_t *items, *first;
  int saving;
  size_t done, total, shown;
} pass;

/* The origin line of a combination's case. */
static void origin(char *buf, size_t n) {
  snprintf(buf, n, "tsm-cts combos --depth %d", pass.set->depth);
}

/* Node i's verdict with the model deciding; msg gets what the run said. */
static int verdict(size_t i, const struct tsm_adapter *a, struct cts_buf *msg) {
  struct cts_gen_case gc = {0};
  combo_case(pass.set, i, &gc);
  char how[64];
  origin(how, sizeof how);
  char *text = cts_gen_render_as(&gc, how, i, NULL);
  cts_gen_case_free(&gc);
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse("combination.tsm", text, NULL, &err);
  free(text);
  if (!c) {
    cts_buf_printf(msg, "the combination does not parse (a generator bug): %d:%d: %s",
                   err.line, err.col, err.msg);
    return CTS_ERROR;
  }
  cts_exec_model_decides = 1;
  int status = cts_exec_case(c, a, pass.o->device, msg, 0);
  cts_exec_model_decides = 0;
  cts_case_free(c);
  return status;
}

/* Appends s's first line, at most MESSAGE_MAX bytes, to b. */
static void first_line(struct cts_buf *b, const char *s) {
  size_t n = s ? strcspn(s, "\n") : 0;
  cts_buf_append(b, s ? s : "", n < MESSAGE_MAX ? n : MESSAGE_MAX);
}

/* In the case process: node i judged and probed, as one result line. */
static void judge_one(size_t i, const struct tsm_adapter *a, struct cts_buf *out) {
  const struct combo_node *node = &pass.set->nodes[i];
  struct cts_buf msg = {0};
  int status = node->run ? verdict(i, a, &msg) : CTS_PASS;
  unsigned states = node->focus ? combo_probe_states(pass.set, i, a, pass.o->device) : 0;
  cts_buf_printf(out, "%zu %d %u ", i, status, states);
  if (status != CTS_PASS) first_line(out, msg.buf);
  cts_buf_printf(out, "\n");
  cts_buf_free(&msg);
}

/* In the case process: diverging node i completed against the model and written. */
static void save_one(size_t i, const struct tsm_adapter *a, struct cts_buf *out) {
  struct cts_gen_case gc = {.device = pass.o->device_name};
  combo_case(pass.set, i, &gc);
  cts_complete(&gc, &(struct cts_completion){0, i, a, pass.o->spec, pass.o->device});
  char how[64], path[4200];
  origin(how, sizeof how);
  char *text = cts_gen_render_as(&gc, how, i, pass.o->spec);
  snprintf(path, sizeof path, "%s/combo-%d-%06zu.tsm", pass.o->save_dir, pass.set->depth, i);
  FILE *f = fopen(path, "w");
  int ok = f && fputs(text, f) >= 0;
  if (f && fclose(f)) ok = 0;
  cts_buf_printf(out, "%zu %d 0 %s\n", i, ok ? CTS_PASS : CTS_ERROR, ok ? "" : path);
  free(text);
  cts_gen_case_free(&gc);
}

/* The runner's run_job: every node of the job's chunk. */
static int run_chunk(const struct cts_job *job, const struct tsm_adapter *a, struct cts_buf *msg) {
  size_t j = (size_t)(job - pass.jobs);
  if (!freopen("/dev/null", "w", stdout)) return CTS_ERROR; /* dumps are for humans */
  for (size_t k = pass.first[j]; k < pass.first[j + 1]; k++)
    (pass.saving ? save_one : judge_one)(pass.items[k], a, msg);
  return CTS_PASS;
}

/* The runner's on_result: progress on stderr, every tenth of the pass or live. */
static void progress(const struct cts_job *job) {
  size_t j = (size_t)(job - pass.jobs);
  pass.done += pass.first[j + 1] - pass.first[j];
  int live = isatty(2);
  if (!live && pass.done * 10 < (pass.shown + 1) * pass.total && pass.done < pass.total) return;
  pass.shown = pass.done * 10 / (pass.total ? pass.total : 1);
  fprintf(stderr, "%stsm-cts combos: %s %zu of %zu%s", live ? "\r\033[K" : "",
          pass.saving ? "saved" : "ran", pass.done, pass.total, live ? "" : "\n");
}

/* A job's result lines into their nodes (a saving pass counts the cases written). */
static size_t take_results(const char *text) {
  size_t saved = 0;
  for (const char *p = text; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p), i;
    int status, used = 0;
    unsigned states;
    if (sscanf(p, "%zu %d %u %n", &i, &status, &states, &used) == 3 && i < pass.set->n) {
      struct combo_node *node = &pass.set->nodes[i];
      size_t at = (size_t)used < len ? (size_t)used : len;
      saved += status == CTS_PASS;
      if (!pass.saving) {
        node->status = status;
        node->states = states;
        free(node->message);
        node->message = at < len ? cts_xstrndup(p + at, len - at) : NULL;
      } else if (status != CTS_PASS) {
        fprintf(stderr, "tsm-cts combos: cannot write %.*s\n", (int)(len - at), p + at);
      }
    }
    p = nl ? nl + 1 : NULL;
  }
  return saved;
}

/* A node of a one-node job that reported nothing: the job's own verdict. */
static void take_job_verdict(struct combo_node *node, const struct cts_job *job) {
  node->status = job->status;
  struct cts_buf b = {0};
  first_line(&b, job->message);
  free(node->message);
  node->message = cts_buf_take(&b);
}

/* Node indexes: those a pass runs, or those it leaves to run again. Owns items. */
struct node_list {
  size_t *items;
  size_t n, cap;
};

/* The pass's jobs over nodes, `per` nodes a job, each with the time limit timeout_ms;
 * the nodes judged are marked not run yet. RETURN how many jobs. */
static size_t plan_pass(const struct node_list *nodes, size_t per, int timeout_ms) {
  size_t n = nodes->n, n_jobs = (n + per - 1) / per;
  pass.items = nodes->items;
  pass.first = cts_xmalloc((n_jobs + 1) * sizeof(size_t));
  pass.jobs = cts_xcalloc(n_jobs ? n_jobs : 1, sizeof(struct cts_job));
  for (size_t j = 0; j <= n_jobs; j++) pass.first[j] = j < n_jobs ? j * per : n;
  for (size_t j = 0; j < n_jobs; j++) {
    pass.jobs[j].status = -1;
    pass.jobs[j].timeout_ms = timeout_ms;
    pass.jobs[j].device = pass.o->device;
  }
  for (size_t k = 0; k < n && !pass.saving; k++) pass.set->nodes[nodes->items[k]].status = -1;
  return n_jobs;
}

/* Job j's results into its nodes; a node it did not report goes to again (NULL: takes
 * the job's verdict). RETURN the cases the job saved. */
static size_t take_job(size_t j, struct node_list *again) {
  struct cts_job *job = &pass.jobs[j];
  size_t saved = job->status == CTS_PASS ? take_results(job->message) : 0;
  for (size_t k = pass.first[j]; k < pass.first[j + 1] && !pass.saving; k++) {
    struct combo_node *node = &pass.set->nodes[pass.items[k]];
    if (node->status >= 0) continue;
    if (again) CTS_PUSH(again->items, again->n, again->cap, pass.items[k]);
    else take_job_verdict(node, job);
  }
  free(job->message);
  free(job->output);
  return saved;
}

/* One pass over nodes, `per` nodes a job. Nodes of a job that did not report them go
 * to again (NULL: take the job's verdict). RETURN the cases saved. */
static size_t run_pass(const struct node_list *nodes, size_t per, int timeout_ms,
                       struct node_list *again) {
  size_t n_jobs = plan_pass(nodes, per, timeout_ms), saved = 0;
  struct cts_run_opts ro = {.adapter = pass.o->adapter, .jobs = pass.o->jobs,
                            .timeout_ms = timeout_ms, .run_job = run_chunk, .on_result = progress};
  cts_run_jobs(pass.jobs, n_jobs, &ro);
  for (size_t j = 0; j < n_jobs; j++) saved += take_job(j, again);
  free(pass.jobs);
  free(pass.first);
  return saved;
}

static void begin_pass(size_t total, int saving) {
  pass.total = total;
  pass.done = pass.shown = 0;
  pass.saving = saving;
}

void combo_run_all(struct combo_set *set, const struct combo_opts *o) {
  pass.set = set;
  pass.o = o;
  struct node_list nodes = {0}, again = {0};
  for (size_t i = 0; i < set->n; i++)
    if (set->nodes[i].run || set->nodes[i].focus) CTS_PUSH(nodes.items, nodes.n, nodes.cap, i);
  begin_pass(nodes.n, 0);
  run_pass(&nodes, (size_t)o->chunk, CHUNK_TIMEOUT_MS(o->chunk), &again);
  if (again.n) {
    fprintf(stderr, "tsm-cts combos: %zu nodes of chunks that crashed, hung or did not "
            "report run again, one a process\n", again.n);
    begin_pass(again.n, 0);
    run_pass(&again, 1, ONE_TIMEOUT_MS, NULL);
  }
  free(again.items);
  free(nodes.items);
}

size_t combo_save(struct combo_set *set, const struct combo_opts *o) {
  pass.set = set;
  pass.o = o;
  struct node_list nodes = {0};
  for (size_t i = 0; i < set->n; i++)
    if (set->nodes[i].run && !cts_status_ok(set->nodes[i].status))
      CTS_PUSH(nodes.items, nodes.n, nodes.cap, i);
  begin_pass(nodes.n, 1);
  size_t saved = run_pass(&nodes, (size_t)o->chunk, CHUNK_TIMEOUT_MS(o->chunk), NULL);
  free(nodes.items);
  return saved;
}
