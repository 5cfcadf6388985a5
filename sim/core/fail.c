/*
 * sim/core/fail.c — how a failure is recorded and told: a rank's async
 * error and last-error text, the list of its outstanding operations, and
 * the dump of every rank's list when an operation times out.
 */
#include <stdarg.h>
#include <stdio.h>

#include "core_internal.h"

ncclResult_t sim_comm_fail(ncclComm_t comm, ncclResult_t res, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int expect = ncclSuccess;
  /* The first failure wins, for the text as for the code: later failures
   * are often consequences ("its stream already failed") and would hide
   * the diagnostic that explains them. They are still logged. */
  if (atomic_compare_exchange_strong(&comm->async_error, &expect, (int)res)) {
    sim_mutex_lock(&comm->lock);
    snprintf(comm->last_error, sizeof comm->last_error, "%s", msg);
    pthread_mutex_unlock(&comm->lock);
  }
  SIM_WARN(SIM_INIT, "rank %d: %s", comm->rank, msg);
  return res;
}

/* One rank's tasks in the op a stream runs now: the posted ones not yet
 * waited for. */
typedef struct {
  ncclComm_t m;
  int shown;
} dump_arg;

static void dump_launch(sim_op *op, void *arg) {
  dump_arg *a = arg;
  ncclComm_t m = a->m;
  for (sim_task *t = sim_launch_tasks(op); t; t = t->next) {
    if (t->comm != m) continue;
    if (atomic_load_explicit(&t->order_blocked, memory_order_relaxed)) {
      SIM_WARN(SIM_INIT, "  rank %d (device %d, pid %d): %s, not begun: it waits for the rank's earlier operations "
               "on another stream (NCCL runs one communicator's operations in the order they were issued, across "
               "streams; on a GPU it waits the same way)", m->rank, m->device, m->pid, t->ops->name);
      a->shown++;
      continue;
    }
    if (!atomic_load_explicit(&t->listed, memory_order_relaxed)) continue;
    char line[384];
    t->ops->describe(t, line, sizeof line);
    SIM_WARN(SIM_INIT, "  rank %d (device %d, pid %d): %s", m->rank, m->device, m->pid, line);
    a->shown++;
  }
}

void sim_clique_dump_pending(sim_clique *c, const char *why) {
  if (atomic_exchange(&c->dumped, 1)) return;
  SIM_WARN(SIM_INIT, "communicator %016llx: %s; outstanding operations of its %d ranks:",
           (unsigned long long)c->key, why, c->nranks);
  sim_mutex_lock(&c->lock);
  for (int r = 0; r < c->nranks; r++) {
    ncclComm_t m = c->ranks[r];
    if (!m) {
      SIM_WARN(SIM_INIT, "  rank %d: destroyed", r);
      continue;
    }
    /* Under the rank's lock, as the areas change what describe() reads. */
    sim_mutex_lock(&m->lock);
    dump_arg a = {m, 0};
    if (atomic_load(&m->dead))
      SIM_WARN(SIM_INIT, "  rank %d (device %d, pid %d): stopped at its operation %llu (NCCLSIM_FAULT)", r,
               m->device, m->pid, (unsigned long long)m->fault_at);
    else
      for (sim_comm_stream *n = atomic_load_explicit(&m->streams, memory_order_acquire); n; n = n->next)
        sim_stream_peek(n->s, dump_launch, &a);
    if (!a.shown && !atomic_load(&m->dead))
      SIM_WARN(SIM_INIT, "  rank %d (device %d, pid %d): nothing pending", r, m->device, m->pid);
    pthread_mutex_unlock(&m->lock);
  }
  pthread_mutex_unlock(&c->lock);
  const char *fr = sim_trace_dump(c, why);
  if (fr) SIM_WARN(SIM_INIT, "communicator %016llx: flight recorder: every rank's last operations written to %s",
                   (unsigned long long)c->key, fr);
}

SIM_EXPORT const char *ncclGetLastError(ncclComm_t comm) {
  const char *mine = sim_last_warning();
  if (mine[0] || !comm || comm->magic != SIM_COMM_MAGIC) return mine;
  return comm->last_error; /* a failure seen by a stream worker */
}

SIM_EXPORT const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCLSIM_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCLSIM_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCLSIM_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCLSIM_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    case ncclTimeout: return "operation timed out (ncclsim: NCCLSIM_TIMEOUT expired)";
    default: return "unknown result code";
  }
}
