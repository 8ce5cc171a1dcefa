/*
 * harness/src/lang/case.h: a parsed case file (cases/README.md): its frontmatter, its symbol
 * table and its statement tree. The statement kinds are the rows of the statement table
 * (stmt_table.h); a statement is a tagged union whose member its row's shape names. A
 * case owns all of it; cts_case_free releases it. Parsed by case_parse.c, case_stmt.c
 * and case_lex.c, from `.tsm` files and capsule-level `.pytsm` ones; written as JSON by
 * case_json.c.
 */
#ifndef CTS_CASE_H
#define CTS_CASE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "dlpack_judge.h"
#include "stmt_table.h"
#include "tsm/adapter.h"

struct cts_spec;

/* One kind per row of the statement table (stmt_table.h). */
enum cts_stmt_kind {
#define CTS__KIND(kind, ...) CTS_##kind,
  CTS_STATEMENTS(CTS__KIND)
#undef CTS__KIND
  CTS_N_STMT_KINDS
};

enum cts_stat {
  CTS_STAT_CREATED_IN,
  CTS_STAT_CREATED_OUTSIDE,
  CTS_STAT_DISPOSED_IN,
  CTS_STAT_DISPOSED_OUTSIDE,
  CTS_STAT_ATTACHED,
  CTS_STAT_DETACHED,
  CTS_STAT_LIVE,
  CTS_N_STATS
};

enum cts_create_kind { CTS_ZEROS, CTS_ONES, CTS_FULL, CTS_ARANGE, CTS_VALUES };
enum cts_state_name { CTS_STATE_OPEN, CTS_STATE_CAPPED, CTS_STATE_CLOSED, CTS_STATE_DISPOSED,
                      CTS_STATE_RELEASED };

enum cts_sym_kind {
  CTS_SYM_MANAGER = 1,
  CTS_SYM_TENSOR = 2,
  CTS_SYM_SCOPE = 4,
  CTS_SYM_COMPOSITE = 8,
  CTS_SYM_DLPACK = 16, /* a managed tensor the judge holds or handed over */
  CTS_SYM_GRAPH = 32,
  CTS_SYM_NODE = 64,   /* a graph tensor */
  CTS_SYM_ARRAY = 128, /* .pytsm: a producer's array */
  CTS_SYM_CAPSULE = 256, /* .pytsm: a DLPack capsule */
  CTS_SYM_PY_ANY = CTS_SYM_ARRAY | CTS_SYM_CAPSULE | CTS_SYM_TENSOR, /* .pytsm `drop` */
  CTS_SYM_RESOURCE = CTS_SYM_TENSOR | CTS_SYM_COMPOSITE,
  CTS_SYM_ANY = 15     /* bogus: any kind but a DLPack tensor */
};

/* Where a judge-made DLPack tensor says its memory is. */
enum cts_dl_where { CTS_DL_WHERE_HOST, CTS_DL_WHERE_CPU, CTS_DL_WHERE_CUDA_HOST,
                    CTS_DL_WHERE_CUDA_MANAGED, CTS_DL_WHERE_OPENCL, CTS_DL_WHERE_VULKAN };

/* The options of `make` (cases/README.md, DLPack); the elements are the literal's. */
struct cts_dl_opts {
  int form;              /* enum tsm_dlpack_form */
  int no_strides;        /* NULL strides */
  int n_strides;         /* given strides, or 0 for compact ones */
  int64_t strides[CTS_DL_MAX_DIMS];
  int64_t offset;        /* byte_offset */
  int64_t major, minor;
  int readonly, copied, no_deleter, null_data;
  int padded;            /* a sub-byte dtype one element per byte (versioned flag) */
  int where;             /* enum cts_dl_where */
  int code, bits, lanes; /* dtype; 0 bits: the literal's f32 or i32 */
};

/* A tensor written in the case: `tensor = zeros ...`, `node = leaf ...`, `dlpack =
 * make ...`. The statement owns vals. */
struct cts_literal {
  int fill;       /* enum cts_create_kind */
  int dtype;      /* enum tsm_dtype */
  int ndim;       /* at most TSM_MAX_DIMS, a `make`'s CTS_DL_MAX_DIMS */
  int64_t shape[CTS_DL_MAX_DIMS];
  double scalar;  /* CTS_FULL */
  double *vals;   /* CTS_VALUES */
  size_t nvals;
};

/* The options of a capsule-level `capsule C = export A ...` (.pytsm, __dlpack__'s
 * keywords); a has_ flag is 0 when the case leaves that keyword out. */
