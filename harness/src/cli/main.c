/*
 * harness/src/cli/main.c: the tsm-cts command line: run, lint, parse, coverage, list, merge.
 * Exit status: 0 when every result is Pass, Warning, NotSupported, Skip or XFail (or the
 * check found nothing wrong); 1 when a result or check fails; 2 on a usage or
 * harness error. Never 77 or 99, which build systems read as skip and hard error.
 */
#include <ctype.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case.h"
#include "combo.h"
#include "exec.h"
#include "merge.h"
#include "explain.h"
#include "reduce.h"
#include "expectations.h"
#include "report.h"
#include "opsem.h"
#include "runner.h"
#include "gen.h"
#include "kinds.h"
#include "grade.h"
#include "spec_index.h"
#include "summary.h"
#include "tsm/adapter.h"
#include "util.h"

#define DEFAULT_TIMEOUT_MS 10000

static void usage_options(FILE *f);

static void usage(FILE *f) {
  fputs(
      "usage: tsm-cts run --adapter SO [options] [SELECTOR...]\n"
      "       tsm-cts lint [--spec DIR] [PATH...]\n"
      "       tsm-cts parse --json [--spec DIR] FILE...  (a JSON line per .tsm or .pytsm)\n"
      "       tsm-cts coverage [--spec DIR] [--cases DIR] [--extra DIR,DIR...]\n"
      "       tsm-cts list [--spec DIR] [--cases DIR] [SELECTOR...]\n"
      "       tsm-cts merge [--json FILE] [--junit FILE] [--spec DIR] REPORT.json...\n"
      "       tsm-cts baseline RESULTS.json [--expectations FILE]  (known failures of a\n"
      "                run, each with a placeholder reason to fill in)\n"
      "       tsm-cts gen --seed S --count N [--min N --max N] [--families LIST] OUTDIR\n"
      "       tsm-cts reduce FILE --adapter SO [--device NAME] [-o OUT] [--timeout S]\n"
      "                (shrinks a failing case; tsm-cts reduce --help)\n"
      "       tsm-cts combos [--depth N] [-j N] [--known FILE] [--json FILE] [--save DIR]\n"
      "       tsm-cts explain FILE --adapter SO [--device NAME]  (the model's view after\n"
      "                every statement: what the judge expects)\n"
      "       tsm-cts statements [--markdown | --check FILE | --write FILE]  (the\n"
      "                language reference, from the statement table)\n"
      "       tsm-cts --help | --version\n\n"
      "SELECTOR: a case file or folder, a glob over case ids (managers/temp/*), or a\n"
      "clause id or prefix (MGR.TEMP.4, MGR.TEMP). Default: every case under --cases.\n"
      "\n",
      f);
  usage_options(f);
}

/* The options part of --help from --generated on (usage_options). */
static void usage_run_options(FILE *f) {
  fputs(
      "      --generated N        also run N cases `tsm-cts gen` writes from the run's --seed\n"
      "                           (0 unless given), completed against the model through\n"
      "                           $TSM_CTS_GEN_ADAPTER or build/lib/tsmref_adapter.so, into a\n"
      "                           folder the run names (kept when a result is not ok)\n"
      "      --fail-fast          after the first result that is not ok, start no more runs\n"
      "                           (those not started are reported as Skip)\n"
      "      --fail-alloc N       fail the reference's k-th allocation, k = 1..N, in every\n"
      "                           single-threaded case (ERR.NOMEM.1; adapters with the\n"
      "                           debug_alloc_fail slot)\n"
      "      --memory-limit MIB   cap every case process's address space (RLIMIT_AS);\n"
      "                           an allocation past it fails (Crash or Error)\n"
      "      --batch N            run up to N cases one after another in a case process,\n"
      "                           each in a fresh session, the adapter loaded once; a crash\n"
      "                           or hang ends only that case's process (default 1: one each)\n"
      "      --shard I/N          run only the I-th of N deterministic slices of the runs\n"
      "                           (1 <= I <= N); join the shards' JSON with `merge`\n"
      "      --no-summary         leave out the summary table on stderr\n"
      "      --profile P          what a failed check of a clause means (spec/README.md,\n"
      "                           \"Strengths\"): standard (the default; $TSM_CTS_PROFILE\n"
      "                           sets another) judges what the sources require, a broken\n"
      "                           SHOULD or TSM clause is a Warning; strict (the\n"
      "                           reference's) also fails a broken TSM clause\n"
      "      --strict             a stale expectation line (its case passes now, fails\n"
      "                           another way or is gone) fails the run\n"
      "      --extra DIRS         coverage: more places, comma-separated, whose files cite\n"
      "                           clauses in `clauses: [...]` comments\n"
      "                           (harness/tests/broken,harness/tests/cases,ci/check.sh)\n"
      "  -h, --help               this text\n"
      "  -V, --version            the judge's version (adapter ABI and report format)\n"
      "\n"
      "run prints TAP 13 on stdout and, on stderr, progress (a live line on a terminal,\n"
      "a line per family otherwise) and a summary table at the end. Exit status: 0 when\n"
      "every result is Pass, Warning, NotSupported, Skip or XFail; 1 when one is not; 2 on\n"
      "a usage or harness error.\n",
      f);
}

