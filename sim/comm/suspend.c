/*
 * sim/comm/suspend.c — ncclCommSuspend, ncclCommResume and the memory
 * statistics they change.
 *
 * NCCL 2.30 (mem_manager.cc): ncclCommSuspend with NCCL_SUSPEND_MEM is
 * collective (a bootstrap barrier among the ranks) and releases the
 * communicator's dynamic GPU memory, its per-peer buffers; other flag bits
 * are ignored, and without NCCL_SUSPEND_MEM the call does nothing. A
 * second suspend is ncclInvalidUsage ("Already suspended"), so is a resume
 * of a comm that is not suspended. ncclCommResume is collective too.
 * ncclCommMemStats reports the suspendable bytes (unchanged by a suspend)
 * and whether the memory is suspended.
 *
 * Here every rank meets in a round of the clique's management table; the
 * last to arrive frees (or remakes) what every area holds per rank that
 * only operations use (sim_area.rank_suspend), for all ranks at once, so
 * that no rank can reach a peer's released state. NCCL does not refuse
 * operations on a suspended communicator (its kernels would use released
 * memory); ncclsim refuses them with ncclInvalidUsage.
 *
 * Across hosts no process holds every rank: the ranks meet in an exchange
 * among them all (net/exchange.c), NCCL's bootstrap barrier, and each then
 * frees (or remakes) its own state; every rank has stopped its operations
 * before it arrives, so none reaches a peer's state meanwhile. The call
 * posts the rank's part whole and never waits for its peers to post
 * theirs; the wait is the call's (blocking), ncclGroupEnd's (in a group)
 * or ncclCommGetAsyncError's polls (non-blocking), as on one host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../net/net.h"
#include "comm_internal.h"

/* Management rounds share the split table; their keys have the top bit. */
#define KEY_MGMT (1ull << 63)

/* NCCL_DISABLE_MEM_MANAGER=1 turns NCCL's memory manager off: suspend,
 * resume and the statistics are then ncclInvalidUsage. */
static bool manager_disabled(const char *op) {
  const char *e = getenv("NCCL_DISABLE_MEM_MANAGER");
  if (!e || atoi(e) == 0) return false;
  SIM_WARN(SIM_INIT, "%s: not supported, the memory manager is disabled (NCCL_DISABLE_MEM_MANAGER=%s)", op, e);
  return true;
}

/* ---- the rounds' completions, under the table's lock ---- */

static ncclResult_t suspend_all(sim_rv *rv, void *arg) {
  (void)rv;
  sim_clique *c = arg;
  for (int r = 0; r < c->nranks; r++) {
    sim_clique_rank_suspend(c, r);
    atomic_store(&c->ranks[r]->mem_suspended, 1);
  }
  return ncclSuccess;
}

static ncclResult_t resume_all(sim_rv *rv, void *arg) {
  (void)rv;
  sim_clique *c = arg;
  int r;
  for (r = 0; r < c->nranks; r++)
    if (sim_clique_rank_resume(c, r) != ncclSuccess) break;
  if (r < c->nranks) {
    SIM_WARN(SIM_INIT, "ncclCommResume: out of memory remaking rank %d's state; the communicator stays suspended", r);
    while (--r >= 0) sim_clique_rank_suspend(c, r);
    return ncclSystemError;
  }
  for (r = 0; r < c->nranks; r++) {
    atomic_store(&c->ranks[r]->mem_suspended, 0);
    atomic_store(&c->ranks[r]->state, SIM_COMM_READY);
  }
  return ncclSuccess;
}

static const sim_rv_ops suspend_rv = {"ncclCommSuspend", "suspend round", 0, 0, suspend_all, NULL, false};
static const sim_rv_ops resume_rv = {"ncclCommResume", "resume round", 0, 0, resume_all, NULL, false};

/* ---- one rank's side ---- */

