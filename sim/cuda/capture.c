/*
 * sim/cuda/capture.c — stream capture: its modes, the streams a capture
 * spreads to through events (fork and join), the calls CUDA forbids
 * during one, and the nodes captured work becomes.
 *
 * A capture is begun on its origin stream and builds one graph. Each of
 * its streams has the set of nodes that the next work captured on it will
 * depend on (at first none; then the node it captured last). An event
 * recorded on a capturing stream remembers that set instead of marking a
 * position in a queue, and a stream that waits for the event takes the
 * set: a stream outside the capture joins it (a fork), one inside it adds
 * the set to its own (a join, when it is the origin). The capture ends on
 * its origin, which must by then depend on every other stream's last
 * work, or CUDA answers cudaErrorStreamCaptureUnjoined.
 *
 * Calls that CUDA forbids while a capture is under way invalidate it: the
 * capture goes on taking calls that say so (cudaErrorStreamCaptureInvalidated)
 * until its end, which returns no graph. Which calls are forbidden depends
 * on the capture's mode and on the calling thread's interaction mode
 * (cudaThreadExchangeStreamCaptureMode), as CUDA documents.
 *
 * Everything here is under one lock: captures are rare and short next to
 * the operations they record, and several threads may enqueue on the
 * streams of one capture (relaxed mode).
 */
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

/* A stream of a capture, and the nodes its next captured work depends on. */
typedef struct member {
  sim_stream *s;
  gnode **deps;
  cudaGraphEdgeData *edges; /* zeros, as many as deps: what cudaStreamGetCaptureInfo hands out */
  size_t n, cap;
} member;

typedef struct capture {
  struct capture *next; /* captures under way */
  uint64_t id;
  struct CUgraph_st *graph;
  bool own_graph; /* made by the capture (not cudaStreamBeginCaptureToGraph's) */
  sim_stream *origin;
  enum cudaStreamCaptureMode mode;
  uint64_t thread; /* sim_thread_self() of the thread that began it */
  bool invalidated;
  char why[256]; /* what invalidated it */
  member *m;
  size_t nm, cm;
} capture;

/* An event last recorded on a capturing stream: the capture and the
 * nodes work that waits for it depends on. Once its capture ended, c is
 * NULL and the event stays "captured" until it is recorded outside a
 * capture, or destroyed. */
typedef struct cap_event {
  struct cap_event *next;
  cudaEvent_t e;
  uint64_t id;
  capture *c;
  gnode **deps;
  size_t n;
} cap_event;

_Atomic int sim_capture_any;
static _Atomic int captured_events;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static capture *captures;
static cap_event *events;
static uint64_t next_id = 1;
static _Thread_local enum cudaStreamCaptureMode tl_mode = cudaStreamCaptureModeGlobal;

/* Captures are the process's own (see stream.c). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&lock, NULL);
  captures = NULL;
  events = NULL;
  atomic_store(&sim_capture_any, 0);
  atomic_store(&captured_events, 0);
}
__attribute__((constructor)) static void capture_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static const char *mode_name(enum cudaStreamCaptureMode m) {
  return m == cudaStreamCaptureModeGlobal ? "global" : m == cudaStreamCaptureModeThreadLocal ? "thread-local" : "relaxed";
}

/* ---- members and their dependencies (under the lock) ---- */

static member *member_of(capture *c, sim_stream *s) {
  for (size_t i = 0; i < c->nm; i++)
    if (c->m[i].s == s) return &c->m[i];
  return NULL;
}

static bool reserve(member *m, size_t n) {
  if (n <= m->cap) return true;
  size_t cap = m->cap ? m->cap : 4;
  while (cap < n) cap *= 2;
  gnode **d = sim_realloc(m->deps, cap * sizeof *d);
  if (!d) return false;
  m->deps = d;
  cudaGraphEdgeData *e = sim_realloc(m->edges, cap * sizeof *e);
  if (!e) return false;
  memset(e + m->cap, 0, (cap - m->cap) * sizeof *e);
  m->edges = e;
  m->cap = cap;
  return true;
}

