/*
 * bench/signal_latency.c — small-message latency between two ranks (threads
 * of one process), each beside a bare handoff measured in the same run:
 *   put_signal  ncclPutSignal (8 bytes) -> ncclWaitSignal ping-pong
 *   sendrecv    ncclSend -> ncclRecv ping-pong of 8 bytes
 *   bare        two threads ping-pong over one shared atomic that spins,
 *               then sleeps on a futex (the floor for any thread-to-thread
 *               handoff), each pinned to a CPU of its own (bench_pin;
 *               bare_pinned=0 when it could not be)
 *   bare_put    the same two threads, each giving what a put_signal gives:
 *               8 bytes stored into the peer's buffer, then an atomic add
 *               to the peer's own signal counter, which the peer waits on
 *               before it reads the bytes (two cache lines cross per half
 *               round trip, against bare's one): the floor for put_signal
 *               with no engine at all
 *
 * Rank 0 gives to rank 1 and takes its answer; rank 1 takes, then gives
 * back. The iterations are enqueued on each rank's stream ahead of a start
 * gate, a chunk at a time, so the stream workers do the ping-pong.
 * Reported per test: the half round trip in ns, past each chunk's first
 * BENCH_WARM_CALLS iterations (those are start_half_rtt_ns: they include waking
 * the peer's stream worker), and its ratio to the bare
 * one (target <= 2) and to bare_put, each the median and min/max over
 * `repeats` repeats; a repeat runs both tests and the bare ping-pongs back
 * to back, and the ratios are taken within it. ctx_switches_per_half_rtt
 * counts the process's context switches (getrusage: voluntary and not)
 * from each chunk's start signal to the end of its synchronize, per half
 * round trip: a thread that takes turns from the two that ping-pong shows
 * there (ncclsim's idle stream workers polling for work did: 0.10 against
 * 0.03 once they slept, 176 ns a put_signal against 122).
 *
 * Output: key=value lines. Usage: signal_latency [iterations [repeats]]
 * (defaults 100000 5)
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
  printf("bench=signal_latency skipped=\"not supported by NCCL %d.%d.%d\"\n", v / 10000, v / 100 % 100, v % 100);
  return 0;
}
#else /* HAVE_DECL_NCCLPUTSIGNAL */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#ifdef NCCLSIM
#include <ncclsim.h>
#endif
#define BENCH_NAME "signal_latency"
#include "bench.h"

static int iters = 100000, repeats = 5;
static ncclComm_t comms[2];
static ncclComm_t gates[2]; /* a second communicator, for the start signal alone */
static void *wins_mem[2];
static ncclWindow_t wins[2];
static pthread_barrier_t bar;       /* the two ranks */
static pthread_barrier_t bar_main;  /* the two ranks and main */

#define CHECK(cond, what) BENCH_CHECK(cond, what, "")
#define MAX_REPEATS 64

typedef enum { PUT_SIGNAL, SENDRECV, NTESTS } test_t;
static const char *const test_names[] = {"put_signal", "sendrecv"};
/* Per test and repeat, rank 0's figures: per half round trip on the
 * stream clock and on the host clock (gate included), per enqueue. */
static double t_stream[NTESTS][MAX_REPEATS], t_gated[NTESTS][MAX_REPEATS], t_enqueue[NTESTS][MAX_REPEATS];
static double t_start[NTESTS][MAX_REPEATS]; /* per half round trip, each chunk's first iterations (bench_warm) */
static double t_csw[NTESTS][MAX_REPEATS]; /* context switches per half round trip */

/* The process's context switches so far, every thread's. */
static long ctx_switches(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_nvcsw + u.ru_nivcsw : 0;
}
static double t_bare[MAX_REPEATS], t_bare_put[MAX_REPEATS];

/* Iterations per chunk. A stream holds a bounded number of pending CUDA
 * operations (CUDA 13: 1022; ncclsim: NCCLSIM_STREAM_DEPTH), and the next
 * enqueue blocks the host thread until one completes. Nothing behind the
 * start gate can complete before the start signal, and that signal is sent
 * only once both ranks have enqueued the whole chunk, so a chunk must stay
 * below the depth, or the run deadlocks on a GPU. On NCCL 2.30.7 a
 * ncclPutSignal is three CUDA operations (a staged sequence write, the data
 * copy, the signal copy: rma/rma_ce.cc) and a ncclWaitSignal one, so an
 * iteration is up to four: with 256 iterations (1027 operations) the run
 * hung on 2 x H200. 128 iterations, 516 operations with the gate and the
 * three event records, is about half the depth. */
