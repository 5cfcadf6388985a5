/*
 * sim/cuda/graph_exec.c — executable graphs: instantiation, launches,
 * updates, and the parameters of their nodes.
 *
 * Instantiation copies the graph's nodes (their parameters, and a
 * reference on each kernel node's work) in a launch order: a topological
 * order that takes, among the nodes whose dependencies are met, the one
 * created first, so a captured graph runs in the order it was captured.
 *
 * A launch is ops on the launch stream, of the one engine that runs every
 * stream: a first op that waits for the graph's previous launch when that
 * was on another stream (CUDA orders the launches of one graph), then each
 * node's op in launch order (a kernel's or an NCCL operation's from its
 * work), then an op that counts the launch done. Running independent
 * branches one after another is one of the executions CUDA allows; it
 * never runs one branch while waiting for another, so a graph that only
 * completes with its branches running at once (a host node spinning on
 * another branch's write) hangs here and may on a GPU. The first op
 * carries the launch's share of the stream's depth (launch_cost) and the
 * others none, so the share is given back when the launch begins to run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

_Thread_local bool sim_graph_launching;
_Atomic int sim_graph_launches;

typedef struct xnode {
  gparams p;
  bool enabled;
  const gnode *from;  /* the graph's node it was made from */
  const gnode *alias; /* the node of the graph of the last cudaGraphExecUpdate */
  size_t order;       /* its node's creation rank in the graph */
  size_t *deps;       /* its dependencies' creation ranks, ascending */
  size_t ndeps;
} xnode;

struct CUgraphExec_st {
  _Atomic uint32_t magic;
  _Atomic int refs; /* the handle, and each launch until its last op ran */
  xnode *nodes;     /* launch order */
  size_t n;
  size_t *by_order; /* creation rank -> index in nodes */
  unsigned long long flags;
  uobj_ref *uobjs;
  size_t nuobjs;
  /* Launches of the graph, in order: made (by the host), ended (by the
   * streams), and the stream of the last one. */
  _Atomic uint64_t launched;
  sim_count done;
  _Atomic(sim_stream *) last_stream;
  /* With memory nodes: the graph it is the one executable graph of (NULL
   * once that went), and its alloc nodes' allocations (the nodes hold
   * the references). */
  struct CUgraph_st *graph;
  gmem **allocs;
  size_t nallocs;
};

static struct CUgraphExec_st *exec_resolve(cudaGraphExec_t x, const char *what) {
  if (!x || atomic_load_explicit(&x->magic, memory_order_relaxed) != EXEC_MAGIC) {
    SIM_WARN(SIM_STREAM, "%s: %p is not a live executable graph", what, (void *)x);
    return NULL;
  }
  return x;
}

static void exec_unref(struct CUgraphExec_st *x) {
  if (atomic_fetch_sub_explicit(&x->refs, 1, memory_order_acq_rel) != 1) return;
  for (size_t i = 0; i < x->n; i++) {
    gparams_clear(&x->nodes[i].p);
    sim_free(x->nodes[i].deps);
  }
  for (size_t i = 0; i < x->nuobjs; i++) uobj_release(x->uobjs[i].obj, x->uobjs[i].count);
  sim_free(x->uobjs);
  sim_free(x->allocs);
  sim_free(x->nodes);
  sim_free(x->by_order);
  sim_free(x);
}

/* ---- instantiation ---- */

/* A binary min-heap of creation ranks: the ready nodes. */
static void heap_push(size_t *h, size_t *n, size_t v) {
  size_t i = (*n)++;
  while (i && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n) {
  size_t top = h[0], v = h[--*n], i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
    i = c;
  }
  if (*n) h[i] = v;
  return top;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return x < y ? -1 : x > y;
}

/* The launch order of g's nodes (creation ranks) in `order`; false if g
 * has a cycle (then *stuck is a node on or behind it). */
