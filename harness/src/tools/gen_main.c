/*
 * harness/src/tools/gen_main.c: the `tsm-cts gen` command. Each case is generated from its own
 * seed (the run's seed and its index) and completed in a forked child, so an adapter
 * that crashes on a generated case costs that case only; the child writes
 * OUTDIR/gen-SEED-INDEX.tsm and exits with its completion outcome; --jobs N keeps N
 * children at work.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter_load.h"
#include "case.h"
#include "families.h"
#include "gen_internal.h"
#include "runner.h"
#include "spec_index.h"

/* The command line; the strings point into argv. */
struct gen_options {
  unsigned long long seed;
  long count;
  int min, max, jobs;
  unsigned families;
  const char *adapter, *spec, *outdir, *device;
};

static const struct option gen_long_options[] = {
    {"seed", required_argument, NULL, 's'},   {"count", required_argument, NULL, 'n'},
    {"min", required_argument, NULL, 'm'},    {"max", required_argument, NULL, 'M'},
    {"families", required_argument, NULL, 'f'}, {"adapter", required_argument, NULL, 'a'},
    {"spec", required_argument, NULL, 'S'},   {"jobs", required_argument, NULL, 'j'},
    {"device", required_argument, NULL, 'd'},
    {NULL, 0, NULL, 0},
};

static int gen_usage(void) {
  fputs("usage: tsm-cts gen --seed S --count N [--min 5] [--max 40] [--families LIST]\n"
        "                   [--adapter SO] [--device NAME] [--spec DIR] [--jobs N] OUTDIR\n"
        "LIST: requires: names, comma-separated (managers,scopes,composites,dlpack-c,graphs)\n"
        "SO: the adapter completion runs through (default: $TSM_CTS_GEN_ADAPTER, else\n"
        "build/lib/tsmref_adapter.so)\n"
        "NAME: the device completion runs on (cpu); a case that imports a tensor the judge\n"
        "made holds on that device alone and says so (devices:)\n", stderr);
  return 2;
}

static unsigned parse_families(const char *list) {
  unsigned caps = cts_family_cap("managers");
  char *copy = cts_xstrdup(list), *save = NULL;
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
    caps |= cts_family_cap(w);
  free(copy);
  return caps;
}

const char *cts_gen_default_adapter(void) {
  const char *path = getenv("TSM_CTS_GEN_ADAPTER");
  return path ? path : "build/lib/tsmref_adapter.so";
}

/* How an option's value is read into its field of struct gen_options. */
enum gen_option_form { GEN_STRING, GEN_INT, GEN_LONG, GEN_SEED, GEN_FAMILIES };

static const struct {
  int code;
  enum gen_option_form form;
  size_t offset;
} gen_option_fields[] = {
    {'s', GEN_SEED, offsetof(struct gen_options, seed)},
    {'n', GEN_LONG, offsetof(struct gen_options, count)},
    {'m', GEN_INT, offsetof(struct gen_options, min)},
    {'M', GEN_INT, offsetof(struct gen_options, max)},
    {'f', GEN_FAMILIES, offsetof(struct gen_options, families)},
    {'a', GEN_STRING, offsetof(struct gen_options, adapter)},
    {'S', GEN_STRING, offsetof(struct gen_options, spec)},
    {'j', GEN_INT, offsetof(struct gen_options, jobs)},
    {'d', GEN_STRING, offsetof(struct gen_options, device)},
};

/* Stores option `code` with its value. RETURN 0, or -1 for an unknown option. */
static int set_gen_option(struct gen_options *o, int code, const char *value) {
  size_t i = 0, n = sizeof gen_option_fields / sizeof gen_option_fields[0];
  while (i < n && gen_option_fields[i].code != code) i++;
  if (i == n) return -1;
  void *field = (char *)o + gen_option_fields[i].offset;
  switch (gen_option_fields[i].form) {
    case GEN_STRING: *(const char **)field = value; break;
    case GEN_INT: *(int *)field = atoi(value); break;
    case GEN_LONG: *(long *)field = strtol(value, NULL, 10); break;
    case GEN_SEED: *(unsigned long long *)field = strtoull(value, NULL, 10); break;
    case GEN_FAMILIES: *(unsigned *)field = parse_families(value); break;
  }
  return 0;
}

static int parse_gen_options(int argc, char **argv, struct gen_options *o) {
  *o = (struct gen_options){0, 0, 5, 40, 1, 0, cts_gen_default_adapter(), NULL, NULL, "cpu"};
  int code;
  optind = 1;
  while ((code = getopt_long(argc, argv, "", gen_long_options, NULL)) != -1)
    if (set_gen_option(o, code, optarg) != 0) return -1;
  if (optind != argc - 1 || o->count <= 0 || o->min < 1 || o->max < o->min || o->jobs < 1) return -1;
  o->outdir = argv[optind];
  return 0;
}

/* splitmix64: one well-mixed seed per case. */
static uint64_t case_seed(unsigned long long seed, long index) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + (uint64_t)index + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) | 1;
}

