/*
 * sim/core/rendezvous.c — where ranks meet: the one primitive behind
 * communicator init, split and shrink, window registration and the
 * collectives (core/core.h, "Rendezvous").
 *
 * A round is a single allocation: the header, one state byte per rank, the
 * round's payload, then one slot per rank, each reached by an offset from
 * the round's start. Nothing inside it points into itself, so the block can
 * later live in memory that several processes map at different addresses.
 *
 * Every count changes under the table's lock. `done` is also an atomic, so
 * that a waiter can poll it without the lock (the collectives spin on it).
 *
 * An arrival that disagrees with the round (another nranks or expected, a
 * rank already in it) fails the round for every rank at once: it is done,
 * with ncclInvalidUsage, and what disagreed is kept for each rank's
 * message. It stays listed until its deadline, so that ranks still to come
 * are refused with the same reason instead of opening a round of their own
 * and waiting out NCCLSIM_TIMEOUT for ranks that came and went.
 * A table keeps a few freed rounds for the next ones of the same size (a
 * collective opens one per call, and allocating it was a large part of a
 * small collective's cost).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "../net/net.h"

enum { RANK_PRESENT = 1, RANK_HOLDS = 2 };

struct sim_rv {
  sim_rv *next; /* in the table's list of open rounds */
  const sim_rv_ops *ops;
  uint64_t key;
  uint64_t deadline;
  int nranks;   /* slots */
  int expected; /* arrivals that complete the round */
  _Atomic int arrived; /* changes under the lock; a timeout dump reads it without (sim_rv_arrived) */
  int holders; /* arrivals that have not left yet (detached ones never hold) */
  bool listed; /* in t->open */
  _Atomic int done;
  ncclResult_t result;
  /* What disagreed (kind SIM_RV_NONE: nothing), under the lock. */
  struct {
    int kind, rank, said, had;
  } conflict;
  size_t payload_off, slots_off, slot_stride, bytes;
};

enum { SPARES = 4 }; /* freed rounds a table keeps */
enum { SIM_RV_NONE, SIM_RV_NRANKS, SIM_RV_EXPECTED, SIM_RV_TWICE };

#define ALIGN_UP(x, a) (((x) + (a)-1) & ~(size_t)((a)-1))

static unsigned char *rank_state(sim_rv *rv) { return (unsigned char *)rv + sizeof *rv; }
static const unsigned char *rank_state_c(const sim_rv *rv) { return (const unsigned char *)rv + sizeof *rv; }

void *sim_rv_payload(sim_rv *rv) { return (char *)rv + rv->payload_off; }
void *sim_rv_slot(sim_rv *rv, int rank) { return (char *)rv + rv->slots_off + (size_t)rank * rv->slot_stride; }
bool sim_rv_present(const sim_rv *rv, int rank) { return rank_state_c(rv)[rank] & RANK_PRESENT; }
bool sim_rv_done(const sim_rv *rv) { return atomic_load_explicit(&rv->done, memory_order_acquire); }
ncclResult_t sim_rv_result(const sim_rv *rv) { return rv->result; }
uint64_t sim_rv_key(const sim_rv *rv) { return rv->key; }
uint64_t sim_rv_deadline(const sim_rv *rv) { return rv->deadline; }
int sim_rv_nranks(const sim_rv *rv) { return rv->nranks; }
int sim_rv_arrived(const sim_rv *rv) { return atomic_load_explicit(&rv->arrived, memory_order_relaxed); }

void sim_rv_table_init(sim_rv_table *t) {
  sim_mutex_init(&t->lock);
  t->open = NULL;
  t->spare = NULL;
  t->nspare = 0;
  atomic_init(&t->wq.seq, 0);
  atomic_init(&t->wq.sleepers, 0);
}

/* Caller holds t's lock (t may be NULL: no spares). */
static void rv_free(sim_rv_table *t, sim_rv *rv) {
  if (rv->ops->release) rv->ops->release(rv);
  if (t && t->nspare < SPARES) {
    rv->next = t->spare;
    t->spare = rv;
    t->nspare++;
    return;
  }
  sim_free(rv);
}

