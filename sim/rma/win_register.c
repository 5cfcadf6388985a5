/*
 * sim/rma/win_register.c — ncclCommWindowRegister / Deregister, and the
 * registration rounds behind them.
 *
 * Registration is collective. Each rank posts (pointer, size, flags) into a
 * round named by its count of registrations on the communicator; the last
 * to arrive builds the collective window and every rank's handle, which it
 * publishes (win_registry.c). Ranks may register unequal sizes: real NCCL
 * (2.28.3 and 2.30.7) accepts them, and each rank's window keeps its own
 * size (conformance/probes/win_unequal.c, REG-04). What ncclsim rejects is
 * a put or a pointer past the target rank's own size (put.c,
 * win_pointer.c). A blocking caller
 * waits for that (at ncclGroupEnd inside a group); on a non-blocking
 * communicator the caller returns ncclInProgress, the completing rank
 * queues the caller's result, and the caller's own poll writes its handle
 * (only the caller's thread writes the caller's memory, so it may read its
 * handle without a lock once its async error reads ncclSuccess; until then
 * it reads ncclInProgress, and sim_rma_poll fails it past its deadline).
 * Across hosts the host's first rank takes the round to the other hosts
 * (rma_net.c): a blocking one in its wait, a non-blocking one in the poll
 * that finds every rank of its host in (which then waits for the other
 * hosts' leaders, who do the same in theirs).
 *
 * Deregistration is local: the handle leaves the rank's list and is
 * retired, kept dead until the communicator goes (win_registry.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#include "rma_internal.h"

/* ---- registration rounds: rounds of the rendezvous (core/core.h), keyed
 * by the rank's count of registrations. A non-blocking caller arrives
 * detached: the completion hands it its handle. ---- */

typedef struct {
  char diag[96];
} reg_round;

static reg_slot *slot_of(sim_rv *rv, int rank) { return sim_rv_slot(rv, rank); }

/* A non-blocking rank's registration settled: its async error leaves
 * ncclInProgress once none is left. Caller holds the rank's lock. */
static void nb_settle(ncclComm_t comm, rma_rank *rk, ncclResult_t status) {
  if (--rk->nb_pending == 0) {
    int expect = ncclInProgress;
    atomic_compare_exchange_strong(&comm->async_error, &expect, (int)status);
  } else if (status != ncclSuccess) {
    int expect = ncclInProgress;
    atomic_compare_exchange_strong(&comm->async_error, &expect, (int)status);
  }
}

/* Builds the window of a full round, or records why not: the round's
 * completion, under the table's lock. Every rank of the round is alive (it
 * is blocked in, or has returned from, its call, and destroy withdraws
 * first). */
