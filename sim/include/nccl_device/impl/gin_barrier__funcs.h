/*
 * nccl_device/impl/gin_barrier__funcs.h — ncclsim's GIN barrier.
 *
 * Barrier `index` of a handle uses team size signals on every member, one
 * slot per member. A sync signals (strong increment) each peer's slot for
 * this rank on the context, then waits until each peer's slot here has
 * reached this rank's count of syncs with it (kept in the slot's shadow);
 * the coop's threads share the peers. With the Put fence the rank also
 * signals and awaits itself, so that its own earlier puts to itself
 * landed too; signals of one context are carried out after the puts
 * issued before them, so a peer's signal arriving means its earlier puts
 * here have landed. With Get, the rank's gets are flushed at the end. Made
 * from ncclGinAllContexts, it signals and flushes on every context.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_BARRIER__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_GIN_BARRIER__FUNCS_H_
#include "gin_barrier__types.h"
#include "gin__funcs.h"

#if NCCL_CHECK_CUDACC
namespace ncclsim {
namespace dev {
/* A barrier index beyond what the device communicator's requirements
 * asked for is reported, not folded into other signals. */
__device__ inline void checkGinBarrierIndex(uint32_t index, int count, const char *what) {
  if (index >= uint32_t(count))
    ncclsimDevBadArgument("GIN barrier session of index %u, but the device communicator has %d %s", index, count,
                          what);
}
} /* namespace dev */
} /* namespace ncclsim */

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::ncclGinBarrierSession(Coop coop, ncclGin net, ncclTeam team,
                                                                      ncclGinBarrierHandle handle,
                                                                      uint32_t barrierIndex)
    : ncclGinBarrierSession_internal<Coop>{coop, net, team, handle, (int)barrierIndex, 0, false} {
  this->signal = handle.signal0 + barrierIndex * uint32_t(team.nRanks);
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::ncclGinBarrierSession(Coop coop, ncclGin net, ncclTeamTagRail,
                                                                      uint32_t barrierIndex)
    : ncclGinBarrierSession(coop, net, ncclTeamRail(net.comm), net.comm.railGinBarrier, barrierIndex) {
  ncclsim::dev::checkGinBarrierIndex(barrierIndex, net.comm.railGinBarrierCount, "rail GIN barrier(s) (railGinBarrierCount)");
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::ncclGinBarrierSession(Coop coop, ncclGin net, ncclTeamTagWorld,
                                                                      uint32_t barrierIndex)
    : ncclGinBarrierSession(coop, net, ncclTeamWorld(net.comm), net.comm.worldGinBarrier, barrierIndex) {
  ncclsim::dev::checkGinBarrierIndex(barrierIndex, net.comm.worldGinBarrierCount,
                                     "world GIN barrier(s) (worldGinBarrierCount)");
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::ncclGinBarrierSession(Coop coop, ncclGinAllContexts all,
                                                                      ncclTeam team, ncclGinBarrierHandle handle,
                                                                      uint32_t barrierIndex)
    : ncclGinBarrierSession_internal<Coop>{coop, ncclGin(all.comm, 0), team, handle, (int)barrierIndex, 0, true} {
  this->signal = handle.signal0 + barrierIndex * uint32_t(team.nRanks);
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::ncclGinBarrierSession(Coop coop, ncclGinAllContexts all,
                                                                      ncclTeamTagRail, uint32_t barrierIndex)
    : ncclGinBarrierSession(coop, all, ncclTeamRail(all.comm), all.comm.railGinBarrier, barrierIndex) {
  ncclsim::dev::checkGinBarrierIndex(barrierIndex, all.comm.railGinBarrierCount, "rail GIN barrier(s) (railGinBarrierCount)");
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::ncclGinBarrierSession(Coop coop, ncclGinAllContexts all,
                                                                      ncclTeamTagWorld, uint32_t barrierIndex)
    : ncclGinBarrierSession(coop, all, ncclTeamWorld(all.comm), all.comm.worldGinBarrier, barrierIndex) {
  ncclsim::dev::checkGinBarrierIndex(barrierIndex, all.comm.worldGinBarrierCount,
                                     "world GIN barrier(s) (worldGinBarrierCount)");
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclGinBarrierSession<Coop>::~ncclGinBarrierSession() {}

template <typename Coop>
template <bool EnableTimeout>
NCCL_DEVICE_INLINE ncclResult_t ncclGinBarrierSession_internal<Coop>::syncInternal(Coop, cuda::memory_order ord,
                                                                                   ncclGinFenceLevel fence,
                                                                                   uint64_t timeoutCycles) {
  ncclResult_t ret = ncclSuccess;
  ncclDevComm const &comm = net.comm;
  coop.sync();
  ncclsim::dev::TraceSpan span(coop.thread_rank() == 0, comm, NCCLSIM_EV_GIN_SYNC, index);
  int n = team.nRanks, me = team.rank;
  int nPeers = (fence & ncclGinFenceLevel::Put) ? n : n - 1; /* the Put fence includes this rank */
  int nCtx = fenceAllContexts ? int(comm.ginContextCount) : 1;
  int ctx0 = fenceAllContexts ? 0 : int(net.contextId);
  int acq = ncclsim::dev::isAcquire(nccl::utility::acquireOrderOf(ord));
  uint64_t start = uint64_t(clock64());
  /* Every signal first, then every wait: a thread that waited for one
   * peer before signalling the next could wait in a cycle (NCCL 2.30.7
   * signals and waits peer by peer, which a coop with fewer threads than
   * peers can deadlock at three ranks or more). */
  for (int i = coop.thread_rank(); i < nCtx * nPeers; i += coop.size()) {
    int ctx = ctx0 + i / nPeers;
    int peer = (me + 1 + i % nPeers) % n; /* peers in turn from the next one, this rank last */
    ncclsimGinOp o = ncclsim::dev::op(NCCLSIM_GIN_SIGNAL, ctx, ncclTeamRankToWorld(comm, team, peer));
    ncclsim::dev::indexed(o, signal + uint32_t(me), 0, 1, true);
    ncclsimDevGinIssue(&comm, &o);
  }
  for (int i = coop.thread_rank(); i < nCtx * nPeers && ret == ncclSuccess; i += coop.size()) {
    int ctx = ctx0 + i / nPeers;
    int peer = (me + 1 + i % nPeers) % n;
    uint32_t *shadow = (uint32_t *)ncclsimDevGinShadow(&comm, ctx, signal + uint32_t(peer));
    uint32_t want = ++*shadow;
    uint64_t *slot = ncclsimDevGinSignal(&comm, ctx, signal + uint32_t(peer));
    ncclsimDevWait w = {&comm, NCCLSIM_WAIT_GIN_BARRIER, index, ncclTeamRankToWorld(comm, team, peer), ctx};
    if NCCL_IF_CONSTEXPR (EnableTimeout) {
      uint64_t spent = uint64_t(clock64()) - start;
      if (spent >= timeoutCycles || ncclsimDevWaitCycles(slot, 8, want, 32, acq, timeoutCycles - spent, &w))
        ret = ncclTimeout;
    } else {
      ncclsimDevWaitFor(slot, 8, want, 32, acq, &w);
    }
  }
  if (ret == ncclSuccess && (fence & ncclGinFenceLevel::Get))
    for (int c = coop.thread_rank(); c < nCtx; c += coop.size()) ncclsimDevGinFlush(&comm, ctx0 + c, -1);
  coop.sync();
  return ret;
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrierSession<Coop>::sync(Coop coop, cuda::memory_order ord,
                                                          ncclGinFenceLevel fence) {
  (void)this->template syncInternal<false>(coop, ord, fence, 0);
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclResult_t ncclGinBarrierSession<Coop>::sync(Coop coop, cuda::memory_order ord,
                                                                  ncclGinFenceLevel fence, uint64_t timeoutCycles) {
  return this->template syncInternal<true>(coop, ord, fence, timeoutCycles);
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop coop, ncclGin net, ncclTeam team, ncclGinBarrierHandle handle,
                                       uint32_t index, cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclGinBarrierSession<Coop> bar(coop, net, team, handle, index);
  bar.sync(coop, ord, fence);
}
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop coop, ncclGin net, ncclTeamTagRail tag, uint32_t index,
                                       cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclGinBarrierSession<Coop> bar(coop, net, tag, index);
  bar.sync(coop, ord, fence);
}
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop coop, ncclGin net, ncclTeamTagWorld tag, uint32_t index,
                                       cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclGinBarrierSession<Coop> bar(coop, net, tag, index);
  bar.sync(coop, ord, fence);
}
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop coop, ncclGinAllContexts all, ncclTeam team, ncclGinBarrierHandle handle,
                                       uint32_t index, cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclGinBarrierSession<Coop> bar(coop, all, team, handle, index);
  bar.sync(coop, ord, fence);
}
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop coop, ncclGinAllContexts all, ncclTeamTagRail tag, uint32_t index,
                                       cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclGinBarrierSession<Coop> bar(coop, all, tag, index);
  bar.sync(coop, ord, fence);
}
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGinBarrier(Coop coop, ncclGinAllContexts all, ncclTeamTagWorld tag, uint32_t index,
                                       cuda::memory_order ord, ncclGinFenceLevel fence) {
  ncclGinBarrierSession<Coop> bar(coop, all, tag, index);
  bar.sync(coop, ord, fence);
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_GIN_BARRIER__FUNCS_H_ */
