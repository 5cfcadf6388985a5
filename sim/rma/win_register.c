/*
 * sim/rma/win_register.c — ncclCommWindowRegister / Deregister, and the
 * registration rounds behind them.
 *
 * Registration is collective. Each rank posts (pointer, size, flags) into a
 * round named by its count of registrations on the communicator; the last
 * to arrive compares the sizes and builds the collective window and every
 * rank's handle, which it publishes (win_registry.c). A blocking caller
 * waits for that (at ncclGroupEnd inside a group); on a non-blocking
 * communicator the caller returns ncclInProgress, the completing rank
 * writes the caller's handle, and until then the caller's async error reads
 * ncclInProgress (sim_rma_poll fails it past its deadline).
 *
 * Deregistration is local: the handle leaves the rank's list and is
 * retired, kept dead until the communicator goes (win_registry.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "rma_internal.h"

/* ---- registration rounds ---- */

typedef struct rma_round {
  struct rma_round *next;
  uint64_t seq;
  int arrived;
  int waiters; /* blocking ranks yet to pick up their result */
  bool *present;
  void **ptr;
  size_t *size;
  int *flags;
  ncclWindow_t **slot; /* by rank: where a non-blocking caller wants its handle */
  struct ncclWindow_vidmem **handle; /* by rank, once done */
  bool done;
  ncclResult_t status;
  uint64_t deadline;
  char diag[384];
} rma_round;

static void round_free(rma_round *r) {
  sim_free(r->present);
  sim_free(r->ptr);
  sim_free(r->size);
  sim_free(r->flags);
  sim_free(r->slot);
  sim_free(r->handle);
  sim_free(r);
}

static void round_unlink(rma_state *st, rma_round *r) {
  for (rma_round **pp = &st->rounds; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      return;
    }
}

/* Caller holds st->lock. */
static rma_round *round_get(rma_state *st, uint64_t seq) {
  for (rma_round *r = st->rounds; r; r = r->next)
    if (r->seq == seq) return r;
  size_t n = (size_t)st->nranks;
  rma_round *r = sim_calloc(1, sizeof *r);
  if (!r) return NULL;
  r->present = sim_calloc(n, sizeof *r->present);
  r->ptr = sim_calloc(n, sizeof *r->ptr);
  r->size = sim_calloc(n, sizeof *r->size);
  r->flags = sim_calloc(n, sizeof *r->flags);
  r->slot = sim_calloc(n, sizeof *r->slot);
  r->handle = sim_calloc(n, sizeof *r->handle);
  if (!r->present || !r->ptr || !r->size || !r->flags || !r->slot || !r->handle) {
    round_free(r);
    return NULL;
  }
  r->seq = seq;
  r->deadline = sim_deadline();
  r->next = st->rounds;
  st->rounds = r;
  return r;
}

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

/* Builds the window of a full round, or records why not. Caller holds
 * st->lock; every rank of the round is alive (it is blocked in, or has
 * returned from, its call, and destroy withdraws first). */
static void round_complete(sim_clique *c, rma_state *st, rma_round *r) {
  int n = st->nranks;
  r->status = ncclSuccess;
  for (int i = 1; i < n; i++)
    if (r->size[i] != r->size[0]) r->status = ncclInvalidUsage;
  if (r->status != ncclSuccess) {
    size_t len = (size_t)snprintf(r->diag, sizeof r->diag,
                                  "ncclCommWindowRegister: the ranks registered windows of unequal sizes (");
    for (int i = 0; i < n && len < sizeof r->diag - 40; i++)
      len += (size_t)snprintf(r->diag + len, sizeof r->diag - len, "%srank %d: %zu", i ? ", " : "", i, r->size[i]);
    if (ALWAYS(len < sizeof r->diag)) /* an entry is < 40 characters */
      snprintf(r->diag + len, sizeof r->diag - len,
               " bytes); a collective window has one size on every rank (ncclsim checks this)");
  } else {
    rma_cwin *cw = sim_calloc(1, sizeof *cw);
    void **ptrs = sim_calloc((size_t)n, sizeof *ptrs);
    int built = 0;
    if (cw && ptrs)
      for (; built < n; built++)
        if (!(r->handle[built] = sim_calloc(1, sizeof *r->handle[built]))) break;
    if (built < n) {
      for (int i = 0; i < built; i++) sim_free(r->handle[i]), r->handle[i] = NULL;
      sim_free(cw);
      sim_free(ptrs);
      r->status = ncclSystemError;
      snprintf(r->diag, sizeof r->diag, "ncclCommWindowRegister: out of memory building the window");
    } else {
      memcpy(ptrs, r->ptr, (size_t)n * sizeof *ptrs);
      cw->ptr = ptrs;
      cw->nranks = n;
      cw->size = r->size[0];
      cw->flags = r->flags[0];
      atomic_init(&cw->refs, n);
      for (int i = 0; i < n; i++) {
        struct ncclWindow_vidmem *w = r->handle[i];
        ncclComm_t comm = c->ranks[i];
        w->magic = RMA_WIN_MAGIC;
        w->cw = cw;
        w->comm = comm;
        w->ptr = r->ptr[i];
        w->size = r->size[i];
        w->flags = r->flags[i];
        rma_win_publish(comm, w);
      }
      SIM_INFO(SIM_RMA, "window round %llu: %d ranks, %zu bytes each, flags 0x%x", (unsigned long long)r->seq, n,
               cw->size, (unsigned)cw->flags);
    }
  }
  r->done = true;
  /* Hand non-blocking callers their result now: nobody waits for them. */
  for (int i = 0; i < n; i++) {
    if (!r->slot[i]) continue;
    ncclComm_t comm = c->ranks[i];
    rma_rank *rk = &st->rank[i];
    pthread_mutex_lock(&rk->lock);
    *r->slot[i] = r->status == ncclSuccess ? r->handle[i] : NULL;
    r->slot[i] = NULL;
    nb_settle(comm, rk, r->status);
    pthread_mutex_unlock(&rk->lock);
    if (r->status != ncclSuccess) {
      pthread_mutex_lock(&comm->lock);
      snprintf(comm->last_error, sizeof comm->last_error, "%s", r->diag);
      pthread_mutex_unlock(&comm->lock);
    }
  }
}

