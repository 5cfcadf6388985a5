/* tests/sim_graph.c — stream capture and CUDA graphs on ncclsim
 * (sim/cuda/capture.c, graph*.c): capture in each mode, fork and join
 * through events, what is left unjoined, the calls a capture forbids and
 * the captured-event rules, with CUDA's error codes; the node API
 * (memcpy, memset, host, event and empty nodes, dependencies and the
 * topology queries), clones, instantiation, launches and their order,
 * updates of an executable graph, user objects and the DOT file. Kernel
 * nodes are in tests/kernel_graph.cu, NCCL operations in
 * tests/sim_graph_nccl.c. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime.h>
#include <ncclsim.h>

#include "sim.h" /* sim_last_warning */
#include "slow.h"

static void warned(const char *what) {
  if (!strstr(sim_last_warning(), what)) fail_msg("\"%s\" not in the last warning: %s", what, sim_last_warning());
}

static cudaStream_t stream(void) {
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  return s;
}

static void *dev(size_t n) {
  void *p;
  assert_int_equal(cudaMalloc(&p, n), cudaSuccess);
  return p;
}

static enum cudaStreamCaptureStatus status(cudaStream_t s) {
  enum cudaStreamCaptureStatus st = 99;
  assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
  return st;
}

static size_t node_count(cudaGraph_t g) {
  size_t n = 12345;
  assert_int_equal(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
  return n;
}

static enum cudaGraphNodeType type_of(cudaGraphNode_t n) {
  enum cudaGraphNodeType t;
  assert_int_equal(cudaGraphNodeGetType(n, &t), cudaSuccess);
  return t;
}

/* A host function that appends its tag to a log. */
typedef struct {
  pthread_mutex_t lock;
  int n;
  int tags[4096];
} hlog;

typedef struct {
  hlog *log;
  int tag;
} htag;

static void log_tag(void *arg) {
  htag *h = arg;
  pthread_mutex_lock(&h->log->lock);
  if (h->log->n < 4096) h->log->tags[h->log->n++] = h->tag;
  pthread_mutex_unlock(&h->log->lock);
}

static void log_init(hlog *l) {
  memset(l, 0, sizeof *l);
  pthread_mutex_init(&l->lock, NULL);
}

/* -------------------------------------------------------- capture basics */

/* Copies, a memset and a host function captured on one stream make a
 * chain of four nodes; every launch runs them again, on the data of the
 * moment, and the capture ran none of them. */
static void test_capture_chain(void **state) {
  (void)state;
  enum { N = 256 };
  cudaStream_t s = stream();
  int *d = dev(N * sizeof(int)), *e = dev(N * sizeof(int));
  int in[N], out[N];
  hlog log;
  log_init(&log);
  htag tag = {&log, 7};
  for (int i = 0; i < N; i++) in[i] = out[i] = -1;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(status(s), cudaStreamCaptureStatusActive);
  assert_int_equal(cudaMemsetAsync(e, 0, N * sizeof(int), s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, in, sizeof in, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(out, d, sizeof out, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, log_tag, &tag), cudaSuccess);
  cudaGraph_t g = NULL;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_non_null(g);
  assert_int_equal(status(s), cudaStreamCaptureStatusNone);
  assert_int_equal(log.n, 0); /* nothing ran */
  assert_int_equal(out[0], -1);
  cudaGraphNode_t nodes[4];
  size_t n = 4;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_int_equal(n, 4);
  assert_int_equal(type_of(nodes[0]), cudaGraphNodeTypeMemset);
  assert_int_equal(type_of(nodes[1]), cudaGraphNodeTypeMemcpy);
  assert_int_equal(type_of(nodes[2]), cudaGraphNodeTypeMemcpy);
  assert_int_equal(type_of(nodes[3]), cudaGraphNodeTypeHost);
  for (int i = 1; i < 4; i++) { /* a chain */
    cudaGraphNode_t dep;
    size_t nd = 1;
    assert_int_equal(cudaGraphNodeGetDependencies(nodes[i], &dep, NULL, &nd), cudaSuccess);
    assert_int_equal(nd, 1);
    assert_ptr_equal(dep, nodes[i - 1]);
  }
  struct cudaMemcpy3DParms cp;
  assert_int_equal(cudaGraphMemcpyNodeGetParams(nodes[1], &cp), cudaSuccess);
  assert_ptr_equal(cp.dstPtr.ptr, d);
  assert_ptr_equal(cp.srcPtr.ptr, in);
  assert_int_equal(cp.extent.width, sizeof in);
  assert_int_equal(cp.kind, cudaMemcpyHostToDevice);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < N; i++) in[i] = round * 1000 + i;
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < N; i++) assert_int_equal(out[i], round * 1000 + i);
    assert_int_equal(log.n, round + 1);
  }
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  cudaFree(d);
  cudaFree(e);
  cudaStreamDestroy(s);
}

/* Measured with CUDA 13 on an H100: a copy to pageable host memory on the
 * capturing stream is one node, and a synchronous cudaMemcpy on the
 * default stream during a global capture runs at once. */
static void test_capture_measured(void **state) {
  (void)state;
  cudaStream_t s = stream();
  int *d = dev(64), h[16] = {0}, src[16];
  for (int i = 0; i < 16; i++) src[i] = i + 1;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemcpy(d, src, 64, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, 64, cudaMemcpyDeviceToHost, s), cudaSuccess);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(node_count(g), 1);
  assert_int_equal(h[3], 0);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[3], 4);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaFree(d);
  cudaStreamDestroy(s);
}

static void test_capture_info(void **state) {
  (void)state;
  cudaStream_t s = stream(), t = stream();
  int *d = dev(64);
  enum cudaStreamCaptureStatus st;
  unsigned long long id1 = 0, id2 = 0;
  cudaGraph_t g = NULL;
  const cudaGraphNode_t *deps = NULL;
  const cudaGraphEdgeData *edges = NULL;
  size_t nd = 99;
  assert_int_equal(cudaStreamGetCaptureInfo(s, &st, &id1, &g, &deps, &edges, &nd), cudaSuccess);
  assert_int_equal(st, cudaStreamCaptureStatusNone);
  assert_int_equal(cudaStreamGetCaptureInfo(s, NULL, NULL, NULL, NULL, NULL, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(t, cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(cudaStreamGetCaptureInfo(s, &st, &id1, &g, &deps, &edges, &nd), cudaSuccess);
  assert_int_equal(st, cudaStreamCaptureStatusActive);
  assert_int_equal(nd, 0);
  assert_non_null(g);
  assert_int_equal(cudaStreamGetCaptureInfo(t, &st, &id2, NULL, NULL, NULL, NULL), cudaSuccess);
  assert_true(id1 != 0 && id2 != 0 && id1 != id2);
  assert_int_equal(cudaMemsetAsync(d, 1, 64, s), cudaSuccess);
  assert_int_equal(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, &edges, &nd), cudaSuccess);
  assert_int_equal(nd, 1);
  assert_int_equal(type_of(deps[0]), cudaGraphNodeTypeMemset);
  assert_int_equal(edges[0].type, cudaGraphDependencyTypeDefault);
  cudaGraphNode_t first = deps[0];
  /* The next node depends on what the stream's dependencies say: set them
   * to none, and the next node is a root. */
  assert_int_equal(cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 0, cudaStreamSetCaptureDependencies),
                   cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 2, 64, s), cudaSuccess);
  assert_int_equal(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, NULL, &nd), cudaSuccess);
  cudaGraphNode_t second = deps[0];
  assert_int_equal(cudaStreamUpdateCaptureDependencies(s, &first, NULL, 1, cudaStreamAddCaptureDependencies),
                   cudaSuccess);
  assert_int_equal(cudaStreamGetCaptureInfo(s, &st, NULL, NULL, &deps, NULL, &nd), cudaSuccess);
  assert_int_equal(nd, 2);
  assert_int_equal(cudaMemsetAsync(d, 3, 64, s), cudaSuccess);
  /* Errors: bad flags, a node of another graph, edge data. */
  assert_int_equal(cudaStreamUpdateCaptureDependencies(s, &first, NULL, 1, 7), cudaErrorInvalidValue);
  cudaGraph_t other;
  cudaGraphNode_t alien;
  assert_int_equal(cudaGraphCreate(&other, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddEmptyNode(&alien, other, NULL, 0), cudaSuccess);
  assert_int_equal(cudaStreamUpdateCaptureDependencies(s, &alien, NULL, 1, 0), cudaErrorInvalidValue);
  cudaGraphEdgeData ed = {.type = cudaGraphDependencyTypeProgrammatic};
  assert_int_equal(cudaStreamUpdateCaptureDependencies(s, &first, &ed, 1, 0), cudaErrorInvalidValue);
  cudaGraph_t got;
  assert_int_equal(cudaStreamEndCapture(s, &got), cudaSuccess);
  assert_ptr_equal(got, g);
  assert_int_equal(cudaStreamUpdateCaptureDependencies(s, NULL, NULL, 0, 0), cudaErrorIllegalState);
  cudaGraphNode_t nodes[3], third;
  size_t n = 3;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_ptr_equal(nodes[0], first);
  assert_ptr_equal(nodes[1], second);
  third = nodes[2];
  size_t roots = 3;
  cudaGraphNode_t r[3];
  assert_int_equal(cudaGraphGetRootNodes(g, r, &roots), cudaSuccess);
  assert_int_equal(roots, 2); /* the first two: the second was made a root */
  size_t n3 = 2;
  assert_int_equal(cudaGraphNodeGetDependencies(third, r, NULL, &n3), cudaSuccess);
  assert_int_equal(n3, 2);
  cudaGraph_t gt;
  assert_int_equal(cudaStreamEndCapture(t, &gt), cudaSuccess);
  assert_int_equal(node_count(gt), 0);
  cudaGraphDestroy(gt);
  cudaGraphDestroy(g);
  cudaGraphDestroy(other);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaStreamDestroy(t);
}

