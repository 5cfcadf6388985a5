/*
 * sim/net/exchange.c — an allgather among some ranks of a communicator
 * across hosts, over UCX tagged messages, outside its collectives.
 *
 * Its users:
 *  - the hosts' leaders, each speaking for its host: the parts of a window
 *    registration (rma/rma_net.c) and the hellos of a first-use connection
 *    (core/connect.c);
 *  - management calls (comm/child_net.c, comm/suspend.c): split, shrink
 *    and grow exchange their arguments and the new communicators' unique
 *    ids this way, suspend and resume meet so, so that they take none of
 *    the parent's collective sequence numbers, run on a revoked parent as
 *    NCCL's bootstrap does, and never wait for a rank a shrink excludes.
 * Every participant passes the same list of peers in the same order; tags
 * name the sender's and receiver's places in it. An exchange is posted
 * whole at once and then tested: a thread that posts one for each of its
 * ranks (in a group, or on non-blocking communicators) completes them all.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../sim.h"
#include "net_internal.h"

/* An exchange in flight: its receives, then its sends. */
struct sim_net_xrun {
  int nops, recvs, left;
  sim_ucx_op *ops;
  int *peer;      /* ops[i]'s rank */
  size_t *want;   /* a receive's length */
  bool *ended;
  bool mgmt;
  char what[96];
};

void sim_net_exchange_end(sim_net_xrun *r) {
  if (!r) return;
  for (int i = 0; r->ops && i < r->nops; i++) sim_ucx_cancel(&r->ops[i]); /* those not ended (a failure) */
  sim_free(r->ops);
  sim_free(r->peer);
  sim_free(r->want);
  sim_free(r->ended);
  sim_free(r);
}

ncclResult_t sim_net_exchange_start(ncclComm_t comm, const sim_net_xchg *x, sim_net_xrun **out) {
  const sim_net_map *m = comm->clique->net;
  uint64_t key = comm->clique->key;
  int n = x->npeers;
  sim_net_xrun *r = sim_calloc(1, sizeof *r);
  ncclResult_t res = r ? ncclSuccess : ncclSystemError;
  if (r) {
    r->ops = sim_calloc(2 * (size_t)n, sizeof *r->ops);
    r->peer = sim_calloc(2 * (size_t)n, sizeof *r->peer);
    r->want = sim_calloc(2 * (size_t)n, sizeof *r->want);
    r->ended = sim_calloc(2 * (size_t)n, sizeof *r->ended);
    r->mgmt = x->mgmt;
    snprintf(r->what, sizeof r->what, "%s", x->what);
    if (!r->ops || !r->peer || !r->want || !r->ended) res = ncclSystemError;
  }
  /* Receives first: a message that comes before its receive waits in UCX
   * as unexpected, which costs a copy. */
  for (int i = 0; i < n && res == ncclSuccess; i++) {
    if (i == x->me) continue;
    res = sim_ucx_recv(sim_net_leader_tag(key, x->space, x->seq, i, x->me), x->out[i], x->bytes[i],
                       &r->ops[r->nops]);
    if (res == ncclSuccess) r->peer[r->nops] = x->peers[i], r->want[r->nops++] = x->bytes[i];
  }
  if (r) r->recvs = r->nops;
  for (int i = 0; i < n && res == ncclSuccess; i++) {
    if (i == x->me) continue;
    /* Synchronous: a rank leaves the exchange only once every peer has
     * its part. A plain send ends once UCX holds the bytes, and the rank
     * may then stop progressing UCX for a while, or close its endpoints
     * (ncclCommDestroy, exit) with a part still queued for a connection
     * being made (a peer on this host that it never reached before). */
    res = sim_ucx_send(m, x->peers[i], sim_net_leader_tag(key, x->space, x->seq, x->me, i), x->mine, x->mine_bytes,
                       true, &r->ops[r->nops]);
    if (res == ncclSuccess) r->peer[r->nops++] = x->peers[i];
  }
  if (res != ncclSuccess) {
    sim_net_exchange_end(r);
    return res;
  }
  r->left = r->nops;
  *out = r;
  return ncclSuccess;
}

