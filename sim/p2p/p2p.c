/*
 * sim/p2p/p2p.c — ncclSend/ncclRecv as a rendezvous.
 *
 * Each (receiver, sender) pair has the ordered queues of posted sends and
 * receives between the two (NCCL matches a pair's operations in call
 * order). Whichever side posts second takes the head of the other queue
 * and copies the bytes once, from the send buffer straight into the
 * receive buffer, then completes both. Counts and datatypes are
 * compared at the match: a disagreement fails both sides with a diagnostic
 * rather than truncating.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "../sim.h"
#include "../transport.h"
#include "../net/net.h"
#include "p2p_internal.h"

enum { QUEUED = 0, TAKEN = 1, DONE = 2 };

typedef struct p2p_task {
  sim_task base;
  /* What the peer's matching reads and writes, on one cache line: the
   * match moves it from the poster to the matcher once, and back to the
   * waiter with the completion. */
  _Alignas(64) struct p2p_task *qnext;
  void *buf;
  size_t count;
  ncclDataType_t dt;
  bool is_send;
  _Atomic int state;
  ncclResult_t result; /* written before state becomes DONE */
  int peer;
  uint64_t nth; /* this is the rank's nth send to (receive from) peer, from 0 */
} p2p_task;

/* What a match needs of the other side's operation. */
typedef struct {
  void *buf;
  size_t count;
  ncclDataType_t dt;
} p2p_args;

/* The posted sends and receives of one (receiver, sender) pair, in post
 * order, and their lock, on a cache line of their own: a match takes the
 * lock and the head of the other side's queue in one line. At most one of
 * the queues holds operations (two heads would have matched), and `head`
 * is a copy of its head's buffer, count and type, so that the matcher
 * finds them in the lock's line: reading them from the head's task, which
 * the other side wrote, would add a cache miss that the copy into the
 * buffer depends on. The lock is a spinlock held for a few stores (a
 * process-shared robust mutex cost more than the match); a waiter gives up
 * only once a process of the clique has exited (the holder may have died
 * with it). */
typedef struct {
  _Alignas(64) _Atomic int lock;
  p2p_task *sends, *sends_tail;
  p2p_task *recvs, *recvs_tail;
  p2p_args head;
} pair;

typedef struct {
  int nranks;
  /* rows[receiver][sender]: a row per receiver, so that suspend can free
   * one rank's (NULL while it is suspended). */
  pair **rows;
  /* Sends and receives called (committed) on each pair, for the deadlock
   * check: [writer * stride + peer * 2 + is_recv], the writer being the
   * caller (the sender of a send, the receiver of a receive). A row per
   * caller, on lines of its own: laid out by pair, every rank's enqueues
   * bumped counters on the same few lines, which bounced between the
   * ranks' host threads (7% of bench/signal_latency's CPU samples). */
  _Atomic uint64_t *called;
  size_t stride; /* counters a row: 2 * nranks, rounded up to a line */
} p2p_state;

static pair *row_new(int nranks) {
  pair *row = sim_aligned_alloc(64, (size_t)nranks * sizeof *row);
  if (row) memset(row, 0, (size_t)nranks * sizeof *row);
  return row;
}

static void p2p_clique_fini(sim_clique *c);

static ncclResult_t p2p_clique_init(sim_clique *c) {
  p2p_state *st = sim_calloc(1, sizeof *st);
  if (!st) return ncclSystemError;
  size_t n = (size_t)c->nranks;
  st->nranks = c->nranks;
  c->area[SIM_AREA_P2P] = st;
  st->rows = sim_calloc(n, sizeof *st->rows);
  st->stride = (2 * n + 7) / 8 * 8;
  if ((st->called = sim_aligned_alloc(64, n * st->stride * sizeof *st->called)))
    memset((void *)st->called, 0, n * st->stride * sizeof *st->called);
  bool ok = st->rows && st->called;
  for (size_t r = 0; ok && r < n; r++) ok = (st->rows[r] = row_new(c->nranks)) != NULL;
  if (!ok) {
    p2p_clique_fini(c);
    return ncclSystemError;
  }
  return ncclSuccess;
}