/* How the rank's round ended: its result, or why it did not complete
 * (the rank then withdraws). A failed suspend leaves the rank ready. With
 * poll, ncclInProgress while the round is still open. */
static ncclResult_t settle(ncclComm_t comm, sim_rv *rv, bool resume, bool poll) {
  sim_clique *c = comm->clique;
  const char *op = resume ? "ncclCommResume" : "ncclCommSuspend";
  char why[160] = "";
  int rc = sim_mgmt_wait(comm, rv, NULL, 0, poll, why, sizeof why);
  if (rc == EINPROGRESS) return ncclInProgress;
  sim_rv_lock(&c->splits);
  ncclResult_t res;
  if (sim_rv_done(rv)) {
    res = sim_rv_result(rv);
  } else {
    char missing[256];
    sim_rv_missing(rv, missing, sizeof missing);
    res = rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    SIM_WARN(SIM_INIT, "%s: rank %d waited for rank(s) [%s] to call it too (%s%s); nothing was %s", op, comm->rank,
             missing, res == ncclTimeout ? "NCCLSIM_TIMEOUT expired" : "it never will: ", why,
             resume ? "resumed" : "suspended");
    /* Withdrawn: the rank's next call meets the others in this same round. */
    if (comm->mgmt_count == (sim_rv_key(rv) & ~KEY_MGMT) + 1) comm->mgmt_count--;
  }
  sim_rv_leave_locked(&c->splits, rv, comm->rank);
  sim_rv_unlock(&c->splits);
  if (res != ncclSuccess && !resume) atomic_store(&comm->state, SIM_COMM_READY);
  return res;
}

/* ---- across hosts ---- */

/* A rank's suspend or resume across hosts in flight: its part of the
 * exchange, posted whole at the call. */
struct sim_mgmt_net {
  sim_net_xrun *x;
  sim_due due;
  bool resume;
  uint8_t mine, *in;
};

static void net_free(struct sim_mgmt_net *w) {
  if (!w) return;
  sim_net_exchange_end(w->x);
  sim_free(w->in);
  sim_free(w);
}

/* Posts the rank's part of its next suspend or resume; never waits. */
static ncclResult_t net_post(ncclComm_t comm, bool resume, struct sim_mgmt_net **out) {
  struct sim_mgmt_net *w = sim_calloc(1, sizeof *w);
  if (w) w->in = sim_calloc((size_t)comm->nranks, 1);
  if (!w || !w->in) {
    net_free(w);
    return ncclSystemError;
  }
  w->mine = 1;
  w->resume = resume;
  w->due = sim_due_at(sim_deadline());
  char what[64];
  snprintf(what, sizeof what, "%s across hosts", resume ? "ncclCommResume" : "ncclCommSuspend");
  /* Sequence numbers 64-127: the children's exchanges take 0-63. */
  ncclResult_t res = sim_net_allgather_start(comm, SIM_NET_TAG_MGMT, 64 | (comm->mgmt_count & 63), NULL, comm->nranks,
                                             comm->rank, &w->mine, 1, w->in, true, what, &w->x);
  if (res != ncclSuccess) {
    net_free(w);
    return res;
  }
  comm->mgmt_count++;
  *out = w;
  return ncclSuccess;
}

/* The barrier ended with res: the rank's own state, or its withdrawal (its
 * next call meets the others in the same exchange; a failed suspend leaves
 * it ready). Frees w. */
