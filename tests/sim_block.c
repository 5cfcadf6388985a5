/*
 * tests/sim_block.c — real NCCL's host-blocking rules in ncclsim: the first
 * use of a connection blocks the calling thread until the peers take part
 * (point to point, collectives unless NCCL_RUNTIME_CONNECT=0, one-sided
 * operations); a stream holds NCCLSIM_STREAM_DEPTH pending operations and
 * the next enqueue blocks; a blocked thread that only blocked threads could
 * release fails at once with a diagnostic, and one left waiting fails at
 * NCCLSIM_TIMEOUT naming the rule.
 *
 * One communicator's operations run in the order they were issued, across
 * streams (NCCLSIM_COMM_ORDER): a later operation on another stream waits
 * for the rank's earlier ones; a group is one launch.
 *
 * "Blocked until the peer called" is checked by order, not by time: the
 * peer sets a flag just before its call, and the blocked call must see it
 * set when it returns.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "capture.h"
#include "sim_ranks.h"
#include "slow.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static bool said(ncclComm_t comm, const char *text) { return strstr(ncclGetLastError(comm), text) != NULL; }

/* The timeout in force unless a test sets its own: 60 s times the build's
 * slowdown, as are the bounds that tell "at once" from "at the timeout". */
static int setup(void **state) {
  (void)state;
  ncclsimParamSet("TIMEOUT", scaled_str(60).s);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ncclsimParamSet("TIMEOUT", NULL);
  ncclsimParamSet("STREAM_DEPTH", NULL);
  ncclsimParamSet("COMM_ORDER", NULL);
  unsetenv("NCCL_RUNTIME_CONNECT");
  return 0;
}

/* ---------------------------------------- one thread, two ranks, no group */

/* The commonest NCCL mistake: one thread drives two ranks without a group.
 * On a GPU the first ncclSend never returns; here it fails at once, naming
 * the rule, the ranks and the remedy. Done right, in a group, it works. */
