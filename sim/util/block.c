/*
 * sim/util/block.c — host threads blocked by NCCL's and CUDA's rules, and
 * the check that turns a wait nothing can end into a diagnostic.
 *
 * A blocked thread lists itself in a registry for as long as it waits.
 * The check starts from one blocked thread and asks, for every rank it
 * awaits, which thread drives that rank (the thread of the rank's last
 * call). If each of those threads is blocked too, and so on for the ranks
 * they await, no thread is left that could make the call: the wait is a
 * deadlock. One running thread, or one rank with no driver yet, and it is
 * not: a thread nobody has seen may still call.
 *
 * What a blocked thread awaits is computed afresh at every check, under
 * the registry's lock, by the waiter's own callback: a thread whose wait
 * just ended awaits nothing, so a stale entry never completes a cycle.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../sim.h"

/* How often a blocked thread re-checks, and how long the deadlock must
 * stand before it is reported: a rank's driver is the thread of its last
 * call, and another thread may be about to make its next one (a rank made
 * by ncclCommInitAll in one thread and driven by a thread just started). */
#define CHECK_NS (20ull * 1000 * 1000)
#define GRACE_NS (100ull * 1000 * 1000)
#define MAX_AWAIT 64
#define MAX_CHAIN 16

static _Thread_local uint64_t self_id;
static _Thread_local int self_tid;

/* Numbers are unique across the processes of a job: a comm's driver may
 * be a thread of another process, and must never be taken for one of ours. */
static void threads_init(void *p) { atomic_init((_Atomic uint64_t *)p, 1); }

uint64_t sim_thread_self(void) {
  if (!self_id) {
    _Atomic uint64_t *next_thread = sim_shared(SIM_SHARED_THREADS, sizeof *next_thread, threads_init);
    self_id = next_thread ? atomic_fetch_add(next_thread, 1) : UINT64_MAX - (uint64_t)sim_thread_tid();
  }
  return self_id;
}

int sim_thread_tid(void) {
  if (!self_tid) self_tid = (int)syscall(SYS_gettid);
  return self_tid;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sim_block *blocked; /* under lock */

void sim_block_init(sim_block *b, int (*awaits)(sim_block *b, sim_rank_ref *out, int max), void *arg,
                    const char *fmt, ...) {
  b->next = NULL;
  b->thread = sim_thread_self();
  b->tid = sim_thread_tid();
  b->awaits = awaits;
  b->arg = arg;
  atomic_init(&b->doomed, 0);
  b->why[0] = '\0';
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->what, sizeof b->what, fmt, ap);
  va_end(ap);
}

static sim_block *find(uint64_t thread) {
  for (sim_block *b = blocked; b; b = b->next)
    if (b->thread == thread) return b;
  return NULL;
}

/* The driver of an awaited rank: 0 if the rank has none yet; *gone when
 * the rank was destroyed (it will never call again). */
static uint64_t driver_of(const sim_rank_ref *r, int *tid, bool *gone) {
  ncclComm_t m = r->c->ranks[r->rank];
  *gone = !m;
  if (!m) return 0;
  *tid = atomic_load_explicit(&m->driver_tid, memory_order_relaxed);
  return atomic_load_explicit(&m->driver, memory_order_relaxed);
}

/* True if no thread outside the blocked ones reachable from `start` could
 * release it; `why` then names the awaited ranks' drivers, and chain[1..]
 * (*nchain in all) the other blocked threads involved. Under lock. */
