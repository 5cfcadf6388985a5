/* tests/sim_cuda.c — ncclsim's CUDA runtime host API (sim/cuda/): argument
 * checking and error codes as CUDA returns them, the per-thread last error
 * (cudaGetLastError / cudaPeekAtLastError), devices and their properties,
 * simulated memory and its accounting, stream errors (a failed op poisons
 * the ops behind it until a synchronize reports it), events, and clean
 * failure when an allocation or a stream worker's start fails. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <ncclsim.h>

#include "cuda/cuda.h" /* sim_op and sim_stream_enqueue: the only way to make a stream op fail on demand */
#include "gate.h"

/* ---------------------------------------------------------------- helpers */

static void count_call(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* A stream op that fails with `code`, and notes the stream error it was
 * handed (the error of an earlier op not yet reported). */
typedef struct {
  sim_op op;
  cudaError_t code;
  cudaError_t *seen;
} fail_op;

static cudaError_t fail_run(sim_op *op, cudaError_t stream_err) {
  fail_op *f = (fail_op *)op;
  if (f->seen) *f->seen = stream_err;
  return f->code;
}

static void fail_release(sim_op *op) { free(op); }

static void enqueue_failure(cudaStream_t h, cudaError_t code, cudaError_t *seen) {
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(h, &err);
  assert_non_null(s);
  fail_op *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->op.run = fail_run;
  f->op.release = fail_release;
  f->op.what = "test failure";
  f->code = code;
  f->seen = seen;
  assert_int_equal(sim_stream_enqueue(s, &f->op), cudaSuccess);
}

static size_t live_allocs(void) {
  size_t n;
  ncclsimMemStats(&n, NULL);
  return n;
}

/* The number of devices NCCLSIM_DEVICES gives when nothing overrides it. */
static int env_devices(void) {
  int n = atoi(ncclsimParamGet("DEVICES"));
  return n < 1 ? 1 : n;
}

/* --------------------------------------------------- first use, faults */

/* The first use of a device's default stream allocates its table and the
 * stream; each of those allocations failing makes the call fail with
 * cudaErrorMemoryAllocation (recorded as the last error) and run nothing,
 * and a later call succeeds. Runs first: later tests create the table. */
static void test_default_stream_alloc_faults(void **state) {
  (void)state;
  atomic_int calls = 0;
  int failures = 0;
  cudaError_t e;
  for (uint64_t k = 1;; k++) {
    ncclsimAllocFailAfter(k);
    e = cudaLaunchHostFunc(0, count_call, &calls);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
    failures++;
    assert_true(k < 10);
  }
  assert_true(failures >= 1); /* at least the op itself is allocated */
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(calls, 1); /* only the call that succeeded ran */
}

/* Every allocating call fails cleanly at each of its allocations: the
 * error is cudaErrorMemoryAllocation, no handle is returned, nothing leaks
 * (ASan checks) and no simulated allocation stays registered. */
static void test_alloc_faults(void **state) {
  (void)state;
  cudaStream_t s, fresh;
  cudaEvent_t ev, ev2;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaEventCreate(&ev2), cudaSuccess);
  gate g;
  gate_init(&g);
  char *buf;
  assert_int_equal(cudaMalloc((void **)&buf, 256), cudaSuccess);
  size_t n0 = live_allocs();

  for (uint64_t k = 1;; k++) { /* cudaStreamCreate */
    fresh = (cudaStream_t)&g;  /* must not be overwritten on failure */
    ncclsimAllocFailAfter(k);
    cudaError_t e = cudaStreamCreateWithFlags(&fresh, cudaStreamNonBlocking);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_ptr_equal(fresh, (cudaStream_t)&g);
    assert_true(k < 10);
  }
  assert_int_equal(cudaStreamDestroy(fresh), cudaSuccess);

  for (uint64_t k = 1;; k++) { /* cudaEventCreate */
    ev = NULL;
    ncclsimAllocFailAfter(k);
    cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventBlockingSync);
    ncclsimAllocFailAfter(0);
    if (e == cudaSuccess) break;
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_null(ev);
    assert_true(k < 10);
  }

  /* Queued ops: a failed record leaves the event unrecorded (elapsed time
   * needs a record), a failed host function never runs, a failed copy never
   * writes. The gate holds the stream so that an event wait is queued. */
  atomic_int calls = 0;
  assert_int_equal(cudaLaunchHostFunc(s, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaEventRecord(ev2, s), cudaSuccess);
  cudaStream_t s2;
  assert_int_equal(cudaStreamCreate(&s2), cudaSuccess);
  char host[256];
  memset(host, 7, sizeof host);
  assert_int_equal(cudaMemset(buf, 0, 256), cudaSuccess);
  for (int what = 0; what < 4; what++) {
    for (uint64_t k = 1;; k++) {
      ncclsimAllocFailAfter(k);
      cudaError_t e = what == 0   ? cudaEventRecord(ev, s2)
                      : what == 1 ? cudaLaunchHostFunc(s2, count_call, &calls)
                      : what == 2 ? cudaMemcpyAsync(buf, host, 256, cudaMemcpyHostToDevice, s2)
                                  : cudaStreamWaitEvent(s2, ev2, 0);
      ncclsimAllocFailAfter(0);
      if (e == cudaSuccess) break;
      assert_int_equal(e, cudaErrorMemoryAllocation);
      assert_int_equal(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
      if (what == 0) {
        float ms;
        assert_int_equal(cudaEventElapsedTime(&ms, ev, ev), cudaErrorInvalidResourceHandle);
      }
      /* Only what succeeded earlier in this loop ran. */
      assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
      assert_int_equal(calls, what > 1);
      assert_int_equal(buf[0], what > 2 ? 7 : 0);
      assert_true(k < 10);
    }
  }
  (void)cudaGetLastError();
  /* The successful wait holds s2 behind the gate. */
  assert_int_equal(cudaStreamQuery(s2), cudaErrorNotReady);
  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_int_equal(calls, 1);
  assert_int_equal(buf[255], 7);
  assert_int_equal(live_allocs(), n0);

  /* cudaMalloc and cudaMallocHost, many times in a row so that one of the
   * injected failures hits the growth of the registry itself. */
  enum { M = 140 };
  void *ptrs[M];
  for (int i = 0; i < M; i++) {
    void *p = &g;
    ncclsimAllocFailAfter(1);
    cudaError_t e = i % 2 ? cudaMalloc(&p, 16) : cudaMallocHost(&p, 16);
    ncclsimAllocFailAfter(0);
    assert_int_equal(e, cudaErrorMemoryAllocation);
    assert_ptr_equal(p, &g);
    assert_int_equal(live_allocs(), n0 + (size_t)i);
    assert_int_equal(i % 2 ? cudaMalloc(&ptrs[i], 16) : cudaMallocHost(&ptrs[i], 16), cudaSuccess);
  }
  for (int i = 0; i < M; i++)
    assert_int_equal(i % 2 ? cudaFree(ptrs[i]) : cudaFreeHost(ptrs[i]), cudaSuccess);
  assert_int_equal(live_allocs(), n0);
  (void)cudaGetLastError();

  assert_int_equal(cudaEventDestroy(ev), cudaSuccess);
  assert_int_equal(cudaEventDestroy(ev2), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s2), cudaSuccess);
  assert_int_equal(cudaFree(buf), cudaSuccess);
  gate_destroy(&g);
}

