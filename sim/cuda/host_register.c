/*
 * sim/cuda/host_register.c — cudaHostRegister and its kin: host memory
 * that CUDA treats as pinned, and what CUDA tells of pinned memory.
 *
 * A registration is the calling process's own. With ranks as processes,
 * two processes may well register their own memory at one address
 * (processes started apart run with the same layout), so registrations
 * stay out of the job's shared allocation registry, in a sorted array of
 * this process; the registry's lookups fall back on it when they miss
 * (memory.c). Registered memory then passes every check that pinned memory
 * passes: copy kinds, memsets, NCCL buffers, cudaPointerGetAttributes.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_internal.h"

typedef struct {
  uintptr_t base;
  size_t size;
  unsigned flags; /* cudaHostRegister's */
} host_reg;

static pthread_rwlock_t regs_lock = PTHREAD_RWLOCK_INITIALIZER;
static host_reg *regs; /* sorted by base, disjoint */
static size_t nregs, regs_cap;
static _Atomic size_t regs_live; /* nregs, read without the lock: a lookup miss costs one load while there are none */

/* A forked child has no registrations of its parent's, as it has no CUDA
 * context (with ranks as processes the array is in the shared arena: the
 * child leaves it to the parent). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_rwlock_init(&regs_lock, NULL);
  regs = NULL;
  nregs = regs_cap = 0;
  atomic_store(&regs_live, 0);
}
__attribute__((constructor)) static void host_reg_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

/* Index of the first registration whose base is > p. Caller holds the lock. */
static size_t upper(uintptr_t p) {
  size_t lo = 0, hi = nregs;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (regs[mid].base <= p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

bool sim_host_reg_lookup(const void *p, sim_alloc_info *out) {
  if (!atomic_load_explicit(&regs_live, memory_order_acquire)) return false;
  pthread_rwlock_rdlock(&regs_lock);
  size_t i = upper((uintptr_t)p);
  bool hit = i > 0 && (uintptr_t)p - regs[i - 1].base < regs[i - 1].size;
  if (hit && out)
    *out = (sim_alloc_info){.base = (void *)regs[i - 1].base, .size = regs[i - 1].size, .device = -1,
                            .kind = SIM_MEM_HOST, .pid = (int)getpid(),
                            .flags = SIM_MEM_F_REGISTERED | regs[i - 1].flags};
  pthread_rwlock_unlock(&regs_lock);
  return hit;
}

/* Whether every page of [p, p + size) is mapped: registering memory that
 * is not there fails on a GPU as well, when the driver pins its pages. */
static bool mapped(const void *p, size_t size) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + size + page - 1) & ~(page - 1);
  return msync((void *)lo, hi - lo, MS_ASYNC) == 0 || errno != ENOMEM;
}

