/*
 * nccl_device/impl/lsa_barrier__types.h — ncclsim's: the LSA barrier's
 * handle and session state.
 *
 * A handle names nBarriers barriers in a resource buffer of
 * (3 + team size) * nBarriers 32-bit words (the size NCCL's requirement
 * asks for): word `index` keeps barrier index's epoch between sessions,
 * and from word 3 * nBarriers, barrier index has one word per team member
 * (its inbox), where that member writes the epoch it arrived at.
 */
#ifndef NCCLSIM_NCCL_DEVICE_LSA_BARRIER__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_LSA_BARRIER__TYPES_H_
#include "../lsa_barrier.h"
#include "core__types.h"

struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
};

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclLsaBarrierSession_internal {
  Coop coop;
  ncclDevComm const &comm;
  ncclTeam team;
  ncclLsaBarrierHandle handle;
  int index;
  bool multimem;
  ncclMultimemHandle mmHandle;
  uint32_t epoch; /* arrivals of this rank at barrier index so far */

  /* This rank's saved epoch of barrier index. */
  NCCL_DEVICE_INLINE uint32_t *epochWord();
  /* Team member owner's inbox word for member `from`. */
  NCCL_DEVICE_INLINE uint32_t *inbox(int owner, int from);
  template <bool EnableTimeout>
  NCCL_DEVICE_INLINE ncclResult_t waitInternal(Coop, cuda::memory_order order, uint64_t timeoutCycles);
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_LSA_BARRIER__TYPES_H_ */
