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
 * written rarely), at least 1 ms apart. Each reading is the narrowest of a
 * few: a thread preempted between its two clocks' reads would skew the
 * rate by the time it lost (on a loaded machine, milliseconds).
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

/* Both clocks at one moment: the stamp read between two CLOCK_MONOTONIC
 * reads, the pair whose reads lie closest of up to 16 tries (the first
 * within 2 us ends them), and ns the middle of its two. */
static void read_both(uint64_t *ns, uint64_t *tick) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16 && best > 2000; i++) {
    uint64_t a = sim_now_ns(), t = sim_ticks(), b = sim_now_ns();
    if (b - a < best) {
      best = b - a;
      *ns = a + (b - a) / 2;
      *tick = t;
    }
  }
}

__attribute__((constructor)) static void ticks_init(void) {
#if defined(__x86_64__)
  sim_tsc = kernel_uses_tsc();
#endif
  read_both(&ns0, &tick0);
}

double sim_ticks_per_ns(void) {
  if (!sim_tsc) return 1.0;
  uint64_t ns = sim_now_ns(), t;
  if (ns - ns0 < 1000000) { /* too close to the first reading to be exact */
    struct timespec d = {0, (long)(1000000 - (ns - ns0))};
    nanosleep(&d, NULL);
  }
  read_both(&ns, &t);
  return (double)(t - tick0) / (double)(ns - ns0);
}
