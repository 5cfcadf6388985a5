/*
 * nccl_device/gin_barrier.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/gin_barrier.h>: barriers over GIN, among any team (the
 * rail team, the world), built on GIN signals: each rank signals every
 * peer's slot for it and waits for every peer's signal in its own.
 *
 * The fence level says what else the barrier drains: Put (puts that
 * peers issued to this rank before the barrier are visible after it),
 * Get (this rank's gets have landed), None (synchronization only).
 * ncclGinAllContexts(comm) in place of an ncclGin fences every GIN
 * context of the communicator. On ncclsim, a barrier index beyond the
 * handle's count is a kernel fault, and a wait that cannot complete ends
 * at NCCLSIM_TIMEOUT with a report.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_BARRIER_H_
#define NCCLSIM_NCCL_DEVICE_GIN_BARRIER_H_
#include "core.h"
#include "gin.h"

struct ncclGinBarrierHandle;

/* The resource requirement of nBarriers GIN barriers among `team`'s
 * ranks: team.nRanks signals each (outReq's ginSignalCount); the
 * handle's first signal is set by ncclDevCommCreate. ncclInvalidArgument
 * for NULL pointers or a negative count (NCCL checks neither; it does
 * not read comm either). Thread-safe. */
NCCL_EXTERN_C __host__ ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                                                    ncclGinBarrierHandle_t *outHandle,
                                                                    ncclDevResourceRequirements_t *outReq);

#if NCCL_CHECK_CUDACC
/* Bit flags: Put and Get compose with |. */
enum ncclGinFenceLevel : uint32_t {
  None = 0,
  Put = 1u << 0,
  Get = 1u << 1,
  Relaxed = None, /* deprecated alias of None */
};

NCCL_HOST_DEVICE_INLINE constexpr ncclGinFenceLevel operator|(ncclGinFenceLevel a, ncclGinFenceLevel b) {
  return static_cast<ncclGinFenceLevel>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
NCCL_HOST_DEVICE_INLINE constexpr ncclGinFenceLevel operator&(ncclGinFenceLevel a, ncclGinFenceLevel b) {
  return static_cast<ncclGinFenceLevel>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}

/* Every GIN context of comm, in place of one ncclGin. */
struct ncclGinAllContexts {
  ncclDevComm const &comm;
  NCCL_HOST_DEVICE_INLINE constexpr ncclGinAllContexts(ncclDevComm const &comm_) : comm(comm_) {}
};

template <typename Coop>
struct ncclGinBarrierSession_internal;

template <typename Coop>
struct ncclGinBarrierSession : ncclGinBarrierSession_internal<Coop> {
  NCCL_DEVICE_INLINE ncclGinBarrierSession(Coop, ncclGin, ncclTeam, ncclGinBarrierHandle, uint32_t index);
  NCCL_DEVICE_INLINE ncclGinBarrierSession(Coop, ncclGin, ncclTeamTagRail, uint32_t index);
  NCCL_DEVICE_INLINE ncclGinBarrierSession(Coop, ncclGin, ncclTeamTagWorld, uint32_t index);
  NCCL_DEVICE_INLINE ncclGinBarrierSession(Coop, ncclGinAllContexts, ncclTeam, ncclGinBarrierHandle, uint32_t index);
  NCCL_DEVICE_INLINE ncclGinBarrierSession(Coop, ncclGinAllContexts, ncclTeamTagRail, uint32_t index);
  NCCL_DEVICE_INLINE ncclGinBarrierSession(Coop, ncclGinAllContexts, ncclTeamTagWorld, uint32_t index);
  NCCL_DEVICE_INLINE ~ncclGinBarrierSession();

  ncclGinBarrierSession(ncclGinBarrierSession const &) = delete; /* sessions are not copyable */

  NCCL_DEVICE_INLINE void sync(Coop, cuda::memory_order,
                               ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
  NCCL_DEVICE_INLINE ncclResult_t sync(Coop, cuda::memory_order, ncclGinFenceLevel, uint64_t timeoutCycles);
};

/* Construct, sync, destroy: a one-shot GIN barrier. */
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop, ncclGin, ncclTeam, ncclGinBarrierHandle, uint32_t index,
                                       cuda::memory_order = cuda::memory_order_acq_rel,
                                       ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop, ncclGin, ncclTeamTagRail, uint32_t index,
                                       cuda::memory_order = cuda::memory_order_acq_rel,
                                       ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop, ncclGin, ncclTeamTagWorld, uint32_t index,
                                       cuda::memory_order = cuda::memory_order_acq_rel,
                                       ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop, ncclGinAllContexts, ncclTeam, ncclGinBarrierHandle, uint32_t index,
                                       cuda::memory_order = cuda::memory_order_acq_rel,
                                       ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop, ncclGinAllContexts, ncclTeamTagRail, uint32_t index,
                                       cuda::memory_order = cuda::memory_order_acq_rel,
                                       ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop, ncclGinAllContexts, ncclTeamTagWorld, uint32_t index,
                                       cuda::memory_order = cuda::memory_order_acq_rel,
                                       ncclGinFenceLevel = ncclGinFenceLevel::Put | ncclGinFenceLevel::Get);
#endif

#endif /* NCCLSIM_NCCL_DEVICE_GIN_BARRIER_H_ */
