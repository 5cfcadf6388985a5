/*
 * sim/cuda/graph_mem.c — graph memory nodes: alloc and free nodes
 * (explicit, or captured cudaMallocAsync, cudaMallocFromPoolAsync and
 * cudaFreeAsync), their runs at a launch, and the graph memory attributes.
 *
 * An alloc node's allocation (a gmem) reserves its memory when the node
 * is made, at the address it keeps for the graph's life, as CUDA
 * documents. It is allocated from its alloc node's run at a launch until a
 * free node's run, a cudaFreeAsync or a cudaFree; a free marks it freed in
 * the registry (SIM_MEM_F_FREED) until its alloc node runs again. Runs are
 * decided as the launch enqueues its nodes, as mempool.c decides
 * cudaFreeAsync at the call, so the buffer checks of copies, memsets and
 * NCCL operations enqueued after the free report a use after free. Before
 * its first launch the memory is not marked: captures record uses of it
 * then (an NCCL operation's buffers are checked at the capture), so a use
 * before the first alloc node ran goes unreported. Adding or setting a
 * node (graph_node.c) records too, and ignores the mark. Memory no graph
 * holds any more is marked freed.
 *
 * A gmem is shared by reference: the nodes holding it (the graph's, and
 * executable graphs' copies) and, while it is allocated, the allocation
 * (which may outlive both graph and executable graph until freed outside
 * them; a cudaFreeAsync's reference goes when its stream gets there).
 * With no reference left, its memory stays reserved, cached for a later
 * alloc node of the same size on its device, until cudaDeviceGraphMemTrim.
 *
 * One lock, taken after the capture lock and before the registry's.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

#define GRAIN 256 /* cudaMalloc's alignment */

struct gmem {
  struct gmem *next; /* all of the process's */
  unsigned refs;
  void *ptr;
  size_t size, cap; /* asked for, reserved */
  int device;
  struct cudaMemAllocNodeParams params; /* as added (dptr set); accessDescs point into access */
  struct cudaMemAccessDesc *access;
  struct CUgraph_st *owner; /* the graph of its alloc node (NULL once that went) */
  gnode *node;              /* its alloc node */
  bool freed_in_owner;      /* a free node of the owner frees it */
  unsigned freed_elsewhere; /* free nodes of other graphs */
  bool live;                /* allocated: its alloc node ran and nothing freed it since */
};

typedef struct {
  uint64_t used, used_high, reserved, reserved_high;
} dev_stats;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gmem *all;
static dev_stats *stats; /* per device, grown as devices appear */
static int nstats;

/* A forked child has no graphs of its parent (a CUDA context does not
 * survive fork). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&lock, NULL);
  all = NULL;
  stats = NULL;
  nstats = 0;
}
__attribute__((constructor)) static void graph_mem_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

/* Device d's counters; NULL out of memory. Under the lock. */
static dev_stats *dev(int d) {
  if (d >= nstats) {
    int n = d + 1;
    dev_stats *s = sim_calloc((size_t)n, sizeof *s);
    if (!s) return NULL;
    if (nstats) memcpy(s, stats, (size_t)nstats * sizeof *s);
    sim_free(stats);
    stats = s;
    nstats = n;
  }
  return &stats[d];
}

static void count(uint64_t *cur, uint64_t *high, size_t add) {
  *cur += add;
  if (*cur > *high) *high = *cur;
}

typedef struct {
  gmem *m;
  void *freed_on; /* a stream handle, SIM_FREED_*, or NULL */
  size_t size;    /* 0: keep */
  bool freed;     /* marked freed (a use is a use after free) */
} mark_arg;

static sim_mem_edit_result mark(sim_alloc_info *a, void *arg) {
  mark_arg *k = arg;
  if (k->size) a->size = k->size;
  a->owner = k->m;
  a->flags |= SIM_MEM_F_GRAPH;
  if (k->freed) a->flags |= SIM_MEM_F_FREED;
  else a->flags &= ~(unsigned)SIM_MEM_F_FREED;
  a->freed_on = k->freed_on;
  return SIM_MEM_CHANGED;
}

