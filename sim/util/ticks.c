/*
 * sim/util/ticks.c — the clock of the flight recorder and the timeline.
 *
 * They stamp every operation twice, on the path from one rank's operation
 * to its peer's, where clock_gettime cost 25 ns a read on the 2-CPU CI
 * machine (a signal's whole handoff is 40). Where the kernel keeps its own
 * clock on the CPU's time-stamp counter (clocksource "tsc": constant,
 * synchronised across CPUs, one counter for every process of the machine),
 * the stamp is the counter itself, 10 ns a read there; elsewhere it is
 * CLOCK_MONOTONIC in ns. sim_ticks_per_ns() converts, from two readings of
 * both clocks: the first at load and one taken when asked (trace files are
 * written rarely), at least 1 ms apart.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../sim.h"

bool sim_tsc;

static uint64_t tick0, ns0;

static bool kernel_uses_tsc(void) {
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (!f) return false;
  char name[32] = "";
  bool tsc = fgets(name, sizeof name, f) && !strcmp(name, "tsc\n");
  fclose(f);
  return tsc;
}

__attribute__((constructor)) static void ticks_init(void) {
#if defined(__x86_64__)
  sim_tsc = kernel_uses_tsc();
#endif
  ns0 = sim_now_ns();
  tick0 = sim_ticks();
}

double sim_ticks_per_ns(void) {
  if (!sim_tsc) return 1.0;
  uint64_t ns = sim_now_ns();
  if (ns - ns0 < 1000000) { /* too close to the first reading to be exact */
    struct timespec d = {0, (long)(1000000 - (ns - ns0))};
    nanosleep(&d, NULL);
    ns = sim_now_ns();
  }
  uint64_t t = sim_ticks();
  return (double)(t - tick0) / (double)(ns - ns0);
}