static ncclResult_t round_complete(sim_rv *rv, void *arg) {
  sim_clique *c = arg;
  rma_state *st = c->area[SIM_AREA_RMA];
  reg_round *r = sim_rv_payload(rv);
  int n = st->nranks;
  ncclResult_t status = ncclSuccess;
  const sim_net_map *m = c->net;
  size_t cw_bytes = sizeof(rma_cwin) + (size_t)n * sizeof(((rma_cwin *)0)->rank[0]);
  rma_cwin *cw = sim_aligned_alloc(64, cw_bytes);
  if (cw) memset(cw, 0, cw_bytes);
  /* pointers and sizes in one block, freed with ptr (rma_cwin_unref) */
  void **ptrs = sim_calloc((size_t)n, sizeof *ptrs + sizeof(size_t));
  if (cw && m && !(cw->key = sim_calloc((size_t)n, sizeof *cw->key))) sim_free(ptrs), ptrs = NULL;
  int built = 0, here = 0;
  if (cw && ptrs)
    for (; built < n; built++)
      if (!sim_net_remote(m, built) && !(slot_of(rv, built)->handle = sim_calloc(1, sizeof(struct ncclWindow_vidmem))))
        break;
  if (built < n) {
    for (int i = 0; i < built; i++) sim_free(slot_of(rv, i)->handle), slot_of(rv, i)->handle = NULL;
    if (cw) sim_free(cw->key);
    sim_free(cw);
    sim_free(ptrs);
    status = ncclSystemError;
    snprintf(r->diag, sizeof r->diag, "ncclCommWindowRegister: out of memory building the window");
  } else {
    cw->ptr = ptrs;
    cw->size = (size_t *)(ptrs + n);
    for (int i = 0; i < n; i++) {
      ptrs[i] = slot_of(rv, i)->ptr, cw->size[i] = slot_of(rv, i)->size;
      if (cw->key) cw->key[i] = slot_of(rv, i)->key;
      if (!sim_net_remote(m, i)) here++, atomic_init(&cw->rank[i].n, 1); /* its handle's */
    }
    cw->nranks = n;
    cw->flags = slot_of(rv, 0)->flags;
    atomic_init(&cw->refs, here);
    for (int i = 0; i < n; i++) {
      reg_slot *sl = slot_of(rv, i);
      struct ncclWindow_vidmem *w = sl->handle;
      if (!w) continue; /* a rank elsewhere */
      w->magic = RMA_WIN_MAGIC;
      w->cw = cw;
      w->comm = c->ranks[i];
      w->ptr = sl->ptr;
      w->size = sl->size;
      w->flags = sl->flags;
      w->memh = sl->memh;
      rma_win_publish(c->ranks[i], w);
    }
    SIM_INFO(SIM_RMA, "window round %llu: %d ranks, rank 0's %zu bytes, flags 0x%x",
             (unsigned long long)sim_rv_key(rv), n, cw->size[0], (unsigned)cw->flags);
  }
  /* Queue non-blocking callers' results: each takes its own at its poll,
   * in its own thread and process (the completer may be in another). */
  for (int i = 0; i < n; i++) {
    reg_slot *sl = slot_of(rv, i);
    rma_delivery *d = sl->nb;
    if (!d) continue;
    sl->nb = NULL;
    ncclComm_t comm = c->ranks[i];
    rma_rank *rk = &st->rank[i];
    d->handle = status == ncclSuccess ? sl->handle : NULL;
    d->status = status;
    sim_mutex_lock(&rk->lock);
    rma_delivery **pp = &rk->deliveries;
    while (*pp) pp = &(*pp)->next;
    *pp = d;
    pthread_mutex_unlock(&rk->lock);
    if (status != ncclSuccess) {
      sim_mutex_lock(&comm->lock);
      snprintf(comm->last_error, sizeof comm->last_error, "%s", r->diag);
      pthread_mutex_unlock(&comm->lock);
    }
  }
  return status;
}

static const sim_rv_ops reg_rv = {"ncclCommWindowRegister", "window registration", sizeof(reg_round),
                                  sizeof(reg_slot), round_complete, NULL, false};

/* Posts comm's part of its next round. `nb` non-NULL: non-blocking
 * (detached; *out is then NULL), and the round owns nb once this succeeds. */
static ncclResult_t arrive(ncclComm_t comm, void *buff, size_t size, int flags, rma_delivery *nb,
                           sim_rv **out) {
  rma_state *st = rma_of(comm);
  rma_rank *rk = &st->rank[comm->rank];
  reg_slot slot = {buff, size, flags, nb, NULL, NULL, {0}, false};
  SIM_CHECK(rma_net_map(comm, &slot));
  /* The rank's count changes only in its own calls and withdrawals, which
   * take the table's lock; so does reading it here. */
  sim_rv_lock(&st->rounds);
  uint64_t seq = rk->win_rounds;
  sim_rv_unlock(&st->rounds);
  ncclResult_t res = sim_rv_arrive(&st->rounds, &reg_rv, seq, st->nranks, st->nranks, comm->rank,
                                   nb ? SIM_RV_DETACHED : 0, &slot, comm->clique, out);
  if (res != ncclSuccess) {
    sim_ucx_mem_unmap(slot.memh);
    return res;
  }
  sim_rv_lock(&st->rounds);
  rk->win_rounds = seq + 1;
  sim_rv_unlock(&st->rounds);
  return ncclSuccess;
}

