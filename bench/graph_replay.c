/*
 * bench/graph_replay.c — NCCL operations in CUDA graphs, each figure beside
 * its peer measured in the same run:
 *   allreduce   2 ranks (threads): K allreduces of 8 bytes captured in one
 *               graph, launched L times, against the same K x L allreduces
 *               issued directly; each the time from the first call to the
 *               stream's synchronize, per operation (graph_ns, direct_ns),
 *               and graph_ns / direct_ns (the replay's cost against a call)
 *   sendrecv    the same with a grouped send and receive to the other rank
 *   instantiate a graph of 1000 nodes (memsets in chains of 10, each chain
 *               joining the previous: 1000 nodes, about 1100 edges):
 *               cudaGraphInstantiate's time (instantiate_us), beside
 *               building the graph with the node API (build_us), and the
 *               first launch of it (launch_us)
 * Each the median and min/max over `repeats` repeats.
 *
 * Output: key=value lines. Usage: graph_replay [K [L [repeats]]]
 * (defaults 100 50 5)
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#define BENCH_NAME "graph_replay"
#include "bench.h"

static int K = 100, L = 50, repeats = 5;
static ncclUniqueId id;
static pthread_barrier_t bar;

typedef enum { T_ALLREDUCE, T_SENDRECV } test_kind;
static const char *const names[] = {"allreduce", "sendrecv"};

/* Rank 0's figures, per repeat. */
static double graph_ns[2][64], direct_ns[2][64];

static void check_cuda(cudaError_t e, const char *what) { BENCH_CHECK(e == cudaSuccess, what, cudaGetErrorName(e)); }
static void check_nccl(ncclResult_t r, const char *what) { BENCH_CHECK(r == ncclSuccess, what, ncclGetErrorString(r)); }

