/*
 * harness/src/lang/case_json.c: a parsed case as one line of JSON, for `tsm-cts parse --json`
 * and any tool that reads cases (the Python runner of .pytsm cases reads nothing else).
 * The format is described in cases/README.md ("Reading cases from a tool"): the
 * frontmatter with its defaults applied, the warnings, and the statement tree, each
 * statement with its row's kind, its line and column, its operands by name and the
 * fields of its row's shape (stmt_table.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "case.h"
#include "opsem.h"
#include "util.h"

static void put_key(FILE *f, const char *key) {
  fputc(',', f);
  cts_json_string(f, key);
  fputc(':', f);
}

static void put_str(FILE *f, const char *key, const char *s) {
  put_key(f, key);
  if (s)
    cts_json_string(f, s);
  else
    fputs("null", f);
}

static void put_int(FILE *f, const char *key, int64_t v) {
  put_key(f, key);
  fprintf(f, "%lld", (long long)v);
}

static void put_bool(FILE *f, const char *key, int v) {
  put_key(f, key);
  fputs(v ? "true" : "false", f);
}

/* The shortest decimal that reads back as v; JSON has no NaN or infinity: null. */
static void put_number(FILE *f, double v) {
  char buf[40];
  if (!isfinite(v)) {
    fputs("null", f);
    return;
  }
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, f);
}

typedef void (*put_item_fn)(FILE *f, const void *items, size_t i);

/* `"key":[...]`, item writing the i-th of items. */
static void put_array(FILE *f, const char *key, const void *items, size_t n, put_item_fn item) {
  put_key(f, key);
  fputc('[', f);
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    item(f, items, i);
  }
  fputc(']', f);
}

static void number_item(FILE *f, const void *items, size_t i) {
  put_number(f, ((const double *)items)[i]);
}

static void int_item(FILE *f, const void *items, size_t i) {
  fprintf(f, "%lld", (long long)((const int64_t *)items)[i]);
}

static void string_item(FILE *f, const void *items, size_t i) {
  cts_json_string(f, ((char *const *)items)[i]);
}

static void put_numbers(FILE *f, const char *key, const double *v, size_t n) {
  put_array(f, key, v, n, number_item);
}

static void put_ints(FILE *f, const char *key, const int64_t *v, size_t n) {
  put_array(f, key, v, n, int_item);
}

static void put_strings(FILE *f, const char *key, char *const *v, size_t n) {
  put_array(f, key, v, n, string_item);
}

/* A symbol by name: null when absent (-1), "none" for `none` (-2). */
static void put_sym(FILE *f, const struct cts_case *c, const char *key, int sym) {
  put_str(f, key, sym >= 0 ? c->syms[sym].name : sym == -2 ? "none" : NULL);
}

/* The names of the bits set in mask, by index in the NULL-terminated names. */
static void put_bit_names(FILE *f, const char *key, const char *const *names, unsigned mask) {
  put_key(f, key);
  fputc('[', f);
  for (int i = 0, first = 1; names[i]; i++) {
    if (!(mask & (1u << i))) continue;
    fputs(first ? "" : ",", f);
    cts_json_string(f, names[i]);
    first = 0;
  }
  fputc(']', f);
}

static void put_stmt(FILE *f, const struct cts_case *c, const struct cts_stmt *st);

static void put_block(FILE *f, const struct cts_case *c, const char *key,
                      const struct cts_block *b) {
  put_key(f, key);
  fputc('[', f);
  for (size_t i = 0; i < b->n; i++) {
    if (i) fputc(',', f);
    put_stmt(f, c, &b->items[i]);
  }
  fputc(']', f);
}

static void put_inner(FILE *f, const struct cts_case *c, const struct cts_stmt *inner) {
  put_key(f, "inner");
  put_stmt(f, c, inner);
}

/* ---- the fields of each shape ------------------------------------------------------ */

static void put_literal(FILE *f, const struct cts_literal *lit) {
  put_str(f, "fill", cts_fill_names[lit->fill]);
  put_str(f, "dtype", cts_py_dtype_name(lit->dtype));
  put_ints(f, "shape", lit->shape, (size_t)lit->ndim);
  if (lit->fill == CTS_FULL) put_numbers(f, "scalar", &lit->scalar, 1);
  if (lit->fill == CTS_VALUES) put_numbers(f, "values", lit->vals, lit->nvals);
}

