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
/* CUDA's driver_functions.h, which its cuda_runtime.h includes. */
static inline struct cudaPitchedPtr make_cudaPitchedPtr(void *d, size_t p, size_t xsz, size_t ysz) {
  struct cudaPitchedPtr s;
  s.ptr = d;
  s.pitch = p;
  s.xsize = xsz;
  s.ysize = ysz;
  return s;
}
static inline struct cudaPos make_cudaPos(size_t x, size_t y, size_t z) {
  struct cudaPos p;
  p.x = x;
  p.y = y;
  p.z = z;
  return p;
}
static inline struct cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) {
  struct cudaExtent e;
  e.width = w;
  e.height = h;
  e.depth = d;
  return e;
}
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
/* Stream-ordered: any pointer type, and cudaMallocAsync naming a pool. */
static inline cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return ::cudaMallocFromPoolAsync(ptr, size, memPool, stream);
}
template <class T>
static inline cudaError_t cudaMallocAsync(T **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return ::cudaMallocFromPoolAsync(reinterpret_cast<void **>(ptr), size, memPool, stream);
}
template <class T>
static inline cudaError_t cudaMallocAsync(T **ptr, size_t size, cudaStream_t stream) {
  return ::cudaMallocAsync(reinterpret_cast<void **>(ptr), size, stream);
}
template <class T>
static inline cudaError_t cudaMallocFromPoolAsync(T **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) {
  return ::cudaMallocFromPoolAsync(reinterpret_cast<void **>(ptr), size, memPool, stream);
}
#endif
#if defined(__NCCLSIM_NVCC__) && defined(__cplusplus)
/* CUDA's C++ forms of the graph calls that CUDA 12 changed, which its
 * cuda_runtime.h declares for nvcc only (__CUDACC__). */
static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                               cudaGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize) {
  (void)pErrorNode;
  (void)pLogBuffer;
  (void)bufferSize;
  return ::cudaGraphInstantiate(pGraphExec, graph, 0);
}
static inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                              cudaGraphNode_t *hErrorNode_out,
                                              enum cudaGraphExecUpdateResult *updateResult_out) {
  cudaGraphExecUpdateResultInfo resultInfo;
  cudaError_t status = ::cudaGraphExecUpdate(hGraphExec, hGraph, &resultInfo);
  if (hErrorNode_out) *hErrorNode_out = resultInfo.errorNode;
  if (updateResult_out) *updateResult_out = resultInfo.result;
  return status;
}
#include <ncclsim_device/runtime.h>
#endif
#endif
