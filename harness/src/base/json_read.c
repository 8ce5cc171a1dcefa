/*
 * harness/src/base/json_read.c: a recursive-descent JSON reader (json_read.h). It reads
 * RFC 8259 JSON; \u escapes become UTF-8 (surrogate pairs joined).
 */
#include "json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_DEPTH 64

/* The parser's cursor; borrows the text. */
struct reader {
  const char *text, *p;
  const char *error;
  int depth;
};

static void skip_space(struct reader *r) {
  while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r') r->p++;
}

static int fail(struct reader *r, const char *why) {
  if (!r->error) r->error = why;
  return -1;
}

static void put_utf8(struct cts_buf *b, unsigned long cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) u[0] = (char)cp, n = 1;
  else if (cp < 0x800) u[0] = (char)(0xc0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
  else if (cp < 0x10000)
    u[0] = (char)(0xe0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
    u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
  else
    u[0] = (char)(0xf0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f)),
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
  cts_buf_append(b, u, n);
}

static int read_hex4(struct reader *r, unsigned long *cp) {
  char hex[5] = {0};
  for (int i = 0; i < 4; i++) {
    if (!strchr("0123456789abcdefABCDEF", r->p[i]) || !r->p[i]) return fail(r, "bad \\u escape");
    hex[i] = r->p[i];
  }
  r->p += 4;
  *cp = strtoul(hex, NULL, 16);
  return 0;
}

static int read_escape(struct reader *r, struct cts_buf *b) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *k = *r->p ? strchr(from, *r->p) : NULL;
  if (k) {
    cts_buf_append(b, &to[k - from], 1);
    r->p++;
    return 0;
  }
  if (*r->p++ != 'u') return fail(r, "bad escape");
  unsigned long cp, low;
  if (read_hex4(r, &cp) != 0) return -1;
  if (cp >= 0xd800 && cp < 0xdc00 && r->p[0] == '\\' && r->p[1] == 'u') {
    r->p += 2;
    if (read_hex4(r, &low) != 0) return -1;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
  }
  put_utf8(b, cp);
  return 0;
}

static int read_string(struct reader *r, char **out) {
  struct cts_buf b = {0};
  cts_buf_append(&b, "", 0);
  r->p++; /* the opening quote */
  while (*r->p != '"') {
    if (!*r->p || (unsigned char)*r->p < 0x20) {
      cts_buf_free(&b);
      return fail(r, "unterminated string");
    }
    if (*r->p == '\\') {
      r->p++;
      if (read_escape(r, &b) != 0) {
        cts_buf_free(&b);
        return -1;
      }
    } else {
      cts_buf_append(&b, r->p++, 1);
    }
  }
  r->p++;
  *out = cts_buf_take(&b);
  return 0;
}

static int read_value(struct reader *r, struct cts_json *v);

/* An array or an object: `close` is ']' or '}'. */
static int read_container(struct reader *r, struct cts_json *v, char close) {
  if (++r->depth > MAX_DEPTH) return fail(r, "nested too deep");
  r->p++;
  skip_space(r);
  while (*r->p != close) {
    if (v->n && *r->p++ != ',') return fail(r, "expected ','");
    skip_space(r);
    if (close == '}') {
      char *key = NULL;
      if (*r->p != '"' || read_string(r, &key) != 0) return fail(r, "expected a key");
      cts_grow((void **)&v->keys, &v->key_cap, v->n + 1, sizeof key);
      v->keys[v->n] = key; /* the member's value, pushed next, makes it count */
      skip_space(r);
      if (*r->p != ':') {
        free(key);
        v->keys[v->n] = NULL;
        return fail(r, "expected ':'");
      }
      r->p++;
    }
    struct cts_json item;
    int rc = read_value(r, &item);
    CTS_PUSH(v->items, v->n, v->cap, item);
    if (rc != 0) return -1;
    skip_space(r);
  }
  r->p++;
  r->depth--;
  return 0;
}

static int read_literal(struct reader *r, struct cts_json *v) {
  static const struct { const char *word; enum cts_json_type type; double value; } words[] = {
      {"true", CTS_JSON_BOOL, 1}, {"false", CTS_JSON_BOOL, 0}, {"null", CTS_JSON_NULL, 0}};
  for (size_t i = 0; i < 3; i++) {
    size_t len = strlen(words[i].word);
    if (!strncmp(r->p, words[i].word, len)) {
      v->type = words[i].type, v->number = words[i].value;
      r->p += len;
      return 0;
    }
  }
  char *end = NULL;
  v->number = strtod(r->p, &end);
  if (end == r->p) return fail(r, "unexpected character");
  v->type = CTS_JSON_NUMBER;
  r->p = end;
  return 0;
}

static int read_value(struct reader *r, struct cts_json *v) {
  memset(v, 0, sizeof *v);
  skip_space(r);
  if (*r->p == '"') {
    v->type = CTS_JSON_STRING;
    return read_string(r, &v->str);
  }
  if (*r->p == '[') {
    v->type = CTS_JSON_ARRAY;
    return read_container(r, v, ']');
  }
  if (*r->p == '{') {
    v->type = CTS_JSON_OBJECT;
    return read_container(r, v, '}');
  }
  return read_literal(r, v);
}

int cts_json_parse(const char *text, struct cts_json *out, char *err, size_t err_len) {
  struct reader r = {text, text, NULL, 0};
  int rc = read_value(&r, out);
  skip_space(&r);
  if (rc == 0 && *r.p) rc = fail(&r, "text after the value");
  if (rc != 0) {
    snprintf(err, err_len, "%s at byte %td", r.error, r.p - text);
    cts_json_free(out);
  }
  return rc;
}

void cts_json_free(struct cts_json *v) {
  for (size_t i = 0; i < v->n; i++) {
    cts_json_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  memset(v, 0, sizeof *v);
}

const struct cts_json *cts_json_get(const struct cts_json *obj, const char *key) {
  if (!obj || obj->type != CTS_JSON_OBJECT) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (!strcmp(obj->keys[i], key)) return &obj->items[i];
  return NULL;
}

const char *cts_json_str(const struct cts_json *obj, const char *key, const char *fallback) {
  const struct cts_json *v = cts_json_get(obj, key);
  return v && v->type == CTS_JSON_STRING ? v->str : fallback;
}

double cts_json_num(const struct cts_json *obj, const char *key, double fallback) {
  const struct cts_json *v = cts_json_get(obj, key);
  return v && (v->type == CTS_JSON_NUMBER || v->type == CTS_JSON_BOOL) ? v->number : fallback;
}
