/*
 * harness/src/lang/stmt_table.h: the case language's statement table and op table
 * (cases/README.md). One row per statement kind, the whole truth about it: the kind enum
 * (case.h), the parser's keyword lookup and argument parsing (case_stmt.c), the kind
 * names, the capability a case needs (enum tsm_cap), the executor's dispatch
 * (families.c), the generator's writer, fuzz key and clause (gen.c, gen_write.c) and the
 * language reference (`tsm-cts statements`, cases/README.md) all expand these rows.
 * harness/src/README.md says how to add a statement.
 *
 * A row: ROW(KIND, KEY(k), DATA(.field = value, ...), PARSE(f), MODEL(f), ADAPTER(f),
 *            EXEC(f), WRITER(w) | BLOCK_WRITER(w) | NO_WRITER("why"))
 * Every column is named: a consumer pastes its own prefix onto the label (CTS__EXEC_ ##
 * EXEC(f)), so a column in the wrong place, or a missing one, fails the build.
 *   KIND     the enum name after CTS_ (CTS_MGR_SUB, ...)
 *   KEY      the row's stable fuzz key (fuzz/README.md, "Stable keys"): the scenario
 *            generator draws a row by key, never by position, so the bytes of a stored
 *            fuzz finding decode to the same rows whatever rows are inserted or
 *            reordered. A new row takes the next free key below CTS_STMT_KEY_SPACE; a key
 *            is never changed or reused. gen.c fails to build when a key is past the key
 *            space or two rows share one.
 *   DATA     the row's data, by field (CTS_STMT_DATA_FIELDS below):
 *     .cls     CTS_CLASS_ACTION (may stand after `expect error CODE:`), _EXPECT (after
 *              `expect`), _BLOCK (opens `{`) or _RESULT
 *     .lead    the first word of the statement
 *     .verb    for bindings the word after `=`, for expectations the word after `expect`;
 *              "a|b" lists alternative spellings, CTS_VERB_OP is any name of the op
 *              table, NULL: the lead alone selects the row (its PARSE may pick a sibling
 *              row by the kind of an operand: attach, detach, dispose, move, release,
 *              state)
 *     .binds   the symbol kind a binding statement binds (enum cts_sym_kind), or 0
 *     .family  the family that executes it (enum cts_family_id, families.h)
 *     .cap     the capability the statement needs (enum tsm_cap), or 0
 *     .shape   the member of struct cts_stmt's union it fills (enum cts_stmt_shape)
 *     .made    what a successful action made, for the generic binding (enum cts_made)
 *     .clause  the clause (spec/) the statement checks first: a generated case cites it,
 *              reduce drops it with the row; NULL when none (blocks, most expectations)
 *     .syntax  the surface form, as the language reference shows it
 *     .about   one line: what the statement does
 *   PARSE    parses the words after LEAD/VERB (case_stmt.c)
 *   MODEL    the model's side of a generic action (cts_model_fn), cts__model_none if EXEC
 *            does both sides itself and a `parallel` block cannot run the row
 *   ADAPTER  the adapter's side of a generic action (cts_adapter_fn), cts__adapter_none
 *   EXEC     runs the statement (cts_exec_fn): cts__exec_action for generic actions; a
 *            row with its own EXEC and both halves (DLPack) composes them in it, with
 *            the checks only it makes, and a `parallel` block runs the halves apart
 *   WRITER   the generator's writer of one line of the row (gen_write.c); BLOCK_WRITER
 *            the writer of a whole block; NO_WRITER("why") where the generator does not
 *            draw the row, and why. A row with a writer must have a .clause
 *            (`tsm-cts statements --check`, lane statements).
 *
 * The rows of CTS_FAMILY_DLPACK_PY are the capsule-level statements of `.pytsm` cases:
 * the C front end parses them (`tsm-cts parse --json`) for the Python runner, which
 * executes them; their EXEC only reports an Error. A `.pytsm` file may use those rows
 * and the rows CTS_IN_BOTH_DIALECTS names; a `.tsm` file every other row.
 */
#ifndef CTS_STMT_TABLE_H
#define CTS_STMT_TABLE_H

#define CTS_VERB_OP "(op)"

/* The fields DATA(...) names; every consumer's row struct has them (case_stmt.c,
 * exec_internal.h, gen_internal.h). */
#define CTS_STMT_DATA_FIELDS                                                                \
  int cls;                                                                                  \
  const char *lead, *verb;                                                                  \
  int binds, family;                                                                        \
  unsigned cap;                                                                             \
  int shape, made;                                                                          \
  const char *clause, *syntax, *about

/* The space of stable keys (KEY): 0 .. CTS_STMT_KEY_SPACE - 1. */
#define CTS_STMT_KEY_SPACE 128