static ncclResult_t net_settle(ncclComm_t comm, struct sim_mgmt_net *w, ncclResult_t res) {
  sim_clique *c = comm->clique;
  bool resume = w->resume;
  net_free(w);
  if (res != ncclSuccess) {
    if (res == ncclTimeout)
      SIM_WARN(SIM_INIT, "%s across hosts: rank %d waited for the other ranks to call it too; after "
               "NCCLSIM_TIMEOUT=%s s some still had not; nothing was %s", resume ? "ncclCommResume" : "ncclCommSuspend",
               comm->rank, sim_param_text(SIM_P_TIMEOUT), resume ? "resumed" : "suspended");
    comm->mgmt_count--;
    if (!resume) atomic_store(&comm->state, SIM_COMM_READY);
    return res;
  }
  if (!resume) {
    sim_clique_rank_suspend(c, comm->rank);
    atomic_store(&comm->mem_suspended, 1);
    return ncclSuccess;
  }
  if (sim_clique_rank_resume(c, comm->rank) != ncclSuccess) {
    SIM_WARN(SIM_INIT, "ncclCommResume: out of memory remaking rank %d's state; it stays suspended", comm->rank);
    return ncclSystemError;
  }
  atomic_store(&comm->mem_suspended, 0);
  atomic_store(&comm->state, SIM_COMM_READY);
  return ncclSuccess;
}

/* One look at w's barrier (non-blocking): ncclInProgress, or how it
 * settled. */
static ncclResult_t net_poll(ncclComm_t comm, struct sim_mgmt_net *w) {
  ncclResult_t res = sim_net_exchange_test(comm, w->x, true, &w->due, NULL);
  return res == ncclInProgress ? res : net_settle(comm, w, res);
}

/* ---- the call ---- */

/* Inside a group the wait moves to ncclGroupEnd (NCCL runs suspend and
 * resume there), so one thread can suspend every rank. */
typedef struct {
  sim_group_job job;
  sim_rv *rv;                 /* one host */
  struct sim_mgmt_net *net;   /* across hosts */
  bool resume, ran;
} mgmt_job;

static ncclResult_t job_run(sim_group_job *job) {
  mgmt_job *j = (mgmt_job *)job;
  j->ran = true;
  if (!j->net) return settle(j->job.comm, j->rv, j->resume, false);
  struct sim_mgmt_net *w = j->net;
  j->net = NULL;
  return net_settle(j->job.comm, w, sim_net_exchange_wait(j->job.comm, w->x, &w->due));
}

/* Released without running: the comm is being destroyed. */
static void job_free(sim_group_job *job) {
  mgmt_job *j = (mgmt_job *)job;
  if (!j->ran && j->rv) sim_rv_leave(&j->job.comm->clique->splits, j->rv, j->job.comm->rank);
  net_free(j->net);
  sim_free(j);
}

/* Arrives in the rank's next management round (across hosts: posts its
 * part of the barrier) and waits, defers the wait to ncclGroupEnd, or
 * (non-blocking) returns ncclInProgress. */
static ncclResult_t meet(ncclComm_t comm, bool resume) {
  sim_clique *c = comm->clique;
  mgmt_job *job = NULL;
  if (sim_group_depth() > 0 && !(job = sim_calloc(1, sizeof *job))) return ncclSystemError;
  sim_rv *rv = NULL;
  struct sim_mgmt_net *w = NULL;
  ncclResult_t res = c->net ? net_post(comm, resume, &w)
                            : sim_rv_arrive(&c->splits, resume ? &resume_rv : &suspend_rv, KEY_MGMT | comm->mgmt_count,
                                            c->nranks, c->nranks, comm->rank, 0, NULL, c, &rv);
  if (res != ncclSuccess) {
    sim_free(job);
    return res;
  }
  if (!w) comm->mgmt_count++;
  if (job) {
    *job = (mgmt_job){.job = {.comm = comm, .run = job_run, .release = job_free}, .rv = rv, .net = w,
                      .resume = resume};
    return sim_group_add_job(&job->job);
  }
  if (comm->blocking)
    return w ? net_settle(comm, w, sim_net_exchange_wait(comm, w->x, &w->due)) : settle(comm, rv, resume, false);
  res = w ? net_poll(comm, w) : settle(comm, rv, resume, true);
  if (res == ncclInProgress) {
    sim_mutex_lock(&comm->lock);
    comm->mgmt_rv = rv;
    comm->mgmt_net = w;
    comm->mgmt_resume = resume;
    pthread_mutex_unlock(&comm->lock);
  }
  atomic_store(&comm->async_error, res); /* as NCCL's non-blocking group end */
  return res;
}

