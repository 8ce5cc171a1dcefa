/*
 * impl/src/dlpack_legacy.c: the legacy DLPack form (DLManagedTensor, DLPack 0.x): the
 * form logic of dlx_form.inc compiled against Debian's libdlpack-dev header (0.6,
 * /usr/include/dlpack/dlpack.h; never vendored). A legacy tensor has no version and
 * no flags; NULL strides mean compact (DLP.IMPORT.4).
 * Clauses: DLP.DEL.1-3, DLP.EXPORT.1-2, DLP.IMPORT.3-4.
 */
#include <dlpack/dlpack.h>

#define TSMR__DLX_VERSIONED 0
#include "dlx_form.inc"