struct cts_py_export {
  int form;                     /* enum cts_py_form */
  int has_max_version, has_copy, has_stream, has_device;
  int64_t max_version[2];
  int copy;
  int64_t stream;
  int stream_object;            /* `stream object`: a stream that is no integer */
  int stream_new;               /* `stream new`: a stream the producer's framework makes */
  int64_t device[2];
};

/* The options of the capsule-level statements of the DLPack 1.3 exchange table (.pytsm):
 * the prototype of `xalloc` and `forge` (has_proto: SHAPE DTYPE), their `device (T, I)`,
 * `forge`'s and `exchange`'s `major N`, `forge`'s `code (C, B)`, `exchange`'s `chain`; a
 * has_ flag is 0 when the case leaves that option out. */
struct cts_py_xapi {
  int has_proto, ndim, dtype;
  int64_t shape[TSM_MAX_DIMS];
  int has_device, has_major, chain, has_code;
  int64_t device[2], major, code[2]; /* code: forge's (type code, bits) */
};

/* The capsule-level expectations (.pytsm `expect WHAT X ...`). */
enum cts_py_expect { CTS_PY_NAME, CTS_PY_VERSION, CTS_PY_FLAG, CTS_PY_NOFLAG, CTS_PY_DELETED,
                     CTS_PY_VALUES, CTS_PY_SHAPE, CTS_PY_DTYPE, CTS_PY_DEVICE, CTS_PY_STRIDES,
                     CTS_PY_OFFSET, CTS_PY_ALIVE, CTS_PY_XAPI, CTS_PY_WORKSTREAM, CTS_PY_VIEW,
                     CTS_PY_SHARES, CTS_PY_WRITEABLE, CTS_PY_NOSHARES, CTS_PY_NOWRITEABLE,
                     CTS_N_PY_EXPECTS };
enum cts_py_form { CTS_PY_FORM_NONE, CTS_PY_FORM_VERSIONED, CTS_PY_FORM_LEGACY };
/* The exceptions `expect error` of a .pytsm names, as bits. */
enum cts_py_exc { CTS_PY_BUFFER_ERROR = 1, CTS_PY_VALUE_ERROR = 2, CTS_PY_TYPE_ERROR = 4,
                  CTS_PY_RUNTIME_ERROR = 8, CTS_PY_ANY_ERROR = 16 };

/* A capsule-level `expect WHAT X ...` (.pytsm). The statement owns v. */
struct cts_py_expectation {
  int what;                   /* enum cts_py_expect */
  int flag;                   /* FLAG, NOFLAG: the index in cts_py_flag_names */
  int word;                   /* NAME: the index in cts_py_capsule_names; DTYPE: tsm_dtype */
  int scalar;                 /* VALUES: `== N`, not a list */
  int64_t pair[2];            /* DEVICE, WORKSTREAM (the device asked about) */
  int64_t want;               /* VERSION, DELETED, OFFSET, WORKSTREAM */
  double *v;                  /* VALUES, VIEW */
  size_t n;
  int ndim;                   /* SHAPE, STRIDES */
  int64_t dims[TSM_MAX_DIMS];
};

/* The names of the capsule-level words, NULL-terminated, indexed by their enums. */
extern const char *const cts_py_expect_names[], *const cts_py_capsule_names[],
    *const cts_py_exc_names[], *const cts_py_form_names[], *const cts_py_flag_names[],
    *const cts_py_unexportable_names[];

/* The names of enum cts_create_kind, enum cts_dl_where, enum tsm_graph_flag bits and enum
 * cts_stat, NULL-terminated (case_stmt.c). */
extern const char *const cts_fill_names[], *const cts_where_names[],
    *const cts_graph_flag_names[], *const cts_stat_names[];

/* Symbols 0 and 1 are predefined. */
#define CTS_SYM_ROOT 0
#define CTS_SYM_BOGUS 1

struct cts_symbol {
  char *name;
  int kind; /* enum cts_sym_kind */
};

struct cts_block {
  struct cts_stmt *items;
  size_t n, cap;
};

/* One statement. The operands are the symbols the statement names, in the order it
 * names them; what else it holds is the union member its row's shape names
 * (stmt_table.h). The statement owns its text, list, body and the union's pointers. */
