/*
 * sim/kernel/grid.c — a launch, run by its stream's worker.
 *
 * The blocks of a launch run one after another, in the order of their
 * index (x fastest): CUDA guarantees that blocks may run in any order, in
 * parallel or in series, and nothing more, so a kernel that passes here
 * does not rely on two blocks running at once. A cooperative launch
 * guarantees that all its blocks are resident: they all run at once, their
 * threads in one ring, and grid.sync() is a barrier of the whole grid.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "kernel_internal.h"

static void ring_of(kgrid *g, unsigned nblocks) {
  unsigned per = g->blocks[0].nthreads, k = 0;
  for (unsigned b = 0; b < nblocks; b++) {
    g->blocks[b].ring_base = k;
    for (unsigned i = 0; i < per; i++) g->ring[k++] = &g->blocks[b].threads[i];
  }
  g->ring_n = k;
  g->live = k;
}

static uint3 block_at(const __ncclsim_launch *l, unsigned long long i) {
  uint3 b;
  b.x = (unsigned)(i % l->grid.x);
  b.y = (unsigned)(i / l->grid.x % l->grid.y);
  b.z = (unsigned)(i / ((unsigned long long)l->grid.x * l->grid.y));
  return b;
}

/* The worker's grid, its one resident block and its ring, kept from one
 * launch to the next (a cooperative launch's blocks and ring are its own). */
static _Thread_local struct {
  kgrid g;
  kblock one;
  kthread **ring;
  unsigned ring_cap;
} mine;

/* What the worker kept goes with it. */
static pthread_key_t mine_key;
static pthread_once_t mine_once = PTHREAD_ONCE_INIT;
static void mine_gone(void *arg) {
  (void)arg;
  sim_free(mine.ring);
  memset(&mine, 0, sizeof mine);
}
static void mine_key_make(void) { pthread_key_create(&mine_key, mine_gone); }

/* Runs the blocks; a fault leaves g->err set. */
static void run_blocks(kgrid *g) {
  __ncclsim_launch *l = g->l;
  unsigned nthreads = l->block.x * l->block.y * l->block.z;
  unsigned nres = l->cooperative ? (unsigned)g->nblocks : 1;
  if (l->cooperative) {
    g->blocks = sim_calloc(nres, sizeof *g->blocks);
    g->ring = sim_calloc((size_t)nres * nthreads, sizeof *g->ring);
  } else {
    if (mine.ring_cap < nthreads) {
      kthread **r = sim_realloc(mine.ring, nthreads * sizeof *r);
      if (r) {
        mine.ring = r;
        mine.ring_cap = nthreads;
      }
    }
    g->blocks = &mine.one;
    g->ring = mine.ring_cap >= nthreads ? mine.ring : NULL;
  }
  if (!g->blocks || !g->ring) {
    sim_k_fault(g, cudaErrorMemoryAllocation, "no memory for %u resident blocks of %u threads", nres, nthreads);
    return;
  }
  if (l->cooperative) {
    for (unsigned b = 0; b < nres; b++) {
      if (!sim_k_block_init(g, &g->blocks[b], block_at(l, b), true)) {
        sim_k_fault(g, cudaErrorMemoryAllocation, "no memory for block %u of a cooperative launch", b);
        return;
      }
      g->nresident = b + 1;
    }
    g->blocks_started = g->nblocks;
    ring_of(g, nres);
    sim_k_ring_run(g);
    return;
  }
  /* One block at a time, in index order: the residency a launch that is
   * not cooperative is promised. */
  while (g->blocks_started < g->nblocks && g->err == cudaSuccess) {
    unsigned long long i = g->blocks_started;
    if (!sim_k_block_init(g, &g->blocks[0], block_at(l, i), false)) {
      sim_k_fault(g, cudaErrorMemoryAllocation, "no memory for block %llu", i);
      return;
    }
    g->nresident = 1;
    g->blocks_started = i + 1;
    ring_of(g, 1);
    sim_k_ring_run(g);
    sim_k_block_fini(&g->blocks[0]);
    g->nresident = 0;
  }
}

