/*
 * bench/coll_roofline.c — allreduce, reduce-scatter and allgather against
 * the machine's streaming bandwidth, measured in the same run.
 *
 * The roofline. In one address space, an out-of-place collective of n
 * ranks must at least read every input byte once and write every output
 * byte once. With S the size nccl-tests reports (allreduce: each rank's
 * buffer; reduce-scatter: each rank's send buffer, n blocks; allgather:
 * each rank's receive buffer, n blocks), the bytes moved at least are:
 *   allreduce       n inputs of S, n outputs of S:       2nS
 *   reduce-scatter  n inputs of S, n outputs of S/n:     (n+1)S
 *   allgather       n inputs of S/n, n outputs of S:     (n+1)S
 * The machine moves bytes at most at its all-core streaming bandwidth: one
 * thread per online CPU running a[i] += b[i] (float) over its slice of two
 * arrays whose footprint equals those bytes (12 bytes moved per element),
 * timed between the collective's repeats while the ranks wait. The roofline
 * time is the bytes over that bandwidth, and `frac` is the roofline time
 * over the collective's time (1 is the limit; the target is >= 0.7).
 *
 * A collective's time: each rank thread (rank r on device r mod the device
 * count) enqueues `iters` collectives on its stream and synchronises; the
 * time per call is the slowest rank's. Each figure is measured `repeats`
 * times, the collective and its add loop back to back, the ratio taken per
 * repeat; lines give the median and min/max over the repeats.
 *
 * The bare kernel (ncclsim only): the same collective's reads and writes
 * on the ranks' own buffers, by one plain thread per CPU with a fixed share
 * each and no synchronisation between passes, timed beside the add loop.
 * kernel_frac is the roofline time over its time (what this machine gives
 * the collective's pattern of access: outputs that another core last
 * read, n inputs and outputs streaming at once); over_kernel is its time
 * over the collective's (1: the engine costs nothing beyond the kernel).
 *
 * Small sizes: allreduce of 8 bytes (2 float32) at each rank count, time
 * per call in ns: time_ns on the stream clock, 1000 calls enqueued behind
 * a start gate (a host function on each rank's stream that returns once
 * every rank has enqueued), as bench/signal_latency times its ping-pongs,
 * past the first calls, which absorb the gate's skew between the ranks
 * (start_time_ns, bench_warm in bench.h);
 * host_time_ns on the host clock, enqueues and synchronise included;
 * ctx_switches_per_call, the process's context switches (getrusage) from
 * the gate's opening to the last call's end, per call: about 1 when the
 * two ranks' stream workers share a CPU and every handoff between them is
 * a switch (docs/ncclsim.md, "Speed"). At 2 ranks, bare_ns is the floor,
 * measured in each repeat after the ranks' calls: two threads pinned to
 * CPUs of their own (bench_pin) do what a 2-rank small allreduce does
 * with no engine (each writes its input and the call's number into a line
 * of its own, polls the other's as ncclsim does, 16 pauses then
 * sched_yield, and adds them), and over_bare is time_ns over it, per
 * repeat. bench/latency-vs-mpi.sh sets them beside MPI_Allreduce of 8
 * bytes, measured in the same run.
 *
 * Output: key=value lines. Usage:
 *   coll_roofline [min_bytes [max_bytes [rank counts [repeats]]]]
 *   defaults: 1048576 16777216 2,4,8 5 (sizes go up by 4x); max_bytes 0:
 *   the 8-byte allreduce alone
 */
#include "config.h" /* _GNU_SOURCE, for bench_pin (bench.h) */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#define BENCH_NAME "coll_roofline"
#include "bench.h"

#define MAX_RANKS 64
#define MAX_REPEATS 64
#define MAX_THREADS 64

typedef enum { ALLREDUCE, REDUCESCATTER, ALLGATHER, NCOLLS } coll_t;
static const char *const coll_names[] = {"allreduce", "reducescatter", "allgather"};

static ncclUniqueId id;
static pthread_barrier_t bar;
static int nranks, iters;
static size_t max_bytes = (size_t)16 << 20, cur_bytes; /* cur_bytes 0: the ranks leave */
static coll_t cur_coll;
static double rank_secs[MAX_RANKS], rank_stream_secs[MAX_RANKS], rank_start_secs[MAX_RANKS];
static _Atomic int gate_open; /* the small sizes' start gate (below) */
static float *k_send[MAX_RANKS], *k_recv[MAX_RANKS]; /* the ranks' buffers, for the bare kernel */

