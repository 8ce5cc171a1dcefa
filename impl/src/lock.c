/*
 * impl/src/lock.c: the slow half of the biased context lock (lock.h): the mutex, the
 * grant, the revocation and the process-wide memory barrier it needs.
 */
#define _GNU_SOURCE /* PTHREAD_MUTEX_ADAPTIVE_NP, syscall */
#include "lock.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
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

int tsmr__lock_init(struct tsmr__lock *l) {
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
  atomic_init(&l->owner_inside, 0);
  l->held_by_owner = 0;
  return 0;
}

void tsmr__lock_destroy(struct tsmr__lock *l) { pthread_mutex_destroy(&l->mutex); }

void tsmr__lock_revoke(struct tsmr__lock *l) {
  atomic_store_explicit(&l->owner, TSMR__LOCK_REVOKED, memory_order_relaxed);
  barrier_all_threads(); /* the owner now sees REVOKED, or we see owner_inside */
  while (atomic_load_explicit(&l->owner_inside, memory_order_acquire)) sched_yield();
}

void tsmr__lock_grant(struct tsmr__lock *l, uint64_t me) {
  TSMR_ASSERT(me != 0 && "a thread id is given out before a grant");
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) != TSMR__LOCK_UNBIASED) return;
  if (barrier_available()) atomic_store_explicit(&l->owner, me, memory_order_relaxed);
}