/* Posts comm's part of its next round. `slot` non-NULL: non-blocking. */
static ncclResult_t arrive(ncclComm_t comm, void *buff, size_t size, int flags, ncclWindow_t *slot,
                           rma_round **out) {
  rma_state *st = rma_of(comm);
  pthread_mutex_lock(&st->lock);
  rma_round *r = round_get(st, st->rank[comm->rank].win_rounds);
  if (!r) {
    pthread_mutex_unlock(&st->lock);
    SIM_WARN(SIM_RMA, "ncclCommWindowRegister: out of memory");
    return ncclSystemError;
  }
  st->rank[comm->rank].win_rounds++;
  r->present[comm->rank] = true;
  r->ptr[comm->rank] = buff;
  r->size[comm->rank] = size;
  r->flags[comm->rank] = flags;
  r->slot[comm->rank] = slot;
  if (!slot) r->waiters++;
  if (++r->arrived == st->nranks) {
    round_unlink(st, r);
    round_complete(comm->clique, st, r);
    if (r->waiters == 0) {
      round_free(r);
      r = NULL;
    }
  }
  pthread_mutex_unlock(&st->lock);
  sim_waitq_wake(&st->wq);
  *out = r;
  return ncclSuccess;
}

typedef struct {
  rma_state *st;
  rma_round *r;
} round_arg;

static bool round_done(void *arg) {
  round_arg *a = arg;
  pthread_mutex_lock(&a->st->lock);
  bool d = a->r->done;
  pthread_mutex_unlock(&a->st->lock);
  return d;
}

/* Lists the ranks missing from r. Caller holds st->lock. */
static void missing_ranks(rma_state *st, rma_round *r, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < st->nranks && n < len - 16; i++)
    if (!r->present[i]) n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", i);
}

/* A blocking rank's wait for its round (r is counted in r->waiters). */
static ncclResult_t await(ncclComm_t comm, rma_round *r, ncclWindow_t *win) {
  rma_state *st = rma_of(comm);
  round_arg a = {st, r};
  int rc = sim_waitq_wait(&st->wq, round_done, &a, sim_clique_cancel(comm->clique), r->deadline);
  ncclResult_t res;
  pthread_mutex_lock(&st->lock);
  if (r->done) {
    res = r->status;
    *win = res == ncclSuccess ? r->handle[comm->rank] : NULL;
    if (res != ncclSuccess) SIM_WARN(SIM_RMA, "rank %d: %s", comm->rank, r->diag);
  } else {
    char missing[256];
    missing_ranks(st, r, missing, sizeof missing);
    r->present[comm->rank] = false;
    r->arrived--;
    /* Withdrawn, the registration did not happen: the rank's next one
     * joins this round again, so that a peer that failed before arriving
     * (out of memory) still meets it there. Its later rounds of the same
     * group are awaited (and withdrawn) next, before it can register again:
     * rewinding past them keeps it in step with its peers. */
    if (st->rank[comm->rank].win_rounds > r->seq) st->rank[comm->rank].win_rounds = r->seq;
    res = rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    SIM_WARN(SIM_RMA, "ncclCommWindowRegister: rank %d waited for rank(s) [%s] to register the window too (%s)",
             comm->rank, missing, res == ncclTimeout ? "NCCLSIM_TIMEOUT expired" : "communicator aborted");
    *win = NULL;
  }
  if (--r->waiters == 0 && (r->done || r->arrived == 0)) {
    if (!r->done) round_unlink(st, r);
    round_free(r);
  }
  pthread_mutex_unlock(&st->lock);
  return res;
}

