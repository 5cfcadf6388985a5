// streams_events.cu — kernels on two streams, ordered by an event: the
// second stream's kernel reads what the first stream's wrote.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void produce(int *buf, int n, int base) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) buf[i] = base + i;
}
__global__ void consume(const int *buf, int n, long long *sum) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd((unsigned long long *)sum, (unsigned long long)buf[i]);
}

int main() {
  const int n = 10000;
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaEvent_t done;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  int *buf;
  long long *sum;
  cudaMalloc(&buf, n * sizeof(int));
  cudaMalloc(&sum, sizeof(long long));
  cudaMemsetAsync(sum, 0, sizeof(long long), s2);
  for (int round = 0; round < 3; round++) {
    produce<<<4, 128, 0, s1>>>(buf, n, round * 1000);
    cudaEventRecord(done, s1);
    cudaStreamWaitEvent(s2, done, 0);
    consume<<<4, 128, 0, s2>>>(buf, n, sum);
    cudaEventRecord(done, s2);
    cudaStreamWaitEvent(s1, done, 0);
  }
  long long h;
  cudaMemcpyAsync(&h, sum, sizeof h, cudaMemcpyDeviceToHost, s2);
  cudaStreamSynchronize(s2);
  printf("streams_events: sum %lld (want %lld), %s\n", h, 3LL * (n - 1) * n / 2 + 3000LL * n,
         cudaGetErrorString(cudaGetLastError()));
  return 0;
}
