/* tests/kernel_memory.cu — a kernel's memory on ncclsim: __shared__
 * variables (in kernels, in device functions, in templates, at namespace
 * scope, dynamic), one instance per block; __device__ and __constant__
 * variables, one copy per device, and the symbol calls; device printf,
 * which the host's synchronizing calls print, as CUDA's printf buffer.
 * Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include "capture.h"

#include <sys/mman.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

struct pair_t {
  int a;
  double b;
};

extern __shared__ float dyn_ns[]; /* namespace scope, dynamic */
__shared__ int ns_counter;         /* namespace scope, static */

__device__ int in_device_fn(int v) {
  __shared__ int scratch[64];
  scratch[threadIdx.x] = v;
  __syncthreads();
  return scratch[(threadIdx.x + 1) % blockDim.x];
}

template <typename T, int N>
__global__ void shared_kinds(T *out) {
  __shared__ T a[N];
  __shared__ __align__(16) pair_t p;
  __shared__ int hits;
  if (threadIdx.x == 0) {
    hits = 0;
    ns_counter = 0;
    p.a = (int)blockIdx.x;
    p.b = 0.5;
  }
  __syncthreads();
  a[threadIdx.x] = (T)(threadIdx.x * 2);
  atomicAdd(&hits, 1);
  atomicAdd(&ns_counter, 2);
  dyn_ns[threadIdx.x] = (float)blockIdx.x;
  __syncthreads();
  int r = in_device_fn((int)threadIdx.x);
  out[blockIdx.x * N + threadIdx.x] =
      a[N - 1 - threadIdx.x] + (T)(hits * 1000) + (T)(p.a * 100000) + (T)(r * 1000000) +
      (T)((size_t)&p.b % 16 == 8 ? 0 : 1) + (T)(ns_counter != 2 * N) + (T)(dyn_ns[N - 1 - threadIdx.x] != blockIdx.x);
}

/* Each block has its own instances; a device function's too. */
static void test_shared(void **state) {
  (void)state;
  long long *d, h[3 * 64];
  assert_int_equal(cudaMalloc(&d, sizeof h), cudaSuccess);
  shared_kinds<long long, 64><<<3, 64, 64 * sizeof(float)>>>(d);
  assert_int_equal(launched(), cudaSuccess);
  assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int b = 0; b < 3; b++)
    for (int t = 0; t < 64; t++)
      assert_int_equal(h[b * 64 + t], (63 - t) * 2 + 64 * 1000 + b * 100000 + ((t + 1) % 64) * 1000000ll);
  cudaFree(d);
}

/* More __shared__ than a block has: a fault, with CUDA's error. */
__global__ void too_much_shared(int *out) {
  __shared__ char big[40 * 1024];
  big[threadIdx.x] = 1;
  out[0] = big[0];
}

