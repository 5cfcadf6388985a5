/*
 * sim/util/wait.c — timed waiting: spin, then sleep on a futex.
 *
 * Latency matters (signal round trips are a benchmark), so a waiter first
 * polls NCCLSIM_SPIN times; on this 2-core class of machine spinning longer
 * only steals the core the waker needs, so polls past the first few yield.
 * Sleeps are capped at 50 ms so a cancel flag (abort) is noticed without the
 * aborting thread having to know every waiter.
 *
 * A yielding thread is still runnable, though: each of its turns is a
 * context switch away from a thread that has work. So a stream worker with
 * nothing queued (sim_waitq_wait_idle) stops polling, and sleeps, when the
 * job's busy workers are exactly as many as the CPUs: each could have one
 * of its own, and the poller's turns are taken from them. On 2 CPUs, the
 * idle worker of a third stream polling through a put_signal ping-pong
 * made it 194 ns a half round trip against 147 without (medians of
 * alternating runs). With more busy workers than CPUs, they already take
 * turns through their own yields, and a poller is one more in the
 * rotation, while a sleep costs its next operation a futex wake: 8 ranks'
 * 1 MiB allreduces on 2 CPUs reached 0.40-0.52 of the roofline with idle
 * workers asleep there, against 0.62-0.72 polling.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <stdbool.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../sim.h"

#define SLEEP_CAP_NS (50ull * 1000 * 1000)

uint64_t sim_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sim_deadline(void) { return sim_now_ns() + sim_timeout_ns(); }

/* Private futexes are cheaper; with ranks as processes a waker may be
 * another process, and only a shared futex reaches across. */
static int futex_op(int op) { return sim_shm_on() ? op : op | FUTEX_PRIVATE_FLAG; }

/* ---- busy workers ---- */

/* The job's count, and each process's share of it: a process that dies
 * with workers counted leaves its share, which the job's monitor takes
 * back (sim_workers_gone). `n` is padded to a line of its own (the block
 * is only as aligned as its allocator makes it). */
typedef struct {
  _Atomic int pid; /* 0: free */
  _Atomic int n;
} busy_share;
typedef struct {
  _Atomic int n;
  char pad[64 - sizeof(_Atomic int)];
  busy_share share[SIM_SHM_MAX_PROCS];
} busy_count;

static _Thread_local bool tl_busy; /* counted in busy_count */
static busy_share *_Atomic my_share; /* this process's; NULL until its first worker, and after a fork */

/* The job's count; NULL out of memory (then nobody is counted, and an idle
 * worker polls as any waiter). */
static busy_count *_Atomic busy_block; /* sim_shared's, once made */
static busy_count *busy(void) {
  busy_count *b = atomic_load_explicit(&busy_block, memory_order_acquire);
  if (!b && (b = sim_shared(SIM_SHARED_BUSY, sizeof(busy_count), NULL)) != NULL)
    atomic_store_explicit(&busy_block, b, memory_order_release);
  return b;
}

/* This process's share, claimed at its first use; NULL when every share
 * is taken (more processes than SIM_SHM_MAX_PROCS): then it counts none. */
