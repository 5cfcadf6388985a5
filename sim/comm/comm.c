/*
 * sim/comm/comm.c — communicators and cliques: creation, queries,
 * finalize/destroy/abort, failures and the pending-operation dump.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "comm_internal.h"
#include "../transport.h"

static const sim_area *const areas[SIM_AREA_COUNT] = {&sim_area_p2p, &sim_area_rma, &sim_area_coll,
                                                      &sim_area_dev};

ncclComm_t sim_comm_alloc(int nranks, int rank, int device, const ncclConfig_t *config) {
  ncclComm_t c = sim_calloc(1, sizeof *c);
  if (!c) return NULL;
  c->magic = SIM_COMM_MAGIC;
  c->rank = rank;
  c->nranks = nranks;
  c->device = device;
  c->blocking = !(config && config->blocking == 0);
  atomic_store(&c->state, SIM_COMM_INITIALIZING);
  pthread_mutex_init(&c->lock, NULL);
  c->pending.prev = c->pending.next = &c->pending;
  sim_options_resolve(&c->opts);
  uint64_t fault = (uint64_t)sim_param(SIM_P_FAULT);
  if (fault && (int)(fault >> 32) == rank) c->fault_at = fault & 0xffffffffu;
  return c;
}

void sim_comm_free(ncclComm_t c) {
  c->magic = 0;
  pthread_mutex_destroy(&c->lock);
  sim_free(c);
}

ncclResult_t sim_clique_create(ncclComm_t *comms, int nranks, uint64_t key) {
  sim_clique *c = sim_calloc(1, sizeof *c);
  if (!c) return ncclSystemError;
  c->ranks = sim_calloc((size_t)nranks, sizeof *c->ranks);
  c->rank_wq = sim_calloc((size_t)nranks, sizeof *c->rank_wq);
  if (!c->ranks || !c->rank_wq) {
    sim_free(c->ranks);
    sim_free(c->rank_wq);
    sim_free(c);
    return ncclSystemError;
  }
  c->key = key;
  c->nranks = nranks;
  c->tp = &sim_transport_local;
  pthread_mutex_init(&c->lock, NULL);
  int rpn = comms[0]->opts.ranksPerNode;
  c->ranks_per_node = rpn > 0 && rpn < nranks ? rpn : nranks;
  c->nnodes = (nranks + c->ranks_per_node - 1) / c->ranks_per_node;
  int i;
  for (i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->clique_init && areas[i]->clique_init(c) != ncclSuccess) break;
  if (i < SIM_AREA_COUNT) {
    SIM_WARN(SIM_INIT, "cannot allocate the %s state of a %d-rank communicator", areas[i]->name, nranks);
    while (--i >= 0)
      if (areas[i]->clique_fini) areas[i]->clique_fini(c);
    pthread_mutex_destroy(&c->lock);
    sim_free(c->ranks);
    sim_free(c->rank_wq);
    sim_free(c);
    return ncclSystemError;
  }
  atomic_store(&c->refs, nranks);
  for (int r = 0; r < nranks; r++) {
    ncclComm_t m = comms[r];
    c->ranks[r] = m;
    m->clique = c;
    m->node = r / c->ranks_per_node;
    m->lsa_rank = r % c->ranks_per_node;
    int first = m->node * c->ranks_per_node;
    m->lsa_size = nranks - first < c->ranks_per_node ? nranks - first : c->ranks_per_node;
  }
  for (int r = 0; r < nranks; r++) atomic_store(&comms[r]->state, SIM_COMM_READY);
  SIM_INFO(SIM_INIT, "communicator %016llx: %d ranks on %d node(s) of %d", (unsigned long long)key, nranks,
           c->nnodes, c->ranks_per_node);
  return ncclSuccess;
}

void sim_clique_unref(sim_clique *c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  for (int i = SIM_AREA_COUNT - 1; i >= 0; i--)
    if (areas[i]->clique_fini) areas[i]->clique_fini(c);
  pthread_mutex_destroy(&c->lock);
  sim_free(c->ranks);
  sim_free(c->rank_wq);
  sim_free(c);
}

void sim_comm_poll(ncclComm_t comm) {
  if (!comm->clique) return;
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_poll) areas[i]->comm_poll(comm);
}

ncclResult_t sim_comm_check(ncclComm_t comm, const char *op) {
  if (!comm) {
    SIM_WARN(SIM_INIT, "%s: comm is NULL", op);
    return ncclInvalidArgument;
  }
  if (comm->magic != SIM_COMM_MAGIC) {
    SIM_WARN(SIM_INIT, "%s: comm %p is not a live communicator", op, (void *)comm);
    return ncclInvalidArgument;
  }
  int st = atomic_load(&comm->state);
  if (st != SIM_COMM_READY) {
    static const char *names[] = {"still initializing", "ready", "finalized", "failed to initialize",
                                  "revoked"};
    SIM_WARN(SIM_INIT, "%s: communicator rank %d is %s", op, comm->rank, names[st]);
    return st == SIM_COMM_INITIALIZING ? ncclInvalidArgument : ncclInvalidUsage;
  }
  return ncclSuccess;
}

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
    pthread_mutex_lock(&comm->lock);
    snprintf(comm->last_error, sizeof comm->last_error, "%s", msg);
    pthread_mutex_unlock(&comm->lock);
  }
  SIM_WARN(SIM_INIT, "rank %d: %s", comm->rank, msg);
  return res;
}

void sim_comm_pending_add(ncclComm_t comm, sim_pending *p) {
  pthread_mutex_lock(&comm->lock);
  p->next = &comm->pending;
  p->prev = comm->pending.prev;
  p->prev->next = p;
  comm->pending.prev = p;
  pthread_mutex_unlock(&comm->lock);
}

void sim_comm_pending_del(ncclComm_t comm, sim_pending *p) {
  pthread_mutex_lock(&comm->lock);
  if (p->next) {
    p->prev->next = p->next;
    p->next->prev = p->prev;
    p->next = p->prev = NULL;
  }
  pthread_mutex_unlock(&comm->lock);
}

void sim_clique_dump_pending(sim_clique *c, const char *why) {
  if (atomic_exchange(&c->dumped, 1)) return;
  SIM_WARN(SIM_INIT, "communicator %016llx: %s; outstanding operations of its %d ranks:",
           (unsigned long long)c->key, why, c->nranks);
  pthread_mutex_lock(&c->lock);
  for (int r = 0; r < c->nranks; r++) {
    ncclComm_t m = c->ranks[r];
    if (!m) {
      SIM_WARN(SIM_INIT, "  rank %d: destroyed", r);
      continue;
    }
    pthread_mutex_lock(&m->lock);
    if (atomic_load(&m->dead))
      SIM_WARN(SIM_INIT, "  rank %d (device %d): stopped at its operation %llu (NCCLSIM_FAULT)", r, m->device,
               (unsigned long long)m->fault_at);
    else if (m->pending.next == &m->pending)
      SIM_WARN(SIM_INIT, "  rank %d (device %d): nothing pending", r, m->device);
    for (sim_pending *p = m->pending.next; p != &m->pending; p = p->next) {
      char line[384];
      p->describe(p, line, sizeof line);
      SIM_WARN(SIM_INIT, "  rank %d (device %d): %s", r, m->device, line);
    }
    pthread_mutex_unlock(&m->lock);
  }
  pthread_mutex_unlock(&c->lock);
}

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
    atomic_store(&c->aborted, 1);
    sim_waitq_wake(&c->wq);
  }
  drain(comm, op);
  /* A task's last act is to drop inflight and wake us under comm->lock;
   * taking the lock once waits out that wake before the comm is freed. */
  pthread_mutex_lock(&comm->lock);
  pthread_mutex_unlock(&comm->lock);
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_fini) areas[i]->comm_fini(comm);
  pthread_mutex_lock(&c->lock);
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
  sim_waitq_wake(&comm->clique->wq);
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
