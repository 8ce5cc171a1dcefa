/*
 * fuzz/fuzz_common.h: what every fuzz target of fuzz/ shares: a reader that turns the
 * fuzzer's bytes into bounded choices, the adapter under test (loaded with the judge's
 * own loader, harness/src/base/adapter_load.c), and the one way a target reports a broken
 * rule (a message naming the clause, then abort(), which every engine records as a
 * crash with the input that caused it).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "tsm/adapter.h"

/* The fuzzer's bytes, consumed front to back; past the end every read gives 0, so
 * any input, even an empty one, decodes to something. The reader never owns data. */
struct fuzz_in {
  const uint8_t *data;
  size_t size, pos;
};

uint8_t fuzz_u8(struct fuzz_in *in);
uint64_t fuzz_u64(struct fuzz_in *in);
/* A number in [0, n), n >= 1. */
uint32_t fuzz_below(struct fuzz_in *in, uint32_t n);
/* One of the n values of a table. */
int64_t fuzz_pick(struct fuzz_in *in, const int64_t *table, size_t n);
#define FUZZ_PICK(in, table) fuzz_pick((in), (table), sizeof(table) / sizeof((table)[0]))

/* The adapter named by -adapter=PATH (read by LLVMFuzzerInitialize, fuzz_common.c),
 * else by $TSM_FUZZ_ADAPTER, else the reference adapter of the build the target belongs
 * to (FUZZ_DEFAULT_ADAPTER). Loaded once; exits with a message when it cannot be. */
const struct tsm_adapter *fuzz_adapter(void);

/* Reports a broken rule and aborts. */
_Noreturn void fuzz_fail(const char *clause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define FUZZ_CHECK(cond, clause, ...)                                                   \
  do {                                                                                  \
    if (!(cond)) fuzz_fail((clause), __VA_ARGS__);                                     \
  } while (0)

#endif