/* The options part of --help. */
static void usage_options(FILE *f) {
  fputs(
      "options:\n"
      "  -a, --adapter SO         the implementation under test (run: required)\n"
      "  -c, --cases DIR          root of the case library; case ids are relative to it\n"
      "                           (default: $TSM_CTS_CASES, else cases, else the installed\n"
      "                           share/tsm-cts/cases beside the program)\n"
      "  -s, --spec DIR           the spec chapters ($TSM_CTS_SPEC, spec, or the installed\n"
      "                           share/tsm-cts/spec)\n"
      "  -e, --expectations FILE  known failures (default: the adapter's file under\n"
      "                           harness/expectations or share/tsm-cts/expectations)\n"
      "  -o, --json FILE          write the JSON report (harness/schema/results.schema.json)\n"
      "  -x, --junit FILE         write the JUnit XML report (Jenkins junit-10 rules)\n"
      "  -j, --jobs N             run N cases at once (1)\n"
      "  -t, --timeout MS         per-case limit when the case sets none (10000), scaled by\n"
      "                           $TSM_CTS_TIMEOUT_MULTIPLIER\n"
      "  -r, --repeat N           run every case N times\n"
      "      --seed N             shuffle the order of runs with this seed (0: file order)\n"
      "  -d, --device NAME        only this device\n"
      "      --large              also run cases tagged large (the large tier)\n",
      f);
  usage_run_options(f);
}

/* The parsed command line. The strings point into argv (borrowed); it owns the
 * selectors array, not the strings in it. */
struct options {
  const char *adapter, *cases, *spec, *expectations, *json, *junit, *device, *extra;
  int jobs, timeout_ms, repeat, large, fail_fast, fail_alloc, no_summary, strict;
  int memory_limit_mib; /* 0: none */
  int batch;            /* > 1: cases per worker process (--batch); else a process per case */
  int generated;        /* --generated N: N fresh generated cases join the run */
  int profile;          /* enum cts_profile */
  int shard_index, shard_count; /* 1-based; 1/1 when not sharded */
  unsigned long long seed;
  char **selectors;
  size_t n_selectors, cap_selectors;
};

/* Codes of the long options without a short form. */
enum { OPT_SEED = 256, OPT_LARGE, OPT_FAIL_FAST, OPT_FAIL_ALLOC, OPT_SHARD, OPT_EXTRA,
       OPT_NO_SUMMARY, OPT_MEMORY_LIMIT, OPT_STRICT, OPT_PROFILE, OPT_GENERATED,
       OPT_BATCH };

static const struct option long_options[] = {
    {"adapter", required_argument, NULL, 'a'},
    {"cases", required_argument, NULL, 'c'},
    {"spec", required_argument, NULL, 's'},
    {"expectations", required_argument, NULL, 'e'},
    {"json", required_argument, NULL, 'o'},
    {"junit", required_argument, NULL, 'x'},
    {"jobs", required_argument, NULL, 'j'},
    {"timeout", required_argument, NULL, 't'},
    {"repeat", required_argument, NULL, 'r'},
    {"device", required_argument, NULL, 'd'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"seed", required_argument, NULL, OPT_SEED},
    {"large", no_argument, NULL, OPT_LARGE},
    {"fail-fast", no_argument, NULL, OPT_FAIL_FAST},
    {"fail-alloc", required_argument, NULL, OPT_FAIL_ALLOC},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"extra", required_argument, NULL, OPT_EXTRA},
    {"no-summary", no_argument, NULL, OPT_NO_SUMMARY},
    {"memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"generated", required_argument, NULL, OPT_GENERATED},
    {"batch", required_argument, NULL, OPT_BATCH},
    {NULL, 0, NULL, 0},
};

