/*
 * harness/src/tools/explain.c: `tsm-cts explain FILE --adapter SO [--device NAME]`, the model's
 * view after every statement, so that a case author sees what the judge expects (as
 * sqllogictest's completion mode shows a script's results). The case runs through the
 * executor with the model deciding every outcome the case leaves open (exec.h,
 * cts_exec_model_decides), in this process: after each statement, its outcome (agreed,
 * refused by the model with a code, or not runnable) and every bound symbol whose view
 * changed, described by the core (managers, tensors, composites) or by its family's
 * explain hook (families.c), then the device's live bytes when they changed. The run
 * ends where the adapter first diverges from the model, with the judge's message.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"

#include "adapter_load.h"
#include "exec_internal.h"
#include "families.h"
#include "opsem.h"
#include "spec_index.h"

/* What the printer keeps between statements; owns views. */
static struct {
  char **views; /* per symbol: its last printed view, or NULL */
  size_t n_views;
  uint64_t live_bytes;
  int decided_line, decided_code; /* the model's refusal of the last statement */
} shown;

static void on_report(int line, int status, int model_rc) {
  if (status != CTS_PASS || !model_rc) return;
  shown.decided_line = line;
  shown.decided_code = model_rc;
}

static void explain_mgr(struct cts_run *r, int g, struct cts_buf *out) {
  static const char *const states[] = {"open", "closing", "closed"};
  const struct cts_mmgr *m = &r->m.mgrs[g];
  char parent[200];
  cts_buf_printf(out, "manager, %s%s, parent %s, holds %zu, %zu open children",
                 states[m->state], m->capped ? ", capped" : "",
                 cts__describe_mgr(r, m->parent, parent, sizeof parent), m->held.n,
                 m->children.n);
}

static void explain_res(struct cts_run *r, int id, struct cts_buf *out) {
  const struct cts_mres *res = &r->m.res[id];
  char who[200];
  cts_buf_printf(out, "%s, %s", res->kind == TSM_KIND_COMPOSITE ? "composite" : "tensor",
                 res->valid ? "live" : "released");
  if (!res->valid) return;
  if (res->composite != CTS_NONE)
    cts_buf_printf(out, ", a component of %s", cts__res_name(r, res->composite, who, sizeof who));
  else if (res->holder == CTS_NONE)
    cts_buf_printf(out, ", detached");
  else
    cts_buf_printf(out, ", held by %s", cts__describe_mgr(r, res->holder, who, sizeof who));
  for (size_t k = res->n_borrows; k-- > 0;)
    cts_buf_printf(out, ", borrowed from %s",
                   cts__describe_mgr(r, res->borrows[k].lender, who, sizeof who));
  if (res->kind == TSM_KIND_TENSOR)
    cts__explain_values(out, res->dtype, res->ndim, res->shape, cts_model_values(&r->m, id));
  else
    cts_buf_printf(out, ", %zu components", res->components.n);
}

/* The view of symbol sym, or NULL when it is not bound here. */
static char *view_of(struct cts_run *r, int sym) {
  int id = r->sym_obj[sym], kind = r->c->syms[sym].kind;
  if (id < 0) return NULL;
  struct cts_buf b = {0};
  if (kind == CTS_SYM_MANAGER) {
    explain_mgr(r, id, &b);
  } else if (kind & CTS_SYM_RESOURCE) {
    explain_res(r, id, &b);
  } else {
    int told = 0;
    for (int f = 0; f < CTS_N_FAMILIES && !told; f++)
      if (cts_families[f]->explain) told = cts_families[f]->explain(r, kind, id, &b);
    if (!told) cts_buf_printf(&b, "(no view)");
  }
  return cts_buf_take(&b);
}

static void on_step(struct cts_run *r, const struct cts_stmt *st, int outcome) {
  printf("%d: %s\n", st->line, st->text);
  if (outcome == 1)
    printf("    cannot run (the model decides: skipped)\n");
  else if (outcome == 0 && st->kind == CTS_EXPECT_ERROR)
    printf("    the model refuses it with %s, as the case says\n", cts_err_name(st->u.error.code));
  else if (outcome == 0 && shown.decided_line == st->line && shown.decided_code)
    printf("    the model refuses it with %s: the case must say `expect error %s: ...`\n",
           cts_err_name(shown.decided_code), cts_err_name(shown.decided_code));
  shown.decided_line = shown.decided_code = 0;
  if (outcome < 0) return;
  if (shown.n_views < r->c->n_syms) {
    shown.views = realloc(shown.views, r->c->n_syms * sizeof *shown.views);
    if (!shown.views) abort();
    memset(shown.views + shown.n_views, 0, (r->c->n_syms - shown.n_views) * sizeof *shown.views);
    shown.n_views = r->c->n_syms;
  }
  for (size_t s = 0; s < r->c->n_syms; s++) {
    char *v = view_of(r, (int)s);
    if (v && (!shown.views[s] || strcmp(v, shown.views[s]))) {
      printf("    %s: %s\n", r->c->syms[s].name, v);
      free(shown.views[s]);
      shown.views[s] = v;
    } else {
      free(v);
    }
  }
  if (r->m.live_bytes != shown.live_bytes)
    printf("    live bytes: %llu\n", (unsigned long long)r->m.live_bytes);
  shown.live_bytes = r->m.live_bytes;
}