static busy_share *share(busy_count *b) {
  busy_share *s = atomic_load_explicit(&my_share, memory_order_acquire);
  if (s) return s;
  int self = (int)getpid();
  for (int i = 0; i < SIM_SHM_MAX_PROCS; i++) {
    int expect = 0;
    if (atomic_load_explicit(&b->share[i].pid, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_strong(&b->share[i].pid, &expect, self)) {
      busy_share *none = NULL;
      /* Two of this process's workers may race here: the loser frees its
       * claim and takes the winner's. */
      if (atomic_compare_exchange_strong(&my_share, &none, &b->share[i])) return &b->share[i];
      atomic_store(&b->share[i].pid, 0);
      return none;
    }
  }
  return NULL;
}

void sim_worker_busy(bool on) {
  busy_count *b;
  busy_share *s;
  if (on == tl_busy || !(b = busy()) || !(s = share(b))) return;
  atomic_fetch_add_explicit(&s->n, on ? 1 : -1, memory_order_relaxed);
  atomic_fetch_add_explicit(&b->n, on ? 1 : -1, memory_order_relaxed);
  tl_busy = on;
}

void sim_workers_gone(int pid) {
  busy_count *b = busy();
  if (!b || pid <= 0) return;
  for (int i = 0; i < SIM_SHM_MAX_PROCS; i++) {
    busy_share *s = &b->share[i];
    if (atomic_load(&s->pid) != pid) continue;
    /* The exchange makes it once, whichever process's monitor comes first. */
    atomic_fetch_sub(&b->n, atomic_exchange(&s->n, 0));
    int expect = pid;
    atomic_compare_exchange_strong(&s->pid, &expect, 0);
  }
}

/* A forked child has none of its parent's workers: it claims a share of
 * its own, and without ranks as processes its count starts from none. */
static void busy_after_fork(void) {
  atomic_store(&my_share, NULL);
  tl_busy = false;
  busy_count *b = atomic_load(&busy_block); /* no lock here: the parent's threads may have held one */
  if (b && !sim_shm_already_on()) memset(b, 0, sizeof *b);
}
__attribute__((constructor)) static void busy_atfork(void) { pthread_atfork(NULL, NULL, busy_after_fork); }

int sim_workers_busy(void) {
  busy_count *b = busy();
  return b ? atomic_load_explicit(&b->n, memory_order_relaxed) : 0;
}

/* A busy worker that sleeps leaves its CPU to others while it does. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expect, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  bool was_busy = tl_busy;
  if (was_busy) sim_worker_busy(false);
  syscall(SYS_futex, (uint32_t *)word, futex_op(FUTEX_WAIT), expect, &ts, NULL, 0);
  if (was_busy) sim_worker_busy(true);
}

/* A store-buffering pair of fences: the waker's change, fence, read of
 * `sleepers`; a sleeper's increment of `sleepers`, fence, ready(). One of
 * the two sees the other's write, so a waker that reads no sleeper needs no
 * wake and leaves `seq` alone: its read-modify-write took the line from
 * the other core on every wake, twice per collective per rank. */
void sim_waitq_wake(sim_waitq *q) {
  atomic_thread_fence(memory_order_seq_cst);
  if (!atomic_load(&q->sleepers)) return;
  atomic_fetch_add(&q->seq, 1);
  syscall(SYS_futex, (uint32_t *)&q->seq, futex_op(FUTEX_WAKE), INT_MAX, NULL, NULL, 0);
}

int sim_ncpus(void) {
  static _Atomic int n;
  int v = atomic_load_explicit(&n, memory_order_relaxed);
  if (!v) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    v = c < 1 ? 1 : c > 1 << 20 ? 1 << 20 : (int)c;
    atomic_store_explicit(&n, v, memory_order_relaxed);
  }
  return v;
}

uint64_t sim_due_ns(sim_due *d) {
  if (!d->at) d->at = sim_deadline();
  return d->at;
}

int sim_waitq_wait(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel,
                   uint64_t deadline_ns) {
  sim_due d = sim_due_at(deadline_ns);
  return sim_waitq_wait_due(q, ready, arg, cancel, &d);
}

/* Polls with a pause (25 ns here) before the first yield: 16, about the
 * time a handoff between two running threads takes. With more runnable
 * threads than CPUs, the thread a waiter waits for is often not running,
 * and every pause past that only delays the yield that lets it run: 8-byte
 * allreduces (bench/coll_roofline, 14 alternating runs on 2 CPUs) took
 * 3.1-5.0 us at 4 ranks and 9.7-14.9 us at 8 with 16, 4.3-10.6 and
 * 16.9-25.0 us with 64; at 2 ranks 245-306 ns either way (2.2-2.4 us
 * against 3.5-4.3 us in runs where both workers shared a CPU). */
enum { PAUSES = 16 };

/* Whether ready() came true within NCCLSIM_SPIN polls. An idle worker's
 * polls stop at the first yield that would take a turn from a busy one
 * (above). */
static bool spin(sim_ready_fn ready, void *arg, bool idle) {
  int64_t spins = sim_param_int(SIM_P_SPIN);
  for (int64_t i = 0; i < spins; i++) {
    if (ready(arg)) return true;
    if (i < PAUSES) sim_cpu_relax();
    else if (idle && sim_workers_busy() == sim_ncpus()) return false;
    else sched_yield();
  }
  return false;
}