#define CHECK(cond, what) BENCH_CHECK(cond, what, "")
#define NCHECK(call, what)                                                           \
  do {                                                                               \
    ncclResult_t r_ = (call);                                                        \
    BENCH_CHECK(r_ == ncclSuccess, what, ncclGetErrorString(r_));                    \
  } while (0)

/* The size S of coll at `bytes`, as element counts of the call. */
static size_t call_count(coll_t c, size_t bytes, int n) {
  size_t elems = bytes / sizeof(float);
  return c == ALLREDUCE ? elems : elems / (size_t)n;
}

/* The bytes an out-of-place coll of n ranks moves at least (see above). */
static double min_traffic(coll_t c, size_t bytes, int n) {
  return c == ALLREDUCE ? 2.0 * n * (double)bytes : (n + 1.0) * (double)bytes;
}

static void run_coll(coll_t c, const float *send, float *recv, size_t count, ncclComm_t comm, cudaStream_t s) {
  switch (c) {
  case ALLREDUCE: NCHECK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, s), "ncclAllReduce"); break;
  case REDUCESCATTER:
    NCHECK(ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, comm, s), "ncclReduceScatter");
    break;
  default: NCHECK(ncclAllGather(send, recv, count, ncclFloat32, comm, s), "ncclAllGather"); break;
  }
}

static void gate_fn(void *arg) {
  (void)arg;
  while (!atomic_load(&gate_open)) usleep(20);
}

static void *rank_main(void *arg) {
  int rank = (int)(long)arg, ndev = 1;
  cudaGetDeviceCount(&ndev);
  ncclComm_t comm;
  cudaStream_t s;
  float *send, *recv;
  CHECK(cudaSetDevice(rank % ndev) == cudaSuccess, "cudaSetDevice");
  NCHECK(ncclCommInitRank(&comm, nranks, id, rank), "ncclCommInitRank");
  size_t buf_bytes = max_bytes < 1024 ? 1024 : max_bytes;
  CHECK(cudaMalloc((void **)&send, buf_bytes) == cudaSuccess, "cudaMalloc");
  CHECK(cudaMalloc((void **)&recv, buf_bytes) == cudaSuccess, "cudaMalloc");
  /* Touch every page; small integers keep every sum exact. */
  CHECK(cudaMemset(send, 0, buf_bytes) == cudaSuccess && cudaMemset(recv, 0, buf_bytes) == cudaSuccess,
        "cudaMemset");
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  k_send[rank] = send;
  k_recv[rank] = recv;
  cudaEvent_t ev[3];
  for (int e = 0; e < 3; e++) CHECK(cudaEventCreate(&ev[e]) == cudaSuccess, "cudaEventCreate");
  for (;;) {
    pthread_barrier_wait(&bar); /* main set cur_bytes and cur_coll */
    if (!cur_bytes) break;
    size_t count = call_count(cur_coll, cur_bytes, nranks);
    run_coll(cur_coll, send, recv, count, comm, s); /* warm-up; the first one connects */
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    pthread_barrier_wait(&bar);
    double t0 = bench_now();
    for (int i = 0; i < iters; i++) run_coll(cur_coll, send, recv, count, comm, s);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    rank_secs[rank] = (bench_now() - t0) / iters;
    if (cur_bytes < 1024) {
      /* Again behind a start gate: every rank's stream first runs a host
       * function that returns once main opens the gate, which it does when
       * every rank has enqueued its calls; events around the calls time
       * them on the stream, while the host threads wait (as
       * bench/signal_latency times its ping-pongs). */
      pthread_barrier_wait(&bar);
      CHECK(cudaLaunchHostFunc(s, gate_fn, NULL) == cudaSuccess, "cudaLaunchHostFunc");
      CHECK(cudaEventRecord(ev[0], s) == cudaSuccess, "cudaEventRecord");
      int warm = bench_warm(iters); /* the calls that absorb the gate's skew (bench.h), timed apart */
      for (int i = 0; i < iters; i++) {
        if (i == warm) CHECK(cudaEventRecord(ev[2], s) == cudaSuccess, "cudaEventRecord");
        run_coll(cur_coll, send, recv, count, comm, s);
      }
      CHECK(cudaEventRecord(ev[1], s) == cudaSuccess, "cudaEventRecord");
      pthread_barrier_wait(&bar); /* main opens the gate */
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, ev[2], ev[1]) == cudaSuccess, "cudaEventElapsedTime");
      rank_stream_secs[rank] = ms * 1e-3 / (iters - warm);
      CHECK(cudaEventElapsedTime(&ms, ev[0], ev[2]) == cudaSuccess, "cudaEventElapsedTime");
      rank_start_secs[rank] = warm ? ms * 1e-3 / warm : 0;
    }
    pthread_barrier_wait(&bar); /* main reads the time, then runs its add loop while we wait */
  }
  for (int e = 0; e < 3; e++) cudaEventDestroy(ev[e]);
  cudaStreamDestroy(s);
  cudaFree(send);
  cudaFree(recv);
  NCHECK(ncclCommDestroy(comm), "ncclCommDestroy");
  return NULL;
}

