/*
 * sim/cuda/graph_internal.h — shared by the files of stream capture and
 * graphs: graphs and their nodes (graph.c, graph_node.c), captures
 * (capture.c), executable graphs (graph_exec.c) and the DOT writer
 * (graph_dot.c).
 *
 * A graph is its nodes in creation order, each with its edges both ways.
 * A node's parameters are a gparams: what cudaGraph*NodeGetParams reads
 * back, and what an executable graph copies. Kernel nodes and NCCL
 * operations hold a sim_graph_work of an upper room (cuda/cuda.h), by
 * reference.
 *
 * Graphs are not locked, as CUDA does not synchronize them internally (a
 * program uses one graph from one thread at a time); a capture adds its
 * nodes under the capture lock (capture.c), since several threads may
 * enqueue on the streams of one capture.
 */
#ifndef NCCLSIM_CUDA_GRAPH_INTERNAL_H_
#define NCCLSIM_CUDA_GRAPH_INTERNAL_H_

#include "cuda_internal.h"

#define GRAPH_MAGIC 0x47525048u
#define NODE_MAGIC 0x4e4f4445u
#define EXEC_MAGIC 0x47455845u

/* A node's type and parameters. Kernel nodes: k.p (func NULL for an NCCL
 * operation) and k.w, the work a launch enqueues (one reference). */
typedef struct gparams {
  enum cudaGraphNodeType type;
  union {
    struct {
      struct cudaKernelNodeParams p;
      sim_graph_work *w;
    } k;
    struct cudaMemcpy3DParms copy;
    struct cudaMemsetParams set;
    struct cudaHostNodeParams host;
    cudaEvent_t event;  /* record and wait nodes */
    struct gmem *mem;   /* alloc and free nodes: the allocation (one reference) */
  } u;
} gparams;

/* Copies src into dst, taking a reference on its work or allocation. */
void gparams_copy(gparams *dst, const gparams *src);
/* Drops p's reference on its work or allocation. */
void gparams_clear(gparams *p);
/* Checks a node's parameters as CUDA does when a node is added or set
 * (`what` names the call in the WARN): cudaSuccess or the error. */
cudaError_t gparams_check_copy(const struct cudaMemcpy3DParms *p, const char *what);
cudaError_t gparams_check_set(const struct cudaMemsetParams *p, const char *what);
/* A kernel node's parameters and work from the caller's, through the
 * kernel room's hook (cudaErrorInvalidDeviceFunction without one). */
