/*
 * sim/comm/comm.c — a communicator's life after init: checks, queries,
 * finalize, destroy, abort, revoke, suspend and resume.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "comm_internal.h"

/* ---- queries ---- */

static ncclResult_t query_check(const ncclComm_t comm, const void *out, const char *op) {
  if (!comm || comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "%s: comm %p is not a live communicator", op, (void *)comm);
    return ncclInvalidArgument;
  }
  if (!out) {
    SIM_WARN(SIM_INIT, "%s: output pointer is NULL", op);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  SIM_CHECK(query_check(comm, count, "ncclCommCount"));
  *count = comm->nranks;
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  SIM_CHECK(query_check(comm, device, "ncclCommCuDevice"));
  *device = comm->device;
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  SIM_CHECK(query_check(comm, rank, "ncclCommUserRank"));
  *rank = comm->rank;
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t *value) {
  SIM_CHECK(query_check(comm, value, "ncclCommMemStats"));
  switch (stat) {
    case ncclStatGpuMemSuspend:
    case ncclStatGpuMemSuspended: *value = 0; return ncclSuccess; /* nothing is ever suspended */
    case ncclStatGpuMemPersist:
    case ncclStatGpuMemTotal: *value = atomic_load(&comm->mem_bytes); return ncclSuccess;
  }
  SIM_WARN(SIM_INIT, "ncclCommMemStats: stat %d is not a ncclCommMemStat_t", (int)stat);
  return ncclInvalidArgument;
}

SIM_EXPORT ncclResult_t ncclGetVersion(int *version) {
  if (!version) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

/* ---- teardown ---- */

static bool idle(void *arg) { return atomic_load(&((ncclComm_t)arg)->inflight) == 0; }

/* Waits for the rank's submitted work to finish. On timeout, cancels the
 * clique's waits so the work fails fast, and waits again. */
static void drain(ncclComm_t comm, const char *op) {
  if (sim_waitq_wait(&comm->inflight_wq, idle, comm, NULL, sim_deadline()) == 0) return;
  SIM_WARN(SIM_INIT, "%s: rank %d still has %lld operation(s) in flight after NCCLSIM_TIMEOUT; aborting them", op,
           comm->rank, (long long)atomic_load(&comm->inflight));
  atomic_store(&comm->clique->aborted, 1);
  sim_waitq_wait(&comm->inflight_wq, idle, comm, NULL, UINT64_MAX);
}

static ncclResult_t teardown(ncclComm_t comm, const char *op, bool abort) {
  if (!comm) return ncclSuccess;
  if (comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "%s: comm %p is not a live communicator", op, (void *)comm);
    return ncclInvalidArgument;
  }
  sim_group_forget(comm); /* destroyed inside an open group on this thread */
  sim_init_cancel(comm);  /* a non-blocking init nobody polled to the end */
  if (!comm->clique) {   /* init never completed */
    sim_comm_free(comm);
    return ncclSuccess;
  }
  sim_clique *c = comm->clique;
  if (abort) {
    const char *fr = sim_trace_dump(c, "ncclCommAbort");
    if (fr) SIM_INFO(SIM_INIT, "ncclCommAbort: flight recorder: every rank's last operations written to %s", fr);
    atomic_store(&c->aborted, 1);
    sim_waitq_wake(&c->splits.wq);
  }
  drain(comm, op);
  /* A task's last act is to drop inflight and wake us under comm->lock;
   * taking the lock once waits out that wake before the comm is freed. */
  sim_mutex_lock(&comm->lock);
  pthread_mutex_unlock(&comm->lock);
  sim_comm_fini_areas(comm);
  sim_mutex_lock(&c->lock);
  c->ranks[comm->rank] = NULL;
  pthread_mutex_unlock(&c->lock);
  SIM_INFO(SIM_INIT, "%s: rank %d of communicator %016llx", op, comm->rank, (unsigned long long)c->key);
  sim_comm_free(comm);
  sim_clique_unref(c);
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) { return teardown(comm, "ncclCommDestroy", false); }

SIM_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) { return teardown(comm, "ncclCommAbort", true); }

SIM_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  SIM_CHECK(sim_comm_check(comm, "ncclCommFinalize"));
  if (sim_group_holds(comm)) {
    /* Its operations launch at ncclGroupEnd, on this very thread: waiting
     * for them here could never end. */
    SIM_WARN(SIM_INIT, "ncclCommFinalize: rank %d has operations in this thread's open group; call ncclGroupEnd first",
             comm->rank);
    return ncclInvalidUsage;
  }
  drain(comm, "ncclCommFinalize");
  atomic_store(&comm->state, SIM_COMM_FINALIZED);
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags) {
  SIM_CHECK(sim_comm_check(comm, "ncclCommRevoke"));
  if (flags != NCCL_REVOKE_DEFAULT) {
    SIM_WARN(SIM_INIT, "ncclCommRevoke: revokeFlags is %d, must be 0", flags);
    return ncclInvalidArgument;
  }
  /* Every pending operation of the communicator, on every rank and stream,
   * ends with ncclRemoteError; the comm then only accepts destroy/abort. */
  atomic_store(&comm->clique->aborted, 1);
  sim_waitq_wake(&comm->clique->splits.wq);
  atomic_store(&comm->state, SIM_COMM_REVOKED);
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags) {
  SIM_CHECK(sim_comm_check(comm, "ncclCommSuspend"));
  return ncclSuccess; /* nothing to release: simulated memory is host memory */
}

SIM_EXPORT ncclResult_t ncclCommResume(ncclComm_t comm) {
  SIM_CHECK(sim_comm_check(comm, "ncclCommResume"));
  return ncclSuccess;
}
