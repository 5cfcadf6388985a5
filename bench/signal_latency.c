/*
 * bench/signal_latency.c — one-sided signal latency between two ranks:
 * ncclPutSignal -> ncclWaitSignal ping-pong (8-byte payload), and, in the
 * same run, a bare two-thread ping-pong over one shared atomic that spins,
 * then sleeps on a futex (the floor for any thread-to-thread handoff).
 *
 * Rank 0 puts to rank 1 and waits for its answer; rank 1 waits, then puts
 * back. The iterations are enqueued on each rank's stream ahead of a start
 * gate, a chunk at a time, so the stream workers do the ping-pong.
 * Reported: half round trip in ns, and its ratio to the bare one (target
 * <= 3).
 *
 * Output: key=value lines. Usage: signal_latency [iterations]
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static int iters = 100000;
static ncclComm_t comms[2];
static ncclComm_t gates[2]; /* a second communicator, for the start signal alone */
static void *wins_mem[2];
static ncclWindow_t wins[2];
static pthread_barrier_t bar;
static double t_nccl;

#define CHECK(cond, what) BENCH_CHECK(cond, what, "")

static double t_enqueue;

/* Iterations per chunk. A stream holds a bounded number of pending
 * operations (about 1021-1030 on H200 with NCCL 2.30.7; ncclsim:
 * NCCLSIM_STREAM_DEPTH, 1024 by default), and the next enqueue blocks the
 * host thread until one completes. Nothing behind the start gate can
 * complete before the start signal, and that signal is sent only once
 * both ranks have enqueued the whole chunk: a chunk, 2 * CHUNK_ITERS + 3
 * operations on rank 0's stream (the start wait, an event record, a put
 * and a wait per iteration, an event record), must therefore stay below
 * the stream depth, or the run deadlocks on a GPU. 256 iterations, 515
 * operations, is about half of it. */
#define CHUNK_ITERS 256
static int chunk_iters = CHUNK_ITERS;
static double t_gated; /* per half round trip, host clock, gate included */

/* Per chunk: both ranks enqueue it behind the gate; rank 0's stream opens
 * with a wait for a start signal that rank 1 sends (from a second stream)
 * once both are done, so the ping-pong is run by the stream workers alone;
 * both then synchronise. The start signal goes through a communicator of
 * its own: NCCL runs the operations of one communicator in the order they
 * were issued, across streams (each launch waits for the previous one to
 * complete), so on the ping-pong's communicator rank 1's start signal would
 * wait for rank 1's chunk, which waits for the start signal (communicators
 * are not ordered with each other unless NCCL_LAUNCH_ORDER_IMPLICIT is set).
 * The timed part is the ping-pong alone: two events on rank 0's stream,
 * recorded after the start wait and after the chunk's last wait, time each
 * chunk's 2 * chunk_iters half round trips, and the chunks' times add up. The host clock from the start signal to the end
 * of the synchronise is reported too (gated_half_rtt_ns): it adds each
 * chunk's start-signal handoff and wake-up from the synchronise, which
 * the stream clock leaves out. The enqueue cost is reported on its own. */
static void *nccl_rank(void *arg) {
  int r = (int)(intptr_t)arg, peer = 1 - r;
  cudaStream_t s, s2;
  cudaEvent_t ev[2];
  CHECK(cudaSetDevice(r) == cudaSuccess, "cudaSetDevice");
  CHECK(cudaStreamCreate(&s) == cudaSuccess, "cudaStreamCreate");
  CHECK(cudaStreamCreate(&s2) == cudaSuccess, "cudaStreamCreate");
  for (int e = 0; e < 2; e++) CHECK(cudaEventCreate(&ev[e]) == cudaSuccess, "cudaEventCreate");
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  char *src = wins_mem[r];
  /* The gate communicator's first one-sided operation, on both ranks at
   * once: it sets NCCL's one-sided state up and blocks until every rank
   * makes its own, so it cannot be rank 0's first start wait, enqueued
   * before rank 1 could signal. */
  if (r == 0) CHECK(ncclWaitSignal(1, &d, gates[r], s) == ncclSuccess, "ncclWaitSignal");
  else CHECK(ncclSignal(peer, 0, 0, 0, gates[r], s2) == ncclSuccess, "ncclSignal");
  CHECK(cudaStreamSynchronize(r == 0 ? s : s2) == cudaSuccess, "cudaStreamSynchronize");
  for (int warm = 0; warm < 2; warm++) {
    int n = warm ? iters : 1000;
    double enq = 0, run = 0, gated = 0;
    long calls = 0;
    for (int done = 0; done < n; done += chunk_iters) {
      int m = n - done < chunk_iters ? n - done : chunk_iters;
      pthread_barrier_wait(&bar);
      double t0 = bench_now();
      if (r == 0) {
        CHECK(ncclWaitSignal(1, &d, gates[r], s) == ncclSuccess, "ncclWaitSignal");
        CHECK(cudaEventRecord(ev[0], s) == cudaSuccess, "cudaEventRecord");
      }
      for (int i = 0; i < m; i++) {
        if (r == 1) CHECK(ncclWaitSignal(1, &d, comms[r], s) == ncclSuccess, "ncclWaitSignal");
        CHECK(ncclPutSignal(src, 8, ncclUint8, peer, wins[r], 64, 0, 0, 0, comms[r], s) == ncclSuccess,
              "ncclPutSignal");
        if (r == 0) CHECK(ncclWaitSignal(1, &d, comms[r], s) == ncclSuccess, "ncclWaitSignal");
      }
      if (r == 0) CHECK(cudaEventRecord(ev[1], s) == cudaSuccess, "cudaEventRecord");
      enq += bench_now() - t0;
      calls += 2 * m + (r == 0 ? 3 : 0);
      pthread_barrier_wait(&bar);
      t0 = bench_now();
      if (r == 1) CHECK(ncclSignal(peer, 0, 0, 0, gates[r], s2) == ncclSuccess, "ncclSignal");
      CHECK(cudaStreamSynchronize(s) == cudaSuccess, "cudaStreamSynchronize");
      gated += bench_now() - t0;
      if (r == 0) {
        float ms;
        CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]) == cudaSuccess, "cudaEventElapsedTime");
        run += ms * 1e-3;
      }
    }
    if (r == 0 && warm) {
      t_enqueue = enq / calls;
      t_nccl = run / (2.0 * n);
      t_gated = gated / (2.0 * n);
    }
  }
  CHECK(cudaStreamSynchronize(s2) == cudaSuccess, "cudaStreamSynchronize");
  for (int e = 0; e < 2; e++) cudaEventDestroy(ev[e]);
  cudaStreamDestroy(s);
  cudaStreamDestroy(s2);
  return NULL;
}

