/*
 * bench/hosts_bw.c — send/recv between two ranks on two simulated hosts
 * (NCCLSIM_HOST_ID), whose bytes UCX moves (sim/net). One process per rank,
 * started by bench/hosts-vs-ucx.sh, which compares the figures with UCX's
 * own ucx_perftest and with Open MPI's TCP path on the same machine.
 *
 *  sendrecv  rank 0 ncclSend -> rank 1 ncclRecv of `bytes` (64 MiB), GB/s as
 *            the receiver sees it (from a handshake to the last receive), as
 *            bench/mpi_peer measures MPI_Send/MPI_Recv.
 *  pingpong  8-byte ncclSend/ncclRecv ping-pong, half round trip in ns.
 *  put       rank 0 ncclPutSignal of `bytes` into rank 1's window, rank 1
 *            ncclWaitSignal: GB/s as the target sees it (a UCX put and an
 *            atomic add each), as ucx_perftest -t ucp_put_bw measures UCX's.
 *  putpong   8-byte ncclPutSignal -> ncclWaitSignal ping-pong, half round
 *            trip in ns.
 *
 * Usage: hosts_bw RANK IDFILE [bytes [pingpong_iters [repeats]]]
 *        (defaults 67108864 2000 5); rank 0 writes IDFILE, rank 1 reads it.
 */
#include "config.h" /* _GNU_SOURCE, for bench_pin (bench.h) */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define BENCH_NAME "hosts_bw"
#include "bench.h"

