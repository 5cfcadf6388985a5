/*
 * sim/dev/coop.c — what the cooperation types and the device API's
 * checks need of the kernel engine: named barriers of a block (PTX's
 * bar.sync id, n: ncclCoopWarpSpan::sync), and kernel faults.
 *
 * A block's threads are fibers of one worker thread (sim/kernel/), so a
 * named barrier is two counters per id in the block's shared memory: the
 * last of n arrivals moves the generation the others poll for.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "dev_internal.h"

enum { NAMED_BARRIERS = 16 };
typedef struct {
  unsigned arrived[NAMED_BARRIERS];
  unsigned gen[NAMED_BARRIERS];
} named_barriers;

static const char named_key; /* the block's instance of named_barriers */

SIM_EXPORT void ncclsimDevNamedBarrier(unsigned id, unsigned nthreads) {
  if (id >= NAMED_BARRIERS) ncclsimDevBadArgument("named barrier %u: there are %d (0..%d)", id, NAMED_BARRIERS, NAMED_BARRIERS - 1);
  if (!__ncclsim_self || nthreads <= 1) return; /* a host thread, or a barrier of one */
  volatile named_barriers *b = __ncclsim_shared(&named_key, sizeof(named_barriers), 8);
  unsigned gen = b->gen[id];
  if (++b->arrived[id] == nthreads) {
    b->arrived[id] = 0;
    b->gen[id] = gen + 1;
    return;
  }
  while (b->gen[id] == gen) __ncclsim_yield("a named barrier (ncclCoopWarpSpan::sync)");
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
