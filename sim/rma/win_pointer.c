/*
 * sim/rma/win_pointer.c — pointers into windows: ncclWinGetUserPtr, and
 * the LSA, peer and multimem device pointers.
 *
 * LSA teams are the ranks of one simulated node (NCCLSIM_RANKS_PER_NODE).
 * Real NCCL's LSA pointers are mappings of the peer's memory, distinct from
 * the user pointer even for the own rank; ranks here share one address
 * space, so an LSA pointer is the peer's own address, as the transport maps
 * it (sim/transport.h). The getters other than ncclWinGetUserPtr take no
 * communicator: they find the window in the process-wide list of live
 * handles (win_registry.c).
 */
#include "rma_internal.h"
#include "nccl_device/core.h" /* the getters other than ncclWinGetUserPtr, as in NCCL */

SIM_EXPORT ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void **outUserPtr) {
  static const char op[] = "ncclWinGetUserPtr";
  SIM_CHECK(sim_comm_check(comm, op));
  if (!win || !outUserPtr) {
    SIM_WARN(SIM_RMA, "%s: win %p or outUserPtr %p is NULL", op, (void *)win, (void *)outUserPtr);
    return ncclInvalidArgument;
  }
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  struct ncclWindow_vidmem **pp = rma_win_find_in(&rk->wins, win);
  void *p = pp ? (*pp)->ptr : NULL;
  pthread_mutex_unlock(&rk->lock);
  if (!pp) {
    SIM_WARN(SIM_RMA, "%s: window %p is not one of rank %d's registered windows", op, (void *)win, comm->rank);
    return ncclInvalidArgument;
  }
  *outUserPtr = p;
  return ncclSuccess;
}

/* Common checks of the pointer getters. */
static ncclResult_t pointer_check(ncclWindow_t win, size_t offset, void **out, rma_win_view *v, const char *op) {
  if (!out) {
    SIM_WARN(SIM_RMA, "%s: outPtr is NULL", op);
    return ncclInvalidArgument;
  }
  *out = NULL;
  if (!win || !rma_win_lookup(win, v, op)) {
    if (!win) SIM_WARN(SIM_RMA, "%s: window is NULL", op);
    return ncclInvalidArgument;
  }
  if (offset >= v->size) {
    SIM_WARN(SIM_RMA, "%s: offset %zu is past the window's %zu bytes", op, offset, v->size);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

/* `peer`'s window memory at offset, as the caller maps it. Windows may
 * differ in size between ranks: an offset inside the caller's window but
 * past the peer's is refused (real NCCL hands out the address unchecked). */
static ncclResult_t peer_address(rma_win_view *v, int peer, size_t offset, void **out, const char *op) {
  sim_clique *c = v->comm->clique;
  if (offset >= v->cw->size[peer]) {
    SIM_WARN(SIM_RMA, "%s: offset %zu is past rank %d's window (%zu bytes) (ncclsim checks this)", op, offset, peer,
             v->cw->size[peer]);
    return ncclInvalidArgument;
  }
  *out = c->tp->map_peer(c, peer, (char *)v->cw->ptr[peer] + offset);
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void **outPtr) {
  static const char op[] = "ncclGetLsaDevicePointer";
  rma_win_view v;
  SIM_CHECK(pointer_check(window, offset, outPtr, &v, op));
  if (lsaRank < 0 || lsaRank >= v.comm->lsa_size) {
    SIM_WARN(SIM_RMA, "%s: lsaRank is %d, but rank %d's LSA team (node %d) has %d ranks", op, lsaRank,
             v.comm->rank, v.comm->node, v.comm->lsa_size);
    return ncclInvalidArgument;
  }
  const sim_net_map *m = v.comm->clique->net;
  int peer = v.comm->node * v.comm->clique->ranks_per_node + lsaRank;
  if (m) /* across hosts, the LSA team is the host: its lsaRank-th rank */
    for (peer = 0; m->host[peer] != m->my_host || m->host_rank[peer] != lsaRank; peer++) continue;
  return peer_address(&v, peer, offset, outPtr, op);
}

SIM_EXPORT ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void **outPtr) {
  static const char op[] = "ncclGetPeerDevicePointer";
  rma_win_view v;
  SIM_CHECK(pointer_check(window, offset, outPtr, &v, op));
  if (peer < 0 || peer >= v.comm->nranks) {
    SIM_WARN(SIM_RMA, "%s: peer is %d, but the communicator has %d ranks", op, peer, v.comm->nranks);
    return ncclInvalidArgument;
  }
  const sim_net_map *m = v.comm->clique->net;
  if (m ? sim_net_remote(m, peer) : peer / v.comm->clique->ranks_per_node != v.comm->node)
    return ncclSuccess; /* not in the LSA team: no pointer, as in NCCL */
  return peer_address(&v, peer, offset, outPtr, op);
}

SIM_EXPORT ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void **outPtr) {
  rma_win_view v;
  SIM_CHECK(pointer_check(window, offset, outPtr, &v, "ncclGetLsaMultimemDevicePointer"));
  return ncclSuccess; /* no multicast in the simulator: NULL, as real NCCL without it */
}