/* A count option's value, 1..1000000. RETURN 0, or -1 with a message. */
static int parse_count(const char *value, const char *name, int *out) {
  char *end = NULL;
  long v = strtol(value, &end, 10);
  if (*end != '\0' || v < 1 || v > 1000000) {
    fprintf(stderr, "tsm-cts: bad value '%s' for --%s\n", value, name);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int parse_shard(const char *value, struct options *o) {
  int i = 0, n = 0, used = 0;
  if (sscanf(value, "%d/%d%n", &i, &n, &used) != 2 || value[used] || n < 1 || i < 1 || i > n) {
    fprintf(stderr, "tsm-cts: bad value '%s' for --shard (want I/N, 1 <= I <= N)\n", value);
    return -1;
  }
  o->shard_index = i;
  o->shard_count = n;
  return 0;
}

static int parse_profile(const char *value, int *out) {
  *out = cts_profile_from_name(value);
  if (*out >= 0) return 0;
  fprintf(stderr, "tsm-cts: bad value '%s' for --profile (strict or standard)\n", value);
  return -1;
}

static int parse_seed(const char *value, unsigned long long *seed) {
  char *end = NULL;
  *seed = strtoull(value, &end, 10);
  if (*end == '\0' && *value) return 0;
  fprintf(stderr, "tsm-cts: bad value '%s' for --seed\n", value);
  return -1;
}

/* What an option code sets: the field of struct options at `offset` (a borrowed string,
 * a count or a flag), or, for an option with its own parser, what that parser sets. */
struct option_field {
  int code;
  const char *name; /* the long option, for messages */
  size_t offset;
  int (*set)(const struct option_field *f, struct options *o, const char *value);
};

static void *field_of(struct options *o, const struct option_field *f) {
  return (char *)o + f->offset;
}

static int set_string(const struct option_field *f, struct options *o, const char *value) {
  *(const char **)field_of(o, f) = value;
  return 0;
}

static int set_count(const struct option_field *f, struct options *o, const char *value) {
  return parse_count(value, f->name, (int *)field_of(o, f));
}

static int set_flag(const struct option_field *f, struct options *o, const char *value) {
  (void)value;
  *(int *)field_of(o, f) = 1;
  return 0;
}

static int set_seed(const struct option_field *f, struct options *o, const char *value) {
  (void)f;
  return parse_seed(value, &o->seed);
}

static int set_shard(const struct option_field *f, struct options *o, const char *value) {
  (void)f;
  return parse_shard(value, o);
}

static int set_profile(const struct option_field *f, struct options *o, const char *value) {
  (void)f;
  return parse_profile(value, &o->profile);
}

#define OPTION_FIELD(code, name, field, set) {code, name, offsetof(struct options, field), set}

static const struct option_field option_fields[] = {
    OPTION_FIELD('a', "adapter", adapter, set_string),
    OPTION_FIELD('c', "cases", cases, set_string),
    OPTION_FIELD('s', "spec", spec, set_string),
    OPTION_FIELD('e', "expectations", expectations, set_string),
    OPTION_FIELD('o', "json", json, set_string),
    OPTION_FIELD('x', "junit", junit, set_string),
    OPTION_FIELD('d', "device", device, set_string),
    OPTION_FIELD(OPT_EXTRA, "extra", extra, set_string),
    OPTION_FIELD('j', "jobs", jobs, set_count),
    OPTION_FIELD('t', "timeout", timeout_ms, set_count),
    OPTION_FIELD('r', "repeat", repeat, set_count),
    OPTION_FIELD(OPT_FAIL_ALLOC, "fail-alloc", fail_alloc, set_count),
    OPTION_FIELD(OPT_MEMORY_LIMIT, "memory-limit", memory_limit_mib, set_count),
    OPTION_FIELD(OPT_BATCH, "batch", batch, set_count),
    OPTION_FIELD(OPT_GENERATED, "generated", generated, set_count),
    OPTION_FIELD(OPT_SEED, "seed", seed, set_seed),
    OPTION_FIELD(OPT_SHARD, "shard", shard_index, set_shard),
    OPTION_FIELD(OPT_LARGE, "large", large, set_flag),
    OPTION_FIELD(OPT_FAIL_FAST, "fail-fast", fail_fast, set_flag),
    OPTION_FIELD(OPT_NO_SUMMARY, "no-summary", no_summary, set_flag),
    OPTION_FIELD(OPT_STRICT, "strict", strict, set_flag),
    OPTION_FIELD(OPT_PROFILE, "profile", profile, set_profile),
};

/* Stores option `code` with its value. RETURN 0, or -1 with a message. */
static int set_option(struct options *o, int code, const char *value) {
  for (size_t i = 0; i < sizeof option_fields / sizeof option_fields[0]; i++)
    if (option_fields[i].code == code) return option_fields[i].set(&option_fields[i], o, value);
  return -1; /* getopt_long has printed what was wrong */
}

static void print_version(void) {
  printf("tsm-cts (adapter ABI %d.%d, report format %s)\n", TSM_ADAPTER_ABI_MAJOR,
         TSM_ADAPTER_ABI_MINOR, CTS_REPORT_FORMAT_VERSION);
}

/* argv[0] is the command; options and selectors may mix. RETURN 0, 1 when the program
 * is to end with 0 (--help, --version), or -1 on a usage error. */
static int parse_options(int argc, char **argv, struct options *o) {
  memset(o, 0, sizeof *o);
  o->jobs = o->repeat = o->shard_index = o->shard_count = 1;
  o->timeout_ms = DEFAULT_TIMEOUT_MS;
  o->extra = "harness/tests/broken,harness/tests/cases,ci/check.sh";
  const char *profile = getenv("TSM_CTS_PROFILE");
  if (profile && *profile && parse_profile(profile, &o->profile) != 0) return -1;
  optind = 1;
  opterr = 0;
  while (optind < argc) {
    int code = getopt_long(argc, argv, "+a:c:s:e:o:x:j:t:r:d:hV", long_options, NULL);
    if (code == -1) {
      /* '+' stops at each selector; options may follow it. */
      if (optind < argc) CTS_PUSH(o->selectors, o->n_selectors, o->cap_selectors, argv[optind++]);
    } else if (code == 'h' || code == 'V') {
      code == 'h' ? usage(stdout) : print_version();
      return 1;
    } else if (code == '?' || code == ':') {
      fprintf(stderr, "tsm-cts: unknown option or missing value: '%s' (see --help)\n",
              argv[optind - 1]);
      return -1;
    } else if (set_option(o, code, optarg) != 0) {
      return -1;
    }
  }
  o->cases = cts_library_dir(o->cases, "TSM_CTS_CASES", "cases", "cases");
  return 0;
}

/* RETURN the spec folder read into *spec, or NULL (with a message) if it has no clause. */
static const char *load_spec(const struct options *o, struct cts_spec *spec) {
  const char *dir = cts_spec_dir(o->spec);
  if (cts_spec_load(spec, dir) != 0 || spec->n == 0) {
    fprintf(stderr, "tsm-cts: no spec clauses found in '%s' (use --spec)\n", dir);
    cts_spec_free(spec);
    return NULL;
  }
  return dir;
}

/* ---- selecting cases ------------------------------------------------------- */

static int is_clause_selector(const char *s) {
  const char *dot = strchr(s, '.');
  if (!dot || dot == s) return 0;
  for (const char *p = s; *p; p++)
    if (!(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '.')) return 0;
  return 1;
}

static int cites(const struct cts_case *c, const char *sel) {
  size_t n = strlen(sel);
  for (size_t i = 0; i < c->n_clauses; i++)
    if (!strncmp(c->clauses[i], sel, n) && (c->clauses[i][n] == '\0' || c->clauses[i][n] == '.'))
      return 1;
  return 0;
}

/* The stable id: the path relative to the cases root. */
static const char *relative_name(const char *path, const char *root) {
  size_t n = strlen(root);
  while (n > 1 && root[n - 1] == '/') n--;
  if (!strncmp(path, root, n) && path[n] == '/') return path + n + 1;
  if (!strncmp(path, "./", 2)) return path + 2;
  return path;
}

/* The case files chosen. Owns the array and every path in it. */
struct selection {
  char **paths;
  size_t n, cap;
};

static int add_unique(struct selection *sel, const char *path) {
  for (size_t i = 0; i < sel->n; i++)
    if (!strcmp(sel->paths[i], path)) return 0;
  CTS_PUSH(sel->paths, sel->n, sel->cap, cts_xstrdup(path));
  return 1;
}

/* The spec and the selected cases, parsed: what run, lint and list work on. Owns all. */
struct library {
  struct cts_spec spec;
  struct selection sel;
  char **clause_sel;
  size_t n_clause_sel;
  struct cts_case **cases; /* NULL where the file did not parse: its message is errs[i] */
  char **errs;
  size_t n;
};

static void free_selection(struct selection *sel) {
  for (size_t k = 0; k < sel->n; k++) free(sel->paths[k]);
  free(sel->paths);
}

/* A glob selector: the files of the library whose id or path it matches. */
static void select_glob(const struct options *o, struct selection *sel, const char *glob,
                        const struct selection *all) {
  int matched = 0;
  for (size_t k = 0; k < all->n; k++)
    if (!fnmatch(glob, relative_name(all->paths[k], o->cases), 0) ||
        !fnmatch(glob, all->paths[k], 0))
      matched += add_unique(sel, all->paths[k]);
  if (!matched) fprintf(stderr, "tsm-cts: warning: '%s' matches no case\n", glob);
}

/* A path selector: the case file, or every case file under the folder. RETURN 0, or -1
 * with a message when there is no such file or folder. */
static int select_path(struct selection *sel, const char *path) {
  struct selection found = {0};
  if (cts_collect_files(path, ".tsm", &found.paths, &found.n, &found.cap) != 0) {
    fprintf(stderr, "tsm-cts: no such case or folder: %s\n", path);
    return -1;
  }
  for (size_t k = 0; k < found.n; k++) add_unique(sel, found.paths[k]);
  free_selection(&found);
  return 0;
}

/* Paths and globs choose files; clause selectors filter after parsing. */
static int select_files(const struct options *o, struct selection *sel, char ***clause_sel,
                        size_t *n_clause_sel) {
  size_t cap_cs = 0;
  int want_all = o->n_selectors == 0, rc = 0;
  struct selection all = {0};
  int have_all = cts_collect_files(o->cases, ".tsm", &all.paths, &all.n, &all.cap) == 0;
  for (size_t i = 0; rc == 0 && i < o->n_selectors; i++) {
    const char *s = o->selectors[i];
    if (is_clause_selector(s)) {
      CTS_PUSH(*clause_sel, *n_clause_sel, cap_cs, (char *)s);
      want_all = 1;
    } else if (strpbrk(s, "*?[")) {
      select_glob(o, sel, s, &all);
    } else {
      rc = select_path(sel, s);
    }
  }
  if (rc == 0 && want_all && sel->n == 0) {
    for (size_t k = 0; k < all.n; k++) add_unique(sel, all.paths[k]);
    if (!have_all) {
      fprintf(stderr, "tsm-cts: no case library at '%s' (use --cases)\n", o->cases);
      rc = -1;
    }
  }
  free_selection(&all);
  return rc;
}

/* Whether the clause selectors keep c: it cites one of them, or there is none, or c did
 * not parse (its error is reported). */
static int kept_by_clauses(const struct library *lib, const struct cts_case *c) {
  int keep = !c || !lib->n_clause_sel;
  for (size_t k = 0; !keep && k < lib->n_clause_sel; k++) keep = cites(c, lib->clause_sel[k]);
  return keep;
}

/* Parses the selection into lib->cases (NULL entries for parse errors, whose message is
 * in lib->errs[i]); clause selectors drop cases that cite none of them. */
static void load_cases(const struct options *o, struct library *lib) {
  struct selection *sel = &lib->sel;
  size_t n = 0;
  lib->cases = cts_xcalloc(sel->n ? sel->n : 1, sizeof *lib->cases);
  lib->errs = cts_xcalloc(sel->n ? sel->n : 1, sizeof *lib->errs);
  for (size_t i = 0; i < sel->n; i++) {
    struct cts_parse_error pe;
    struct cts_case *c = cts_case_load(sel->paths[i], &lib->spec, &pe);
    if (!kept_by_clauses(lib, c)) {
      cts_case_free(c);
      free(sel->paths[i]);
      continue;
    }
    sel->paths[n] = sel->paths[i]; /* compact: n <= i */
    if (c) {
      free(c->name);
      c->name = cts_xstrdup(relative_name(sel->paths[n], o->cases));
    } else {
      struct cts_buf b = {0};
      cts_buf_printf(&b, "%s:%d:%d: error: %s", sel->paths[n], pe.line, pe.col, pe.msg);
      lib->errs[n] = cts_buf_take(&b);
    }
    lib->cases[n++] = c;
  }
  sel->n = lib->n = n;
}

static int open_library(const struct options *o, struct library *lib) {
  memset(lib, 0, sizeof *lib);
  if (!load_spec(o, &lib->spec)) return -1;
  if (select_files(o, &lib->sel, &lib->clause_sel, &lib->n_clause_sel) != 0) {
    cts_spec_free(&lib->spec);
    return -1;
  }
  load_cases(o, lib);
  return 0;
}

static void close_library(struct library *lib) {
  for (size_t i = 0; i < lib->n; i++) {
    cts_case_free(lib->cases[i]);
    free(lib->errs[i]);
    free(lib->sel.paths[i]);
  }
  free(lib->cases);
  free(lib->errs);
  free(lib->sel.paths);
  free(lib->clause_sel);
  cts_spec_free(&lib->spec);
}

/* ---- run ------------------------------------------------------------------- */

static int device_matches(const struct cts_case *c, const char *device) {
  for (size_t i = 0; i < c->n_devices; i++)
    if (!strcmp(c->devices[i], "any") ||
        !strncmp(device, c->devices[i], strlen(c->devices[i])))
      return 1;
  return c->n_devices == 0;
}

/* A family the case requires that the adapter does not offer: NotSupported; else -1. */
static int unoffered_family(const struct cts_case *c, const struct cts_adapter_facts *f,
                            char **msg) {
  for (size_t i = 0; i < c->n_requires; i++) {
    if (!(f->caps & cts_family_cap(c->requires[i]))) {
      *msg = cts_printf_dup("adapter '%s' does not offer the %s family", f->name, c->requires[i]);
      return CTS_NOTSUPPORTED;
    }
  }
  return -1;
}

/* An op or a dtype the case uses that the adapter does not offer: NotSupported; else -1. */
static int unoffered_op_or_dtype(const struct cts_case *c, const struct cts_adapter_facts *f,
                                 char **msg) {
  uint32_t missing = c->ops_used & ~f->ops;
  for (int op = 0; op < 32; op++) {
    if (missing & (1u << op)) {
      *msg = cts_printf_dup("adapter '%s' does not offer the %s op", f->name, cts_op_name(op));
      return CTS_NOTSUPPORTED;
    }
  }
  uint32_t missing_dtypes = c->dtypes_used & ~f->dtypes;
  for (int dtype = 0; dtype < 32; dtype++) {
    if (missing_dtypes & (1u << dtype)) {
      *msg = cts_printf_dup("adapter '%s' holds no %s tensors (MGR.DTYPE.1)", f->name,
                            cts_opsem_dtype_name(dtype));
      return CTS_NOTSUPPORTED;
    }
  }
  return -1;
}

/* Under --fail-alloc: NotSupported without the adapter's slot, Skip for a case the
 * failures are not injected into; else -1. */
static int fail_alloc_status(const struct cts_case *c, const struct cts_adapter_facts *f,
                             const struct options *o, char **msg) {
  if (o->fail_alloc && !f->has_fail_alloc) {
    *msg = cts_printf_dup("adapter '%s' offers no debug_alloc_fail slot", f->name);
    return CTS_NOTSUPPORTED;
  }
  if (o->fail_alloc && (c->uses_wrapped || (c->families & TSM_CAP_THREADS))) {
    *msg = cts_printf_dup("allocation failures are injected into single-threaded cases without "
                      "wrapped calls");
    return CTS_SKIP;
  }
  return -1;
}

/* Decides what need not run: NotSupported, Skip, Error. Returns -1 to run it. */
static int pre_status(const struct cts_case *c, const struct cts_adapter_facts *f,
                      const struct options *o, int device, char **msg) {
  if (device >= 0 && !f->available[device]) {
    *msg = cts_printf_dup("device %s is not available: %s", f->device[device], f->reason[device]);
    return CTS_NOTSUPPORTED;
  }
  int status = unoffered_family(c, f, msg);
  if (status >= 0) return status;
  if (cts_case_has_tag(c, "large") && !o->large) {
    *msg = cts_printf_dup("tagged large (run with --large)");
    return CTS_SKIP;
  }
  if ((status = unoffered_op_or_dtype(c, f, msg)) >= 0) return status;
  if ((status = fail_alloc_status(c, f, o, msg)) >= 0) return status;
  if (c->uses_dump && !f->has_dump) {
    *msg = cts_printf_dup("adapter '%s' offers no mgr_dump (MGR.COUNT.3 is a SHOULD)", f->name);
    return CTS_NOTSUPPORTED;
  }
  return -1;
}

/* The jobs of a run, in TAP order. Owns each job's strings (not its case). */
struct job_list {
  struct cts_job *jobs;
  size_t n, cap;
};

/* One repetition of a case file, as the plan has it: what each of its jobs shares. c is
 * NULL when the file did not parse. */
struct planned_run {
  const struct cts_adapter_facts *f;
  struct cts_case *c;
  const char *name, *path;
  int repeat, timeout;
};

/* A job of run r on a device of the adapter (-1: none, named "-"), with its status
 * (-1: to be run) and message (owned by the job). */
static void add_job(struct job_list *l, const struct planned_run *r, int device, int status,
                    char *message) {
  struct cts_case *c = r->c;
  struct cts_job j = {.c = c,
                      .name = cts_xstrdup(r->name),
                      .path = cts_xstrdup(r->path),
                      .device = device,
                      .device_name = device >= 0 ? r->f->device[device] : "-",
                      .repeat = r->repeat,
                      .timeout_ms = r->timeout,
                      .status = status,
                      .message = message,
                      .clauses = c ? c->clauses : NULL,
                      .n_clauses = c ? c->n_clauses : 0};
  j.family = j.name;
  j.family_len = strcspn(j.name, "/");
  CTS_PUSH(l->jobs, l->n, l->cap, j);
}

static void free_jobs_strings(struct job_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->jobs[i].name);
    free(l->jobs[i].path);
    free(l->jobs[i].message);
    free(l->jobs[i].output);
    free(l->jobs[i].expected_reason);
    free(l->jobs[i].graded_by);
  }
}