/* In the child: one case, completed and written. RETURN its outcome (exit status). */
static int one_case(const struct gen_options *o, long index, const struct tsm_adapter *a,
                    int device, const struct cts_spec *spec) {
  struct gen g = {0};
  g.rng = case_seed(o->seed, index);
  g.min = o->min;
  g.max = o->max;
  g.families = o->families;
  g.dtypes = a ? a->dtypes : 0;
  struct cts_gen_case gc = {.device = o->device};
  gen_case(&g, &gc);
  cts_buf_free(&g.line);
  int outcome = cts_complete(&gc, &(struct cts_completion){o->seed, (size_t)index, a, spec, device});
  char *text = cts_gen_render(&gc, o->seed, (size_t)index, spec);
  char path[4096];
  snprintf(path, sizeof path, "%s/gen-%llu-%05ld.tsm", o->outdir, o->seed, index);
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0) outcome = 9;
  if (f) fclose(f);
  free(text);
  cts_gen_case_free(&gc);
  return outcome;
}

/* Counts a finished child's outcome. */
static void reap(long *outcomes, long *crashed) {
  int status = 0;
  if (wait(&status) < 0 || !WIFEXITED(status)) (*crashed)++;
  else outcomes[WEXITSTATUS(status) % 10]++;
}

static int run_cases(const struct gen_options *o, const struct tsm_adapter *a, int device,
                     const struct cts_spec *spec) {
  long outcomes[10] = {0}, crashed = 0;
  int running = 0;
  for (long i = 0; i < o->count; i++) {
    if (running == o->jobs) reap(outcomes, &crashed), running--;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      if (!freopen("/dev/null", "w", stdout)) _exit(9); /* dumps are for humans */
      _exit(one_case(o, i, a, device, spec));
    }
    if (pid < 0) crashed++;
    else running++;
  }
  while (running-- > 0) reap(outcomes, &crashed);
  fprintf(stderr, "tsm-cts gen: %ld cases in %s: %ld agree with the model, %ld diverge "
          "(the body ends at the divergence), %ld unfinished, %ld crashed, %ld not written\n",
          o->count, o->outdir, outcomes[CTS_GEN_AGREES], outcomes[CTS_GEN_DIVERGES],
          outcomes[CTS_GEN_UNFINISHED], crashed, outcomes[9]);
  return crashed || outcomes[CTS_GEN_UNFINISHED] || outcomes[9] ? 1 : 0;
}

int cts_gen_main(int argc, char **argv) {
  struct gen_options o;
  if (parse_gen_options(argc, argv, &o)) return gen_usage();
  /* The devices are listed in a probe child and again by each case's child, never here:
   * a device runtime that the parent initialised is unusable in a forked child (CUDA). */
  struct cts_adapter_facts facts;
  cts_probe_adapter(o.adapter, CTS_PROBE_TIMEOUT_MS, &facts);
  int device = facts.loaded ? cts_adapter_device_index(&facts, o.device, "tsm-cts gen") : -1;
  char why[512];
  const struct tsm_adapter *a = device < 0 ? NULL : cts_adapter_load(o.adapter, why, sizeof why);
  if (!a) {
    if (device >= 0 || !facts.loaded)
      fprintf(stderr, "tsm-cts gen: %s: %s\n", o.adapter, facts.loaded ? why : facts.why);
    return 2;
  }
  struct cts_spec spec = {0};
  if (cts_spec_load(&spec, cts_spec_dir(o.spec)) != 0) {
    fprintf(stderr, "tsm-cts gen: cannot read the spec\n");
    return 2;
  }
  if (mkdir(o.outdir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "tsm-cts gen: cannot make %s: %s\n", o.outdir, strerror(errno));
    cts_spec_free(&spec);
    return 2;
  }
  int rc = run_cases(&o, a, device, &spec);
  cts_spec_free(&spec);
  return rc;
}

int cts_gen_into(const char *dir, unsigned long long seed, int count, int jobs) {
  char seed_s[32], count_s[32], jobs_s[32];
  snprintf(seed_s, sizeof seed_s, "%llu", seed);
  snprintf(count_s, sizeof count_s, "%d", count);
  snprintf(jobs_s, sizeof jobs_s, "%d", jobs > 0 ? jobs : 1);
  char *argv[] = {"gen", "--seed", seed_s, "--count", count_s, "--jobs", jobs_s, (char *)dir, NULL};
  return cts_gen_main(8, argv);
}

int cts_gen_clear(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n <= 4 || strcmp(e->d_name + n - 4, ".tsm")) continue;
    char *path = cts_printf_dup("%s/%s", dir, e->d_name);
    if (unlink(path) != 0) rc = -1;
    free(path);
  }
  closedir(d);
  return rc;
}

/* ---- tsm-cts statements: the language reference, from the statement table ----------- */

#define STMT_BEGIN "<!-- statements: generated by `tsm-cts statements --markdown`; do not edit -->"
#define STMT_END "<!-- end statements -->"

