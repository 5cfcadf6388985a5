/*
 * sim/cuda/graph_node.c — the explicit node API: kernel, memcpy, memset,
 * host, event record, event wait and empty nodes, their parameters and
 * the checks CUDA makes of them when a node is added or set.
 *
 * Kernel nodes are the kernel room's: a node holds the work its hook made
 * from cudaKernelNodeParams (the arguments' values copied then), as a
 * captured launch's node holds the launch's record.
 */
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

static _Atomic(sim_graph_kernel_fn) kernel_hook;

void sim_graph_kernel_hook(sim_graph_kernel_fn fn) { atomic_store(&kernel_hook, fn); }

/* ---- parameters ---- */

const char *gparams_type_name(enum cudaGraphNodeType t) {
  switch (t) {
  case cudaGraphNodeTypeKernel: return "kernel";
  case cudaGraphNodeTypeMemcpy: return "memcpy";
  case cudaGraphNodeTypeMemset: return "memset";
  case cudaGraphNodeTypeHost: return "host";
  case cudaGraphNodeTypeEmpty: return "empty";
  case cudaGraphNodeTypeWaitEvent: return "event wait";
  case cudaGraphNodeTypeEventRecord: return "event record";
  case cudaGraphNodeTypeMemAlloc: return "mem alloc";
  case cudaGraphNodeTypeMemFree: return "mem free";
  default: return "other";
  }
}

struct cudaMemcpy3DParms gparams_copy1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
  struct cudaMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = (struct cudaPitchedPtr){(void *)src, count, count, 1};
  p.dstPtr = (struct cudaPitchedPtr){dst, count, count, 1};
  p.extent = (struct cudaExtent){count, 1, 1};
  p.kind = kind;
  return p;
}

/* The first byte of a side of a 3D copy, and the bytes from it to the
 * end of its last row. */
static const char *span(const struct cudaPitchedPtr *ptr, const struct cudaPos *pos, const struct cudaExtent *e,
                        size_t *bytes) {
  size_t slice = ptr->pitch * ptr->ysize;
  const char *first = (const char *)ptr->ptr + pos->z * slice + pos->y * ptr->pitch + pos->x;
  *bytes = (e->depth - 1) * slice + (e->height - 1) * ptr->pitch + e->width;
  return first;
}

_Thread_local bool sim_graph_recording;

/* sim_mem_check_range, for a node's parameters: adding or setting a node
 * records, and graph memory need not be allocated then (graph_mem.c); a
 * launch's check (graph_exec.c, sim_graph_launching) is a use. */
static bool range_ok(const void *p, size_t bytes, const char *what) {
  sim_graph_recording = !sim_graph_launching;
  bool ok = sim_mem_check_range(p, bytes, what);
  sim_graph_recording = false;
  return ok;
}

static bool side_ok(const struct cudaPitchedPtr *ptr, const struct cudaPos *pos, const struct cudaExtent *e,
                    bool device, const char *side, const char *what) {
  if (!ptr->ptr) {
    SIM_WARN(SIM_STREAM, "%s: %sPtr.ptr is NULL", what, side);
    return false;
  }
  if ((e->height > 1 || e->depth > 1) && ptr->pitch < pos->x + e->width) {
    SIM_WARN(SIM_STREAM, "%s: %sPtr.pitch %zu is less than its row (%zu bytes from x %zu)", what, side, ptr->pitch,
             e->width, pos->x);
    return false;
  }
  if (e->depth > 1 && ptr->ysize < pos->y + e->height) {
    SIM_WARN(SIM_STREAM, "%s: %sPtr.ysize %zu is less than its rows (%zu from y %zu)", what, side, ptr->ysize,
             e->height, pos->y);
    return false;
  }
  size_t bytes;
  const char *first = span(ptr, pos, e, &bytes);
  if (device && !sim_mem_lookup(first, NULL)) {
    SIM_WARN(SIM_ALLOC, "%s: the kind names %s as device memory, but %p is host memory that CUDA does not know", what,
             side, (const void *)first);
    return false;
  }
  return range_ok(first, bytes, what);
}