static void p2p_clique_fini(sim_clique *c) {
  p2p_state *st = c->area[SIM_AREA_P2P];
  if (NEVER(!st)) return; /* only areas whose init succeeded are finalised */
  for (int r = 0; st->rows && r < st->nranks; r++) sim_free(st->rows[r]);
  sim_free(st->rows);
  sim_free((void *)st->called);
  sim_free(st);
  c->area[SIM_AREA_P2P] = NULL;
}

/* Suspend (ncclCommSuspend with NCCL_SUSPEND_MEM): a rank's row of pairs,
 * the queues of what its peers send it, is what ncclsim has of NCCL's
 * per-peer buffers. Every rank has nothing in flight by then (the suspend
 * round waits for it), so the queues are empty; the row is freed, and made
 * again (empty) at resume. The row pointer changes only inside the suspend
 * and resume rounds, under their table's lock, which orders it before any
 * later operation. */
static size_t p2p_rank_suspendable(sim_clique *c, int rank, bool now) {
  p2p_state *st = c->area[SIM_AREA_P2P];
  return now && !st->rows[rank] ? 0 : (size_t)st->nranks * sizeof(pair);
}

static void p2p_rank_suspend(sim_clique *c, int rank) {
  p2p_state *st = c->area[SIM_AREA_P2P];
  sim_free(st->rows[rank]);
  st->rows[rank] = NULL;
}

static ncclResult_t p2p_rank_resume(sim_clique *c, int rank) {
  p2p_state *st = c->area[SIM_AREA_P2P];
  if (st->rows[rank]) return ncclSuccess;
  return (st->rows[rank] = row_new(st->nranks)) ? ncclSuccess : ncclSystemError;
}

const sim_area sim_area_p2p = {.name = "p2p",
                               .clique_init = p2p_clique_init,
                               .clique_fini = p2p_clique_fini,
                               .rank_suspendable = p2p_rank_suspendable,
                               .rank_suspend = p2p_rank_suspend,
                               .rank_resume = p2p_rank_resume};

static pair *pair_of(sim_task *base) {
  p2p_task *t = (p2p_task *)base;
  p2p_state *st = base->comm->clique->area[SIM_AREA_P2P];
  int me = base->comm->rank;
  int recver = t->is_send ? t->peer : me, sender = t->is_send ? me : t->peer;
  return &st->rows[recver][sender];
}

/* False only when a process of the clique exited while we waited. */
static bool pair_lock(sim_clique *c, pair *p) {
  for (int i = 0; atomic_exchange_explicit(&p->lock, 1, memory_order_acquire); i++)
    while (atomic_load_explicit(&p->lock, memory_order_relaxed)) {
      if (++i < 64) {
        sim_cpu_relax();
        continue;
      }
      sched_yield();
      int rank;
      if ((i & 1023) == 0 && sim_clique_exited(c, &rank)) return false;
    }
  return true;
}

static void pair_unlock(pair *p) { atomic_store_explicit(&p->lock, 0, memory_order_release); }

static p2p_args args_of(const p2p_task *t) { return (p2p_args){t->buf, t->count, t->dt}; }

static void push(pair *p, p2p_task **head, p2p_task **tail, p2p_task *t) {
  t->qnext = NULL;
  if (*tail) {
    (*tail)->qnext = t;
  } else {
    *head = t;
    p->head = args_of(t);
  }
  *tail = t;
}

/* The head of a queue and its arguments (p->head), or NULL. A lone head is
 * not read: the next head is read only when there is one. */
static p2p_task *pop(pair *p, p2p_task **head, p2p_task **tail, p2p_args *args) {
  p2p_task *t = *head;
  if (!t) return NULL;
  *args = p->head;
  if (t == *tail) {
    *head = *tail = NULL;
  } else {
    *head = t->qnext;
    p->head = args_of(*head);
  }
  atomic_store_explicit(&t->state, TAKEN, memory_order_relaxed);
  return t;
}

static bool unlink_task(pair *p, p2p_task **head, p2p_task **tail, p2p_task *t) {
  p2p_task *prev = NULL;
  for (p2p_task *q = *head; q; prev = q, q = q->qnext)
    if (q == t) {
      if (prev) {
        prev->qnext = q->qnext;
      } else {
        *head = q->qnext;
        if (*head) p->head = args_of(*head);
      }
      if (*tail == q) *tail = prev;
      return true;
    }
  return false;
}

