/*
 * sim/core/connect.c — real NCCL's connections at first use, and the host
 * thread they block.
 *
 * NCCL 2.30 sets up what an operation needs the first time it is used,
 * inside the call (the implicit group end of a lone call, or ncclGroupEnd):
 * - a point-to-point link a->b, at a's first send to b; the setup is a
 *   bootstrap exchange that completes when b reaches its own first
 *   receive from a (ncclTransportP2pSetup);
 * - the collective ring, at a rank's first collective, when every rank
 *   reaches its own (ncclTransportRingConnect and an allgather); with
 *   NCCL_RUNTIME_CONNECT=0 (or NCCL_CUMEM_ENABLE=0) this happens in
 *   ncclCommInitRank instead;
 * - one-sided state, at the first ncclPutSignal, ncclSignal or
 *   ncclWaitSignal, when every rank reaches its own first one (ncclRmaCeInit
 *   registers a symmetric window: allgathers and barriers).
 * Until then the calling host thread is blocked. One thread that drives two
 * ranks without a group therefore deadlocks on a GPU at its first call;
 * here the deadlock check (util/block.c) reports it at once.
 *
 * Each connection is a rendezvous round of the clique (expected: the two
 * ends of a link, or every rank). A link between ranks on two hosts
 * (sim/net) is a hello each way through UCX instead: each end sends its
 * hello when it first uses the link and waits for the other's, as NCCL's
 * proxy connect does over its bootstrap. The collective ring and the
 * one-sided setup across hosts: this host's ranks meet in a round of the
 * host's ranks; its leader (first rank) then says hello to every other
 * host's leader and waits for theirs, and only then is the connection
 * made for every rank here, so none returns before every rank of every
 * host has made its own first call. Arrivals are detached and idempotent: the
 * round's completion marks the connection made, which is what waiters
 * watch. Non-blocking communicators connect in NCCL's background thread,
 * not the caller's: here their operations simply meet on the stream.
 *
 * A connection to a rank of the same process on another device enables
 * peer access once the ends have met, which a capture may forbid (below,
 * "peer access").
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "../net/net.h"

typedef struct {
  sim_rv_table rounds;
  _Atomic unsigned char *links; /* [a * n + b]: a's sends to b are connected */
  _Atomic int coll, rma;        /* connected */
  _Atomic int host_coll, host_rma; /* across hosts: this host's ranks met (the leader's hellos come next) */
  bool runtime;                 /* collectives connect at first use */
} conn_state;

enum { KEY_LINK = 1, KEY_COLL = 2, KEY_RMA = 3 };
#define KEY(kind, idx) (((uint64_t)(kind) << 56) | (uint64_t)(idx))

static conn_state *state_of(sim_clique *c) { return c->area[SIM_AREA_CONN]; }

/* NCCL's own variables, read as NCCL reads them at a communicator's init. */
static bool env_on(const char *name) {
  const char *v = getenv(name);
  return !v || atoi(v) != 0;
}

static ncclResult_t conn_clique_init(sim_clique *c) {
  conn_state *st = sim_calloc(1, sizeof *st);
  size_t n = (size_t)c->nranks;
  if (st) st->links = sim_calloc(n * n, 1);
  if (!st || !st->links) {
    sim_free(st);
    return ncclSystemError;
  }
  sim_rv_table_init(&st->rounds);
  st->runtime = env_on("NCCL_RUNTIME_CONNECT") && env_on("NCCL_CUMEM_ENABLE");
  atomic_init(&st->coll, !st->runtime);
  for (size_t r = 0; r < n; r++) atomic_init(&st->links[r * n + r], 1); /* to itself: no setup to wait for */
  c->area[SIM_AREA_CONN] = st;
  return ncclSuccess;
}

static void conn_clique_fini(sim_clique *c) {
  conn_state *st = state_of(c);
  sim_rv_table_fini(&st->rounds);
  sim_free((void *)st->links);
  sim_free(st);
  c->area[SIM_AREA_CONN] = NULL;
}

