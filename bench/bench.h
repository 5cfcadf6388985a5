/* bench/bench.h — what every benchmark shares: a monotonic clock, and a
 * check that ends the run with the program's name, the step and a detail.
 * Define BENCH_NAME ("p2p_bw") before including it. */
#ifndef N4C_BENCH_H_
#define N4C_BENCH_H_

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Pins the calling thread to the i-th CPU it may run on, keeping its
 * mask in *old for bench_unpin. For the bare handoffs, the floor a
 * benchmark compares with: left to the scheduler, the two sides shared
 * one CPU in about half the runs on the 2-CPU CI machine, and the floor
 * read 400 ns instead of 40 (Open MPI binds its ranks to cores the same
 * way). False, and nothing changed, with fewer than two CPUs. */
static inline bool bench_pin(int i, cpu_set_t *old) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof *old, old) != 0 || CPU_COUNT(old) < 2) return false;
  int k = i % CPU_COUNT(old), n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, old) || n++ != k) continue;
    CPU_ZERO(&set);
    CPU_SET(c, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
  }
  return false;
}

static inline void bench_unpin(const cpu_set_t *old) { sched_setaffinity(0, sizeof *old, old); }

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Ends the run (exit 1) unless cond holds; `detail` is a string. */
#define BENCH_CHECK(cond, what, detail)                                              \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s: %s failed%s%s\n", BENCH_NAME, (what),                   \
              *(detail) ? ": " : "", (detail));                                      \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

/* The calls at the start of a batch timed on the stream clock behind a
 * start gate that a latency figure leaves out, timed on their own as
 * start_*: the gate lets each rank's stream go at its own moment (a host
 * function polling with usleep, or a signal to a stream worker asleep since
 * the last batch: a futex wake and a wake-up on the other CPU, tens of
 * microseconds on a VM), and the first calls absorb that skew. The loops
 * they are set beside (a bare handoff, MPI's ping-pong and MPI_Allreduce)
 * run once, past a warm-up, and never pay it. A batch of m calls leaves
 * out BENCH_WARM_CALLS, or m / 2 when that is fewer. */
#define BENCH_WARM_CALLS 8
static inline int bench_warm(int m) { return m < 2 * BENCH_WARM_CALLS ? m / 2 : BENCH_WARM_CALLS; }

/* Median, min and max of v[0..n-1] (n <= 64; v is left as it was). */
typedef struct {
  double med, min, max;
} bench_spread;

static inline bench_spread bench_stats(const double *v, int n) {
  double s[64];
  bench_spread r = {0, 0, 0};
  if (n < 1) return r;
  if (n > 64) n = 64;
  for (int i = 0; i < n; i++) { /* insertion sort of a copy */
    int j = i;
    for (; j > 0 && s[j - 1] > v[i]; j--) s[j] = s[j - 1];
    s[j] = v[i];
  }
  r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  r.min = s[0];
  r.max = s[n - 1];
  return r;
}

/* printf format and arguments of a spread: "k=MED k_min=MIN k_max=MAX". */
#define MMM(k, s, fmt) k "=" fmt " " k "_min=" fmt " " k "_max=" fmt, (s).med, (s).min, (s).max

/* The 1-, 5- and 15-minute load averages, as "a/b/c", into buf. */
static inline const char *bench_loadavg(char *buf, size_t len) {
  double l[3] = {-1, -1, -1};
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3) l[0] = l[1] = l[2] = -1;
    fclose(f);
  }
  snprintf(buf, len, "%.2f/%.2f/%.2f", l[0], l[1], l[2]);
  return buf;
}

#if !defined(NCCLSIM) && defined(CUDART_VERSION)
/* On GPUs: the copy engine's bandwidth from device 0 to device 1 in GB/s
 * (cudaMemcpyPeerAsync, peer access on), over `iters` copies of `bytes`
 * between buffers of its own: the limit a one-sided put or a send/recv
 * between the two GPUs is measured against. 0 when it cannot be measured
 * (one GPU, or no memory). Include cuda_runtime_api.h before this file. */
static inline double bench_peer_copy_gbps(size_t bytes, int iters) {
  void *src = NULL, *dst = NULL;
  cudaStream_t s = NULL;
  double gbps = 0;
  int ndev = 0, cur = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) return 0;
  cudaGetDevice(&cur);
  if (cudaSetDevice(1) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) goto out;
  if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(&src, bytes) != cudaSuccess) goto out;
  cudaError_t pe = cudaDeviceEnablePeerAccess(1, 0);
  if (pe != cudaSuccess && pe != cudaErrorPeerAccessAlreadyEnabled) goto out;
  cudaGetLastError(); /* an already-enabled peer is not an error here */
  if (cudaStreamCreate(&s) != cudaSuccess) goto out;
  cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s); /* warm-up */
  if (cudaStreamSynchronize(s) != cudaSuccess) goto out;
  double t0 = bench_now();
  for (int i = 0; i < iters; i++) cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, s);
  if (cudaStreamSynchronize(s) == cudaSuccess) gbps = (double)bytes * iters / (bench_now() - t0) / 1e9;
out:
  if (s) cudaStreamDestroy(s);
  if (src) cudaFree(src);
  if (dst) { cudaSetDevice(1); cudaFree(dst); }
  cudaSetDevice(cur);
  return gbps;
}
#endif

#endif