#define CHUNK_ITERS 128
static int chunk_iters = CHUNK_ITERS;

/* One iteration's half: rank 0 sends first and then takes the answer;
 * rank 1 takes first, then answers. put_signal: ncclPutSignal of 8 bytes
 * and ncclWaitSignal for its signal; sendrecv: ncclSend and ncclRecv of 8
 * bytes. */
static void enqueue_iter(test_t test, int r, cudaStream_t s) {
  int peer = 1 - r;
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  char *buf = wins_mem[r];
  for (int step = 0; step < 2; step++) {
    bool give = (step == 0) == (r == 0);
    if (test == PUT_SIGNAL) {
      if (give)
        CHECK(ncclPutSignal(buf, 8, ncclUint8, peer, wins[r], 64, 0, 0, 0, comms[r], s) == ncclSuccess,
              "ncclPutSignal");
      else CHECK(ncclWaitSignal(1, &d, comms[r], s) == ncclSuccess, "ncclWaitSignal");
    } else {
      if (give) CHECK(ncclSend(buf, 8, ncclUint8, peer, comms[r], s) == ncclSuccess, "ncclSend");
      else CHECK(ncclRecv(buf + 128, 8, ncclUint8, peer, comms[r], s) == ncclSuccess, "ncclRecv");
    }
  }
}

/* n iterations of `test` in chunks. Per chunk: both ranks enqueue it behind
 * the gate; rank 0's stream opens with a wait for a start signal that rank
 * 1 sends (from a second stream) once both are done, so the ping-pong is
 * run by the stream workers alone; both then synchronise. The start signal
 * goes through a communicator of its own: NCCL runs the operations of one
 * communicator in the order they were issued, across streams (each launch
 * waits for the previous one to complete), so on the ping-pong's
 * communicator rank 1's start signal would wait for rank 1's chunk, which
 * waits for the start signal (communicators are not ordered with each
 * other unless NCCL_LAUNCH_ORDER_IMPLICIT is set). The timed part is the
 * ping-pong alone: events on rank 0's stream, recorded after the start
 * wait, after the chunk's first BENCH_WARM_CALLS iterations and after its last
 * operation, time the chunk's steady half round trips (half_rtt_ns) apart
 * from its start (start_half_rtt_ns), and the chunks' times add up. The host
 * clock from the start signal to the end of the synchronise is reported
 * too (gated_half_rtt_ns): it adds each chunk's start-signal handoff and
 * wake-up from the synchronise, which the stream clock leaves out. The
 * enqueue cost is reported on its own. */
static void pingpong(test_t test, int r, int n, int rep, cudaStream_t s, cudaStream_t s2, cudaEvent_t ev[3]) {
  int peer = 1 - r;
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  double enq = 0, run = 0, start = 0, gated = 0;
  long calls = 0, csw = 0, warm_total = 0;
  for (int done = 0; done < n; done += chunk_iters) {
    int m = n - done < chunk_iters ? n - done : chunk_iters;
    pthread_barrier_wait(&bar);
    double t0 = bench_now();
    if (r == 0) {
      CHECK(ncclWaitSignal(1, &d, gates[r], s) == ncclSuccess, "ncclWaitSignal");
      CHECK(cudaEventRecord(ev[0], s) == cudaSuccess, "cudaEventRecord");
    }
    int warm = bench_warm(m); /* its steady part starts past these (bench.h) */
    for (int i = 0; i < m; i++) {
      if (i == warm && r == 0) CHECK(cudaEventRecord(ev[2], s) == cudaSuccess, "cudaEventRecord");
      enqueue_iter(test, r, s);
    }
    if (r == 0) CHECK(cudaEventRecord(ev[1], s) == cudaSuccess, "cudaEventRecord");
    enq += bench_now() - t0;
    calls += 2 * m + (r == 0 ? 4 : 0);
    warm_total += warm;
    pthread_barrier_wait(&bar);
    long c0 = ctx_switches();
    t0 = bench_now();
    if (r == 1) CHECK(ncclSignal(peer, 0, 0, 0, gates[r], s2) == ncclSuccess, "ncclSignal");
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
    gated += bench_now() - t0;
    csw += ctx_switches() - c0;
    if (r == 0) {
      float ms;
      CHECK(cudaEventElapsedTime(&ms, ev[2], ev[1]) == cudaSuccess, "cudaEventElapsedTime");
      run += ms * 1e-3;
      CHECK(cudaEventElapsedTime(&ms, ev[0], ev[2]) == cudaSuccess, "cudaEventElapsedTime");
      start += ms * 1e-3;
    }
  }
  if (r == 0 && rep >= 0) {
    t_enqueue[test][rep] = enq / calls;
    t_stream[test][rep] = run / (2.0 * (double)(n - warm_total));
    t_start[test][rep] = warm_total ? start / (2.0 * (double)warm_total) : 0;
    t_gated[test][rep] = gated / (2.0 * n);
    t_csw[test][rep] = (double)csw / (2.0 * n);
  }
}

