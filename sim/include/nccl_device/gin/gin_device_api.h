/*
 * nccl_device/gin/gin_device_api.h — ncclsim's drop-in for NCCL 2.30.7's
 * header of that name, which brings the GIN backends' device code. On
 * ncclsim the backends are in libncclsim (sim/dev/gin*.c): this is the
 * common part only.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_DEVICE_API_H_
#define NCCLSIM_NCCL_DEVICE_GIN_DEVICE_API_H_
#include "gin_device_common.h"
#endif
