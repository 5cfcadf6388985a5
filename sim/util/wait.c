/*
 * sim/util/wait.c — timed waiting: spin, then sleep on a futex.
 *
 * Latency matters (signal round trips are a benchmark), so a waiter first
 * polls NCCLSIM_SPIN times; on this 2-core class of machine spinning longer
 * only steals the core the waker needs, so polls past the first few yield.
 * Sleeps are capped at 50 ms so a cancel flag (abort) is noticed without the
 * aborting thread having to know every waiter.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../sim.h"

#define SLEEP_CAP_NS (50ull * 1000 * 1000)

uint64_t sim_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sim_deadline(void) { return sim_now_ns() + sim_timeout_ns(); }

/* Private futexes are cheaper; with ranks as processes a waker may be
 * another process, and only a shared futex reaches across. */
static int futex_op(int op) { return sim_shm_on() ? op : op | FUTEX_PRIVATE_FLAG; }

static void futex_wait(_Atomic uint32_t *word, uint32_t expect, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  syscall(SYS_futex, (uint32_t *)word, futex_op(FUTEX_WAIT), expect, &ts, NULL, 0);
}

void sim_waitq_wake(sim_waitq *q) {
  atomic_fetch_add(&q->seq, 1);
  if (atomic_load(&q->sleepers)) syscall(SYS_futex, (uint32_t *)&q->seq, futex_op(FUTEX_WAKE), INT_MAX, NULL, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

int sim_waitq_wait(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel,
                   uint64_t deadline_ns) {
  int64_t spins = sim_param_int(SIM_P_SPIN);
  for (int64_t i = 0; i < spins; i++) {
    if (ready(arg)) return 0;
    if (i < 64) cpu_relax();
    else sched_yield();
  }
  for (;;) {
    /* Announce the sleeper before the last check: a waker that changed the
     * state after our check must see sleepers != 0 or bump seq first. */
    atomic_fetch_add(&q->sleepers, 1);
    uint32_t seen = atomic_load(&q->seq);
    if (ready(arg)) {
      atomic_fetch_sub(&q->sleepers, 1);
      return 0;
    }
    if (cancel && atomic_load(cancel)) {
      atomic_fetch_sub(&q->sleepers, 1);
      return ECANCELED;
    }
    uint64_t now = sim_now_ns();
    if (now >= deadline_ns) {
      atomic_fetch_sub(&q->sleepers, 1);
      return ready(arg) ? 0 : ETIMEDOUT;
    }
    uint64_t left = deadline_ns - now;
    futex_wait(&q->seq, seen, left < SLEEP_CAP_NS ? left : SLEEP_CAP_NS);
    atomic_fetch_sub(&q->sleepers, 1);
  }
}
