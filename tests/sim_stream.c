/* tests/sim_stream.c — ncclsim's streams, events and simulated memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <ncclsim.h>

/* 20 ms of work, and then as long as `held` is set: a test that must see the
 * work unfinished holds it until it has looked, however late it looks on a
 * loaded machine. */
static _Atomic int held;
static void slow_append(void *arg) {
  usleep(20000);
  while (atomic_load(&held)) usleep(1000);
  int *log = arg;
  log[++log[0]] = 1;
}
static void append2(void *arg) {
  int *log = arg;
  log[++log[0]] = 2;
}

/* Work runs asynchronously and in stream order: the host call returns
 * before a slow callback finished, and the next callback runs after it. */
static void test_stream_order_and_async(void **state) {
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  int log[4] = {0};
  atomic_store(&held, 1);
  assert_int_equal(cudaLaunchHostFunc(s, slow_append, log), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, append2, log), cudaSuccess);
  assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
  atomic_store(&held, 0);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(log[0], 2);
  assert_int_equal(log[1], 1);
  assert_int_equal(log[2], 2);
  assert_int_equal(cudaStreamQuery(s), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
}

/* An event orders two streams: the copy on s2 waits for the slow work
 * recorded on s1. */
static void test_event_orders_streams(void **state) {
  cudaStream_t s1, s2;
  cudaEvent_t e, a, b;
  cudaStreamCreate(&s1);
  cudaStreamCreate(&s2);
  cudaEventCreate(&e);
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  int log[4] = {0};
  assert_int_equal(cudaEventRecord(a, s1), cudaSuccess);
  cudaLaunchHostFunc(s1, slow_append, log);
  assert_int_equal(cudaEventRecord(e, s1), cudaSuccess);
  assert_int_equal(cudaEventRecord(b, s1), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
  cudaLaunchHostFunc(s2, append2, log);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_int_equal(log[1], 1);
  assert_int_equal(log[2], 2);
  assert_int_equal(cudaEventSynchronize(b), cudaSuccess);
  assert_int_equal(cudaEventQuery(b), cudaSuccess);
  float ms = -1;
  assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  assert_true(ms >= 15.0f); /* the 20 ms callback lies between them */
  cudaEventDestroy(e);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

/* Simulated memory: tagged with its device, bounds-checked, accounted. */
static void test_memory_registry(void **state) {
  size_t n0, b0, n1, b1;
  ncclsimMemStats(&n0, &b0);
  assert_int_equal(cudaSetDevice(3), cudaSuccess);
  char *p;
  assert_int_equal(cudaMalloc((void **)&p, 1000), cudaSuccess);
  struct cudaPointerAttributes at;
  assert_int_equal(cudaPointerGetAttributes(&at, p + 999), cudaSuccess);
  assert_int_equal(at.type, cudaMemoryTypeDevice);
  assert_int_equal(at.device, 3);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0 + 1);
  assert_int_equal(b1, b0 + 1000);
  char host[2000];
  assert_int_equal(cudaMemcpy(p, host, 1000, cudaMemcpyHostToDevice), cudaSuccess);
  /* one byte past the end is refused, not written */
  assert_int_equal(cudaMemcpy(p, host, 1001, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  assert_int_equal(cudaFree(p + 1), cudaErrorInvalidValue);
  assert_int_equal(cudaFree(p), cudaSuccess);
  assert_int_equal(cudaFree(p), cudaErrorInvalidValue); /* double free detected */
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0);
  assert_int_equal(cudaSetDevice(9999), cudaErrorInvalidDevice);
  cudaSetDevice(0);
}

/* The allocation hook: the Nth allocation fails, cleanly. */
static void test_alloc_fault(void **state) {
  void *p;
  ncclsimAllocFailAfter(1);
  assert_int_equal(cudaMalloc(&p, 64), cudaErrorMemoryAllocation);
  ncclsimAllocFailAfter(0);
  assert_int_equal(cudaMalloc(&p, 64), cudaSuccess);
  cudaFree(p);
}

/* Parameters: set at run time, validated, readable. */
static void test_params(void **state) {
  assert_int_equal(ncclsimParamSet("TIMEOUT", "2.5"), ncclSuccess);
  assert_string_equal(ncclsimParamGet("TIMEOUT"), "2.5");
  assert_int_equal(ncclsimParamSet("TIMEOUT", "soon"), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("NO_SUCH", "1"), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("GIN_TYPE", "gdaki"), ncclSuccess);
  assert_int_equal(ncclsimParamSet("GIN_TYPE", "infiniband"), ncclInvalidArgument);
  assert_int_equal(ncclsimParamSet("GIN_TYPE", NULL), ncclSuccess);
  assert_int_equal(ncclsimParamSet("TIMEOUT", NULL), ncclSuccess);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_order_and_async),
      cmocka_unit_test(test_event_orders_streams),
      cmocka_unit_test(test_memory_registry),
      cmocka_unit_test(test_alloc_fault),
      cmocka_unit_test(test_params),
  };
  return cmocka_run_group_tests_name("sim_stream", tests, NULL, NULL);
}
