/*
 * sim/cuda/mempool.c — stream-ordered memory: cudaMallocAsync,
 * cudaFreeAsync and memory pools.
 *
 * A pool holds blocks, each an allocation of the registry
 * (SIM_MEM_F_POOL) of a request rounded up to 256 bytes, in use or freed.
 * The host call decides at once, as the allocator's promise lets it: an
 * allocation is usable by whatever is enqueued after it, and a free marks
 * the block freed (SIM_MEM_F_FREED) at once, so that the buffer checks of
 * NCCL operations, copies and memsets refuse every use enqueued after the
 * free, and say so. The free's stream op records only that its stream
 * got there: from then on any stream may reuse the block
 * (cudaMemPoolReuseAllowOpportunistic), and the stream that freed it may
 * at once, being ordered after its own free. What a pool holds freed
 * beyond its release threshold goes at the next synchronize (stream,
 * event or device); cudaMemPoolTrimTo releases on demand. A released
 * block leaves the registry: a use of it after that is one of memory
 * CUDA does not know. Pools are the process's own, as CUDA's contexts
 * are, and pool objects are never unmapped (a destroyed one is reused),
 * so that checking a stale handle is a safe read.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

#define POOL_MAGIC 0x4d504f4cu
#define GRAIN 256 /* cudaMalloc's alignment: what a block is rounded to */

typedef enum { BLK_USED, BLK_FREEING, BLK_FREE } blk_state;

typedef struct blk {
  struct blk *next;
  struct CUmemPoolHandle_st *pool;
  void *ptr;
  size_t cap;  /* bytes reserved: the request, rounded */
  size_t size; /* bytes in use: the request (UsedMemCurrent counts it, as CUDA 13's does) */
  blk_state state;
  sim_stream *free_s; /* the stream its cudaFreeAsync named (BLK_FREEING, BLK_FREE) */
  uint64_t gen;       /* its frees so far: a free's stream op acts only on its own */
} blk;

struct CUmemPoolHandle_st {
  _Atomic uint32_t magic; /* POOL_MAGIC while the handle is valid */
  int device;
  bool is_default;
  bool destroyed; /* by cudaMemPoolDestroy, with blocks outstanding: goes with the last */
  size_t max_size;
  uint64_t threshold;
  int reuse[3]; /* cudaMemPoolReuse*: FollowEventDependencies, AllowOpportunistic, AllowInternalDependencies */
  uint64_t reserved, reserved_high, used, used_high;
  blk *blocks;
  struct CUmemPoolHandle_st *next_all;
};

static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER; /* everything below; taken before the registry's */
static struct CUmemPoolHandle_st *all_pools; /* live, destroyed with blocks out, and dead (for reuse) */
static cudaMemPool_t *defaults, *currents;   /* per device */
static int ndevices;
static _Atomic uint64_t releasable; /* bytes of BLK_FREE blocks: a synchronize with none takes no lock */

/* A forked child has none of its parent's pools (a CUDA context does not
 * survive fork); with ranks as processes their memory is the parent's. */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&pools_lock, NULL);
  all_pools = NULL;
  defaults = currents = NULL;
  ndevices = 0;
  atomic_store(&releasable, 0);
}
__attribute__((constructor)) static void mempool_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static bool device_ok(int device) { return device >= 0 && device < sim_device_count(); }

/* A pool object: a dead one again, or a new one. Caller holds pools_lock. */
static cudaMemPool_t pool_make(int device, bool is_default, size_t max_size) {
  cudaMemPool_t p = all_pools;
  while (p && (atomic_load(&p->magic) || p->destroyed)) p = p->next_all;
  if (!p) {
    p = sim_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->next_all = all_pools;
    all_pools = p;
  }
  struct CUmemPoolHandle_st *next = p->next_all;
  memset(p, 0, sizeof *p);
  p->next_all = next;
  p->device = device;
  p->is_default = is_default;
  p->max_size = max_size;
  p->reuse[0] = p->reuse[1] = p->reuse[2] = 1; /* CUDA's defaults */
  atomic_store(&p->magic, POOL_MAGIC);
  return p;
}

