/*
 * harness/src/tools/reduce.c: the `tsm-cts reduce` command. It parses FILE, probes the adapter,
 * picks the device (--device, else the first available one the case's `devices:`
 * names), runs the case once and, when it fails (Fail, Crash, Timeout or Error), shrinks
 * it while it keeps failing the same way (reduce_search.c), trims its frontmatter to
 * what the reduced body needs (reduce_front.c) and writes it. Exit status: 0 when a
 * reduced case was written, 1 when FILE does not fail, 2 on a usage or parse error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"
#include "reduce.h"
#include "reduce_internal.h"
#include "runner.h"
#include "spec_index.h"
#include "util.h"

#define REDUCE_DEFAULT_TIMEOUT_MS 10000

/* The command line; the strings point into argv. */
struct reduce_options {
  const char *file, *adapter, *device, *out, *spec;
  int timeout_ms;
};

static const struct option reduce_long_options[] = {
    {"adapter", required_argument, NULL, 'a'}, {"device", required_argument, NULL, 'd'},
    {"output", required_argument, NULL, 'o'},  {"timeout", required_argument, NULL, 't'},
    {"spec", required_argument, NULL, 's'},    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void reduce_usage(FILE *f) {
  fputs("usage: tsm-cts reduce FILE --adapter SO [--device NAME] [-o OUT] [--timeout S]\n"
        "                      [--spec DIR]\n"
        "Shrinks FILE, a case that fails on the adapter (Fail, Crash, Timeout or Error), by\n"
        "delta debugging over its statements while it keeps failing the same way (the same\n"
        "status, the same kind of failing statement, the same message up to names and\n"
        "numbers), and writes the smallest case to OUT (default: FILE with .reduced.tsm).\n"
        "Each candidate runs as `tsm-cts run` runs a case, in a forked child, under the\n"
        "case's timeout or S seconds (10). Progress goes to stderr, the path written to\n"
        "stdout. Exit status: 0 when a reduced case was written, 1 when FILE does not fail,\n"
        "2 on a usage or parse error.\n",
        f);
}

static int parse_seconds(const char *value, int *ms) {
  char *end = NULL;
  double s = strtod(value, &end);
  if (end == value || *end || !(s > 0 && s <= 86400)) {
    fprintf(stderr, "tsm-cts reduce: bad value '%s' for --timeout (seconds)\n", value);
    return -1;
  }
  *ms = s * 1000 < 1 ? 1 : (int)(s * 1000);
  return 0;
}

static int set_reduce_option(struct reduce_options *o, int code, const char *value) {
  switch (code) {
    case 'a': o->adapter = value; return 0;
    case 'd': o->device = value; return 0;
    case 'o': o->out = value; return 0;
    case 's': o->spec = value; return 0;
    case 't': return parse_seconds(value, &o->timeout_ms);
    default:
      fprintf(stderr, "tsm-cts reduce: unknown option or missing value: '%s'\n", value);
      return -1;
  }
}

/* RETURN 0, 1 after --help, or -1 on a usage error (said). */
static int parse_reduce_options(int argc, char **argv, struct reduce_options *o) {
  *o = (struct reduce_options){.timeout_ms = REDUCE_DEFAULT_TIMEOUT_MS};
  int code;
  optind = 1;
  opterr = 0;
  while ((code = getopt_long(argc, argv, "a:d:o:t:s:h", reduce_long_options, NULL)) != -1) {
    if (code == 'h') {
      reduce_usage(stdout);
      return 1;
    }
    if (set_reduce_option(o, code, code == '?' || code == ':' ? argv[optind - 1] : optarg))
      return -1;
  }
  if (optind != argc - 1 || !o->adapter) {
    reduce_usage(stderr);
    return -1;
  }
  o->file = argv[optind];
  return 0;
}

/* ---- the device ------------------------------------------------------------------ */

static int names_device(const struct cts_case *c, const char *device) {
  for (size_t i = 0; i < c->n_devices; i++)
    if (!strcmp(c->devices[i], "any") || !strncmp(device, c->devices[i], strlen(c->devices[i])))
      return 1;
  return c->n_devices == 0;
}

/* Why c does not run on device d (NotSupported, as `tsm-cts run` would say), or NULL. */
static const char *not_run(const struct cts_adapter_facts *f, const struct cts_case *c, int d) {
  if (d < 0) return "no available device of the adapter matches the case's devices";
  if (!f->available[d]) return f->reason[d];
  for (size_t i = 0; i < c->n_requires; i++)
    if (!(f->caps & cts_family_cap(c->requires[i])))
      return "the adapter does not offer a family the case requires";
  if (c->ops_used & ~f->ops) return "the adapter does not offer an op the case uses";
  if (c->dtypes_used & ~f->dtypes) return "the adapter holds no tensors of a dtype the case uses";
  if (c->uses_dump && !f->has_dump) return "the adapter offers no mgr_dump";
  return NULL;
}

/* Probes the adapter and picks the device. RETURN 0, 1 when the case does not run on it,
 * or 2 (said). f holds the device's name for R. */
static int open_device(struct reducer *R, const struct reduce_options *o, const struct cts_case *c,
                       struct cts_adapter_facts *f) {
  cts_probe_adapter(o->adapter, R->timeout_ms, f);
  if (!f->loaded) {
    fprintf(stderr, "tsm-cts reduce: adapter %s: %s\n", o->adapter, f->why);
    return 2;
  }
  R->device = -1;
  for (int d = 0; d < f->n_devices && R->device < 0; d++)
    if (o->device ? !strcmp(o->device, f->device[d]) : f->available[d] && names_device(c, f->device[d]))
      R->device = d;
  if (o->device && R->device < 0) {
    fprintf(stderr, "tsm-cts reduce: adapter %s has no device '%s'\n", o->adapter, o->device);
    return 2;
  }
  const char *why = not_run(f, c, R->device);
  if (why) {
    fprintf(stderr, "tsm-cts reduce: %s does not fail: it does not run on %s (NotSupported: %s)\n",
            R->path, o->adapter, why);
    return 1;
  }
  R->device_name = f->device[R->device];
  return 0;
}

/* ---- reducing ----------------------------------------------------------------------- */

static int fails(int status) {
  return status == CTS_FAIL || status == CTS_CRASH || status == CTS_TIMEOUT || status == CTS_ERROR;
}

/* Runs FILE as written: what every candidate must repeat. RETURN 0 when it fails, 1
 * when it does not, 2 when the run was interrupted (said). */
static int run_original(struct reducer *R, const char *text) {
  int ran = red_run(R, text, &R->target) == 0;
  if (R->stop) {
    fprintf(stderr, "tsm-cts reduce: interrupted\n");
    return 2;
  }
  if (!ran || !fails(R->target.status)) {
    fprintf(stderr, "tsm-cts reduce: %s does not fail on %s (%s): %s\n", R->path, R->adapter,
            R->device_name, R->target.raw ? cts_status_name(R->target.status) : "no run");
    return 1;
  }
  fprintf(stderr, "tsm-cts reduce: %s fails on %s (%s): %s: %s\n", R->path, R->adapter,
          R->device_name, cts_status_name(R->target.status), R->target.raw);
  return 0;
}

/* The reduced case's text: its frontmatter trimmed when the trimmed case still fails the
 * same way (it always should: requires: and clauses: change no run), else as written. */
static char *final_text(struct reducer *R, const struct cts_case *orig) {
  char *body = red_render(&R->text, &R->cfg);
  struct cts_parse_error pe;
  struct cts_case *reduced = cts_case_parse(R->path, body, R->spec, &pe);
  if (!reduced) return body; /* not reached: every candidate kept has parsed */
  struct red_front_edit how = {R->original - red_count(&R->text, &R->cfg), R->original, 1};
  char *text = red_front(body, orig, reduced, &how);
  if (!red_interesting(R, text)) {
    free(text);
    how.trim = 0;
    text = red_front(body, orig, reduced, &how);
  }
  cts_case_free(reduced);
  free(body);
  return text;
}

static char *output_path(const struct reduce_options *o) {
  if (o->out) return cts_xstrdup(o->out);
  size_t n = strlen(o->file);
  if (n > 4 && !strcmp(o->file + n - 4, ".tsm")) n -= 4;
  return cts_printf_dup("%.*s.reduced.tsm", (int)n, o->file);
}

static int write_reduced(struct reducer *R, const struct reduce_options *o,
                         const struct cts_case *orig) {
  char *text = final_text(R, orig), *out = output_path(o);
  FILE *f = fopen(out, "w");
  int bad = !f || fputs(text, f) < 0;
  if (f && fclose(f) != 0) bad = 1;
  if (bad)
    fprintf(stderr, "tsm-cts reduce: cannot write %s: %s\n", out, strerror(errno));
  else
    fprintf(stderr, "%stsm-cts reduce: %s%s: %zu of %zu statements left, %zu candidates run, "
            "%zu did not parse, %.1f s\n", R->live ? "\r\033[K" : "",
            R->stop ? "interrupted; wrote the smallest case so far, " : "wrote ", out, R->best,
            R->original, R->runs, R->unparsed, (cts_now_ms() - R->started) / 1000);
  if (!bad) printf("%s\n", out);
  free(out);
  free(text);
  return bad ? 2 : 0;
}

static int reduce_parsed(const struct reduce_options *o, const struct cts_spec *spec,
                         const struct cts_case *c, const char *text) {
  struct reducer R = {.path = o->file, .adapter = o->adapter, .spec = spec, .names = c->syms,
                      .n_names = c->n_syms, .timeout_ms = o->timeout_ms,
                      .started = cts_now_ms(), .live = isatty(2)};
  struct cts_adapter_facts facts;
  int rc = open_device(&R, o, c, &facts);
  if (rc == 0) rc = run_original(&R, text);
  if (rc == 0) {
    red_text_load(&R.text, text, c);
    red_config_init(&R.cfg, R.text.n_units);
    R.original = R.best = R.text.n_units;
    red_search(&R);
    rc = write_reduced(&R, o, c);
  }
  red_text_free(&R.text);
  red_config_free(&R.cfg);
  red_outcome_free(&R.target);
  free(R.seen);
  free(R.seen_same);
  return rc;
}

static int reduce_file(const struct reduce_options *o, const struct cts_spec *spec) {
  size_t len = 0;
  char *text = cts_read_file(o->file, &len);
  if (!text) {
    fprintf(stderr, "%s:1:1: error: cannot read: %s\n", o->file, strerror(errno));
    return 2;
  }
  struct cts_parse_error pe;
  struct cts_case *c =
      cts_case_text_check(text, len, &pe) ? NULL : cts_case_parse(o->file, text, spec, &pe);
  int rc = 2;
  if (!c)
    fprintf(stderr, "%s:%d:%d: error: %s\n", o->file, pe.line, pe.col, pe.msg);
  else if (c->capsule_level)
    fprintf(stderr, "%s:1:1: error: tsm-cts reduce takes .tsm cases (a .pytsm case runs in "
            "the Python bridge)\n", o->file);
  else
    rc = reduce_parsed(o, spec, c, text);
  cts_case_free(c);
  free(text);
  return rc;
}

int cts_reduce_main(int argc, char **argv) {
  struct reduce_options o;
  int rc = parse_reduce_options(argc, argv, &o);
  if (rc) return rc > 0 ? 0 : 2;
  struct cts_spec spec = {0};
  const char *dir = cts_spec_dir(o.spec);
  if (cts_spec_load(&spec, dir) != 0 || spec.n == 0) {
    fprintf(stderr, "tsm-cts reduce: no spec clauses found in '%s' (use --spec)\n", dir);
    cts_spec_free(&spec);
    return 2;
  }
  rc = reduce_file(&o, &spec);
  cts_spec_free(&spec);
  return rc;
}
