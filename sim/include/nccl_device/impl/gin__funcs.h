/*
 * nccl_device/impl/gin__funcs.h — ncclsim's ncclGin and ncclGin_C.
 *
 * Every operation is described as an ncclsimGinOp and issued by the
 * coop's thread 0 to libncclsim (ncclsimDevGinIssue), which carries it out
 * as the device communicator's GIN type says (sim/dev/gin.c); the coop
 * syncs before and after, as NCCL's do. Team ranks become world ranks
 * here; libncclsim checks that the connection reaches them. Signals,
 * shadows and counters are the calling rank's own, per context.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_GIN__FUNCS_H_
#include "gin__types.h"
#include "ptr__types.h"
#include "comm__types.h"
#include "core__funcs.h"
#if __cplusplus
#include <new>
#endif

#if NCCL_CHECK_CUDACC
namespace ncclsim {
namespace dev {
/* The remote action of a put or signal, into op. Deprecated actions are
 * strong when the device communicator says its legacy signals are. */
__device__ inline void remote(ncclsimGinOp &, ncclDevComm const &, ncclGin_None) {}
__device__ inline void indexed(ncclsimGinOp &op, uint32_t signal, int add, uint64_t arg, bool strong) {
  op.sigType = NCCLSIM_GIN_SIG_INDEXED;
  op.signal = signal;
  op.sigAdd = add;
  op.sigArg = add ? arg : 1;
  op.strong = strong;
}
__device__ inline void va(ncclsimGinOp &op, ncclWindow_t w, size_t off, int add, uint64_t arg, bool strong) {
  op.sigType = NCCLSIM_GIN_SIG_VA;
  op.sigWin = w;
  op.sigOff = off;
  op.sigAdd = add;
  op.sigArg = add ? arg : 1;
  op.strong = strong;
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &c, ncclGin_SignalInc a) {
  indexed(op, a.signal, 0, 1, c.ginStrongLegacySignals);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_StrongSignalInc a) {
  indexed(op, a.signal, 0, 1, true);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_WeakSignalInc a) {
  indexed(op, a.signal, 0, 1, false);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &c, ncclGin_SignalAdd a) {
  indexed(op, a.signal, 1, a.value, c.ginStrongLegacySignals);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_StrongSignalAdd a) {
  indexed(op, a.signal, 1, a.value, true);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_WeakSignalAdd a) {
  indexed(op, a.signal, 1, a.value, false);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &c, ncclGin_VASignalInc a) {
  va(op, a.signalWindow, a.signalOffset, 0, 1, c.ginStrongLegacySignals);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_StrongVASignalInc a) {
  va(op, a.signalWindow, a.signalOffset, 0, 1, true);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_WeakVASignalInc a) {
  va(op, a.signalWindow, a.signalOffset, 0, 1, false);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &c, ncclGin_VASignalAdd a) {
  va(op, a.signalWindow, a.signalOffset, 1, a.value, c.ginStrongLegacySignals);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_StrongVASignalAdd a) {
  va(op, a.signalWindow, a.signalOffset, 1, a.value, true);
}
__device__ inline void remote(ncclsimGinOp &op, ncclDevComm const &, ncclGin_WeakVASignalAdd a) {
  va(op, a.signalWindow, a.signalOffset, 1, a.value, false);
}
/* The local action. */
__device__ inline void local(ncclsimGinOp &, ncclGin_None) {}
__device__ inline void local(ncclsimGinOp &op, ncclGin_CounterInc a) {
  op.hasCounter = 1;
  op.counter = a.counter;
}
__device__ inline void local(ncclsimGinOp &op, ncclGin_WeakCounterInc a) {
  op.hasCounter = 1;
  op.counter = a.counter;
}
/* An operation of context ctx to world rank peer. */
__device__ inline ncclsimGinOp op(int kind, int ctx, int peer) {
  ncclsimGinOp o;
  __builtin_memset(&o, 0, sizeof o);
  o.kind = kind;
  o.context = ctx;
  o.peer = peer;
  return o;
}
/* A signal or counter read: its low `bits` bits. */
__device__ inline uint64_t masked(uint64_t v, int bits) { return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1); }
/* The wait of coop's thread 0 on the caller's 64-bit word p. */
template <typename Coop>
__device__ inline uint64_t wait64(Coop &coop, uint64_t *p, uint64_t least, int bits, cuda::memory_order ord,
                                  ncclsimDevWait const &w) {
  uint64_t got = 0;
  coop.sync();
  if (coop.thread_rank() == 0) got = ncclsimDevWaitFor(p, 8, least, bits, isAcquire(ord), &w);
  coop.sync();
  return got;
}
} /* namespace dev */
} /* namespace ncclsim */

