/*
 * bench/allreduce_bw.c — float32 sum allreduce bandwidth, nccl-tests style:
 * raw NCCL and nccl4c on the same communicator, and a single-thread
 * `a[i] += b[i]` loop, in one run.
 *
 * For each rank count (default 2, 4 and 8), one thread per rank (rank r on
 * device r mod the device count) runs out-of-place allreduces from 1 KiB
 * to 256 MiB, first through ncclAllReduce, then through n4c_comm_allreduce.
 * algbw = bytes / time; busbw = algbw * 2(n-1)/n, as nccl-tests. Between
 * sizes, while the ranks wait, the main thread times `a[i] += b[i]` over
 * the same number of floats in host memory. Its bandwidth counts 3 x 4
 * bytes per element (two reads and one write); on ncclsim, whose
 * allreduce is such a loop spread over the rank threads, it is the yardstick
 * for busbw.
 *
 * Output: `key=value` lines, one per (rank count, size), then a summary.
 * Usage: allreduce_bw [max_bytes [rank counts, e.g. 2,4,8]]
 */
#include "config.h" /* _GNU_SOURCE, for bench_pin (bench.h) */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl4c.h"
#define BENCH_NAME "allreduce_bw"
#include "bench.h"

#define MAX_RANKS 64

static ncclUniqueId id;
static pthread_barrier_t bar;
static int nranks, iters;
static size_t max_bytes = (size_t)256 << 20, cur_bytes;
static double secs[2]; /* per iteration, slowest rank: raw, n4c */
static double rank_secs[MAX_RANKS][2];

#define CHECK(cond, what) BENCH_CHECK(cond, what, n4c_last_error_message())

static void allreduce(int via, n4c_comm_t *comm, float *send, float *recv, size_t count, int dev,
                      cudaStream_t s) {
  if (via == 0) {
    CHECK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, n4c_comm_handle(comm), s) == ncclSuccess,
          "ncclAllReduce");
  } else {
    n4c_buffer_t sb = n4c_buffer(send, count, ncclFloat32, dev), rb = n4c_buffer(recv, count, ncclFloat32, dev);
    CHECK(n4c_comm_allreduce(comm, &sb, &rb, ncclSum, s) == N4C_OK, "n4c_comm_allreduce");
  }
}

static void *rank_main(void *arg) {
  int rank = (int)(long)arg, ndev = 1;
  cudaGetDeviceCount(&ndev);
  int dev = rank % ndev;
  n4c_comm_t *comm;
  cudaStream_t s;
  float *send, *recv;
  CHECK(cudaSetDevice(dev) == cudaSuccess, "cudaSetDevice");
  CHECK(n4c_comm_init(&comm, nranks, rank, &id, 1, NULL) == N4C_OK, "n4c_comm_init");
  CHECK(cudaMalloc((void **)&send, max_bytes) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc((void **)&recv, max_bytes) == cudaSuccess, "cudaMalloc");
  /* Touch every page; small integers keep every sum exact. */
  CHECK(cudaMemset(send, 0, max_bytes) == cudaSuccess && cudaMemset(recv, 0, max_bytes) == cudaSuccess,
        "cudaMemset");
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  for (;;) {
    pthread_barrier_wait(&bar); /* main set cur_bytes */
    size_t count = cur_bytes / sizeof(float);
    if (!count) break;
    for (int via = 0; via < 2; via++) {
      allreduce(via, comm, send, recv, count, dev, s); /* warm-up */
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
      pthread_barrier_wait(&bar);
      double t0 = bench_now();
      /* Up to 2000 allreduces per stream: past the stream depth (about a
       * thousand operations on a GPU) an enqueue blocks until earlier ones
       * complete, which every other rank's thread, enqueueing the same
       * allreduces meanwhile, lets them do. The warm-up above is each
       * rank's first collective, which blocks until every rank makes
       * its own. */
      for (int i = 0; i < iters; i++) allreduce(via, comm, send, recv, count, dev, s);
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
      rank_secs[rank][via] = (bench_now() - t0) / iters;
      pthread_barrier_wait(&bar);
    }
    pthread_barrier_wait(&bar); /* main's add loop runs while ranks are idle */
  }
  cudaStreamDestroy(s);
  cudaFree(send);
  cudaFree(recv);
  n4c_comm_free(comm);
  return NULL;
}

