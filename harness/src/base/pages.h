/*
 * harness/src/base/pages.h: the buffers the judge makes as a DLPack producer.
 *
 * A buffer the judge hands a consumer must not be readable once its deleter has run, so
 * that a consumer reading it then crashes (a Crash verdict naming its case) instead of
 * reading whatever came next. A small buffer is malloc'd and freed, which the sanitizer
 * and Valgrind lanes watch. A large one (CTS_PAGES_MIN bytes and more: the IREE seed's
 * 64 MiB tensors) is a mapping of its own: given back, it is made inaccessible
 * (PROT_NONE) and kept in quarantine, and a later buffer of the same size reuses it only
 * after CTS_PAGES_QUARANTINE buffers were given back after it. Reuse spares the kernel
 * a page fault and a zeroed page per 4 KiB of each new tensor, which was most of the
 * judge's time on large tensors (bench: judge_s_per_gib_vs_memcmp); a freed mapping
 * usually came back at the same address anyway, so reuse protects no less than
 * unmapping did. Under AddressSanitizer and Valgrind every buffer is malloc'd, so that
 * they see a read past its end or after its free (cts_pages_mapped). Thread-safe.
 */
#ifndef CTS_PAGES_H
#define CTS_PAGES_H

#include <stddef.h>

#define CTS_PAGES_MIN ((size_t)1 << 20)
#define CTS_PAGES_QUARANTINE 2

/* n bytes, readable and writable; zeroed when zero is set. Never NULL (out of memory
 * ends the judge as cts_xmalloc does). */
void *cts_pages_take(size_t n, int zero);
/* Gives back p of n bytes (cts_pages_take's n); NULL is ignored. */
void cts_pages_give(void *p, size_t n);
/* 1 when large buffers are mappings of their own; 0 under AddressSanitizer or Valgrind. */
int cts_pages_mapped(void);
/* How many large buffers were taken, and how many of them reused a quarantined one
 * (test-model checks the reuse rule). */
void cts_pages_counts(size_t *taken, size_t *reused);

#endif
