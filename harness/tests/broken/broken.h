/*
 * harness/tests/broken/broken.h: shared by the deliberately broken adapters.
 *
 * Each broken adapter links a second copy of harness/adapters/example/example_adapter.c
 * built with -Dtsm_adapter_entry=tsm_example_entry (harness/tests/tests.mk), copies the
 * example's vtable into a static, spoils one field or slot, and exports its own
 * tsm_adapter_entry. The self-tests (run_selftests.sh) check that the judge reports each
 * one with the right status and that the run completes.
 */
#ifndef TSM_TESTS_BROKEN_H
#define TSM_TESTS_BROKEN_H

#include <tsm/adapter.h>

/* RETURN the example adapter's vtable (static, not owned). */
const struct tsm_adapter *tsm_example_entry(void);

/* The symbol the judge looks up (ABI.LOAD.1); every broken adapter but no_entry
 * defines it. */
const struct tsm_adapter *tsm_adapter_entry(void);

#endif