/* ---- ncclGin ---- */
template <unsigned beMask>
NCCL_DEVICE_INLINE ncclGin_BackendMask<beMask>::ncclGin_BackendMask(ncclDevComm const &comm_, int contextIndex,
                                                                    ncclGinResourceSharingMode mode)
    : comm(comm_), nConnections(comm_.ginConnectionCount), connectionId(0),
      _ginBackend(comm_.ginNetDeviceTypes[0]), contextId(uint32_t(contextIndex)), resourceSharingMode(mode),
      _ginHandle(comm_.ginHandles[0]),
      _signalShadows(comm_.ginSignalShadows ? comm_.ginSignalShadows + size_t(contextIndex) * comm_.ginSignalCount
                                            : nullptr) {}

template <unsigned beMask>
NCCL_DEVICE_INLINE ncclGinCtx_M<beMask> ncclGin_BackendMask<beMask>::_makeCtx() const {
  ncclGinCtx_M<beMask> c;
  c.backendMask = beMask;
  c.backend = (ncclNetDeviceType)_ginBackend;
  c.rank = comm.ginConnectionsRailed ? comm.rank / comm.lsaSize : comm.rank;
  c.nRanks = comm.ginConnectionsRailed ? comm.nRanks / comm.lsaSize : comm.nRanks;
  c.handle = _ginHandle;
  c.contextId = int(contextId);
  c.resourceSharingMode = uint8_t(resourceSharingMode);
  return c;
}

template <unsigned beMask>
template <typename Coop, typename DescriptorSmem>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::flushAsync(ncclTeam team, uint32_t peer,
                                                                ncclGinRequest_t *outRequest, Coop coop,
                                                                uint32_t optFlags, DescriptorSmem descriptor) const {
  (void)optFlags, (void)descriptor;
  coop.sync();
  if (coop.thread_rank() == 0) {
    outRequest->opaque[0] = uint64_t(ncclTeamRankToWorld(comm, team, int(peer)));
    outRequest->opaque[1] = contextId;
  }
  coop.sync();
}

template <unsigned beMask>
template <typename Coop, typename DescriptorSmem>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::wait(ncclGinRequest_t &request, Coop coop,
                                                          DescriptorSmem descriptor, cuda::memory_order ord) const {
  (void)descriptor, (void)ord;
  coop.sync();
  if (coop.thread_rank() == 0) ncclsimDevGinFlush(&comm, int(request.opaque[1]), int(request.opaque[0]));
  coop.sync();
}

template <unsigned beMask>
template <typename Coop, typename DescriptorSmem, typename SegmentType>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::get(ncclTeam team, int peer, ncclWindow_t remoteWnd,
                                                         size_t remoteOffset, ncclWindow_t localWnd,
                                                         size_t localOffset, size_t bytes, Coop coop,
                                                         DescriptorSmem descriptor, uint32_t optFlags,
                                                         SegmentType bufType) const {
  (void)descriptor, (void)optFlags, (void)bufType;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o = ncclsim::dev::op(NCCLSIM_GIN_GET, int(contextId), ncclTeamRankToWorld(comm, team, peer));
    o.srcWin = remoteWnd;
    o.srcOff = remoteOffset;
    o.dstWin = localWnd;
    o.dstOff = localOffset;
    o.bytes = bytes;
    ncclsimDevGinIssue(&comm, &o);
  }
  coop.sync();
}

