/*
 * sim/cuda/cuda.h — the simulated CUDA runtime (sim/cuda), as the rooms
 * above it use it: devices, the allocation registry, streams and their ops.
 */
#ifndef NCCLSIM_CUDA_H_
#define NCCLSIM_CUDA_H_

#include "../sim.h"

/* ------------------------------------------------------------------------
 * Devices and the allocation registry (cuda/device.c, cuda/memory.c). */
int sim_device_count(void);
int sim_current_device(void);
/* A kernel's fault on `device` (kernel/): as on a GPU, the process's
 * contexts are lost, and every later CUDA call on a device it had one on
 * returns the fault (the first stays); a device it had none on answers
 * cudaErrorDevicesUnavailable. sim_cuda_sticky: cudaSuccess, or what a
 * call on `device` returns. sim_cuda_context_drop: cudaDeviceReset's end
 * of the device's context. */
void sim_cuda_sticky_set(int device, cudaError_t err);
void sim_cuda_context_drop(int device);
/* Records err as the calling thread's last CUDA error (cudaGetLastError)
 * and returns it; cudaSuccess is returned untouched (cuda/device.c). */
cudaError_t sim_cuda_error(cudaError_t err);
extern _Atomic int sim_cuda_sticky_any;
cudaError_t sim_cuda_sticky_slow(int device);
static inline cudaError_t sim_cuda_sticky(int device) {
  return atomic_load_explicit(&sim_cuda_sticky_any, memory_order_relaxed) ? sim_cuda_sticky_slow(device)
                                                                         : cudaSuccess;
}
/* A synchronizing call (device, stream or event synchronize, a blocking
 * copy) tells sim_cuda_synced once the work it waited for has run; the
 * kernel room registers what to do then (print device printf output). */
void sim_cuda_sync_hook(void (*fn)(int device));
void sim_cuda_synced(int device);

typedef enum { SIM_MEM_DEVICE = 1, SIM_MEM_HOST = 2, SIM_MEM_NCCL = 3 } sim_mem_kind;
typedef struct sim_alloc_info {
  void *base;
  size_t size; /* bytes the caller asked for */
  int device;  /* -1 for host memory */
  sim_mem_kind kind;
  int pid; /* the process that allocated it (ranks as processes) */
  unsigned flags; /* SIM_MEM_F_*; the low byte holds cudaHostAlloc's flags */
  uint32_t ipc_opens; /* processes that have it open through cudaIpcOpenMemHandle (cuda/ipc.c) */
  uint64_t serial;    /* unique in the job: tells apart allocations at one address (IPC handles) */
  void *owner;        /* its cudaMemPool_t's block (cuda/mempool.c), or graph allocation; NULL otherwise */
  void *freed_on;     /* SIM_MEM_F_FREED: the stream handle of its cudaFreeAsync, or SIM_FREED_* */
} sim_alloc_info;
enum {
  SIM_MEM_F_HOSTALLOC = 0xff,  /* cudaHostAlloc's flags */
  SIM_MEM_F_POOL = 1u << 8,    /* from a memory pool (cudaMallocAsync) */
  SIM_MEM_F_FREED = 1u << 9,   /* freed in stream order, still held: any use now is a use after free */
  SIM_MEM_F_ORPHAN = 1u << 10, /* freed by its owner while another process had it open: goes at the last close */
  SIM_MEM_F_REGISTERED = 1u << 11, /* host memory under cudaHostRegister (the process's own, cuda/host_register.c) */
  SIM_MEM_F_GRAPH = 1u << 12       /* a graph's alloc node's (cuda/graph_mem.c); owner is its allocation */
};
/* Allocates `size` bytes tagged with `device` and `kind`, aligned to `align`. */
cudaError_t sim_mem_alloc(void **out, size_t size, int device, sim_mem_kind kind, size_t align);
/* Frees an allocation of `kind`; cudaErrorInvalidValue if p is not the base
 * of a live allocation of that kind. */
cudaError_t sim_mem_free(void *p, sim_mem_kind kind);
/* The allocation containing p, if any. */
bool sim_mem_lookup(const void *p, sim_alloc_info *out);
/* The registry's count of frees: what a lookup found is still there while
 * the count has not moved since before the lookup. */
