/*
 * sim/kernel/registry.c — the kernels a process has, by address: what
 * builds a launch from an array of argument pointers (cudaLaunchKernel's
 * form), the attributes cudaFuncSetAttribute keeps, what the probe learnt.
 * Also CUDA's calls on a kernel by address: attributes and occupancy.
 *
 * A kernel registers when its code is made: its prologue refers to a
 * static object whose initialiser registers it (for a template, when the
 * template is instantiated), so a kernel whose address a program takes is
 * known before main. Entries live as long as the process.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kentry **table; /* open addressing on the address */
static size_t cap, count;

static size_t slot(const void *kernel, size_t n) {
  uintptr_t h = (uintptr_t)kernel;
  h ^= h >> 17;
  h *= 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 20) & (n - 1);
}

/* The C library's allocator, not sim_calloc: kernels register before
 * main (static constructors), and the simulator's allocator fixes the
 * process's memory mode at its first use (ranks across hosts choose it
 * later); the table lives as long as the process. */
static bool grow(void) {
  size_t ncap = cap ? 2 * cap : 64;
  kentry **t = calloc(ncap, sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < cap; i++)
    if (table[i]) {
      size_t j = slot(table[i]->kernel, ncap);
      while (t[j]) j = (j + 1) & (ncap - 1);
      t[j] = table[i];
    }
  free(table);
  table = t;
  cap = ncap;
  return true;
}

/* The last entry a thread found: launches repeat one kernel. */
static _Thread_local kentry *last;

kentry *sim_k_lookup(const void *kernel, bool make) {
  kentry *e = last;
  if (e && e->kernel == kernel) return e;
  if (!kernel) return NULL;
  pthread_mutex_lock(&lock);
  e = NULL;
  if (cap) {
    for (size_t j = slot(kernel, cap); table[j]; j = (j + 1) & (cap - 1))
      if (table[j]->kernel == kernel) {
        e = table[j];
        break;
      }
  }
  if (!e && make && (2 * (count + 1) <= cap || grow())) {
    /* Not sim_calloc: an entry outlives any allocation-failure test. */
    e = calloc(1, sizeof *e);
    if (e) {
      e->kernel = kernel;
      size_t j = slot(kernel, cap);
      while (table[j]) j = (j + 1) & (cap - 1);
      table[j] = e;
      count++;
    }
  }
  pthread_mutex_unlock(&lock);
  if (e) last = e;
  return e;
}

SIM_EXPORT int __ncclsim_kernel_register(const void *kernel, __ncclsim_pack_fn pack, unsigned nargs) {
  kentry *e = sim_k_lookup(kernel, true);
  if (!e) return 0;
  e->pack = pack;
  e->nargs = nargs;
  return 1;
}

size_t sim_k_smem_limit(const kentry *k) {
  size_t limit = 48 * 1024;
  int max = k ? K_GET(k, max_dynamic_smem) : 0;
  if (max > 0 && (size_t)max > limit) limit = (size_t)max;
  return limit;
}

static kentry *known(const void *func, const char *call) {
  kentry *k = func ? sim_k_lookup(func, false) : NULL;
  if (!k)
    SIM_WARN(SIM_KERNEL, "%s: %p is not a kernel compiled by ncclsim's compiler driver", call, func);
  return k;
}

/* What a call on a function that is not a kernel returns (CUDA 13 on an
 * H100, measured): cudaErrorInvalidDeviceFunction for NULL, and
 * cudaErrorInvalidResourceHandle for any other address, a host
 * function's among them. */
cudaError_t sim_k_not_kernel(const void *func) {
  return sim_cuda_error(func ? cudaErrorInvalidResourceHandle : cudaErrorInvalidDeviceFunction);
}

