// nccl_kernels.cu — NCCL with kernels around it: each rank (a device of
// this process, ncclCommInitAll) fills its buffer with a kernel, the ranks
// allreduce, and a kernel on each rank checks the sums. Two devices.
#include <cstdio>
#include <cuda_runtime.h>
#include <nccl.h>

#define NDEV 2

__global__ void fill(float *x, int n, int rank) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] = (float)(rank + 1) * i;
}
__global__ void verify(const float *x, int n, float scale, int *bad) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    if (x[i] != scale * i) atomicAdd(bad, 1);
}

int main() {
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  if (ndev < NDEV) {
    printf("nccl_kernels: needs %d devices, has %d\n", NDEV, ndev);
    return 77;
  }
  const int n = 1 << 16;
  ncclComm_t comms[NDEV];
  int devs[NDEV] = {0, 1};
  if (ncclCommInitAll(comms, NDEV, devs) != ncclSuccess) return 1;
  float *buf[NDEV];
  int *bad[NDEV];
  cudaStream_t s[NDEV];
  for (int r = 0; r < NDEV; r++) {
    cudaSetDevice(r);
    cudaStreamCreate(&s[r]);
    cudaMalloc(&buf[r], n * sizeof(float));
    cudaMalloc(&bad[r], sizeof(int));
    cudaMemsetAsync(bad[r], 0, sizeof(int), s[r]);
    fill<<<32, 256, 0, s[r]>>>(buf[r], n, r);
  }
  ncclGroupStart();
  for (int r = 0; r < NDEV; r++) ncclAllReduce(buf[r], buf[r], n, ncclFloat, ncclSum, comms[r], s[r]);
  ncclGroupEnd();
  float scale = NDEV * (NDEV + 1) / 2.0f;
  for (int r = 0; r < NDEV; r++) {
    cudaSetDevice(r);
    verify<<<32, 256, 0, s[r]>>>(buf[r], n, scale, bad[r]);
  }
  for (int r = 0; r < NDEV; r++) {
    cudaSetDevice(r);
    cudaStreamSynchronize(s[r]);
    int h;
    cudaMemcpy(&h, bad[r], sizeof h, cudaMemcpyDeviceToHost);
    printf("nccl_kernels: rank %d: %d of %d elements wrong after ncclAllReduce\n", r, h, n);
  }
  for (int r = 0; r < NDEV; r++) ncclCommDestroy(comms[r]);
  return 0;
}
