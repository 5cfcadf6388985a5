// examples/nccl/comm_init_all.cc — NCCL's "single process, single thread,
// multiple devices" example: ncclCommInitAll, then one allreduce per
// device inside a group.
#include <nccl.h>
#include <cuda_runtime.h>

#include <vector>

#include "check.h"

int main() {
  const size_t count = 32 * 1024;
  int n = example_devices(4);
  std::vector<int> devs(n);
  for (int i = 0; i < n; i++) devs[i] = i;
  std::vector<ncclComm_t> comms(n);
  NCCLCHECK(ncclCommInitAll(comms.data(), n, devs.data()));

  std::vector<int *> send(n), recv(n);
  std::vector<cudaStream_t> streams(n);
  for (int i = 0; i < n; i++) {
    CUDACHECK(cudaSetDevice(devs[i]));
    CUDACHECK(cudaMalloc((void **)&send[i], count * sizeof(int)));
    CUDACHECK(cudaMalloc((void **)&recv[i], count * sizeof(int)));
    CUDACHECK(cudaMemset(send[i], 1, count * sizeof(int))); // 0x01010101 in every int
    CUDACHECK(cudaMemset(recv[i], 0, count * sizeof(int)));
    CUDACHECK(cudaStreamCreate(&streams[i]));
  }
  // One thread drives every device: the group makes the calls one launch.
  NCCLCHECK(ncclGroupStart());
  for (int i = 0; i < n; i++) NCCLCHECK(ncclAllReduce(send[i], recv[i], count, ncclInt, ncclSum, comms[i], streams[i]));
  NCCLCHECK(ncclGroupEnd());

  int bad = 0;
  std::vector<int> host(count);
  for (int i = 0; i < n; i++) {
    CUDACHECK(cudaSetDevice(devs[i]));
    CUDACHECK(cudaStreamSynchronize(streams[i]));
    CUDACHECK(cudaMemcpy(host.data(), recv[i], count * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < count; k++) bad += host[k] != n * 0x01010101;
    CUDACHECK(cudaFree(send[i]));
    CUDACHECK(cudaFree(recv[i]));
    CUDACHECK(cudaStreamDestroy(streams[i]));
  }
  for (int i = 0; i < n; i++) NCCLCHECK(ncclCommDestroy(comms[i]));
  if (bad) {
    std::printf("%d wrong elements\n", bad);
    return 1;
  }
  std::printf("ncclCommInitAll: %d devices allreduced %zu ints\n", n, count);
  return 0;
}
