// examples/nccl/sendrecv_ring.cc — point-to-point in a ring: every rank
// sends its buffer to the next and receives from the previous, the sends
// and receives of all ranks in one group (one thread, ncclCommInitAll).
#include <nccl.h>
#include <cuda_runtime.h>

#include <vector>

#include "check.h"

int main() {
  const size_t count = 4096;
  int n = example_devices(4);
  std::vector<ncclComm_t> comms(n);
  NCCLCHECK(ncclCommInitAll(comms.data(), n, nullptr)); // devices 0..n-1
  std::vector<double *> send(n), recv(n);
  std::vector<cudaStream_t> streams(n);
  std::vector<double> host(count);
  for (int r = 0; r < n; r++) {
    CUDACHECK(cudaSetDevice(r));
    CUDACHECK(cudaStreamCreate(&streams[r]));
    CUDACHECK(cudaMalloc((void **)&send[r], count * sizeof(double)));
    CUDACHECK(cudaMalloc((void **)&recv[r], count * sizeof(double)));
    for (size_t i = 0; i < count; i++) host[i] = r * 1000.0 + (double)i;
    CUDACHECK(cudaMemcpy(send[r], host.data(), count * sizeof(double), cudaMemcpyHostToDevice));
  }
  NCCLCHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) {
    NCCLCHECK(ncclSend(send[r], count, ncclDouble, (r + 1) % n, comms[r], streams[r]));
    NCCLCHECK(ncclRecv(recv[r], count, ncclDouble, (r + n - 1) % n, comms[r], streams[r]));
  }
  NCCLCHECK(ncclGroupEnd());
  int bad = 0;
  for (int r = 0; r < n; r++) {
    CUDACHECK(cudaSetDevice(r));
    CUDACHECK(cudaStreamSynchronize(streams[r]));
    CUDACHECK(cudaMemcpy(host.data(), recv[r], count * sizeof(double), cudaMemcpyDeviceToHost));
    int from = (r + n - 1) % n;
    for (size_t i = 0; i < count; i++) bad += host[i] != from * 1000.0 + (double)i;
    CUDACHECK(cudaFree(send[r]));
    CUDACHECK(cudaFree(recv[r]));
    CUDACHECK(cudaStreamDestroy(streams[r]));
    NCCLCHECK(ncclCommDestroy(comms[r]));
  }
  if (bad) {
    std::printf("%d wrong elements\n", bad);
    return 1;
  }
  std::printf("send/recv ring: %d ranks passed %zu doubles on\n", n, count);
  return 0;
}
