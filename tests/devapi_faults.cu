/* tests/devapi_faults.cu — what ncclsim says where a GPU would hang or
 * corrupt memory, for NCCL's device API (sim/dev/): a wait that cannot
 * complete ends at NCCLSIM_TIMEOUT (1 s here) with a report naming the
 * rank, kernel, block and thread, what it waits for, the value it wants
 * and has, and what each rank's kernels are doing; a pointer or GIN
 * offset outside a window, a signal, counter, barrier or context beyond
 * the requirements, a peer a RAIL connection does not reach, and
 * multimem, are kernel faults that name them. Built by ncclsim-nvcc
 * (tests/devapi.mk). A kernel's fault is sticky on every device of its
 * process, as on a GPU: each test runs in a process of its own. */
#include "devapi_test.h"

#include <sys/wait.h>

/* Runs test(state) in a child process: its own devices, and a fault
 * sticky in it alone. The child's failed check ends it (CMocka's report
 * in its output), and the parent's test fails with it. */
static void forked(void (*test)(void **), void **state) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(2, 1); /* the child's own report goes to stderr: stdout is the parent's TAP */
    const struct CMUnitTest one[] = {{"child", test, NULL, NULL, NULL}};
    _exit(cmocka_run_group_tests_name("child", one, NULL, NULL) ? 1 : 0);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}