uint64_t sim_mem_frees(void);
/* Checks that [p, p + bytes) does not run past the allocation containing p
 * (memory outside the registry is host memory and is not checked). On
 * failure logs a WARN naming `what` and returns false. */
bool sim_mem_check_range(const void *p, size_t bytes, const char *what);
/* The same for p within allocation a (from sim_mem_lookup); the WARN
 * names "what arg". */
bool sim_mem_range_in(const sim_alloc_info *a, const void *p, size_t bytes, const char *what, const char *arg);
/* Device of p: the allocation's device, or -1 for host/unknown memory. */
int sim_mem_device(const void *p);
/* This process's live allocations and their bytes (leak checks). */
void sim_mem_stats(size_t *count, size_t *bytes);

/* ------------------------------------------------------------------------
 * Streams (cuda/stream.c). An op is run once, in FIFO order, by the
 * stream's worker. `stream_err` is the stream's pending error before this op:
 * when it is not cudaSuccess the op must complete quickly (fail, but still
 * release waiters). run() returns the error that poisons the stream, or
 * cudaSuccess. release() frees the op; it is called after run(). */
typedef struct sim_op sim_op;
struct sim_op {
  _Atomic(sim_op *) next; /* the stream's queue (cuda/stream.c) */
  /* Optional: the part of the op that never blocks, run before the op
   * before it is released (its release is then off the path from that
   * op's end to this one's effect); run() follows, with the same
   * stream_err. */
  void (*start)(sim_op *op, cudaError_t stream_err);
  cudaError_t (*run)(sim_op *op, cudaError_t stream_err);
  void (*release)(sim_op *op);
  const char *what;
  /* Optional, for the deadlock check of a full stream: the ranks whose
   * calls this op, while it runs, still waits for (sim_block.awaits). */
  int (*awaits)(sim_op *op, sim_rank_ref *out, int max);
  /* Not counted toward NCCLSIM_STREAM_DEPTH, as CUDA does not bound it
   * (event records, stream waits on events, host functions). */
  bool unbounded;
  /* Otherwise the CUDA operations it stands for toward the depth (0: one;
   * a launch of one-sided operations is several: core/task.c). */
  uint16_t cost;
  /* The worker's clock stamp, handed from one op to the next (the stream
   * worker's, core/trace.c): before start(), the end of the op that ran
   * just before (0: read the clock); after run(), this op's end (0: none). */
  uint64_t stamp;
};
/* Resolves a stream handle (0 = the current device's default stream).
 * NULL with *err = cudaErrorInvalidResourceHandle for a destroyed or foreign
 * handle. */
sim_stream *sim_stream_resolve(cudaStream_t s, cudaError_t *err);
/* The same without a WARN: NULL for a handle that is not a live stream. */
sim_stream *sim_stream_find(cudaStream_t s);
int sim_stream_device(sim_stream *s);
/* Runs fn on the op s's worker runs now, if any; the op is not released
 * until fn returns (the worker waits). fn must not wait for s. */
void sim_stream_peek(sim_stream *s, void (*fn)(sim_op *op, void *arg), void *arg);
/* Per-stream op pools: `size` zeroed bytes, 64-aligned, for an op to be
 * enqueued on s (s may be NULL: plain memory), and their return from any
 * thread. NULL out of memory; every call counts for the allocation hook. */
void *sim_stream_op_alloc(sim_stream *s, size_t size);
void sim_stream_op_free(void *p);
/* The size asked for of memory from sim_stream_op_alloc (a copy of a
 * captured task is made from it: core/capture.c). */
size_t sim_stream_op_size(const void *p);
/* Appends op. With NCCLSIM_STREAM_DEPTH ops pending on s, blocks the host
 * thread until one completes, as CUDA does: cudaErrorTimeout after
 * NCCLSIM_TIMEOUT, cudaErrorLaunchFailure when only this thread could ever
 * free the stream (a WARN says which rank and why), the op not enqueued. */
cudaError_t sim_stream_enqueue(sim_stream *s, sim_op *op);