void *gmem_ptr(const gmem *m) { return m->ptr; }

void gmem_describe(const gparams *p, char *buf, size_t len) {
  const gmem *m = p->u.mem;
  if (p->type == cudaGraphNodeTypeMemAlloc)
    snprintf(buf, len, "mem alloc %p, %zu bytes on device %d", m->ptr, m->size, m->device);
  else
    snprintf(buf, len, "mem free %p", m->ptr);
}

void gmem_ref(gmem *m) {
  sim_mutex_lock(&lock);
  m->refs++;
  pthread_mutex_unlock(&lock);
}

/* Under the lock. With none left, m stays cached (its memory reserved),
 * marked freed: no graph holds it. */
static void unref_locked(gmem *m) {
  if (--m->refs) return;
  sim_mem_edit(m->ptr, mark, &(mark_arg){m, SIM_FREED_NOT_ALLOCATED, 0, true});
  sim_free(m->access);
  m->access = NULL;
  m->owner = NULL;
  m->node = NULL;
}

void gmem_unref(gmem *m) {
  sim_mutex_lock(&lock);
  unref_locked(m);
  pthread_mutex_unlock(&lock);
}

/* A new allocation of `size` bytes on `device`, not yet allocated, one
 * reference (the node's): a cached one of its size, or new memory. */
static cudaError_t gmem_new(int device, size_t size, const struct cudaMemAllocNodeParams *params, gmem **out,
                            const char *what) {
  size_t cap = (size + GRAIN - 1) / GRAIN * GRAIN;
  if (cap < size) {
    SIM_WARN(SIM_ALLOC, "%s: %zu bytes: out of memory", what, size);
    return cudaErrorMemoryAllocation;
  }
  struct cudaMemAccessDesc *access = NULL;
  if (params->accessDescCount) {
    if (!(access = sim_malloc(params->accessDescCount * sizeof *access))) return cudaErrorMemoryAllocation;
    memcpy(access, params->accessDescs, params->accessDescCount * sizeof *access);
  }
  sim_mutex_lock(&lock);
  dev_stats *st = dev(device);
  gmem *m = NULL;
  for (gmem *c = all; c && st; c = c->next)
    if (!c->refs && c->device == device && c->cap == cap) {
      m = c;
      break;
    }
  cudaError_t err = st ? cudaSuccess : cudaErrorMemoryAllocation;
  if (st && !m) {
    void *ptr = NULL;
    if (!(m = sim_calloc(1, sizeof *m))) err = cudaErrorMemoryAllocation;
    else if ((err = sim_mem_alloc(&ptr, cap, device, SIM_MEM_DEVICE, GRAIN)) != cudaSuccess) {
      sim_free(m);
      m = NULL;
    } else {
      m->ptr = ptr;
      m->cap = cap;
      m->device = device;
      m->next = all;
      all = m;
      count(&st->reserved, &st->reserved_high, cap);
    }
  }
  if (m) {
    m->refs = 1;
    m->size = size;
    m->access = access;
    m->params = *params;
    m->params.accessDescs = access;
    m->params.dptr = m->ptr;
    m->owner = NULL;
    m->node = NULL;
    m->freed_in_owner = m->live = false;
    m->freed_elsewhere = 0;
    sim_mem_edit(m->ptr, mark, &(mark_arg){m, SIM_FREED_NOT_ALLOCATED, size, false});
    *out = m;
  } else {
    sim_free(access);
  }
  pthread_mutex_unlock(&lock);
  return err;
}

/* ---- nodes ---- */

/* The allocation of a free node of graph g for p, after deps; its checks
 * are cudaGraphAddMemFreeNode's. Under the lock. */