static void put_dl_opts(FILE *f, const struct cts_dl_opts *dl) {
  put_str(f, "form", dl->form == TSM_DLPACK_VERSIONED ? "versioned" : "legacy");
  if (dl->n_strides) put_ints(f, "strides", dl->strides, (size_t)dl->n_strides);
  put_bool(f, "nostrides", dl->no_strides);
  put_int(f, "offset", dl->offset);
  put_ints(f, "version", (int64_t[]){dl->major, dl->minor}, 2);
  put_bool(f, "readonly", dl->readonly);
  put_bool(f, "copied", dl->copied);
  put_bool(f, "nodeleter", dl->no_deleter);
  put_bool(f, "nulldata", dl->null_data);
  put_str(f, "device", cts_where_names[dl->where]);
  if (dl->bits) put_ints(f, "dl_dtype", (int64_t[]){dl->code, dl->bits, dl->lanes}, 3);
}

/* The options of xalloc, forge and exchange: what the case wrote, nothing else. */
static void put_py_xapi(FILE *f, const struct cts_py_xapi *x) {
  if (x->has_proto) {
    put_ints(f, "shape", x->shape, (size_t)x->ndim);
    put_str(f, "dtype", cts_opsem_dtype_name(x->dtype));
  }
  if (x->has_device) put_ints(f, "device", x->device, 2);
  if (x->has_major) put_int(f, "major", x->major);
  if (x->has_code) put_ints(f, "code", x->code, 2);
  put_bool(f, "chain", x->chain);
}

static void put_py_export(FILE *f, const struct cts_py_export *e) {
  put_str(f, "form", cts_py_form_names[e->form]);
  if (e->has_max_version) put_ints(f, "max_version", e->max_version, 2);
  if (e->has_copy) put_bool(f, "copy", e->copy);
  if (e->stream_object) put_str(f, "stream", "object");
  else if (e->stream_new) put_str(f, "stream", "new");
  else if (e->has_stream) put_int(f, "stream", e->stream);
  if (e->has_device) put_ints(f, "device", e->device, 2);
}

/* The expectation's name: its word, or for a negated one "no" and the word it negates. */
static const char *py_expect_name(int what) {
  switch (what) {
    case CTS_PY_NOFLAG: return "noflag";
    case CTS_PY_NOSHARES: return "noshares";
    case CTS_PY_NOWRITEABLE: return "nowriteable";
    default: return cts_py_expect_names[what];
  }
}

/* The `v` of the expectations that compare with a list (or `values == N`, a scalar).
 * RETURN 0 for another kind. */
static int put_py_expected_list(FILE *f, const struct cts_py_expectation *e) {
  switch (e->what) {
    case CTS_PY_DEVICE: put_ints(f, "v", e->pair, 2); return 1;
    case CTS_PY_SHAPE:
    case CTS_PY_STRIDES: put_ints(f, "v", e->dims, (size_t)e->ndim); return 1;
    case CTS_PY_VIEW: put_numbers(f, "v", e->v, e->n); return 1;
    case CTS_PY_VALUES:
      if (e->scalar) {
        put_key(f, "v");
        put_number(f, e->v[0]);
      } else {
        put_numbers(f, "v", e->v, e->n);
      }
      return 1;
    default: return 0;
  }
}

/* `v`: what the expectation compares with, typed as its kind wants. alive, xapi,
 * shares, writeable and their negations compare with nothing. */
static void put_py_expect(FILE *f, const struct cts_py_expectation *e) {
  put_str(f, "what", py_expect_name(e->what));
  if (put_py_expected_list(f, e)) return;
  switch (e->what) {
    case CTS_PY_FLAG:
    case CTS_PY_NOFLAG: put_str(f, "flag", cts_py_flag_names[e->flag]); break;
    case CTS_PY_NAME: put_str(f, "v", cts_py_capsule_names[e->word]); break;
    case CTS_PY_DTYPE: put_str(f, "v", cts_py_dtype_name(e->word)); break;
    case CTS_PY_WORKSTREAM:
      put_ints(f, "device", e->pair, 2);
      put_int(f, "v", e->want);
      break;
    case CTS_PY_VERSION:
    case CTS_PY_DELETED:
    case CTS_PY_OFFSET: put_int(f, "v", e->want); break;
    default: break;
  }
}

