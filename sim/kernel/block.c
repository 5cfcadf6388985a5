/*
 * sim/kernel/block.c — the threads of a block, run as fibers by one worker.
 *
 * Resident threads (one block, or every block of a cooperative launch) sit
 * in a ring. The running thread keeps the CPU until it waits: at a
 * barrier, in a warp exchange, in a poll (__ncclsim_yield) or at a loop
 * tick; then it switches straight to the next thread of the ring that can
 * run, without going through the worker's own context. Only the end of
 * every thread, a thread that cannot go on, or a fault go back there.
 *
 * A round of the ring in which nothing progressed (no barrier or warp
 * exchange completed, no thread started or ended) means every thread
 * polls: the worker then lets other threads of the machine run
 * (sched_yield), and after NCCLSIM_TIMEOUT of such rounds the kernel ends
 * with a report of what each thread waits for. A GPU would spin forever.
 */
#include "config.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"

SIM_EXPORT _Thread_local uint3 threadIdx;
SIM_EXPORT _Thread_local uint3 blockIdx;
SIM_EXPORT _Thread_local uint3 blockDim = {1, 1, 1};
SIM_EXPORT _Thread_local uint3 gridDim = {1, 1, 1};
SIM_EXPORT _Thread_local __ncclsim_kthread *__ncclsim_self;
SIM_EXPORT _Thread_local int __ncclsim_ticks = SIM_K_TICKS;
_Thread_local kgrid *sim_k_grid;

static inline kthread *current(void) { return (kthread *)__ncclsim_self; }

/* Through the worker's own addresses of its thread-locals (kgrid's, taken
 * once a run): a switch then calls no TLS resolver. */
static void set_coords(kgrid *g, kthread *t) {
  g->running = t;
  if (t) {
    *g->tls_tid = t->tid;
    *g->tls_bid = t->pub.block->bid;
    *g->tls_self = &t->pub;
  } else {
    *g->tls_tid = (uint3){0, 0, 0};
    *g->tls_bid = (uint3){0, 0, 0};
    *g->tls_self = NULL;
  }
}

void sim_k_tls_bind(kgrid *g) {
  g->tls_tid = &threadIdx;
  g->tls_bid = &blockIdx;
  g->tls_self = &__ncclsim_self;
}

void sim_k_where(kgrid *g, const kthread *t, char *buf, size_t len) {
  const char *name = g->pretty ? g->pretty : g->l->name ? g->l->name : "(unnamed)";
  if (t)
    snprintf(buf, len, "kernel %s, block (%u,%u,%u), thread (%u,%u,%u)", name, t->pub.block->bid.x,
             t->pub.block->bid.y, t->pub.block->bid.z, t->tid.x, t->tid.y, t->tid.z);
  else
    snprintf(buf, len, "kernel %s", name);
}

static void vfault(kgrid *g, cudaError_t err, const char *fmt, va_list ap) {
  if (g->err != cudaSuccess) return; /* the first fault is the kernel's */
  g->err = err;
  vsnprintf(g->why, sizeof g->why, fmt, ap);
}

void sim_k_fault(kgrid *g, cudaError_t err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfault(g, err, fmt, ap);
  va_end(ap);
}

void sim_k_abort(kgrid *g, cudaError_t err, const char *fmt, ...) {
  sim_k_engine_enter(); /* left with the thread (fiber.c) */
  va_list ap;
  va_start(ap, fmt);
  vfault(g, err, fmt, ap);
  va_end(ap);
  kthread *t = g->running;
  set_coords(g, NULL);
  /* The thread is abandoned where it stands: the home context frees its
   * stack with the others' (sim_k_ring_run). */
  sim_fiber_switch(t->fiber, g->home, true);
  abort(); /* nothing resumes an aborted kernel's thread */
}

/* ---- the ring ---- */

static unsigned ring_index(kgrid *g, kthread *t) {
  (void)g; /* a block's threads are contiguous in the ring */
  return t->pub.block->ring_base + t->pub.rank;
}

