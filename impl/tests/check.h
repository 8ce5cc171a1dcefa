/*
 * impl/tests/check.h: the check macro of libtsmref's own tests (test_planner.c,
 * test_lock.c): CHECK(cond, fmt, ...) counts a check and, when cond is false, a
 * failure, printing file:line, the condition and the message. Each test program is one
 * translation unit and prints its totals at the end from checks and failed.
 */
#ifndef TSMR_TESTS_CHECK_H
#define TSMR_TESTS_CHECK_H

#include <stdio.h>

static int checks, failed;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    checks++;                                                                         \
    if (!(cond)) {                                                                    \
      failed++;                                                                       \
      fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);                      \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
    }                                                                                 \
  } while (0)

#endif /* TSMR_TESTS_CHECK_H */
