/* tests/sim_graph_nccl.c — NCCL operations in CUDA graphs on ncclsim
 * (sim/core/capture.c): an operation on a capturing stream is recorded,
 * not run, and each launch of the graph runs it again on the buffers it
 * was captured with, in the graph's order: collectives, send/recv rings,
 * one-sided operations, grouped or not; graph launches and uncaptured
 * operations of one communicator in issue order (NCCL's graph mixing), and
 * the use NCCL_GRAPH_MIXING_SUPPORT=0 does not support; a group that mixes
 * captured and uncaptured streams of a communicator; the first-use
 * connections, made at the capture, and the peer access they enable
 * between ranks of one process on two devices, which a capture forbids;
 * one thread driving two ranks' graphs (nccl-tests -G); a communicator
 * destroyed before its graph's launch. */
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

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "sim.h" /* sim_last_warning */
#include "sim_ranks.h"
#include "slow.h"

static pthread_barrier_t bar;

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

static void *pinned(size_t n) {
  void *p;
  assert_int_equal(cudaMallocHost(&p, n), cudaSuccess);
  return p;
}

static cudaGraphExec_t instantiate(cudaGraph_t g) {
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  return x;
}

/* The allreduce once outside any capture, so that the connections its
 * capture needs exist: ranks of one process on two devices connect
 * through peer access, which a thread-local capture forbids (measured on
 * H100s; test_first_capture below). */