static void describe_stall(kgrid *g, char *buf, size_t len) {
  unsigned at_bar = 0, at_warp = 0, at_grid = 0, polling = 0, done = 0;
  const kthread *poller = NULL, *warper = NULL;
  for (unsigned i = 0; i < g->ring_n; i++) {
    const kthread *t = g->ring[i];
    switch (t->state) {
    case KT_BAR: at_bar++; break;
    case KT_WARP: at_warp++; if (!warper) warper = t; break;
    case KT_GRID: at_grid++; break;
    case KT_DONE: done++; break;
    default:
      polling++;
      if (!poller || (t->waits_for && !poller->waits_for)) poller = t;
    }
  }
  size_t n = (size_t)snprintf(buf, len, "of its %u resident threads, %u ended, %u wait at __syncthreads", g->ring_n,
                              done, at_bar);
  if (n < len && at_grid) n += (size_t)snprintf(buf + n, len - n, ", %u at grid.sync()", at_grid);
  if (n < len && at_warp) {
    const kwarp *w = &warper->pub.block->warps[warper->pub.warp];
    const kexchange *x = &w->ex[0];
    for (int i = 0; i < 32; i++)
      if (w->ex[i].want >> warper->pub.lane & 1) x = &w->ex[i];
    n += (size_t)snprintf(buf + n, len - n, ", %u in warp exchanges (warp %u of block (%u,%u,%u): %s with mask 0x%08x, lanes 0x%08x arrived)",
                          at_warp, warper->pub.warp, warper->pub.block->bid.x, warper->pub.block->bid.y,
                          warper->pub.block->bid.z, x->kind ? x->kind : "?", x->want, x->arrived);
  }
  if (n < len && polling) {
    char where[256];
    sim_k_where(g, poller, where, sizeof where);
    n += (size_t)snprintf(buf + n, len - n, ", %u run or poll (%s: %s)", polling, where,
                          poller->waits_for ? poller->waits_for : "a loop");
  }
  if (n < len && g->blocks_started < g->nblocks)
    snprintf(buf + n, len - n,
             "; %llu of the grid's %llu blocks have not started: only a cooperative launch "
             "(cudaLaunchCooperativeKernel) promises that blocks run at the same time, so a wait for another block "
             "needs one. A GPU may run this kernel while all its blocks fit at once, and hang when they do not (a "
             "larger grid, other kernels on the device)",
             g->nblocks - g->blocks_started, g->nblocks);
}

/* A round passed: if nothing progressed in it, let other workers run,
 * and end the kernel after NCCLSIM_TIMEOUT of quiet. */
static void wrapped(kgrid *g) {
  if (g->progress) {
    g->progress = false;
    g->quiet_since = 0;
    return;
  }
  sched_yield();
  uint64_t now = sim_now_ns();
  if (!g->quiet_since) {
    g->quiet_since = now;
  } else if (now - g->quiet_since > sim_timeout_ns() && g->running) {
    char stall[768];
    describe_stall(g, stall, sizeof stall);
    sim_k_abort(g, cudaErrorLaunchTimeout,
                "no thread progressed for NCCLSIM_TIMEOUT=%s s (no barrier passed, no thread started or ended): %s. "
                "A GPU would spin on",
                sim_param_text(SIM_P_TIMEOUT), stall);
  }
}

/* The next thread of the ring after index `from` that can run (`from`
 * itself last); NULL when none can. */
static kthread *pick_next(kgrid *g, unsigned from) {
  unsigned n = g->ring_n;
  for (unsigned k = 1; k <= n; k++) {
    unsigned i = from + k;
    if (i >= n) i -= n;
    if (i == 0) wrapped(g);
    kthread *t = g->ring[i];
    if (t->state == KT_RUN || t->state == KT_NEW) return t;
  }
  return NULL;
}

static void thread_main(void *arg);

/* Gives t a fiber if it has none yet; false out of memory. */
static bool ready(kgrid *g, kthread *t) {
  if (t->state != KT_NEW) return true;
  sim_fiber *f = sim_fiber_alloc(ring_index(g, t));
  if (!f) return false;
  sim_fiber_prepare(f, thread_main, t);
  t->fiber = f;
  t->state = KT_RUN;
  g->progress = true;
  return true;
}