static void put_counters(FILE *f, const char *key, unsigned mask, const int64_t *want) {
  put_key(f, key);
  fputc('{', f);
  for (int i = 0, first = 1; i < CTS_N_STATS; i++) {
    if (!(mask & (1u << i))) continue;
    fputs(first ? "" : ",", f);
    cts_json_string(f, cts_stat_names[i]);
    fprintf(f, ":%lld", (long long)want[i]);
    first = 0;
  }
  fputc('}', f);
}

/* `LIST | LIST`: want is variant (a)'s list, want_b variant (b)'s (SCOPE.STAT.3). */
static void put_stats(FILE *f, const struct cts_stmt *st) {
  put_str(f, "of", st->u.stats.kind == TSM_KIND_TENSOR ? "tensor" : "composite");
  put_counters(f, "want", st->u.stats.mask, st->u.stats.want);
  if (st->u.stats.variants) put_counters(f, "want_b", st->u.stats.mask, st->u.stats.want_b);
}

static void put_state(FILE *f, int state) {
  static const char *const names[] = {"open", "capped", "closed", "disposed", "released"};
  put_str(f, "state", names[state]);
}

/* The shapes that hold a statement tree: a block's body, an `expect error`'s action. */
static int put_nested(FILE *f, const struct cts_case *c, const struct cts_stmt *st) {
  switch (cts_stmt_shape(st->kind)) {
    case CTS_SHAPE_REPEAT: put_int(f, "times", st->u.repeat.times); break;
    case CTS_SHAPE_THREAD: put_str(f, "thread", c->threads[st->u.thread.number]); break;
    case CTS_SHAPE_FLAT: put_int(f, "mib", st->u.flat.mib); break;
    case CTS_SHAPE_BLOCK: break;
    case CTS_SHAPE_ERROR:
      put_str(f, "code", cts_err_name(st->u.error.code));
      put_inner(f, c, st->u.error.inner);
      return 1;
    case CTS_SHAPE_PY_ERROR:
      put_bit_names(f, "exc", cts_py_exc_names, st->u.py_error.exc);
      put_inner(f, c, st->u.py_error.inner);
      return 1;
    default: return 0;
  }
  put_block(f, c, "body", &st->body);
  return 1;
}

/* The shapes of the statements that make or act on a tensor, a composite or a graph.
 * RETURN 0 for another shape. */
static int put_action_fields(FILE *f, const struct cts_stmt *st) {
  switch (cts_stmt_shape(st->kind)) {
    case CTS_SHAPE_LITERAL: put_literal(f, &st->u.literal); return 1;
    case CTS_SHAPE_MAKE:
      put_literal(f, &st->u.make.literal);
      put_dl_opts(f, &st->u.make.dl);
      return 1;
    case CTS_SHAPE_OP:
      put_str(f, "op", cts_op_name(st->u.op.op));
      if (st->u.op.op == TSM_OP_RESHAPE)
        put_ints(f, "shape", st->u.op.shape, (size_t)st->u.op.ndim);
      return 1;
    case CTS_SHAPE_PACK: put_bool(f, "sorted", st->u.pack.sorted); return 1;
    case CTS_SHAPE_COMPONENT: put_int(f, "index", st->u.component.index); return 1;
    case CTS_SHAPE_EXPORT:
      put_str(f, "form", st->u.export.form == TSM_DLPACK_VERSIONED ? "versioned" : "legacy");
      put_bool(f, "copy", (st->u.export.request & TSM_DLPACK_COPY) != 0);
      put_bool(f, "readonly", (st->u.export.request & TSM_DLPACK_READ_ONLY) != 0);
      return 1;
    case CTS_SHAPE_FLAGS:
      put_bit_names(f, "flags", cts_graph_flag_names, st->u.graph_flags.bits);
      return 1;
    default: return 0;
  }
}