/* A non-blocking rank's round in progress is settled here, by
 * ncclCommGetAsyncError (through sim_comm_poll); comm->lock guards
 * mgmt_rv. */
void sim_suspend_poll(ncclComm_t comm) {
  /* The poller takes the round out while it looks, so that two threads
   * polling at once cannot both leave it. */
  sim_mutex_lock(&comm->lock);
  sim_rv *rv = comm->mgmt_rv;
  struct sim_mgmt_net *w = comm->mgmt_net;
  bool resume = comm->mgmt_resume;
  comm->mgmt_rv = NULL;
  comm->mgmt_net = NULL;
  pthread_mutex_unlock(&comm->lock);
  if (!rv && !w) return;
  ncclResult_t res = w ? net_poll(comm, w) : settle(comm, rv, resume, true);
  if (res == ncclInProgress) {
    sim_mutex_lock(&comm->lock);
    comm->mgmt_rv = rv;
    comm->mgmt_net = w;
    pthread_mutex_unlock(&comm->lock);
    return;
  }
  atomic_store(&comm->async_error, res);
}

void sim_suspend_cancel(ncclComm_t comm) {
  sim_rv *rv = comm->mgmt_rv;
  comm->mgmt_rv = NULL;
  if (rv) sim_rv_leave(&comm->clique->splits, rv, comm->rank);
  net_free(comm->mgmt_net);
  comm->mgmt_net = NULL;
}

/* A previous non-blocking suspend or resume not yet settled: as NCCL's
 * ncclCommEnsureReady, ncclInvalidArgument. */
static bool busy(ncclComm_t comm, const char *op) {
  sim_suspend_poll(comm);
  sim_mutex_lock(&comm->lock);
  bool b = comm->mgmt_rv != NULL || comm->mgmt_net != NULL;
  pthread_mutex_unlock(&comm->lock);
  if (b)
    SIM_WARN(SIM_INIT, "%s: rank %d's previous suspend or resume is still in progress; poll ncclCommGetAsyncError "
             "until it is no longer ncclInProgress", op, comm->rank);
  return b;
}

static bool idle(void *arg) { return atomic_load(&((ncclComm_t)arg)->inflight) == 0; }

static ncclResult_t comm_suspend(ncclComm_t comm, int flags) {
  if (!comm || comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "ncclCommSuspend: comm %p is not a live communicator", (void *)comm);
    return ncclInvalidArgument;
  }
  if (flags & ~NCCL_SUSPEND_MEM)
    SIM_WARN(SIM_INIT, "ncclCommSuspend: flags 0x%x has bits other than NCCL_SUSPEND_MEM (0x%x); they are ignored, "
             "as by NCCL", (unsigned)flags, NCCL_SUSPEND_MEM);
  if (!(flags & NCCL_SUSPEND_MEM)) return ncclSuccess; /* NCCL: nothing to suspend */
  if (busy(comm, "ncclCommSuspend")) return ncclInvalidArgument;
  if (atomic_load(&comm->state) == SIM_COMM_SUSPENDED) {
    SIM_WARN(SIM_INIT, "ncclCommSuspend: rank %d is already suspended", comm->rank);
    return ncclInvalidUsage;
  }
  SIM_CHECK(sim_comm_check_mgmt(comm, "ncclCommSuspend"));
  if (atomic_load(&comm->state) == SIM_COMM_REVOKED) {
    SIM_WARN(SIM_INIT, "ncclCommSuspend: rank %d is revoked (ncclsim checks this)", comm->rank);
    return ncclInvalidUsage;
  }
  if (manager_disabled("ncclCommSuspend")) return ncclInvalidUsage;
  if (sim_group_holds(comm)) {
    SIM_WARN(SIM_INIT, "ncclCommSuspend: rank %d has operations in this thread's open group; there must be none "
             "outstanding", comm->rank);
    return ncclInvalidUsage;
  }
  atomic_store(&comm->state, SIM_COMM_SUSPENDED); /* new operations are refused from now on */
  if (sim_waitq_wait(&comm->inflight_wq, idle, comm, NULL, sim_deadline()) != 0) {
    atomic_store(&comm->state, SIM_COMM_READY);
    SIM_WARN(SIM_INIT, "ncclCommSuspend: rank %d still has %lld operation(s) in flight after NCCLSIM_TIMEOUT; "
             "nothing was suspended (there must be none outstanding)", comm->rank,
             (long long)atomic_load(&comm->inflight));
    return ncclTimeout;
  }
  ncclResult_t res = meet(comm, false);
  if (res != ncclSuccess && res != ncclInProgress) atomic_store(&comm->state, SIM_COMM_READY);
  return res;
}

