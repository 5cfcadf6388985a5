/*
 * nccl_device/impl/barrier__types.h — ncclsim's: the hybrid barrier's
 * session, an LSA barrier and the GIN barriers it may use, each present
 * or not.
 */
#ifndef NCCLSIM_NCCL_DEVICE_BARRIER__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_BARRIER__TYPES_H_
#include "../barrier.h"
#include "../utility.h"

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclBarrierSession_internal {
  Coop coop;
  nccl::utility::Optional<ncclGin> gin;
  nccl::utility::Optional<ncclLsaBarrierSession<Coop>> innerLsaBar;
  nccl::utility::Optional<ncclGinBarrierSession<Coop>> outerRailGinBar;
  nccl::utility::Optional<ncclGinBarrierSession<Coop>> outerWorldGinBar;

  template <typename GinInit, typename InnerInit, typename OuterInit, typename OuterWorldInit>
  NCCL_DEVICE_INLINE ncclBarrierSession_internal(Coop coop_, GinInit ginInit, InnerInit innerInit, OuterInit outerInit,
                                                 OuterWorldInit outerWorldInit)
      : coop(coop_), gin{ginInit}, innerLsaBar{innerInit}, outerRailGinBar{outerInit},
        outerWorldGinBar{outerWorldInit} {}
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_BARRIER__TYPES_H_ */