static void *nccl_rank(void *arg) {
  int r = (int)(intptr_t)arg, peer = 1 - r;
  cudaStream_t s, s2;
  cudaEvent_t ev[3];
  CHECK(cudaSetDevice(r) == cudaSuccess, "cudaSetDevice");
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  CHECK(cudaStreamCreate(&s2) == cudaSuccess, "cudaStreamCreate");
  for (int e = 0; e < 3; e++) CHECK(cudaEventCreate(&ev[e]) == cudaSuccess, "cudaEventCreate");
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  /* The gate communicator's first one-sided operation, on both ranks at
   * once: it sets NCCL's one-sided state up and blocks until every rank
   * makes its own, so it cannot be rank 0's first start wait, enqueued
   * before rank 1 could signal. */
  if (r == 0) CHECK(ncclWaitSignal(1, &d, gates[r], s) == ncclSuccess, "ncclWaitSignal");
  else CHECK(ncclSignal(peer, 0, 0, 0, gates[r], s2) == ncclSuccess, "ncclSignal");
  CHECK(cudaStreamSynchronize(r == 0 ? s : s2) == cudaSuccess, "cudaStreamSynchronize");
  /* The first send and receive of each rank connect (NCCL blocks the host
   * thread until both sides reach theirs): one ungated round first, in a
   * group, then warm-ups of both tests. */
  CHECK(ncclGroupStart() == ncclSuccess, "ncclGroupStart");
  CHECK(ncclSend(wins_mem[r], 8, ncclUint8, peer, comms[r], s) == ncclSuccess, "ncclSend");
  CHECK(ncclRecv((char *)wins_mem[r] + 128, 8, ncclUint8, peer, comms[r], s) == ncclSuccess, "ncclRecv");
  CHECK(ncclGroupEnd() == ncclSuccess, "ncclGroupEnd");
  CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
  /* And the ping-pong communicator's first one-sided operations, grouped,
   * before any stream holds a gated wait: the first one sets NCCL's
   * one-sided state up (ncclRmaCeInit) and must not come behind the gate
   * (on 2 x H200 with NCCL 2.30.7 the benchmark hung without this;
   * conformance/probes/sig_stress.c, phase lazyinit). */
  CHECK(ncclGroupStart() == ncclSuccess, "ncclGroupStart");
  CHECK(ncclSignal(peer, 0, 0, 0, comms[r], s) == ncclSuccess, "ncclSignal");
  CHECK(ncclWaitSignal(1, &d, comms[r], s) == ncclSuccess, "ncclWaitSignal");
  CHECK(ncclGroupEnd() == ncclSuccess, "ncclGroupEnd");
  CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
  for (test_t t = PUT_SIGNAL; t < NTESTS; t++) pingpong(t, r, iters < 1000 ? iters : 1000, -1, s, s2, ev);
  for (int rep = 0; rep < repeats; rep++) {
    for (test_t t = PUT_SIGNAL; t < NTESTS; t++) pingpong(t, r, iters, rep, s, s2, ev);
    pthread_barrier_wait(&bar_main); /* main runs the bare ping-pong */
    pthread_barrier_wait(&bar_main);
  }
  CHECK(cudaStreamSynchronize(s2) == cudaSuccess, "cudaStreamSynchronize");
  for (int e = 0; e < 3; e++) cudaEventDestroy(ev[e]);
  cudaStreamDestroy(s);
  cudaStreamDestroy(s2);
  return NULL;
}

