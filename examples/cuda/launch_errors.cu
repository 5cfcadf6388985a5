// launch_errors.cu — what CUDA answers at a launch that it refuses, and
// the attributes and occupancy of kernels; CUDA 13 on an H100 is the
// reference (run-corpus.sh with nvcc). None of these is sticky.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void empty() {}
__global__ void __launch_bounds__(128) bounded(int *p) { p[threadIdx.x] = 1; }
__global__ void dynamic(int *p) {
  extern __shared__ int s[];
  s[threadIdx.x] = 1;
  p[threadIdx.x] = s[threadIdx.x];
}
__global__ void coop(int *p) { p[blockIdx.x] = 1; }

static void say(const char *what) { printf("%-44s %s\n", what, cudaGetErrorName(cudaGetLastError())); }

int main() {
  int *p;
  cudaMalloc(&p, 1 << 20);
  empty<<<0, 1>>>();
  say("grid 0");
  empty<<<1, 0>>>();
  say("block 0");
  empty<<<1, 1025>>>();
  say("block of 1025 threads");
  empty<<<1, dim3(32, 32, 2)>>>();
  say("block 32x32x2 (2048 threads)");
  empty<<<1, dim3(1, 1, 65)>>>();
  say("block.z 65");
  empty<<<1, dim3(1, 1025, 1)>>>();
  say("block.y 1025");
  empty<<<dim3(1, 65536), 1>>>();
  say("grid.y 65536");
  empty<<<dim3(1, 1, 65536), 1>>>();
  say("grid.z 65536");
  empty<<<dim3(2147483648u), 1>>>();
  say("grid.x 2^31");
  cudaDeviceSynchronize();
  bounded<<<1, 256>>>(p);
  say("256 threads over __launch_bounds__(128)");
  bounded<<<1, 128>>>(p);
  say("128 threads, __launch_bounds__(128)");
  dynamic<<<1, 32, 48 * 1024>>>(p);
  say("48 KiB dynamic shared memory");
  dynamic<<<1, 32, 48 * 1024 + 1>>>(p);
  say("48 KiB + 1 dynamic shared memory");
  cudaFuncSetAttribute(dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 232448);
  say("attribute: 232448 bytes");
  cudaFuncSetAttribute(dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 232449);
  say("attribute: 232449 bytes");
  dynamic<<<1, 32, 232448>>>(p);
  say("232448 bytes after the attribute");
  cudaDeviceSynchronize();
  struct cudaFuncAttributes a;
  cudaFuncGetAttributes(&a, bounded);
  say("cudaFuncGetAttributes(bounded)");
  printf("  maxThreadsPerBlock %d, sharedSizeBytes %zu\n", a.maxThreadsPerBlock, a.sharedSizeBytes);
  cudaFuncGetAttributes(&a, dynamic);
  printf("  dynamic: maxDynamicSharedSizeBytes %d\n", a.maxDynamicSharedSizeBytes);
  int n = -1;
  const int sizes[] = {32, 64, 128, 256, 512, 1024};
  for (int s : sizes) {
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, empty, s, 0);
    printf("  occupancy of empty at %4d threads: %d blocks\n", s, n);
  }
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, empty, 128, 100 * 1024);
  printf("  occupancy at 128 threads, 100 KiB: %d blocks\n", n);
  int most = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&most, coop, 1024, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  void *args[] = {&p};
  cudaLaunchCooperativeKernel((void *)coop, dim3(most * sms), dim3(1024), args, 0, 0);
  say("cooperative, as many blocks as resident");
  cudaLaunchCooperativeKernel((void *)coop, dim3(most * sms + 1), dim3(1024), args, 0, 0);
  say("cooperative, one block more");
  cudaLaunchKernel((void *)main, dim3(1), dim3(1), NULL, 0, 0);
  say("cudaLaunchKernel of a host function");
  cudaLaunchKernel(NULL, dim3(1), dim3(1), NULL, 0, 0);
  say("cudaLaunchKernel of NULL");
  size_t limit[3] = {0, 0, 0};
  cudaDeviceGetLimit(&limit[0], cudaLimitPrintfFifoSize);
  cudaDeviceGetLimit(&limit[1], cudaLimitStackSize);
  cudaDeviceGetLimit(&limit[2], cudaLimitMallocHeapSize);
  printf("limits: printf FIFO %zu bytes, stack %zu bytes, heap %zu bytes\n", limit[0], limit[1], limit[2]);
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaStreamDestroy(s);
  printf("synchronize: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
