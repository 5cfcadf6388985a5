/*
 * bench/mpi_peer.c — the Open MPI peer of bench/procs_bw: the same three
 * measurements between MPI processes, in the same key=value format.
 *
 *  sendrecv   (at -np 2) rank 0 MPI_Send -> rank 1 MPI_Recv of `bytes`
 *             (64 MiB) between malloc'd, touched buffers, GB/s as the
 *             receiver sees it (from a barrier to the last receive).
 *  pingpong   (at -np 2) 8-byte MPI_Send/MPI_Recv ping-pong, half round
 *             trip in ns (the first round trip untimed).
 *  allreduce8 (at any -np) MPI_Allreduce of 8 bytes (two float32), time
 *             per call over 1000 calls.
 *  allreduce  (at any -np) MPI_Allreduce, float32 sum, out of place,
 *             `bytes` per rank: busbw = algbw * 2(n-1)/n, algbw from the
 *             slowest rank.
 *
 * Each is measured `repeats` times; lines give the median and min/max,
 * with the same iteration counts as procs_bw for the same arguments.
 * Usage: mpirun -np 2 bench/mpi_peer [bytes [pingpong_iters [repeats]]]
 *        (defaults 67108864 10000 7); -np 4 for allreduce at 4 processes.
 *        As root: mpirun --allow-run-as-root --oversubscribe ...
 */
#include "config.h" /* _GNU_SOURCE, for bench_pin (bench.h) */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "mpi_peer"
#include "bench.h"

#define MAX_REPEATS 64

static int rank, size;

