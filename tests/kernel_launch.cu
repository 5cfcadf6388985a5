/* tests/kernel_launch.cu — kernels on ncclsim: every way to launch one and
 * every configuration error CUDA gives at a launch (CUDA 13 on an H100,
 * measured: docs/ncclsim.md, "Kernels"), the calls on kernels by address
 * (attributes, occupancy), and a launch as a stream operation. Built by
 * ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <cooperative_groups.h>
#include <cstdio>
#include <ncclsim.h>

__global__ void fill(int *p, int v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) p[i] = v + i;
}

template <typename T>
__global__ void fill_t(T *p, T v) {
  p[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

template <typename T, int N>
__global__ void fill_n(T *p) {
  p[threadIdx.x] = (T)N;
}

__global__ void empty() {}
__global__ void roomy() {} /* its shared memory attribute is raised */

__global__ void __launch_bounds__(128, 2) bounded(int *p) { p[threadIdx.x] = 1; }

__global__ void dyn_smem(int *out) {
  extern __shared__ int s[];
  s[threadIdx.x] = (int)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void coords(uint3 *t, uint3 *b, uint3 *bd, uint3 *gd) {
  unsigned bl = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned th = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned i = bl * blockDim.x * blockDim.y * blockDim.z + th;
  t[i] = threadIdx;
  b[i] = blockIdx;
  bd[i] = blockDim;
  gd[i] = gridDim;
}

static int *dev_ints(size_t n) {
  int *p = NULL;
  assert_int_equal(cudaMalloc(&p, n * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMemset(p, 0, n * sizeof(int)), cudaSuccess);
  return p;
}

static void check_fill(const int *d, int v, int n) {
  int *h = (int *)malloc(n * sizeof(int));
  assert_int_equal(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < n; i++) assert_int_equal(h[i], v + i);
  free(h);
}

/* <<<grid, block>>> with a grid-stride loop: every element once. */
static void test_launch_plain(void **state) {
  (void)state;
  int *d = dev_ints(1000);
  fill<<<3, 64>>>(d, 7, 1000);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  check_fill(d, 7, 1000);
  cudaFree(d);
}

/* Templates: given arguments, deduced ones, and a nested template's >>>,
 * which is no launch. */
static void test_launch_templates(void **state) {
  (void)state;
  double *d;
  assert_int_equal(cudaMalloc(&d, 8 * sizeof(double)), cudaSuccess);
  fill_t<<<2, 4>>>(d, 2.5); /* T deduced: double */
  double h[8];
  assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 8; i++) assert_true(h[i] == 2.5);
  short *s;
  assert_int_equal(cudaMalloc(&s, 32 * sizeof(short)), cudaSuccess);
  fill_n<short, 12><<<1, 32>>>(s);
  short hs[32];
  assert_int_equal(cudaMemcpy(hs, s, sizeof hs, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 32; i++) assert_int_equal(hs[i], 12);
  cudaFree(d);
  cudaFree(s);
}

/* A launch through a pointer to a kernel, as nccl-tests' device kernels
 * are launched. */
template <typename F>
static void launch_via(F kernel, int *p) {
  kernel<<<1, 16, 0, 0>>>(p, 3, 16);
}

static void test_launch_pointer(void **state) {
  (void)state;
  int *d = dev_ints(16);
  launch_via(fill, d);
  check_fill(d, 3, 16);
  void (*fp)(int *, int, int) = fill;
  fp<<<2, 8>>>(d, 5, 16);
  check_fill(d, 5, 16);
  cudaFree(d);
}

/* cudaLaunchKernel: the C form (void * and an array of argument
 * pointers, copied at the call) and the C++ template form. */
static void test_cuda_launch_kernel(void **state) {
  (void)state;
  int *d = dev_ints(64);
  int v = 11, n = 64;
  void *args[] = {&d, &v, &n};
  assert_int_equal(cudaLaunchKernel((const void *)fill, dim3(2), dim3(32), args, 0, 0), cudaSuccess);
  v = 99; /* after the call: the launch copied it */
  check_fill(d, 11, 64);
  v = 4;
  assert_int_equal(cudaLaunchKernel(fill, dim3(1), dim3(64), args, 0, 0), cudaSuccess);
  check_fill(d, 4, 64);
  /* a template's instance by address */
  float *f;
  assert_int_equal(cudaMalloc(&f, 4 * sizeof(float)), cudaSuccess);
  float fv = 1.5f;
  void *fargs[] = {&f, &fv};
  assert_int_equal(cudaLaunchKernel((const void *)&fill_t<float>, dim3(1), dim3(4), fargs, 0, 0), cudaSuccess);
  float hf[4];
  assert_int_equal(cudaMemcpy(hf, f, sizeof hf, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 4; i++) assert_true(hf[i] == 1.5f);
  /* not a kernel (CUDA 13 on an H100: a host function is an invalid
   * resource handle, NULL an invalid device function), and no arguments
   * for one that takes three */
  assert_int_equal(cudaLaunchKernel((const void *)&test_cuda_launch_kernel, dim3(1), dim3(1), NULL, 0, 0),
                   cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaLaunchCooperativeKernel((const void *)&test_cuda_launch_kernel, dim3(1), dim3(1), NULL, 0, 0),
                   cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaLaunchKernel((const void *)fill, dim3(1), dim3(1), NULL, 0, 0), cudaErrorInvalidValue);
  assert_int_equal(cudaLaunchKernel((const void *)NULL, dim3(1), dim3(1), NULL, 0, 0),
                   cudaErrorInvalidDeviceFunction);
  cudaGetLastError();
  cudaFree(d);
  cudaFree(f);
}

/* cudaLaunchKernelEx: the C++ form with typed arguments, the C form, the
 * attributes. */
static void test_launch_kernel_ex(void **state) {
  (void)state;
  int *d = dev_ints(32);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(32);
  assert_int_equal(cudaLaunchKernelEx(&cfg, fill, d, 21, 32), cudaSuccess);
  check_fill(d, 21, 32);
  cudaLaunchAttribute attr[2];
  memset(attr, 0, sizeof attr);
  attr[0].id = cudaLaunchAttributePriority;
  attr[0].val.priority = -1;
  attr[1].id = cudaLaunchAttributeClusterDimension;
  attr[1].val.clusterDim.x = 1;
  attr[1].val.clusterDim.y = 1;
  attr[1].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 2;
  int v = 8, n = 32;
  void *args[] = {&d, &v, &n};
  assert_int_equal(cudaLaunchKernelExC(&cfg, (const void *)fill, args), cudaSuccess);
  check_fill(d, 8, 32);
  attr[1].val.clusterDim.x = 2; /* no clusters on ncclsim */
  assert_int_equal(cudaLaunchKernelExC(&cfg, (const void *)fill, args), cudaErrorNotSupported);
  assert_int_equal(cudaLaunchKernelEx(&cfg, fill, d, 1, 32), cudaErrorNotSupported);
  cfg.attrs = NULL; /* numAttrs 2 */
  assert_int_equal(cudaLaunchKernelExC(&cfg, (const void *)fill, args), cudaErrorInvalidValue);
  assert_int_equal(cudaLaunchKernelExC(NULL, (const void *)fill, args), cudaErrorInvalidValue);
  cudaGetLastError();
  cudaFree(d);
}

/* Coordinates in three dimensions: every thread of every block once. */
static void test_coordinates(void **state) {
  (void)state;
  dim3 grid(3, 2, 2), block(4, 3, 2);
  unsigned n = 12 * 24;
  uint3 *t, *b, *bd, *gd;
  assert_int_equal(cudaMalloc(&t, n * sizeof(uint3)), cudaSuccess);
  assert_int_equal(cudaMalloc(&b, n * sizeof(uint3)), cudaSuccess);
  assert_int_equal(cudaMalloc(&bd, n * sizeof(uint3)), cudaSuccess);
  assert_int_equal(cudaMalloc(&gd, n * sizeof(uint3)), cudaSuccess);
  coords<<<grid, block>>>(t, b, bd, gd);
  uint3 *ht = (uint3 *)malloc(n * sizeof(uint3)), *hb = (uint3 *)malloc(n * sizeof(uint3));
  uint3 *hbd = (uint3 *)malloc(n * sizeof(uint3)), *hgd = (uint3 *)malloc(n * sizeof(uint3));
  assert_int_equal(cudaMemcpy(ht, t, n * sizeof(uint3), cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(hb, b, n * sizeof(uint3), cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(hbd, bd, n * sizeof(uint3), cudaMemcpyDeviceToHost), cudaSuccess);
  assert_int_equal(cudaMemcpy(hgd, gd, n * sizeof(uint3), cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned i = 0; i < n; i++) {
    unsigned th = i % 24, bl = i / 24;
    assert_int_equal(ht[i].x, th % 4);
    assert_int_equal(ht[i].y, th / 4 % 3);
    assert_int_equal(ht[i].z, th / 12);
    assert_int_equal(hb[i].x, bl % 3);
    assert_int_equal(hb[i].y, bl / 3 % 2);
    assert_int_equal(hb[i].z, bl / 6);
    assert_int_equal(hbd[i].x, 4);
    assert_int_equal(hbd[i].z, 2);
    assert_int_equal(hgd[i].y, 2);
  }
  /* outside a kernel: a block of one, at the origin */
  assert_int_equal(threadIdx.x, 0);
  assert_int_equal(blockDim.x, 1);
  free(ht), free(hb), free(hbd), free(hgd);
  cudaFree(t), cudaFree(b), cudaFree(bd), cudaFree(gd);
}

/* The configuration errors, as CUDA 13 gives them on an H100. */
static void test_config_errors(void **state) {
  (void)state;
  int *d = dev_ints(1024);
  empty<<<0, 1>>>();
  assert_int_equal(launched(), cudaErrorInvalidValue);
  empty<<<1, 0>>>();
  assert_int_equal(launched(), cudaErrorInvalidValue);
  empty<<<1, 1025>>>();
  assert_int_equal(launched(), cudaErrorInvalidValue);
  empty<<<1, 2048>>>();
  assert_int_equal(launched(), cudaErrorInvalidValue);
  empty<<<dim3(1, 65536), 1>>>();
  assert_int_equal(launched(), cudaErrorInvalidValue);
  empty<<<1, dim3(1, 1, 65)>>>();
  assert_int_equal(launched(), cudaErrorInvalidValue);
  empty<<<1, 1024>>>();
  assert_int_equal(launched(), cudaSuccess);
  bounded<<<1, 256>>>(d); /* over its __launch_bounds__ */
  assert_int_equal(launched(), cudaErrorInvalidValue);
  bounded<<<1, 128>>>(d);
  assert_int_equal(launched(), cudaSuccess);
  /* the error is the launch's, kept until read, as CUDA does */
  empty<<<0, 1>>>();
  assert_int_equal(cudaPeekAtLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaErrorInvalidValue);
  assert_int_equal(cudaGetLastError(), cudaSuccess);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess); /* not sticky */
  cudaFree(d);
}

/* Dynamic shared memory: 48 KiB unless the kernel's attribute raises it. */
static void test_dynamic_shared(void **state) {
  (void)state;
  int *d = dev_ints(64);
  dyn_smem<<<1, 64, 64 * sizeof(int)>>>(d);
  assert_int_equal(launched(), cudaSuccess);
  int h[64];
  assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 64; i++) assert_int_equal(h[i], 63 - i);
  dyn_smem<<<1, 64, 64 * 1024>>>(d);
  assert_int_equal(launched(), cudaErrorInvalidValue);
  assert_int_equal(cudaFuncSetAttribute(dyn_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024),
                   cudaSuccess);
  dyn_smem<<<1, 64, 200 * 1024>>>(d);
  assert_int_equal(launched(), cudaSuccess);
  dyn_smem<<<1, 64, 300 * 1024>>>(d);
  assert_int_equal(launched(), cudaErrorInvalidValue);
  assert_int_equal(cudaFuncSetAttribute(dyn_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024),
                   cudaErrorInvalidValue);
  assert_int_equal(cudaFuncSetAttribute(dyn_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024),
                   cudaSuccess);
  cudaGetLastError();
  cudaFree(d);
}

/* Attributes and occupancy of a kernel by address. */
static void test_func_attributes(void **state) {
  (void)state;
  struct cudaFuncAttributes a;
  assert_int_equal(cudaFuncGetAttributes(&a, bounded), cudaSuccess);
  assert_int_equal(a.maxThreadsPerBlock, 128);
  assert_int_equal(cudaFuncGetAttributes(&a, fill), cudaSuccess);
  assert_int_equal(a.maxThreadsPerBlock, 1024);
  assert_int_equal(a.maxDynamicSharedSizeBytes, 48 * 1024);
  assert_int_equal(cudaFuncGetAttributes(&a, (const void *)&test_func_attributes), cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaFuncGetAttributes(&a, (const void *)NULL), cudaErrorInvalidDeviceFunction);
  assert_int_equal(cudaFuncSetAttribute((const void *)&test_func_attributes, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        1024),
                   cudaErrorInvalidResourceHandle);
  assert_int_equal(cudaFuncGetAttributes(NULL, fill), cudaErrorInvalidValue);
  assert_int_equal(cudaFuncSetAttribute(fill, cudaFuncAttributePreferredSharedMemoryCarveout, 50), cudaSuccess);
  assert_int_equal(cudaFuncSetAttribute(fill, cudaFuncAttributePreferredSharedMemoryCarveout, 101),
                   cudaErrorInvalidValue);
  assert_int_equal(cudaFuncSetAttribute(fill, cudaFuncAttributeRequiredClusterWidth, 2), cudaErrorNotSupported);
  assert_int_equal(cudaFuncSetCacheConfig(fill, cudaFuncCachePreferShared), cudaSuccess);
  int n = -1;
  /* measured on an H100: a trivial kernel at 256 threads, 8 blocks */
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, empty, 256, 0), cudaSuccess);
  assert_int_equal(n, 8);
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, empty, 1024, 0), cudaSuccess);
  assert_int_equal(n, 2);
  /* dynamic shared memory past the kernel's attribute: none (measured) */
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, roomy, 64, 100 * 1024), cudaSuccess);
  assert_int_equal(n, 0);
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, roomy, 64, 48 * 1024), cudaSuccess);
  assert_int_equal(n, 4);
  assert_int_equal(cudaFuncSetAttribute(roomy, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024), cudaSuccess);
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, roomy, 64, 100 * 1024), cudaSuccess);
  assert_int_equal(n, 2);
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, roomy, 64, 210 * 1024), cudaSuccess);
  assert_int_equal(n, 0);
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void *)&test_func_attributes, 64, 0),
                   cudaErrorInvalidResourceHandle);
  cudaGetLastError();
  assert_int_equal(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, bounded, 256, 0), cudaSuccess);
  assert_int_equal(n, 0); /* over its bounds */
  int grid = 0, block = 0;
  assert_int_equal(cudaOccupancyMaxPotentialBlockSize(&grid, &block, fill, 0, 0), cudaSuccess);
  assert_true(block > 0 && block <= 1024 && block % 32 == 0);
  assert_int_equal(grid, 132 * (2048 / block));
  assert_int_equal(cudaOccupancyMaxPotentialBlockSize(&grid, &block, bounded), cudaSuccess);
  assert_true(block <= 128);
  size_t smem = 0;
  assert_int_equal(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, fill, 2, 256), cudaSuccess);
  assert_true(smem > 48 * 1024);
}

