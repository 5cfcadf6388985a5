/*
 * nccl_device/impl/comm__funcs.h — ncclsim's: the device communicator has
 * no functions of its own beyond core's.
 */
#ifndef NCCLSIM_NCCL_DEVICE_COMM__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_COMM__FUNCS_H_
#include "comm__types.h"
#endif
