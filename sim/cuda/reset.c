/*
 * sim/cuda/reset.c — cudaDeviceReset: the current device's state of this
 * process, back to what a fresh process has.
 *
 * What CUDA frees with the device's context ncclsim frees too: the
 * process's cudaMalloc memory on the device and its streams there; its
 * current memory pool becomes the default again and its peer access is
 * forgotten. Kept, as CUDA documents: cudaMallocAsync memory. Kept by
 * ncclsim, which does not tie them to a device: cudaMallocHost memory,
 * ncclMemAlloc memory (cuMem allocations outlive a context), events. The
 * device's streams are drained first, where CUDA stops them: nothing that
 * runs afterwards can touch freed memory.
 */
#include <unistd.h>

#include "cuda_internal.h"

enum { BATCH = 64 };

typedef struct {
  int device, pid;
  void *found[BATCH];
  int n;
} reset_arg;

static void pick(const sim_alloc_info *a, void *arg) {
  reset_arg *r = arg;
  if (r->n < BATCH && a->pid == r->pid && a->device == r->device && a->kind == SIM_MEM_DEVICE &&
      !(a->flags & (SIM_MEM_F_POOL | SIM_MEM_F_FREED | SIM_MEM_F_ORPHAN | SIM_MEM_F_GRAPH)))
    r->found[r->n++] = a->base;
}

SIM_EXPORT cudaError_t cudaDeviceReset(void) {
  int device = sim_current_device();
  cudaDeviceSynchronize(); /* its error goes with the context */
  sim_stream_destroy_device(device);
  reset_arg r = {.device = device, .pid = (int)getpid()};
  do { /* in batches: nothing is freed under the registry's lock */
    r.n = 0;
    sim_mem_each(pick, &r);
    for (int i = 0; i < r.n; i++) sim_mem_free(r.found[i], SIM_MEM_DEVICE);
  } while (r.n == BATCH);
  sim_mempool_reset_device(device);
  sim_peer_reset_device(device);
  sim_cuda_context_drop(device); /* the next call makes one, unless a kernel faulted */
  cudaGetLastError();
  return cudaSuccess;
}