#define FORKED(name)                     \
  static void name(void **state) { forked(name##_body, state); }

/* Ranks r's stream's error after run(), and what was printed on stderr. */
template <class F>
static char *faulting(Ranks &k, F launch, cudaError_t *err) {
  capture c;
  capture_start(&c, 2);
  k.run(launch, err);
  return capture_end(&c);
}

__global__ void lsaBarrier(ncclDevComm dc) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
}

/* Rank 0 waits at an LSA barrier that rank 1 never reaches. */
static void test_barrier_report_body(void **state) {
  (void)state;
  Ranks k;
  k.init(2, 0);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 1;
  k.devcomms(reqs);
  cudaError_t err[2];
  uint64_t t0 = __ncclsim_now_ns();
  char *text = faulting(k, [&](int r) { if (r == 0) lsaBarrier<<<1, 32, 0, k.stream[r]>>>(k.dc[r]); }, err);
  double took = (double)(__ncclsim_now_ns() - t0) / 1e9;
  assert_int_equal(err[0], cudaErrorLaunchTimeout);
  assert_true(took >= 0.9); /* NCCLSIM_TIMEOUT, give or take the margin that lets the wait report first */
  assert_contains(text, "lsaBarrier(ncclDevComm)");
  assert_contains(text, "block (0,0,0), thread (0,0,0)");
  assert_contains(text, "rank 0 waited NCCLSIM_TIMEOUT=1 s for LSA barrier 0 (rank 1's arrival)");
  assert_contains(text, "wants a value >= 1, has 0");
  assert_contains(text, "rank 0: kernel void lsaBarrier(ncclDevComm), block (0,0,0), thread (0,0,0): waits for LSA barrier 0");
  assert_contains(text, "rank 1: no device-API call from a kernel yet");
  free(text);
}

__global__ void signalWait(ncclDevComm dc, uint64_t least) {
  ncclGin gin{dc, 0};
  gin.waitSignal(ncclCoopCta(), 3, least);
}
__global__ void signalOnce(ncclDevComm dc, int peer) {
  ncclGin gin{dc, 0};
  gin.signal(ncclTeamWorld(dc), peer, ncclGin_SignalInc{3});
}

/* Rank 0 waits for two signals; rank 1 sends one (GDAKI, and PROXY). */
static void signal_report(int gin, int first) {
  Ranks k;
  ncclsimCommOptions_t o = gin_options(gin);
  k.init(2, first, &o);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  reqs.ginSignalCount = 4;
  k.devcomms(reqs);
  cudaError_t err[2];
  char *text = faulting(k, [&](int r) {
    if (r == 0) signalWait<<<1, 1, 0, k.stream[r]>>>(k.dc[r], 2);
    else signalOnce<<<1, 1, 0, k.stream[r]>>>(k.dc[r], 0);
  }, err);
  assert_int_equal(err[0], cudaErrorLaunchTimeout);
  assert_contains(text, "signalWait(ncclDevComm, uint64_t)");
  assert_contains(text, "rank 0 waited NCCLSIM_TIMEOUT=1 s for GIN signal 3 of GIN context 0");
  assert_contains(text, "wants a value >= 2, has 1 (64-bit rolling compare)");
  assert_contains(text, "rank 1: not waiting in the device API (last, ");
  assert_contains(text, "ncclGin::signal to rank 0, signal 3)");
  free(text);
}
static void test_signal_report_gdaki_body(void **state) {
  (void)state;
  signal_report(NCCL_GIN_TYPE_GDAKI, 0);
}
static void test_signal_report_proxy_body(void **state) {
  (void)state;
  signal_report(NCCL_GIN_TYPE_PROXY, 0);
}

__global__ void counterWait(ncclDevComm dc) {
  ncclGin gin{dc, 1};
  gin.waitCounter(ncclCoopThread(), 0, 1);
}

static void test_counter_report_body(void **state) {
  (void)state;
  Ranks k;
  ncclsimCommOptions_t o = gin_options(NCCL_GIN_TYPE_GPI);
  k.init(1, 0, &o);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  reqs.ginCounterCount = 1;
  k.devcomms(reqs);
  cudaError_t err[1];
  char *text = faulting(k, [&](int r) { counterWait<<<1, 1, 0, k.stream[r]>>>(k.dc[r]); }, err);
  assert_int_equal(err[0], cudaErrorLaunchTimeout);
  assert_contains(text, "for GIN counter 0 of GIN context 1: wants a value >= 1, has 0 (56-bit rolling compare)");
  free(text);
}

__global__ void pointerPast(ncclWindow_t w, size_t off) { *(volatile char *)ncclGetLsaPointer(w, off, 1) = 1; }

static void test_pointer_outside_body(void **state) {
  (void)state;
  Ranks k;
  k.init(2, 0);
  ncclWindow_t win[2];
  void *buf[2];
  k.window(4096, win, buf);
  cudaError_t err[2];
  char *text = faulting(k, [&](int r) { if (r == 0) pointerPast<<<1, 1, 0, k.stream[r]>>>(win[r], 4096 + 64); }, err);
  assert_int_equal(err[0], cudaErrorIllegalAddress);
  char want[160];
  snprintf(want, sizeof want, "ncclGetLsaPointer: rank 0: 1 byte(s) at offset 4160 of window %p on rank 1 are outside "
           "it (4096 bytes there)", (void *)win[0]);
  assert_contains(text, want);
  free(text);
}

__global__ void putPast(ncclDevComm dc, ncclWindow_t w, size_t off) {
  ncclGin gin{dc, 0};
  gin.put(ncclTeamWorld(dc), 1, w, off, w, 0, 64);
}

static void test_gin_put_outside_body(void **state) {
  (void)state;
  Ranks k;
  ncclsimCommOptions_t o = gin_options(NCCL_GIN_TYPE_GDAKI);
  k.init(2, 0, &o);
  ncclWindow_t win[2];
  void *buf[2];
  k.window(1024, win, buf);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  k.devcomms(reqs);
  cudaError_t err[2];
  char *text = faulting(k, [&](int r) { if (r == 0) putPast<<<1, 1, 0, k.stream[r]>>>(k.dc[r], win[r], 1000); }, err);
  assert_int_equal(err[0], cudaErrorIllegalAddress);
  char want[160];
  snprintf(want, sizeof want, "ncclGin::put: rank 0: 64 byte(s) at offset 1000 of window %p on rank 1 are outside it "
           "(1024 bytes there)", (void *)win[0]);
  assert_contains(text, want);
  free(text);
}

__global__ void signalBeyond(ncclDevComm dc) {
  ncclGin gin{dc, 0};
  gin.signal(ncclTeamWorld(dc), 0, ncclGin_SignalInc{5});
}
__global__ void contextBeyond(ncclDevComm dc) {
  ncclGin gin{dc, 4};
  gin.flush(ncclCoopThread());
}
__global__ void counterBeyond(ncclDevComm dc) {
  ncclGin gin{dc, 0};
  (void)gin.readCounter(2);
}
__global__ void barrierBeyond(ncclDevComm dc) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, 3};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
}
__global__ void ginBarrierBeyond(ncclDevComm dc) {
  ncclGin gin{dc, 0};
  ncclGinBarrierSession<ncclCoopCta> bar{ncclCoopCta(), gin, ncclTeamTagWorld(), 1};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed, ncclGinFenceLevel::None);
}

/* More signals, contexts, counters or barriers than the requirements
 * asked for: reported, not folded into the next resource's. */
static void beyond(void (*kernel)(ncclDevComm), const char *want) {
  Ranks k;
  ncclsimCommOptions_t o = gin_options(NCCL_GIN_TYPE_GDAKI);
  k.init(1, 0, &o);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  reqs.ginSignalCount = 2;
  reqs.ginCounterCount = 2;
  reqs.lsaBarrierCount = 2;
  reqs.worldGinBarrierCount = 1;
  k.devcomms(reqs);
  cudaError_t err[1];
  char *text = faulting(k, [&](int r) { kernel<<<1, 1, 0, k.stream[r]>>>(k.dc[r]); }, err);
  assert_int_equal(err[0], cudaErrorInvalidValue);
  assert_contains(text, want);
  free(text);
}
static void test_signal_beyond_body(void **state) {
  (void)state;
  beyond(signalBeyond, "GIN signal 5, but the device communicator has 3"); /* 2 + the world barrier's 1 */
}
static void test_context_beyond_body(void **state) {
  (void)state;
  beyond(contextBeyond, "GIN context 4, but the device communicator has 4 (ginContextCount)");
}
static void test_counter_beyond_body(void **state) {
  (void)state;
  beyond(counterBeyond, "GIN counter 2, but the device communicator has 2");
}
static void test_barrier_beyond_body(void **state) {
  (void)state;
  beyond(barrierBeyond, "LSA barrier session of index 3, but its handle has 2 barrier(s)");
}
static void test_gin_barrier_beyond_body(void **state) {
  (void)state;
  beyond(ginBarrierBeyond, "GIN barrier session of index 1, but the device communicator has 1 world GIN barrier(s)");
}

