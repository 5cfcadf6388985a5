/*
 * tests/sim_rma.c — ncclsim's window and registration registry, and the
 * signal counters: overlapping registrations, deregistration while another
 * rank still registers, memory freed while registered, unequal window sizes,
 * and the diagnostic of a wait that is never satisfied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim.h"
#include "sim_ranks.h"
#include "slow.h"
#include <nccl_device.h>

static pthread_barrier_t bar;

static void sleep_ms(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

static uint64_t mem_total(ncclComm_t comm) {
  uint64_t v = 0;
  assert_int_equal(ncclCommMemStats(comm, ncclStatGpuMemTotal, &v), ncclSuccess);
  return v;
}

/* Two overlapping buffer registrations and two windows over the same
 * memory: independent handles, each deregistered once. */
static void overlap_fn(rank_ctx *c) {
  void *mem, *h1, *h2;
  ncclWindow_t w1, w2;
  assert_int_equal(ncclMemAlloc(&mem, 1 << 16), ncclSuccess);
  uint64_t base = mem_total(c->comm);
  assert_int_equal(ncclCommRegister(c->comm, mem, 1 << 16, &h1), ncclSuccess);
  assert_int_equal(ncclCommRegister(c->comm, (char *)mem + 4096, 8192, &h2), ncclSuccess);
  assert_ptr_not_equal(h1, h2);
  assert_int_equal(mem_total(c->comm), base + (1 << 16) + 8192);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 1 << 16, &w1, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w2, NCCL_WIN_DEFAULT), ncclSuccess);
  assert_ptr_not_equal(w1, w2);
  assert_int_equal(ncclCommDeregister(c->comm, h2), ncclSuccess);
  assert_int_equal(ncclCommDeregister(c->comm, h2), ncclInvalidUsage);
  assert_int_equal(ncclCommDeregister(c->comm, h1), ncclSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w2), ncclSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w2), ncclInvalidUsage);
  void *p;
  assert_int_equal(ncclWinGetUserPtr(c->comm, w1, &p), ncclSuccess);
  assert_ptr_equal(p, mem);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w1), ncclSuccess);
  assert_int_equal(mem_total(c->comm), base);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
}

static void test_overlapping(void **state) { assert_int_equal(run_ranks(2, overlap_fn, NULL), 0); }

/* Rank 0 deregisters window A while rank 1 is still registering window
 * B: deregistration is local, and B completes on both once rank 0 joins. */