/* After the DONE store the owner (rank `rank` of c) may free t at once:
 * wake the owner's rank queue, not anything in t. */
static void complete(p2p_task *t, sim_clique *c, int rank, ncclResult_t res) {
  t->result = res;
  atomic_store(&t->state, DONE); /* read by p2p_done() */
  sim_waitq_wake_sleepers(sim_rank_wq(c, rank));
}

/* Runs on whichever side posted second: `mine` is its own task, `other`
 * the peer's, taken from the pair's queue with its arguments `oa`. Nothing
 * else of `other` is read on the way (its rank is mine's peer), unless the
 * two disagree. */
static void match(p2p_task *mine, p2p_task *other, const p2p_args *oa) {
  ncclComm_t mc = mine->base.comm;
  sim_clique *c = mc->clique;
  int me = mc->rank, peer = mine->peer;
  const p2p_args ma = args_of(mine);
  const p2p_args *sa = mine->is_send ? &ma : oa, *ra = mine->is_send ? oa : &ma;
  int sender = mine->is_send ? me : peer, receiver = mine->is_send ? peer : me;
  ncclResult_t res = ncclSuccess;
  if (sa->count != ra->count || sa->dt != ra->dt) {
    res = ncclInvalidUsage;
    const char *fmt =
        "mismatched point-to-point pair: rank %d ncclSend(count=%zu, %s) to rank %d, rank %d ncclRecv(count=%zu, "
        "%s) from rank %d (ncclsim checks this; real NCCL would truncate or hang)";
    ncclComm_t oc = other->base.comm;
    sim_comm_fail(mc, res, fmt, sender, sa->count, sim_dtype_name(sa->dt), receiver, receiver, ra->count,
                  sim_dtype_name(ra->dt), sender);
    sim_comm_fail(oc, res, fmt, sender, sa->count, sim_dtype_name(sa->dt), receiver, receiver, ra->count,
                  sim_dtype_name(ra->dt), sender);
  } else {
    size_t bytes = sa->count * sim_dtype_size(sa->dt);
    c->tp->copy(c->tp->map_peer(c, receiver, ra->buf), c->tp->map_peer(c, sender, sa->buf), bytes);
    SIM_TRACE(SIM_P2P, "rank %d -> rank %d: %zu bytes", sender, receiver, bytes);
  }
  complete(other, c, peer, res);
  complete(mine, c, me, res);
}

static ncclResult_t p2p_post(sim_task *base) {
  p2p_task *t = (p2p_task *)base;
  pair *p = pair_of(base);
  p2p_args oa;
  atomic_store_explicit(&t->state, QUEUED, memory_order_relaxed);
  if (!pair_lock(base->comm->clique, p)) return ncclRemoteError;
  p2p_task *other = t->is_send ? pop(p, &p->recvs, &p->recvs_tail, &oa) : pop(p, &p->sends, &p->sends_tail, &oa);
  if (!other) push(p, t->is_send ? &p->sends : &p->recvs, t->is_send ? &p->sends_tail : &p->recvs_tail, t);
  else atomic_store_explicit(&t->state, TAKEN, memory_order_relaxed);
  pair_unlock(p);
  if (other) match(t, other, &oa);
  return ncclSuccess;
}

/* Sequentially consistent, for complete()'s wake (sim.h). */
static bool p2p_done(void *arg) { return atomic_load(&((p2p_task *)arg)->state) == DONE; }

static ncclResult_t p2p_wait(sim_task *base, sim_due *due) {
  p2p_task *t = (p2p_task *)base;
  sim_clique *c = base->comm->clique;
  int rc = sim_waitq_wait_due(sim_rank_wq(c, base->comm->rank), p2p_done, t, sim_comm_cancel(base->comm), due);
  if (rc == 0) return t->result;
  /* Withdraw, unless the peer took us already: then its copy is finishing. */
  pair *p = pair_of(base);
  bool withdrawn;
  if (!pair_lock(c, p)) {
    withdrawn = true; /* a process died holding it: nobody will take us now */
  } else {
    withdrawn =
        t->is_send ? unlink_task(p, &p->sends, &p->sends_tail, t) : unlink_task(p, &p->recvs, &p->recvs_tail, t);
    pair_unlock(p);
  }
  if (!withdrawn) {
    sim_waitq_wait(sim_rank_wq(c, base->comm->rank), p2p_done, t, NULL, UINT64_MAX);
    return t->result;
  }
  return rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
}

