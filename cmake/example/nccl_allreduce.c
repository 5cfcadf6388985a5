/*
 * nccl_allreduce.c — the CMake example's ncclsim program: NCCL's and
 * CUDA's host API only, as a program written for a GPU uses them. Two
 * ranks on the two devices of this process (ncclCommInitAll) allreduce
 * 4 ints, every element checked.
 *
 * Exit status: 0 on success, 1 on failure.
 */
#include <stdio.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#define N 4

int main(void) {
  int version = 0;
  ncclComm_t comms[2];
  int *buf[2];
  cudaStream_t s[2];
  if (ncclGetVersion(&version) != ncclSuccess || ncclCommInitAll(comms, 2, NULL) != ncclSuccess) {
    fprintf(stderr, "ncclCommInitAll: %s\n", ncclGetLastError(NULL));
    return 1;
  }
  printf("NCCL version code %d\n", version);
  ncclGroupStart();
  for (int r = 0; r < 2; r++) {
    int host[N];
    for (int i = 0; i < N; i++) host[i] = (r + 1) * (i + 1);
    if (cudaSetDevice(r) != cudaSuccess || cudaMalloc((void **)&buf[r], sizeof host) != cudaSuccess ||
        cudaMemcpy(buf[r], host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaStreamCreate(&s[r]) != cudaSuccess ||
        ncclAllReduce(buf[r], buf[r], N, ncclInt32, ncclSum, comms[r], s[r]) != ncclSuccess) {
      fprintf(stderr, "rank %d: %s\n", r, ncclGetLastError(comms[r]));
      return 1;
    }
  }
  if (ncclGroupEnd() != ncclSuccess) {
    fprintf(stderr, "ncclGroupEnd: %s\n", ncclGetLastError(NULL));
    return 1;
  }
  int bad = 0;
  for (int r = 0; r < 2; r++) {
    int host[N];
    cudaSetDevice(r);
    if (cudaStreamSynchronize(s[r]) != cudaSuccess ||
        cudaMemcpy(host, buf[r], sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) {
      fprintf(stderr, "rank %d: the allreduce did not complete\n", r);
      return 1;
    }
    for (int i = 0; i < N; i++)
      if (host[i] != 3 * (i + 1)) {
        fprintf(stderr, "rank %d: element %d is %d, not %d\n", r, i, host[i], 3 * (i + 1));
        bad = 1;
      }
    cudaStreamDestroy(s[r]);
    cudaFree(buf[r]);
    ncclCommDestroy(comms[r]);
  }
  if (!bad) printf("allreduce over 2 ranks: ok\n");
  return bad;
}
