// cooperative_grid.cu — a grid-wide barrier in a cooperative launch, sized
// by the occupancy calculator as CUDA asks.
#include <cstdio>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void two_phase(int *data, int *total, int n) {
  cg::grid_group grid = cg::this_grid();
  for (int i = grid.thread_rank(); i < n; i += grid.size()) atomicAdd(total, data[i]);
  grid.sync();
  for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] = *total - data[i];
}

int main() {
  int blocks_per_sm = 0, sms = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, two_phase, 128, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = 4 < blocks_per_sm * sms ? 4 : blocks_per_sm * sms;
  const int n = 5000;
  int *h = new int[n];
  for (int i = 0; i < n; i++) h[i] = i % 7;
  int *data, *total;
  cudaMalloc(&data, n * sizeof(int));
  cudaMalloc(&total, sizeof(int));
  cudaMemset(total, 0, sizeof(int));
  cudaMemcpy(data, h, n * sizeof(int), cudaMemcpyHostToDevice);
  int nn = n;
  void *args[] = {&data, &total, &nn};
  cudaError_t e = cudaLaunchCooperativeKernel((void *)two_phase, dim3(blocks), dim3(128), args, 0, 0);
  cudaMemcpy(h, data, n * sizeof(int), cudaMemcpyDeviceToHost);
  printf("cooperative_grid: %s, %d blocks, data[0] %d data[6] %d\n", cudaGetErrorString(e), blocks, h[0], h[6]);
  delete[] h;
  return 0;
}