/* Adds nodes to m's set, each once. */
static bool deps_add(member *m, gnode *const *nodes, size_t n) {
  if (!reserve(m, m->n + n)) return false;
  for (size_t i = 0; i < n; i++) {
    bool dup = false;
    for (size_t j = 0; j < m->n && !dup; j++) dup = m->deps[j] == nodes[i];
    if (!dup) m->deps[m->n++] = nodes[i];
  }
  return true;
}

static bool deps_set(member *m, gnode *const *nodes, size_t n) {
  m->n = 0;
  return deps_add(m, nodes, n);
}

static member *member_add(capture *c, sim_stream *s) {
  if (c->nm == c->cm) {
    size_t cm = c->cm ? 2 * c->cm : 4;
    member *m = sim_realloc(c->m, cm * sizeof *m);
    if (!m) return NULL;
    c->m = m;
    c->cm = cm;
  }
  member *m = &c->m[c->nm++];
  memset(m, 0, sizeof *m);
  m->s = s;
  sim_stream_capture_set(s, c);
  return m;
}

static capture *capture_of(sim_stream *s) { return s ? sim_stream_capture(s) : NULL; }

static void invalidate(capture *c, const char *why) {
  if (c->invalidated) return;
  c->invalidated = true;
  snprintf(c->why, sizeof c->why, "%s", why);
}

/* Takes c's streams out of capture and forgets c (its graph is the
 * caller's to keep or free). */
static void finish(capture *c) {
  for (size_t i = 0; i < c->nm; i++) {
    sim_stream_capture_set(c->m[i].s, NULL);
    sim_free(c->m[i].deps);
    sim_free(c->m[i].edges);
  }
  sim_free(c->m);
  for (cap_event *e = events; e; e = e->next)
    if (e->c == c) {
      e->c = NULL;
      sim_free(e->deps);
      e->deps = NULL;
      e->n = 0;
    }
  capture **p = &captures;
  while (*p != c) p = &(*p)->next;
  *p = c->next;
  atomic_fetch_sub(&sim_capture_any, 1);
  sim_free(c);
}

bool sim_stream_capturing_slow(sim_stream *s) { return sim_stream_capture(s) != NULL; }

uint64_t sim_stream_capture_id(sim_stream *s) {
  if (!atomic_load_explicit(&sim_capture_any, memory_order_relaxed)) return 0;
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  uint64_t id = c ? c->id : 0;
  pthread_mutex_unlock(&lock);
  return id;
}

bool capture_builds(const struct CUgraph_st *g) {
  if (!atomic_load(&sim_capture_any)) return false;
  sim_mutex_lock(&lock);
  bool found = false;
  for (capture *c = captures; c && !found; c = c->next) found = c->graph == g;
  pthread_mutex_unlock(&lock);
  return found;
}

static void drop_node(gnode **v, size_t *n, const gnode *x) {
  for (size_t i = 0; i < *n; i++)
    if (v[i] == x) v[i--] = v[--*n];
}

void capture_node_gone(const gnode *n) {
  sim_mutex_lock(&lock);
  for (cap_event *e = events; e; e = e->next) drop_node(e->deps, &e->n, n);
  pthread_mutex_unlock(&lock);
}

/* ---- begin and end ---- */