template <unsigned beMask>
template <typename RemoteAction, typename LocalAction, typename Coop, typename DescriptorSmem, typename SegmentType>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::put(ncclTeam team, int peer, ncclWindow_t dstWnd,
                                                         size_t dstOffset, ncclWindow_t srcWnd, size_t srcOffset,
                                                         size_t bytes, RemoteAction remoteAction,
                                                         LocalAction localAction, Coop coop, DescriptorSmem descriptor,
                                                         cuda::thread_scope givenRelease,
                                                         cuda::thread_scope requiredRelease, uint32_t optFlags,
                                                         SegmentType bufType) const {
  (void)descriptor, (void)givenRelease, (void)requiredRelease, (void)optFlags, (void)bufType;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o = ncclsim::dev::op(NCCLSIM_GIN_PUT, int(contextId), ncclTeamRankToWorld(comm, team, peer));
    o.dstWin = dstWnd;
    o.dstOff = dstOffset;
    o.srcWin = srcWnd;
    o.srcOff = srcOffset;
    o.bytes = bytes;
    ncclsim::dev::remote(o, comm, remoteAction);
    ncclsim::dev::local(o, localAction);
    ncclsimDevGinIssue(&comm, &o);
  }
  coop.sync();
}

template <unsigned beMask>
template <typename T, typename RemoteAction, typename LocalAction, typename Coop, typename DescriptorSmem,
          typename SegmentType>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::put(ncclTeam team, int peer, ncclSymPtr<T> dstElts,
                                                         ncclSymPtr<T> srcElts, size_t nElts,
                                                         RemoteAction remoteAction, LocalAction localAction,
                                                         Coop coop, DescriptorSmem descriptor,
                                                         cuda::thread_scope givenRelease,
                                                         cuda::thread_scope requiredRelease, uint32_t optFlags,
                                                         SegmentType bufType) const {
  this->put(team, peer, dstElts.window, dstElts.offset, srcElts.window, srcElts.offset, nElts * sizeof(T),
            remoteAction, localAction, coop, descriptor, givenRelease, requiredRelease, optFlags, bufType);
}

template <unsigned beMask>
template <typename T, typename RemoteAction, typename Coop, typename DescriptorSmem>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::putValue(ncclTeam team, int peer, ncclWindow_t dstWnd,
                                                              size_t dstOffset, T value, RemoteAction remoteAction,
                                                              Coop coop, DescriptorSmem descriptor,
                                                              cuda::thread_scope givenRelease,
                                                              cuda::thread_scope requiredRelease,
                                                              uint32_t optFlags) const {
  static_assert(sizeof(T) <= sizeof(uint64_t), "Required: T must fit into 64 bits");
  (void)descriptor, (void)givenRelease, (void)requiredRelease, (void)optFlags;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o = ncclsim::dev::op(NCCLSIM_GIN_PUT_VALUE, int(contextId), ncclTeamRankToWorld(comm, team, peer));
    o.dstWin = dstWnd;
    o.dstOff = dstOffset;
    __builtin_memcpy(&o.value, &value, sizeof(T));
    o.valueBytes = int(sizeof(T));
    ncclsim::dev::remote(o, comm, remoteAction);
    ncclsimDevGinIssue(&comm, &o);
  }
  coop.sync();
}

template <unsigned beMask>
template <typename T, typename RemoteAction, typename Coop, typename DescriptorSmem>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::putValue(ncclTeam team, int peer, ncclSymPtr<T> dst, T value,
                                                              RemoteAction remoteAction, Coop coop,
                                                              DescriptorSmem descriptor,
                                                              cuda::thread_scope givenRelease,
                                                              cuda::thread_scope requiredRelease,
                                                              uint32_t optFlags) const {
  this->putValue(team, peer, dst.window, dst.offset, value, remoteAction, coop, descriptor, givenRelease,
                 requiredRelease, optFlags);
}

