/*
 * bench/procs_bw.c — ncclsim with ranks as processes of one fork tree
 * (ncclsimProcessesInit): send/recv, put_signal latency and allreduce
 * between forked processes, each beside a peer measured in the same run.
 *
 *  sendrecv   rank 0 ncclSend -> rank 1 ncclRecv, `bytes` (64 MiB) between
 *             cudaMalloc buffers of two processes, GB/s as the receiver
 *             sees it; peer: single-thread memcpy between two other
 *             buffers of the same size (malloc, touched once), in the
 *             parent while the ranks wait.
 *  put_signal ncclPutSignal (8 bytes) -> ncclWaitSignal ping-pong between
 *             two processes, half round trip in ns (stream clock: events
 *             on rank 0's stream around each chunk, as bench/signal_latency,
 *             whose start gate it copies); peer: the same two processes
 *             ping-pong a counter in MAP_SHARED memory with atomics,
 *             spinning (pause, then sched_yield, as NCCLSIM_SPIN) and then
 *             sleeping on a shared futex, as ncclsim's own waiters do.
 *             Each process pins itself to a CPU of its own for the bare
 *             handoff (bench_pin; bare_pinned=0 when it could not):
 *             left to the scheduler, the figure was bimodal on 2 CPUs,
 *             tens of ns on CPUs of their own, 0.4-2 us sharing one.
 *  sendrecv8  ncclSend -> ncclRecv ping-pong of 8 bytes between the same
 *             two processes, in the same run as put_signal; same peer.
 *  allreduce8 ncclAllReduce of 8 bytes (two float32) between two
 *             processes, time per call: time_ns on the stream clock,
 *             1000 calls behind a start gate (as bench/coll_roofline times
 *             the threads'); host_time_ns on the host clock, 1000 calls
 *             then a synchronise. bench/latency-vs-mpi.sh sets time_ns
 *             beside MPI_Allreduce.
 *  allreduce  float32 sum, out of place, `bytes` per rank, at each process
 *             count (2 and 4): busbw = algbw * 2(n-1)/n, algbw from the
 *             slowest rank; peer: the machine's all-core streaming bandwidth,
 *             one thread per online CPU running a[i] += b[i] over its slice
 *             of two buffers of `bytes` (12 bytes moved per element), in the
 *             parent while the ranks wait. traffic_over_allcore: the
 *             allreduce's own memory traffic (it reads n inputs and writes
 *             n outputs: 2n x bytes a call) over the add loop's.
 *
 * Each figure is measured `repeats` times; a repeat times the ncclsim side
 * and then its peer back to back, and the ratio is taken per repeat. Lines
 * give the median and the min/max over the repeats, and the load average.
 *
 * Output: key=value lines, one per test (and process count).
 * Usage: procs_bw [bytes [pingpong_iters [repeats [allreduce process counts]]]]
 *        defaults: 67108864 10000 7 2,4. Quick: procs_bw 1048576 2000 3 2,4
 */
#include "config.h" /* _GNU_SOURCE, for bench_pin (bench.h) */

#include <nccl.h>

#ifndef NCCLSIM
#include <stdio.h>
/* Ranks as processes are ncclsim's (local.mk builds this only there). */
int main(void) {
  printf("bench=procs_bw skipped=\"ncclsim only\"\n");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <ncclsim.h>
#define BENCH_NAME "procs_bw"
#include "bench.h"

#define MAX_PROCS 16
#define MAX_REPEATS 64
#define MAX_THREADS 64

/* A barrier of processes: a generation counter that waiters sleep on
 * (shared futex, 100 ms at a time so a failure is noticed). */
typedef struct {
  _Atomic uint32_t count, gen;
} pbarrier;

/* Everything the processes share: MAP_SHARED, made before the forks. */
typedef struct {
  ncclUniqueId id, gate_id;
  pbarrier all;   /* the ranks and the parent */
  pbarrier ranks; /* the ranks alone */
  _Atomic int failed;
  char why[MAX_PROCS][256];
  double secs[MAX_PROCS]; /* this repeat, per rank */
  /* This repeat, rank 0, per half round trip (put_signal, sendrecv). */
  double t_stream[2], t_start[2], t_gated[2], t_bare;
  double t_small;                         /* this repeat: the slowest rank's 8-byte allreduce, per call */
  double small_host[MAX_PROCS];           /* this repeat, per rank: the same on the host clock */
  double small_start[MAX_PROCS];          /* this repeat, per rank: the first calls past the gate (bench_warm) */
  _Atomic int small_gate;                 /* the 8-byte allreduces' start gate (below) */
  _Atomic uint32_t turn, sleepers;  /* the bare ping-pong */
  _Atomic int bare_unpinned;        /* a rank could not pin itself for it */
} shared_box;

static shared_box *box;
static size_t bytes = (size_t)64 << 20;
static int pp_iters = 10000, repeats = 7;
static int my_rank = -1; /* -1: the parent */
static pid_t kids[MAX_PROCS];
static int nkids;
static pid_t parent_pid;

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts) {
  return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0); /* shared: across processes */
}