static void dereg_fn(rank_ctx *c) {
  void *a, *b, *p;
  ncclWindow_t wa, wb;
  assert_int_equal(ncclMemAlloc(&a, 4096), ncclSuccess);
  assert_int_equal(ncclMemAlloc(&b, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, a, 4096, &wa, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  pthread_barrier_wait(&bar);
  if (c->rank == 1) {
    assert_int_equal(ncclCommWindowRegister(c->comm, b, 4096, &wb, 0), ncclSuccess); /* waits for rank 0 */
  } else {
    sleep_ms(50); /* rank 1 is inside its registration of B now */
    assert_int_equal(ncclCommWindowDeregister(c->comm, wa), ncclSuccess);
    assert_int_equal(ncclGetLsaDevicePointer(wa, 0, 0, &p), ncclInvalidArgument);
    assert_int_equal(ncclCommWindowRegister(c->comm, b, 4096, &wb, 0), ncclSuccess);
  }
  assert_non_null(wb);
  pthread_barrier_wait(&bar);
  if (c->rank == 1) { /* its handle of A is still whole */
    assert_int_equal(ncclGetLsaDevicePointer(wa, 0, 1, &p), ncclSuccess);
    assert_ptr_equal(p, a);
    assert_int_equal(ncclCommWindowDeregister(c->comm, wa), ncclSuccess);
  }
  assert_int_equal(ncclCommWindowDeregister(c->comm, wb), ncclSuccess);
  pthread_barrier_wait(&bar);
  ncclMemFree(a);
  ncclMemFree(b);
}

static void test_dereg_while_registering(void **state) {
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, dereg_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* Every rank's first one-sided operation, together: as on a GPU, the first
 * one blocks its caller until every rank has made its own (NCCL sets
 * one-sided state up then). Each rank signals the next and waits for the
 * previous one's signal. */
static void rma_connect(rank_ctx *c, cudaStream_t s) {
  ncclWaitSignalDesc_t d = {1, (c->rank + c->nranks - 1) % c->nranks, 0, 0};
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclSignal((c->rank + 1) % c->nranks, 0, 0, 0, c->comm, s), ncclSuccess);
  assert_int_equal(ncclWaitSignal(1, &d, c->comm, s), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
}

/* Rank 1 frees its window memory while it is still registered: a put into
 * it fails with a diagnostic instead of writing freed memory, and the
 * window (and a buffer registration over freed memory) still deregisters. */
static void freed_fn(rank_ctx *c) {
  void *mem, *h;
  ncclWindow_t w;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 8192), ncclSuccess);
  assert_int_equal(ncclCommRegister(c->comm, mem, 8192, &h), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 8192, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  rma_connect(c, s);
  if (c->rank == 1) assert_int_equal(ncclMemFree(mem), ncclSuccess);
  pthread_barrier_wait(&bar);
  if (c->rank == 0) {
    assert_int_equal(ncclPutSignal(mem, 64, ncclUint8, 1, w, 0, 0, 0, 0, c->comm, s), ncclSuccess);
    assert_int_not_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_non_null(strstr(ncclGetLastError(c->comm), "freed"));
  }
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  assert_int_equal(ncclCommDeregister(c->comm, h), ncclSuccess);
  if (c->rank == 0) assert_int_equal(ncclMemFree(mem), ncclSuccess);
  cudaStreamDestroy(s);
}

static void test_free_while_registered(void **state) {
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, freed_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* The same with the free after the put was enqueued: the enqueue found the
 * target allocated, and the worker, which looks again only when something
 * was freed since (sim/rma/put.c), still fails the put. */
static _Atomic int gate_open;
static void gate_fn(void *arg) {
  (void)arg;
  while (!atomic_load(&gate_open)) usleep(1000);
}
static void freed_after_enqueue_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 8192), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 8192, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  rma_connect(c, s);
  if (c->rank == 0) {
    atomic_store(&gate_open, 0);
    assert_int_equal(cudaLaunchHostFunc(s, gate_fn, NULL), cudaSuccess);
    assert_int_equal(ncclPutSignal(mem, 64, ncclUint8, 1, w, 0, 0, 0, 0, c->comm, s), ncclSuccess);
  }
  pthread_barrier_wait(&bar);
  if (c->rank == 1) assert_int_equal(ncclMemFree(mem), ncclSuccess);
  pthread_barrier_wait(&bar);
  if (c->rank == 0) {
    atomic_store(&gate_open, 1);
    assert_int_not_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_non_null(strstr(ncclGetLastError(c->comm), "freed"));
  }
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  if (c->rank == 0) assert_int_equal(ncclMemFree(mem), ncclSuccess);
  cudaStreamDestroy(s);
}

static void test_free_after_enqueue(void **state) {
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, freed_after_enqueue_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* Both ranks deregister while rank 0's put is still queued: the put holds
 * a reference of its own rank to the collective window (rank 1's count has
 * fallen to 0 by then, its own put long done), so the window's pointers
 * stay readable and the bytes land. ASan sees a use after free if the
 * references are dropped from the wrong rank's count. */
static void dereg_with_put_queued_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  memset(mem, 0x10 + c->rank, 4096);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  rma_connect(c, s);
  if (c->rank == 0) {
    atomic_store(&gate_open, 0);
    assert_int_equal(cudaLaunchHostFunc(s, gate_fn, NULL), cudaSuccess);
  }
  assert_int_equal(ncclPutSignal(mem, 64, ncclUint8, 1 - c->rank, w, 1024, 0, 0, 0, c->comm, s), ncclSuccess);
  if (c->rank == 1) assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  pthread_barrier_wait(&bar); /* both deregistered; rank 0's put is still queued */
  if (c->rank == 0) {
    atomic_store(&gate_open, 1);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  }
  pthread_barrier_wait(&bar);
  unsigned char *got = (unsigned char *)mem + 1024;
  for (int i = 0; i < 64; i++) assert_int_equal(got[i], 0x10 + (1 - c->rank));
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
  cudaStreamDestroy(s);
}

static void test_dereg_with_put_queued(void **state) {
  (void)state;
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, dereg_with_put_queued_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* Unequal sizes are accepted, as by real NCCL 2.28.3 and 2.30.7
 * (conformance/probes/win_unequal.c): each rank's window keeps its own
 * size. Rank 2's window is twice the others'. A put's offset must lie in
 * the caller's own window, as real NCCL checks it (rank 1 cannot reach
 * rank 2's upper half), and ncclsim also refuses bytes past the target's
 * window (rank 2 into rank 0's), as it does a peer pointer past it. */
static void unequal_fn(rank_ctx *c) {
  void *mem, *p;
  ncclWindow_t w = NULL;
  cudaStream_t s;
  size_t bytes = c->rank == 2 ? 8192 : 4096;
  int next = (c->rank + 1) % 3, prev = (c->rank + 2) % 3;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, bytes), ncclSuccess);
  memset(mem, c->rank, bytes);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, bytes, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  assert_non_null(w);
  assert_int_equal(ncclWinGetUserPtr(c->comm, w, &p), ncclSuccess);
  assert_ptr_equal(p, mem);
  assert_int_equal(ncclPutSignal(mem, 1024, ncclUint8, next, w, 2048, 0, 0, 0, c->comm, s), ncclSuccess);
  ncclWaitSignalDesc_t d = {.opCnt = 1, .peer = prev, .sigIdx = 0, .ctx = 0};
  assert_int_equal(ncclWaitSignal(1, &d, c->comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  for (size_t i = 0; i < 1024; i++) assert_int_equal(((unsigned char *)mem)[2048 + i], prev);
  if (c->rank == 2) {
    assert_int_equal(ncclPutSignal(mem, 1024, ncclUint8, 0, w, 6144, 0, 0, 0, c->comm, s), ncclInvalidArgument);
    assert_non_null(strstr(ncclGetLastError(c->comm), "rank 0's window (4096 bytes)"));
    assert_int_equal(ncclGetPeerDevicePointer(w, 6144, 0, &p), ncclInvalidArgument);
    assert_int_equal(ncclGetPeerDevicePointer(w, 4095, 0, &p), ncclSuccess);
    assert_non_null(p);
  } else {
    assert_int_equal(ncclGetPeerDevicePointer(w, 6144, 2, &p), ncclInvalidArgument); /* past my own */
  }
  if (c->rank == 1) {
    assert_int_equal(ncclPutSignal(mem, 1024, ncclUint8, 2, w, 6144, 0, 0, 0, c->comm, s), ncclInvalidArgument);
    assert_non_null(strstr(ncclGetLastError(c->comm), "past rank 1's own window (4096 bytes)"));
  }
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  ncclMemFree(mem);
}

static void test_unequal_sizes(void **state) { assert_int_equal(run_ranks(3, unequal_fn, NULL), 0); }

/* Counting: two waits on two streams of one rank each consume their own
 * count; a wait never satisfied names the rank, peer and missing count. */
static void count_fn(rank_ctx *c) {
  cudaStream_t s1, s2;
  assert_int_equal(cudaStreamCreate(&s1), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&s2), cudaSuccess);
  if (c->rank == 0) {
    for (int i = 0; i < 5; i++) assert_int_equal(ncclSignal(1, 0, 0, 0, c->comm, s1), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
  } else {
    ncclWaitSignalDesc_t d2 = {2, 0, 0, 0}, d3 = {3, 0, 0, 0};
    assert_int_equal(ncclWaitSignal(1, &d2, c->comm, s1), ncclSuccess);
    assert_int_equal(ncclWaitSignal(1, &d3, c->comm, s2), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(s1), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
    ncclsimParamSet("TIMEOUT", "1");
    ncclWaitSignalDesc_t d1 = {1, 0, 0, 0};
    assert_int_equal(ncclWaitSignal(1, &d1, c->comm, s1), ncclSuccess);
    assert_int_not_equal(cudaStreamSynchronize(s1), cudaSuccess);
    ncclsimParamSet("TIMEOUT", NULL);
    const char *why = ncclGetLastError(c->comm);
    assert_non_null(strstr(why, "rank 1"));
    assert_non_null(strstr(why, "peer 0: 1 of 1 signal"));
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

static void test_counting_and_timeout(void **state) { assert_int_equal(run_ranks(2, count_fn, NULL), 0); }

/* A registered window appears in the rank's device window table, and leaves
 * it on deregistration (regression: the RMA and device areas were not
 * connected). */
static bool in_table(const ncclDevComm *dc, ncclWindow_t w, void *base) {
  for (const ncclDevCommWindowTable *t = dc->windowTable; t; t = t->next)
    for (int i = 0; i < 32; i++)
      if (t->entries[i].window == w) return t->entries[i].base == (uintptr_t)base;
  return false;
}
static void test_window_in_dev_table(void **state) {
  ncclComm_t comms[2];
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  void *mem[2];
  ncclWindow_t win[2];
  ncclDevComm dc;
  ncclDevCommRequirements_t req = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  cudaSetDevice(0);
  assert_int_equal(ncclDevCommCreate(comms[0], &req, &dc), ncclSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclMemAlloc(&mem[r], 8192), ncclSuccess);
    assert_int_equal(ncclCommWindowRegister(comms[r], mem[r], 8192, &win[r], NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_true(in_table(&dc, win[0], mem[0]));
  assert_false(in_table(&dc, win[1], mem[1])); /* rank 1's window is rank 1's table's */
  assert_int_equal(ncclCommWindowDeregister(comms[0], win[0]), ncclSuccess);
  assert_false(in_table(&dc, win[0], mem[0]));
  assert_int_equal(ncclDevCommDestroy(comms[0], &dc), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
    assert_int_equal(ncclMemFree(mem[r]), ncclSuccess);
  }
}

/* ---- argument errors and less common paths ---- */

static bool has(ncclComm_t comm, const char *text) { return strstr(ncclGetLastError(comm), text) != NULL; }

/* Local checks of ncclCommWindowRegister fail before the collective part:
 * no round is consumed, so the ranks still meet on their next window. */
static void reg_args_fn(rank_ctx *c) {
  ncclComm_t comm = c->comm;
  void *mem, *other, *dev, *pinned;
  char host[64];
  ncclWindow_t w = (ncclWindow_t)1;
  assert_int_equal(ncclMemAlloc(&mem, 8192), ncclSuccess);
  assert_int_equal(cudaMalloc(&dev, 4096), cudaSuccess);
  assert_int_equal(cudaMallocHost(&pinned, 4096), cudaSuccess);
  cudaSetDevice(1 - c->rank);
  assert_int_equal(ncclMemAlloc(&other, 4096), ncclSuccess);
  cudaSetDevice(c->rank);
  assert_int_equal(ncclCommWindowRegister(NULL, mem, 4096, &w, 0), ncclInvalidArgument);
  assert_int_equal(ncclCommWindowRegister(comm, mem, 4096, NULL, 0), ncclInvalidArgument);
  assert_int_equal(ncclCommWindowRegister(comm, mem, 4096, &w, 0x4), ncclInvalidArgument);
  assert_null(w);
  assert_true(has(comm, "unknown bits"));
  assert_int_equal(ncclCommWindowRegister(comm, NULL, 4096, &w, 0), ncclInvalidArgument);
  assert_int_equal(ncclCommWindowRegister(comm, mem, 0, &w, 0), ncclInvalidArgument);
  /* Windows need memory of NCCL's allocator (real NCCL: ncclUnhandledCudaError). */
  assert_int_equal(ncclCommWindowRegister(comm, host, sizeof host, &w, 0), ncclUnhandledCudaError);
  assert_true(has(comm, "host memory"));
  assert_int_equal(ncclCommWindowRegister(comm, dev, 4096, &w, 0), ncclUnhandledCudaError);
  assert_true(has(comm, "cudaMalloc memory"));
  assert_int_equal(ncclCommWindowRegister(comm, pinned, 4096, &w, 0), ncclUnhandledCudaError);
  assert_true(has(comm, "cudaMallocHost memory"));
  assert_int_equal(ncclCommWindowRegister(comm, (char *)mem + 4096, 8192, &w, 0), ncclUnhandledCudaError);
  assert_true(has(comm, "run past the end"));
  assert_int_equal(ncclCommWindowRegister(comm, other, 4096, &w, 0), ncclInvalidArgument);
  assert_true(has(comm, "is on device"));
  assert_null(w);
  assert_int_equal(ncclCommWindowRegister(comm, (char *)mem + 4096, 4096, &w, NCCL_WIN_STRICT_ORDERING),
                   ncclSuccess);
  assert_non_null(w);
  void *p;
  assert_int_equal(ncclWinGetUserPtr(comm, w, &p), ncclSuccess);
  assert_ptr_equal(p, (char *)mem + 4096);
  assert_int_equal(ncclCommWindowDeregister(comm, w), ncclSuccess);
  ncclMemFree(mem);
  ncclMemFree(other);
  cudaFree(dev);
  cudaFreeHost(pinned);
}

static void test_register_window_args(void **state) { assert_int_equal(run_ranks(2, reg_args_fn, NULL), 0); }

/* NCCLSIM_WINDOWS=0 (platforms without windows): registration succeeds
 * with a NULL window, which deregisters as a no-op. */
static void nowin_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w = (ncclWindow_t)1;
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  assert_null(w);
  assert_int_equal(ncclCommWindowDeregister(c->comm, NULL), ncclSuccess);
  ncclMemFree(mem);
}

static void test_no_windows(void **state) {
  ncclsimParamSet("WINDOWS", "0");
  assert_int_equal(run_ranks(2, nowin_fn, NULL), 0);
  ncclsimParamSet("WINDOWS", NULL);
}

/* ncclCommRegister / ncclCommDeregister argument errors. */
static void buf_args_fn(rank_ctx *c) {
  ncclComm_t comm = c->comm;
  void *mem, *other, *pinned, *h = (void *)1, *h2;
  int local;
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  assert_int_equal(cudaMallocHost(&pinned, 4096), cudaSuccess);
  cudaSetDevice(1 - c->rank);
  assert_int_equal(ncclMemAlloc(&other, 4096), ncclSuccess);
  cudaSetDevice(c->rank);
  assert_int_equal(ncclCommRegister(NULL, mem, 4096, &h), ncclInvalidArgument);
  assert_int_equal(ncclCommRegister(comm, mem, 4096, NULL), ncclInvalidArgument);
  assert_int_equal(ncclCommRegister(comm, NULL, 4096, &h), ncclInvalidArgument);
  assert_int_equal(ncclCommRegister(comm, other, 4096, &h), ncclInvalidArgument);
  assert_true(has(comm, "is on device"));
  assert_int_equal(ncclCommRegister(comm, mem, 8192, &h), ncclInvalidArgument);
  assert_null(h);
  /* Pinned host memory is reachable from every device. */
  assert_int_equal(ncclCommRegister(comm, pinned, 4096, &h), ncclSuccess);
  assert_int_equal(ncclCommRegister(comm, mem, 4096, &h2), ncclSuccess);
  assert_int_equal(ncclCommDeregister(NULL, h), ncclInvalidArgument);
  assert_int_equal(ncclCommDeregister(comm, h), ncclSuccess);
  assert_int_equal(ncclCommDeregister(comm, &local), ncclInvalidUsage);
  assert_true(has(comm, "not a registration of this communicator"));
  assert_int_equal(ncclCommDeregister(comm, h2), ncclSuccess);
  assert_int_equal(ncclCommDeregister(comm, h), ncclInvalidUsage); /* found behind h2 in the dead list */
  assert_true(has(comm, "deregistered already"));
  ncclMemFree(mem);
  ncclMemFree(other);
  cudaFreeHost(pinned);
}

static void test_register_buffer_args(void **state) { assert_int_equal(run_ranks(2, buf_args_fn, NULL), 0); }

/* Handles exchanged between the ranks of one test. */
static ncclWindow_t peer_win[4];

/* Deregistration, ncclWinGetUserPtr and the pointer getters reject what is
 * not the caller's live window, and out-of-range offsets and ranks. */
static void handle_args_fn(rank_ctx *c) {
  ncclComm_t comm = c->comm;
  void *mem, *p = (void *)1, *q;
  int junk;
  ncclWindow_t w, bogus = (ncclWindow_t)&junk;
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comm, mem, 4096, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  peer_win[c->rank] = w;
  pthread_barrier_wait(&bar);
  ncclWindow_t theirs = peer_win[1 - c->rank];
  assert_int_equal(ncclCommWindowDeregister(NULL, w), ncclInvalidArgument);
  assert_int_equal(ncclCommWindowDeregister(comm, theirs), ncclInvalidArgument);
  assert_true(has(comm, "handle, not one of"));
  assert_int_equal(ncclCommWindowDeregister(comm, bogus), ncclInvalidArgument);
  assert_true(has(comm, "not a registered window"));
  assert_int_equal(ncclWinGetUserPtr(NULL, w, &q), ncclInvalidArgument);
  assert_int_equal(ncclWinGetUserPtr(comm, NULL, &q), ncclInvalidArgument);
  assert_int_equal(ncclWinGetUserPtr(comm, w, NULL), ncclInvalidArgument);
  assert_int_equal(ncclWinGetUserPtr(comm, theirs, &q), ncclInvalidArgument);
  assert_true(has(comm, "not one of rank"));
  /* Pointer getters (real NCCL: ncclInvalidArgument for ranks and offsets out of range). */
  assert_int_equal(ncclGetLsaDevicePointer(w, 0, 0, NULL), ncclInvalidArgument);
  assert_int_equal(ncclGetLsaDevicePointer(NULL, 0, 0, &p), ncclInvalidArgument);
  assert_null(p);
  assert_int_equal(ncclGetLsaDevicePointer(bogus, 0, 0, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetLsaDevicePointer(w, 4096, 0, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetLsaDevicePointer(w, 0, -1, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetLsaDevicePointer(w, 0, 2, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetPeerDevicePointer(w, 0, -1, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetPeerDevicePointer(w, 0, 2, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetPeerDevicePointer(w, 4096, 1, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetLsaDevicePointer(w, 0, 1 - c->rank, &q), ncclSuccess);
  assert_int_equal(ncclGetPeerDevicePointer(w, 64, 1 - c->rank, &p), ncclSuccess);
  assert_ptr_equal(p, (char *)q + 64);
  assert_int_equal(ncclGetLsaMultimemDevicePointer(w, 0, NULL), ncclInvalidArgument);
  assert_int_equal(ncclGetLsaMultimemDevicePointer(w, 4096, &p), ncclInvalidArgument);
  p = (void *)1;
  assert_int_equal(ncclGetLsaMultimemDevicePointer(w, 4095, &p), ncclSuccess);
  assert_null(p); /* no multicast */
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclCommWindowDeregister(comm, w), ncclSuccess);
  ncclMemFree(mem);
}

static void test_window_handle_args(void **state) {
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, handle_args_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* Enqueue-time errors of ncclPutSignal, ncclSignal and ncclWaitSignal. */
static void rma_args_fn(rank_ctx *c) {
  ncclComm_t comm = c->comm;
  void *mem, *plain;
  int junk;
  ncclWindow_t w, wd;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 8192), ncclSuccess);
  assert_int_equal(ncclMemAlloc(&plain, 4096), ncclSuccess);
  /* The symmetric window is the middle of its allocation. */
  assert_int_equal(ncclCommWindowRegister(comm, (char *)mem + 2048, 4096, &w, NCCL_WIN_COLL_SYMMETRIC),
                   ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comm, plain, 4096, &wd, NCCL_WIN_DEFAULT), ncclSuccess);
  char *src = (char *)mem + 2048;
  int peer = 1 - c->rank;
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, peer, w, 0, 1, 0, 0, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, 2, w, 0, 0, 0, 0, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, peer, w, 0, 0, 0, 0, NULL, s), ncclInvalidArgument);
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, peer, NULL, 0, 0, 0, 0, comm, s), ncclInvalidArgument);
  assert_true(has(comm, "peerWin is NULL"));
  assert_int_equal(ncclPutSignal(src, 16, (ncclDataType_t)99, peer, w, 0, 0, 0, 0, comm, s),
                   ncclInvalidArgument);
  /* The source must lie inside a symmetric window of the caller. */
  assert_int_equal(ncclPutSignal(plain, 16, ncclInt8, peer, w, 0, 0, 0, 0, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclPutSignal(mem, 16, ncclInt8, peer, w, 0, 0, 0, 0, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclPutSignal(src + 4000, 128, ncclInt8, peer, w, 0, 0, 0, 0, comm, s),
                   ncclInvalidArgument);
  assert_true(has(comm, "NCCL_WIN_COLL_SYMMETRIC"));
  /* A target that is no window at all: "does not exist in shadow pool". */
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, peer, (ncclWindow_t)&junk, 0, 0, 0, 0, comm, s),
                   ncclInternalError);
  assert_true(has(comm, "shadow pool"));
  /* Past the end of the target window (ncclsim checks this; NCCL does not). */
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, peer, w, 4097, 0, 0, 0, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclPutSignal(src, 128, ncclInt8, peer, w, 4000, 0, 0, 0, comm, s), ncclInvalidArgument);
  assert_true(has(comm, "run past the end"));
  assert_int_equal(ncclSignal(peer, 0, 1, 0, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclSignal(peer, 0, 0, 1, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclSignal(-1, 0, 0, 0, comm, s), ncclInvalidArgument);
  ncclWaitSignalDesc_t d = {1, peer, 0, 0};
  assert_int_equal(ncclWaitSignal(1, &d, NULL, s), ncclInvalidArgument);
  assert_int_equal(ncclWaitSignal(1, NULL, comm, s), ncclInvalidArgument);
  assert_int_equal(ncclWaitSignal(0, &d, comm, s), ncclInvalidArgument);
  ncclWaitSignalDesc_t bad[] = {{0, peer, 0, 0}, {1, peer, 1, 0}, {1, peer, 0, 1}, {1, -1, 0, 0},
                                {1, 2, 0, 0}};
  for (int i = 0; i < 5; i++) assert_int_equal(ncclWaitSignal(1, &bad[i], comm, s), ncclInvalidArgument);
  assert_true(has(comm, "signalDescs[0].peer is 2"));
  /* Nothing was enqueued: a zero-byte put is a bare signal, and the
   * peer's wait for one signal completes. */
  assert_int_equal(ncclPutSignal(src, 0, ncclInt8, peer, w, 4096, 0, 0, 0, comm, s), ncclSuccess);
  assert_int_equal(ncclWaitSignal(1, &d, comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  /* Real NCCL: a put naming a deregistered window is ncclInternalError
   * (its source still lies in a live symmetric window, w2). */
  ncclWindow_t w2;
  assert_int_equal(ncclCommWindowRegister(comm, src, 4096, &w2, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  assert_int_equal(ncclCommWindowDeregister(comm, w), ncclSuccess);
  assert_int_equal(ncclPutSignal(src, 16, ncclInt8, peer, w, 0, 0, 0, 0, comm, s), ncclInternalError);
  assert_true(has(comm, "was deregistered"));
  assert_int_equal(ncclCommWindowDeregister(comm, w2), ncclSuccess);
  assert_int_equal(ncclCommWindowDeregister(comm, wd), ncclSuccess);
  ncclMemFree(mem);
  ncclMemFree(plain);
  cudaStreamDestroy(s);
}

static void test_rma_args(void **state) { assert_int_equal(run_ranks(2, rma_args_fn, NULL), 0); }

/* On a node of one rank (ranksPerNode=1) the peer's window memory is not
 * in the LSA team: its peer pointer is NULL, its LSA rank out of range.
 * Without host RMA (hostRma=0) the host RMA calls are invalid usage. */
static void test_other_node_no_host_rma(void **state) {
  ncclComm_t comms[2];
  void *mem[2], *p = (void *)1;
  ncclWindow_t win[2];
  cudaStream_t s;
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ranksPerNode = 1;
  o.hostRma = 0;
  assert_int_equal(ncclsimSetCommOptions(&o), ncclSuccess);
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  assert_int_equal(ncclsimSetCommOptions(NULL), ncclSuccess);
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclMemAlloc(&mem[r], 4096), ncclSuccess);
    assert_int_equal(ncclCommWindowRegister(comms[r], mem[r], 4096, &win[r], NCCL_WIN_COLL_SYMMETRIC),
                     ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclGetPeerDevicePointer(win[0], 0, 1, &p), ncclSuccess);
  assert_null(p);
  assert_int_equal(ncclGetLsaDevicePointer(win[0], 0, 1, &p), ncclInvalidArgument);
  assert_int_equal(ncclGetPeerDevicePointer(win[0], 8, 0, &p), ncclSuccess);
  assert_ptr_equal(p, (char *)mem[0] + 8);
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclSignal(1, 0, 0, 0, comms[0], s), ncclInvalidUsage);
  assert_true(has(comms[0], "hostRmaSupport is 0"));
  assert_int_equal(ncclPutSignal(mem[0], 4, ncclInt8, 1, win[0], 0, 0, 0, 0, comms[0], s), ncclInvalidUsage);
  ncclWaitSignalDesc_t d = {1, 1, 0, 0};
  assert_int_equal(ncclWaitSignal(1, &d, comms[0], s), ncclInvalidUsage);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess); /* nothing was enqueued */
  cudaStreamDestroy(s);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommWindowDeregister(comms[r], win[r]), ncclSuccess);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
    ncclMemFree(mem[r]);
  }
}

/* A wait on several peers that times out names what each still owes:
 * surplus signals from peer 0 do not count for the missing ones of peer 2.
 * The put and signal queued behind it in the group are still pending. */
static void wait_diag_fn(rank_ctx *c) {
  enum { ND = 16 };
  cudaStream_t s;
  void *mem;
  ncclWindow_t w;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  rma_connect(c, s);
  if (c->rank == 0) {
    assert_int_equal(ncclSignal(1, 0, 0, 0, c->comm, s), ncclSuccess);
    assert_int_equal(ncclSignal(1, 0, 0, 0, c->comm, s), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  }
  pthread_barrier_wait(&bar);
  if (c->rank == 1) {
    ncclWaitSignalDesc_t d[ND];
    d[0] = (ncclWaitSignalDesc_t){1, 0, 0, 0};
    for (int i = 1; i < ND; i++) d[i] = (ncclWaitSignalDesc_t){1, 2, 0, 0};
    ncclsimParamSet("TIMEOUT", "0.5");
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclWaitSignal(ND, d, c->comm, s), ncclSuccess);
    assert_int_equal(ncclPutSignal(mem, 64, ncclInt8, 0, w, 0, 0, 0, 0, c->comm, s), ncclSuccess);
    assert_int_equal(ncclSignal(2, 0, 0, 0, c->comm, s), ncclSuccess);
    assert_int_equal(ncclGroupEnd(), ncclSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaErrorTimeout);
    ncclsimParamSet("TIMEOUT", NULL);
    const char *why = ncclGetLastError(c->comm);
    assert_non_null(strstr(why, "ncclWaitSignal(nDesc=16) on rank 1"));
    assert_non_null(strstr(why, "peer 0: 0 of 1 signal(s); peer 2: 1 of 1 signal(s);"));
    ncclResult_t ae;
    assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
    assert_int_equal(ae, ncclTimeout);
  }
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  ncclMemFree(mem);
  cudaStreamDestroy(s);
}

static void test_wait_diagnostic(void **state) {
  pthread_barrier_init(&bar, NULL, 3);
  assert_int_equal(run_ranks(3, wait_diag_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* A registration the other ranks never join times out naming them all;
 * withdrawn, it did not happen, and the ranks still meet on the next one. */
static void reg_timeout_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w = (ncclWindow_t)1;
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  if (c->rank == 0) {
    ncclsimParamSet("TIMEOUT", "0.5");
    assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w, 0), ncclTimeout);
    ncclsimParamSet("TIMEOUT", NULL);
    assert_null(w);
    assert_true(has(c->comm, "rank(s) [1,2]"));
  }
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w, 0), ncclSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  ncclMemFree(mem);
}

static void test_register_timeout(void **state) {
  pthread_barrier_init(&bar, NULL, 3);
  assert_int_equal(run_ranks(3, reg_timeout_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* Two registrations in one group that the peer never joins both time out
 * at ncclGroupEnd; the ranks still meet on their next registration. */
static void group_timeout_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w1 = (ncclWindow_t)1, w2 = (ncclWindow_t)1, w;
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  if (c->rank == 0) {
    ncclsimParamSet("TIMEOUT", "0.5");
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w1, 0), ncclSuccess);
    assert_int_equal(ncclCommWindowRegister(c->comm, mem, 2048, &w2, 0), ncclSuccess);
    assert_int_equal(ncclGroupEnd(), ncclTimeout);
    ncclsimParamSet("TIMEOUT", NULL);
    assert_null(w1);
    assert_null(w2);
  }
  pthread_barrier_wait(&bar);
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, 4096, &w, 0), ncclSuccess);
  assert_int_equal(ncclCommWindowDeregister(c->comm, w), ncclSuccess);
  ncclMemFree(mem);
}

static void test_group_register_timeout(void **state) {
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, group_timeout_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* ncclCommRevoke of rank 1's comm, from another thread (a watchdog's),
 * ends rank 1's own blocked registration and queued signal wait at once;
 * the revoke returns once they have ended, and rank 1's state is then
 * ncclSuccess (NCCL 2.30: revoke quiesces the rank). */
static ncclComm_t revoke_target;

static void revoke_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w = (ncclWindow_t)1;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  rma_connect(c, s);
  if (c->rank == 1) {
    revoke_target = c->comm;
    ncclWaitSignalDesc_t d = {1, 0, 0, 0};
    assert_int_equal(ncclWaitSignal(1, &d, c->comm, s), ncclSuccess);
  }
  pthread_barrier_wait(&bar);
  if (c->rank == 0) {
    sleep_ms(50); /* rank 1 is in its registration by now (if not, it finds its comm revoked) */
    assert_int_equal(ncclCommRevoke(revoke_target, NCCL_REVOKE_DEFAULT), ncclSuccess);
  } else {
    ncclResult_t r = ncclCommWindowRegister(c->comm, mem, 4096, &w, 0);
    assert_null(w);
    if (r == ncclRemoteError) assert_true(has(c->comm, "revoked or aborted"));
    else assert_int_equal(r, ncclInvalidUsage);
    assert_int_equal(cudaStreamSynchronize(s), cudaErrorLaunchFailure);
    ncclResult_t ae;
    assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
    assert_int_equal(ae, ncclSuccess);
  }
  pthread_barrier_wait(&bar);
  ncclMemFree(mem);
  cudaStreamDestroy(s);
}

static void test_revoke_ends_waits(void **state) {
  pthread_barrier_init(&bar, NULL, 2);
  assert_int_equal(run_ranks(2, revoke_fn, NULL), 0);
  pthread_barrier_destroy(&bar);
}

/* A non-blocking pair of communicators, driven from this thread. */
static void nb_pair(ncclComm_t comms[2]) {
  ncclUniqueId id;
  ncclResult_t ae;
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  assert_int_equal(ncclGetUniqueId(&id), ncclSuccess);
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitRankConfig(&comms[0], 2, id, 0, &cfg), ncclInProgress);
  cudaSetDevice(1);
  assert_int_equal(ncclCommInitRankConfig(&comms[1], 2, id, 1, &cfg), ncclSuccess);
  assert_int_equal(ncclCommGetAsyncError(comms[0], &ae), ncclSuccess);
  assert_int_equal(ae, ncclSuccess);
}

static ncclResult_t async_error(ncclComm_t comm) {
  ncclResult_t ae = ncclInternalError;
  assert_int_equal(ncclCommGetAsyncError(comm, &ae), ncclSuccess);
  return ae;
}

/* Non-blocking: rank 0 has two registrations open when the first fails
 * (out of memory as rank 1 completes it); its async error reports the
 * failure at once, and the second still completes when rank 1 joins it. */
static void test_nb_failed_round(void **state) {
  ncclComm_t comms[2];
  void *a[2], *b[2], *p;
  ncclWindow_t wa[2] = {NULL, NULL}, wb[2] = {NULL, NULL};
  nb_pair(comms);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclMemAlloc(&a[r], 8192), ncclSuccess);
    assert_int_equal(ncclMemAlloc(&b[r], 4096), ncclSuccess);
  }
  cudaSetDevice(0);
  assert_int_equal(ncclCommWindowRegister(comms[0], a[0], 4096, &wa[0], 0), ncclInProgress);
  assert_int_equal(ncclCommWindowRegister(comms[0], b[0], 4096, &wb[0], 0), ncclInProgress);
  assert_int_equal(async_error(comms[0]), ncclInProgress);
  cudaSetDevice(1);
  /* rank 1's call allocates its delivery, then, completing the round, the
   * collective window: that one fails */
  ncclsimAllocFailAfter(2);
  assert_int_equal(ncclCommWindowRegister(comms[1], a[1], 4096, &wa[1], 0), ncclInProgress);
  assert_true(ncclsimAllocFailAfter(0) >= 2);
  assert_null(wa[1]);
  assert_int_equal(async_error(comms[1]), ncclSystemError);
  assert_int_equal(async_error(comms[0]), ncclSystemError);
  assert_null(wa[0]);
  assert_null(wb[0]);
  cudaSetDevice(0); /* a third one, still open when the second completes */
  assert_int_equal(ncclCommWindowRegister(comms[0], a[0], 2048, &wa[0], 0), ncclInProgress);
  cudaSetDevice(1);
  assert_int_equal(ncclCommWindowRegister(comms[1], b[1], 4096, &wb[1], 0), ncclSuccess);
  assert_non_null(wb[1]);
  /* Regression test: the completer (rank 1) wrote rank 0's handle itself,
   * racing with rank 0's thread (ThreadSanitizer saw it in REG-06). Rank 0
   * now writes its own handle, at its poll. */
  assert_null(wb[0]);
  (void)async_error(comms[0]); /* sticky: still the first one's failure */
  assert_non_null(wb[0]);
  assert_int_equal(ncclWinGetUserPtr(comms[0], wb[0], &p), ncclSuccess);
  assert_ptr_equal(p, b[0]);
  assert_null(wa[0]);
  assert_int_equal(ncclCommWindowRegister(comms[1], a[1], 2048, &wa[1], 0), ncclSuccess);
  (void)async_error(comms[0]);
  assert_non_null(wa[0]);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommWindowDeregister(comms[r], wa[r]), ncclSuccess);
    assert_int_equal(ncclCommWindowDeregister(comms[r], wb[r]), ncclSuccess);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
    ncclMemFree(a[r]);
    ncclMemFree(b[r]);
  }
}

