// examples/nccl/symmetric_windows.cc — collectives in symmetric memory:
// buffers from ncclMemAlloc, registered collectively as windows with
// NCCL_WIN_COLL_SYMMETRIC, then an allreduce and an allgather on them.
// One thread per rank (window registration is collective).
#include <nccl.h>
#include <cuda_runtime.h>

#include <thread>
#include <vector>

#include "check.h"

static const size_t kCount = 8192; // per rank

static void rank_main(int rank, int nranks, ncclUniqueId id, int *ok) {
  CUDACHECK(cudaSetDevice(rank));
  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t s;
  CUDACHECK(cudaStreamCreate(&s));
  size_t bytes = kCount * nranks * sizeof(float);
  float *send, *recv;
  NCCLCHECK(ncclMemAlloc((void **)&send, bytes));
  NCCLCHECK(ncclMemAlloc((void **)&recv, bytes));
  ncclWindow_t send_win, recv_win;
  NCCLCHECK(ncclCommWindowRegister(comm, send, bytes, &send_win, NCCL_WIN_COLL_SYMMETRIC));
  NCCLCHECK(ncclCommWindowRegister(comm, recv, bytes, &recv_win, NCCL_WIN_COLL_SYMMETRIC));

  std::vector<float> host(kCount * nranks);
  for (size_t i = 0; i < kCount; i++) host[i] = (float)rank + 0.5f * (float)(i % 4);
  CUDACHECK(cudaMemcpyAsync(send, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice, s));
  NCCLCHECK(ncclAllReduce(send, recv, kCount, ncclFloat, ncclSum, comm, s));
  CUDACHECK(cudaMemcpyAsync(host.data(), recv, kCount * sizeof(float), cudaMemcpyDeviceToHost, s));
  CUDACHECK(cudaStreamSynchronize(s));
  *ok = 1;
  float ranks = (float)(nranks * (nranks - 1) / 2);
  for (size_t i = 0; i < kCount; i++)
    if (host[i] != ranks + (float)nranks * 0.5f * (float)(i % 4)) *ok = 0;

  // Allgather: rank r contributes kCount copies of r.
  for (size_t i = 0; i < kCount; i++) host[i] = (float)rank;
  CUDACHECK(cudaMemcpyAsync(send, host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice, s));
  NCCLCHECK(ncclAllGather(send, recv, kCount, ncclFloat, comm, s));
  CUDACHECK(cudaMemcpyAsync(host.data(), recv, bytes, cudaMemcpyDeviceToHost, s));
  CUDACHECK(cudaStreamSynchronize(s));
  for (size_t i = 0; i < kCount * nranks; i++)
    if (host[i] != (float)(i / kCount)) *ok = 0;

  NCCLCHECK(ncclCommWindowDeregister(comm, send_win));
  NCCLCHECK(ncclCommWindowDeregister(comm, recv_win));
  NCCLCHECK(ncclMemFree(send));
  NCCLCHECK(ncclMemFree(recv));
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
      std::printf("rank %d: wrong result\n", r);
      return 1;
    }
  std::printf("symmetric windows: %d ranks, allreduce and allgather of %zu floats each\n", nranks, kCount);
  return 0;
}
