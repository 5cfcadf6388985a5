/*
 * sim/net/exchange.c — an allgather among some ranks of a communicator
 * across hosts, over UCX tagged messages, outside its collectives.
 *
 * Its users:
 *  - the hosts' leaders, each speaking for its host: the parts of a window
 *    registration (rma/rma_net.c) and the hellos of a first-use connection
 *    (core/connect.c);
 *  - management calls (comm/child_net.c): split, shrink and grow exchange their
 *    arguments and the new communicators' unique ids this way, so that they
 *    take none of the parent's collective sequence numbers, run on a
 *    revoked parent as NCCL's bootstrap does, and never wait for a rank a
 *    shrink excludes.
 * Every participant passes the same list of peers in the same order; tags
 * name the sender's and receiver's places in it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../sim.h"
#include "net_internal.h"

ncclResult_t sim_net_exchange(ncclComm_t comm, const sim_net_xchg *x, sim_due *due) {
  const sim_net_map *m = comm->clique->net;
  uint64_t key = comm->clique->key;
  int n = x->npeers;
  sim_ucx_op *ops = sim_calloc(2 * (size_t)n, sizeof *ops);
  int *from = sim_calloc(2 * (size_t)n, sizeof *from); /* ops[i]'s place in peers */
  int nops = 0;
  ncclResult_t res = ops && from ? ncclSuccess : ncclSystemError;
  /* Receives first: a message that comes before its receive waits in UCX
   * as unexpected, which costs a copy. */
  for (int i = 0; i < n && res == ncclSuccess; i++) {
    if (i == x->me) continue;
    res = sim_ucx_recv(sim_net_leader_tag(key, x->space, x->seq, i, x->me), x->out[i], x->bytes[i], &ops[nops]);
    if (res == ncclSuccess) from[nops++] = i;
  }
  int recvs = nops;
  for (int i = 0; i < n && res == ncclSuccess; i++) {
    if (i == x->me) continue;
    /* Synchronous: a rank leaves the exchange only once every peer has
     * its part. A plain send ends once UCX holds the bytes, and the rank
     * may then stop progressing UCX for a while, or close its endpoints
     * (ncclCommDestroy, exit) with a part still queued for a connection
     * being made (a peer on this host that it never reached before). */
    res = sim_ucx_send(m, x->peers[i], sim_net_leader_tag(key, x->space, x->seq, x->me, i), x->mine, x->mine_bytes,
                       true, &ops[nops]);
    if (res == ncclSuccess) from[nops++] = i;
  }
  const _Atomic int *cancel = x->mgmt ? NULL : sim_comm_cancel(comm);
  for (int i = 0; i < nops && res == ncclSuccess; i++) {
    int p = x->peers[from[i]];
    /* A management exchange watches its own peers only (a shrink's
     * excluded ranks may be gone); the leaders watch every host. */
    res = sim_net_wait_until(comm, &ops[i], x->mgmt ? p : -1, 1024, cancel, due);
    if (ops[i].cancelled) break; /* a cancel, the deadline or a host gone (sim_net_exchange's comment) */
    if (res == ncclSuccess && i < recvs && ops[i].length != x->bytes[from[i]])
      res = ncclInvalidUsage;
    if (res != ncclSuccess)
      res = sim_net_up.fail(comm, res == ncclInvalidUsage ? ncclInternalError : res,
                            "%s: the message %s rank %d on host %s failed in UCX: %s%s", x->what,
                            i < recvs ? "from" : "to", p, m->host_name[p], sim_ucx_status_text(&ops[i]),
                            res == ncclInvalidUsage ? " (a length not this exchange's)" : "");
  }
  for (int i = 0; ops && i < nops; i++) sim_ucx_cancel(&ops[i]); /* those not ended (a failure) */
  sim_free(ops);
  sim_free(from);
  return res;
}

ncclResult_t sim_net_leaders_allgather(ncclComm_t comm, int space, uint64_t seq, const void *mine, size_t per_rank,
                                       void *all, sim_due *due, const char *what) {
  const sim_net_map *m = comm->clique->net;
  int nh = m->nhosts, H = m->my_host;
  int *leaders = sim_calloc((size_t)nh, sizeof *leaders);
  void **out = sim_calloc((size_t)nh, sizeof *out);
  size_t *bytes = sim_calloc((size_t)nh, sizeof *bytes);
  ncclResult_t res = leaders && out && bytes ? ncclSuccess : ncclSystemError;
  size_t at = 0;
  for (int h = 0; h < nh && res == ncclSuccess; at += bytes[h++]) {
    leaders[h] = sim_net_leader(m, h);
    out[h] = (char *)all + at;
    bytes[h] = (size_t)m->host_size[h] * per_rank;
  }
  if (res == ncclSuccess) {
    memcpy(out[H], mine, bytes[H]);
    sim_net_xchg x = {space, seq, leaders, nh, H, mine, bytes[H], out, bytes, false, what};
    res = sim_net_exchange(comm, &x, due);
  }
  sim_free(leaders);
  sim_free(out);
  sim_free(bytes);
  return res;
}

ncclResult_t sim_net_allgather(ncclComm_t comm, int space, uint64_t seq, const int *peers, int n, int me,
                               const void *mine, size_t bytes, void *all, bool mgmt, sim_due *due, const char *what) {
  int *every = peers ? NULL : sim_calloc((size_t)n, sizeof *every);
  void **out = sim_calloc((size_t)n, sizeof *out);
  size_t *len = sim_calloc((size_t)n, sizeof *len);
  ncclResult_t res = (peers || every) && out && len ? ncclSuccess : ncclSystemError;
  for (int i = 0; i < n && res == ncclSuccess; i++) {
    if (every) every[i] = i;
    out[i] = (char *)all + (size_t)i * bytes;
    len[i] = bytes;
  }
  if (res == ncclSuccess) {
    memcpy(out[me], mine, bytes);
    sim_net_xchg x = {space, seq, peers ? peers : every, n, me, mine, bytes, out, len, mgmt, what};
    res = sim_net_exchange(comm, &x, due);
  }
  sim_free(every);
  sim_free(out);
  sim_free(len);
  return res;
}
