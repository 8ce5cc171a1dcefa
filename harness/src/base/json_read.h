/*
 * harness/src/base/json_read.h: a small JSON reader for `tsm-cts merge`, which reads the
 * reports the judge and the Python bridge write (harness/schema/results.schema.json).
 */
#ifndef CTS_JSON_READ_H
#define CTS_JSON_READ_H

#include <stddef.h>

enum cts_json_type { CTS_JSON_NULL, CTS_JSON_BOOL, CTS_JSON_NUMBER, CTS_JSON_STRING,
                     CTS_JSON_ARRAY, CTS_JSON_OBJECT };

/* A parsed value. Owns str, items and keys (and, through them, the whole tree). */
struct cts_json {
  enum cts_json_type type;
  double number;           /* NUMBER; BOOL: 0 or 1 */
  char *str;               /* STRING, NUL-terminated (an embedded \u0000 ends it) */
  struct cts_json *items;  /* ARRAY and OBJECT: n values */
  char **keys;             /* OBJECT: n keys */
  size_t n, cap, key_cap;
};

/* Parses text. RETURN 0, or -1 with a message in err (byte offset included). */
int cts_json_parse(const char *text, struct cts_json *out, char *err, size_t err_len);
void cts_json_free(struct cts_json *v);
/* The member `key` of an object, or NULL. */
const struct cts_json *cts_json_get(const struct cts_json *obj, const char *key);
/* The string member `key`, or `fallback` when it is missing or not a string. */
const char *cts_json_str(const struct cts_json *obj, const char *key, const char *fallback);
double cts_json_num(const struct cts_json *obj, const char *key, double fallback);

#endif
