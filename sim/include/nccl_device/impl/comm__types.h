/*
 * nccl_device/impl/comm__types.h — ncclsim's: struct ncclDevComm, which is
 * ncclsim's own (<ncclsim_devcomm.h>: NCCL's public fields, the handles of
 * its barriers, and ncclsim's state), with the handle types it holds.
 */
#ifndef NCCLSIM_NCCL_DEVICE_COMM__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_COMM__TYPES_H_
#include "../comm.h"
#include "core__types.h"
#include "ll_a2a__types.h"
#include "lsa_barrier__types.h"
#include "gin_barrier__types.h"
#include "../../ncclsim_devcomm.h"
#endif