/* clang-format off */
#define CTS_STATEMENTS(ROW) \
  /* managers (spec/managers.md) */                                                                 \
  ROW(MGR_SUB, KEY(0),                                                                              \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "manager", .verb = "sub", .binds = CTS_SYM_MANAGER,     \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_HANDLE, .clause = "MGR.SUB.1", .syntax = "manager M = sub P",           \
           .about = "opens a sub-manager M of manager P"),                                          \
      PARSE(parse_use_manager), MODEL(cts__model_sub), ADAPTER(cts__adapter_sub),                   \
      EXEC(cts__exec_action), WRITER(w_use_manager))                                                \
  ROW(MGR_SUB_OF, KEY(1),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "manager", .verb = "sub_of",                            \
           .binds = CTS_SYM_MANAGER, .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS,        \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_HANDLE, .clause = "MGR.SUB.4",             \
           .syntax = "manager M = sub_of T",                                                        \
           .about = "opens a sub-manager of T's holder (of the root when T is detached)"),          \
      PARSE(parse_use_resource), MODEL(cts__model_sub_of), ADAPTER(cts__adapter_sub_of),            \
      EXEC(cts__exec_action), WRITER(w_use_resource))                                               \
  ROW(CREATE, KEY(2),                                                                               \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "zeros|ones|full|arange|values",      \
           .binds = CTS_SYM_TENSOR, .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS,         \
           .shape = CTS_SHAPE_LITERAL, .made = CTS_MADE_TENSOR, .clause = "MGR.CREATE.1",           \
           .syntax = "tensor T = zeros|ones|full|arange|values M SHAPE [VALUE] [DTYPE] [LIST]",     \
           .about = "creates a tensor held by M: zeros, ones, every element VALUE, 0, 1, 2, ... or the given elements"), \
      PARSE(parse_create), MODEL(cts__model_create), ADAPTER(cts__adapter_create),                  \
      EXEC(cts__exec_action), WRITER(w_create))                                                     \
  ROW(OP, KEY(3),                                                                                   \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = CTS_VERB_OP,                          \
           .binds = CTS_SYM_TENSOR, .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS,         \
           .shape = CTS_SHAPE_OP, .made = CTS_MADE_TENSOR, .clause = "MGR.OP.1",                    \
           .syntax = "tensor T = OP A [B] [SHAPE] [in M]",                                          \
           .about = "an operation of the op table (add, sub, mul, sum, gather, reshape, matmul); the result goes to M or to the first input's holder"), \
      PARSE(parse_op), MODEL(cts__model_op), ADAPTER(cts__adapter_op),                              \
      EXEC(cts__exec_action), WRITER(w_op))                                                         \
  ROW(ATTACH, KEY(4),                                                                               \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "attach", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.ATTACH.1", .syntax = "attach T to M",           \
           .about = "attaches resource T to manager M"),                                            \
      PARSE(parse_attach), MODEL(cts__model_attach), ADAPTER(cts__adapter_attach),                  \
      EXEC(cts__exec_action), WRITER(w_attach))                                                     \
  ROW(DETACH, KEY(5),                                                                               \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "detach", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.DETACH.1", .syntax = "detach T",                \
           .about = "detaches resource T from its holder; again: changes nothing"),                 \
      PARSE(parse_detach), MODEL(cts__model_detach), ADAPTER(cts__adapter_detach),                  \
      EXEC(cts__exec_action), WRITER(w_detach))                                                     \
  ROW(BORROW, KEY(6),                                                                               \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "borrow", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.TEMP.1", .syntax = "borrow T into M",           \
           .about = "temporarily attaches T to M"),                                                 \
      PARSE(parse_borrow), MODEL(cts__model_borrow), ADAPTER(cts__adapter_borrow),                  \
      EXEC(cts__exec_action), WRITER(w_borrow))                                                     \
  ROW(RET, KEY(7),                                                                                  \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "ret", .verb = NULL, .binds = 0,                        \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.RET.1", .syntax = "ret T from M",               \
           .about = "moves T from M to M's parent"),                                                \
      PARSE(parse_ret), MODEL(cts__model_ret), ADAPTER(cts__adapter_ret),                           \
      EXEC(cts__exec_action), WRITER(w_ret))                                                        \
  ROW(ADOPT, KEY(8),                                                                                \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "adopt", .binds = CTS_SYM_TENSOR,     \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_TENSOR, .clause = "MGR.ADOPT.1", .syntax = "tensor P = adopt T",        \
           .about = "T's resource under a new handle P, in T's place; T is released"),              \
      PARSE(parse_use_resource), MODEL(cts__model_adopt), ADAPTER(cts__adapter_adopt),              \
      EXEC(cts__exec_action), WRITER(w_use_resource))                                               \
  ROW(RELEASE, KEY(9),                                                                              \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "release", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.REL.1", .syntax = "release T",                  \
           .about = "releases resource T"),                                                         \
      PARSE(parse_release), MODEL(cts__model_release), ADAPTER(cts__adapter_release),               \
      EXEC(cts__exec_action), WRITER(w_release))                                                    \
  ROW(CLOSE, KEY(10),                                                                               \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "close", .verb = NULL, .binds = 0,                      \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.CLOSE.1", .syntax = "close M",                  \
           .about = "closes manager M"),                                                            \
      PARSE(parse_use_manager), MODEL(cts__model_close), ADAPTER(cts__adapter_close),               \
      EXEC(cts__exec_action), WRITER(w_use_manager))                                                \
  ROW(CAP, KEY(11),                                                                                 \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "cap", .verb = NULL, .binds = 0,                        \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.CAP.1", .syntax = "cap M",                      \
           .about = "caps manager M"),                                                              \
      PARSE(parse_use_manager), MODEL(cts__model_cap), ADAPTER(cts__adapter_cap),                   \
      EXEC(cts__exec_action), WRITER(w_use_manager))                                                \
  ROW(DUMP, KEY(12),                                                                                \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "dump", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = "MGR.COUNT.1", .syntax = "dump M",                   \
           .about = "prints the adapter's dump of M beside the model's tree (the counts are checked)"), \
      PARSE(parse_dump), MODEL(cts__model_dump), ADAPTER(cts__adapter_dump),                        \
      EXEC(cts__exec_action), WRITER(w_dump))                                                       \
  /* control */                                                                                     \
  ROW(REPEAT, KEY(13),                                                                              \
      DATA(.cls = CTS_CLASS_BLOCK, .lead = "repeat", .verb = NULL, .binds = 0,                      \
           .family = CTS_FAMILY_CORE, .cap = 0, .shape = CTS_SHAPE_REPEAT,                          \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "repeat N { ... }",                  \
           .about = "runs the block N times; the model is checked after every statement"),          \
      PARSE(parse_repeat), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                      \
      EXEC(cts__exec_repeat), NO_WRITER("a block the generator does not open"))                     \
  ROW(THREAD, KEY(14),                                                                              \
      DATA(.cls = CTS_CLASS_BLOCK, .lead = "thread", .verb = NULL, .binds = 0,                      \
           .family = CTS_FAMILY_CORE, .cap = TSM_CAP_THREADS, .shape = CTS_SHAPE_THREAD,            \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "thread W { ... }",                  \
           .about = "runs the block on worker thread W while the main thread waits"),               \
      PARSE(parse_thread), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                      \
      EXEC(cts__exec_thread), NO_WRITER("a block the generator does not open"))                     \
  ROW(JOIN, KEY(15),                                                                                \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "join", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_CORE, .cap = TSM_CAP_THREADS, .shape = CTS_SHAPE_THREAD,            \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "join W",                            \
           .about = "ends worker W's thread"),                                                      \
      PARSE(parse_join), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                        \
      EXEC(cts__exec_join), NO_WRITER("threads: the generator writes no thread blocks"))            \
  ROW(PARALLEL, KEY(16),                                                                            \
      DATA(.cls = CTS_CLASS_BLOCK, .lead = "parallel", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_CORE, .cap = TSM_CAP_THREADS, .shape = CTS_SHAPE_BLOCK,             \
           .made = CTS_MADE_NOTHING, .clause = NULL,                                                \
           .syntax = "parallel { thread A { ... } thread B { ... } }",                              \
           .about = "runs each thread block at the same time, then joins them"),                    \
      PARSE(parse_parallel), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                    \
      EXEC(cts__exec_parallel), NO_WRITER("a block the generator does not open"))                   \
  /* scopes (spec/scopes.md) */                                                                     \
  ROW(SCOPE_OPEN, KEY(17),                                                                          \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "scope", .verb = "open", .binds = CTS_SYM_SCOPE,        \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_HANDLE, .clause = "SCOPE.STACK.1", .syntax = "scope S = open",          \
           .about = "opens a dispose scope on this thread"),                                        \
      PARSE(parse_nothing), MODEL(cts__model_scope_open), ADAPTER(cts__adapter_scope_open),         \
      EXEC(cts__exec_action), WRITER(w_nothing))                                                    \
  ROW(SCOPE_DISPOSE, KEY(18),                                                                       \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "dispose", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.DISP.1", .syntax = "dispose S",               \
           .about = "disposes scope S"),                                                            \
      PARSE(parse_dispose), MODEL(cts__model_dispose), ADAPTER(cts__adapter_dispose),               \
      EXEC(cts__exec_action), WRITER(w_dispose))                                                    \
  ROW(SCOPE_MOVE_OUTER, KEY(19),                                                                    \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "move", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.MOVE.1", .syntax = "move T out of S",         \
           .about = "moves a member of S to S's outer scope, or detaches it"),                      \
      PARSE(parse_move), MODEL(cts__model_move_outer), ADAPTER(cts__adapter_move_outer),            \
      EXEC(cts__exec_action), WRITER(w_move))                                                       \
  ROW(SCOPE_MOVE_OTHER, KEY(20),                                                                    \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "move", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.MOVE.2",                                      \
           .syntax = "move T from S to S2|none",                                                    \
           .about = "moves a member of S to another scope, or detaches it"),                        \
      PARSE(parse_move), MODEL(cts__model_move_other), ADAPTER(cts__adapter_move_other),            \
      EXEC(cts__exec_action), WRITER(w_move))                                                       \
  ROW(SCOPE_DETACH, KEY(21),                                                                        \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "detach", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.DETACH.1", .syntax = "detach T from S",       \
           .about = "detaches T from scope S"),                                                     \
      PARSE(parse_detach), MODEL(cts__model_scope_detach), ADAPTER(cts__adapter_scope_detach),      \
      EXEC(cts__exec_action), WRITER(w_detach))                                                     \
  ROW(SCOPE_ATTACH, KEY(22),                                                                        \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "attach", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.ATTACH.1", .syntax = "attach T to S",         \
           .about = "attaches T to scope S"),                                                       \
      PARSE(parse_attach), MODEL(cts__model_scope_attach), ADAPTER(cts__adapter_scope_attach),      \
      EXEC(cts__exec_action), WRITER(w_attach))                                                     \
  ROW(SCOPE_DISPOSE_ALL, KEY(23),                                                                   \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "dispose", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.ALL.1",                                       \
           .syntax = "dispose everything in S [but [A, B]]",                                        \
           .about = "disposes every member of S (but the ones named)"),                             \
      PARSE(parse_dispose), MODEL(cts__model_dispose_all), ADAPTER(cts__adapter_dispose_all),       \
      EXEC(cts__exec_action), WRITER(w_dispose))                                                    \
  ROW(SCOPE_HANDOVER, KEY(24),                                                                      \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "handover", .verb = NULL, .binds = 0,                   \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.HAND.1", .syntax = "handover S",              \
           .about = "detaches every member of S, then disposes S"),                                 \
      PARSE(parse_use_scope), MODEL(cts__model_handover), ADAPTER(cts__adapter_handover),           \
      EXEC(cts__exec_action), WRITER(w_use_scope))                                                  \
  ROW(WRAPPED, KEY(25),                                                                             \
      DATA(.cls = CTS_CLASS_BLOCK, .lead = "wrapped", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_BLOCK,            \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.WRAP.1",                                      \
           .syntax = "wrapped R { ... result X }",                                                  \
           .about = "runs the block in a fresh scope and binds R to its result"),                   \
      PARSE(parse_wrapped), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_wrapped), BLOCK_WRITER(w_wrapped))                                             \
  ROW(RESULT, KEY(26),                                                                              \
      DATA(.cls = CTS_CLASS_RESULT, .lead = "result", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_SCOPES, .cap = 0, .shape = CTS_SHAPE_OPERANDS,                      \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "result X|none",                     \
           .about = "the result of a wrapped block (its last statement)"),                          \
      PARSE(parse_result), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                      \
      EXEC(cts__exec_result), NO_WRITER("the wrapped block's writer writes it"))                    \
  /* composites (spec/composites.md) */                                                             \
  ROW(PACK, KEY(27),                                                                                \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "composite", .verb = "pack",                            \
           .binds = CTS_SYM_COMPOSITE, .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_COMPOSITES,      \
           .shape = CTS_SHAPE_PACK, .made = CTS_MADE_FAMILY, .clause = "COMP.PACK.1",               \
           .syntax = "composite P = pack [S1, S2, ...] sorted|unsorted",                            \
           .about = "a packed sequence of 1-d f32 tensors"),                                        \
      PARSE(parse_pack), MODEL(cts__model_pack), ADAPTER(cts__adapter_pack),                        \
      EXEC(cts__exec_action), WRITER(w_pack))                                                       \
  ROW(LIST, KEY(28),                                                                                \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "composite", .verb = "list",                            \
           .binds = CTS_SYM_COMPOSITE, .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_COMPOSITES,      \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_FAMILY, .clause = "COMP.LIST.1",           \
           .syntax = "composite L = list [A, B, ...]",                                              \
           .about = "a tensor list; the items become its components"),                              \
      PARSE(parse_list_items), MODEL(cts__model_list), ADAPTER(cts__adapter_list),                  \
      EXEC(cts__exec_action), WRITER(w_list_items))                                                 \
  ROW(COMPONENT, KEY(29),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "component",                          \
           .binds = CTS_SYM_TENSOR, .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_COMPOSITES,         \
           .shape = CTS_SHAPE_COMPONENT, .made = CTS_MADE_FAMILY, .clause = "COMP.UNIT.1",          \
           .syntax = "tensor D = component P data|batch_sizes|sorted_indices|unsorted_indices|N",   \
           .about = "binds a component of composite P"),                                            \
      PARSE(parse_component), MODEL(cts__model_component), ADAPTER(cts__adapter_component),         \
      EXEC(cts__exec_action), WRITER(w_component))                                                  \
  /* DLPack (spec/dlpack.md) */                                                                     \
  ROW(DL_EXPORT, KEY(30),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "dlpack", .verb = "export",                             \
           .binds = CTS_SYM_DLPACK, .family = CTS_FAMILY_DLPACK, .cap = TSM_CAP_DLPACK_C,           \
           .shape = CTS_SHAPE_EXPORT, .made = CTS_MADE_FAMILY, .clause = "DLP.EXPORT.1",            \
           .syntax = "dlpack X = export T versioned|legacy [copy] [readonly]",                      \
           .about = "the implementation exports T; the judge owns X and checks every field and element"), \
      PARSE(parse_export), MODEL(cts__model_dl_export), ADAPTER(cts__adapter_dl_export),            \
      EXEC(cts__exec_dl_export), WRITER(w_export))                                                  \
  ROW(DL_MAKE, KEY(31),                                                                             \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "dlpack", .verb = "make", .binds = CTS_SYM_DLPACK,      \
           .family = CTS_FAMILY_DLPACK, .cap = TSM_CAP_DLPACK_C, .shape = CTS_SHAPE_MAKE,           \
           .made = CTS_MADE_FAMILY, .clause = "DLP.IMPORT.1",                                       \
           .syntax = "dlpack X = make versioned|legacy SHAPE [DTYPE] [OPTIONS]",                    \
           .about = "the judge produces a managed tensor with a counting deleter"),                 \
      PARSE(parse_make), MODEL(cts__model_dl_make), ADAPTER(cts__adapter_dl_make),                  \
      EXEC(cts__exec_dl_make), WRITER(w_make))                                                      \
  ROW(DL_IMPORT, KEY(32),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "import",                             \
           .binds = CTS_SYM_TENSOR, .family = CTS_FAMILY_DLPACK, .cap = TSM_CAP_DLPACK_C,           \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_TENSOR, .clause = "DLP.MGR.1",             \
           .syntax = "tensor T = import X into M", .about = "the implementation consumes X"),       \
      PARSE(parse_import), MODEL(cts__model_dl_import), ADAPTER(cts__adapter_dl_import),            \
      EXEC(cts__exec_dl_import), WRITER(w_import))                                                  \
  ROW(DL_OUTLIVE, KEY(33),                                                                          \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "outlive", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_DLPACK, .cap = TSM_CAP_DLPACK_C, .shape = CTS_SHAPE_OPERANDS,       \
           .made = CTS_MADE_NOTHING, .clause = "DLP.EXPORT.6", .syntax = "outlive X",               \
           .about = "the judge keeps export X past session_close, then reads it and runs its deleter"), \
      PARSE(parse_use_dlpack), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                  \
      EXEC(cts__exec_dl_outlive), WRITER(w_use_dlpack))                                             \
  ROW(DL_DROP, KEY(34),                                                                             \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "drop", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_DLPACK, .cap = TSM_CAP_DLPACK_C, .shape = CTS_SHAPE_OPERANDS,       \
           .made = CTS_MADE_NOTHING, .clause = "DLP.DEL.1", .syntax = "drop X",                     \
           .about = "the judge, as X's owner, runs its deleter on the thread that runs the statement"), \
      PARSE(parse_use_dlpack), MODEL(cts__model_dl_drop), ADAPTER(cts__adapter_dl_drop),            \
      EXEC(cts__exec_dl_drop), WRITER(w_use_dlpack))                                                \
  /* graphs (spec/graphs.md) */                                                                     \
  ROW(G_NEW, KEY(35),                                                                               \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "graph", .verb = "new", .binds = CTS_SYM_GRAPH,         \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.MGR.1", .syntax = "graph G = new M",          \
           .about = "a graph whose buffers belong to manager M"),                                   \
      PARSE(parse_use_manager), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                 \
      EXEC(cts__exec_graph_build), WRITER(w_use_manager))                                           \
  ROW(G_LEAF, KEY(36),                                                                              \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "node", .verb = "leaf", .binds = CTS_SYM_NODE,          \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_LITERAL,          \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.BUILD.1",                                     \
           .syntax = "node X = leaf G SHAPE [DTYPE] [values LIST|arange]",                          \
           .about = "a leaf the planner places; the judge writes it before every compute"),         \
      PARSE(parse_leaf), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                        \
      EXEC(cts__exec_graph_build), WRITER(w_leaf))                                                  \
  ROW(G_EXTERNAL, KEY(37),                                                                          \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "node", .verb = "external", .binds = CTS_SYM_NODE,      \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.EXT.1",                                       \
           .syntax = "node X = external G T",                                                       \
           .about = "live tensor T as a leaf the planner never touches"),                           \
      PARSE(parse_external), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                    \
      EXEC(cts__exec_graph_build), WRITER(w_external))                                              \
  ROW(G_OP, KEY(38),                                                                                \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "node", .verb = CTS_VERB_OP, .binds = CTS_SYM_NODE,     \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OP,               \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.OP.1",                                        \
           .syntax = "node X = OP A [B] [SHAPE]",                                                   \
           .about = "a node of the op table (add, sub, mul, sum, reshape, matmul, transpose, diag, svd)"), \
      PARSE(parse_graph_op), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                    \
      EXEC(cts__exec_graph_build), WRITER(w_op))                                                    \
  ROW(G_FLAG, KEY(39),                                                                              \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "flag", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_FLAGS,            \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.FLAG.1",                                      \
           .syntax = "flag X input|output|param ...", .about = "adds flags to node X"),             \
      PARSE(parse_flag), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                        \
      EXEC(cts__exec_graph_build), WRITER(w_flag))                                                  \
  ROW(G_EXPAND, KEY(40),                                                                            \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "expand", .verb = NULL, .binds = 0,                     \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.BUILD.1", .syntax = "expand G X",             \
           .about = "adds X and what it depends on to graph G"),                                    \
      PARSE(parse_expand), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                      \
      EXEC(cts__exec_graph_build), WRITER(w_expand))                                                \
  ROW(G_COMPUTE, KEY(41),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "compute", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.PLAN.1", .syntax = "compute G",               \
           .about = "the judge's differential compute: planned without and with reuse, checked against the model"), \
      PARSE(parse_use_graph), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                   \
      EXEC(cts__exec_graph_compute), WRITER(w_use_graph))                                           \
  ROW(G_RECOMPUTE, KEY(42),                                                                         \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "recompute", .verb = NULL, .binds = 0,                  \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_TRUTH,            \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.PLAN.1",                                      \
           .syntax = "recompute G [unwritten]",                                                     \
           .about = "computes again without planning first"),                                       \
      PARSE(parse_recompute), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                   \
      EXEC(cts__exec_graph_recompute), WRITER(w_recompute))                                         \
  ROW(G_READ, KEY(43),                                                                              \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "read", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.EXT.2", .syntax = "read V",                   \
           .about = "graph_read of V, judged by its code alone"),                                   \
      PARSE(parse_read), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                        \
      EXEC(cts__exec_graph_read), WRITER(w_read))                                                   \
  ROW(G_RELEASE, KEY(44),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "release", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.MGR.1", .syntax = "release G",                \
           .about = "releases the graph's buffers"),                                                \
      PARSE(parse_release), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_graph_build), WRITER(w_release))                                               \
  /* capsule-level DLPack (.pytsm only; the Python runner executes them) */                         \
  ROW(PY_MAKE, KEY(45),                                                                             \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "make", .binds = CTS_SYM_ARRAY,        \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_LITERAL, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "array A = make SHAPE DTYPE arange|zeros|values LIST",                         \
           .about = "the producer under test makes an array"),                                      \
      PARSE(parse_py_make), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_EXPORT, KEY(46),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "capsule", .verb = "export",                            \
           .binds = CTS_SYM_CAPSULE, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,      \
           .shape = CTS_SHAPE_PY_EXPORT, .made = CTS_MADE_NOTHING, .clause = NULL,                  \
           .syntax = "capsule C = export A OPTS", .about = "A.__dlpack__(...)"),                    \
      PARSE(parse_py_export), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                   \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_SLICE, KEY(47),                                                                            \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "slice", .binds = CTS_SYM_ARRAY,       \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_PY_VIEW, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "array B = slice A DIM START STOP STEP",                                       \
           .about = "a view of A: A[..., START:STOP:STEP] along DIM"),                              \
      PARSE(parse_py_slice), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                    \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_TRANSPOSE, KEY(48),                                                                        \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "transpose",                           \
           .binds = CTS_SYM_ARRAY, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,        \
           .shape = CTS_SHAPE_PY_VIEW, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "array B = transpose A",                                                       \
           .about = "a view of A with its dimensions reversed"),                                    \
      PARSE(parse_py_use_array), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_STRIDED, KEY(49),                                                                          \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "strided", .binds = CTS_SYM_ARRAY,     \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_PY_STRIDED, .made = CTS_MADE_NOTHING, .clause = NULL,                 \
           .syntax = "array B = strided A SHAPE bytes LIST",                                        \
           .about = "a view of A's memory with those strides in bytes"),                            \
      PARSE(parse_py_strided), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                  \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_UNEXPORTABLE, KEY(50),                                                                     \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "unexportable",                        \
           .binds = CTS_SYM_ARRAY, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,        \
           .shape = CTS_SHAPE_PY_UNEXPORTABLE, .made = CTS_MADE_NOTHING, .clause = NULL,            \
           .syntax = "array A = unexportable dtype|byteorder|layout|conj|grad",                     \
           .about = "an array of the producer that no DLTensor describes"),                         \
      PARSE(parse_py_unexportable), MODEL(cts__model_none), ADAPTER(cts__adapter_none),             \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_READONLY, KEY(51),                                                                         \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "readonly",                            \
           .binds = CTS_SYM_ARRAY, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,        \
           .shape = CTS_SHAPE_PY_VIEW, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "array B = readonly A", .about = "a read-only view of A"),                     \
      PARSE(parse_py_use_array), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_CONSUME, KEY(52),                                                                          \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "consume",                            \
           .binds = CTS_SYM_TENSOR, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,       \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "tensor T = consume C",                                                        \
           .about = "the consumer's from_dlpack on an object whose __dlpack__ returns C"),          \
      PARSE(parse_py_use_capsule), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_FROM, KEY(53),                                                                             \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "from", .binds = CTS_SYM_TENSOR,      \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_PY_EXPORT, .made = CTS_MADE_NOTHING, .clause = NULL,                  \
           .syntax = "tensor T = from A [copy true|false] [device (T, I)] [as C]",                  \
           .about = "the consumer's from_dlpack(A), full negotiation"),                             \
      PARSE(parse_py_from), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_RECONSUME, KEY(54),                                                                        \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "reconsume", .verb = NULL, .binds = 0,                  \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "reconsume C",                                                                 \
           .about = "the consumer takes C again (inside expect error)"),                            \
      PARSE(parse_py_use_capsule), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_DROP, KEY(55),                                                                             \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "drop", .verb = NULL, .binds = 0,                       \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "drop X [Y ...]", .about = "unbinds the names"),                               \
      PARSE(parse_py_drop), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_COLLECT, KEY(56),                                                                          \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "collect", .verb = NULL, .binds = 0,                    \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "collect", .about = "gc.collect()"),                                           \
      PARSE(parse_nothing), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_FLAT, KEY(57),                                                                             \
      DATA(.cls = CTS_CLASS_BLOCK, .lead = "flat", .verb = NULL, .binds = 0,                        \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY, .shape = CTS_SHAPE_FLAT,       \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "flat memory N MiB { ... }",         \
           .about = "names bound inside are dropped at }; every deleter started inside must have run"), \
      PARSE(parse_py_flat), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_UNWIND, KEY(58),                                                                           \
      DATA(.cls = CTS_CLASS_BLOCK, .lead = "unwind", .verb = NULL, .binds = 0,                      \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY, .shape = CTS_SHAPE_BLOCK,      \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "unwind { ... }",                    \
           .about = "the body runs in a function that then raises"),                                \
      PARSE(parse_nothing), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                     \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_EXPECT_ERROR, KEY(59),                                                                     \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "error", .binds = 0,                  \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_PY_ERROR, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "expect error KIND: STATEMENT",                                                \
           .about = "STATEMENT raises the named kind of error"),                                    \
      PARSE(parse_py_expect_error), MODEL(cts__model_none), ADAPTER(cts__adapter_none),             \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_XFROM, KEY(60),                                                                            \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "capsule", .verb = "xfrom",                             \
           .binds = CTS_SYM_CAPSULE, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,      \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "capsule C = xfrom A",                                                         \
           .about = "the producer's managed_tensor_from_py_object_no_sync(A)"),                     \
      PARSE(parse_py_use_array), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_XALLOC, KEY(61),                                                                           \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "capsule", .verb = "xalloc",                            \
           .binds = CTS_SYM_CAPSULE, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,      \
           .shape = CTS_SHAPE_PY_XAPI, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "capsule C = xalloc SHAPE DTYPE [device (T, I)]",                              \
           .about = "the producer's managed_tensor_allocator for that prototype"),                  \
      PARSE(parse_py_xalloc), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                   \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_FORGE, KEY(62),                                                                            \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "capsule", .verb = "forge",                             \
           .binds = CTS_SYM_CAPSULE, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,      \
           .shape = CTS_SHAPE_PY_XAPI, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "capsule C = forge SHAPE DTYPE [major N] [device (T, I)] [code (C, B)]",       \
           .about = "a versioned managed tensor the bridge makes itself"),                          \
      PARSE(parse_py_forge), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                    \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_XTO, KEY(63),                                                                              \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "xto", .binds = CTS_SYM_ARRAY,         \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "array B = xto C",                                                             \
           .about = "the producer's managed_tensor_to_py_object_no_sync of C's tensor"),            \
      PARSE(parse_py_use_capsule), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_ECHO, KEY(64),                                                                             \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "array", .verb = "echo", .binds = CTS_SYM_ARRAY,        \
           .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                                \
           .shape = CTS_SHAPE_OPERANDS, .made = CTS_MADE_NOTHING, .clause = NULL,                   \
           .syntax = "array B = echo A",                                                            \
           .about = "A through the consumer's call that returns its argument, with the probing table"), \
      PARSE(parse_py_use_array), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_EXCHANGE, KEY(65),                                                                         \
      DATA(.cls = CTS_CLASS_ACTION, .lead = "tensor", .verb = "exchange",                           \
           .binds = CTS_SYM_TENSOR, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,       \
           .shape = CTS_SHAPE_PY_XAPI, .made = CTS_MADE_NOTHING, .clause = NULL,                    \
           .syntax = "tensor T = exchange A [major N] [chain]",                                     \
           .about = "the consumer's from_dlpack of a holder publishing a probing table"),           \
      PARSE(parse_py_exchange), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                 \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  ROW(PY_EXPECT, KEY(66),                                                                           \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect",                                               \
           .verb = "name|version|flag|not|deleted|values|shape|dtype|device|strides|offset|alive|xapi|workstream|view|shares|writeable", \
           .binds = 0, .family = CTS_FAMILY_DLPACK_PY, .cap = TSM_CAP_DLPACK_PY,                    \
           .shape = CTS_SHAPE_PY_EXPECT, .made = CTS_MADE_NOTHING, .clause = NULL,                  \
           .syntax = "expect name|version|flag|not|deleted|values|shape|dtype|device|strides|offset|alive|xapi|workstream|view|shares|writeable ...", \
           .about = "a capsule-level expectation (cases/dlpack/python/README.md)"),                 \
      PARSE(parse_py_expect), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                   \
      EXEC(cts__exec_capsule_level), NO_WRITER("a .pytsm statement: generated cases are .tsm"))     \
  /* expectations */                                                                                \
  ROW(EXPECT_ERROR, KEY(67),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "error", .binds = 0,                  \
           .family = CTS_FAMILY_CORE, .cap = 0, .shape = CTS_SHAPE_ERROR,                           \
           .made = CTS_MADE_NOTHING, .clause = "ERR.CODE.1",                                        \
           .syntax = "expect error CODE: STATEMENT",                                                \
           .about = "STATEMENT fails with CODE and changes nothing; a binding is not made"),        \
      PARSE(parse_expect_error), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__exec_expect_error), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_OWNER, KEY(68),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "owner", .binds = 0,                  \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect owner T == M|none",          \
           .about = "T's holder; none when detached"),                                              \
      PARSE(parse_expect_holder), MODEL(cts__model_none), ADAPTER(cts__adapter_none),               \
      EXEC(cts__expect_owner), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_LENDER, KEY(69),                                                                       \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "lender", .binds = 0,                 \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect lender T == M|none",         \
           .about = "where a borrowed T goes back"),                                                \
      PARSE(parse_expect_holder), MODEL(cts__model_none), ADAPTER(cts__adapter_none),               \
      EXEC(cts__expect_lender), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_BORROWED, KEY(70),                                                                     \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "borrowed|not", .binds = 0,           \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_TRUTH,        \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect [not] borrowed T",           \
           .about = "borrow state"),                                                                \
      PARSE(parse_expect_borrowed), MODEL(cts__model_none), ADAPTER(cts__adapter_none),             \
      EXEC(cts__expect_borrowed), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_VALID, KEY(71),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "valid|released", .binds = 0,         \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_TRUTH,        \
           .made = CTS_MADE_NOTHING, .clause = "MGR.REL.1",                                         \
           .syntax = "expect valid|released T", .about = "liveness"),                               \
      PARSE(parse_expect_valid), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_valid), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_COUNT, KEY(72),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "count", .binds = 0,                  \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_COUNT,        \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect count M == N",               \
           .about = "M's live count"),                                                              \
      PARSE(parse_expect_mgr_count), MODEL(cts__model_none), ADAPTER(cts__adapter_none),            \
      EXEC(cts__expect_count), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_CHILDREN, KEY(73),                                                                     \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "children", .binds = 0,               \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_COUNT,        \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect children M == N",            \
           .about = "M's open children"),                                                           \
      PARSE(parse_expect_mgr_count), MODEL(cts__model_none), ADAPTER(cts__adapter_none),            \
      EXEC(cts__expect_children), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_STATE, KEY(74),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "state", .binds = 0,                  \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_STATE,        \
           .made = CTS_MADE_NOTHING, .clause = "MGR.CLOSE.1",                                       \
           .syntax = "expect state M == open|capped|closed", .about = "manager state"),             \
      PARSE(parse_expect_state), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_state), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_PARENT, KEY(75),                                                                       \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "parent", .binds = 0,                 \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect parent M == P|none",         \
           .about = "manager parent"),                                                              \
      PARSE(parse_expect_parent), MODEL(cts__model_none), ADAPTER(cts__adapter_none),               \
      EXEC(cts__expect_parent), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_VALUES, KEY(76),                                                                       \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "values", .binds = 0,                 \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_VALUES,       \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect values T == LIST",           \
           .about = "elements, row-major"),                                                         \
      PARSE(parse_expect_values), MODEL(cts__model_none), ADAPTER(cts__adapter_none),               \
      EXEC(cts__expect_values), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_SHAPE, KEY(77),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "shape", .binds = 0,                  \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_DIMS,         \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect shape T == SHAPE",           \
           .about = "shape"),                                                                       \
      PARSE(parse_expect_shape), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_shape), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_BYTES, KEY(78),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "bytes", .binds = 0,                  \
           .family = CTS_FAMILY_MANAGERS, .cap = TSM_CAP_MANAGERS, .shape = CTS_SHAPE_COUNT,        \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect bytes == N",                 \
           .about = "live bytes on the case's device"),                                             \
      PARSE(parse_expect_bytes), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_bytes), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_SCOPE, KEY(79),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "scope", .binds = 0,                  \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect scope T == S|none",          \
           .about = "T's owning scope"),                                                            \
      PARSE(parse_expect_scope), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_scope), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_SCOPE_STATE, KEY(80),                                                                  \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "state", .binds = 0,                  \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_STATE,            \
           .made = CTS_MADE_NOTHING, .clause = "SCOPE.DISP.1",                                      \
           .syntax = "expect state S == open|disposed", .about = "scope state"),                    \
      PARSE(parse_expect_state), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_scope_state), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_CURRENT, KEY(81),                                                                      \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "current", .binds = 0,                \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect current == S|none",          \
           .about = "this thread's innermost open scope"),                                          \
      PARSE(parse_expect_current), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__expect_current), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_MEMBERS, KEY(82),                                                                      \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "members", .binds = 0,                \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_COUNT,            \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect members S == N",             \
           .about = "S's member count"),                                                            \
      PARSE(parse_expect_members), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__expect_members), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_OUTER, KEY(83),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "outer", .binds = 0,                  \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_OPERANDS,         \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect outer S == S2|none",         \
           .about = "S's outer scope"),                                                             \
      PARSE(parse_expect_outer), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_outer), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_STATS, KEY(84),                                                                        \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "stats", .binds = 0,                  \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_SCOPES, .shape = CTS_SHAPE_STATS,            \
           .made = CTS_MADE_NOTHING, .clause = NULL,                                                \
           .syntax = "expect stats tensor|composite == COUNTERS [| COUNTERS]",                      \
           .about = "this thread's scope statistics"),                                              \
      PARSE(parse_expect_stats), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_stats), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_COMPOSITE, KEY(85),                                                                    \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "composite", .binds = 0,              \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_COMPOSITES, .shape = CTS_SHAPE_OPERANDS,     \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect composite T == P|none",      \
           .about = "the composite a component belongs to"),                                        \
      PARSE(parse_expect_scope), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_composite), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_ABSENT, KEY(86),                                                                       \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "absent", .binds = 0,                 \
           .family = CTS_FAMILY_SCOPES, .cap = TSM_CAP_COMPOSITES,                                  \
           .shape = CTS_SHAPE_COMPONENT, .made = CTS_MADE_NOTHING, .clause = NULL,                  \
           .syntax = "expect absent P COMPONENT", .about = "the component is absent"),              \
      PARSE(parse_expect_absent), MODEL(cts__model_none), ADAPTER(cts__adapter_none),               \
      EXEC(cts__expect_absent), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_DELETED, KEY(87),                                                                      \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "deleted", .binds = 0,                \
           .family = CTS_FAMILY_DLPACK, .cap = TSM_CAP_DLPACK_C, .shape = CTS_SHAPE_COUNT,          \
           .made = CTS_MADE_NOTHING, .clause = "DLP.DEL.1", .syntax = "expect deleted X == N",      \
           .about = "X's deleter ran N times"),                                                     \
      PARSE(parse_expect_deleted), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__expect_deleted), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_GRAPH_STATE, KEY(88),                                                                  \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "state", .binds = 0,                  \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_STATE,            \
           .made = CTS_MADE_NOTHING, .clause = "GRAPH.MGR.1",                                       \
           .syntax = "expect state G == open|released", .about = "graph state"),                    \
      PARSE(parse_expect_state), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                \
      EXEC(cts__expect_graph_state), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_NODE, KEY(89),                                                                         \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "node", .binds = 0,                   \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_VALUES,           \
           .made = CTS_MADE_NOTHING, .clause = NULL,                                                \
           .syntax = "expect node X == LIST|unspecified",                                           \
           .about = "X's elements after the last compute, or that they are not guaranteed"),        \
      PARSE(parse_expect_node), MODEL(cts__model_none), ADAPTER(cts__adapter_none),                 \
      EXEC(cts__expect_node), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)")) \
  ROW(EXPECT_PLANNED, KEY(90),                                                                      \
      DATA(.cls = CTS_CLASS_EXPECT, .lead = "expect", .verb = "planned", .binds = 0,                \
           .family = CTS_FAMILY_GRAPHS, .cap = TSM_CAP_GRAPHS, .shape = CTS_SHAPE_COUNT,            \
           .made = CTS_MADE_NOTHING, .clause = NULL, .syntax = "expect planned G <= N",             \
           .about = "the reuse plan's bytes"),                                                      \
      PARSE(parse_expect_planned), MODEL(cts__model_none), ADAPTER(cts__adapter_none),              \
      EXEC(cts__expect_planned), NO_WRITER("an expectation: completion writes the final ones (gen_write.c, final_checks)"))