static void usage(FILE *f) {
  fprintf(f, "usage: tsm-cts explain FILE --adapter SO [--device NAME] [--spec DIR]\n"
             "  the model's view after every statement of a .tsm case, run on the adapter in\n"
             "  this process (tsm-cts run forks; a crashing adapter ends explain too)\n");
}

static int device_index(const struct tsm_adapter *a, const char *name) {
  const struct tsm_device *devs = NULL;
  int n = a->device_list(&devs);
  for (int d = 0; d < n; d++)
    if (devs[d].name && (name ? !strcmp(name, devs[d].name) : devs[d].available)) return d;
  return -1;
}

/* What the command line names. */
struct explain_options {
  const char *adapter, *device, *spec_dir, *path;
};

/* RETURN 0, 1 after printing the help, or -1 after printing the usage to stderr. */
static int parse_explain_options(int argc, char **argv, struct explain_options *o) {
  static const struct option longs[] = {{"adapter", required_argument, NULL, 'a'},
                                        {"device", required_argument, NULL, 'd'},
                                        {"spec", required_argument, NULL, 's'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  int opt;
  while ((opt = getopt_long(argc, argv, "a:d:s:h", longs, NULL)) != -1) {
    if (opt == 'a') o->adapter = optarg;
    else if (opt == 'd') o->device = optarg;
    else if (opt == 's') o->spec_dir = optarg;
    else {
      usage(opt == 'h' ? stdout : stderr);
      return opt == 'h' ? 1 : -1;
    }
  }
  if (!o->adapter || optind != argc - 1) {
    usage(stderr);
    return -1;
  }
  o->path = argv[optind];
  return 0;
}

/* The case, its adapter and device: RETURN the case, or NULL after saying why. */
static struct cts_case *open_case(const struct explain_options *o,
                                  const struct tsm_adapter **a, int *device) {
  struct cts_spec spec = {0};
  cts_spec_load(&spec, cts_spec_dir(o->spec_dir));
  struct cts_parse_error pe;
  struct cts_case *c = cts_case_load(o->path, spec.n ? &spec : NULL, &pe);
  cts_spec_free(&spec);
  if (!c) {
    fprintf(stderr, "%s:%d:%d: error: %s\n", o->path, pe.line, pe.col, pe.msg);
    return NULL;
  }
  char why[512];
  *a = c->capsule_level ? NULL : cts_adapter_load(o->adapter, why, sizeof why);
  *device = *a ? device_index(*a, o->device) : -1;
  if (*device >= 0) return c;
  if (c->capsule_level)
    fprintf(stderr, "tsm-cts explain: %s is a .pytsm case (the Python bridge runs it)\n",
            o->path);
  else if (!*a)
    fprintf(stderr, "tsm-cts explain: %s\n", why);
  else
    fprintf(stderr, "tsm-cts explain: adapter %s has no %s device '%s'\n", o->adapter,
            o->device ? "" : "available", o->device ? o->device : "");
  cts_case_free(c);
  return NULL;
}

int cts_explain_main(int argc, char **argv) {
  struct explain_options o;
  int rc = parse_explain_options(argc, argv, &o);
  if (rc) return rc > 0 ? 0 : 2;
  const struct tsm_adapter *a = NULL;
  int d = -1;
  struct cts_case *c = open_case(&o, &a, &d);
  if (!c) return 2;
  cts__on_step = on_step;
  cts_exec_on_report = on_report;
  cts_exec_model_decides = 1;
  struct cts_buf msg = {0};
  int status = cts_exec_case(c, a, d, &msg, 0);
  printf("%s%s%s\n", cts_status_name(status), msg.len ? ": " : "", msg.len ? msg.buf : "");
  for (size_t s = 0; s < shown.n_views; s++) free(shown.views[s]);
  free(shown.views);
  cts_buf_free(&msg);
  cts_case_free(c);
  return status == CTS_PASS ? 0 : 1;
}