/* The device's default (or current) pool, made on first use. NULL out of
 * memory. Caller holds pools_lock. */
static cudaMemPool_t device_pool(int device, bool current) {
  if (device >= ndevices) { /* NCCLSIM_DEVICES may grow at run time */
    int n = sim_device_count() > device ? sim_device_count() : device + 1;
    cudaMemPool_t *d = sim_calloc((size_t)n, sizeof *d), *c = sim_calloc((size_t)n, sizeof *c);
    if (!d || !c) {
      sim_free(d);
      sim_free(c);
      return NULL;
    }
    if (ndevices) {
      memcpy(d, defaults, (size_t)ndevices * sizeof *d);
      memcpy(c, currents, (size_t)ndevices * sizeof *c);
    }
    sim_free(defaults);
    sim_free(currents);
    defaults = d;
    currents = c;
    ndevices = n;
  }
  if (!defaults[device]) defaults[device] = pool_make(device, true, 0);
  if (!currents[device]) currents[device] = defaults[device];
  return current ? currents[device] : defaults[device];
}

/* A live pool handle, found among the pools (never read through a bad
 * handle); NULL with a WARN otherwise. Caller holds pools_lock. */
static cudaMemPool_t pool_find(cudaMemPool_t h, const char *what) {
  for (cudaMemPool_t p = all_pools; p; p = p->next_all)
    if (p == h && atomic_load(&p->magic) == POOL_MAGIC) return p;
  SIM_WARN(SIM_ALLOC, "%s: %p is not a live memory pool", what, (void *)h);
  return NULL;
}

/* ---- blocks ---- */

typedef struct {
  size_t size; /* what the caller asked for, for bounds checks */
  blk *b;      /* a new block's own (NULL: a block handed out again) */
} hand_out_arg;

/* A block handed out, new or again (then a new allocation at the same
 * address). */
static sim_mem_edit_result hand_out(sim_alloc_info *a, void *arg) {
  hand_out_arg *h = arg;
  a->size = h->size;
  a->flags &= ~(unsigned)SIM_MEM_F_FREED;
  a->freed_on = NULL;
  if (!h->b) return SIM_MEM_RENEWED;
  a->flags |= SIM_MEM_F_POOL;
  a->owner = h->b;
  return SIM_MEM_CHANGED;
}

typedef struct {
  uint64_t serial; /* the allocation meant (0: any) */
  void *freed_on;  /* set: mark it freed by this; NULL with undo: take the mark back */
  bool undo;
} mark_arg;

static sim_mem_edit_result mark_freed(sim_alloc_info *a, void *arg) {
  mark_arg *m = arg;
  if (m->serial && a->serial != m->serial) return SIM_MEM_KEEP;
  if (m->undo) a->flags &= ~(unsigned)SIM_MEM_F_FREED;
  else a->flags |= SIM_MEM_F_FREED;
  a->freed_on = m->undo ? NULL : m->freed_on;
  return SIM_MEM_CHANGED;
}

static void count_used(cudaMemPool_t p, size_t size) {
  p->used += size;
  if (p->used > p->used_high) p->used_high = p->used;
}

/* Releases b, a BLK_FREE block, to the system. Caller holds pools_lock. */
static void blk_release(blk *b) {
  cudaMemPool_t p = b->pool;
  for (blk **pp = &p->blocks; *pp; pp = &(*pp)->next)
    if (*pp == b) {
      *pp = b->next;
      break;
    }
  p->reserved -= b->cap;
  atomic_fetch_sub(&releasable, b->cap);
  sim_mem_free(b->ptr, SIM_MEM_DEVICE);
  sim_free(b);
}

/* Releases p's free blocks until it reserves at most `keep` bytes. Caller
 * holds pools_lock. */