#define MCHECK(call)                                                   \
  do {                                                                 \
    int rc_ = (call);                                                  \
    if (rc_ != MPI_SUCCESS) {                                          \
      char msg_[MPI_MAX_ERROR_STRING];                                 \
      int len_ = 0;                                                    \
      MPI_Error_string(rc_, msg_, &len_);                              \
      fprintf(stderr, "mpi_peer: rank %d: %s: %s\n", rank, #call, msg_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                    \
    }                                                                  \
  } while (0)

static int clampi(size_t v, int lo, int hi) { return v < (size_t)lo ? lo : v > (size_t)hi ? hi : (int)v; }


int main(int argc, char **argv) {
  size_t bytes = (size_t)64 << 20;
  int pp_iters = 10000, repeats = 7;
  MCHECK(MPI_Init(&argc, &argv));
  MCHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MCHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (argc > 1) bytes = strtoull(argv[1], NULL, 0);
  if (argc > 2) pp_iters = atoi(argv[2]);
  if (argc > 3) repeats = atoi(argv[3]);
  if (bytes < 1024 || bytes % 64 || pp_iters < 2 || repeats < 1 || repeats > MAX_REPEATS || size < 2) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np N (N >= 2) mpi_peer [bytes (>= 1024, a multiple of 64) "
                      "[pingpong_iters (>= 2) [repeats (1-64)]]]\n");
    MPI_Finalize();
    return 2;
  }
  char la[64];
  double v[MAX_REPEATS] = {0};
  double t_start = bench_now();
  char *a = malloc(bytes), *b = malloc(bytes);
  BENCH_CHECK(a && b, "malloc", "");
  memset(a, rank + 1, bytes); /* touch every page */
  memset(b, 0, bytes);

  if (size == 2) {
    /* sendrecv: rank 0 -> rank 1, timed by the receiver. */
    int iters = clampi(((size_t)1 << 30) / bytes, 4, 1000);
    MPI_Datatype chunk; /* bytes may pass INT_MAX: count in 64-byte units */
    MCHECK(MPI_Type_contiguous(64, MPI_BYTE, &chunk));
    MCHECK(MPI_Type_commit(&chunk));
    int n = (int)(bytes / 64);
    for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up */
      MCHECK(MPI_Barrier(MPI_COMM_WORLD));
      double t0 = bench_now();
      for (int i = 0; i < (rep < 0 ? 1 : iters); i++) {
        if (rank == 0) MCHECK(MPI_Send(a, n, chunk, 1, 0, MPI_COMM_WORLD));
        else MCHECK(MPI_Recv(b, n, chunk, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      }
      if (rep >= 0) v[rep] = bytes / ((bench_now() - t0) / iters) / 1e9;
    }
    MCHECK(MPI_Type_free(&chunk));
    if (rank == 1) {
      BENCH_CHECK(b[0] == 1 && b[bytes - 1] == 1, "MPI_Recv", "the bytes received are not the sender's");
      MCHECK(MPI_Send(v, repeats, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD));
    } else {
      MCHECK(MPI_Recv(v, repeats, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      bench_spread x = bench_stats(v, repeats);
      printf("bench=mpi_peer test=sendrecv procs=2 bytes=%zu iters=%d repeats=%d ", bytes, iters, repeats);
      printf(MMM("gbps", x, "%.3f"));
      printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
      fflush(stdout);
    }

    /* pingpong: 8 bytes, rank 0 first; the first round trip is untimed. */
    char msg[8] = {0};
    int peer = 1 - rank;
    for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up, 1000 round trips */
      int m = rep < 0 ? (pp_iters < 1000 ? pp_iters : 1000) : pp_iters;
      MCHECK(MPI_Barrier(MPI_COMM_WORLD));
      double t0 = 0;
      for (int i = 0; i < m; i++) {
        if (i == 1) t0 = bench_now();
        if (rank == 0) {
          MCHECK(MPI_Send(msg, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
          MCHECK(MPI_Recv(msg, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
          MCHECK(MPI_Recv(msg, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
          MCHECK(MPI_Send(msg, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
        }
      }
      if (rep >= 0) v[rep] = (bench_now() - t0) / (2.0 * (m - 1)) * 1e9;
    }
    if (rank == 0) {
      bench_spread x = bench_stats(v, repeats);
      printf("bench=mpi_peer test=pingpong procs=2 payload_bytes=8 iters=%d repeats=%d ", pp_iters, repeats);
      printf(MMM("half_rtt_ns", x, "%.0f"));
      printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
      fflush(stdout);
    }
  }

  /* allreduce8: 8 bytes (two floats), time per call, at every process count */
  {
    enum { SMALL_ITERS = 1000 };
    float in[2] = {(float)rank, 1}, out[2];
    for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up */
      MCHECK(MPI_Barrier(MPI_COMM_WORLD));
      double t0 = bench_now();
      for (int i = 0; i < SMALL_ITERS; i++) MCHECK(MPI_Allreduce(in, out, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      double t = (bench_now() - t0) / SMALL_ITERS, slowest = 0;
      MCHECK(MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
      if (rep >= 0) v[rep] = slowest * 1e9;
    }
    BENCH_CHECK(out[1] == (float)size, "MPI_Allreduce", "wrong sum");
    if (rank == 0) {
      bench_spread x = bench_stats(v, repeats);
      printf("bench=mpi_peer test=allreduce8 procs=%d bytes=8 iters=%d repeats=%d ", size, SMALL_ITERS, repeats);
      printf(MMM("time_ns", x, "%.0f"));
      printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
      fflush(stdout);
    }
  }

  /* allreduce at every process count */
  {
    size_t count = bytes / sizeof(float);
    int iters = clampi(((size_t)512 << 20) / bytes, 4, 1000);
    float *send = (float *)a, *recv = (float *)b;
    for (size_t i = 0; i < count; i++) send[i] = (float)(rank + 1);
    /* MPI_SUM wants a predefined type, so the count is an int. */
    BENCH_CHECK(count <= 0x7fffffff, "bytes", "at most 8 GiB for the allreduce");
    int n = (int)count;
    double f = 2.0 * (size - 1) / size;
    MCHECK(MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD)); /* warm-up */
    for (int rep = 0; rep < repeats; rep++) {
      MCHECK(MPI_Barrier(MPI_COMM_WORLD));
      double t0 = bench_now();
      for (int i = 0; i < iters; i++) MCHECK(MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      double t = (bench_now() - t0) / iters, slowest = 0;
      MCHECK(MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
      v[rep] = bytes / slowest / 1e9 * f;
    }
    float want = (float)(size * (size + 1) / 2);
    BENCH_CHECK(recv[0] == want && recv[count - 1] == want, "MPI_Allreduce", "wrong sum");
    if (rank == 0) {
      bench_spread x = bench_stats(v, repeats);
      printf("bench=mpi_peer test=allreduce procs=%d bytes=%zu iters=%d repeats=%d ", size, bytes, iters, repeats);
      printf(MMM("busbw_gbps", x, "%.3f"));
      printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
      fflush(stdout);
    }
  }
  free(a);
  free(b);
  if (rank == 0)
    printf("bench=mpi_peer summary procs=%d wall_s=%.1f loadavg=%s\n", size, bench_now() - t_start,
           bench_loadavg(la, sizeof la));
  MPI_Finalize();
  return 0;
}