static void p2p_describe(sim_task *base, char *buf, size_t len) {
  p2p_task *t = (p2p_task *)base;
  snprintf(buf, len, "%s(count=%zu, %s, peer=%d): %s rank %d's matching %s", t->is_send ? "ncclSend" : "ncclRecv",
           t->count, sim_dtype_name(t->dt), t->peer,
           atomic_load(&t->state) == QUEUED ? "waiting for" : "matched with", t->peer,
           t->is_send ? "ncclRecv" : "ncclSend");
}

static void p2p_release(sim_task *base) { sim_task_free(base); }

static _Atomic uint64_t *called(p2p_state *st, int sender, int receiver, bool is_recv) {
  size_t writer = (size_t)(is_recv ? receiver : sender), peer = (size_t)(is_recv ? sender : receiver);
  return &st->called[writer * st->stride + peer * 2 + is_recv];
}

static void p2p_commit(sim_task *base) {
  p2p_task *t = (p2p_task *)base;
  p2p_state *st = base->comm->clique->area[SIM_AREA_P2P];
  int me = base->comm->rank;
  t->nth = t->is_send ? atomic_fetch_add(called(st, me, t->peer, false), 1)
                      : atomic_fetch_add(called(st, t->peer, me, true), 1);
  base->seq = t->nth;
  base->has_seq = true;
}

/* The peer, while it has not yet called the operation that matches t. */
static int p2p_awaits(sim_task *base, sim_rank_ref *out, int max) {
  p2p_task *t = (p2p_task *)base;
  p2p_state *st = base->comm->clique->area[SIM_AREA_P2P];
  int me = base->comm->rank;
  if (atomic_load(&t->state) != QUEUED || max < 1) return 0;
  uint64_t peer_calls = t->is_send ? atomic_load(called(st, me, t->peer, true))
                                   : atomic_load(called(st, t->peer, me, false));
  if (peer_calls > t->nth) return 0; /* called: it is on its way */
  out[0] = (sim_rank_ref){base->comm->clique, t->peer};
  return 1;
}

static const struct sim_task_ops send_ops = {"ncclSend", p2p_post,    p2p_wait,  p2p_describe,
                                             p2p_release, p2p_commit, p2p_awaits, SIM_COST_KERNEL, NULL};
static const struct sim_task_ops recv_ops = {"ncclRecv", p2p_post,    p2p_wait,  p2p_describe,
                                             p2p_release, p2p_commit, p2p_awaits, SIM_COST_KERNEL, NULL};

static ncclResult_t enqueue(bool is_send, void *buf, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                            cudaStream_t stream) {
  const char *op = is_send ? "ncclSend" : "ncclRecv";
  ncclResult_t res;
  if ((res = sim_comm_check(comm, op)) != ncclSuccess) return sim_group_error(res);
  if ((res = sim_check_peer(comm, peer, op)) != ncclSuccess) return sim_group_error(res);
  if ((res = sim_check_buffer(comm, buf, count, dt, op, is_send ? "sendbuff" : "recvbuff")) != ncclSuccess)
    return sim_group_error(res);
  if (sim_net_remote(comm->clique->net, peer))
    return sim_p2p_net_enqueue(is_send, buf, count, dt, peer, comm, stream);
  p2p_task *t = sim_task_alloc(sizeof *t, stream);
  if (!t) return sim_group_error(ncclSystemError);
  *t = (p2p_task){.base = {.ops = is_send ? &send_ops : &recv_ops,
                           .comm = comm,
                           .bytes = count * sim_dtype_size(dt),
                           .conn = is_send ? SIM_CONN_SEND : SIM_CONN_RECV,
                           .conn_peer = peer,
                           .has_peer = true,
                           .peer = peer},
                  .is_send = is_send, .buf = buf, .count = count, .dt = dt, .peer = peer};
  return sim_task_submit(&t->base, stream);
}

SIM_EXPORT ncclResult_t ncclSend(const void *buf, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  return enqueue(true, (void *)buf, count, dt, peer, comm, stream);
}

SIM_EXPORT ncclResult_t ncclRecv(void *buf, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                                 cudaStream_t stream) {
  return enqueue(false, buf, count, dt, peer, comm, stream);
}
