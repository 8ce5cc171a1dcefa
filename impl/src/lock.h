/*
 * impl/src/lock.h: the context lock (SCOPE.THREAD.3), biased toward one thread.
 *
 * Why biased. Every public call takes its context's lock, and most contexts are only
 * ever used by one thread. A pthread mutex costs two atomic read-modify-write
 * instructions per call even then, the largest single cost of a scoped create +
 * release (bench/README.md). So the first thread that enters a context (its owner) takes the
 * lock without any atomic instruction: it announces itself in owner_inside with a
 * plain store, and every other thread takes the mutex. The first other thread that
 * takes it revokes the bias for good: it marks the lock revoked, makes every thread of
 * the process execute a full memory barrier (Linux membarrier, the asymmetric half of
 * a Dekker handshake: the owner's store to owner_inside and its load of owner cannot
 * pass each other across that barrier), and waits until owner_inside is 0. From then
 * on the owner takes the mutex too. Where the kernel has no expedited membarrier, no
 * lock is ever biased.
 *
 * Owner identity is the never-reused thread id of scope.c (tsmr__tls.thread_id), not a
 * pthread_t, which a later thread can get again (SCOPE.THREAD.4).
 */
#ifndef TSMR_LOCK_H
#define TSMR_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* owner values that name no thread (thread ids count up from 1) */
#define TSMR__LOCK_UNBIASED UINT64_MAX         /* not biased yet: may be granted */
#define TSMR__LOCK_REVOKED (UINT64_MAX - 1u)   /* revoked: never biased again */

/* Owned by its context (struct tsmr_ctx). owner and owner_inside are read by threads
 * that do not hold the lock; held_by_owner only by the holder. */
struct tsmr__lock {
  pthread_mutex_t mutex;          /* every thread but the owner of a biased lock */
  _Atomic uint64_t owner;         /* thread id biased toward, or UNBIASED / REVOKED */
  atomic_int owner_inside;        /* 1 while the owner holds the lock without the mutex */
  int held_by_owner;              /* the holder entered without the mutex */
};

/* RETURN 0 or TSMR_ENOMEM (the mutex could not be made). */
int tsmr__lock_init(struct tsmr__lock *l);
void tsmr__lock_destroy(struct tsmr__lock *l);
/* Mutex held, the lock biased toward another thread: revokes the bias for good and
 * waits for the owner to leave. */
void tsmr__lock_revoke(struct tsmr__lock *l);
/* Lock held through the mutex: biases it toward me (not 0) when it never was biased
 * and the kernel supports the handshake; me's next acquisition needs no mutex. */
void tsmr__lock_grant(struct tsmr__lock *l, uint64_t me);

/* The owner's acquisition: RETURN 1 when me holds the lock now (no mutex), else 0 and
 * nothing is held. */
static inline int tsmr__lock_owner_enter(struct tsmr__lock *l, uint64_t me) {
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) != me) return 0;
  atomic_store_explicit(&l->owner_inside, 1, memory_order_relaxed);
  /* The revoker's membarrier orders the store above before the load below. */
  atomic_signal_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
    l->held_by_owner = 1;
    return 1;
  }
  atomic_store_explicit(&l->owner_inside, 0, memory_order_release); /* revoked meanwhile */
  return 0;
}

/* Takes the mutex; when the lock is biased toward another thread than me, revokes the
 * bias first. */
static inline void tsmr__lock_acquire_slow(struct tsmr__lock *l, uint64_t me) {
  pthread_mutex_lock(&l->mutex);
  uint64_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
  if (__builtin_expect(owner < TSMR__LOCK_REVOKED && owner != me, 0)) tsmr__lock_revoke(l);
}

static inline void tsmr__lock_acquire(struct tsmr__lock *l, uint64_t me) {
  if (!tsmr__lock_owner_enter(l, me)) tsmr__lock_acquire_slow(l, me);
}

static inline void tsmr__lock_release(struct tsmr__lock *l) {
  if (l->held_by_owner) {
    l->held_by_owner = 0;
    atomic_store_explicit(&l->owner_inside, 0, memory_order_release);
  } else {
    pthread_mutex_unlock(&l->mutex);
  }
}

#endif /* TSMR_LOCK_H */
