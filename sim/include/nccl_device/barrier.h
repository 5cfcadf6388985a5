/*
 * nccl_device/barrier.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/barrier.h>: the hybrid barrier, an LSA barrier inside each
 * LSA team and a GIN barrier across them (the rail team; or the world
 * team when the fence must reach every rank's puts). A device
 * communicator has barrierCount of them (devComm.hybridLsaBarrier and
 * hybridRailGinBarrier/hybridWorldGinBarrier), which need GIN.
 */
#ifndef NCCLSIM_NCCL_DEVICE_BARRIER_H_
#define NCCLSIM_NCCL_DEVICE_BARRIER_H_
#include "impl/core__types.h"
#include "impl/lsa_barrier__types.h"
#include "impl/gin_barrier__types.h"

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclBarrierSession_internal;

template <typename Coop>
struct ncclBarrierSession : ncclBarrierSession_internal<Coop> {
  /* Full-featured: the inner (LSA) and outer (GIN) teams and handles. */
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop, ncclTeam innerTeam, ncclTeam outerTeam, ncclGin,
                                        ncclLsaBarrierHandle innerBarHandle, ncclGinBarrierHandle outerBarHandle,
                                        uint32_t index, bool multimem = false, ncclMultimemHandle innerMmHandle = {});
  /* The device communicator's own barriers. */
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop, ncclTeamTagWorld, ncclGin, uint32_t index, bool multimem = false);
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop, ncclTeamTagLsa, ncclDevComm const &, uint32_t index,
                                        bool multimem = false);
  NCCL_DEVICE_INLINE ncclBarrierSession(Coop, ncclTeamTagRail, ncclGin, uint32_t index);

  ncclBarrierSession(ncclBarrierSession const &) = delete; /* sessions are not copyable */

  NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop> &lsaBarrier();
  NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop> &ginBarrier();

  NCCL_DEVICE_INLINE void sync(Coop, cuda::memory_order,
                               ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
  NCCL_DEVICE_INLINE ncclResult_t sync(Coop, cuda::memory_order, ncclGinFenceLevel, uint64_t timeoutCycles);

private:
  NCCL_DEVICE_INLINE bool useWorldForFence(ncclGinFenceLevel fence) const;
};

/* Construct, sync, destroy: a one-shot hybrid barrier. */
template <typename Coop>
NCCL_DEVICE_INLINE void ncclBarrier(Coop, ncclTeamTagWorld, ncclGin, uint32_t index,
                                    cuda::memory_order = cuda::memory_order_acq_rel,
                                    ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get,
                                    bool multimem = false);
template <typename Coop>
NCCL_DEVICE_INLINE void ncclBarrier(Coop, ncclTeamTagRail, ncclGin, uint32_t index,
                                    cuda::memory_order = cuda::memory_order_acq_rel,
                                    ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
#endif

#endif /* NCCLSIM_NCCL_DEVICE_BARRIER_H_ */
