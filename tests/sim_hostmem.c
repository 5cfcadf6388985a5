/* tests/sim_hostmem.c — host memory that CUDA knows
 * (sim/cuda/host_register.c): cudaHostRegister and cudaHostUnregister,
 * cudaHostGetDevicePointer and cudaHostGetFlags, registered memory in
 * every check that pinned memory passes (copies, memsets, NCCL buffers,
 * cudaPointerGetAttributes); and cudaDeviceReset (sim/cuda/reset.c). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <ncclsim.h>

#include "sim.h" /* sim_last_warning */

static void warned(const char *what) {
  if (!strstr(sim_last_warning(), what)) fail_msg("\"%s\" not in the last warning: %s", what, sim_last_warning());
}

static size_t live_allocs(void) {
  size_t n;
  ncclsimMemStats(&n, NULL);
  return n;
}

/* Pageable memory is refused where CUDA wants memory it knows, and taken
 * once registered, until unregistered. */
static void test_register_makes_pinned(void **state) {
  (void)state;
  size_t n0 = live_allocs();
  char *h = malloc(4096);
  assert_non_null(h);
  char *d;
  assert_int_equal(cudaMalloc((void **)&d, 4096), cudaSuccess);
  assert_int_equal(cudaMemset(h, 0, 16), cudaErrorInvalidValue);
  assert_int_equal(cudaMemcpy(h, d, 16, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  struct cudaPointerAttributes a;
  assert_int_equal(cudaPointerGetAttributes(&a, h + 10), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeUnregistered);

  assert_int_equal(cudaHostRegister(h, 4000, cudaHostRegisterDefault), cudaSuccess);
  assert_int_equal(live_allocs(), n0 + 1); /* the cudaMalloc only: a registration is no allocation */
  assert_int_equal(cudaPointerGetAttributes(&a, h + 10), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeHost);
  assert_ptr_equal(a.hostPointer, h + 10);
  assert_ptr_equal(a.devicePointer, h + 10);
  assert_int_equal(cudaMemset(h, 1, 4000), cudaSuccess);
  assert_int_equal(h[3999], 1);
  assert_int_equal(cudaMemset(h, 1, 4001), cudaErrorInvalidValue); /* past the registered range */
  assert_int_equal(cudaMemcpy(d, h, 4000, cudaMemcpyDeviceToDevice), cudaSuccess);
  assert_int_equal(cudaMemcpy(h + 100, d, 16, cudaMemcpyDeviceToDevice), cudaSuccess);
  /* An NCCL buffer's bounds are the registration's. */
  ncclComm_t comm;
  int dev = 0;
  assert_int_equal(ncclCommInitAll(&comm, 1, &dev), ncclSuccess);
  assert_int_equal(ncclAllReduce(h, h, 1000, ncclFloat32, ncclSum, comm, 0), ncclSuccess);
  assert_int_equal(ncclAllReduce(h, h, 1001, ncclFloat32, ncclSum, comm, 0), ncclInvalidArgument);
  warned("run past the end");
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  assert_int_equal(ncclCommDestroy(comm), ncclSuccess);

  assert_int_equal(cudaHostUnregister(h), cudaSuccess);
  assert_int_equal(cudaMemset(h, 0, 16), cudaErrorInvalidValue);
  assert_int_equal(cudaPointerGetAttributes(&a, h), cudaSuccess);
  assert_int_equal(a.type, cudaMemoryTypeUnregistered);
  assert_int_equal(cudaFree(d), cudaSuccess);
  assert_int_equal(live_allocs(), n0);
  free(h);
  (void)cudaGetLastError();
}

/* Argument errors, overlaps and unregistering what is not registered. */
static void test_register_errors(void **state) {
  (void)state;
  static char buf[8192];
  assert_int_equal(cudaHostRegister(NULL, 16, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaHostRegister(buf, 0, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaHostRegister((void *)(uintptr_t)-16, 64, 0), cudaErrorInvalidValue); /* wraps */
  assert_int_equal(cudaHostRegister(buf, 16, 0x10), cudaErrorInvalidValue);
  warned("not cudaHostRegister flags");
  /* ordinary memory as I/O memory: refused (CUDA 13 on an H100, measured) */
  assert_int_equal(cudaHostRegister(buf, 16, cudaHostRegisterIoMemory), cudaErrorInvalidValue);
  warned("not memory-mapped I/O");
  /* read-only registration: an H100 supports it (measured) */
  int ro = -1;
  assert_int_equal(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0), cudaSuccess);
  assert_int_equal(ro, 1);
  assert_int_equal(cudaHostRegister(buf, 16, cudaHostRegisterReadOnly), cudaSuccess);
  assert_int_equal(cudaHostUnregister(buf), cudaSuccess);
  /* Memory that is not mapped. */
  long page = sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(m != MAP_FAILED);
  assert_int_equal(munmap(m + page, (size_t)page), 0);
  assert_int_equal(cudaHostRegister(m, (size_t)page * 3, 0), cudaErrorInvalidValue);
  warned("not all mapped");
  assert_int_equal(cudaHostRegister(m + 2 * page, (size_t)page, 0), cudaSuccess); /* the mapped page */

  assert_int_equal(cudaHostRegister(buf + 1000, 1000, cudaHostRegisterPortable | cudaHostRegisterMapped), cudaSuccess);
  assert_int_equal(cudaHostRegister(buf + 3000, 1000, 0), cudaSuccess);
  /* Overlaps: inside, across either end, around, the same range. */
  assert_int_equal(cudaHostRegister(buf + 1500, 10, 0), cudaErrorHostMemoryAlreadyRegistered);
  warned("overlaps the registered");
  assert_int_equal(cudaHostRegister(buf + 500, 600, 0), cudaErrorHostMemoryAlreadyRegistered);
  assert_int_equal(cudaHostRegister(buf + 1999, 600, 0), cudaErrorHostMemoryAlreadyRegistered);
  assert_int_equal(cudaHostRegister(buf, sizeof buf, 0), cudaErrorHostMemoryAlreadyRegistered);
  assert_int_equal(cudaHostRegister(buf + 1000, 1000, 0), cudaErrorHostMemoryAlreadyRegistered);
  assert_int_equal(cudaHostRegister(buf + 2000, 1000, 0), cudaSuccess); /* exactly between: fine */
  /* Pinned and device memory are CUDA's already. */
  void *pinned, *dev;
  assert_int_equal(cudaMallocHost(&pinned, 256), cudaSuccess);
  assert_int_equal(cudaMalloc(&dev, 256), cudaSuccess);
  assert_int_equal(cudaHostRegister(pinned, 256, 0), cudaErrorHostMemoryAlreadyRegistered);
  warned("pinned host memory");
  assert_int_equal(cudaHostRegister((char *)dev + 8, 8, 0), cudaErrorInvalidValue);
  warned("device memory");

  assert_int_equal(cudaHostUnregister(NULL), cudaErrorInvalidValue);
  assert_int_equal(cudaHostUnregister(buf + 1001), cudaErrorHostMemoryNotRegistered); /* not its start */
  warned("not the start of a range");
  assert_int_equal(cudaHostUnregister(pinned), cudaErrorHostMemoryNotRegistered);
  assert_int_equal(cudaHostUnregister(buf), cudaErrorHostMemoryNotRegistered);
  assert_int_equal(cudaHostUnregister(buf + 2000), cudaSuccess);
  assert_int_equal(cudaHostUnregister(buf + 1000), cudaSuccess);
  assert_int_equal(cudaHostUnregister(buf + 1000), cudaErrorHostMemoryNotRegistered); /* twice */
  assert_int_equal(cudaHostUnregister(buf + 3000), cudaSuccess);
  assert_int_equal(cudaHostUnregister(m + 2 * page), cudaSuccess);
  assert_int_equal(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);
  /* Many registrations: the table grows and stays sorted. */
  for (int i = 0; i < 40; i++) assert_int_equal(cudaHostRegister(buf + 200 * (39 - i), 100, 0), cudaSuccess);
  for (int i = 0; i < 40; i++) {
    struct cudaPointerAttributes a;
    assert_int_equal(cudaPointerGetAttributes(&a, buf + 200 * i + 99), cudaSuccess);
    assert_int_equal(a.type, cudaMemoryTypeHost);
    assert_int_equal(cudaPointerGetAttributes(&a, buf + 200 * i + 100), cudaSuccess);
    assert_int_equal(a.type, cudaMemoryTypeUnregistered);
  }
  for (int i = 0; i < 40; i++) assert_int_equal(cudaHostUnregister(buf + 200 * i), cudaSuccess);
  assert_int_equal(cudaFreeHost(pinned), cudaSuccess);
  assert_int_equal(cudaFree(dev), cudaSuccess);
  munmap(m, (size_t)page);
  munmap(m + 2 * page, (size_t)page);
  (void)cudaGetLastError();
}

/* A registration that cannot grow the table fails and leaves none. */
static void test_register_alloc_fault(void **state) {
  (void)state;
  enum { N = 300 }; /* past the table's capacity, whatever earlier tests grew it to: growths fail */
  static char buf[N * 32];
  int i = 0, failed = 0;
  for (; i < N; i++) {
    ncclsimAllocFailAfter(1);
    cudaError_t e = cudaHostRegister(buf + 32 * i, 16, 0);
    ncclsimAllocFailAfter(0);
    if (e != cudaSuccess) {
      assert_int_equal(e, cudaErrorMemoryAllocation);
      struct cudaPointerAttributes a;
      assert_int_equal(cudaPointerGetAttributes(&a, buf + 32 * i), cudaSuccess);
      assert_int_equal(a.type, cudaMemoryTypeUnregistered);
      assert_int_equal(cudaHostRegister(buf + 32 * i, 16, 0), cudaSuccess);
      failed++;
    }
  }
  assert_true(failed >= 1);
  for (i = 0; i < N; i++) assert_int_equal(cudaHostUnregister(buf + 32 * i), cudaSuccess);
  (void)cudaGetLastError();
}

/* Pinned memory is mapped at its host address; flags must be 0. */
static void test_device_pointer(void **state) {
  (void)state;
  void *mapped, *plain, *dev, *dp = NULL;
  static char reg[512];
  assert_int_equal(cudaHostAlloc(&mapped, 100, cudaHostAllocMapped), cudaSuccess);
  assert_int_equal(cudaMallocHost(&plain, 100), cudaSuccess);
  assert_int_equal(cudaMalloc(&dev, 100), cudaSuccess);
  assert_int_equal(cudaHostRegister(reg, sizeof reg, cudaHostRegisterMapped), cudaSuccess);
  assert_int_equal(cudaHostGetDevicePointer(&dp, mapped, 0), cudaSuccess);
  assert_ptr_equal(dp, mapped);
  assert_int_equal(cudaHostGetDevicePointer(&dp, (char *)mapped + 50, 0), cudaSuccess);
  assert_ptr_equal(dp, (char *)mapped + 50);
  assert_int_equal(cudaHostGetDevicePointer(&dp, plain, 0), cudaSuccess);
  assert_ptr_equal(dp, plain);
  assert_int_equal(cudaHostGetDevicePointer(&dp, reg + 7, 0), cudaSuccess);
  assert_ptr_equal(dp, reg + 7);
  dp = NULL;
  assert_int_equal(cudaHostGetDevicePointer(&dp, mapped, 1), cudaErrorInvalidValue);
  assert_int_equal(cudaHostGetDevicePointer(NULL, mapped, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaHostGetDevicePointer(&dp, NULL, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaHostGetDevicePointer(&dp, dev, 0), cudaErrorInvalidValue);
  warned("not pinned host memory");
  int local;
  assert_int_equal(cudaHostGetDevicePointer(&dp, &local, 0), cudaErrorInvalidValue);
  assert_null(dp);
  assert_int_equal(cudaHostUnregister(reg), cudaSuccess);
  assert_int_equal(cudaHostGetDevicePointer(&dp, reg, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaFreeHost(mapped), cudaSuccess);
  assert_int_equal(cudaFreeHost(plain), cudaSuccess);
  assert_int_equal(cudaFree(dev), cudaSuccess);
  (void)cudaGetLastError();
}

/* cudaHostGetFlags: what cudaHostAlloc was given, anywhere in it, with
 * cudaHostAllocMapped, which CUDA 13 adds to every pinned or registered
 * page (measured on an H100: cudaMallocHost and cudaHostRegister(0) give 2). */
static void test_host_flags(void **state) {
  (void)state;
  void *a, *b, *c, *dev;
  static char reg[64];
  unsigned f = 99;
  assert_int_equal(cudaHostAlloc(&a, 64, cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);
  assert_int_equal(cudaHostAlloc(&b, 64, cudaHostAllocWriteCombined), cudaSuccess);
  assert_int_equal(cudaMallocHost(&c, 64), cudaSuccess);
  assert_int_equal(cudaMalloc(&dev, 64), cudaSuccess);
  assert_int_equal(cudaHostGetFlags(&f, a), cudaSuccess);
  assert_int_equal(f, cudaHostAllocMapped | cudaHostAllocPortable);
  assert_int_equal(cudaHostGetFlags(&f, (char *)b + 63), cudaSuccess);
  assert_int_equal(f, cudaHostAllocWriteCombined | cudaHostAllocMapped);
  assert_int_equal(cudaHostGetFlags(&f, c), cudaSuccess);
  assert_int_equal(f, cudaHostAllocMapped);
  assert_int_equal(cudaHostAlloc(&c, 64, 0x8), cudaErrorInvalidValue);
  assert_int_equal(cudaHostGetFlags(NULL, a), cudaErrorInvalidValue);
  assert_int_equal(cudaHostGetFlags(&f, NULL), cudaErrorInvalidValue);
  f = 99;
  assert_int_equal(cudaHostGetFlags(&f, dev), cudaErrorInvalidValue);
  warned("not in pinned or registered host memory");
  assert_int_equal(f, 99);
  assert_int_equal(cudaHostRegister(reg, sizeof reg, cudaHostRegisterPortable), cudaSuccess);
  assert_int_equal(cudaHostGetFlags(&f, reg + 8), cudaSuccess);
  assert_int_equal(f, cudaHostAllocPortable | cudaHostAllocMapped);
  assert_int_equal(cudaHostUnregister(reg), cudaSuccess);
  assert_int_equal(cudaFreeHost(a), cudaSuccess);
  assert_int_equal(cudaFreeHost(b), cudaSuccess);
  assert_int_equal(cudaFreeHost(c), cudaSuccess);
  assert_int_equal(cudaFree(dev), cudaSuccess);
  (void)cudaGetLastError();
}

/* A registration is the process's own: a forked child with ranks as
 * processes starts with none (checked in tests/sim_ipc). The new error
 * codes have CUDA's names and texts. */
static void test_error_strings(void **state) {
  (void)state;
  static const struct {
    cudaError_t code;
    const char *name, *text;
  } t[] = {
      {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
      {cudaErrorMapBufferObjectFailed, "cudaErrorMapBufferObjectFailed", "mapping of buffer object failed"},
      {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered",
       "part or all of the requested memory range is already mapped"},
      {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered",
       "pointer does not correspond to a registered memory region"},
      {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    assert_string_equal(cudaGetErrorName(t[i].code), t[i].name);
    assert_string_equal(cudaGetErrorString(t[i].code), t[i].text);
  }
}

/* cudaDeviceReset: the process's cudaMalloc memory on the current device
 * is freed, its streams there destroyed, its default pool current again
 * and its peer access forgotten; other devices, cudaMallocAsync memory and
 * pinned memory are kept. */
static void test_device_reset(void **state) {
  (void)state;
  assert_int_equal(cudaSetDevice(4), cudaSuccess);
  size_t n0 = live_allocs();
  enum { N = 70 }; /* more than one of the reset's batches */
  void *d[N], *other, *pinned, *async, *nccl;
  for (int i = 0; i < N; i++) assert_int_equal(cudaMalloc(&d[i], 64), cudaSuccess);
  assert_int_equal(cudaMallocHost(&pinned, 64), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&async, 64, 0), cudaSuccess);
  assert_int_equal(ncclMemAlloc(&nccl, 64), ncclSuccess);
  cudaStream_t s, s5;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  assert_int_equal(cudaMemsetAsync(d[0], 0, 64, s), cudaSuccess);
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  assert_int_equal(cudaMalloc(&other, 64), cudaSuccess);
  assert_int_equal(cudaStreamCreate(&s5), cudaSuccess);
  assert_int_equal(cudaSetDevice(4), cudaSuccess);
  struct cudaMemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = 4;
  cudaMemPool_t pool, cur, dflt;
  assert_int_equal(cudaMemPoolCreate(&pool, &pp), cudaSuccess);
  assert_int_equal(cudaDeviceSetMemPool(4, pool), cudaSuccess);
  assert_int_equal(cudaDeviceEnablePeerAccess(5, 0), cudaSuccess);
  assert_int_equal(cudaMemset(&n0, 0, 1), cudaErrorInvalidValue); /* a last error, which the reset clears */
  assert_int_equal(live_allocs(), n0 + N + 4);

  assert_int_equal(cudaDeviceReset(), cudaSuccess);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  assert_int_equal(live_allocs(), n0 + 4);
  assert_int_equal(cudaFree(d[0]), cudaErrorInvalidValue); /* gone */
  assert_int_equal(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaStreamQuery(0), cudaSuccess); /* the default stream is there still */
  assert_int_equal(cudaStreamQuery(s5), cudaSuccess);
  assert_int_equal(cudaDeviceGetMemPool(&cur, 4), cudaSuccess);
  assert_int_equal(cudaDeviceGetDefaultMemPool(&dflt, 4), cudaSuccess);
  assert_ptr_equal(cur, dflt);
  assert_int_equal(cudaDeviceEnablePeerAccess(5, 0), cudaSuccess); /* not "already enabled" */
  assert_int_equal(cudaMemsetAsync(async, 1, 64, 0), cudaSuccess);
  assert_int_equal(cudaFreeAsync(async, 0), cudaSuccess);
  assert_int_equal(cudaFreeHost(pinned), cudaSuccess);
  assert_int_equal(ncclMemFree(nccl), ncclSuccess);
  assert_int_equal(cudaMemPoolDestroy(pool), cudaSuccess);
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  assert_int_equal(cudaFree(other), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s5), cudaSuccess);
  assert_int_equal(cudaSetDevice(4), cudaSuccess);
  assert_int_equal(cudaDeviceReset(), cudaSuccess); /* twice: nothing left to do */
  assert_int_equal(live_allocs(), n0);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

static int reset(void **state) {
  (void)state;
  ncclsimAllocFailAfter(0);
  cudaSetDevice(0);
  cudaGetLastError();
  return 0;
}

#define T(f) cmocka_unit_test_teardown(f, reset)

int main(void) {
  setenv("NCCLSIM_DEVICES", "8", 1);
  const struct CMUnitTest tests[] = {
      T(test_register_makes_pinned), T(test_register_errors), T(test_register_alloc_fault),
      T(test_device_pointer),        T(test_host_flags),      T(test_error_strings),
      T(test_device_reset),
  };
  return cmocka_run_group_tests_name("sim_hostmem", tests, NULL, NULL);
}