static void test_shared_overflow(void **state) {
  (void)state;
  assert_int_equal(cudaSetDevice(5), cudaSuccess);
  int *d;
  assert_int_equal(cudaMalloc(&d, 4), cudaSuccess);
  capture c;
  capture_start(&c, 2);
  too_much_shared<<<1, 32, 16 * 1024>>>(d); /* 40 KiB + 16 KiB > 48 KiB */
  cudaError_t e = cudaDeviceSynchronize();
  char *err = capture_end(&c);
  assert_int_equal(e, cudaErrorInvalidValue);
  assert_contains(err, "__shared__ variables need 40960 bytes");
  free(err);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

__device__ int dev_counter = 100;
__device__ int dev_array[4] = {1, 2, 3, 4};
__constant__ float dev_scale = 2.0f;

__global__ void bump(int by, int *seen) {
  atomicAdd(&dev_counter, by);
  atomicAdd(&dev_array[threadIdx.x % 4], 1); /* threads t and t + 4 share an element */
  seen[threadIdx.x] = (int)(dev_scale * 10);
}

/* One copy per device, made from the initial value; the symbol calls. */
static void test_device_symbols(void **state) {
  (void)state;
  int *seen;
  for (int dev = 1; dev <= 2; dev++) {
    assert_int_equal(cudaSetDevice(dev), cudaSuccess);
    assert_int_equal(cudaMalloc(&seen, 8 * sizeof(int)), cudaSuccess);
    bump<<<2, 8>>>(dev, seen); /* 16 threads */
    int h, arr[4], hs[8];
    assert_int_equal(cudaMemcpyFromSymbol(&h, dev_counter, sizeof h), cudaSuccess);
    assert_int_equal(h, 100 + 16 * dev); /* its own copy, from 100 */
    assert_int_equal(cudaMemcpyFromSymbol(arr, dev_array, sizeof arr), cudaSuccess);
    for (int i = 0; i < 4; i++) assert_int_equal(arr[i], i + 1 + 4);
    assert_int_equal(cudaMemcpy(hs, seen, sizeof hs, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(hs[7], 20);
    cudaFree(seen);
  }
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  float s = 3.0f;
  assert_int_equal(cudaMemcpyToSymbol(dev_scale, &s, sizeof s), cudaSuccess);
  int two = 2;
  assert_int_equal(cudaMemcpyToSymbol(dev_array, &two, sizeof two, 2 * sizeof(int)), cudaSuccess);
  int arr[4];
  assert_int_equal(cudaMemcpyFromSymbol(arr, dev_array, sizeof arr), cudaSuccess);
  assert_int_equal(arr[2], 2);
  void *addr = NULL;
  size_t size = 0;
  assert_int_equal(cudaGetSymbolAddress(&addr, dev_counter), cudaSuccess);
  assert_int_equal(cudaGetSymbolSize(&size, dev_array), cudaSuccess);
  assert_int_equal(size, 4 * sizeof(int));
  struct cudaPointerAttributes pa;
  assert_int_equal(cudaPointerGetAttributes(&pa, addr), cudaSuccess);
  assert_int_equal(pa.type, cudaMemoryTypeDevice); /* device memory, as NCCL's buffer checks want */
  assert_int_equal(pa.device, 1);
  int h;
  assert_int_equal(cudaMemcpy(&h, addr, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(h, 116);
  /* errors */
  assert_int_equal(cudaMemcpyToSymbol(dev_array, &two, sizeof two, 4 * sizeof(int)), cudaErrorInvalidValue);
  assert_int_equal(cudaMemcpyToSymbol((const void *)&size, &two, sizeof two, 0, cudaMemcpyHostToDevice),
                   cudaErrorInvalidSymbol);
  assert_int_equal(cudaMemcpyFromSymbol(&h, dev_counter, sizeof h, 0, cudaMemcpyHostToDevice),
                   cudaErrorInvalidMemcpyDirection);
  assert_int_equal(cudaGetSymbolAddress(NULL, dev_counter), cudaErrorInvalidValue);
  cudaGetLastError();
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
}

__global__ void say(int x) {
  printf("block %d thread %d says %d\n", (int)blockIdx.x, (int)threadIdx.x, x);
}

/* Device printf reaches stdout at the host's synchronizing calls, after
 * what the host printed before them. */
static void test_printf(void **state) {
  (void)state;
  capture c;
  capture_start(&c, 1);
  say<<<2, 2>>>(42);
  printf("host after the launch\n");
  fflush(stdout);
  assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
  printf("host after the sync\n");
  char *out = capture_end(&c);
  const char *a = strstr(out, "host after the launch"), *k = strstr(out, "block 1 thread 1 says 42"),
             *b = strstr(out, "host after the sync");
  assert_non_null(a);
  assert_non_null(k);
  assert_non_null(b);
  assert_true(a < k && k < b);
  assert_non_null(strstr(out, "block 0 thread 0 says 42"));
  free(out);
  /* the limits, each the device's: CUDA 13's defaults on an H100, measured */
  size_t v = 0;
  assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize), cudaSuccess);
  assert_int_equal(v, 8650752);
  assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitStackSize), cudaSuccess);
  assert_int_equal(v, 1024);
  assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize), cudaSuccess);
  assert_int_equal(v, 8 << 20);
  assert_int_equal(cudaDeviceSetLimit(cudaLimitStackSize, 64 << 10), cudaSuccess);
  assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitStackSize), cudaSuccess);
  assert_int_equal(v, 64 << 10);
  assert_int_equal(cudaDeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 4), cudaErrorUnsupportedLimit);
  assert_int_equal(cudaDeviceGetLimit(&v, (enum cudaLimit)77), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceGetLimit(NULL, cudaLimitStackSize), cudaErrorInvalidValue);
  /* refused once a kernel printed on the device, as CUDA does, and 0 */
  assert_int_equal(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 4 << 20), cudaErrorInvalidValue);
  assert_int_equal(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 0), cudaErrorInvalidValue);
  cudaGetLastError();
  /* on a device that has not printed, a small buffer: what does not fit
   * is lost, and said so; device 0's limit is not changed */
  assert_int_equal(cudaSetDevice(1), cudaSuccess);
  assert_int_equal(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 40), cudaSuccess);
  assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitStackSize), cudaSuccess);
  assert_int_equal(v, 1024);
  capture o, e;
  capture_start(&o, 1);
  capture_start(&e, 2);
  say<<<1, 4>>>(7);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  char *err = capture_end(&e);
  out = capture_end(&o);
  assert_non_null(strstr(out, "block 0 thread 0 says 7"));
  assert_null(strstr(out, "thread 3"));
  assert_non_null(strstr(err, "device printf output were lost"));
  assert_non_null(strstr(err, "(cudaLimitPrintfFifoSize, 40 bytes)"));
  free(out);
  free(err);
  assert_int_equal(cudaSetDevice(0), cudaSuccess);
  assert_int_equal(cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize), cudaSuccess);
  assert_int_equal(v, 8650752);
}