const sim_area sim_area_conn = {.name = "connections", .clique_init = conn_clique_init,
                                .clique_fini = conn_clique_fini};

/* ------------------------------------------------------------ the need */

typedef struct {
  sim_task *task;
  sim_clique *c;
  uint64_t key;
  int a, b; /* a link's sender and receiver; -1 for the comm-wide ones */
  bool arrived;
  bool remote;          /* a link between two hosts: hellos through UCX */
  bool host_only;       /* a leader's wait for its host's ranks, before its hellos */
  sim_ucx_op hello[2];  /* its own sent, the other end's received */
  uint8_t in;           /* the other end's hello */
  int via, via_dev;     /* a peer reached through peer access, and its device (-1: none; see peer_access) */
} need;

static _Atomic int *flag_of(sim_clique *c, uint64_t key, bool host) {
  conn_state *st = state_of(c);
  switch (key >> 56) {
  case KEY_COLL: return host ? &st->host_coll : &st->coll;
  case KEY_RMA: return host ? &st->host_rma : &st->rma;
  default: return NULL;
  }
}

static bool is_connected(const need *nd) {
  conn_state *st = state_of(nd->c);
  if (nd->a >= 0) return atomic_load_explicit(&st->links[(size_t)nd->a * (size_t)nd->c->nranks + (size_t)nd->b],
                                              memory_order_acquire);
  return atomic_load_explicit(flag_of(nd->c, nd->key, nd->host_only), memory_order_acquire);
}

/* Connected, or the rank's operations were cancelled (its own revoke, or
 * an abort of the clique). */
static bool ready(void *arg) {
  need *nd = arg;
  return is_connected(nd) || atomic_load(sim_comm_cancel(nd->task->comm));
}

/* The round's completion: the connection is made. */
static ncclResult_t made(sim_rv *rv, void *arg) {
  sim_clique *c = arg;
  conn_state *st = state_of(c);
  uint64_t key = sim_rv_key(rv);
  if (key >> 56 == KEY_LINK) atomic_store_explicit(&st->links[key & 0xffffffffffffffull], 1, memory_order_release);
  else atomic_store_explicit(flag_of(c, key, c->net != NULL), 1, memory_order_release); /* across hosts: the host's */
  return ncclSuccess;
}

static const sim_rv_ops conn_rv = {"connection setup", "connection", 0, 0, made, NULL, false};

/* What t needs, or false if nothing (connected, non-blocking comm, ...). */
static bool need_of(sim_task *t, need *nd) {
  ncclComm_t comm = t->comm;
  sim_clique *c = comm->clique;
  size_t n = (size_t)c->nranks;
  /* Field by field: zeroing the whole need (its UCX ops) at every enqueue
   * cost more than the check; the ops are cleared for a link that uses
   * them. */
  nd->task = t;
  nd->c = c;
  nd->key = 0;
  nd->a = nd->b = -1;
  nd->arrived = nd->remote = nd->host_only = false;
  nd->in = 0;
  nd->via = nd->via_dev = -1;
  if (!comm->blocking) return false;
  /* Across hosts (sim/net) a link to another host is hellos through UCX;
   * the comm-wide ones meet this host's ranks, then the leaders'
   * hellos. */
  switch (t->conn) {
  case SIM_CONN_SEND:
  case SIM_CONN_RECV:
    nd->a = t->conn == SIM_CONN_SEND ? comm->rank : t->conn_peer;
    nd->b = t->conn == SIM_CONN_SEND ? t->conn_peer : comm->rank;
    nd->key = KEY(KEY_LINK, (size_t)nd->a * n + (size_t)nd->b);
    nd->remote = c->net && c->net->host[nd->a] != c->net->host[nd->b];
    if (nd->remote) memset(nd->hello, 0, sizeof nd->hello);
    break;
  case SIM_CONN_COLL: nd->key = KEY(KEY_COLL, 0); break;
  case SIM_CONN_RMA: nd->key = KEY(KEY_RMA, 0); break;
  default: return false;
  }
  return !is_connected(nd);
}