/* A rank's failed check: recorded for the parent, which prints it. */
static void child_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(box->why[my_rank], sizeof box->why[my_rank], fmt, ap);
  va_end(ap);
  atomic_store(&box->failed, 1);
  atomic_fetch_add(&box->all.gen, 1);
  atomic_fetch_add(&box->ranks.gen, 1);
  futex(&box->all.gen, FUTEX_WAKE, INT_MAX, NULL);
  futex(&box->ranks.gen, FUTEX_WAKE, INT_MAX, NULL);
  _exit(1);
}

#define CCHECK(cond, ...)                    \
  do {                                       \
    if (!(cond)) child_fail(__VA_ARGS__);    \
  } while (0)
#define NCHECK(call, comm)                                                                         \
  do {                                                                                             \
    ncclResult_t r_ = (call);                                                                      \
    CCHECK(r_ == ncclSuccess, "%s: %s: %s", #call, ncclGetErrorString(r_), ncclGetLastError(comm)); \
  } while (0)
#define SYNC(s, comm)                                                                                \
  do {                                                                                               \
    cudaError_t e_ = cudaStreamSynchronize(s);                                                       \
    CCHECK(e_ == cudaSuccess, "cudaStreamSynchronize: %s: %s", cudaGetErrorString(e_), ncclGetLastError(comm)); \
  } while (0)

/* The parent: has a rank exited (or died)? Peeks only, reaps nothing.
 * Returns its index, or -1; *si says how. */
static int parent_watch(siginfo_t *si) {
  for (int k = 0; k < nkids; k++) {
    si->si_pid = 0;
    if (waitid(P_PID, (id_t)kids[k], si, WEXITED | WNOHANG | WNOWAIT) == 0 && si->si_pid != 0) return k;
  }
  return -1;
}

static void fail_exit(void) {
  if (my_rank >= 0) _exit(1);
  for (int k = 0; k < nkids; k++) kill(kids[k], SIGKILL);
  for (int k = 0; k < nkids; k++) waitpid(kids[k], NULL, 0);
  for (int k = 0; k < nkids; k++)
    if (box->why[k][0]) fprintf(stderr, "procs_bw: rank %d: %s\n", k, box->why[k]);
  fprintf(stderr, "procs_bw: a rank failed or exited early\n");
  exit(1);
}

static void barrier(pbarrier *b, int parties) {
  uint32_t g = atomic_load(&b->gen);
  if (atomic_load(&box->failed)) fail_exit();
  if (atomic_fetch_add(&b->count, 1) + 1 == (uint32_t)parties) {
    atomic_store(&b->count, 0);
    atomic_fetch_add(&b->gen, 1);
    futex(&b->gen, FUTEX_WAKE, INT_MAX, NULL);
    return;
  }
  while (atomic_load(&b->gen) == g) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    futex(&b->gen, FUTEX_WAIT, g, &ts);
    if (my_rank < 0) {
      /* A rank that exited is early only if this barrier is still open
       * after we saw it gone: once the barrier opens, the ranks may run
       * on to their end and exit before the parent wakes. */
      siginfo_t si;
      int k = parent_watch(&si);
      if (k >= 0 && atomic_load(&b->gen) == g) {
        if (!box->why[k][0])
          snprintf(box->why[k], sizeof box->why[k], "pid %d %s %d", (int)kids[k],
                   si.si_code == CLD_EXITED ? "exited with status" : "was killed by signal", si.si_status);
        atomic_store(&box->failed, 1);
      }
    } else if (getppid() != parent_pid) {
      _exit(1); /* the parent is gone */
    }
    if (atomic_load(&box->failed)) fail_exit();
  }
  if (atomic_load(&box->failed)) fail_exit();
}

static int nprocs; /* ranks of the current phase */
static void bar_all(void) { barrier(&box->all, nprocs + 1); }
static void bar_ranks(void) { barrier(&box->ranks, nprocs); }

static ncclComm_t join(const ncclUniqueId *id) {
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, nprocs, *id, my_rank);
  CCHECK(r == ncclSuccess, "ncclCommInitRank: %s: %s", ncclGetErrorString(r), ncclGetLastError(NULL));
  return comm;
}