static void free_jobs(struct job_list *l) {
  free_jobs_strings(l);
  free(l->jobs);
}

/* --expectations, else the adapter's own file when there is one. RETURN 0 or -1. */
static int load_expectations(const struct options *o, const struct cts_adapter_facts *f) {
  if (o->expectations) return cts_expectations_load(o->expectations, 0);
  if (!f->loaded) return 0;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s.txt",
           cts_library_dir(NULL, "TSM_CTS_EXPECTATIONS", "harness/expectations", "expectations"),
           f->name);
  return cts_expectations_load(path, 1);
}

/* One repetition of a parsed case: a job per device of the adapter that it runs on
 * (every case on every device: spec/architecture.md), or one NotSupported job. */
static void add_device_jobs(struct job_list *l, const struct options *o,
                            const struct planned_run *r) {
  const struct cts_adapter_facts *f = r->f;
  int any = 0;
  for (int d = 0; d < f->n_devices; d++) {
    if (o->device && strcmp(o->device, f->device[d])) continue;
    if (!device_matches(r->c, f->device[d])) continue;
    any = 1;
    char *msg = NULL;
    int st = pre_status(r->c, f, o, d, &msg);
    add_job(l, r, d, st, msg);
    l->jobs[l->n - 1].absent = !f->available[d];
  }
  if (!any)
    add_job(l, r, -1, CTS_NOTSUPPORTED,
            cts_printf_dup("no device of adapter '%s' matches the case's devices%s%s", f->name,
                       o->device ? " and --device " : "", o->device ? o->device : ""));
}

