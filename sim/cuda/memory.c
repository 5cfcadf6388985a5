/*
 * sim/cuda/memory.c — simulated device memory and the allocation registry.
 *
 * Device memory is host memory tagged with its device, so a buffer on the
 * wrong device is detectable and every range can be bounds-checked, which
 * real CUDA cannot do. The registry is a sorted array searched by address
 * under a read-write lock: lookups (every NCCL call) far outnumber
 * allocations. Each thread keeps its last few hits, valid until the next
 * free anywhere: a lookup then takes no lock (a read lock is a write to
 * the lock's line, which the stream workers of every rank would bounce
 * between them at every put).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

#define DEVICE_ALIGN 256 /* cudaMalloc's alignment */

/* The registry is shared by the processes of a job (util/shm.c), so that
 * a rank can check a peer's memory; each entry names its process, which
 * alone may free it and count it (ncclsimMemStats). */
typedef struct {
  pthread_rwlock_t lock;
  sim_alloc_info *allocs; /* sorted by base */
  size_t nallocs, cap;
  size_t *dev_used; /* bytes per device, ndev long */
  size_t ndev;
  _Atomic uint64_t frees; /* bumped under the write lock by every free or edit: the threads' hits expire */
  uint64_t serials;       /* the last allocation's serial */
} mem_registry;

static void registry_init(void *p) { sim_rwlock_init(&((mem_registry *)p)->lock); }

static _Atomic(mem_registry *) reg; /* the same block for the whole process, forks included */

static mem_registry *registry(void) {
  mem_registry *r = atomic_load_explicit(&reg, memory_order_acquire);
  if (r) return r;
  r = sim_shared(SIM_SHARED_MEM, sizeof *r, registry_init);
  if (!r) abort(); /* no memory at all */
  atomic_store_explicit(&reg, r, memory_order_release);
  return r;
}
#define R (registry())

