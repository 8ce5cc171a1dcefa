/*
 * harness/src/stmt_table.h: the case language's statement table and op table
 * (cases/README.md). One row per statement kind; the kind enum (case.h), the parser's
 * keyword lookup and argument parsing (case_stmt.c), the kind names, the capability a
 * case needs (enum tsm_cap) and the executor's dispatch (families.c) all expand these
 * rows. harness/src/README.md says how to add a statement.
 *
 * A row: X(KIND, CLASS, LEAD, VERB, BINDS, FAMILY, CAP, SHAPE, MADE, PARSE, MODEL,
 *          ADAPTER, EXEC)
 *   KIND     the enum name after CTS_ (CTS_MGR_SUB, ...)
 *   CLASS    CTS_CLASS_ACTION (may stand after `expect error CODE:`), _EXPECT (after
 *            `expect`), _BLOCK (opens `{`) or _RESULT
 *   LEAD     the first word of the statement
 *   VERB     for bindings the word after `=`, for expectations the word after `expect`;
 *            "a|b" lists alternative spellings, CTS_VERB_OP is any name of the op table,
 *            NULL: the lead alone selects the row (its PARSE may pick a sibling row by
 *            the kind of an operand: attach, detach, dispose, move, release, state)
 *   BINDS    the symbol kind a binding statement binds (enum cts_sym_kind), or 0
 *   FAMILY   the family that executes it (enum cts_family_id, families.h)
 *   CAP      the capability the statement needs (enum tsm_cap), or 0
 *   SHAPE    the member of struct cts_stmt's union it fills (enum cts_stmt_shape)
 *   MADE     what a successful action made, for the generic binding (enum cts_made)
 *   PARSE    parses the words after LEAD/VERB (case_stmt.c)
 *   MODEL    the model's side of a generic action (cts_model_fn), cts__model_none if EXEC
 *            does both sides itself
 *   ADAPTER  the adapter's side of a generic action (cts_adapter_fn), cts__adapter_none
 *   EXEC     runs the statement (cts_exec_fn): cts__exec_action for generic actions
 *
 * The rows of CTS_FAMILY_DLPACK_PY are the capsule-level statements of `.pytsm` cases:
 * the C front end parses them (`tsm-cts parse --json`) for the Python runner, which
 * executes them; their EXEC only reports an Error. A `.pytsm` file may use those rows
 * and the rows CTS_IN_BOTH_DIALECTS names; a `.tsm` file every other row.
 */
#ifndef CTS_STMT_TABLE_H
#define CTS_STMT_TABLE_H

#define CTS_VERB_OP "(op)"