cudaError_t gparams_check_copy(const struct cudaMemcpy3DParms *p, const char *what) {
  if (!p) return cudaErrorInvalidValue;
  if (p->srcArray || p->dstArray) {
    SIM_WARN(SIM_STREAM, "%s: a copy from or to a CUDA array: ncclsim has no arrays", what);
    return cudaErrorInvalidValue;
  }
  if (p->kind < cudaMemcpyHostToHost || p->kind > cudaMemcpyDefault) return cudaErrorInvalidMemcpyDirection;
  const struct cudaExtent *e = &p->extent;
  if (!e->width || !e->height || !e->depth) {
    SIM_WARN(SIM_STREAM, "%s: extent (%zu, %zu, %zu) has a zero dimension", what, e->width, e->height, e->depth);
    return cudaErrorInvalidValue;
  }
  bool dst_dev = p->kind == cudaMemcpyHostToDevice || p->kind == cudaMemcpyDeviceToDevice;
  bool src_dev = p->kind == cudaMemcpyDeviceToHost || p->kind == cudaMemcpyDeviceToDevice;
  if (!side_ok(&p->srcPtr, &p->srcPos, e, src_dev, "src", what) ||
      !side_ok(&p->dstPtr, &p->dstPos, e, dst_dev, "dst", what))
    return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t gparams_check_set(const struct cudaMemsetParams *p, const char *what) {
  if (!p) return cudaErrorInvalidValue;
  if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) {
    SIM_WARN(SIM_STREAM, "%s: elementSize is %u; it must be 1, 2 or 4", what, p->elementSize);
    return cudaErrorInvalidValue;
  }
  if (!p->dst || !p->width || !p->height) {
    SIM_WARN(SIM_STREAM, "%s: dst %p, width %zu, height %zu", what, p->dst, p->width, p->height);
    return cudaErrorInvalidValue;
  }
  size_t row = p->width * p->elementSize;
  if (p->height > 1 && p->pitch < row) {
    SIM_WARN(SIM_STREAM, "%s: pitch %zu is less than a row of %zu bytes", what, p->pitch, row);
    return cudaErrorInvalidValue;
  }
  if (!sim_mem_lookup(p->dst, NULL)) { /* memsets write device memory, as cudaMemset */
    SIM_WARN(SIM_ALLOC, "%s: %p is host memory that CUDA does not know, not device memory", what, p->dst);
    return cudaErrorInvalidValue;
  }
  if (!range_ok(p->dst, (p->height - 1) * p->pitch + row, what)) return cudaErrorInvalidValue;
  return cudaSuccess;
}

cudaError_t gparams_kernel(gparams *out, const struct cudaKernelNodeParams *p, const char *what) {
  if (!p) return cudaErrorInvalidValue;
  if (p->extra) {
    SIM_WARN(SIM_KERNEL, "%s: kernel arguments in the \"extra\" form: ncclsim takes kernelParams only", what);
    return cudaErrorInvalidValue;
  }
  sim_graph_kernel_fn fn = atomic_load(&kernel_hook);
  sim_graph_work *w = NULL;
  cudaError_t err = fn ? fn(p, &w) : cudaErrorInvalidDeviceFunction;
  if (err != cudaSuccess) return err;
  memset(out, 0, sizeof *out);
  out->type = cudaGraphNodeTypeKernel;
  out->u.k.p = *p;
  out->u.k.p.kernelParams = NULL; /* the values were copied; the caller's array may go */
  out->u.k.w = w;
  atomic_store(&w->refs, 1);
  return cudaSuccess;
}