/* Non-blocking: a registration the peer never joins reads ncclInProgress
 * until NCCLSIM_TIMEOUT, then ncclTimeout naming the missing rank. */
static void test_nb_timeout(void **state) {
  ncclComm_t comms[2];
  void *mem;
  ncclWindow_t w = NULL;
  nb_pair(comms);
  cudaSetDevice(0);
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  ncclsimParamSet("TIMEOUT", "0.3");
  assert_int_equal(ncclCommWindowRegister(comms[0], mem, 4096, &w, 0), ncclInProgress);
  ncclsimParamSet("TIMEOUT", NULL);
  ncclResult_t ae = ncclInProgress;
  for (int i = 0; i < 3000 && ae == ncclInProgress; i++) {
    ae = async_error(comms[0]);
    if (ae == ncclInProgress) sleep_ms(10);
  }
  assert_int_equal(ae, ncclTimeout);
  assert_true(has(comms[0], "waited NCCLSIM_TIMEOUT for rank(s) [1]"));
  assert_null(w);
  /* Withdrawn, it did not happen: both ranks meet on the next one. */
  void *mem1;
  ncclWindow_t w1 = NULL;
  assert_int_equal(ncclCommWindowRegister(comms[0], mem, 4096, &w, 0), ncclInProgress);
  cudaSetDevice(1);
  assert_int_equal(ncclMemAlloc(&mem1, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comms[1], mem1, 4096, &w1, 0), ncclSuccess);
  (void)async_error(comms[0]); /* sticky: still the timeout */
  assert_non_null(w);
  assert_non_null(w1);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  ncclMemFree(mem);
  ncclMemFree(mem1);
}