/* The running thread `self` (NULL: the home context) hands the CPU to
 * `next` (NULL: home). */
static void hand_to(kgrid *g, kthread *self, kthread *next) {
  sim_fiber *from = self ? self->fiber : g->home;
  if (next && !ready(g, next)) {
    if (!self) {
      sim_k_fault(g, cudaErrorMemoryAllocation, "no memory for the stack of a kernel thread (%zu KiB)",
                  sim_fiber_stack_size() / 1024);
      return;
    }
    sim_k_abort(g, cudaErrorMemoryAllocation, "no memory for the stack of a kernel thread (%zu KiB)",
                sim_fiber_stack_size() / 1024);
  }
  set_coords(g, next);
  sim_fiber_switch(from, next ? next->fiber : g->home, !next || !self);
}

/* The running thread waits (its state says for what): the next one runs. */
static void wait_turn(kgrid *g, kthread *self) {
  kthread *next = pick_next(g, ring_index(g, self));
  hand_to(g, self, next); /* NULL: no thread can run; home reports it */
}

static void bar_release(kgrid *g, kblock *b) {
  b->bar_result[0] = b->bar_acc;
  for (unsigned i = 0; i < b->nthreads; i++)
    if (b->threads[i].state == KT_BAR) b->threads[i].state = KT_RUN;
  b->bar_gen++;
  b->bar_arrived = 0;
  g->progress = true;
}

static void grid_release(kgrid *g) {
  for (unsigned i = 0; i < g->ring_n; i++)
    if (g->ring[i]->state == KT_GRID) g->ring[i]->state = KT_RUN;
  g->grid_gen++;
  g->grid_arrived = 0;
  g->progress = true;
}

static void thread_exit(kgrid *g, kthread *t) {
  kblock *b = t->pub.block;
  t->state = KT_DONE;
  g->live--;
  b->live--;
  g->progress = true;
  HB_RELEASE(g);
  /* Threads that ended count as arrived, as on a GPU since Volta. */
  if (b->bar_arrived && b->bar_arrived == b->live) bar_release(g, b);
  if (g->grid_arrived && g->grid_arrived == g->live) grid_release(g);
  kwarp *w = &b->warps[t->pub.warp];
  unsigned bit = 1u << t->pub.lane;
  for (int i = 0; i < 32; i++) {
    kexchange *x = &w->ex[i];
    if ((x->want & bit) && !(x->arrived & bit)) {
      char where[256];
      sim_k_where(g, t, where, sizeof where);
      sim_k_abort(g, cudaErrorLaunchFailure,
                  "%s ended while lanes 0x%08x of its warp wait for it in %s (mask 0x%08x): on a GPU this is undefined",
                  where, x->arrived, x->kind, x->want);
    }
  }
  kthread *next = pick_next(g, ring_index(g, t));
  if (next && !ready(g, next))
    sim_k_abort(g, cudaErrorMemoryAllocation, "no memory for the stack of a kernel thread");
  sim_fiber *from = t->fiber;
  t->fiber = NULL; /* pooled once left */
  set_coords(g, next);
  sim_fiber_exit_to(from, next ? next->fiber : g->home, !next);
}

/* A kernel thread, on its fiber: the kernel's own code is the one part
 * that ThreadSanitizer sees (the engine's bookkeeping around it is not:
 * kernel.h). */
static void thread_main(void *arg) {
  kthread *t = arg;
  kgrid *g = sim_k_grid;
  __ncclsim_launch *l = g->l;
  HB_ACQUIRE(&g->ring); /* what the worker did before the ring started */
  sim_k_engine_leave();
  l->invoke(l);
  sim_k_engine_enter();
  thread_exit(g, t);
}

/* ---- blocks ---- */

/* A worker's buffers for the blocks it runs one at a time (a block's
 * threads, warps, shared memory and __shared__ table), kept from one block
 * and launch to the next: a launch allocates nothing once the worker has
 * run one as large. A cooperative launch's blocks have their own. */