/* A stream whose worker thread cannot start (here: a stack no machine can
 * map) refuses work with cudaErrorMemoryAllocation, leaks nothing, leaves
 * an event it was asked to record as it was (so that waiting on the event
 * does not hang), and works once a worker can start. */
static void test_worker_start_failure(void **state) {
  (void)state;
  cudaStream_t s;
  cudaEvent_t ev;
  atomic_int calls = 0;
  char *buf;
  char host[64];
  memset(host, 5, sizeof host);
  assert_int_equal(cudaMalloc((void **)&buf, 64), cudaSuccess);
  assert_int_equal(cudaMemset(buf, 0, 64), cudaSuccess);
  assert_int_equal(cudaEventCreate(&ev), cudaSuccess);
  /* An event pending behind a held stream, for cudaStreamWaitEvent. */
  cudaStream_t held;
  cudaEvent_t pending;
  gate g;
  gate_init(&g);
  assert_int_equal(cudaStreamCreate(&held), cudaSuccess);
  assert_int_equal(cudaEventCreate(&pending), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(held, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaEventRecord(pending, held), cudaSuccess);
  assert_int_equal(ncclsimParamSet("STACK_KB", "1e15"), ncclSuccess);
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, count_call, &calls), cudaErrorMemoryAllocation);
  assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
  assert_int_equal(cudaMemcpyAsync(buf, host, 64, cudaMemcpyDefault, s), cudaErrorMemoryAllocation);
  assert_int_equal(cudaMemsetAsync(buf, 1, 64, s), cudaErrorMemoryAllocation);
  assert_int_equal(cudaStreamWaitEvent(s, pending, 0), cudaErrorMemoryAllocation);
  assert_int_equal(cudaEventRecord(ev, s), cudaErrorMemoryAllocation);
  assert_int_equal(cudaEventQuery(ev), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(ev), cudaSuccess); /* must not wait forever */
  float ms;
  assert_int_equal(cudaEventElapsedTime(&ms, ev, ev), cudaErrorInvalidResourceHandle); /* never recorded */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess); /* nothing was queued */
  assert_int_equal(cudaStreamQuery(s), cudaSuccess);
  assert_int_equal(ncclsimParamSet("STACK_KB", NULL), ncclSuccess);
  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(held), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(held), cudaSuccess);
  assert_int_equal(cudaEventDestroy(pending), cudaSuccess);
  gate_destroy(&g);

  assert_int_equal(cudaMemcpyAsync(buf, host, 64, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, count_call, &calls), cudaSuccess);
  assert_int_equal(cudaEventRecord(ev, s), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(ev), cudaSuccess);
  assert_int_equal(calls, 1);
  assert_int_equal(buf[63], 5);
  assert_int_equal(cudaEventElapsedTime(&ms, ev, ev), cudaSuccess);
  assert_true(ms == 0.0f);
  assert_int_equal(cudaEventDestroy(ev), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaFree(buf), cudaSuccess);
}

/* ------------------------------------------------------------- devices */