/* The ranks whose arrival the need still waits for. */
static int awaits(sim_block *b, sim_rank_ref *out, int max) {
  need *nd = b->arg;
  conn_state *st = state_of(nd->c);
  int k = 0;
  sim_rv_lock(&st->rounds);
  sim_rv *rv = sim_rv_find_locked(&st->rounds, nd->key);
  if (rv && !is_connected(nd)) {
    int me = nd->task->comm->rank;
    for (int r = 0; r < nd->c->nranks && k < max; r++) {
      if (r == me || sim_rv_present(rv, r) || sim_net_remote(nd->c->net, r)) continue;
      if (nd->a >= 0 && r != nd->a && r != nd->b) continue;
      out[k++] = (sim_rank_ref){nd->c, r};
    }
    if (k == max) k = 0; /* too many to tell: no verdict */
  }
  sim_rv_unlock(&st->rounds);
  return k;
}

/* "its first ncclRecv from rank 0" / "every rank's first collective". */
static void describe(const need *nd, char *buf, size_t len) {
  const char *op = nd->task->ops->name;
  int me = nd->task->comm->rank;
  if (nd->a >= 0 && nd->a == me)
    snprintf(buf, len, "rank %d's first %s to rank %d waits for rank %d to connect (its first ncclRecv from rank %d)",
             me, op, nd->b, nd->b, me);
  else if (nd->a >= 0)
    snprintf(buf, len, "rank %d's first %s from rank %d waits for rank %d to connect (its first ncclSend to rank %d)",
             me, op, nd->a, nd->a, me);
  else if (nd->key >> 56 == KEY_COLL)
    snprintf(buf, len, "rank %d's first collective (%s) waits for every rank's first collective", me, op);
  else
    snprintf(buf, len, "rank %d's first one-sided operation (%s) waits for every rank's first one-sided operation",
             me, op);
}

static const char *rule_of(const need *nd) {
  if (nd->a >= 0) return "NCCL connects a point-to-point link at its first use";
  if (nd->key >> 56 == KEY_COLL)
    return "NCCL connects the collective ring at its first use; NCCL_RUNTIME_CONNECT=0 connects it at init";
  return "NCCL sets up one-sided operations at their first use";
}

static void withdraw(need *nd) {
  conn_state *st = state_of(nd->c);
  sim_rv_lock(&st->rounds);
  sim_rv *rv = sim_rv_find_locked(&st->rounds, nd->key);
  if (rv && sim_rv_present(rv, nd->task->comm->rank)) sim_rv_leave_locked(&st->rounds, rv, nd->task->comm->rank);
  sim_rv_unlock(&st->rounds);
}

/* A link to another host: this end's hello, and a receive of the other's.
 * Tags: the link's two ranks, and which end says hello (0: the sender). */
static ncclResult_t hello_start(need *nd) {
  ncclComm_t comm = nd->task->comm;
  const sim_net_map *m = nd->c->net;
  int me = comm->rank, peer = me == nd->a ? nd->b : nd->a, role = me == nd->a ? 0 : 1;
  uint64_t k = nd->c->key;
  static const uint8_t hello = 1; /* outlives a send given up (sim_ucx_cancel) */
  ncclResult_t res = sim_ucx_recv(sim_net_leader_tag(k, SIM_NET_TAG_CONNECT, (uint64_t)(1 - role), peer, me), &nd->in,
                                  1, &nd->hello[1]);
  if (res == ncclSuccess)
    res = sim_ucx_send(m, peer, sim_net_leader_tag(k, SIM_NET_TAG_CONNECT, (uint64_t)role, me, peer), &hello, 1, false,
                       &nd->hello[0]);
  if (res != ncclSuccess) sim_ucx_cancel(&nd->hello[1]);
  return res;
}

/* The hellos of a link to another host, until both ended: the link is then
 * made (in this host's clique; the other host marks its own). */