template <unsigned beMask>
template <typename RemoteAction, typename Coop, typename DescriptorSmem>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::signal(ncclTeam team, int peer, RemoteAction remoteAction,
                                                            Coop coop, DescriptorSmem descriptor,
                                                            cuda::thread_scope givenRelease,
                                                            cuda::thread_scope requiredRelease,
                                                            uint32_t optFlags) const {
  (void)descriptor, (void)givenRelease, (void)requiredRelease, (void)optFlags;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o = ncclsim::dev::op(NCCLSIM_GIN_SIGNAL, int(contextId), ncclTeamRankToWorld(comm, team, peer));
    ncclsim::dev::remote(o, comm, remoteAction);
    ncclsimDevGinIssue(&comm, &o);
  }
  coop.sync();
}

template <unsigned beMask>
template <typename Coop, typename DescriptorSmem>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::flush(Coop coop, cuda::memory_order ord,
                                                           DescriptorSmem descriptor) const {
  (void)ord, (void)descriptor;
  coop.sync();
  if (coop.thread_rank() == 0) ncclsimDevGinFlush(&comm, int(contextId), -1);
  coop.sync();
}

template <unsigned beMask>
NCCL_DEVICE_INLINE uint64_t ncclGin_BackendMask<beMask>::readCounter(ncclGinCounter_t counter, int bits,
                                                                     cuda::memory_order ord) const {
  uint64_t *p = ncclsimDevGinCounter(&comm, int(contextId), counter);
  return ncclsim::dev::masked(cuda::atomic_ref<uint64_t>{*p}.load(ord), bits);
}

template <unsigned beMask>
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::waitCounter(Coop coop, ncclGinCounter_t counter, uint64_t least,
                                                                 int bits, cuda::memory_order ord) const {
  ncclsimDevWait w = {&comm, NCCLSIM_WAIT_COUNTER, int(counter), -1, int(contextId)};
  ncclsim::dev::wait64(coop, ncclsimDevGinCounter(&comm, int(contextId), counter), least, bits, ord, w);
}

template <unsigned beMask>
NCCL_DEVICE_INLINE uint64_t *ncclGin_BackendMask<beMask>::getSignalShadowPtr(ncclGinSignal_t signal) const {
  return ncclsimDevGinShadow(&comm, int(contextId), signal);
}

template <unsigned beMask>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::increaseSignalShadow(ncclGinSignal_t signal,
                                                                          uint64_t delta) const {
  cuda::atomic_ref<uint64_t>{*getSignalShadowPtr(signal)}.fetch_add(delta, cuda::memory_order_relaxed);
}

template <unsigned beMask>
NCCL_DEVICE_INLINE uint64_t ncclGin_BackendMask<beMask>::readSignal(ncclGinSignal_t signal, int bits,
                                                                    cuda::memory_order ord) const {
  uint64_t *p = ncclsimDevGinSignal(&comm, int(contextId), signal);
  return ncclsim::dev::masked(cuda::atomic_ref<uint64_t>{*p}.load(ord), bits);
}

template <unsigned beMask>
NCCL_DEVICE_INLINE uint64_t ncclGin_BackendMask<beMask>::readSignal(ncclWindow_t signalWindow, size_t signalOffset,
                                                                    int bits, cuda::memory_order ord) const {
  uint64_t *p = ncclsimDevGinVaSignal(&comm, signalWindow, signalOffset);
  return ncclsim::dev::masked(cuda::atomic_ref<uint64_t>{*p}.load(ord), bits);
}

template <unsigned beMask>
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::waitSignal(Coop coop, ncclGinSignal_t signal, uint64_t least,
                                                                int bits, cuda::memory_order ord) const {
  ncclsimDevWait w = {&comm, NCCLSIM_WAIT_SIGNAL, int(signal), -1, int(contextId)};
  ncclsim::dev::wait64(coop, ncclsimDevGinSignal(&comm, int(contextId), signal), least, bits, ord, w);
}

template <unsigned beMask>
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::waitSignal(Coop coop, ncclWindow_t signalWindow,
                                                                size_t signalOffset, uint64_t least, int bits,
                                                                cuda::memory_order ord) const {
  ncclsimDevWait w = {&comm, NCCLSIM_WAIT_VA_SIGNAL, int(signalOffset), -1, int(contextId)};
  ncclsim::dev::wait64(coop, ncclsimDevGinVaSignal(&comm, signalWindow, signalOffset), least, bits, ord, w);
}

