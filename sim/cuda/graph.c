/*
 * sim/cuda/graph.c — graphs: their nodes and edges, the topology queries,
 * clones, destruction, and user objects.
 *
 * A graph keeps its nodes in creation order, which is the order the
 * queries return them in, cudaGraphExecUpdate pairs them in, and a launch
 * follows wherever the dependencies leave a choice. Handles are checked by
 * a magic word; a destroyed graph's or node's memory is freed, so a stale
 * handle is undefined behaviour, as in CUDA.
 */
#include <string.h>

#include "graph_internal.h"

/* ---- works ---- */

void sim_graph_work_ref(sim_graph_work *w) { atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed); }

void sim_graph_work_unref(sim_graph_work *w) {
  if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1) w->ops->release(w);
}

static bool is_mem(const gparams *p) {
  return p->type == cudaGraphNodeTypeMemAlloc || p->type == cudaGraphNodeTypeMemFree;
}

void gparams_copy(gparams *dst, const gparams *src) {
  *dst = *src;
  if (src->type == cudaGraphNodeTypeKernel && src->u.k.w) sim_graph_work_ref(src->u.k.w);
  if (is_mem(src) && src->u.mem) gmem_ref(src->u.mem);
}

void gparams_clear(gparams *p) {
  if (p->type == cudaGraphNodeTypeKernel && p->u.k.w) sim_graph_work_unref(p->u.k.w);
  if (is_mem(p)) {
    if (p->u.mem) gmem_unref(p->u.mem);
    p->u.mem = NULL;
  } else {
    p->u.k.w = NULL;
  }
}

/* ---- handles ---- */

struct CUgraph_st *graph_resolve(cudaGraph_t g, const char *what) {
  if (!g || atomic_load_explicit(&g->magic, memory_order_relaxed) != GRAPH_MAGIC) {
    SIM_WARN(SIM_STREAM, "%s: graph %p is not a live graph", what, (void *)g);
    return NULL;
  }
  return g;
}

gnode *node_resolve(cudaGraphNode_t n, const char *what) {
  if (!n || atomic_load_explicit(&n->magic, memory_order_relaxed) != NODE_MAGIC) {
    SIM_WARN(SIM_STREAM, "%s: node %p is not a live graph node", what, (void *)n);
    return NULL;
  }
  return n;
}

struct CUgraph_st *graph_new(void) {
  struct CUgraph_st *g = sim_calloc(1, sizeof *g);
  if (g) atomic_store(&g->magic, GRAPH_MAGIC);
  return g;
}

/* ---- edges ---- */

static bool push(gnode ***v, size_t *n, size_t *cap, gnode *x) {
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 4;
    gnode **p = sim_realloc(*v, c * sizeof *p);
    if (!p) return false;
    *v = p;
    *cap = c;
  }
  (*v)[(*n)++] = x;
  return true;
}