/* Non-blocking: two registrations the peer never joins, the older one
 * expiring at an earlier poll than the newer. Both are withdrawn, so the
 * rank's next registration meets its peer's first. Regression test: the
 * older round, expiring while the newer was still open, was never rewound,
 * and the ranks' next registrations waited in different rounds. */
static void test_nb_timeouts_out_of_order(void **state) {
  ncclComm_t comms[2];
  void *mem, *mem1;
  ncclWindow_t w[2] = {NULL, NULL}, w1 = NULL;
  nb_pair(comms);
  cudaSetDevice(0);
  assert_int_equal(ncclMemAlloc(&mem, 8192), ncclSuccess);
  ncclsimParamSet("TIMEOUT", "0.2");
  assert_int_equal(ncclCommWindowRegister(comms[0], mem, 4096, &w[0], 0), ncclInProgress);
  ncclsimParamSet("TIMEOUT", "1.5");
  assert_int_equal(ncclCommWindowRegister(comms[0], (char *)mem + 4096, 4096, &w[1], 0), ncclInProgress);
  ncclsimParamSet("TIMEOUT", NULL);
  sleep_ms(400); /* the first expires at this poll, the second is still open */
  assert_int_equal(async_error(comms[0]), ncclTimeout);
  ncclResult_t ae = ncclInProgress;
  for (int i = 0; i < 3000 * slowdown() && !has(comms[0], "waited NCCLSIM_TIMEOUT for rank(s) [1]"); i++) sleep_ms(10);
  for (int i = 0; i < 300; i++) { /* until the second has expired too */
    ncclCommGetAsyncError(comms[0], &ae);
    sleep_ms(10);
  }
  assert_null(w[0]);
  assert_null(w[1]);
  /* Both ranks' next registrations meet. */
  ncclWindow_t again = NULL;
  assert_int_equal(ncclCommWindowRegister(comms[0], mem, 4096, &again, 0), ncclInProgress);
  cudaSetDevice(1);
  assert_int_equal(ncclMemAlloc(&mem1, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comms[1], mem1, 4096, &w1, 0), ncclSuccess);
  assert_non_null(w1);
  (void)async_error(comms[0]); /* sticky: still the timeout */
  assert_non_null(again);
  for (int r = 0; r < 2; r++) assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
  ncclMemFree(mem);
  ncclMemFree(mem1);
}