/* Forks n ranks running child(); the parent runs parent() meanwhile, then
 * reaps them. Any failure ends the run (exit 1) with the ranks' reasons. */
static void run_phase(int n, void (*child)(void), void (*parent)(void)) {
  memset(box, 0, sizeof *box);
  BENCH_CHECK(ncclGetUniqueId(&box->id) == ncclSuccess, "ncclGetUniqueId", ncclGetLastError(NULL));
  BENCH_CHECK(ncclGetUniqueId(&box->gate_id) == ncclSuccess, "ncclGetUniqueId", ncclGetLastError(NULL));
  nprocs = n;
  nkids = 0;
  parent_pid = getpid();
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < n; r++) {
    pid_t p = fork();
    BENCH_CHECK(p >= 0, "fork", strerror(errno));
    if (p == 0) {
      my_rank = r;
      CCHECK(cudaSetDevice(r) == cudaSuccess, "cudaSetDevice(%d)", r);
      child();
      _exit(0);
    }
    kids[nkids++] = p;
  }
  parent();
  for (int k = 0; k < nkids; k++) {
    int st;
    BENCH_CHECK(waitpid(kids[k], &st, 0) == kids[k], "waitpid", strerror(errno));
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) atomic_store(&box->failed, 1);
  }
  nkids = 0;
  if (atomic_load(&box->failed)) {
    for (int k = 0; k < n; k++)
      if (box->why[k][0]) fprintf(stderr, "procs_bw: rank %d: %s\n", k, box->why[k]);
    BENCH_CHECK(0, "a rank", "failed or died");
  }
}

static int clampi(size_t v, int lo, int hi) { return v < (size_t)lo ? lo : v > (size_t)hi ? hi : (int)v; }

/* ------------------------------------------------------------ sendrecv */

static int sr_iters;
static double sr_secs[MAX_REPEATS], mc_secs[MAX_REPEATS];

static void sendrecv_child(void) {
  ncclComm_t comm = join(&box->id);
  cudaStream_t s;
  char *buf;
  CCHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  CCHECK(cudaMalloc((void **)&buf, bytes) == cudaSuccess, "cudaMalloc(%zu)", bytes);
  CCHECK(cudaMemset(buf, my_rank + 1, bytes) == cudaSuccess, "cudaMemset"); /* touch every page */
  for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up, untimed (the first send/recv connects) */
    bar_all();
    double t0 = bench_now();
    for (int i = 0; i < (rep < 0 ? 1 : sr_iters); i++) {
      if (my_rank == 0) NCHECK(ncclSend(buf, bytes, ncclUint8, 1, comm, s), comm);
      else NCHECK(ncclRecv(buf, bytes, ncclUint8, 0, comm, s), comm);
    }
    SYNC(s, comm);
    box->secs[my_rank] = (bench_now() - t0) / sr_iters;
    bar_all(); /* the parent's memcpy runs now */
    bar_all();
  }
  /* The receiver holds the sender's bytes. */
  unsigned char probe[2];
  cudaMemcpy(probe, buf, 1, cudaMemcpyDeviceToHost);
  cudaMemcpy(probe + 1, buf + bytes - 1, 1, cudaMemcpyDeviceToHost);
  CCHECK(my_rank == 0 || (probe[0] == 1 && probe[1] == 1), "received bytes 0x%x 0x%x, want 0x01", probe[0],
         probe[1]);
  cudaFree(buf);
  cudaStreamDestroy(s);
  NCHECK(ncclCommDestroy(comm), NULL);
}

static void sendrecv_parent(void) {
  char *a = malloc(bytes), *b = malloc(bytes);
  BENCH_CHECK(a && b, "malloc", "");
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  for (int rep = -1; rep < repeats; rep++) {
    bar_all();
    bar_all();
    double t0 = bench_now();
    for (int i = 0; i < (rep < 0 ? 1 : sr_iters); i++) {
      memcpy(b, a, bytes);
      __asm__ __volatile__("" ::: "memory");
    }
    if (rep >= 0) {
      mc_secs[rep] = (bench_now() - t0) / sr_iters;
      sr_secs[rep] = box->secs[1];
    }
    bar_all();
  }
  free(a);
  free(b);
}

/* ---------------------------------------------------------- put_signal */

/* Iterations per chunk: a chunk is up to 4 * CHUNK_ITERS + 4 CUDA
 * operations on rank 0's stream (a put_signal counts 3, a wait 1), which
 * must stay below the stream depth (see bench/signal_latency.c): the ranks
 * synchronise after each. */
#define CHUNK_ITERS 128
static int chunk_iters = CHUNK_ITERS;
static double pp_stream[2][MAX_REPEATS], pp_start[2][MAX_REPEATS], pp_gated[2][MAX_REPEATS], pp_bare[MAX_REPEATS];

