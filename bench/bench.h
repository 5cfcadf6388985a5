/* bench/bench.h — what every benchmark shares: a monotonic clock, and a
 * check that ends the run with the program's name, the step and a detail.
 * Define BENCH_NAME ("p2p_bw") before including it. */
#ifndef N4C_BENCH_H_
#define N4C_BENCH_H_

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Ends the run (exit 1) unless cond holds; `detail` is a string. */
#define BENCH_CHECK(cond, what, detail)                                              \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s: %s failed%s%s\n", BENCH_NAME, (what),                   \
              *(detail) ? ": " : "", (detail));                                      \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

#endif