SIM_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func) {
  if (!attr) return sim_cuda_error(cudaErrorInvalidValue);
  kentry *k = known(func, "cudaFuncGetAttributes");
  if (!k) return sim_k_not_kernel(func);
  memset(attr, 0, sizeof *attr);
  size_t static_smem = K_GET(k, static_smem);
  unsigned bound = K_GET(k, max_threads);
  int carveout = K_GET(k, carveout);
  attr->sharedSizeBytes = static_smem;
  attr->maxThreadsPerBlock = bound ? (int)bound : 1024;
  attr->numRegs = 32; /* nominal: ncclsim cannot know (see cuda_runtime_api.h) */
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = (int)(sim_k_smem_limit(k) - static_smem);
  attr->preferredShmemCarveout = carveout ? carveout : -1;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
  kentry *k = known(func, "cudaFuncSetAttribute");
  if (!k) return sim_k_not_kernel(func);
  switch (attr) {
  case cudaFuncAttributeMaxDynamicSharedMemorySize:
    if (value < 0 || (size_t)value + K_GET(k, static_smem) > 232448) {
      SIM_WARN(SIM_KERNEL, "cudaFuncSetAttribute: %d bytes of dynamic shared memory: at most %zu for this kernel",
               value, 232448 - K_GET(k, static_smem));
      return sim_cuda_error(cudaErrorInvalidValue);
    }
    K_SET(k, max_dynamic_smem, value);
    return cudaSuccess;
  case cudaFuncAttributePreferredSharedMemoryCarveout:
    if (value < -1 || value > 100) return sim_cuda_error(cudaErrorInvalidValue);
    K_SET(k, carveout, value);
    return cudaSuccess;
  case cudaFuncAttributeClusterDimMustBeSet:
  case cudaFuncAttributeNonPortableClusterSizeAllowed:
  case cudaFuncAttributeClusterSchedulingPolicyPreference:
    return value == 0 ? cudaSuccess : sim_cuda_error(cudaErrorNotSupported);
  case cudaFuncAttributeRequiredClusterWidth:
  case cudaFuncAttributeRequiredClusterHeight:
  case cudaFuncAttributeRequiredClusterDepth:
    return value <= 1 ? cudaSuccess : sim_cuda_error(cudaErrorNotSupported);
  default:
    SIM_WARN(SIM_KERNEL, "cudaFuncSetAttribute: attribute %d does not exist", (int)attr);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
}

SIM_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache config) {
  if (!known(func, "cudaFuncSetCacheConfig")) return sim_k_not_kernel(func);
  if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual)
    return sim_cuda_error(cudaErrorInvalidValue);
  return cudaSuccess; /* a preference, with nothing to prefer on a CPU */
}

SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int threads,
                                                                              size_t smem, unsigned int flags) {
  if (!n || threads <= 0 || flags > 1) return sim_cuda_error(cudaErrorInvalidValue);
  kentry *k = known(func, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (!k) return sim_k_not_kernel(func);
  unsigned most = K_GET(k, max_threads) ? K_GET(k, max_threads) : 1024;
  /* a block it could not launch: none (so past the kernel's dynamic shared
   * memory attribute too, as CUDA 13 on an H100 answers) */
  *n = (unsigned)threads > most || smem > sim_k_smem_limit(k)
           ? 0
           : sim_k_occupancy((unsigned)threads, smem + K_GET(k, static_smem));
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int threads,
                                                                     size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, threads, smem, 0);
}

SIM_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *smem, const void *func, int blocks,
                                                                 int threads) {
  if (!smem || blocks <= 0 || threads <= 0) return sim_cuda_error(cudaErrorInvalidValue);
  kentry *k = known(func, "cudaOccupancyAvailableDynamicSMemPerBlock");
  if (!k) return sim_k_not_kernel(func);
  if (sim_k_occupancy((unsigned)threads, K_GET(k, static_smem)) < blocks) {
    *smem = 0;
    return cudaSuccess;
  }
  size_t per = 233472 / (size_t)blocks;
  per = per > 1024 + K_GET(k, static_smem) ? per - 1024 - K_GET(k, static_smem) : 0;
  size_t limit = 232448 - K_GET(k, static_smem);
  *smem = per < limit ? per : limit;
  return cudaSuccess;
}
