/*
 * nccl_device/impl/barrier__funcs.h — ncclsim's hybrid barrier: the LSA
 * barrier of this rank's LSA team, then the GIN barrier of its rail (a
 * rank's rail peers pass their own LSA barriers before they signal, so
 * the pair reaches every rank). The first releases, the second acquires.
 * With the Put fence and a world GIN barrier (and contexts not railed),
 * the world GIN barrier alone, which drains every rank's puts.
 */
#ifndef NCCLSIM_NCCL_DEVICE_BARRIER__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_BARRIER__FUNCS_H_
#include "barrier__types.h"
#include "lsa_barrier__funcs.h"
#include "gin_barrier__funcs.h"
#include "../utility.h"

#if NCCL_CHECK_CUDACC
template <typename Coop>
NCCL_DEVICE_INLINE ncclBarrierSession<Coop>::ncclBarrierSession(Coop coop, ncclTeam innerTeam, ncclTeam outerTeam,
                                                                ncclGin gin, ncclLsaBarrierHandle innerHandle,
                                                                ncclGinBarrierHandle outerHandle, uint32_t index,
                                                                bool multimem, ncclMultimemHandle innerMmHandle)
    : ncclBarrierSession_internal<Coop>(
          coop, nccl::utility::present(gin),
          nccl::utility::present(coop, gin.comm, innerTeam, innerHandle, index, multimem, innerMmHandle),
          nccl::utility::present(coop, gin, outerTeam, outerHandle, index), nccl::utility::Absent()) {}

template <typename Coop>
NCCL_DEVICE_INLINE ncclBarrierSession<Coop>::ncclBarrierSession(Coop coop, ncclTeamTagWorld, ncclGin gin,
                                                                uint32_t index, bool multimem)
    : ncclBarrierSession_internal<Coop>(
          coop, nccl::utility::present(gin),
          nccl::utility::present(coop, gin.comm, ncclTeamLsa(gin.comm), gin.comm.hybridLsaBarrier, index, multimem,
                                 gin.comm.lsaMultimem),
          nccl::utility::present(coop, gin, ncclTeamRail(gin.comm), gin.comm.hybridRailGinBarrier, index),
          nccl::utility::present(coop, gin, ncclTeamWorld(gin.comm), gin.comm.hybridWorldGinBarrier, index)) {
  ncclsim::dev::checkGinBarrierIndex(index, gin.comm.barrierCount, "hybrid barrier(s) (barrierCount)");
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclBarrierSession<Coop>::ncclBarrierSession(Coop coop, ncclTeamTagLsa, ncclDevComm const &comm,
                                                                uint32_t index, bool multimem)
    : ncclBarrierSession_internal<Coop>(coop, nccl::utility::Absent(),
                                        nccl::utility::present(coop, comm, ncclTeamLsa(comm), comm.hybridLsaBarrier,
                                                               index, multimem, comm.lsaMultimem),
                                        nccl::utility::Absent(), nccl::utility::Absent()) {}

template <typename Coop>
NCCL_DEVICE_INLINE ncclBarrierSession<Coop>::ncclBarrierSession(Coop coop, ncclTeamTagRail, ncclGin gin,
                                                                uint32_t index)
    : ncclBarrierSession_internal<Coop>(coop, nccl::utility::present(gin), nccl::utility::Absent(),
                                        nccl::utility::present(coop, gin, ncclTeamRail(gin.comm),
                                                               gin.comm.hybridRailGinBarrier, index),
                                        nccl::utility::Absent()) {
  ncclsim::dev::checkGinBarrierIndex(index, gin.comm.barrierCount, "hybrid barrier(s) (barrierCount)");
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop> &ncclBarrierSession<Coop>::lsaBarrier() {
  return this->innerLsaBar.thing;
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop> &ncclBarrierSession<Coop>::ginBarrier() {
  return this->outerRailGinBar.thing;
}

template <typename Coop>
NCCL_DEVICE_INLINE bool ncclBarrierSession<Coop>::useWorldForFence(ncclGinFenceLevel fence) const {
  return (fence & ncclGinFenceLevel::Put) && this->gin.present && !this->gin.thing.comm.ginContextsRailed &&
         this->outerWorldGinBar.present;
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclBarrierSession<Coop>::sync(Coop, cuda::memory_order ord, ncclGinFenceLevel fence) {
  if (useWorldForFence(fence)) {
    this->outerWorldGinBar.thing.sync(this->coop, ord, fence);
    return;
  }
  bool inner = this->innerLsaBar.present, outer = this->outerRailGinBar.present;
  if (inner) this->innerLsaBar.thing.sync(this->coop, outer ? nccl::utility::releaseOrderOf(ord) : ord);
  if (outer) this->outerRailGinBar.thing.sync(this->coop, inner ? nccl::utility::acquireOrderOf(ord) : ord, fence);
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclResult_t ncclBarrierSession<Coop>::sync(Coop, cuda::memory_order ord, ncclGinFenceLevel fence,
                                                               uint64_t timeoutCycles) {
  if (useWorldForFence(fence)) return this->outerWorldGinBar.thing.sync(this->coop, ord, fence, timeoutCycles);
  bool inner = this->innerLsaBar.present, outer = this->outerRailGinBar.present;
  ncclResult_t a = ncclSuccess, b = ncclSuccess;
  if (inner) {
    uint64_t start = uint64_t(clock64());
    a = this->innerLsaBar.thing.sync(this->coop, outer ? nccl::utility::releaseOrderOf(ord) : ord, timeoutCycles);
    uint64_t spent = uint64_t(clock64()) - start;
    timeoutCycles -= spent < timeoutCycles ? spent : timeoutCycles;
  }
  /* The second barrier runs even after a timeout: every thread of the
   * coop must reach its syncs. */
  if (outer)
    b = this->outerRailGinBar.thing.sync(this->coop, inner ? nccl::utility::acquireOrderOf(ord) : ord, fence,
                                         timeoutCycles);
  return a != ncclSuccess ? a : b;
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclBarrier(Coop coop, ncclTeamTagWorld tag, ncclGin gin, uint32_t index,
                                    cuda::memory_order ord, ncclGinFenceLevel fence, bool multimem) {
  ncclBarrierSession<Coop> session(coop, tag, gin, index, multimem);
  session.sync(coop, ord, fence);
}
template <typename Coop>
NCCL_DEVICE_INLINE void ncclBarrier(Coop coop, ncclTeamTagRail tag, ncclGin gin, uint32_t index,
                                    cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclBarrierSession<Coop> session(coop, tag, gin, index);
  session.sync(coop, ord, fence);
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_BARRIER__FUNCS_H_ */