typedef struct kcache {
  kthread *threads;
  unsigned threads_cap;
  kwarp *warps;
  unsigned warps_cap;
  char *smem;
  size_t smem_cap;
  kshared *vars;
  unsigned vars_cap;
} kcache;
static _Thread_local kcache cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

static void cache_gone(void *arg) {
  kcache *c = arg;
  sim_free(c->threads);
  sim_free(c->warps);
  sim_free(c->smem);
  sim_free(c->vars);
  memset(c, 0, sizeof *c);
}
static void cache_key_make(void) { pthread_key_create(&cache_key, cache_gone); }

/* p grown to hold n items of size each (contents not kept); false out of memory. */
static bool grow(void **p, unsigned *cap, size_t n, size_t size) {
  if (n <= *cap) return true;
  void *q = sim_aligned_alloc(64, n * size);
  if (!q) return false;
  sim_free(*p);
  *p = q;
  *cap = (unsigned)n;
  return true;
}

bool sim_k_block_init(kgrid *g, kblock *b, uint3 bid, bool own) {
  __ncclsim_launch *l = g->l;
  unsigned n = l->block.x * l->block.y * l->block.z;
  memset(b, 0, sizeof *b);
  b->grid = g;
  b->bid = bid;
  b->nthreads = b->live = n;
  b->nwarps = (n + 31) / 32;
  const kentry *k = sim_k_lookup(l->kernel, false);
  b->smem_cap = sim_k_smem_limit(k);
  if (b->smem_cap < l->smem) b->smem_cap = l->smem;
  if (own) {
    b->threads = sim_calloc(n, sizeof *b->threads);
    b->warps = sim_calloc(b->nwarps, sizeof *b->warps);
    b->smem = sim_malloc(b->smem_cap ? b->smem_cap : 1);
    if (!b->threads || !b->warps || !b->smem) {
      sim_k_block_fini(b);
      return false;
    }
  } else {
    pthread_once(&cache_once, cache_key_make);
    pthread_setspecific(cache_key, &cache);
    unsigned smem_cap = (unsigned)cache.smem_cap;
    if (!grow((void **)&cache.threads, &cache.threads_cap, n, sizeof *b->threads) ||
        !grow((void **)&cache.warps, &cache.warps_cap, b->nwarps, sizeof *b->warps) ||
        !grow((void **)&cache.smem, &smem_cap, b->smem_cap ? b->smem_cap : 1, 1))
      return false;
    cache.smem_cap = smem_cap;
    b->threads = cache.threads;
    b->warps = cache.warps;
    b->smem = cache.smem;
    b->vars = cache.vars;
    b->vars_cap = cache.vars_cap;
    b->cached = true;
    memset(b->threads, 0, n * sizeof *b->threads);
    memset(b->warps, 0, b->nwarps * sizeof *b->warps);
  }
  b->smem_dynamic = l->smem;
  b->smem_used = (l->smem + 15) & ~(size_t)15;
  for (unsigned i = 0; i < n; i++) {
    kthread *t = &b->threads[i];
    t->tid.x = i % l->block.x;
    t->tid.y = i / l->block.x % l->block.y;
    t->tid.z = i / (l->block.x * l->block.y);
    t->pub.rank = i;
    t->pub.lane = i % 32;
    t->pub.warp = i / 32;
    t->pub.warp_lanes = i / 32 == b->nwarps - 1 && n % 32 ? n % 32 : 32;
    t->pub.block = b;
  }
  return true;
}

void sim_k_block_fini(kblock *b) {
  if (b->threads)
    for (unsigned i = 0; i < b->nthreads; i++)
      if (b->threads[i].fiber) sim_fiber_free(b->threads[i].fiber); /* abandoned by a fault */
  kentry *k = b->grid ? sim_k_lookup(b->grid->l->kernel, false) : NULL;
  if (k && b->smem_used > b->smem_dynamic) K_SET(k, static_smem, b->smem_used - ((b->smem_dynamic + 15) & ~(size_t)15));
  if (b->cached) { /* the worker's, for the next block */
    cache.vars = b->vars;
    cache.vars_cap = b->vars_cap;
  } else {
    sim_free(b->threads);
    sim_free(b->warps);
    sim_free(b->smem);
    sim_free(b->vars);
  }
  b->threads = NULL;
  b->warps = NULL;
  b->smem = NULL;
  b->vars = NULL;
}

