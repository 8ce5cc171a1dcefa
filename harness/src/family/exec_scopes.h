/*
 * harness/src/family/exec_scopes.h: what the scopes family (exec_scopes.c) offers its
 * expectations (exec_expect.c): a scope's name for messages and the observation of one
 * scope and of the running thread. Each check returns 0, or -1 after reporting.
 */
#ifndef CTS_EXEC_SCOPES_H
#define CTS_EXEC_SCOPES_H

#include "exec_internal.h"

char *cts__describe_scope(struct cts_run *r, int sc, char *buf, size_t n);
int cts__check_scope(struct cts_run *r, int sc);
/* The running thread's current scope and statistics. */
int cts__check_thread(struct cts_run *r);

#endif