static void test_single_thread_no_group(void **state) {
  ncclComm_t comms[2];
  int *b[2];
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaMalloc((void **)&b[r], 64), cudaSuccess);
  }
  cudaSetDevice(0);
  double t0 = now();
  assert_int_equal(ncclSend(b[0], 4, ncclInt32, 1, comms[0], 0), ncclInvalidUsage);
  assert_true(now() - t0 < scaled(10)); /* at once, not at the timeout */
  const char *msg = ncclGetLastError(comms[0]);
  print_message("%s\n", msg);
  assert_non_null(strstr(msg, "rank 0's first ncclSend to rank 1 waits for rank 1 to connect"));
  assert_non_null(strstr(msg, "rank 1 is driven by this same thread"));
  assert_non_null(strstr(msg, "ncclGroupStart/End"));
  /* Nothing was left behind: the grouped exchange connects and runs. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSend(b[0], 4, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclRecv(b[1], 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  }
  /* Connected now: a lone send no longer blocks on the link. */
  cudaSetDevice(0);
  assert_int_equal(ncclSend(b[0], 4, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclRecv(b[1], 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    cudaFree(b[r]);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
}

/* The same for a first collective and a first one-sided operation. */
static void test_single_thread_first_coll_and_rma(void **state) {
  ncclComm_t comms[2];
  float *b;
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(cudaMalloc((void **)&b, 64), cudaSuccess);
  assert_int_equal(ncclAllReduce(b, b, 4, ncclFloat32, ncclSum, comms[0], 0), ncclInvalidUsage);
  assert_true(said(comms[0], "rank 0's first collective (ncclAllReduce) waits for every rank's first collective"));
  assert_true(said(comms[0], "NCCL_RUNTIME_CONNECT=0"));
  ncclWaitSignalDesc_t d = {1, 1, 0, 0};
  assert_int_equal(ncclWaitSignal(1, &d, comms[0], 0), ncclInvalidUsage);
  assert_true(said(comms[0], "rank 0's first one-sided operation (ncclWaitSignal)"));
  cudaFree(b);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

/* ------------------------------------------------ two threads, one late */

typedef struct {
  const char *what; /* "p2p", "coll", "rma" */
  _Atomic int peer_called;
  int seen; /* peer_called as rank 0's first call returned */
  ncclResult_t res;
  double blocked; /* seconds rank 0's first call took */
} late_arg;

/* Rank 1 comes late (it sleeps 300 ms times the build's slowdown, then sets
 * peer_called right before its first call); rank 0's first call returns
 * only after that, or (expect_blocked 0) before it, which it must do within
 * rank 1's head start. */
static void late_fn(rank_ctx *c) {
  late_arg *a = c->arg;
  int *b;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&b, 64), cudaSuccess);
  ncclWaitSignalDesc_t d = {1, 1, 0, 0}; /* rank 0 waits for one signal from rank 1 */
  if (c->rank == 1) {
    sleep_ms(300 * slowdown());
    atomic_store(&a->peer_called, 1);
  }
  double t0 = now();
  ncclResult_t res;
  if (!strcmp(a->what, "p2p"))
    res = c->rank == 0 ? ncclSend(b, 4, ncclInt32, 1, c->comm, s) : ncclRecv(b, 4, ncclInt32, 0, c->comm, s);
  else if (!strcmp(a->what, "coll"))
    res = ncclAllReduce(b, b, 4, ncclInt32, ncclSum, c->comm, s);
  else
    res = c->rank == 0 ? ncclWaitSignal(1, &d, c->comm, s) : ncclSignal(0, 0, 0, 0, c->comm, s);
  if (c->rank == 0) {
    a->seen = atomic_load(&a->peer_called);
    a->blocked = now() - t0;
    a->res = res;
  }
  assert_int_equal(res, ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  cudaFree(b);
  cudaStreamDestroy(s);
}

static void run_late(const char *what, int expect_blocked) {
  late_arg a = {what, 0, -1, ncclInternalError, 0};
  assert_int_equal(run_ranks(2, late_fn, &a), 0);
  print_message("%s: rank 0's first call took %.3f s; peer had called: %d\n", what, a.blocked, a.seen);
  assert_int_equal(a.res, ncclSuccess);
  assert_int_equal(a.seen, expect_blocked);
}

static void test_first_send_blocks(void **state) { run_late("p2p", 1); }
static void test_first_collective_blocks(void **state) { run_late("coll", 1); }
static void test_first_rma_blocks(void **state) { run_late("rma", 1); }

/* NCCL_RUNTIME_CONNECT=0 connects collectives at init: the first
 * collective returns before the late peer even calls. Point to point and
 * one-sided operations still connect at first use. */
static void test_runtime_connect_off(void **state) {
  setenv("NCCL_RUNTIME_CONNECT", "0", 1);
  run_late("coll", 0);
  run_late("p2p", 1);
  run_late("rma", 1);
  unsetenv("NCCL_RUNTIME_CONNECT");
}

/* A late peer that never comes: NCCLSIM_TIMEOUT, and the rule named. */
static _Atomic int never_done;
static void never_fn(rank_ctx *c) {
  int *b;
  assert_int_equal(cudaMalloc((void **)&b, 64), cudaSuccess);
  if (c->rank == 0) {
    ncclsimParamSet("TIMEOUT", "0.5");
    assert_int_equal(ncclSend(b, 4, ncclInt32, 1, c->comm, 0), ncclTimeout);
    const char *msg = ncclGetLastError(c->comm);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "rank(s) [1] still had not"));
    assert_non_null(strstr(msg, "NCCL connects a point-to-point link at its first use"));
    assert_int_equal(ncclSend(b, 4, ncclInt32, 1, c->comm, 0), ncclTimeout); /* still not */
    ncclsimParamSet("TIMEOUT", scaled_str(60).s);
    atomic_store(&never_done, 1);
  } else {
    /* Running, so no deadlock can be claimed: only the timeout. Until rank
     * 0 is done: a fixed sleep ended first on a loaded machine, and rank
     * 0's second send then met a destroyed peer (ncclRemoteError). */
    for (int i = 0; i < 6000 * slowdown() && !atomic_load(&never_done); i++) sleep_ms(10);
  }
  cudaFree(b);
}