template <unsigned beMask>
template <typename Coop>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::waitSignalMeetShadow(Coop coop, ncclGinSignal_t signal, int bits,
                                                                          cuda::memory_order ord) const {
  ncclsimDevWait w = {&comm, NCCLSIM_WAIT_SIGNAL, int(signal), -1, int(contextId)};
  ncclsim::dev::wait64(coop, ncclsimDevGinSignal(&comm, int(contextId), signal), *getSignalShadowPtr(signal), bits,
                       ord, w);
}

template <unsigned beMask>
template <typename Coop, typename Uint>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::waitSignalFollowShadow(Coop coop, ncclGinSignal_t signal,
                                                                            Uint leastDelta, Uint *before,
                                                                            Uint *delta, int bits,
                                                                            cuda::memory_order ord) const {
  uint64_t *shadow = getSignalShadowPtr(signal);
  coop.sync();
  uint64_t before64 = *shadow, after64 = 0;
  if (coop.thread_rank() == 0) {
    ncclsimDevWait w = {&comm, NCCLSIM_WAIT_SIGNAL, int(signal), -1, int(contextId)};
    after64 = ncclsimDevWaitFor(ncclsimDevGinSignal(&comm, int(contextId), signal), 8, before64 + leastDelta, bits,
                                ncclsim::dev::isAcquire(ord), &w);
    *shadow = after64;
  }
  after64 = ncclCoopBcast(coop, after64, 0, /*entrySync=*/false);
  *before = Uint(ncclsim::dev::masked(before64, bits));
  *delta = Uint(ncclsim::dev::masked(after64 - before64, bits));
}

template <unsigned beMask>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::resetCounter(ncclGinCounter_t counter) const {
  ncclsimDevGinResetCounter(&comm, int(contextId), counter);
}

template <unsigned beMask>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::resetSignal(ncclGinSignal_t signal) const {
  ncclsimDevGinResetSignal(&comm, int(contextId), signal);
}

template <unsigned beMask>
NCCL_DEVICE_INLINE void ncclGin_BackendMask<beMask>::resetSignal(ncclWindow_t signalWindow,
                                                                 size_t signalOffset) const {
  cuda::atomic_ref<uint64_t>{*ncclsimDevGinVaSignal(&comm, signalWindow, signalOffset)}.store(
      0, cuda::memory_order_relaxed);
}

/* ---- ncclGin_C ---- */
NCCL_DEVICE_INLINE ncclGin_C::ncclGin_C(ncclDevComm const &comm_, unsigned backendMask_, int contextIndex,
                                        ncclGinResourceSharingMode mode)
    : comm(comm_), nConnections(comm_.ginConnectionCount), connectionId(0), _ginBackend(comm_.ginNetDeviceTypes[0]),
      contextId(uint32_t(contextIndex)), resourceSharingMode(mode), _ginHandle(comm_.ginHandles[0]),
      _signalShadows(comm_.ginSignalShadows ? comm_.ginSignalShadows + size_t(contextIndex) * comm_.ginSignalCount
                                            : nullptr),
      backendMask(backendMask_) {}

NCCL_DEVICE_INLINE void ncclGin_C_init(ncclGin_C *net, unsigned backendMask, ncclDevComm const &comm,
                                       int contextIndex) {
  ::new (net) ncclGin_C(comm, backendMask, contextIndex, NCCL_GIN_RESOURCE_SHARING_GPU);
}
NCCL_DEVICE_INLINE void ncclGin_C_initWithResourceSharingMode(ncclGin_C *net, unsigned backendMask,
                                                              ncclDevComm const &comm, int contextIndex,
                                                              ncclGinResourceSharingMode mode) {
  ::new (net) ncclGin_C(comm, backendMask, contextIndex, mode);
}