static bool has(gnode *const *v, size_t n, const gnode *x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

static void drop(gnode **v, size_t *n, const gnode *x) {
  for (size_t i = 0; i < *n; i++)
    if (v[i] == x) {
      memmove(v + i, v + i + 1, (*n - i - 1) * sizeof *v);
      (*n)--;
      return;
    }
}

cudaError_t graph_edge_add(gnode *a, gnode *b, bool *added) {
  *added = false;
  if (has(b->in, b->nin, a)) return cudaSuccess;
  if (!push(&b->in, &b->nin, &b->cin, a)) return cudaErrorMemoryAllocation;
  if (!push(&a->out, &a->nout, &a->cout, b)) {
    b->nin--;
    return cudaErrorMemoryAllocation;
  }
  *added = true;
  return cudaSuccess;
}

bool graph_reaches(gnode *const *from, size_t nfrom, const gnode *n) {
  if (has(from, nfrom, n)) return true;
  struct CUgraph_st *g = n->graph;
  /* A walk backwards over the graph's nodes, marked by index. */
  bool *seen = sim_calloc(g->n ? g->n : 1, sizeof *seen);
  gnode **stack = sim_malloc((g->n ? g->n : 1) * sizeof *stack);
  bool found = false;
  if (!seen || !stack) { /* out of memory: say joined rather than fail a capture for it */
    sim_free(seen);
    sim_free(stack);
    return true;
  }
  size_t top = 0;
  for (size_t i = 0; i < nfrom; i++)
    if (!seen[from[i]->index]) {
      seen[from[i]->index] = true;
      stack[top++] = from[i];
    }
  while (top && !found) {
    gnode *x = stack[--top];
    for (size_t i = 0; i < x->nin; i++) {
      gnode *d = x->in[i];
      if (d == n) {
        found = true;
        break;
      }
      if (!seen[d->index]) {
        seen[d->index] = true;
        stack[top++] = d;
      }
    }
  }
  sim_free(seen);
  sim_free(stack);
  return found;
}

/* ---- nodes ---- */

cudaError_t graph_add(struct CUgraph_st *g, gnode *const *deps, size_t ndeps, const gparams *p, gnode **out) {
  if (ndeps && !deps) {
    SIM_WARN(SIM_STREAM, "graph %p: numDependencies is %zu and pDependencies NULL", (void *)g, ndeps);
    return cudaErrorInvalidValue;
  }
  for (size_t i = 0; i < ndeps; i++) {
    if (!node_resolve(deps[i], "a graph node's dependency")) return cudaErrorInvalidValue;
    if (deps[i]->graph != g) {
      SIM_WARN(SIM_STREAM, "graph %p: dependency %p is a node of another graph (%p)", (void *)g, (void *)deps[i],
               (void *)deps[i]->graph);
      return cudaErrorInvalidValue;
    }
    if (has(deps, i, deps[i])) {
      SIM_WARN(SIM_STREAM, "graph %p: dependency %p is named twice", (void *)g, (void *)deps[i]);
      return cudaErrorInvalidValue;
    }
  }
  gnode *n = sim_calloc(1, sizeof *n);
  if (!n) return cudaErrorMemoryAllocation;
  n->graph = g;
  if (!push(&g->nodes, &g->n, &g->cap, n)) {
    sim_free(n);
    return cudaErrorMemoryAllocation;
  }
  n->index = g->n - 1;
  n->id = g->next_id++;
  for (size_t i = 0; i < ndeps; i++) {
    bool added;
    if (graph_edge_add(deps[i], n, &added) != cudaSuccess) {
      for (size_t j = 0; j < i; j++) drop(deps[j]->out, &deps[j]->nout, n);
      sim_free(n->in);
      sim_free(n);
      g->n--;
      return cudaErrorMemoryAllocation;
    }
  }
  n->p = *p;
  atomic_store(&n->magic, NODE_MAGIC);
  *out = n;
  return cudaSuccess;
}

static void node_free(gnode *n) {
  atomic_store(&n->magic, 0);
  gmem_node_gone(n);
  gparams_clear(&n->p);
  sim_free(n->in);
  sim_free(n->out);
  sim_free(n);
}

void graph_free(struct CUgraph_st *g) {
  atomic_store(&g->magic, 0);
  if (g->exec) exec_graph_gone(g->exec);
  for (size_t i = 0; i < g->n; i++) node_free(g->nodes[i]);
  for (size_t i = 0; i < g->nuobjs; i++) uobj_release(g->uobjs[i].obj, g->uobjs[i].count);
  sim_free(g->uobjs);
  sim_free(g->nodes);
  sim_free(g);
}

SIM_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags) {
  if (!pGraph || flags) {
    SIM_WARN(SIM_STREAM, "cudaGraphCreate: pGraph %p, flags %u (flags must be 0)", (void *)pGraph, flags);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  struct CUgraph_st *g = graph_new();
  if (!g) return sim_cuda_error(cudaErrorMemoryAllocation);
  *pGraph = g;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  struct CUgraph_st *g = graph_resolve(graph, "cudaGraphDestroy");
  if (!g) return sim_cuda_error(cudaErrorInvalidValue);
  if (capture_builds(g)) {
    SIM_WARN(SIM_STREAM, "cudaGraphDestroy: graph %p is being built by a stream capture; end the capture first",
             (void *)g);
    return sim_cuda_error(cudaErrorIllegalState);
  }
  graph_free(g);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) {
  gnode *n = node_resolve(node, "cudaGraphDestroyNode");
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  struct CUgraph_st *g = n->graph;
  if (capture_builds(g)) {
    SIM_WARN(SIM_STREAM, "cudaGraphDestroyNode: node %p's graph is being built by a stream capture", (void *)n);
    return sim_cuda_error(cudaErrorIllegalState);
  }
  if (graph_has_mem(g, "cudaGraphDestroyNode")) return sim_cuda_error(cudaErrorNotSupported); /* assumed code */
  for (size_t i = 0; i < n->nin; i++) drop(n->in[i]->out, &n->in[i]->nout, n);
  for (size_t i = 0; i < n->nout; i++) drop(n->out[i]->in, &n->out[i]->nin, n);
  memmove(g->nodes + n->index, g->nodes + n->index + 1, (g->n - n->index - 1) * sizeof *g->nodes);
  g->n--;
  for (size_t i = n->index; i < g->n; i++) g->nodes[i]->index = i;
  capture_node_gone(n);
  node_free(n);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph) {
  struct CUgraph_st *g = graph_resolve(originalGraph, "cudaGraphClone");
  if (!pGraphClone || !g) return sim_cuda_error(cudaErrorInvalidValue);
  if (graph_has_mem(g, "cudaGraphClone")) return sim_cuda_error(cudaErrorNotSupported); /* assumed code */
  struct CUgraph_st *c = graph_new();
  if (!c) return sim_cuda_error(cudaErrorMemoryAllocation);
  c->next_id = g->next_id;
  for (size_t i = 0; i < g->n; i++) {
    gnode *o = g->nodes[i], *n = NULL;
    gnode **deps = o->nin ? sim_malloc(o->nin * sizeof *deps) : NULL;
    if (o->nin && !deps) goto oom;
    /* Nodes are cloned in creation order; a dependency added later
     * (cudaGraphAddDependencies) may point forward: those edges follow. */
    size_t nd = 0;
    for (size_t j = 0; j < o->nin; j++)
      if (o->in[j]->index < i) deps[nd++] = c->nodes[o->in[j]->index];
    gparams p;
    gparams_copy(&p, &o->p);
    cudaError_t err = graph_add(c, deps, nd, &p, &n);
    sim_free(deps);
    if (err != cudaSuccess) {
      gparams_clear(&p);
      goto oom;
    }
    n->id = o->id;
    n->origin = o;
  }
  for (size_t i = 0; i < g->n; i++) {
    gnode *o = g->nodes[i];
    for (size_t j = 0; j < o->nin; j++) {
      bool added;
      if (o->in[j]->index > i && graph_edge_add(c->nodes[o->in[j]->index], c->nodes[i], &added) != cudaSuccess)
        goto oom;
    }
  }
  if (g->nuobjs) {
    if (!(c->uobjs = sim_malloc(g->nuobjs * sizeof *c->uobjs))) goto oom;
    for (size_t i = 0; i < g->nuobjs; i++) {
      c->uobjs[i] = g->uobjs[i];
      uobj_retain(g->uobjs[i].obj, g->uobjs[i].count);
    }
    c->nuobjs = g->nuobjs;
  }
  *pGraphClone = c;
  return cudaSuccess;
oom:
  graph_free(c);
  return sim_cuda_error(cudaErrorMemoryAllocation);
}

SIM_EXPORT cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *pNode, cudaGraphNode_t originalNode,
                                                cudaGraph_t clonedGraph) {
  struct CUgraph_st *c = graph_resolve(clonedGraph, "cudaGraphNodeFindInClone");
  gnode *o = node_resolve(originalNode, "cudaGraphNodeFindInClone");
  if (!pNode || !c || !o) return sim_cuda_error(cudaErrorInvalidValue);
  for (size_t i = 0; i < c->n; i++)
    if (c->nodes[i]->origin == o) {
      *pNode = c->nodes[i];
      return cudaSuccess;
    }
  SIM_WARN(SIM_STREAM, "cudaGraphNodeFindInClone: graph %p is no clone holding node %p", (void *)c, (void *)o);
  return sim_cuda_error(cudaErrorInvalidValue);
}

