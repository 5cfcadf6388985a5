/*
 * nccl_device/lsa_barrier.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/lsa_barrier.h>: barriers among the ranks of an LSA team,
 * through each other's memory.
 *
 * A device communicator has lsaBarrierCount of them (devComm.lsaBarrier);
 * a library can ask for more with ncclLsaBarrierCreateRequirement. A
 * session is one block's (or one coop's) use of barrier `index`: arrive
 * tells every peer this rank got here, wait waits until every peer has
 * arrived as often, sync is both. The memory order says what the barrier
 * orders: release on arrive (this rank's writes before it are seen by the
 * peers after their wait), acquire on wait (the peers' writes before
 * their arrive are seen here). On ncclsim, index beyond the handle's
 * count is a kernel fault, and a wait that cannot complete ends at
 * NCCLSIM_TIMEOUT with a report naming the peers that have not arrived.
 */
#ifndef NCCLSIM_NCCL_DEVICE_LSA_BARRIER_H_
#define NCCLSIM_NCCL_DEVICE_LSA_BARRIER_H_
#include "impl/core__types.h"

struct ncclLsaBarrierHandle;

/* The resource requirement of nBarriers barriers among `team`'s ranks:
 * fills *outReq (its buffer's size and alignment; outBufferHandle points
 * to outHandle's) and outHandle's count. Chain outReq into a device
 * communicator's resourceRequirementsList; ncclDevCommCreate sets the
 * handle's buffer. ncclInvalidArgument for NULL pointers or a negative
 * count (NCCL checks neither). Thread-safe. */
NCCL_EXTERN_C __host__ ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers,
                                                                    ncclLsaBarrierHandle_t *outHandle,
                                                                    ncclDevResourceRequirements_t *outReq);

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclLsaBarrierSession_internal;

template <typename Coop>
struct ncclLsaBarrierSession : ncclLsaBarrierSession_internal<Coop> {
  NCCL_DEVICE_INLINE ncclLsaBarrierSession(Coop, ncclDevComm const &, ncclTeam, ncclLsaBarrierHandle, uint32_t index,
                                           bool multimem = false, ncclMultimemHandle mmHandle = {});
  NCCL_DEVICE_INLINE ncclLsaBarrierSession(Coop, ncclDevComm const &, ncclTeamTagLsa, uint32_t index,
                                           bool multimem = false);
  NCCL_DEVICE_INLINE ~ncclLsaBarrierSession();

  ncclLsaBarrierSession(ncclLsaBarrierSession const &) = delete; /* sessions are not copyable */

  NCCL_DEVICE_INLINE void arrive(Coop, cuda::memory_order);
  NCCL_DEVICE_INLINE void wait(Coop, cuda::memory_order);
  NCCL_DEVICE_INLINE void sync(Coop, cuda::memory_order);
  /* timeoutCycles of clock64(): ncclTimeout when they pass first. */
  NCCL_DEVICE_INLINE ncclResult_t wait(Coop, cuda::memory_order, uint64_t timeoutCycles);
  NCCL_DEVICE_INLINE ncclResult_t sync(Coop, cuda::memory_order, uint64_t timeoutCycles);
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_LSA_BARRIER_H_ */
