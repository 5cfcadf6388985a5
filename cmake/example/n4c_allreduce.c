/*
 * n4c_allreduce.c — the CMake example's nccl4c program: nccl4c's version,
 * then an allreduce of 4 floats over the two devices of this process
 * (n4c_comm_init_all), every element checked.
 *
 * Exit status: 0 on success, 77 (skipped) with fewer than two devices,
 * 1 on failure.
 */
#include <stdio.h>

#include <nccl4c.h>

#define N 4

#define TRY(call)                                                                                  \
  do {                                                                                             \
    n4c_status_t st_ = (call);                                                                     \
    if (st_ != N4C_OK) {                                                                           \
      fprintf(stderr, "%s: %s: %s\n", #call, n4c_status_name(st_), n4c_last_error_message());      \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(void) {
  n4c_version_t v;
  TRY(n4c_get_version(&v));
  printf("nccl4c %d.%d.%d, NCCL %d.%d.%d\n", v.nccl4c.major, v.nccl4c.minor, v.nccl4c.patch, v.nccl.major,
         v.nccl.minor, v.nccl.patch);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
    printf("skipped: %d devices\n", ndev);
    return 77;
  }
  n4c_comm_t *comms[2];
  float *buf[2];
  cudaStream_t s[2];
  TRY(n4c_comm_init_all(comms, 2, NULL));
  TRY(n4c_group_start());
  for (int r = 0; r < 2; r++) {
    float host[N];
    for (int i = 0; i < N; i++) host[i] = (float)(r + 1) * (float)(i + 1);
    if (cudaSetDevice(r) != cudaSuccess || cudaMalloc((void **)&buf[r], sizeof host) != cudaSuccess ||
        cudaMemcpy(buf[r], host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaStreamCreate(&s[r]) != cudaSuccess) {
      fprintf(stderr, "CUDA setup of rank %d failed\n", r);
      return 1;
    }
    n4c_buffer_t b = n4c_buffer(buf[r], N, ncclFloat32, r);
    TRY(n4c_comm_allreduce(comms[r], &b, &b, ncclSum, s[r]));
  }
  TRY(n4c_group_end());
  int bad = 0;
  for (int r = 0; r < 2; r++) {
    float host[N];
    cudaSetDevice(r);
    if (cudaStreamSynchronize(s[r]) != cudaSuccess ||
        cudaMemcpy(host, buf[r], sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) {
      fprintf(stderr, "rank %d: the allreduce did not complete\n", r);
      return 1;
    }
    for (int i = 0; i < N; i++)
      if (host[i] != 3.0f * (float)(i + 1)) {
        fprintf(stderr, "rank %d: element %d is %g, not %g\n", r, i, host[i], 3.0 * (i + 1));
        bad = 1;
      }
    cudaStreamDestroy(s[r]);
    cudaFree(buf[r]);
    TRY(n4c_comm_destroy(comms[r]));
    TRY(n4c_comm_free(comms[r]));
  }
  if (!bad) printf("allreduce over 2 ranks: ok\n");
  return bad;
}
