/*
 * impl/include/tsmref_test.h: the test hooks of libtsmref, for conformance adapters and
 * the library's own tests; not part of the stable API (tsmref.h), and not for
 * production use. Installed next to tsmref.h.
 *
 * Allocation fault injection (ERR.NOMEM.1, ERR.ATOMIC.1, MGR.CREATE.3): every host
 * allocation of the library goes through one hook, so a test can make the k-th
 * allocation from now fail and then check that the failing call left no trace. The
 * countdown is process-wide (all contexts, all threads).
 */
#ifndef TSMREF_TEST_H
#define TSMREF_TEST_H

#include "tsmref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arms the hook: the k-th host allocation from now fails (returns NULL inside the
 * library, so the calling API function returns TSMR_ENOMEM); 0 disarms it. */
TSMR_API void tsmr_test_alloc_fail_nth(uint64_t k);

/* The countdown left: 0 once the armed allocation has failed (or when disarmed), else
 * how many allocations remain until it fails (1: the next one). */
TSMR_API uint64_t tsmr_test_alloc_fail_left(void);

/* The stride at which a manager's close walks the tensors of a run of creates: the
 * bytes of a record's head, the part of a record a close touches (its body lies apart).
 * bench-managers compares the close with a bare walk of blocks of this size
 * (bench/README.md). */
TSMR_API size_t tsmr_test_close_stride(void);

#ifdef __cplusplus
}
#endif

#endif /* TSMREF_TEST_H */
