/*
 * nccl_device/impl/gin__types.h — ncclsim's: what gin.h's types need.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_GIN__TYPES_H_
#include "../gin.h"
#include "core__types.h"
#endif