/* Cooperative launches: blocks all resident, and a limit on the grid. */
__global__ void grid_barrier(int *data, int *total) {
  atomicAdd(total, data[blockIdx.x * blockDim.x + threadIdx.x]);
  cooperative_groups::this_grid().sync();
  data[blockIdx.x * blockDim.x + threadIdx.x] = *total;
}

static void test_cooperative(void **state) {
  (void)state;
  int *d = dev_ints(8 * 32), *t = dev_ints(1);
  int h[256];
  for (int i = 0; i < 256; i++) h[i] = i;
  assert_int_equal(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice), cudaSuccess);
  void *args[] = {&d, &t};
  assert_int_equal(cudaLaunchCooperativeKernel((const void *)grid_barrier, dim3(8), dim3(32), args, 0, 0),
                   cudaSuccess);
  assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < 256; i++) assert_int_equal(h[i], 255 * 256 / 2);
  /* 2 blocks of 1024 a multiprocessor, 132 of them */
  assert_int_equal(cudaLaunchCooperativeKernel((const void *)grid_barrier, dim3(265), dim3(1024), args, 0, 0),
                   cudaErrorCooperativeLaunchTooLarge);
  cudaGetLastError();
  cudaFree(d);
  cudaFree(t);
}

/* A launch is a stream operation: in order with copies and events, on
 * its stream; a destroyed stream is refused (CUDA crashes). */
