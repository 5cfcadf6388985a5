/*
 * sim/kernel/symbols.c — __device__ and __constant__ variables.
 *
 * On a GPU each device has its own copy of such a variable; with ranks as
 * threads, several simulated devices share one process, so one C++ object
 * cannot be it. The compiler driver leaves the variable as the host's
 * object (CUDA's "shadow", which cudaMemcpyToSymbol and friends name), has
 * it registered at load, and turns every use in device code into
 * __ncclsim_device_symbol(&var): the running device's copy, made from the
 * shadow's initial bytes at its first use there, in that device's memory
 * (cudaPointerGetAttributes and NCCL's buffer checks see device memory).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"

typedef struct dsym {
  const void *host;
  size_t size;
  const char *name;
  void **copy; /* per device */
  int ncopies;
  struct dsym *next;
} dsym;

enum { BUCKETS = 256 };
static dsym *buckets[BUCKETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned bucket(const void *p) { return (unsigned)(((uintptr_t)p >> 4) * 2654435761u) % BUCKETS; }

/* The variable whose host object is `host` (NULL: unknown); with size > 0
 * made if unknown. Caller holds the lock. */
static dsym *find(const void *host, size_t size, const char *name) {
  dsym *d;
  for (d = buckets[bucket(host)]; d; d = d->next)
    if (d->host == host) return d;
  if (!size || !(d = calloc(1, sizeof *d))) return NULL;
  d->host = host;
  d->size = size;
  d->name = name;
  d->next = buckets[bucket(host)];
  buckets[bucket(host)] = d;
  return d;
}

/* The symbol whose host object or device copy contains p, and p's offset
 * in it. Caller holds the lock. */
static dsym *containing(const void *p, size_t *off) {
  for (int b = 0; b < BUCKETS; b++)
    for (dsym *d = buckets[b]; d; d = d->next) {
      if ((const char *)p >= (const char *)d->host && (const char *)p < (const char *)d->host + d->size) {
        *off = (size_t)((const char *)p - (const char *)d->host);
        return d;
      }
    }
  return NULL;
}

SIM_EXPORT int __ncclsim_symbol_register(const void *host, size_t size, const char *name) {
  pthread_mutex_lock(&lock);
  dsym *d = find(host, size, name);
  pthread_mutex_unlock(&lock);
  return d != NULL;
}

/* d's copy on `device`, made if need be; NULL out of memory. Caller holds
 * the lock. */
static void *copy_on(dsym *d, int device) {
  if (device >= d->ncopies) {
    int n = sim_device_count();
    if (device >= n) return NULL;
    void **c = realloc(d->copy, (size_t)n * sizeof *c);
    if (!c) return NULL;
    memset(c + d->ncopies, 0, (size_t)(n - d->ncopies) * sizeof *c);
    d->copy = c;
    d->ncopies = n;
  }
  if (!d->copy[device]) {
    void *p;
    if (sim_mem_alloc(&p, d->size, device, SIM_MEM_DEVICE, 256) != cudaSuccess) return NULL;
    memcpy(p, d->host, d->size);
    d->copy[device] = p;
    HB_RELEASE(d); /* its first bytes, before any kernel thread's use */
  }
  return d->copy[device];
}

/* The last copy a thread looked up: device code reads one variable in a loop. */
static _Thread_local struct {
  const void *host;
  int device;
  dsym *sym;
  void *copy;
} last;

/* On a kernel thread, engine code (kernel.h): the cache above is
 * the worker's. Its lock would order each kernel thread that takes it
 * after the last one, which nothing on a GPU does; what it must order, a
 * copy's first bytes before the kernel threads' uses, is a release and an
 * acquire of its own. */
static void *device_symbol(const void *host, size_t size, const char *name) {
  int device = sim_k_grid ? sim_k_grid->device : sim_current_device();
  bool kernel = __ncclsim_self != NULL;
  if (last.host != host || last.device != device) {
    if (kernel) sim_k_nosync_begin();
    pthread_mutex_lock(&lock);
    dsym *d = find(host, size, name);
    void *p = d ? copy_on(d, device) : NULL;
    pthread_mutex_unlock(&lock);
    if (kernel) sim_k_nosync_end();
    if (!p) {
      if (sim_k_grid && sim_k_grid->running)
        sim_k_abort(sim_k_grid, cudaErrorMemoryAllocation, "no memory for device %d's copy of %s (%zu bytes)", device,
                    name ? name : "a __device__ variable", size);
      return (void *)host; /* a host thread without memory: the shadow */
    }
    last.host = host;
    last.device = device;
    last.sym = d;
    last.copy = p;
  }
  if (kernel) HB_ACQUIRE(last.sym);
  return last.copy;
}

SIM_EXPORT void *__ncclsim_device_symbol(const void *host, size_t size, const char *name) {
  sim_k_engine_enter();
  void *p = device_symbol(host, size, name);
  sim_k_engine_leave();
  return p;
}

/* The current device's copy of `symbol` at `offset`, for count bytes. */
static cudaError_t resolve(const void *symbol, size_t count, size_t offset, const char *call, char **out) {
  size_t base = 0;
  pthread_mutex_lock(&lock);
  dsym *d = symbol ? find(symbol, 0, NULL) : NULL;
  if (!d && symbol) d = containing(symbol, &base);
  void *p = d ? copy_on(d, sim_current_device()) : NULL;
  size_t size = d ? d->size : 0;
  const char *name = d ? d->name : NULL;
  pthread_mutex_unlock(&lock);
  if (!d) {
    SIM_WARN(SIM_KERNEL, "%s: %p is no __device__ or __constant__ variable compiled by ncclsim's driver", call,
             symbol);
    return cudaErrorInvalidSymbol;
  }
  if (!p) return cudaErrorMemoryAllocation;
  if (base + offset > size || count > size - base - offset) {
    SIM_WARN(SIM_KERNEL, "%s: %zu bytes at offset %zu run past the end of %s (%zu bytes)", call, count, base + offset,
             name ? name : "the variable", size);
    return cudaErrorInvalidValue;
  }
  *out = (char *)p + base + offset;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGetSymbolAddress(void **dev, const void *symbol) {
  if (!dev) return sim_cuda_error(cudaErrorInvalidValue);
  char *p;
  cudaError_t err = resolve(symbol, 0, 0, "cudaGetSymbolAddress", &p);
  if (err == cudaSuccess) *dev = p;
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol) {
  if (!size) return sim_cuda_error(cudaErrorInvalidValue);
  pthread_mutex_lock(&lock);
  dsym *d = symbol ? find(symbol, 0, NULL) : NULL;
  if (d) *size = d->size;
  pthread_mutex_unlock(&lock);
  if (!d) return sim_cuda_error(cudaErrorInvalidSymbol);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                          enum cudaMemcpyKind kind) {
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return sim_cuda_error(cudaErrorInvalidMemcpyDirection);
  char *p;
  cudaError_t err = resolve(symbol, count, offset, "cudaMemcpyToSymbol", &p);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return cudaMemcpy(p, src, count, kind);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                            enum cudaMemcpyKind kind) {
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return sim_cuda_error(cudaErrorInvalidMemcpyDirection);
  char *p;
  cudaError_t err = resolve(symbol, count, offset, "cudaMemcpyFromSymbol", &p);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return cudaMemcpy(dst, p, count, kind);
}

SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                               enum cudaMemcpyKind kind, cudaStream_t stream) {
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return sim_cuda_error(cudaErrorInvalidMemcpyDirection);
  char *p;
  cudaError_t err = resolve(symbol, count, offset, "cudaMemcpyToSymbolAsync", &p);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return cudaMemcpyAsync(p, src, count, kind, stream);
}

SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                                 enum cudaMemcpyKind kind, cudaStream_t stream) {
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault)
    return sim_cuda_error(cudaErrorInvalidMemcpyDirection);
  char *p;
  cudaError_t err = resolve(symbol, count, offset, "cudaMemcpyFromSymbolAsync", &p);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return cudaMemcpyAsync(dst, p, count, kind, stream);
}