/* ---- the bare ping-pongs ----
 * bare: one word, `turn`, even for thread 0 and odd for thread 1.
 * bare_put: each thread's own signal word and 8-byte buffer, each on a
 * cache line of its own, as a window's bytes and a signal counter are. */
typedef struct {
  _Alignas(64) _Atomic uint32_t word;
  _Atomic uint32_t sleepers;
} bare_flag;
static bare_flag turn, sig[2];
static struct {
  _Alignas(64) uint64_t bytes;
} put_buf[2];
static bool bare_put_mode;

static void bare_wait(bare_flag *f, uint32_t want) {
  for (int i = 0; i < 2000; i++) { /* as NCCLSIM_SPIN: pause, then yield */
    if (atomic_load_explicit(&f->word, memory_order_acquire) == want) return;
    if (i < 64) __builtin_ia32_pause();
    else sched_yield();
  }
  for (;;) {
    atomic_fetch_add(&f->sleepers, 1);
    uint32_t seen = atomic_load(&f->word);
    if (seen == want) {
      atomic_fetch_sub(&f->sleepers, 1);
      return;
    }
    syscall(SYS_futex, (uint32_t *)&f->word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
    atomic_fetch_sub(&f->sleepers, 1);
  }
}

static void bare_pass(bare_flag *f) {
  atomic_fetch_add_explicit(&f->word, 1, memory_order_release);
  if (atomic_load(&f->sleepers)) syscall(SYS_futex, (uint32_t *)&f->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static _Atomic int bare_pinned = 1;
static _Atomic long bare_put_bad; /* bytes that did not arrive as put */

static void *bare_thread(void *arg) {
  uint32_t me = (uint32_t)(intptr_t)arg, peer = 1 - me;
  cpu_set_t old;
  if (!bench_pin((int)me, &old)) atomic_store(&bare_pinned, 0);
  long bad = 0;
  for (int i = 0; i < iters; i++) {
    if (!bare_put_mode) {
      bare_wait(&turn, 2 * (uint32_t)i + me);
      bare_pass(&turn);
      continue;
    }
    /* Thread 0 gives first; each gives the count of puts it received + 1. */
    if (me == 1) {
      bare_wait(&sig[me], (uint32_t)i + 1);
      bad += put_buf[me].bytes != 2 * (uint64_t)i + 1;
    }
    put_buf[peer].bytes = 2 * (uint64_t)i + 1 + me;
    bare_pass(&sig[peer]);
    if (me == 0) {
      bare_wait(&sig[me], (uint32_t)i + 1);
      bad += put_buf[me].bytes != 2 * (uint64_t)i + 2;
    }
  }
  atomic_fetch_add(&bare_put_bad, bad);
  return NULL;
}

static double bare(bool put) {
  pthread_t th[2];
  bare_put_mode = put;
  atomic_store(&turn.word, 0);
  for (int r = 0; r < 2; r++) atomic_store(&sig[r].word, 0);
  double t0 = bench_now();
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, bare_thread, (void *)(intptr_t)r);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  return (bench_now() - t0) / (2.0 * iters);
}


int main(int argc, char **argv) {
  if (argc > 1) iters = atoi(argv[1]);
  if (argc > 2) repeats = atoi(argv[2]);
  CHECK(iters > 0, "iterations");
  BENCH_CHECK(repeats >= 1 && repeats <= MAX_REPEATS, "repeats", "1 to 64");
#ifdef NCCLSIM
  /* Under a shallower simulated stream (NCCLSIM_STREAM_DEPTH), a chunk
   * that fits it: 4 * chunk + 4 operations at most. */
  const char *depth = ncclsimParamGet("STREAM_DEPTH");
  int dep = depth ? atoi(depth) : 0;
  if (dep > 0 && 4 * chunk_iters + 4 > dep) chunk_iters = (dep - 4) / 4;
  CHECK(chunk_iters > 0, "NCCLSIM_STREAM_DEPTH >= 8");
#endif
  CHECK(ncclCommInitAll(comms, 2, NULL) == ncclSuccess, "ncclCommInitAll");
  CHECK(ncclCommInitAll(gates, 2, NULL) == ncclSuccess, "ncclCommInitAll");
  for (int r = 0; r < 2; r++) {
    CHECK(cudaSetDevice(r) == cudaSuccess, "cudaSetDevice");
    CHECK(ncclMemAlloc(&wins_mem[r], 4096) == ncclSuccess, "ncclMemAlloc");
  }
  CHECK(ncclGroupStart() == ncclSuccess, "ncclGroupStart");
  for (int r = 0; r < 2; r++)
    CHECK(ncclCommWindowRegister(comms[r], wins_mem[r], 4096, &wins[r], NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess,
          "ncclCommWindowRegister");
  CHECK(ncclGroupEnd() == ncclSuccess, "ncclGroupEnd");
  pthread_barrier_init(&bar, NULL, 2);
  pthread_barrier_init(&bar_main, NULL, 3);
  pthread_t th[2];
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, nccl_rank, (void *)(intptr_t)r);
  for (int rep = 0; rep < repeats; rep++) {
    pthread_barrier_wait(&bar_main); /* the ranks have run this repeat */
    t_bare[rep] = bare(false);
    t_bare_put[rep] = bare(true);
    pthread_barrier_wait(&bar_main);
  }
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);

  CHECK(atomic_load(&bare_put_bad) == 0, "bare_put: the bytes arrived with their signal");
  char la[64];
  double v[MAX_REPEATS];
  bench_spread y = bench_stats(t_bare, repeats), yp = bench_stats(t_bare_put, repeats);
  /* put_signal last: bench/trace-cost.sh reads its figures from it. */
  for (int t = NTESTS - 1; t >= 0; t--) {
    bench_spread x, z, zp, w, e, c, st;
#define STATS(out, expr)                                  \
  do {                                                    \
    for (int i_ = 0; i_ < repeats; i_++) v[i_] = (expr);  \
    out = bench_stats(v, repeats);                        \
  } while (0)
    STATS(x, t_stream[t][i_] * 1e9);
    STATS(z, t_stream[t][i_] / t_bare[i_]);
    STATS(zp, t_stream[t][i_] / t_bare_put[i_]);
    STATS(w, t_gated[t][i_] * 1e9);
    STATS(st, t_start[t][i_] * 1e9);
    STATS(e, t_enqueue[t][i_] * 1e9);
    STATS(c, t_csw[t][i_]);
    printf("bench=signal_latency test=%s iters=%d repeats=%d chunk_iters=%d payload_bytes=8 ", test_names[t], iters,
           repeats, chunk_iters);
    printf(MMM("half_rtt_ns", x, "%.0f"));
    printf(" bare_half_rtt_ns=%.0f bare_half_rtt_ns_min=%.0f bare_half_rtt_ns_max=%.0f bare_pinned=%d ", y.med * 1e9,
           y.min * 1e9, y.max * 1e9, atomic_load(&bare_pinned));
    printf(MMM("ratio", z, "%.2f"));
    printf(" target_ratio_max=2 bare_put_half_rtt_ns=%.0f bare_put_half_rtt_ns_min=%.0f bare_put_half_rtt_ns_max=%.0f ",
           yp.med * 1e9, yp.min * 1e9, yp.max * 1e9);
    printf(MMM("over_bare_put", zp, "%.2f"));
    printf(" ");
    printf(MMM("gated_half_rtt_ns", w, "%.0f"));
    printf(" warm_iters=%d ", bench_warm(chunk_iters));
    printf(MMM("start_half_rtt_ns", st, "%.0f"));
    printf(" ");
    printf(MMM("enqueue_ns_per_call", e, "%.0f"));
    printf(" ");
    printf(MMM("ctx_switches_per_half_rtt", c, "%.3f"));
    printf(" loadavg=%s\n", bench_loadavg(la, sizeof la));
  }
  for (int r = 0; r < 2; r++) {
    ncclCommWindowDeregister(comms[r], wins[r]);
    ncclMemFree(wins_mem[r]);
    ncclCommDestroy(comms[r]);
    ncclCommDestroy(gates[r]);
  }
  return 0;
}

#endif /* HAVE_DECL_NCCLPUTSIGNAL */
