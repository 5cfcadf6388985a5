// fault_codes.cu — what a kernel's fault leaves: the process's GPU state
// is lost, not its device's alone (CUDA 13 on 4 x H100, measured). Every
// later call on a device the process had a context on returns the fault's
// error; a device it had none on, or one reset since, answers
// cudaErrorDevicesUnavailable. Three devices.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void trapping() { __trap(); }

int main() {
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n < 3) {
    printf("fault_codes: needs 3 devices, has %d\n", n);
    return 77;
  }
  int *p;
  cudaSetDevice(1); // a context on device 1, none on device 2
  cudaFree(0);
  cudaSetDevice(0);
  cudaMalloc(&p, 64);
  trapping<<<1, 1>>>();
  cudaError_t sync = cudaDeviceSynchronize();
  cudaError_t again = cudaMalloc(&p, 64);
  cudaError_t last = cudaGetLastError();
  printf("device 0, __trap: synchronize %s, then malloc %s, last error %s\n", cudaGetErrorName(sync),
         cudaGetErrorName(again), cudaGetErrorName(last));
  cudaError_t set = cudaSetDevice(1);
  again = cudaMalloc(&p, 64);
  printf("device 1, a context before: set %s, malloc %s\n", cudaGetErrorName(set), cudaGetErrorName(again));
  set = cudaSetDevice(2);
  again = cudaMalloc(&p, 64);
  printf("device 2, no context before: set %s, malloc %s\n", cudaGetErrorName(set), cudaGetErrorName(again));
  cudaSetDevice(0);
  cudaError_t reset = cudaDeviceReset();
  again = cudaMalloc(&p, 64);
  printf("device 0 after cudaDeviceReset (%s): malloc %s\n", cudaGetErrorName(reset), cudaGetErrorName(again));
  return 0;
}