/* ---- the all-core add loop ---- */

static float *add_a, *add_b;
static int nthreads;
typedef struct {
  size_t lo, hi;
  int reps;
} add_slice;

/* a[i] += b[i] in strips of 64 bytes, which gcc -O2 vectorises (its cheap
 * cost model leaves a loop of unknown trip count scalar, and a scalar loop
 * would measure the core, not the memory). */
static void add_strips(float *restrict a, const float *restrict b, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (size_t j = 0; j < 16; j++) a[i + j] += b[i + j];
  for (; i < n; i++) a[i] += b[i];
}

static void *add_thread(void *arg) {
  add_slice *sl = arg;
  for (int r = 0; r < sl->reps; r++) {
    add_strips(add_a + sl->lo, add_b + sl->lo, sl->hi - sl->lo);
    __asm__ __volatile__("" ::: "memory");
  }
  return NULL;
}

/* Bytes per second of nthreads threads running a[i] += b[i] over `elems`
 * floats of each array (12 bytes per element), reps passes after one
 * untimed pass. */
static double all_core_bw(size_t elems, int reps) {
  pthread_t th[MAX_THREADS];
  add_slice sl[MAX_THREADS];
  double t0 = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass) t0 = bench_now();
    for (int t = 0; t < nthreads; t++) {
      sl[t] = (add_slice){elems * t / nthreads, elems * (t + 1) / nthreads, pass ? reps : 1};
      CHECK(pthread_create(&th[t], NULL, add_thread, &sl[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  }
  return 12.0 * (double)elems * reps / (bench_now() - t0);
}

#ifdef NCCLSIM
static const bool have_kernel = true;
#else
static const bool have_kernel = false; /* the buffers are GPU memory */
#endif

/* ---- the bare kernel ----
 * The collective's own reads and writes, on the ranks' buffers, with no
 * engine: nthreads threads each take a fixed share of the result and run
 * `reps` passes over it with no synchronisation at all. With ncclsim's
 * ranks in this process its buffers are host memory. Its time is what the
 * machine gives this pattern of access (outputs written from another
 * core's cache, four streams or more at once), which the add loop, each
 * thread on its own slice of two arrays, does not show. */
typedef struct {
  coll_t c;
  size_t lo, hi, count; /* share of the result in elements; count: elements per block */
  int reps;
} kernel_slice;

/* Strips of 16 floats (64 bytes), a share and a block being whole strips
 * (1 KiB per rank and up, float32). A strip is held in four vector
 * variables, in registers, as ncclsim's fused kernels hold it (sim/coll/
 * reduce.c): in an array gcc -O2 kept it on the stack, and this loop also
 * divided per strip to find its block; both made the bare kernel slower
 * than the engine's own jobs. */
typedef float v4f __attribute__((vector_size(16)));

static void *kernel_thread(void *arg) {
  kernel_slice *k = arg;
  int n = nranks;
  for (int rep = 0; rep < k->reps; rep++) {
    for (size_t i = k->lo; i < k->hi;) {
      /* The block of a reduce-scatter's input, an allgather's output. */
      size_t b = i / k->count, at = i % k->count, end = (b + 1) * k->count < k->hi ? (b + 1) * k->count : k->hi;
      for (; i < end; i += 16, at += 16) {
        if (k->c == ALLGATHER) {
          for (int r = 0; r < n; r++) memcpy(k_recv[r] + i, k_send[b] + at, 64);
          continue;
        }
        v4f a0, a1, a2, a3, x;
        memcpy(&a0, k_send[0] + i, 16);
        memcpy(&a1, k_send[0] + i + 4, 16);
        memcpy(&a2, k_send[0] + i + 8, 16);
        memcpy(&a3, k_send[0] + i + 12, 16);
        for (int r = 1; r < n; r++) {
          const float *in = k_send[r] + i;
          memcpy(&x, in, 16);
          a0 += x;
          memcpy(&x, in + 4, 16);
          a1 += x;
          memcpy(&x, in + 8, 16);
          a2 += x;
          memcpy(&x, in + 12, 16);
          a3 += x;
        }
        for (int r = 0; r < (k->c == ALLREDUCE ? n : 1); r++) {
          float *out = k->c == ALLREDUCE ? k_recv[r] + i : k_recv[b] + at;
          memcpy(out, &a0, 16);
          memcpy(out + 4, &a1, 16);
          memcpy(out + 8, &a2, 16);
          memcpy(out + 12, &a3, 16);
        }
      }
    }
    __asm__ __volatile__("" ::: "memory");
  }
  return NULL;
}

/* Seconds per pass of the bare kernel of coll at `bytes`. */
static double bare_kernel(coll_t c, size_t bytes, int reps) {
  pthread_t th[MAX_THREADS];
  kernel_slice sl[MAX_THREADS];
  size_t count = call_count(c, bytes, nranks), total = c == ALLREDUCE ? count : count * (size_t)nranks;
  double t0 = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass) t0 = bench_now();
    for (int t = 0; t < nthreads; t++) {
      sl[t] = (kernel_slice){c, total * t / nthreads & ~(size_t)15, total * (t + 1) / nthreads & ~(size_t)15,
                             count, pass ? reps : 1};
      CHECK(pthread_create(&th[t], NULL, kernel_thread, &sl[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  }
  return (bench_now() - t0) / reps;
}

/* ---- the 2-rank 8-byte allreduce's floor (bare_ns, above) ----
 * Each thread's input for call i goes into its line i % 2: a thread that
 * saw its peer's call i knows the peer is done with its line of i - 1.
 * BARE_CALLS calls or BARE_SECS seconds, whichever ends first (a thread
 * pinned beside another program's may wait milliseconds a call): thread 0
 * sets the last call, two past its own, which thread 1 has not passed. */
enum { BARE_CALLS = 100000 };
#define BARE_SECS 0.02
typedef struct {
  _Alignas(64) _Atomic int seq; /* the call whose input v holds */
  float v[2];
} bare_line;
static bare_line bare_lines[2][2];
static _Atomic int bare_last, bare_pinned;
static double bare_secs;
static float bare_sink[2];

static void *bare_thread(void *arg) {
  int me = (int)(long)arg, warm = BENCH_WARM_CALLS;
  cpu_set_t old;
  if (bench_pin(me, &old)) atomic_fetch_add(&bare_pinned, 1);
  float acc = 0;
  double t0 = 0;
  int i = 1;
  for (; i <= atomic_load(&bare_last); i++) {
    if (i == warm + 1) t0 = bench_now();
    if (me == 0 && i > warm && i % 256 == 0 && bench_now() - t0 > BARE_SECS) atomic_store(&bare_last, i + 2);
    bare_line *mine = &bare_lines[me][i % 2], *peer = &bare_lines[!me][i % 2];
    mine->v[0] = (float)me;
    mine->v[1] = (float)i;
    atomic_store_explicit(&mine->seq, i, memory_order_release);
    for (int k = 0; atomic_load_explicit(&peer->seq, memory_order_acquire) != i; k++) {
      if (k >= 16) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
      else __builtin_ia32_pause();
#endif
    }
    acc += mine->v[0] + peer->v[0] + mine->v[1] + peer->v[1];
  }
  if (me == 0) bare_secs = (bench_now() - t0) / (i - 1 - warm);
  bare_sink[me] = acc;
  return NULL;
}

/* Seconds per call of the floor, past its first BENCH_WARM_CALLS. */
static double bare_allreduce8(void) {
  pthread_t th[2];
  memset(bare_lines, 0, sizeof bare_lines);
  atomic_store(&bare_last, BARE_CALLS);
  atomic_store(&bare_pinned, 0);
  for (long t = 0; t < 2; t++) CHECK(pthread_create(&th[t], NULL, bare_thread, (void *)t) == 0, "pthread_create");
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  return bare_secs;
}

static long ctx_switches(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_nvcsw + ru.ru_nivcsw : 0;
}

static int clampi(double v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : (int)v; }

/* One collective at one size: `repeats` rounds of the ranks' timing and the
 * add loop over the same bytes. */
static void measure(coll_t c, size_t bytes, int repeats) {
  double traffic = min_traffic(c, bytes, nranks);
  double t_coll[MAX_REPEATS], bw[MAX_REPEATS], frac[MAX_REPEATS], us[MAX_REPEATS];
  double kfrac[MAX_REPEATS], of_kernel[MAX_REPEATS];
  /* About 50 ms of collectives per repeat at 25 GB/s; at most 1000 calls (a GPU's
   * stream holds about that many). */
  iters = bytes < 1024 ? 1000 : clampi(25e9 * 0.05 / traffic, 3, 1000);
  /* The add loop's arrays: footprint = the collective's bytes. */
  size_t elems = (size_t)(traffic / 2 / sizeof(float));
  int reps = clampi(25e9 * 0.05 / (1.5 * traffic), 2, 1000);
  cur_coll = c;
  cur_bytes = bytes;
  double host_ns[MAX_REPEATS], start_ns[MAX_REPEATS], switches[MAX_REPEATS], bare_ns[MAX_REPEATS], over_bare[MAX_REPEATS];
  long sw0 = 0;
  bool bare = bytes < 1024 && nranks == 2;
  for (int rep = 0; rep < repeats; rep++) {
    pthread_barrier_wait(&bar); /* go */
    pthread_barrier_wait(&bar); /* warmed up */
    if (bytes < 1024) {
      pthread_barrier_wait(&bar); /* timed on the host clock */
      pthread_barrier_wait(&bar); /* enqueued behind the gate */
      sw0 = ctx_switches();
      atomic_store(&gate_open, 1);
    }
    pthread_barrier_wait(&bar); /* timed */
    atomic_store(&gate_open, 0);
    switches[rep] = (double)(ctx_switches() - sw0) / iters;
    t_coll[rep] = 0;
    host_ns[rep] = 0;
    start_ns[rep] = 0;
    for (int r = 0; r < nranks; r++) {
      if (rank_start_secs[r] * 1e9 > start_ns[rep]) start_ns[rep] = rank_start_secs[r] * 1e9;
      double t = bytes < 1024 ? rank_stream_secs[r] : rank_secs[r];
      if (t > t_coll[rep]) t_coll[rep] = t;
      if (rank_secs[r] * 1e9 > host_ns[rep]) host_ns[rep] = rank_secs[r] * 1e9;
    }
    us[rep] = t_coll[rep] * 1e6;
    if (bare) {
      bare_ns[rep] = bare_allreduce8() * 1e9;
      over_bare[rep] = bare_ns[rep] > 0 ? t_coll[rep] * 1e9 / bare_ns[rep] : 0;
    }
    if (bytes >= 1024) {
      bw[rep] = all_core_bw(elems, reps);
      frac[rep] = traffic / bw[rep] / t_coll[rep];
      double tk = have_kernel ? bare_kernel(c, bytes, iters) : 0;
      kfrac[rep] = tk > 0 ? traffic / bw[rep] / tk : 0;
      of_kernel[rep] = tk / t_coll[rep];
    }
  }
  char la[64];
  bench_spread x = bench_stats(us, repeats);
  if (bytes < 1024) {
    for (int rep = 0; rep < repeats; rep++) us[rep] *= 1000;
    x = bench_stats(us, repeats);
    bench_spread h = bench_stats(host_ns, repeats), st = bench_stats(start_ns, repeats);
    bench_spread sw = bench_stats(switches, repeats);
    printf("bench=coll_roofline coll=%s ranks=%d bytes=%zu iters=%d repeats=%d time_ns=%.0f time_ns_min=%.0f "
           "time_ns_max=%.0f host_time_ns=%.0f host_time_ns_min=%.0f host_time_ns_max=%.0f warm_calls=%d "
           "start_time_ns=%.0f start_time_ns_min=%.0f start_time_ns_max=%.0f ",
           coll_names[c], nranks, bytes, iters, repeats, x.med, x.min, x.max, h.med, h.min, h.max, bench_warm(iters),
           st.med, st.min, st.max);
    printf(MMM("ctx_switches_per_call", sw, "%.2f"));
    printf(" ");
    if (bare) {
      bench_spread b = bench_stats(bare_ns, repeats), o = bench_stats(over_bare, repeats);
      printf(MMM("bare_ns", b, "%.0f"));
      printf(" bare_pinned=%d ", atomic_load(&bare_pinned) == 2);
      printf(MMM("over_bare", o, "%.2f"));
      printf(" ");
    }
    printf("loadavg=%s\n", bench_loadavg(la, sizeof la));
    fflush(stdout);
    return;
  }
  bench_spread y = bench_stats(bw, repeats), z = bench_stats(frac, repeats);
  bench_spread kf = bench_stats(kfrac, repeats), ok = bench_stats(of_kernel, repeats);
  printf("bench=coll_roofline coll=%s ranks=%d bytes=%zu min_traffic_bytes=%.0f iters=%d repeats=%d "
         "time_us=%.1f time_us_min=%.1f time_us_max=%.1f allcore_gbps=%.2f allcore_gbps_min=%.2f "
         "allcore_gbps_max=%.2f allcore_threads=%d roofline_us=%.1f frac=%.3f frac_min=%.3f frac_max=%.3f "
         "target_frac_min=0.7 ",
         coll_names[c], nranks, bytes, traffic, iters, repeats, x.med, x.min, x.max, y.med / 1e9, y.min / 1e9,
         y.max / 1e9, nthreads, traffic / y.med * 1e6, z.med, z.min, z.max);
  if (have_kernel)
    printf("kernel_frac=%.3f kernel_frac_min=%.3f kernel_frac_max=%.3f over_kernel=%.3f over_kernel_min=%.3f "
           "over_kernel_max=%.3f ",
           kf.med, kf.min, kf.max, ok.med, ok.min, ok.max);
  printf("loadavg=%s\n", bench_loadavg(la, sizeof la));
  fflush(stdout);
}

int main(int argc, char **argv) {
  size_t min_bytes = (size_t)1 << 20;
  int repeats = 5;
  if (argc > 1) min_bytes = strtoull(argv[1], NULL, 0);
  if (argc > 2) max_bytes = strtoull(argv[2], NULL, 0);
  const char *list = argc > 3 ? argv[3] : "2,4,8";
  if (argc > 4) repeats = atoi(argv[4]);
  BENCH_CHECK(min_bytes >= 1024 && (max_bytes >= min_bytes || !max_bytes), "sizes",
              "1024 <= min_bytes <= max_bytes, or max_bytes 0");
  BENCH_CHECK(repeats >= 1 && repeats <= MAX_REPEATS, "repeats", "1 to 64");
  int counts[16], ncounts = 0;
  for (char *end; *list && ncounts < 16; list = *end ? end + 1 : end) {
    long v = strtol(list, &end, 10);
    BENCH_CHECK(end != list && v >= 2 && v <= MAX_RANKS, "rank counts", "2 to 64, e.g. 2,4,8");
    counts[ncounts++] = (int)v;
  }
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  nthreads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
  int maxn = 0;
  for (int c = 0; c < ncounts; c++) maxn = counts[c] > maxn ? counts[c] : maxn;
  /* The add loop's arrays, for the largest footprint: 2n x max_bytes. */
  size_t add_elems = (size_t)(min_traffic(ALLREDUCE, max_bytes, maxn) / 2 / sizeof(float)) + 1;
  add_a = malloc(add_elems * sizeof(float));
  add_b = malloc(add_elems * sizeof(float));
  CHECK(add_a && add_b, "malloc");
  for (size_t i = 0; i < add_elems; i++) add_a[i] = 0, add_b[i] = 1;
#ifdef NCCLSIM
  const char *backend = "ncclsim";
#else
  const char *backend = "nccl";
#endif
  char la[64];
  double t_start = bench_now();
  printf("bench=coll_roofline backend=%s start cpus=%ld min_bytes=%zu max_bytes=%zu repeats=%d loadavg=%s\n",
         backend, ncpu, min_bytes, max_bytes, repeats, bench_loadavg(la, sizeof la));
  fflush(stdout);
  for (int k = 0; k < ncounts; k++) {
    nranks = counts[k];
    pthread_t th[MAX_RANKS];
    NCHECK(ncclGetUniqueId(&id), "ncclGetUniqueId");
    pthread_barrier_init(&bar, NULL, (unsigned)nranks + 1);
    for (long r = 0; r < nranks; r++) pthread_create(&th[r], NULL, rank_main, (void *)r);
    measure(ALLREDUCE, 8, repeats);
    for (size_t bytes = min_bytes; max_bytes && bytes <= max_bytes; bytes *= 4)
      for (coll_t c = ALLREDUCE; c < NCOLLS; c++) measure(c, bytes, repeats);
    cur_bytes = 0;
    pthread_barrier_wait(&bar);
    for (int r = 0; r < nranks; r++) pthread_join(th[r], NULL);
    pthread_barrier_destroy(&bar);
  }
  printf("bench=coll_roofline backend=%s summary wall_s=%.1f loadavg=%s\n", backend, bench_now() - t_start,
         bench_loadavg(la, sizeof la));
  free(add_a);
  free(add_b);
  return 0;
}
