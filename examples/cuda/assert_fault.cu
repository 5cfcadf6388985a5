// assert_fault.cu — a failed device assert: the kernel ends, and the error
// is sticky on the device (measured on an H100 with CUDA 13:
// cudaDeviceSynchronize, cudaGetLastError and a later cudaMalloc all
// return cudaErrorAssert). The assert's own message goes to stderr.
#include <cassert>
#include <cstdio>
#include <cuda_runtime.h>

__global__ void checked(const int *v) { assert(v[threadIdx.x] >= 0); }

int main() {
  int h[32], *d;
  for (int i = 0; i < 32; i++) h[i] = i == 17 ? -1 : i;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  checked<<<1, 32>>>(d);
  printf("synchronize: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  printf("last error: %s\n", cudaGetErrorName(cudaGetLastError()));
  void *p;
  printf("malloc after: %s\n", cudaGetErrorName(cudaMalloc(&p, 16)));
  return 0;
}