/* ---- queries ---- */

SIM_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType) {
  gnode *n = node_resolve(node, "cudaGraphNodeGetType");
  if (!n || !pType) return sim_cuda_error(cudaErrorInvalidValue);
  *pType = n->p.type;
  return cudaSuccess;
}

/* Copies the first min(*count, n) of v out (when out is not NULL), zeroes
 * as many edge data, and sets *count to n. */
static cudaError_t list_out(gnode *const *v, size_t n, cudaGraphNode_t *out, cudaGraphEdgeData *edges, size_t *count) {
  if (!count) return sim_cuda_error(cudaErrorInvalidValue);
  if (out) {
    size_t k = *count < n ? *count : n;
    for (size_t i = 0; i < k; i++) out[i] = v[i];
    for (size_t i = k; i < *count; i++) out[i] = NULL; /* as CUDA: the rest of the array is NULLed */
    if (edges) memset(edges, 0, *count * sizeof *edges);
  }
  *count = n;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes) {
  struct CUgraph_st *g = graph_resolve(graph, "cudaGraphGetNodes");
  if (!g) return sim_cuda_error(cudaErrorInvalidValue);
  return list_out(g->nodes, g->n, nodes, NULL, numNodes);
}

SIM_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes) {
  struct CUgraph_st *g = graph_resolve(graph, "cudaGraphGetRootNodes");
  if (!g || !pNumRootNodes) return sim_cuda_error(cudaErrorInvalidValue);
  size_t n = 0, k = 0;
  for (size_t i = 0; i < g->n; i++)
    if (!g->nodes[i]->nin) {
      if (pRootNodes && k < *pNumRootNodes) pRootNodes[k++] = g->nodes[i];
      n++;
    }
  if (pRootNodes)
    for (; k < *pNumRootNodes; k++) pRootNodes[k] = NULL;
  *pNumRootNodes = n;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                         cudaGraphEdgeData *edgeData, size_t *numEdges) {
  struct CUgraph_st *g = graph_resolve(graph, "cudaGraphGetEdges");
  if (!g || !numEdges || (!from) != (!to)) return sim_cuda_error(cudaErrorInvalidValue);
  size_t n = 0;
  for (size_t i = 0; i < g->n; i++) {
    gnode *b = g->nodes[i];
    for (size_t j = 0; j < b->nin; j++, n++)
      if (from && n < *numEdges) {
        from[n] = b->in[j];
        to[n] = b;
      }
  }
  if (from) {
    for (size_t k = n; k < *numEdges; k++) from[k] = to[k] = NULL;
    if (edgeData) memset(edgeData, 0, *numEdges * sizeof *edgeData);
  }
  *numEdges = n;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                                    cudaGraphEdgeData *edgeData, size_t *pNumDependencies) {
  gnode *n = node_resolve(node, "cudaGraphNodeGetDependencies");
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  return list_out(n->in, n->nin, pDependencies, edgeData, pNumDependencies);
}