static void test_capture_errors(void **state) {
  (void)state;
  cudaStream_t s = stream();
  cudaGraph_t g = (cudaGraph_t)1;
  enum cudaStreamCaptureStatus st0;
  int *d = dev(64);
  assert_int_equal(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
  warned("legacy stream");
  assert_int_equal(cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)7), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
  warned("not capturing");
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
  assert_int_equal(cudaStreamEndCapture(s, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamIsCapturing(s, NULL), cudaErrorInvalidValue);
  /* A capturing stream is destroyed all the same, and its capture ends
   * with no graph (CUDA 13 on H200: conformance/probes/graph_probe.c). */
  assert_int_equal(cudaMemsetAsync(d, 0, 64, s), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  warned("ended without a graph");
  assert_int_equal(cudaStreamIsCapturing(s, &st0), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaMemsetAsync(d, 0, 64, 0), cudaSuccess); /* no capture is left under way */
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  /* A stream the capture forked to: the capture is invalidated. */
  cudaStream_t t = stream();
  cudaEvent_t fork;
  assert_int_equal(cudaEventCreate(&fork), cudaSuccess);
  s = stream();
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaEventRecord(fork, s), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(t, fork, 0), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 0, 64, t), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(t), cudaSuccess);
  warned("the capture is invalidated");
  assert_int_equal(status(s), cudaStreamCaptureStatusInvalidated);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  assert_null(g);
  cudaEventDestroy(fork);
  cudaFree(d);
  cudaGraph_t e;
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphCreate(&e, 0), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&x, e, 0), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  cudaGraph_t building;
  enum cudaStreamCaptureStatus st;
  assert_int_equal(cudaStreamGetCaptureInfo(s, &st, NULL, &building, NULL, NULL, NULL), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(building), cudaErrorIllegalState);
  /* A graph launch is not captured here; stream-ordered allocation is
   * (tests/sim_graph_mem.c), but not a free of other memory. */
  assert_int_equal(cudaGraphLaunch(x, s), cudaErrorStreamCaptureUnsupported);
  assert_int_equal(cudaGraphLaunch(x, s), cudaErrorStreamCaptureInvalidated); /* already */
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  void *p;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&p, 64, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(p, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(node_count(g), 2);
  cudaGraphDestroy(g);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(cudaFreeAsync(&p, s), cudaErrorStreamCaptureUnsupported);
  warned("free nodes only of graph allocations");
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(e);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ------------------------------------------------ calls a capture forbids */

/* Measured with CUDA 13 on an H100: cudaMalloc during a global capture
 * returns cudaErrorStreamCaptureUnsupported and the capture's end
 * cudaErrorStreamCaptureInvalidated; so does cudaStreamSynchronize of
 * the capturing stream. The stream works as before afterwards. */
static void test_illegal_calls(void **state) {
  (void)state;
  cudaStream_t s = stream();
  int *d = dev(64), h[16];
  void *p = NULL;
  cudaGraph_t g = (cudaGraph_t)1;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 0, 64, s), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 64), cudaErrorStreamCaptureUnsupported);
  warned("cudaMalloc");
  assert_null(p);
  assert_int_equal(cudaGetLastError(), cudaErrorStreamCaptureUnsupported);
  assert_int_equal(status(s), cudaStreamCaptureStatusInvalidated);
  assert_int_equal(cudaMemsetAsync(d, 0, 64, s), cudaErrorStreamCaptureInvalidated);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  assert_null(g);
  warned("cudaMalloc was called by the thread that began it");
  assert_int_equal(status(s), cudaStreamCaptureStatusNone);
  assert_int_equal(cudaMalloc(&p, 64), cudaSuccess); /* no capture: fine again */
  const char *calls[] = {"sync",     "query",      "devsync",     "free",       "host",
                         "freehost", "register",   "unregister",  "instantiate", "execdestroy"};
  static char reg[4096];
  cudaGraph_t other;
  assert_int_equal(cudaGraphCreate(&other, 0), cudaSuccess);
  for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
    void *hp = NULL;
    cudaGraphExec_t ox = NULL;
    if (!strcmp(calls[c], "freehost")) assert_int_equal(cudaMallocHost(&hp, 64), cudaSuccess);
    if (!strcmp(calls[c], "unregister")) assert_int_equal(cudaHostRegister(reg, sizeof reg, 0), cudaSuccess);
    if (!strcmp(calls[c], "execdestroy")) assert_int_equal(cudaGraphInstantiate(&ox, other, 0), cudaSuccess);
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    cudaError_t err = !strcmp(calls[c], "sync")          ? cudaStreamSynchronize(s)
                      : !strcmp(calls[c], "query")       ? cudaStreamQuery(s)
                      : !strcmp(calls[c], "devsync")     ? cudaDeviceSynchronize()
                      : !strcmp(calls[c], "free")        ? cudaFree(p)
                      : !strcmp(calls[c], "host")        ? cudaMallocHost(&hp, 64)
                      : !strcmp(calls[c], "freehost")    ? cudaFreeHost(hp)
                      : !strcmp(calls[c], "register")    ? cudaHostRegister(reg, sizeof reg, 0)
                      : !strcmp(calls[c], "unregister")  ? cudaHostUnregister(reg)
                      : !strcmp(calls[c], "instantiate") ? cudaGraphInstantiate(&ox, other, 0)
                                                         : cudaGraphExecDestroy(ox);
    if (err != cudaErrorStreamCaptureUnsupported) fail_msg("%s: %s", calls[c], cudaGetErrorName(err));
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
    if (!strcmp(calls[c], "freehost")) assert_int_equal(cudaFreeHost(hp), cudaSuccess);
    if (!strcmp(calls[c], "unregister")) assert_int_equal(cudaHostUnregister(reg), cudaSuccess);
    if (!strcmp(calls[c], "execdestroy")) assert_int_equal(cudaGraphExecDestroy(ox), cudaSuccess); /* not gone */
  }
  /* A relaxed capture permits instantiation (CUDA 13 on H200). */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  cudaGraphExec_t ox;
  assert_int_equal(cudaGraphInstantiate(&ox, other, 0), cudaSuccess);
  assert_int_equal(cudaGraphExecDestroy(ox), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);
  cudaGraphDestroy(other);
  /* Relaxed mode permits them (measured: cudaMalloc, and the graph runs). */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  void *q = NULL;
  assert_int_equal(cudaMalloc(&q, 64), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, 64, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaFree(q), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  /* A relaxed thread may call them during its own global capture. */
  enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
  assert_int_equal(cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
  assert_int_equal(m, cudaStreamCaptureModeGlobal); /* the default */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMalloc(&q, 64), cudaSuccess);
  assert_int_equal(cudaFree(q), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);
  assert_int_equal(cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
  assert_int_equal(m, cudaStreamCaptureModeRelaxed);
  m = (enum cudaStreamCaptureMode)9;
  assert_int_equal(cudaThreadExchangeStreamCaptureMode(&m), cudaErrorInvalidValue);
  assert_int_equal(cudaThreadExchangeStreamCaptureMode(NULL), cudaErrorInvalidValue);
  cudaFree(p);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaGetLastError();
}

/* Another thread's calls: a global capture forbids them to threads in
 * global interaction mode, a thread-local one does not. */
typedef struct {
  int mode; /* the other thread's interaction mode */
  cudaError_t malloc_err;
} other_arg;

static void *other_thread(void *p) {
  other_arg *a = p;
  enum cudaStreamCaptureMode m = (enum cudaStreamCaptureMode)a->mode;
  cudaThreadExchangeStreamCaptureMode(&m);
  void *q = NULL;
  a->malloc_err = cudaMalloc(&q, 64);
  if (q) cudaFree(q);
  return NULL;
}

static cudaError_t malloc_elsewhere(int mode) {
  other_arg a = {mode, cudaErrorUnknown};
  pthread_t th;
  pthread_create(&th, NULL, other_thread, &a);
  pthread_join(th, NULL);
  return a.malloc_err;
}

static void test_capture_modes_threads(void **state) {
  (void)state;
  cudaStream_t s = stream();
  cudaGraph_t g;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(malloc_elsewhere(cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(status(s), cudaStreamCaptureStatusActive);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(malloc_elsewhere(cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(malloc_elsewhere(cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(status(s), cudaStreamCaptureStatusActive);
  assert_int_equal(malloc_elsewhere(cudaStreamCaptureModeGlobal), cudaErrorStreamCaptureUnsupported);
  assert_int_equal(status(s), cudaStreamCaptureStatusInvalidated);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  warned("by another thread, in global interaction mode");
  /* The capturing thread itself may not, in thread-local mode either. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  void *q = NULL;
  assert_int_equal(cudaMalloc(&q, 64), cudaErrorStreamCaptureUnsupported);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  cudaStreamDestroy(s);
  cudaGetLastError();
}

/* cudaStreamBeginCaptureToGraph: the capture adds to a graph of the
 * caller's, after the nodes named; the graph stays the caller's even when
 * the capture is invalidated. */
static void test_capture_to_graph(void **state) {
  (void)state;
  cudaStream_t s = stream(), t = stream();
  int *d = dev(64);
  cudaGraph_t g, other, got = NULL;
  cudaGraphNode_t a, b, alien;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  assert_int_equal(cudaGraphCreate(&other, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddEmptyNode(&a, g, NULL, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddEmptyNode(&alien, other, NULL, 0), cudaSuccess);
  cudaGraphEdgeData ed = {.to_port = 1};
  assert_int_equal(cudaStreamBeginCaptureToGraph(s, g, &alien, NULL, 1, cudaStreamCaptureModeGlobal),
                   cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCaptureToGraph(s, g, &a, &ed, 1, cudaStreamCaptureModeGlobal), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCaptureToGraph(s, NULL, NULL, NULL, 0, cudaStreamCaptureModeGlobal), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCaptureToGraph(s, g, NULL, NULL, 1, cudaStreamCaptureModeGlobal),
                   cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCaptureToGraph(s, g, &a, NULL, 1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaStreamBeginCaptureToGraph(t, g, NULL, NULL, 0, cudaStreamCaptureModeGlobal),
                   cudaErrorIllegalState); /* another capture builds it */
  assert_int_equal(cudaMemsetAsync(d, 1, 64, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &got), cudaSuccess);
  assert_ptr_equal(got, g);
  assert_int_equal(node_count(g), 2);
  size_t n = 1;
  assert_int_equal(cudaGraphNodeGetDependentNodes(a, &b, NULL, &n), cudaSuccess);
  assert_int_equal(n, 1);
  assert_int_equal(type_of(b), cudaGraphNodeTypeMemset);
  /* Invalidated: no graph returned, and the caller's graph is intact. */
  assert_int_equal(cudaStreamBeginCaptureToGraph(s, g, &b, NULL, 1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 2, 64, s), cudaSuccess);
  assert_int_equal(cudaStreamQuery(s), cudaErrorStreamCaptureUnsupported);
  assert_int_equal(cudaStreamEndCapture(s, &got), cudaErrorStreamCaptureInvalidated);
  assert_null(got);
  assert_int_equal(node_count(g), 3); /* the memset captured before stays */
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(other), cudaSuccess);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaStreamDestroy(t);
  cudaGetLastError();
}

/* A capture must be ended by the thread that began it, unless relaxed. */
typedef struct {
  cudaStream_t s;
  cudaGraph_t g;
  cudaError_t err;
} end_arg;

static void *end_thread(void *p) {
  end_arg *a = p;
  a->err = cudaStreamEndCapture(a->s, &a->g);
  return NULL;
}

static cudaError_t end_elsewhere(cudaStream_t s, cudaGraph_t *g) {
  end_arg a = {s, NULL, cudaErrorUnknown};
  pthread_t th;
  pthread_create(&th, NULL, end_thread, &a);
  pthread_join(th, NULL);
  *g = a.g;
  return a.err;
}

static void test_end_wrong_thread(void **state) {
  (void)state;
  cudaStream_t s = stream();
  int *d = dev(64);
  cudaGraph_t g;
  for (int mode = cudaStreamCaptureModeGlobal; mode <= cudaStreamCaptureModeThreadLocal; mode++) {
    assert_int_equal(cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)mode), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(d, 0, 64, s), cudaSuccess);
    assert_int_equal(end_elsewhere(s, &g), cudaErrorStreamCaptureWrongThread);
    assert_null(g);
    /* and the capture is over, with no graph (CUDA 13 on H200) */
    assert_int_equal(status(s), cudaStreamCaptureStatusNone);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
  }
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 0, 64, s), cudaSuccess);
  assert_int_equal(end_elsewhere(s, &g), cudaSuccess);
  assert_int_equal(node_count(g), 1);
  cudaGraphDestroy(g);
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* --------------------------------------------------- fork, join, events */

/* s1 forks to s2 and s3 through an event, each branch copies its own
 * part, and s1 joins both: the graph is a diamond, and its launches run
 * every branch. */
static void test_fork_join(void **state) {
  (void)state;
  cudaStream_t s1 = stream(), s2 = stream(), s3 = stream();
  cudaEvent_t fork, j2, j3;
  assert_int_equal(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
  assert_int_equal(cudaEventCreateWithFlags(&j2, cudaEventDisableTiming), cudaSuccess);
  assert_int_equal(cudaEventCreateWithFlags(&j3, cudaEventDisableTiming), cudaSuccess);
  int *d = dev(3 * 64), h[48] = {0}, src[48];
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 0, 3 * 64, s1), cudaSuccess);
  assert_int_equal(cudaEventRecord(fork, s1), cudaSuccess);
  assert_int_equal(status(s2), cudaStreamCaptureStatusNone);
  assert_int_equal(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s3, fork, 0), cudaSuccess);
  assert_int_equal(status(s2), cudaStreamCaptureStatusActive); /* joined the capture */
  unsigned long long id1, id2;
  enum cudaStreamCaptureStatus st;
  assert_int_equal(cudaStreamGetCaptureInfo(s1, &st, &id1, NULL, NULL, NULL, NULL), cudaSuccess);
  assert_int_equal(cudaStreamGetCaptureInfo(s2, &st, &id2, NULL, NULL, NULL, NULL), cudaSuccess);
  assert_true(id1 == id2);
  assert_int_equal(cudaMemcpyAsync(d + 16, src + 16, 64, cudaMemcpyHostToDevice, s2), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d + 32, src + 32, 64, cudaMemcpyHostToDevice, s3), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, src, 64, cudaMemcpyHostToDevice, s1), cudaSuccess);
  assert_int_equal(cudaEventRecord(j2, s2), cudaSuccess);
  assert_int_equal(cudaEventRecord(j3, s3), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s1, j2, 0), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s1, j3, 0), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, 3 * 64, cudaMemcpyDeviceToHost, s1), cudaSuccess);
  /* The host may not query or wait for a captured event. */
  assert_int_equal(cudaEventQuery(j2), cudaErrorCapturedEvent);
  warned("recorded in capture");
  /* The query invalidated the capture: the event marks nothing now. */
  assert_int_equal(cudaEventSynchronize(j2), cudaErrorInvalidValue);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureInvalidated);
  /* Again, without the query. */
  assert_int_equal(status(s2), cudaStreamCaptureStatusNone);
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 0, 3 * 64, s1), cudaSuccess);
  assert_int_equal(cudaEventRecord(fork, s1), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s3, fork, 0), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d + 16, src + 16, 64, cudaMemcpyHostToDevice, s2), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d + 32, src + 32, 64, cudaMemcpyHostToDevice, s3), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, src, 64, cudaMemcpyHostToDevice, s1), cudaSuccess);
  assert_int_equal(cudaEventRecord(j2, s2), cudaSuccess);
  assert_int_equal(cudaEventRecord(j3, s3), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s1, j2, 0), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s1, j3, 0), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, 3 * 64, cudaMemcpyDeviceToHost, s1), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaSuccess);
  assert_int_equal(status(s2), cudaStreamCaptureStatusNone);
  assert_int_equal(status(s3), cudaStreamCaptureStatusNone);
  cudaGraphNode_t nodes[5];
  size_t n = 5;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_int_equal(n, 5); /* memset, three copies in, one out */
  size_t nd = 0, ne = 0;
  assert_int_equal(cudaGraphNodeGetDependentNodes(nodes[0], NULL, NULL, &nd), cudaSuccess);
  assert_int_equal(nd, 3);
  assert_int_equal(cudaGraphNodeGetDependencies(nodes[4], NULL, NULL, &nd), cudaSuccess);
  assert_int_equal(nd, 3);
  assert_int_equal(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne), cudaSuccess);
  assert_int_equal(ne, 6);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 48; i++) src[i] = round * 100 + i;
    assert_int_equal(cudaGraphLaunch(x, s2), cudaSuccess); /* any stream */
    assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
    for (int i = 0; i < 48; i++) assert_int_equal(h[i], round * 100 + i);
  }
  /* The event of a capture that has ended marks nothing a stream or the
   * host can wait for (CUDA 13 on H200). */
  assert_int_equal(cudaEventSynchronize(j2), cudaErrorInvalidValue);
  assert_int_equal(cudaEventQuery(j2), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamWaitEvent(s3, j2, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s1, j2, 0), cudaErrorInvalidValue);
  assert_int_equal(status(s1), cudaStreamCaptureStatusInvalidated);
  cudaGraph_t none;
  assert_int_equal(cudaStreamEndCapture(s1, &none), cudaErrorStreamCaptureInvalidated);
  assert_null(none);
  assert_int_equal(cudaEventRecord(j2, s3), cudaSuccess); /* recorded outside: an event again */
  assert_int_equal(cudaEventSynchronize(j2), cudaSuccess);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaEventDestroy(fork);
  cudaEventDestroy(j2);
  cudaEventDestroy(j3);
  cudaFree(d);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaStreamDestroy(s3);
  cudaGetLastError();
}