/* cudaFree and cudaFreeHost wait for the device's work, as CUDA 13's do
 * (measured on an H100: both returned once a 200 ms kernel on another,
 * non-blocking stream had ended): a kernel still running may use the
 * memory (before, the kernel wrote into freed memory, which
 * AddressSanitizer caught). */
__global__ void late_write(volatile int *spin, int *out) {
  for (int i = 0; i < 2000000 && *spin == 0; i++) {
  }
  out[threadIdx.x] = 7;
}

static void test_free_waits_for_kernels(void **state) {
  (void)state;
  int *spin, *out, *other;
  assert_int_equal(cudaMalloc(&spin, sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMemset(spin, 0, sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMalloc(&out, 32 * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMalloc(&other, sizeof(int)), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  late_write<<<1, 32, 0, s>>>(spin, out);
  assert_int_equal(cudaFree(other), cudaSuccess);
  /* device memory is the host's here: the kernel has written by now */
  for (int i = 0; i < 32; i++) assert_int_equal(out[i], 7);
  late_write<<<1, 32, 0, s>>>(spin, out);
  assert_int_equal(cudaFree(out), cudaSuccess); /* the kernel's own buffer */
  assert_int_equal(cudaStreamQuery(s), cudaSuccess);
  /* cudaFreeHost waits for the device's work too (measured on an H100) */
  int *pinned, *again;
  assert_int_equal(cudaMallocHost(&pinned, sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMalloc(&again, 32 * sizeof(int)), cudaSuccess);
  late_write<<<1, 32, 0, s>>>(spin, again);
  assert_int_equal(cudaFreeHost(pinned), cudaSuccess);
  assert_int_equal(cudaStreamQuery(s), cudaSuccess);
  assert_int_equal(again[31], 7);
  assert_int_equal(cudaFree(again), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  assert_int_equal(cudaFree(spin), cudaSuccess);
}

/* CUDA's C++ allocation forms: any pointer type, and a pool named. */
__global__ void twice(float *p) { p[threadIdx.x] *= 2; }

static void test_cxx_allocation_forms(void **state) {
  (void)state;
  float *a = NULL, *b = NULL, *c = NULL, *host = NULL;
  cudaMemPool_t pool;
  assert_int_equal(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&a, 4 * sizeof(float), 0), cudaSuccess);
  assert_int_equal(cudaMallocAsync(&b, 4 * sizeof(float), pool, 0), cudaSuccess);
  assert_int_equal(cudaMallocFromPoolAsync(&c, 4 * sizeof(float), pool, 0), cudaSuccess);
  assert_int_equal(cudaMallocHost(&host, 4 * sizeof(float)), cudaSuccess);
  for (float *d : {a, b, c}) {
    for (int i = 0; i < 4; i++) host[i] = (float)i;
    assert_int_equal(cudaMemcpyAsync(d, host, 4 * sizeof(float), cudaMemcpyHostToDevice, 0), cudaSuccess);
    twice<<<1, 4>>>(d);
    assert_int_equal(cudaMemcpyAsync(host, d, 4 * sizeof(float), cudaMemcpyDeviceToHost, 0), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    for (int i = 0; i < 4; i++) assert_true(host[i] == 2.0f * (float)i);
    assert_int_equal(cudaFreeAsync(d, 0), cudaSuccess);
  }
  assert_int_equal(cudaFreeHost(host), cudaSuccess);
}

/* A kernel thread's stack, once its worker has ended, leaves nothing
 * behind: under AddressSanitizer, memory mapped where it was has no stale
 * redzones (a fiber parked with its frames poisoned, then unmapped, gave a
 * later stack mapped there "stack-buffer-overflow" in frames that
 * overflowed nothing). */
__global__ void stack_address(uintptr_t *out) {
  volatile int here = 0;
  *out = (uintptr_t)&here;
}

static void test_stack_left_clean(void **state) {
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  uintptr_t *at;
  assert_int_equal(cudaMallocHost(&at, sizeof *at), cudaSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  stack_address<<<1, 1, 0, s>>>(at);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess); /* the worker is joined: its stacks are unmapped */
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  char *first = (char *)(*at & ~(page - 1));
  assert_int_equal(cudaFreeHost(at), cudaSuccess);
  /* from the kernel's frame up to the stack's top, where the engine's
   * parked frames were, page by page while the addresses are free */
  int mapped = 0;
  for (int i = 0; i < 16; i++) {
    char *p = first + (size_t)i * page;
    void *m = mmap(p, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m == MAP_FAILED) break;
    if (m != p) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
      munmap(m, page);
      break;
    }
    assert_null(__asan_region_is_poisoned(p, page));
    munmap(p, page);
    mapped++;
  }
  if (!mapped) skip();
#else
  skip();
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shared),         cmocka_unit_test(test_shared_overflow),
      cmocka_unit_test(test_device_symbols), cmocka_unit_test(test_printf),
      cmocka_unit_test(test_cxx_allocation_forms), cmocka_unit_test(test_free_waits_for_kernels),
      cmocka_unit_test(test_stack_left_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