static cudaError_t begin(cudaStream_t h, struct CUgraph_st *g, const cudaGraphNode_t *deps, size_t ndeps,
                         enum cudaStreamCaptureMode mode, const char *what) {
  cudaError_t err;
  if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
      mode != cudaStreamCaptureModeRelaxed) {
    SIM_WARN(SIM_STREAM, "%s: mode %d is not a cudaStreamCaptureMode", what, (int)mode);
    return cudaErrorInvalidValue;
  }
  if (!h) {
    SIM_WARN(SIM_STREAM, "%s: the legacy stream (0) cannot be captured; capture a stream of your own", what);
    return cudaErrorStreamCaptureUnsupported;
  }
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return err;
  for (size_t i = 0; i < ndeps; i++)
    if (!node_resolve(deps[i], what) || deps[i]->graph != g) {
      SIM_WARN(SIM_STREAM, "%s: dependency %p is not a node of graph %p", what, (void *)deps[i], (void *)g);
      return cudaErrorInvalidValue;
    }
  capture *c = sim_calloc(1, sizeof *c);
  if (!c) return cudaErrorMemoryAllocation;
  sim_mutex_lock(&lock);
  if (capture_of(s)) {
    pthread_mutex_unlock(&lock);
    sim_free(c);
    SIM_WARN(SIM_STREAM, "%s: stream %p already takes part in a capture", what, (void *)s);
    return cudaErrorIllegalState;
  }
  c->own_graph = !g;
  if (!g && !(g = graph_new())) {
    pthread_mutex_unlock(&lock);
    sim_free(c);
    return cudaErrorMemoryAllocation;
  }
  c->graph = g;
  c->id = next_id++;
  c->origin = s;
  c->mode = mode;
  c->thread = sim_thread_self();
  member *m = member_add(c, s);
  if (!m || !deps_set(m, deps, ndeps)) {
    if (m) {
      sim_stream_capture_set(s, NULL);
      sim_free(m->deps);
      sim_free(m->edges);
    }
    pthread_mutex_unlock(&lock);
    if (c->own_graph) graph_free(g);
    sim_free(c->m);
    sim_free(c);
    return cudaErrorMemoryAllocation;
  }
  c->next = captures;
  captures = c;
  atomic_fetch_add(&sim_capture_any, 1);
  pthread_mutex_unlock(&lock);
  SIM_INFO(SIM_STREAM, "stream %p begins capture %llu (%s mode) into graph %p", (void *)s, (unsigned long long)c->id,
           mode_name(mode), (void *)g);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  return sim_cuda_error(begin(stream, NULL, NULL, 0, mode, "cudaStreamBeginCapture"));
}

SIM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                                     enum cudaStreamCaptureMode mode) {
  static const char what[] = "cudaStreamBeginCaptureToGraph";
  static const cudaGraphEdgeData zero;
  struct CUgraph_st *g = graph_resolve(graph, what);
  if (!g || (numDependencies && !dependencies)) return sim_cuda_error(cudaErrorInvalidValue);
  for (size_t i = 0; dependencyData && i < numDependencies; i++)
    if (memcmp(&dependencyData[i], &zero, sizeof zero)) {
      SIM_WARN(SIM_STREAM, "%s: edge data other than zeros: ncclsim's edges are full dependencies only", what);
      return sim_cuda_error(cudaErrorInvalidValue);
    }
  if (capture_builds(g)) {
    SIM_WARN(SIM_STREAM, "%s: another capture builds graph %p", what, (void *)g);
    return sim_cuda_error(cudaErrorIllegalState);
  }
  return sim_cuda_error(begin(stream, g, dependencies, numDependencies, mode, what));
}

SIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
  if (!mode || (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
                *mode != cudaStreamCaptureModeRelaxed))
    return sim_cuda_error(cudaErrorInvalidValue);
  enum cudaStreamCaptureMode old = tl_mode;
  tl_mode = *mode;
  *mode = old;
  return cudaSuccess;
}

/* The first stream of c, other than the origin, whose last work the
 * origin does not depend on (NULL: every fork is joined). */
static sim_stream *unjoined(capture *c) {
  member *o = member_of(c, c->origin);
  for (size_t i = 0; i < c->nm; i++) {
    member *m = &c->m[i];
    if (m == o) continue;
    for (size_t j = 0; j < m->n; j++)
      if (!graph_reaches(o->deps, o->n, m->deps[j])) return m->s;
  }
  return NULL;
}

SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph) {
  static const char what[] = "cudaStreamEndCapture";
  cudaError_t err;
  if (!pGraph) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(stream, &err);
  if (!s) return sim_cuda_error(err);
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  if (!c) {
    pthread_mutex_unlock(&lock);
    SIM_WARN(SIM_STREAM, "%s: stream %p is not capturing", what, (void *)s);
    return sim_cuda_error(cudaErrorIllegalState);
  }
  if (c->origin != s) {
    invalidate(c, "cudaStreamEndCapture on a stream the capture forked to, not its origin");
    pthread_mutex_unlock(&lock);
    SIM_WARN(SIM_STREAM, "%s: stream %p joined capture %llu, which began on stream %p: end it there", what, (void *)s,
             (unsigned long long)c->id, (void *)c->origin);
    return sim_cuda_error(cudaErrorStreamCaptureUnmatched);
  }
  struct CUgraph_st *g = c->graph;
  bool own = c->own_graph;
  uint64_t id = c->id;
  sim_stream *loose = NULL;
  err = cudaSuccess;
  if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != sim_thread_self()) {
    /* The capture ends all the same, with no graph (CUDA 13 on H200). */
    SIM_WARN(SIM_STREAM, "%s: capture %llu (%s mode) was begun by another thread, which must end it; the capture is "
             "ended without a graph", what, (unsigned long long)id, mode_name(c->mode));
    err = cudaErrorStreamCaptureWrongThread;
  } else if (c->invalidated) {
    SIM_WARN(SIM_STREAM, "%s: capture %llu on stream %p was invalidated: %s", what, (unsigned long long)id, (void *)s,
             c->why);
    err = cudaErrorStreamCaptureInvalidated;
  } else if ((loose = unjoined(c))) {
    SIM_WARN(SIM_STREAM,
             "%s: capture %llu forked to stream %p, whose last captured work stream %p never waited for (record an "
             "event on %p and make %p wait for it before ending the capture)",
             what, (unsigned long long)id, (void *)loose, (void *)s, (void *)loose, (void *)s);
    err = cudaErrorStreamCaptureUnjoined;
  }
  finish(c);
  pthread_mutex_unlock(&lock);
  if (err != cudaSuccess) {
    if (own) graph_free(g);
    *pGraph = NULL;
    return sim_cuda_error(err);
  }
  *pGraph = g;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus) {
  cudaError_t err;
  if (!pCaptureStatus) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(stream, &err);
  if (!s) return sim_cuda_error(err);
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  *pCaptureStatus = !c ? cudaStreamCaptureStatusNone
                       : c->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  pthread_mutex_unlock(&lock);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                                unsigned long long *id_out, cudaGraph_t *graph_out,
                                                const cudaGraphNode_t **dependencies_out,
                                                const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out) {
  cudaError_t err;
  if (!captureStatus_out) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(stream, &err);
  if (!s) return sim_cuda_error(err);
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  if (!c) {
    *captureStatus_out = cudaStreamCaptureStatusNone;
  } else if (c->invalidated) {
    *captureStatus_out = cudaStreamCaptureStatusInvalidated;
  } else {
    member *m = member_of(c, s);
    *captureStatus_out = cudaStreamCaptureStatusActive;
    if (id_out) *id_out = c->id;
    if (graph_out) *graph_out = c->graph;
    if (dependencies_out) *dependencies_out = (const cudaGraphNode_t *)m->deps;
    if (edgeData_out) *edgeData_out = m->edges;
    if (numDependencies_out) *numDependencies_out = m->n;
  }
  pthread_mutex_unlock(&lock);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                           const cudaGraphEdgeData *dependencyData,
                                                           size_t numDependencies, unsigned int flags) {
  static const char what[] = "cudaStreamUpdateCaptureDependencies";
  static const cudaGraphEdgeData zero;
  cudaError_t err;
  if ((flags != cudaStreamAddCaptureDependencies && flags != cudaStreamSetCaptureDependencies) ||
      (numDependencies && !dependencies))
    return sim_cuda_error(cudaErrorInvalidValue);
  for (size_t i = 0; dependencyData && i < numDependencies; i++)
    if (memcmp(&dependencyData[i], &zero, sizeof zero)) {
      SIM_WARN(SIM_STREAM, "%s: edge data other than zeros: ncclsim's edges are full dependencies only", what);
      return sim_cuda_error(cudaErrorInvalidValue);
    }
  sim_stream *s = sim_stream_resolve(stream, &err);
  if (!s) return sim_cuda_error(err);
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  if (!c || c->invalidated) {
    pthread_mutex_unlock(&lock);
    SIM_WARN(SIM_STREAM, "%s: stream %p %s", what, (void *)s, c ? "belongs to an invalidated capture" : "is not capturing");
    return sim_cuda_error(c ? cudaErrorStreamCaptureInvalidated : cudaErrorIllegalState);
  }
  for (size_t i = 0; i < numDependencies; i++)
    if (!node_resolve(dependencies[i], what) || dependencies[i]->graph != c->graph) {
      pthread_mutex_unlock(&lock);
      SIM_WARN(SIM_STREAM, "%s: %p is not a node of the capture's graph %p", what, (void *)dependencies[i],
               (void *)c->graph);
      return sim_cuda_error(cudaErrorInvalidValue);
    }
  member *m = member_of(c, s);
  bool ok = flags == cudaStreamSetCaptureDependencies ? deps_set(m, dependencies, numDependencies)
                                                      : deps_add(m, dependencies, numDependencies);
  pthread_mutex_unlock(&lock);
  return ok ? cudaSuccess : sim_cuda_error(cudaErrorMemoryAllocation);
}

