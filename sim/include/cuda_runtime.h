/*
 * cuda_runtime.h — ncclsim: the host API (cuda_runtime_api.h), plus what
 * CUDA's cuda_runtime.h brings a host compiler: the make_* vector
 * functions, and <utility> in C++. Compiled by ncclsim's compiler driver
 * (ncclsim-nvcc, which defines __NCCLSIM_NVCC__), also the device side of
 * CUDA's language: qualifiers, threadIdx and the built-ins, launches and
 * the C++ forms of the launch calls (ncclsim_device/runtime.h).
 */
#ifndef NCCLSIM_CUDA_RUNTIME_H_
#define NCCLSIM_CUDA_RUNTIME_H_
#include <cuda_runtime_api.h>
#include <vector_functions.h>
#if defined(__cplusplus)
#include <utility>
#endif
#if defined(__cplusplus)
/* CUDA's C++ forms of the allocation calls: any pointer type. */
template <class T>
static inline cudaError_t cudaMalloc(T **devPtr, size_t size) {
  return cudaMalloc(reinterpret_cast<void **>(devPtr), size);
}
template <class T>
static inline cudaError_t cudaMallocHost(T **ptr, size_t size, unsigned int flags = 0) {
  return flags ? cudaHostAlloc(reinterpret_cast<void **>(ptr), size, flags)
               : cudaMallocHost(reinterpret_cast<void **>(ptr), size);
}
template <class T>
static inline cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) {
  return cudaHostAlloc(reinterpret_cast<void **>(ptr), size, flags);
}
#endif
#if defined(__NCCLSIM_NVCC__) && defined(__cplusplus)
#include <ncclsim_device/runtime.h>
#endif
#endif
