/*
 * sim/rma/put.c — ncclPutSignal: one copy from the caller's symmetric
 * window into the target's memory of the named window, then a signal to
 * the target (rma_signal_emit, signal.c). peerWinOffset is in bytes.
 *
 * A put is a task that completes when posted: post() copies and signals, in
 * stream order, and wait() has nothing left to wait for. To a rank on
 * another host, post() starts a UCX put and atomic add (rma_net.c), and
 * wait() waits for UCX to finish with them. The task holds a
 * reference on the collective window until it is released, so that the
 * target pointers it copies to stay readable after a deregistration.
 */
#include <stdio.h>

#include "rma_internal.h"

typedef struct {
  sim_task base;
  int peer;           /* the target */
  const void *src;    /* in the caller's symmetric window */
  size_t off, nbytes; /* byte offset in the target's window, bytes */
  rma_cwin *cw;       /* the window (a reference) */
  uint64_t frees;     /* sim_mem_frees() before the enqueue found the target allocated; UINT64_MAX: not found */
  sim_ucx_op net[2];  /* to a rank elsewhere: the put and the signal in UCX (rma_net.c) */
} put_task;

/* Whether the target's window memory is still allocated (ncclsim checks
 * this; real NCCL would write to freed memory). */
static bool target_allocated(const void *dst) {
  sim_alloc_info a;
  return sim_mem_lookup(dst, &a) && a.kind == SIM_MEM_NCCL;
}

static ncclResult_t put_post(sim_task *base) {
  put_task *t = (put_task *)base;
  ncclComm_t comm = base->comm;
  sim_clique *c = comm->clique;
  if (sim_net_remote(c->net, t->peer)) return rma_net_put(comm, t->peer, t->src, t->nbytes, t->cw, t->off, t->net);
  void *dst = (char *)t->cw->ptr[t->peer] + t->off;
  if (t->nbytes) {
    /* The enqueue found the target allocated, and unless something was
     * freed since, it still is: the lookup (a thread-local cache, a call
     * to __tls_get_addr) stays off the path from the peer's signal to this
     * one. */
    if (t->frees != sim_mem_frees() && !target_allocated(dst)) {
      return sim_comm_fail(comm, ncclInvalidUsage,
                           "ncclPutSignal to rank %d: its window memory %p was freed (ncclsim checks this; real "
                           "NCCL does not)",
                           t->peer, t->cw->ptr[t->peer]);
    }
    c->tp->copy(c->tp->map_peer(c, t->peer, dst), c->tp->map_peer(c, comm->rank, (void *)t->src), t->nbytes);
  }
  rma_signal_emit(c, t->peer, comm->rank);
  return ncclSuccess;
}

static ncclResult_t put_wait(sim_task *base, sim_due *due) {
  put_task *t = (put_task *)base;
  /* On one host a put completes when posted; to a rank elsewhere, when UCX
   * is done with the caller's bytes. */
  return sim_net_remote(base->comm->clique->net, t->peer) ? rma_net_done(base->comm, t->peer, t->net, due)
                                                          : ncclSuccess;
}

static void put_describe(sim_task *base, char *buf, size_t len) {
  put_task *t = (put_task *)base;
  snprintf(buf, len, "ncclPutSignal(%zu bytes to rank %d at window offset %zu)", t->nbytes, t->peer, t->off);
}

static void put_release(sim_task *base) {
  put_task *t = (put_task *)base;
  rma_cwin_unref(t->cw, base->comm->rank);
  sim_task_free(base);
}

static void put_commit(sim_task *base) { rma_signal_commit(base, ((put_task *)base)->peer); }

/* A graph launch's copy of a captured put (core/capture.c): a reference
 * on the window of its own, and a fresh look at the target. */
static void put_retain(sim_task *base) {
  put_task *t = (put_task *)base;
  rma_cwin_ref(t->cw, base->comm->rank);
  t->frees = UINT64_MAX;
}

static const struct sim_task_ops put_ops = {"ncclPutSignal", put_post,   put_wait,       put_describe,
                                            put_release,     put_commit, rma_awaits_none,
                                            SIM_COST_RMA_PUT, put_retain};

SIM_EXPORT ncclResult_t ncclPutSignal(const void *localbuff, size_t count, ncclDataType_t datatype, int peer,
                                      ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx,
                                      unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  static const char op[] = "ncclPutSignal";
  ncclResult_t res = rma_check_signal_args(comm, peer, sigIdx, ctx, flags, op);
  if (res != ncclSuccess) return sim_group_error(res);
  if (!peerWin) {
    SIM_WARN(SIM_RMA, "%s: peerWin is NULL", op);
    return sim_group_error(ncclInvalidArgument);
  }
  if ((res = sim_check_buffer(comm, localbuff, count, datatype, op, "localbuff")) != ncclSuccess)
    return sim_group_error(res);
  size_t bytes = count * sim_dtype_size(datatype);
  if (bytes && !rma_in_symmetric(comm, localbuff, bytes)) {
    SIM_WARN(SIM_RMA,
             "%s: localbuff %p (%zu bytes) is not inside one of rank %d's windows registered with "
             "NCCL_WIN_COLL_SYMMETRIC",
             op, localbuff, bytes, comm->rank);
    return sim_group_error(ncclInvalidArgument);
  }
  rma_cwin *cw;
  struct ncclWindow_vidmem *own = rma_find_own(comm, peerWin, &cw, op);
  if (!own) return sim_group_error(ncclInternalError);
  /* Real NCCL (2.30.7, the copy-engine path within an LSA team) checks the
   * offset against the caller's own window, whatever the peer's size
   * (REG-04): a rank with the smaller window cannot reach the end of a
   * larger one. */
  if (bytes && peerWinOffset >= own->size) {
    SIM_WARN(SIM_RMA,
             "%s: peerWinOffset %zu is past rank %d's own window (%zu bytes); NCCL checks a put's offset against "
             "the caller's window, whatever the size of rank %d's",
             op, peerWinOffset, comm->rank, own->size, peer);
    rma_cwin_unref(cw, comm->rank);
    return sim_group_error(ncclInvalidArgument);
  }
  size_t peer_size = cw->size[peer];
  if (peerWinOffset > peer_size || bytes > peer_size - peerWinOffset) {
    SIM_WARN(SIM_RMA,
             "%s: %zu bytes at offset %zu run past the end of rank %d's window (%zu bytes) (ncclsim checks this; "
             "real NCCL does not)",
             op, bytes, peerWinOffset, peer, peer_size);
    rma_cwin_unref(cw, comm->rank);
    return sim_group_error(ncclInvalidArgument);
  }
  put_task *t = sim_task_alloc(sizeof *t, stream);
  if (!t) {
    rma_cwin_unref(cw, comm->rank);
    return sim_group_error(ncclSystemError);
  }
  *t = (put_task){.base = {.ops = &put_ops, .comm = comm, .bytes = bytes, .conn = SIM_CONN_RMA, .has_peer = true,
                           .peer = peer},
                  .peer = peer, .src = localbuff, .off = peerWinOffset, .nbytes = bytes, .cw = cw,
                  .frees = UINT64_MAX};
  if (bytes && !sim_net_remote(comm->clique->net, peer)) {
    uint64_t frees = sim_mem_frees();
    if (target_allocated((char *)cw->ptr[peer] + peerWinOffset)) t->frees = frees;
  }
  return sim_task_submit(&t->base, stream);
}