static void test_timeout_names_rule(void **state) {
  atomic_store(&never_done, 0);
  ncclsimParamSet("TIMEOUT", scaled_str(60).s);
  assert_int_equal(run_ranks(2, never_fn, NULL), 0);
}

/* --------------------------------------------- a cycle of two threads */

/* Thread A drives ranks 0 and 2, thread B rank 1. A's first send 0->1
 * waits for rank 1; B's first send 1->2 waits for rank 2, whose driver is
 * A. Both are blocked, neither can ever be released: both fail at once. */
typedef struct {
  ncclComm_t *comms;
  int me;
  pthread_barrier_t *bar;
  ncclResult_t res;
  char msg[512];
} cyc_arg;

static void *cyc_thread(void *p) {
  cyc_arg *a = p;
  int rank = a->me == 0 ? 0 : 1, peer = rank + 1;
  cudaSetDevice(rank);
  int *b;
  cudaMalloc((void **)&b, 64);
  if (a->me == 0) { /* rank 2's driver becomes this thread */
    void *h;
    assert_int_equal(ncclCommRegister(a->comms[2], NULL, 0, &h), ncclSuccess);
    assert_int_equal(ncclCommDeregister(a->comms[2], h), ncclSuccess);
  }
  pthread_barrier_wait(a->bar);
  a->res = ncclSend(b, 4, ncclInt32, peer, a->comms[rank], 0);
  snprintf(a->msg, sizeof a->msg, "%s", ncclGetLastError(a->comms[rank]));
  cudaFree(b);
  return NULL;
}

static void test_cycle_of_threads(void **state) {
  ncclComm_t comms[3];
  assert_int_equal(ncclCommInitAll(comms, 3, NULL), ncclSuccess);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 2);
  cyc_arg a[2] = {{comms, 0, &bar, ncclInternalError, ""}, {comms, 1, &bar, ncclInternalError, ""}};
  pthread_t th[2];
  double t0 = now();
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, cyc_thread, &a[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&bar);
  double took = now() - t0;
  for (int i = 0; i < 2; i++) print_message("thread %d (%d, %.2f s): %s\n", i, a[i].res, took, a[i].msg);
  assert_true(took < scaled(20)); /* at once, not at the timeout */
  for (int i = 0; i < 2; i++) {
    assert_int_equal(a[i].res, ncclInvalidUsage);
    assert_non_null(strstr(a[i].msg, "itself blocked in"));
  }
  for (int r = 0; r < 3; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
}

/* ------------------------------------------------------- stream depth */

typedef struct {
  _Atomic int enqueued; /* by rank 0 */
  _Atomic int peer_started;
  int before_peer; /* enqueued when the peer started */
  int depth;
} depth_arg;

/* After a warm-up exchange, rank 0 enqueues N receives at once; rank 1
 * sends them only 300 ms later. Rank 0 gets exactly NCCLSIM_STREAM_DEPTH
 * of them in before its thread blocks. */