static void trim(cudaMemPool_t p, uint64_t keep) {
  for (blk *b = p->blocks, *next; b && p->reserved > keep; b = next) {
    next = b->next;
    if (b->state == BLK_FREE) blk_release(b);
  }
}

/* A destroyed pool goes once nothing of it is out. Caller holds pools_lock. */
static void maybe_finish(cudaMemPool_t p) {
  if (!p->destroyed) return;
  for (blk *b = p->blocks; b; b = b->next)
    if (b->state != BLK_FREE) return;
  trim(p, 0);
  p->destroyed = false; /* dead: pool_make may reuse it */
}

void sim_mempool_synced(void) {
  if (!atomic_load_explicit(&releasable, memory_order_relaxed)) return;
  sim_mutex_lock(&pools_lock);
  for (cudaMemPool_t p = all_pools; p; p = p->next_all)
    if (p->reserved > p->threshold) trim(p, p->threshold);
  pthread_mutex_unlock(&pools_lock);
}

/* ---- allocation ---- */

static cudaError_t pool_alloc(cudaMemPool_t p, void **out, size_t size, sim_stream *s, const char *what) {
  if (size == 0) { /* assumed as cudaMalloc(0) answers; to be measured on a GPU */
    *out = NULL;
    return cudaSuccess;
  }
  size_t cap = (size + GRAIN - 1) / GRAIN * GRAIN;
  if (cap < size) {
    SIM_WARN(SIM_ALLOC, "%s: %zu bytes: out of memory", what, size);
    return cudaErrorMemoryAllocation;
  }
  /* A freed block of the same size: the stream that freed it comes after
   * its own free; another stream only once the free has run. */
  for (blk *b = p->blocks; b; b = b->next)
    if (b->cap == cap && b->state != BLK_USED && (b->free_s == s || (b->state == BLK_FREE && p->reuse[1]))) {
      if (b->state == BLK_FREE) atomic_fetch_sub(&releasable, cap);
      b->state = BLK_USED;
      b->free_s = NULL;
      sim_mem_edit(b->ptr, hand_out, &(hand_out_arg){size, NULL});
      b->size = size;
      count_used(p, size);
      *out = b->ptr;
      return cudaSuccess;
    }
  if (p->max_size && (cap > p->max_size || p->reserved > p->max_size - cap)) {
    trim(p, cap > p->max_size ? 0 : p->max_size - cap);
    if (cap > p->max_size || p->reserved > p->max_size - cap) {
      SIM_WARN(SIM_ALLOC, "%s: %zu bytes: pool %p holds %llu of its maxSize %zu bytes", what, size, (void *)p,
               (unsigned long long)p->reserved, p->max_size);
      return cudaErrorMemoryAllocation;
    }
  }
  blk *b = sim_calloc(1, sizeof *b);
  if (!b) return cudaErrorMemoryAllocation;
  void *ptr;
  cudaError_t err = sim_mem_alloc(&ptr, cap, p->device, SIM_MEM_DEVICE, GRAIN);
  if (err != cudaSuccess) { /* what the device's pools hold freed goes first, as CUDA's allocator would */
    for (cudaMemPool_t q = all_pools; q; q = q->next_all)
      if (q->device == p->device) trim(q, 0);
    err = sim_mem_alloc(&ptr, cap, p->device, SIM_MEM_DEVICE, GRAIN);
  }
  if (err != cudaSuccess) {
    sim_free(b);
    return err;
  }
  *b = (blk){.next = p->blocks, .pool = p, .ptr = ptr, .cap = cap, .size = size, .state = BLK_USED};
  sim_mem_edit(ptr, hand_out, &(hand_out_arg){size, b});
  p->blocks = b;
  p->reserved += cap;
  if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
  count_used(p, size);
  *out = ptr;
  return cudaSuccess;
}

