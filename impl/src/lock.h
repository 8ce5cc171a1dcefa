/*
 * impl/src/lock.h: the context lock (SCOPE.THREAD.3): biased toward one thread, and with
 * lanes for the create and release of threads that each work in managers of their own.
 *
 * Why biased. Every public call takes its context's lock, and most contexts are only
 * ever used by one thread. A pthread mutex costs two atomic read-modify-write
 * instructions per call even then, the largest single cost of a scoped create +
 * release (bench/README.md). So the first thread that enters a context (its owner) takes the
 * lock without any atomic instruction: it announces itself in its lane's inside flag
 * with a plain store, and every other thread takes the mutex. The first other thread
 * that takes it revokes the bias for good: it marks the lock revoked, makes every thread
 * of the process execute a full memory barrier (Linux membarrier, the asymmetric half of
 * a Dekker handshake: a thread's store to its inside flag and its load of owner cannot
 * pass each other across that barrier), and waits until the flag is 0. From then on the
 * owner takes the mutex too. Where the kernel has no expedited membarrier, no lock is
 * ever biased and no lane ever opens.
 *
 * Why lanes. Once revoked, threads that each create and release in managers of their
 * own would still meet on the mutex's cache line (and the context's lists behind it),
 * four to seven times the cost of one thread's call. So the lock can also be open to
 * lanes (owner == TSMR__LOCK_LANES): every thread enters with the same plain store to
 * its own inside flag, for a create or a release that touches only what that thread
 * keeps for itself (its records, its slots, its live-byte count and a manager it works
 * in; tensor.c says which), and falls back to the mutex for anything else. The mutex's
 * holder has the context to itself: whoever takes the mutex while lanes are open closes
 * them (owner back to REVOKED, the barrier, and a wait for every inside flag to drop),
 * folding the lanes' live-byte counts into the context's. Lanes reopen once enough
 * creates and releases in a row ran under the mutex (a streak, which doubles each time
 * lanes closed soon after opening: closing costs the barrier, a few microseconds), so a
 * thread that mixes other calls in pays about what it paid before lanes.
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
#define TSMR__LOCK_REVOKED (UINT64_MAX - 1u)   /* revoked (never biased again), lanes closed */
#define TSMR__LOCK_LANES (UINT64_MAX - 2u)     /* revoked, lanes open */

/* A thread's way into a lock without the mutex: one per (context, thread), in the
 * thread's state (internal.h), which keeps it on a cache line of its own; and the
 * owner's, in the lock itself (one load fewer on every call of a biased lock). inside is
 * written by its thread and read by the mutex's holder; bytes only by its thread while
 * inside, and by the holder while lanes are closed. */
struct tsmr__lane {
  atomic_int inside;              /* 1 while its thread holds the lock through it */
  uint64_t bytes;                 /* live bytes its thread's lane calls added (mod 2^64) */
  struct tsmr__lane *next;        /* the lock's list of lanes */
};

/* Owned by its context (struct tsmr_ctx). owner is read by threads that do not hold
 * the lock; the rest only by the mutex's holder (held_by_owner: by the holder). */
struct tsmr__lock {
  pthread_mutex_t mutex;          /* every thread but the owner of a biased lock */
  _Atomic uint64_t owner;         /* thread id biased toward, UNBIASED, REVOKED or LANES */
  int held_by_owner;              /* the holder entered without the mutex */
  struct tsmr__lane owner_lane;   /* the owner's way in (on the lanes' list once granted) */
  struct tsmr__lane *lanes;       /* every thread's lane */
  uint64_t *live_bytes;           /* the context's count, where closing folds the lanes' */
  uint32_t streak, streak_before; /* creates and releases in a row under the mutex */
  uint32_t reopen_after;          /* the streak that opens the lanes again */
  uint64_t opened_ns;             /* when the lanes last opened (CLOCK_MONOTONIC) */
};

/* live_bytes: the context's count, which closing lanes adds their counts to. RETURN 0
 * or TSMR_ENOMEM (the mutex could not be made). */
