/*
 * ncclsim_device/prelude.h — what ncclsim's compiler driver includes first
 * in every .cu, as nvcc includes cuda_runtime.h.
 *
 * While the driver reads the file with libclang (__NCCLSIM_PARSE__), every
 * function may be called from device code: on ncclsim device code is host
 * code, and the C library's printf, malloc or memcpy are device code's
 * too. (<new> comes first: its operators are declared for the host by the
 * compiler itself.)
 */
#ifndef NCCLSIM_DEVICE_PRELUDE_H_
#define NCCLSIM_DEVICE_PRELUDE_H_
#if defined(__NCCLSIM_PARSE__)
#include <new>
#pragma clang force_cuda_host_device begin
#endif
#include <cuda_runtime.h>
#endif
