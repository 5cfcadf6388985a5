/*
 * nccl_device/comm.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/comm.h>: the device communicator's face, which is core.h
 * (struct ncclDevComm itself is in impl/comm__types.h).
 */
#ifndef NCCLSIM_NCCL_DEVICE_COMM_H_
#define NCCLSIM_NCCL_DEVICE_COMM_H_
#include "core.h"
#endif
