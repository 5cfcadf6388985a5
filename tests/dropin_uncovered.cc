// tests/dropin_uncovered.cc — calls a CUDA runtime function that ncclsim
// does not simulate (cudaGetDeviceFlags). Run on ncclsim's drop-in
// libraries, the dynamic loader must stop it with a message naming the
// function (tests/dropin.sh), not let it crash.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  unsigned flags = 0;
  std::printf("calling cudaGetDeviceFlags\n");
  std::fflush(stdout);
  return cudaGetDeviceFlags(&flags) == cudaSuccess ? 0 : 2;
}