static void warm_up(const void *in, void *out, size_t n, ncclComm_t comm, cudaStream_t s) {
  assert_int_equal(ncclAllReduce(in, out, n, ncclInt32, ncclSum, comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
}

/* ------------------------------------------------------------ allreduce */

/* An allreduce captured between two copies (as measured on 2 x H100 with
 * NCCL 2.28.3), replayed ITERS times with new input each time. */
enum { N = 1000, ITERS = 1000 };

static void allreduce_fn(rank_ctx *c) {
  cudaStream_t s = stream();
  int *hin = pinned(N * sizeof(int)), *hout = pinned(N * sizeof(int));
  int *din = dev(N * sizeof(int)), *dout = dev(N * sizeof(int));
  warm_up(din, dout, N, c->comm, s);
  for (int i = 0; i < N; i++) hout[i] = -7;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(din, hin, N * sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(ncclAllReduce(din, dout, N, ncclInt32, ncclSum, c->comm, s), ncclSuccess);
  assert_int_equal(cudaMemcpyAsync(hout, dout, N * sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(hout[0], -7); /* recorded, not run */
  cudaGraphNode_t nodes[3];
  size_t n = 3;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_int_equal(n, 3);
  enum cudaGraphNodeType t;
  assert_int_equal(cudaGraphNodeGetType(nodes[1], &t), cudaSuccess);
  assert_int_equal(t, cudaGraphNodeTypeKernel); /* as NCCL's kernel */
  struct cudaKernelNodeParams kp;
  assert_int_equal(cudaGraphKernelNodeGetParams(nodes[1], &kp), cudaSuccess);
  assert_null(kp.func);
  cudaGraphExec_t x = instantiate(g);
  int nr = c->nranks;
  for (int it = 0; it < ITERS; it++) {
    for (int i = 0; i < N; i++) hin[i] = (c->rank + 1) * (it + i);
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < N; i += 97)
      if (hout[i] != nr * (nr + 1) / 2 * (it + i)) fail_msg("rank %d launch %d: [%d] = %d", c->rank, it, i, hout[i]);
  }
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaFreeHost(hin);
  cudaFreeHost(hout);
  cudaFree(din);
  cudaFree(dout);
  cudaStreamDestroy(s);
}

static void test_allreduce_replay(void **state) {
  (void)state;
  assert_int_equal(run_ranks(2, allreduce_fn, NULL), 0);
  assert_int_equal(run_ranks(4, allreduce_fn, NULL), 0);
}

/* ------------------------------------------------------- send/recv ring */

static void ring_fn(rank_ctx *c) {
  enum { M = 4096 };
  cudaStream_t s = stream();
  int *send = dev(M * sizeof(int)), *recv = dev(M * sizeof(int)), *h = pinned(M * sizeof(int));
  int next = (c->rank + 1) % c->nranks, prev = (c->rank + c->nranks - 1) % c->nranks;
  /* The ring once uncaptured: its links' first use (see warm_up). */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(send, M, ncclInt32, next, c->comm, s), ncclSuccess);
  assert_int_equal(ncclRecv(recv, M, ncclInt32, prev, c->comm, s), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(send, h, M * sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(send, M, ncclInt32, next, c->comm, s), ncclSuccess);
  assert_int_equal(ncclRecv(recv, M, ncclInt32, prev, c->comm, s), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaMemcpyAsync(h, recv, M * sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  size_t n = 0;
  assert_int_equal(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
  assert_int_equal(n, 3); /* the group is one node */
  cudaGraphExec_t x = instantiate(g);
  for (int it = 0; it < 50; it++) {
    for (int i = 0; i < M; i++) h[i] = c->rank * 100000 + it * 10 + i % 7;
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    for (int i = 0; i < M; i += 31) assert_int_equal(h[i], prev * 100000 + it * 10 + i % 7);
  }
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaFree(send);
  cudaFree(recv);
  cudaFreeHost(h);
  cudaStreamDestroy(s);
}

static void test_ring_replay(void **state) {
  (void)state;
  assert_int_equal(run_ranks(3, ring_fn, NULL), 0);
}

/* ---------------------------------------------------- one-sided: a pair */

/* Each rank puts its part into the next rank's window and signals it, and
 * waits for the previous rank's: a put_signal/wait_signal pair, captured
 * as a group (the first one-sided operation: its set-up at the capture),
 * then on its own (ungrouped: the put, then the wait). */
static void putsig_fn(rank_ctx *c) {
  enum { HALF = 4096 };
  cudaStream_t s = stream();
  char *win;
  ncclWindow_t w;
  assert_int_equal(ncclMemAlloc((void **)&win, 2 * HALF), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, win, 2 * HALF, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  char *h = pinned(2 * HALF);
  int next = (c->rank + 1) % c->nranks, prev = (c->rank + c->nranks - 1) % c->nranks;
  ncclWaitSignalDesc_t d = {1, prev, 0, 0};
  for (int grouped = 1; grouped >= 0; grouped--) {
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(cudaMemcpyAsync(win, h, HALF, cudaMemcpyHostToDevice, s), cudaSuccess);
    if (grouped) assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclPutSignal(win, HALF, ncclUint8, next, w, HALF, 0, 0, 0, c->comm, s), ncclSuccess);
    assert_int_equal(ncclWaitSignal(1, &d, c->comm, s), ncclSuccess);
    if (grouped) assert_int_equal(ncclGroupEnd(), ncclSuccess);
    assert_int_equal(cudaMemcpyAsync(h + HALF, win + HALF, HALF, cudaMemcpyDeviceToHost, s), cudaSuccess);
    cudaGraph_t g;
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    size_t n = 0;
    assert_int_equal(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
    assert_int_equal(n, grouped ? 3 : 4);
    cudaGraphExec_t x = instantiate(g);
    for (int it = 0; it < 100; it++) {
      memset(h, c->rank * 16 + it % 16, HALF);
      assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
      assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
      for (int i = 0; i < HALF; i += 127) assert_int_equal(h[HALF + i], prev * 16 + it % 16);
      /* The next launch's put overwrites what the previous one read: its
       * copy out must be done first, on every rank. */
      pthread_barrier_wait(&bar);
    }
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
  }
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  assert_int_equal(ncclMemFree(win), ncclSuccess);
  cudaFreeHost(h);
  cudaStreamDestroy(s);
}

static void test_putsignal_replay(void **state) {
  (void)state;
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, putsig_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* ---------------------------------------------------------------- mixing */

/* A graph launch takes its place among the communicator's operations when
 * the host launches it: an uncaptured allreduce on another stream, issued
 * after the launch, reads the graph's result (NCCL's graph mixing, on by
 * default). */
static void mixing_fn(rank_ctx *c) {
  cudaStream_t s1 = stream(), s2 = stream();
  int *x = dev(256 * sizeof(int)), *y = dev(256 * sizeof(int));
  int h[256];
  warm_up(x, x, 256, c->comm, s1);
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 256, ncclInt32, ncclSum, c->comm, s1), ncclSuccess);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaSuccess);
  cudaGraphExec_t gx = instantiate(g);
  int nr = c->nranks;
  for (int it = 0; it < 20; it++) {
    for (int i = 0; i < 256; i++) h[i] = it + i + c->rank;
    assert_int_equal(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(gx, s1), cudaSuccess);
    assert_int_equal(ncclAllReduce(x, y, 256, ncclInt32, ncclSum, c->comm, s2), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 256; i += 17) assert_int_equal(h[i], nr * (nr * (it + i) + nr * (nr - 1) / 2));
    assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  }
  cudaGraphExecDestroy(gx);
  cudaGraphDestroy(g);
  cudaFree(x);
  cudaFree(y);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

static void test_mixing(void **state) {
  (void)state;
  assert_int_equal(run_ranks(2, mixing_fn, NULL), 0);
}

/* With NCCL_GRAPH_MIXING_SUPPORT=0 NCCL does not support an uncaptured
 * operation while a graph launch of the communicator is outstanding:
 * ncclsim refuses it, and takes it once the graph's stream is done. */
static _Atomic int gate_open;
static void gate_fn(void *arg) {
  (void)arg;
  while (!atomic_load(&gate_open)) usleep(1000);
}

static void mixing_off_fn(rank_ctx *c) {
  cudaStream_t s1 = stream(), s2 = stream();
  int *x = dev(64 * sizeof(int));
  warm_up(x, x, 64, c->comm, s1);
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s1), ncclSuccess);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaSuccess);
  cudaGraphExec_t gx = instantiate(g);
  assert_int_equal(cudaLaunchHostFunc(s1, gate_fn, NULL), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(gx, s1), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s2), ncclInvalidUsage);
  assert_non_null(strstr(sim_last_warning(), "NCCL_GRAPH_MIXING_SUPPORT=0"));
  /* Captured elsewhere meanwhile: a graph is no uncaptured operation. */
  assert_int_equal(cudaStreamBeginCapture(s2, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s2), ncclSuccess);
  cudaGraph_t g2;
  assert_int_equal(cudaStreamEndCapture(s2, &g2), cudaSuccess);
  pthread_barrier_wait(&bar);
  if (c->rank == 0) atomic_store(&gate_open, 1);
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s2), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  cudaGraphExecDestroy(gx);
  cudaGraphDestroy(g);
  cudaGraphDestroy(g2);
  cudaFree(x);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

static void test_mixing_off(void **state) {
  (void)state;
  setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 1);
  atomic_store(&gate_open, 0);
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, mixing_off_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
  unsetenv("NCCL_GRAPH_MIXING_SUPPORT");
}

/* NCCL: "Streams given to a communicator within a NCCL group must either
 * be all uncaptured or all captured by the same graph." */
static void group_mixed_fn(rank_ctx *c) {
  cudaStream_t s1 = stream(), s2 = stream();
  int *x = dev(64 * sizeof(int));
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s1), ncclSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s2), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclInvalidUsage);
  assert_non_null(strstr(sim_last_warning(), "all uncaptured or all captured"));
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaSuccess);
  size_t n = 9;
  assert_int_equal(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
  assert_int_equal(n, 0);
  cudaGraphDestroy(g);
  /* Two streams of one capture in a group: one node, joining both (its
   * connections made first: see warm_up). */
  warm_up(x, x, 64, c->comm, s1);
  cudaEvent_t e;
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s1), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(x, 0, 64, s2), cudaSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s1), ncclSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s2), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamEndCapture(s1, &g), cudaSuccess); /* s2 is joined: its last work is the node */
  cudaGraphNode_t nodes[2];
  n = 2;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &n), cudaSuccess);
  assert_int_equal(n, 2);
  size_t nd = 0;
  assert_int_equal(cudaGraphNodeGetDependencies(nodes[1], NULL, NULL, &nd), cudaSuccess);
  assert_int_equal(nd, 1);
  cudaGraphExec_t gx = instantiate(g);
  assert_int_equal(cudaGraphLaunch(gx, s1), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  cudaGraphExecDestroy(gx);
  cudaGraphDestroy(g);
  cudaEventDestroy(e);
  cudaFree(x);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

static void test_group_mixed(void **state) {
  (void)state;
  assert_int_equal(run_ranks(2, group_mixed_fn, NULL), 0);
}

/* An illegal call invalidates a capture that holds an NCCL operation; the
 * next NCCL operation on the stream fails as NCCL's kernel launch would. */
static void invalidated_fn(rank_ctx *c) {
  cudaStream_t s = stream();
  int *x = dev(64 * sizeof(int));
  void *p = NULL;
  warm_up(x, x, 64, c->comm, s);
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s), ncclSuccess);
  assert_int_equal(cudaMalloc(&p, 64), cudaErrorStreamCaptureUnsupported); /* its own capture forbids it */
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s), ncclUnhandledCudaError);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
  assert_null(g);
  /* The communicator goes on: its captured operations never ran. */
  int h[64];
  for (int i = 0; i < 64; i++) h[i] = 1;
  assert_int_equal(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[5], c->nranks);
  cudaFree(x);
  cudaStreamDestroy(s);
  cudaGetLastError();
}