static cudaError_t malloc_async(void **out, size_t size, cudaMemPool_t h, bool current, cudaStream_t sh,
                                const char *what) {
  if (!out) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(sh, &err);
  if (!s) return sim_cuda_error(err);
  if (sim_stream_capturing(s)) { /* an alloc node, on the pool's device (graph_mem.c) */
    int device = sim_stream_device(s);
    if (!current) {
      sim_mutex_lock(&pools_lock);
      cudaMemPool_t p = pool_find(h, what);
      if (p) device = p->device;
      pthread_mutex_unlock(&pools_lock);
      if (!p) return sim_cuda_error(cudaErrorInvalidValue);
    }
    return sim_cuda_error(sim_graph_mem_capture_alloc(s, out, size, device, what));
  }
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = current ? device_pool(sim_stream_device(s), true) : pool_find(h, what);
  err = !p ? (current ? cudaErrorMemoryAllocation : cudaErrorInvalidValue) : pool_alloc(p, out, size, s, what);
  pthread_mutex_unlock(&pools_lock);
  if (err == cudaSuccess) SIM_TRACE(SIM_ALLOC, "%s %p %zu bytes from pool %p", what, *out, size, (void *)p);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream) {
  return malloc_async(devPtr, size, NULL, true, hStream, "cudaMallocAsync");
}

SIM_EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return malloc_async(ptr, size, memPool, false, stream, "cudaMallocFromPoolAsync");
}

/* ---- frees ---- */

typedef struct {
  sim_op op;
  blk *b; /* NULL: cudaMalloc memory, freed here */
  uint64_t gen;
  void *ptr;
} free_op;

static cudaError_t free_run(sim_op *op, cudaError_t err) {
  (void)err; /* freed even on a failed stream: the free was the program's */
  free_op *f = (free_op *)op;
  if (!f->b) {
    sim_mem_free(f->ptr, SIM_MEM_DEVICE);
    return cudaSuccess;
  }
  sim_mutex_lock(&pools_lock);
  blk *b = f->b;
  if (b->gen == f->gen && b->state == BLK_FREEING) { /* not handed out again meanwhile */
    b->state = BLK_FREE;
    atomic_fetch_add(&releasable, b->cap);
    maybe_finish(b->pool);
  }
  pthread_mutex_unlock(&pools_lock);
  return cudaSuccess;
}

static void op_free(sim_op *op) { sim_free(op); }

/* The allocation of this process based at p that may be freed, in *a;
 * cudaErrorInvalidValue, with a WARN, otherwise. */