/* The yardstick: one thread, a[i] += b[i]. */
static double add_loop(float *restrict a, const float *restrict b, size_t n, int reps) {
  for (size_t i = 0; i < n; i++) a[i] += b[i]; /* warm-up */
  double t0 = bench_now();
  for (int r = 0; r < reps; r++) {
    for (size_t i = 0; i < n; i++) a[i] += b[i];
    __asm__ __volatile__("" ::: "memory");
  }
  return (bench_now() - t0) / reps;
}

int main(int argc, char **argv) {
  if (argc > 1) max_bytes = strtoull(argv[1], NULL, 0);
  if (max_bytes < 1024) max_bytes = 1024;
  int counts[16], ncounts = 0;
  const char *list = argc > 2 ? argv[2] : "2,4,8";
  for (char *end; *list && ncounts < 16; list = *end ? end + 1 : end) {
    long v = strtol(list, &end, 10);
    if (end == list || v < 1 || v > MAX_RANKS) {
      fprintf(stderr, "allreduce_bw: bad rank count list '%s'\n", argv[2]);
      return 2;
    }
    counts[ncounts++] = (int)v;
  }
#ifdef NCCLSIM
  const char *backend = "ncclsim";
#else
  const char *backend = "nccl";
#endif
  float *a = malloc(max_bytes), *b = malloc(max_bytes);
  CHECK(a && b, "malloc");
  for (size_t i = 0; i < max_bytes / sizeof(float); i++) a[i] = 0, b[i] = 1;
  double ratio64 = -1, min_n4c_1m = 10;
  for (int c = 0; c < ncounts; c++) {
    nranks = counts[c];
    pthread_t th[MAX_RANKS];
    CHECK(n4c_get_unique_id(&id) == N4C_OK, "n4c_get_unique_id");
    pthread_barrier_init(&bar, NULL, (unsigned)nranks + 1);
    for (long r = 0; r < nranks; r++) pthread_create(&th[r], NULL, rank_main, (void *)r);
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
      size_t n = ((size_t)1 << 30) / bytes;
      iters = n < 5 ? 5 : n > 2000 ? 2000 : (int)n;
      cur_bytes = bytes;
      pthread_barrier_wait(&bar);
      for (int via = 0; via < 2; via++) {
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        secs[via] = 0;
        for (int r = 0; r < nranks; r++)
          if (rank_secs[r][via] > secs[via]) secs[via] = rank_secs[r][via];
      }
      double add = add_loop(a, b, bytes / sizeof(float), iters);
      pthread_barrier_wait(&bar);
      double f = 2.0 * (nranks - 1) / nranks, raw_alg = bytes / secs[0] / 1e9, n4c_alg = bytes / secs[1] / 1e9;
      double addg = 3.0 * bytes / add / 1e9;
      printf("bench=allreduce_bw backend=%s nranks=%d bytes=%zu iters=%d raw_algbw_gbps=%.3f raw_busbw_gbps=%.3f "
             "n4c_algbw_gbps=%.3f n4c_busbw_gbps=%.3f n4c_over_raw=%.3f add_loop_gbps=%.3f busbw_over_add=%.3f\n",
             backend, nranks, bytes, iters, raw_alg, raw_alg * f, n4c_alg, n4c_alg * f, n4c_alg / raw_alg, addg,
             raw_alg * f / addg);
      fflush(stdout);
      if (nranks == 2 && bytes == (size_t)64 << 20) ratio64 = raw_alg * f / addg;
      if (bytes >= (size_t)1 << 20 && n4c_alg / raw_alg < min_n4c_1m) min_n4c_1m = n4c_alg / raw_alg;
    }
    cur_bytes = 0;
    pthread_barrier_wait(&bar);
    for (int r = 0; r < nranks; r++) pthread_join(th[r], NULL);
    pthread_barrier_destroy(&bar);
  }
  printf("bench=allreduce_bw backend=%s summary add_loop_bytes_per_elem=12 busbw_over_add_2ranks_64MiB=%.3f "
         "target=0.5 min_n4c_over_raw_from_1MiB=%.3f\n",
         backend, ratio64, min_n4c_1m);
  free(a);
  free(b);
  return 0;
}