/* Index of the first allocation whose base is > p. Caller holds lock. */
static size_t upper_bound(uintptr_t p) {
  size_t lo = 0, hi = R->nallocs;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if ((uintptr_t)R->allocs[mid].base <= p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The allocation containing p, or NULL. Caller holds lock. A zero-size
 * allocation contains only its base. */
static sim_alloc_info *find(const void *p) {
  size_t i = upper_bound((uintptr_t)p);
  if (i == 0) return NULL;
  sim_alloc_info *a = &R->allocs[i - 1];
  uintptr_t off = (uintptr_t)p - (uintptr_t)a->base;
  return off < a->size || off == 0 ? a : NULL;
}

cudaError_t sim_mem_alloc(void **out, size_t size, int device, sim_mem_kind kind, size_t align) {
  size_t limit = (size_t)sim_param(SIM_P_DEVICE_MEM);
  pthread_rwlock_wrlock(&R->lock);
  if (device >= 0 && (size_t)device >= R->ndev) { /* NCCLSIM_DEVICES may grow at run time */
    size_t n = (size_t)device + 1 > (size_t)sim_device_count() ? (size_t)device + 1 : (size_t)sim_device_count();
    size_t *d = sim_realloc(R->dev_used, n * sizeof *d);
    if (!d) {
      pthread_rwlock_unlock(&R->lock);
      return cudaErrorMemoryAllocation;
    }
    memset(d + R->ndev, 0, (n - R->ndev) * sizeof *d);
    R->dev_used = d;
    R->ndev = n;
  }
  if (device >= 0 && (size > limit || R->dev_used[device] > limit - size)) {
    size_t used = R->dev_used[device]; /* read under the lock */
    pthread_rwlock_unlock(&R->lock);
    SIM_WARN(SIM_ALLOC, "device %d is out of memory: %zu bytes asked, %zu of %zu in use", device, size,
             used, limit);
    return cudaErrorMemoryAllocation;
  }
  if (R->nallocs == R->cap) {
    size_t ncap = R->cap ? R->cap * 2 : 64;
    sim_alloc_info *n = sim_realloc(R->allocs, ncap * sizeof *n);
    if (!n) {
      pthread_rwlock_unlock(&R->lock);
      return cudaErrorMemoryAllocation;
    }
    R->allocs = n;
    R->cap = ncap;
  }
  void *p = sim_aligned_alloc(align < DEVICE_ALIGN ? DEVICE_ALIGN : align, size);
  if (!p) {
    pthread_rwlock_unlock(&R->lock);
    return cudaErrorMemoryAllocation;
  }
  size_t i = upper_bound((uintptr_t)p);
  memmove(&R->allocs[i + 1], &R->allocs[i], (R->nallocs - i) * sizeof *R->allocs);
  R->allocs[i] = (sim_alloc_info){.base = p, .size = size, .device = device, .kind = kind, .pid = (int)getpid(),
                                  .serial = ++R->serials};
  R->nallocs++;
  if (device >= 0) R->dev_used[device] += size;
  pthread_rwlock_unlock(&R->lock);
  SIM_TRACE(SIM_ALLOC, "alloc %p %zu bytes on device %d kind %d", p, size, device, (int)kind);
  *out = p;
  return cudaSuccess;
}

cudaError_t sim_mem_free(void *p, sim_mem_kind kind) {
  pthread_rwlock_wrlock(&R->lock);
  size_t i = upper_bound((uintptr_t)p);
  if (i == 0 || R->allocs[i - 1].base != p || R->allocs[i - 1].kind != kind) {
    pthread_rwlock_unlock(&R->lock);
    SIM_WARN(SIM_ALLOC, "free of %p: not the start of a live allocation of this kind", p);
    return cudaErrorInvalidValue;
  }
  if (R->allocs[i - 1].pid != (int)getpid()) { /* as in CUDA, memory is its process's */
    int owner = R->allocs[i - 1].pid;
    pthread_rwlock_unlock(&R->lock);
    SIM_WARN(SIM_ALLOC, "free of %p: the allocation belongs to process %d, not to this one (%d)", p, owner,
             (int)getpid());
    return cudaErrorInvalidValue;
  }
  if (R->allocs[i - 1].flags & SIM_MEM_F_ORPHAN) { /* freed once already, kept for an importer */
    pthread_rwlock_unlock(&R->lock);
    SIM_WARN(SIM_ALLOC, "free of %p: freed already (kept only while another process has it open)", p);
    return cudaErrorInvalidValue;
  }
  if (R->allocs[i - 1].ipc_opens) {
    /* Undefined in CUDA; here the bytes stay until the importers close
     * them, so that no importer reaches memory reused for something else. */
    R->allocs[i - 1].flags |= SIM_MEM_F_ORPHAN;
    uint32_t opens = R->allocs[i - 1].ipc_opens;
    atomic_fetch_add_explicit(&R->frees, 1, memory_order_release);
    pthread_rwlock_unlock(&R->lock);
    SIM_WARN(SIM_ALLOC, "free of %p while %u other process(es) have it open (cudaIpcOpenMemHandle): undefined in "
             "CUDA; ncclsim keeps the bytes until the last cudaIpcCloseMemHandle", p, (unsigned)opens);
    return cudaSuccess;
  }
  sim_alloc_info a = R->allocs[i - 1];
  memmove(&R->allocs[i - 1], &R->allocs[i], (R->nallocs - i) * sizeof *R->allocs);
  R->nallocs--;
  if (a.device >= 0) R->dev_used[a.device] -= a.size;
  atomic_fetch_add_explicit(&R->frees, 1, memory_order_release);
  pthread_rwlock_unlock(&R->lock);
  sim_free(p);
  return cudaSuccess;
}

/* The thread's last hits, valid while the registry's free count is `gen`. */
enum { HITS = 4 };
static _Thread_local struct {
  uint64_t gen;
  unsigned next;
  sim_alloc_info hit[HITS]; /* size 0 and base NULL: empty */
} cache;

static bool contains(const sim_alloc_info *a, const void *p) {
  uintptr_t off = (uintptr_t)p - (uintptr_t)a->base;
  return a->base && (off < a->size || off == 0);
}

uint64_t sim_mem_frees(void) { return atomic_load_explicit(&registry()->frees, memory_order_acquire); }

bool sim_mem_lookup(const void *p, sim_alloc_info *out) {
  mem_registry *r = registry();
  uint64_t gen = atomic_load_explicit(&r->frees, memory_order_acquire);
  if (gen == cache.gen)
    for (int i = 0; i < HITS; i++)
      if (contains(&cache.hit[i], p)) {
        if (out) *out = cache.hit[i];
        return true;
      }
  pthread_rwlock_rdlock(&r->lock);
  sim_alloc_info *a = find(p), found;
  if (a) found = *a;
  gen = atomic_load_explicit(&r->frees, memory_order_relaxed);
  pthread_rwlock_unlock(&r->lock);
  if (!a) return sim_host_reg_lookup(p, out); /* the process's registered host memory, never cached */
  if (gen != cache.gen) {
    memset(&cache, 0, sizeof cache);
    cache.gen = gen;
  }
  cache.hit[cache.next++ % HITS] = found;
  if (out) *out = found;
  return true;
}

bool sim_mem_range_in(const sim_alloc_info *a, const void *p, size_t bytes, const char *what, const char *arg) {
  if ((a->flags & SIM_MEM_F_FREED) && !(sim_graph_recording && (a->flags & SIM_MEM_F_GRAPH))) {
    sim_mempool_report_use(a, p, what, arg);
    return false;
  }
  size_t off = (size_t)((const char *)p - (const char *)a->base);
  if (!bytes || bytes <= a->size - off) return true;
  SIM_WARN(SIM_ALLOC,
           "%s%s%s: %zu bytes at %p run past the end of its allocation (%p, %zu bytes, device %d) by %zu "
           "bytes (ncclsim checks bounds; real NCCL would corrupt memory)",
           what, *arg ? " " : "", arg, bytes, p, a->base, a->size, a->device, bytes - (a->size - off));
  return false;
}

bool sim_mem_check_range(const void *p, size_t bytes, const char *what) {
  sim_alloc_info a;
  return !bytes || !sim_mem_lookup(p, &a) || sim_mem_range_in(&a, p, bytes, what, "");
}

int sim_mem_device(const void *p) {
  sim_alloc_info a;
  return sim_mem_lookup(p, &a) ? a.device : -1;
}

void sim_mem_stats(size_t *count, size_t *bytes) {
  size_t n = 0, b = 0;
  int self = (int)getpid();
  pthread_rwlock_rdlock(&R->lock);
  for (size_t i = 0; i < R->nallocs; i++) /* what a pool holds freed, or an importer alone, is not the caller's */
    if (R->allocs[i].pid == self && !(R->allocs[i].flags & (SIM_MEM_F_FREED | SIM_MEM_F_ORPHAN)))
      n++, b += R->allocs[i].size;
  pthread_rwlock_unlock(&R->lock);
  if (count) *count = n;
  if (bytes) *bytes = b;
}

SIM_EXPORT void ncclsimMemStats(size_t *count, size_t *bytes) { sim_mem_stats(count, bytes); }

sim_mem_edit_result sim_mem_edit(const void *base, sim_mem_edit_result (*fn)(sim_alloc_info *a, void *arg),
                                 void *arg) {
  pthread_rwlock_wrlock(&R->lock);
  size_t i = upper_bound((uintptr_t)base);
  if (i == 0 || R->allocs[i - 1].base != base) {
    pthread_rwlock_unlock(&R->lock);
    return SIM_MEM_ABSENT;
  }
  sim_alloc_info *a = &R->allocs[i - 1];
  size_t size = a->size;
  sim_mem_edit_result res = fn(a, arg);
  if (res == SIM_MEM_REMOVE) {
    if (a->device >= 0) R->dev_used[a->device] -= size;
    memmove(a, a + 1, (R->nallocs - i) * sizeof *R->allocs);
    R->nallocs--;
  } else if (res != SIM_MEM_KEEP) {
    if (res == SIM_MEM_RENEWED) a->serial = ++R->serials;
    if (a->device >= 0) R->dev_used[a->device] += a->size - size; /* wraps back when it shrank */
  }
  if (res != SIM_MEM_KEEP) atomic_fetch_add_explicit(&R->frees, 1, memory_order_release);
  pthread_rwlock_unlock(&R->lock);
  if (res == SIM_MEM_REMOVE) sim_free((void *)base);
  return res;
}

bool sim_mem_overlap(const void *p, size_t bytes, sim_alloc_info *out) {
  uintptr_t lo = (uintptr_t)p, hi = lo + bytes; /* bytes > 0, no wrap: the caller checked */
  pthread_rwlock_rdlock(&R->lock);
  size_t i = upper_bound(hi - 1); /* the last allocation based below hi */
  bool hit = i > 0 && (uintptr_t)R->allocs[i - 1].base + (R->allocs[i - 1].size ? R->allocs[i - 1].size : 1) > lo;
  if (hit && out) *out = R->allocs[i - 1];
  pthread_rwlock_unlock(&R->lock);
  return hit;
}

void sim_mem_each(void (*fn)(const sim_alloc_info *a, void *arg), void *arg) {
  pthread_rwlock_rdlock(&R->lock);
  for (size_t i = 0; i < R->nallocs; i++) fn(&R->allocs[i], arg);
  pthread_rwlock_unlock(&R->lock);
}

SIM_EXPORT cudaError_t cudaMalloc(void **p, size_t size) {
  if (!p) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t cap = sim_capture_unsafe("cudaMalloc"); /* forbidden in a capture (capture.c) */
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  cudaError_t sticky = sim_cuda_sticky(sim_current_device());
  if (sticky != cudaSuccess) return sim_cuda_error(sticky);
  return sim_cuda_error(sim_mem_alloc(p, size, sim_current_device(), SIM_MEM_DEVICE, DEVICE_ALIGN));
}

SIM_EXPORT cudaError_t cudaFree(void *p) {
  if (!p) return cudaSuccess;
  cudaError_t cap = sim_capture_unsafe("cudaFree");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  cudaError_t sticky = sim_cuda_sticky(sim_current_device());
  if (sticky != cudaSuccess) return sim_cuda_error(sticky);
  /* cudaMallocAsync's memory goes back to its pool; memory freed in stream
   * order already is a double free (mempool.c says which). */
  sim_alloc_info a;
  bool known = sim_mem_lookup(p, &a);
  if (known && (a.flags & (SIM_MEM_F_POOL | SIM_MEM_F_FREED | SIM_MEM_F_GRAPH)))
    return sim_cuda_error(sim_mempool_free_now(p));
  /* CUDA's cudaFree waits for the device's work first (an implicit
   * synchronization: CUDA 13 on an H100 returned once a kernel running on
   * another, non-blocking stream had ended, whatever memory it used); a
   * kernel or copy still queued may use the memory. cudaMallocAsync's
   * memory did not wait there (mempool.c). */
  if (known && a.kind == SIM_MEM_DEVICE && a.device >= 0) sim_device_drain(a.device, false);
  return sim_cuda_error(sim_mem_free(p, SIM_MEM_DEVICE));
}

SIM_EXPORT cudaError_t cudaMallocHost(void **p, size_t size) {
  if (!p) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t cap = sim_capture_unsafe("cudaMallocHost");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  if (size == 0) { /* CUDA 13 gives NULL here (measured), which cudaFreeHost takes */
    *p = NULL;
    return cudaSuccess;
  }
  return sim_cuda_error(sim_mem_alloc(p, size, -1, SIM_MEM_HOST, DEVICE_ALIGN));
}

/* The flags change nothing here: host memory is already mapped, portable
 * and coherent in one address space. Unknown flags fail, as in CUDA. */
SIM_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags) {
  if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))
    return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t e = cudaMallocHost(p, size);
  if (e == cudaSuccess && *p) sim_host_alloc_flags(*p, flags); /* for cudaHostGetFlags */
  return e;
}