/* Non-blocking: out of memory while posting a registration fails it at
 * once, leaves no registration in progress, and consumes no round. */
static void test_nb_out_of_memory(void **state) {
  ncclComm_t comms[2];
  void *mem[2];
  ncclWindow_t w[2] = {NULL, NULL};
  nb_pair(comms);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclMemAlloc(&mem[r], 4096), ncclSuccess);
  }
  cudaSetDevice(0);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclCommWindowRegister(comms[0], mem[0], 4096, &w[0], 0), ncclSystemError);
  ncclsimAllocFailAfter(0);
  assert_null(w[0]);
  assert_int_equal(async_error(comms[0]), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comms[0], mem[0], 4096, &w[0], 0), ncclInProgress);
  cudaSetDevice(1);
  assert_int_equal(ncclCommWindowRegister(comms[1], mem[1], 4096, &w[1], 0), ncclSuccess);
  assert_int_equal(async_error(comms[0]), ncclSuccess);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_non_null(w[r]);
    assert_int_equal(ncclCommWindowDeregister(comms[r], w[r]), ncclSuccess);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
    ncclMemFree(mem[r]);
  }
}

/* Out of memory in window registration: each injected failure either
 * fails the call (ncclSystemError, no window, nothing counted) or, when it
 * hits the growth of the device window table, leaves a working window
 * that the table lacks. Out of memory remembering a deregistered handle
 * makes a second deregistration read as "not a window". */