SIM_EXPORT cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                                      cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes) {
  gnode *n = node_resolve(node, "cudaGraphNodeGetDependentNodes");
  if (!n) return sim_cuda_error(cudaErrorInvalidValue);
  return list_out(n->out, n->nout, pDependentNodes, edgeData, pNumDependentNodes);
}

/* The pairs of cudaGraphAdd/RemoveDependencies: both nodes of g, edge data
 * all zeros (ncclsim's edges carry none). */
static cudaError_t check_pairs(struct CUgraph_st *g, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                               const cudaGraphEdgeData *data, size_t n, const char *what) {
  if (n && (!from || !to)) {
    SIM_WARN(SIM_STREAM, "%s: %zu dependencies, from %p, to %p", what, n, (void *)from, (void *)to);
    return cudaErrorInvalidValue;
  }
  static const cudaGraphEdgeData zero;
  for (size_t i = 0; i < n; i++) {
    if (!node_resolve(from[i], what) || !node_resolve(to[i], what)) return cudaErrorInvalidValue;
    if (from[i]->graph != g || to[i]->graph != g) {
      SIM_WARN(SIM_STREAM, "%s: the edge %p -> %p has a node outside graph %p", what, (void *)from[i], (void *)to[i],
               (void *)g);
      return cudaErrorInvalidValue;
    }
    if (data && memcmp(&data[i], &zero, sizeof zero)) {
      SIM_WARN(SIM_STREAM, "%s: edge %zu has data (ports or a programmatic type): ncclsim's edges are full "
               "dependencies only", what, i);
      return cudaErrorInvalidValue;
    }
  }
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                size_t numDependencies) {
  static const char what[] = "cudaGraphAddDependencies";
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!g) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = check_pairs(g, from, to, edgeData, numDependencies, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  for (size_t i = 0; i < numDependencies; i++) {
    bool twice = false;
    for (size_t j = 0; j < i; j++) twice |= from[j] == from[i] && to[j] == to[i];
    if (from[i] == to[i] || twice || has(to[i]->in, to[i]->nin, from[i])) {
      SIM_WARN(SIM_STREAM, "%s: the edge %p -> %p %s", what, (void *)from[i], (void *)to[i],
               from[i] == to[i] ? "joins a node to itself" : "exists already");
      return sim_cuda_error(cudaErrorInvalidValue);
    }
  }
  for (size_t i = 0; i < numDependencies; i++) {
    bool added;
    if ((err = graph_edge_add(from[i], to[i], &added)) != cudaSuccess) return sim_cuda_error(err);
  }
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                   const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                   size_t numDependencies) {
  static const char what[] = "cudaGraphRemoveDependencies";
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!g) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = check_pairs(g, from, to, edgeData, numDependencies, what);
  if (err != cudaSuccess) return sim_cuda_error(err);
  if (numDependencies && graph_has_mem(g, what)) return sim_cuda_error(cudaErrorNotSupported); /* assumed code */
  for (size_t i = 0; i < numDependencies; i++)
    if (!has(to[i]->in, to[i]->nin, from[i])) {
      SIM_WARN(SIM_STREAM, "%s: there is no edge %p -> %p", what, (void *)from[i], (void *)to[i]);
      return sim_cuda_error(cudaErrorInvalidValue);
    }
  for (size_t i = 0; i < numDependencies; i++) {
    drop(to[i]->in, &to[i]->nin, from[i]);
    drop(from[i]->out, &from[i]->nout, to[i]);
  }
  return cudaSuccess;
}