static void depth_fn(rank_ctx *c) {
  enum { N = 40 };
  depth_arg *a = c->arg;
  int *b;
  assert_int_equal(cudaMalloc((void **)&b, 64), cudaSuccess);
  if (c->rank == 0) assert_int_equal(ncclRecv(b, 1, ncclInt32, 1, c->comm, 0), ncclSuccess);
  else assert_int_equal(ncclSend(b, 1, ncclInt32, 0, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  if (c->rank == 0) {
    for (int i = 0; i < N; i++) {
      assert_int_equal(ncclRecv(b, 1, ncclInt32, 1, c->comm, 0), ncclSuccess);
      atomic_fetch_add(&a->enqueued, 1);
    }
  } else {
    sleep_ms(300 * slowdown()); /* rank 0 fills its stream meanwhile */
    a->before_peer = atomic_load(&a->enqueued);
    atomic_store(&a->peer_started, 1);
    for (int i = 0; i < N; i++) assert_int_equal(ncclSend(b, 1, ncclInt32, 0, c->comm, 0), ncclSuccess);
  }
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  cudaFree(b);
}

static void test_stream_depth(void **state) {
  ncclsimParamSet("STREAM_DEPTH", "8");
  depth_arg a = {0, 0, -1, 8};
  assert_int_equal(run_ranks(2, depth_fn, &a), 0);
  print_message("enqueued before the peer started: %d (depth 8)\n", a.before_peer);
  assert_int_equal(a.before_peer, 8);
  assert_int_equal(atomic_load(&a.enqueued), 40);
  ncclsimParamSet("STREAM_DEPTH", NULL);
}

/* One-sided operations count as the CUDA operations NCCL puts on the
 * stream for them: behind a pending wait (1), a depth of 22 takes 7 puts of
 * bytes (3 each), 10 signals (2 each), or 21 more waits (1 each). */
typedef struct {
  const char *what;
  _Atomic int enqueued;
  int before_peer;
} rma_depth_arg;

static void connect_rma(rank_ctx *c, cudaStream_t s);

static void rma_depth_fn(rank_ctx *c) {
  enum { N = 30 };
  rma_depth_arg *a = c->arg;
  int peer = 1 - c->rank;
  char *mem;
  ncclWindow_t win;
  ncclWaitSignalDesc_t one = {1, peer, 0, 0};
  assert_int_equal(ncclMemAlloc((void **)&mem, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  connect_rma(c, 0);
  if (c->rank == 0) {
    assert_int_equal(ncclWaitSignal(1, &one, c->comm, 0), ncclSuccess); /* until rank 1 signals */
    for (int i = 0; i < N; i++) {
      if (!strcmp(a->what, "put"))
        assert_int_equal(ncclPutSignal(mem, 8, ncclUint8, peer, win, 64, 0, 0, 0, c->comm, 0), ncclSuccess);
      else if (!strcmp(a->what, "signal"))
        assert_int_equal(ncclSignal(peer, 0, 0, 0, c->comm, 0), ncclSuccess);
      else
        assert_int_equal(ncclWaitSignal(1, &one, c->comm, 0), ncclSuccess);
      atomic_fetch_add(&a->enqueued, 1);
    }
  } else {
    sleep_ms(300 * slowdown()); /* rank 0 fills its stream meanwhile */
    a->before_peer = atomic_load(&a->enqueued);
    int n = strcmp(a->what, "wait") ? 1 : 1 + N; /* what rank 0 waits for */
    for (int i = 0; i < n; i++) assert_int_equal(ncclSignal(peer, 0, 0, 0, c->comm, 0), ncclSuccess);
    if (strcmp(a->what, "wait")) {
      ncclWaitSignalDesc_t all = {N, peer, 0, 0}; /* what rank 0 sent */
      assert_int_equal(ncclWaitSignal(1, &all, c->comm, 0), ncclSuccess);
    }
  }
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, win), ncclSuccess);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
}

static void test_stream_depth_rma(void **state) {
  static const struct { const char *what; int want; } k[] = {{"put", 7}, {"signal", 10}, {"wait", 21}};
  ncclsimParamSet("STREAM_DEPTH", "22");
  for (int i = 0; i < 3; i++) {
    rma_depth_arg a = {k[i].what, 0, -1};
    assert_int_equal(run_ranks(2, rma_depth_fn, &a), 0);
    print_message("%s: enqueued behind the wait before the peer started: %d\n", k[i].what, a.before_peer);
    assert_int_equal(a.before_peer, k[i].want);
  }
  ncclsimParamSet("STREAM_DEPTH", NULL);
}

/* One thread fills rank 0's stream with receives whose sends only it
 * could make (for rank 1): the enqueue past the depth fails at once. So
 * does a full stream of cudaMemcpyAsync behind such a receive. */
static void test_stream_depth_single_thread(void **state) {
  ncclComm_t comms[2];
  int *b[2];
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&b[r], 64);
  }
  assert_int_equal(ncclGroupStart(), ncclSuccess); /* connect 1->0 */
  cudaSetDevice(0);
  assert_int_equal(ncclRecv(b[0], 1, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclSend(b[1], 1, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  cudaStreamSynchronize(0);
  cudaSetDevice(0);
  cudaStreamSynchronize(0);
  ncclsimParamSet("STREAM_DEPTH", "4");
  int i;
  ncclResult_t res = ncclSuccess;
  double t0 = now();
  for (i = 0; i < 10 && res == ncclSuccess; i++) res = ncclRecv(b[0], 1, ncclInt32, 1, comms[0], 0);
  assert_int_equal(res, ncclInvalidUsage);
  assert_int_equal(i, 5); /* 4 in, the 5th refused */
  assert_true(now() - t0 < scaled(10)); /* at once, not at the timeout */
  const char *msg = ncclGetLastError(comms[0]);
  print_message("%s\n", msg);
  assert_non_null(strstr(msg, "NCCLSIM_STREAM_DEPTH=4"));
  assert_non_null(strstr(msg, "rank 1 is driven by this same thread"));
  assert_int_equal(cudaMemcpyAsync(b[0], b[0] + 8, 4, cudaMemcpyDeviceToDevice, 0), cudaErrorLaunchFailure);
  /* Event records are not bounded, as in CUDA: one still goes in. */
  cudaEvent_t ev;
  assert_int_equal(cudaEventCreate(&ev), cudaSuccess);
  assert_int_equal(cudaEventRecord(ev, 0), cudaSuccess);
  /* The four receives still wait: rank 1 sends them, the stream drains. */
  cudaSetDevice(1);
  for (int k = 0; k < 4; k++) assert_int_equal(ncclSend(b[1], 1, ncclInt32, 0, comms[1], 0), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  }
  assert_int_equal(cudaEventQuery(ev), cudaSuccess);
  cudaEventDestroy(ev);
  ncclsimParamSet("STREAM_DEPTH", NULL);
  for (int r = 0; r < 2; r++) {
    cudaFree(b[r]);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  }
}

/* A stream filled by operations that progress on their own (copies) only
 * delays the enqueue: no deadlock is claimed. */
static void test_stream_depth_copies(void **state) {
  enum { BYTES = 1 << 20 };
  char *d0, *d1;
  cudaSetDevice(0);
  assert_int_equal(cudaMalloc((void **)&d0, BYTES), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&d1, BYTES), cudaSuccess);
  ncclsimParamSet("STREAM_DEPTH", "2");
  for (int i = 0; i < 50; i++) assert_int_equal(cudaMemcpyAsync(d1, d0, BYTES, cudaMemcpyDeviceToDevice, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  ncclsimParamSet("STREAM_DEPTH", NULL);
  cudaFree(d0);
  cudaFree(d1);
}

/* A host function takes a place of the depth while it runs, none while
 * queued (CUDA 13 on H200: 1021 memsets behind a blocking host function,
 * 1022 pending behind a kernel; any number of host functions behind a
 * blocked stream). */
static _Atomic int host_at, host_open;
static void host_gate(void *arg) {
  (void)arg;
  atomic_store(&host_at, 1);
  while (!atomic_load(&host_open)) sleep_ms(1);
}

static void test_stream_depth_host_fn(void **state) {
  (void)state;
  char *d;
  cudaStream_t s;
  cudaSetDevice(0);
  assert_int_equal(cudaMalloc((void **)&d, 64), cudaSuccess);
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ncclsimParamSet("STREAM_DEPTH", "4");
  ncclsimParamSet("TIMEOUT", scaled_str(0.5).s);
  atomic_store(&host_at, 0);
  atomic_store(&host_open, 0);
  assert_int_equal(cudaLaunchHostFunc(s, host_gate, NULL), cudaSuccess);
  while (!atomic_load(&host_at)) sleep_ms(1);
  for (int i = 0; i < 3; i++) assert_int_equal(cudaMemsetAsync(d, i, 64, s), cudaSuccess);
  for (int i = 0; i < 50; i++) assert_int_equal(cudaLaunchHostFunc(s, host_gate, NULL), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 3, 64, s), cudaErrorTimeout); /* 3 + the running host function */
  atomic_store(&host_open, 1);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 3, 64, s), cudaSuccess); /* the room is back */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  ncclsimParamSet("STREAM_DEPTH", NULL);
  ncclsimParamSet("TIMEOUT", scaled_str(60).s);
  cudaGetLastError();
  cudaStreamDestroy(s);
  cudaFree(d);
}

/* ------------------------------- one communicator, several streams */

/* Every rank's first one-sided operations, grouped (they connect). */
static void connect_rma(rank_ctx *c, cudaStream_t s) {
  int peer = 1 - c->rank;
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSignal(peer, 0, 0, 0, c->comm, s), ncclSuccess);
  assert_int_equal(ncclWaitSignal(1, &d, c->comm, s), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
}

typedef struct {
  pthread_barrier_t bar;
  int order;               /* NCCLSIM_COMM_ORDER of the run */
  cudaError_t behind;      /* rank 0's second stream after its signal: 100 ms after with the order on,
                            * once done (or after 60 s times the slowdown) with it off */
} order_arg;

/* Rank 0 waits on stream A for a signal rank 1 sends only later, then
 * signals rank 1 from stream B: the signal stays behind the wait (B not
 * done after 100 ms) until rank 1's signal ends the wait. */
static void order_fn(rank_ctx *c) {
  order_arg *a = c->arg;
  cudaStream_t sa, sb;
  int peer = 1 - c->rank;
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  assert_int_equal(cudaStreamCreate(&sa), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&sb), cudaSuccess);
  connect_rma(c, sa);
  if (c->rank == 0) {
    assert_int_equal(ncclWaitSignal(1, &d, c->comm, sa), ncclSuccess);
    assert_int_equal(ncclSignal(peer, 0, 0, 0, c->comm, sb), ncclSuccess);
    if (a->order) { /* it cannot run before rank 1 signals, after the barrier */
      sleep_ms(100);
      a->behind = cudaStreamQuery(sb);
    } else { /* it runs at once, however loaded the machine: wait for it */
      for (int i = 0; i < 6000 * slowdown() && (a->behind = cudaStreamQuery(sb)) == cudaErrorNotReady; i++)
        sleep_ms(10);
    }
  }
  pthread_barrier_wait(&a->bar);
  if (c->rank == 1) {
    assert_int_equal(ncclSignal(peer, 0, 0, 0, c->comm, sa), ncclSuccess);
    assert_int_equal(ncclWaitSignal(1, &d, c->comm, sa), ncclSuccess);
  }
  assert_int_equal(cudaStreamSynchronize(sa), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(sb), cudaSuccess);
  cudaStreamDestroy(sa);
  cudaStreamDestroy(sb);
}

