// symbols.cu — __constant__ and __device__ variables, set and read with
// cudaMemcpyToSymbol and cudaMemcpyFromSymbol.
#include <cstdio>
#include <cuda_runtime.h>

__constant__ float coeff[4];
__device__ unsigned long long calls = 0;

__global__ void poly(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = coeff[0] + x[i] * (coeff[1] + x[i] * (coeff[2] + x[i] * coeff[3]));
  atomicAdd(&calls, 1ull);
}

int main() {
  const float hcoeff[4] = {1.0f, -2.0f, 0.5f, 0.25f};
  cudaMemcpyToSymbol(coeff, hcoeff, sizeof hcoeff);
  const int n = 1000;
  float hx[n], hy[n];
  for (int i = 0; i < n; i++) hx[i] = (float)(i % 10);
  float *x, *y;
  cudaMalloc(&x, sizeof hx);
  cudaMalloc(&y, sizeof hy);
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  poly<<<(n + 127) / 128, 128>>>(x, y, n);
  poly<<<(n + 127) / 128, 128>>>(x, y, n);
  cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost);
  unsigned long long hcalls;
  cudaMemcpyFromSymbol(&hcalls, calls, sizeof hcalls);
  printf("symbols: y[3] = %.3f, y[9] = %.3f, %llu thread calls\n", hy[3], hy[9], hcalls);
  return 0;
}
