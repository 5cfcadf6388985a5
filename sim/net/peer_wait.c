/*
 * sim/net/peer_wait.c — a rank's wait on an operation with a rank elsewhere,
 * and what ends it early: a cancel, the deadline, or the peer's host gone.
 * Point-to-point tasks (p2p/p2p_net.c), the leaders of collectives and
 * window registrations (coll/coll_net.c, rma/rma_net.c), first-use
 * connections (core/connect.c) and waits for signals wait here alike.
 */
#include "config.h"

#include <stdio.h>

#include "../sim.h"
#include "net_internal.h"

sim_net_hooks sim_net_up;

void sim_net_set_hooks(const sim_net_hooks *h) { sim_net_up = *h; }

/* Fails comm for peer, lost for `why`. */
static ncclResult_t gone(ncclComm_t comm, int peer, const char *why) {
  const sim_net_map *m = comm->clique->net;
  char host[256];
  sim_net_describe_host(m, m->host[peer], host, sizeof host);
  ncclResult_t res = sim_net_up.fail(comm, ncclRemoteError,
                                     "rank %d lost rank %d (pid %d) on %s: UCX: %s (its process is gone; NCCL "
                                     "reports a peer it lost as ncclRemoteError)",
                                     comm->rank, peer, m->pid[peer], host, why);
  sim_net_up.abort(comm->clique);
  return res;
}

ncclResult_t sim_net_check_gone(ncclComm_t comm, int peer) {
  const sim_net_map *m = comm->clique->net;
  for (int r = peer < 0 ? 0 : peer; r < (peer < 0 ? m->nranks : peer + 1); r++) {
    const char *why = m->host[r] != m->my_host ? sim_ucx_peer_failed(m, r) : NULL;
    if (why) return gone(comm, r, why);
  }
  return ncclSuccess;
}

ncclResult_t sim_net_poll(ncclComm_t comm, bool (*ready)(void *arg, bool *moved), void *arg, int peer,
                          unsigned idle_spins, unsigned sleep_us, const _Atomic int *cancel, sim_due *due) {
  bool moved = false;
  for (unsigned idle = 0; !ready(arg, &moved); idle = moved ? 0 : idle + 1, moved = false) {
    ncclResult_t res;
    if (cancel && atomic_load(cancel)) return ncclRemoteError;
    if (idle < idle_spins) continue;
    if ((res = sim_net_check_gone(comm, peer)) != ncclSuccess) return res;
    if (sim_now_ns() >= sim_due_ns(due)) return ncclTimeout;
    sim_ucx_sleep(sleep_us);
  }
  return ncclSuccess;
}

typedef struct {
  sim_ucx_op *op;
  ncclResult_t res;
} op_wait;

static bool op_ended(void *arg, bool *moved) {
  op_wait *w = arg;
  w->res = sim_ucx_test(w->op, moved);
  return w->res != ncclInProgress;
}

ncclResult_t sim_net_wait_until(ncclComm_t comm, sim_ucx_op *op, int peer, unsigned idle_spins,
                                const _Atomic int *cancel, sim_due *due) {
  op_wait w = {op, ncclInProgress};
  ncclResult_t res = sim_net_poll(comm, op_ended, &w, peer, idle_spins, 1000, cancel, due);
  if (res == ncclSuccess) return w.res;
  sim_ucx_cancel(op);
  return res;
}

ncclResult_t sim_net_wait(ncclComm_t comm, sim_ucx_op *op, int peer, unsigned idle_spins, sim_due *due) {
  return sim_net_wait_until(comm, op, peer, idle_spins, sim_comm_cancel(comm), due);
}

ncclResult_t sim_net_wait_ops(ncclComm_t comm, sim_ucx_op *ops, int from, int n, sim_due *due, const char *what) {
  for (int i = from; i < n; i++) {
    ncclResult_t res = sim_net_wait(comm, &ops[i], -1, 1024, due);
    if (ops[i].cancelled) return res;
    if (res != ncclSuccess)
      return sim_net_up.fail(comm, res, "%s: a message between hosts' leaders failed in UCX: %s", what,
                             sim_ucx_status_text(&ops[i]));
  }
  return ncclSuccess;
}