/* ---- the bare ping-pong: turn is even for thread 0, odd for thread 1 ---- */
static _Atomic uint32_t turn;
static _Atomic uint32_t sleepers;

static void bare_wait(uint32_t want) {
  for (int i = 0; i < 2000; i++) { /* as NCCLSIM_SPIN: pause, then yield */
    if (atomic_load_explicit(&turn, memory_order_acquire) == want) return;
    if (i < 64) __builtin_ia32_pause();
    else sched_yield();
  }
  for (;;) {
    atomic_fetch_add(&sleepers, 1);
    uint32_t seen = atomic_load(&turn);
    if (seen == want) {
      atomic_fetch_sub(&sleepers, 1);
      return;
    }
    syscall(SYS_futex, (uint32_t *)&turn, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
    atomic_fetch_sub(&sleepers, 1);
  }
}

static void bare_pass(void) {
  atomic_fetch_add_explicit(&turn, 1, memory_order_release);
  if (atomic_load(&sleepers)) syscall(SYS_futex, (uint32_t *)&turn, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void *bare_thread(void *arg) {
  uint32_t me = (uint32_t)(intptr_t)arg;
  for (int i = 0; i < iters; i++) {
    bare_wait(2 * (uint32_t)i + me);
    bare_pass();
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) iters = atoi(argv[1]);
  CHECK(iters > 0, "iterations");
#ifdef NCCLSIM
  /* Under a shallower simulated stream (NCCLSIM_STREAM_DEPTH), a chunk
   * that fits it: 2 * chunk + 3 operations at most. */
  const char *depth = ncclsimParamGet("STREAM_DEPTH");
  int dep = depth ? atoi(depth) : 0;
  if (dep > 0 && 2 * chunk_iters + 3 > dep) chunk_iters = (dep - 3) / 2;
  CHECK(chunk_iters > 0, "NCCLSIM_STREAM_DEPTH >= 5");
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
  pthread_t th[2];
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, nccl_rank, (void *)(intptr_t)r);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);

  double t0 = bench_now();
  for (int r = 0; r < 2; r++) pthread_create(&th[r], NULL, bare_thread, (void *)(intptr_t)r);
  for (int r = 0; r < 2; r++) pthread_join(th[r], NULL);
  double t_bare = (bench_now() - t0) / (2.0 * iters);

  printf("bench=signal_latency iters=%d chunk_iters=%d payload_bytes=8 half_rtt_ns=%.0f bare_half_rtt_ns=%.0f "
         "ratio=%.2f target_ratio_max=3 gated_half_rtt_ns=%.0f enqueue_ns_per_call=%.0f\n",
         iters, chunk_iters, t_nccl * 1e9, t_bare * 1e9, t_nccl / t_bare, t_gated * 1e9, t_enqueue * 1e9);
  for (int r = 0; r < 2; r++) {
    ncclCommWindowDeregister(comms[r], wins[r]);
    ncclMemFree(wins_mem[r]);
    ncclCommDestroy(comms[r]);
    ncclCommDestroy(gates[r]);
  }
  return 0;
}

#endif /* HAVE_DECL_NCCLPUTSIGNAL */