void sim_capture_stream_gone(sim_stream *s) {
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  if (!c) {
    pthread_mutex_unlock(&lock);
    return;
  }
  uint64_t id = c->id;
  bool origin = c->origin == s;
  struct CUgraph_st *g = origin && c->own_graph ? c->graph : NULL;
  if (origin) {
    finish(c);
  } else {
    /* The capture cannot join what the stream captured any more. */
    invalidate(c, "cudaStreamDestroy of a stream the capture had forked to");
    member *m = member_of(c, s);
    sim_free(m->deps);
    sim_free(m->edges);
    *m = c->m[--c->nm];
    sim_stream_capture_set(s, NULL);
  }
  pthread_mutex_unlock(&lock);
  if (g) graph_free(g);
  SIM_WARN(SIM_STREAM, "cudaStreamDestroy: stream %p %s capture %llu; %s", (void *)s,
           origin ? "began" : "had joined", (unsigned long long)id,
           origin ? "the capture is ended without a graph" : "the capture is invalidated");
}

/* ---- captured work ---- */

/* A node of p after what each of the n streams captured last; each
 * stream's next work depends on it. Under the lock. p is taken only on
 * success. */
static cudaError_t add_node_locked(sim_stream *const *ss, int n, const gparams *p, capture_check_fn check,
                                   gnode **out) {
  capture *c = capture_of(ss[0]);
  if (!c) return cudaErrorIllegalState;
  for (int i = 1; i < n; i++)
    if (capture_of(ss[i]) != c) {
      SIM_WARN(SIM_STREAM, "work on streams %p and %p, which take part in different captures (or only one does)",
               (void *)ss[0], (void *)ss[i]);
      return cudaErrorStreamCaptureMerge;
    }
  if (c->invalidated) return cudaErrorStreamCaptureInvalidated;
  member tmp = {0};
  for (int i = 0; i < n; i++) {
    member *m = member_of(c, ss[i]);
    if (!reserve(m, 1) || !deps_add(&tmp, m->deps, m->n)) {
      sim_free(tmp.deps);
      sim_free(tmp.edges);
      return cudaErrorMemoryAllocation;
    }
  }
  gnode *node;
  cudaError_t err = check ? check(c->graph, tmp.deps, tmp.n, p) : cudaSuccess;
  if (err == cudaSuccess) err = graph_add(c->graph, tmp.deps, tmp.n, p, &node);
  sim_free(tmp.deps);
  sim_free(tmp.edges);
  if (err != cudaSuccess) return err;
  for (int i = 0; i < n; i++) deps_set(member_of(c, ss[i]), &node, 1); /* room reserved above */
  if (out) *out = node;
  return cudaSuccess;
}

cudaError_t capture_add_node(sim_stream *s, const gparams *p, capture_check_fn check, gnode **out) {
  sim_mutex_lock(&lock);
  cudaError_t err = add_node_locked(&s, 1, p, check, out);
  pthread_mutex_unlock(&lock);
  return err;
}

