/*
 * nccl_device/impl/core__types.h — ncclsim's: the types of core.h's API.
 * A window handle (ncclWindow_t) is ncclsim's own, opaque to programs;
 * kernels reach its memory through ncclGet*Pointer (sim/dev/window.c).
 */
#ifndef NCCLSIM_NCCL_DEVICE_CORE__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_CORE__TYPES_H_
#include "../core.h"
#include "../gin/gin_device_host_common.h"

/* A multicast handle; ncclsim has no multicast, so mcBasePtr stays NULL. */
struct ncclMultimemHandle {
  void *mcBasePtr;
};

#endif /* NCCLSIM_NCCL_DEVICE_CORE__TYPES_H_ */
