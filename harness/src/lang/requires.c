/*
 * harness/src/lang/requires.c: the names a case's `requires:` may give (cases/README.md),
 * each with the capability it needs (enum tsm_cap). The case language's half of the
 * family table: the families' ids are families.h's, their hooks and executors the
 * family layer's (family/families.c).
 */
#include <string.h>

#include "case.h"

/* dlpack-py is the Python capsule family: its cases run in the Python runner; on the C
 * side it is only a name and a capability. threads is the core's (thread and parallel
 * blocks). */
static const struct {
  const char *name;
  uint32_t cap;
} requires_names[] = {{"managers", TSM_CAP_MANAGERS},   {"scopes", TSM_CAP_SCOPES},
                      {"composites", TSM_CAP_COMPOSITES}, {"dlpack-c", TSM_CAP_DLPACK_C},
                      {"dlpack-py", TSM_CAP_DLPACK_PY},   {"graphs", TSM_CAP_GRAPHS},
                      {"threads", TSM_CAP_THREADS}};

uint32_t cts_family_cap(const char *family) {
  for (size_t i = 0; i < sizeof requires_names / sizeof requires_names[0]; i++)
    if (strcmp(requires_names[i].name, family) == 0) return requires_names[i].cap;
  return 0;
}