static _Atomic(sim_k_trace_fn) trace_fn;

void sim_k_trace_hook(sim_k_trace_fn fn) { atomic_store(&trace_fn, fn); }

/* The timeline's record of a run that ended (sim_k_trace_hook). */
static void traced(sim_k_trace_fn fn, const kgrid *g, uint64_t t0, cudaError_t err) {
  uint64_t t1 = sim_ticks();
  const __ncclsim_launch *l = g->l;
  char desc[192];
  snprintf(desc, sizeof desc, "grid (%u,%u,%u), block (%u,%u,%u), %zu bytes of dynamic shared memory, launched at %s:%d%s%s",
           l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, l->smem, l->file ? l->file : "?",
           l->line, err != cudaSuccess ? ": " : "", err != cudaSuccess ? cudaGetErrorName(err) : "");
  fn(g->device, g->pretty ? g->pretty : l->name ? l->name : "kernel", t0, t1, desc);
}

cudaError_t sim_k_run(__ncclsim_launch *l, int device) {
  sim_k_trace_fn tfn = atomic_load_explicit(&trace_fn, memory_order_acquire);
  uint64_t t0 = tfn ? sim_ticks() : 0;
  kgrid *g = &mine.g;
  if (!mine.ring_cap) { /* the worker's first launch */
    pthread_once(&mine_once, mine_key_make);
    pthread_setspecific(mine_key, &mine);
  }
  memset(g, 0, offsetof(kgrid, why));
  g->why[0] = 0;
  g->jmp_armed = false;
  g->l = l;
  g->device = device;
  g->nblocks = (unsigned long long)l->grid.x * l->grid.y * l->grid.z;
  kentry *k = sim_k_lookup(l->kernel, false);
  g->pretty = k ? K_GET(k, pretty) : NULL;
  sim_k_tls_bind(g);
  g->home = sim_fiber_home();
  if (!g->home) return cudaErrorMemoryAllocation;
  sim_fiber_tls_ready();
  sim_k_signals_install();
  blockDim = (uint3){l->block.x, l->block.y, l->block.z};
  gridDim = (uint3){l->grid.x, l->grid.y, l->grid.z};
  sim_k_grid = g;
  /* A fault signal in a kernel thread (fault.c) comes back here. Its
   * handler leaves the signal mask as it was (SA_NODEFER): no mask to
   * save, and no system call. */
  if (sigsetjmp(g->jmp, 0) == 0) {
    g->jmp_armed = true;
    run_blocks(g);
  } else {
    sim_k_engine_reset(); /* it left the ring's engine code */
  }
  g->jmp_armed = false;
  /* First: freeing the threads a fault abandoned orders what they did
   * before what comes next, for ThreadSanitizer (fiber.c). */
  for (unsigned b = 0; b < g->nresident; b++) sim_k_block_fini(&g->blocks[b]);
  sim_k_grid = NULL;
  blockDim = (uint3){1, 1, 1};
  gridDim = (uint3){1, 1, 1};
  if (l->cooperative) {
    sim_free(g->blocks);
    sim_free(g->ring);
  }
  cudaError_t err = g->err;
  if (tfn) traced(tfn, g, t0, err);
  if (err != cudaSuccess) {
    char where[256];
    sim_k_where(g, NULL, where, sizeof where);
    /* Always said: a GPU's error code alone does not tell where. */
    fprintf(stderr, "ncclsim: device %d: %s (launched at %s:%d): %s: %s\n", device, where,
            l->file ? l->file : "?", l->line, cudaGetErrorName(err), g->why);
    SIM_WARN(SIM_KERNEL, "device %d: %s: %s: %s", device, where, cudaGetErrorName(err), g->why);
  }
  return err;
}