static const char *kind_name(enum cudaMemcpyKind k) {
  static const char *const names[] = {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice", "Default"};
  return (unsigned)k < 5 ? names[k] : "?";
}

void gparams_describe(const gparams *p, char *buf, size_t len, bool verbose) {
  switch (p->type) {
  case cudaGraphNodeTypeKernel:
    if (p->u.k.w) p->u.k.w->ops->describe(p->u.k.w, buf, len);
    else snprintf(buf, len, "kernel");
    break;
  case cudaGraphNodeTypeMemcpy: {
    const struct cudaMemcpy3DParms *c = &p->u.copy;
    if (c->extent.height == 1 && c->extent.depth == 1 && !verbose)
      snprintf(buf, len, "memcpy %zu bytes %s, %p to %p", c->extent.width, kind_name(c->kind), c->srcPtr.ptr,
               c->dstPtr.ptr);
    else
      snprintf(buf, len,
               "memcpy %s, extent (%zu, %zu, %zu); src %p pitch %zu ysize %zu at (%zu, %zu, %zu); dst %p pitch %zu "
               "ysize %zu at (%zu, %zu, %zu)",
               kind_name(c->kind), c->extent.width, c->extent.height, c->extent.depth, c->srcPtr.ptr, c->srcPtr.pitch,
               c->srcPtr.ysize, c->srcPos.x, c->srcPos.y, c->srcPos.z, c->dstPtr.ptr, c->dstPtr.pitch,
               c->dstPtr.ysize, c->dstPos.x, c->dstPos.y, c->dstPos.z);
    break;
  }
  case cudaGraphNodeTypeMemset: {
    const struct cudaMemsetParams *m = &p->u.set;
    snprintf(buf, len, "memset %p, value 0x%x, %zu x %zu elements of %u bytes, pitch %zu", m->dst, m->value, m->width,
             m->height, m->elementSize, m->pitch);
    break;
  }
  case cudaGraphNodeTypeHost:
    snprintf(buf, len, "host function %p(%p)", (void *)(uintptr_t)p->u.host.fn, p->u.host.userData);
    break;
  case cudaGraphNodeTypeEventRecord: snprintf(buf, len, "event record %p", (void *)p->u.event); break;
  case cudaGraphNodeTypeWaitEvent: snprintf(buf, len, "event wait %p", (void *)p->u.event); break;
  case cudaGraphNodeTypeMemAlloc:
  case cudaGraphNodeTypeMemFree: gmem_describe(p, buf, len); break;
  default: snprintf(buf, len, "%s", gparams_type_name(p->type)); break;
  }
}

/* ---- adding nodes ---- */

static cudaError_t add(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                       gparams *p, const char *what) {
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!pNode || !g) {
    gparams_clear(p);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  gnode *n;
  cudaError_t err = graph_add(g, deps, ndeps, p, &n);
  if (err != cudaSuccess) {
    gparams_clear(p);
    return sim_cuda_error(err);
  }
  *pNode = n;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const struct cudaKernelNodeParams *pNodeParams) {
  static const char what[] = "cudaGraphAddKernelNode";
  if (!pGraphNode || !graph_resolve(graph, what)) return sim_cuda_error(cudaErrorInvalidValue);
  gparams p;
  cudaError_t err = gparams_kernel(&p, pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return add(pGraphNode, graph, pDependencies, numDependencies, &p, what);
}

SIM_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const struct cudaMemcpy3DParms *pCopyParams) {
  static const char what[] = "cudaGraphAddMemcpyNode";
  cudaError_t err = gparams_check_copy(pCopyParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  gparams p = {.type = cudaGraphNodeTypeMemcpy, .u.copy = *pCopyParams};
  return add(pGraphNode, graph, pDependencies, numDependencies, &p, what);
}

SIM_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
  static const char what[] = "cudaGraphAddMemcpyNode1D";
  gparams p = {.type = cudaGraphNodeTypeMemcpy, .u.copy = gparams_copy1d(dst, src, count, kind)};
  cudaError_t err = gparams_check_copy(&p.u.copy, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return add(pGraphNode, graph, pDependencies, numDependencies, &p, what);
}

SIM_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                              const struct cudaMemsetParams *pMemsetParams) {
  static const char what[] = "cudaGraphAddMemsetNode";
  cudaError_t err = gparams_check_set(pMemsetParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  gparams p = {.type = cudaGraphNodeTypeMemset, .u.set = *pMemsetParams};
  return add(pGraphNode, graph, pDependencies, numDependencies, &p, what);
}

SIM_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                            const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                            const struct cudaHostNodeParams *pNodeParams) {
  if (!pNodeParams || !pNodeParams->fn) {
    SIM_WARN(SIM_STREAM, "cudaGraphAddHostNode: no function (pNodeParams %p)", (const void *)pNodeParams);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  gparams p = {.type = cudaGraphNodeTypeHost, .u.host = *pNodeParams};
  return add(pGraphNode, graph, pDependencies, numDependencies, &p, "cudaGraphAddHostNode");
}

SIM_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t *pDependencies, size_t numDependencies) {
  gparams p = {.type = cudaGraphNodeTypeEmpty};
  return add(pGraphNode, graph, pDependencies, numDependencies, &p, "cudaGraphAddEmptyNode");
}

static cudaError_t add_event(cudaGraphNode_t *pNode, cudaGraph_t graph, const cudaGraphNode_t *deps, size_t ndeps,
                             cudaEvent_t event, enum cudaGraphNodeType type, const char *what) {
  if (!sim_event_valid(event)) {
    SIM_WARN(SIM_STREAM, "%s: event %p is not a live event", what, (void *)event);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  gparams p = {.type = type, .u.event = event};
  return add(pNode, graph, deps, ndeps, &p, what);
}

SIM_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                   cudaEvent_t event) {
  return add_event(pGraphNode, graph, pDependencies, numDependencies, event, cudaGraphNodeTypeEventRecord,
                   "cudaGraphAddEventRecordNode");
}

SIM_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                 cudaEvent_t event) {
  return add_event(pGraphNode, graph, pDependencies, numDependencies, event, cudaGraphNodeTypeWaitEvent,
                   "cudaGraphAddEventWaitNode");
}

