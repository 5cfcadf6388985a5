/*
 * sim/p2p/p2p_net.c — ncclSend/ncclRecv to a rank on another host: one
 * UCX tagged message (sim/net/ucx.c).
 *
 * The tag names the communicator, the sender and the receiver; UCX matches
 * one sender's messages of one tag in the order they were sent, which is
 * NCCL's order for a pair. A receive learns the length that came: a
 * shorter message than its count fails it with the mismatch, a longer one
 * is truncated by UCX and fails it too. The sender cannot tell (as with
 * NCCL, where a mismatch corrupts or hangs).
 */
#include <errno.h>
#include <stdio.h>

#include "config.h"
#include "../sim.h"
#include "../net/net.h"
#include "p2p_internal.h"

typedef struct {
  sim_task base;
  void *buf;
  size_t count;
  ncclDataType_t dt;
  bool is_send;
  int peer;
  sim_ucx_op op;
} net_task;

/* 23 bits of the communicator, 20 of the sender and 20 of the receiver
 * (comm/init.c refuses larger communicators across hosts); bit 63 is the
 * collectives' (coll/coll_net.c). */
static uint64_t tag_of(ncclComm_t comm, int sender, int receiver) {
  uint64_t k = comm->clique->key;
  k ^= k >> 23;
  k ^= k >> 46;
  return ((k & 0x7fffffull) << 40) | ((uint64_t)sender << 20) | (uint64_t)receiver;
}

static ncclResult_t net_post(sim_task *base) {
  net_task *t = (net_task *)base;
  ncclComm_t comm = base->comm;
  size_t bytes = t->count * sim_dtype_size(t->dt);
  if (t->is_send)
    return sim_ucx_send(comm->clique->net, t->peer, tag_of(comm, comm->rank, t->peer), t->buf, bytes, false, &t->op);
  return sim_ucx_recv(tag_of(comm, t->peer, comm->rank), t->buf, bytes, &t->op);
}

static ncclResult_t net_wait(sim_task *base, sim_due *due) {
  net_task *t = (net_task *)base;
  ncclComm_t comm = base->comm;
  /* Polled long before sleeping: a sleep between a large message's
   * fragments cost most of its bandwidth. */
  ncclResult_t res = sim_net_wait(comm, &t->op, t->peer, 1u << 16, due);
  if (t->op.cancelled) return res; /* ended early: cancel, deadline or a host gone */
  size_t want = t->count * sim_dtype_size(t->dt);
  SIM_TRACE(SIM_P2P, "rank %d %s rank %d over UCX: %s, %zu of %zu bytes", comm->rank, t->is_send ? "->" : "<-",
            t->peer, sim_ucx_status_text(&t->op), t->is_send ? want : t->op.length, want);
  if (res == ncclSuccess && !t->is_send && t->op.length != want) res = ncclInvalidUsage;
  if (res == ncclInvalidUsage)
    return sim_comm_fail(comm, res,
                         "mismatched point-to-point pair across hosts: rank %d ncclRecv(count=%zu, %s) from rank %d "
                         "received a message of %s bytes (ncclsim checks this; real NCCL would truncate or hang)",
                         comm->rank, t->count, sim_dtype_name(t->dt), t->peer,
                         t->op.length != want && t->op.status == 0 ? "fewer" : "more");
  if (res != ncclSuccess)
    return sim_comm_fail(comm, res, "%s rank %d on host %s failed in UCX: %s", t->is_send ? "ncclSend to" : "ncclRecv from",
                         t->peer, comm->clique->net->host_name[t->peer], sim_ucx_status_text(&t->op));
  return ncclSuccess;
}

static void net_describe(sim_task *base, char *buf, size_t len) {
  net_task *t = (net_task *)base;
  snprintf(buf, len, "%s(count=%zu, %s, peer=%d): over UCX, waiting for rank %d on host %s", t->is_send ? "ncclSend" : "ncclRecv",
           t->count, sim_dtype_name(t->dt), t->peer, t->peer, base->comm->clique->net->host_name[t->peer]);
}

static void net_release(sim_task *base) {
  net_task *t = (net_task *)base;
  sim_ucx_cancel(&t->op); /* a task dropped after its post (a failed group) */
  sim_task_free(base);
}

/* Whether the peer has called yet is known only on its host. */
static int net_awaits(sim_task *base, sim_rank_ref *out, int max) {
  (void)base, (void)out, (void)max;
  return -1;
}

static const struct sim_task_ops net_send_ops = {"ncclSend", net_post, net_wait, net_describe, net_release, NULL,
                                                 net_awaits, SIM_COST_KERNEL, NULL};
static const struct sim_task_ops net_recv_ops = {"ncclRecv", net_post, net_wait, net_describe, net_release, NULL,
                                                 net_awaits, SIM_COST_KERNEL, NULL};

ncclResult_t sim_p2p_net_enqueue(bool is_send, void *buf, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  net_task *t = sim_task_alloc(sizeof *t, stream);
  if (!t) return sim_group_error(ncclSystemError);
  *t = (net_task){.base = {.ops = is_send ? &net_send_ops : &net_recv_ops,
                           .comm = comm,
                           .bytes = count * sim_dtype_size(dt),
                           .conn = is_send ? SIM_CONN_SEND : SIM_CONN_RECV, /* hellos through UCX (core/connect.c) */
                           .conn_peer = peer,
                           .has_peer = true,
                           .peer = peer},
                  .is_send = is_send, .buf = buf, .count = count, .dt = dt, .peer = peer};
  return sim_task_submit(&t->base, stream);
}