static bool deadlocked(sim_block *start, char *why, size_t len, sim_block **chain, int *nchain_out) {
  int nchain = 0, head = 0;
  chain[nchain++] = start;
  size_t n = 0;
  why[0] = '\0';
  while (head < nchain) {
    sim_block *b = chain[head++];
    sim_rank_ref aw[MAX_AWAIT];
    int na = b->awaits(b, aw, MAX_AWAIT);
    if (na <= 0 || na > MAX_AWAIT) return false; /* released, or not known */
    for (int i = 0; i < na; i++) {
      /* The awaited ranks' table of ranks is stable: the blocked thread
       * holds its own rank, so the clique lives. */
      sim_mutex_lock(&aw[i].c->lock);
      int tid = 0;
      bool gone;
      uint64_t d = driver_of(&aw[i], &tid, &gone);
      pthread_mutex_unlock(&aw[i].c->lock);
      if (gone) {
        if (n < len)
          n += (size_t)snprintf(why + n, len - n, "%srank %d was destroyed", n ? "; " : "", aw[i].rank);
        continue;
      }
      if (d == 0) return false;
      sim_block *db = find(d);
      if (!db) return false; /* its driver runs: it may yet call */
      bool seen = false;
      for (int k = 0; k < nchain; k++) seen = seen || chain[k] == db;
      if (n < len) {
        if (db == start)
          n += (size_t)snprintf(why + n, len - n, "%srank %d is driven by this same thread (its last call came from it)",
                                n ? "; " : "", aw[i].rank);
        else if (!seen || db != b)
          n += (size_t)snprintf(why + n, len - n, "%srank %d is driven by thread %d, itself blocked in %s",
                                n ? "; " : "", aw[i].rank, tid, db->what);
      }
      if (!seen) {
        if (nchain == MAX_CHAIN) return false; /* too long to tell */
        chain[nchain++] = db;
      }
    }
  }
  *nchain_out = nchain;
  return true;
}

/* Every other thread of the deadlock is stuck as much as this one: each
 * ends at its next check, pointing to this report. Under lock. */
static void doom(sim_block *self, sim_block **chain, int nchain, const char *why) {
  for (int k = 1; k < nchain; k++)
    if (!atomic_load(&chain[k]->doomed)) {
      snprintf(chain[k]->why, sizeof chain[k]->why, "the threads are deadlocked, as thread %d found while blocked in %s: %s",
               self->tid, self->what, why);
      atomic_store(&chain[k]->doomed, 1);
    }
}

int sim_block_wait(sim_block *b, sim_waitq *q, sim_ready_fn ready, void *ready_arg, uint64_t deadline_ns,
                   char *why, size_t len) {
  sim_mutex_lock(&lock);
  b->next = blocked;
  blocked = b;
  pthread_mutex_unlock(&lock);
  int rc;
  uint64_t dead_since = 0; /* 0: not deadlocked at the last check */
  for (;;) {
    if (ready(ready_arg)) {
      rc = 0;
      break;
    }
    sim_block *chain[MAX_CHAIN];
    int nchain = 0;
    uint64_t now = sim_now_ns();
    sim_mutex_lock(&lock);
    bool doomed = atomic_load(&b->doomed);
    if (doomed) snprintf(why, len, "%s", b->why);
    bool dead = !doomed && deadlocked(b, why, len, chain, &nchain);
    if (!dead) dead_since = 0;
    else if (!dead_since) dead_since = now;
    bool report = dead && now - dead_since >= GRACE_NS && !ready(ready_arg);
    if (report) doom(b, chain, nchain, why);
    pthread_mutex_unlock(&lock);
    if ((doomed && !ready(ready_arg)) || report) {
      rc = EDEADLK;
      break;
    }
    if (now >= deadline_ns) {
      rc = ready(ready_arg) ? 0 : ETIMEDOUT;
      break;
    }
    uint64_t slice = deadline_ns - now < CHECK_NS ? deadline_ns : now + CHECK_NS;
    rc = sim_waitq_wait(q, ready, ready_arg, NULL, slice);
    if (rc == 0) break;
  }
  sim_mutex_lock(&lock);
  for (sim_block **pp = &blocked; *pp; pp = &(*pp)->next)
    if (*pp == b) {
      *pp = b->next;
      break;
    }
  pthread_mutex_unlock(&lock);
  return rc;
}