static bool topo_order(struct CUgraph_st *g, size_t *order, size_t *indeg, size_t *heap, gnode **stuck) {
  size_t nh = 0, k = 0;
  for (size_t i = 0; i < g->n; i++) {
    indeg[i] = g->nodes[i]->nin;
    if (!indeg[i]) heap_push(heap, &nh, i);
  }
  while (nh) {
    size_t i = heap_pop(heap, &nh);
    order[k++] = i;
    gnode *x = g->nodes[i];
    for (size_t j = 0; j < x->nout; j++)
      if (!--indeg[x->out[j]->index]) heap_push(heap, &nh, x->out[j]->index);
  }
  if (k == g->n) return true;
  for (size_t i = 0; i < g->n; i++)
    if (indeg[i]) {
      *stuck = g->nodes[i];
      break;
    }
  return false;
}

static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t graph, unsigned long long flags,
                               cudaGraphInstantiateResult *result, cudaGraphNode_t *err_node, const char *what) {
  struct CUgraph_st *g = graph_resolve(graph, what);
  *result = cudaGraphInstantiateError;
  if (!out || !g) return cudaErrorInvalidValue;
  /* Forbidden in a capture as cudaMalloc is (CUDA 13 on H200, graph_probe). */
  cudaError_t cap = sim_capture_unsafe(what);
  if (cap != cudaSuccess) return cap;
  unsigned long long known = cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
                             cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;
  if (flags & ~known) {
    SIM_WARN(SIM_STREAM, "%s: flags 0x%llx: unknown flags", what, flags);
    return cudaErrorInvalidValue;
  }
  if (flags & cudaGraphInstantiateFlagDeviceLaunch) {
    SIM_WARN(SIM_STREAM, "%s: cudaGraphInstantiateFlagDeviceLaunch: ncclsim has no device-side graph launch", what);
    *result = cudaGraphInstantiateNodeOperationNotSupported;
    return cudaErrorNotSupported;
  }
  bool mem = graph_has_mem(g, NULL);
  if (mem && g->exec) { /* CUDA documents an error; the code is assumed */
    SIM_WARN(SIM_STREAM,
             "%s: graph %p has memory nodes and an executable graph already (%p): CUDA allows one at a time; "
             "cudaGraphExecDestroy it first",
             what, (void *)g, (void *)g->exec);
    return cudaErrorInvalidValue;
  }
  size_t n = g->n, m = n ? n : 1;
  struct CUgraphExec_st *x = sim_calloc(1, sizeof *x);
  size_t *order = sim_malloc(m * sizeof *order), *indeg = sim_malloc(m * sizeof *indeg),
         *heap = sim_malloc(m * sizeof *heap);
  cudaError_t err = cudaErrorMemoryAllocation;
  if (!x || !order || !indeg || !heap || !(x->nodes = sim_calloc(m, sizeof *x->nodes)) ||
      !(x->by_order = sim_malloc(m * sizeof *x->by_order)))
    goto fail;
  atomic_store(&x->refs, 1);
  gnode *stuck = NULL;
  if (!topo_order(g, order, indeg, heap, &stuck)) {
    SIM_WARN(SIM_STREAM, "%s: graph %p has a cycle through node %p (cudaGraphAddDependencies made it)", what,
             (void *)g, (void *)stuck);
    *result = cudaGraphInstantiateInvalidStructure;
    if (err_node) *err_node = stuck;
    err = cudaErrorInvalidValue;
    goto fail;
  }
  for (size_t k = 0; k < n; k++) {
    gnode *gn = g->nodes[order[k]];
    xnode *xn = &x->nodes[k];
    xn->from = gn;
    xn->order = gn->index;
    xn->enabled = true;
    x->by_order[gn->index] = k;
    if (gn->nin) {
      if (!(xn->deps = sim_malloc(gn->nin * sizeof *xn->deps))) goto fail;
      for (size_t j = 0; j < gn->nin; j++) xn->deps[j] = gn->in[j]->index;
      qsort(xn->deps, gn->nin, sizeof *xn->deps, cmp_size);
      xn->ndeps = gn->nin;
    }
    gparams_copy(&xn->p, &gn->p);
    x->n = k + 1;
    if (gn->p.type == cudaGraphNodeTypeMemAlloc) {
      if (!x->allocs && !(x->allocs = sim_malloc(n * sizeof *x->allocs))) goto fail;
      x->allocs[x->nallocs++] = gn->p.u.mem;
    }
  }
  if (g->nuobjs) {
    if (!(x->uobjs = sim_malloc(g->nuobjs * sizeof *x->uobjs))) goto fail;
    for (size_t i = 0; i < g->nuobjs; i++) {
      x->uobjs[i] = g->uobjs[i];
      uobj_retain(g->uobjs[i].obj, g->uobjs[i].count);
    }
    x->nuobjs = g->nuobjs;
  }
  x->flags = flags;
  if (mem) {
    x->graph = g;
    g->exec = x;
  }
  sim_count_init(&x->done);
  atomic_store(&x->magic, EXEC_MAGIC);
  sim_free(order);
  sim_free(indeg);
  sim_free(heap);
  *result = cudaGraphInstantiateSuccess;
  *out = x;
  return cudaSuccess;
fail:
  sim_free(order);
  sim_free(indeg);
  sim_free(heap);
  if (x) {
    atomic_store(&x->refs, 1);
    exec_unref(x); /* what was copied so far */
  }
  return err;
}

SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  cudaGraphInstantiateResult r;
  return sim_cuda_error(instantiate(pGraphExec, graph, flags, &r, NULL, "cudaGraphInstantiate"));
}

SIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                     unsigned long long flags) {
  cudaGraphInstantiateResult r;
  return sim_cuda_error(instantiate(pGraphExec, graph, flags, &r, NULL, "cudaGraphInstantiateWithFlags"));
}

SIM_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams *instantiateParams) {
  static const char what[] = "cudaGraphInstantiateWithParams";
  if (!instantiateParams) return sim_cuda_error(cudaErrorInvalidValue);
  instantiateParams->errNode_out = NULL;
  cudaError_t err = instantiate(pGraphExec, graph, instantiateParams->flags, &instantiateParams->result_out,
                                &instantiateParams->errNode_out, what);
  if (err == cudaSuccess && (instantiateParams->flags & cudaGraphInstantiateFlagUpload) &&
      (err = cudaGraphUpload(*pGraphExec, instantiateParams->uploadStream)) != cudaSuccess) {
    cudaGraphExecDestroy(*pGraphExec);
    instantiateParams->result_out = cudaGraphInstantiateError;
  }
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags) {
  struct CUgraphExec_st *x = exec_resolve(graphExec, "cudaGraphExecGetFlags");
  if (!x || !flags) return sim_cuda_error(cudaErrorInvalidValue);
  *flags = x->flags;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  struct CUgraphExec_st *x = exec_resolve(graphExec, "cudaGraphExecDestroy");
  if (!x) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t cap = sim_capture_unsafe("cudaGraphExecDestroy"); /* as cudaGraphInstantiate */
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  atomic_store(&x->magic, 0);
  if (x->graph) x->graph->exec = NULL;
  exec_unref(x); /* its launches hold theirs */
  return cudaSuccess;
}

void exec_graph_gone(struct CUgraphExec_st *x) { x->graph = NULL; }

/* ---- launches ---- */

typedef struct {
  sim_op op;
  struct CUgraphExec_st *x;
  uint64_t after; /* launches of x that must have ended first (0: none) */
} mark_op;

static void op_free(sim_op *op) { sim_stream_op_free(op); }

static cudaError_t begin_run(sim_op *op, cudaError_t err) {
  mark_op *m = (mark_op *)op;
  (void)err;
  /* Bounded: the launch waited for ends by its own ops' deadlines. */
  if (m->after) sim_count_wait(&m->x->done, m->after, UINT64_MAX);
  return cudaSuccess;
}

static cudaError_t end_run(sim_op *op, cudaError_t err) {
  (void)err;
  sim_count_add(&((mark_op *)op)->x->done, 1);
  return cudaSuccess;
}