static cudaError_t add_node(sim_stream *s, const gparams *p) { return capture_add_node(s, p, NULL, NULL); }

cudaError_t sim_capture_add_work(sim_stream *const *streams, int n, sim_graph_work *w) {
  gparams p = {.type = cudaGraphNodeTypeKernel};
  if (w->ops->kernel_params) w->ops->kernel_params(w, &p.u.k.p);
  p.u.k.w = w;
  atomic_store(&w->refs, 1);
  sim_mutex_lock(&lock);
  cudaError_t err = add_node_locked(streams, n, &p, NULL, NULL);
  pthread_mutex_unlock(&lock);
  if (err != cudaSuccess) atomic_store(&w->refs, 0);
  return err;
}

cudaError_t sim_capture_copy(sim_stream *s, void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  gparams p = {.type = cudaGraphNodeTypeMemcpy, .u.copy = gparams_copy1d(dst, src, n, kind)};
  return add_node(s, &p);
}

cudaError_t sim_capture_memset(sim_stream *s, void *dst, int value, size_t n) {
  gparams p = {.type = cudaGraphNodeTypeMemset,
               .u.set = {.dst = dst, .pitch = n, .value = (unsigned char)value, .elementSize = 1, .width = n, .height = 1}};
  return add_node(s, &p);
}

cudaError_t sim_capture_host(sim_stream *s, cudaHostFn_t fn, void *arg) {
  gparams p = {.type = cudaGraphNodeTypeHost, .u.host = {fn, arg}};
  return add_node(s, &p);
}

/* ---- forbidden calls ---- */

/* `call` made by thread `self` (0: a thread that began no capture) in
 * interaction mode `mode`. */
static cudaError_t unsafe_as(const char *call, uint64_t self, enum cudaStreamCaptureMode mode) {
  if (!atomic_load_explicit(&sim_capture_any, memory_order_relaxed) || mode == cudaStreamCaptureModeRelaxed)
    return cudaSuccess;
  uint64_t ids[4];
  enum cudaStreamCaptureMode modes[4];
  int n = 0;
  sim_mutex_lock(&lock);
  for (capture *c = captures; c; c = c->next) {
    bool mine = c->thread == self && c->mode != cudaStreamCaptureModeRelaxed;
    bool global = mode == cudaStreamCaptureModeGlobal && c->thread != self && c->mode == cudaStreamCaptureModeGlobal;
    if (!mine && !global) continue;
    char why[192];
    snprintf(why, sizeof why, "%s was called %s (a potentially unsafe call during a %s-mode capture)", call,
             mine ? "by the thread that began it" : "by another thread, in global interaction mode", mode_name(c->mode));
    invalidate(c, why);
    if (n < 4) {
      ids[n] = c->id;
      modes[n] = c->mode;
    }
    n++;
  }
  pthread_mutex_unlock(&lock);
  if (!n) return cudaSuccess;
  SIM_WARN(SIM_STREAM,
           "%s: not permitted while %s capture %llu%s is under way (%s capture interaction mode is %s); "
           "the capture is invalidated. Make the call before the capture, or in relaxed mode "
           "(cudaStreamCaptureModeRelaxed, cudaThreadExchangeStreamCaptureMode)",
           call, mode_name(modes[0]), (unsigned long long)ids[0], n > 1 ? " and others" : "",
           self ? "this thread's" : "a new thread's", mode_name(mode));
  return cudaErrorStreamCaptureUnsupported;
}

cudaError_t sim_capture_unsafe(const char *call) { return unsafe_as(call, sim_thread_self(), tl_mode); }

/* A new thread is in global interaction mode and began no capture. */
cudaError_t sim_capture_unsafe_new_thread(const char *call) {
  return unsafe_as(call, 0, cudaStreamCaptureModeGlobal);
}

