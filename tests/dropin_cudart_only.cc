// tests/dropin_cudart_only.cc — a program of the CUDA runtime alone, built
// against the real cuda_runtime.h and linked with the real -lcudart only,
// then run on ncclsim's drop-in libcudart.so.13 (tests/dropin.sh): the
// drop-in must bring the simulator (libnccl.so.2) with it.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
    std::printf("FAIL: cudaGetDeviceCount: %d devices\n", n);
    return 1;
  }
  int *d = nullptr, in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
  if (cudaMalloc(&d, sizeof in) != cudaSuccess || cudaMemcpy(d, in, sizeof in, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost) != cudaSuccess || std::memcmp(in, out, sizeof in) != 0) {
    std::printf("FAIL: a round trip through device memory\n");
    return 1;
  }
  cudaFree(d);
  std::printf("ok: %d devices, a round trip through device memory\n", n);
  return 0;
}