static void test_invalidated(void **state) {
  (void)state;
  assert_int_equal(run_ranks(2, invalidated_fn, NULL), 0);
}

/* ------------------------------------- first connection in a capture */

/* Ranks as threads of one process, each on its own device: NCCL's first
 * connection enables peer access (cudaDeviceEnablePeerAccess), which the
 * capturing thread may not call. Measured on 4 x H100 with NCCL 2.30.7:
 * the first captured allreduce failed with "failed to peer with device
 * N(=...): 900 operation not permitted when stream is capturing". A
 * relaxed capture permits it; a warm-up outside the capture avoids it. */
enum { FIRST_THREAD_LOCAL, FIRST_RELAXED, FIRST_WARMED };

static void first_capture_fn(rank_ctx *c) {
  int how = *(int *)c->arg, peer = 1 - c->rank;
  cudaStream_t s = stream();
  int *x = dev(64 * sizeof(int)), h[64];
  for (int i = 0; i < 64; i++) h[i] = i + c->rank;
  assert_int_equal(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  if (how == FIRST_WARMED) warm_up(x, x, 64, c->comm, s); /* 2i + 1 */
  enum cudaStreamCaptureMode mode = how == FIRST_RELAXED ? cudaStreamCaptureModeRelaxed
                                                         : cudaStreamCaptureModeThreadLocal;
  assert_int_equal(cudaStreamBeginCapture(s, mode), cudaSuccess);
  ncclResult_t res = ncclAllReduce(x, x, 64, ncclInt32, ncclSum, c->comm, s);
  char last[512];
  snprintf(last, sizeof last, "%s", ncclGetLastError(NULL));
  cudaGraph_t g = NULL;
  cudaError_t end = cudaStreamEndCapture(s, &g);
  if (how == FIRST_THREAD_LOCAL) {
    if (res != ncclInternalError) /* p2pMap's */
      fail_msg("rank %d: the first captured allreduce: %s (%s)", c->rank, ncclGetErrorString(res), last);
    char want[96];
    snprintf(want, sizeof want, "failed to peer with device %d: 900 operation not permitted when stream is capturing",
             peer);
    if (strncmp(last, want, strlen(want)) != 0 || !strstr(last, "warm-up"))
      fail_msg("rank %d: ncclGetLastError: %s", c->rank, last);
    /* As any call that a capture forbids: the capture is invalidated. */
    assert_int_equal(end, cudaErrorStreamCaptureInvalidated);
    assert_null(g);
    cudaGetLastError();
  } else {
    assert_int_equal(res, ncclSuccess);
    assert_int_equal(end, cudaSuccess);
    cudaGraphExec_t gx = instantiate(g);
    assert_int_equal(cudaGraphLaunch(gx, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 64; i++)
      assert_int_equal(h[i], how == FIRST_WARMED ? 2 * (2 * i + 1) : 2 * i + 1);
    cudaGraphExecDestroy(gx);
    cudaGraphDestroy(g);
  }
  cudaFree(x);
  cudaStreamDestroy(s);
}

static void test_first_capture(void **state) {
  (void)state;
  for (int how = FIRST_THREAD_LOCAL; how <= FIRST_WARMED; how++) assert_int_equal(run_ranks(2, first_capture_fn, &how), 0);
}

/* One thread driving two ranks in a group: NCCL connects them from one new
 * thread each (several communicators connect), which a thread-local
 * capture does not forbid (test_one_thread_graphs) and a global one does. */
static void test_first_capture_global(void **state) {
  (void)state;
  ncclComm_t comms[2];
  int devs[2] = {0, 1};
  assert_int_equal(ncclCommInitAll(comms, 2, devs), ncclSuccess);
  cudaStream_t s[2];
  int *x[2];
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    s[r] = stream();
    x[r] = dev(64 * sizeof(int));
  }
  for (int r = 0; r < 2; r++) assert_int_equal(cudaStreamBeginCapture(s[r], cudaStreamCaptureModeGlobal), cudaSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++)
    assert_int_equal(ncclAllReduce(x[r], x[r], 64, ncclInt32, ncclSum, comms[r], s[r]), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclInternalError);
  const char *last = ncclGetLastError(NULL);
  if (strncmp(last, "failed to peer with device ", 27) != 0 || !strstr(last, "made by a new thread"))
    fail_msg("ncclGetLastError: %s", last);
  for (int r = 0; r < 2; r++) {
    cudaGraph_t g = NULL;
    assert_int_equal(cudaStreamEndCapture(s[r], &g), cudaErrorStreamCaptureInvalidated);
    assert_null(g);
    cudaFree(x[r]);
    cudaStreamDestroy(s[r]);
  }
  cudaGetLastError();
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  cudaSetDevice(0);
}

/* ---------------------------------------- one thread, two ranks, graphs */

/* nccl-tests -G: one thread captures every rank's operation in a group,
 * one graph per device, and launches the graphs one after another. The
 * first-use connection happens at the capture (as in NCCL), so a capture
 * that would block forever fails at once; the launches block nothing. */
static void test_one_thread_graphs(void **state) {
  (void)state;
  ncclComm_t comms[2];
  int devs[2] = {0, 1};
  assert_int_equal(ncclCommInitAll(comms, 2, devs), ncclSuccess);
  cudaStream_t s[2];
  int *x[2];
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    s[r] = stream();
    x[r] = dev(128 * sizeof(int));
  }
  /* Rank 0's first collective, captured alone by the thread that drives
   * rank 1 too: on a GPU the capture blocks forever. */
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeThreadLocal), cudaSuccess);
  assert_int_equal(ncclAllReduce(x[0], x[0], 128, ncclInt32, ncclSum, comms[0], s[0]), ncclInvalidUsage);
  assert_non_null(strstr(sim_last_warning(), "driven by this same thread"));
  cudaGraph_t g[2];
  assert_int_equal(cudaStreamEndCapture(s[0], &g[0]), cudaSuccess);
  cudaGraphDestroy(g[0]);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaSetDevice(r), cudaSuccess);
    assert_int_equal(cudaStreamBeginCapture(s[r], cudaStreamCaptureModeThreadLocal), cudaSuccess);
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++)
    assert_int_equal(ncclAllReduce(x[r], x[r], 128, ncclInt32, ncclSum, comms[r], s[r]), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  cudaGraphExec_t gx[2];
  for (int r = 0; r < 2; r++) assert_int_equal(cudaStreamEndCapture(s[r], &g[r]), cudaSuccess);
  /* Not before: cudaGraphInstantiate is forbidden to a thread whose
   * capture is under way (CUDA 13 on H200). */
  for (int r = 0; r < 2; r++) gx[r] = instantiate(g[r]);
  int h[128];
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < 128; i++) h[i] = i + r;
    assert_int_equal(cudaMemcpy(x[r], h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  }
  for (int l = 0; l < 10; l++)
    for (int r = 0; r < 2; r++) assert_int_equal(cudaGraphLaunch(gx[r], s[r]), cudaSuccess);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaStreamSynchronize(s[r]), cudaSuccess);
    assert_int_equal(cudaMemcpy(h, x[r], sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    /* In place, 10 times: (2i + 1) * 2^9 after the first. */
    assert_int_equal(h[3], (2 * 3 + 1) << 9);
  }
  /* The DOT file names the operation. */
  char path[] = "/tmp/sim_graph_ncclXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(cudaGraphDebugDotPrint(g[1], path, 0), cudaSuccess);
  FILE *f = fopen(path, "r");
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(path);
  assert_non_null(strstr(text, "ncclAllReduce(count=128"));
  assert_non_null(strstr(text, "NCCL"));
  /* Destroyed communicators: the graphs refuse to launch. */
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  assert_int_equal(cudaGraphLaunch(gx[0], s[0]), cudaErrorLaunchFailure);
  assert_non_null(strstr(sim_last_warning(), "was destroyed after the capture"));
  assert_int_equal(cudaGraphDebugDotPrint(g[0], "/dev/null", 0), cudaSuccess);
  for (int r = 0; r < 2; r++) {
    assert_int_equal(cudaStreamSynchronize(s[r]), cudaSuccess);
    cudaGraphExecDestroy(gx[r]);
    cudaGraphDestroy(g[r]);
    cudaFree(x[r]);
    cudaStreamDestroy(s[r]);
  }
  cudaSetDevice(0);
  cudaGetLastError();
}