static cudaError_t freeable(void *p, sim_alloc_info *a, const char *what) {
  if (!sim_mem_lookup(p, a) || a->base != p || a->kind != SIM_MEM_DEVICE || a->pid != (int)getpid() ||
      (a->flags & SIM_MEM_F_ORPHAN)) {
    SIM_WARN(SIM_ALLOC, "%s: %p is not the start of this process's cudaMalloc or cudaMallocAsync memory", what, p);
    return cudaErrorInvalidValue;
  }
  if (a->flags & SIM_MEM_F_FREED) {
    if (a->freed_on == SIM_FREED_BY_CUDAFREE)
      SIM_WARN(SIM_ALLOC, "%s: %p was freed already, by cudaFree", what, p);
    else
      SIM_WARN(SIM_ALLOC, "%s: %p was freed already, by cudaFreeAsync on stream %p", what, p, a->freed_on);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream) {
  if (!devPtr) return cudaSuccess; /* nothing, as free(NULL) (CUDA 13 on an H100, measured) */
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(hStream, &err);
  if (!s) return sim_cuda_error(err);
  sim_alloc_info a;
  bool graph_mem = sim_mem_lookup(devPtr, &a) && (a.flags & SIM_MEM_F_GRAPH);
  /* In a capture, a free node of a graph's allocation (graph_mem.c); of
   * other memory CUDA documents nothing (cudaGraphAddMemFreeNode refuses
   * it), and ncclsim refuses it as it did. */
  if (sim_stream_capturing(s))
    return sim_cuda_error(graph_mem ? sim_graph_mem_capture_free(s, devPtr)
                                    : sim_capture_refuse(s, "cudaFreeAsync",
                                                         "ncclsim makes free nodes only of graph allocations"));
  if (graph_mem) return sim_cuda_error(sim_graph_mem_free(devPtr, s, hStream, "cudaFreeAsync"));
  free_op *f = sim_calloc(1, sizeof *f);
  if (!f) return sim_cuda_error(cudaErrorMemoryAllocation);
  f->op.run = free_run;
  f->op.release = op_free;
  f->op.what = "cudaFreeAsync";
  f->op.unbounded = true; /* the allocator's bookkeeping, not work the GPU queues */
  f->ptr = devPtr;
  sim_mutex_lock(&pools_lock);
  if ((err = freeable(devPtr, &a, "cudaFreeAsync")) != cudaSuccess) {
    pthread_mutex_unlock(&pools_lock);
    sim_free(f);
    return sim_cuda_error(err);
  }
  blk *b = (a.flags & SIM_MEM_F_POOL) ? a.owner : NULL;
  blk_state was = BLK_USED;
  if (b) { /* valid: a block leaves its entry only under pools_lock */
    was = b->state;
    b->state = BLK_FREEING;
    b->free_s = s;
    f->b = b;
    f->gen = ++b->gen;
    b->pool->used -= b->size;
  }
  sim_mem_edit(devPtr, mark_freed, &(mark_arg){a.serial, hStream, false});
  /* Enqueued under the lock, so that nothing reuses the block before the
   * free is in its stream; an unbounded op never waits for room. */
  err = sim_stream_enqueue(s, &f->op);
  if (err != cudaSuccess) {
    if (b) {
      b->state = was;
      b->free_s = NULL;
      b->pool->used += b->size;
    }
    sim_mem_edit(devPtr, mark_freed, &(mark_arg){a.serial, NULL, true});
    sim_free(f);
  }
  pthread_mutex_unlock(&pools_lock);
  return sim_cuda_error(err);
}

/* cudaFree of pool memory (or of memory freed in stream order already):
 * back to its pool at once, as CUDA documents, without synchronizing. */
cudaError_t sim_mempool_free_now(void *p) {
  sim_alloc_info a;
  if (sim_mem_lookup(p, &a) && (a.flags & SIM_MEM_F_GRAPH)) return sim_graph_mem_free(p, NULL, NULL, "cudaFree");
  sim_mutex_lock(&pools_lock);
  cudaError_t err = freeable(p, &a, "cudaFree");
  blk *b = err == cudaSuccess ? a.owner : NULL;
  /* cudaFree comes here only for pool memory or memory freed already,
   * which freeable refused. */
  if (NEVER(err == cudaSuccess && !b)) err = cudaErrorInvalidValue;
  if (b) {
    b->state = BLK_FREE;
    b->free_s = NULL;
    b->gen++;
    b->pool->used -= b->size;
    atomic_fetch_add(&releasable, b->cap);
    sim_mem_edit(p, mark_freed, &(mark_arg){a.serial, SIM_FREED_BY_CUDAFREE, false});
    maybe_finish(b->pool);
  }
  pthread_mutex_unlock(&pools_lock);
  return err;
}

void sim_mempool_report_use(const sim_alloc_info *a, const void *p, const char *what, const char *arg) {
  if (a->flags & SIM_MEM_F_GRAPH) {
    SIM_WARN(SIM_ALLOC,
             "%s%s%s: %p lies in the buffer %p (%zu bytes, device %d, a graph's alloc node's), which %s before this "
             "call; only what is enqueued after its alloc node ran and before it is freed may use the buffer "
             "(ncclsim checks this; on a GPU it is undefined behaviour)",
             what, *arg ? " " : "", arg, p, a->base, a->size, a->device,
             a->freed_on == SIM_FREED_NOT_ALLOCATED ? "no graph holds any more (its graphs went)"
             : a->freed_on == SIM_FREED_BY_FREE_NODE ? "a graph's free node freed"
             : a->freed_on == SIM_FREED_BY_CUDAFREE  ? "cudaFree freed"
                                                     : "cudaFreeAsync freed");
    return;
  }
  char freer[96];
  if (a->freed_on == SIM_FREED_BY_CUDAFREE) snprintf(freer, sizeof freer, "cudaFree");
  else snprintf(freer, sizeof freer, "cudaFreeAsync on stream %p", a->freed_on);
  SIM_WARN(SIM_ALLOC,
           "%s%s%s: %p lies in the buffer %p (%zu bytes, device %d, from %s), which %s freed before this call; "
           "nothing enqueued after a free may use the buffer (ncclsim checks this; on a GPU it is undefined "
           "behaviour)",
           what, *arg ? " " : "", arg, p, a->base, a->size, a->device,
           (a->flags & SIM_MEM_F_POOL) ? "cudaMallocAsync" : "cudaMalloc", freer);
}

/* ---- pools ---- */

SIM_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *props) {
  if (!memPool || !props) return sim_cuda_error(cudaErrorInvalidValue);
  static const unsigned char zero[sizeof props->reserved];
  cudaError_t err = cudaSuccess;
  const char *why = NULL;
  if (props->allocType != cudaMemAllocationTypePinned) why = "allocType is not cudaMemAllocationTypePinned";
  else if (props->location.type == cudaMemLocationTypeHost || props->location.type == cudaMemLocationTypeHostNuma)
    why = "ncclsim has no host memory pools", err = cudaErrorNotSupported;
  else if (props->location.type != cudaMemLocationTypeDevice) why = "location.type is not a device";
  else if (!device_ok(props->location.id)) why = "location.id is not a device";
  else if (props->handleTypes & ~(unsigned)(cudaMemHandleTypePosixFileDescriptor | cudaMemHandleTypeWin32 |
                                            cudaMemHandleTypeWin32Kmt | cudaMemHandleTypeFabric))
    why = "handleTypes holds unknown bits";
  else if (props->handleTypes & ~(unsigned)cudaMemHandleTypePosixFileDescriptor)
    why = "Windows and fabric handles are not supported here", err = cudaErrorNotSupported;
  else if (props->win32SecurityAttributes) why = "win32SecurityAttributes is not NULL";
  else if (props->usage & ~(unsigned)cudaMemPoolCreateUsageHwDecompress) why = "usage holds unknown bits";
  else if (props->usage) why = "no hardware decompression here", err = cudaErrorNotSupported;
  else if (memcmp(props->reserved, zero, sizeof zero)) why = "reserved is not zero";
  if (why) {
    SIM_WARN(SIM_ALLOC, "cudaMemPoolCreate: %s", why);
    return sim_cuda_error(err == cudaSuccess ? cudaErrorInvalidValue : err);
  }
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = pool_make(props->location.id, false, props->maxSize);
  pthread_mutex_unlock(&pools_lock);
  if (!p) return sim_cuda_error(cudaErrorMemoryAllocation);
  *memPool = p;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = pool_find(memPool, "cudaMemPoolDestroy");
  cudaError_t err = !p ? cudaErrorInvalidValue : p->is_default ? cudaErrorInvalidValue : cudaSuccess;
  if (p && p->is_default) SIM_WARN(SIM_ALLOC, "cudaMemPoolDestroy: %p is device %d's default pool", (void *)p, p->device);
  if (err == cudaSuccess) {
    if (p->device < ndevices && currents[p->device] == p) currents[p->device] = defaults[p->device];
    atomic_store(&p->magic, 0);
    p->destroyed = true;
    trim(p, 0);
    maybe_finish(p);
  }
  pthread_mutex_unlock(&pools_lock);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = pool_find(memPool, "cudaMemPoolTrimTo");
  if (p) trim(p, minBytesToKeep);
  pthread_mutex_unlock(&pools_lock);
  return p ? cudaSuccess : sim_cuda_error(cudaErrorInvalidValue);
}