typedef struct {
  int rank;
  bool later; /* out: the rank is still in a round at or past `from` */
  uint64_t from;
} later_arg;

static void find_later(sim_rv_table *t, sim_rv *rv, void *arg) {
  later_arg *a = arg;
  if (sim_rv_present(rv, a->rank) && sim_rv_key(rv) >= a->from) a->later = true;
}

/* The rank withdrew from round `seq`: the registration did not happen, and
 * its next one must meet its peers there again (a peer that failed before
 * arriving, out of memory, still comes to that round). Once the rank is in
 * no round from its oldest withdrawn one on, its count rewinds to that one,
 * whatever order its rounds were withdrawn in (blocking rounds of a group
 * are awaited oldest first; non-blocking ones expire at each poll). Caller
 * holds the table's lock. */
static void rewind_to(rma_state *st, int rank, uint64_t seq) {
  rma_rank *rk = &st->rank[rank];
  if (seq < rk->withdrawn_from) rk->withdrawn_from = seq;
  later_arg a = {rank, false, rk->withdrawn_from};
  sim_rv_each_open(&st->rounds, find_later, &a);
  if (a.later) return;
  if (rk->win_rounds > rk->withdrawn_from) rk->win_rounds = rk->withdrawn_from;
  rk->withdrawn_from = UINT64_MAX;
}

/* A blocking rank's wait for its round, which it holds. */
static ncclResult_t await(ncclComm_t comm, sim_rv *rv, ncclWindow_t *win) {
  rma_state *st = rma_of(comm);
  sim_due due = sim_due_at(sim_rv_deadline(rv));
  /* Across hosts, the host's first rank speaks for it (rma_net.c). */
  ncclResult_t net = comm->clique->net && comm->clique->net->host_rank[comm->rank] == 0
                         ? rma_net_exchange(comm, rv, &reg_rv, &due)
                         : ncclSuccess;
  int rc = net != ncclSuccess ? (net == ncclTimeout ? ETIMEDOUT : ECANCELED)
                              : sim_rv_wait(&st->rounds, rv, sim_comm_cancel(comm), sim_rv_deadline(rv));
  ncclResult_t res;
  sim_rv_lock(&st->rounds);
  void *memh = slot_of(rv, comm->rank)->memh;
  if (sim_rv_done(rv)) {
    res = sim_rv_result(rv);
    *win = res == ncclSuccess ? slot_of(rv, comm->rank)->handle : NULL;
    if (res != ncclSuccess) {
      SIM_WARN(SIM_RMA, "rank %d: %s", comm->rank, ((reg_round *)sim_rv_payload(rv))->diag);
      sim_ucx_mem_unmap(memh);
    }
    sim_rv_leave_locked(&st->rounds, rv, comm->rank);
  } else {
    sim_ucx_mem_unmap(memh);
    char missing[256];
    sim_rv_missing(rv, missing, sizeof missing);
    uint64_t seq = sim_rv_key(rv);
    sim_rv_leave_locked(&st->rounds, rv, comm->rank);
    rewind_to(st, comm->rank, seq);
    res = rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    SIM_WARN(SIM_RMA, "ncclCommWindowRegister: rank %d waited for rank(s) [%s] to register the window too (%s)",
             comm->rank, missing, res == ncclTimeout ? "NCCLSIM_TIMEOUT expired" : "the communicator was revoked or aborted");
    *win = NULL;
  }
  sim_rv_unlock(&st->rounds);
  return res;
}

typedef struct {
  sim_group_job job;
  ncclComm_t comm;
  sim_rv *r;
  ncclWindow_t *win;
} reg_job;

