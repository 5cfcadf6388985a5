/*
 * cuda.h — the CUDA driver API's version and handle types, as CUDA 13's
 * <cuda.h> has them, for programs that include it for those alone
 * (nccl-tests does). ncclsim has no driver API: no cu* function is
 * declared, so a program that calls one fails to compile, naming it,
 * rather than to link. The handles are the runtime's own (a cudaStream_t
 * is a CUstream), as in CUDA.
 */
#ifndef NCCLSIM_CUDA_H_
#define NCCLSIM_CUDA_H_

#include <stddef.h>

#define CUDA_VERSION 13000 /* CUDA 13.0, as ncclsim's runtime reports (CUDART_VERSION) */

typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr; /* a device address */
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice; /* a device ordinal */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUmemPoolHandle_st *CUmemoryPool;

/* The driver's status codes a host program tests for; the values are
 * CUDA 13's. */
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999
} CUresult;

#endif
