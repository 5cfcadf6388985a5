/*
 * cuda_runtime.h — ncclsim: the host API only (cuda_runtime_api.h), plus
 * what CUDA's cuda_runtime.h brings a host compiler: the make_* vector
 * functions, and <utility> in C++.
 */
#ifndef NCCLSIM_CUDA_RUNTIME_H_
#define NCCLSIM_CUDA_RUNTIME_H_
#include <cuda_runtime_api.h>
#include <vector_functions.h>
#if defined(__cplusplus)
#include <utility>
#endif
#endif
