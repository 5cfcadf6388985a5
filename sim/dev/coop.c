/*
 * sim/dev/coop.c — what the cooperation types and the device API's
 * checks need of the kernel engine: named barriers of a block (PTX's
 * bar.sync id, n: ncclCoopWarpSpan::sync), and kernel faults.
 *
 * A block's threads are fibers of one worker thread (sim/kernel/), so a
 * named barrier is a word per id in the block's shared memory, arrivals
 * and generation: the last of n arrivals moves the generation the others
 * poll for.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "dev_internal.h"

enum { NAMED_BARRIERS = 16 };
/* One named barrier: its state (arrivals << 32 | generation) and a tag
 * that says the state is one: the block's shared memory is not zeroed (as
 * a GPU's is not, and a sanitized build fills it), and it may hold what
 * an earlier kernel left there, so a barrier whose tag is not its own
 * starts afresh. The block's threads take turns on one worker thread, so
 * the check and the fresh start are not interleaved with another's. */
typedef struct {
  uint64_t tag;
  uint64_t state;
} named_barrier;

static const char named_key; /* the block's instance of named_barrier[NAMED_BARRIERS] */

static uint64_t tag_of(const named_barrier *nb) {
  return 0x4e434c53494d4e42ull ^ ((uint64_t)(uintptr_t)nb * 0x9e3779b97f4a7c15ull);
}

SIM_EXPORT void ncclsimDevNamedBarrier(unsigned id, unsigned nthreads) {
  if (id >= NAMED_BARRIERS) ncclsimDevBadArgument("named barrier %u: there are %d (0..%d)", id, NAMED_BARRIERS, NAMED_BARRIERS - 1);
  if (!__ncclsim_self || nthreads <= 1) return; /* a host thread, or a barrier of one */
  named_barrier *nb = (named_barrier *)__ncclsim_shared(&named_key, NAMED_BARRIERS * sizeof(named_barrier), 16) + id;
  uint64_t tag = tag_of(nb);
  if (__atomic_load_n(&nb->tag, __ATOMIC_RELAXED) != tag) {
    __atomic_store_n(&nb->state, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&nb->tag, tag, __ATOMIC_RELAXED);
  }
  /* Atomics, though the threads take turns: on a GPU they run at once,
   * and the engine tells ThreadSanitizer so (a switch orders nothing), so
   * the barrier's order comes from its own release and acquire: every
   * arrival's writes reach the last arrival (the read-modify-writes), and
   * through the generation every waiter. */
  uint32_t gen = (uint32_t)__atomic_load_n(&nb->state, __ATOMIC_ACQUIRE);
  uint64_t after = __atomic_add_fetch(&nb->state, 1ull << 32, __ATOMIC_ACQ_REL);
  if ((after >> 32) >= nthreads) {
    __atomic_store_n(&nb->state, (uint64_t)(uint32_t)(gen + 1), __ATOMIC_RELEASE);
    return;
  }
  while ((uint32_t)__atomic_load_n(&nb->state, __ATOMIC_ACQUIRE) == gen)
    __ncclsim_yield("a named barrier (ncclCoopWarpSpan::sync)");
}

/* The engine's message names the kernel, block and thread before ours. */
static void __attribute__((noreturn)) vfault(int err, const char *prefix, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  __ncclsim_fault(err, "%s%s", prefix, msg);
  abort(); /* a host thread that called device code: nothing to end */
}

SIM_EXPORT void ncclsimDevUnsupported(const char *what) {
  __ncclsim_fault(cudaErrorNotSupported, "%s is not supported on ncclsim", what);
  abort();
}

SIM_EXPORT void ncclsimDevBadArgument(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfault(cudaErrorInvalidValue, "", fmt, ap);
}

void sim_dev_fault(const struct ncclsimDevState *st, int err, const char *fmt, ...) {
  char prefix[32];
  snprintf(prefix, sizeof prefix, "rank %d: ", st ? st->rank : -1);
  va_list ap;
  va_start(ap, fmt);
  vfault(err, prefix, fmt, ap);
}
