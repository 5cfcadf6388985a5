/*
 * sim/rma/signal.c — signal counters, ncclSignal and ncclWaitSignal, and
 * the emit that ends a put (put.c).
 *
 * One 64-bit counter pair per (target, source), each on its own cache
 * line: the source bumps `arrived` with release order after its put's copy,
 * so a wait that sees the count (acquire) sees the data. A wait takes a
 * ticket per descriptor from `claimed` when it is posted (in stream and
 * group order) and completes once `arrived` reaches every ticket, which is
 * how each wait consumes its opCnt and several waits never count one signal
 * twice. Waiters spin, then sleep on their own rank's waitq; a signal wakes
 * only its target's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "rma_internal.h"

ncclResult_t rma_check_host_rma(ncclComm_t comm, const char *op) {
  if (comm->opts.hostRma) return ncclSuccess;
  SIM_WARN(SIM_RMA,
           "%s: host-initiated RMA is not supported by this communicator (hostRmaSupport is 0; "
           "NCCLSIM_HOST_RMA=0 or ncclsimSetCommOptions hostRma=0)",
           op);
  return ncclInvalidUsage;
}

ncclResult_t rma_check_signal_args(ncclComm_t comm, int peer, int sigIdx, int ctx, unsigned flags,
                                   const char *op) {
  SIM_CHECK(sim_comm_check(comm, op));
  SIM_CHECK(rma_check_host_rma(comm, op));
  SIM_CHECK(sim_check_peer(comm, peer, op));
  if (sigIdx != 0 || ctx != 0 || flags != 0) {
    SIM_WARN(SIM_RMA, "%s: sigIdx %d, ctx %d, flags 0x%x: each must be 0", op, sigIdx, ctx, flags);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

void rma_signal_emit(sim_clique *c, int target, int source) {
  rma_state *st = c->area[SIM_AREA_RMA];
  atomic_fetch_add(&rma_slot(st, target, source)->arrived, 1); /* read by arrived() */
  sim_waitq_wake_sleepers(&st->rank[target].wq);
}

void rma_signal_commit(sim_task *t, int peer) {
  /* Its number among the signals this rank sends the peer, for the
   * timeline's flow to the wait that consumes it. */
  t->seq = atomic_fetch_add(&rma_slot(rma_of(t->comm), peer, t->comm->rank)->called, 1) + 1;
  t->has_seq = true;
}

int rma_awaits_none(sim_task *t SIM_UNUSED, sim_rank_ref *out SIM_UNUSED, int max SIM_UNUSED) { return 0; }

/* ---- ncclSignal ---- */

typedef struct {
  sim_task base;
  int peer;          /* the target */
  sim_ucx_op net[2]; /* to a rank elsewhere: the atomic add in UCX (net[1]; rma_net.c) */
} signal_task;

static ncclResult_t signal_post(sim_task *base) {
  signal_task *t = (signal_task *)base;
  sim_clique *c = base->comm->clique;
  if (sim_net_remote(c->net, t->peer)) return rma_net_put(base->comm, t->peer, NULL, 0, NULL, 0, t->net);
  rma_signal_emit(c, t->peer, base->comm->rank);
  return ncclSuccess;
}

static ncclResult_t signal_wait(sim_task *base, sim_due *due) {
  signal_task *t = (signal_task *)base;
  /* On one host a signal completes when posted. */
  return sim_net_remote(base->comm->clique->net, t->peer) ? rma_net_done(base->comm, t->peer, t->net, due)
                                                          : ncclSuccess;
}

static void signal_describe(sim_task *base, char *buf, size_t len) {
  snprintf(buf, len, "ncclSignal(peer=%d)", ((signal_task *)base)->peer);
}

static void task_free(sim_task *base) { sim_task_free(base); }

static void signal_commit(sim_task *base) { rma_signal_commit(base, ((signal_task *)base)->peer); }

static const struct sim_task_ops signal_ops = {"ncclSignal", signal_post,   signal_wait,    signal_describe,
                                               task_free,    signal_commit, rma_awaits_none,
                                               SIM_COST_RMA_PUT, NULL};

SIM_EXPORT ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                                   cudaStream_t stream) {
  ncclResult_t res = rma_check_signal_args(comm, peer, sigIdx, ctx, flags, "ncclSignal");
  if (res != ncclSuccess) return sim_group_error(res);
  signal_task *t = sim_task_alloc(sizeof *t, stream);
  if (!t) return sim_group_error(ncclSystemError);
  *t = (signal_task){.base = {.ops = &signal_ops, .comm = comm, .conn = SIM_CONN_RMA, .has_peer = true, .peer = peer},
                     .peer = peer};
  return sim_task_submit(&t->base, stream);
}

/* ---- ncclWaitSignal ---- */

typedef struct {
  int peer;
  int cnt;
  /* `arrived` count that satisfies this descriptor, set at post; atomic:
   * the timeout dump and the deadlock check of other threads read it. */
  _Atomic uint64_t want;
} wait_desc;

typedef struct {
  sim_task base;
  int ndesc;
  wait_desc desc[];
} wait_task;

static ncclResult_t wait_post(sim_task *base) {
  wait_task *t = (wait_task *)base;
  ncclComm_t comm = t->base.comm;
  rma_state *st = rma_of(comm);
  for (int i = 0; i < t->ndesc; i++) {
    wait_desc *d = &t->desc[i];
    uint64_t first =
        atomic_fetch_add_explicit(&rma_slot(st, comm->rank, d->peer)->claimed, (uint64_t)d->cnt, memory_order_relaxed);
    atomic_store_explicit(&d->want, first + (uint64_t)d->cnt, memory_order_relaxed);
  }
  if (t->ndesc == 1) { /* the timeline joins it to the signals it consumes */
    base->seq = atomic_load_explicit(&t->desc[0].want, memory_order_relaxed);
    base->seq_span = (uint32_t)t->desc[0].cnt;
    base->has_seq = true;
  }
  return ncclSuccess;
}

