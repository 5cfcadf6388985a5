/*
 * sim/net/peer_wait.c — a rank's wait on an operation with a rank elsewhere,
 * and what ends it early: a cancel, the deadline, or the peer's host gone.
 * Point-to-point tasks (p2p/p2p_net.c) and the collectives' leaders
 * (coll/coll_net.c) wait here alike.
 */
#include "config.h"

#include <stdio.h>

#include "../sim.h"
#include "net.h"

/* Fails comm for peer, lost for `why`. */
static ncclResult_t gone(ncclComm_t comm, int peer, const char *why) {
  const sim_net_map *m = comm->clique->net;
  char host[256];
  sim_net_describe_host(m, m->host[peer], host, sizeof host);
  ncclResult_t res = sim_comm_fail(comm, ncclRemoteError,
                                   "rank %d lost rank %d (pid %d) on %s: UCX: %s (its process is gone; NCCL "
                                   "reports a peer it lost as ncclRemoteError)",
                                   comm->rank, peer, m->pid[peer], host, why);
  sim_clique_abort(comm->clique);
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

ncclResult_t sim_net_wait(ncclComm_t comm, sim_ucx_op *op, int peer, unsigned idle_spins, sim_due *due) {
  ncclResult_t res;
  bool moved = false;
  for (unsigned idle = 0; (res = sim_ucx_test(op, &moved)) == ncclInProgress; idle = moved ? 0 : idle + 1) {
    if (atomic_load(sim_comm_cancel(comm))) res = ncclRemoteError;
    else if (idle < idle_spins) continue;
    else if ((res = sim_net_check_gone(comm, peer)) == ncclSuccess && sim_now_ns() >= sim_due_ns(due))
      res = ncclTimeout;
    if (res != ncclSuccess) {
      sim_ucx_cancel(op);
      return res;
    }
    sim_ucx_sleep(1);
  }
  return res;
}