SIM_EXPORT cudaError_t cudaFreeHost(void *p) {
  if (!p) return cudaSuccess;
  cudaError_t cap = sim_capture_unsafe("cudaFreeHost");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  /* As cudaFree, it waits for the (current) device's work first: CUDA 13
   * on an H100 returned only once a kernel running there had ended. */
  sim_alloc_info a;
  if (sim_mem_lookup(p, &a) && a.kind == SIM_MEM_HOST) sim_device_drain(sim_current_device(), false);
  return sim_cuda_error(sim_mem_free(p, SIM_MEM_HOST));
}

/* Either pointer may be NULL: CUDA 13 accepts that (measured). */
SIM_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  size_t limit = (size_t)sim_param(SIM_P_DEVICE_MEM);
  pthread_rwlock_rdlock(&R->lock);
  size_t dev = (size_t)sim_current_device();
  size_t used = dev < R->ndev ? R->dev_used[dev] : 0;
  pthread_rwlock_unlock(&R->lock);
  if (total) *total = limit;
  if (free_bytes) *free_bytes = limit - used;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr) {
  if (!attr) return sim_cuda_error(cudaErrorInvalidValue);
  sim_alloc_info a;
  memset(attr, 0, sizeof *attr);
  if (!ptr || !sim_mem_lookup(ptr, &a)) {
    /* What CUDA 13 reports for memory it does not know (measured):
     * device -2, the pointer as a host pointer. */
    attr->type = cudaMemoryTypeUnregistered;
    attr->device = -2;
    attr->hostPointer = (void *)ptr;
    return cudaSuccess;
  }
  attr->type = a.kind == SIM_MEM_HOST ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  attr->device = a.kind == SIM_MEM_HOST ? sim_current_device() : a.device;
  attr->devicePointer = (void *)ptr;
  attr->hostPointer = a.kind == SIM_MEM_HOST ? (void *)ptr : NULL;
  return cudaSuccess;
}