static void end_release(sim_op *op) {
  struct CUgraphExec_st *x = ((mark_op *)op)->x;
  sim_stream_op_free(op);
  exec_unref(x);
}

typedef struct {
  sim_op op;
  struct cudaMemcpy3DParms p;
} copy_op;

static cudaError_t copy_run(sim_op *op, cudaError_t err) {
  const struct cudaMemcpy3DParms *p = &((copy_op *)op)->p;
  if (err != cudaSuccess) return cudaSuccess; /* a poisoned stream moves no data */
  size_t sslice = p->srcPtr.pitch * p->srcPtr.ysize, dslice = p->dstPtr.pitch * p->dstPtr.ysize;
  const char *src = (const char *)p->srcPtr.ptr + p->srcPos.z * sslice + p->srcPos.y * p->srcPtr.pitch + p->srcPos.x;
  char *dst = (char *)p->dstPtr.ptr + p->dstPos.z * dslice + p->dstPos.y * p->dstPtr.pitch + p->dstPos.x;
  for (size_t z = 0; z < p->extent.depth; z++)
    for (size_t y = 0; y < p->extent.height; y++)
      memmove(dst + z * dslice + y * p->dstPtr.pitch, src + z * sslice + y * p->srcPtr.pitch, p->extent.width);
  return cudaSuccess;
}

typedef struct {
  sim_op op;
  struct cudaMemsetParams p;
} set_op;

static cudaError_t set_run(sim_op *op, cudaError_t err) {
  const struct cudaMemsetParams *p = &((set_op *)op)->p;
  if (err != cudaSuccess) return cudaSuccess;
  for (size_t y = 0; y < p->height; y++) {
    char *row = (char *)p->dst + y * p->pitch;
    if (p->elementSize == 1) {
      memset(row, (int)(p->value & 0xff), p->width);
    } else if (p->elementSize == 2) {
      uint16_t v = (uint16_t)p->value;
      for (size_t i = 0; i < p->width; i++) memcpy(row + 2 * i, &v, 2);
    } else {
      uint32_t v = p->value;
      for (size_t i = 0; i < p->width; i++) memcpy(row + 4 * i, &v, 4);
    }
  }
  return cudaSuccess;
}

typedef struct {
  sim_op op;
  cudaHostFn_t fn;
  void *arg;
} host_op;

static cudaError_t host_run(sim_op *op, cudaError_t err) {
  host_op *h = (host_op *)op;
  if (err == cudaSuccess) h->fn(h->arg);
  return cudaSuccess;
}

/* Enqueues op, made with sim_stream_op_alloc(s, ...), to run `run`. */
static cudaError_t push(sim_stream *s, sim_op *op, cudaError_t (*run)(sim_op *, cudaError_t), const char *what) {
  op->run = run;
  op->release = op_free;
  op->what = what;
  cudaError_t err = sim_stream_enqueue(s, op);
  if (err != cudaSuccess) sim_stream_op_free(op);
  return err;
}

