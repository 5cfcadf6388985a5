/*
 * sim/dev/trace.c — the device API's events on NCCLSIM_TRACE's timeline:
 * barrier sessions (arrive, wait, sync), GIN operations as issued
 * (put, putValue, signal, get), flushes, and waits on signals and
 * counters, each a span on its rank's track of kernels, named for the
 * NCCL call, with the kernel, block and thread that made it.
 *
 * Off (NCCLSIM_TRACE unset) it costs a load of ncclsimDevTracing per
 * barrier, wait or GIN operation: the flag is set once a device
 * communicator of a traced communicator is made in this process. A wait
 * on one LL all-to-all slot is not an event (one per element).
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "dev_internal.h"

SIM_EXPORT int ncclsimDevTracing;

void sim_dev_trace_enable(const struct ncclsimDevState *st) {
  if (sim_trace_timeline(st->clique)) __atomic_store_n(&ncclsimDevTracing, 1, __ATOMIC_RELAXED);
}

static const char *event_name(int event) {
  switch (event) {
  case NCCLSIM_EV_LSA_ARRIVE: return "ncclLsaBarrierSession::arrive";
  case NCCLSIM_EV_LSA_WAIT: return "ncclLsaBarrierSession::wait";
  case NCCLSIM_EV_GIN_SYNC: return "ncclGinBarrierSession::sync";
  default: return "a device-API call";
  }
}

void sim_dev_trace(struct ncclsimDevState *st, const char *name, uint64_t t0, int peer, size_t bytes,
                   const char *fmt, ...) {
  uint64_t t1 = sim_ticks();
  char desc[192], where[160];
  __ncclsim_where(where, sizeof where);
  int n = snprintf(desc, sizeof desc, "%s", where);
  if (fmt && n >= 0 && (size_t)n + 2 < sizeof desc) {
    desc[n++] = ';';
    desc[n++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(desc + n, sizeof desc - (size_t)n, fmt, ap);
    va_end(ap);
  }
  sim_trace_device(st->clique, st->rank, name, t0, t1, peer, bytes, desc);
}

SIM_EXPORT uint64_t ncclsimDevTraceNow(void) { return sim_ticks(); }

SIM_EXPORT void ncclsimDevTraceSpan(const struct ncclDevComm *c, int event, int index, uint64_t t0) {
  struct ncclsimDevState *st = sim_dev_self(c, event_name(event));
  sim_dev_trace(st, event_name(event), t0, -1, 0, "barrier %d", index);
}
