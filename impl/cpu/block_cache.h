/*
 * impl/cpu/block_cache.h: the CPU backend's cache of freed large blocks (a caching
 * allocator, as the CUDA runtimes of PyTorch and others keep one). A tensor of
 * TSMR__BLOCK_CACHE_MIN bytes or more, freed, is kept for the next allocation of about
 * its size instead of going back to the C library, which unmaps it: the next one would
 * cost the kernel a page fault and a zeroed page per 4 KiB (most of a large add's time
 * in the IREE seed's loop, bench: judge_s_per_gib_vs_memcmp). Everything kept goes back
 * when the last context on the device closes (the backend's release_cache), so nothing
 * is held once every session is over. Live bytes (MGR.COUNT.4) never count it: they
 * are the tensors' storage. Off under AddressSanitizer, ThreadSanitizer and Valgrind,
 * so that they see every free. Thread-safe.
 */
#ifndef TSMR_BLOCK_CACHE_H
#define TSMR_BLOCK_CACHE_H

#include <stddef.h>

#define TSMR__BLOCK_CACHE_MIN ((size_t)1 << 20)

/* A kept block of at least n bytes (n >= TSMR__BLOCK_CACHE_MIN), at most a quarter
 * more, taken out of the cache; NULL when there is none. */
void *tsmr__block_cache_take(size_t n);
/* 1 when p (from tsmr__alloc) is kept, 0 when the caller frees it. */
int tsmr__block_cache_keep(void *p);
/* 0 under a sanitizer or Valgrind, where nothing is kept. */
int tsmr__block_cache_enabled(void);
/* Frees every kept block. */
void tsmr__block_cache_release(void);

#endif
