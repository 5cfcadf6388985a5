/*
 * nccl_device.h — ncclsim's drop-in for NCCL's <nccl_device.h>: the device
 * API of NCCL 2.30.7.
 *
 * Laid out as NCCL's: a face per API under nccl_device/ (core, coop, ptr,
 * lsa_barrier, gin, gin_barrier, barrier, ll_a2a, reduce_copy), its types
 * in nccl_device/impl/x__types.h and its code in impl/x__funcs.h, which
 * this header includes, as NCCL's does.
 *
 * The host part (device communicators, properties, requirements, window
 * pointers, teams) is plain C and also compiles as C++, so C programs can
 * create device communicators on ncclsim. The device part (kernels' side:
 * teams of a device communicator, cooperation types, window pointers,
 * barrier sessions, GIN, the LL all-to-all, reduce-copy) is C++, declared
 * where CUDA code is compiled (NCCL_CHECK_CUDACC): with ncclsim's compiler
 * driver (ncclsim-nvcc), kernels written for NCCL compile unchanged and
 * run on ncclsim's CPU threads (sim/kernel/), their device-API calls
 * carried out by libncclsim (sim/dev/). struct ncclDevComm is ncclsim's
 * own (<ncclsim_devcomm.h>).
 */
#ifndef NCCLSIM_NCCL_DEVICE_H_
#define NCCLSIM_NCCL_DEVICE_H_

#include "nccl_device/coop.h"
#include "nccl_device/impl/barrier__funcs.h"
#include "nccl_device/impl/comm__funcs.h"
#include "nccl_device/impl/core__funcs.h"
#include "nccl_device/impl/ll_a2a__funcs.h"
#include "nccl_device/impl/lsa_barrier__funcs.h"
#include "nccl_device/impl/gin__funcs.h"
#include "nccl_device/impl/gin_barrier__funcs.h"
#include "nccl_device/impl/ptr__funcs.h"
#include "nccl_device/impl/reduce_copy__funcs.h"

#endif /* NCCLSIM_NCCL_DEVICE_H_ */
