// examples/nccl/allreduce_registered.cc — allreduce with user buffer
// registration: each rank registers its buffers with ncclCommRegister
// once, reuses them for several allreduces, and deregisters them before
// freeing. One thread per rank.
#include <nccl.h>
#include <cuda_runtime.h>

#include <thread>
#include <vector>

#include "check.h"

static const size_t kCount = 1 << 15;
static const int kIters = 5;

static void rank_main(int rank, int nranks, ncclUniqueId id, int *ok) {
  CUDACHECK(cudaSetDevice(rank));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t s;
  CUDACHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int64_t *send, *recv;
  CUDACHECK(cudaMalloc((void **)&send, kCount * sizeof(int64_t)));
  CUDACHECK(cudaMalloc((void **)&recv, kCount * sizeof(int64_t)));
  void *send_handle, *recv_handle;
  NCCLCHECK(ncclCommRegister(comm, send, kCount * sizeof(int64_t), &send_handle));
  NCCLCHECK(ncclCommRegister(comm, recv, kCount * sizeof(int64_t), &recv_handle));
  std::vector<int64_t> host(kCount);
  *ok = 1;
  for (int it = 0; it < kIters; it++) {
    for (size_t i = 0; i < kCount; i++) host[i] = (int64_t)(rank + it) * (int64_t)i;
    CUDACHECK(cudaMemcpyAsync(send, host.data(), kCount * sizeof(int64_t), cudaMemcpyHostToDevice, s));
    NCCLCHECK(ncclAllReduce(send, recv, kCount, ncclInt64, ncclSum, comm, s));
    CUDACHECK(cudaMemcpyAsync(host.data(), recv, kCount * sizeof(int64_t), cudaMemcpyDeviceToHost, s));
    CUDACHECK(cudaStreamSynchronize(s));
    int64_t factor = (int64_t)nranks * (nranks - 1) / 2 + (int64_t)nranks * it;
    for (size_t i = 0; i < kCount; i++)
      if (host[i] != factor * (int64_t)i) *ok = 0;
  }
  NCCLCHECK(ncclCommDeregister(comm, send_handle));
  NCCLCHECK(ncclCommDeregister(comm, recv_handle));
  CUDACHECK(cudaFree(send));
  CUDACHECK(cudaFree(recv));
  CUDACHECK(cudaStreamDestroy(s));
  NCCLCHECK(ncclCommDestroy(comm));
}

int main() {
  int nranks = example_devices(4);
  ncclUniqueId id;
  NCCLCHECK(ncclGetUniqueId(&id));
  std::vector<std::thread> threads;
  std::vector<int> ok(nranks, 0);
  for (int r = 0; r < nranks; r++) threads.emplace_back(rank_main, r, nranks, id, &ok[r]);
  for (auto &t : threads) t.join();
  for (int r = 0; r < nranks; r++)
    if (!ok[r]) {
      std::printf("rank %d: wrong sum\n", r);
      return 1;
    }
  std::printf("registered buffers: %d ranks, %d allreduces of %zu int64\n", nranks, kIters, kCount);
  return 0;
}
