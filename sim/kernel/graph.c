/*
 * sim/kernel/graph.c — kernels in CUDA graphs.
 *
 * A launch on a capturing stream becomes a kernel node that keeps the
 * launch's record (its configuration and arguments, copied at the call);
 * cudaGraphAddKernelNode makes the record with the kernel registry's pack,
 * from the node parameters' argument pointers. Each launch of the graph
 * runs the record again, in an op of its own that holds a reference on
 * the node's work; the record goes with the last graph or executable
 * graph holding it. A record is read, never written, by a run (each
 * kernel thread gets its own copy of the arguments), so runs of one
 * record on several streams at once are safe.
 */
#include "config.h"

#include <stdio.h>

#include "kernel_internal.h"

typedef struct kwork {
  sim_graph_work w;
  __ncclsim_launch *l;
  int device; /* where it was captured or made, where it runs */
} kwork;

typedef struct krun {
  sim_op op;
  kwork *k;
} krun;

static cudaError_t krun_run(sim_op *op, cudaError_t stream_err) {
  kwork *k = ((krun *)op)->k;
  /* As a launch (launch.c): not behind a failure, nor on a device a
   * kernel's fault lost. */
  if (stream_err != cudaSuccess || sim_cuda_sticky(k->device) != cudaSuccess) return cudaSuccess;
  cudaError_t err = sim_k_run(k->l, k->device);
  if (err != cudaSuccess) sim_cuda_sticky_set(k->device, err);
  return err;
}

static void krun_release(sim_op *op) {
  kwork *k = ((krun *)op)->k;
  sim_stream_op_free(op);
  sim_graph_work_unref(&k->w);
}

static cudaError_t kwork_launch(sim_graph_work *w, sim_stream *s) {
  kwork *k = (kwork *)w;
  cudaError_t err = sim_cuda_sticky(k->device);
  if (err != cudaSuccess) return err;
  krun *r = sim_stream_op_alloc(s, sizeof *r);
  if (!r) return cudaErrorMemoryAllocation;
  r->k = k;
  r->op.run = krun_run;
  r->op.release = krun_release;
  r->op.what = "kernel launch (graph node)";
  sim_graph_work_ref(w);
  if ((err = sim_stream_enqueue(s, &r->op)) != cudaSuccess) {
    sim_stream_op_free(r);
    sim_graph_work_unref(w);
  }
  return err;
}

static void kwork_describe(sim_graph_work *w, char *buf, size_t len) {
  const __ncclsim_launch *l = ((kwork *)w)->l;
  snprintf(buf, len, "%s, grid (%u, %u, %u), block (%u, %u, %u), %zu bytes of shared memory%s",
           l->name ? l->name : "a kernel", l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z,
           l->smem, l->cooperative ? ", cooperative" : "");
}

static void kwork_release(sim_graph_work *w) {
  kwork *k = (kwork *)w;
  if (k->l->destroy) k->l->destroy(k->l);
  __ncclsim_launch_free(k->l);
  sim_free(k);
}

static void kwork_params(sim_graph_work *w, struct cudaKernelNodeParams *out) {
  const __ncclsim_launch *l = ((kwork *)w)->l;
  out->func = (void *)l->kernel;
  out->gridDim = l->grid;
  out->blockDim = l->block;
  out->sharedMemBytes = (unsigned)l->smem;
  out->kernelParams = NULL;
  out->extra = NULL;
}

static const sim_graph_work_ops kwork_ops = {"kernel", kwork_launch, kwork_describe, kwork_release, kwork_params, NULL};

static kwork *kwork_new(__ncclsim_launch *l, int device) {
  kwork *k = sim_calloc(1, sizeof *k);
  if (!k) return NULL;
  k->w.ops = &kwork_ops;
  k->l = l;
  k->device = device;
  return k;
}

cudaError_t sim_k_capture(__ncclsim_launch *l, int device, sim_stream *s) {
  kwork *k = kwork_new(l, device);
  if (!k) return cudaErrorMemoryAllocation;
  cudaError_t err = sim_capture_add_work(&s, 1, &k->w);
  if (err != cudaSuccess) sim_free(k); /* the record stays the caller's */
  return err;
}

/* cudaGraphAddKernelNode and the SetParams calls (cuda/graph_node.c). */
static cudaError_t kernel_node(const struct cudaKernelNodeParams *p, sim_graph_work **out) {
  kentry *k = p->func ? sim_k_lookup(p->func, false) : NULL;
  if (!k || !k->pack) {
    SIM_WARN(SIM_KERNEL, "a kernel node: %p is not a kernel compiled by ncclsim's compiler driver", p->func);
    return k ? cudaErrorInvalidDeviceFunction : sim_k_not_kernel(p->func); /* as a launch of it (launch.c) */
  }
  if (!p->kernelParams && k->nargs) {
    SIM_WARN(SIM_KERNEL, "a kernel node: kernelParams is NULL for %s, which takes %u arguments",
             K_GET(k, pretty) ? K_GET(k, pretty) : "a kernel", k->nargs);
    return cudaErrorInvalidValue;
  }
  __ncclsim_launch *l = k->pack(NULL, p->kernelParams);
  if (!l) return cudaErrorMemoryAllocation;
  l->grid = p->gridDim;
  l->block = p->blockDim;
  l->smem = p->sharedMemBytes;
  cudaError_t err = sim_k_launch_check(l);
  kwork *w = err == cudaSuccess ? kwork_new(l, sim_current_device()) : NULL;
  if (!w) {
    if (l->destroy) l->destroy(l);
    __ncclsim_launch_free(l);
    return err != cudaSuccess ? err : cudaErrorMemoryAllocation;
  }
  *out = &w->w;
  return cudaSuccess;
}

__attribute__((constructor)) static void graph_hook(void) { sim_graph_kernel_hook(kernel_node); }