#define NCHECK(call)                                                                        \
  do {                                                                                      \
    ncclResult_t r_ = (call);                                                               \
    BENCH_CHECK(r_ == ncclSuccess, #call, ncclGetErrorString(r_));                         \
  } while (0)

static ncclComm_t comm;
static cudaStream_t s;
static int rank;

/* Both ranks at the same point: an 8-byte exchange. */
static void handshake(void *buf) {
  NCHECK(ncclGroupStart());
  NCHECK(ncclSend(buf, 8, ncclUint8, 1 - rank, comm, s));
  NCHECK(ncclRecv((char *)buf + 8, 8, ncclUint8, 1 - rank, comm, s));
  NCHECK(ncclGroupEnd());
  BENCH_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize", "");
}

/* What the measurements move: two-sided or one-sided. */
static char *buf, *wmem; /* send/recv buffer; window memory */
static void *dsmall;
static ncclWindow_t win;
static size_t bytes;

/* One transfer of `n` bytes from rank `from` to the other: a send and its
 * receive, or a put_signal and the target's wait. */
static void transfer(bool put, int from, void *src, size_t n) {
  ncclWaitSignalDesc_t d = {.opCnt = 1, .peer = from, .sigIdx = 0, .ctx = 0};
  if (rank == from && put) NCHECK(ncclPutSignal(src, n, ncclUint8, 1 - rank, win, 0, 0, 0, 0, comm, s));
  else if (rank == from) NCHECK(ncclSend(src, n, ncclUint8, 1 - rank, comm, s));
  else if (put) NCHECK(ncclWaitSignal(1, &d, comm, s));
  else NCHECK(ncclRecv(src, n, ncclUint8, from, comm, s));
}

/* GB/s of `iters` transfers of `bytes` from rank 0, as rank 1 sees them,
 * per repeat (after one warm-up), into v. */
static void bandwidth(bool put, int iters, int repeats, double *v) {
  for (int rep = -1; rep < repeats; rep++) {
    handshake(dsmall);
    double t0 = bench_now();
    for (int i = 0; i < (rep < 0 ? 1 : iters); i++) transfer(put, 0, put ? wmem : buf, bytes);
    BENCH_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize", "");
    if (rep >= 0) v[rep] = bytes / ((bench_now() - t0) / iters) / 1e9;
  }
}

/* The half round trip of an 8-byte ping-pong, ns, per repeat, into v. */
static void pingpong(bool put, int iters, int repeats, double *v) {
  void *p = put ? (void *)wmem : dsmall;
  for (int rep = -1; rep < repeats; rep++) {
    int m = rep < 0 ? 100 : iters;
    handshake(dsmall);
    double t0 = 0;
    for (int i = 0; i < m; i++) {
      if (i == 1) t0 = bench_now();
      transfer(put, 0, p, 8);
      transfer(put, 1, p, 8);
      BENCH_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize", "");
    }
    if (rep >= 0) v[rep] = (bench_now() - t0) / (2.0 * (m - 1)) * 1e9;
  }
}

/* Rank 1 checks that the bytes came from rank 0 (filled with 1s). */
static void check_came(const char *mem, const char *what) {
  char first, last;
  cudaMemcpy(&first, mem, 1, cudaMemcpyDeviceToHost);
  cudaMemcpy(&last, mem + bytes - 1, 1, cudaMemcpyDeviceToHost);
  BENCH_CHECK(first == 1 && last == 1, what, "the bytes that came are not rank 0's");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: hosts_bw RANK IDFILE [bytes [pingpong_iters [repeats]]]\n");
    return 2;
  }
  rank = atoi(argv[1]);
  bytes = argc > 3 ? strtoull(argv[3], NULL, 10) : 67108864;
  int pp_iters = argc > 4 ? atoi(argv[4]) : 2000;
  int repeats = argc > 5 ? atoi(argv[5]) : 5;
  if ((rank != 0 && rank != 1) || bytes < 64 || pp_iters < 2 || repeats < 1 || repeats > 64) return 2;
  ncclUniqueId id;
  char tmp[4096];
  if (rank == 0) {
    NCHECK(ncclGetUniqueId(&id));
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
    FILE *f = fopen(tmp, "wb");
    BENCH_CHECK(f && fwrite(&id, sizeof id, 1, f) == 1 && fclose(f) == 0 && rename(tmp, argv[2]) == 0, "write id",
                argv[2]);
  } else {
    int ok = 0;
    for (int i = 0; i < 3000 && !ok; i++) {
      FILE *f = fopen(argv[2], "rb");
      if (f) ok = fread(&id, sizeof id, 1, f) == 1, fclose(f);
      if (!ok) usleep(10000);
    }
    BENCH_CHECK(ok, "read id", argv[2]);
  }
  NCHECK(ncclCommInitRank(&comm, 2, id, rank));
  BENCH_CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate", "");
  BENCH_CHECK(cudaMalloc((void **)&buf, bytes) == cudaSuccess && cudaMalloc(&dsmall, 16) == cudaSuccess, "cudaMalloc",
              "");
  cudaMemset(buf, rank + 1, bytes);
  /* One-sided: a window of `bytes` + 64 on each rank. */
  NCHECK(ncclMemAlloc((void **)&wmem, bytes + 64));
  cudaMemset(wmem, rank + 1, bytes + 64);
  NCHECK(ncclCommWindowRegister(comm, wmem, bytes + 64, &win, NCCL_WIN_COLL_SYMMETRIC));
  char la[64];
  double v[64];
  int iters = ((size_t)1 << 30) / bytes < 4 ? 4 : ((size_t)1 << 30) / bytes > 1000 ? 1000 : (int)(((size_t)1 << 30) / bytes);
  for (int put = 0; put < 2; put++) {
    bandwidth(put, iters, repeats, v);
    if (rank == 1) {
      check_came(put ? wmem : buf, put ? "ncclPutSignal" : "ncclRecv");
      bench_spread x = bench_stats(v, repeats);
      printf("bench=hosts_bw test=%s hosts=2 bytes=%zu iters=%d repeats=%d ", put ? "put" : "sendrecv", bytes, iters,
             repeats);
      printf(MMM("gbps", x, "%.3f"));
      printf(" ucx_tls=%s loadavg=%s\n", getenv("UCX_TLS") ? getenv("UCX_TLS") : "default", bench_loadavg(la, sizeof la));
      fflush(stdout);
    }
    pingpong(put, pp_iters, repeats, v);
    if (rank == 0) {
      bench_spread x = bench_stats(v, repeats);
      printf("bench=hosts_bw test=%s hosts=2 payload_bytes=8 iters=%d repeats=%d ", put ? "putpong" : "pingpong",
             pp_iters, repeats);
      printf(MMM("half_rtt_ns", x, "%.0f"));
      printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
      fflush(stdout);
    }
  }
  handshake(dsmall); /* neither deregisters while the other may still put */
  NCHECK(ncclCommWindowDeregister(comm, win));
  ncclMemFree(wmem);
  cudaFree(buf);
  cudaFree(dsmall);
  cudaStreamDestroy(s);
  NCHECK(ncclCommDestroy(comm));
  return 0;
}