void sim_rv_table_fini(sim_rv_table *t) {
  while (t->open) {
    sim_rv *rv = t->open;
    t->open = rv->next;
    rv_free(NULL, rv);
  }
  while (t->spare) {
    sim_rv *rv = t->spare;
    t->spare = rv->next;
    sim_free(rv);
  }
  pthread_mutex_destroy(&t->lock);
}

void sim_rv_lock(sim_rv_table *t) { sim_mutex_lock(&t->lock); }
void sim_rv_unlock(sim_rv_table *t) { pthread_mutex_unlock(&t->lock); }

static void unlist(sim_rv_table *t, sim_rv *rv) {
  if (!rv->listed) return;
  for (sim_rv **pp = &t->open; *pp; pp = &(*pp)->next)
    if (*pp == rv) {
      *pp = rv->next;
      break;
    }
  rv->listed = false;
}

/* A new round: a spare of the same size, or a new block. Caller holds t's
 * lock. */
static sim_rv *rv_new(sim_rv_table *t, const sim_rv_ops *ops, uint64_t key, int nranks, int expected) {
  size_t n = (size_t)nranks;
  /* Slots of a cache line or more start on one: ranks write their own. */
  size_t align = ops->slot_size >= 64 ? 64 : 16;
  size_t payload_off = ALIGN_UP(sizeof(sim_rv) + n, 16);
  size_t stride = ALIGN_UP(ops->slot_size ? ops->slot_size : 1, align);
  size_t slots_off = ALIGN_UP(payload_off + ALIGN_UP(ops->payload_size, 16), align);
  size_t bytes = slots_off + n * stride;
  sim_rv *rv = NULL;
  for (sim_rv **pp = &t->spare; *pp; pp = &(*pp)->next)
    if ((*pp)->bytes == bytes) {
      rv = *pp;
      *pp = rv->next;
      t->nspare--;
      memset(rv, 0, bytes);
      break;
    }
  if (!rv) {
    if (!(rv = sim_aligned_alloc(64, bytes))) return NULL;
    memset(rv, 0, bytes);
  }
  rv->bytes = bytes;
  rv->ops = ops;
  rv->key = key;
  rv->deadline = ops->untimed ? UINT64_MAX : sim_deadline();
  rv->nranks = nranks;
  rv->expected = expected;
  rv->payload_off = payload_off;
  rv->slots_off = slots_off;
  rv->slot_stride = stride;
  return rv;
}

/* A failed round is kept for the ranks still to come until its deadline
 * (never for an untimed one, whose callers never come late). */
static bool kept(const sim_rv *rv) { return rv->conflict.kind != SIM_RV_NONE && rv->deadline != UINT64_MAX; }

/* The open round of key, dropping on the way failed rounds that nobody
 * holds and whose deadline has passed. Caller holds t's lock. */
static sim_rv *find_open(sim_rv_table *t, uint64_t key) {
  for (sim_rv **pp = &t->open; *pp;) {
    sim_rv *rv = *pp;
    if (rv->conflict.kind != SIM_RV_NONE && rv->holders == 0 && sim_now_ns() >= rv->deadline) {
      *pp = rv->next;
      rv->listed = false;
      rv_free(t, rv);
      continue;
    }
    if (rv->key == key) return rv;
    pp = &rv->next;
  }
  return NULL;
}

bool sim_rv_conflict(const sim_rv *rv, char *buf, size_t len) {
  const char *what = rv->ops->what, *key = rv->ops->key_name;
  int rank = rv->conflict.rank, said = rv->conflict.said, had = rv->conflict.had;
  switch (rv->conflict.kind) {
    case SIM_RV_NRANKS:
      snprintf(buf, len, "rank %d called %s with nranks %d, but rank(s) before it said %d for the same %s", rank,
               what, said, had, key);
      return true;
    case SIM_RV_EXPECTED:
      snprintf(buf, len, "rank %d expects %d of the %d ranks to take part, but rank(s) before it expected %d in the "
               "same %s", rank, said, rv->nranks, had, key);
      return true;
    case SIM_RV_TWICE:
      snprintf(buf, len, "rank %d of %d was claimed twice for the same %s (two callers of %s gave rank %d)", rank,
               rv->nranks, key, what, rank);
      return true;
    default:
      if (len) buf[0] = '\0';
      return false;
  }
}

