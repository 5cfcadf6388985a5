/*
 * sim/kernel/printf.c — printf in device code, and the device limits.
 *
 * As on a GPU, a kernel's printf does not reach stdout at once: each call's
 * text goes to its device's buffer (CUDA's printf FIFO, of
 * cudaLimitPrintfFifoSize bytes), which is printed at the calls CUDA
 * flushes it at: a launch, a device, stream or event synchronize, a
 * blocking copy. So a program prints in the same order on both. Unlike a
 * GPU, what is left is also printed at exit, and a full buffer loses the
 * newest text, not the oldest, saying how much it lost.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_internal.h"

typedef struct fifo {
  pthread_mutex_t lock;
  char *buf;
  size_t len;
  size_t lost;
} fifo;

enum { DEVICES = 4096 };
static fifo *fifos[DEVICES];
static pthread_mutex_t fifos_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic size_t fifo_size = 1 << 20; /* CUDA's default */

static fifo *fifo_of(int device, bool make) {
  if (device < 0 || device >= DEVICES) return NULL;
  fifo *f = __atomic_load_n(&fifos[device], __ATOMIC_ACQUIRE);
  if (f || !make) return f;
  pthread_mutex_lock(&fifos_lock);
  if (!(f = fifos[device]) && (f = calloc(1, sizeof *f))) {
    pthread_mutex_init(&f->lock, NULL);
    __atomic_store_n(&fifos[device], f, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&fifos_lock);
  return f;
}

/* The arguments a format names: what CUDA's device printf returns. */
static int conversions(const char *fmt) {
  int n = 0;
  for (const char *p = fmt; (p = strchr(p, '%')); p++) {
    if (p[1] == '%') p++;
    else n++;
  }
  return n;
}

SIM_EXPORT int __ncclsim_printf(const char *fmt, ...) {
  if (!fmt) return -1;
  va_list ap;
  va_start(ap, fmt);
  if (!__ncclsim_self) { /* host code calling a __host__ __device__ function */
    int r = vprintf(fmt, ap);
    va_end(ap);
    return r;
  }
  char small[512], *text = small;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof small && (text = malloc((size_t)n + 1))) vsnprintf(text, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  if (n < 0 || !text) return -2;
  fifo *f = fifo_of(sim_k_grid ? sim_k_grid->device : sim_current_device(), true);
  if (!f) return -2;
  pthread_mutex_lock(&f->lock);
  size_t cap = atomic_load(&fifo_size);
  if (!f->buf) f->buf = malloc(cap);
  if (f->buf && f->len + (size_t)n <= cap) {
    memcpy(f->buf + f->len, text, (size_t)n);
    f->len += (size_t)n;
  } else {
    f->lost += (size_t)n;
  }
  pthread_mutex_unlock(&f->lock);
  if (text != small) free(text);
  return conversions(fmt);
}

void sim_k_printf_flush(int device) {
  fifo *f = fifo_of(device, false);
  if (!f) return;
  pthread_mutex_lock(&f->lock);
  if (f->len) {
    fwrite(f->buf, 1, f->len, stdout);
    fflush(stdout);
    f->len = 0;
  }
  if (f->lost) {
    fprintf(stderr,
            "ncclsim: device %d: %zu bytes of device printf output were lost: the printf buffer "
            "(cudaLimitPrintfFifoSize, %zu bytes) was full\n",
            device, f->lost, atomic_load(&fifo_size));
    f->lost = 0;
  }
  pthread_mutex_unlock(&f->lock);
}

static void flush_all(void) {
  for (int d = 0; d < DEVICES; d++)
    if (fifos[d]) sim_k_printf_flush(d);
}

__attribute__((constructor)) static void printf_hooks(void) {
  sim_cuda_sync_hook(sim_k_printf_flush);
  atexit(flush_all);
}

SIM_EXPORT cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  switch (limit) {
  case cudaLimitPrintfFifoSize: {
    if (value == 0) return sim_cuda_error(cudaErrorInvalidValue);
    /* CUDA refuses it once a kernel ran; ncclsim resizes the buffers it
     * has not made yet, and drops the others' text only by flushing it. */
    pthread_mutex_lock(&fifos_lock);
    atomic_store(&fifo_size, value);
    for (int d = 0; d < DEVICES; d++) {
      fifo *f = fifos[d];
      if (!f) continue;
      pthread_mutex_unlock(&fifos_lock);
      sim_k_printf_flush(d);
      pthread_mutex_lock(&f->lock);
      free(f->buf);
      f->buf = NULL;
      pthread_mutex_unlock(&f->lock);
      pthread_mutex_lock(&fifos_lock);
    }
    pthread_mutex_unlock(&fifos_lock);
    return cudaSuccess;
  }
  case cudaLimitStackSize:
  case cudaLimitMallocHeapSize:
    return cudaSuccess; /* taken; fibers' stacks are NCCLSIM_KERNEL_STACK_KB, device malloc is the host's */
  case cudaLimitDevRuntimeSyncDepth:
  case cudaLimitDevRuntimePendingLaunchCount:
  case cudaLimitMaxL2FetchGranularity:
  case cudaLimitPersistingL2CacheSize:
    return sim_cuda_error(cudaErrorUnsupportedLimit);
  }
  return sim_cuda_error(cudaErrorUnsupportedLimit);
}

SIM_EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit) {
  if (!value) return sim_cuda_error(cudaErrorInvalidValue);
  switch (limit) {
  case cudaLimitPrintfFifoSize: *value = atomic_load(&fifo_size); return cudaSuccess;
  case cudaLimitStackSize: *value = sim_fiber_stack_size(); return cudaSuccess;
  case cudaLimitMallocHeapSize: *value = 8 << 20; return cudaSuccess; /* CUDA's default */
  default: return sim_cuda_error(cudaErrorUnsupportedLimit);
  }
}
