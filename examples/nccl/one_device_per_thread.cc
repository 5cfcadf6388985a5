// examples/nccl/one_device_per_thread.cc — NCCL's "one device per thread"
// example: rank 0 makes the unique id, every thread creates its
// communicator with ncclCommInitRank on its own device and allreduces.
// Host-only C++: builds unchanged against CUDA and NCCL, or ncclsim.
#include <nccl.h>
#include <cuda_runtime.h>

#include <thread>
#include <vector>

#include "check.h"

static const size_t kCount = 1 << 16;

static void rank_main(int rank, int nranks, ncclUniqueId id, int *ok) {
  CUDACHECK(cudaSetDevice(rank));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t s;
  CUDACHECK(cudaStreamCreate(&s));
  float *buf;
  CUDACHECK(cudaMalloc((void **)&buf, kCount * sizeof(float)));
  std::vector<float> host(kCount);
  for (size_t i = 0; i < kCount; i++) host[i] = (float)(rank + 1) * (float)(i % 7);
  CUDACHECK(cudaMemcpyAsync(buf, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice, s));
  NCCLCHECK(ncclAllReduce(buf, buf, kCount, ncclFloat, ncclSum, comm, s));
  CUDACHECK(cudaMemcpyAsync(host.data(), buf, kCount * sizeof(float), cudaMemcpyDeviceToHost, s));
  CUDACHECK(cudaStreamSynchronize(s));
  float ranks_sum = (float)(nranks * (nranks + 1) / 2);
  *ok = 1;
  for (size_t i = 0; i < kCount; i++)
    if (host[i] != ranks_sum * (float)(i % 7)) *ok = 0;
  CUDACHECK(cudaFree(buf));
  CUDACHECK(cudaStreamDestroy(s));
  NCCLCHECK(ncclCommFinalize(comm));
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
  std::printf("one device per thread: %d ranks allreduced %zu floats\n", nranks, kCount);
  return 0;
}