/* clang-format off */
#define CTS_STATEMENTS(X) \
  /* managers (spec/managers.md) */ \
  X(MGR_SUB, CTS_CLASS_ACTION, "manager", "sub", CTS_SYM_MANAGER, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_HANDLE, parse_use_manager, cts__model_sub, cts__adapter_sub, cts__exec_action) \
  X(MGR_SUB_OF, CTS_CLASS_ACTION, "manager", "sub_of", CTS_SYM_MANAGER, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_HANDLE, parse_use_resource, cts__model_sub_of, cts__adapter_sub_of, cts__exec_action) \
  X(CREATE, CTS_CLASS_ACTION, "tensor", "zeros|ones|full|arange|values", CTS_SYM_TENSOR, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_LITERAL, CTS_MADE_TENSOR, parse_create, cts__model_create, cts__adapter_create, cts__exec_action) \
  X(OP, CTS_CLASS_ACTION, "tensor", CTS_VERB_OP, CTS_SYM_TENSOR, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OP, CTS_MADE_TENSOR, parse_op, cts__model_op, cts__adapter_op, cts__exec_action) \
  X(ATTACH, CTS_CLASS_ACTION, "attach", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_attach, cts__model_attach, cts__adapter_attach, cts__exec_action) \
  X(DETACH, CTS_CLASS_ACTION, "detach", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_detach, cts__model_detach, cts__adapter_detach, cts__exec_action) \
  X(BORROW, CTS_CLASS_ACTION, "borrow", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_borrow, cts__model_borrow, cts__adapter_borrow, cts__exec_action) \
  X(RET, CTS_CLASS_ACTION, "ret", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_ret, cts__model_ret, cts__adapter_ret, cts__exec_action) \
  X(ADOPT, CTS_CLASS_ACTION, "tensor", "adopt", CTS_SYM_TENSOR, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_TENSOR, parse_use_resource, cts__model_adopt, cts__adapter_adopt, cts__exec_action) \
  X(RELEASE, CTS_CLASS_ACTION, "release", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_release, cts__model_release, cts__adapter_release, cts__exec_action) \
  X(CLOSE, CTS_CLASS_ACTION, "close", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_manager, cts__model_close, cts__adapter_close, cts__exec_action) \
  X(CAP, CTS_CLASS_ACTION, "cap", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_manager, cts__model_cap, cts__adapter_cap, cts__exec_action) \
  X(DUMP, CTS_CLASS_ACTION, "dump", NULL, 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_dump, cts__model_dump, cts__adapter_dump, cts__exec_action) \
  /* control */ \
  X(REPEAT, CTS_CLASS_BLOCK, "repeat", NULL, 0, CTS_FAMILY_CORE, 0, CTS_SHAPE_REPEAT, CTS_MADE_NOTHING, parse_repeat, cts__model_none, cts__adapter_none, cts__exec_repeat) \
  X(THREAD, CTS_CLASS_BLOCK, "thread", NULL, 0, CTS_FAMILY_CORE, TSM_CAP_THREADS, CTS_SHAPE_THREAD, CTS_MADE_NOTHING, parse_thread, cts__model_none, cts__adapter_none, cts__exec_thread) \
  X(JOIN, CTS_CLASS_ACTION, "join", NULL, 0, CTS_FAMILY_CORE, TSM_CAP_THREADS, CTS_SHAPE_THREAD, CTS_MADE_NOTHING, parse_join, cts__model_none, cts__adapter_none, cts__exec_join) \
  X(PARALLEL, CTS_CLASS_BLOCK, "parallel", NULL, 0, CTS_FAMILY_CORE, TSM_CAP_THREADS, CTS_SHAPE_BLOCK, CTS_MADE_NOTHING, parse_parallel, cts__model_none, cts__adapter_none, cts__exec_parallel) \
  /* scopes (spec/scopes.md) */ \
  X(SCOPE_OPEN, CTS_CLASS_ACTION, "scope", "open", CTS_SYM_SCOPE, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_HANDLE, parse_nothing, cts__model_scope_open, cts__adapter_scope_open, cts__exec_action) \
  X(SCOPE_DISPOSE, CTS_CLASS_ACTION, "dispose", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_dispose, cts__model_dispose, cts__adapter_dispose, cts__exec_action) \
  X(SCOPE_MOVE_OUTER, CTS_CLASS_ACTION, "move", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_move, cts__model_move_outer, cts__adapter_move_outer, cts__exec_action) \
  X(SCOPE_MOVE_OTHER, CTS_CLASS_ACTION, "move", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_move, cts__model_move_other, cts__adapter_move_other, cts__exec_action) \
  X(SCOPE_DETACH, CTS_CLASS_ACTION, "detach", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_detach, cts__model_scope_detach, cts__adapter_scope_detach, cts__exec_action) \
  X(SCOPE_ATTACH, CTS_CLASS_ACTION, "attach", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_attach, cts__model_scope_attach, cts__adapter_scope_attach, cts__exec_action) \
  X(SCOPE_DISPOSE_ALL, CTS_CLASS_ACTION, "dispose", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_dispose, cts__model_dispose_all, cts__adapter_dispose_all, cts__exec_action) \
  X(SCOPE_HANDOVER, CTS_CLASS_ACTION, "handover", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_scope, cts__model_handover, cts__adapter_handover, cts__exec_action) \
  X(WRAPPED, CTS_CLASS_BLOCK, "wrapped", NULL, 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_BLOCK, CTS_MADE_NOTHING, parse_wrapped, cts__model_none, cts__adapter_none, cts__exec_wrapped) \
  X(RESULT, CTS_CLASS_RESULT, "result", NULL, 0, CTS_FAMILY_SCOPES, 0, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_result, cts__model_none, cts__adapter_none, cts__exec_result) \
  /* composites (spec/composites.md) */ \
  X(PACK, CTS_CLASS_ACTION, "composite", "pack", CTS_SYM_COMPOSITE, CTS_FAMILY_SCOPES, TSM_CAP_COMPOSITES, CTS_SHAPE_PACK, CTS_MADE_FAMILY, parse_pack, cts__model_pack, cts__adapter_pack, cts__exec_action) \
  X(LIST, CTS_CLASS_ACTION, "composite", "list", CTS_SYM_COMPOSITE, CTS_FAMILY_SCOPES, TSM_CAP_COMPOSITES, CTS_SHAPE_OPERANDS, CTS_MADE_FAMILY, parse_list_items, cts__model_list, cts__adapter_list, cts__exec_action) \
  X(COMPONENT, CTS_CLASS_ACTION, "tensor", "component", CTS_SYM_TENSOR, CTS_FAMILY_SCOPES, TSM_CAP_COMPOSITES, CTS_SHAPE_COMPONENT, CTS_MADE_FAMILY, parse_component, cts__model_component, cts__adapter_component, cts__exec_action) \
  /* DLPack (spec/dlpack.md) */ \
  X(DL_EXPORT, CTS_CLASS_ACTION, "dlpack", "export", CTS_SYM_DLPACK, CTS_FAMILY_DLPACK, TSM_CAP_DLPACK_C, CTS_SHAPE_EXPORT, CTS_MADE_NOTHING, parse_export, cts__model_none, cts__adapter_none, cts__exec_dl_export) \
  X(DL_MAKE, CTS_CLASS_ACTION, "dlpack", "make", CTS_SYM_DLPACK, CTS_FAMILY_DLPACK, TSM_CAP_DLPACK_C, CTS_SHAPE_MAKE, CTS_MADE_NOTHING, parse_make, cts__model_none, cts__adapter_none, cts__exec_dl_make) \
  X(DL_IMPORT, CTS_CLASS_ACTION, "tensor", "import", CTS_SYM_TENSOR, CTS_FAMILY_DLPACK, TSM_CAP_DLPACK_C, CTS_SHAPE_OPERANDS, CTS_MADE_TENSOR, parse_import, cts__model_none, cts__adapter_none, cts__exec_dl_import) \
  X(DL_OUTLIVE, CTS_CLASS_ACTION, "outlive", NULL, 0, CTS_FAMILY_DLPACK, TSM_CAP_DLPACK_C, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_dlpack, cts__model_none, cts__adapter_none, cts__exec_dl_outlive) \
  X(DL_DROP, CTS_CLASS_ACTION, "drop", NULL, 0, CTS_FAMILY_DLPACK, TSM_CAP_DLPACK_C, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_dlpack, cts__model_none, cts__adapter_none, cts__exec_dl_drop) \
  /* graphs (spec/graphs.md) */ \
  X(G_NEW, CTS_CLASS_ACTION, "graph", "new", CTS_SYM_GRAPH, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_manager, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  X(G_LEAF, CTS_CLASS_ACTION, "node", "leaf", CTS_SYM_NODE, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_LITERAL, CTS_MADE_NOTHING, parse_leaf, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  X(G_EXTERNAL, CTS_CLASS_ACTION, "node", "external", CTS_SYM_NODE, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_external, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  X(G_OP, CTS_CLASS_ACTION, "node", CTS_VERB_OP, CTS_SYM_NODE, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OP, CTS_MADE_NOTHING, parse_graph_op, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  X(G_FLAG, CTS_CLASS_ACTION, "flag", NULL, 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_FLAGS, CTS_MADE_NOTHING, parse_flag, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  X(G_EXPAND, CTS_CLASS_ACTION, "expand", NULL, 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expand, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  X(G_COMPUTE, CTS_CLASS_ACTION, "compute", NULL, 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_use_graph, cts__model_none, cts__adapter_none, cts__exec_graph_compute) \
  X(G_RECOMPUTE, CTS_CLASS_ACTION, "recompute", NULL, 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_TRUTH, CTS_MADE_NOTHING, parse_recompute, cts__model_none, cts__adapter_none, cts__exec_graph_recompute) \
  X(G_READ, CTS_CLASS_ACTION, "read", NULL, 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_read, cts__model_none, cts__adapter_none, cts__exec_graph_read) \
  X(G_RELEASE, CTS_CLASS_ACTION, "release", NULL, 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_release, cts__model_none, cts__adapter_none, cts__exec_graph_build) \
  /* capsule-level DLPack (.pytsm only; the Python runner executes them) */ \
  X(PY_MAKE, CTS_CLASS_ACTION, "array", "make", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_LITERAL, CTS_MADE_NOTHING, parse_py_make, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_EXPORT, CTS_CLASS_ACTION, "capsule", "export", CTS_SYM_CAPSULE, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_EXPORT, CTS_MADE_NOTHING, parse_py_export, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_SLICE, CTS_CLASS_ACTION, "array", "slice", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_VIEW, CTS_MADE_NOTHING, parse_py_slice, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_TRANSPOSE, CTS_CLASS_ACTION, "array", "transpose", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_VIEW, CTS_MADE_NOTHING, parse_py_use_array, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_STRIDED, CTS_CLASS_ACTION, "array", "strided", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_STRIDED, CTS_MADE_NOTHING, parse_py_strided, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_UNEXPORTABLE, CTS_CLASS_ACTION, "array", "unexportable", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_UNEXPORTABLE, CTS_MADE_NOTHING, parse_py_unexportable, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_READONLY, CTS_CLASS_ACTION, "array", "readonly", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_VIEW, CTS_MADE_NOTHING, parse_py_use_array, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_CONSUME, CTS_CLASS_ACTION, "tensor", "consume", CTS_SYM_TENSOR, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_py_use_capsule, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_FROM, CTS_CLASS_ACTION, "tensor", "from", CTS_SYM_TENSOR, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_EXPORT, CTS_MADE_NOTHING, parse_py_from, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_RECONSUME, CTS_CLASS_ACTION, "reconsume", NULL, 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_py_use_capsule, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_DROP, CTS_CLASS_ACTION, "drop", NULL, 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_py_drop, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_COLLECT, CTS_CLASS_ACTION, "collect", NULL, 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_nothing, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_FLAT, CTS_CLASS_BLOCK, "flat", NULL, 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_FLAT, CTS_MADE_NOTHING, parse_py_flat, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_UNWIND, CTS_CLASS_BLOCK, "unwind", NULL, 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_BLOCK, CTS_MADE_NOTHING, parse_nothing, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_EXPECT_ERROR, CTS_CLASS_EXPECT, "expect", "error", 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_ERROR, CTS_MADE_NOTHING, parse_py_expect_error, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_XFROM, CTS_CLASS_ACTION, "capsule", "xfrom", CTS_SYM_CAPSULE, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_py_use_array, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_XALLOC, CTS_CLASS_ACTION, "capsule", "xalloc", CTS_SYM_CAPSULE, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_XAPI, CTS_MADE_NOTHING, parse_py_xalloc, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_FORGE, CTS_CLASS_ACTION, "capsule", "forge", CTS_SYM_CAPSULE, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_XAPI, CTS_MADE_NOTHING, parse_py_forge, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_XTO, CTS_CLASS_ACTION, "array", "xto", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_py_use_capsule, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_ECHO, CTS_CLASS_ACTION, "array", "echo", CTS_SYM_ARRAY, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_py_use_array, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_EXCHANGE, CTS_CLASS_ACTION, "tensor", "exchange", CTS_SYM_TENSOR, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_XAPI, CTS_MADE_NOTHING, parse_py_exchange, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  X(PY_EXPECT, CTS_CLASS_EXPECT, "expect", "name|version|flag|not|deleted|values|shape|dtype|device|strides|offset|alive|xapi|workstream|view|shares|writeable", 0, CTS_FAMILY_DLPACK_PY, TSM_CAP_DLPACK_PY, CTS_SHAPE_PY_EXPECT, CTS_MADE_NOTHING, parse_py_expect, cts__model_none, cts__adapter_none, cts__exec_capsule_level) \
  /* expectations */ \
  X(EXPECT_ERROR, CTS_CLASS_EXPECT, "expect", "error", 0, CTS_FAMILY_CORE, 0, CTS_SHAPE_ERROR, CTS_MADE_NOTHING, parse_expect_error, cts__model_none, cts__adapter_none, cts__exec_expect_error) \
  X(EXPECT_OWNER, CTS_CLASS_EXPECT, "expect", "owner", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_holder, cts__model_none, cts__adapter_none, cts__expect_owner) \
  X(EXPECT_LENDER, CTS_CLASS_EXPECT, "expect", "lender", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_holder, cts__model_none, cts__adapter_none, cts__expect_lender) \
  X(EXPECT_BORROWED, CTS_CLASS_EXPECT, "expect", "borrowed|not", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_TRUTH, CTS_MADE_NOTHING, parse_expect_borrowed, cts__model_none, cts__adapter_none, cts__expect_borrowed) \
  X(EXPECT_VALID, CTS_CLASS_EXPECT, "expect", "valid|released", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_TRUTH, CTS_MADE_NOTHING, parse_expect_valid, cts__model_none, cts__adapter_none, cts__expect_valid) \
  X(EXPECT_COUNT, CTS_CLASS_EXPECT, "expect", "count", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_COUNT, CTS_MADE_NOTHING, parse_expect_mgr_count, cts__model_none, cts__adapter_none, cts__expect_count) \
  X(EXPECT_CHILDREN, CTS_CLASS_EXPECT, "expect", "children", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_COUNT, CTS_MADE_NOTHING, parse_expect_mgr_count, cts__model_none, cts__adapter_none, cts__expect_children) \
  X(EXPECT_STATE, CTS_CLASS_EXPECT, "expect", "state", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_STATE, CTS_MADE_NOTHING, parse_expect_state, cts__model_none, cts__adapter_none, cts__expect_state) \
  X(EXPECT_PARENT, CTS_CLASS_EXPECT, "expect", "parent", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_parent, cts__model_none, cts__adapter_none, cts__expect_parent) \
  X(EXPECT_VALUES, CTS_CLASS_EXPECT, "expect", "values", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_VALUES, CTS_MADE_NOTHING, parse_expect_values, cts__model_none, cts__adapter_none, cts__expect_values) \
  X(EXPECT_SHAPE, CTS_CLASS_EXPECT, "expect", "shape", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_DIMS, CTS_MADE_NOTHING, parse_expect_shape, cts__model_none, cts__adapter_none, cts__expect_shape) \
  X(EXPECT_BYTES, CTS_CLASS_EXPECT, "expect", "bytes", 0, CTS_FAMILY_MANAGERS, TSM_CAP_MANAGERS, CTS_SHAPE_COUNT, CTS_MADE_NOTHING, parse_expect_bytes, cts__model_none, cts__adapter_none, cts__expect_bytes) \
  X(EXPECT_SCOPE, CTS_CLASS_EXPECT, "expect", "scope", 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_scope, cts__model_none, cts__adapter_none, cts__expect_scope) \
  X(EXPECT_SCOPE_STATE, CTS_CLASS_EXPECT, "expect", "state", 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_STATE, CTS_MADE_NOTHING, parse_expect_state, cts__model_none, cts__adapter_none, cts__expect_scope_state) \
  X(EXPECT_CURRENT, CTS_CLASS_EXPECT, "expect", "current", 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_current, cts__model_none, cts__adapter_none, cts__expect_current) \
  X(EXPECT_MEMBERS, CTS_CLASS_EXPECT, "expect", "members", 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_COUNT, CTS_MADE_NOTHING, parse_expect_members, cts__model_none, cts__adapter_none, cts__expect_members) \
  X(EXPECT_OUTER, CTS_CLASS_EXPECT, "expect", "outer", 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_outer, cts__model_none, cts__adapter_none, cts__expect_outer) \
  X(EXPECT_STATS, CTS_CLASS_EXPECT, "expect", "stats", 0, CTS_FAMILY_SCOPES, TSM_CAP_SCOPES, CTS_SHAPE_STATS, CTS_MADE_NOTHING, parse_expect_stats, cts__model_none, cts__adapter_none, cts__expect_stats) \
  X(EXPECT_COMPOSITE, CTS_CLASS_EXPECT, "expect", "composite", 0, CTS_FAMILY_SCOPES, TSM_CAP_COMPOSITES, CTS_SHAPE_OPERANDS, CTS_MADE_NOTHING, parse_expect_scope, cts__model_none, cts__adapter_none, cts__expect_composite) \
  X(EXPECT_ABSENT, CTS_CLASS_EXPECT, "expect", "absent", 0, CTS_FAMILY_SCOPES, TSM_CAP_COMPOSITES, CTS_SHAPE_COMPONENT, CTS_MADE_NOTHING, parse_expect_absent, cts__model_none, cts__adapter_none, cts__expect_absent) \
  X(EXPECT_DELETED, CTS_CLASS_EXPECT, "expect", "deleted", 0, CTS_FAMILY_DLPACK, TSM_CAP_DLPACK_C, CTS_SHAPE_COUNT, CTS_MADE_NOTHING, parse_expect_deleted, cts__model_none, cts__adapter_none, cts__expect_deleted) \
  X(EXPECT_GRAPH_STATE, CTS_CLASS_EXPECT, "expect", "state", 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_STATE, CTS_MADE_NOTHING, parse_expect_state, cts__model_none, cts__adapter_none, cts__expect_graph_state) \
  X(EXPECT_NODE, CTS_CLASS_EXPECT, "expect", "node", 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_VALUES, CTS_MADE_NOTHING, parse_expect_node, cts__model_none, cts__adapter_none, cts__expect_node) \
  X(EXPECT_PLANNED, CTS_CLASS_EXPECT, "expect", "planned", 0, CTS_FAMILY_GRAPHS, TSM_CAP_GRAPHS, CTS_SHAPE_COUNT, CTS_MADE_NOTHING, parse_expect_planned, cts__model_none, cts__adapter_none, cts__expect_planned)

/* Each row's stable key (fuzz/README.md, "Stable keys"): X(KIND, KEY). The scenario
 * generator (gen.c) draws a row by key, never by position, so the bytes of a stored fuzz
 * finding decode to the same rows whatever rows are inserted or reordered. A new row
 * takes the next free key below CTS_STMT_KEY_SPACE; a key is never changed or reused.
 * gen.c fails to build when a row has no key or two rows share one. */
#define CTS_STMT_KEY_SPACE 128
#define CTS_STMT_KEYS(X) \
  X(MGR_SUB, 0) X(MGR_SUB_OF, 1) X(CREATE, 2) X(OP, 3) X(ATTACH, 4) X(DETACH, 5) \
  X(BORROW, 6) X(RET, 7) X(ADOPT, 8) X(RELEASE, 9) X(CLOSE, 10) X(CAP, 11) X(DUMP, 12) \
  X(REPEAT, 13) X(THREAD, 14) X(JOIN, 15) X(PARALLEL, 16) X(SCOPE_OPEN, 17) \
  X(SCOPE_DISPOSE, 18) X(SCOPE_MOVE_OUTER, 19) X(SCOPE_MOVE_OTHER, 20) X(SCOPE_DETACH, 21) \
  X(SCOPE_ATTACH, 22) X(SCOPE_DISPOSE_ALL, 23) X(SCOPE_HANDOVER, 24) X(WRAPPED, 25) \
  X(RESULT, 26) X(PACK, 27) X(LIST, 28) X(COMPONENT, 29) X(DL_EXPORT, 30) X(DL_MAKE, 31) \
  X(DL_IMPORT, 32) X(DL_OUTLIVE, 33) X(DL_DROP, 34) X(G_NEW, 35) X(G_LEAF, 36) \
  X(G_EXTERNAL, 37) X(G_OP, 38) X(G_FLAG, 39) X(G_EXPAND, 40) X(G_COMPUTE, 41) \
  X(G_RECOMPUTE, 42) X(G_READ, 43) X(G_RELEASE, 44) X(PY_MAKE, 45) X(PY_EXPORT, 46) \
  X(PY_SLICE, 47) X(PY_TRANSPOSE, 48) X(PY_STRIDED, 49) X(PY_UNEXPORTABLE, 50) \
  X(PY_READONLY, 51) X(PY_CONSUME, 52) X(PY_FROM, 53) X(PY_RECONSUME, 54) X(PY_DROP, 55) \
  X(PY_COLLECT, 56) X(PY_FLAT, 57) X(PY_UNWIND, 58) X(PY_EXPECT_ERROR, 59) X(PY_XFROM, 60) \
  X(PY_XALLOC, 61) X(PY_FORGE, 62) X(PY_XTO, 63) X(PY_ECHO, 64) X(PY_EXCHANGE, 65) \
  X(PY_EXPECT, 66) X(EXPECT_ERROR, 67) X(EXPECT_OWNER, 68) X(EXPECT_LENDER, 69) \
  X(EXPECT_BORROWED, 70) X(EXPECT_VALID, 71) X(EXPECT_COUNT, 72) X(EXPECT_CHILDREN, 73) \
  X(EXPECT_STATE, 74) X(EXPECT_PARENT, 75) X(EXPECT_VALUES, 76) X(EXPECT_SHAPE, 77) \
  X(EXPECT_BYTES, 78) X(EXPECT_SCOPE, 79) X(EXPECT_SCOPE_STATE, 80) X(EXPECT_CURRENT, 81) \
  X(EXPECT_MEMBERS, 82) X(EXPECT_OUTER, 83) X(EXPECT_STATS, 84) X(EXPECT_COMPOSITE, 85) \
  X(EXPECT_ABSENT, 86) X(EXPECT_DELETED, 87) X(EXPECT_GRAPH_STATE, 88) X(EXPECT_NODE, 89) \
  X(EXPECT_PLANNED, 90)

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
