/*
 * bench/p2p_bw.c — send/recv bandwidth between two ranks, against memcpy.
 *
 * Rank 0 sends to rank 1, one thread per rank, 1 KiB to 256 MiB. In the
 * same run, single-thread memcpy between the same two buffers gives the
 * machine's limit; a send/recv is one copy, so the ratio says what the
 * rendezvous costs. Output: one `key=value` line per measurement.
 * Built against nccl4c's backend headers, so it also runs on real NCCL.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define MAX_BYTES ((size_t)256 << 20)

static ncclUniqueId id;
static pthread_barrier_t bar;
static char *bufs[2];
static double sim_secs; /* per iteration, measured by the receiver */
static int iters;
static size_t cur_bytes;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int iters_for(size_t bytes) {
  size_t target = (size_t)1 << 30; /* ~1 GiB moved per size */
  size_t n = target / bytes;
  return n < 5 ? 5 : n > 20000 ? 20000 : (int)n;
}

#define CHECK(cond, what)                                      \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "p2p_bw: %s failed\n", what);            \
      exit(1);                                                 \
    }                                                          \
  } while (0)

static void *rank_main(void *arg) {
  int rank = (int)(long)arg;
  ncclComm_t comm;
  CHECK(cudaSetDevice(rank) == cudaSuccess, "cudaSetDevice");
  CHECK(ncclCommInitRank(&comm, 2, id, rank) == ncclSuccess, "ncclCommInitRank");
  CHECK(cudaMalloc((void **)&bufs[rank], MAX_BYTES) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMemset(bufs[rank], rank + 1, MAX_BYTES) == cudaSuccess, "cudaMemset"); /* touch every page */
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  for (;;) {
    pthread_barrier_wait(&bar); /* main thread set cur_bytes */
    size_t bytes = cur_bytes;
    if (!bytes) break;
    /* warm-up */
    if (rank == 0) ncclSend(bufs[0], bytes, ncclUint8, 1, comm, s);
    else ncclRecv(bufs[1], bytes, ncclUint8, 0, comm, s);
    cudaStreamSynchronize(s);
    pthread_barrier_wait(&bar);
    double t0 = now();
    for (int i = 0; i < iters; i++) {
      ncclResult_t r = rank == 0 ? ncclSend(bufs[0], bytes, ncclUint8, 1, comm, s)
                                 : ncclRecv(bufs[1], bytes, ncclUint8, 0, comm, s);
      CHECK(r == ncclSuccess, rank == 0 ? "ncclSend" : "ncclRecv");
    }
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    if (rank == 1) sim_secs = (now() - t0) / iters;
    pthread_barrier_wait(&bar);
  }
  cudaStreamDestroy(s);
  ncclCommDestroy(comm);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  CHECK(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
  pthread_barrier_init(&bar, NULL, 3);
  for (long r = 0; r < 2; r++) pthread_create(&th[r], NULL, rank_main, (void *)r);
  double ratio64 = 0;
  for (size_t bytes = 1024; bytes <= MAX_BYTES; bytes *= 4) {
    cur_bytes = bytes;
    iters = iters_for(bytes);
    pthread_barrier_wait(&bar); /* start */
    pthread_barrier_wait(&bar); /* warmed up */
    pthread_barrier_wait(&bar); /* timed loop done */
    /* memcpy between the same buffers, after the ranks are idle */
    memcpy(bufs[1], bufs[0], bytes);
    double t0 = now();
    for (int i = 0; i < iters; i++) {
      memcpy(bufs[1], bufs[0], bytes);
      __asm__ __volatile__("" ::: "memory");
    }
    double mc = (now() - t0) / iters;
    double sim_gbps = bytes / sim_secs / 1e9, mc_gbps = bytes / mc / 1e9;
    printf("bench=p2p_bw bytes=%zu iters=%d sim_gbps=%.3f memcpy_gbps=%.3f ratio=%.3f\n", bytes, iters, sim_gbps,
           mc_gbps, sim_gbps / mc_gbps);
    if (bytes == (size_t)64 << 20) ratio64 = sim_gbps / mc_gbps;
    fflush(stdout);
  }
  cur_bytes = 0;
  pthread_barrier_wait(&bar);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("bench=p2p_bw summary ratio_64MiB=%.3f target=0.8 peak_rss_kib=%ld user_buffers_kib=%zu\n", ratio64,
         ru.ru_maxrss, 2 * MAX_BYTES / 1024);
  cudaFree(bufs[0]);
  cudaFree(bufs[1]);
  return 0;
}