SIM_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value) {
  if (!value) return sim_cuda_error(cudaErrorInvalidValue);
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = pool_find(memPool, "cudaMemPoolSetAttribute");
  cudaError_t err = p ? cudaSuccess : cudaErrorInvalidValue;
  if (p) switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: p->reuse[attr - 1] = *(int *)value; break;
    case cudaMemPoolAttrReleaseThreshold: p->threshold = *(unsigned long long *)value; break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh: /* a reset, to what is current */
      if (*(unsigned long long *)value) {
        SIM_WARN(SIM_ALLOC, "cudaMemPoolSetAttribute: a high watermark can only be reset to 0, not %llu",
                 *(unsigned long long *)value);
        err = cudaErrorInvalidValue;
      } else if (attr == cudaMemPoolAttrReservedMemHigh) p->reserved_high = p->reserved;
      else p->used_high = p->used;
      break;
    default:
      SIM_WARN(SIM_ALLOC, "cudaMemPoolSetAttribute: attribute %d cannot be set", (int)attr);
      err = cudaErrorInvalidValue;
  }
  pthread_mutex_unlock(&pools_lock);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value) {
  if (!value) return sim_cuda_error(cudaErrorInvalidValue);
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = pool_find(memPool, "cudaMemPoolGetAttribute");
  cudaError_t err = p ? cudaSuccess : cudaErrorInvalidValue;
  uint64_t v = 0;
  if (p) switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies:
    case cudaMemPoolReuseAllowOpportunistic:
    case cudaMemPoolReuseAllowInternalDependencies: *(int *)value = p->reuse[attr - 1]; break;
    case cudaMemPoolAttrReleaseThreshold: v = p->threshold; break;
    case cudaMemPoolAttrReservedMemCurrent: v = p->reserved; break;
    case cudaMemPoolAttrReservedMemHigh: v = p->reserved_high; break;
    case cudaMemPoolAttrUsedMemCurrent: v = p->used; break;
    case cudaMemPoolAttrUsedMemHigh: v = p->used_high; break;
    default:
      SIM_WARN(SIM_ALLOC, "cudaMemPoolGetAttribute: attribute %d is not a cudaMemPoolAttr", (int)attr);
      err = cudaErrorInvalidValue;
  }
  if (p && err == cudaSuccess && attr >= cudaMemPoolAttrReleaseThreshold) *(unsigned long long *)value = v;
  pthread_mutex_unlock(&pools_lock);
  return sim_cuda_error(err);
}

