/*
 * harness/src/tools/library.c: the clause x kind matrix (`tsm-cts coverage --kinds`) and
 * the generated part of the case library (`tsm-cts library`, cases/generated/).
 *
 * The cells that apply are the ones the combination generator reaches: every node of
 * the enumeration (combo_enum.c, the rows the reference offers, depth 2) is a case body,
 * and each body's cells (kinds.c) apply. A cell with fewer than K (2) cases in the
 * library is a hole. `library` fills the holes the hand-written cases leave: it walks
 * the enumeration in its fixed order, takes each combination that meets a cell still
 * short of K, drops the background lines it does not need (a line goes when the body
 * still parses and still meets the cells it was taken for), completes it against the
 * model (complete.c; a forked child, as `gen` does) and writes it under OUTDIR with the
 * cells it was taken for in its description. The same tree and the same statement table
 * give the same files; --check regenerates into a scratch folder and fails when OUTDIR
 * differs (a new row, a changed writer or a new hand-written case makes it stale).
 */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adapter_load.h"
#include "case.h"
#include "combo.h"
#include "kinds.h"
#include "runner.h"
#include "spec_index.h"

#define DEFAULT_MIN 2
#define DEFAULT_DEPTH 2
#define GENERATED_DIR "generated"

/* ---- the matrix ----------------------------------------------------------------- */

/* Per clause, per kind: cases of the hand-written library, of the generated one, and
 * whether the enumeration reaches the cell. */
struct row {
  const char *clause;
  int hand[CTS_N_KINDS], generated[CTS_N_KINDS];
  unsigned char reached[CTS_N_KINDS];
};

struct matrix {
  struct row *rows;
  size_t n, cap;
};

static struct row *row_of(struct matrix *m, const char *clause) {
  for (size_t i = 0; i < m->n; i++)
    if (m->rows[i].clause == clause || !strcmp(m->rows[i].clause, clause)) return &m->rows[i];
  struct row r = {.clause = clause};
  CTS_PUSH(m->rows, m->n, m->cap, r);
  return &m->rows[m->n - 1];
}

static int count_of(struct matrix *m, const struct cts_kind_cell *cell) {
  struct row *r = row_of(m, cell->clause);
  return r->hand[cell->kind] + r->generated[cell->kind];
}

static int by_clause(const void *a, const void *b) {
  return strcmp(((const struct row *)a)->clause, ((const struct row *)b)->clause);
}

/* ---- the library's cases ---------------------------------------------------------- */

/* Whether path lies under dir (a folder). */
static int under(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return !strncmp(path, dir, n) && (path[n] == '/' || (n && dir[n - 1] == '/'));
}

/* Adds each case's cells under root to m: to `generated` for the files under gen_dir,
 * else to `hand` (skip_generated: leaves those out). RETURN -1 when a case does not
 * parse (said on stderr), else 0. */
static int count_library(struct matrix *m, const char *root, const char *gen_dir,
                         int skip_generated, const struct cts_spec *spec) {
  char **paths = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  if (cts_collect_files(root, ".tsm", &paths, &n, &cap) != 0) {
    fprintf(stderr, "tsm-cts: no case library at %s\n", root);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    int generated = under(paths[i], gen_dir);
    struct cts_parse_error err;
    struct cts_case *c = generated && skip_generated ? NULL : cts_case_load(paths[i], spec, &err);
    if (!c && !(generated && skip_generated)) {
      fprintf(stderr, "%s:%d:%d: %s\n", paths[i], err.line, err.col, err.msg);
      rc = -1;
    }
    struct cts_kind_cell *cells = NULL;
    size_t k = c ? cts_kind_cells(c, &cells) : 0;
    for (size_t j = 0; j < k; j++) {
      struct row *r = row_of(m, cells[j].clause);
      (generated ? r->generated : r->hand)[cells[j].kind]++;
    }
    free(cells);
    if (c) cts_case_free(c);
    free(paths[i]);
  }
  free(paths);
  return rc;
}

/* ---- the enumeration ---------------------------------------------------------------- */

