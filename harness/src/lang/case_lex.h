/*
 * harness/src/lang/case_lex.h: the case parser's shared machinery (cases/README.md): the
 * tokens of one line, the parser's state and its first error, names (binding and
 * use) and literals (integers, shapes, value lists, dtypes). Used by case_parse.c (the
 * file's frontmatter and blocks) and case_stmt.c (the statement rows).
 */
#ifndef CTS_CASE_LEX_H
#define CTS_CASE_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "case.h"

enum tok_kind { T_WORD, T_NUM, T_PUNCT, T_END };

/* One token; s points into the line the tokens were made from. */
struct tok {
  int kind;
  const char *s;
  size_t len;
  int col;
  double num;
};

#define MAX_TOKS 512

/* The tokens of one line and the reading position; t[n] is T_END. */
struct line_toks {
  struct tok t[MAX_TOKS + 1];
  int n;
  int pos;
  int line;
};

struct open_block;

/* The parser: the case being filled (owned by the caller) and the first error. */
struct parser {
  struct cts_case *c;
  const struct cts_spec *spec;
  struct cts_parse_error *err;
  int failed;
  const struct tok *verb;   /* the word that selected the statement's row */
  struct open_block *outer; /* the block a block statement opens in, or NULL */
  struct open_block *open;  /* the block record a block statement fills */
};

/* An open block and what it allows inside (case_parse.c, case_stmt.c). */
struct open_block {
  struct cts_stmt *st;    /* the repeat, wrapped, thread or parallel statement */
  int in_parallel;        /* inside a parallel block: actions and repeat only */
  int in_thread;          /* inside a thread block: no nested threads */
  struct tok result_name; /* wrapped: the name to bind at '}' */
  char name_buf[64];
};

void fail_at(struct parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records "LINE:COL: warning: ..." (a retired spelling still read) in the case. */
void warn_at(struct parser *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Fails at t: "expected WHAT at end of line" or "expected WHAT, found 'T'". */
void fail_expected(struct parser *p, struct line_toks *lt, const struct tok *t, const char *what);

int tokenize(struct parser *p, const char *line, size_t len, int lineno, struct line_toks *lt);
struct tok *peek(struct line_toks *lt);
struct tok *next(struct line_toks *lt);
int tok_is(const struct tok *t, const char *s);
/* t is one of the '|'-separated words of alts. */
int tok_is_one_of(const struct tok *t, const char *alts);
char *tok_str(const struct tok *t);
int expect_punct(struct parser *p, struct line_toks *lt, const char *s);
void trim(const char **s, size_t *len);

const char *kind_name(int kind);
int sym_find(struct cts_case *c, const struct tok *t);
int valid_name(const struct tok *t);
int bind_name(struct parser *p, struct line_toks *lt, int kind);
int use_name(struct parser *p, struct line_toks *lt, int kind);
int use_name_list(struct parser *p, struct line_toks *lt, int kind, int **list, size_t *n);
int use_name_or_none(struct parser *p, struct line_toks *lt, int kind);

int parse_int(struct parser *p, struct line_toks *lt, int64_t min, int64_t *out,
              const char *what);
int parse_shape(struct parser *p, struct line_toks *lt, int *ndim, int64_t *shape);
/* The same with at most max extents (a DLPack `make`: CTS_DL_MAX_DIMS). */
int parse_shape_max(struct parser *p, struct line_toks *lt, int max, int *ndim, int64_t *shape);
int parse_values(struct parser *p, struct line_toks *lt, double **vals, size_t *n);
/* Dtypes: dtype_of RETURNs t's enum tsm_dtype or 0; take_dtype takes the next token
 * when it is a dtype (RETURN 1); parse_dtype requires one; parse_dtype_opt defaults to
 * f32 and refuses any other word but `in`. */
int dtype_of(struct parser *p, int line, const struct tok *t);
int take_dtype(struct parser *p, struct line_toks *lt, int *dtype);
int parse_dtype(struct parser *p, struct line_toks *lt, int *dtype);
int parse_dtype_opt(struct parser *p, struct line_toks *lt, int *dtype);

/* Statements (case_stmt.c). `binds` is 0 inside `expect error`, where a failing
 * binding binds nothing. A block statement's row reads p->outer and fills p->open. */
int parse_action(struct parser *p, struct line_toks *lt, struct cts_stmt *st, int binds);
int parse_statement(struct parser *p, struct line_toks *lt, struct cts_stmt *st);
/* enum cts_stmt_class of the row first selects in the case's dialect. */
int stmt_class(const struct parser *p, const struct tok *first);

#endif