static cudaError_t get_pool(cudaMemPool_t *memPool, int device, bool current) {
  if (!memPool) return sim_cuda_error(cudaErrorInvalidValue);
  if (!device_ok(device)) return sim_cuda_error(cudaErrorInvalidDevice);
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = device_pool(device, current);
  pthread_mutex_unlock(&pools_lock);
  if (!p) return sim_cuda_error(cudaErrorMemoryAllocation);
  *memPool = p;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device) {
  return get_pool(memPool, device, false);
}

SIM_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device) {
  return get_pool(memPool, device, true);
}

SIM_EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  if (!device_ok(device)) return sim_cuda_error(cudaErrorInvalidDevice);
  sim_mutex_lock(&pools_lock);
  cudaMemPool_t p = pool_find(memPool, "cudaDeviceSetMemPool");
  cudaError_t err = !p ? cudaErrorInvalidValue : device_pool(device, true) ? cudaSuccess : cudaErrorMemoryAllocation;
  if (err == cudaSuccess && p->device != device) {
    SIM_WARN(SIM_ALLOC, "cudaDeviceSetMemPool: pool %p is device %d's, not device %d's", (void *)p, p->device, device);
    err = cudaErrorInvalidValue;
  }
  if (err == cudaSuccess) currents[device] = p;
  pthread_mutex_unlock(&pools_lock);
  return sim_cuda_error(err);
}

void sim_mempool_reset_device(int device) {
  sim_mutex_lock(&pools_lock);
  if (device < ndevices) currents[device] = defaults[device];
  pthread_mutex_unlock(&pools_lock);
}