/* One operation of the test, on stream s. */
static void op(test_kind t, ncclComm_t comm, int rank, float *send, float *recv, cudaStream_t s) {
  if (t == T_ALLREDUCE) {
    check_nccl(ncclAllReduce(send, recv, 2, ncclFloat32, ncclSum, comm, s), "ncclAllReduce");
    return;
  }
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  check_nccl(ncclSend(send, 2, ncclFloat32, 1 - rank, comm, s), "ncclSend");
  check_nccl(ncclRecv(recv, 2, ncclFloat32, 1 - rank, comm, s), "ncclRecv");
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

static void *rank_main(void *arg) {
  int rank = (int)(intptr_t)arg;
  ncclComm_t comm;
  cudaStream_t s;
  float *send, *recv;
  check_cuda(cudaSetDevice(rank), "cudaSetDevice");
  check_nccl(ncclCommInitRank(&comm, 2, id, rank), "ncclCommInitRank");
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  check_cuda(cudaMalloc((void **)&send, 64), "cudaMalloc");
  check_cuda(cudaMalloc((void **)&recv, 64), "cudaMalloc");
  for (int t = T_ALLREDUCE; t <= T_SENDRECV; t++) {
    /* Warm: the first uses connect. */
    op((test_kind)t, comm, rank, send, recv, s);
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    cudaGraph_t g;
    cudaGraphExec_t x;
    check_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    for (int k = 0; k < K; k++) op((test_kind)t, comm, rank, send, recv, s);
    check_cuda(cudaStreamEndCapture(s, &g), "cudaStreamEndCapture");
    check_cuda(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate");
    check_cuda(cudaGraphLaunch(x, s), "cudaGraphLaunch"); /* warm */
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    for (int r = 0; r < repeats; r++) {
      pthread_barrier_wait(&bar);
      double t0 = bench_now();
      for (int l = 0; l < L; l++) check_cuda(cudaGraphLaunch(x, s), "cudaGraphLaunch");
      check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
      double t1 = bench_now();
      pthread_barrier_wait(&bar);
      double t2 = bench_now();
      for (int i = 0; i < K * L; i++) op((test_kind)t, comm, rank, send, recv, s);
      check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
      double t3 = bench_now();
      if (rank == 0) {
        graph_ns[t][r] = (t1 - t0) * 1e9 / (K * L);
        direct_ns[t][r] = (t3 - t2) * 1e9 / (K * L);
      }
    }
    check_cuda(cudaGraphExecDestroy(x), "cudaGraphExecDestroy");
    check_cuda(cudaGraphDestroy(g), "cudaGraphDestroy");
  }
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(s);
  ncclCommDestroy(comm);
  return NULL;
}

static void print_spread(const char *key, const double *v) {
  bench_spread sp = bench_stats(v, repeats);
  printf(" %s=%.0f %s_min=%.0f %s_max=%.0f", key, sp.med, key, sp.min, key, sp.max);
}

static void print_ratio(const char *key, const double *num, const double *den) {
  double q[64];
  for (int r = 0; r < repeats; r++) q[r] = num[r] / den[r];
  bench_spread sp = bench_stats(q, repeats);
  printf(" %s=%.2f %s_min=%.2f %s_max=%.2f", key, sp.med, key, sp.min, key, sp.max);
}

/* The 1000-node graph: memsets of one buffer in chains of 10, each chain
 * after the last node of the previous one and its own first node. */
enum { NODES = 1000, CHAIN = 10 };
static void instantiate_bench(void) {
  double build[64], inst[64], launch[64];
  void *d;
  cudaStream_t s;
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaMalloc(&d, 4096), "cudaMalloc");
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  static cudaGraphNode_t nodes[NODES];
  for (int r = 0; r < repeats; r++) {
    cudaGraph_t g;
    cudaGraphExec_t x;
    double t0 = bench_now();
    check_cuda(cudaGraphCreate(&g, 0), "cudaGraphCreate");
    for (int i = 0; i < NODES; i++) {
      struct cudaMemsetParams p = {.dst = d, .pitch = 4096, .value = (unsigned)i, .elementSize = 1, .width = 64,
                                   .height = 1};
      cudaGraphNode_t deps[2];
      size_t nd = 0;
      if (i % CHAIN) deps[nd++] = nodes[i - 1];
      else if (i) deps[nd++] = nodes[i - 1], deps[nd++] = nodes[i - CHAIN];
      check_cuda(cudaGraphAddMemsetNode(&nodes[i], g, deps, nd, &p), "cudaGraphAddMemsetNode");
    }
    double t1 = bench_now();
    check_cuda(cudaGraphInstantiate(&x, g, 0), "cudaGraphInstantiate");
    double t2 = bench_now();
    check_cuda(cudaGraphLaunch(x, s), "cudaGraphLaunch");
    check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    double t3 = bench_now();
    build[r] = (t1 - t0) * 1e6;
    inst[r] = (t2 - t1) * 1e6;
    launch[r] = (t3 - t2) * 1e6;
    check_cuda(cudaGraphExecDestroy(x), "cudaGraphExecDestroy");
    check_cuda(cudaGraphDestroy(g), "cudaGraphDestroy");
  }
  size_t edges = 0;
  for (int i = 1; i < NODES; i++) edges += 1 + (i % CHAIN == 0 && i >= CHAIN);
  printf("bench=graph_replay test=instantiate nodes=%d edges=%zu", NODES, edges);
  bench_spread sp = bench_stats(inst, repeats);
  printf(" instantiate_us=%.1f instantiate_us_min=%.1f instantiate_us_max=%.1f", sp.med, sp.min, sp.max);
  sp = bench_stats(build, repeats);
  printf(" build_us=%.1f build_us_min=%.1f build_us_max=%.1f", sp.med, sp.min, sp.max);
  sp = bench_stats(launch, repeats);
  printf(" launch_us=%.1f launch_us_min=%.1f launch_us_max=%.1f", sp.med, sp.min, sp.max);
  print_ratio("instantiate_per_build", inst, build);
  printf("\n");
  cudaFree(d);
  cudaStreamDestroy(s);
}

int main(int argc, char **argv) {
  if (argc > 1) K = atoi(argv[1]);
  if (argc > 2) L = atoi(argv[2]);
  if (argc > 3) repeats = atoi(argv[3]);
  BENCH_CHECK(K > 0 && L > 0 && repeats > 0 && repeats <= 64, "arguments", "K L repeats: K, L > 0, 1 <= repeats <= 64");
  int ndev = 0;
  check_cuda(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
  BENCH_CHECK(ndev >= 2, "devices", "needs 2 devices");
  check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  pthread_barrier_init(&bar, NULL, 2);
  pthread_t th[2];
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, rank_main, (void *)(intptr_t)r);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  pthread_barrier_destroy(&bar);
  for (int t = T_ALLREDUCE; t <= T_SENDRECV; t++) {
    printf("bench=graph_replay test=%s ranks=2 ops_per_graph=%d launches=%d repeats=%d", names[t], K, L, repeats);
    print_spread("graph_ns", graph_ns[t]);
    print_spread("direct_ns", direct_ns[t]);
    print_ratio("graph_per_direct", graph_ns[t], direct_ns[t]);
    printf("\n");
  }
  instantiate_bench();
  return 0;
}