cudaError_t sim_capture_refuse(sim_stream *s, const char *call, const char *why) {
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  bool was = c && c->invalidated;
  uint64_t id = c ? c->id : 0;
  if (c) {
    char text[256];
    snprintf(text, sizeof text, "%s on stream %p: %s", call, (void *)s, why);
    invalidate(c, text);
  }
  pthread_mutex_unlock(&lock);
  if (!c) return cudaSuccess;
  SIM_WARN(SIM_STREAM, "%s: stream %p is capturing (capture %llu): %s; the capture is invalidated", call, (void *)s,
           (unsigned long long)id, why);
  return was ? cudaErrorStreamCaptureInvalidated : cudaErrorStreamCaptureUnsupported;
}

cudaError_t sim_capture_sync_device(int device) {
  if (!atomic_load_explicit(&sim_capture_any, memory_order_relaxed)) return cudaSuccess;
  uint64_t id = 0;
  sim_mutex_lock(&lock);
  for (capture *c = captures; c; c = c->next)
    for (size_t i = 0; i < c->nm; i++)
      if (sim_stream_device(c->m[i].s) == device) {
        invalidate(c, "cudaDeviceSynchronize while the capture was under way (it would wait for capturing streams)");
        id = c->id;
        break;
      }
  pthread_mutex_unlock(&lock);
  if (!id) return cudaSuccess;
  SIM_WARN(SIM_STREAM, "cudaDeviceSynchronize: device %d has a capturing stream (capture %llu), whose work is not "
           "queued to run; the capture is invalidated", device, (unsigned long long)id);
  return cudaErrorStreamCaptureUnsupported;
}

/* ---- events ---- */

static cap_event *event_find(cudaEvent_t e) {
  for (cap_event *x = events; x; x = x->next)
    if (x->e == e) return x;
  return NULL;
}

cudaError_t sim_capture_event_record(sim_stream *s, cudaEvent_t e, unsigned flags) {
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  cudaError_t err = cudaSuccess;
  if (!c) {
    err = cudaErrorIllegalState;
  } else if (c->invalidated) {
    err = cudaErrorStreamCaptureInvalidated;
  } else if (flags & cudaEventRecordExternal) {
    gparams p = {.type = cudaGraphNodeTypeEventRecord, .u.event = e};
    err = add_node_locked(&s, 1, &p, NULL, NULL);
  } else {
    /* Out of memory, the event keeps what it was (a half-made entry
     * would say it belongs to an ended capture). */
    member *m = member_of(c, s);
    gnode **deps = m->n ? sim_malloc(m->n * sizeof *deps) : NULL;
    cap_event *x = m->n && !deps ? NULL : event_find(e);
    if (!x && (!m->n || deps) && (x = sim_calloc(1, sizeof *x))) {
      x->e = e;
      x->next = events;
      events = x;
      atomic_fetch_add(&captured_events, 1);
    }
    if (!x) {
      sim_free(deps);
      err = cudaErrorMemoryAllocation;
    } else {
      if (m->n) memcpy(deps, m->deps, m->n * sizeof *deps);
      sim_free(x->deps);
      x->deps = deps;
      x->n = m->n;
      x->id = c->id;
      x->c = c;
    }
  }
  pthread_mutex_unlock(&lock);
  return err;
}