static cudaError_t free_check_locked(struct CUgraph_st *g, gnode *const *deps, size_t ndeps, const void *p, gmem **out,
                                     const char *what) {
  sim_alloc_info a;
  if (!p || !sim_mem_lookup(p, &a) || !(a.flags & SIM_MEM_F_GRAPH) || a.base != p) {
    SIM_WARN(SIM_ALLOC, "%s: dptr %p is not an address an alloc node returned", what, p);
    return cudaErrorInvalidValue;
  }
  gmem *m = a.owner;
  if (!m->refs) {
    SIM_WARN(SIM_ALLOC, "%s: dptr %p was a graph's allocation, freed, whose graphs are gone", what, p);
    return cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i]->p.type == cudaGraphNodeTypeMemFree && g->nodes[i]->p.u.mem == m) {
      SIM_WARN(SIM_ALLOC, "%s: dptr %p: graph %p frees it already (node %p)", what, p, (void *)g, (void *)g->nodes[i]);
      return cudaErrorInvalidValue;
    }
  if (m->freed_in_owner) {
    SIM_WARN(SIM_ALLOC, "%s: dptr %p: its own graph %p frees it; no other graph may", what, p, (void *)m->owner);
    return cudaErrorInvalidValue;
  }
  if (m->owner == g && m->freed_elsewhere) {
    SIM_WARN(SIM_ALLOC, "%s: dptr %p is freed by another graph's free node; its own graph may not free it too", what,
             p);
    return cudaErrorInvalidValue;
  }
  /* Assumed (undocumented): in its own graph, a free comes after its alloc. */
  if (m->owner == g && !graph_reaches(deps, ndeps, m->node)) {
    SIM_WARN(SIM_ALLOC, "%s: dptr %p: the free node would not depend on its alloc node %p", what, p, (void *)m->node);
    return cudaErrorInvalidValue;
  }
  *out = m;
  return cudaSuccess;
}

static cudaError_t capture_free_check(struct CUgraph_st *g, gnode *const *deps, size_t ndeps, const gparams *p) {
  gmem *m;
  sim_mutex_lock(&lock);
  cudaError_t err = free_check_locked(g, deps, ndeps, p->u.mem->ptr, &m, "cudaFreeAsync (in a capture)");
  pthread_mutex_unlock(&lock);
  return err;
}

/* n, a new alloc or free node of g, holds its allocation. */
static void node_added(gnode *n) {
  gmem *m = n->p.u.mem;
  sim_mutex_lock(&lock);
  if (n->p.type == cudaGraphNodeTypeMemAlloc) {
    m->owner = n->graph;
    m->node = n;
  } else if (m->owner == n->graph) {
    m->freed_in_owner = true;
  } else {
    m->freed_elsewhere++;
  }
  pthread_mutex_unlock(&lock);
}

void gmem_node_gone(const gnode *n) {
  if (n->p.type != cudaGraphNodeTypeMemAlloc && n->p.type != cudaGraphNodeTypeMemFree) return;
  gmem *m = n->p.u.mem;
  sim_mutex_lock(&lock);
  if (n->p.type == cudaGraphNodeTypeMemAlloc) {
    m->owner = NULL;
    m->node = NULL;
  } else if (m->owner == n->graph) {
    m->freed_in_owner = false;
  } else if (m->freed_elsewhere) {
    m->freed_elsewhere--;
  }
  pthread_mutex_unlock(&lock);
}

bool graph_has_mem(const struct CUgraph_st *g, const char *what) {
  for (size_t i = 0; i < g->n; i++)
    if (g->nodes[i]->p.type == cudaGraphNodeTypeMemAlloc || g->nodes[i]->p.type == cudaGraphNodeTypeMemFree) {
      if (what)
        SIM_WARN(SIM_STREAM, "%s: graph %p has memory nodes (node %p is a %s node), which CUDA does not allow here",
                 what, (void *)g, (void *)g->nodes[i], gparams_type_name(g->nodes[i]->p.type));
      return true;
    }
  return false;
}

static bool device_ok(int d) { return d >= 0 && d < sim_device_count(); }