struct universe {
  struct combo_set set;
  const struct tsm_adapter *adapter;
  struct cts_adapter_facts facts;
  int device;
};

static int open_universe(struct universe *u, const char *adapter, int depth, int load) {
  memset(u, 0, sizeof *u);
  cts_probe_adapter(adapter, CTS_PROBE_TIMEOUT_MS, &u->facts);
  if (!u->facts.loaded) {
    fprintf(stderr, "tsm-cts: %s: %s (the enumeration runs the rows the reference offers: "
            "build it, or name another with --adapter)\n", adapter, u->facts.why);
    return -1;
  }
  u->device = cts_adapter_device_index(&u->facts, "cpu", "tsm-cts library");
  char why[512];
  if (load && (u->device < 0 || !(u->adapter = cts_adapter_load(adapter, why, sizeof why)))) {
    fprintf(stderr, "tsm-cts: %s: %s\n", adapter, u->device < 0 ? "no cpu device" : why);
    return -1;
  }
  struct combo_offer offer = {u->facts.caps, u->facts.ops, u->facts.has_dump, u->facts.dtypes};
  combo_enumerate(&u->set, &offer, depth, 1);
  return 0;
}

/* Node i's body as a parsed case (NULL if it does not parse), its lines in *gc. */
static struct cts_case *parse_body(const struct cts_gen_case *gc) {
  char *text = cts_gen_render_as(gc, "tsm-cts library", 0, NULL);
  struct cts_parse_error err;
  struct cts_case *c = cts_case_parse("combination.tsm", text, NULL, &err);
  free(text);
  return c;
}

static size_t body_cells(const struct cts_gen_case *gc, struct cts_kind_cell **cells) {
  struct cts_case *c = parse_body(gc);
  *cells = NULL;
  size_t n = c ? cts_kind_cells(c, cells) : 0;
  if (c) cts_case_free(c);
  return n;
}

/* Marks every cell some combination meets as reached. */
static void mark_reached(struct matrix *m, const struct universe *u) {
  for (size_t i = 0; i < u->set.n; i++) {
    if (!u->set.nodes[i].run) continue;
    struct cts_gen_case gc = {0};
    combo_body(&u->set, i, &gc);
    struct cts_kind_cell *cells;
    size_t n = body_cells(&gc, &cells);
    for (size_t j = 0; j < n; j++) row_of(m, cells[j].clause)->reached[cells[j].kind] = 1;
    free(cells);
    cts_gen_case_free(&gc);
  }
}

/* ---- options ---------------------------------------------------------------------- */

struct lib_options {
  const char *spec, *cases, *adapter, *json, *outdir;
  int min, depth, check, kinds;
};

/* The options that take a value: the field each sets (an offset into lib_options),
 * and whether it is a number; `command`: only `library` takes it (1), only `coverage
 * --kinds` (0), both (-1). */
static const struct {
  const char *name, *short_name;
  size_t field;
  int number, command;
} lib_values[] = {
    {"--spec", "-s", offsetof(struct lib_options, spec), 0, -1},
    {"--cases", "-c", offsetof(struct lib_options, cases), 0, -1},
    {"--adapter", "-a", offsetof(struct lib_options, adapter), 0, -1},
    {"--json", NULL, offsetof(struct lib_options, json), 0, 0},
    {"--min", NULL, offsetof(struct lib_options, min), 1, -1},
    {"--depth", NULL, offsetof(struct lib_options, depth), 1, -1},
};

/* argv[*i], a valued option, sets its field (and *i moves past the value). RETURN 0, or
 * -1 when it is no option of this command or lacks its value. */
static int set_value(struct lib_options *o, int argc, char **argv, int *i, int command) {
  for (size_t k = 0; k < sizeof lib_values / sizeof lib_values[0]; k++) {
    int named = !strcmp(argv[*i], lib_values[k].name) ||
                (lib_values[k].short_name && !strcmp(argv[*i], lib_values[k].short_name));
    if (!named) continue;
    if (*i + 1 >= argc || (lib_values[k].command >= 0 && lib_values[k].command != command))
      return -1;
    char *field = (char *)o + lib_values[k].field;
    const char *val = argv[++*i];
    if (lib_values[k].number) *(int *)(void *)field = atoi(val);
    else *(const char **)(void *)field = val;
    return 0;
  }
  return -1;
}

