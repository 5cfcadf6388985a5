// block_reduce.cu — a tree reduction in shared memory: a templated kernel
// with static __shared__ memory, one with dynamic shared memory, and the
// barrier between the steps.
#include <cstdio>
#include <cuda_runtime.h>

template <typename T, int BLOCK>
__global__ void reduce_static(const T *in, T *out, int n) {
  __shared__ T part[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  part[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

__global__ void reduce_dynamic(const long long *in, long long *out, int n) {
  extern __shared__ long long buf[];
  long long sum = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += in[i];
  buf[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = buf[0];
}

int main() {
  const int n = 100000, block = 256, blocks = (n + block - 1) / block;
  int *hi = new int[n];
  for (int i = 0; i < n; i++) hi[i] = i % 1000;
  int *in, *part;
  cudaMalloc(&in, n * sizeof(int));
  cudaMalloc(&part, blocks * sizeof(int));
  cudaMemcpy(in, hi, n * sizeof(int), cudaMemcpyHostToDevice);
  reduce_static<int, block><<<blocks, block>>>(in, part, n);
  int *hp = new int[blocks];
  cudaMemcpy(hp, part, blocks * sizeof(int), cudaMemcpyDeviceToHost);
  long long total = 0;
  for (int b = 0; b < blocks; b++) total += hp[b];
  printf("reduce_static: %d blocks, sum %lld\n", blocks, total);
  long long *hl = new long long[n], *lin, *lout, sum = 0;
  for (int i = 0; i < n; i++) hl[i] = (long long)i * i;
  cudaMalloc(&lin, n * sizeof(long long));
  cudaMalloc(&lout, sizeof(long long));
  cudaMemcpy(lin, hl, n * sizeof(long long), cudaMemcpyHostToDevice);
  reduce_dynamic<<<1, 512, 512 * sizeof(long long)>>>(lin, lout, n);
  cudaMemcpy(&sum, lout, sizeof sum, cudaMemcpyDeviceToHost);
  printf("reduce_dynamic: sum of squares %lld (%s)\n", sum, cudaGetErrorString(cudaGetLastError()));
  delete[] hi;
  delete[] hp;
  delete[] hl;
  return 0;
}
