/*
 * sim/cuda/memcpy.c — cudaMemcpy/cudaMemset, synchronous and on streams.
 *
 * Synchronous forms run on the current device's default stream and wait,
 * so they are ordered after work already queued there. Ranges are checked
 * against the allocation registry: a copy past the end of a buffer fails
 * with cudaErrorInvalidValue and a diagnostic instead of corrupting memory.
 */
#include <string.h>

#include "cuda_internal.h"

typedef struct {
  sim_op op;
  void *dst;
  const void *src; /* NULL for memset */
  int value;
  size_t bytes;
} copy_op;

static cudaError_t copy_run(sim_op *op, cudaError_t err) {
  copy_op *c = (copy_op *)op;
  if (err != cudaSuccess) return cudaSuccess; /* a poisoned stream moves no data */
  if (c->src) memmove(c->dst, c->src, c->bytes);
  else memset(c->dst, c->value, c->bytes);
  return cudaSuccess;
}

static void op_free(sim_op *op) { sim_free(op); }

static cudaError_t enqueue(void *dst, const void *src, int value, size_t bytes, enum cudaMemcpyKind kind,
                           cudaStream_t h, bool sync, const char *what) {
  cudaError_t err;
  if (bytes && !dst) return sim_cuda_error(cudaErrorInvalidValue);
  if (!sim_mem_check_range(dst, bytes, what) || (src && !sim_mem_check_range(src, bytes, what)))
    return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  if ((err = sim_cuda_sticky(sim_stream_device(s))) != cudaSuccess) return sim_cuda_error(err);
  if (bytes && sim_stream_capturing(s)) /* a node of the capture's graph (capture.c) */
    return sim_cuda_error(src ? sim_capture_copy(s, dst, src, bytes, kind) : sim_capture_memset(s, dst, value, bytes));
  if (bytes) {
    copy_op *c = sim_calloc(1, sizeof *c);
    if (!c) return sim_cuda_error(cudaErrorMemoryAllocation);
    c->op.run = copy_run;
    c->op.release = op_free;
    c->op.what = what;
    c->dst = dst;
    c->src = src;
    c->value = value;
    c->bytes = bytes;
    if ((err = sim_stream_enqueue(s, &c->op)) != cudaSuccess) {
      sim_free(c);
      return sim_cuda_error(err);
    }
  }
  if (!sync) return cudaSuccess;
  err = sim_stream_drain(s);
  sim_cuda_synced(sim_stream_device(s));
  if (err == cudaSuccess) err = sim_cuda_sticky(sim_stream_device(s)); /* a kernel before it faulted */
  return sim_cuda_error(err);
}

/* A side that the kind calls "device" must be memory the device can
 * reach: cudaMalloc'd, pinned (cudaMallocHost) or ncclMemAlloc'd. CUDA 13
 * refuses pageable host memory there with cudaErrorInvalidValue and takes
 * anything on a "host" side (measured); cudaMemcpyDefault takes anything. */
static cudaError_t check_kind(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, const char *what) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  if (n && (!src || !dst)) return cudaErrorInvalidValue;
  bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (n && ((dst_dev && !sim_mem_lookup(dst, NULL)) || (src_dev && !sim_mem_lookup(src, NULL)))) {
    SIM_WARN(SIM_ALLOC, "%s: kind %d names a device pointer, but %p is host memory that CUDA does not know", what,
             (int)kind, dst_dev && !sim_mem_lookup(dst, NULL) ? dst : (void *)src);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  cudaError_t err = check_kind(dst, src, n, kind, "cudaMemcpy");
  if (err != cudaSuccess) return sim_cuda_error(err);
  return enqueue(dst, src, 0, n, kind, 0, true, "cudaMemcpy");
}

SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                       cudaStream_t s) {
  cudaError_t err = check_kind(dst, src, n, kind, "cudaMemcpyAsync");
  if (err != cudaSuccess) return sim_cuda_error(err);
  return enqueue(dst, src, 0, n, kind, s, false, "cudaMemcpyAsync");
}

/* cudaMemset writes device memory: pageable host memory is refused, as in
 * CUDA 13 (measured). */
static cudaError_t check_memset(void *dst, size_t n, const char *what) {
  if (n && dst && !sim_mem_lookup(dst, NULL)) {
    SIM_WARN(SIM_ALLOC, "%s: %p is host memory that CUDA does not know, not device memory", what, dst);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaMemset(void *dst, int value, size_t n) {
  cudaError_t err = check_memset(dst, n, "cudaMemset");
  if (err != cudaSuccess) return sim_cuda_error(err);
  return enqueue(dst, NULL, value, n, cudaMemcpyDefault, 0, true, "cudaMemset");
}

SIM_EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s) {
  cudaError_t err = check_memset(dst, n, "cudaMemsetAsync");
  if (err != cudaSuccess) return sim_cuda_error(err);
  return enqueue(dst, NULL, value, n, cudaMemcpyDefault, s, false, "cudaMemsetAsync");
}
