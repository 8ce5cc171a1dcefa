/*
 * harness/src/lang/families.h: the families of the case language (cases/README.md,
 * `requires:`). A family is a module: its statements are rows of the statement table
 * (stmt_table.h), its executor side plugs into the core through the hooks of struct
 * cts_family (exec_internal.h), and families.c is the one file that lists them.
 * harness/src/README.md says how to add one.
 */
#ifndef CTS_FAMILIES_H
#define CTS_FAMILIES_H

/* The executing modules; CORE holds the control statements (repeat, thread, parallel,
 * expect error). */
enum cts_family_id {
  CTS_FAMILY_CORE,
  CTS_FAMILY_MANAGERS,  /* exec_managers.c, exec_expect.c */
  CTS_FAMILY_SCOPES,    /* scopes and composites: exec_scopes.c, exec_managers.c, exec_expect.c */
  CTS_FAMILY_DLPACK,    /* exec_dlpack.c */
  CTS_FAMILY_GRAPHS,    /* exec_graph.c */
  CTS_FAMILY_DLPACK_PY, /* .pytsm statements: parsed here, run by harness/python */
  CTS_N_FAMILIES
};

#endif
