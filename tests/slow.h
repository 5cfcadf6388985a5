/*
 * tests/slow.h — the build's slowdown, for the deadlines of the tests.
 *
 * N4C_SLOWDOWN is how many times slower than a plain build this build runs
 * (configure: x3 with ASan+UBSan, x10 with TSan, x3 with coverage): make
 * check exports it, a value in the environment wins, and a test run by hand
 * gets configure's. A deadline is how long a test waits for something that
 * must come (a peer, a hang's end, an NCCLSIM_TIMEOUT that must not fire):
 * it scales with the build. What a test checks never does.
 */
#ifndef N4C_TESTS_SLOW_H
#define N4C_TESTS_SLOW_H

#include <stdio.h>
#include <stdlib.h>

#include "config.h"

static inline int slowdown(void) {
  const char *e = getenv("N4C_SLOWDOWN");
  char *end;
  long v = e ? strtol(e, &end, 10) : 0;
  return e && *e && !*end && v >= 1 && v <= 1000 ? (int)v : N4C_SLOWDOWN;
}

/* seconds times the slowdown */
static inline double scaled(double seconds) { return seconds * slowdown(); }

/* scaled(seconds) as text, for ncclsimParamSet("TIMEOUT", ...). */
typedef struct {
  char s[32];
} scaled_text;
static inline scaled_text scaled_str(double seconds) {
  scaled_text t;
  snprintf(t.s, sizeof t.s, "%g", scaled(seconds));
  return t;
}

#endif /* N4C_TESTS_SLOW_H */