static void plan_jobs(struct job_list *l, const struct options *o, const struct library *lib,
                      const struct cts_adapter_facts *f) {
  for (size_t i = 0; i < lib->n; i++) {
    struct cts_case *c = lib->cases[i];
    struct planned_run r = {.f = f, .c = c, .timeout = cts_case_limit_ms(c, o->timeout_ms)};
    r.name = c ? c->name : relative_name(lib->sel.paths[i], o->cases);
    r.path = c ? c->path : lib->sel.paths[i];
    for (r.repeat = 0; r.repeat < o->repeat; r.repeat++) {
      if (!c)
        add_job(l, &r, -1, CTS_ERROR, cts_xstrdup(lib->errs[i]));
      else if (!f->loaded)
        add_job(l, &r, -1, CTS_ERROR, cts_printf_dup("adapter %s: %s", o->adapter, f->why));
      else
        add_device_jobs(l, o, &r);
    }
  }
}

static void print_run_header(const struct options *o, const struct cts_adapter_facts *f) {
  if (!f->loaded) return;
  printf("# tsm-cts: adapter %s %s (%s), profile %s, seed %llu, devices:", f->name, f->version,
         o->adapter, cts_profile_name(o->profile), o->seed);
  for (int d = 0; d < f->n_devices; d++)
    printf(" %s%s", f->device[d], f->available[d] ? "" : " (unavailable)");
  printf("\n");
}