/* The ops (enum tsm_op): X(NAME, OP, ARITY, IN_MANAGERS, IN_GRAPHS). ARITY counts the
 * tensor operands; reshape also takes a shape. */
#define CTS_OPS(X) \
  X("add", TSM_OP_ADD, 2, 1, 1) \
  X("sub", TSM_OP_SUB, 2, 1, 1) \
  X("mul", TSM_OP_MUL, 2, 1, 1) \
  X("sum", TSM_OP_SUM, 1, 1, 1) \
  X("gather", TSM_OP_GATHER, 2, 1, 0) \
  X("reshape", TSM_OP_RESHAPE, 1, 1, 1) \
  X("matmul", TSM_OP_MATMUL, 2, 1, 1) \
  X("transpose", TSM_OP_TRANSPOSE, 1, 0, 1) \
  X("diag", TSM_OP_DIAG, 1, 0, 1) \
  X("svd", TSM_OP_SVD, 1, 0, 1)
/* clang-format on */

/* The rows both `.tsm` and `.pytsm` cases use. */
#define CTS_IN_BOTH_DIALECTS(kind) ((kind) == CTS_REPEAT)

enum cts_stmt_class { CTS_CLASS_ACTION, CTS_CLASS_EXPECT, CTS_CLASS_BLOCK, CTS_CLASS_RESULT };

