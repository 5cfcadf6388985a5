/*
 * bench/p2p_bw.c — send/recv bandwidth between two ranks: raw NCCL, nccl4c,
 * and memcpy, in one run.
 *
 * Rank 0 sends to rank 1, one thread per rank (rank r on device r mod the
 * device count), 1 KiB to 256 MiB. Each size is measured through raw
 * ncclSend/ncclRecv and through n4c_comm_send/recv on the same
 * communicator. Single-thread memcpy between the same two buffers gives the
 * host's copy limit (on ncclsim a send/recv is one such copy). Last, the
 * host-side cost of an nccl4c call over the raw call is measured over 10^5
 * grouped 1-byte send/recv pairs. On a GPU the memcpy columns hold the
 * copy engine's bandwidth from GPU 0 to GPU 1 instead (cudaMemcpyPeerAsync,
 * bench.h), the NVLink limit.
 *
 * Output: `key=value` lines, one per measurement, then a summary line.
 * Usage: p2p_bw [max_bytes]
 */
#include "config.h" /* _GNU_SOURCE, for bench_pin (bench.h) */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "nccl4c.h"
#define BENCH_NAME "p2p_bw"
#include "bench.h"

#define CALLS 100000
/* The call-overhead loop synchronises its stream after this many groups.
 * It must stay below the stream depth (about 1021-1030 operations on H200
 * with NCCL 2.30.7; a group on one stream counts as one), or enqueues
 * block the host inside the timed calls. */
#define SYNC_EVERY 256

static ncclUniqueId id;
static pthread_barrier_t bar;
static char *bufs[2];
static size_t max_bytes = (size_t)256 << 20;
static size_t cur_bytes;
static int iters;
static double secs[2];      /* per iteration: raw, n4c (measured by the receiver) */
static double call_secs[2]; /* per call: raw, n4c (rank 0) */

#define CHECK(cond, what) BENCH_CHECK(cond, what, n4c_last_error_message())

/* One transfer of `bytes` through raw NCCL (via=0) or nccl4c (via=1). */
static void xfer(int via, int rank, n4c_comm_t *comm, size_t bytes, int dev, cudaStream_t s) {
  int peer = 1 - rank;
  if (via == 0) {
    ncclComm_t h = n4c_comm_handle(comm);
    ncclResult_t r = rank == 0 ? ncclSend(bufs[0], bytes, ncclUint8, peer, h, s)
                               : ncclRecv(bufs[1], bytes, ncclUint8, peer, h, s);
    CHECK(r == ncclSuccess, "ncclSend/ncclRecv");
  } else {
    n4c_buffer_t b = n4c_buffer(bufs[rank], bytes, ncclUint8, dev);
    n4c_status_t st = rank == 0 ? n4c_comm_send(comm, &b, peer, s) : n4c_comm_recv(comm, &b, peer, s);
    CHECK(st == N4C_OK, "n4c_comm_send/recv");
  }
}

