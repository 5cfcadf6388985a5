// histogram.cu — atomics: a 16-bin histogram in shared memory per block,
// merged into global memory with atomicAdd, and a float sum with atomicAdd.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void histogram(const unsigned *data, int n, unsigned *bins, float *total) {
  __shared__ unsigned local[16];
  if (threadIdx.x < 16) local[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&local[data[i] % 16], 1u);
    atomicAdd(total, 0.5f);
  }
  __syncthreads();
  if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

int main() {
  const int n = 65536;
  unsigned *h = new unsigned[n];
  for (int i = 0; i < n; i++) h[i] = (unsigned)(i * 2654435761u) >> 7;
  unsigned *d, *bins;
  float *total;
  cudaMalloc(&d, n * sizeof(unsigned));
  cudaMalloc(&bins, 16 * sizeof(unsigned));
  cudaMalloc(&total, sizeof(float));
  cudaMemset(bins, 0, 16 * sizeof(unsigned));
  cudaMemset(total, 0, sizeof(float));
  cudaMemcpy(d, h, n * sizeof(unsigned), cudaMemcpyHostToDevice);
  histogram<<<8, 256>>>(d, n, bins, total);
  unsigned hb[16];
  float ht;
  cudaMemcpy(hb, bins, sizeof hb, cudaMemcpyDeviceToHost);
  cudaMemcpy(&ht, total, sizeof ht, cudaMemcpyDeviceToHost);
  unsigned want[16] = {0};
  for (int i = 0; i < n; i++) want[h[i] % 16]++;
  int wrong = 0;
  for (int b = 0; b < 16; b++) wrong += hb[b] != want[b];
  printf("histogram: bin0 %u bin15 %u, %d bins wrong, total %.1f\n", hb[0], hb[15], wrong, ht);
  delete[] h;
  return wrong != 0;
}