static cudaError_t launch_node(const xnode *xn, sim_stream *s) {
  const gparams *p = &xn->p;
  cudaError_t err;
  if (!xn->enabled) return cudaSuccess;
  switch (p->type) {
  case cudaGraphNodeTypeKernel: return p->u.k.w->ops->launch(p->u.k.w, s);
  case cudaGraphNodeTypeMemcpy: {
    /* The memory may have gone since the node was made. */
    if ((err = gparams_check_copy(&p->u.copy, "cudaGraphLaunch (a memcpy node)")) != cudaSuccess) return err;
    copy_op *c = sim_stream_op_alloc(s, sizeof *c);
    if (!c) return cudaErrorMemoryAllocation;
    c->p = p->u.copy;
    return push(s, &c->op, copy_run, "graph memcpy node");
  }
  case cudaGraphNodeTypeMemset: {
    if ((err = gparams_check_set(&p->u.set, "cudaGraphLaunch (a memset node)")) != cudaSuccess) return err;
    set_op *m = sim_stream_op_alloc(s, sizeof *m);
    if (!m) return cudaErrorMemoryAllocation;
    m->p = p->u.set;
    return push(s, &m->op, set_run, "graph memset node");
  }
  case cudaGraphNodeTypeHost: {
    host_op *h = sim_stream_op_alloc(s, sizeof *h);
    if (!h) return cudaErrorMemoryAllocation;
    h->fn = p->u.host.fn;
    h->arg = p->u.host.userData;
    return push(s, &h->op, host_run, "graph host node");
  }
  case cudaGraphNodeTypeMemAlloc:
  case cudaGraphNodeTypeMemFree: return gmem_launch_node(p, s);
  case cudaGraphNodeTypeEventRecord: return cudaEventRecord(p->u.event, s);
  case cudaGraphNodeTypeWaitEvent: return cudaStreamWaitEvent(s, p->u.event, 0);
  default: return cudaSuccess; /* empty */
  }
}

/* What a launch of x takes of the stream's depth, as CUDA 13 on H200
 * counts it (conformance/probes/graph_depth.cu): a launch with device work
 * takes one place, whatever its kernels, copies and events, except that
 * each memset node takes one of its own (ten memsets: ten); a launch of
 * host and empty nodes only takes none. One holding NCCL operations takes
 * NCCLSIM_GRAPH_NCCL_DEPTH (graph_probe nccl-depth). */
static uint16_t launch_cost(const struct CUgraphExec_st *x) {
  size_t sets = 0, places = 0;
  for (size_t i = 0; i < x->n; i++) {
    const xnode *xn = &x->nodes[i];
    if (!xn->enabled) continue;
    sets += xn->p.type == cudaGraphNodeTypeMemset;
    if (xn->p.type != cudaGraphNodeTypeHost && xn->p.type != cudaGraphNodeTypeEmpty && !places) places = 1;
    /* A work may ask for more: NCCL operations (core/capture.c). */
    if (xn->p.type == cudaGraphNodeTypeKernel && xn->p.u.k.w->ops->launch_places) {
      unsigned w = xn->p.u.k.w->ops->launch_places(xn->p.u.k.w);
      if (w > places) places = w;
    }
  }
  if (sets > places) places = sets;
  if (places > UINT16_MAX) places = UINT16_MAX; /* more than any depth: the launch waits for an empty stream */
  return (uint16_t)places;
}

/* m: an op allocated already (the end's, taken before the launch enqueues
 * anything), or NULL to allocate one here. cost: the begin's toward the
 * depth (0: none). */
static cudaError_t mark(sim_stream *s, struct CUgraphExec_st *x, uint64_t after, bool end, uint16_t cost,
                        mark_op *m) {
  if (!m) m = sim_stream_op_alloc(s, sizeof *m);
  if (!m) return cudaErrorMemoryAllocation;
  m->x = x;
  m->after = after;
  m->op.run = end ? end_run : begin_run;
  m->op.release = end ? end_release : op_free;
  m->op.what = end ? "cudaGraphLaunch (end)" : "cudaGraphLaunch";
  m->op.unbounded = end || !cost;
  m->op.cost = cost;
  cudaError_t err = sim_stream_enqueue(s, &m->op);
  if (err != cudaSuccess) sim_stream_op_free(m);
  return err;
}

SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  static const char what[] = "cudaGraphLaunch";
  cudaError_t err;
  struct CUgraphExec_st *x = exec_resolve(graphExec, what);
  if (!x) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(stream, &err);
  if (!s) return sim_cuda_error(err);
  if (sim_stream_capturing(s))
    return sim_cuda_error(sim_capture_refuse(s, what, "ncclsim does not capture graph launches (child graph nodes)"));
  if ((err = sim_cuda_sticky(sim_stream_device(s))) != cudaSuccess) return sim_cuda_error(err);
  /* Its allocations must be freed since its last launch (graph_mem.c). */
  bool auto_free = x->flags & cudaGraphInstantiateFlagAutoFreeOnLaunch;
  if (x->nallocs && (err = gmem_launch_check(x->allocs, x->nallocs, auto_free, s, stream)) != cudaSuccess)
    return sim_cuda_error(err);
  /* Behind the graph's previous launch, which stream order alone orders
   * only when it was on this stream. */
  uint64_t before = atomic_fetch_add(&x->launched, 1);
  sim_stream *prev = atomic_exchange(&x->last_stream, s);
  /* The end op is taken first: once a node is enqueued, the launch must
   * count done only when its nodes have run (an end that could not be
   * allocated counted it at once, and the next launch, on another stream,
   * ran beside this one's nodes: ThreadSanitizer, tests/sim_graph's
   * allocation-failure loop). */
  mark_op *end_op = sim_stream_op_alloc(s, sizeof *end_op);
  if (!end_op || (err = mark(s, x, before && prev != s ? before : 0, false, launch_cost(x), NULL)) != cudaSuccess) {
    if (end_op) sim_stream_op_free(end_op);
    else err = cudaErrorMemoryAllocation;
    sim_count_add(&x->done, 1); /* never runs: the next launch must not wait for it */
    return sim_cuda_error(err);
  }
  atomic_fetch_add(&x->refs, 1); /* the end op's */
  atomic_fetch_add(&sim_graph_launches, 1);
  sim_graph_launching = true;
  for (size_t i = 0; i < x->n && err == cudaSuccess; i++) err = launch_node(&x->nodes[i], s);
  if (err != cudaSuccess && x->nallocs) gmem_launch_failed(x->allocs, x->nallocs);
  /* The end op is enqueued whatever failed, so that the launch counts
   * done; it never waits for room. */
  cudaError_t end = mark(s, x, 0, true, 0, end_op);
  sim_graph_launching = false;
  atomic_fetch_sub(&sim_graph_launches, 1);
  if (end != cudaSuccess) {
    sim_count_add(&x->done, 1);
    exec_unref(x);
    if (err == cudaSuccess) err = end;
  }
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  cudaError_t err;
  if (!exec_resolve(graphExec, "cudaGraphUpload")) return sim_cuda_error(cudaErrorInvalidValue);
  if (!sim_stream_resolve(stream, &err)) return sim_cuda_error(err);
  return cudaSuccess;
}

/* ---- updates ---- */

static xnode *xnode_of(struct CUgraphExec_st *x, cudaGraphNode_t node, const char *what) {
  if (!node_resolve(node, what)) return NULL;
  for (size_t i = 0; i < x->n; i++)
    if (x->nodes[i].from == node || x->nodes[i].alias == node) return &x->nodes[i];
  SIM_WARN(SIM_STREAM, "%s: node %p is not a node of the graph executable graph %p was made from", what, (void *)node,
           (void *)x);
  return NULL;
}

/* Whether n's dependencies are the creation ranks xn holds. */
static bool same_deps(const gnode *n, const xnode *xn, const gnode **differ) {
  if (n->nin != xn->ndeps) {
    *differ = n->nin ? n->in[0] : NULL;
    return false;
  }
  for (size_t j = 0; j < n->nin; j++)
    if (!bsearch(&n->in[j]->index, xn->deps, xn->ndeps, sizeof *xn->deps, cmp_size)) {
      *differ = n->in[j];
      return false;
    }
  return true;
}