static ncclResult_t comm_resume(ncclComm_t comm) {
  if (!comm || comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "ncclCommResume: comm %p is not a live communicator", (void *)comm);
    return ncclInvalidArgument;
  }
  if (busy(comm, "ncclCommResume")) return ncclInvalidArgument;
  int st = atomic_load(&comm->state);
  if (st == SIM_COMM_INITIALIZING) {
    SIM_WARN(SIM_INIT, "ncclCommResume: communicator rank %d is still initializing", comm->rank);
    return ncclInvalidArgument;
  }
  if (manager_disabled("ncclCommResume")) return ncclInvalidUsage;
  if (st != SIM_COMM_SUSPENDED || !atomic_load(&comm->mem_suspended)) {
    SIM_WARN(SIM_INIT, "ncclCommResume: rank %d is not suspended", comm->rank);
    return ncclInvalidUsage;
  }
  sim_comm_driven(comm);
  return meet(comm, true);
}

SIM_EXPORT ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags) {
  return sim_group_error(comm_suspend(comm, flags));
}

SIM_EXPORT ncclResult_t ncclCommResume(ncclComm_t comm) { return sim_group_error(comm_resume(comm)); }

/* ---- memory statistics ---- */

static ncclResult_t mem_check(ncclComm_t comm, const void *out, const char *op) {
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

/* The rank's suspendable bytes; now: those allocated at the moment. */
static uint64_t suspendable(ncclComm_t comm, bool now) {
  return comm->clique ? sim_clique_suspendable(comm->clique, comm->rank, now) : 0;
}

SIM_EXPORT ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t *value) {
  SIM_CHECK(mem_check(comm, value, "ncclCommMemStats"));
  if (manager_disabled("ncclCommMemStats")) return ncclInvalidUsage;
  uint64_t persist = atomic_load(&comm->mem_bytes); /* windows, registrations, device communicators */
  switch (stat) {
    case ncclStatGpuMemSuspend: *value = suspendable(comm, false); return ncclSuccess;
    case ncclStatGpuMemSuspended: *value = atomic_load(&comm->mem_suspended) ? 1 : 0; return ncclSuccess;
    case ncclStatGpuMemPersist: *value = persist; return ncclSuccess;
    case ncclStatGpuMemTotal: *value = persist + suspendable(comm, false); return ncclSuccess;
  }
  SIM_WARN(SIM_INIT, "ncclCommMemStats: stat %d is not a ncclCommMemStat_t", (int)stat);
  return ncclInvalidArgument;
}

SIM_EXPORT ncclResult_t ncclsimCommMemInUse(ncclComm_t comm, uint64_t *bytes) {
  SIM_CHECK(mem_check(comm, bytes, "ncclsimCommMemInUse"));
  *bytes = atomic_load(&comm->mem_bytes) + suspendable(comm, true);
  return ncclSuccess;
}