void sim_k_ring_run(kgrid *g) {
  g->progress = true;
  g->quiet_since = 0;
  /* A thread's start comes after what the worker did so far, its end
   * before what the worker does next; not on one object, which would
   * order a thread after every thread that ended before it started. */
  HB_RELEASE(&g->ring);
  /* threadIdx and the rest, which the threads read, are the engine's to
   * write here too. */
  sim_k_engine_enter();
  kthread *first = pick_next(g, g->ring_n - 1);
  if (first) hand_to(g, NULL, first);
  /* Back home: every thread ended, a fault, or no thread can go on. */
  set_coords(g, NULL);
  sim_k_engine_leave();
  HB_ACQUIRE(g);
  if (g->err == cudaSuccess && g->live > 0) {
    char stall[768];
    describe_stall(g, stall, sizeof stall);
    sim_k_fault(g, cudaErrorLaunchFailure,
                "no thread can go on: %s. On a GPU this kernel would hang (threads that diverged around a barrier "
                "or a warp exchange)",
                stall);
  }
}

/* ---- what device code calls ---- */

static int block_sync(int op, int pred) {
  kthread *t = current();
  int p = pred != 0;
  if (!t) return op == 1 ? p : p; /* a host thread is a block of one */
  kblock *b = t->pub.block;
  kgrid *g = b->grid;
  HB_RELEASE(&b->bar_gen);
  if (b->bar_arrived == 0) b->bar_acc = op == 2 ? 1 : 0;
  if (op == 1) b->bar_acc += p;
  else if (op == 2) b->bar_acc &= p;
  else if (op == 3) b->bar_acc |= p;
  if (++b->bar_arrived == b->live) {
    bar_release(g, b);
  } else {
    t->state = KT_BAR;
    wait_turn(g, t);
  }
  HB_ACQUIRE(&b->bar_gen);
  return b->bar_result[0];
}

SIM_EXPORT int __ncclsim_syncthreads(int op, int pred) {
  sim_k_engine_enter();
  int r = block_sync(op, pred);
  sim_k_engine_leave();
  return r;
}

static void grid_sync(void) {
  kthread *t = current();
  if (!t) return;
  kgrid *g = sim_k_grid;
  if (!g->l->cooperative) {
    char where[256];
    sim_k_where(g, t, where, sizeof where);
    sim_k_abort(g, cudaErrorLaunchFailure,
                "%s: grid.sync() in a kernel not launched cooperatively (cudaLaunchCooperativeKernel or "
                "cudaLaunchAttributeCooperative): CUDA does not guarantee that its blocks run at the same time",
                where);
  }
  HB_RELEASE(&g->grid_gen);
  if (++g->grid_arrived == g->live) {
    grid_release(g);
  } else {
    t->state = KT_GRID;
    wait_turn(g, t);
  }
  HB_ACQUIRE(&g->grid_gen);
}

SIM_EXPORT void __ncclsim_grid_sync(void) {
  sim_k_engine_enter();
  grid_sync();
  sim_k_engine_leave();
}

static unsigned warp_present(const kblock *b, unsigned warp) {
  unsigned n = warp == b->nwarps - 1 && b->nthreads % 32 ? b->nthreads % 32 : 32;
  return n == 32 ? 0xffffffffu : (1u << n) - 1;
}

/* The lanes of the caller's warp that run together with it. On a GPU,
 * those that are at this point of the code, converged; here a lane waits
 * until every other lane of its warp has ended, waits elsewhere (a barrier,
 * another exchange: it diverged) or is in __activemask too, and the mask
 * is the lanes in __activemask. So lanes that returned early (a bounds
 * check) are left out whichever order the lanes ran in. */
static int yield_turn(const char *what);

