// device_printf.cu — printf in a kernel reaches stdout when the host
// synchronizes, after what the host printed before.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void hello(int round) {
  if (threadIdx.x == 0) printf("kernel round %d: block %d of %d says hello\n", round, blockIdx.x, gridDim.x);
}

int main() {
  printf("host: before the first launch\n");
  hello<<<1, 32>>>(1);
  cudaDeviceSynchronize();
  printf("host: after the first synchronize\n");
  hello<<<1, 64>>>(2);
  cudaDeviceSynchronize();
  printf("host: done (%s)\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
