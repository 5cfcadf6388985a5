/* tests/sim_timeout.c — ncclsim never hangs silently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "sim_ranks.h"
#include "slow.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A recv whose send never comes fails after NCCLSIM_TIMEOUT: the stream
 * reports an error, the async error is ncclTimeout, and the text names the
 * rank and the pending operation. */
static void lonely_recv(rank_ctx *c) {
  int *b;
  cudaMalloc((void **)&b, 16);
  /* One exchange first: as on a GPU, the link's first use blocks both
   * callers until the other comes; what times out below is the receive
   * itself, on the stream. */
  if (c->rank == 0) assert_int_equal(ncclSend(b, 4, ncclInt32, 1, c->comm, 0), ncclSuccess);
  else assert_int_equal(ncclRecv(b, 4, ncclInt32, 0, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  if (c->rank != 1) {
    cudaFree(b);
    return;
  }
  ncclsimParamSet("TIMEOUT", "0.3"); /* only now: init had 120 s times the slowdown */
  double t0 = now();
  assert_int_equal(ncclRecv(b, 4, ncclInt32, 0, c->comm, 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorTimeout);
  double dt = now() - t0;
  assert_true(dt >= 0.25 && dt < scaled(60)); /* the 0.3 s, not init's */
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(c->comm, &ae), ncclSuccess);
  assert_int_equal(ae, ncclTimeout);
  const char *msg = ncclGetLastError(c->comm);
  assert_non_null(strstr(msg, "rank 1"));
  assert_non_null(strstr(msg, "ncclRecv(count=4, ncclInt32, peer=0)"));
  cudaFree(b);
}

static void test_recv_timeout(void **state) {
  ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  assert_int_equal(run_ranks(2, lonely_recv, NULL), 0);
  ncclsimParamSet("TIMEOUT", NULL);
}

/* A rank missing from init: the others fail with ncclTimeout naming it. */
static void test_init_timeout(void **state) {
  ncclsimParamSet("TIMEOUT", "0.3");
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comm = NULL;
  assert_int_equal(ncclCommInitRank(&comm, 3, id, 0), ncclTimeout);
  assert_non_null(strstr(ncclGetLastError(NULL), "[1,2]"));
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);
  ncclsimParamSet("TIMEOUT", NULL);
}

/* Init misuse: NCCL's result codes. */
static void test_init_errors(void **state) {
  ncclUniqueId id, junk;
  ncclComm_t comm;
  ncclGetUniqueId(&id);
  memset(&junk, 0x5a, sizeof junk);
  assert_int_equal(ncclCommInitRank(&comm, 0, id, 0), ncclInvalidArgument);
  assert_int_equal(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);
  assert_int_equal(ncclCommInitRank(&comm, 2, junk, 0), ncclInvalidArgument);
  assert_int_equal(ncclCommInitRank(NULL, 2, id, 0), ncclInvalidArgument);
  ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
  bad.magic = 0;
  assert_int_equal(ncclCommInitRankConfig(&comm, 1, id, 0, &bad), ncclInvalidArgument);
}

/* Non-blocking init reports ncclInProgress until every rank has joined. */
static void test_nonblocking_init(void **state) {
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclComm_t a = NULL, b = NULL;
  assert_int_equal(ncclCommInitRankConfig(&a, 2, id, 0, &cfg), ncclInProgress);
  ncclResult_t ae;
  assert_int_equal(ncclCommGetAsyncError(a, &ae), ncclSuccess);
  assert_int_equal(ae, ncclInProgress);
  assert_int_equal(ncclCommInitRankConfig(&b, 2, id, 1, &cfg), ncclSuccess);
  assert_int_equal(ncclCommGetAsyncError(a, &ae), ncclSuccess);
  assert_int_equal(ae, ncclSuccess);
  int n = 0;
  assert_int_equal(ncclCommCount(a, &n), ncclSuccess);
  assert_int_equal(n, 2);
  assert_int_equal(ncclCommDestroy(a), ncclSuccess);
  assert_int_equal(ncclCommDestroy(b), ncclSuccess);
}

/* Abort unblocks a pending operation of the communicator at once. */
static void *aborter(void *p) {
  ncclCommAbort((ncclComm_t)p);
  return NULL;
}
static void test_abort_unblocks(void **state) {
  ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  ncclComm_t comms[2];
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  int *b, *b1;
  cudaSetDevice(1);
  cudaMalloc((void **)&b1, 16);
  cudaSetDevice(0);
  cudaMalloc((void **)&b, 16);
  /* Connect the link 1->0 first, in a group: one thread drives both ranks,
   * and a lone first receive would wait for a send only it could make. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclRecv(b, 4, ncclInt32, 1, comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(ncclSend(b1, 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  cudaSetDevice(0);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(ncclRecv(b, 4, ncclInt32, 1, comms[0], 0), ncclSuccess);
  double t0 = now();
  pthread_t th;
  pthread_create(&th, NULL, aborter, comms[0]);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure);
  pthread_join(th, NULL);
  assert_true(now() - t0 < scaled(60)); /* not the timeout */
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  cudaFree(b);
  cudaFree(b1);
  ncclsimParamSet("TIMEOUT", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_recv_timeout),
      cmocka_unit_test(test_init_timeout),
      cmocka_unit_test(test_init_errors),
      cmocka_unit_test(test_nonblocking_init),
      cmocka_unit_test(test_abort_unblocks),
  };
  return cmocka_run_group_tests_name("sim_timeout", tests, NULL, NULL);
}