static bool props_ok(const struct cudaMemAllocNodeParams *p, const char *what) {
  const struct cudaMemPoolProps *pp = &p->poolProps;
  static const unsigned char zero[sizeof pp->reserved];
  const char *why = NULL;
  if (pp->allocType != cudaMemAllocationTypePinned) why = "poolProps.allocType is not cudaMemAllocationTypePinned";
  else if (pp->location.type != cudaMemLocationTypeDevice) why = "poolProps.location.type is not a device";
  else if (!device_ok(pp->location.id)) why = "poolProps.location.id is not a device";
  else if (pp->handleTypes != cudaMemHandleTypeNone) why = "poolProps.handleTypes is not cudaMemHandleTypeNone";
  else if (pp->win32SecurityAttributes) why = "poolProps.win32SecurityAttributes is not NULL";
  else if (pp->usage) why = "poolProps.usage is not 0";
  else if (memcmp(pp->reserved, zero, sizeof zero)) why = "poolProps.reserved is not zero";
  else if (!p->bytesize) why = "bytesize is 0";
  else if (p->accessDescCount && !p->accessDescs) why = "accessDescs is NULL";
  else if (p->accessDescCount > (size_t)sim_device_count()) why = "accessDescCount exceeds the number of devices";
  if (why) {
    SIM_WARN(SIM_ALLOC, "%s: %s", what, why);
    return false;
  }
  for (size_t i = 0; i < p->accessDescCount; i++) {
    const struct cudaMemAccessDesc *d = &p->accessDescs[i];
    if (d->location.type != cudaMemLocationTypeDevice || !device_ok(d->location.id) ||
        (d->flags != cudaMemAccessFlagsProtNone && d->flags != cudaMemAccessFlagsProtRead &&
         d->flags != cudaMemAccessFlagsProtReadWrite)) {
      SIM_WARN(SIM_ALLOC, "%s: accessDescs[%zu] (location type %d id %d, flags %d) is not a device's access", what, i,
               (int)d->location.type, d->location.id, (int)d->flags);
      return false;
    }
  }
  return true;
}

