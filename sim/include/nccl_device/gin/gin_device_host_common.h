/*
 * nccl_device/gin/gin_device_host_common.h — ncclsim's drop-in for NCCL
 * 2.30.7's header of that name: what GIN's host and device sides share
 * (the connection limit, the GIN window handle, the signal operations).
 * ncclsim's GIN windows are its own windows: ncclGinWindow_t is opaque.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_HOST_COMMON_H_
#define NCCLSIM_NCCL_DEVICE_GIN_HOST_COMMON_H_

#include "../net_device.h"
#include "../core.h"

#define NCCL_GIN_MAX_CONNECTIONS 4

typedef struct ncclGinGpuCtx *ncclGinGpuCtx_t;
typedef void *ncclGinWindow_t;

typedef enum ncclGinSignalOp_t {
  ncclGinSignalInc = 0,
  ncclGinSignalAdd,
} ncclGinSignalOp_t;

#endif /* NCCLSIM_NCCL_DEVICE_GIN_HOST_COMMON_H_ */