static void test_comm_order_across_streams(void **state) {
  order_arg a = {.order = 1};
  pthread_barrier_init(&a.bar, NULL, 2);
  assert_int_equal(run_ranks(2, order_fn, &a), 0);
  assert_int_equal(a.behind, cudaErrorNotReady);
  /* Switched off, the signal runs at once on its own stream. */
  a.order = 0;
  ncclsimParamSet("COMM_ORDER", "0");
  assert_int_equal(run_ranks(2, order_fn, &a), 0);
  assert_int_equal(a.behind, cudaSuccess);
  pthread_barrier_destroy(&a.bar);
}

/* Each rank waits on stream A for the other's signal and sends its own
 * from stream B: on a GPU both signals stay behind the waits forever. Here
 * the waits end at NCCLSIM_TIMEOUT, and the dump says why. The first wait
 * to time out lets its rank's signal go, which may end the other rank's
 * wait just in time (on a loaded machine): one timeout at least. */
static _Atomic int xstream_timeouts;
static void xstream_fn(rank_ctx *c) {
  cudaStream_t sa, sb;
  int peer = 1 - c->rank;
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  assert_int_equal(cudaStreamCreate(&sa), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&sb), cudaSuccess);
  connect_rma(c, sa);
  ncclsimParamSet("TIMEOUT", "0.5");
  assert_int_equal(ncclWaitSignal(1, &d, c->comm, sa), ncclSuccess);
  assert_int_equal(ncclSignal(peer, 0, 0, 0, c->comm, sb), ncclSuccess);
  cudaError_t ea = cudaStreamSynchronize(sa);
  assert_true(ea == cudaErrorTimeout || ea == cudaSuccess);
  atomic_fetch_add(&xstream_timeouts, ea == cudaErrorTimeout);
  assert_int_equal(cudaStreamSynchronize(sb), cudaSuccess); /* ran once the wait had ended */
  cudaStreamDestroy(sa);
  cudaStreamDestroy(sb);
}

