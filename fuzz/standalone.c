/*
 * fuzz/standalone.c: a plain main() for the fuzz targets of fuzz/, for any compiler
 * and without libFuzzer. Arguments that are files or folders (walked recursively) are
 * replayed one input at a time; `-runs=N -seed=S` then runs N generated inputs: random
 * bytes, or a random mutation of a replayed input when there are some, so an adapter
 * built with gcc or shipped as a binary can be fuzzed too. `-max_len=L` bounds a
 * generated input (default 4096); `-save=DIR` writes each generated input to DIR
 * before it runs (so the last file there is the one that crashed). Other `-flag=`
 * arguments are the target's (LLVMFuzzerInitialize) or libFuzzer's and are ignored.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The inputs replayed so far, kept as material for mutation; owned by main. */
struct pool {
  uint8_t **items;
  size_t *sizes;
  size_t n, cap;
};

struct options {
  unsigned long long runs, seed;
  size_t max_len;
  const char *save_dir;
};

static uint64_t rng_state;

static uint64_t rng(void) { /* splitmix64: reproducible from -seed on every platform */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void pool_add(struct pool *p, uint8_t *data, size_t size) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 64;
    p->items = realloc(p->items, p->cap * sizeof *p->items);
    p->sizes = realloc(p->sizes, p->cap * sizeof *p->sizes);
    if (!p->items || !p->sizes) abort();
  }
  p->items[p->n] = data;
  p->sizes[p->n++] = size;
}

static int replay_file(const char *path, struct pool *p) {
  FILE *f = fopen(path, "rb");
  if (!f) return perror(path), 1;
  size_t cap = 4096, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
    if ((n += got) == cap) buf = realloc(buf, cap *= 2);
  fclose(f);
  if (!buf) abort();
  fprintf(stderr, "replay %s (%zu bytes)\n", path, n);
  /* A copy of exactly n bytes, so a read past the input is seen by sanitizers. */
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) abort();
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  pool_add(p, exact, n);
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's entries in name order, so a replay is the same on every file system. */
static int replay_dir(const char *path, struct pool *p, int (*each)(const char *, struct pool *)) {
  DIR *d = opendir(path);
  if (!d) return perror(path), 1;
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    if (n == cap && !(names = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names))) abort();
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) abort();
    snprintf(names[n++], len, "%s/%s", path, e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, compare_names);
  int rc = 0;
  for (size_t i = 0; i < n; i++) rc |= each(names[i], p), free(names[i]);
  free(names);
  return rc;
}

static int replay_path(const char *path, struct pool *p) {
  struct stat st;
  if (stat(path, &st) != 0) return perror(path), 1;
  return S_ISDIR(st.st_mode) ? replay_dir(path, p, replay_path) : replay_file(path, p);
}

/* Fresh bytes, or one of the pool's inputs with a few bytes flipped, inserted or cut. */
static size_t generate(const struct pool *p, size_t max_len, uint8_t *out) {
  size_t n = (size_t)(rng() % (max_len + 1));
  for (size_t i = 0; i < n; i++) out[i] = (uint8_t)rng();
  if (!p->n || rng() % 4 == 0) return n;
  size_t k = (size_t)(rng() % p->n);
  n = p->sizes[k] < max_len ? p->sizes[k] : max_len;
  memcpy(out, p->items[k], n);
  for (int edits = 1 + (int)(rng() % 8); edits > 0 && n > 0; edits--) {
    size_t at = (size_t)(rng() % n);
    switch (rng() % 3) {
    case 0: out[at] = (uint8_t)rng(); break;
    case 1: if (n < max_len) memmove(out + at + 1, out + at, n - at), out[at] = (uint8_t)rng(), n++; break;
    default: memmove(out + at, out + at + 1, n - at - 1), n--; break;
    }
  }
  return n;
}

static void save_input(const char *dir, unsigned long long i, const uint8_t *d, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/gen-%08llu", dir, i);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(d, 1, n, f) != n) perror(path), exit(2);
  fclose(f);
}

static void run_generated(const struct options *o, const struct pool *p) {
  rng_state = o->seed;
  uint8_t *buf = malloc(o->max_len + 1);
  if (!buf) abort();
  for (unsigned long long i = 0; i < o->runs; i++) {
    size_t n = generate(p, o->max_len, buf);
    if (o->save_dir) save_input(o->save_dir, i, buf, n);
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) abort();
    memcpy(exact, buf, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
  }
  free(buf);
  fprintf(stderr, "ran %llu generated inputs (seed %llu)\n", o->runs, o->seed);
}

static int parse_flag(const char *arg, struct options *o) {
  if (!strncmp(arg, "-runs=", 6)) o->runs = strtoull(arg + 6, NULL, 10);
  else if (!strncmp(arg, "-seed=", 6)) o->seed = strtoull(arg + 6, NULL, 10);
  else if (!strncmp(arg, "-max_len=", 9)) o->max_len = strtoull(arg + 9, NULL, 10);
  else if (!strncmp(arg, "-save=", 6)) o->save_dir = arg + 6;
  return arg[0] == '-';
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  struct options o = {0, 1, 4096, NULL};
  struct pool p = {0};
  int rc = 0;
  for (int i = 1; i < argc; i++)
    if (!parse_flag(argv[i], &o)) rc |= replay_path(argv[i], &p);
  if (o.runs) run_generated(&o, &p);
  for (size_t i = 0; i < p.n; i++) free(p.items[i]);
  free(p.items);
  free(p.sizes);
  return rc;
}
