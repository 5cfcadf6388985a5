// inline_ptx.cu — the PTX NCCL programs write inline: a reduction on
// global memory (as nccl-tests' verifiable.cu counts bad elements), loads
// and stores with memory orders, a fence, the lane id.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void count_bad(const int *v, int n, unsigned long long *bad) {
  unsigned long long mine = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) mine += v[i] % 3 == 0;
  asm volatile("red.global.add.u64 [%0],%1;" ::"l"(bad), "l"(mine) : "memory");
}

__global__ void handoff(int *flag, int *data, int *seen) {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (threadIdx.x == 0) {
    data[0] = 42;
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(1) : "memory");
  }
  __syncthreads();
  int f;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
  if (f == 1 && lane == threadIdx.x % 32) atomicAdd(seen, data[0] == 42);
}

int main() {
  const int n = 9999;
  int *h = new int[n];
  for (int i = 0; i < n; i++) h[i] = i;
  int *v, *flag, *data, *seen;
  unsigned long long *bad, hbad;
  cudaMalloc(&v, n * sizeof(int));
  cudaMalloc(&bad, sizeof hbad);
  cudaMemset(bad, 0, sizeof hbad);
  cudaMemcpy(v, h, n * sizeof(int), cudaMemcpyHostToDevice);
  count_bad<<<4, 128>>>(v, n, bad);
  cudaMemcpy(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost);
  cudaMalloc(&flag, 4);
  cudaMalloc(&data, 4);
  cudaMalloc(&seen, 4);
  cudaMemset(flag, 0, 4);
  cudaMemset(seen, 0, 4);
  handoff<<<1, 64>>>(flag, data, seen);
  int hseen;
  cudaMemcpy(&hseen, seen, 4, cudaMemcpyDeviceToHost);
  printf("inline_ptx: %llu multiples of 3, %d threads saw the handoff, %s\n", hbad, hseen,
         cudaGetErrorString(cudaGetLastError()));
  delete[] h;
  return 0;
}