SIM_EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                struct cudaMemAllocNodeParams *nodeParams) {
  static const char what[] = "cudaGraphAddMemAllocNode";
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!g) return sim_cuda_error(cudaErrorInvalidValue);
  if (!pGraphNode || !nodeParams) {
    SIM_WARN(SIM_STREAM, "%s: pGraphNode %p, nodeParams %p (NULL)", what, (void *)pGraphNode, (void *)nodeParams);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  if (!props_ok(nodeParams, what)) return sim_cuda_error(cudaErrorInvalidValue);
  gmem *m;
  cudaError_t err = gmem_new(nodeParams->poolProps.location.id, nodeParams->bytesize, nodeParams, &m, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  gparams p = {.type = cudaGraphNodeTypeMemAlloc, .u.mem = m};
  gnode *n;
  if ((err = graph_add(g, pDependencies, numDependencies, &p, &n)) != cudaSuccess) {
    gmem_unref(m);
    return sim_cuda_error(err);
  }
  node_added(n);
  nodeParams->dptr = m->ptr;
  *pGraphNode = n;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                               void *dptr) {
  static const char what[] = "cudaGraphAddMemFreeNode";
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!g) return sim_cuda_error(cudaErrorInvalidValue);
  if (!pGraphNode) {
    SIM_WARN(SIM_STREAM, "%s: pGraphNode is NULL", what);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  /* The dependencies are checked first, so that graph_reaches reads nodes of g. */
  for (size_t i = 0; i < numDependencies; i++)
    if (!pDependencies || !node_resolve(pDependencies[i], what) || pDependencies[i]->graph != g) {
      SIM_WARN(SIM_STREAM, "%s: pDependencies[%zu] is not a node of graph %p", what, i, (void *)g);
      return sim_cuda_error(cudaErrorInvalidValue);
    }
  gmem *m;
  sim_mutex_lock(&lock);
  cudaError_t err = free_check_locked(g, pDependencies, numDependencies, dptr, &m, what);
  if (err == cudaSuccess) m->refs++;
  pthread_mutex_unlock(&lock);
  if (err != cudaSuccess) return sim_cuda_error(err);
  gparams p = {.type = cudaGraphNodeTypeMemFree, .u.mem = m};
  gnode *n;
  if ((err = graph_add(g, pDependencies, numDependencies, &p, &n)) != cudaSuccess) {
    gmem_unref(m);
    return sim_cuda_error(err);
  }
  node_added(n);
  *pGraphNode = n;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out) {
  static const char what[] = "cudaGraphMemAllocNodeGetParams";
  gnode *n = node_typed(node, cudaGraphNodeTypeMemAlloc, what);
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  if (!params_out) {
    SIM_WARN(SIM_STREAM, "%s: params_out is NULL", what);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  *params_out = n->p.u.mem->params; /* accessDescs: the node's own copy, as CUDA's */
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr_out) {
  static const char what[] = "cudaGraphMemFreeNodeGetParams";
  gnode *n = node_typed(node, cudaGraphNodeTypeMemFree, what);
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  if (!dptr_out) {
    SIM_WARN(SIM_STREAM, "%s: dptr_out is NULL", what);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  *(void **)dptr_out = n->p.u.mem->ptr;
  return cudaSuccess;
}

/* ---- captures ---- */

cudaError_t sim_graph_mem_capture_alloc(sim_stream *s, void **out, size_t size, int device, const char *what) {
  if (!size) { /* as outside a capture: NULL, and no node (assumed) */
    *out = NULL;
    return cudaSuccess;
  }
  struct cudaMemAllocNodeParams params = {
      .poolProps = {.allocType = cudaMemAllocationTypePinned,
                    .location = {.type = cudaMemLocationTypeDevice, .id = device}},
      .bytesize = size};
  gmem *m;
  cudaError_t err = gmem_new(device, size, &params, &m, what);
  if (err != cudaSuccess) return err;
  gparams p = {.type = cudaGraphNodeTypeMemAlloc, .u.mem = m};
  gnode *n;
  if ((err = capture_add_node(s, &p, NULL, &n)) != cudaSuccess) {
    gmem_unref(m);
    return err;
  }
  node_added(n);
  *out = m->ptr;
  SIM_TRACE(SIM_ALLOC, "%s %p %zu bytes: an alloc node in a capture", what, m->ptr, size);
  return cudaSuccess;
}

cudaError_t sim_graph_mem_capture_free(sim_stream *s, void *p) {
  sim_alloc_info a;
  if (!sim_mem_lookup(p, &a) || !(a.flags & SIM_MEM_F_GRAPH)) return cudaErrorInvalidValue;
  gmem *m = a.owner;
  gmem_ref(m);
  gparams gp = {.type = cudaGraphNodeTypeMemFree, .u.mem = m};
  gnode *n;
  cudaError_t err = capture_add_node(s, &gp, capture_free_check, &n);
  if (err != cudaSuccess) {
    gmem_unref(m);
    return err;
  }
  node_added(n);
  return cudaSuccess;
}

/* ---- launches and frees ---- */

/* m is freed, by `by` (a stream handle or SIM_FREED_*). Under the lock;
 * the allocation's reference stays with the caller. */
static void free_locked(gmem *m, void *by) {
  m->live = false;
  stats[m->device].used -= m->cap;
  sim_mem_edit(m->ptr, mark, &(mark_arg){m, by, 0, true});
}

typedef struct {
  sim_op op;
  gmem *m;
} free_op;

static cudaError_t free_run(sim_op *op, cudaError_t err) {
  (void)err; /* freed even on a failed stream: the free was the program's */
  gmem_unref(((free_op *)op)->m);
  return cudaSuccess;
}

static void op_free(sim_op *op) { sim_free(op); }

/* m, allocated, freed by cudaFreeAsync on s (hs): its reference goes when
 * the stream gets there, so that its memory is reused only after what s
 * enqueued before. Under the lock. */
static cudaError_t free_async_locked(gmem *m, sim_stream *s, cudaStream_t hs) {
  free_op *f = sim_calloc(1, sizeof *f);
  if (!f) return cudaErrorMemoryAllocation;
  f->op.run = free_run;
  f->op.release = op_free;
  f->op.what = "cudaFreeAsync (graph memory)";
  f->op.unbounded = true;
  f->m = m;
  free_locked(m, hs);
  /* free_run takes the lock: it may run only after this returns. */
  cudaError_t err = sim_stream_enqueue(s, &f->op);
  if (err != cudaSuccess) {
    sim_free(f);
    m->live = true;
    stats[m->device].used += m->cap;
    sim_mem_edit(m->ptr, mark, &(mark_arg){m, NULL, 0, false});
  }
  return err;
}

cudaError_t sim_graph_mem_free(void *p, sim_stream *s, cudaStream_t hs, const char *what) {
  sim_alloc_info a;
  sim_mutex_lock(&lock);
  cudaError_t err = cudaSuccess;
  gmem *m = sim_mem_lookup(p, &a) && (a.flags & SIM_MEM_F_GRAPH) && a.base == p ? a.owner : NULL;
  if (!m) {
    SIM_WARN(SIM_ALLOC, "%s: %p is not the start of a graph's allocation", what, p);
    err = cudaErrorInvalidValue;
  } else if (!m->live) {
    SIM_WARN(SIM_ALLOC, "%s: %p is a graph's allocation that is not allocated now (%s)", what, p,
             a.freed_on == SIM_FREED_NOT_ALLOCATED ? "its alloc node has not run" : "it was freed already");
    err = cudaErrorInvalidValue;
  } else if (m->freed_in_owner) {
    SIM_WARN(SIM_ALLOC, "%s: %p is freed by a free node of its own graph %p; it cannot be freed outside it", what, p,
             (void *)m->owner);
    err = cudaErrorInvalidValue;
  } else if (s) {
    err = free_async_locked(m, s, hs);
  } else {
    free_locked(m, SIM_FREED_BY_CUDAFREE);
    unref_locked(m);
  }
  pthread_mutex_unlock(&lock);
  return err;
}

cudaError_t gmem_launch_check(gmem *const *allocs, size_t n, bool auto_free, sim_stream *s, cudaStream_t hs) {
  cudaError_t err = cudaSuccess;
  sim_mutex_lock(&lock);
  for (size_t i = 0; i < n && err == cudaSuccess; i++) {
    gmem *m = allocs[i];
    if (!m->live) continue;
    if (!auto_free) {
      SIM_WARN(SIM_STREAM,
               "cudaGraphLaunch: the allocation %p (%zu bytes) of the graph's previous launch is not freed yet; free "
               "it first (cudaFreeAsync, cudaFree, a free node) or instantiate with "
               "cudaGraphInstantiateFlagAutoFreeOnLaunch",
               m->ptr, m->size);
      err = cudaErrorInvalidValue;
    }
  }
  for (size_t i = 0; i < n && err == cudaSuccess && auto_free; i++)
    if (allocs[i]->live) err = free_async_locked(allocs[i], s, hs);
  pthread_mutex_unlock(&lock);
  return err;
}

cudaError_t gmem_launch_node(const gparams *p, sim_stream *s) {
  gmem *m = p->u.mem;
  cudaError_t err = cudaSuccess;
  sim_mutex_lock(&lock);
  if (p->type == cudaGraphNodeTypeMemAlloc) {
    if (NEVER(m->live)) { /* gmem_launch_check saw it free */
      pthread_mutex_unlock(&lock);
      return cudaErrorInvalidValue;
    }
    m->live = true;
    m->refs++; /* the allocation's */
    count(&stats[m->device].used, &stats[m->device].used_high, m->cap);
    sim_mem_edit(m->ptr, mark, &(mark_arg){m, NULL, 0, false});
  } else if (!m->live) {
    SIM_WARN(SIM_STREAM, "cudaGraphLaunch: a free node of %p, which is not allocated now (its alloc node has not run, "
                         "or it was freed already)", m->ptr);
    err = cudaErrorInvalidValue;
  } else {
    free_locked(m, SIM_FREED_BY_FREE_NODE);
    /* The allocation's reference: the nodes hold theirs until the launch's
     * ops ran (the executable graph's copy). */
    unref_locked(m);
  }
  pthread_mutex_unlock(&lock);
  (void)s;
  return err;
}

void gmem_launch_failed(gmem *const *allocs, size_t n) {
  sim_mutex_lock(&lock);
  for (size_t i = 0; i < n; i++)
    if (allocs[i]->live && allocs[i]->freed_in_owner) {
      free_locked(allocs[i], SIM_FREED_BY_FREE_NODE);
      unref_locked(allocs[i]);
    }
  pthread_mutex_unlock(&lock);
}

/* ---- attributes ---- */

SIM_EXPORT cudaError_t cudaDeviceGraphMemTrim(int device) {
  if (!device_ok(device)) return sim_cuda_error(cudaErrorInvalidDevice);
  sim_mutex_lock(&lock);
  for (gmem **pp = &all; *pp;) {
    gmem *m = *pp;
    if (m->refs || m->device != device) {
      pp = &m->next;
      continue;
    }
    *pp = m->next;
    stats[device].reserved -= m->cap;
    sim_mem_free(m->ptr, SIM_MEM_DEVICE);
    sim_free(m);
  }
  pthread_mutex_unlock(&lock);
  return cudaSuccess;
}

static cudaError_t attr(int device, enum cudaGraphMemAttributeType a, void *value, bool set, const char *what) {
  if (!device_ok(device)) return cudaErrorInvalidDevice;
  if (!value) {
    SIM_WARN(SIM_ALLOC, "%s: value is NULL", what);
    return cudaErrorInvalidValue;
  }
  unsigned long long *v = value;
  sim_mutex_lock(&lock);
  dev_stats *st = dev(device);
  cudaError_t err = st ? cudaSuccess : cudaErrorMemoryAllocation;
  if (st) switch (a) {
    case cudaGraphMemAttrUsedMemCurrent:
    case cudaGraphMemAttrReservedMemCurrent:
      if (set) {
        SIM_WARN(SIM_ALLOC, "%s: attribute %d cannot be set (only the high watermarks can)", what, (int)a);
        err = cudaErrorInvalidValue;
      } else {
        *v = a == cudaGraphMemAttrUsedMemCurrent ? st->used : st->reserved;
      }
      break;
    case cudaGraphMemAttrUsedMemHigh:
    case cudaGraphMemAttrReservedMemHigh: {
      uint64_t *high = a == cudaGraphMemAttrUsedMemHigh ? &st->used_high : &st->reserved_high;
      if (!set) *v = *high;
      else if (*v) {
        SIM_WARN(SIM_ALLOC, "%s: a high watermark can only be reset to 0, not %llu", what, *v);
        err = cudaErrorInvalidValue;
      } else {
        *high = a == cudaGraphMemAttrUsedMemHigh ? st->used : st->reserved;
      }
      break;
    }
    default:
      SIM_WARN(SIM_ALLOC, "%s: attribute %d is not a cudaGraphMemAttributeType", what, (int)a);
      err = cudaErrorInvalidValue;
  }
  pthread_mutex_unlock(&lock);
  return err;
}

SIM_EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType a, void *value) {
  return sim_cuda_error(attr(device, a, value, false, "cudaDeviceGetGraphMemAttribute"));
}

SIM_EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType a, void *value) {
  return sim_cuda_error(attr(device, a, value, true, "cudaDeviceSetGraphMemAttribute"));
}
