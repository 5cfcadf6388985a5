// fault_codes.cu — the errors a kernel's faults leave, each sticky on its
// own device: __trap on device 0, a bad address on device 1; device 2,
// untouched, still works. Three devices.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void trapping() { __trap(); }
__global__ void bad_address(int *p) { p[threadIdx.x] = 1; }
__global__ void fine(int *p) { p[threadIdx.x] = 2; }

int main() {
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n < 3) {
    printf("fault_codes: needs 3 devices, has %d\n", n);
    return 77;
  }
  int *p;
  cudaSetDevice(0);
  cudaMalloc(&p, 64);
  trapping<<<1, 1>>>();
  cudaError_t sync = cudaDeviceSynchronize(), again = cudaMalloc(&p, 64), last = cudaGetLastError();
  printf("trap: synchronize %s, then malloc %s, last error %s\n", cudaGetErrorName(sync), cudaGetErrorName(again),
         cudaGetErrorName(last));
  cudaSetDevice(1);
  cudaMalloc(&p, 64);
  bad_address<<<1, 4>>>((int *)8);
  sync = cudaDeviceSynchronize();
  again = cudaMalloc(&p, 64);
  printf("bad address: synchronize %s, then malloc %s\n", cudaGetErrorName(sync), cudaGetErrorName(again));
  cudaSetDevice(2);
  cudaMalloc(&p, 64);
  fine<<<1, 4>>>(p);
  printf("another device: synchronize %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