/* What CUDA does with a fork left unjoined: the capture's end fails with
 * cudaErrorStreamCaptureUnjoined and returns no graph, and every stream
 * of the capture is out of capture. Ending it on the forked stream is
 * cudaErrorStreamCaptureUnmatched. */
static void test_unjoined(void **state) {
  (void)state;
  cudaStream_t s1 = stream(), s2 = stream();
  cudaEvent_t e;
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  int *d = dev(128);
  cudaGraph_t g = (cudaGraph_t)1;
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s1), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 1, 64, s2), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d + 16, 2, 64, s1), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureUnjoined);
  warned("never waited for");
  assert_null(g);
  assert_int_equal(status(s1), cudaStreamCaptureStatusNone);
  assert_int_equal(status(s2), cudaStreamCaptureStatusNone);
  /* A fork with no work of its own needs no join. */
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 1, 64, s1), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s1), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d + 16, 2, 64, s1), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaSuccess);
  assert_int_equal(node_count(g), 2);
  cudaGraphDestroy(g);
  /* The end on the forked stream. */
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s1), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched);
  assert_int_equal(status(s1), cudaStreamCaptureStatusInvalidated);
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureInvalidated);
  cudaEventDestroy(e);
  cudaFree(d);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

/* An event recorded outside a capture is no dependency a capture can take
 * (cudaErrorStreamCaptureIsolation), unless waited for with
 * cudaEventWaitExternal, which makes a wait node; two captures cannot
 * merge; cudaEventRecordExternal makes a record node. */
