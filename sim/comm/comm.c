/*
 * sim/comm/comm.c — a communicator's life after init: queries, finalize,
 * destroy, abort and revoke. Suspend and resume are in comm/suspend.c,
 * grow in comm/grow.c.
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
  sim_clique_abort(comm->clique);
  sim_waitq_wait(&comm->inflight_wq, idle, comm, NULL, UINT64_MAX);
}

void sim_comm_stop_ops(ncclComm_t comm, const char *op) {
  sim_group_forget_tasks(comm);
  atomic_store(&comm->cancel, 1);
  sim_wake_rank(comm->clique, comm->rank);
  drain(comm, op);
  /* A revoked rank stays cancelled, and so does every rank of an aborted
   * clique (sim_clique_abort may have run meanwhile: test after). */
  if (atomic_load(&comm->state) != SIM_COMM_REVOKED) atomic_store(&comm->cancel, 0);
  if (atomic_load(&comm->clique->aborted)) atomic_store(&comm->cancel, 1);
}

static ncclResult_t teardown(ncclComm_t comm, const char *op, bool abort) {
  if (!comm) return ncclSuccess;
  if (comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "%s: comm %p is not a live communicator", op, (void *)comm);
    return ncclInvalidArgument;
  }
  sim_group_forget(comm); /* destroyed inside an open group on this thread */
  sim_capture_forget_comm(comm); /* its operations that graphs keep */
  sim_init_cancel(comm);  /* a non-blocking init nobody polled to the end */
  if (!comm->clique) {   /* init never completed */
    sim_comm_free(comm);
    return ncclSuccess;
  }
  sim_clique *c = comm->clique;
  sim_suspend_cancel(comm); /* a non-blocking suspend or resume nobody polled to the end */
  sim_child_net_forget(comm); /* its non-blocking grows' exchanges across hosts */
  if (abort) {
    const char *fr = sim_trace_dump(c, "ncclCommAbort");
    if (fr) SIM_INFO(SIM_INIT, "ncclCommAbort: flight recorder: every rank's last operations written to %s", fr);
    sim_clique_abort(c);
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
  if (comm && comm->magic == SIM_COMM_MAGIC && atomic_load(&comm->state) == SIM_COMM_REVOKED) {
    /* NCCL's revoke marks the comm finalized (init.cc, ncclCommRevoke), and
     * a second finalize is ncclInvalidArgument. */
    SIM_WARN(SIM_INIT, "ncclCommFinalize: communicator rank %d was revoked; only destroy, abort, split, shrink and "
             "grow remain", comm->rank);
    return ncclInvalidArgument;
  }
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

/* ---- revoke ----
 *
 * As in NCCL 2.30 (init.cc, ncclCommRevoke), revoke is local to the rank:
 * it stops this rank's operations in flight and refuses new ones; peers
 * whose operations wait for this rank go on waiting until they revoke too
 * (or until NCCLSIM_TIMEOUT). The async error is ncclInProgress until the
 * rank is quiescent, then ncclSuccess. */

/* Once a revoked rank has nothing in flight, its state is ncclSuccess. */
void sim_revoke_poll(ncclComm_t comm) {
  int busy = ncclInProgress;
  if (atomic_load(&comm->state) == SIM_COMM_REVOKED && atomic_load(&comm->inflight) == 0)
    atomic_compare_exchange_strong(&comm->async_error, &busy, ncclSuccess);
}

SIM_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int flags) {
  if (!comm) {
    SIM_INFO(SIM_INIT, "ncclCommRevoke: comm is NULL: nothing to revoke");
    return ncclSuccess; /* as NCCL */
  }
  if (comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "ncclCommRevoke: comm %p is not a live communicator", (void *)comm);
    return ncclInvalidArgument;
  }
  if (flags != NCCL_REVOKE_DEFAULT) {
    SIM_WARN(SIM_INIT, "ncclCommRevoke: revokeFlags is %d, must be NCCL_REVOKE_DEFAULT (0)", flags);
    return ncclInvalidArgument;
  }
  int st = atomic_load(&comm->state);
  if (st == SIM_COMM_REVOKED || st == SIM_COMM_FINALIZED) {
    SIM_WARN(SIM_INIT, "ncclCommRevoke: communicator rank %d is already %s", comm->rank,
             st == SIM_COMM_REVOKED ? "revoked" : "finalized");
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_comm_check(comm, "ncclCommRevoke"));
  /* Operations of this rank not yet launched from this thread's open group
   * would only be launched at its ncclGroupEnd: they go now. */
  sim_group_forget_tasks(comm);
  atomic_store(&comm->state, SIM_COMM_REVOKED);
  atomic_store(&comm->async_error, ncclInProgress);
  atomic_store(&comm->cancel, 1); /* the rank's waits end; its queued operations are not run */
  sim_wake_rank(comm->clique, comm->rank);
  SIM_INFO(SIM_INIT, "ncclCommRevoke: rank %d of communicator %016llx, %lld operation(s) in flight", comm->rank,
           (unsigned long long)comm->clique->key, (long long)atomic_load(&comm->inflight));
  if (comm->blocking) drain(comm, "ncclCommRevoke");
  sim_revoke_poll(comm);
  return (ncclResult_t)atomic_load(&comm->async_error);
}
