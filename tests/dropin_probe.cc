// tests/dropin_probe.cc — built against the REAL cuda_runtime.h and
// nccl.h and linked with the real -lnccl -lcudart, then run with ncclsim's
// drop-in libraries first in LD_LIBRARY_PATH (tests/dropin.sh): the binary
// interface must hold. Reads cudaDeviceProp fields from its start, middle
// and end (a layout difference shows), NCCL's version, an allreduce, and
// stream priority. Exit 0 = pass.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>

#define CHECK(c)                                                             \
  do {                                                                       \
    if (!(c)) {                                                              \
      std::printf("%s:%d: %s failed\n", __FILE__, __LINE__, #c);             \
      return 1;                                                              \
    }                                                                        \
  } while (0)

int main() {
  cudaDeviceProp p;
  std::memset(&p, 0x5a, sizeof p);
  CHECK(cudaGetDeviceProperties(&p, 1) == cudaSuccess);
  std::printf("device 1: %s, %d.%d, %d SMs, PCI bus %d, L2 %d, max blocks/SM %d, NUMA %d\n", p.name, p.major,
              p.minor, p.multiProcessorCount, p.pciBusID, p.l2CacheSize, p.maxBlocksPerMultiProcessor, p.deviceNumaId);
  // ncclsim's answers; a real GPU would differ in name and bus.
  CHECK(std::strcmp(p.name, "ncclsim device 1") == 0);
  CHECK(p.major == 9 && p.multiProcessorCount == 132 && p.pciBusID == 2);
  CHECK(p.maxBlocksPerMultiProcessor == 32 && p.deviceNumaId == -1 && p.reserved[55] == 0);
  int v = 0;
  CHECK(ncclGetVersion(&v) == ncclSuccess && v == 23007);
  CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && v == 132);
  int lo, hi;
  CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi) == cudaSuccess && lo == 0 && hi == -5);

  ncclComm_t comms[2];
  int devs[2] = {0, 1};
  CHECK(ncclCommInitAll(comms, 2, devs) == ncclSuccess);
  float *buf[2];
  cudaStream_t s[2];
  for (int i = 0; i < 2; i++) {
    CHECK(cudaSetDevice(i) == cudaSuccess);
    CHECK(cudaStreamCreateWithPriority(&s[i], cudaStreamNonBlocking, -1) == cudaSuccess);
    CHECK(cudaMalloc(&buf[i], 256 * sizeof(float)) == cudaSuccess); // the C++ template overload
    float h[256];
    for (int k = 0; k < 256; k++) h[k] = (float)(i + 1);
    CHECK(cudaMemcpy(buf[i], h, sizeof h, cudaMemcpyHostToDevice) == cudaSuccess);
  }
  CHECK(ncclGroupStart() == ncclSuccess);
  for (int i = 0; i < 2; i++) CHECK(ncclAllReduce(buf[i], buf[i], 256, ncclFloat, ncclSum, comms[i], s[i]) == ncclSuccess);
  CHECK(ncclGroupEnd() == ncclSuccess);
  for (int i = 0; i < 2; i++) {
    float h[256];
    CHECK(cudaStreamSynchronize(s[i]) == cudaSuccess);
    CHECK(cudaMemcpy(h, buf[i], sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(h[0] == 3.0f && h[255] == 3.0f);
    CHECK(cudaFree(buf[i]) == cudaSuccess);
    CHECK(cudaStreamDestroy(s[i]) == cudaSuccess);
    CHECK(ncclCommDestroy(comms[i]) == ncclSuccess);
  }
  std::printf("ncclsim drop-in: allreduce on 2 devices ok\n");
  return 0;
}
