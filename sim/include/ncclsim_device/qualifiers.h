/*
 * ncclsim_device/qualifiers.h — CUDA's function and variable qualifiers.
 *
 * Compiled for ncclsim they say nothing: a kernel is a host function that
 * each of a block's fibers calls, and the driver has already rewritten
 * what __shared__ and __device__ variables need. While the driver reads a
 * .cu with libclang (__NCCLSIM_PARSE__) they are clang's CUDA attributes,
 * which is how it finds kernels, launches and shared variables.
 */
#ifndef NCCLSIM_DEVICE_QUALIFIERS_H_
#define NCCLSIM_DEVICE_QUALIFIERS_H_

#if defined(__NCCLSIM_PARSE__)
/* A kernel is CUDA's to clang (a launch must call one); the others are
 * marks the driver reads (a __shared__ variable may then be in any
 * function, as device code is host code here). */
#define __global__ __attribute__((global))
#define __device__ __attribute__((annotate("ncclsim_device")))
#define __host__
#define __shared__ __attribute__((annotate("ncclsim_shared")))
#define __constant__ __attribute__((annotate("ncclsim_constant")))
#define __managed__
#define __launch_bounds__(...)
#else
#define __global__
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#endif
#define __forceinline__ inline __attribute__((always_inline))
/* Empty: libstdc++ writes __attribute__((__noinline__)), which a macro of
 * CUDA's meaning would break; a kernel that is not inlined is no different. */
#define __noinline__
#define __inline_hint__
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define __grid_constant__
#define __cluster_dims__(...)
#define __maxnreg__(n)
#define __device_builtin__
#define __builtin_align__(n) __align__(n)
#define CUDART_CB

#endif