static void test_window_out_of_memory(void **state) {
  enum { NW = 32 };
  ncclComm_t comm;
  void *mem;
  ncclWindow_t w[NW], extra;
  ncclDevComm dc;
  ncclDevCommRequirements_t req = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitAll(&comm, 1, NULL), ncclSuccess);
  assert_int_equal(ncclDevCommCreate(comm, &req, &dc), ncclSuccess);
  assert_int_equal(ncclMemAlloc(&mem, NW * 64 + 64), ncclSuccess);
  for (int i = 0; i < NW; i++) /* fill the first block of the table */
    assert_int_equal(ncclCommWindowRegister(comm, (char *)mem + i * 64, 64, &w[i], 0), ncclSuccess);
  uint64_t base = mem_total(comm);
  bool absorbed = false;
  for (uint64_t n = 1; n < 1000; n++) {
    ncclsimAllocFailAfter(n);
    ncclResult_t res = ncclCommWindowRegister(comm, (char *)mem + NW * 64, 64, &extra, 0);
    uint64_t made = ncclsimAllocFailAfter(0);
    if (res != ncclSuccess) {
      assert_int_equal(res, ncclSystemError);
      assert_null(extra);
      assert_int_equal(mem_total(comm), base);
      continue;
    }
    assert_non_null(extra);
    assert_int_equal(mem_total(comm), base + 64);
    absorbed |= made >= n;
    assert_true(in_table(&dc, extra, (char *)mem + NW * 64) == (made < n));
    assert_int_equal(ncclCommWindowDeregister(comm, extra), ncclSuccess);
    if (made < n) break; /* no failure was injected: every allocation was tried */
  }
  assert_true(absorbed);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclCommWindowDeregister(comm, w[0]), ncclSuccess);
  ncclsimAllocFailAfter(0);
  assert_int_equal(ncclCommWindowDeregister(comm, w[0]), ncclInvalidArgument);
  assert_true(has(comm, "not a registered window"));
  for (int i = 1; i < NW; i++) assert_int_equal(ncclCommWindowDeregister(comm, w[i]), ncclSuccess);
  assert_int_equal(ncclDevCommDestroy(comm, &dc), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  ncclMemFree(mem);
}

