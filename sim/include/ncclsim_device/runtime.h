/*
 * ncclsim_device/runtime.h — CUDA's device language on ncclsim, for the C++
 * that ncclsim's compiler driver makes of a .cu (cuda_runtime.h includes it
 * there). Each header of this folder is one part:
 *
 *   qualifiers.h   __global__, __device__, __shared__, __launch_bounds__, ...
 *   abi.h          what these headers and libncclsim share (threadIdx, ...)
 *   launch.h       launches (k<<<...>>>, cudaLaunchKernel<T>, cudaLaunchKernelEx),
 *                  kernels' prologues, __shared__ and __device__ variables,
 *                  the C++ overloads of the calls on kernels and symbols
 *   sync.h         __syncthreads, warp exchanges and votes, fences, clocks
 *   atomic.h       atomicAdd and the other atomic functions
 *   intrinsics.h   integer and floating-point intrinsics, min/max, __ldg
 *   ptx.h          what the driver turns inline PTX into
 *
 * What CUDA's headers say with __CUDA_ARCH__ is not defined here: ncclsim
 * compiles one pass, for the host, and device code takes the paths a host
 * compile takes (docs/ncclsim.md, "Kernels").
 */
#ifndef NCCLSIM_DEVICE_RUNTIME_H_
#define NCCLSIM_DEVICE_RUNTIME_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <ncclsim_device/qualifiers.h>
#include <ncclsim_device/abi.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#if defined(__NCCLSIM_PARSE__)
/* What clang turns <<<...>>> into, for the driver's reading of the file. */
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                               struct CUstream_st *stream = 0);
#endif

/* CUDA declares it a device variable; a constant serves every use. */
static constexpr int warpSize = 32;

#include <ncclsim_device/launch.h>
#include <ncclsim_device/sync.h>
#include <ncclsim_device/atomic.h>
#include <ncclsim_device/intrinsics.h>
#include <ncclsim_device/ptx.h>

#endif