static ncclResult_t reg_job_run(sim_group_job *job) {
  reg_job *j = (reg_job *)job;
  if (NEVER(!j->r)) return ncclSuccess; /* a blocking arrival holds its round */
  return await(j->comm, j->r, j->win);
}
static void reg_job_free(sim_group_job *job) { sim_free(job); }

typedef struct {
  ncclComm_t comm;
  uint64_t now;
  ncclResult_t res;
} expire_arg;

/* A non-blocking registration of the rank past its deadline withdraws. */
static void expire(sim_rv_table *t, sim_rv *rv, void *arg) {
  expire_arg *a = arg;
  ncclComm_t comm = a->comm;
  reg_slot *sl = sim_rv_present(rv, comm->rank) ? slot_of(rv, comm->rank) : NULL;
  if (!sl || !sl->nb || a->now < sim_rv_deadline(rv)) return;
  rma_state *st = rma_of(comm);
  rma_rank *rk = &st->rank[comm->rank];
  char missing[256];
  sim_rv_missing(rv, missing, sizeof missing);
  uint64_t seq = sim_rv_key(rv);
  sim_free(sl->nb);
  sl->nb = NULL;
  sim_rv_leave_locked(t, rv, comm->rank);
  rewind_to(st, comm->rank, seq);
  sim_mutex_lock(&rk->lock);
  nb_settle(comm, rk, ncclTimeout);
  pthread_mutex_unlock(&rk->lock);
  SIM_WARN(SIM_RMA, "ncclCommWindowRegister (non-blocking): rank %d waited NCCLSIM_TIMEOUT for rank(s) [%s]",
           comm->rank, missing);
  a->res = ncclTimeout;
}

/* Takes the rank's queued non-blocking results: each handle is written
 * here, by the rank's own caller, before its status is settled. Returns
 * how many registrations are still pending. */
static int take_deliveries(ncclComm_t comm, rma_rank *rk) {
  sim_mutex_lock(&rk->lock);
  for (rma_delivery *d; (d = rk->deliveries) != NULL; sim_free(d)) {
    rk->deliveries = d->next;
    *d->out = d->handle;
    nb_settle(comm, rk, d->status);
  }
  int pending = rk->nb_pending;
  pthread_mutex_unlock(&rk->lock);
  return pending;
}

typedef struct {
  ncclComm_t comm;
  sim_rv *first; /* out: the oldest round the leader owes the other hosts */
} owed_arg;

/* A round that this non-blocking leader has not yet taken to the other
 * hosts and that every rank of its host is in. */
static void find_owed(sim_rv_table *t, sim_rv *rv, void *arg) {
  (void)t;
  owed_arg *a = arg;
  ncclComm_t comm = a->comm;
  const sim_net_map *m = comm->clique->net;
  reg_slot *sl = sim_rv_present(rv, comm->rank) ? slot_of(rv, comm->rank) : NULL;
  if (!sl || !sl->nb || sl->exchanged) return;
  for (int r = 0; r < m->nranks; r++)
    if (m->host[r] == m->my_host && !sim_rv_present(rv, r)) return;
  if (!a->first || sim_rv_key(rv) < sim_rv_key(a->first)) a->first = rv;
}

/* A non-blocking leader's rounds whose host is complete go to the other
 * hosts, oldest first (the other leaders take them in the same order). A
 * failure is left to the round's deadline (expire). */
static void take_owed(ncclComm_t comm, rma_state *st) {
  for (;;) {
    owed_arg a = {comm, NULL};
    sim_rv_lock(&st->rounds);
    sim_rv_each_open(&st->rounds, find_owed, &a);
    if (a.first) slot_of(a.first, comm->rank)->exchanged = true; /* once, whichever thread polls */
    sim_rv_unlock(&st->rounds);
    /* The round stays open meanwhile: it waits for the ranks elsewhere,
     * which only this exchange brings. */
    sim_due due = sim_due_at(a.first ? sim_rv_deadline(a.first) : 0);
    if (!a.first || rma_net_exchange(comm, a.first, &reg_rv, &due) != ncclSuccess) return;
  }
}

