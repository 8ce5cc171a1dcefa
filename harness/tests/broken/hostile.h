/*
 * harness/tests/broken/hostile.h: shared by the hostile adapters (harness/tests/broken,
 * checked by harness/tests/check_hostile.sh). Each wraps the example adapter
 * (broken.h) and does one thing a test runner must survive: hang, fork, daemonise,
 * kill its group, flood or forge output, lie, die, exhaust memory.
 *
 * Every process a hostile adapter starts names itself HOSTILE_HELPER_NAME, so that the
 * self-test can look for survivors after the run (pgrep -x).
 */
#ifndef TSM_TESTS_HOSTILE_H
#define TSM_TESTS_HOSTILE_H

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "broken.h"

#define HOSTILE_HELPER_NAME "tsm-hostile-hlp"

/* In a helper: takes the name the self-test looks for, then sleeps until killed. */
static inline void hostile_helper_forever(void) {
  prctl(PR_SET_NAME, HOSTILE_HELPER_NAME, 0, 0, 0);
  for (;;) pause();
}

/* Forks a helper that sleeps forever, holding whatever descriptors it inherited (the
 * judge's output pipe among them). RETURN its pid in the caller. */
static inline pid_t hostile_spawn_helper(void) {
  pid_t pid = fork();
  if (pid == 0) hostile_helper_forever();
  return pid;
}

/* The example's session_open, which every wrapper calls after its hostile act. */
static inline int hostile_open(int device, void **s) {
  return tsm_example_entry()->session_open(device, s);
}

/* Defines the entry point of an adapter that is the example named adapter_name with
 * one slot replaced. */
#define HOSTILE_ENTRY(adapter_name, slot, replacement)  \
  const struct tsm_adapter *tsm_adapter_entry(void) {   \
    static struct tsm_adapter broken;                    \
    broken = *tsm_example_entry();                       \
    broken.name = adapter_name;                          \
    broken.slot = replacement;                           \
    return &broken;                                      \
  }

/* broken_liar's lie: every manager's live count one higher than the truth, so that only
 * the judge's comparison with its model catches it (each case Fail). */
static inline int hostile_lying_mgr_info(void *s, tsm_handle m, struct tsm_mgr_info *out) {
  int rc = tsm_example_entry()->mgr_info(s, m, out);
  if (rc == 0) out->live += 1;
  return rc;
}

/* What hostile_noisy_open prints: set once by the adapter's entry point. */
static inline const char **hostile_noise(void) {
  static const char *noise = "";
  return &noise;
}

/* session_open that prints *hostile_noise() on stdout and on stderr first. */
static inline int hostile_noisy_open(int device, void **s) {
  const char *noise = *hostile_noise();
  if (write(1, noise, strlen(noise)) < 0 || write(2, noise, strlen(noise)) < 0) return -1;
  return hostile_open(device, s);
}

/* Makes *a the example adapter named `name` that prints `noise` in every session_open
 * and lies in mgr_info, so that each case is Fail and the noise reaches every report.
 * RETURN a. */
static inline const struct tsm_adapter *hostile_noisy_liar(struct tsm_adapter *a,
                                                           const char *name,
                                                           const char *noise) {
  *a = *tsm_example_entry();
  a->name = name;
  a->session_open = hostile_noisy_open;
  a->mgr_info = hostile_lying_mgr_info;
  *hostile_noise() = noise;
  return a;
}

#endif