static bool arrived(void *arg) {
  wait_task *t = arg;
  rma_state *st = rma_of(t->base.comm);
  int me = t->base.comm->rank;
  /* Sequentially consistent, for rma_signal_emit's wake (sim.h). */
  for (int i = 0; i < t->ndesc; i++)
    if (atomic_load(&rma_slot(st, me, t->desc[i].peer)->arrived) <
        atomic_load_explicit(&t->desc[i].want, memory_order_relaxed))
      return false;
  return true;
}

static ncclResult_t wait_wait(sim_task *base, sim_due *due) {
  wait_task *t = (wait_task *)base;
  ncclComm_t comm = base->comm;
  if (comm->clique->net) return rma_net_wait(comm, arrived, t, due);
  int rc = sim_waitq_wait_due(&rma_of(comm)->rank[comm->rank].wq, arrived, t, sim_comm_cancel(comm), due);
  if (rc == 0) return ncclSuccess;
  /* The tickets stay taken: the communicator has failed by now, and a later
   * wait must not take a signal that this one was owed. */
  return rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
}

static void wait_describe(sim_task *base, char *buf, size_t len) {
  wait_task *t = (wait_task *)base;
  ncclComm_t comm = base->comm;
  rma_state *st = rma_of(comm);
  size_t n = (size_t)snprintf(buf, len, "ncclWaitSignal(nDesc=%d) on rank %d, still missing:", t->ndesc, comm->rank);
  for (int i = 0; i < t->ndesc && n < len; i++) {
    wait_desc *d = &t->desc[i];
    uint64_t got = atomic_load(&rma_slot(st, comm->rank, d->peer)->arrived);
    uint64_t first = atomic_load(&d->want) - (uint64_t)d->cnt; /* signals owed to earlier waits */
    uint64_t have = got > first ? got - first : 0;
    if (have > (uint64_t)d->cnt) have = (uint64_t)d->cnt;
    n += (size_t)snprintf(buf + n, len - n, " peer %d: %" PRIu64 " of %d signal(s)%s", d->peer,
                          (uint64_t)d->cnt - have, d->cnt, i + 1 < t->ndesc ? ";" : "");
  }
}

/* The peers whose calls have not yet committed the signals this wait
 * needs: only their drivers can make them. */
static int wait_awaits(sim_task *base, sim_rank_ref *out, int max) {
  wait_task *t = (wait_task *)base;
  ncclComm_t comm = base->comm;
  rma_state *st = rma_of(comm);
  int n = 0;
  for (int i = 0; i < t->ndesc; i++) {
    wait_desc *d = &t->desc[i];
    if (sim_net_remote(comm->clique->net, d->peer)) return -1; /* its calls are not known here */
    if (atomic_load(&rma_slot(st, comm->rank, d->peer)->called) >= atomic_load(&d->want)) continue;
    if (n == max) return -1;
    out[n++] = (sim_rank_ref){comm->clique, d->peer};
  }
  return n;
}

static const struct sim_task_ops wait_ops = {"ncclWaitSignal", wait_post, wait_wait, wait_describe,
                                             task_free,        NULL,      wait_awaits,
                                             SIM_COST_RMA_WAIT, NULL};

SIM_EXPORT ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t *descs, ncclComm_t comm,
                                       cudaStream_t stream) {
  static const char op[] = "ncclWaitSignal";
  ncclResult_t res;
  if ((res = sim_comm_check(comm, op)) != ncclSuccess || (res = rma_check_host_rma(comm, op)) != ncclSuccess)
    return sim_group_error(res);
  if (nDesc <= 0 || !descs) {
    SIM_WARN(SIM_RMA, "%s: nDesc is %d and signalDescs %p: need at least one descriptor", op, nDesc, (void *)descs);
    return sim_group_error(ncclInvalidArgument);
  }
  for (int i = 0; i < nDesc; i++) {
    const ncclWaitSignalDesc_t *d = &descs[i];
    if (d->opCnt <= 0 || d->sigIdx != 0 || d->ctx != 0) {
      SIM_WARN(SIM_RMA, "%s: signalDescs[%d] has opCnt %d, sigIdx %d, ctx %d; need opCnt > 0, sigIdx 0, ctx 0", op,
               i, d->opCnt, d->sigIdx, d->ctx);
      return sim_group_error(ncclInvalidArgument);
    }
    if (d->peer < 0 || d->peer >= comm->nranks) {
      SIM_WARN(SIM_RMA, "%s: signalDescs[%d].peer is %d, but the communicator has %d ranks", op, i, d->peer,
               comm->nranks);
      return sim_group_error(ncclInvalidArgument);
    }
  }
  wait_task *t = sim_task_alloc(sizeof *t + (size_t)nDesc * sizeof t->desc[0], stream);
  if (!t) return sim_group_error(ncclSystemError);
  t->base = (sim_task){.ops = &wait_ops, .comm = comm, .conn = SIM_CONN_RMA, .has_peer = nDesc == 1,
                       .peer = descs[0].peer};
  t->ndesc = nDesc;
  for (int i = 0; i < nDesc; i++) {
    t->desc[i].peer = descs[i].peer;
    t->desc[i].cnt = descs[i].opCnt;
  }
  return sim_task_submit(&t->base, stream);
}
