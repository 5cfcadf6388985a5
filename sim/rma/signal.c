/*
 * sim/rma/signal.c — signal counters, and the tasks of ncclPutSignal,
 * ncclSignal and ncclWaitSignal.
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

static void emit(sim_clique *c, int target, int source) {
  rma_state *st = c->area[SIM_AREA_RMA];
  atomic_fetch_add_explicit(&rma_slot(st, target, source)->arrived, 1, memory_order_release);
  sim_waitq_wake(&st->rank[target].wq);
}

static ncclResult_t put_post(rma_task *t) {
  ncclComm_t comm = t->base.comm;
  sim_clique *c = comm->clique;
  void *dst = (char *)t->cw->ptr[t->peer] + t->off;
  if (t->nbytes) {
    /* The target's window memory must still be allocated (ncclsim checks
     * this; real NCCL would write to freed memory). */
    sim_alloc_info a;
    if (!sim_mem_lookup(dst, &a) || a.kind != SIM_MEM_NCCL) {
      return sim_comm_fail(comm, ncclInvalidUsage,
                           "ncclPutSignal to rank %d: its window memory %p was freed (ncclsim checks this; real "
                           "NCCL does not)",
                           t->peer, t->cw->ptr[t->peer]);
    }
    c->tp->copy(c->tp->map_peer(c, t->peer, dst), c->tp->map_peer(c, comm->rank, (void *)t->src), t->nbytes);
  }
  emit(c, t->peer, comm->rank);
  return ncclSuccess;
}

static ncclResult_t wait_post(rma_task *t) {
  ncclComm_t comm = t->base.comm;
  rma_state *st = rma_of(comm);
  for (int i = 0; i < t->ndesc; i++) {
    rma_desc *d = &t->desc[i];
    d->want = atomic_fetch_add_explicit(&rma_slot(st, comm->rank, d->peer)->claimed, (uint64_t)d->cnt,
                                        memory_order_relaxed) +
              (uint64_t)d->cnt;
  }
  return ncclSuccess;
}

static ncclResult_t task_post(sim_task *base) {
  rma_task *t = (rma_task *)base;
  switch (t->kind) {
    case RMA_PUT: return put_post(t);
    case RMA_SIGNAL: emit(base->comm->clique, t->peer, base->comm->rank); return ncclSuccess;
    default: return wait_post(t); /* RMA_WAIT: rma_task_new makes only these three */
  }
}

static bool arrived(void *arg) {
  rma_task *t = arg;
  rma_state *st = rma_of(t->base.comm);
  int me = t->base.comm->rank;
  for (int i = 0; i < t->ndesc; i++)
    if (atomic_load_explicit(&rma_slot(st, me, t->desc[i].peer)->arrived, memory_order_acquire) < t->desc[i].want)
      return false;
  return true;
}

static ncclResult_t task_wait(sim_task *base, uint64_t deadline) {
  rma_task *t = (rma_task *)base;
  if (t->kind != RMA_WAIT) return ncclSuccess; /* a put completes when posted */
  ncclComm_t comm = base->comm;
  int rc = sim_waitq_wait(&rma_of(comm)->rank[comm->rank].wq, arrived, t, sim_clique_cancel(comm->clique), deadline);
  if (rc == 0) return ncclSuccess;
  /* The tickets stay taken: the communicator has failed by now, and a later
   * wait must not take a signal that this one was owed. */
  return rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
}

static void task_describe(sim_task *base, char *buf, size_t len) {
  rma_task *t = (rma_task *)base;
  ncclComm_t comm = base->comm;
  if (t->kind == RMA_PUT) {
    snprintf(buf, len, "ncclPutSignal(%zu bytes to rank %d at window offset %zu)", t->nbytes, t->peer, t->off);
    return;
  }
  if (t->kind == RMA_SIGNAL) {
    snprintf(buf, len, "ncclSignal(peer=%d)", t->peer);
    return;
  }
  rma_state *st = rma_of(comm);
  size_t n = (size_t)snprintf(buf, len, "ncclWaitSignal(nDesc=%d) on rank %d, still missing:", t->ndesc, comm->rank);
  for (int i = 0; i < t->ndesc && n < len; i++) {
    rma_desc *d = &t->desc[i];
    uint64_t got = atomic_load(&rma_slot(st, comm->rank, d->peer)->arrived);
    uint64_t first = d->want - (uint64_t)d->cnt; /* signals owed to earlier waits */
    uint64_t have = got > first ? got - first : 0;
    if (have > (uint64_t)d->cnt) have = (uint64_t)d->cnt;
    n += (size_t)snprintf(buf + n, len - n, " peer %d: %" PRIu64 " of %d signal(s)%s", d->peer,
                          (uint64_t)d->cnt - have, d->cnt, i + 1 < t->ndesc ? ";" : "");
  }
}

static void task_release(sim_task *base) {
  rma_task *t = (rma_task *)base;
  if (t->cw) rma_cwin_unref(t->cw);
  sim_free(t);
}

static const struct sim_task_ops put_ops = {"ncclPutSignal", task_post, task_wait, task_describe, task_release};
static const struct sim_task_ops signal_ops = {"ncclSignal", task_post, task_wait, task_describe, task_release};
static const struct sim_task_ops wait_ops = {"ncclWaitSignal", task_post, task_wait, task_describe, task_release};

rma_task *rma_task_new(rma_kind kind, ncclComm_t comm, int ndesc) {
  rma_task *t = sim_calloc(1, sizeof *t + (size_t)ndesc * sizeof t->desc[0]);
  if (!t) return NULL;
  t->base.ops = kind == RMA_PUT ? &put_ops : kind == RMA_SIGNAL ? &signal_ops : &wait_ops;
  t->base.comm = comm;
  t->kind = kind;
  t->ndesc = ndesc;
  return t;
}

SIM_EXPORT ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                                   cudaStream_t stream) {
  ncclResult_t res = rma_check_signal_args(comm, peer, sigIdx, ctx, flags, "ncclSignal");
  if (res != ncclSuccess) return sim_group_error(res);
  rma_task *t = rma_task_new(RMA_SIGNAL, comm, 0);
  if (!t) return sim_group_error(ncclSystemError);
  t->peer = peer;
  return sim_task_submit(&t->base, stream);
}

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
  rma_task *t = rma_task_new(RMA_WAIT, comm, nDesc);
  if (!t) return sim_group_error(ncclSystemError);
  for (int i = 0; i < nDesc; i++) {
    t->desc[i].peer = descs[i].peer;
    t->desc[i].cnt = descs[i].opCnt;
  }
  return sim_task_submit(&t->base, stream);
}