/* Which member of struct cts_stmt's union a statement fills (case.h). */
enum cts_stmt_shape {
  CTS_SHAPE_OPERANDS, /* operands only */
  CTS_SHAPE_LITERAL,  /* .literal */
  CTS_SHAPE_OP,       /* .op */
  CTS_SHAPE_PACK,     /* .pack */
  CTS_SHAPE_COMPONENT,/* .component */
  CTS_SHAPE_EXPORT,   /* .export */
  CTS_SHAPE_MAKE,     /* .make */
  CTS_SHAPE_FLAGS,    /* .graph_flags */
  CTS_SHAPE_REPEAT,   /* .repeat, and the body */
  CTS_SHAPE_THREAD,   /* .thread, and the body */
  CTS_SHAPE_BLOCK,    /* the body only */
  CTS_SHAPE_ERROR,    /* .error */
  CTS_SHAPE_COUNT,    /* .count */
  CTS_SHAPE_TRUTH,    /* .truth */
  CTS_SHAPE_STATE,    /* .state */
  CTS_SHAPE_VALUES,   /* .values */
  CTS_SHAPE_DIMS,     /* .dims */
  CTS_SHAPE_STATS,    /* .stats */
  CTS_SHAPE_PY_EXPORT,/* .py_export */
  CTS_SHAPE_PY_ERROR, /* .py_error */
  CTS_SHAPE_PY_EXPECT,/* .py_expect */
  CTS_SHAPE_PY_XAPI,  /* .py_xapi */
  CTS_SHAPE_PY_VIEW,  /* .py_view */
  CTS_SHAPE_PY_STRIDED, /* .py_strided */
  CTS_SHAPE_PY_UNEXPORTABLE, /* .py_unexportable */
  CTS_SHAPE_FLAT      /* .flat, and the body */
};

/* What a generic action made, for binding and checking it (exec.c). */
enum cts_made {
  CTS_MADE_NOTHING,
  CTS_MADE_HANDLE,    /* a new manager, scope or resource under a fresh handle */
  CTS_MADE_TENSOR,    /* a new tensor: its elements are checked too */
  CTS_MADE_FAMILY     /* the family's bind_made and check_made hooks bind and check it */
};

#endif
