/*
 * impl/src/lock.c: the slow half of the biased context lock (lock.h): the mutex, the
 * grant, the revocation (which also closes the lanes), the streak that opens them and
 * the process-wide memory barrier both need.
 */
#define _GNU_SOURCE /* PTHREAD_MUTEX_ADAPTIVE_NP, syscall */
#include "lock.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static pthread_once_t barrier_once = PTHREAD_ONCE_INIT;
static int barrier_ready; /* written once under barrier_once */

static long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

static void barrier_register(void) {
  barrier_ready = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

/* 1 when revocation can make the owner's plain stores and loads ordered. */
static int barrier_available(void) {
  pthread_once(&barrier_once, barrier_register);
  return barrier_ready;
}

/* Every running thread of the process executes a full memory barrier before this
 * returns. A child made by fork() may have to register again. */
static void barrier_all_threads(void) {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  int again = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
              membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
  /* The grant checked the command once; only the process changing under us fails it. */
  TSMR_ASSERT(again && "membarrier stopped working after a lock was biased");
}

/* The streak of creates and releases under the mutex that opens the lanes, at first and
 * at most. A closing of lanes that were open for less than LANES_WORTH_NS doubles it, so
 * that calls which keep closing the lanes pay a barrier (a few microseconds) once per
 * thousands of calls at worst; a closing after longer, when the barrier cost under a
 * hundredth of the time the lanes saved, starts it over. */
#define LANES_REOPEN_FIRST 64u
#define LANES_REOPEN_MAX 65536u
#define LANES_WORTH_NS 1000000u

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int tsmr__lock_init(struct tsmr__lock *l, uint64_t *live_bytes) {
  /* Adaptive: a thread that finds the mutex taken spins a little before sleeping in
   * the kernel, since every call holds it for a few dozen nanoseconds. */
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) {
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    rc = pthread_mutex_init(&l->mutex, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  if (rc != 0) return TSMR_ENOMEM;
  atomic_init(&l->owner, TSMR__LOCK_UNBIASED);
  l->held_by_owner = 0;
  atomic_init(&l->owner_lane.inside, 0);
  l->owner_lane.bytes = 0;
  l->owner_lane.next = NULL;
  l->lanes = NULL;
  l->live_bytes = live_bytes;
  l->streak = l->streak_before = 0;
  l->reopen_after = LANES_REOPEN_FIRST;
  l->opened_ns = 0;
  return 0;
}

void tsmr__lock_destroy(struct tsmr__lock *l) { pthread_mutex_destroy(&l->mutex); }

void tsmr__lock_revoke(struct tsmr__lock *l) {
  uint64_t was = atomic_load_explicit(&l->owner, memory_order_relaxed);
  atomic_store_explicit(&l->owner, TSMR__LOCK_REVOKED, memory_order_relaxed);
  barrier_all_threads(); /* a thread entering now sees REVOKED, or we see its flag */
  for (struct tsmr__lane *lane = l->lanes; lane; lane = lane->next) {
    while (atomic_load_explicit(&lane->inside, memory_order_acquire)) sched_yield();
    *l->live_bytes += lane->bytes; /* exact again for the mutex's holder */
    lane->bytes = 0;
  }
  if (was != TSMR__LOCK_LANES) return;
  if (monotonic_ns() - l->opened_ns >= LANES_WORTH_NS) l->reopen_after = LANES_REOPEN_FIRST;
  else if (l->reopen_after < LANES_REOPEN_MAX) l->reopen_after *= 2;
}

void tsmr__lock_grant(struct tsmr__lock *l, uint64_t me) {
  TSMR_ASSERT(me != 0 && "a thread id is given out before a grant");
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) != TSMR__LOCK_UNBIASED) return;
  if (!barrier_available()) return;
  tsmr__lock_add_lane(l, &l->owner_lane); /* the revocation waits for it too */
  atomic_store_explicit(&l->owner, me, memory_order_relaxed);
}

void tsmr__lock_add_lane(struct tsmr__lock *l, struct tsmr__lane *lane) {
  lane->next = l->lanes;
  l->lanes = lane;
}

void tsmr__lock_tally(struct tsmr__lock *l) {
  l->streak = l->streak_before + 1;
  if (l->streak < l->reopen_after ||
      atomic_load_explicit(&l->owner, memory_order_relaxed) != TSMR__LOCK_REVOKED)
    return;
  l->streak = 0;
  l->opened_ns = monotonic_ns();
  /* release: a lane entry that reads LANES sees everything done under the mutex */
  atomic_store_explicit(&l->owner, TSMR__LOCK_LANES, memory_order_release);
}
