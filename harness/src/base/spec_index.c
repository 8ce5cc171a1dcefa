/*
 * harness/src/base/spec_index.c: reading clause ids from the spec chapters, and finding
 * the library's folders (spec, cases, expectations) from a source tree or an install.
 */
#include "spec_index.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* PREFIX "." TOPIC ("." TOPIC)* "." NUMBER: upper-case words, then digits. */
int cts_clause_id_valid(const char *id) {
  const char *p = id;
  int words = 0;
  for (;;) {
    const char *start = p;
    while (isupper((unsigned char)*p)) p++;
    if (p == start) break;
    if (*p != '.') return 0;
    p++;
    words++;
  }
  if (words < 2) return 0;
  const char *digits = p;
  while (isdigit((unsigned char)*p)) p++;
  return p != digits && *p == '\0';
}

static const char *const strength_names[] = {"", "MUST", "SHOULD", "MAY", "TSM", "withdrawn"};

const char *cts_strength_name(int strength) {
  return strength > CTS_STRENGTH_NONE && strength <= CTS_STRENGTH_WITHDRAWN
             ? strength_names[strength]
             : "";
}

/* The strength in the parentheses right after a clause's bold id ("** (MUST) ..."). */
static int read_strength(const char *after_id, const char *eol) {
  if (*after_id != ' ' || after_id[1] != '(') return CTS_STRENGTH_NONE;
  const char *open = after_id + 2;
  const char *close = memchr(open, ')', (size_t)(eol - open));
  if (!close) return CTS_STRENGTH_NONE;
  for (int s = CTS_STRENGTH_MUST; s <= CTS_STRENGTH_WITHDRAWN; s++)
    if ((size_t)(close - open) == strlen(strength_names[s]) &&
        !strncmp(open, strength_names[s], (size_t)(close - open)))
      return s;
  return CTS_STRENGTH_NONE;
}

static void scan_chapter(struct cts_spec *spec, const char *path, const char *file) {
  char *text = cts_read_file(path, NULL);
  if (!text) return;
  int line = 1;
  struct cts_clause *open_clause = NULL; /* the clause whose block the scan is in */
  for (char *p = text; *p;) {
    char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > 4 && p[0] == '*' && p[1] == '*') {
      char *end = strstr(p + 2, "**");
      if (end && end < p + len) {
        char *id = cts_xstrndup(p + 2, (size_t)(end - p - 2));
        if (cts_clause_id_valid(id)) {
          struct cts_clause c = {id, cts_xstrdup(file), line, 0,
                                 read_strength(end + 2, p + len), 0};
          CTS_PUSH(spec->clauses, spec->n, spec->cap, c);
          open_clause = &spec->clauses[spec->n - 1];
        } else {
          free(id);
        }
      }
    } else if (p[0] == '#') {
      open_clause = NULL; /* a heading ends a clause's block */
    } else if (open_clause && !strncmp(p, "Source: ", 8)) {
      open_clause->has_source = 1;
    }
    line++;
    if (!eol) break;
    p = eol + 1;
  }
  free(text);
}

int cts_spec_load(struct cts_spec *spec, const char *dir) {
  memset(spec, 0, sizeof *spec);
  char **files = NULL;
  size_t n = 0, cap = 0;
  if (cts_collect_files(dir, ".md", &files, &n, &cap) != 0) return -1;
  for (size_t i = 0; i < n; i++) {
    const char *slash = strrchr(files[i], '/');
    scan_chapter(spec, files[i], slash ? slash + 1 : files[i]);
    free(files[i]);
  }
  free(files);
  return 0;
}

int cts_spec_check_grades(const struct cts_spec *spec, const char *spec_dir, FILE *out) {
  int bad = 0;
  for (size_t i = 0; i < spec->n; i++) {
    const struct cts_clause *c = &spec->clauses[i];
    if (c->strength == CTS_STRENGTH_WITHDRAWN) continue;
    if (c->strength == CTS_STRENGTH_NONE)
      fprintf(out, "%s/%s:%d: %s has no strength: (MUST), (SHOULD), (MAY) or (TSM) after "
                   "its id (spec/README.md, \"Strengths\")\n", spec_dir, c->file, c->line, c->id);
    if (!c->has_source)
      fprintf(out, "%s/%s:%d: %s has no line beginning `Source: ` naming the text that "
                   "governs it, or `Source: tsm:` and why the suite decides\n",
              spec_dir, c->file, c->line, c->id);
    bad += c->strength == CTS_STRENGTH_NONE || !c->has_source;
  }
  return bad;
}

struct cts_clause *cts_spec_find(const struct cts_spec *spec, const char *id) {
  for (size_t i = 0; i < spec->n; i++)
    if (strcmp(spec->clauses[i].id, id) == 0) return &spec->clauses[i];
  return NULL;
}

void cts_spec_free(struct cts_spec *spec) {
  for (size_t i = 0; i < spec->n; i++) {
    free(spec->clauses[i].id);
    free(spec->clauses[i].file);
  }
  free(spec->clauses);
  memset(spec, 0, sizeof *spec);
}

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *cts_library_dir(const char *explicit_dir, const char *env_name,
                            const char *source_dir, const char *installed_name) {
  /* One buffer per installed folder the judge looks up (spec, cases, expectations). */
  static char found[4][4096];
  static int used;
  if (explicit_dir) return explicit_dir;
  const char *env = getenv(env_name);
  if (env && *env) return env;
  if (is_dir(source_dir)) return source_dir;
  char *exe = found[used % 4];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof found[0] - 64 - strlen(installed_name));
  char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
  if (slash) {
    sprintf(slash, "/../share/tsm-cts/%s", installed_name);
    if (is_dir(exe)) {
      used++;
      return exe;
    }
  }
  return source_dir;
}

const char *cts_spec_dir(const char *explicit_dir) {
  return cts_library_dir(explicit_dir, "TSM_CTS_SPEC", "spec", "spec");
}