static unsigned activemask(void) {
  kthread *t = current();
  if (!t) return 1;
  kgrid *g = sim_k_grid;
  kblock *b = t->pub.block;
  unsigned base = t->pub.warp * 32, present = warp_present(b, t->pub.warp);
  t->in_activemask = true;
  for (;;) {
    bool settled = true;
    unsigned m = 0;
    for (unsigned l = 0; l < 32 && settled; l++) {
      if (!(present >> l & 1)) continue;
      const kthread *o = &b->threads[base + l];
      if (o->in_activemask) m |= 1u << l;
      else if (o->state == KT_RUN || o->state == KT_NEW) settled = false;
    }
    if (settled) {
      for (unsigned l = 0; l < 32; l++)
        if (m >> l & 1) {
          b->threads[base + l].in_activemask = false;
          b->threads[base + l].active = m;
        }
      g->progress = true;
    }
    if (!t->in_activemask) return t->active;
    yield_turn("__activemask: the other lanes of its warp to reach it, wait elsewhere or end");
  }
}

SIM_EXPORT unsigned __ncclsim_activemask(void) {
  sim_k_engine_enter();
  unsigned m = activemask();
  sim_k_engine_leave();
  return m;
}

/* The exchange of w that a lane joins with `mask`: the one under way with
 * that mask, else a free slot. Exchanges with other masks may overlap it:
 * a lane waits in one at a time, so lanes that differ meet in different
 * exchanges (a mask never met ends as a thread that cannot go on). */
static kexchange *exchange_for(kwarp *w, unsigned mask) {
  kexchange *free_slot = NULL;
  for (int i = 0; i < 32; i++) {
    kexchange *x = &w->ex[i];
    if (x->want == mask) return x;
    if (!x->want && !free_slot) free_slot = x;
  }
  return free_slot;
}

static uint64_t warp_sync(unsigned mask, uint64_t value, __ncclsim_warp_fn fn, uint64_t arg, const char *kind) {
  kthread *t = current();
  if (!t) { /* a host thread is lane 0 of a warp of one */
    uint64_t v[32] = {value}, a[32] = {arg};
    return fn(v, a, mask & 1, 0);
  }
  kgrid *g = sim_k_grid;
  kblock *b = t->pub.block;
  kwarp *w = &b->warps[t->pub.warp];
  unsigned lane = t->pub.lane, bit = 1u << lane;
  char where[256];
  if (!(mask & bit)) {
    sim_k_where(g, t, where, sizeof where);
    sim_k_abort(g, cudaErrorLaunchFailure, "%s: %s with mask 0x%08x, which leaves out the calling lane %u (CUDA: undefined)",
                where, kind, mask, lane);
  }
  if (mask & ~warp_present(b, t->pub.warp)) {
    sim_k_where(g, t, where, sizeof where);
    sim_k_abort(g, cudaErrorLaunchFailure, "%s: %s with mask 0x%08x names lanes its warp does not have (0x%08x)",
                where, kind, mask, warp_present(b, t->pub.warp));
  }
  kexchange *x = exchange_for(w, mask); /* a slot is free: 32 lanes wait in at most 32 */
  if (!x->want) {
    x->want = mask;
    x->arrived = 0;
    x->fn = fn;
    x->kind = kind;
  } else if (strcmp(x->kind, kind)) {
    sim_k_where(g, t, where, sizeof where);
    sim_k_abort(g, cudaErrorLaunchFailure,
                "%s: %s with mask 0x%08x while lanes 0x%08x of its warp wait in %s with that mask (CUDA: undefined)",
                where, kind, mask, x->arrived, x->kind);
  }
  unsigned base = t->pub.warp * 32;
  for (unsigned l = 0; l < 32; l++)
    if ((mask >> l & 1) && b->threads[base + l].state == KT_DONE) {
      sim_k_where(g, t, where, sizeof where);
      sim_k_abort(g, cudaErrorLaunchFailure, "%s: %s with mask 0x%08x names lane %u, which has ended (CUDA: undefined)",
                  where, kind, mask, l);
    }
  /* What each lane did before the exchange is ordered before what every
   * lane of it does after: each releases as it arrives, the last acquires
   * them all before it computes the results, and each waiter acquires once
   * woken (after the last arrival's release). */
  w->value[lane] = value;
  w->arg[lane] = arg;
  x->arrived |= bit;
  HB_RELEASE(w);
  if (x->arrived == x->want) {
    HB_ACQUIRE(w);
    for (unsigned l = 0; l < 32; l++)
      if (mask >> l & 1) {
        w->result[l] = fn(w->value, w->arg, mask, l);
        kthread *o = &b->threads[base + l];
        if (o->state == KT_WARP) o->state = KT_RUN;
      }
    x->want = 0;
    g->progress = true;
  } else {
    t->state = KT_WARP;
    wait_turn(g, t);
    HB_ACQUIRE(w);
  }
  return w->result[lane];
}