/* --shard I/N: keeps the runs whose place in the plan is I-1 modulo N. */
static void keep_shard(struct job_list *l, const struct options *o) {
  if (o->shard_count <= 1) return;
  struct job_list kept = {0};
  for (size_t i = 0; i < l->n; i++) {
    if (i % (size_t)o->shard_count == (size_t)(o->shard_index - 1)) {
      CTS_PUSH(kept.jobs, kept.n, kept.cap, l->jobs[i]);
    } else {
      struct job_list one = {&l->jobs[i], 1, 1};
      free_jobs_strings(&one);
    }
  }
  free(l->jobs);
  *l = kept;
}

/* Runs the planned jobs; RETURN 1 when a result fails the run, else 0. */
static int execute(const struct options *o, struct job_list *l, struct cts_run_info *info) {
  double start = cts_now_ms();
  cts_tap_begin(l->jobs, l->n);
  print_run_header(o, &info->facts);
  struct cts_run_opts ro = {.adapter = o->adapter,
                            .jobs = o->jobs,
                            .timeout_ms = o->timeout_ms,
                            .seed = o->seed,
                            .fail_fast = o->fail_fast,
                            .fail_max = (uint64_t)o->fail_alloc,
                            .memory_limit_mib = (uint64_t)o->memory_limit_mib,
                            .batch = o->batch};
  cts_progress_begin(l->jobs, l->n);
  cts_run_jobs(l->jobs, l->n, &ro);
  cts_progress_end();
  int rc = cts_tap_end(l->jobs, l->n) ? 1 : 0;
  cts_run_info_end(info, start);
  return rc;
}

/* --generated N: writes N fresh cases into a new folder and adds it to a copy of o's
 * selectors (with the case library when o named none, so that the run stays whole).
 * RETURN the folder (malloc'ed), or NULL with a message. */
static char *add_generated(struct options *o) {
  char *dir = cts_printf_dup("%s/tsm-cts-generated.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir) || cts_gen_into(dir, o->seed, o->generated, o->jobs) != 0) {
    fprintf(stderr, "tsm-cts: --generated: the generator failed (the reference adapter it "
            "completes through: $TSM_CTS_GEN_ADAPTER or build/lib/tsmref_adapter.so)\n");
    free(dir);
    return NULL;
  }
  char **sel = NULL;
  size_t n = 0, cap = 0;
  if (!o->n_selectors) CTS_PUSH(sel, n, cap, (char *)o->cases);
  for (size_t i = 0; i < o->n_selectors; i++) CTS_PUSH(sel, n, cap, o->selectors[i]);
  CTS_PUSH(sel, n, cap, dir);
  o->selectors = sel;
  o->n_selectors = n;
  o->cap_selectors = cap;
  fprintf(stderr, "tsm-cts: %d generated cases (seed %llu) in %s\n", o->generated, o->seed, dir);
  return dir;
}

static int cmd_run_cases(const struct options *o);

static int cmd_run(const struct options *o) {
  if (!o->adapter) {
    fprintf(stderr, "tsm-cts: run needs --adapter SO\n");
    return 2;
  }
  if (!o->generated) return cmd_run_cases(o);
  struct options with = *o;
  char *dir = add_generated(&with);
  int rc = dir ? cmd_run_cases(&with) : 2;
  if (dir && rc == 0 && cts_gen_clear(dir) == 0) rmdir(dir);
  if (dir) free(with.selectors);
  free(dir);
  return rc;
}