/* The families in the order the reference shows them, each with its heading. */
static const struct {
  int family; /* enum cts_family_id */
  const char *heading;
} stmt_sections[] = {
    {CTS_FAMILY_MANAGERS, "Managers, tensors and resources (spec/managers.md)"},
    {CTS_FAMILY_CORE, "Control and `expect error`"},
    {CTS_FAMILY_SCOPES, "Dispose scopes and composites (spec/scopes.md, spec/composites.md)"},
    {CTS_FAMILY_DLPACK, "DLPack, C ABI (spec/dlpack.md)"},
    {CTS_FAMILY_GRAPHS, "Graphs (spec/graphs.md)"},
    {CTS_FAMILY_DLPACK_PY, "Capsule-level DLPack (`.pytsm`, cases/dlpack/python/README.md)"},
};

/* s with `|` escaped for a Markdown table cell. */
static void put_cell(struct cts_buf *b, const char *s) {
  for (; *s; s++)
    if (*s == '|') cts_buf_printf(b, "\\|");
    else cts_buf_printf(b, "%c", *s);
}

static void put_generator(struct cts_buf *b, const struct gen_row *row) {
  if (row->writer) cts_buf_printf(b, "%s", row->writer);
  else cts_buf_printf(b, "not drawn: %s", row->why_not);
}

/* The reference as Markdown (the block between the markers of cases/README.md). */
static char *statements_markdown(void) {
  struct cts_buf b = {0};
  cts_buf_printf(&b, "%s\n", STMT_BEGIN);
  for (size_t s = 0; s < sizeof stmt_sections / sizeof stmt_sections[0]; s++) {
    cts_buf_printf(&b, "\n#### %s\n\n| statement | what it does | clause | generator |\n"
                       "|---|---|---|---|\n", stmt_sections[s].heading);
    for (size_t k = 0; k < gen_n_rows; k++) {
      const struct gen_row *row = &gen_rows[k];
      if (row->family != stmt_sections[s].family) continue;
      cts_buf_printf(&b, "| `");
      put_cell(&b, row->syntax);
      cts_buf_printf(&b, "` | ");
      put_cell(&b, row->about);
      cts_buf_printf(&b, " | %s | ", row->clause ? row->clause : "");
      put_generator(&b, row);
      cts_buf_printf(&b, " |\n");
    }
  }
  cts_buf_printf(&b, "\n%s\n", STMT_END);
  return cts_buf_take(&b);
}

/* The reference as text: a statement per line, then what it does, its clause and kind. */
static void statements_text(FILE *f) {
  for (size_t s = 0; s < sizeof stmt_sections / sizeof stmt_sections[0]; s++) {
    fprintf(f, "%s%s\n", s ? "\n" : "", stmt_sections[s].heading);
    for (size_t k = 0; k < gen_n_rows; k++) {
      const struct gen_row *row = &gen_rows[k];
      if (row->family != stmt_sections[s].family) continue;
      struct cts_buf g = {0};
      put_generator(&g, row);
      fprintf(f, "  %s\n      %s\n      kind %s, key %d%s%s; generator: %s\n", row->syntax,
              row->about, cts_stmt_kind_name(row->kind), row->key,
              row->clause ? ", clause " : "", row->clause ? row->clause : "", g.buf);
      cts_buf_free(&g);
    }
  }
}

/* file's text with the block between the markers replaced by block; NULL when file has
 * no markers. */
static char *with_block(const char *text, const char *block) {
  const char *a = strstr(text, STMT_BEGIN);
  const char *e = a ? strstr(a, STMT_END) : NULL;
  if (!e) return NULL;
  e += strlen(STMT_END);
  if (*e == '\n') e++;
  return cts_printf_dup("%.*s%s%s", (int)(a - text), text, block, e);
}

/* --check FILE (write 0) or --write FILE (write 1). RETURN the exit status. */
static int statements_file(const char *path, int write) {
  int bad = gen_rows_check();
  char *text = cts_read_file(path, NULL);
  char *block = statements_markdown();
  char *want = text ? with_block(text, block) : NULL;
  if (!want) {
    fprintf(stderr, "statements: %s: no block between '%s' and '%s'\n", path, STMT_BEGIN,
            STMT_END);
    bad++;
  } else if (write && strcmp(want, text)) {
    FILE *f = fopen(path, "w");
    if (!f || fputs(want, f) < 0 || fclose(f)) {
      fprintf(stderr, "statements: cannot write %s\n", path);
      bad++;
    }
  } else if (!write && strcmp(want, text)) {
    fprintf(stderr, "statements: %s's statement list is stale: run `tsm-cts statements "
                    "--write %s`\n", path, path);
    bad++;
  }
  free(text);
  free(block);
  free(want);
  return bad ? 1 : 0;
}

int cts_statements_main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--markdown")) {
    char *md = statements_markdown();
    fputs(md, stdout);
    free(md);
    return gen_rows_check() ? 1 : 0;
  }
  if (argc == 3 && (!strcmp(argv[1], "--check") || !strcmp(argv[1], "--write")))
    return statements_file(argv[2], !strcmp(argv[1], "--write"));
  if (argc == 1) {
    statements_text(stdout);
    return gen_rows_check() ? 1 : 0;
  }
  fprintf(stderr, "usage: tsm-cts statements [--markdown | --check FILE | --write FILE]\n");
  return 2;
}
