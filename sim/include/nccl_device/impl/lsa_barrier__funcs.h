/*
 * nccl_device/impl/lsa_barrier__funcs.h — ncclsim's LSA barrier.
 *
 * Barrier `index` counts each member's arrivals (its epoch). arrive
 * stores epoch+1 into every peer's inbox word for this member (release
 * when the order has a release half); wait polls this member's inbox
 * words until each peer's has reached epoch+1 (acquire when the order has
 * an acquire half). The threads of the coop share the peers. The session
 * keeps the epoch; its end saves it for the next session of the index.
 */
#ifndef NCCLSIM_NCCL_DEVICE_LSA_BARRIER__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_LSA_BARRIER__FUNCS_H_
#include "lsa_barrier__types.h"
#include "comm__types.h"
#include "core__funcs.h"

#if NCCL_CHECK_CUDACC
template <typename Coop>
NCCL_DEVICE_INLINE uint32_t *ncclLsaBarrierSession_internal<Coop>::epochWord() {
  return (uint32_t *)ncclGetResourceBufferLocalPointer(comm, handle.bufHandle) + index;
}

template <typename Coop>
NCCL_DEVICE_INLINE uint32_t *ncclLsaBarrierSession_internal<Coop>::inbox(int owner, int from) {
  uint32_t *words = (uint32_t *)ncclGetResourceBufferPeerPointer(comm, handle.bufHandle, team, owner);
  return words + 3 * handle.nBarriers + index * team.nRanks + from;
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop>::ncclLsaBarrierSession(Coop coop, ncclDevComm const &comm,
                                                                      ncclTeam team, ncclLsaBarrierHandle handle,
                                                                      uint32_t index, bool multimem,
                                                                      ncclMultimemHandle mmHandle)
    : ncclLsaBarrierSession_internal<Coop>{coop, comm, team, handle, (int)index, multimem, mmHandle, 0} {
  if (multimem) ncclsimDevUnsupported("an LSA barrier session with multimem (ncclsim has no multicast)");
  if (index >= (uint32_t)handle.nBarriers)
    ncclsimDevBadArgument("LSA barrier session of index %u, but its handle has %d barrier(s) (the device "
                          "communicator's lsaBarrierCount, or the requirement's nBarriers)",
                          index, handle.nBarriers);
  this->epoch = *this->epochWord();
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop>::ncclLsaBarrierSession(Coop coop, ncclDevComm const &comm,
                                                                      ncclTeamTagLsa, uint32_t index, bool multimem)
    : ncclLsaBarrierSession(coop, comm, ncclTeamLsa(comm), comm.lsaBarrier, index, multimem, comm.lsaMultimem) {}

template <typename Coop>
NCCL_DEVICE_INLINE ncclLsaBarrierSession<Coop>::~ncclLsaBarrierSession() {
  if (this->coop.thread_rank() == 0) *this->epochWord() = this->epoch;
  this->coop.sync();
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclLsaBarrierSession<Coop>::arrive(Coop, cuda::memory_order order) {
  this->coop.sync();
  ncclsim::dev::TraceSpan span(this->coop.thread_rank() == 0, this->comm, NCCLSIM_EV_LSA_ARRIVE, this->index);
  cuda::memory_order rel = nccl::utility::releaseOrderOf(order);
  int n = this->team.nRanks, me = this->team.rank;
  for (int i = this->coop.thread_rank(); i < n - 1; i += this->coop.size()) {
    int peer = i < me ? i : i + 1;
    cuda::atomic_ref<uint32_t>{*this->inbox(peer, me)}.store(this->epoch + 1, rel);
  }
}

template <typename Coop>
template <bool EnableTimeout>
NCCL_DEVICE_INLINE ncclResult_t ncclLsaBarrierSession_internal<Coop>::waitInternal(Coop, cuda::memory_order order,
                                                                                   uint64_t timeoutCycles) {
  ncclResult_t ret = ncclSuccess;
  ncclsim::dev::TraceSpan span(coop.thread_rank() == 0, comm, NCCLSIM_EV_LSA_WAIT, index);
  int acq = ncclsim::dev::isAcquire(nccl::utility::acquireOrderOf(order));
  int n = team.nRanks, me = team.rank;
  for (int i = coop.thread_rank(); i < n - 1; i += coop.size()) {
    int peer = i < me ? i : i + 1;
    ncclsimDevWait w = {&comm, NCCLSIM_WAIT_LSA_BARRIER, index, ncclTeamRankToWorld(comm, team, peer), -1};
    if NCCL_IF_CONSTEXPR (EnableTimeout) {
      if (ncclsimDevWaitCycles(inbox(me, peer), 4, epoch + 1, 32, acq, timeoutCycles, &w)) {
        ret = ncclTimeout;
        break;
      }
    } else {
      ncclsimDevWaitFor(inbox(me, peer), 4, epoch + 1, 32, acq, &w);
    }
  }
  if (ret == ncclSuccess) epoch += 1;
  coop.sync();
  return ret;
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclLsaBarrierSession<Coop>::wait(Coop coop, cuda::memory_order order) {
  (void)this->template waitInternal<false>(coop, order, 0);
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclResult_t ncclLsaBarrierSession<Coop>::wait(Coop coop, cuda::memory_order order,
                                                                  uint64_t timeoutCycles) {
  this->coop.sync();
  return this->template waitInternal<true>(coop, order, timeoutCycles);
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclLsaBarrierSession<Coop>::sync(Coop coop, cuda::memory_order order) {
  this->arrive(coop, order);
  this->wait(coop, order);
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclResult_t ncclLsaBarrierSession<Coop>::sync(Coop coop, cuda::memory_order order,
                                                                  uint64_t timeoutCycles) {
  this->arrive(coop, order);
  return this->wait(coop, order, timeoutCycles);
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_LSA_BARRIER__FUNCS_H_ */