struct cts_stmt {
  int kind; /* enum cts_stmt_kind */
  int line, col;
  char *text;     /* the source line, trimmed, for messages */
  int dst;        /* symbol bound, or -1 */
  int a, b;       /* the first and second operand symbols, or -1 (-2: `none`) */
  int out;        /* the destination operand: `in M`, `to S`, or -1 (-2: `none`) */
  int *list;      /* operand symbols written as a list: keep list, pack items, svd names */
  size_t n_list;
  struct cts_block body; /* a block statement's statements */
  union {
    struct cts_literal literal;                    /* CTS_SHAPE_LITERAL */
    struct {
      int op;                                      /* enum tsm_op */
      int ndim;                                    /* reshape's target shape */
      int64_t shape[TSM_MAX_DIMS];
    } op;                                          /* CTS_SHAPE_OP */
    struct { int sorted; } pack;                   /* CTS_SHAPE_PACK */
    struct { int64_t index; } component;           /* CTS_SHAPE_COMPONENT */
    struct {
      int form;                                    /* enum tsm_dlpack_form */
      uint32_t request;                            /* enum tsm_dlpack_request bits */
    } export;                                      /* CTS_SHAPE_EXPORT */
    struct {
      struct cts_literal literal;
      struct cts_dl_opts dl;
    } make;                                        /* CTS_SHAPE_MAKE */
    struct { uint32_t bits; } graph_flags;         /* CTS_SHAPE_FLAGS: enum tsm_graph_flag */
    struct { int64_t times; } repeat;              /* CTS_SHAPE_REPEAT */
    struct { int number; } thread;                 /* CTS_SHAPE_THREAD: 1.., into threads */
    struct {
      int code;                                    /* the expected negative code */
      struct cts_stmt *inner;                      /* the action that must fail */
    } error;                                       /* CTS_SHAPE_ERROR */
    struct { int64_t want; } count;                /* CTS_SHAPE_COUNT: count, bytes, ... */
    struct { int holds; } truth;                   /* CTS_SHAPE_TRUTH: borrowed, valid */
    struct { int want; } state;                    /* CTS_SHAPE_STATE: enum cts_state_name */
    struct {
      double *v;
      size_t n;
      int unspecified;                             /* `expect node X unspecified` */
    } values;                                      /* CTS_SHAPE_VALUES */
    struct {
      int ndim;
      int64_t shape[TSM_MAX_DIMS];
    } dims;                                        /* CTS_SHAPE_DIMS */
    struct {
      int kind;                                    /* enum tsm_kind */
      int64_t want[CTS_N_STATS];
      unsigned mask;                               /* 1u << enum cts_stat per counter given */
      int variants;                                /* `LIST | LIST`: want is SCOPE.STAT.3's */
      int64_t want_b[CTS_N_STATS];                 /* variant (a), want_b variant (b) */
    } stats;                                       /* CTS_SHAPE_STATS */
    struct cts_py_export py_export;                /* CTS_SHAPE_PY_EXPORT */
    struct {
      unsigned exc;                                /* enum cts_py_exc bits */
      struct cts_stmt *inner;                      /* the action that must raise */
    } py_error;                                    /* CTS_SHAPE_PY_ERROR */
    struct cts_py_expectation py_expect;           /* CTS_SHAPE_PY_EXPECT */
    struct cts_py_xapi py_xapi;                    /* CTS_SHAPE_PY_XAPI */
    struct {
      int64_t dim, start, stop, step;              /* slice: numpy's a[..., start:stop:step] */
    } py_view;                                     /* CTS_SHAPE_PY_VIEW (slice; others: none) */
    struct {
      int ndim;
      int64_t shape[TSM_MAX_DIMS], bytes[TSM_MAX_DIMS]; /* byte strides, numpy's */
    } py_strided;                                  /* CTS_SHAPE_PY_STRIDED */
    struct {
      int what;                                    /* cts_py_unexportable_names index */
    } py_unexportable;                             /* CTS_SHAPE_PY_UNEXPORTABLE */
    struct { int64_t mib; } flat;                  /* CTS_SHAPE_FLAT, and the body */
  } u;
};