ncclResult_t sim_rma_poll(ncclComm_t comm) {
  /* Called by sim_comm_poll only, with a live communicator of a clique. */
  if (NEVER(!comm || comm->magic != SIM_COMM_MAGIC || !comm->clique)) return ncclSuccess;
  rma_state *st = rma_of(comm);
  rma_rank *rk = &st->rank[comm->rank];
  int pending = take_deliveries(comm, rk);
  if (!pending) return ncclSuccess;
  if (comm->clique->net && comm->clique->net->host_rank[comm->rank] == 0) {
    take_owed(comm, st);
    if (!(pending = take_deliveries(comm, rk))) return ncclSuccess;
  }
  expire_arg a = {comm, sim_now_ns(), ncclInProgress};
  sim_rv_lock(&st->rounds);
  sim_rv_each_open(&st->rounds, expire, &a);
  sim_rv_unlock(&st->rounds);
  return a.res;
}

/* Checks that [buff, buff + size) is one ncclMemAlloc allocation's memory
 * on comm's device. */
static ncclResult_t check_window_memory(ncclComm_t comm, void *buff, size_t size) {
  static const char op[] = "ncclCommWindowRegister";
  sim_alloc_info a;
  if (!sim_mem_lookup(buff, &a) || a.kind != SIM_MEM_NCCL) {
    SIM_WARN(SIM_RMA,
             "%s: rank %d: %p is not memory from ncclMemAlloc (%s); windows need memory from NCCL's allocator", op,
             comm->rank, buff,
             !sim_mem_lookup(buff, &a) ? "host memory"
             : a.kind == SIM_MEM_DEVICE ? "cudaMalloc memory"
                                        : "cudaMallocHost memory");
    return ncclUnhandledCudaError;
  }
  size_t off = (size_t)((char *)buff - (char *)a.base);
  if (size > a.size - off) {
    SIM_WARN(SIM_RMA, "%s: rank %d: %zu bytes at %p run past the end of its ncclMemAlloc allocation (%zu bytes)",
             op, comm->rank, size, buff, a.size);
    return ncclUnhandledCudaError;
  }
  if (a.device != comm->device) {
    SIM_WARN(SIM_RMA, "%s: rank %d: %p is on device %d, but the communicator is on device %d", op, comm->rank,
             buff, a.device, comm->device);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                               int winFlags) {
  static const char op[] = "ncclCommWindowRegister";
  ncclResult_t res;
  if ((res = sim_comm_check(comm, op)) != ncclSuccess) return sim_group_error(res);
  if (!win) {
    SIM_WARN(SIM_RMA, "%s: win is NULL", op);
    return sim_group_error(ncclInvalidArgument);
  }
  *win = NULL;
  if (winFlags & ~(NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING)) {
    SIM_WARN(SIM_RMA, "%s: winFlags 0x%x has unknown bits", op, (unsigned)winFlags);
    return sim_group_error(ncclInvalidArgument);
  }
  if (!buff || !size) {
    SIM_WARN(SIM_RMA, "%s: buff %p, size %zu: need memory to register", op, buff, size);
    return sim_group_error(ncclInvalidArgument);
  }
  if (!sim_param_int(SIM_P_WINDOWS)) {
    SIM_INFO(SIM_RMA, "%s: NCCLSIM_WINDOWS=0: no window, as on platforms without windows", op);
    return ncclSuccess;
  }
  if ((res = check_window_memory(comm, buff, size)) != ncclSuccess) return sim_group_error(res);

  rma_state *st = rma_of(comm);
  sim_rv *r;
  if (!comm->blocking) {
    rma_rank *rk = &st->rank[comm->rank];
    rma_delivery *d = sim_malloc(sizeof *d);
    if (!d) {
      SIM_WARN(SIM_RMA, "%s: rank %d: out of memory for a non-blocking registration", op, comm->rank);
      return sim_group_error(ncclSystemError);
    }
    *d = (rma_delivery){NULL, win, NULL, ncclInProgress};
    *win = NULL;
    sim_mutex_lock(&rk->lock);
    rk->nb_pending++;
    pthread_mutex_unlock(&rk->lock);
    int expect = ncclSuccess;
    atomic_compare_exchange_strong(&comm->async_error, &expect, (int)ncclInProgress);
    if ((res = arrive(comm, buff, size, winFlags, d, &r)) != ncclSuccess) {
      sim_free(d);
      sim_mutex_lock(&rk->lock);
      nb_settle(comm, rk, ncclSuccess);
      pthread_mutex_unlock(&rk->lock);
      return res;
    }
    /* The last rank in completed the round itself: its result is queued. */
    take_deliveries(comm, rk);
    return *win ? ncclSuccess : ncclInProgress;
  }
  if ((res = arrive(comm, buff, size, winFlags, NULL, &r)) != ncclSuccess) return sim_group_error(res);
  if (sim_group_depth() > 0) {
    reg_job *j = sim_calloc(1, sizeof *j);
    if (!j) {
      /* Still owed to the round: wait now rather than leave it half done. */
      ncclWindow_t tmp;
      await(comm, r, &tmp);
      if (tmp) ncclCommWindowDeregister(comm, tmp);
      return sim_group_error(ncclSystemError);
    }
    *j = (reg_job){.job = {.comm = comm, .run = reg_job_run, .release = reg_job_free}, .comm = comm, .r = r, .win = win};
    return sim_group_add_job(&j->job);
  }
  return await(comm, r, win);
}


SIM_EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  static const char op[] = "ncclCommWindowDeregister";
  SIM_CHECK(sim_comm_check(comm, op));
  if (!win) return ncclSuccess; /* a NULL window (NCCLSIM_WINDOWS=0) */
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  struct ncclWindow_vidmem **pp = rma_win_find_in(&rk->wins, win), *w = pp ? *pp : NULL;
  if (w) *pp = w->next;
  pthread_mutex_unlock(&rk->lock);
  if (!w) {
    ncclComm_t owner;
    if (rma_win_is_dead(win, NULL)) {
      SIM_WARN(SIM_RMA, "%s: rank %d: window %p was deregistered already", op, comm->rank, (void *)win);
      return ncclInvalidUsage;
    }
    if (rma_win_live_owner(win, &owner))
      SIM_WARN(SIM_RMA, "%s: window %p is rank %d's handle, not one of rank %d's", op, (void *)win, owner->rank,
               comm->rank);
    else
      SIM_WARN(SIM_RMA, "%s: window %p is not a registered window", op, (void *)win);
    return ncclInvalidArgument;
  }
  rma_win_retire(comm, w);
  return ncclSuccess;
}

static void leave_open(sim_rv_table *t, sim_rv *rv, void *arg) {
  int rank = *(int *)arg;
  if (!sim_rv_present(rv, rank)) return;
  sim_ucx_mem_unmap(slot_of(rv, rank)->memh);
  sim_free(slot_of(rv, rank)->nb);
  slot_of(rv, rank)->nb = NULL;
  sim_rv_leave_locked(t, rv, rank);
}

void rma_register_comm_fini(ncclComm_t comm) {
  rma_state *st = rma_of(comm);
  rma_rank *rk = &st->rank[comm->rank];
  /* Leave open rounds, so that no completion writes to this rank. */
  int rank = comm->rank;
  sim_rv_lock(&st->rounds);
  sim_rv_each_open(&st->rounds, leave_open, &rank);
  sim_rv_unlock(&st->rounds);
  sim_mutex_lock(&rk->lock);
  rk->nb_pending = 0;
  for (rma_delivery *d; (d = rk->deliveries) != NULL; sim_free(d)) rk->deliveries = d->next;
  pthread_mutex_unlock(&rk->lock);
}