SIM_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                           cudaGraphExecUpdateResultInfo *resultInfo) {
  static const char what[] = "cudaGraphExecUpdate";
  struct CUgraphExec_st *x = exec_resolve(hGraphExec, what);
  struct CUgraph_st *g = graph_resolve(hGraph, what);
  if (!x || !g || !resultInfo) return sim_cuda_error(cudaErrorInvalidValue);
  *resultInfo = (cudaGraphExecUpdateResultInfo){cudaGraphExecUpdateSuccess, NULL, NULL};
  enum cudaGraphExecUpdateResult r = cudaGraphExecUpdateSuccess;
  const gnode *bad = NULL, *from = NULL;
  if (g->n != x->n) {
    r = cudaGraphExecUpdateErrorTopologyChanged;
    SIM_WARN(SIM_STREAM, "%s: graph %p has %zu nodes, the executable graph %zu", what, (void *)g, g->n, x->n);
  }
  for (size_t i = 0; i < g->n && r == cudaGraphExecUpdateSuccess; i++) {
    const gnode *n = g->nodes[i];
    const xnode *xn = &x->nodes[x->by_order[i]];
    bad = n;
    if (n->p.type != xn->p.type) {
      r = cudaGraphExecUpdateErrorNodeTypeChanged;
      SIM_WARN(SIM_STREAM, "%s: node %zu is a %s node, the executable graph's a %s node", what, i,
               gparams_type_name(n->p.type), gparams_type_name(xn->p.type));
    } else if (!same_deps(n, xn, &from)) {
      r = cudaGraphExecUpdateErrorTopologyChanged;
      SIM_WARN(SIM_STREAM, "%s: node %zu has other dependencies than the executable graph's", what, i);
    } else if (n->p.type == cudaGraphNodeTypeKernel && (!n->p.u.k.p.func) != (!xn->p.u.k.p.func)) {
      r = cudaGraphExecUpdateErrorUnsupportedFunctionChange;
      SIM_WARN(SIM_STREAM, "%s: node %zu changes between an NCCL operation and a kernel", what, i);
    } else if ((n->p.type == cudaGraphNodeTypeMemAlloc || n->p.type == cudaGraphNodeTypeMemFree) &&
               n->p.u.mem != xn->p.u.mem) { /* assumed: an allocation's address is fixed */
      r = cudaGraphExecUpdateErrorNotSupported;
      SIM_WARN(SIM_STREAM, "%s: %s node %zu names another allocation (%p) than the executable graph's (%p)", what,
               gparams_type_name(n->p.type), i, gmem_ptr(n->p.u.mem), gmem_ptr(xn->p.u.mem));
    } else if (n->p.type == cudaGraphNodeTypeMemset && (n->p.u.set.height > 1) != (xn->p.u.set.height > 1)) {
      r = cudaGraphExecUpdateErrorParametersChanged;
      SIM_WARN(SIM_STREAM, "%s: memset node %zu changes between one row and several", what, i);
    }
  }
  if (r != cudaGraphExecUpdateSuccess) {
    resultInfo->result = r;
    resultInfo->errorNode = g->n == x->n ? (cudaGraphNode_t)bad : NULL;
    resultInfo->errorFromNode = r == cudaGraphExecUpdateErrorTopologyChanged ? (cudaGraphNode_t)from : NULL;
    return sim_cuda_error(cudaErrorGraphExecUpdateFailure);
  }
  for (size_t i = 0; i < g->n; i++) {
    xnode *xn = &x->nodes[x->by_order[i]];
    gparams p;
    gparams_copy(&p, &g->nodes[i]->p);
    gparams_clear(&xn->p);
    xn->p = p;
    xn->alias = g->nodes[i];
  }
  return cudaSuccess;
}

static xnode *exec_typed(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, enum cudaGraphNodeType t,
                         const char *what) {
  struct CUgraphExec_st *x = exec_resolve(hGraphExec, what);
  xnode *xn = x ? xnode_of(x, node, what) : NULL;
  if (xn && xn->p.type != t) {
    SIM_WARN(SIM_STREAM, "%s: node %p is a %s node, not a %s node", what, (void *)node, gparams_type_name(xn->p.type),
             gparams_type_name(t));
    return NULL;
  }
  return xn;
}