/* RETURN 0, or -1 on a usage error. command: 1 for `library`, 0 for `coverage --kinds`. */
static int parse_lib_options(int argc, char **argv, struct lib_options *o, int command) {
  *o = (struct lib_options){.adapter = cts_gen_default_adapter(), .min = DEFAULT_MIN,
                            .depth = DEFAULT_DEPTH};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--kinds")) o->kinds = 1;
    else if (!strcmp(arg, "--check") && command) o->check = 1;
    else if (arg[0] == '-') {
      if (set_value(o, argc, argv, &i, command)) return -1;
    } else if (command && !o->outdir) o->outdir = arg;
    else return -1;
  }
  if (o->min < 1 || o->depth < 0 || o->depth > COMBO_MAX_DEPTH) return -1;
  o->cases = cts_library_dir(o->cases, "TSM_CTS_CASES", "cases", "cases");
  return 0;
}

/* The generated folder: OUTDIR, else CASES/generated, in buf. */
static const char *generated_dir(const struct lib_options *o, char *buf, size_t n) {
  if (o->outdir) snprintf(buf, n, "%s", o->outdir);
  else snprintf(buf, n, "%s/%s", o->cases, GENERATED_DIR);
  size_t len = strlen(buf);
  while (len > 1 && buf[len - 1] == '/') buf[--len] = 0;
  return buf;
}

/* ---- coverage --kinds --------------------------------------------------------------- */

static void put_matrix_text(const struct matrix *m, int min) {
  printf("%-18s", "clause");
  for (int k = 0; k < CTS_N_KINDS; k++) printf(" %4s", cts_kind_columns[k]);
  printf("\n");
  for (size_t i = 0; i < m->n; i++) {
    const struct row *r = &m->rows[i];
    printf("%-18s", r->clause);
    for (int k = 0; k < CTS_N_KINDS; k++) {
      int n = r->hand[k] + r->generated[k];
      if (!r->reached[k] && !n) printf(" %4s", ".");
      else printf(" %3d%s", n, r->reached[k] && n < min ? "!" : " ");
    }
    printf("\n");
  }
  printf("kinds:");
  for (int k = 0; k < CTS_N_KINDS; k++) printf(" %s %s (%s)%s", cts_kind_columns[k], cts_kind_names[k], cts_kind_abouts[k],
                                               k + 1 < CTS_N_KINDS ? ";" : "\n");
  printf("a number: cases meeting the cell (hand-written and generated); `.`: no case and no "
         "combination meets it; `!`: a hole, a cell a combination meets with fewer than %d "
         "cases\n", min);
}

static int put_matrix_json(const struct matrix *m, const char *path, int min) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\n  \"min\": %d,\n  \"kinds\": [", min);
  for (int k = 0; k < CTS_N_KINDS; k++) fprintf(f, "%s\"%s\"", k ? ", " : "", cts_kind_names[k]);
  fprintf(f, "],\n  \"cells\": [");
  int first = 1;
  for (size_t i = 0; i < m->n; i++)
    for (int k = 0; k < CTS_N_KINDS; k++) {
      const struct row *r = &m->rows[i];
      if (!r->reached[k] && !r->hand[k] && !r->generated[k]) continue;
      fprintf(f, "%s\n    {\"clause\": \"%s\", \"kind\": \"%s\", \"hand\": %d, \"generated\": %d, "
              "\"reached\": %s}", first ? "" : ",", r->clause, cts_kind_names[k], r->hand[k],
              r->generated[k], r->reached[k] ? "true" : "false");
      first = 0;
    }
  fprintf(f, "\n  ]\n}\n");
  return fclose(f);
}