/* cudaGraphExecUpdate takes another capture's buffers. */
static void update_fn(rank_ctx *c) {
  cudaStream_t s = stream();
  int *a = dev(32 * sizeof(int)), *b = dev(32 * sizeof(int)), h[32];
  cudaGraph_t ga, gb;
  warm_up(a, a, 32, c->comm, s);
  for (int k = 0; k < 2; k++) {
    int *p = k ? b : a;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(ncclAllReduce(p, p, 32, ncclInt32, ncclSum, c->comm, s), ncclSuccess);
    assert_int_equal(cudaStreamEndCapture(s, k ? &gb : &ga), cudaSuccess);
  }
  for (int i = 0; i < 32; i++) h[i] = 1;
  assert_int_equal(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  assert_int_equal(cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  cudaGraphExec_t x = instantiate(ga);
  cudaGraphExecUpdateResultInfo info;
  assert_int_equal(cudaGraphExecUpdate(x, gb, &info), cudaSuccess);
  cudaGraphDestroy(gb); /* the executable graph holds what it needs */
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], c->nranks);
  assert_int_equal(cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], 1);
  /* Launched on a stream of another device: the graph's operations keep
   * their communicator's device. */
  int mine;
  cudaStream_t other;
  assert_int_equal(cudaGetDevice(&mine), cudaSuccess);
  assert_int_equal(cudaSetDevice(mine + 2), cudaSuccess);
  assert_int_equal(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  assert_int_equal(cudaSetDevice(mine), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, other), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(other), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h[0], c->nranks * c->nranks);
  cudaStreamDestroy(other);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(ga);
  cudaFree(a);
  cudaFree(b);
  cudaStreamDestroy(s);
}