/* One run of n ping-pong iterations in chunks, as bench/signal_latency:
 * rank 0's stream opens each chunk with a wait for a start signal (on a
 * communicator of its own) that rank 1 sends once both ranks have enqueued
 * the chunk, so the stream workers alone run the ping-pong; events on rank
 * 0's stream time it, its first iterations apart (bench_warm). test 0: ncclPutSignal of 8 bytes and ncclWaitSignal;
 * test 1: ncclSend and ncclRecv of 8 bytes. */
static void pingpong(int test, int n, ncclComm_t comm, ncclComm_t gate, ncclWindow_t win, char *src, cudaStream_t s,
                     cudaStream_t s2, cudaEvent_t ev[3]) {
  int peer = 1 - my_rank;
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  double run = 0, start = 0, gated = 0;
  long warm_total = 0;
  for (int done = 0; done < n; done += chunk_iters) {
    int m = n - done < chunk_iters ? n - done : chunk_iters;
    bar_ranks();
    if (my_rank == 0) {
      NCHECK(ncclWaitSignal(1, &d, gate, s), gate);
      CCHECK(cudaEventRecord(ev[0], s) == cudaSuccess, "cudaEventRecord");
    }
    int warm = bench_warm(m);
    warm_total += warm;
    for (int i = 0; i < m; i++) {
      if (i == warm && my_rank == 0) CCHECK(cudaEventRecord(ev[2], s) == cudaSuccess, "cudaEventRecord");
      for (int step = 0; step < 2; step++) {
        bool give = (step == 0) == (my_rank == 0);
        if (test == 0 && give) NCHECK(ncclPutSignal(src, 8, ncclUint8, peer, win, 64, 0, 0, 0, comm, s), comm);
        else if (test == 0) NCHECK(ncclWaitSignal(1, &d, comm, s), comm);
        else if (give) NCHECK(ncclSend(src, 8, ncclUint8, peer, comm, s), comm);
        else NCHECK(ncclRecv(src + 128, 8, ncclUint8, peer, comm, s), comm);
      }
    }
    if (my_rank == 0) CCHECK(cudaEventRecord(ev[1], s) == cudaSuccess, "cudaEventRecord");
    bar_ranks();
    double t0 = bench_now();
    if (my_rank == 1) NCHECK(ncclSignal(peer, 0, 0, 0, gate, s2), gate);
    SYNC(s, comm);
    gated += bench_now() - t0;
    if (my_rank == 0) {
      float ms;
      CCHECK(cudaEventElapsedTime(&ms, ev[2], ev[1]) == cudaSuccess, "cudaEventElapsedTime");
      run += ms * 1e-3;
      CCHECK(cudaEventElapsedTime(&ms, ev[0], ev[2]) == cudaSuccess, "cudaEventElapsedTime");
      start += ms * 1e-3;
    }
  }
  if (my_rank == 1) SYNC(s2, gate);
  if (my_rank == 0) {
    box->t_stream[test] = run / (2.0 * (double)(n - warm_total));
    box->t_start[test] = warm_total ? start / (2.0 * (double)warm_total) : 0;
    box->t_gated[test] = gated / (2.0 * n);
  }
}

/* The bare handoff: turn is even for rank 0, odd for rank 1. */
static void bare_wait(uint32_t want) {
  for (int i = 0; i < 2000; i++) { /* as NCCLSIM_SPIN: pause, then yield */
    if (atomic_load_explicit(&box->turn, memory_order_acquire) == want) return;
    if (i < 64) __builtin_ia32_pause();
    else sched_yield();
  }
  for (;;) {
    atomic_fetch_add(&box->sleepers, 1);
    uint32_t seen = atomic_load(&box->turn);
    if (seen == want) {
      atomic_fetch_sub(&box->sleepers, 1);
      return;
    }
    struct timespec ts = {0, 100 * 1000 * 1000};
    futex(&box->turn, FUTEX_WAIT, seen, &ts);
    atomic_fetch_sub(&box->sleepers, 1);
    if (atomic_load(&box->failed)) fail_exit();
  }
}

static void bare_pass(void) {
  atomic_fetch_add_explicit(&box->turn, 1, memory_order_release);
  if (atomic_load(&box->sleepers)) futex(&box->turn, FUTEX_WAKE, INT_MAX, NULL);
}

/* n round trips; rank 0 times the last n - 1 (the first absorbs the two
 * ranks leaving the barrier at different times). */