static ncclResult_t hello_wait(need *nd) {
  ncclComm_t comm = nd->task->comm;
  char what[192];
  describe(nd, what, sizeof what);
  sim_due due = sim_due_at(sim_deadline());
  int peer = comm->rank == nd->a ? nd->b : nd->a;
  ncclResult_t res = ncclSuccess;
  for (int i = 1; i >= 0 && res == ncclSuccess; i--) {
    res = sim_net_wait(comm, &nd->hello[i], peer, 1 << 10, &due);
    if (res == ncclSuccess || nd->hello[i].cancelled) continue;
    return sim_comm_fail(comm, res, "%s; its hello between hosts failed in UCX: %s", what,
                         sim_ucx_status_text(&nd->hello[i]));
  }
  sim_ucx_cancel(&nd->hello[0]); /* not ended (a failure): UCX finishes it */
  if (res == ncclTimeout)
    return sim_comm_fail(comm, ncclTimeout, "%s; after NCCLSIM_TIMEOUT=%s s rank %d on another host still had not (%s: "
                         "on a GPU this call would still be blocked)", what, sim_param_text(SIM_P_TIMEOUT), peer,
                         rule_of(nd));
  if (res != ncclSuccess) return res; /* cancelled, or the host is gone (sim_net_check_gone said so) */
  conn_state *st = state_of(nd->c);
  atomic_store_explicit(&st->links[nd->key & 0xffffffffffffffull], 1, memory_order_release);
  return ncclSuccess;
}

/* The leader's hellos of a comm-wide connection across hosts, once its
 * host's ranks have met: one to every other host's leader, and theirs. */
static ncclResult_t leaders_hello(need *nd) {
  ncclComm_t comm = nd->task->comm;
  const sim_net_map *m = nd->c->net;
  uint64_t seq = nd->key >> 56 == KEY_COLL ? 2 : 3; /* links say 0 and 1 */
  /* A byte of hello for each rank of the host. */
  uint8_t *hello = sim_calloc((size_t)m->host_size[m->my_host], 1), *in = sim_calloc((size_t)m->nranks, 1);
  sim_due due = sim_due_at(sim_deadline());
  ncclResult_t res = hello && in ? ncclSuccess : ncclSystemError;
  if (res == ncclSuccess)
    res = sim_net_leaders_allgather(comm, SIM_NET_TAG_CONNECT, seq, hello, 1, in, &due,
                                    seq == 2 ? "the first collective across hosts"
                                             : "the first one-sided operation across hosts");
  sim_free(hello);
  sim_free(in);
  if (res == ncclTimeout) {
    char what[192];
    describe(nd, what, sizeof what);
    return sim_comm_fail(comm, ncclTimeout, "%s; after NCCLSIM_TIMEOUT=%s s another host's ranks still had not (%s: "
                         "on a GPU this call would still be blocked)", what, sim_param_text(SIM_P_TIMEOUT), rule_of(nd));
  }
  if (res != ncclSuccess) return res;
  conn_state *st = state_of(nd->c);
  atomic_store_explicit(flag_of(nd->c, nd->key, false), 1, memory_order_release);
  sim_waitq_wake(&st->rounds.wq); /* this host's other ranks wait there */
  return ncclSuccess;
}

static ncclResult_t wait_local(need *nd);

/* Waits for one need; on failure records why on the comm. */
static ncclResult_t wait_one(need *nd) {
  if (nd->remote) return hello_wait(nd);
  if (nd->a < 0 && nd->c->net && nd->c->net->host_rank[nd->task->comm->rank] == 0 && !is_connected(nd)) {
    nd->host_only = true; /* the leader: its host's ranks first, then the hellos */
    ncclResult_t res = wait_local(nd);
    nd->host_only = false;
    return res == ncclSuccess ? leaders_hello(nd) : res;
  }
  return wait_local(nd);
}