static void test_update(void **state) {
  (void)state;
  assert_int_equal(run_ranks(2, update_fn, NULL), 0);
}

/* Allocation-failure loop over a one-rank communicator's capture of a
 * group (an allreduce and a send/recv to itself), its graph's launches
 * and the communicator's end: each injected failure fails one call
 * (ncclSystemError, ncclUnhandledCudaError, cudaErrorMemoryAllocation or
 * a capture it spoiled), never crashes or hangs, and the rank goes on. */
static _Atomic int gate_at, gate_open;
static void gate(void *arg) {
  (void)arg;
  atomic_store(&gate_at, 1);
  while (!atomic_load(&gate_open)) usleep(1000);
}

/* A graph launch holding NCCL operations takes NCCLSIM_GRAPH_NCCL_DEPTH
 * places of the stream's depth, however many operations it holds (NCCL
 * 2.30.7 on 2 x H200: 28 launches, with 1, 4 or 16 allreduces a graph). */
static void test_launch_depth(void **state) {
  (void)state;
  ncclComm_t comm;
  int dev0 = 0;
  assert_int_equal(ncclCommInitAll(&comm, 1, &dev0), ncclSuccess);
  cudaStream_t s = stream();
  int *x = dev(64 * sizeof(int));
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, comm, s), ncclSuccess); /* connected */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaGraphExec_t gx[2];
  for (int k = 0; k < 2; k++) { /* one allreduce, then three */
    cudaGraph_t g;
    assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    for (int i = 0; i < 1 + 2 * k; i++)
      assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, comm, s), ncclSuccess);
    assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
    gx[k] = instantiate(g);
    cudaGraphDestroy(g);
  }
  ncclsimParamSet("STREAM_DEPTH", "12");
  ncclsimParamSet("GRAPH_NCCL_DEPTH", "5");
  ncclsimParamSet("TIMEOUT", scaled_str(0.5).s);
  for (int k = 0; k < 2; k++) {
    atomic_store(&gate_at, 0);
    atomic_store(&gate_open, 0);
    assert_int_equal(cudaLaunchHostFunc(s, gate, NULL), cudaSuccess);
    while (!atomic_load(&gate_at)) usleep(1000);
    /* 1 for the running host function, 5 a launch: two fit in 12 */
    assert_int_equal(cudaGraphLaunch(gx[k], s), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(gx[k], s), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(gx[k], s), cudaErrorTimeout);
    atomic_store(&gate_open, 1);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    cudaGetLastError();
  }
  ncclsimParamSet("STREAM_DEPTH", NULL);
  ncclsimParamSet("GRAPH_NCCL_DEPTH", NULL);
  ncclsimParamSet("TIMEOUT", NULL);
  for (int k = 0; k < 2; k++) cudaGraphExecDestroy(gx[k]);
  cudaFree(x);
  cudaStreamDestroy(s);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
}

