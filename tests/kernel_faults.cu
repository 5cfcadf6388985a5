/* tests/kernel_faults.cu — a kernel's faults on ncclsim: each ends the
 * kernel with CUDA's error and says what a GPU does not: the kernel, the
 * block and the thread, and why. As on a GPU (CUDA 13 on 4 x H100,
 * measured), a fault ends the process's GPU state: every later call on a
 * device it had a context on returns the error (a failed assert:
 * cudaErrorAssert from cudaDeviceSynchronize, cudaGetLastError and a
 * later cudaMalloc), and a device it had none on, or reset since, answers
 * cudaErrorDevicesUnavailable. So each test runs in a child process of
 * its own. Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <cassert>
#include <cstdio>

#include <sys/wait.h>
#include <unistd.h>

#include <cooperative_groups.h>
#include <ncclsim.h>

#include "capture.h"

/* Runs body in a child process, which makes the process's first CUDA
 * calls; a failed check there ends the child (child_ends), and the test
 * fails on its exit status. */
static bool in_child;
static void isolated(void (*body)(void)) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    in_child = true;
    body();
    fflush(stdout);
    exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

/* A child whose check failed goes back to CMocka's loop: it ends there. */
static int child_ends(void **state) {
  (void)state;
  if (in_child) _exit(1);
  return 0;
}

/* Runs launch() on `device`, then synchronizes; what it printed on stderr
 * and the synchronize's error. */
template <class F>
static char *on_device(int device, F launch, cudaError_t *err) {
  assert_int_equal(cudaSetDevice(device), cudaSuccess);
  capture c;
  capture_start(&c, 2);
  launch();
  *err = cudaDeviceSynchronize();
  return capture_end(&c);
}

__global__ void asserting(int *p) {
  assert(threadIdx.x != 5);
  p[threadIdx.x] = 1;
}
__global__ void nothing(int *p) { p[0] = 1; }

static void assert_body(void) {
  int *p, *q, *on0;
  /* contexts on devices 0 and 1, none on 2 */
  assert_int_equal(cudaMalloc(&on0, 16), cudaSuccess);
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 64 * sizeof(int)), cudaSuccess);
  cudaError_t e;
  char *err = on_device(1, [&] { asserting<<<2, 32>>>(p); }, &e);
  assert_int_equal(e, cudaErrorAssert);
  /* CUDA's line, then ncclsim's */
  assert_contains(err, "block: [0,0,0], thread: [5,0,0] Assertion `threadIdx.x != 5` failed.");
  assert_contains(err, "asserting(int*)");
  assert_contains(err, "cudaErrorAssert");
  free(err);
  /* sticky: every later call on the device */
  assert_int_equal(cudaGetLastError(), cudaErrorAssert);
  assert_int_equal(cudaGetLastError(), cudaErrorAssert);
  assert_int_equal(cudaMalloc(&q, 16), cudaErrorAssert);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorAssert);
  nothing<<<1, 1>>>(p);
  assert_int_equal(launched(), cudaErrorAssert);
  /* and on device 0, which had a context */
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaMalloc(&q, 16), cudaErrorAssert);
  assert_int_equal(cudaMemset(on0, 0, 16), cudaErrorAssert);
  /* device 2 had none, and can have none now */
  assert_int_equal(cudaSetDevice(2), cudaErrorDevicesUnavailable);
  assert_int_equal(cudaMalloc(&q, 16), cudaErrorDevicesUnavailable);
  assert_int_equal(cudaGetLastError(), cudaErrorDevicesUnavailable);
  /* a reset does not bring device 1 back */
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  assert_int_equal(cudaDeviceReset(), cudaSuccess);
  assert_int_equal(cudaMalloc(&q, 16), cudaErrorDevicesUnavailable);
}
static void test_assert(void **state) {
  (void)state;
  isolated(assert_body);
}

__global__ void trapping(int *p) {
  if (blockIdx.x == 1) __trap();
  if (threadIdx.x == 0) p[0] = 1; /* one thread: all of them would race */
}