/* Waits for a need of this host; on failure records why on the comm. */
static ncclResult_t wait_local(need *nd) {
  if (is_connected(nd)) return ncclSuccess;
  char what[192], why[512];
  describe(nd, what, sizeof what);
  sim_block b;
  sim_block_init(&b, awaits, nd, "%s (first-use connection)", what);
  ncclComm_t comm = nd->task->comm;
  int rc = sim_block_wait(&b, &state_of(nd->c)->rounds.wq, ready, nd, sim_deadline(), why, sizeof why);
  if (rc == 0 && is_connected(nd)) return ncclSuccess;
  if (rc == 0)
    return sim_comm_fail(comm, ncclRemoteError, "%s; the communicator was aborted or revoked meanwhile", what);
  if (rc == EDEADLK) {
    bool self = strstr(why, "this same thread") != NULL;
    return sim_comm_fail(comm, ncclInvalidUsage, "%s; %s (%s): on a GPU this call never returns%s", what, why,
                         rule_of(nd), self ? "; drive the ranks of one thread inside ncclGroupStart/End" : "");
  }
  char missing[256] = "";
  sim_rank_ref aw[64];
  int na = awaits(&b, aw, 64);
  size_t n = 0;
  for (int i = 0; i < na && n + 16 < sizeof missing; i++)
    n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%d", n ? "," : "", aw[i].rank);
  return sim_comm_fail(comm, ncclTimeout, "%s; after NCCLSIM_TIMEOUT=%s s rank(s) [%s] still had not (%s: on a GPU "
                       "this call would still be blocked)", what, sim_param_text(SIM_P_TIMEOUT), missing, rule_of(nd));
}

/* ------------------------------------------------------- peer access */

/* NCCL's P2P transport reaches a rank of its own process on another
 * device through peer access: p2pMap (src/transport/p2p.cc) calls
 * cudaDeviceEnablePeerAccess at each end of each such connection, for
 * every communicator, after the ends have exchanged their connection
 * details; cudaErrorPeerAccessAlreadyEnabled is no error, any other is a
 * WARN ("failed to peer with device N(=busId): code text", ncclGetLastError's
 * text) and ncclInternalError. CUDA forbids the call to a thread whose own
 * global or thread-local capture is under way, and to any thread in global
 * interaction mode during another's global capture: measured on 4 x H100
 * with NCCL 2.30.7, ranks as threads, the first captured allreduce (or
 * group of sends and receives) failed so with 900. The calling thread
 * makes the connections when one communicator of the group makes them,
 * one new thread per communicator when several do (group.cc's
 * asyncJobLaunch), in two phases: the point-to-point links of every
 * communicator, then the collective connections clique by clique. */

/* The device of `peer` when it lives in comm's process on another device;
 * -1 otherwise (same device, another process or host, destroyed). */
static int peer_device(ncclComm_t comm, int peer) {
  sim_clique *c = comm->clique;
  if (peer == comm->rank || sim_net_remote(c->net, peer)) return -1;
  int dev = -1;
  sim_mutex_lock(&c->lock); /* a rank's teardown clears its slot under it */
  ncclComm_t m = c->ranks[peer];
  if (m && m->pid == comm->pid && m->device != comm->device) dev = m->device;
  pthread_mutex_unlock(&c->lock);
  return dev;
}

/* A peer that nd's connection reaches through peer access, or -1 (*dev
 * its device): a link's other end; for the collective connection the
 * rank's ring neighbours (ncclsim's ring is in rank order). One-sided
 * state is registered memory, no peer access (not checked). */
static int peer_of(const need *nd, int *dev) {
  *dev = -1;
  ncclComm_t comm = nd->task->comm;
  int me = comm->rank, n = nd->c->nranks;
  int peers[2] = {-1, -1};
  if (nd->a >= 0) peers[0] = me == nd->a ? nd->b : nd->a;
  else if (nd->key >> 56 == KEY_COLL) peers[0] = (me + 1) % n, peers[1] = (me + n - 1) % n;
  for (int i = 0; i < 2; i++)
    if (peers[i] >= 0 && (*dev = peer_device(comm, peers[i])) >= 0) return peers[i];
  return -1;
}

/* Whether nd's connection is made by a new thread: another communicator
 * of the call makes connections of the same phase (links: any; collective:
 * one of the same clique). */