static void test_alloc_failures(void **state) {
  (void)state;
  ncclComm_t comm;
  int dev0 = 0;
  assert_int_equal(ncclCommInitAll(&comm, 1, &dev0), ncclSuccess);
  cudaStream_t s = stream();
  int *x = dev(64 * sizeof(int)), *y = dev(64 * sizeof(int));
  assert_int_equal(ncclAllReduce(x, x, 64, ncclInt32, ncclSum, comm, s), ncclSuccess); /* connected */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  bool completed = false;
  for (uint64_t n = 1; n < 500 && !completed; n++) {
    cudaGraph_t g = NULL;
    cudaGraphExec_t gx = NULL;
    ncclsimAllocFailAfter(n);
    cudaError_t ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    ncclResult_t r1 = ncclAllReduce(x, y, 64, ncclInt32, ncclSum, comm, s);
    ncclResult_t r2 = ncclGroupStart();
    ncclResult_t r3 = ncclSend(x, 64, ncclInt32, 0, comm, s);
    ncclResult_t r4 = ncclRecv(y, 64, ncclInt32, 0, comm, s);
    ncclResult_t r5 = ncclGroupEnd();
    ncclResult_t rs[5] = {r1, r2, r3, r4, r5};
    for (int i = 0; i < 5; i++)
      if (rs[i] != ncclSuccess && rs[i] != ncclSystemError && rs[i] != ncclUnhandledCudaError)
        fail_msg("n=%llu: call %d: %s", (unsigned long long)n, i, ncclGetErrorString(rs[i]));
    enum cudaStreamCaptureStatus st;
    if (ce == cudaSuccess) {
      cudaError_t e = cudaStreamEndCapture(s, &g);
      if (e != cudaSuccess && e != cudaErrorStreamCaptureInvalidated) fail_msg("n=%llu: end: %s", (unsigned long long)n, cudaGetErrorName(e));
    }
    if (g && cudaGraphInstantiate(&gx, g, 0) == cudaSuccess)
      for (int l = 0; l < 3; l++) {
        cudaError_t e = cudaGraphLaunch(gx, s);
        if (e != cudaSuccess && e != cudaErrorMemoryAllocation && e != cudaErrorLaunchFailure)
          fail_msg("n=%llu: launch: %s", (unsigned long long)n, cudaGetErrorName(e));
      }
    completed = ncclsimAllocFailAfter(0) < n;
    cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess && e != cudaErrorLaunchFailure) fail_msg("n=%llu: sync: %s", (unsigned long long)n, cudaGetErrorName(e));
    assert_int_equal(cudaStreamIsCapturing(s, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusNone);
    if (gx) cudaGraphExecDestroy(gx);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
  }
  assert_true(completed);
  /* The communicator still works. */
  assert_int_equal(ncclAllReduce(x, y, 64, ncclInt32, ncclSum, comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  cudaFree(x);
  cudaFree(y);
  cudaStreamDestroy(s);
}

int main(void) {
  setenv("NCCLSIM_DEVICES", "8", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_allreduce_replay), cmocka_unit_test(test_ring_replay),
      cmocka_unit_test(test_putsignal_replay), cmocka_unit_test(test_mixing),
      cmocka_unit_test(test_mixing_off),       cmocka_unit_test(test_group_mixed),
      cmocka_unit_test(test_invalidated),      cmocka_unit_test(test_first_capture),
      cmocka_unit_test(test_first_capture_global), cmocka_unit_test(test_one_thread_graphs),
      cmocka_unit_test(test_update),           cmocka_unit_test(test_alloc_failures),
      cmocka_unit_test(test_launch_depth),
  };
  return cmocka_run_group_tests_name("sim_graph_nccl", tests, NULL, NULL);
}