cudaError_t gparams_kernel(gparams *out, const struct cudaKernelNodeParams *p, const char *what);
/* A 1D copy as the 3D parameters CUDA reads it back as. */
struct cudaMemcpy3DParms gparams_copy1d(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
/* The name of a node type, for messages and the DOT file. */
const char *gparams_type_name(enum cudaGraphNodeType t);
/* One line describing p (DOT labels, messages). */
void gparams_describe(const gparams *p, char *buf, size_t len, bool verbose);

typedef struct CUgraphNode_st gnode;
struct CUgraphNode_st {
  _Atomic uint32_t magic;
  struct CUgraph_st *graph;
  uint64_t id;  /* creation number in its graph, from 0 */
  size_t index; /* position in graph->nodes */
  gnode **in, **out;
  size_t nin, nout, cin, cout;
  const gnode *origin; /* the node this one was cloned from */
  gparams p;
};

typedef struct uobj_ref {
  cudaUserObject_t obj;
  unsigned count;
} uobj_ref;

struct CUgraph_st {
  _Atomic uint32_t magic;
  gnode **nodes; /* creation order */
  size_t n, cap;
  uint64_t next_id;
  uobj_ref *uobjs;
  size_t nuobjs;
  struct CUgraphExec_st *exec; /* with memory nodes: its one executable graph (graph_mem.c) */
};

/* A new, empty graph; NULL out of memory. */
struct CUgraph_st *graph_new(void);
/* A live graph, or NULL with a WARN naming `what`. */
struct CUgraph_st *graph_resolve(cudaGraph_t g, const char *what);
/* A live node, or NULL with a WARN naming `what`. */
gnode *node_resolve(cudaGraphNode_t n, const char *what);
/* A live node of type t, or NULL with a WARN (graph_node.c). */
gnode *node_typed(cudaGraphNode_t node, enum cudaGraphNodeType t, const char *what);
/* A new node of g with `p` (taken over: no new reference) after deps:
 * cudaErrorInvalidValue (WARN) for a dependency that is not a node of g,
 * or is named twice; cudaErrorMemoryAllocation. On error p is not taken. */
cudaError_t graph_add(struct CUgraph_st *g, gnode *const *deps, size_t ndeps, const gparams *p, gnode **out);
/* The edge a -> b, unless it exists (false then). */
cudaError_t graph_edge_add(gnode *a, gnode *b, bool *added);
/* g, with memory nodes, whose one executable graph x is, goes (graph_exec.c). */
void exec_graph_gone(struct CUgraphExec_st *x);
/* Frees g and its nodes; drops its user objects' references. */
void graph_free(struct CUgraph_st *g);
/* Whether `n` is reachable backwards from any of `from` (n itself
 * included): `n` is an ancestor of, or one of, those nodes. */
bool graph_reaches(gnode *const *from, size_t nfrom, const gnode *n);

/* User objects (graph.c): references a graph or an executable graph holds. */
void uobj_retain(cudaUserObject_t o, unsigned count);
void uobj_release(cudaUserObject_t o, unsigned count);

/* Captures (capture.c): graph.c tells them a node went, so that no
 * stream's dependencies or captured event names it; true if a capture
 * builds g (its nodes may not be destroyed then). */
void capture_node_gone(const gnode *n);
bool capture_builds(const struct CUgraph_st *g);
/* A node of p after what s captured last (s's next work depends on it),
 * as the cuda room's captured calls make theirs. check, if set, is run
 * under the capture lock before the node is added, with the capture's
 * graph and the node's dependencies: an error from it refuses the node.
 * p is taken only on success. */
typedef cudaError_t (*capture_check_fn)(struct CUgraph_st *g, gnode *const *deps, size_t ndeps, const gparams *p);
cudaError_t capture_add_node(sim_stream *s, const gparams *p, capture_check_fn check, gnode **out);

/* Graph memory (graph_mem.c): a gmem is one alloc node's allocation,
 * shared by reference among the graph's nodes, executable graphs' copies
 * and, while it is allocated, the allocation itself. */
typedef struct gmem gmem;
void gmem_ref(gmem *m);
void gmem_unref(gmem *m);
void *gmem_ptr(const gmem *m);
/* An alloc or free node's line (gparams_describe). */
void gmem_describe(const gparams *p, char *buf, size_t len);
/* A graph node of g went (node_free): its alloc node no longer owns, or
 * its free node no longer frees. */
void gmem_node_gone(const gnode *n);
/* Whether g has alloc or free nodes (which it may not lose, nor be
 * cloned: `what` names the call in the WARN). */
bool graph_has_mem(const struct CUgraph_st *g, const char *what);
/* A launch (graph_exec.c): before any node is enqueued, each alloc node's
 * allocation must not be allocated still (cudaErrorInvalidValue), unless
 * auto_free: then it is freed as by cudaFreeAsync on s (hs its handle). */
cudaError_t gmem_launch_check(gmem *const *allocs, size_t n, bool auto_free, sim_stream *s, cudaStream_t hs);
/* An alloc or free node's run at a launch, on s. */
cudaError_t gmem_launch_node(const gparams *p, sim_stream *s);
/* A launch failed part way: what its alloc nodes allocated and its own
 * free nodes would have freed is freed (nothing else could free it). */
void gmem_launch_failed(gmem *const *allocs, size_t n);

#endif