SIM_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const struct cudaKernelNodeParams *pNodeParams) {
  static const char what[] = "cudaGraphExecKernelNodeSetParams";
  xnode *xn = exec_typed(hGraphExec, node, cudaGraphNodeTypeKernel, what);
  if (!xn) return sim_cuda_error(cudaErrorInvalidValue);
  if (!xn->p.u.k.p.func) {
    SIM_WARN(SIM_STREAM, "%s: node %p is a captured NCCL operation, not a kernel", what, (void *)node);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  gparams p;
  cudaError_t err = gparams_kernel(&p, pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  gparams_clear(&xn->p);
  xn->p = p;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const struct cudaMemcpy3DParms *pNodeParams) {
  static const char what[] = "cudaGraphExecMemcpyNodeSetParams";
  xnode *xn = exec_typed(hGraphExec, node, cudaGraphNodeTypeMemcpy, what);
  if (!xn) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = gparams_check_copy(pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  xn->p.u.copy = *pNodeParams;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void *dst,
                                                          const void *src, size_t count, enum cudaMemcpyKind kind) {
  struct cudaMemcpy3DParms p = gparams_copy1d(dst, src, count, kind);
  return cudaGraphExecMemcpyNodeSetParams(hGraphExec, node, &p);
}

SIM_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                        const struct cudaMemsetParams *pNodeParams) {
  static const char what[] = "cudaGraphExecMemsetNodeSetParams";
  xnode *xn = exec_typed(hGraphExec, node, cudaGraphNodeTypeMemset, what);
  if (!xn) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = gparams_check_set(pNodeParams, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  xn->p.u.set = *pNodeParams;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                      const struct cudaHostNodeParams *pNodeParams) {
  xnode *xn = exec_typed(hGraphExec, node, cudaGraphNodeTypeHost, "cudaGraphExecHostNodeSetParams");
  if (!xn || !pNodeParams || !pNodeParams->fn) return sim_cuda_error(cudaErrorInvalidValue);
  xn->p.u.host = *pNodeParams;
  return cudaSuccess;
}

static cudaError_t exec_set_event(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, cudaEvent_t e,
                                  enum cudaGraphNodeType t, const char *what) {
  xnode *xn = exec_typed(hGraphExec, node, t, what);
  if (!xn) return sim_cuda_error(cudaErrorInvalidValue);
  if (!sim_event_valid(e)) {
    SIM_WARN(SIM_STREAM, "%s: event %p is not a live event", what, (void *)e);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  xn->p.u.event = e;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                            cudaEvent_t event) {
  return exec_set_event(hGraphExec, hNode, event, cudaGraphNodeTypeEventRecord, "cudaGraphExecEventRecordNodeSetEvent");
}

SIM_EXPORT cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                                          cudaEvent_t event) {
  return exec_set_event(hGraphExec, hNode, event, cudaGraphNodeTypeWaitEvent, "cudaGraphExecEventWaitNodeSetEvent");
}

static xnode *enable_target(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode, const char *what) {
  struct CUgraphExec_st *x = exec_resolve(hGraphExec, what);
  xnode *xn = x ? xnode_of(x, hNode, what) : NULL;
  if (xn && xn->p.type != cudaGraphNodeTypeKernel && xn->p.type != cudaGraphNodeTypeMemcpy &&
      xn->p.type != cudaGraphNodeTypeMemset) {
    SIM_WARN(SIM_STREAM, "%s: node %p is a %s node; only kernel, memcpy and memset nodes can be disabled", what,
             (void *)hNode, gparams_type_name(xn->p.type));
    return NULL;
  }
  return xn;
}

SIM_EXPORT cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                               unsigned int isEnabled) {
  xnode *xn = enable_target(hGraphExec, hNode, "cudaGraphNodeSetEnabled");
  if (!xn) return sim_cuda_error(cudaErrorInvalidValue);
  xn->enabled = isEnabled != 0;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t hGraphExec, cudaGraphNode_t hNode,
                                               unsigned int *isEnabled) {
  xnode *xn = enable_target(hGraphExec, hNode, "cudaGraphNodeGetEnabled");
  if (!xn || !isEnabled) return sim_cuda_error(cudaErrorInvalidValue);
  *isEnabled = xn->enabled;
  return cudaSuccess;
}