struct cts_case {
  char *path;        /* as given on the command line */
  char *name;        /* relative to the cases root: the stable id */
  char *description;
  char *origin;
  char **clauses;
  size_t n_clauses;
  int *clause_lines, *clause_cols;
  char **requires;   /* family names */
  size_t n_requires;
  char **devices;    /* "any" or name prefixes */
  size_t n_devices;
  char **tags;
  size_t n_tags;
  int timeout_ms;    /* 0: default; at most CTS_TIMEOUT_MAX_MS */
  uint32_t ops_used; /* 1u << enum tsm_op */
  uint32_t dtypes_used; /* 1u << enum tsm_dtype of every tensor the case creates */
  uint32_t families; /* enum tsm_cap bits of requires: and of the statements used */
  char **threads;    /* thread names; thread 0 is the main thread, named "main" */
  size_t n_threads, cap_threads;
  int uses_dump;
  int uses_wrapped;  /* runs code inside the adapter's call: no fault injection */
  int capsule_level; /* a .pytsm file: the Python runner's statements, not the C judge's */
  char **roles;      /* .pytsm: producer, consumer (default both) */
  size_t n_roles;
  char **warnings;   /* "LINE:COL: warning: ..." for each retired spelling still read */
  size_t n_warnings, cap_warnings;
  struct cts_symbol *syms;
  size_t n_syms, cap_syms;
  struct cts_block body;
};

/* A parse error: the first one found. */
struct cts_parse_error {
  int line, col;
  char msg[256];
};

/* Parses `text` (the contents of `path`). spec may be NULL (clause ids are then only
 * checked for their grammar). RETURN a case the caller frees with cts_case_free, or
 * NULL with *err filled. */
struct cts_case *cts_case_parse(const char *path, const char *text,
                                const struct cts_spec *spec,
                                struct cts_parse_error *err);
#define CTS_TIMEOUT_MAX_MS 86400000 /* a case's own timeout: at most a day */

/* The time limit of a run of c: its own timeout, else default_ms, times
 * $TSM_CTS_TIMEOUT_MULTIPLIER, at least 1 ms and at most INT_MAX ms (c may be NULL). */
int cts_case_limit_ms(const struct cts_case *c, int default_ms);

/* A case file is UTF-8 text: RETURN 0, or -1 with *err at the first NUL byte or byte
 * that does not start a valid UTF-8 sequence (a NUL would silently end the case). */
int cts_case_text_check(const char *text, size_t len, struct cts_parse_error *err);
struct cts_case *cts_case_load(const char *path, const struct cts_spec *spec,
                               struct cts_parse_error *err);
void cts_case_free(struct cts_case *c);
/* Writes c as one line of JSON (case_json.c; the format is cases/README.md's). */
void cts_case_json(FILE *f, const struct cts_case *c);

int cts_case_has_tag(const struct cts_case *c, const char *tag);
/* Maps a family name of `requires:` to its capability bit; 0 if unknown (requires.c). */
uint32_t cts_family_cap(const char *family);
/* The statement table's names of a kind: its enum name ("MGR_SUB"), its keyword
 * ("manager"), its verb ("sub"; NULL if none; "a|b" for alternatives, CTS_VERB_OP for
 * an op of the op table), and its shape (enum cts_stmt_shape). */
const char *cts_stmt_kind_name(int kind);
const char *cts_stmt_keyword(int kind);
const char *cts_stmt_verb(int kind);
int cts_stmt_shape(int kind);
const char *cts_err_name(int code); /* "CAPPED" for TSM_ECAPPED; "OK"; "?" */
const char *cts_op_name(int op);
/* The dtype names a case may write, for messages. */
#define CTS_DTYPE_LIST "bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 or f64"
/* The capsule level's exchange-only dtypes (.pytsm `make` and `expect dtype`): DLPack's
 * complex, float8 and float4 (packed, DLP.IMPORT.10) types, which peers exchange and no
 * implementation must hold (MGR.DTYPE.1 has none, DLP.IMPORT.6 refuses them).
 * X(ENUM, name, values per element of a literal: two, real and imaginary, for a complex
 * type). */
#define CTS_PY_EXCHANGE_DTYPES(X)                                                  \
  X(C64, "c64", 2) X(C128, "c128", 2) X(F8E3M4, "f8e3m4", 1) X(F8E4M3FN, "f8e4m3fn", 1)     \
  X(F8E5M2, "f8e5m2", 1) X(F4E2M1FN, "f4e2m1fn", 1)
/* Numbered after the ABI's dtypes. */
enum cts_py_dtype {
  CTS_PY_DTYPES_BEFORE = TSM_DTYPE_LAST,
#define CTS_PY_DTYPE_ENUM(e, name, per) CTS_PY_##e,
  CTS_PY_EXCHANGE_DTYPES(CTS_PY_DTYPE_ENUM)
#undef CTS_PY_DTYPE_ENUM
  CTS_PY_DTYPES_END
};
/* The name of a dtype of the capsule level: an exchange-only one's or MGR.DTYPE.1's; and
 * how many values a literal gives per element (case_stmt.c). */
const char *cts_py_dtype_name(int dtype);
int cts_py_values_per_element(int dtype);

#endif