typedef struct {
  sim_group_job job;
  ncclComm_t comm;
  rma_round *r;
  ncclWindow_t *win;
} reg_job;

static ncclResult_t reg_job_run(sim_group_job *job) {
  reg_job *j = (reg_job *)job;
  if (NEVER(!j->r)) return ncclSuccess; /* a blocking arrival is a waiter: its round stays */
  return await(j->comm, j->r, j->win);
}
static void reg_job_free(sim_group_job *job) { sim_free(job); }

ncclResult_t sim_rma_poll(ncclComm_t comm) {
  /* Called by sim_comm_poll only, with a live communicator of a clique. */
  if (NEVER(!comm || comm->magic != SIM_COMM_MAGIC || !comm->clique)) return ncclSuccess;
  rma_state *st = rma_of(comm);
  rma_rank *rk = &st->rank[comm->rank];
  pthread_mutex_lock(&rk->lock);
  int pending = rk->nb_pending;
  pthread_mutex_unlock(&rk->lock);
  if (!pending) return ncclSuccess;
  uint64_t now = sim_now_ns();
  ncclResult_t res = ncclInProgress;
  pthread_mutex_lock(&st->lock);
  for (rma_round *r = st->rounds; r; r = r->next) {
    if (!r->slot[comm->rank] || now < r->deadline) continue;
    char missing[256];
    missing_ranks(st, r, missing, sizeof missing);
    r->present[comm->rank] = false;
    r->slot[comm->rank] = NULL;
    r->arrived--;
    /* As in await(); the rounds are listed newest first, so the newest
     * open one rewinds first and older ones expiring with it follow. */
    if (rk->win_rounds == r->seq + 1) rk->win_rounds--;
    pthread_mutex_lock(&rk->lock);
    nb_settle(comm, rk, ncclTimeout);
    pthread_mutex_unlock(&rk->lock);
    SIM_WARN(SIM_RMA, "ncclCommWindowRegister (non-blocking): rank %d waited NCCLSIM_TIMEOUT for rank(s) [%s]",
             comm->rank, missing);
    res = ncclTimeout;
  }
  pthread_mutex_unlock(&st->lock);
  return res;
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
  rma_round *r;
  if (!comm->blocking) {
    rma_rank *rk = &st->rank[comm->rank];
    pthread_mutex_lock(&rk->lock);
    rk->nb_pending++;
    pthread_mutex_unlock(&rk->lock);
    int expect = ncclSuccess;
    atomic_compare_exchange_strong(&comm->async_error, &expect, (int)ncclInProgress);
    if ((res = arrive(comm, buff, size, winFlags, win, &r)) != ncclSuccess) {
      pthread_mutex_lock(&rk->lock);
      nb_settle(comm, rk, ncclSuccess);
      pthread_mutex_unlock(&rk->lock);
      return res;
    }
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
    j->job.comm = comm;
    j->job.run = reg_job_run;
    j->job.release = reg_job_free;
    j->comm = comm;
    j->r = r;
    j->win = win;
    return sim_group_add_job(&j->job);
  }
  return await(comm, r, win);
}


SIM_EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  static const char op[] = "ncclCommWindowDeregister";
  SIM_CHECK(sim_comm_check(comm, op));
  if (!win) return ncclSuccess; /* a NULL window (NCCLSIM_WINDOWS=0) */
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  pthread_mutex_lock(&rk->lock);
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

void rma_register_comm_fini(ncclComm_t comm) {
  rma_state *st = rma_of(comm);
  rma_rank *rk = &st->rank[comm->rank];
  /* Leave open rounds, so that no completion writes to this rank. */
  pthread_mutex_lock(&st->lock);
  for (rma_round *r = st->rounds; r; r = r->next)
    if (r->present[comm->rank] && ALWAYS(!r->done)) { /* done rounds leave the list */
      r->present[comm->rank] = false;
      r->slot[comm->rank] = NULL;
      r->arrived--;
    }
  pthread_mutex_unlock(&st->lock);
  pthread_mutex_lock(&rk->lock);
  rk->nb_pending = 0;
  pthread_mutex_unlock(&rk->lock);
}

void rma_register_clique_fini(rma_state *st) {
  while (st->rounds) {
    rma_round *r = st->rounds;
    st->rounds = r->next;
    round_free(r);
  }
}
