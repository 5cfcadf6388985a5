// examples/nccl/half_allreduce.cc — allreduce of __half and
// __nv_bfloat16 buffers, converted on the host with CUDA's own functions
// (__float2half, __half2float, __float2bfloat16, __bfloat162float), which
// nccl.h brings as NCCL's does. Values are chosen exact in both formats,
// so the sums are too.
#include <nccl.h>
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "check.h"

template <class T, class ToT, class FromT>
static int run(const char *what, ncclDataType_t type, ToT to, FromT from, const std::vector<ncclComm_t> &comms) {
  const size_t count = 1024;
  int n = (int)comms.size(), bad = 0;
  std::vector<T *> buf(n);
  std::vector<cudaStream_t> streams(n);
  std::vector<T> host(count);
  for (int r = 0; r < n; r++) {
    CUDACHECK(cudaSetDevice(r));
    CUDACHECK(cudaStreamCreate(&streams[r]));
    CUDACHECK(cudaMalloc((void **)&buf[r], count * sizeof(T)));
    for (size_t i = 0; i < count; i++) host[i] = to((float)(i % 16) * 0.25f + (float)r);
    CUDACHECK(cudaMemcpy(buf[r], host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  NCCLCHECK(ncclGroupStart());
  for (int r = 0; r < n; r++) NCCLCHECK(ncclAllReduce(buf[r], buf[r], count, type, ncclSum, comms[r], streams[r]));
  NCCLCHECK(ncclGroupEnd());
  for (int r = 0; r < n; r++) {
    CUDACHECK(cudaSetDevice(r));
    CUDACHECK(cudaStreamSynchronize(streams[r]));
    CUDACHECK(cudaMemcpy(host.data(), buf[r], count * sizeof(T), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++) {
      float want = (float)n * (float)(i % 16) * 0.25f + (float)(n * (n - 1) / 2);
      if (from(host[i]) != want) bad++;
    }
    CUDACHECK(cudaFree(buf[r]));
    CUDACHECK(cudaStreamDestroy(streams[r]));
  }
  std::printf("%s allreduce on %d devices: %s\n", what, n, bad ? "WRONG" : "ok");
  return bad;
}

int main() {
  int n = example_devices(4);
  std::vector<ncclComm_t> comms(n);
  NCCLCHECK(ncclCommInitAll(comms.data(), n, nullptr));
  int bad = run<__half>("__half", ncclFloat16, __float2half, __half2float, comms);
  bad += run<__nv_bfloat16>("__nv_bfloat16", ncclBfloat16, __float2bfloat16, __bfloat162float, comms);
  // CUDA's headers bring <cstring> with them; programs rely on it.
  __half h = __float2half(1.5f);
  unsigned short bits;
  std::memcpy(&bits, &h, sizeof bits);
  if (bits != 0x3e00) bad++;
  for (auto c : comms) NCCLCHECK(ncclCommDestroy(c));
  return bad != 0;
}
