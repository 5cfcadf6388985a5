/* tests/sim_fault.c — rank failure (NCCLSIM_FAULT), abort and revoke. */
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

typedef struct {
  ncclResult_t async[2];
  cudaError_t sync2[2];
  double waited[2];
  ncclResult_t abort0;
} fault_out;

/* Rank 1 dies at its 2nd operation: the first exchange works, rank 0's
 * second send ends with ncclTimeout within NCCLSIM_TIMEOUT, rank 1's own
 * operation fails, and ncclCommAbort on the survivor returns. */
static void fault_body(rank_ctx *c) {
  fault_out *o = c->arg;
  int *b;
  cudaMalloc((void **)&b, 64);
  for (int i = 0; i < 2; i++) {
    /* The first exchange must succeed, on a loaded machine too: 120 s times
     * the build's slowdown; the second, which rank 1 never makes, times out
     * after 0.5 s. */
    if (i == 1) ncclsimParamSet("TIMEOUT", "0.5");
    if (c->rank == 0) ncclSend(b, 16, ncclInt32, 1, c->comm, 0);
    else ncclRecv(b, 16, ncclInt32, 0, c->comm, 0);
    double t0 = now();
    cudaError_t e = cudaStreamSynchronize(0);
    if (i == 0) assert_int_equal(e, cudaSuccess);
    else {
      o->sync2[c->rank] = e;
      o->waited[c->rank] = now() - t0;
    }
  }
  ncclCommGetAsyncError(c->comm, &o->async[c->rank]);
  cudaFree(b);
}

static void test_rank_fault(void **state) {
  fault_out o;
  memset(&o, 0, sizeof o);
  assert_int_equal(ncclsimParamSet("FAULT", "1:2"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("TIMEOUT", scaled_str(120).s), ncclSuccess);
  assert_int_equal(run_ranks(2, fault_body, &o), 0);
  ncclsimParamSet("FAULT", NULL);
  ncclsimParamSet("TIMEOUT", NULL);
  assert_int_equal(o.async[1], ncclRemoteError); /* the dead rank's own call */
  assert_int_not_equal(o.sync2[1], cudaSuccess);
  assert_int_equal(o.async[0], ncclTimeout); /* the survivor, within the timeout */
  assert_int_equal(o.sync2[0], cudaErrorTimeout);
  assert_true(o.waited[0] >= 0.4 && o.waited[0] < scaled(60)); /* the 0.5 s timeout, not the first */
}

static void test_fault_param_validated(void **state) {
  assert_int_equal(ncclsimParamSet("FAULT", "1"), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("FAULT", "1:0"), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("FAULT", "x:2"), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("FAULT", "none"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("FAULT", NULL), ncclSuccess);
}

/* Revoke is local to its rank, as in NCCL 2.30: it ends that rank's
 * pending operations at once (not at the timeout), and a peer's operation
 * that waits for the revoked rank goes on waiting until that peer revokes
 * too. A revoked rank's async error is ncclSuccess once it is quiescent. */
static void test_revoke_is_local(void **state) {
  ncclsimParamSet("TIMEOUT", scaled_str(120).s);
  ncclComm_t comms[3];
  assert_int_equal(ncclCommInitAll(comms, 3, NULL), ncclSuccess);
  int *b[3];
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    cudaMalloc((void **)&b[r], 64);
  }
  /* Connect the links 0->1 and 0->2 in a group first: one thread drives
   * every rank, and a lone first receive would wait for a send only it
   * could make. */
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  for (int r = 1; r < 3; r++) {
    cudaSetDevice(0);
    assert_int_equal(ncclSend(b[0], 4, ncclInt32, r, comms[0], 0), ncclSuccess);
    cudaSetDevice(r);
    assert_int_equal(ncclRecv(b[r], 4, ncclInt32, 0, comms[r], 0), ncclSuccess);
  }
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  }
  cudaSetDevice(1);
  assert_int_equal(ncclRecv(b[1], 4, ncclInt32, 0, comms[1], 0), ncclSuccess);
  cudaSetDevice(2);
  assert_int_equal(ncclRecv(b[2], 4, ncclInt32, 0, comms[2], 0), ncclSuccess);
  double t0 = now();
  /* Rank 0 has nothing in flight: its revoke touches nobody else. */
  assert_int_equal(ncclCommRevoke(comms[0], 0), ncclSuccess);
  cudaSetDevice(1);
  assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady);
  assert_int_equal(ncclCommRevoke(comms[1], 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure); /* its receive was stopped */
  cudaSetDevice(2);
  assert_int_equal(cudaStreamQuery(0), cudaErrorNotReady); /* rank 2 still waits */
  assert_int_equal(ncclCommRevoke(comms[2], 0), ncclSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorLaunchFailure);
  assert_true(now() - t0 < scaled(60)); /* at once, not at the timeout */
  for (int r = 0; r < 3; r++) {
    ncclResult_t ae = ncclInternalError;
    assert_int_equal(ncclCommGetAsyncError(comms[r], &ae), ncclSuccess);
    assert_int_equal(ae, ncclSuccess);
  }
  assert_int_equal(ncclCommRevoke(comms[0], 1), ncclInvalidArgument);
  assert_int_equal(ncclCommRevoke(comms[0], 0), ncclInvalidArgument); /* already revoked */
  assert_int_equal(ncclCommRevoke(NULL, 0), ncclSuccess);            /* as NCCL */
  for (int r = 0; r < 3; r++) {
    cudaSetDevice(r);
    assert_int_equal(ncclCommDestroy(comms[r]), ncclSuccess);
    cudaFree(b[r]);
  }
  ncclsimParamSet("TIMEOUT", NULL);
}

/* Abort inside an open group on the thread that would end the group: the
 * group's pending window registration and send are dropped, and abort
 * returns (regression: found by the fuzzer, it hung). */
static void test_abort_inside_group(void **state) {
  ncclComm_t comms[2];
  assert_int_equal(ncclCommInitAll(comms, 2, NULL), ncclSuccess);
  void *mem;
  cudaSetDevice(0);
  assert_int_equal(ncclMemAlloc(&mem, 8192), ncclSuccess);
  ncclWindow_t win = NULL;
  double t0 = now();
  assert_int_equal(ncclGroupStart(), ncclSuccess);
  assert_int_equal(ncclCommWindowRegister(comms[0], mem, 8192, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  assert_int_equal(ncclSend(mem, 16, ncclInt8, 1, comms[0], 0), ncclSuccess);
  /* finalize cannot wait for work only this thread's ncclGroupEnd launches */
  assert_int_equal(ncclCommFinalize(comms[0]), ncclInvalidUsage);
  assert_int_equal(ncclCommAbort(comms[0]), ncclSuccess);
  assert_int_equal(ncclGroupEnd(), ncclSuccess);
  assert_true(now() - t0 < scaled(20)); /* it hung */
  assert_int_equal(ncclCommDestroy(comms[1]), ncclSuccess);
  assert_int_equal(ncclMemFree(mem), ncclSuccess);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank_fault),
      cmocka_unit_test(test_fault_param_validated),
      cmocka_unit_test(test_revoke_is_local),
      cmocka_unit_test(test_abort_inside_group),
  };
  return cmocka_run_group_tests_name("sim_fault", tests, NULL, NULL);
}