static size_t count_holes(const struct matrix *m, int min, int say) {
  size_t holes = 0;
  for (size_t i = 0; i < m->n; i++)
    for (int k = 0; k < CTS_N_KINDS; k++) {
      const struct row *r = &m->rows[i];
      int n = r->hand[k] + r->generated[k];
      if (!r->reached[k] || n >= min) continue;
      holes++;
      if (say) fprintf(stderr, "tsm-cts coverage: hole: %s on kind %s: %d case%s (at least %d)\n",
                       r->clause, cts_kind_names[k], n, n == 1 ? "" : "s", min);
    }
  return holes;
}

int cts_kinds_main(int argc, char **argv) {
  struct lib_options o;
  if (parse_lib_options(argc, argv, &o, 0) || !o.kinds) {
    fputs("usage: tsm-cts coverage --kinds [--min K] [--json FILE] [--cases DIR] [--spec DIR]\n"
          "                        [--adapter SO] [--depth N]\n", stderr);
    return 2;
  }
  struct cts_spec spec = {0};
  if (cts_spec_load(&spec, cts_spec_dir(o.spec)) != 0) return 2;
  char gen_dir[4096];
  generated_dir(&o, gen_dir, sizeof gen_dir);
  struct matrix m = {0};
  struct universe u;
  int rc = count_library(&m, o.cases, gen_dir, 0, &spec) ? 2 : 0;
  if (!rc && open_universe(&u, o.adapter, o.depth, 0) == 0) {
    mark_reached(&m, &u);
    combo_set_free(&u.set);
  } else rc = 2;
  if (!rc) {
    qsort(m.rows, m.n, sizeof m.rows[0], by_clause);
    put_matrix_text(&m, o.min);
    if (o.json && put_matrix_json(&m, o.json, o.min)) rc = 2;
    size_t holes = count_holes(&m, o.min, 1);
    printf("tsm-cts coverage --kinds: %zu clauses, %zu hole%s\n", m.n, holes, holes == 1 ? "" : "s");
    if (holes && !rc) rc = 1;
  }
  free(m.rows);
  cts_spec_free(&spec);
  return rc;
}

/* ---- tsm-cts library ---------------------------------------------------------------- */

/* One generation: the matrix it fills, the enumeration, where it writes, K, the spec. */
struct generation {
  struct matrix *m;
  const struct universe *u;
  const char *dir;
  int min;
  const struct cts_spec *spec;
};

/* A candidate: the cells it was taken for (short of K when it was taken). */
struct wanted {
  struct cts_kind_cell cell[CTS_N_KINDS * 4];
  size_t n;
};

static int meets_all(const struct cts_kind_cell *cells, size_t n, const struct wanted *w) {
  for (size_t i = 0; i < w->n; i++) {
    int found = 0;
    for (size_t j = 0; j < n && !found; j++)
      found = cells[j].kind == w->cell[i].kind && !strcmp(cells[j].clause, w->cell[i].clause);
    if (!found) return 0;
  }
  return 1;
}

/* Drops background lines gc does not need for w, last to first. */
static void prune(struct cts_gen_case *gc, size_t n_background, const struct wanted *w) {
  for (size_t i = n_background; i-- > 0;) {
    struct cts_gen_line keep = gc->lines[i];
    memmove(&gc->lines[i], &gc->lines[i + 1], (gc->n - i - 1) * sizeof gc->lines[0]);
    gc->n--;
    struct cts_kind_cell *cells;
    size_t n = body_cells(gc, &cells);
    int ok = n && meets_all(cells, n, w);
    free(cells);
    if (ok) {
      free(keep.text);
      free(keep.alt);
      continue;
    }
    memmove(&gc->lines[i + 1], &gc->lines[i], (gc->n - i) * sizeof gc->lines[0]);
    gc->lines[i] = keep;
    gc->n++;
  }
}

/* The case's file name: its first wanted cell, lower case, then a count. */
static void file_name(char *buf, size_t n, const char *dir, const struct wanted *w, int nth) {
  char clause[64];
  snprintf(clause, sizeof clause, "%s", w->cell[0].clause);
  for (char *p = clause; *p; p++) *p = *p == '.' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
  snprintf(buf, n, "%s/%s-%s-%d.tsm", dir, clause, cts_kind_names[w->cell[0].kind], nth);
}