namespace ncclsim {
namespace dev {
/* An indexed signal of the C form's arguments. */
__device__ inline void cSignal(ncclsimGinOp &o, bool isSignal, ncclGinSignal_t id, ncclGinSignalOp_t sop,
                               uint64_t arg, ncclDevComm const &c) {
  if (isSignal) indexed(o, id, sop == ncclGinSignalAdd, arg, c.ginStrongLegacySignals);
}
} /* namespace dev */
} /* namespace ncclsim */

NCCL_DEVICE_INLINE void ncclGinPut_v2(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
                                      ncclWindow_t srcWin, size_t srcOffset, size_t bytes, bool isSignal,
                                      ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                      bool isCounter, ncclGinCounter_t counterId, ncclCoopAny coop, bool isDescriptor,
                                      ncclGinDescriptorSmem *descriptor, cuda::thread_scope givenRelease,
                                      cuda::thread_scope requiredRelease, uint32_t optFlags) {
  (void)isDescriptor, (void)descriptor, (void)givenRelease, (void)requiredRelease, (void)optFlags;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o =
        ncclsim::dev::op(NCCLSIM_GIN_PUT, int(net->contextId), ncclTeamRankToWorld(net->comm, team, peer));
    o.dstWin = dstWin;
    o.dstOff = dstOffset;
    o.srcWin = srcWin;
    o.srcOff = srcOffset;
    o.bytes = bytes;
    ncclsim::dev::cSignal(o, isSignal, signalId, signalOp, signalOpArg, net->comm);
    o.hasCounter = isCounter;
    o.counter = counterId;
    ncclsimDevGinIssue(&net->comm, &o);
  }
  coop.sync();
}
NCCL_DEVICE_INLINE void ncclGinPut(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
                                   ncclWindow_t srcWin, size_t srcOffset, size_t bytes, bool isSignal,
                                   ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                   bool isCounter, ncclGinCounter_t counterId, ncclCoopAny coop, bool isDescriptor,
                                   ncclGinDescriptorSmem *descriptor, cuda::thread_scope givenRelease,
                                   cuda::thread_scope requiredRelease) {
  ncclGinPut_v2(net, team, peer, dstWin, dstOffset, srcWin, srcOffset, bytes, isSignal, signalId, signalOp,
                signalOpArg, isCounter, counterId, coop, isDescriptor, descriptor, givenRelease, requiredRelease,
                ncclGinOptFlagsDefault);
}
NCCL_DEVICE_INLINE void ncclGinSignal_v2(ncclGin_C *net, ncclTeam team, int peer, bool isSignal,
                                         ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                         ncclCoopAny coop, bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                         cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease,
                                         uint32_t optFlags) {
  (void)isDescriptor, (void)descriptor, (void)givenRelease, (void)requiredRelease, (void)optFlags;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o =
        ncclsim::dev::op(NCCLSIM_GIN_SIGNAL, int(net->contextId), ncclTeamRankToWorld(net->comm, team, peer));
    ncclsim::dev::cSignal(o, isSignal, signalId, signalOp, signalOpArg, net->comm);
    ncclsimDevGinIssue(&net->comm, &o);
  }
  coop.sync();
}
NCCL_DEVICE_INLINE void ncclGinSignal(ncclGin_C *net, ncclTeam team, int peer, bool isSignal, ncclGinSignal_t signalId,
                                      ncclGinSignalOp_t signalOp, uint64_t signalOpArg, ncclCoopAny coop,
                                      bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                      cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease) {
  ncclGinSignal_v2(net, team, peer, isSignal, signalId, signalOp, signalOpArg, coop, isDescriptor, descriptor,
                   givenRelease, requiredRelease, ncclGinOptFlagsDefault);
}
NCCL_DEVICE_INLINE void ncclGinPutValue_v2(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin,
                                           size_t dstOffset, uint64_t value, size_t size, bool isSignal,
                                           ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                           ncclCoopAny coop, bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                           cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease,
                                           uint32_t optFlags) {
  (void)isDescriptor, (void)descriptor, (void)givenRelease, (void)requiredRelease, (void)optFlags;
  coop.sync();
  if (coop.thread_rank() == 0) {
    ncclsimGinOp o =
        ncclsim::dev::op(NCCLSIM_GIN_PUT_VALUE, int(net->contextId), ncclTeamRankToWorld(net->comm, team, peer));
    o.dstWin = dstWin;
    o.dstOff = dstOffset;
    o.value = value;
    o.valueBytes = size == 1 || size == 2 || size == 4 ? int(size) : 8;
    ncclsim::dev::cSignal(o, isSignal, signalId, signalOp, signalOpArg, net->comm);
    ncclsimDevGinIssue(&net->comm, &o);
  }
  coop.sync();
}
NCCL_DEVICE_INLINE void ncclGinPutValue(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
                                        uint64_t value, size_t size, bool isSignal, ncclGinSignal_t signalId,
                                        ncclGinSignalOp_t signalOp, uint64_t signalOpArg, ncclCoopAny coop,
                                        bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                        cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease) {
  ncclGinPutValue_v2(net, team, peer, dstWin, dstOffset, value, size, isSignal, signalId, signalOp, signalOpArg, coop,
                     isDescriptor, descriptor, givenRelease, requiredRelease, ncclGinOptFlagsDefault);
}
NCCL_DEVICE_INLINE void ncclGinFlush(ncclGin_C *net, ncclCoopAny coop, cuda::memory_order ord) {
  (void)ord;
  coop.sync();
  if (coop.thread_rank() == 0) ncclsimDevGinFlush(&net->comm, int(net->contextId), -1);
  coop.sync();
}
NCCL_DEVICE_INLINE uint64_t ncclGinReadCounter(ncclGin_C *net, ncclGinCounter_t counter, int bits,
                                               cuda::memory_order ord) {
  uint64_t *p = ncclsimDevGinCounter(&net->comm, int(net->contextId), counter);
  return ncclsim::dev::masked(cuda::atomic_ref<uint64_t>{*p}.load(ord), bits);
}
NCCL_DEVICE_INLINE void ncclGinWaitCounter(ncclGin_C *net, ncclCoopAny coop, ncclGinCounter_t counter, uint64_t least,
                                           int bits, cuda::memory_order ord) {
  ncclsimDevWait w = {&net->comm, NCCLSIM_WAIT_COUNTER, int(counter), -1, int(net->contextId)};
  ncclsim::dev::wait64(coop, ncclsimDevGinCounter(&net->comm, int(net->contextId), counter), least, bits, ord, w);
}
NCCL_DEVICE_INLINE uint64_t ncclGinReadSignal(ncclGin_C *net, ncclGinSignal_t signal, int bits,
                                              cuda::memory_order ord) {
  uint64_t *p = ncclsimDevGinSignal(&net->comm, int(net->contextId), signal);
  return ncclsim::dev::masked(cuda::atomic_ref<uint64_t>{*p}.load(ord), bits);
}
NCCL_DEVICE_INLINE void ncclGinWaitSignal(ncclGin_C *net, ncclCoopAny coop, ncclGinSignal_t signal, uint64_t least,
                                          int bits, cuda::memory_order ord) {
  ncclsimDevWait w = {&net->comm, NCCLSIM_WAIT_SIGNAL, int(signal), -1, int(net->contextId)};
  ncclsim::dev::wait64(coop, ncclsimDevGinSignal(&net->comm, int(net->contextId), signal), least, bits, ord, w);
}
NCCL_DEVICE_INLINE void ncclGinResetCounter(ncclGin_C *net, ncclGinCounter_t counter) {
  ncclsimDevGinResetCounter(&net->comm, int(net->contextId), counter);
}
NCCL_DEVICE_INLINE void ncclGinResetSignal(ncclGin_C *net, ncclGinSignal_t signal) {
  ncclsimDevGinResetSignal(&net->comm, int(net->contextId), signal);
}
NCCL_DEVICE_INLINE uint64_t *ncclGinGetSignalShadowPtr(ncclGin_C *net, ncclGinSignal_t signal) {
  return ncclsimDevGinShadow(&net->comm, int(net->contextId), signal);
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_GIN__FUNCS_H_ */
