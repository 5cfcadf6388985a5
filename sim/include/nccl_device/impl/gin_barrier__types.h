/*
 * nccl_device/impl/gin_barrier__types.h — ncclsim's: the GIN barrier's
 * handle and session state. A handle names the first of nBarriers x team
 * size GIN signals: barrier index's slot for member m is signal
 * signal0 + index * team size + m, on each member.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_BARRIER__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_GIN_BARRIER__TYPES_H_
#include "../gin_barrier.h"
#include "core__types.h"
#include "gin__types.h"

struct ncclGinBarrierHandle {
  ncclGinSignal_t signal0;
  ncclDevResourceHandle_t unused;
};

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclGinBarrierSession_internal {
  Coop coop;
  ncclGin net;
  ncclTeam team;
  ncclGinBarrierHandle handle;
  int index;
  ncclGinSignal_t signal;  /* this barrier's first slot */
  bool fenceAllContexts;   /* made from ncclGinAllContexts */

  template <bool EnableTimeout>
  NCCL_DEVICE_INLINE ncclResult_t syncInternal(Coop, cuda::memory_order ord, ncclGinFenceLevel fence,
                                               uint64_t timeoutCycles);
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_GIN_BARRIER__TYPES_H_ */
