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
  size_t cap; /* the device's cudaLimitPrintfFifoSize when it was made */
  size_t len;
  size_t lost;
} fifo;

enum { DEVICES = 4096 };
static fifo *fifos[DEVICES];
static pthread_mutex_t fifos_lock = PTHREAD_MUTEX_INITIALIZER;

/* The limits are the device's, as a context's are in CUDA; each holds 0
 * (never set: CUDA 13's default on an H100, measured) or the value + 1. */
enum limit_kind { L_PRINTF, L_STACK, L_HEAP, L_KINDS };
static const size_t limit_default[L_KINDS] = {8650752, 1024, 8 << 20};
static _Atomic size_t limit_set[L_KINDS][DEVICES];

static size_t limit_get(enum limit_kind kind, int device) {
  size_t v = device >= 0 && device < DEVICES ? atomic_load(&limit_set[kind][device]) : 0;
  return v ? v - 1 : limit_default[kind];
}

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
  /* The buffer is engine code's (kernel.h), and its lock would
   * order each printing thread after the last one, as a GPU's does not. */
  sim_k_engine_enter();
  sim_k_nosync_begin();
  int device = sim_k_grid ? sim_k_grid->device : sim_current_device();
  fifo *f = fifo_of(device, true);
  if (f) {
    pthread_mutex_lock(&f->lock);
    if (!f->buf && (f->buf = malloc(limit_get(L_PRINTF, device)))) f->cap = limit_get(L_PRINTF, device);
    if (f->buf && f->len + (size_t)n <= f->cap) {
      memcpy(f->buf + f->len, text, (size_t)n);
      f->len += (size_t)n;
    } else {
      f->lost += (size_t)n;
    }
    pthread_mutex_unlock(&f->lock);
  }
  sim_k_nosync_end();
  sim_k_engine_leave();
  if (text != small) free(text);
  return f ? conversions(fmt) : -2;
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
            device, f->lost, f->cap);
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
  int device = sim_current_device();
  switch (limit) {
  case cudaLimitPrintfFifoSize: {
    if (value == 0) {
      SIM_WARN(SIM_KERNEL, "cudaDeviceSetLimit: cudaLimitPrintfFifoSize of 0 bytes");
      return sim_cuda_error(cudaErrorInvalidValue);
    }
    /* CUDA refuses it once a kernel that prints ran (measured); here once
     * a kernel printed on the device, as its buffer is made then. */
    pthread_mutex_lock(&fifos_lock);
    bool made = device >= DEVICES || fifos[device];
    if (!made) atomic_store(&limit_set[L_PRINTF][device], value + (value != SIZE_MAX));
    pthread_mutex_unlock(&fifos_lock);
    if (made) {
      SIM_WARN(SIM_KERNEL, "cudaDeviceSetLimit: cudaLimitPrintfFifoSize after a kernel printed on device %d",
               device);
      return sim_cuda_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
  }
  case cudaLimitStackSize:
  case cudaLimitMallocHeapSize: /* kept and read back; a fiber's stack is NCCLSIM_KERNEL_STACK_KB,
                                   device malloc the host's */
    if (device < DEVICES)
      atomic_store(&limit_set[limit == cudaLimitStackSize ? L_STACK : L_HEAP][device],
                   value + (value != SIZE_MAX));
    return cudaSuccess;
  case cudaLimitDevRuntimeSyncDepth:
  case cudaLimitDevRuntimePendingLaunchCount:
  case cudaLimitMaxL2FetchGranularity:
  case cudaLimitPersistingL2CacheSize:
    return sim_cuda_error(cudaErrorUnsupportedLimit);
  }
  SIM_WARN(SIM_KERNEL, "cudaDeviceSetLimit: limit %d does not exist", (int)limit);
  return sim_cuda_error(cudaErrorInvalidValue);
}

SIM_EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, enum cudaLimit limit) {
  if (!value) return sim_cuda_error(cudaErrorInvalidValue);
  int device = sim_current_device();
  switch (limit) {
  case cudaLimitPrintfFifoSize: *value = limit_get(L_PRINTF, device); return cudaSuccess;
  case cudaLimitStackSize: *value = limit_get(L_STACK, device); return cudaSuccess;
  case cudaLimitMallocHeapSize: *value = limit_get(L_HEAP, device); return cudaSuccess;
  case cudaLimitDevRuntimeSyncDepth:
  case cudaLimitDevRuntimePendingLaunchCount:
  case cudaLimitMaxL2FetchGranularity:
  case cudaLimitPersistingL2CacheSize:
    return sim_cuda_error(cudaErrorUnsupportedLimit);
  }
  SIM_WARN(SIM_KERNEL, "cudaDeviceGetLimit: limit %d does not exist (CUDA: cudaErrorInvalidValue)", (int)limit);
  return sim_cuda_error(cudaErrorInvalidValue);
}
