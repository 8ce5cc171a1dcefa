/*
 * harness/src/base/util.c: the helpers of util.h.
 */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void cts_out_of_memory(void) {
  fputs("tsm-cts: out of memory\n", stderr);
  exit(2);
}

void *cts_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) cts_out_of_memory();
  return p;
}

void *cts_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) cts_out_of_memory();
  return p;
}

void *cts_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) cts_out_of_memory();
  return q;
}

char *cts_xstrdup(const char *s) { return cts_xstrndup(s, strlen(s)); }

char *cts_xstrndup(const char *s, size_t n) {
  char *p = cts_xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

void cts_grow(void **items, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return;
  size_t c = *cap ? *cap : 8;
  while (c < need) c *= 2;
  *items = cts_xrealloc(*items, c * elem);
  memset((char *)*items + *cap * elem, 0, (c - *cap) * elem);
  *cap = c;
}

/* Formats into the room the buffer has; only when that is too small, grows it and
 * formats again (most calls format once). */
void cts_buf_vprintf(struct cts_buf *b, const char *fmt, va_list ap) {
  if (b->cap - b->len < 64) cts_grow((void **)&b->buf, &b->cap, b->len + 64, 1);
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, copy);
  va_end(copy);
  if (n < 0) {
    b->buf[b->len] = '\0';
    return;
  }
  if ((size_t)n >= b->cap - b->len) {
    cts_grow((void **)&b->buf, &b->cap, b->len + (size_t)n + 1, 1);
    vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
  }
  b->len += (size_t)n;
}

void cts_buf_printf(struct cts_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cts_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void cts_buf_append(struct cts_buf *b, const char *s, size_t n) {
  cts_grow((void **)&b->buf, &b->cap, b->len + n + 1, 1);
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  b->buf[b->len] = '\0';
}

void cts_buf_free(struct cts_buf *b) {
  free(b->buf);
  b->buf = NULL;
  b->len = b->cap = 0;
}

char *cts_printf_dup(const char *fmt, ...) {
  struct cts_buf b = {0};
  va_list ap;
  va_start(ap, fmt);
  cts_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  return cts_buf_take(&b);
}

char *cts_buf_take(struct cts_buf *b) {
  char *s = b->buf ? b->buf : cts_xstrdup("");
  b->buf = NULL;
  b->len = b->cap = 0;
  return s;
}

/* The replacement of byte c in one output syntax, or NULL to write c as it is.
 * scratch holds a replacement built on the fly. */
typedef const char *escape_fn(unsigned char c, char scratch[8]);

size_t cts_utf8_sequence(const unsigned char *p) {
  if (p[0] < 0x80) return 1;
  size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
  if (p[0] < 0xc2 || p[0] > 0xf4) return 0; /* a continuation byte, or an overlong lead */
  uint32_t cp = p[0] & (0x3f >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
    cp = cp << 6 | (p[i] & 0x3f);
  }
  static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

/* Writes s through `escape`, byte by byte for ASCII; a byte that does not start a valid
 * UTF-8 sequence becomes U+FFFD, so that every report is strict UTF-8 whatever an
 * adapter printed or a file held. */
static void put_escaped(FILE *f, const char *s, escape_fn *escape) {
  char scratch[8];
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t len = cts_utf8_sequence(p);
    if (len == 0) {
      fputs(CTS_REPLACEMENT_CHARACTER, f);
      p++;
      continue;
    }
    const char *e = len == 1 ? escape(*p, scratch) : NULL;
    if (e) fputs(e, f);
    else fwrite(p, 1, len, f);
    p += len;
  }
}

static const char *json_escape(unsigned char c, char scratch[8]) {
  static const char *const named[] = {['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n",
                                      ['\r'] = "\\r", ['\t'] = "\\t"};
  if (c < sizeof named / sizeof named[0] && named[c]) return named[c];
  if (c >= 0x20) return NULL;
  snprintf(scratch, 8, "\\u%04x", c);
  return scratch;
}

static const char *xml_escape(unsigned char c, char scratch[8]) {
  static const char *const named[] = {['<'] = "&lt;", ['>'] = "&gt;", ['&'] = "&amp;",
                                      ['"'] = "&quot;", ['\n'] = "&#10;"};
  (void)scratch;
  if (c < sizeof named / sizeof named[0] && named[c]) return named[c];
  /* XML 1.0 forbids most control characters even as references. */
  return (c < 0x20 && c != '\t') || c == 0x7f ? "?" : NULL;
}

void cts_json_string(FILE *f, const char *s) {
  fputc('"', f);
  put_escaped(f, s, json_escape);
  fputc('"', f);
}

void cts_xml_escaped(FILE *f, const char *s) { put_escaped(f, s, xml_escape); }

char *cts_read_file(const char *path, size_t *len_out) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct cts_buf b = {0};
  char chunk[8192];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) cts_buf_append(&b, chunk, n);
  int err = ferror(f);
  fclose(f);
  if (err) {
    cts_buf_free(&b);
    errno = EIO;
    return NULL;
  }
  if (len_out) *len_out = b.len;
  return cts_buf_take(&b);
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A directory walk: the suffix of the files it lists, the list it appends to (the
 * caller's), and what it has seen: the device and inode of every file and folder, so
 * that a symlink back up the tree ends the descent and a file reached twice is listed
 * once. Owns ids. */
struct walk {
  const char *suffix;
  char ***paths;
  size_t *n, *cap;
  struct file_id {
    dev_t dev;
    ino_t ino;
  } *ids;
  size_t n_ids, cap_ids;
};

/* RETURN 1 the first time st's file is seen, 0 after. */
static int first_visit(struct walk *w, const struct stat *st) {
  for (size_t i = 0; i < w->n_ids; i++)
    if (w->ids[i].dev == st->st_dev && w->ids[i].ino == st->st_ino) return 0;
  struct file_id id = {st->st_dev, st->st_ino};
  CTS_PUSH(w->ids, w->n_ids, w->cap_ids, id);
  return 1;
}

static int not_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Depth first, each folder's entries in name order, so that of two paths to one file
 * the one listed is always the same. */
static void walk(struct walk *w, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return;
  if (S_ISREG(st.st_mode)) {
    if (ends_with(path, w->suffix) && first_visit(w, &st))
      CTS_PUSH(*w->paths, *w->n, *w->cap, cts_xstrdup(path));
    return;
  }
  if (!S_ISDIR(st.st_mode) || !first_visit(w, &st)) return;
  struct dirent **entries = NULL;
  int count = scandir(path, &entries, not_hidden, alphasort);
  for (int i = 0; i < count; i++) {
    struct cts_buf child = {0};
    cts_buf_printf(&child, "%s/%s", path, entries[i]->d_name);
    walk(w, child.buf);
    cts_buf_free(&child);
    free(entries[i]);
  }
  free(entries);
}

int cts_collect_files(const char *path, const char *suffix, char ***paths, size_t *n,
                      size_t *cap) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  size_t first = *n;
  if (S_ISREG(st.st_mode)) {
    CTS_PUSH(*paths, *n, *cap, cts_xstrdup(path));
    return 0;
  }
  struct walk w = {.suffix = suffix, .paths = paths, .n = n, .cap = cap};
  walk(&w, path);
  free(w.ids);
  qsort(*paths + first, *n - first, sizeof(char *), compare_strings);
  return 0;
}

double cts_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