static void *rank_main(void *arg) {
  int rank = (int)(long)arg, ndev = 1;
  cudaGetDeviceCount(&ndev);
  int dev = rank % ndev;
  n4c_comm_t *comm;
  cudaStream_t s;
  CHECK(cudaSetDevice(dev) == cudaSuccess, "cudaSetDevice");
  CHECK(n4c_comm_init(&comm, 2, rank, &id, 1, NULL) == N4C_OK, "n4c_comm_init");
  CHECK(cudaMalloc((void **)&bufs[rank], max_bytes) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMemset(bufs[rank], rank + 1, max_bytes) == cudaSuccess, "cudaMemset"); /* touch every page */
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  for (;;) {
    pthread_barrier_wait(&bar); /* main set cur_bytes */
    size_t bytes = cur_bytes;
    if (!bytes) break;
    for (int via = 0; via < 2; via++) {
      xfer(via, rank, comm, bytes, dev, s); /* warm-up */
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
      pthread_barrier_wait(&bar);
      double t0 = bench_now();
      /* Up to 20000 operations per stream: past the stream depth an
       * enqueue blocks until earlier ones complete, which the peer's
       * thread, enqueueing the matching half meanwhile, lets them do. */
      for (int i = 0; i < iters; i++) xfer(via, rank, comm, bytes, dev, s);
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
      if (rank == 1) secs[via] = (bench_now() - t0) / iters;
      pthread_barrier_wait(&bar);
    }
    pthread_barrier_wait(&bar); /* main's memcpy runs while ranks are idle */
  }
  /* Host-side cost per call: 10^5 grouped 1-byte pairs, raw then nccl4c.
   * Each starts with an untimed pair: the first sends from rank 1 to rank 0
   * set that direction's connection up, which blocks ncclGroupEnd until
   * rank 0 joins. */
  for (int via = 0; via < 2; via++) {
    pthread_barrier_wait(&bar);
    double t = 0;
    for (int i = -1; i < CALLS; i++) {
      double t0 = bench_now();
      if (via == 0) {
        ncclGroupStart();
        ncclSend(bufs[rank], 1, ncclUint8, 1 - rank, n4c_comm_handle(comm), s);
        ncclRecv(bufs[rank] + 64, 1, ncclUint8, 1 - rank, n4c_comm_handle(comm), s);
        ncclGroupEnd();
      } else {
        n4c_buffer_t sb = n4c_buffer(bufs[rank], 1, ncclUint8, dev), rb = n4c_buffer(bufs[rank] + 64, 1, ncclUint8, dev);
        n4c_group_start();
        n4c_comm_send(comm, &sb, 1 - rank, s);
        n4c_comm_recv(comm, &rb, 1 - rank, s);
        n4c_group_end();
      }
      if (i < 0) {
        CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
        pthread_barrier_wait(&bar);
        continue;
      }
      t += bench_now() - t0;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) cudaStreamSynchronize(s); /* keep the queue short */
    }
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    if (rank == 0) call_secs[via] = t / (4.0 * CALLS); /* 4 calls per pair: start, send, recv, end */
  }
  cudaStreamDestroy(s);
  n4c_comm_free(comm);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) max_bytes = strtoull(argv[1], NULL, 0);
  if (max_bytes < 1024) max_bytes = 1024;
  pthread_t th[2];
  CHECK(n4c_get_unique_id(&id) == N4C_OK, "n4c_get_unique_id");
  pthread_barrier_init(&bar, NULL, 3);
  for (long r = 0; r < 2; r++) pthread_create(&th[r], NULL, rank_main, (void *)r);
  double ratio64 = -1, n4c_min_1m = 10;
#ifdef NCCLSIM
  const char *backend = "ncclsim";
#else
  const char *backend = "nccl";
#endif
  for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
    size_t n = ((size_t)1 << 30) / bytes;
    iters = n < 5 ? 5 : n > 20000 ? 20000 : (int)n;
    cur_bytes = bytes;
    pthread_barrier_wait(&bar);
    for (int via = 0; via < 2; via++) {
      pthread_barrier_wait(&bar);
      pthread_barrier_wait(&bar);
    }
    double mc = 0;
#ifdef NCCLSIM
    /* The host's copy limit; only on ncclsim, where the buffers are host
     * memory (on a GPU they are device memory, and the bound is NVLink). */
    memcpy(bufs[1], bufs[0], bytes);
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
      memcpy(bufs[1], bufs[0], bytes);
      __asm__ __volatile__("" ::: "memory");
    }
    mc = (bench_now() - t0) / iters;
#else
    double pg = bench_peer_copy_gbps(bytes, iters);
    mc = pg > 0 ? bytes / pg / 1e9 : 0;
#endif
    pthread_barrier_wait(&bar);
    double raw = bytes / secs[0] / 1e9, n4c = bytes / secs[1] / 1e9, mcg = mc > 0 ? bytes / mc / 1e9 : 0;
    printf("bench=p2p_bw backend=%s bytes=%zu iters=%d raw_gbps=%.3f n4c_gbps=%.3f n4c_over_raw=%.3f "
           "memcpy_gbps=%.3f raw_over_memcpy=%.3f\n",
           backend, bytes, iters, raw, n4c, n4c / raw, mcg, mcg > 0 ? raw / mcg : 0);
    fflush(stdout);
    if (bytes == (size_t)64 << 20 && mcg > 0) ratio64 = raw / mcg;
    if (bytes >= (size_t)1 << 20 && n4c / raw < n4c_min_1m) n4c_min_1m = n4c / raw;
  }
  cur_bytes = 0;
  pthread_barrier_wait(&bar);
  for (int via = 0; via < 2; via++) {
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar); /* the untimed pair is done */
  }
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("bench=p2p_bw backend=%s call_overhead raw_ns_per_call=%.1f n4c_ns_per_call=%.1f overhead_ns=%.1f "
         "target_ns=200\n",
         backend, call_secs[0] * 1e9, call_secs[1] * 1e9, (call_secs[1] - call_secs[0]) * 1e9);
  printf("bench=p2p_bw backend=%s summary raw_over_memcpy_64MiB=%.3f target=0.8 min_n4c_over_raw_from_1MiB=%.3f "
         "target=0.99 peak_rss_kib=%ld user_buffers_kib=%zu\n",
         backend, ratio64, n4c_min_1m, ru.ru_maxrss, 2 * max_bytes / 1024);
  cudaFree(bufs[0]);
  cudaFree(bufs[1]);
  return 0;
}
