/*
 * ncclsim_device/prelude.h — what ncclsim's compiler driver includes first
 * in every .cu, as nvcc includes cuda_runtime.h.
 */
#ifndef NCCLSIM_DEVICE_PRELUDE_H_
#define NCCLSIM_DEVICE_PRELUDE_H_
#if defined(__NCCLSIM_PARSE__)
/* Every function, the headers' and the program's, is host and device
 * code to clang, as it is one host pass here: a kernel may then take an
 * implicit conversion such as `__half h = 0` (an overload that clang would
 * find on the wrong side is no candidate). Never ended: it holds to the
 * end of the file. */
#if defined(__cplusplus)
/* First, and host code as they must be: clang declares the replaceable
 * operator new and delete itself, and libstdc++ declares std::terminate in
 * its configuration header before <exception> does. */
#include <exception>
#include <new>
#endif
#pragma clang force_cuda_host_device begin
#endif
#include <cuda_runtime.h>
#endif
