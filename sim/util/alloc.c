/*
 * sim/util/alloc.c — the one allocation hook of the simulator.
 *
 * Everything the simulator allocates, its own state and simulated device
 * memory, comes through here, so a test can make the Nth allocation fail
 * (SQLite-style fault loop) with ncclsimAllocFailAfter().
 */
#include "config.h" /* _GNU_SOURCE: sched_getcpu */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../sim.h"

/* Allocations are counted for ncclsimAllocFailAfter's answer. While no
 * failure is armed, in a counter per CPU: one counter, which every rank's
 * host thread bumped at each enqueue (an op's pool block), bounced between
 * their cores and was the largest item of an ncclSend's host time (9% of
 * bench/signal_latency's CPU samples). Armed, in one counter, so that "the
 * Nth allocation" is exact across threads. */
enum { SHARDS = 64 };
static struct {
  _Alignas(64) _Atomic uint64_t n;
} shard[SHARDS];
static _Atomic uint64_t calls;   /* allocations since arming, while armed */
static _Atomic uint64_t fail_at; /* fail when calls reaches this; 0: never */

static bool should_fail(void) {
  uint64_t at = atomic_load_explicit(&fail_at, memory_order_relaxed);
  if (!at) {
    int cpu = sched_getcpu(); /* the rseq area: no system call */
    atomic_fetch_add_explicit(&shard[(unsigned)(cpu < 0 ? 0 : cpu) % SHARDS].n, 1, memory_order_relaxed);
    return false;
  }
  uint64_t n = atomic_fetch_add(&calls, 1) + 1;
  if (n == at) {
    SIM_INFO(SIM_ALLOC, "injected failure of allocation %llu", (unsigned long long)n);
    return true;
  }
  return false;
}

bool sim_alloc_fails(void) { return should_fail(); }

/* With ranks as processes (util/shm.c) every block comes from the shared
 * arena; the mode is fixed at the first allocation. */
void *sim_malloc(size_t size) {
  if (should_fail()) return NULL;
  return sim_shm_on() ? sim_shm_alloc(16, size) : malloc(size ? size : 1);
}

void *sim_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  if (!sim_shm_on()) return calloc(n ? n : 1, size ? size : 1);
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = sim_shm_alloc(16, n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

void *sim_realloc(void *p, size_t size) {
  if (should_fail()) return NULL;
  if (!sim_shm_on()) return realloc(p, size ? size : 1);
  void *q = sim_shm_alloc(16, size);
  if (q && p) {
    size_t old = sim_shm_usable(p);
    memcpy(q, p, old < size ? old : size);
    sim_shm_free(p);
  }
  return q;
}

void *sim_aligned_alloc(size_t align, size_t size) {
  if (should_fail()) return NULL;
  if (sim_shm_on()) return sim_shm_alloc(align, size);
  void *p = NULL;
  if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size ? size : 1)) return NULL;
  return p;
}

void sim_free(void *p) {
  if (p && sim_shm_contains(p)) sim_shm_free(p);
  else free(p);
}

char *sim_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = sim_malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

SIM_EXPORT uint64_t ncclsimAllocFailAfter(uint64_t n) {
  uint64_t made = atomic_exchange(&calls, 0);
  for (int i = 0; i < SHARDS; i++) made += atomic_exchange_explicit(&shard[i].n, 0, memory_order_relaxed);
  atomic_store(&fail_at, n);
  return made;
}