/* An arrival that disagrees with rv: the round fails for everyone now.
 * Caller holds t's lock and wakes t's waiters once it has let go. */
static void fail_round(sim_rv_table *t, sim_rv *rv, int kind, int rank, int said, int had) {
  rv->conflict.kind = kind;
  rv->conflict.rank = rank;
  rv->conflict.said = said;
  rv->conflict.had = had;
  if (!sim_rv_done(rv)) {
    rv->result = ncclInvalidUsage;
    atomic_store_explicit(&rv->done, 1, memory_order_release);
  }
  if (rv->holders == 0 && !kept(rv)) { /* detached arrivals only: nobody leaves it */
    unlist(t, rv);
    rv_free(t, rv);
  }
}

ncclResult_t sim_rv_arrive(sim_rv_table *t, const sim_rv_ops *ops, uint64_t key, int nranks, int expected,
                           int rank, unsigned flags, const void *slot, void *arg, sim_rv **out) {
  if (out) *out = NULL;
  sim_mutex_lock(&t->lock);
  sim_rv *rv = find_open(t, key);
  ncclResult_t res = ncclSuccess;
  if (!rv) {
    if (!(rv = rv_new(t, ops, key, nranks, expected))) {
      pthread_mutex_unlock(&t->lock);
      SIM_WARN(SIM_INIT, "%s: out of memory opening a rendezvous of %d ranks", ops->what, nranks);
      return ncclSystemError;
    }
    rv->next = t->open;
    rv->listed = true;
    t->open = rv;
  } else if (rv->conflict.kind != SIM_RV_NONE) { /* failed already: so does every later rank */
    char why[256];
    sim_rv_conflict(rv, why, sizeof why);
    SIM_WARN(SIM_INIT, "%s: rank %d cannot join: the ranks of this %s disagreed: %s", ops->what, rank,
             ops->key_name, why);
    res = ncclInvalidUsage;
  } else if (rv->nranks != nranks) {
    SIM_WARN(SIM_INIT, "%s: rank %d says nranks is %d, but rank(s) before it said %d for the same %s", ops->what,
             rank, nranks, rv->nranks, ops->key_name);
    fail_round(t, rv, SIM_RV_NRANKS, rank, nranks, rv->nranks);
    res = ncclInvalidUsage;
  } else if (rv->expected != expected) {
    SIM_WARN(SIM_INIT, "%s: rank %d expects %d of %d ranks to take part, but rank(s) before it expected %d in the same %s",
             ops->what, rank, expected, nranks, rv->expected, ops->key_name);
    fail_round(t, rv, SIM_RV_EXPECTED, rank, expected, rv->expected);
    res = ncclInvalidUsage;
  } else if (rank_state(rv)[rank] & RANK_PRESENT) {
    if (flags & SIM_RV_ONCE) {
      pthread_mutex_unlock(&t->lock);
      return ncclSuccess; /* *out stays NULL: only for detached arrivals */
    }
    SIM_WARN(SIM_INIT, "%s: rank %d joined twice with the same %s", ops->what, rank, ops->key_name);
    fail_round(t, rv, SIM_RV_TWICE, rank, rank, rank);
    res = ncclInvalidUsage;
  }
  if (res != ncclSuccess) {
    pthread_mutex_unlock(&t->lock);
    sim_waitq_wake(&t->wq); /* a failed round's ranks leave now */
    return res;
  }
  bool holds = !(flags & SIM_RV_DETACHED);
  rank_state(rv)[rank] = (unsigned char)(RANK_PRESENT | (holds ? RANK_HOLDS : 0));
  if (ops->slot_size) memcpy(sim_rv_slot(rv, rank), slot, ops->slot_size);
  atomic_fetch_add_explicit(&rv->arrived, 1, memory_order_relaxed);
  rv->holders += holds;
  if (atomic_load_explicit(&rv->arrived, memory_order_relaxed) == rv->expected) {
    unlist(t, rv);
    rv->result = ops->complete(rv, arg);
    atomic_store_explicit(&rv->done, 1, memory_order_release);
  }
  sim_rv *mine = holds ? rv : NULL;
  if (rv->holders == 0 && sim_rv_done(rv)) rv_free(t, rv); /* only detached arrivals: settled by complete */
  pthread_mutex_unlock(&t->lock);
  sim_waitq_wake(&t->wq);
  if (out) *out = mine;
  return ncclSuccess;
}

