/*
 * impl/src/dlpack_versioned.c: the versioned DLPack form (DLManagedTensorVersioned,
 * DLPack 1.x): the form logic of dlx_form.inc compiled against the dlpack.h bundled in
 * PyPI's apache-tvm-ffi (1.3; its folder is read from $(DLPACK_V1_INC_FILE), never
 * vendored), and the minor version it was built against.
 * Clauses: DLP.DEL.1-3, DLP.EXPORT.1-2, DLP.EXPORT.5, DLP.IMPORT.1, DLP.IMPORT.3-4.
 */
#include <dlpack/dlpack.h>

#if DLPACK_MAJOR_VERSION != 1
#error "dlpack_versioned.c needs a DLPack 1.x header"
#endif

#define TSMR__DLX_VERSIONED 1
#include "dlx_form.inc"

const int tsmr__dlx_versioned_minor = DLPACK_MINOR_VERSION;