static int sleep_until(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel, sim_due *due) {
  uint64_t deadline_ns = sim_due_ns(due);
  for (;;) {
    /* Announce the sleeper before the last check: a waker that changed the
     * state after our check sees sleepers != 0 (the fences below and in
     * sim_waitq_wake), and bumps seq before it wakes. */
    atomic_fetch_add(&q->sleepers, 1);
    atomic_thread_fence(memory_order_seq_cst); /* see sim_waitq_wake */
    uint32_t seen = atomic_load(&q->seq);
    if (ready(arg)) {
      atomic_fetch_sub(&q->sleepers, 1);
      return 0;
    }
    if (cancel && atomic_load(cancel)) {
      atomic_fetch_sub(&q->sleepers, 1);
      return ECANCELED;
    }
    uint64_t now = sim_now_ns();
    if (now >= deadline_ns) {
      atomic_fetch_sub(&q->sleepers, 1);
      return ready(arg) ? 0 : ETIMEDOUT;
    }
    uint64_t left = deadline_ns - now;
    futex_wait(&q->seq, seen, left < SLEEP_CAP_NS ? left : SLEEP_CAP_NS);
    atomic_fetch_sub(&q->sleepers, 1);
  }
}

int sim_waitq_wait_due(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel, sim_due *due) {
  return spin(ready, arg, false) ? 0 : sleep_until(q, ready, arg, cancel, due);
}

void sim_waitq_wait_idle(sim_waitq *q, sim_ready_fn ready, void *arg) {
  bool was_busy = tl_busy;
  sim_worker_busy(false);
  if (!spin(ready, arg, true)) {
    sim_due d = sim_due_at(UINT64_MAX);
    sleep_until(q, ready, arg, NULL, &d);
  }
  if (was_busy) sim_worker_busy(true);
}

/* ---- counts ---- */

void sim_count_init(sim_count *c) {
  atomic_init(&c->value, 0);
  atomic_init(&c->want, UINT64_MAX);
  atomic_init(&c->q.seq, 0);
  atomic_init(&c->q.sleepers, 0);
}

/* The adder's add and its read of `want` are sequentially consistent, as
 * are a sleeper's registration in `want` and its read of the value: one of
 * the two sees the other. A wake resets `want`, and every sleeper woken
 * registers again; one that registered before the reset read `seq` before
 * registering, so the wake's bump of `seq`, after the reset, stops its
 * sleep. */
uint64_t sim_count_add(sim_count *c, uint64_t n) {
  uint64_t v = atomic_fetch_add(&c->value, n) + n;
  if (v >= atomic_load(&c->want)) {
    atomic_store(&c->want, UINT64_MAX);
    sim_waitq_wake(&c->q);
  }
  return v;
}

typedef struct {
  sim_count *c;
  uint64_t target;
} count_arg;

static bool count_reached(void *arg) {
  count_arg *a = arg;
  return sim_count_get(a->c) >= a->target;
}

int sim_count_wait(sim_count *c, uint64_t target, uint64_t deadline_ns) {
  return sim_count_wait_spin(c, target, deadline_ns, 0);
}

/* A thread that waits for a count has nothing to do until it is reached:
 * it polls 64 times, then, unless told to go on polling (yielding), sleeps
 * until the count reaches its target. A host thread in a synchronize
 * sleeps at once: on a machine with fewer cores than busy threads, its
 * polling, even yielding, takes turns from the stream workers that make
 * the count progress. */
int sim_count_wait_spin(sim_count *c, uint64_t target, uint64_t deadline_ns, int64_t yields) {
  count_arg a = {c, target};
  for (int64_t i = 0; i < 64 + yields; i++) {
    if (count_reached(&a)) return 0;
    if (i < 64) sim_cpu_relax();
    else sched_yield();
  }
  for (;;) {
    atomic_fetch_add(&c->q.sleepers, 1);
    uint32_t seen = atomic_load(&c->q.seq);
    uint64_t w = atomic_load(&c->want);
    while (target < w && !atomic_compare_exchange_weak(&c->want, &w, target)) {
    }
    if (atomic_load(&c->value) >= target) {
      atomic_fetch_sub(&c->q.sleepers, 1);
      return 0;
    }
    uint64_t now = sim_now_ns();
    if (now >= deadline_ns) {
      atomic_fetch_sub(&c->q.sleepers, 1);
      return count_reached(&a) ? 0 : ETIMEDOUT;
    }
    uint64_t left = deadline_ns - now;
    futex_wait(&c->q.seq, seen, left < SLEEP_CAP_NS ? left : SLEEP_CAP_NS);
    atomic_fetch_sub(&c->q.sleepers, 1);
  }
}
