/*
 * tests/sim_rma.c — ncclsim's window and registration registry, and the
 * signal counters: overlapping registrations, deregistration while another
 * rank still registers, memory freed while registered, unequal window sizes,
 * and the diagnostic of a wait that is never satisfied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "sim.h"
#include "sim_ranks.h"
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

/* Unequal sizes fail on every rank at once, naming the sizes. */
static void unequal_fn(rank_ctx *c) {
  void *mem;
  ncclWindow_t w = (ncclWindow_t)1;
  size_t bytes = c->rank == 2 ? 8192 : 4096;
  assert_int_equal(ncclMemAlloc(&mem, bytes), ncclSuccess);
  uint64_t t0 = sim_now_ns();
  assert_int_equal(ncclCommWindowRegister(c->comm, mem, bytes, &w, 0), ncclInvalidUsage);
  assert_true(sim_now_ns() - t0 < 5000000000ull);
  assert_null(w);
  assert_non_null(strstr(ncclGetLastError(c->comm), "rank 2: 8192"));
  assert_non_null(strstr(ncclGetLastError(c->comm), "rank 0: 4096"));
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_overlapping),
      cmocka_unit_test(test_dereg_while_registering),
      cmocka_unit_test(test_free_while_registered),
      cmocka_unit_test(test_unequal_sizes),
      cmocka_unit_test(test_counting_and_timeout),
      cmocka_unit_test(test_window_in_dev_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
