/*
 * harness/src/family/families.c: the family table, the one place that names the
 * families' executors: each family's hooks and the executor side of the statement table
 * (stmt_table.h); the names a case's `requires:` may give are the case language's
 * (lang/requires.c).
 * The executor core (exec.c, exec_observe.c, exec_thread.c, exec_parallel.c) reaches a
 * family only through these tables. dlpack-py's executor side is here: it has none.
 */
#include "exec_internal.h"

extern const struct cts_family cts_family_managers, cts_family_scopes, cts_family_dlpack,
    cts_family_graphs;

static const struct cts_family core_family = {0};

/* dlpack-py has no hooks: its statements (.pytsm) are parsed here and run by the Python
 * runner. The C judge discovers only .tsm files, so reaching one is a broken case (an
 * Error), not a crash. */
int cts__exec_capsule_level(struct cts_run *r, const struct cts_stmt *st, int expected_err) {
  (void)expected_err;
  return cts__report(r, CTS_ERROR, "'%s' is a capsule-level statement (.pytsm): the Python "
                     "runner (harness/python/bridge.py) runs it, not tsm-cts", st->text);
}

const struct cts_family *const cts_families[CTS_N_FAMILIES] = {
    [CTS_FAMILY_CORE] = &core_family,
    [CTS_FAMILY_MANAGERS] = &cts_family_managers,
    [CTS_FAMILY_SCOPES] = &cts_family_scopes,
    [CTS_FAMILY_DLPACK] = &cts_family_dlpack,
    [CTS_FAMILY_GRAPHS] = &cts_family_graphs,
    [CTS_FAMILY_DLPACK_PY] = &core_family,
};

const struct cts_stmt_exec cts_stmt_exec[CTS_N_STMT_KINDS] = {
#define CTS__EXEC_DATA(...) __VA_ARGS__
#define CTS__EXEC_MODEL(f) .model = f
#define CTS__EXEC_ADAPTER(f) .adapter = f
#define CTS__EXEC_EXEC(f) .exec = f
#define CTS__EXEC(KIND, KEY, DATA, PARSE, MODEL, ADAPTER, EXEC, WRITER)                     \
  [CTS_##KIND] = {CTS__EXEC_##EXEC, CTS__EXEC_##MODEL, CTS__EXEC_##ADAPTER, CTS__EXEC_##DATA},
    CTS_STATEMENTS(CTS__EXEC)
#undef CTS__EXEC
};