static void bare(int n) {
  uint32_t me = (uint32_t)my_rank;
  double t0 = 0;
  cpu_set_t old;
  bool pinned = bench_pin((int)me, &old);
  if (!pinned) atomic_store(&box->bare_unpinned, 1);
  for (int i = 0; i < n; i++) {
    if (me == 0 && i == 1) t0 = bench_now();
    bare_wait(2 * (uint32_t)i + me);
    bare_pass();
  }
  if (me == 0) {
    bare_wait(2 * (uint32_t)n);
    box->t_bare = (bench_now() - t0) / (2.0 * (n - 1));
  }
  if (pinned) bench_unpin(&old); /* the ranks' own work runs where the scheduler puts it */
}

static void signal_child(void) {
  ncclComm_t comm = join(&box->id), gate = join(&box->gate_id);
  cudaStream_t s, s2;
  cudaEvent_t ev[3];
  char *mem;
  ncclWindow_t win;
  CCHECK(cudaStreamCreate(&s) == cudaSuccess && cudaStreamCreate(&s2) == cudaSuccess, "cudaStreamCreate");
  for (int e = 0; e < 3; e++) CCHECK(cudaEventCreate(&ev[e]) == cudaSuccess, "cudaEventCreate");
  NCHECK(ncclMemAlloc((void **)&mem, 4096), comm);
  CCHECK(cudaMemset(mem, 0, 4096) == cudaSuccess, "cudaMemset");
  /* The put's source (offset 0) and target (offset 64) are both in the window. */
  NCHECK(ncclCommWindowRegister(comm, mem, 4096, &win, NCCL_WIN_COLL_SYMMETRIC), comm);
  /* The gate's first one-sided operation, on both ranks at once. */
  ncclWaitSignalDesc_t d = {1, 1 - my_rank, 0, 0};
  if (my_rank == 0) NCHECK(ncclWaitSignal(1, &d, gate, s), gate);
  else NCHECK(ncclSignal(0, 0, 0, 0, gate, s2), gate);
  SYNC(my_rank == 0 ? s : s2, gate);
  /* The first send and receive connect (the host thread blocks until both
   * sides reach theirs): one round in a group, then warm-ups. */
  NCHECK(ncclGroupStart(), comm);
  NCHECK(ncclSend(mem, 8, ncclUint8, 1 - my_rank, comm, s), comm);
  NCHECK(ncclRecv(mem + 128, 8, ncclUint8, 1 - my_rank, comm, s), comm);
  NCHECK(ncclGroupEnd(), comm);
  SYNC(s, comm);
  for (int t = 0; t < 2; t++) pingpong(t, pp_iters < 1000 ? pp_iters : 1000, comm, gate, win, mem, s, s2, ev);
  for (int rep = 0; rep < repeats; rep++) {
    bar_all();
    for (int t = 0; t < 2; t++) pingpong(t, pp_iters, comm, gate, win, mem, s, s2, ev);
    if (my_rank == 0) atomic_store(&box->turn, 0);
    bar_ranks();
    bare(pp_iters);
    bar_all(); /* the parent reads this repeat's figures */
  }
  NCHECK(ncclCommWindowDeregister(comm, win), comm);
  ncclMemFree(mem);
  for (int e = 0; e < 3; e++) cudaEventDestroy(ev[e]);
  cudaStreamDestroy(s);
  cudaStreamDestroy(s2);
  NCHECK(ncclCommDestroy(gate), NULL);
  NCHECK(ncclCommDestroy(comm), NULL);
}

static void signal_parent(void) {
  for (int rep = 0; rep < repeats; rep++) {
    bar_all();
    bar_all();
    for (int t = 0; t < 2; t++) {
      pp_stream[t][rep] = box->t_stream[t];
      pp_gated[t][rep] = box->t_gated[t];
      pp_start[t][rep] = box->t_start[t];
    }
    pp_bare[rep] = box->t_bare;
  }
}

/* ------------------------------------------------- allreduce of 8 bytes */

/* Calls per timing: below the stream depth, so the enqueues never block. */
#define SMALL_ITERS 1000
static double small_secs[MAX_REPEATS];

static double small_host_ns[MAX_REPEATS], small_start_ns[MAX_REPEATS];

/* A host function on each rank's stream that returns once rank 0 opens
 * the gate, which it does when both ranks have enqueued their calls. */
static void small_gate_fn(void *arg) {
  (void)arg;
  while (!atomic_load(&box->small_gate)) usleep(20);
}

/* Per repeat, each rank times its calls twice: on the host clock (the
 * enqueues and a synchronise, which compete with the stream workers for
 * the CPUs), and on the stream clock behind a start gate (events around
 * the calls), as bench/coll_roofline times the threads' 8-byte allreduce:
 * time_ns is the latter past the first calls (start_time_ns, bench_warm),
 * comparable with the threads' figure. */
