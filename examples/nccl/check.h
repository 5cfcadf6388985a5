// examples/nccl/check.h — the error checks NCCL's documentation puts in
// every example: a failed call prints where and why, and exits 1.
#ifndef EXAMPLES_NCCL_CHECK_H_
#define EXAMPLES_NCCL_CHECK_H_
#include <cstdio>
#include <cstdlib>

#define CUDACHECK(cmd)                                                                        \
  do {                                                                                        \
    cudaError_t e_ = (cmd);                                                                   \
    if (e_ != cudaSuccess) {                                                                  \
      std::printf("%s:%d: CUDA error '%s': %s\n", __FILE__, __LINE__, cudaGetErrorString(e_), #cmd); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

#define NCCLCHECK(cmd)                                                                        \
  do {                                                                                        \
    ncclResult_t r_ = (cmd);                                                                  \
    if (r_ != ncclSuccess) {                                                                  \
      std::printf("%s:%d: NCCL error '%s': %s\n", __FILE__, __LINE__, ncclGetErrorString(r_), #cmd); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// Up to `want` devices, at least one: the examples run on one GPU too.
static inline int example_devices(int want) {
  int n = 0;
  CUDACHECK(cudaGetDeviceCount(&n));
  return n < want ? n : want;
}
#endif