/* ------------------------------------------------------------------------
 * Stream capture and graphs (cuda/capture.c, cuda/graph*.c). While a
 * stream captures, what is enqueued on it becomes a node of the capture's
 * graph instead of an op: the cuda room makes the nodes of its own calls,
 * and a room above it (a kernel launch, an NCCL operation) hands over a
 * sim_graph_work, which every launch of the graph enqueues again on the
 * launch stream. A work is shared by reference among the graphs and
 * executable graphs that hold it. */
typedef struct sim_graph_work sim_graph_work;
typedef struct sim_graph_work_ops {
  const char *what; /* "kernel", "ncclAllReduce", ... */
  /* Enqueues the work once on s, for a graph launch (a sim_op of its own,
   * counted toward no depth: the launch is). An op that reads w when it
   * runs holds a reference (the executable graph may go before it runs).
   * cudaSuccess, or the error that fails cudaGraphLaunch. */
  cudaError_t (*launch)(sim_graph_work *w, sim_stream *s);
  /* One line naming the work and its arguments (cudaGraphDebugDotPrint). */
  void (*describe)(sim_graph_work *w, char *buf, size_t len);
  /* Frees it, when the last reference goes. */
  void (*release)(sim_graph_work *w);
  /* Optional: a kernel's function and configuration (kernelParams and
   * extra are left NULL), for cudaGraphKernelNodeGetParams. */
  void (*kernel_params)(sim_graph_work *w, struct cudaKernelNodeParams *out);
  /* Optional: the places of the stream's depth that a launch of a graph
   * holding this work takes at least (NULL: one, as any device work). */
  unsigned (*launch_places)(sim_graph_work *w);
} sim_graph_work_ops;
struct sim_graph_work {
  const sim_graph_work_ops *ops;
  _Atomic int refs; /* sim_graph_work_ref/unref; set to 1 by the node that takes it */
};
void sim_graph_work_ref(sim_graph_work *w);
void sim_graph_work_unref(sim_graph_work *w);
/* Captures in progress in the process (a stream's test costs one load
 * while there are none). A stream of an invalidated capture captures. */
extern _Atomic int sim_capture_any;
bool sim_stream_capturing_slow(sim_stream *s);
static inline bool sim_stream_capturing(sim_stream *s) {
  return atomic_load_explicit(&sim_capture_any, memory_order_relaxed) && sim_stream_capturing_slow(s);
}
/* The capture s takes part in (a number unique in the process; 0: none). */
uint64_t sim_stream_capture_id(sim_stream *s);
/* A call that CUDA forbids while the calling thread is prohibited from
 * potentially unsafe calls (its own global or thread-local capture, or,
 * in global interaction mode, another thread's global capture): cudaSuccess,
 * or cudaErrorStreamCaptureUnsupported after invalidating those captures
 * (a WARN names the call). _new_thread: the call made by a new thread of
 * the process instead (global interaction mode, no capture of its own), as
 * NCCL's helper threads make calls for the caller (core/connect.c). */
cudaError_t sim_capture_unsafe(const char *call);
cudaError_t sim_capture_unsafe_new_thread(const char *call);
/* Adds w as a kernel node of the capture that the n streams take part in
 * (one capture), depending on what each stream captured last; each
 * stream's next captured work then depends on it. The node takes w's
 * first reference. cudaErrorStreamCaptureInvalidated (the capture was
 * invalidated), cudaErrorStreamCaptureMerge (streams of different
 * captures), cudaErrorIllegalState (a stream that does not capture),
 * cudaErrorMemoryAllocation: then w is not taken. */
cudaError_t sim_capture_add_work(sim_stream *const *streams, int n, sim_graph_work *w);
/* The kernel room's: the work of a kernel node made by
 * cudaGraphAddKernelNode or set by cudaGraph(Exec)KernelNodeSetParams
 * (its reference count 0), checked as a launch is. Registered at load. */
typedef cudaError_t (*sim_graph_kernel_fn)(const struct cudaKernelNodeParams *p, sim_graph_work **out);
void sim_graph_kernel_hook(sim_graph_kernel_fn fn);

#endif /* NCCLSIM_CUDA_H_ */