/* ---- reading and setting a node's parameters ---- */

gnode *node_typed(cudaGraphNode_t node, enum cudaGraphNodeType t, const char *what) {
  gnode *n = node_resolve(node, what);
  if (n && n->p.type != t) {
    SIM_WARN(SIM_STREAM, "%s: node %p is a %s node, not a %s node", what, (void *)n, gparams_type_name(n->p.type),
             gparams_type_name(t));
    return NULL;
  }
  return n;
}

SIM_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams) {
  gnode *n = node_typed(node, cudaGraphNodeTypeKernel, "cudaGraphKernelNodeGetParams");
  if (!n || !pNodeParams) return sim_cuda_error(cudaErrorInvalidValue);
  *pNodeParams = n->p.u.k.p;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                    const struct cudaKernelNodeParams *pNodeParams) {
  static const char what[] = "cudaGraphKernelNodeSetParams";
  gnode *n = node_typed(node, cudaGraphNodeTypeKernel, what);
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  gparams p;
  cudaError_t err = gparams_kernel(&p, pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  gparams_clear(&n->p);
  n->p = p;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *pNodeParams) {
  gnode *n = node_typed(node, cudaGraphNodeTypeMemcpy, "cudaGraphMemcpyNodeGetParams");
  if (!n || !pNodeParams) return sim_cuda_error(cudaErrorInvalidValue);
  *pNodeParams = n->p.u.copy;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node,
                                                    const struct cudaMemcpy3DParms *pNodeParams) {
  static const char what[] = "cudaGraphMemcpyNodeSetParams";
  gnode *n = node_typed(node, cudaGraphNodeTypeMemcpy, what);
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = gparams_check_copy(pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  n->p.u.copy = *pNodeParams;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t count,
                                                      enum cudaMemcpyKind kind) {
  struct cudaMemcpy3DParms c = gparams_copy1d(dst, src, count, kind);
  return cudaGraphMemcpyNodeSetParams(node, &c);
}

SIM_EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, struct cudaMemsetParams *pNodeParams) {
  gnode *n = node_typed(node, cudaGraphNodeTypeMemset, "cudaGraphMemsetNodeGetParams");
  if (!n || !pNodeParams) return sim_cuda_error(cudaErrorInvalidValue);
  *pNodeParams = n->p.u.set;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *pNodeParams) {
  static const char what[] = "cudaGraphMemsetNodeSetParams";
  gnode *n = node_typed(node, cudaGraphNodeTypeMemset, what);
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = gparams_check_set(pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  n->p.u.set = *pNodeParams;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *pNodeParams) {
  gnode *n = node_typed(node, cudaGraphNodeTypeHost, "cudaGraphHostNodeGetParams");
  if (!n || !pNodeParams) return sim_cuda_error(cudaErrorInvalidValue);
  *pNodeParams = n->p.u.host;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *pNodeParams) {
  gnode *n = node_typed(node, cudaGraphNodeTypeHost, "cudaGraphHostNodeSetParams");
  if (!n || !pNodeParams || !pNodeParams->fn) return sim_cuda_error(cudaErrorInvalidValue);
  n->p.u.host = *pNodeParams;
  return cudaSuccess;
}

static cudaError_t get_event(cudaGraphNode_t node, cudaEvent_t *out, enum cudaGraphNodeType t, const char *what) {
  gnode *n = node_typed(node, t, what);
  if (!n || !out) return sim_cuda_error(cudaErrorInvalidValue);
  *out = n->p.u.event;
  return cudaSuccess;
}

static cudaError_t set_event(cudaGraphNode_t node, cudaEvent_t e, enum cudaGraphNodeType t, const char *what) {
  gnode *n = node_typed(node, t, what);
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  if (!sim_event_valid(e)) {
    SIM_WARN(SIM_STREAM, "%s: event %p is not a live event", what, (void *)e);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  n->p.u.event = e;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out) {
  return get_event(node, event_out, cudaGraphNodeTypeEventRecord, "cudaGraphEventRecordNodeGetEvent");
}

SIM_EXPORT cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  return set_event(node, event, cudaGraphNodeTypeEventRecord, "cudaGraphEventRecordNodeSetEvent");
}

SIM_EXPORT cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *event_out) {
  return get_event(node, event_out, cudaGraphNodeTypeWaitEvent, "cudaGraphEventWaitNodeGetEvent");
}

SIM_EXPORT cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  return set_event(node, event, cudaGraphNodeTypeWaitEvent, "cudaGraphEventWaitNodeSetEvent");
}