/* The description line names the cells. */
static char *describe(const char *text, const struct wanted *w, size_t node) {
  struct cts_buf b = {0};
  cts_buf_printf(&b, "---\ndescription: generated (tsm-cts library, combination %zu, completed "
                 "against the model) for", node);
  for (size_t i = 0; i < w->n; i++)
    cts_buf_printf(&b, "%s %s on kind %s", i ? "," : "", w->cell[i].clause, cts_kind_names[w->cell[i].kind]);
  cts_buf_printf(&b, "\n");
  const char *rest = strchr(text + 4, '\n');
  cts_buf_printf(&b, "%s", rest ? rest + 1 : "");
  return cts_buf_take(&b);
}

/* Completes gc against the model in a forked child, which writes path. RETURN 0 when
 * the completed case agrees with the model and was written. */
static int complete_to(const struct generation *g, struct cts_gen_case *gc, const char *path,
                       const struct wanted *w, size_t node) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout)) _exit(9);
    int outcome = cts_complete(gc, &(struct cts_completion){0, node, g->u->adapter, g->spec,
                                                            g->u->device});
    char *text = cts_gen_render_as(gc, "tsm-cts library", node, g->spec);
    char *out = describe(text, w, node);
    FILE *f = fopen(path, "w");
    if (!f || fputs(out, f) < 0) outcome = 9;
    if (f && fclose(f)) outcome = 9;
    _exit(outcome);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == CTS_GEN_AGREES ? 0 : -1;
}

/* The cells the written case meets (it may lose some in completion). */
static size_t file_cells(const char *path, const struct cts_spec *spec, struct cts_kind_cell **cells) {
  struct cts_parse_error err;
  struct cts_case *c = cts_case_load(path, spec, &err);
  *cells = NULL;
  size_t n = c ? cts_kind_cells(c, cells) : 0;
  if (c) cts_case_free(c);
  return n;
}

/* The cells of node i's case that are still short of K. */
static void short_cells(const struct generation *g, const struct cts_gen_case *gc, struct wanted *w) {
  struct cts_kind_cell *cells;
  size_t n = body_cells(gc, &cells);
  w->n = 0;
  for (size_t j = 0; j < n && w->n < sizeof w->cell / sizeof w->cell[0]; j++)
    if (count_of(g->m, &cells[j]) < g->min) w->cell[w->n++] = cells[j];
  free(cells);
}

/* Writes the pruned, completed case for w at path; RETURN 1 when it agrees with the
 * model and still meets w's first cell (then its cells are counted), else 0 (and it
 * goes). */
static int write_case(const struct generation *g, struct cts_gen_case *gc, const struct wanted *w,
                      size_t node, const char *path) {
  struct cts_kind_cell *cells = NULL;
  size_t n = 0;
  const struct wanted first = {.cell = {w->cell[0]}, .n = 1};
  int kept = complete_to(g, gc, path, w, node) == 0 && (n = file_cells(path, g->spec, &cells)) &&
             meets_all(cells, n, &first);
  for (size_t j = 0; kept && j < n; j++) row_of(g->m, cells[j].clause)->generated[cells[j].kind]++;
  if (!kept) unlink(path);
  free(cells);
  return kept;
}

/* Takes node i when it meets a cell short of K; RETURN 1 when a case was written. */
static int take(const struct generation *g, size_t i) {
  struct cts_gen_case gc = {.device = "cpu"};
  combo_case(&g->u->set, i, &gc); /* the body, then an expectation for each symbol made */
  struct wanted w;
  short_cells(g, &gc, &w);
  int wrote = 0;
  if (w.n) {
    prune(&gc, g->u->set.background.n, &w);
    char path[4200];
    struct row *r = row_of(g->m, w.cell[0].clause);
    file_name(path, sizeof path, g->dir, &w, r->generated[w.cell[0].kind] + 1);
    wrote = write_case(g, &gc, &w, i, path);
  }
  cts_gen_case_free(&gc);
  return wrote;
}

static size_t generate(const struct generation *g) {
  size_t written = 0;
  for (size_t i = 0; i < g->u->set.n; i++)
    if (g->u->set.nodes[i].run) written += (size_t)take(g, i);
  return written;
}