ncclResult_t sim_net_exchange_test(ncclComm_t comm, sim_net_xrun *r, bool look, sim_due *due, bool *moved) {
  const sim_net_map *m = comm->clique->net;
  for (int i = 0; i < r->nops; i++) {
    if (r->ended[i]) continue;
    bool progressed = false;
    ncclResult_t res = sim_ucx_test(&r->ops[i], &progressed);
    if (moved) *moved |= progressed;
    if (res == ncclInProgress) continue;
    r->ended[i] = true;
    r->left--;
    if (res == ncclSuccess && i < r->recvs && r->ops[i].length != r->want[i]) res = ncclInvalidUsage;
    if (res != ncclSuccess) {
      int p = r->peer[i];
      /* A send to a process that is gone fails in UCX: say which host went. */
      ncclResult_t gone = sim_net_check_gone(comm, p);
      if (gone != ncclSuccess) return gone;
      return sim_net_up.fail(comm, res == ncclInvalidUsage ? ncclInternalError : res,
                             "%s: the message %s rank %d on host %s failed in UCX: %s%s", r->what,
                             i < r->recvs ? "from" : "to", p, m->host_name[p], sim_ucx_status_text(&r->ops[i]),
                             res == ncclInvalidUsage ? " (a length not this exchange's)" : "");
    }
  }
  if (r->left == 0) return ncclSuccess;
  if (!look) return ncclInProgress;
  const _Atomic int *cancel = r->mgmt ? NULL : sim_comm_cancel(comm);
  if (cancel && atomic_load(cancel)) return ncclRemoteError;
  /* A management exchange watches its own peers only (a shrink's
   * excluded ranks may be gone); the leaders watch every host. */
  for (int i = 0; i < r->nops; i++) {
    if (r->ended[i]) continue;
    ncclResult_t res = sim_net_check_gone(comm, r->mgmt ? r->peer[i] : -1);
    if (res != ncclSuccess) return res;
    if (!r->mgmt) break;
  }
  if (sim_now_ns() >= sim_due_ns(due)) return ncclTimeout;
  return ncclInProgress;
}

ncclResult_t sim_net_exchange_wait(ncclComm_t comm, sim_net_xrun *r, sim_due *due) {
  for (unsigned idle = 0;;) {
    bool moved = false;
    ncclResult_t res = sim_net_exchange_test(comm, r, idle >= 1024, due, &moved);
    if (res != ncclInProgress) return res;
    idle = moved ? 0 : idle + 1;
    if (idle > 1024) sim_ucx_sleep(1000);
  }
}

ncclResult_t sim_net_exchange(ncclComm_t comm, const sim_net_xchg *x, sim_due *due) {
  sim_net_xrun *r;
  SIM_CHECK(sim_net_exchange_start(comm, x, &r));
  ncclResult_t res = sim_net_exchange_wait(comm, r, due);
  sim_net_exchange_end(r);
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

ncclResult_t sim_net_allgather_start(ncclComm_t comm, int space, uint64_t seq, const int *peers, int n, int me,
                                     const void *mine, size_t bytes, void *all, bool mgmt, const char *what,
                                     sim_net_xrun **run) {
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
    res = sim_net_exchange_start(comm, &x, run);
  }
  sim_free(every);
  sim_free(out);
  sim_free(len);
  return res;
}

ncclResult_t sim_net_allgather(ncclComm_t comm, int space, uint64_t seq, const int *peers, int n, int me,
                               const void *mine, size_t bytes, void *all, bool mgmt, sim_due *due, const char *what) {
  sim_net_xrun *r;
  SIM_CHECK(sim_net_allgather_start(comm, space, seq, peers, n, me, mine, bytes, all, mgmt, what, &r));
  ncclResult_t res = sim_net_exchange_wait(comm, r, due);
  sim_net_exchange_end(r);
  return res;
}