static void test_event_rules(void **state) {
  (void)state;
  cudaStream_t s = stream(), t = stream();
  cudaEvent_t out, in;
  assert_int_equal(cudaEventCreate(&out), cudaSuccess);
  assert_int_equal(cudaEventCreate(&in), cudaSuccess);
  int *d = dev(64);
  cudaGraph_t g;
  /* Never recorded: no dependency at all. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  /* Meanwhile an ordinary wait, of a stream and an event outside any
   * capture, is untouched (it crashed once while any capture ran). */
  cudaStream_t u = stream();
  assert_int_equal(cudaEventRecord(in, t), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(u, in, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(u), cudaSuccess);
  cudaStreamDestroy(u);
  assert_int_equal(cudaStreamWaitEvent(s, out, 0), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphDestroy(g);
  assert_int_equal(cudaEventRecord(out, t), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(t), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s, out, 0), cudaErrorStreamCaptureIsolation);
  warned("recorded outside the capture");
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  assert_int_equal(cudaStreamWaitEvent(s, out, cudaEventWaitExternal), cudaErrorIllegalState); /* not capturing */
  assert_int_equal(cudaStreamWaitEvent(s, out, 2), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s, out, cudaEventWaitExternal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 5, 64, s), cudaSuccess);
  assert_int_equal(cudaEventRecordWithFlags(in, s, cudaEventRecordExternal), cudaSuccess);
  assert_int_equal(cudaEventRecordWithFlags(in, s, 4), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphNode_t nodes[3];
  size_t n = 3;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_int_equal(n, 3);
  assert_int_equal(type_of(nodes[0]), cudaGraphNodeTypeWaitEvent);
  assert_int_equal(type_of(nodes[2]), cudaGraphNodeTypeEventRecord);
  cudaEvent_t got;
  assert_int_equal(cudaGraphEventWaitNodeGetEvent(nodes[0], &got), cudaSuccess);
  assert_ptr_equal(got, out);
  assert_int_equal(cudaGraphEventRecordNodeGetEvent(nodes[2], &got), cudaSuccess);
  assert_ptr_equal(got, in);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(in), cudaSuccess); /* the record node's */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  /* Two captures: a stream of one waits for an event of the other. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(t, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaEventRecord(in, s), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(t, in, 0), cudaErrorStreamCaptureMerge);
  assert_int_equal(status(s), cudaStreamCaptureStatusInvalidated);
  assert_int_equal(status(t), cudaStreamCaptureStatusInvalidated);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  assert_int_equal(cudaStreamEndCapture(t, &g), cudaErrorStreamCaptureInvalidated);
  /* An event of an invalidated capture cannot be waited for outside it. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaEventRecord(in, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaErrorStreamCaptureUnsupported);
  assert_int_equal(cudaStreamWaitEvent(t, in, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  assert_int_equal(cudaEventDestroy(in), cudaSuccess);
  cudaEventDestroy(out);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaStreamDestroy(t);
  cudaGetLastError();
}

/* ---------------------------------------------------------- the node API */

/* A graph made by hand: a 2D memset and a 2D pitched copy, a host node,
 * event nodes and an empty join, with their parameters read back and the
 * topology queries. */
static void test_node_api(void **state) {
  (void)state;
  enum { W = 6, H = 4, P = 8 }; /* a W x H block of ints in rows of P */
  cudaGraph_t g;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  assert_int_equal(cudaGraphCreate(&g, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphCreate(NULL, 0), cudaErrorInvalidValue);
  int *d = dev(P * H * sizeof(int));
  int h[P * H];
  for (int i = 0; i < P * H; i++) h[i] = -1;
  struct cudaMemsetParams ms = {.dst = d, .pitch = P * sizeof(int), .value = 0x01020304, .elementSize = 4,
                                .width = W, .height = H};
  cudaGraphNode_t set, copy, host, empty, rec, wait;
  assert_int_equal(cudaGraphAddMemsetNode(&set, g, NULL, 0, &ms), cudaSuccess);
  struct cudaMemcpy3DParms cp = {0};
  cp.srcPtr = make_cudaPitchedPtr(d, P * sizeof(int), W, H);
  cp.dstPtr = make_cudaPitchedPtr(h, P * sizeof(int), W, H);
  cp.extent = make_cudaExtent(W * sizeof(int), H, 1);
  cp.kind = cudaMemcpyDeviceToHost;
  assert_int_equal(cudaGraphAddMemcpyNode(&copy, g, &set, 1, &cp), cudaSuccess);
  hlog log;
  log_init(&log);
  htag tag = {&log, 1};
  struct cudaHostNodeParams hp = {log_tag, &tag};
  assert_int_equal(cudaGraphAddHostNode(&host, g, &set, 1, &hp), cudaSuccess);
  cudaGraphNode_t both[2] = {copy, host};
  assert_int_equal(cudaGraphAddEmptyNode(&empty, g, both, 2), cudaSuccess);
  cudaEvent_t e;
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  assert_int_equal(cudaGraphAddEventRecordNode(&rec, g, &empty, 1, e), cudaSuccess);
  assert_int_equal(cudaGraphAddEventWaitNode(&wait, g, &rec, 1, e), cudaSuccess);
  assert_int_equal(node_count(g), 6);
  size_t ne = 0, nr = 0;
  assert_int_equal(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne), cudaSuccess);
  assert_int_equal(ne, 6);
  cudaGraphNode_t from[8], to[8];
  cudaGraphEdgeData data[8];
  memset(data, 0xff, sizeof data);
  ne = 8;
  assert_int_equal(cudaGraphGetEdges(g, from, to, data, &ne), cudaSuccess);
  assert_int_equal(ne, 6);
  assert_ptr_equal(from[0], set);
  assert_ptr_equal(to[0], copy);
  assert_null(from[6]);
  assert_int_equal(data[0].type, 0);
  assert_int_equal(cudaGraphGetEdges(g, from, NULL, NULL, &ne), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphGetRootNodes(g, NULL, &nr), cudaSuccess);
  assert_int_equal(nr, 1);
  /* Parameters read back, and types checked. */
  struct cudaMemsetParams ms2;
  assert_int_equal(cudaGraphMemsetNodeGetParams(set, &ms2), cudaSuccess);
  assert_int_equal(memcmp(&ms, &ms2, sizeof ms), 0);
  assert_int_equal(cudaGraphMemsetNodeGetParams(copy, &ms2), cudaErrorInvalidValue);
  warned("not a memset node");
  struct cudaHostNodeParams hp2;
  assert_int_equal(cudaGraphHostNodeGetParams(host, &hp2), cudaSuccess);
  assert_ptr_equal(hp2.userData, &tag);
  assert_int_equal(cudaGraphHostNodeGetParams(NULL, &hp2), cudaErrorInvalidValue);
  /* Parameter checks. */
  cudaGraphNode_t bad;
  struct cudaMemsetParams msb = ms;
  msb.elementSize = 3;
  assert_int_equal(cudaGraphAddMemsetNode(&bad, g, NULL, 0, &msb), cudaErrorInvalidValue);
  warned("elementSize");
  msb = ms;
  msb.pitch = 4;
  assert_int_equal(cudaGraphAddMemsetNode(&bad, g, NULL, 0, &msb), cudaErrorInvalidValue);
  msb = ms;
  msb.height = 100;
  assert_int_equal(cudaGraphAddMemsetNode(&bad, g, NULL, 0, &msb), cudaErrorInvalidValue); /* past the buffer */
  msb = ms;
  msb.dst = h;
  assert_int_equal(cudaGraphAddMemsetNode(&bad, g, NULL, 0, &msb), cudaErrorInvalidValue); /* pageable */
  struct cudaMemcpy3DParms cpb = cp;
  cpb.srcArray = (cudaArray_t)1;
  assert_int_equal(cudaGraphAddMemcpyNode(&bad, g, NULL, 0, &cpb), cudaErrorInvalidValue);
  warned("arrays");
  cpb = cp;
  cpb.kind = (enum cudaMemcpyKind)9;
  assert_int_equal(cudaGraphAddMemcpyNode(&bad, g, NULL, 0, &cpb), cudaErrorInvalidMemcpyDirection);
  cpb = cp;
  cpb.kind = cudaMemcpyHostToDevice; /* the destination is pageable */
  assert_int_equal(cudaGraphAddMemcpyNode(&bad, g, NULL, 0, &cpb), cudaErrorInvalidValue);
  cpb = cp;
  cpb.extent.height = 0;
  assert_int_equal(cudaGraphAddMemcpyNode(&bad, g, NULL, 0, &cpb), cudaErrorInvalidValue);
  cpb = cp;
  cpb.srcPtr.pitch = 2;
  assert_int_equal(cudaGraphAddMemcpyNode(&bad, g, NULL, 0, &cpb), cudaErrorInvalidValue);
  struct cudaHostNodeParams hpb = {NULL, NULL};
  assert_int_equal(cudaGraphAddHostNode(&bad, g, NULL, 0, &hpb), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphAddEventRecordNode(&bad, g, NULL, 0, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphAddEmptyNode(&bad, g, NULL, 1), cudaErrorInvalidValue);
  cudaGraphNode_t twice[2] = {set, set};
  assert_int_equal(cudaGraphAddEmptyNode(&bad, g, twice, 2), cudaErrorInvalidValue);
  warned("named twice");
  assert_int_equal(cudaGraphAddEmptyNode(NULL, g, NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphAddEmptyNode(&bad, NULL, NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(node_count(g), 6); /* nothing was added */
  /* Launch: the memset's 32-bit pattern, copied out row by row; the last
   * two ints of each host row untouched. */
  cudaGraphExec_t x;
  cudaStream_t s = stream();
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  for (int y = 0; y < H; y++)
    for (int i = 0; i < P; i++) assert_int_equal(h[y * P + i], i < W ? 0x01020304 : -1);
  assert_int_equal(log.n, 1);
  assert_int_equal(cudaEventQuery(e), cudaSuccess);
  /* New parameters on the graph's nodes do not reach the executable graph. */
  ms.value = 7;
  ms.elementSize = 2;
  assert_int_equal(cudaGraphMemsetNodeSetParams(set, &ms), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0x01020304);
  cudaGraphExecDestroy(x);
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0x00070007); /* two 16-bit sevens */
  cudaGraphExecDestroy(x);
  /* Set parameters: 1D copies, events, host. */
  int back[4] = {0};
  assert_int_equal(cudaGraphMemcpyNodeSetParams1D(copy, back, d, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
  struct cudaMemcpy3DParms cp2;
  assert_int_equal(cudaGraphMemcpyNodeGetParams(copy, &cp2), cudaSuccess);
  assert_int_equal(cp2.extent.width, sizeof back);
  assert_int_equal(cudaGraphMemcpyNodeSetParams1D(copy, back, d, 1 << 20, cudaMemcpyDeviceToHost),
                   cudaErrorInvalidValue);
  cudaEvent_t e2;
  assert_int_equal(cudaEventCreate(&e2), cudaSuccess);
  assert_int_equal(cudaGraphEventRecordNodeSetEvent(rec, e2), cudaSuccess);
  assert_int_equal(cudaGraphEventWaitNodeSetEvent(wait, e2), cudaSuccess);
  assert_int_equal(cudaGraphEventWaitNodeSetEvent(rec, e2), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphEventRecordNodeSetEvent(rec, NULL), cudaErrorInvalidValue);
  htag tag2 = {&log, 2};
  hp.userData = &tag2;
  assert_int_equal(cudaGraphHostNodeSetParams(host, &hp), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(back[0], 0x00070007);
  assert_int_equal(log.n, 4);
  assert_int_equal(log.tags[3], 2);
  cudaGraphExecDestroy(x);
  /* Destroying a node takes its edges. */
  assert_int_equal(cudaGraphDestroyNode(empty), cudaSuccess);
  assert_int_equal(node_count(g), 5);
  assert_int_equal(cudaGraphGetEdges(g, NULL, NULL, NULL, &ne), cudaSuccess);
  assert_int_equal(ne, 3);
  assert_int_equal(cudaGraphGetRootNodes(g, NULL, &nr), cudaSuccess);
  assert_int_equal(nr, 2); /* set, and rec whose dependency went */
  assert_int_equal(cudaGraphDestroyNode(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(NULL), cudaErrorInvalidValue);
  cudaEventDestroy(e);
  cudaEventDestroy(e2);
  cudaFree(d);
  cudaStreamDestroy(s);
}

static void test_dependencies(void **state) {
  (void)state;
  cudaGraph_t g, other;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  assert_int_equal(cudaGraphCreate(&other, 0), cudaSuccess);
  hlog log;
  log_init(&log);
  htag tags[4] = {{&log, 0}, {&log, 1}, {&log, 2}, {&log, 3}};
  cudaGraphNode_t n[4], alien;
  for (int i = 0; i < 4; i++) {
    struct cudaHostNodeParams hp = {log_tag, &tags[i]};
    assert_int_equal(cudaGraphAddHostNode(&n[i], g, NULL, 0, &hp), cudaSuccess);
  }
  assert_int_equal(cudaGraphAddEmptyNode(&alien, other, NULL, 0), cudaSuccess);
  /* 3 -> 0 -> 2 -> 1: later nodes first, which the launch order follows. */
  cudaGraphNode_t from[3] = {n[3], n[0], n[2]}, to[3] = {n[0], n[2], n[1]};
  assert_int_equal(cudaGraphAddDependencies(g, from, to, NULL, 3), cudaSuccess);
  assert_int_equal(cudaGraphAddDependencies(g, from, to, NULL, 1), cudaErrorInvalidValue);
  warned("exists already");
  assert_int_equal(cudaGraphAddDependencies(g, &n[1], &n[1], NULL, 1), cudaErrorInvalidValue);
  warned("itself");
  assert_int_equal(cudaGraphAddDependencies(g, &alien, &n[1], NULL, 1), cudaErrorInvalidValue);
  cudaGraphEdgeData ed = {.from_port = 1};
  assert_int_equal(cudaGraphAddDependencies(g, &n[0], &n[1], &ed, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphAddDependencies(g, NULL, NULL, NULL, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphAddDependencies(NULL, from, to, NULL, 1), cudaErrorInvalidValue);
  cudaStream_t s = stream();
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(log.n, 4);
  assert_int_equal(log.tags[0], 3);
  assert_int_equal(log.tags[1], 0);
  assert_int_equal(log.tags[2], 2);
  assert_int_equal(log.tags[3], 1);
  cudaGraphExecDestroy(x);
  /* A cycle is refused at instantiation. */
  assert_int_equal(cudaGraphAddDependencies(g, &n[1], &n[3], NULL, 1), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaErrorInvalidValue);
  warned("cycle");
  cudaGraphInstantiateParams ip = {.flags = 0};
  assert_int_equal(cudaGraphInstantiateWithParams(&x, g, &ip), cudaErrorInvalidValue);
  assert_int_equal(ip.result_out, cudaGraphInstantiateInvalidStructure);
  assert_non_null(ip.errNode_out);
  assert_int_equal(cudaGraphRemoveDependencies(g, &n[1], &n[3], NULL, 1), cudaSuccess);
  assert_int_equal(cudaGraphRemoveDependencies(g, &n[1], &n[3], NULL, 1), cudaErrorInvalidValue);
  warned("no edge");
  assert_int_equal(cudaGraphInstantiateWithParams(&x, g, &ip), cudaSuccess);
  assert_int_equal(ip.result_out, cudaGraphInstantiateSuccess);
  unsigned long long flags = 99;
  assert_int_equal(cudaGraphExecGetFlags(x, &flags), cudaSuccess);
  assert_int_equal(flags, 0);
  cudaGraphExecDestroy(x);
  assert_int_equal(cudaGraphInstantiateWithFlags(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
  assert_int_equal(cudaGraphExecGetFlags(x, &flags), cudaSuccess);
  assert_int_equal(flags, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  assert_int_equal(cudaGraphUpload(x, s), cudaSuccess);
  cudaGraphExecDestroy(x);
  assert_int_equal(cudaGraphInstantiate(&x, g, cudaGraphInstantiateFlagDeviceLaunch), cudaErrorNotSupported);
  assert_int_equal(cudaGraphInstantiate(&x, g, 1ull << 40), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphInstantiate(NULL, g, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphInstantiate(&x, NULL, 0), cudaErrorInvalidValue);
  ip.flags = cudaGraphInstantiateFlagUpload;
  ip.uploadStream = s;
  assert_int_equal(cudaGraphInstantiateWithParams(&x, g, &ip), cudaSuccess);
  cudaGraphExecDestroy(x);
  assert_int_equal(cudaGraphInstantiateWithParams(&x, g, NULL), cudaErrorInvalidValue);
  /* The queries' arrays: NULLs past the count. */
  cudaGraphNode_t out[6];
  size_t k = 6;
  assert_int_equal(cudaGraphGetNodes(g, out, &k), cudaSuccess);
  assert_int_equal(k, 4);
  assert_null(out[5]);
  k = 2;
  assert_int_equal(cudaGraphGetNodes(g, out, &k), cudaSuccess);
  assert_int_equal(k, 4);
  assert_int_equal(cudaGraphGetNodes(g, out, NULL), cudaErrorInvalidValue);
  cudaGraphDestroy(g);
  cudaGraphDestroy(other);
  cudaStreamDestroy(s);
}

static void test_clone(void **state) {
  (void)state;
  cudaGraph_t g, c;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  int *d = dev(64), h[16] = {0};
  cudaGraphNode_t set, copy, found;
  struct cudaMemsetParams ms = {.dst = d, .pitch = 64, .value = 3, .elementSize = 1, .width = 64, .height = 1};
  assert_int_equal(cudaGraphAddMemsetNode(&set, g, NULL, 0, &ms), cudaSuccess);
  assert_int_equal(cudaGraphAddMemcpyNode1D(&copy, g, &set, 1, h, d, 64, cudaMemcpyDefault), cudaSuccess);
  assert_int_equal(cudaGraphClone(&c, g), cudaSuccess);
  assert_int_equal(node_count(c), 2);
  assert_int_equal(cudaGraphNodeFindInClone(&found, set, c), cudaSuccess);
  assert_ptr_not_equal(found, set);
  assert_int_equal(type_of(found), cudaGraphNodeTypeMemset);
  assert_int_equal(cudaGraphNodeFindInClone(&found, set, g), cudaErrorInvalidValue);
  ms.value = 4;
  assert_int_equal(cudaGraphMemsetNodeSetParams(found, &ms), cudaSuccess); /* the clone's only */
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  cudaStream_t s = stream();
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, c, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0x04040404);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(c);
  assert_int_equal(cudaGraphClone(&c, NULL), cudaErrorInvalidValue);
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* --------------------------------------------------- executable graphs */

static void test_exec_update(void **state) {
  (void)state;
  int *d = dev(256), h[64] = {0}, h2[64] = {0};
  cudaStream_t s = stream();
  cudaGraph_t g1, g2, g3;
  /* Two captures of one shape, with other buffers and values. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 1, 256, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, 256, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g1), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 2, 256, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h2, d, 256, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g2), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g1, 0), cudaSuccess);
  cudaGraphExecUpdateResultInfo info;
  assert_int_equal(cudaGraphExecUpdate(x, g2, &info), cudaSuccess);
  assert_int_equal(info.result, cudaGraphExecUpdateSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0);
  assert_int_equal(h2[0], 0x02020202);
  /* Another shape: one node more. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 2, 256, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 3, 256, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h2, d, 256, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g3), cudaSuccess);
  assert_int_equal(cudaGraphExecUpdate(x, g3, &info), cudaErrorGraphExecUpdateFailure);
  assert_int_equal(info.result, cudaGraphExecUpdateErrorTopologyChanged);
  cudaGraphDestroy(g3);
  /* A node of another type. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, h, 256, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h2, d, 256, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g3), cudaSuccess);
  assert_int_equal(cudaGraphExecUpdate(x, g3, &info), cudaErrorGraphExecUpdateFailure);
  assert_int_equal(info.result, cudaGraphExecUpdateErrorNodeTypeChanged);
  cudaGraphNode_t first;
  size_t one = 1;
  assert_int_equal(cudaGraphGetNodes(g3, &first, &one), cudaSuccess);
  assert_ptr_equal(info.errorNode, first);
  cudaGraphDestroy(g3);
  /* Other edges. */
  assert_int_equal(cudaGraphCreate(&g3, 0), cudaSuccess);
  cudaGraphNode_t a, b;
  struct cudaMemsetParams ms = {.dst = d, .pitch = 256, .value = 4, .elementSize = 1, .width = 256, .height = 1};
  assert_int_equal(cudaGraphAddMemsetNode(&a, g3, NULL, 0, &ms), cudaSuccess);
  assert_int_equal(cudaGraphAddMemcpyNode1D(&b, g3, NULL, 0, h2, d, 256, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaGraphExecUpdate(x, g3, &info), cudaErrorGraphExecUpdateFailure);
  assert_int_equal(info.result, cudaGraphExecUpdateErrorTopologyChanged);
  assert_ptr_equal(info.errorNode, b);
  /* A memset from one row to several. */
  assert_int_equal(cudaGraphAddDependencies(g3, &a, &b, NULL, 1), cudaSuccess);
  ms.height = 2;
  ms.width = 128;
  ms.pitch = 128;
  assert_int_equal(cudaGraphMemsetNodeSetParams(a, &ms), cudaSuccess);
  assert_int_equal(cudaGraphExecUpdate(x, g3, &info), cudaErrorGraphExecUpdateFailure);
  assert_int_equal(info.result, cudaGraphExecUpdateErrorParametersChanged);
  ms.height = 1;
  ms.width = 256;
  ms.pitch = 256;
  assert_int_equal(cudaGraphMemsetNodeSetParams(a, &ms), cudaSuccess);
  assert_int_equal(cudaGraphExecUpdate(x, g3, &info), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h2[0], 0x04040404);
  assert_int_equal(cudaGraphExecUpdate(x, g3, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphExecUpdate(NULL, g3, &info), cudaErrorInvalidValue);
  /* The executable graph's own nodes: by the original graph's nodes or
   * those of the last update. */
  struct cudaMemsetParams ms5 = ms;
  ms5.value = 5;
  assert_int_equal(cudaGraphExecMemsetNodeSetParams(x, a, &ms5), cudaSuccess);
  assert_int_equal(cudaGraphExecMemcpyNodeSetParams1D(x, b, h, d, 256, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaGraphExecMemsetNodeSetParams(x, b, &ms5), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0x05050505);
  assert_int_equal(h2[0], 0x04040404);
  /* Disabled: the copy runs as an empty node. */
  unsigned en = 9;
  assert_int_equal(cudaGraphNodeGetEnabled(x, b, &en), cudaSuccess);
  assert_int_equal(en, 1);
  assert_int_equal(cudaGraphNodeSetEnabled(x, b, 0), cudaSuccess);
  assert_int_equal(cudaGraphNodeGetEnabled(x, b, &en), cudaSuccess);
  assert_int_equal(en, 0);
  ms5.value = 6;
  assert_int_equal(cudaGraphExecMemsetNodeSetParams(x, a, &ms5), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0x05050505);
  assert_int_equal(cudaGraphNodeSetEnabled(x, b, 1), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(h[0], 0x06060606);
  /* A node the executable graph does not have. */
  cudaGraph_t g4;
  cudaGraphNode_t lone;
  assert_int_equal(cudaGraphCreate(&g4, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddEmptyNode(&lone, g4, NULL, 0), cudaSuccess);
  assert_int_equal(cudaGraphNodeSetEnabled(x, lone, 0), cudaErrorInvalidValue);
  warned("is not a node of the graph");
  cudaGraphDestroy(g4);
  cudaGraphExecDestroy(x);
  assert_int_equal(cudaGraphExecDestroy(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphLaunch(NULL, s), cudaErrorInvalidValue);
  /* Host and event nodes of an executable graph; enabling them is not. */
  hlog log;
  log_init(&log);
  htag t1 = {&log, 1}, t2 = {&log, 2};
  cudaGraph_t g5;
  cudaGraphNode_t hn, rn, wn;
  cudaEvent_t e1, e2;
  cudaEventCreate(&e1);
  cudaEventCreate(&e2);
  assert_int_equal(cudaGraphCreate(&g5, 0), cudaSuccess);
  struct cudaHostNodeParams hp = {log_tag, &t1};
  assert_int_equal(cudaGraphAddHostNode(&hn, g5, NULL, 0, &hp), cudaSuccess);
  assert_int_equal(cudaGraphAddEventRecordNode(&rn, g5, &hn, 1, e1), cudaSuccess);
  assert_int_equal(cudaGraphAddEventWaitNode(&wn, g5, &rn, 1, e1), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&x, g5, 0), cudaSuccess);
  hp.userData = &t2;
  assert_int_equal(cudaGraphExecHostNodeSetParams(x, hn, &hp), cudaSuccess);
  assert_int_equal(cudaGraphExecEventRecordNodeSetEvent(x, rn, e2), cudaSuccess);
  assert_int_equal(cudaGraphExecEventWaitNodeSetEvent(x, wn, e2), cudaSuccess);
  assert_int_equal(cudaGraphExecEventWaitNodeSetEvent(x, rn, e2), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphNodeSetEnabled(x, hn, 0), cudaErrorInvalidValue);
  warned("only kernel, memcpy and memset");
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(log.n, 1);
  assert_int_equal(log.tags[0], 2);
  assert_int_equal(cudaEventQuery(e2), cudaSuccess);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g5);
  cudaGraphDestroy(g1);
  cudaGraphDestroy(g2);
  cudaGraphDestroy(g3);
  cudaEventDestroy(e1);
  cudaEventDestroy(e2);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaGetLastError();
}

/* One executable graph launched on two streams: the second launch runs
 * after the first (CUDA orders an executable graph's launches). */
typedef struct {
  _Atomic int open;
  hlog *log;
  _Atomic int at; /* set once gate_wait runs */
} gate;

static void gate_wait(void *arg) {
  gate *g = arg;
  atomic_store(&g->at, 1);
  while (!atomic_load(&g->open)) usleep(1000);
  htag t = {g->log, 100};
  log_tag(&t);
}

static void test_launch_order(void **state) {
  (void)state;
  hlog log;
  log_init(&log);
  gate gt = {0, &log, 0};
  cudaStream_t s1 = stream(), s2 = stream(), s0 = stream();
  cudaGraph_t g;
  htag tag = {&log, 1};
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  cudaGraphNode_t n;
  struct cudaHostNodeParams hp = {log_tag, &tag};
  assert_int_equal(cudaGraphAddHostNode(&n, g, NULL, 0, &hp), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  /* The first launch waits behind a gate on s1; the second, on s2, must
   * wait for it though s2 is free. */
  assert_int_equal(cudaLaunchHostFunc(s1, gate_wait, &gt), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s1), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s2), cudaSuccess);
  htag after = {&log, 2};
  assert_int_equal(cudaLaunchHostFunc(s0, log_tag, &after), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s0), cudaSuccess);
  atomic_store(&gt.open, 1);
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_int_equal(log.n, 4);
  assert_int_equal(log.tags[0], 2);   /* s0 ran meanwhile */
  assert_int_equal(log.tags[1], 100); /* the gate */
  assert_int_equal(log.tags[2], 1);   /* launch 1 */
  assert_int_equal(log.tags[3], 1);   /* launch 2, after it */
  cudaGraphExecDestroy(x); /* while nothing runs */
  cudaGraphDestroy(g);
  cudaStreamDestroy(s0);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

static void nothing(void *arg) { (void)arg; }

/* An executable graph of n copies of 64 bytes (memset: n memsets; host: n
 * host functions) captured on s. */
static cudaGraphExec_t depth_graph(cudaStream_t s, int *d, int n, int what) {
  cudaGraph_t g;
  cudaGraphExec_t x;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int i = 0; i < n; i++)
    assert_int_equal(what == 0   ? cudaMemcpyAsync(d + 16, d, 64, cudaMemcpyDeviceToDevice, s)
                     : what == 1 ? cudaMemsetAsync(d, i, 64, s)
                                 : cudaLaunchHostFunc(s, nothing, NULL),
                     cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  cudaGraphDestroy(g);
  return x;
}

/* A graph launch's share of the stream's depth, as CUDA 13 on H200 counts
 * it (conformance/probes/graph_depth.cu: 1021 launches of a graph of ten
 * copies or ten kernels went in behind a blocked stream, 102 of ten
 * memsets, and any number of a host function's): one place, or one per
 * memset node when it has memsets; none for host nodes only. */
static void test_launch_depth(void **state) {
  (void)state;
  char t[32];
  snprintf(t, sizeof t, "%g", scaled(1));
  ncclsimParamSet("TIMEOUT", t);
  ncclsimParamSet("STREAM_DEPTH", "12");
  int *d = dev(128);
  cudaStream_t s = stream();
  cudaGraphExec_t copies = depth_graph(s, d, 10, 0), sets = depth_graph(s, d, 10, 1), hosts = depth_graph(s, d, 3, 2);
  hlog log;
  log_init(&log);
  gate gt = {0, &log, 0};
  /* The gate holds the stream, and takes a place while it runs. */
  assert_int_equal(cudaLaunchHostFunc(s, gate_wait, &gt), cudaSuccess);
  while (!atomic_load(&gt.at)) usleep(1000);
  assert_int_equal(cudaGraphLaunch(sets, s), cudaSuccess);   /* 11 */
  assert_int_equal(cudaGraphLaunch(copies, s), cudaSuccess); /* 12 */
  for (int i = 0; i < 100; i++) assert_int_equal(cudaGraphLaunch(hosts, s), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(copies, s), cudaErrorTimeout); /* the stream is full */
  warned("NCCLSIM_STREAM_DEPTH=12");
  atomic_store(&gt.open, 1);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  /* Ten memsets need ten places: with depth 12, the gate and two copies'
   * launches pending, the launch waits. */
  atomic_store(&gt.open, 0);
  atomic_store(&gt.at, 0);
  assert_int_equal(cudaLaunchHostFunc(s, gate_wait, &gt), cudaSuccess);
  while (!atomic_load(&gt.at)) usleep(1000);
  for (int i = 0; i < 2; i++) assert_int_equal(cudaGraphLaunch(copies, s), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(sets, s), cudaErrorTimeout);
  atomic_store(&gt.open, 1);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(sets, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  int h[32];
  assert_int_equal(cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 0x09090909);
  ncclsimParamSet("STREAM_DEPTH", "1022");
  ncclsimParamSet("TIMEOUT", "30");
  cudaGraphExecDestroy(copies);
  cudaGraphExecDestroy(sets);
  cudaGraphExecDestroy(hosts);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaGetLastError();
}

/* --------------------------------------------- user objects, DOT, misc */

static _Atomic int destroyed;
static void obj_destroy(void *p) { atomic_fetch_add(&destroyed, *(int *)p); }

static void test_user_objects(void **state) {
  (void)state;
  static int weight = 1;
  atomic_store(&destroyed, 0);
  cudaUserObject_t o;
  assert_int_equal(cudaUserObjectCreate(&o, &weight, obj_destroy, 1, cudaUserObjectNoDestructorSync), cudaSuccess);
  assert_int_equal(cudaUserObjectCreate(&o, &weight, obj_destroy, 1, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaUserObjectCreate(&o, &weight, NULL, 1, cudaUserObjectNoDestructorSync), cudaErrorInvalidValue);
  cudaGraph_t g, c;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  assert_int_equal(cudaGraphRetainUserObject(g, o, 1, cudaGraphUserObjectMove), cudaSuccess); /* ours, handed over */
  assert_int_equal(cudaGraphRetainUserObject(g, o, 2, 0), cudaSuccess);
  assert_int_equal(cudaGraphReleaseUserObject(g, o, 2), cudaSuccess);
  assert_int_equal(cudaGraphReleaseUserObject(g, o, 5), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphClone(&c, g), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(c), cudaSuccess);
  assert_int_equal(atomic_load(&destroyed), 0); /* the executable graph holds one */
  assert_int_equal(cudaUserObjectRetain(o, 1), cudaSuccess);
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(atomic_load(&destroyed), 0);
  assert_int_equal(cudaUserObjectRelease(o, 1), cudaSuccess);
  assert_int_equal(atomic_load(&destroyed), 1);
  assert_int_equal(cudaUserObjectRelease(NULL, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaUserObjectRetain(NULL, 1), cudaErrorInvalidValue);
}

static void test_dot_print(void **state) {
  (void)state;
  cudaStream_t s = stream(), s2 = stream();
  int *d = dev(64), h[16];
  cudaEvent_t e;
  cudaEventCreate(&e);
  cudaGraph_t g;
  hlog log;
  log_init(&log);
  htag tag = {&log, 1};
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 1, 64, s), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s2, log_tag, &tag), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, 64, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s2), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s, e, 0), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  char path[] = "/tmp/sim_graph_dotXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(cudaGraphDebugDotPrint(g, path, cudaGraphDebugDotFlagsVerbose), cudaSuccess);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(path);
  assert_non_null(strstr(text, "digraph"));
  assert_non_null(strstr(text, "memset"));
  assert_non_null(strstr(text, "memcpy 64 bytes DeviceToHost") ? "" : strstr(text, "memcpy DeviceToHost"));
  assert_non_null(strstr(text, "host function"));
  assert_non_null(strstr(text, "\"graph_1_node_0\" -> \"graph_1_node_1\""));
  assert_non_null(strstr(text, "\"graph_1_node_0\" -> \"graph_1_node_2\""));
  assert_non_null(strstr(text, "node 0x")); /* handles, with Verbose */
  assert_int_equal(cudaGraphDebugDotPrint(g, "/nonexistent/dir/g.dot", 0), cudaErrorOperatingSystem);
  assert_int_equal(cudaGraphDebugDotPrint(g, NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphDebugDotPrint(NULL, path, 0), cudaErrorInvalidValue);
  cudaGraphDestroy(g);
  cudaEventDestroy(e);
  cudaFree(d);
  cudaStreamDestroy(s);
  cudaStreamDestroy(s2);
  cudaGetLastError();
}

static void test_error_strings(void **state) {
  (void)state;
  assert_string_equal(cudaGetErrorName(cudaErrorStreamCaptureUnjoined), "cudaErrorStreamCaptureUnjoined");
  assert_string_equal(cudaGetErrorString(cudaErrorStreamCaptureUnjoined), "capturing stream has unjoined work");
  assert_string_equal(cudaGetErrorString(cudaErrorCapturedEvent),
                      "operation not permitted on an event last recorded in a capturing stream");
  assert_string_equal(cudaGetErrorName(cudaErrorGraphExecUpdateFailure), "cudaErrorGraphExecUpdateFailure");
  assert_int_equal(cudaErrorStreamCaptureWrongThread, 908);
}

/* --------------------------------------------------- allocation failures */

/* Each call's answer in the allocation-failure loop: what an injected
 * failure may give, directly or through a capture it spoiled. */
static bool tolerable(cudaError_t e) {
  return e == cudaSuccess || e == cudaErrorMemoryAllocation || e == cudaErrorStreamCaptureInvalidated ||
         e == cudaErrorStreamCaptureIsolation || e == cudaErrorStreamCaptureUnjoined || e == cudaErrorIllegalState;
}
#define TRY(call)                                                                     \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (!tolerable(e_)) fail_msg("n=%llu: %s: %s", (unsigned long long)n, #call, cudaGetErrorName(e_)); \
  } while (0)

static void nop(void *arg) { (void)arg; }

/* Allocation-failure loop over a capture with a fork and a join, the
 * graph's clone, instantiation, launches, update and DOT file: the nth
 * allocation fails, each call answers with an error or success (never a
 * crash or a hang), and what was made can be destroyed. */
static void test_alloc_failures(void **state) {
  (void)state;
  int *d = dev(256);
  cudaStream_t s1 = stream(), s2 = stream();
  cudaEvent_t e1, e2;
  assert_int_equal(cudaEventCreate(&e1), cudaSuccess);
  assert_int_equal(cudaEventCreate(&e2), cudaSuccess);
  bool completed = false;
  for (uint64_t n = 1; n < 1000 && !completed; n++) {
    cudaGraph_t g = NULL, c = NULL;
    cudaGraphExec_t x = NULL;
    /* The events as outside any capture (a record that failed last time
     * left them the last capture's). */
    assert_int_equal(cudaEventRecord(e1, s2), cudaSuccess);
    assert_int_equal(cudaEventRecord(e2, s2), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
    ncclsimAllocFailAfter(n);
    TRY(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    TRY(cudaMemsetAsync(d, 1, 256, s1));
    TRY(cudaEventRecord(e1, s1));
    TRY(cudaStreamWaitEvent(s2, e1, 0));
    TRY(cudaLaunchHostFunc(s2, nop, NULL));
    TRY(cudaMemsetAsync(d, 2, 64, s2));
    TRY(cudaEventRecord(e2, s2));
    TRY(cudaStreamWaitEvent(s1, e2, 0));
    TRY(cudaStreamUpdateCaptureDependencies(s1, NULL, NULL, 0, cudaStreamAddCaptureDependencies));
    TRY(cudaStreamWaitEvent(s1, e2, cudaEventWaitExternal));
    TRY(cudaMemsetAsync(d, 3, 64, s1));
    enum cudaStreamCaptureStatus st;
    if (cudaStreamIsCapturing(s1, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone)
      TRY(cudaStreamEndCapture(s1, &g));
    if (cudaStreamIsCapturing(s2, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone) {
      cudaGraph_t g2 = NULL;
      TRY(cudaStreamEndCapture(s2, &g2)); /* not its origin: it goes with s1's end */
    }
    if (g) {
      cudaGraphNode_t more;
      TRY(cudaGraphAddEmptyNode(&more, g, NULL, 0));
      TRY(cudaGraphClone(&c, g));
      TRY(cudaGraphInstantiate(&x, g, 0));
      TRY(cudaGraphDebugDotPrint(g, "/dev/null", cudaGraphDebugDotFlagsVerbose));
    }
    if (x) {
      TRY(cudaGraphLaunch(x, s1));
      cudaGraphExecUpdateResultInfo info;
      if (c) TRY(cudaGraphExecUpdate(x, c, &info));
      TRY(cudaGraphLaunch(x, s2));
    }
    completed = ncclsimAllocFailAfter(0) < n; /* nothing failed: the whole run went through */
    cudaStreamSynchronize(s1);
    cudaStreamSynchronize(s2);
    if (x) assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
    if (c) assert_int_equal(cudaGraphDestroy(c), cudaSuccess);
    if (g) assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
    assert_int_equal(cudaStreamIsCapturing(s1, &st), cudaSuccess);
    if (st != cudaStreamCaptureStatusNone) fail_msg("n=%llu: s1 still captures", (unsigned long long)n);
    cudaGetLastError();
  }
  assert_true(completed);
  cudaEventDestroy(e1);
  cudaEventDestroy(e2);
  cudaFree(d);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

static int reset(void **state) {
  (void)state;
  enum cudaStreamCaptureMode m = cudaStreamCaptureModeGlobal;
  cudaThreadExchangeStreamCaptureMode(&m);
  ncclsimAllocFailAfter(0);
  cudaGetLastError();
  return 0;
}

#define T(f) cmocka_unit_test_teardown(f, reset)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_capture_chain),  T(test_capture_measured), T(test_capture_info),   T(test_capture_errors),
      T(test_capture_to_graph),
      T(test_illegal_calls),  T(test_capture_modes_threads), T(test_end_wrong_thread), T(test_fork_join),
      T(test_unjoined),       T(test_event_rules),      T(test_node_api),       T(test_dependencies),
      T(test_clone),          T(test_exec_update),      T(test_launch_order),   T(test_launch_depth),
      T(test_user_objects),   T(test_dot_print),        T(test_error_strings),  T(test_alloc_failures),
  };
  return cmocka_run_group_tests_name("sim_graph", tests, NULL, NULL);
}