/* Whether dirs a and b hold the same .tsm files with the same bytes; says how not. */
static int same_dirs(const char *a, const char *b) {
  char **pa = NULL, **pb = NULL;
  size_t na = 0, nb = 0, ca = 0, cb = 0;
  cts_collect_files(a, ".tsm", &pa, &na, &ca);
  cts_collect_files(b, ".tsm", &pb, &nb, &cb);
  int same = 1;
  size_t i = 0, j = 0, la = strlen(a) + 1, lb = strlen(b) + 1;
  while (i < na || j < nb) {
    int order = i == na ? 1 : j == nb ? -1 : strcmp(pa[i] + la, pb[j] + lb);
    if (order) {
      fprintf(stderr, "tsm-cts library: %s%s %s\n", order < 0 ? a : b, "/",
              order < 0 ? (i++, "would be removed") : (j++, "would be written"));
      if (order < 0) fprintf(stderr, "  (%s)\n", pa[i - 1] + la);
      else fprintf(stderr, "  (%s)\n", pb[j - 1] + lb);
      same = 0;
      continue;
    }
    char *ta = cts_read_file(pa[i], NULL), *tb = cts_read_file(pb[j], NULL);
    if (!ta || !tb || strcmp(ta, tb)) {
      fprintf(stderr, "tsm-cts library: %s differs from what the generator writes now\n", pa[i]);
      same = 0;
    }
    free(ta);
    free(tb);
    i++, j++;
  }
  for (size_t k = 0; k < na; k++) free(pa[k]);
  for (size_t k = 0; k < nb; k++) free(pb[k]);
  free(pa);
  free(pb);
  return same;
}

static int library_usage(void) {
  fputs("usage: tsm-cts library [--check] [--min K] [--depth N] [--adapter SO] [--cases DIR]\n"
        "                       [--spec DIR] [OUTDIR]\n"
        "Writes the cases that fill the holes of the clause x kind matrix (`tsm-cts\n"
        "coverage --kinds`) the hand-written cases under DIR leave: for every cell a\n"
        "combination (depth N, 2) meets with fewer than K (2) cases, combinations in the\n"
        "enumeration's order, completed against the model through SO (the reference), into\n"
        "OUTDIR (DIR/generated). --check: write into a scratch folder and fail when OUTDIR\n"
        "differs (it is stale: run `make generated`).\n", stderr);
  return 2;
}

int cts_library_main(int argc, char **argv) {
  struct lib_options o;
  if (parse_lib_options(argc, argv, &o, 1)) return library_usage();
  struct cts_spec spec = {0};
  if (cts_spec_load(&spec, cts_spec_dir(o.spec)) != 0) return 2;
  char dir[4096], scratch[] = "/tmp/tsm-cts-library.XXXXXX";
  generated_dir(&o, dir, sizeof dir);
  const char *into = dir;
  if (o.check && !(into = mkdtemp(scratch))) {
    fprintf(stderr, "tsm-cts library: no scratch folder: %s\n", strerror(errno));
    return 2;
  }
  if (!o.check && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "tsm-cts library: cannot make %s: %s\n", dir, strerror(errno));
    return 2;
  }
  struct matrix m = {0};
  struct universe u;
  int rc = count_library(&m, o.cases, dir, 1, &spec) || open_universe(&u, o.adapter, o.depth, 1) ? 2 : 0;
  if (!rc) {
    if (!o.check) cts_gen_clear(dir);
    const struct generation g = {&m, &u, into, o.min, &spec};
    size_t written = generate(&g);
    fprintf(stderr, "tsm-cts library: %zu cases written to %s\n", written, into);
    combo_set_free(&u.set);
    if (o.check && !same_dirs(dir, into)) {
      fprintf(stderr, "tsm-cts library: %s is stale: run `make generated` and commit it\n", dir);
      rc = 1;
    }
  }
  if (o.check) {
    cts_gen_clear(scratch);
    rmdir(scratch);
  }
  free(m.rows);
  cts_spec_free(&spec);
  return rc;
}