typedef struct {
  const sim_rv *rv;
} done_arg;

static bool is_done(void *arg) { return sim_rv_done(((done_arg *)arg)->rv); }

int sim_rv_wait(sim_rv_table *t, sim_rv *rv, const _Atomic int *cancel, uint64_t deadline) {
  sim_due d = sim_due_at(deadline);
  return sim_rv_wait_due(t, rv, cancel, &d);
}

int sim_rv_wait_due(sim_rv_table *t, sim_rv *rv, const _Atomic int *cancel, sim_due *due) {
  done_arg a = {rv};
  return sim_waitq_wait_due(&t->wq, is_done, &a, cancel, due);
}

typedef struct {
  sim_rv_table *t;
  sim_rv *rv;
  const sim_net_map *m;
} host_arg;

static bool host_here(void *arg, bool *moved) {
  (void)moved;
  host_arg *w = arg;
  int here = 0;
  sim_rv_lock(w->t); /* arrivals change the round under it */
  for (int r = 0; r < w->m->nranks; r++) here += w->m->host[r] == w->m->my_host && sim_rv_present(w->rv, r);
  sim_rv_unlock(w->t);
  if (here == w->m->host_size[w->m->my_host]) return true;
  sim_ucx_progress(); /* keeps UCX moving for the other hosts meanwhile */
  return false;
}

ncclResult_t sim_rv_wait_host(sim_rv_table *t, sim_rv *rv, ncclComm_t comm, sim_due *due) {
  host_arg w = {t, rv, comm->clique->net};
  return sim_net_poll(comm, host_here, &w, -1, 64, 1000, sim_comm_cancel(comm), due);
}

ncclResult_t sim_rv_leave_locked(sim_rv_table *t, sim_rv *rv, int rank) {
  unsigned char *st = &rank_state(rv)[rank];
  ncclResult_t res = ncclInProgress;
  if (sim_rv_done(rv)) {
    res = rv->result;
  } else if (*st & RANK_PRESENT) {
    atomic_fetch_sub_explicit(&rv->arrived, 1, memory_order_relaxed);
  }
  if (!sim_rv_done(rv)) *st &= (unsigned char)~RANK_PRESENT;
  if (*st & RANK_HOLDS) {
    *st &= (unsigned char)~RANK_HOLDS;
    rv->holders--;
  }
  if (rv->holders == 0 && (sim_rv_done(rv) || atomic_load_explicit(&rv->arrived, memory_order_relaxed) == 0) &&
      !kept(rv)) {
    unlist(t, rv);
    rv_free(t, rv);
  }
  return res;
}

ncclResult_t sim_rv_leave(sim_rv_table *t, sim_rv *rv, int rank) {
  sim_mutex_lock(&t->lock);
  ncclResult_t res = sim_rv_leave_locked(t, rv, rank);
  pthread_mutex_unlock(&t->lock);
  sim_waitq_wake(&t->wq);
  return res;
}

bool sim_rv_withdraw(sim_rv_table *t, sim_rv *rv, int rank) {
  sim_mutex_lock(&t->lock);
  bool open = !sim_rv_done(rv);
  if (open) sim_rv_leave_locked(t, rv, rank);
  pthread_mutex_unlock(&t->lock);
  return open;
}

void sim_rv_each_open(sim_rv_table *t, void (*fn)(sim_rv_table *t, sim_rv *rv, void *arg), void *arg) {
  for (sim_rv *rv = t->open, *next; rv; rv = next) {
    next = rv->next;
    fn(t, rv, arg);
  }
}

sim_rv *sim_rv_find_locked(sim_rv_table *t, uint64_t key) {
  sim_rv *rv = t->open;
  while (rv && rv->key != key) rv = rv->next;
  return rv;
}

void sim_rv_missing(const sim_rv *rv, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int r = 0; r < rv->nranks && n + 16 < len; r++)
    if (!sim_rv_present(rv, r)) n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", r);
}
