/*
 * nccl_device/impl/ptr__types.h — ncclsim's: what ptr.h needs.
 */
#ifndef NCCLSIM_NCCL_DEVICE_PTR__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_PTR__TYPES_H_
#include "../ptr.h"
#include "core__types.h"
#endif