__global__ void putOffRail(ncclDevComm dc, ncclWindow_t w) {
  ncclGin gin{dc, 0};
  gin.put(ncclTeamWorld(dc), 1, w, 0, w, 0, 8);
}

/* 4 ranks on 2 nodes, a RAIL connection: rank 0 reaches rank 2 (its rail),
 * not rank 1. */
static void test_rail_unreachable_body(void **state) {
  (void)state;
  Ranks k;
  ncclsimCommOptions_t o = gin_options(NCCL_GIN_TYPE_PROXY, 2);
  k.init(4, 0, &o);
  ncclWindow_t win[4];
  void *buf[4];
  k.window(64, win, buf);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_RAIL;
  k.devcomms(reqs);
  cudaError_t err[4];
  char *text = faulting(k, [&](int r) { if (r == 0) putOffRail<<<1, 1, 0, k.stream[r]>>>(k.dc[r], win[r]); }, err);
  assert_int_equal(err[0], cudaErrorInvalidValue);
  assert_contains(text, "ncclGin::put: rank 1 is not on rank 0's rail (LSA index 1, not 0): a RAIL GIN connection "
                        "reaches the rail only");
  free(text);
}

__global__ void multimemSum(ncclDevComm dc, ncclWindow_t w) {
  ncclLsaReduceSumMultimemCopy<float>(ncclCoopCta(), ncclSymPtr<float>(w, 0), ncclTeamLsa(dc), (float *)nullptr, 4);
}
__global__ void noGin(ncclDevComm dc) {
  ncclGin gin{dc, 0};
  gin.flush(ncclCoopThread());
}

/* What ncclsim cannot do, or was not asked for, is named. */
static void test_multimem_body(void **state) {
  (void)state;
  Ranks k;
  k.init(1, 0);
  ncclWindow_t win[1];
  void *buf[1];
  k.window(64, win, buf);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  k.devcomms(reqs);
  cudaError_t err[1];
  char *text = faulting(k, [&](int r) { multimemSum<<<1, 4, 0, k.stream[r]>>>(k.dc[r], win[r]); }, err);
  assert_int_equal(err[0], cudaErrorNotSupported);
  assert_contains(text, "ncclLsaReduceSumMultimemCopy: multimem (ncclsim has no multicast) is not supported on ncclsim");
  free(text);
}
static void test_no_gin_body(void **state) {
  (void)state;
  Ranks k;
  k.init(1, 0);
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  k.devcomms(reqs);
  cudaError_t err[1];
  char *text = faulting(k, [&](int r) { noGin<<<1, 1, 0, k.stream[r]>>>(k.dc[r]); }, err);
  assert_int_equal(err[0], cudaErrorInvalidValue);
  assert_contains(text, "ncclGin::flush: the device communicator has no GIN");
  free(text);
}

FORKED(test_barrier_report)
FORKED(test_signal_report_gdaki)
FORKED(test_signal_report_proxy)
FORKED(test_counter_report)
FORKED(test_pointer_outside)
FORKED(test_gin_put_outside)
FORKED(test_signal_beyond)
FORKED(test_context_beyond)
FORKED(test_counter_beyond)
FORKED(test_barrier_beyond)
FORKED(test_gin_barrier_beyond)
FORKED(test_rail_unreachable)
FORKED(test_multimem)
FORKED(test_no_gin)

int main(void) {
  ncclsimParamSet("TIMEOUT", "1");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_barrier_report),
      cmocka_unit_test(test_signal_report_gdaki),
      cmocka_unit_test(test_signal_report_proxy),
      cmocka_unit_test(test_counter_report),
      cmocka_unit_test(test_pointer_outside),
      cmocka_unit_test(test_gin_put_outside),
      cmocka_unit_test(test_signal_beyond),
      cmocka_unit_test(test_context_beyond),
      cmocka_unit_test(test_counter_beyond),
      cmocka_unit_test(test_barrier_beyond),
      cmocka_unit_test(test_gin_barrier_beyond),
      cmocka_unit_test(test_rail_unreachable),
      cmocka_unit_test(test_multimem),
      cmocka_unit_test(test_no_gin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
