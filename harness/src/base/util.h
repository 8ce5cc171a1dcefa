/*
 * harness/src/base/util.h: small helpers of the judge: growable buffers and arrays,
 * checked allocation, JSON/XML escaping, file reading and directory walks.
 * The judge is a program, not a library: allocation failure ends it with a message.
 */
#ifndef CTS_UTIL_H
#define CTS_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Ends the judge with "out of memory" (exit status 2). */
_Noreturn void cts_out_of_memory(void);
void *cts_xmalloc(size_t n);
void *cts_xcalloc(size_t n, size_t size);
void *cts_xrealloc(void *p, size_t n);
char *cts_xstrdup(const char *s);
char *cts_xstrndup(const char *s, size_t n);

/* Grow *items (of *cap elements of size elem) so that index `need - 1` fits. */
void cts_grow(void **items, size_t *cap, size_t need, size_t elem);
#define CTS_PUSH(arr, n, cap, value)                                          \
  do {                                                                        \
    cts_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)));               \
    (arr)[(n)++] = (value);                                                   \
  } while (0)

/* A growable NUL-terminated string; owns buf. */
struct cts_buf {
  char *buf;
  size_t len, cap;
};
void cts_buf_printf(struct cts_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cts_buf_vprintf(struct cts_buf *b, const char *fmt, va_list ap);
void cts_buf_append(struct cts_buf *b, const char *s, size_t n);
void cts_buf_free(struct cts_buf *b);
/* Returns the string and leaves b empty; the caller frees it. */
char *cts_buf_take(struct cts_buf *b);
/* A new string (the caller frees it) formatted as printf would. */
char *cts_printf_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The length of the valid UTF-8 sequence that starts at p (1 for ASCII and for the
 * terminating NUL), or 0 when p does not start one (a stray, overlong, surrogate or
 * truncated sequence). The writers below replace such a byte by U+FFFD. */
size_t cts_utf8_sequence(const unsigned char *p);
#define CTS_REPLACEMENT_CHARACTER "\xef\xbf\xbd"

/* s as a JSON string (control characters as \uXXXX) and as XML 1.0 character data
 * (control characters it forbids as '?'); both strict UTF-8. */
void cts_json_string(FILE *f, const char *s);
void cts_xml_escaped(FILE *f, const char *s);

/* Reads a whole file; RETURN malloc'ed and NUL-terminated, or NULL with errno set. */
char *cts_read_file(const char *path, size_t *len_out);

/* Appends to *paths (malloc'ed strings) every regular file under `path` (or `path`
 * itself) whose name ends in `suffix`, sorted; each file once, however many symlinks
 * lead to it, and no symlink back up the tree is followed. Returns 0, or -1 if path is
 * missing. */
int cts_collect_files(const char *path, const char *suffix, char ***paths, size_t *n,
                      size_t *cap);

double cts_now_ms(void);

#endif
