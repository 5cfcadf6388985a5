/* tests/sim_graph_mem.c — graph memory nodes on ncclsim
 * (sim/cuda/graph_mem.c): captured cudaMallocAsync and cudaFreeAsync as
 * alloc and free nodes, launches moving data through the graph's memory,
 * memory a graph leaves allocated and its frees outside, the explicit
 * node API and its errors, the rules CUDA documents for graphs with
 * memory nodes (no clone, no node or edge removal, one executable graph,
 * relaunch only once freed, cudaGraphInstantiateFlagAutoFreeOnLaunch),
 * the use-after-free report, an NCCL operation on a graph's buffers, the
 * graph memory attributes and trim, and an allocation-failure loop. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime.h>
#include <nccl.h>
#include <ncclsim.h>

#include "sim.h" /* sim_last_warning */

static void warned(const char *what) {
  if (!strstr(sim_last_warning(), what)) fail_msg("\"%s\" not in the last warning: %s", what, sim_last_warning());
}

static cudaStream_t stream(void) {
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  return s;
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

static unsigned long long attr(enum cudaGraphMemAttributeType a) {
  unsigned long long v = 12345;
  assert_int_equal(cudaDeviceGetGraphMemAttribute(0, a, &v), cudaSuccess);
  return v;
}

static struct cudaMemAllocNodeParams alloc_params(size_t bytes) {
  struct cudaMemAllocNodeParams p;
  memset(&p, 0, sizeof p);
  p.poolProps.allocType = cudaMemAllocationTypePinned;
  p.poolProps.location.type = cudaMemLocationTypeDevice;
  p.poolProps.location.id = 0;
  p.bytesize = bytes;
  return p;
}

/* ------------------------------------------------------------ capture */

/* As CUDA 13 on H200 answers (conformance/probes/graph_probe.c): a
 * captured cudaMallocAsync and cudaFreeAsync are an alloc node and a free
 * node; the pointer is the node's, fixed for the graph's life. Each launch
 * moves that launch's data through it. */
static void test_capture_alloc_free(void **state) {
  (void)state;
  cudaStream_t s = stream();
  int in[64], out[64];
  void *p = NULL;
  cudaGraph_t g;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&p, sizeof in, s), cudaSuccess);
  assert_non_null(p);
  assert_int_equal(cudaMemcpyAsync(p, in, sizeof in, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(out, p, sizeof out, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(p, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(node_count(g), 4);
  cudaGraphNode_t nodes[4];
  size_t n = 4;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_int_equal(type_of(nodes[0]), cudaGraphNodeTypeMemAlloc);
  assert_int_equal((int)cudaGraphNodeTypeMemAlloc, 10);
  assert_int_equal(type_of(nodes[3]), cudaGraphNodeTypeMemFree);
  assert_int_equal((int)cudaGraphNodeTypeMemFree, 11);
  struct cudaMemAllocNodeParams ap;
  assert_int_equal(cudaGraphMemAllocNodeGetParams(nodes[0], &ap), cudaSuccess);
  assert_ptr_equal(ap.dptr, p);
  assert_int_equal(ap.bytesize, sizeof in);
  assert_int_equal(ap.poolProps.location.type, cudaMemLocationTypeDevice);
  assert_int_equal(ap.poolProps.location.id, 0);
  assert_int_equal(ap.poolProps.allocType, cudaMemAllocationTypePinned);
  void *fp = NULL;
  assert_int_equal(cudaGraphMemFreeNodeGetParams(nodes[3], &fp), cudaSuccess);
  assert_ptr_equal(fp, p);
  /* Wrong types, NULL outputs. */
  assert_int_equal(cudaGraphMemAllocNodeGetParams(nodes[3], &ap), cudaErrorInvalidValue);
  warned("is a mem free node, not a mem alloc node");
  assert_int_equal(cudaGraphMemFreeNodeGetParams(nodes[0], &fp), cudaErrorInvalidValue);
  warned("is a mem alloc node, not a mem free node");
  assert_int_equal(cudaGraphMemAllocNodeGetParams(nodes[0], NULL), cudaErrorInvalidValue);
  warned("params_out is NULL");
  assert_int_equal(cudaGraphMemFreeNodeGetParams(nodes[3], NULL), cudaErrorInvalidValue);
  warned("dptr_out is NULL");

  /* Its DOT file names both. */
  char path[] = "/tmp/n4c_graph_mem_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(cudaGraphDebugDotPrint(g, path, 0), cudaSuccess);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char text[8192];
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = 0;
  fclose(f);
  unlink(path);
  char expect[96];
  snprintf(expect, sizeof expect, "mem alloc %p, %zu bytes", p, sizeof in);
  assert_non_null(strstr(text, expect));
  snprintf(expect, sizeof expect, "mem free %p", p);
  assert_non_null(strstr(text, expect));

  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 64; i++) in[i] = round * 1000 + i;
    memset(out, 0, sizeof out);
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < 64; i++) assert_int_equal(out[i], round * 1000 + i);
  }
  /* Freed by the graph: not allocated between launches. */
  assert_int_equal(cudaFreeAsync(p, s), cudaErrorInvalidValue);
  warned("not allocated now (it was freed already)");
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);

  /* cudaMallocFromPoolAsync too, on its pool's device; a bad pool
   * invalidates nothing and is refused. */
  cudaMemPool_t pool;
  assert_int_equal(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  assert_int_equal(cudaMallocFromPoolAsync(&p, 100, pool, s), cudaSuccess);
  assert_int_equal(cudaMallocFromPoolAsync(&fp, 100, (cudaMemPool_t)&n, s), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(node_count(g), 1);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* Memory a graph does not free stays allocated after the launch, for
 * work outside the graph, until cudaFreeAsync or cudaFree; a launch before
 * that fails with cudaErrorInvalidValue, as CUDA documents for
 * cudaGraphLaunch, unless the graph was instantiated with
 * cudaGraphInstantiateFlagAutoFreeOnLaunch. */
static void test_unfreed(void **state) {
  (void)state;
  cudaStream_t s = stream();
  unsigned char *p = NULL, host[100];
  cudaGraph_t g;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMallocAsync((void **)&p, 100, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(p, 7, 100, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  /* Before any launch it is not allocated (a use then is not reported:
   * captures record uses of it), and cannot be freed. */
  assert_int_equal(cudaFree(p), cudaErrorInvalidValue);
  warned("its alloc node has not run");
  unsigned long long used = attr(cudaGraphMemAttrUsedMemCurrent);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrUsedMemCurrent), used + 256); /* rounded as cudaMalloc's */
  assert_true(attr(cudaGraphMemAttrUsedMemHigh) >= used + 256);
  assert_int_equal(cudaMemcpyAsync(host, p, 100, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  for (int i = 0; i < 100; i++) assert_int_equal(host[i], 7);
  assert_int_equal(cudaGraphLaunch(x, s), cudaErrorInvalidValue);
  warned("is not freed yet");
  assert_int_equal(cudaFreeAsync(p, s), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrUsedMemCurrent), used);
  assert_int_equal(cudaMemsetAsync(p, 1, 100, s), cudaErrorInvalidValue);
  warned("cudaFreeAsync freed");
  assert_int_equal(cudaFreeAsync(p, s), cudaErrorInvalidValue); /* twice */
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaFree(p), cudaSuccess);
  assert_int_equal(cudaFree(p), cudaErrorInvalidValue);
  /* One executable graph at a time. */
  cudaGraphExec_t y;
  assert_int_equal(cudaGraphInstantiate(&y, g, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaErrorInvalidValue);
  warned("CUDA allows one at a time");
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&y, g, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
  for (int i = 0; i < 3; i++) assert_int_equal(cudaGraphLaunch(y, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrUsedMemCurrent), used + 256);
  /* The graph and its executable graph go; the allocation stays until
   * freed. */
  assert_int_equal(cudaGraphExecDestroy(y), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaMemcpy(host, p, 100, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(host[99], 7);
  assert_int_equal(cudaFreeAsync(p, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrUsedMemCurrent), used);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* A use of the memory enqueued after its free node ran is refused as a use
 * after free, naming the free node; inside the graph, a copy between alloc
 * and free is fine. */
static void test_use_after_free_node(void **state) {
  (void)state;
  cudaStream_t s = stream();
  cudaGraph_t g;
  cudaGraphNode_t a, set, fr;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  struct cudaMemAllocNodeParams ap = alloc_params(64);
  assert_int_equal(cudaGraphAddMemAllocNode(&a, g, NULL, 0, &ap), cudaSuccess);
  assert_non_null(ap.dptr);
  struct cudaMemsetParams mp = {.dst = ap.dptr, .value = 3, .elementSize = 1, .width = 64, .height = 1};
  assert_int_equal(cudaGraphAddMemsetNode(&set, g, &a, 1, &mp), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(&fr, g, &set, 1, ap.dptr), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  char host[64];
  assert_int_equal(cudaMemcpyAsync(host, ap.dptr, 64, cudaMemcpyDeviceToHost, s), cudaErrorInvalidValue);
  warned("a graph's free node freed");
  char expect[96];
  snprintf(expect, sizeof expect, "the buffer %p (64 bytes, device 0, a graph's alloc node's)", ap.dptr);
  warned(expect);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess); /* freed in the graph: relaunches */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  /* Another graph's memset of the memory: adding the node records (it is
   * accepted though the memory is freed now); launching it is a use. */
  cudaGraph_t user;
  cudaGraphNode_t us;
  cudaGraphExec_t ux;
  assert_int_equal(cudaGraphCreate(&user, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddMemsetNode(&us, user, NULL, 0, &mp), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&ux, user, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(ux, s), cudaErrorInvalidValue);
  warned("a graph's free node freed");
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaGraphExecDestroy(ux), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(user), cudaSuccess);
  /* Freed in its own graph: not outside it, nor by another graph. */
  cudaGraph_t other;
  cudaGraphNode_t of;
  assert_int_equal(cudaGraphCreate(&other, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(&of, other, NULL, 0, ap.dptr), cudaErrorInvalidValue);
  warned("its own graph");
  assert_int_equal(cudaGraphDestroy(other), cudaSuccess);
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static void *rank0(void *arg) {
  int dev = 0;
  assert_int_equal(ncclCommInitAll(arg, 1, &dev), ncclSuccess);
  return NULL;
}

/* The common use: an NCCL operation on buffers the graph allocates. Its
 * buffers are checked at the capture, before any launch allocated them,
 * and used at each launch; after the free node ran, an operation outside
 * the graph on them is refused. */
static void test_nccl_in_graph(void **state) {
  (void)state;
  ncclComm_t comm;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, rank0, &comm), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  cudaStream_t s = stream();
  float in[32], out[32], *send = NULL, *recv = NULL;
  cudaGraph_t g;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(cudaMallocAsync((void **)&send, sizeof in, s), cudaSuccess);
  assert_int_equal(cudaMallocAsync((void **)&recv, sizeof out, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(send, in, sizeof in, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(ncclAllReduce(send, recv, 32, ncclFloat32, ncclSum, comm, s), ncclSuccess);
  assert_int_equal(cudaMemcpyAsync(out, recv, sizeof out, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(send, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(recv, s), cudaSuccess);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  for (int round = 1; round <= 3; round++) {
    for (int i = 0; i < 32; i++) in[i] = (float)(round * 100 + i);
    memset(out, 0, sizeof out);
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < 32; i++) assert_true(out[i] == (float)(round * 100 + i)); /* one rank: the sum is its own */
  }
  assert_int_equal(ncclAllReduce(send, recv, 32, ncclFloat32, ncclSum, comm, s), ncclInvalidArgument);
  warned("a graph's free node freed");
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

/* ------------------------------------------------------------ node API */

static void test_alloc_node_errors(void **state) {
  (void)state;
  cudaGraph_t g;
  cudaGraphNode_t n;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  struct cudaMemAllocNodeParams p = alloc_params(64);
  assert_int_equal(cudaGraphAddMemAllocNode(NULL, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("pGraphNode");
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, NULL), cudaErrorInvalidValue);
  warned("nodeParams");
  assert_int_equal(cudaGraphAddMemAllocNode(&n, (cudaGraph_t)&p, NULL, 0, &p), cudaErrorInvalidValue);
  warned("is not a live graph");
  p.poolProps.allocType = cudaMemAllocationTypeManaged;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("poolProps.allocType");
  p = alloc_params(64);
  p.poolProps.location.type = cudaMemLocationTypeHost;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("poolProps.location.type");
  p = alloc_params(64);
  p.poolProps.location.id = 999;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("poolProps.location.id");
  p = alloc_params(64);
  p.poolProps.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("poolProps.handleTypes");
  p = alloc_params(64);
  p.poolProps.reserved[3] = 1;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("poolProps.reserved");
  p = alloc_params(0);
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("bytesize is 0");
  p = alloc_params(64);
  p.accessDescCount = 1;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("accessDescs is NULL");
  struct cudaMemAccessDesc acc[2] = {{{cudaMemLocationTypeDevice, 0}, cudaMemAccessFlagsProtReadWrite},
                                     {{cudaMemLocationTypeDevice, 0}, (enum cudaMemAccessFlags)2}};
  p.accessDescs = acc;
  p.accessDescCount = 1000;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
  warned("accessDescCount");
  int devices = 0;
  assert_int_equal(cudaGetDeviceCount(&devices), cudaSuccess);
  if (devices >= 2) {
    p.accessDescCount = 2;
    assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaErrorInvalidValue);
    warned("accessDescs[1]");
  }
  cudaGraphNode_t bogus = (cudaGraphNode_t)&p;
  p = alloc_params(64);
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, &bogus, 1, &p), cudaErrorInvalidValue);
  assert_int_equal(node_count(g), 0);
  /* A good one, with an access descriptor: GetParams gives the node's copy. */
  p.accessDescs = acc;
  p.accessDescCount = 1;
  assert_int_equal(cudaGraphAddMemAllocNode(&n, g, NULL, 0, &p), cudaSuccess);
  acc[0].flags = cudaMemAccessFlagsProtNone;
  struct cudaMemAllocNodeParams q;
  assert_int_equal(cudaGraphMemAllocNodeGetParams(n, &q), cudaSuccess);
  assert_ptr_equal(q.dptr, p.dptr);
  assert_int_equal(q.accessDescCount, 1);
  assert_int_equal(q.accessDescs[0].flags, cudaMemAccessFlagsProtReadWrite);
  assert_int_equal(type_of(n), cudaGraphNodeTypeMemAlloc);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
}

static void test_free_node_errors(void **state) {
  (void)state;
  cudaGraph_t g, h;
  cudaGraphNode_t a, e, f, n;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  assert_int_equal(cudaGraphCreate(&h, 0), cudaSuccess);
  struct cudaMemAllocNodeParams p = alloc_params(64);
  assert_int_equal(cudaGraphAddMemAllocNode(&a, g, NULL, 0, &p), cudaSuccess);
  assert_int_equal(cudaGraphAddEmptyNode(&e, g, NULL, 0), cudaSuccess);
  void *d;
  assert_int_equal(cudaMalloc(&d, 64), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(NULL, g, &a, 1, p.dptr), cudaErrorInvalidValue);
  warned("pGraphNode is NULL");
  assert_int_equal(cudaGraphAddMemFreeNode(&f, g, &a, 1, d), cudaErrorInvalidValue);
  warned("is not an address an alloc node returned");
  assert_int_equal(cudaGraphAddMemFreeNode(&f, g, &a, 1, (char *)p.dptr + 8), cudaErrorInvalidValue);
  warned("is not an address an alloc node returned");
  assert_int_equal(cudaGraphAddMemFreeNode(&f, g, &a, 1, NULL), cudaErrorInvalidValue);
  warned("is not an address an alloc node returned");
  assert_int_equal(cudaGraphAddMemFreeNode(&f, g, &e, 1, p.dptr), cudaErrorInvalidValue);
  warned("would not depend on its alloc node");
  cudaGraphNode_t of_h;
  assert_int_equal(cudaGraphAddEmptyNode(&of_h, h, NULL, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(&f, g, &of_h, 1, p.dptr), cudaErrorInvalidValue);
  warned("pDependencies[0] is not a node of graph");
  assert_int_equal(cudaGraphAddMemFreeNode(&f, g, &a, 1, p.dptr), cudaSuccess);
  assert_int_equal(type_of(f), cudaGraphNodeTypeMemFree);
  assert_int_equal(cudaGraphAddMemFreeNode(&n, g, &f, 1, p.dptr), cudaErrorInvalidValue);
  warned("frees it already");
  assert_int_equal(cudaGraphAddMemFreeNode(&n, h, NULL, 0, p.dptr), cudaErrorInvalidValue);
  warned("its own graph");
  assert_int_equal(node_count(g), 3);

  /* The rules of graphs with memory nodes. */
  cudaGraph_t c;
  assert_int_equal(cudaGraphClone(&c, g), cudaErrorNotSupported);
  warned("has memory nodes");
  assert_int_equal(cudaGraphDestroyNode(e), cudaErrorNotSupported);
  warned("cudaGraphDestroyNode");
  assert_int_equal(cudaGraphRemoveDependencies(g, &a, &f, NULL, 1), cudaErrorNotSupported);
  warned("cudaGraphRemoveDependencies");
  assert_int_equal(node_count(g), 3);

  /* An update from another graph's allocation: not supported. */
  cudaGraph_t g2;
  cudaGraphNode_t a2, e2, f2;
  assert_int_equal(cudaGraphCreate(&g2, 0), cudaSuccess);
  struct cudaMemAllocNodeParams p2 = alloc_params(64);
  assert_int_equal(cudaGraphAddMemAllocNode(&a2, g2, NULL, 0, &p2), cudaSuccess);
  assert_ptr_not_equal(p2.dptr, p.dptr);
  assert_int_equal(cudaGraphAddEmptyNode(&e2, g2, NULL, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(&f2, g2, &a2, 1, p2.dptr), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  cudaGraphExecUpdateResultInfo info;
  assert_int_equal(cudaGraphExecUpdate(x, g2, &info), cudaErrorGraphExecUpdateFailure);
  assert_int_equal(info.result, cudaGraphExecUpdateErrorNotSupported);
  assert_ptr_equal(info.errorNode, a2);
  warned("names another allocation");
  assert_int_equal(cudaGraphExecUpdate(x, g, &info), cudaSuccess); /* its own: fine */
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g2), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(h), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  cudaFree(d);
}

/* An allocation that its graph leaves allocated may be freed by another
 * graph's free node; its own graph may then not free it too. */
static void test_free_in_other_graph(void **state) {
  (void)state;
  cudaStream_t s = stream();
  cudaGraph_t ga, gb;
  cudaGraphNode_t a, f, n;
  assert_int_equal(cudaGraphCreate(&ga, 0), cudaSuccess);
  assert_int_equal(cudaGraphCreate(&gb, 0), cudaSuccess);
  struct cudaMemAllocNodeParams p = alloc_params(300);
  assert_int_equal(cudaGraphAddMemAllocNode(&a, ga, NULL, 0, &p), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(&f, gb, NULL, 0, p.dptr), cudaSuccess);
  assert_int_equal(cudaGraphAddMemFreeNode(&n, ga, &a, 1, p.dptr), cudaErrorInvalidValue);
  warned("another graph's free node");
  cudaGraphExec_t xa, xb;
  assert_int_equal(cudaGraphInstantiate(&xa, ga, 0), cudaSuccess);
  assert_int_equal(cudaGraphInstantiate(&xb, gb, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(xb, s), cudaErrorInvalidValue); /* nothing to free yet */
  warned("which is not allocated now");
  assert_int_equal(cudaGraphLaunch(xa, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(p.dptr, 0, 300, s), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(xb, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(p.dptr, 0, 300, s), cudaErrorInvalidValue);
  assert_int_equal(cudaGraphLaunch(xa, s), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(xb, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  /* The freeing graph may go first; the allocation is ga's still. */
  assert_int_equal(cudaGraphExecDestroy(xb), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(gb), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(xa, s), cudaSuccess);
  assert_int_equal(cudaFreeAsync(p.dptr, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaGraphExecDestroy(xa), cudaSuccess);
  assert_int_equal(cudaGraphDestroy(ga), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ------------------------------------------------------------ attributes */

static void test_attributes_trim(void **state) {
  (void)state;
  unsigned long long v = 0;
  assert_int_equal(cudaDeviceGetGraphMemAttribute(-1, cudaGraphMemAttrUsedMemCurrent, &v), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, NULL), cudaErrorInvalidValue);
  warned("value is NULL");
  assert_int_equal(cudaDeviceGetGraphMemAttribute(0, (enum cudaGraphMemAttributeType)9, &v), cudaErrorInvalidValue);
  warned("attribute 9");
  assert_int_equal(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &v), cudaErrorInvalidValue);
  warned("cannot be set");
  v = 5;
  assert_int_equal(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &v), cudaErrorInvalidValue);
  warned("only be reset to 0, not 5");
  assert_int_equal(cudaDeviceGraphMemTrim(-1), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceGraphMemTrim(0), cudaSuccess);

  unsigned long long reserved = attr(cudaGraphMemAttrReservedMemCurrent);
  cudaGraph_t g;
  cudaGraphNode_t a;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  struct cudaMemAllocNodeParams p = alloc_params(1 << 20);
  assert_int_equal(cudaGraphAddMemAllocNode(&a, g, NULL, 0, &p), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrReservedMemCurrent), reserved + (1 << 20));
  assert_true(attr(cudaGraphMemAttrReservedMemHigh) >= reserved + (1 << 20));
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  /* Cached: reserved still, and a node of its size gets its address. */
  assert_int_equal(attr(cudaGraphMemAttrReservedMemCurrent), reserved + (1 << 20));
  void *was = p.dptr;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  assert_int_equal(cudaGraphAddMemAllocNode(&a, g, NULL, 0, &p), cudaSuccess);
  assert_ptr_equal(p.dptr, was);
  assert_int_equal(cudaDeviceGraphMemTrim(0), cudaSuccess); /* in use by a graph: kept */
  assert_int_equal(attr(cudaGraphMemAttrReservedMemCurrent), reserved + (1 << 20));
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaDeviceGraphMemTrim(0), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrReservedMemCurrent), reserved);
  v = 0;
  assert_int_equal(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &v), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrReservedMemHigh), reserved);
  assert_int_equal(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &v), cudaSuccess);
  assert_int_equal(attr(cudaGraphMemAttrUsedMemHigh), attr(cudaGraphMemAttrUsedMemCurrent));
}

/* ------------------------------------------------------------ failures */

/* Allocation-failure loop over a capture of alloc, memset and free, the
 * explicit nodes, instantiation and launches: each call answers with an
 * error or success (never a crash or a leak), and what was made can be
 * destroyed. */
static void test_alloc_failures(void **state) {
  (void)state;
  cudaStream_t s = stream();
  size_t base_n, base_b;
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  ncclsimMemStats(&base_n, &base_b);
  bool completed = false;
  for (uint64_t n = 1; n < 1000 && !completed; n++) {
    cudaGraph_t g = NULL, h = NULL;
    cudaGraphExec_t x = NULL;
    void *p = NULL;
    ncclsimAllocFailAfter(n);
    cudaError_t err = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    if (err == cudaSuccess) {
      if (cudaMallocAsync(&p, 128, s) == cudaSuccess) {
        cudaMemsetAsync(p, 1, 128, s);
        cudaFreeAsync(p, s);
      }
      cudaStreamEndCapture(s, &g);
    }
    if (cudaGraphCreate(&h, 0) == cudaSuccess) {
      struct cudaMemAllocNodeParams ap = alloc_params(128);
      cudaGraphNode_t a, f;
      if (cudaGraphAddMemAllocNode(&a, h, NULL, 0, &ap) == cudaSuccess) cudaGraphAddMemFreeNode(&f, h, &a, 1, ap.dptr);
    }
    if (g && cudaGraphInstantiate(&x, g, 0) == cudaSuccess) {
      cudaGraphLaunch(x, s);
      cudaGraphLaunch(x, s);
    }
    completed = ncclsimAllocFailAfter(0) < n;
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    if (x) assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess);
    if (g) assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
    if (h) assert_int_equal(cudaGraphDestroy(h), cudaSuccess);
    /* A capture whose free node failed leaves the launch's allocation. */
    if (p) cudaFree(p);
    enum cudaStreamCaptureStatus st;
    assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
    if (st != cudaStreamCaptureStatusNone) fail_msg("n=%llu: still captures", (unsigned long long)n);
    cudaGetLastError();
    size_t now_n, now_b;
    ncclsimMemStats(&now_n, &now_b);
    if (now_n != base_n) fail_msg("n=%llu: %zu allocations live, %zu before", (unsigned long long)n, now_n, base_n);
  }
  assert_true(completed);
  assert_int_equal(cudaDeviceGraphMemTrim(0), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

static int reset(void **state) {
  (void)state;
  ncclsimAllocFailAfter(0);
  cudaGetLastError();
  return 0;
}

#define T(f) cmocka_unit_test_teardown(f, reset)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_capture_alloc_free), T(test_unfreed),        T(test_use_after_free_node), T(test_nccl_in_graph),
      T(test_alloc_node_errors),
      T(test_free_node_errors),   T(test_free_in_other_graph), T(test_attributes_trim), T(test_alloc_failures),
  };
  return cmocka_run_group_tests_name("sim_graph_mem", tests, NULL, NULL);
}