int tsmr__lock_init(struct tsmr__lock *l, uint64_t *live_bytes);
void tsmr__lock_destroy(struct tsmr__lock *l);
/* Mutex held, the lock biased toward another thread or open to lanes: revokes the bias
 * for good or closes the lanes, and waits for every thread inside to leave. */
void tsmr__lock_revoke(struct tsmr__lock *l);
/* Lock held through the mutex: biases it toward me (not 0) when it never was biased
 * and the kernel supports the handshake; me's next acquisition needs no mutex. */
void tsmr__lock_grant(struct tsmr__lock *l, uint64_t me);
/* Mutex held: lane (a new thread's) joins the lanes the closing waits for. */
void tsmr__lock_add_lane(struct tsmr__lock *l, struct tsmr__lane *lane);
/* Mutex held (not the owner's entry), after a create or a release ran under it: counts
 * it into the streak, and opens the lanes when the streak is long enough. */
void tsmr__lock_tally(struct tsmr__lock *l);

/* The handshake's half of an entry through lane, the owner word having read want:
 * RETURN 1 when inside now, else 0 (it changed meanwhile) and nothing is held. */
static inline int tsmr__lane_try(struct tsmr__lock *l, struct tsmr__lane *lane,
                                 uint64_t want) {
  atomic_store_explicit(&lane->inside, 1, memory_order_relaxed);
  /* The revoker's membarrier orders the store above before the load below; acquire:
   * what the mutex's holder did before opening the lanes is seen. */
  atomic_signal_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&l->owner, memory_order_acquire) == want) return 1;
  atomic_store_explicit(&lane->inside, 0, memory_order_release);
  return 0;
}

/* A lane call's entry: RETURN 1 when the lanes are open and lane is inside now, else 0
 * and nothing is held. */
static inline int tsmr__lock_lane_enter(struct tsmr__lock *l, struct tsmr__lane *lane) {
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) != TSMR__LOCK_LANES) return 0;
  return tsmr__lane_try(l, lane, TSMR__LOCK_LANES);
}

static inline void tsmr__lock_lane_leave(struct tsmr__lane *lane) {
  atomic_store_explicit(&lane->inside, 0, memory_order_release);
}

/* The owner's acquisition: RETURN 1 when me holds the lock now (no mutex), else 0 and
 * nothing is held. */
static inline int tsmr__lock_owner_enter(struct tsmr__lock *l, uint64_t me) {
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) != me) return 0;
  if (!tsmr__lane_try(l, &l->owner_lane, me)) return 0; /* revoked meanwhile */
  l->held_by_owner = 1;
  return 1;
}

/* Takes the mutex; when the lock is biased toward another thread than me, or open to
 * lanes, revokes the bias or closes the lanes first; except that with to_lanes set, a
 * lock found open to lanes is left so (for a lane call that waited on the mutex while
 * another opened them): RETURN 1 when the mutex is held, 0 when not (lanes open). */
static inline int tsmr__lock_acquire_slow(struct tsmr__lock *l, uint64_t me, int to_lanes) {
  pthread_mutex_lock(&l->mutex);
  uint64_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
  if (__builtin_expect(owner != TSMR__LOCK_REVOKED && owner != TSMR__LOCK_UNBIASED &&
                           owner != me, 0)) {
    if (to_lanes && owner == TSMR__LOCK_LANES) {
      pthread_mutex_unlock(&l->mutex);
      return 0;
    }
    tsmr__lock_revoke(l);
  }
  l->streak_before = l->streak; /* a call other than a create or release ends it */
  l->streak = 0;
  return 1;
}

static inline void tsmr__lock_acquire(struct tsmr__lock *l, uint64_t me) {
  if (!tsmr__lock_owner_enter(l, me)) tsmr__lock_acquire_slow(l, me, 0);
}

static inline void tsmr__lock_release(struct tsmr__lock *l) {
  if (l->held_by_owner) {
    l->held_by_owner = 0;
    tsmr__lock_lane_leave(&l->owner_lane);
  } else {
    pthread_mutex_unlock(&l->mutex);
  }
}

#endif /* TSMR_LOCK_H */