SIM_EXPORT uint64_t __ncclsim_warp_sync(unsigned mask, uint64_t value, __ncclsim_warp_fn fn, uint64_t arg,
                                        const char *kind) {
  sim_k_engine_enter();
  uint64_t r = warp_sync(mask, value, fn, arg, kind);
  sim_k_engine_leave();
  return r;
}

static int yield_turn(const char *what) {
  kthread *t = current();
  if (!t) {
    sched_yield();
    return 0;
  }
  kgrid *g = sim_k_grid;
  t->waits_for = what;
  kthread *next = pick_next(g, ring_index(g, t));
  if (next != t) hand_to(g, t, next);
  t->waits_for = NULL;
  return 0;
}

SIM_EXPORT int __ncclsim_yield(const char *what) {
  sim_k_engine_enter();
  int r = yield_turn(what);
  sim_k_engine_leave();
  return r;
}

SIM_EXPORT void __ncclsim_tick(void) {
  sim_k_engine_enter();
  __ncclsim_ticks = SIM_K_TICKS;
  if (current()) yield_turn(NULL);
  sim_k_engine_leave();
}

/* ---- __shared__ ---- */

/* A host thread that calls device code holding __shared__ variables gets
 * one instance of each, as a block of one would. */
static _Thread_local kblock host_block;

static void *shared_var(const void *key, size_t size, size_t align) {
  kthread *t = current();
  kblock *b = t ? t->pub.block : &host_block;
  for (unsigned i = 0; i < b->nvars; i++)
    if (b->vars[i].key == key) return b->vars[i].ptr;
  if (b->nvars == b->vars_cap) {
    unsigned cap = b->vars_cap ? 2 * b->vars_cap : 8;
    kshared *v = sim_realloc(b->vars, cap * sizeof *v);
    if (!v) goto nomem;
    b->vars = v;
    b->vars_cap = cap;
  }
  void *p;
  if (!t) {
    p = sim_aligned_alloc(align < 16 ? 16 : align, size ? size : 1);
    if (!p) goto nomem;
    memset(p, 0, size);
  } else {
    if (align < 1) align = 1;
    size_t off = (b->smem_used + align - 1) / align * align;
    if (off + size > b->smem_cap) {
      char where[256];
      sim_k_where(b->grid, t, where, sizeof where);
      sim_k_abort(b->grid, cudaErrorInvalidValue,
                  "%s: its __shared__ variables need %zu bytes beside the launch's %zu bytes of dynamic shared memory, "
                  "over the block's %zu (cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) raises it)",
                  where, off + size - ((b->smem_dynamic + 15) & ~(size_t)15), b->smem_dynamic, b->smem_cap);
    }
    p = b->smem + off;
    b->smem_used = off + size;
  }
  b->vars[b->nvars].key = key;
  b->vars[b->nvars].ptr = p;
  b->nvars++;
  return p;
nomem:
  if (t) sim_k_abort(b->grid, cudaErrorMemoryAllocation, "no memory for a __shared__ variable's table");
  return NULL;
}

SIM_EXPORT void *__ncclsim_shared(const void *key, size_t size, size_t align) {
  sim_k_engine_enter();
  void *p = shared_var(key, size, align);
  sim_k_engine_leave();
  return p;
}

SIM_EXPORT void *__ncclsim_shared_dynamic(void) {
  sim_k_engine_enter();
  kthread *t = current();
  void *p = t ? t->pub.block->smem : NULL;
  sim_k_engine_leave();
  return p;
}