SIM_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  cudaError_t cap = sim_capture_unsafe("cudaHostRegister"); /* forbidden in a capture (capture.c) */
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  if (!ptr || !size || (uintptr_t)ptr + size < (uintptr_t)ptr) {
    SIM_WARN(SIM_ALLOC, "cudaHostRegister: ptr %p, size %zu: not a range of host memory", ptr, size);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory |
                   cudaHostRegisterReadOnly;
  if (flags & ~known) {
    SIM_WARN(SIM_ALLOC, "cudaHostRegister: flags 0x%x are not cudaHostRegister flags", flags);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  if (flags & cudaHostRegisterIoMemory) { /* memory-mapped I/O: none of it on ncclsim (CUDA 13, ordinary memory: measured) */
    SIM_WARN(SIM_ALLOC, "cudaHostRegister: cudaHostRegisterIoMemory of %p, which is not memory-mapped I/O", ptr);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  if (!mapped(ptr, size)) {
    SIM_WARN(SIM_ALLOC, "cudaHostRegister: [%p, +%zu) is not all mapped memory", ptr, size);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  sim_alloc_info a;
  if (sim_mem_overlap(ptr, size, &a)) {
    SIM_WARN(SIM_ALLOC, "cudaHostRegister: [%p, +%zu) overlaps %s %p (%zu bytes)", ptr, size,
             a.kind == SIM_MEM_HOST ? "pinned host memory" : "device memory", a.base, a.size);
    return sim_cuda_error(a.kind == SIM_MEM_HOST ? cudaErrorHostMemoryAlreadyRegistered : cudaErrorInvalidValue);
  }
  uintptr_t lo = (uintptr_t)ptr;
  pthread_rwlock_wrlock(&regs_lock);
  size_t i = upper(lo);
  /* The one before may run into it; the one after may start inside it. */
  if ((i > 0 && regs[i - 1].base + regs[i - 1].size > lo) || (i < nregs && regs[i].base < lo + size)) {
    host_reg r = i > 0 && regs[i - 1].base + regs[i - 1].size > lo ? regs[i - 1] : regs[i];
    pthread_rwlock_unlock(&regs_lock);
    SIM_WARN(SIM_ALLOC, "cudaHostRegister: [%p, +%zu) overlaps the registered [%p, +%zu)", ptr, size,
             (void *)r.base, r.size);
    return sim_cuda_error(cudaErrorHostMemoryAlreadyRegistered);
  }
  if (nregs == regs_cap) {
    size_t ncap = regs_cap ? regs_cap * 2 : 16;
    host_reg *n = sim_realloc(regs, ncap * sizeof *n);
    if (!n) {
      pthread_rwlock_unlock(&regs_lock);
      return sim_cuda_error(cudaErrorMemoryAllocation);
    }
    regs = n;
    regs_cap = ncap;
  }
  memmove(&regs[i + 1], &regs[i], (nregs - i) * sizeof *regs);
  regs[i] = (host_reg){lo, size, flags};
  atomic_store_explicit(&regs_live, ++nregs, memory_order_release);
  pthread_rwlock_unlock(&regs_lock);
  SIM_TRACE(SIM_ALLOC, "cudaHostRegister %p %zu bytes flags 0x%x", ptr, size, flags);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaHostUnregister(void *ptr) {
  if (!ptr) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t cap = sim_capture_unsafe("cudaHostUnregister");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  pthread_rwlock_wrlock(&regs_lock);
  size_t i = upper((uintptr_t)ptr);
  if (i == 0 || regs[i - 1].base != (uintptr_t)ptr) {
    pthread_rwlock_unlock(&regs_lock);
    SIM_WARN(SIM_ALLOC, "cudaHostUnregister: %p is not the start of a range this process registered", ptr);
    return sim_cuda_error(cudaErrorHostMemoryNotRegistered);
  }
  memmove(&regs[i - 1], &regs[i], (nregs - i) * sizeof *regs);
  atomic_store_explicit(&regs_live, --nregs, memory_order_release);
  pthread_rwlock_unlock(&regs_lock);
  return cudaSuccess;
}

/* Pinned memory is mapped at its own address: every simulated device has
 * cudaDevAttrCanUseHostPointerForRegisteredMem, as on a GPU with unified
 * addressing. */
SIM_EXPORT cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags) {
  if (!pDevice || !pHost || flags) return sim_cuda_error(cudaErrorInvalidValue);
  sim_alloc_info a;
  if (!sim_mem_lookup(pHost, &a) || a.kind != SIM_MEM_HOST) {
    SIM_WARN(SIM_ALLOC, "cudaHostGetDevicePointer: %p is not pinned host memory (cudaMallocHost, cudaHostAlloc or "
             "cudaHostRegister)", pHost);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  *pDevice = pHost;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaHostGetFlags(unsigned int *pFlags, void *pHost) {
  if (!pFlags || !pHost) return sim_cuda_error(cudaErrorInvalidValue);
  sim_alloc_info a;
  if (!sim_mem_lookup(pHost, &a) || a.kind != SIM_MEM_HOST) {
    SIM_WARN(SIM_ALLOC, "cudaHostGetFlags: %p is not in pinned or registered host memory", pHost);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  /* Every pinned page is mapped under unified addressing: CUDA 13 adds
   * cudaHostAllocMapped, for cudaMallocHost and registered memory too
   * (measured on an H100). */
  unsigned f = a.flags & SIM_MEM_F_REGISTERED ? a.flags & cudaHostRegisterPortable : a.flags & SIM_MEM_F_HOSTALLOC;
  *pFlags = f | cudaHostAllocMapped;
  return cudaSuccess;
}

static sim_mem_edit_result set_flags(sim_alloc_info *a, void *arg) {
  a->flags = (a->flags & ~(unsigned)SIM_MEM_F_HOSTALLOC) | (*(unsigned *)arg & SIM_MEM_F_HOSTALLOC);
  return SIM_MEM_CHANGED;
}

void sim_host_alloc_flags(void *p, unsigned flags) { sim_mem_edit(p, set_flags, &flags); }