/* ---- user objects ---- */

#define UOBJ_MAGIC 0x554f424au

struct CUuserObject_st {
  _Atomic uint32_t magic;
  _Atomic int64_t refs;
  void *ptr;
  cudaHostFn_t destroy;
};

void uobj_retain(cudaUserObject_t o, unsigned count) { atomic_fetch_add(&o->refs, (int64_t)count); }

void uobj_release(cudaUserObject_t o, unsigned count) {
  if (atomic_fetch_sub(&o->refs, (int64_t)count) == (int64_t)count) {
    atomic_store(&o->magic, 0);
    o->destroy(o->ptr);
    sim_free(o);
  }
}

static cudaUserObject_t uobj_resolve(cudaUserObject_t o, const char *what) {
  if (!o || atomic_load(&o->magic) != UOBJ_MAGIC) {
    SIM_WARN(SIM_STREAM, "%s: %p is not a live user object", what, (void *)o);
    return NULL;
  }
  return o;
}

SIM_EXPORT cudaError_t cudaUserObjectCreate(cudaUserObject_t *object_out, void *ptr, cudaHostFn_t destroy,
                                            unsigned int initialRefcount, unsigned int flags) {
  if (!object_out || !destroy || !initialRefcount || flags != cudaUserObjectNoDestructorSync) {
    SIM_WARN(SIM_STREAM, "cudaUserObjectCreate: object_out %p, destroy %p, initialRefcount %u, flags %u (flags must "
             "be cudaUserObjectNoDestructorSync)", (void *)object_out, (void *)(uintptr_t)destroy, initialRefcount,
             flags);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  struct CUuserObject_st *o = sim_calloc(1, sizeof *o);
  if (!o) return sim_cuda_error(cudaErrorMemoryAllocation);
  o->ptr = ptr;
  o->destroy = destroy;
  atomic_store(&o->refs, (int64_t)initialRefcount);
  atomic_store(&o->magic, UOBJ_MAGIC);
  *object_out = o;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaUserObjectRetain(cudaUserObject_t object, unsigned int count) {
  if (!uobj_resolve(object, "cudaUserObjectRetain") || !count) return sim_cuda_error(cudaErrorInvalidValue);
  uobj_retain(object, count);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaUserObjectRelease(cudaUserObject_t object, unsigned int count) {
  if (!uobj_resolve(object, "cudaUserObjectRelease") || !count) return sim_cuda_error(cudaErrorInvalidValue);
  uobj_release(object, count);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphRetainUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count,
                                                 unsigned int flags) {
  struct CUgraph_st *g = graph_resolve(graph, "cudaGraphRetainUserObject");
  if (!g || !uobj_resolve(object, "cudaGraphRetainUserObject") || !count || (flags & ~(unsigned)cudaGraphUserObjectMove))
    return sim_cuda_error(cudaErrorInvalidValue);
  size_t i = 0;
  while (i < g->nuobjs && g->uobjs[i].obj != object) i++;
  if (i == g->nuobjs) {
    uobj_ref *r = sim_realloc(g->uobjs, (g->nuobjs + 1) * sizeof *r);
    if (!r) return sim_cuda_error(cudaErrorMemoryAllocation);
    g->uobjs = r;
    r[g->nuobjs++] = (uobj_ref){object, 0};
  }
  g->uobjs[i].count += count;
  /* Moved references are the caller's, handed over; others are new. */
  if (!(flags & cudaGraphUserObjectMove)) uobj_retain(object, count);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGraphReleaseUserObject(cudaGraph_t graph, cudaUserObject_t object, unsigned int count) {
  struct CUgraph_st *g = graph_resolve(graph, "cudaGraphReleaseUserObject");
  if (!g || !uobj_resolve(object, "cudaGraphReleaseUserObject") || !count) return sim_cuda_error(cudaErrorInvalidValue);
  size_t i = 0;
  while (i < g->nuobjs && g->uobjs[i].obj != object) i++;
  if (i == g->nuobjs || g->uobjs[i].count < count) {
    SIM_WARN(SIM_STREAM, "cudaGraphReleaseUserObject: graph %p holds %u references of %p, not %u", (void *)g,
             i == g->nuobjs ? 0 : g->uobjs[i].count, (void *)object, count);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  g->uobjs[i].count -= count;
  if (!g->uobjs[i].count) g->uobjs[i] = g->uobjs[--g->nuobjs];
  uobj_release(object, count);
  return cudaSuccess;
}