static void trap_body(void) {
  int *p;
  assert_int_equal(cudaMalloc(&p, 4), cudaSuccess);
  cudaError_t e;
  char *err = on_device(0, [&] { trapping<<<2, 4>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "block (1,0,0), thread (0,0,0): __trap()");
  free(err);
  assert_int_equal(cudaMalloc(&p, 16), cudaErrorLaunchFailure);
}
static void test_trap(void **state) {
  (void)state;
  isolated(trap_body);
}

__global__ void wild(int *p, long long far) {
  if (threadIdx.x == 3) p[far] = 1;
}

static void bad_address_body(void) {
  int *p;
  assert_int_equal(cudaMalloc(&p, 64), cudaSuccess);
  cudaError_t e;
  char *err = on_device(0, [&] { wild<<<1, 8>>>(NULL, 0); }, &e);
  assert_int_equal(e, cudaErrorIllegalAddress);
  assert_contains(err, "block (0,0,0), thread (3,0,0)");
  assert_contains(err, "(a null pointer)");
  free(err);
  assert_int_equal(cudaMalloc(&p, 16), cudaErrorIllegalAddress);
}
static void test_bad_address(void **state) {
  (void)state;
  isolated(bad_address_body);
}

__device__ int deep(int n) {
  volatile char pad[512];
  pad[0] = (char)n;
  return n == 0 ? pad[0] : deep(n - 1) + pad[0];
}
__global__ void overflow(int *p) { p[0] = deep(1 << 20); }

static void stack_overflow_body(void) {
  int *p;
  assert_int_equal(cudaMalloc(&p, 4), cudaSuccess);
  cudaError_t e;
  char *err = on_device(0, [&] { overflow<<<1, 1>>>(p); }, &e);
  assert_int_equal(e, cudaErrorIllegalAddress);
  assert_contains(err, "stack overflowed (NCCLSIM_KERNEL_STACK_KB=");
  free(err);
}
static void test_stack_overflow(void **state) {
  (void)state;
  isolated(stack_overflow_body);
}

/* Warp exchanges a GPU leaves undefined, told. */
__global__ void lane_gone(int *p) {
  if (threadIdx.x == 7) return;
  p[threadIdx.x] = __shfl_sync(0xffffffff, 1, 0);
}
__global__ void mask_without_me(int *p) { p[0] = __shfl_sync(0x2, 1, 1); }
__global__ void kinds_differ(int *p) {
  if (threadIdx.x < 16) p[threadIdx.x] = __shfl_sync(0xffffffff, 1, 0);
  else p[threadIdx.x] = (int)__ballot_sync(0xffffffff, 1);
}

static void lane_gone_body(void) {
  int *p;
  cudaError_t e;
  assert_int_equal(cudaMalloc(&p, 256), cudaSuccess);
  char *err = on_device(0, [&] { lane_gone<<<1, 32>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "thread (7,0,0) ended while lanes");
  assert_contains(err, "__shfl_sync (mask 0xffffffff)");
  free(err);
}
static void mask_without_me_body(void) {
  int *p;
  cudaError_t e;
  assert_int_equal(cudaMalloc(&p, 256), cudaSuccess);
  char *err = on_device(0, [&] { mask_without_me<<<1, 1>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "leaves out the calling lane 0");
  free(err);
}
static void kinds_differ_body(void) {
  int *p;
  cudaError_t e;
  assert_int_equal(cudaMalloc(&p, 256), cudaSuccess);
  char *err = on_device(0, [&] { kinds_differ<<<1, 32>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "__ballot_sync with mask 0xffffffff while lanes 0x0000ffff of its warp wait in __shfl_sync");
  free(err);
}
static void test_warp_misuse(void **state) {
  (void)state;
  isolated(lane_gone_body);
  isolated(mask_without_me_body);
  isolated(kinds_differ_body);
}

/* A block that waits for a later block of a launch that is not
 * cooperative: CUDA does not promise that they run at once (an H100 runs
 * this one, both fitting), so ncclsim runs them one at a time and ends the
 * kernel after NCCLSIM_TIMEOUT, saying why. */
__global__ void wait_for_last_block(volatile int *flag) {
  if (blockIdx.x == gridDim.x - 1) {
    *flag = 1;
    return;
  }
  while (*flag == 0) {
  }
}

static void wait_for_later_block_body(void) {
  ncclsimParamSet("TIMEOUT", "1");
  int *flag;
  assert_int_equal(cudaMalloc(&flag, 4), cudaSuccess);
  assert_int_equal(cudaMemset(flag, 0, 4), cudaSuccess);
  cudaError_t e;
  char *err = on_device(0, [&] { wait_for_last_block<<<2, 32>>>(flag); }, &e);
  assert_int_equal(e, cudaErrorLaunchTimeout);
  assert_contains(err, "1 of the grid's 2 blocks have not started: only a cooperative launch");
  assert_contains(err, "wait_for_last_block");
  free(err);
}
static void test_wait_for_later_block(void **state) {
  (void)state;
  isolated(wait_for_later_block_body);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_assert, child_ends),
      cmocka_unit_test_setup(test_trap, child_ends),
      cmocka_unit_test_setup(test_bad_address, child_ends),
      cmocka_unit_test_setup(test_stack_overflow, child_ends),
      cmocka_unit_test_setup(test_warp_misuse, child_ends),
      cmocka_unit_test_setup(test_wait_for_later_block, child_ends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