static void test_comm_order_deadlock_diagnosed(void **state) {
  ncclsimParamSet("DEBUG", "WARN");
  capture cap; /* the WARN lines, from stderr */
  capture_start(&cap, 2);
  atomic_store(&xstream_timeouts, 0);
  int failed = run_ranks(2, xstream_fn, NULL);
  char *log = capture_end(&cap);
  assert_int_equal(failed, 0);
  ncclsimParamSet("DEBUG", NULL);
  print_message("%s", log);
  assert_non_null(strstr(log, "ncclSignal, not begun: it waits for the rank's earlier operations on another stream"));
  assert_non_null(strstr(log, "in the order they were issued, across streams"));
  assert_true(atomic_load(&xstream_timeouts) >= 1);
  free(log);
}

/* A group is one launch: a send on one stream and a receive on another,
 * grouped on both ranks, complete (they do not wait for each other). */
static void group_streams_fn(rank_ctx *c) {
  cudaStream_t sa, sb;
  int peer = 1 - c->rank, *b;
  assert_int_equal(cudaMalloc((void **)&b, 64), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&sa), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&sb), cudaSuccess);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclSend(b, 4, ncclInt32, peer, c->comm, sa), ncclSuccess);
    assert_int_equal(ncclRecv(b + 8, 4, ncclInt32, peer, c->comm, sb), ncclSuccess);
    assert_int_equal(ncclGroupEnd(), ncclSuccess);
  }
  assert_int_equal(cudaStreamSynchronize(sa), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(sb), cudaSuccess);
  cudaFree(b);
  cudaStreamDestroy(sa);
  cudaStreamDestroy(sb);
}

static void test_comm_order_group_is_one_launch(void **state) {
  ncclsimParamSet("TIMEOUT", scaled_str(5).s); /* a wait for each other would end there */
  assert_int_equal(run_ranks(2, group_streams_fn, NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_single_thread_no_group, setup, teardown),
      cmocka_unit_test_setup_teardown(test_single_thread_first_coll_and_rma, setup, teardown),
      cmocka_unit_test_setup_teardown(test_first_send_blocks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_first_collective_blocks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_first_rma_blocks, setup, teardown),
      cmocka_unit_test_setup_teardown(test_runtime_connect_off, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timeout_names_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cycle_of_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_depth, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_depth_single_thread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_depth_copies, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_depth_host_fn, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_depth_rma, setup, teardown),
      cmocka_unit_test_setup_teardown(test_comm_order_across_streams, setup, teardown),
      cmocka_unit_test_setup_teardown(test_comm_order_deadlock_diagnosed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_comm_order_group_is_one_launch, setup, teardown),
  };
  return cmocka_run_group_tests_name("sim_block", tests, NULL, NULL);
}
