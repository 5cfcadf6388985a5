/* cuda_runtime.h — ncclsim: the host API only; see cuda_runtime_api.h. */
#ifndef NCCLSIM_CUDA_RUNTIME_H_
#define NCCLSIM_CUDA_RUNTIME_H_
#include <cuda_runtime_api.h>
#endif