cudaError_t sim_capture_event_wait(sim_stream *s, cudaEvent_t e, unsigned flags, bool recorded, bool *done) {
  *done = false;
  if (!atomic_load_explicit(&sim_capture_any, memory_order_relaxed) &&
      !atomic_load_explicit(&captured_events, memory_order_relaxed))
    return cudaSuccess;
  static const char what[] = "cudaStreamWaitEvent";
  cudaError_t err = cudaSuccess;
  sim_mutex_lock(&lock);
  capture *c = capture_of(s);
  cap_event *x = event_find(e);
  *done = x || c;
  if (!*done) { /* an ordinary wait: neither the stream nor the event is in a capture */
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
  }
  if (x && !x->c) {
    /* Recorded in a capture that has ended: its position is in a graph,
     * not in any stream. */
    SIM_WARN(SIM_STREAM, "%s: event %p was last recorded in capture %llu, which has ended; record it again outside a "
             "capture before waiting for it", what, (void *)e, (unsigned long long)x->id);
    err = cudaErrorInvalidValue; /* from a capturing stream too (CUDA 13 on H200) */
    if (c) invalidate(c, "a wait for an event recorded in a capture that had ended");
  } else if (x && x->c->invalidated) {
    SIM_WARN(SIM_STREAM, "%s: event %p was recorded in capture %llu, which was invalidated: %s", what, (void *)e,
             (unsigned long long)x->id, x->c->why);
    err = c == x->c ? cudaErrorStreamCaptureInvalidated : cudaErrorInvalidValue;
  } else if (x && !c) { /* a fork: s joins the capture */
    member *m = member_add(x->c, s);
    if (!m || !deps_set(m, x->deps, x->n)) err = cudaErrorMemoryAllocation;
  } else if (x && c == x->c) { /* a join, or a dependency between forks */
    if (!deps_add(member_of(c, s), x->deps, x->n)) err = cudaErrorMemoryAllocation;
  } else if (x) { /* s captures into another graph */
    char why[160];
    snprintf(why, sizeof why, "a stream of capture %llu waited for an event of capture %llu",
             (unsigned long long)c->id, (unsigned long long)x->id);
    invalidate(c, why);
    invalidate(x->c, why);
    SIM_WARN(SIM_STREAM, "%s: stream %p (capture %llu) waits for event %p, recorded in capture %llu: two captures "
             "cannot merge; both are invalidated", what, (void *)s, (unsigned long long)c->id, (void *)e,
             (unsigned long long)x->id);
    err = cudaErrorStreamCaptureMerge;
  } else if (c->invalidated) {
    err = cudaErrorStreamCaptureInvalidated;
  } else if (flags & cudaEventWaitExternal) { /* a wait node, for an event recorded anywhere */
    gparams p = {.type = cudaGraphNodeTypeWaitEvent, .u.event = e};
    err = add_node_locked(&s, 1, &p, NULL, NULL);
  } else if (recorded) {
    invalidate(c, "a wait for an event recorded outside the capture");
    SIM_WARN(SIM_STREAM, "%s: stream %p (capture %llu) waits for event %p, recorded outside the capture: a dependency "
             "on uncaptured work (cudaEventWaitExternal makes it a wait node); the capture is invalidated", what,
             (void *)s, (unsigned long long)c->id, (void *)e);
    err = cudaErrorStreamCaptureIsolation;
  } /* else: an event never recorded is no dependency */
  pthread_mutex_unlock(&lock);
  return err;
}

cudaError_t sim_capture_event_check(cudaEvent_t e, const char *call) {
  if (!atomic_load_explicit(&captured_events, memory_order_relaxed)) return cudaSuccess;
  sim_mutex_lock(&lock);
  cap_event *x = event_find(e);
  uint64_t id = x ? x->id : 0;
  /* While its capture is active the event is "captured"; once the
   * capture is invalidated or ended it marks nothing at all (CUDA 13 on
   * H200, conformance/probes/graph_probe.c). */
  bool active = x && x->c && !x->c->invalidated;
  if (active) invalidate(x->c, "the host queried or waited for an event recorded in the capture");
  pthread_mutex_unlock(&lock);
  if (!x) return cudaSuccess;
  SIM_WARN(SIM_STREAM, "%s: event %p was last recorded in capture %llu%s: it marks a place in a graph, not in a "
           "stream; the host cannot query or wait for it", call, (void *)e, (unsigned long long)id,
           active ? "" : ", which has ended or was invalidated");
  return active ? cudaErrorCapturedEvent : cudaErrorInvalidValue;
}

void sim_capture_event_forget(cudaEvent_t e) {
  if (!atomic_load_explicit(&captured_events, memory_order_relaxed)) return;
  sim_mutex_lock(&lock);
  for (cap_event **p = &events; *p; p = &(*p)->next)
    if ((*p)->e == e) {
      cap_event *x = *p;
      *p = x->next;
      sim_free(x->deps);
      sim_free(x);
      atomic_fetch_sub(&captured_events, 1);
      break;
    }
  pthread_mutex_unlock(&lock);
}
