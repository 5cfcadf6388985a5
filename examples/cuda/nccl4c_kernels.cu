// nccl4c_kernels.cu — nccl4c on the host, kernels on the device: two
// ranks (n4c_comm_init_all, one thread), each fills a buffer with a
// kernel; nccl4c allreduces them; a kernel scales the result and the host
// checks it.
#include <cstdio>
#include <cuda_runtime.h>
#include <nccl4c.h>

__global__ void fill(double *x, int n, int rank) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] = rank + 0.5 * i;
}
__global__ void halve(double *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] *= 0.5;
}

#define TRY(call)                                                                                    \
  do {                                                                                               \
    n4c_status_t st_ = (call);                                                                       \
    if (st_ != N4C_OK) {                                                                             \
      printf("%s: %s: %s\n", #call, n4c_status_name(st_), n4c_last_error_message());                 \
      return st_ == N4C_ENOTSUP ? 77 : 1;                                                            \
    }                                                                                                \
  } while (0)

int main() {
  int ndev = 0;
  cudaGetDeviceCount(&ndev);
  if (ndev < 2) {
    printf("nccl4c_kernels: needs 2 devices, has %d\n", ndev);
    return 77;
  }
  const int n = 4096;
  n4c_comm_t *comms[2];
  TRY(n4c_comm_init_all(comms, 2, NULL));
  double *buf[2];
  cudaStream_t s[2];
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    cudaStreamCreate(&s[r]);
    cudaMalloc(&buf[r], n * sizeof(double));
    fill<<<8, 128, 0, s[r]>>>(buf[r], n, r);
  }
  TRY(n4c_group_start());
  for (int r = 0; r < 2; r++) {
    n4c_buffer_t b = n4c_buffer(buf[r], n, ncclFloat64, r);
    TRY(n4c_comm_allreduce(comms[r], &b, &b, ncclSum, s[r]));
  }
  TRY(n4c_group_end());
  for (int r = 0; r < 2; r++) {
    cudaSetDevice(r);
    halve<<<8, 128, 0, s[r]>>>(buf[r], n);
    cudaStreamSynchronize(s[r]);
    double h[n];
    cudaMemcpy(h, buf[r], sizeof h, cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += h[i] != 0.5 + 0.5 * i;
    printf("nccl4c_kernels: rank %d: x[100] = %.2f, %d wrong\n", r, h[100], wrong);
  }
  for (int r = 0; r < 2; r++) TRY(n4c_comm_free(comms[r])); /* destroys it, and lets go of the handle */
  return 0;
}
