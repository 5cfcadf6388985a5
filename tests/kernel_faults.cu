/* tests/kernel_faults.cu — a kernel's faults on ncclsim: each ends the
 * kernel with CUDA's error, sticky on its device as on a GPU (CUDA 13 on
 * an H100: after a failed assert, cudaDeviceSynchronize, cudaGetLastError
 * and a later cudaMalloc all return cudaErrorAssert), and says what a GPU
 * does not: the kernel, the block and the thread, and why. A fault is
 * sticky on its device, so each test has a device of its own. Built by
 * ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <cassert>

#include <cooperative_groups.h>
#include <ncclsim.h>

#include "capture.h"

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

static void test_assert(void **state) {
  (void)state;
  int *p;
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
  int *q;
  assert_int_equal(cudaMalloc(&q, 16), cudaErrorAssert);
  assert_int_equal(cudaStreamSynchronize(0), cudaErrorAssert);
  nothing<<<1, 1>>>(p);
  assert_int_equal(launched(), cudaErrorAssert);
  /* another device is not touched */
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaMalloc(&q, 16), cudaSuccess);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  cudaFree(q);
}

__global__ void trapping(int *p) {
  if (blockIdx.x == 1) __trap();
  p[0] = 1;
}

static void test_trap(void **state) {
  (void)state;
  int *p;
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 4), cudaSuccess);
  cudaError_t e;
  char *err = on_device(2, [&] { trapping<<<2, 4>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "block (1,0,0), thread (0,0,0): __trap()");
  free(err);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

__global__ void wild(int *p, long long far) {
  if (threadIdx.x == 3) p[far] = 1;
}

static void test_bad_address(void **state) {
  (void)state;
  int *p;
  assert_int_equal(cudaSetDevice(3), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 64), cudaSuccess);
  cudaError_t e;
  char *err = on_device(3, [&] { wild<<<1, 8>>>(NULL, 0); }, &e);
  assert_int_equal(e, cudaErrorIllegalAddress);
  assert_contains(err, "block (0,0,0), thread (3,0,0)");
  assert_contains(err, "(a null pointer)");
  free(err);
  assert_int_equal(cudaMalloc(&p, 16), cudaErrorIllegalAddress);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

__device__ int deep(int n) {
  volatile char pad[512];
  pad[0] = (char)n;
  return n == 0 ? pad[0] : deep(n - 1) + pad[0];
}
__global__ void overflow(int *p) { p[0] = deep(1 << 20); }

static void test_stack_overflow(void **state) {
  (void)state;
  int *p;
  assert_int_equal(cudaSetDevice(4), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 4), cudaSuccess);
  cudaError_t e;
  char *err = on_device(4, [&] { overflow<<<1, 1>>>(p); }, &e);
  assert_int_equal(e, cudaErrorIllegalAddress);
  assert_contains(err, "stack overflowed (NCCLSIM_KERNEL_STACK_KB=");
  free(err);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
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

static void test_warp_misuse(void **state) {
  (void)state;
  int *p;
  cudaError_t e;
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 256), cudaSuccess);
  char *err = on_device(5, [&] { lane_gone<<<1, 32>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "thread (7,0,0) ended while lanes");
  assert_contains(err, "__shfl_sync (mask 0xffffffff)");
  free(err);
  assert_int_equal(cudaSetDevice(6), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 256), cudaSuccess);
  err = on_device(6, [&] { mask_without_me<<<1, 1>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "leaves out the calling lane 0");
  free(err);
  assert_int_equal(cudaSetDevice(7), cudaSuccess);
  assert_int_equal(cudaMalloc(&p, 256), cudaSuccess);
  err = on_device(7, [&] { kinds_differ<<<1, 32>>>(p); }, &e);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_contains(err, "__ballot_sync with mask 0xffffffff while lanes 0x0000ffff of its warp wait in __shfl_sync");
  free(err);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

int main(void) {
  /* A device a test, and more than the default 8 for the ones that follow. */
  ncclsimParamSet("DEVICES", "16");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_assert),         cmocka_unit_test(test_trap),
      cmocka_unit_test(test_bad_address),    cmocka_unit_test(test_stack_overflow),
      cmocka_unit_test(test_warp_misuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