static void small_child(void) {
  ncclComm_t comm = join(&box->id);
  cudaStream_t s;
  cudaEvent_t ev[3];
  float *buf;
  int warm = bench_warm(SMALL_ITERS);
  CCHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  for (int e = 0; e < 3; e++) CCHECK(cudaEventCreate(&ev[e]) == cudaSuccess, "cudaEventCreate");
  CCHECK(cudaMalloc((void **)&buf, 64) == cudaSuccess, "cudaMalloc");
  CCHECK(cudaMemset(buf, 0, 64) == cudaSuccess, "cudaMemset");
  for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up (the first connects) */
    bar_all();
    double t0 = bench_now();
    for (int i = 0; i < SMALL_ITERS; i++) NCHECK(ncclAllReduce(buf, buf + 8, 2, ncclFloat32, ncclSum, comm, s), comm);
    SYNC(s, comm);
    box->small_host[my_rank] = (bench_now() - t0) / SMALL_ITERS;
    CCHECK(cudaLaunchHostFunc(s, small_gate_fn, NULL) == cudaSuccess, "cudaLaunchHostFunc");
    CCHECK(cudaEventRecord(ev[0], s) == cudaSuccess, "cudaEventRecord");
    for (int i = 0; i < SMALL_ITERS; i++) {
      if (i == warm) CCHECK(cudaEventRecord(ev[2], s) == cudaSuccess, "cudaEventRecord");
      NCHECK(ncclAllReduce(buf, buf + 8, 2, ncclFloat32, ncclSum, comm, s), comm);
    }
    CCHECK(cudaEventRecord(ev[1], s) == cudaSuccess, "cudaEventRecord");
    bar_ranks(); /* both enqueued */
    if (my_rank == 0) atomic_store(&box->small_gate, 1);
    SYNC(s, comm);
    float ms = 0;
    CCHECK(cudaEventElapsedTime(&ms, ev[2], ev[1]) == cudaSuccess, "cudaEventElapsedTime");
    box->secs[my_rank] = ms * 1e-3 / (SMALL_ITERS - warm);
    CCHECK(cudaEventElapsedTime(&ms, ev[0], ev[2]) == cudaSuccess, "cudaEventElapsedTime");
    box->small_start[my_rank] = ms * 1e-3 / warm;
    bar_ranks(); /* both past the gate */
    if (my_rank == 0) atomic_store(&box->small_gate, 0);
    bar_all(); /* the parent reads the times */
  }
  for (int e = 0; e < 3; e++) cudaEventDestroy(ev[e]);
  cudaFree(buf);
  cudaStreamDestroy(s);
  NCHECK(ncclCommDestroy(comm), NULL);
}

static void small_parent(void) {
  for (int rep = -1; rep < repeats; rep++) {
    bar_all();
    bar_all();
    double slowest = 0, host = 0, start = 0;
    for (int r = 0; r < nprocs; r++) {
      if (box->secs[r] > slowest) slowest = box->secs[r];
      if (box->small_host[r] > host) host = box->small_host[r];
      if (box->small_start[r] > start) start = box->small_start[r];
    }
    if (rep >= 0) small_secs[rep] = slowest, small_host_ns[rep] = host * 1e9, small_start_ns[rep] = start * 1e9;
  }
}

/* ----------------------------------------------------------- allreduce */

static int ar_iters, nthreads;
static double ar_secs[MAX_REPEATS], ac_secs[MAX_REPEATS];
static float *acc_a, *acc_b;

static void allreduce_child(void) {
  ncclComm_t comm = join(&box->id);
  cudaStream_t s;
  float *send, *recv;
  size_t count = bytes / sizeof(float);
  CCHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  CCHECK(cudaMalloc((void **)&send, bytes) == cudaSuccess && cudaMalloc((void **)&recv, bytes) == cudaSuccess,
         "cudaMalloc(%zu)", bytes);
  /* Touch every page; small integers keep every sum exact. */
  float *h = malloc(bytes);
  CCHECK(h != NULL, "malloc");
  for (size_t i = 0; i < count; i++) h[i] = (float)(my_rank + 1);
  CCHECK(cudaMemcpy(send, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpy");
  CCHECK(cudaMemset(recv, 0, bytes) == cudaSuccess, "cudaMemset");
  NCHECK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, s), comm); /* warm-up: the first joins all */
  SYNC(s, comm);
  for (int rep = 0; rep < repeats; rep++) {
    bar_all();
    double t0 = bench_now();
    for (int i = 0; i < ar_iters; i++) NCHECK(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, s), comm);
    SYNC(s, comm);
    box->secs[my_rank] = (bench_now() - t0) / ar_iters;
    bar_all(); /* the parent's all-core loop runs now */
    bar_all();
  }
  CCHECK(cudaMemcpy(h, recv, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "cudaMemcpy");
  float want = (float)(nprocs * (nprocs + 1) / 2);
  CCHECK(h[0] == want && h[count - 1] == want, "allreduce: %g .. %g, want %g", h[0], h[count - 1], want);
  free(h);
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(s);
  NCHECK(ncclCommDestroy(comm), NULL);
}

