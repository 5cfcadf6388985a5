/*
 * bench/put_bw.c — ncclPutSignal bandwidth between two ranks, 1 KiB to
 * 256 MiB, and single-thread memcpy of the same sizes in the same run (on
 * ncclsim a put is one such copy, so the ratio shows the overhead).
 *
 * Rank 0 puts `iters` times from its symmetric window into rank 1's, rank 1
 * waits for all of them; the time is from a common start to rank 1's wait
 * completing. Each size starts with one untimed put and wait (the first
 * also sets NCCL's one-sided connections up, which blocks rank 0 until
 * rank 1 joins). Target: ratio >= 0.8 at 64 MiB. On a GPU the windows are
 * device memory, and the memcpy columns hold the copy engine's bandwidth
 * from GPU 0 to GPU 1 instead (cudaMemcpyPeerAsync, bench.h): on NCCL
 * 2.30 a put between GPUs of one node is such a copy.
 *
 * Up to 20000 puts go on rank 0's stream; past the stream depth (about a
 * thousand operations) an enqueue blocks rank 0's thread until earlier
 * puts complete, which they do without rank 1's thread (rank 1's wait is
 * one operation), so the run cannot deadlock.
 *
 * Output: one key=value line per size. Usage: put_bw [max_bytes]
 */
#include "config.h"

#include <stdio.h>

#include <nccl.h>

#if !HAVE_DECL_NCCLPUTSIGNAL
/* The linked NCCL has no one-sided API (2.29+): say so, in the bench's
 * line format, and succeed. */
int main(void) {
  int v = 0;
  ncclGetVersion(&v);
  printf("bench=put_bw skipped=\"not supported by NCCL %d.%d.%d\"\n", v / 10000, v / 100 % 100, v % 100);
  return 0;
}
#else /* HAVE_DECL_NCCLPUTSIGNAL */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#define BENCH_NAME "put_bw"
#include "bench.h"

static size_t max_bytes = (size_t)256 << 20;
static ncclComm_t comms[2];
static char *mem[2];
static ncclWindow_t wins[2];
static pthread_barrier_t bar;
static size_t cur;
static int iters;
static double secs;

#define CHECK(cond, what) BENCH_CHECK(cond, what, "")

static int iters_for(size_t bytes) {
  size_t n = ((size_t)1 << 30) / bytes; /* about 1 GiB per size */
  return n < 4 ? 4 : n > 20000 ? 20000 : (int)n;
}

static void *rank_main(void *arg) {
  int r = (int)(intptr_t)arg;
  cudaStream_t s;
  CHECK(cudaSetDevice(r) == cudaSuccess, "cudaSetDevice");
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  for (;;) {
    pthread_barrier_wait(&bar); /* cur and iters set */
    if (!cur) break;
    ncclWaitSignalDesc_t w = {1, 0, 0, 0}; /* warm-up, untimed */
    if (r == 0)
      CHECK(ncclPutSignal(mem[0], cur, ncclUint8, 1, wins[0], max_bytes, 0, 0, 0, comms[0], s) == ncclSuccess,
            "ncclPutSignal");
    else
      CHECK(ncclWaitSignal(1, &w, comms[1], s) == ncclSuccess, "ncclWaitSignal");
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    pthread_barrier_wait(&bar);
    double t0 = bench_now();
    if (r == 0) {
      for (int i = 0; i < iters; i++)
        CHECK(ncclPutSignal(mem[0], cur, ncclUint8, 1, wins[0], max_bytes, 0, 0, 0, comms[0], s) == ncclSuccess,
              "ncclPutSignal");
    } else {
      ncclWaitSignalDesc_t d = {iters, 0, 0, 0};
      CHECK(ncclWaitSignal(1, &d, comms[1], s) == ncclSuccess, "ncclWaitSignal");
    }
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    if (r == 1) secs = bench_now() - t0;
    pthread_barrier_wait(&bar);
  }
  cudaStreamDestroy(s);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) max_bytes = (size_t)strtoull(argv[1], NULL, 0);
  CHECK(max_bytes >= 1024, "max_bytes >= 1024");
  CHECK(ncclCommInitAll(comms, 2, NULL) == ncclSuccess, "ncclCommInitAll");
  for (int r = 0; r < 2; r++) {
    CHECK(cudaSetDevice(r) == cudaSuccess, "cudaSetDevice");
    CHECK(ncclMemAlloc((void **)&mem[r], 2 * max_bytes) == ncclSuccess, "ncclMemAlloc");
    /* Touch every page; device memory on a GPU, so not with memset. */
    CHECK(cudaMemset(mem[r], r + 1, 2 * max_bytes) == cudaSuccess, "cudaMemset");
    CHECK(cudaDeviceSynchronize() == cudaSuccess, "cudaDeviceSynchronize");
  }
  CHECK(ncclGroupStart() == ncclSuccess, "ncclGroupStart");
  for (int r = 0; r < 2; r++)
    CHECK(ncclCommWindowRegister(comms[r], mem[r], 2 * max_bytes, &wins[r], NCCL_WIN_COLL_SYMMETRIC) ==
              ncclSuccess,
          "ncclCommWindowRegister");
  CHECK(ncclGroupEnd() == ncclSuccess, "ncclGroupEnd");
  pthread_barrier_init(&bar, NULL, 3);
  pthread_t th[2];
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, rank_main, (void *)(intptr_t)r);
  for (size_t b = 1024; b <= max_bytes; b *= 4) {
    cur = b;
    iters = iters_for(b);
    pthread_barrier_wait(&bar); /* go: warm-up */
    pthread_barrier_wait(&bar); /* go: timed */
    pthread_barrier_wait(&bar); /* done */
    double put = secs, mgbps = 0;
#ifdef NCCLSIM
    /* The host's copy limit; only on ncclsim, where the windows are host
     * memory (on a GPU they are device memory). */
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) {
      memcpy(mem[1] + max_bytes, mem[0], b);
      __asm__ __volatile__("" ::: "memory");
    }
    mgbps = (double)b * iters / (bench_now() - t0) / 1e9;
#else
    mgbps = bench_peer_copy_gbps(b, iters);
#endif
    double gbps = (double)b * iters / put / 1e9;
    printf("bench=put_bw bytes=%zu iters=%d gbps=%.2f memcpy_gbps=%.2f ratio=%.2f\n", b, iters, gbps, mgbps,
           mgbps > 0 ? gbps / mgbps : 0);
    fflush(stdout);
  }
  cur = 0;
  pthread_barrier_wait(&bar);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  for (int r = 0; r < 2; r++) {
    ncclCommWindowDeregister(comms[r], wins[r]);
    ncclMemFree(mem[r]);
    ncclCommDestroy(comms[r]);
  }
  return 0;
}

#endif /* HAVE_DECL_NCCLPUTSIGNAL */
