/*
 * ncclsim_device/prelude.h — what ncclsim's compiler driver includes first
 * in every .cu, as nvcc includes cuda_runtime.h.
 */
#ifndef NCCLSIM_DEVICE_PRELUDE_H_
#define NCCLSIM_DEVICE_PRELUDE_H_
#include <cuda_runtime.h>
#endif