static int cmd_run_cases(const struct options *o) {
  struct library lib;
  if (open_library(o, &lib) != 0) return 2;
  struct cts_run_info info = {.adapter_path = o->adapter, .seed = o->seed,
                              .shard_index = o->shard_index, .shard_count = o->shard_count};
  cts_run_info_begin(&info, cts_spec_dir(o->spec));
  info.profile = o->profile;
  cts_grade_begin(&lib.spec, o->profile);
  cts_probe_adapter(o->adapter, cts_case_limit_ms(NULL, o->timeout_ms), &info.facts);
  if (load_expectations(o, &info.facts) != 0) return 2;
  struct job_list l = {0};
  plan_jobs(&l, o, &lib, &info.facts);
  keep_shard(&l, o);
  int rc = execute(o, &l, &info);
  int stale = cts_expectations_warn_stale(!o->n_selectors && o->shard_count == 1 && !o->device);
  if (stale && o->strict) {
    fprintf(stderr, "tsm-cts: %d stale expectation line%s under --strict\n", stale,
            stale == 1 ? "" : "s");
    rc = rc ? rc : 1;
  }
  const struct cts_report_paths to = {o->json, o->junit};
  int report_rc = cts_write_reports(&to, l.jobs, l.n, &info);
  if (!o->no_summary) cts_summary_print(stderr, l.jobs, l.n, &info, &to);
  free_jobs(&l);
  close_library(&lib);
  cts_expectations_free();
  return report_rc ? report_rc : rc;
}

static int cmd_merge(const struct options *o) {
  return cts_merge(o->selectors, o->n_selectors, o->json, o->junit, o->spec);
}

/* ---- lint, list, coverage -------------------------------------------------- */

static int cmd_lint(const struct options *o, int list_only) {
  struct library lib;
  if (open_library(o, &lib) != 0) return 2;
  int bad = 0;
  for (size_t i = 0; i < lib.n; i++) {
    const struct cts_case *c = lib.cases[i];
    if (!c) {
      printf("%s\n", lib.errs[i]);
      bad++;
    } else if (list_only) {
      printf("%s\t", c->name);
      for (size_t k = 0; k < c->n_clauses; k++) printf("%s%s", k ? "," : "", c->clauses[k]);
      printf("\t%s\n", c->description);
    }
  }
  int ungraded = list_only ? 0 : cts_spec_check_grades(&lib.spec, cts_spec_dir(o->spec), stdout);
  if (!list_only)
    fprintf(stderr, "tsm-cts lint: %zu case files, %d with errors; %zu clauses, %d without a "
            "strength or a Source line\n", lib.n, bad, lib.spec.n, ungraded);
  bad += ungraded;
  close_library(&lib);
  return bad ? 1 : 0;
}

/* Harness self-tests name the clauses they check in a `clauses: [...]` comment; the
 * Python bridge's cases (*.pytsm) in their frontmatter. */
static void scan_extra_citations(struct cts_spec *spec, const char *dir, const char *suffix,
                                 int *unknown) {
  char **files = NULL;
  size_t n = 0, cap = 0;
  if (cts_collect_files(dir, suffix, &files, &n, &cap) != 0) return;
  for (size_t i = 0; i < n; i++) {
    char *text = cts_read_file(files[i], NULL);
    for (char *p = text; p && (p = strstr(p, "clauses: [")) != NULL;) {
      p += strlen("clauses: [");
      char *end = strchr(p, ']');
      if (!end) break;
      char *list = cts_xstrndup(p, (size_t)(end - p));
      char *save = NULL;
      for (char *id = strtok_r(list, ", ", &save); id; id = strtok_r(NULL, ", ", &save)) {
        struct cts_clause *cl = cts_spec_find(spec, id);
        if (cl) {
          cl->citations++;
        } else {
          printf("%s: cites unknown clause %s\n", files[i], id);
          (*unknown)++;
        }
      }
      free(list);
      p = end;
    }
    free(text);
    free(files[i]);
  }
  free(files);
}

/* Counts into spec the citations of the case files. RETURN the number of errors
 * printed (files that do not parse, unknown clauses). */
static int count_case_citations(struct cts_spec *spec, char **files, size_t n) {
  int errors = 0;
  for (size_t i = 0; i < n; i++) {
    struct cts_parse_error pe;
    /* Parse without the spec so that every unknown citation is listed, not only the first. */
    struct cts_case *c = cts_case_load(files[i], NULL, &pe);
    if (!c) {
      printf("%s:%d:%d: error: %s\n", files[i], pe.line, pe.col, pe.msg);
      errors++;
    }
    for (size_t k = 0; c && k < c->n_clauses; k++) {
      struct cts_clause *cl = cts_spec_find(spec, c->clauses[k]);
      if (cl) {
        cl->citations++;
      } else {
        printf("%s:%d:%d: error: unknown clause '%s'\n", files[i], c->clause_lines[k],
               c->clause_cols[k], c->clauses[k]);
        errors++;
      }
    }
    cts_case_free(c);
  }
  return errors;
}

/* Per chapter, then each clause no one cites. RETURN the number of those. */
static size_t print_coverage(const struct cts_spec *spec) {
  const char *chapter = NULL;
  size_t ch_total = 0, ch_cov = 0, uncovered = 0;
  for (size_t i = 0; i <= spec->n; i++) {
    if (i == spec->n || (chapter && strcmp(chapter, spec->clauses[i].file))) {
      printf("  %-14s %3zu/%zu clauses cited\n", chapter, ch_cov, ch_total);
      ch_total = ch_cov = 0;
    }
    if (i == spec->n) break;
    chapter = spec->clauses[i].file;
    ch_total++;
    ch_cov += spec->clauses[i].citations > 0;
  }
  for (size_t i = 0; i < spec->n; i++) {
    if (spec->clauses[i].citations == 0) {
      printf("uncovered: %s (%s:%d)\n", spec->clauses[i].id, spec->clauses[i].file,
             spec->clauses[i].line);
      uncovered++;
    }
  }
  return uncovered;
}