static bool on_new_thread(const need *needs, int n, const need *nd) {
  bool link = nd->a >= 0;
  for (int i = 0; i < n; i++) {
    const need *o = &needs[i];
    if (o->task->comm == nd->task->comm) continue;
    if (link ? o->a >= 0 : o->a < 0 && o->key == nd->key && o->c == nd->c) return true;
  }
  return false;
}

/* After the ends have met: the peer access each connection enables. */
static ncclResult_t peer_access(const need *needs, int n) {
  if (!atomic_load_explicit(&sim_capture_any, memory_order_relaxed)) return ncclSuccess; /* nothing forbids it */
  for (int i = 0; i < n; i++) {
    const need *nd = &needs[i];
    if (nd->remote || nd->via < 0) continue;
    bool helper = on_new_thread(needs, n, nd);
    cudaError_t err = helper ? sim_capture_unsafe_new_thread("cudaDeviceEnablePeerAccess")
                             : sim_capture_unsafe("cudaDeviceEnablePeerAccess");
    if (err == cudaSuccess) continue;
    ncclComm_t comm = nd->task->comm;
    SIM_WARN(SIM_INIT,
             "failed to peer with device %d: %d %s (rank %d on device %d, %s connection to rank %d of the same "
             "process: NCCL enables peer access, cudaDeviceEnablePeerAccess, at a connection's first use, which a "
             "global or thread-local capture forbids%s; run the operation once before the capture, as a warm-up, or "
             "capture in relaxed mode)",
             nd->via_dev, (int)err, cudaGetErrorString(err), comm->rank, comm->device,
             nd->a >= 0 ? "its first point-to-point" : "the first collective's", nd->via,
             helper ? " (made by a new thread, as several communicators connect: forbidden by a global capture)" : "");
    return ncclInternalError;
  }
  return ncclSuccess;
}

ncclResult_t sim_connect(sim_task *list) {
  int count = 0;
  for (sim_task *t = list; t; t = t->next) count++;
  need one, *needs = count > 1 ? sim_calloc((size_t)count, sizeof *needs) : &one;
  if (!needs) return ncclSystemError;
  int n = 0;
  ncclResult_t res = ncclSuccess;
  /* Every end arrives first, so that one thread can connect the ranks of a
   * group together, as NCCL's group end does. */
  for (sim_task *t = list; t && res == ncclSuccess; t = t->next) {
    need *nd = &needs[n];
    if (!need_of(t, nd)) continue;
    if (nd->remote) {
      bool twice = false; /* a group's second send on the link says no second hello */
      for (int i = 0; i < n; i++) twice |= needs[i].remote && needs[i].key == nd->key;
      if (twice) continue;
      res = hello_start(nd);
      n++;
      continue;
    }
    /* Read before the wait: a peer may be destroyed once it is over. */
    nd->via = peer_of(nd, &nd->via_dev);
    int expected = nd->a >= 0 ? 2 : nd->c->net ? nd->c->net->host_size[nd->c->net->my_host] : nd->c->nranks;
    res = sim_rv_arrive(&state_of(nd->c)->rounds, &conn_rv, nd->key, nd->c->nranks, expected, t->comm->rank,
                        SIM_RV_DETACHED | SIM_RV_ONCE, NULL, nd->c, NULL);
    nd->arrived = res == ncclSuccess;
    n++;
  }
  for (int i = 0; i < n && res == ncclSuccess; i++) res = wait_one(&needs[i]);
  if (res == ncclSuccess) res = peer_access(needs, n);
  if (res != ncclSuccess) /* the call fails: it never took part */
    for (int i = 0; i < n; i++) {
      if (needs[i].remote) sim_ucx_cancel(&needs[i].hello[1]), sim_ucx_cancel(&needs[i].hello[0]);
      else if (needs[i].arrived && !is_connected(&needs[i])) withdraw(&needs[i]);
    }
  if (needs != &one) sim_free(needs);
  return res;
}