__global__ void add_one(int *p) { p[threadIdx.x] += 1; }

static void test_stream_order(void **state) {
  (void)state;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int *d = dev_ints(32), h[32];
  cudaEvent_t e;
  assert_int_equal(cudaEventCreate(&e), cudaSuccess);
  for (int k = 0; k < 100; k++) add_one<<<1, 32, 0, s>>>(d);
  assert_int_equal(cudaEventRecord(e, s), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s), cudaSuccess);
  assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  for (int i = 0; i < 32; i++) assert_int_equal(h[i], 100);
  assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
  add_one<<<1, 32, 0, s>>>(d);
  assert_int_equal(launched(), cudaErrorInvalidResourceHandle);
  cudaEventDestroy(e);
  cudaFree(d);
}

int main(void) {
  /* Kernels register before main; the simulator's allocator must not be
   * touched then (its first use fixes the process's memory mode, which
   * ranks across hosts set later): no allocation of its own so far. */
  if (ncclsimAllocFailAfter(0) != 0) {
    fprintf(stderr, "kernel_launch: the simulator allocated before main\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_launch_plain),       cmocka_unit_test(test_launch_templates),
      cmocka_unit_test(test_launch_pointer),     cmocka_unit_test(test_cuda_launch_kernel),
      cmocka_unit_test(test_launch_kernel_ex),   cmocka_unit_test(test_coordinates),
      cmocka_unit_test(test_config_errors),      cmocka_unit_test(test_dynamic_shared),
      cmocka_unit_test(test_func_attributes),    cmocka_unit_test(test_cooperative),
      cmocka_unit_test(test_stream_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