/* The shapes of the expectations of a .tsm case. RETURN 0 for another shape. */
static int put_expect_fields(FILE *f, const struct cts_stmt *st) {
  switch (cts_stmt_shape(st->kind)) {
    case CTS_SHAPE_COUNT: put_int(f, "want", st->u.count.want); return 1;
    case CTS_SHAPE_TRUTH: put_bool(f, "holds", st->u.truth.holds); return 1;
    case CTS_SHAPE_STATE: put_state(f, st->u.state.want); return 1;
    case CTS_SHAPE_VALUES:
      if (st->u.values.unspecified) put_bool(f, "unspecified", 1);
      else put_numbers(f, "values", st->u.values.v, st->u.values.n);
      return 1;
    case CTS_SHAPE_DIMS: put_ints(f, "shape", st->u.dims.shape, (size_t)st->u.dims.ndim); return 1;
    case CTS_SHAPE_STATS: put_stats(f, st); return 1;
    default: return 0;
  }
}

/* The shapes of the capsule-level statements (.pytsm) but `expect error`'s. */
static void put_capsule_fields(FILE *f, const struct cts_stmt *st) {
  switch (cts_stmt_shape(st->kind)) {
    case CTS_SHAPE_PY_EXPORT: put_py_export(f, &st->u.py_export); break;
    case CTS_SHAPE_PY_EXPECT: put_py_expect(f, &st->u.py_expect); break;
    case CTS_SHAPE_PY_XAPI: put_py_xapi(f, &st->u.py_xapi); break;
    case CTS_SHAPE_PY_VIEW:
      if (st->kind == CTS_PY_SLICE) {
        put_int(f, "dim", st->u.py_view.dim);
        put_int(f, "start", st->u.py_view.start);
        put_int(f, "stop", st->u.py_view.stop);
        put_int(f, "step", st->u.py_view.step);
      }
      break;
    case CTS_SHAPE_PY_STRIDED:
      put_ints(f, "shape", st->u.py_strided.shape, (size_t)st->u.py_strided.ndim);
      put_ints(f, "bytes", st->u.py_strided.bytes, (size_t)st->u.py_strided.ndim);
      break;
    case CTS_SHAPE_PY_UNEXPORTABLE:
      put_str(f, "what", cts_py_unexportable_names[st->u.py_unexportable.what]);
      break;
    default: break;
  }
}

static void put_shape_fields(FILE *f, const struct cts_case *c, const struct cts_stmt *st) {
  if (put_nested(f, c, st) || put_action_fields(f, st) || put_expect_fields(f, st)) return;
  put_capsule_fields(f, st);
}

static void put_stmt(FILE *f, const struct cts_case *c, const struct cts_stmt *st) {
  fputs("{\"kind\":", f);
  cts_json_string(f, cts_stmt_kind_name(st->kind));
  put_str(f, "keyword", cts_stmt_keyword(st->kind));
  put_int(f, "line", st->line);
  put_int(f, "col", st->col);
  put_str(f, "text", st->text);
  put_sym(f, c, "dst", st->dst);
  put_sym(f, c, "a", st->a);
  put_sym(f, c, "b", st->b);
  put_sym(f, c, "out", st->out);
  put_key(f, "list");
  fputc('[', f);
  for (size_t i = 0; i < st->n_list; i++) {
    if (i) fputc(',', f);
    cts_json_string(f, c->syms[st->list[i]].name);
  }
  fputc(']', f);
  put_shape_fields(f, c, st);
  fputc('}', f);
}

void cts_case_json(FILE *f, const struct cts_case *c) {
  static char *const any[] = {"any"};
  fputs("{\"path\":", f);
  cts_json_string(f, c->path);
  put_str(f, "name", c->name);
  put_str(f, "dialect", c->capsule_level ? "pytsm" : "tsm");
  put_str(f, "description", c->description);
  put_strings(f, "clauses", c->clauses, c->n_clauses);
  put_str(f, "origin", c->origin);
  put_strings(f, "requires", c->requires, c->n_requires);
  put_strings(f, "tags", c->tags, c->n_tags);
  put_strings(f, "roles", c->roles, c->n_roles);
  put_strings(f, "devices", c->n_devices ? c->devices : any, c->n_devices ? c->n_devices : 1);
  if (c->timeout_ms) put_int(f, "timeout", c->timeout_ms);
  else put_str(f, "timeout", NULL);
  put_strings(f, "warnings", c->warnings, c->n_warnings);
  put_block(f, c, "body", &c->body);
  fputs("}\n", f);
}