/* ncclMemAlloc/ncclMemFree live here because they are simulated device
 * memory of a kind of their own: windows require it, as real NCCL's require
 * cuMem allocations. Sizes round up to the window alignment (4096 bytes),
 * as real NCCL rounds to the allocation granularity. */
SIM_EXPORT ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (!ptr) {
    SIM_WARN(SIM_ALLOC, "ncclMemAlloc: ptr is NULL");
    return ncclInvalidArgument;
  }
  *ptr = NULL;
  if (size == 0) {
    SIM_WARN(SIM_ALLOC, "ncclMemAlloc: size is 0");
    return ncclInvalidArgument;
  }
  size_t rounded = (size + NCCL_WIN_REQUIRED_ALIGNMENT - 1) / NCCL_WIN_REQUIRED_ALIGNMENT * NCCL_WIN_REQUIRED_ALIGNMENT;
  if (rounded < size) return ncclInvalidArgument;
  cudaError_t e = sim_mem_alloc(ptr, rounded, sim_current_device(), SIM_MEM_NCCL, NCCL_WIN_REQUIRED_ALIGNMENT);
  if (e != cudaSuccess) {
    SIM_WARN(SIM_ALLOC, "ncclMemAlloc: %zu bytes on device %d: %s", size, sim_current_device(), cudaGetErrorName(e));
    return ncclSystemError; /* sim_mem_alloc fails only for want of memory */
  }
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclMemFree(void *ptr) {
  if (!ptr) return ncclSuccess;
  if (sim_mem_free(ptr, SIM_MEM_NCCL) != cudaSuccess) {
    SIM_WARN(SIM_ALLOC, "ncclMemFree: %p was not returned by ncclMemAlloc (or was freed already)", ptr);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}