static int cmd_coverage(const struct options *o) {
  struct cts_spec spec = {0};
  const char *spec_dir = load_spec(o, &spec);
  if (!spec_dir) return 2;
  char **files = NULL;
  size_t n = 0, cap = 0;
  if (cts_collect_files(o->cases, ".tsm", &files, &n, &cap) != 0) {
    fprintf(stderr, "tsm-cts: no case library at '%s'\n", o->cases);
    return 2;
  }
  int errors = count_case_citations(&spec, files, n);
  for (size_t i = 0; i < n; i++) free(files[i]);
  free(files);
  char *extra = cts_xstrdup(o->extra ? o->extra : "");
  char *save = NULL;
  for (char *dir = strtok_r(extra, ",", &save); dir; dir = strtok_r(NULL, ",", &save))
    scan_extra_citations(&spec, dir, "", &errors);
  free(extra);
  scan_extra_citations(&spec, o->cases, ".pytsm", &errors);
  printf("clause coverage (%s, %s):\n", spec_dir, o->cases);
  size_t uncovered = print_coverage(&spec);
  errors += cts_spec_check_grades(&spec, spec_dir, stdout);
  printf("%zu clauses, %zu uncovered, %d errors\n", spec.n, uncovered, errors);
  cts_spec_free(&spec);
  return uncovered || errors ? 1 : 0;
}

/* One case as a line of JSON on stdout; its warnings, or its first error, on stderr. */
static int parse_one(const char *path, const struct cts_spec *spec) {
  struct cts_parse_error pe;
  struct cts_case *c = cts_case_load(path, spec, &pe);
  if (!c) {
    fprintf(stderr, "%s:%d:%d: error: %s\n", path, pe.line, pe.col, pe.msg);
    return 1;
  }
  for (size_t i = 0; i < c->n_warnings; i++) fprintf(stderr, "%s:%s\n", path, c->warnings[i]);
  cts_case_json(stdout, c);
  cts_case_free(c);
  return 0;
}

/* `parse --json [--spec DIR] FILE...` (its own arguments: run's --json takes a file). */
static int cmd_parse(int argc, char **argv) {
  struct options o = {0};
  int json = 0, n = 0, bad = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--spec") && i + 1 < argc) o.spec = argv[++i];
    else argv[n++] = argv[i];
  }
  struct cts_spec spec;
  if (!json || n == 0 || argv[0][0] == '-') {
    fprintf(stderr, "usage: tsm-cts parse --json [--spec DIR] FILE...\n");
    return 2;
  }
  if (!load_spec(&o, &spec)) return 2;
  for (int i = 0; i < n; i++) bad |= parse_one(argv[i], &spec);
  cts_spec_free(&spec);
  return bad;
}

static int cmd_parse_main(int argc, char **argv) { return cmd_parse(argc - 1, argv + 1); }
static int cmd_lint_cases(const struct options *o) { return cmd_lint(o, 0); }
static int cmd_list(const struct options *o) { return cmd_lint(o, 1); }

static int cmd_baseline(const struct options *o) {
  if (o->n_selectors == 1) return cts_baseline_main(o->selectors[0], o->expectations);
  fprintf(stderr, "tsm-cts baseline: give one RESULTS.json\n");
  return 2;
}

/* The commands that read their own arguments (argv[0] is the command's name). */
static const struct {
  const char *name;
  int (*main)(int argc, char **argv);
} own_argument_commands[] = {
    {"gen", cts_gen_main},         {"combos", cts_combos_main},   {"parse", cmd_parse_main},
    {"reduce", cts_reduce_main},   {"explain", cts_explain_main},
    {"statements", cts_statements_main}, {"library", cts_library_main},
};

/* The commands that take the common options (usage_options). */
static const struct {
  const char *name;
  int (*run)(const struct options *o);
} option_commands[] = {
    {"run", cmd_run},           {"lint", cmd_lint_cases}, {"list", cmd_list},
    {"coverage", cmd_coverage}, {"merge", cmd_merge},     {"baseline", cmd_baseline},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  /* coverage --kinds takes its own arguments (tools/library.c). */
  for (int i = 2; i < argc && !strcmp(argv[1], "coverage"); i++)
    if (!strcmp(argv[i], "--kinds")) return cts_kinds_main(argc - 1, argv + 1);
  for (size_t i = 0; i < N_OF(own_argument_commands); i++)
    if (!strcmp(argv[1], own_argument_commands[i].name))
      return own_argument_commands[i].main(argc - 1, argv + 1);
  struct options o;
  /* getopt_long reads from argv[1]: the command is argv[0] of what it is given, unless
   * the command line starts with an option (--help, --version). */
  int command_first = argv[1][0] != '-';
  int parsed = command_first ? parse_options(argc - 1, argv + 1, &o) : parse_options(argc, argv, &o);
  if (parsed != 0) {
    free(o.selectors);
    return parsed > 0 ? 0 : 2;
  }
  int rc = -1;
  if (!command_first) {
    fprintf(stderr, "tsm-cts: the command comes first (run, lint, coverage, list, merge, baseline)\n");
    rc = 2;
  }
  for (size_t i = 0; rc < 0 && i < N_OF(option_commands); i++)
    if (!strcmp(argv[1], option_commands[i].name)) rc = option_commands[i].run(&o);
  if (rc < 0) {
    fprintf(stderr, "tsm-cts: unknown command '%s'\n", argv[1]);
    usage(stderr);
    rc = 2;
  }
  free(o.selectors);
  return rc;
}