/* Out of memory enqueuing a put, a signal, a wait, a buffer registration,
 * a send: ncclSystemError, and nothing is left half done (the put's
 * window reference is dropped: the communicator still tears down clean). */
static void test_enqueue_out_of_memory(void **state) {
  ncclComm_t comm;
  void *mem, *h;
  ncclWindow_t w;
  cudaStream_t s;
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitAll(&comm, 1, NULL), ncclSuccess);
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comm, mem, 4096, &w, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  uint64_t base = mem_total(comm);
  ncclWaitSignalDesc_t d = {1, 0, 0, 0};
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclPutSignal(mem, 16, ncclInt8, 0, w, 0, 0, 0, 0, comm, s), ncclSystemError);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclSignal(0, 0, 0, 0, comm, s), ncclSystemError);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclWaitSignal(1, &d, comm, s), ncclSystemError);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclCommRegister(comm, mem, 4096, &h), ncclSystemError);
  ncclsimAllocFailAfter(1);
  assert_int_equal(ncclSend(mem, 16, ncclInt8, 0, comm, s), ncclSystemError);
  ncclsimAllocFailAfter(0);
  assert_int_equal(mem_total(comm), base);
  /* None of them was enqueued: one put, one wait for its one signal. */
  assert_int_equal(ncclPutSignal(mem, 16, ncclInt8, 0, w, 64, 0, 0, 0, comm, s), ncclSuccess);
  assert_int_equal(ncclWaitSignal(1, &d, comm, s), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(ncclCommWindowDeregister(comm, w), ncclSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  cudaStreamDestroy(s);
  ncclMemFree(mem);
}

/* A send/recv pair of equal counts but different datatypes fails both. */
static void dtype_mismatch_fn(rank_ctx *c) {
  void *b;
  assert_int_equal(cudaMalloc(&b, 64), cudaSuccess);
  if (c->rank == 0) assert_int_equal(ncclSend(b, 4, ncclInt32, 1, c->comm, 0), ncclSuccess);
  else assert_int_equal(ncclRecv(b, 4, ncclFloat32, 0, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure);
  assert_int_equal(async_error(c->comm), ncclInvalidUsage);
  assert_true(has(c->comm, "mismatched point-to-point pair"));
  cudaFree(b);
}

static void test_p2p_dtype_mismatch(void **state) {
  assert_int_equal(run_ranks(2, dtype_mismatch_fn, NULL), 0);
}

/* Non-blocking: a rank destroyed with a registration in progress leaves
 * its round; the peer joining later stays in progress, and is destroyed
 * clean too. */
static void test_nb_destroy_in_progress(void **state) {
  ncclComm_t comms[2];
  void *mem[2];
  ncclWindow_t w[2] = {NULL, NULL};
  nb_pair(comms);
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclMemAlloc(&mem[r], 4096), ncclSuccess);
  }
  cudaSetDevice(0);
  assert_int_equal(ncclCommWindowRegister(comms[0], mem[0], 4096, &w[0], 0), ncclInProgress);
  assert_int_equal(ncclCommDestroy(comms[0]), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclCommWindowRegister(comms[1], mem[1], 4096, &w[1], 0), ncclInProgress);
  assert_int_equal(async_error(comms[1]), ncclInProgress);
  assert_null(w[1]);
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  for (int r = 0; r < 2; r++) ncclMemFree(mem[r]);
}