typedef struct {
  size_t lo, hi;
  int reps;
} add_slice;

static void *add_thread(void *arg) {
  add_slice *sl = arg;
  float *restrict a = acc_a;
  const float *restrict b = acc_b;
  for (int r = 0; r < sl->reps; r++) {
    for (size_t i = sl->lo; i < sl->hi; i++) a[i] += b[i];
    __asm__ __volatile__("" ::: "memory");
  }
  return NULL;
}

/* Seconds per pass of nthreads threads over a[i] += b[i], reps passes. */
static double all_core(int reps) {
  size_t count = bytes / sizeof(float);
  pthread_t th[MAX_THREADS];
  add_slice sl[MAX_THREADS];
  double t0 = bench_now();
  for (int t = 0; t < nthreads; t++) {
    sl[t] = (add_slice){count * t / nthreads, count * (t + 1) / nthreads, reps};
    BENCH_CHECK(pthread_create(&th[t], NULL, add_thread, &sl[t]) == 0, "pthread_create", "");
  }
  for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  return (bench_now() - t0) / reps;
}

static void allreduce_parent(void) {
  for (int rep = 0; rep < repeats; rep++) {
    bar_all();
    bar_all();
    double slowest = 0;
    for (int r = 0; r < nprocs; r++)
      if (box->secs[r] > slowest) slowest = box->secs[r];
    ar_secs[rep] = slowest;
    ac_secs[rep] = all_core(ar_iters);
    bar_all();
  }
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  /* First, before any other ncclsim call and before forking. */
  if (ncclsimProcessesInit() != ncclSuccess) {
    fprintf(stderr, "procs_bw: ncclsimProcessesInit failed: %s\n", ncclGetLastError(NULL));
    return 1;
  }
  if (argc > 1) bytes = strtoull(argv[1], NULL, 0);
  if (argc > 2) pp_iters = atoi(argv[2]);
  if (argc > 3) repeats = atoi(argv[3]);
  const char *list = argc > 4 ? argv[4] : "2,4";
  BENCH_CHECK(bytes >= 1024 && bytes % 64 == 0, "bytes", "at least 1024, a multiple of 64");
  BENCH_CHECK(pp_iters >= 2, "pingpong_iters", "at least 2");
  BENCH_CHECK(repeats >= 1 && repeats <= MAX_REPEATS, "repeats", "1 to 64");
  int counts[8], ncounts = 0;
  for (char *end; *list && ncounts < 8; list = *end ? end + 1 : end) {
    long v = strtol(list, &end, 10);
    BENCH_CHECK(end != list && v >= 2 && v <= MAX_PROCS, "process counts", "2 to 16, e.g. 2,4");
    counts[ncounts++] = (int)v;
  }
  /* A chunk that fits a shallower simulated stream (NCCLSIM_STREAM_DEPTH). */
  const char *depth = ncclsimParamGet("STREAM_DEPTH");
  int dep = depth ? atoi(depth) : 0;
  if (dep > 0 && 4 * chunk_iters + 4 > dep) chunk_iters = (dep - 4) / 4;
  BENCH_CHECK(chunk_iters > 0, "NCCLSIM_STREAM_DEPTH", ">= 8");
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  nthreads = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : (int)ncpu;
  box = mmap(NULL, sizeof *box, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  BENCH_CHECK(box != MAP_FAILED, "mmap", strerror(errno));
  char la[64];
  bench_spread x, y, z, w;
  double v[MAX_REPEATS] = {0};
#define STATS3(out, expr)                               \
  do {                                                  \
    for (int i_ = 0; i_ < repeats; i_++) v[i_] = (expr); \
    out = bench_stats(v, repeats);                      \
  } while (0)
  double t_start = bench_now();

  /* a. send/recv vs memcpy */
  sr_iters = clampi(((size_t)1 << 30) / bytes, 4, 1000);
  run_phase(2, sendrecv_child, sendrecv_parent);
  STATS3(x, bytes / sr_secs[i_] / 1e9);
  STATS3(y, bytes / mc_secs[i_] / 1e9);
  STATS3(z, mc_secs[i_] / sr_secs[i_]);
  printf("bench=procs_bw backend=ncclsim test=sendrecv procs=2 bytes=%zu iters=%d repeats=%d ", bytes, sr_iters,
         repeats);
  printf(MMM("gbps", x, "%.3f"));
  printf(" ");
  printf(MMM("memcpy_gbps", y, "%.3f"));
  printf(" ");
  printf(MMM("over_memcpy", z, "%.3f"));
  printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
  fflush(stdout);

  /* b. put_signal and send/recv ping-pongs vs the bare handoff */
  run_phase(2, signal_child, signal_parent);
  for (int t = 0; t < 2; t++) {
    STATS3(x, pp_stream[t][i_] * 1e9);
    STATS3(y, pp_bare[i_] * 1e9);
    STATS3(z, pp_stream[t][i_] / pp_bare[i_]);
    STATS3(w, pp_gated[t][i_] * 1e9);
    printf("bench=procs_bw backend=ncclsim test=%s procs=2 payload_bytes=8 iters=%d chunk_iters=%d repeats=%d ",
           t ? "sendrecv8" : "put_signal", pp_iters, chunk_iters, repeats);
    printf(MMM("half_rtt_ns", x, "%.0f"));
    printf(" bare_pinned=%d ", !atomic_load(&box->bare_unpinned));
    printf(MMM("bare_half_rtt_ns", y, "%.0f"));
    printf(" ");
    printf(MMM("over_bare", z, "%.2f"));
    printf(" ");
    printf(MMM("gated_half_rtt_ns", w, "%.0f"));
    STATS3(w, pp_start[t][i_] * 1e9);
    printf(" warm_iters=%d ", bench_warm(chunk_iters));
    printf(MMM("start_half_rtt_ns", w, "%.0f"));
    printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
  }
  fflush(stdout);

  /* b2. allreduce of 8 bytes (two floats), time per call */
  run_phase(2, small_child, small_parent);
  STATS3(x, small_secs[i_] * 1e9);
  printf("bench=procs_bw backend=ncclsim test=allreduce8 procs=2 bytes=8 iters=%d repeats=%d ", SMALL_ITERS, repeats);
  printf(MMM("time_ns", x, "%.0f"));
  printf(" ");
  STATS3(x, small_host_ns[i_]);
  printf(MMM("host_time_ns", x, "%.0f"));
  STATS3(x, small_start_ns[i_]);
  printf(" warm_calls=%d ", bench_warm(SMALL_ITERS));
  printf(MMM("start_time_ns", x, "%.0f"));
  printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
  fflush(stdout);

  /* c. allreduce vs all-core streaming bandwidth */
  acc_a = malloc(bytes);
  acc_b = malloc(bytes);
  BENCH_CHECK(acc_a && acc_b, "malloc", "");
  for (size_t i = 0; i < bytes / sizeof(float); i++) acc_a[i] = 0, acc_b[i] = 1;
  ar_iters = clampi(((size_t)512 << 20) / bytes, 4, 1000);
  for (int c = 0; c < ncounts; c++) {
    int n = counts[c];
    double f = 2.0 * (n - 1) / n;
    run_phase(n, allreduce_child, allreduce_parent);
    STATS3(x, bytes / ar_secs[i_] / 1e9 * f);
    STATS3(y, 3.0 * bytes / ac_secs[i_] / 1e9);
    STATS3(z, (bytes / ar_secs[i_] * f) / (3.0 * bytes / ac_secs[i_]));
    printf("bench=procs_bw backend=ncclsim test=allreduce procs=%d bytes=%zu iters=%d repeats=%d ", n, bytes,
           ar_iters, repeats);
    printf(MMM("busbw_gbps", x, "%.3f"));
    printf(" ");
    printf(MMM("allcore_gbps", y, "%.3f"));
    printf(" allcore_threads=%d allcore_bytes_per_elem=12 ", nthreads);
    printf(MMM("over_allcore", z, "%.3f"));
    /* ncclsim's allreduce reads every rank's input and writes every rank's
     * output (sim/coll/coll.c): 2n x bytes of memory traffic per call,
     * which the add loop's 3 x bytes per pass compares with directly. */
    STATS3(w, (bytes * 2.0 * n / ar_secs[i_]) / (3.0 * bytes / ac_secs[i_]));
    printf(" ");
    printf(MMM("traffic_over_allcore", w, "%.3f"));
    printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
    fflush(stdout);
  }
  free(acc_a);
  free(acc_b);
  printf("bench=procs_bw backend=ncclsim summary wall_s=%.1f cpus=%ld loadavg=%s\n", bench_now() - t_start, ncpu,
         bench_loadavg(la, sizeof la));
  munmap(box, sizeof *box);
  return 0;
}
#endif /* NCCLSIM */