static void test_device_count_and_current(void **state) {
  (void)state;
  int n = -1, d = -1;
  assert_int_equal(cudaGetDeviceCount(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_int_equal(n, env_devices());

  assert_int_equal(ncclsimParamSet("DEVICES", "3"), ncclSuccess);
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_int_equal(n, 3);
  assert_int_equal(cudaSetDevice(3), cudaErrorInvalidDevice);
  assert_int_equal(cudaSetDevice(-1), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  assert_int_equal(cudaGetDevice(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGetDevice(&d), cudaSuccess);
  assert_int_equal(d, 2);
  /* A failed cudaSetDevice keeps the current device. */
  assert_int_equal(cudaSetDevice(7), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetDevice(&d), cudaSuccess);
  assert_int_equal(d, 2);

  /* The count is at least 1 and at most 4096, whatever the parameter. */
  assert_int_equal(ncclsimParamSet("DEVICES", "0"), ncclSuccess);
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_int_equal(n, 1);
  assert_int_equal(ncclsimParamSet("DEVICES", "100000"), ncclSuccess);
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_int_equal(n, 4096);
  assert_int_equal(cudaSetDevice(4095), cudaSuccess);
  assert_int_equal(cudaSetDevice(4096), cudaErrorInvalidDevice);

  assert_int_equal(ncclsimParamSet("DEVICES", NULL), ncclSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  (void)cudaGetLastError();
}

/* The last error: set by a failing call, not cleared by a successful one,
 * replaced by the next failure; Peek leaves it, Get returns and clears it. */
static void test_last_error(void **state) {
  (void)state;
  int n;
  (void)cudaGetLastError();
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  assert_int_equal(cudaSetDevice(-5), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetDevice(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
}

typedef struct {
  int device;          /* current device the thread starts with */
  cudaError_t before;  /* its last error on entry */
  cudaError_t after;   /* after its own failing call */
} thread_view;

static void *other_thread(void *arg) {
  thread_view *v = arg;
  cudaGetDevice(&v->device);
  v->before = cudaPeekAtLastError();
  cudaSetDevice(-1);
  v->after = cudaPeekAtLastError();
  cudaGetLastError();
  return NULL;
}

/* As in CUDA, the current device and the last error belong to the host
 * thread: a new thread starts on device 0 with no error, and its errors do
 * not show in this thread. */
static void test_per_thread_state(void **state) {
  (void)state;
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  assert_int_equal(cudaGetDevice(NULL), cudaErrorInvalidValue);
  thread_view v = {-1, cudaErrorUnknown, cudaSuccess};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, other_thread, &v), 0);
  pthread_join(t, NULL);
  assert_int_equal(v.device, 0);
  assert_int_equal(v.before, cudaSuccess);
  assert_int_equal(v.after, cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  int d;
  assert_int_equal(cudaGetDevice(&d), cudaSuccess);
  assert_int_equal(d, 1);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

static void test_device_properties(void **state) {
  (void)state;
  struct cudaDeviceProp p, q;
  int n;
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_int_equal(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetDeviceProperties(&p, -1), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetDeviceProperties(&p, n), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);

  assert_int_equal(ncclsimParamSet("DEVICE_MEM", "1048576"), ncclSuccess);
  memset(&p, 0xff, sizeof p);
  assert_int_equal(cudaGetDeviceProperties(&p, n - 1), cudaSuccess);
  char want[64];
  snprintf(want, sizeof want, "ncclsim device %d", n - 1);
  assert_string_equal(p.name, want);
  assert_int_equal(p.totalGlobalMem, 1048576);
  assert_int_equal(p.warpSize, 32);
  assert_int_equal(p.maxThreadsPerBlock, 1024);
  assert_int_equal(p.major, 9);
  assert_int_equal(p.minor, 0);
  assert_int_equal(p.unifiedAddressing, 1);
  assert_int_equal(p.integrated, 0); /* zeroed, not left as it was */
  assert_true(p.multiProcessorCount > 0);
  assert_true(p.sharedMemPerBlock > 0);
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", NULL), ncclSuccess);
  assert_int_equal(cudaGetDeviceProperties(&q, 0), cudaSuccess);
  assert_string_equal(q.name, "ncclsim device 0");
  assert_int_equal(q.totalGlobalMem, (size_t)strtod(ncclsimParamGet("DEVICE_MEM"), NULL));
  if (n > 1) assert_int_not_equal(p.pciBusID, q.pciBusID); /* devices are told apart by bus id */
}

static void test_peer_access(void **state) {
  (void)state;
  int n, can = -1;
  assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
  assert_true(n >= 2);
  assert_int_equal(cudaDeviceCanAccessPeer(NULL, 0, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, -1, 1), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, n, 1), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 0, -1), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 0, n), cudaErrorInvalidDevice);
  assert_int_equal(can, -1);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
  assert_int_equal(can, 1);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, n - 1, 0), cudaSuccess);
  assert_int_equal(can, 1);
  assert_int_equal(cudaDeviceCanAccessPeer(&can, 1, 1), cudaSuccess);
  assert_int_equal(can, 0); /* a device is not its own peer */

  assert_int_equal(cudaDeviceEnablePeerAccess(1, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceEnablePeerAccess(-1, 0), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceEnablePeerAccess(n, 0), cudaErrorInvalidDevice);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidDevice);
  assert_int_equal(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
}

static void test_versions(void **state) {
  (void)state;
  int drv = 0, rt = 0;
  assert_int_equal(cudaDriverGetVersion(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaRuntimeGetVersion(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaDriverGetVersion(&drv), cudaSuccess);
  assert_int_equal(cudaRuntimeGetVersion(&rt), cudaSuccess);
  assert_int_equal(rt, CUDART_VERSION);
  assert_true(drv >= rt); /* a driver runs runtimes up to its own version */
}

/* Names and descriptions are CUDA's own; an unknown code gets CUDA's
 * "unrecognized error code" from both functions. */
static void test_error_strings(void **state) {
  (void)state;
  static const struct {
    cudaError_t code;
    const char *name, *text;
  } t[] = {
      {cudaSuccess, "cudaSuccess", "no error"},
      {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
      {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
      {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
      {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
      {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
       "invalid copy direction for memcpy"},
      {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
      {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
      {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
      {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
      {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
      {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
      {cudaErrorTimeout, "cudaErrorTimeout", NULL}, /* text names NCCLSIM_TIMEOUT */
      {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    assert_string_equal(cudaGetErrorName(t[i].code), t[i].name);
    if (t[i].text) assert_string_equal(cudaGetErrorString(t[i].code), t[i].text);
  }
  assert_non_null(strstr(cudaGetErrorString(cudaErrorTimeout), "NCCLSIM_TIMEOUT"));
  assert_string_equal(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
  assert_string_equal(cudaGetErrorString((cudaError_t)12345), "unrecognized error code");
  assert_string_equal(cudaGetErrorName((cudaError_t)-1), "unrecognized error code");
}

/* -------------------------------------------------------------- memory */

/* Pinned host memory is registered as host memory: the pointer attributes
 * say so, it is counted, and the two free functions do not mix. */
static void test_host_memory(void **state) {
  (void)state;
  size_t n0, b0, n1, b1;
  ncclsimMemStats(&n0, &b0);
  void *h = NULL, *h2 = NULL, *d = NULL;
  assert_int_equal(cudaMallocHost(NULL, 16), cudaErrorInvalidValue);
  assert_int_equal(cudaHostAlloc(NULL, 16, cudaHostAllocDefault), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaMallocHost(&h, 100), cudaSuccess);
  assert_int_equal(cudaHostAlloc(&h2, 50, cudaHostAllocDefault), cudaSuccess);
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  assert_int_equal(cudaMalloc(&d, 10), cudaSuccess);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0 + 3);
  assert_int_equal(b1, b0 + 160);
  /* Either output may be left out. */
  n1 = b1 = 0;
  ncclsimMemStats(NULL, &b1);
  assert_int_equal(b1, b0 + 160);
  ncclsimMemStats(&n1, NULL);
  assert_int_equal(n1, n0 + 3);

  struct cudaPointerAttributes a;
  assert_int_equal(cudaPointerGetAttributes(NULL, h), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaPointerGetAttributes(&a, (char *)h + 99), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeHost);
  assert_ptr_equal(a.hostPointer, (char *)h + 99);
  assert_ptr_equal(a.devicePointer, (char *)h + 99);
  assert_int_equal(a.device, 2); /* host memory reports the current device */
  assert_int_equal(cudaPointerGetAttributes(&a, d), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeDevice);
  assert_int_equal(a.device, 2);
  assert_null(a.hostPointer);
  assert_ptr_equal(a.devicePointer, d);
  /* Memory ncclsim did not allocate, and NULL, are unregistered. */
  int local;
  assert_int_equal(cudaPointerGetAttributes(&a, &local), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeUnregistered);
  assert_int_equal(a.device, -2); /* as CUDA 13 reports it (measured on an H100) */
  assert_null(a.devicePointer);
  assert_ptr_equal(a.hostPointer, &local);
  assert_int_equal(cudaPointerGetAttributes(&a, NULL), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeUnregistered);
  assert_int_equal(cudaPointerGetAttributes(&a, (void *)(uintptr_t)16), cudaSuccess); /* below all */
  assert_int_equal(a.type, cudaMemoryTypeUnregistered);
  assert_true(sim_mem_lookup((char *)d + 9, NULL)); /* the details may be left out */
  assert_false(sim_mem_lookup((char *)d + 10, NULL));
  assert_int_equal(sim_mem_device(d), 2);
  assert_int_equal(sim_mem_device(&local), -1);

  /* The wrong free function, or a pointer inside a buffer, is refused. */
  assert_int_equal(cudaFree(h), cudaErrorInvalidValue);
  assert_int_equal(cudaFreeHost(d), cudaErrorInvalidValue);
  assert_int_equal(cudaFreeHost((char *)h + 1), cudaErrorInvalidValue);
  assert_int_equal(cudaFree((void *)(uintptr_t)16), cudaErrorInvalidValue); /* below every allocation */
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  ncclsimMemStats(&n1, NULL);
  assert_int_equal(n1, n0 + 3);
  assert_int_equal(cudaFreeHost(NULL), cudaSuccess);
  assert_int_equal(cudaFree(NULL), cudaSuccess);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  assert_int_equal(cudaFreeHost(h), cudaSuccess);
  assert_int_equal(cudaFreeHost(h2), cudaSuccess);
  assert_int_equal(cudaFreeHost(h), cudaErrorInvalidValue); /* double free */
  assert_int_equal(cudaFree(d), cudaSuccess);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0);
  assert_int_equal(b1, b0);
  assert_int_equal(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  (void)cudaGetLastError();
}

/* A zero-byte cudaMalloc succeeds and can be freed; ncclsim registers it
 * as an allocation that holds only its own address. */
static void test_zero_size_malloc(void **state) {
  (void)state;
  void *p = NULL;
  size_t n0 = live_allocs();
  assert_int_equal(cudaMalloc(&p, 0), cudaSuccess);
  struct cudaPointerAttributes a;
  assert_int_equal(cudaPointerGetAttributes(&a, p), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeDevice);
  assert_int_equal(cudaMemcpy(p, p, 0, cudaMemcpyDeviceToDevice), cudaSuccess);
  assert_int_equal(cudaMemset(p, 0, 1), cudaErrorInvalidValue); /* one byte is past its end */
  assert_int_equal(live_allocs(), n0 + 1);
  assert_int_equal(cudaFree(p), cudaSuccess);
  assert_int_equal(live_allocs(), n0);
  (void)cudaGetLastError();
}

/* NCCLSIM_DEVICE_MEM bounds each device: cudaMemGetInfo reports it and the
 * current device's use, and an allocation past it fails. */
static void test_device_memory_limit(void **state) {
  (void)state;
  size_t fr = 0, tot = 0;
  /* CUDA 13 takes NULL for either (measured) and fills the other. */
  assert_int_equal(cudaMemGetInfo(NULL, &tot), cudaSuccess);
  assert_true(tot > 0);
  assert_int_equal(cudaMemGetInfo(&fr, NULL), cudaSuccess);
  assert_true(fr > 0 && fr <= tot);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  assert_int_equal(cudaSetDevice(4), cudaSuccess);
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", "65536"), ncclSuccess);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(tot, 65536);
  size_t free0 = fr;
  void *a = NULL, *b = NULL, *c = NULL;
  assert_int_equal(cudaMalloc(&a, 65537), cudaErrorMemoryAllocation);
  assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
  assert_int_equal(cudaMalloc(&a, 40000), cudaSuccess);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, free0 - 40000);
  assert_int_equal(cudaMalloc(&b, free0 - 40000 + 1), cudaErrorMemoryAllocation); /* one byte too many */
  assert_null(b);
  assert_int_equal(cudaMalloc(&b, free0 - 40000), cudaSuccess); /* exactly what is left */
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, 0);
  /* Other devices and host memory are not charged to this device. */
  assert_int_equal(cudaMallocHost(&c, 100), cudaSuccess);
  assert_int_equal(cudaFreeHost(c), cudaSuccess);
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  assert_int_equal(cudaMalloc(&c, 100), cudaSuccess);
  assert_int_equal(cudaFree(c), cudaSuccess);
  assert_int_equal(cudaSetDevice(4), cudaSuccess);
  assert_int_equal(cudaFree(b), cudaSuccess);
  assert_int_equal(cudaFree(a), cudaSuccess);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, free0);
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", NULL), ncclSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  (void)cudaGetLastError();
}

/* NCCLSIM_DEVICES may change at run time: memory and default streams of a
 * device beyond every earlier count work, and stay accounted to their
 * device after the count shrinks again. */
static void test_device_count_changes(void **state) {
  (void)state;
  size_t fr, tot;
  /* A device nothing ever allocated on has all its memory free. */
  assert_int_equal(ncclsimParamSet("DEVICES", "200"), ncclSuccess);
  assert_int_equal(cudaSetDevice(190), cudaSuccess);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, tot);

  /* Growing the per-device accounting can fail like any allocation. */
  void *p = &fr;
  assert_int_equal(cudaSetDevice(150), cudaSuccess);
  ncclsimAllocFailAfter(1);
  assert_int_equal(cudaMalloc(&p, 64), cudaErrorMemoryAllocation);
  ncclsimAllocFailAfter(0);
  assert_ptr_equal(p, &fr);
  assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);

  /* The count shrinks while this thread is on device 120. */
  assert_int_equal(cudaSetDevice(120), cudaSuccess);
  assert_int_equal(ncclsimParamSet("DEVICES", NULL), ncclSuccess);
  char *d;
  assert_int_equal(cudaMalloc((void **)&d, 64), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 9, 64, 0), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(d[0], 9);
  assert_int_equal(d[63], 9);
  struct cudaPointerAttributes a;
  assert_int_equal(cudaPointerGetAttributes(&a, d), cudaSuccess);
  assert_int_equal(a.device, 120);
  assert_int_equal(cudaMemGetInfo(&fr, &tot), cudaSuccess);
  assert_int_equal(fr, tot - 64);
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

static void test_nccl_mem_alloc(void **state) {
  (void)state;
  void *p = &p;
  assert_int_equal(ncclMemAlloc(NULL, 64), ncclInvalidArgument);
  assert_int_equal(ncclMemAlloc(&p, 0), ncclInvalidArgument);
  assert_null(p);
  p = &p;
  assert_int_equal(ncclMemAlloc(&p, SIZE_MAX), ncclInvalidArgument); /* rounding up would overflow */
  assert_null(p);
  size_t n0, b0, n1, b1;
  ncclsimMemStats(&n0, &b0);
  assert_int_equal(ncclMemAlloc(&p, 100), ncclSuccess);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0 + 1);
  assert_int_equal(b1, b0 + NCCL_WIN_REQUIRED_ALIGNMENT); /* rounded up to the granularity */
  assert_int_equal((uintptr_t)p % NCCL_WIN_REQUIRED_ALIGNMENT, 0);
  /* Only ncclMemFree frees it; a cudaMalloc buffer is not ncclMemFree's. */
  assert_int_equal(cudaFree(p), cudaErrorInvalidValue);
  void *d;
  assert_int_equal(cudaMalloc(&d, 64), cudaSuccess);
  assert_int_equal(ncclMemFree(d), ncclInvalidArgument);
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(ncclMemFree(p), ncclSuccess);
  assert_int_equal(ncclMemFree(p), ncclInvalidArgument); /* freed already */
  assert_int_equal(ncclMemFree(NULL), ncclSuccess);
  /* Out of device memory: ncclsim's allocation failure code. */
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", "8192"), ncclSuccess);
  p = &p;
  assert_int_equal(ncclMemAlloc(&p, 8193), ncclSystemError);
  assert_null(p);
  assert_int_equal(ncclsimParamSet("DEVICE_MEM", NULL), ncclSuccess);
  ncclsimMemStats(&n1, &b1);
  assert_int_equal(n1, n0);
  assert_int_equal(b1, b0);
  (void)cudaGetLastError();
}

/* -------------------------------------------------------------- memcpy */

static void test_memcpy_args(void **state) {
  (void)state;
  char *d;
  char host[128];
  memset(host, 3, sizeof host);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&d, 100), cudaSuccess);
  assert_int_equal(cudaMemset(d, 0, 100), cudaSuccess);

  /* A direction outside the enum, on either side. */
  assert_int_equal(cudaMemcpy(d, host, 10, (enum cudaMemcpyKind)5), cudaErrorInvalidMemcpyDirection);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
  assert_int_equal(cudaMemcpy(d, host, 10, (enum cudaMemcpyKind)-1), cudaErrorInvalidMemcpyDirection);
  assert_int_equal(cudaMemcpyAsync(d, host, 10, (enum cudaMemcpyKind)5, s), cudaErrorInvalidMemcpyDirection);
  /* NULL source or destination with bytes to move. */
  assert_int_equal(cudaMemcpy(d, NULL, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  assert_int_equal(cudaMemcpyAsync(d, NULL, 10, cudaMemcpyHostToDevice, s), cudaErrorInvalidValue);
  assert_int_equal(cudaMemcpy(NULL, host, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  assert_int_equal(cudaMemsetAsync(NULL, 0, 10, s), cudaErrorInvalidValue);
  /* A source running past its allocation. */
  assert_int_equal(cudaMemcpy(host, d + 50, 51, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  assert_int_equal(cudaMemcpyAsync(host, d + 50, 51, cudaMemcpyDeviceToHost, s), cudaErrorInvalidValue);
  assert_int_equal(cudaMemsetAsync(d + 1, 0, 100, s), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  /* A stream that is gone. */
  cudaStream_t dead;
  assert_int_equal(cudaStreamCreate(&dead), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(dead), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, host, 10, cudaMemcpyDefault, dead), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaMemsetAsync(d, 1, 10, dead), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  /* Nothing above wrote. */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  for (int i = 0; i < 100; i++) assert_int_equal(d[i], 0);
  assert_int_equal(host[0], 3);

  /* Zero bytes: nothing to check or move, NULL pointers included. */
  assert_int_equal(cudaMemcpy(NULL, NULL, 0, cudaMemcpyDefault), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(NULL, NULL, 0, cudaMemcpyDefault, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(NULL, 0, 0, s), cudaSuccess);
  assert_int_equal(cudaStreamQuery(s), cudaSuccess); /* no op was queued */

  /* Async forms run in stream order; the copy goes within a buffer. */
  assert_int_equal(cudaMemsetAsync(d, 4, 50, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d + 50, d, 50, cudaMemcpyDeviceToDevice, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(host, d, 100, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  for (int i = 0; i < 100; i++) assert_int_equal(host[i], 4);
  assert_int_equal(host[100], 3);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* ------------------------------------------------------------- streams */

static void test_stream_args(void **state) {
  (void)state;
  cudaStream_t s = NULL;
  atomic_int calls = 0;
  assert_int_equal(cudaStreamCreate(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamCreateWithFlags(&s, 0x4), cudaErrorInvalidValue);
  assert_null(s);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  /* The default stream is not the caller's to destroy. */
  cudaError_t err;
  sim_stream *def = sim_stream_resolve(0, &err);
  assert_non_null(def);
  assert_int_equal(cudaStreamDestroy((cudaStream_t)def), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);

  /* A stream belongs to the device current when it was made. */
  assert_int_equal(cudaSetDevice(6), cudaSuccess);
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(sim_stream_device(sim_stream_resolve(s, &err)), 6);
  assert_int_equal(sim_stream_device(def), 0);
  assert_int_equal(cudaLaunchHostFunc(s, NULL, NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  /* Every use of a destroyed stream is an invalid handle. */
  assert_int_equal(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaLaunchHostFunc(s, count_call, &calls), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  assert_int_equal(calls, 0);
}

/* A failed op leaves an error on its stream: ops behind it run but do
 * nothing (host functions are not called, copies do not write), a second
 * failure does not replace the first, and the next synchronize reports the
 * first error once, after which the stream works again. */
static void test_stream_error_poisons_then_clears(void **state) {
  (void)state;
  cudaStream_t s;
  atomic_int calls = 0;
  char *d;
  char host[32];
  memset(host, 6, sizeof host);
  assert_int_equal(cudaMalloc((void **)&d, 32), cudaSuccess);
  assert_int_equal(cudaMemset(d, 0, 32), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  cudaError_t seen1 = cudaErrorUnknown, seen2 = cudaErrorUnknown;
  enqueue_failure(s, cudaErrorIllegalAddress, &seen1);
  assert_int_equal(cudaLaunchHostFunc(s, count_call, &calls), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, host, 32, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d, 1, 32, s), cudaSuccess);
  enqueue_failure(s, cudaErrorLaunchFailure, &seen2);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess); /* enqueueing succeeded */
  assert_int_equal(cudaStreamSynchronize(s), cudaErrorIllegalAddress);
  assert_int_equal(cudaGetLastError(), cudaErrorIllegalAddress);
  assert_int_equal(seen1, cudaSuccess);
  assert_int_equal(seen2, cudaErrorIllegalAddress);
  assert_int_equal(calls, 0);
  for (int i = 0; i < 32; i++) assert_int_equal(d[i], 0);
  /* Reported once; the stream is usable again. */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s, count_call, &calls), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(d, host, 32, cudaMemcpyHostToDevice, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(calls, 1);
  assert_int_equal(d[31], 6);

  /* cudaStreamQuery reports the error only when the stream is idle, and
   * then once; NotReady is a status, not a recorded error. */
  gate g;
  gate_init(&g);
  (void)cudaGetLastError();
  assert_int_equal(cudaLaunchHostFunc(s, gate_wait, &g), cudaSuccess);
  enqueue_failure(s, cudaErrorLaunchFailure, NULL);
  assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  gate_open(&g);
  cudaError_t q;
  while ((q = cudaStreamQuery(s)) == cudaErrorNotReady) sched_yield();
  assert_int_equal(q, cudaErrorLaunchFailure);
  assert_int_equal(cudaGetLastError(), cudaErrorLaunchFailure);
  assert_int_equal(cudaStreamQuery(s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  gate_destroy(&g);

  /* A synchronous copy runs on the default stream and reports its error. */
  enqueue_failure(0, cudaErrorIllegalAddress, NULL);
  assert_int_equal(cudaMemcpy(d, host, 32, cudaMemcpyDefault), cudaErrorIllegalAddress);
  assert_int_equal(cudaMemcpy(d, host, 32, cudaMemcpyDefault), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaFree(d), cudaSuccess);
  (void)cudaGetLastError();
}

/* cudaDeviceSynchronize waits for every stream of the current device (more
 * than it drains in one batch), reports an error from any of them once, and
 * does not wait for another device's streams. */
static void test_device_synchronize(void **state) {
  (void)state;
  enum { NS = 300 };
  cudaStream_t *s = calloc(NS, sizeof *s);
  assert_non_null(s);
  atomic_int calls = 0;
  assert_int_equal(cudaSetDevice(3), cudaSuccess);
  for (int i = 0; i < NS; i++) assert_int_equal(cudaStreamCreate(&s[i]), cudaSuccess);
  /* Work on the first and the last streams made, the default stream, and
   * errors on two streams. */
  gate g;
  gate_init(&g);
  assert_int_equal(cudaLaunchHostFunc(s[0], count_call, &calls), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s[NS - 1], count_call, &calls), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(0, count_call, &calls), cudaSuccess);
  enqueue_failure(s[1], cudaErrorLaunchFailure, NULL);
  enqueue_failure(s[NS - 2], cudaErrorLaunchFailure, NULL);
  /* A stream of device 2, held shut. */
  assert_int_equal(cudaSetDevice(2), cudaSuccess);
  cudaStream_t other;
  assert_int_equal(cudaStreamCreate(&other), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(other, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaSetDevice(3), cudaSuccess);

  assert_int_equal(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  assert_int_equal(cudaGetLastError(), cudaErrorLaunchFailure);
  assert_int_equal(calls, 3);
  for (int i = 0; i < NS; i++) assert_int_equal(cudaStreamQuery(s[i]), cudaSuccess); /* errors cleared */
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  assert_int_equal(cudaStreamQuery(other), cudaErrorNotReady);

  /* An error on the default stream alone; a destroyed stream is skipped. */
  assert_int_equal(cudaStreamDestroy(s[0]), cudaSuccess);
  enqueue_failure(0, cudaErrorIllegalAddress, NULL);
  assert_int_equal(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);

  /* On a device whose default stream was never made, failing to make it
   * still drains (and reports) the device's other streams. */
  assert_int_equal(ncclsimParamSet("DEVICES", "400"), ncclSuccess);
  assert_int_equal(cudaSetDevice(390), cudaSuccess);
  cudaStream_t far;
  assert_int_equal(cudaStreamCreate(&far), cudaSuccess);
  enqueue_failure(far, cudaErrorLaunchFailure, NULL);
  ncclsimAllocFailAfter(1);
  cudaError_t e = cudaDeviceSynchronize();
  ncclsimAllocFailAfter(0);
  assert_int_equal(e, cudaErrorLaunchFailure);
  assert_int_equal(cudaStreamQuery(far), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(far), cudaSuccess);
  assert_int_equal(ncclsimParamSet("DEVICES", NULL), ncclSuccess);
  assert_int_equal(cudaSetDevice(3), cudaSuccess);

  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(other), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(other), cudaSuccess);
  for (int i = 1; i < NS; i++) assert_int_equal(cudaStreamDestroy(s[i]), cudaSuccess);
  gate_destroy(&g);
  free(s);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  (void)cudaGetLastError();
}

/* -------------------------------------------------------------- events */

static void test_event_args(void **state) {
  (void)state;
  cudaEvent_t e = NULL, t;
  cudaStream_t s;
  float ms = -1;
  assert_int_equal(cudaEventCreate(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaEventCreateWithFlags(&e, 0x8), cudaErrorInvalidValue);
  assert_null(e);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  /* NULL is not an event. */
  assert_int_equal(cudaEventQuery(NULL), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventSynchronize(NULL), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventRecord(NULL, 0), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventDestroy(NULL), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamWaitEvent(0, NULL, 0), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);

  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  assert_int_equal(cudaEventCreateWithFlags(&t, cudaEventDisableTiming), cudaSuccess);
  /* Never recorded: complete, and without a time. */
  assert_int_equal(cudaEventQuery(e), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(0, e, 0), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(NULL, e, e), cudaErrorInvalidValue);
  assert_int_equal(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventElapsedTime(&ms, NULL, e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventElapsedTime(&ms, e, NULL), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  /* Recorded: a time between e and itself, none with a timing-less event,
   * and none before the second one is recorded. */
  assert_int_equal(cudaEventRecord(e, 0), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms, e, e), cudaSuccess);
  assert_true(ms == 0.0f);
  /* Reached already: nothing to wait for, nothing queued (and the stream
   * counted the record done when the event completed). */
  assert_int_equal(cudaStreamWaitEvent(0, e, 0), cudaSuccess);
  assert_int_equal(cudaStreamQuery(0), cudaSuccess);
  cudaEvent_t u;
  assert_int_equal(cudaEventCreate(&u), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms, e, u), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventElapsedTime(&ms, u, e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventRecord(t, 0), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(t), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms, e, t), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventElapsedTime(&ms, t, e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventDestroy(u), cudaSuccess);

  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaStreamWaitEvent(s, e, cudaEventWaitExternal), cudaErrorIllegalState); /* no capture */
  assert_int_equal(cudaStreamWaitEvent(s, e, 2), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, s), cudaErrorInvalidResourceHandle); /* destroyed stream */
  assert_int_equal(cudaStreamWaitEvent(s, e, 0), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);

  /* A destroyed event is an invalid handle everywhere. */
  assert_int_equal(cudaEventDestroy(t), cudaSuccess);
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  assert_int_equal(cudaEventDestroy(e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventQuery(e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventSynchronize(e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventRecord(e, 0), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaEventElapsedTime(&ms, e, e), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamWaitEvent(0, e, 0), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);

  /* A new event starts afresh, even where it reuses an old one's memory. */
  cudaEvent_t n;
  assert_int_equal(cudaEventCreate(&n), cudaSuccess);
  assert_int_equal(cudaEventQuery(n), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms, n, n), cudaErrorInvalidResourceHandle); /* not recorded */
  assert_int_equal(cudaEventDestroy(n), cudaSuccess);
  (void)cudaGetLastError();
}

/* An event recorded behind pending work: not ready (a status, not an
 * error), no elapsed time yet, and a stream waiting on it is held. */
static void test_event_pending(void **state) {
  (void)state;
  cudaStream_t s1, s2;
  cudaEvent_t a, b;
  gate g;
  gate_init(&g);
  atomic_int calls = 0;
  float ms = -1;
  assert_int_equal(cudaStreamCreate(&s1), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&s2), cudaSuccess);
  assert_int_equal(cudaEventCreate(&a), cudaSuccess);
  assert_int_equal(cudaEventCreate(&b), cudaSuccess);
  assert_int_equal(cudaEventRecord(a, s1), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(a), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s1, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaEventRecord(b, s1), cudaSuccess);
  (void)cudaGetLastError();
  assert_int_equal(cudaEventQuery(b), cudaErrorNotReady);
  assert_int_equal(cudaPeekAtLastError(), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
  assert_int_equal(cudaEventElapsedTime(&ms, b, a), cudaErrorNotReady);
  assert_true(ms == -1);
  assert_int_equal(cudaStreamWaitEvent(s2, b, 0), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(s2, count_call, &calls), cudaSuccess);
  assert_int_equal(cudaStreamQuery(s2), cudaErrorNotReady);
  assert_int_equal(calls, 0);
  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(s2), cudaSuccess);
  assert_int_equal(calls, 1);
  assert_int_equal(cudaEventQuery(b), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
  assert_true(ms >= 0.0f);
  assert_int_equal(cudaEventElapsedTime(&ms, b, a), cudaSuccess);
  assert_true(ms <= 0.0f);
  assert_int_equal(cudaEventDestroy(a), cudaSuccess);
  assert_int_equal(cudaEventDestroy(b), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s1), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s2), cudaSuccess);
  gate_destroy(&g);
}

/* Recording again replaces the earlier record, as in CUDA: an event whose
 * latest record completed is complete even while an earlier record on a
 * held stream is pending, and that earlier record completing later changes
 * neither its state nor its time. */
static void test_event_rerecord(void **state) {
  (void)state;
  cudaStream_t held, free_s;
  cudaEvent_t e, start;
  gate g;
  gate_init(&g);
  float ms1 = -1, ms2 = -1;
  assert_int_equal(cudaStreamCreate(&held), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&free_s), cudaSuccess);
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  assert_int_equal(cudaEventCreate(&start), cudaSuccess);
  assert_int_equal(cudaEventRecord(start, free_s), cudaSuccess);
  assert_int_equal(cudaLaunchHostFunc(held, gate_wait, &g), cudaSuccess);
  assert_int_equal(cudaEventRecord(e, held), cudaSuccess);
  assert_int_equal(cudaEventQuery(e), cudaErrorNotReady);
  assert_int_equal(cudaEventRecord(e, free_s), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
  assert_int_equal(cudaEventQuery(e), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms1, start, e), cudaSuccess);
  assert_int_equal(cudaStreamQuery(held), cudaErrorNotReady);
  usleep(2000); /* so that a later time could not read the same */
  gate_open(&g);
  assert_int_equal(cudaStreamSynchronize(held), cudaSuccess);
  assert_int_equal(cudaEventQuery(e), cudaSuccess);
  assert_int_equal(cudaEventElapsedTime(&ms2, start, e), cudaSuccess);
  assert_true(ms1 == ms2);
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  assert_int_equal(cudaEventDestroy(start), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(held), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(free_s), cudaSuccess);
  gate_destroy(&g);
}

/* An event recorded last on a stream and the stream itself agree, in
 * every order a host thread can look: once cudaEventSynchronize (or a
 * successful cudaEventQuery) says the event is complete, cudaStreamQuery
 * says the stream is idle; once cudaStreamQuery or cudaStreamSynchronize
 * says the stream is idle, the event is complete. The stream's worker is
 * still finishing the record when the host first sees either, so the loop
 * runs many times to meet that moment. */
static void test_event_and_stream_agree(void **state) {
  (void)state;
  enum { ROUNDS = 100000 };
  cudaStream_t s;
  cudaEvent_t e;
  char *buf;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  assert_int_equal(cudaMalloc((void **)&buf, 64), cudaSuccess);
  /* A waiter that spins rather than sleeps sees the record complete at
   * once, while the worker may still be finishing it. */
  assert_int_equal(ncclsimParamSet("SPIN", "1000000"), ncclSuccess);
  for (int i = 0; i < ROUNDS; i++) {
    assert_int_equal(cudaMemsetAsync(buf, i, 64, s), cudaSuccess);
    assert_int_equal(cudaEventRecord(e, s), cudaSuccess);
    cudaError_t q;
    switch (i % 4) {
      case 0:
        assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
        if ((q = cudaStreamQuery(s)) != cudaSuccess)
          fail_msg("round %d: cudaStreamQuery after cudaEventSynchronize says %s", i, cudaGetErrorName(q));
        break;
      case 1:
        while (cudaEventQuery(e) == cudaErrorNotReady) sched_yield();
        if ((q = cudaStreamQuery(s)) != cudaSuccess)
          fail_msg("round %d: cudaStreamQuery after cudaEventQuery's success says %s", i, cudaGetErrorName(q));
        break;
      case 2:
        while (cudaStreamQuery(s) == cudaErrorNotReady) sched_yield();
        if ((q = cudaEventQuery(e)) != cudaSuccess)
          fail_msg("round %d: cudaEventQuery after cudaStreamQuery's success says %s", i, cudaGetErrorName(q));
        break;
      default:
        assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
        if ((q = cudaEventQuery(e)) != cudaSuccess)
          fail_msg("round %d: cudaEventQuery after cudaStreamSynchronize says %s", i, cudaGetErrorName(q));
        break;
    }
  }
  assert_int_equal(ncclsimParamSet("SPIN", NULL), ncclSuccess);
  assert_int_equal(cudaFree(buf), cudaSuccess);
  assert_int_equal(cudaEventDestroy(e), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

/* Whatever a failed test left behind: parameters, fault injection, the
 * current device, the last error. */
static int reset(void **state) {
  (void)state;
  ncclsimAllocFailAfter(0);
  ncclsimParamSet("STACK_KB", NULL);
  ncclsimParamSet("SPIN", NULL);
  ncclsimParamSet("DEVICES", NULL);
  ncclsimParamSet("DEVICE_MEM", NULL);
  cudaSetDevice(0);
  cudaGetLastError();
  return 0;
}

#define T(f) cmocka_unit_test_teardown(f, reset)

int main(void) {
  /* The tests use devices 0..7; the run's environment must not shrink that. */
  setenv("NCCLSIM_DEVICES", "8", 1);
  const struct CMUnitTest tests[] = {
      T(test_default_stream_alloc_faults),
      T(test_alloc_faults),
      T(test_worker_start_failure),
      T(test_device_count_and_current),
      T(test_last_error),
      T(test_per_thread_state),
      T(test_device_properties),
      T(test_peer_access),
      T(test_versions),
      T(test_error_strings),
      T(test_host_memory),
      T(test_zero_size_malloc),
      T(test_device_memory_limit),
      T(test_device_count_changes),
      T(test_nccl_mem_alloc),
      T(test_memcpy_args),
      T(test_stream_args),
      T(test_stream_error_poisons_then_clears),
      T(test_device_synchronize),
      T(test_event_args),
      T(test_event_pending),
      T(test_event_rerecord),
      T(test_event_and_stream_agree),
  };
  return cmocka_run_group_tests_name("sim_cuda", tests, NULL, NULL);
}