/* Out of memory inside a group: a blocking registration that cannot be
 * deferred to ncclGroupEnd fails with ncclSystemError and leaves no window
 * behind; every other outcome is a working window. */
static void test_group_register_out_of_memory(void **state) {
  ncclComm_t comm;
  void *mem;
  cudaSetDevice(0);
  assert_int_equal(ncclCommInitAll(&comm, 1, NULL), ncclSuccess);
  assert_int_equal(ncclMemAlloc(&mem, 4096), ncclSuccess);
  uint64_t base = mem_total(comm);
  int failed = 0;
  for (uint64_t n = 1; n < 1000; n++) {
    ncclWindow_t w = NULL;
    assert_int_equal(ncclGroupStart(), ncclSuccess);
    ncclsimAllocFailAfter(n);
    ncclResult_t res = ncclCommWindowRegister(comm, mem, 4096, &w, 0);
    uint64_t made = ncclsimAllocFailAfter(0);
    ncclResult_t end = ncclGroupEnd();
    if (res != ncclSuccess || end != ncclSuccess) {
      failed++;
      assert_int_equal(res == ncclSuccess ? end : res, ncclSystemError);
      assert_null(w);
      assert_int_equal(mem_total(comm), base);
      continue;
    }
    assert_non_null(w);
    assert_int_equal(ncclCommWindowDeregister(comm, w), ncclSuccess);
    if (made < n) break; /* every allocation was tried */
  }
  assert_true(failed > 0);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  ncclMemFree(mem);
}

/* Out of memory setting up a communicator's window and point-to-point
 * state: init fails with ncclSystemError, and succeeds once memory is
 * there. */
static void test_init_out_of_memory(void **state) {
  int failed = 0;
  cudaSetDevice(0);
  for (uint64_t n = 1; n < 1000; n++) {
    ncclComm_t comm = NULL;
    ncclsimAllocFailAfter(n);
    ncclResult_t res = ncclCommInitAll(&comm, 1, NULL);
    uint64_t made = ncclsimAllocFailAfter(0);
    if (res != ncclSuccess) {
      failed++;
      assert_int_equal(res, ncclSystemError);
      continue;
    }
    assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
    if (made < n) break;
  }
  assert_true(failed > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_overlapping),
      cmocka_unit_test(test_dereg_while_registering),
      cmocka_unit_test(test_free_while_registered),
      cmocka_unit_test(test_free_after_enqueue),
      cmocka_unit_test(test_dereg_with_put_queued),
      cmocka_unit_test(test_unequal_sizes),
      cmocka_unit_test(test_counting_and_timeout),
      cmocka_unit_test(test_window_in_dev_table),
      cmocka_unit_test(test_register_window_args),
      cmocka_unit_test(test_no_windows),
      cmocka_unit_test(test_register_buffer_args),
      cmocka_unit_test(test_window_handle_args),
      cmocka_unit_test(test_rma_args),
      cmocka_unit_test(test_other_node_no_host_rma),
      cmocka_unit_test(test_wait_diagnostic),
      cmocka_unit_test(test_register_timeout),
      cmocka_unit_test(test_group_register_timeout),
      cmocka_unit_test(test_revoke_ends_waits),
      cmocka_unit_test(test_nb_failed_round),
      cmocka_unit_test(test_nb_timeout),
      cmocka_unit_test(test_nb_timeouts_out_of_order),
      cmocka_unit_test(test_nb_out_of_memory),
      cmocka_unit_test(test_window_out_of_memory),
      cmocka_unit_test(test_enqueue_out_of_memory),
      cmocka_unit_test(test_p2p_dtype_mismatch),
      cmocka_unit_test(test_nb_destroy_in_progress),
      cmocka_unit_test(test_group_register_out_of_memory),
      cmocka_unit_test(test_init_out_of_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
