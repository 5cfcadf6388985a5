/*
 * nccl_device/impl/ll_a2a__funcs.h — ncclsim's LL all-to-all (layout in
 * ll_a2a__types.h). The first session of a block starts at epoch 2, so
 * that zeroed slots never match; endEpoch moves to the next epoch, and
 * the other half of the slots, skipping 0 and 1 when it wraps (after
 * zeroing the half it leaves).
 */
#ifndef NCCLSIM_NCCL_DEVICE_LL_A2A__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_LL_A2A__FUNCS_H_
#include "ll_a2a__types.h"
#include "comm__types.h"
#include "core__funcs.h"
#include "../utility.h"

#if NCCL_CHECK_CUDACC
namespace ncclsim {
namespace dev {
/* A slot's four 32-bit words: low data, epoch, high data, epoch. */
__device__ inline void llStore(uint32_t *slot, uint64_t data, uint32_t epoch) {
  cuda::atomic_ref<uint32_t>{slot[0]}.store(uint32_t(data), cuda::memory_order_relaxed);
  cuda::atomic_ref<uint32_t>{slot[2]}.store(uint32_t(data >> 32), cuda::memory_order_relaxed);
  cuda::atomic_ref<uint32_t>{slot[3]}.store(epoch, cuda::memory_order_relaxed);
  cuda::atomic_ref<uint32_t>{slot[1]}.store(epoch, cuda::memory_order_release);
}
__device__ inline uint64_t llLoad(uint32_t *slot, uint32_t epoch, ncclsimDevWait const &w) {
  ncclsimDevWaitFor(&slot[1], 4, epoch, 32, 1, &w);
  uint64_t lo = cuda::atomic_ref<uint32_t>{slot[0]}.load(cuda::memory_order_relaxed);
  uint64_t hi = cuda::atomic_ref<uint32_t>{slot[2]}.load(cuda::memory_order_relaxed);
  return lo | hi << 32;
}
} /* namespace dev */
} /* namespace ncclsim */

template <typename Coop>
NCCL_DEVICE_INLINE ncclLLA2ASession<Coop>::ncclLLA2ASession(Coop coop, ncclDevComm const &comm, ncclTeam team,
                                                            ncclLLA2AHandle handle, uint32_t block, int maxElts,
                                                            bool multimem, ncclMultimemHandle mmHandle)
    : ncclLLA2ASession_internal<Coop>{coop, comm, team, handle, (int)block, maxElts, multimem, mmHandle, 0, 0} {
  if (multimem) ncclsimDevUnsupported("an LL all-to-all session with multimem (ncclsim has no multicast)");
  uint32_t *line = (uint32_t *)ncclGetResourceBufferLocalPointer(comm, handle.bufHandle) +
                   4 * size_t(block) * (1 + 2 * handle.nSlots);
  this->epoch = *line + 2;
  this->slotsOffset = this->calcSlotOffset();
}

template <typename Coop>
NCCL_DEVICE_INLINE ncclLLA2ASession<Coop>::~ncclLLA2ASession() {
  uint32_t *line = (uint32_t *)ncclGetResourceBufferLocalPointer(this->comm, this->handle.bufHandle) +
                   4 * size_t(this->block) * (1 + 2 * this->handle.nSlots);
  if (this->coop.thread_rank() == 0) *line = this->epoch - 2;
  this->coop.sync();
}

template <typename Coop>
template <typename T>
NCCL_DEVICE_INLINE void ncclLLA2ASession<Coop>::send(int peer, int elt, T data) {
  constexpr int parts = int((sizeof(T) + 7) / 8);
  uint64_t u[parts];
  u[parts - 1] = 0;
  __builtin_memcpy(u, &data, sizeof(T));
  if (elt < 0 || uint32_t(elt + (parts - 1) * this->pitch) >= this->handle.nSlots)
    ncclsimDevBadArgument("LL all-to-all send to slot %d (pitch %d, %d part(s)), but the handle has %u slot(s)", elt,
                          this->pitch, parts, this->handle.nSlots);
  uint32_t *buf = (uint32_t *)ncclGetResourceBufferPeerPointer(this->comm, this->handle.bufHandle, this->team, peer);
  for (int p = 0; p < parts; p++)
    ncclsim::dev::llStore(buf + 4 * (this->slotsOffset + elt + p * this->pitch), u[p], this->epoch);
}

template <typename Coop>
template <typename T>
NCCL_DEVICE_INLINE void ncclLLA2ASession<Coop>::bcast(int elt, T data) {
  for (int r = 0; r < this->team.nRanks; r++) this->send((this->team.rank + r) % this->team.nRanks, elt, data);
}

template <typename Coop>
template <typename T>
NCCL_DEVICE_INLINE T ncclLLA2ASession<Coop>::recv(int elt) {
  T out[1];
  this->template recvUnrolled<1, 1>(elt, 1, 0, out);
  return out[0];
}

template <typename Coop>
template <int MinEltCount, int MaxEltCount, typename T>
NCCL_DEVICE_INLINE void ncclLLA2ASession<Coop>::recvUnrolled(int eltStart, int eltCount, int eltStride,
                                                             T (&elts)[MaxEltCount]) {
  constexpr int parts = int((sizeof(T) + 7) / 8);
  uint32_t *buf = (uint32_t *)ncclGetResourceBufferLocalPointer(this->comm, this->handle.bufHandle);
  int n = eltCount < MinEltCount ? MinEltCount : eltCount;
  if (n > MaxEltCount) n = MaxEltCount;
  for (int u = 0; u < n; u++) {
    int elt = eltStart + u * eltStride;
    if (elt < 0 || uint32_t(elt + (parts - 1) * this->pitch) >= this->handle.nSlots)
      ncclsimDevBadArgument("LL all-to-all recv of slot %d (pitch %d, %d part(s)), but the handle has %u slot(s)",
                            elt, this->pitch, parts, this->handle.nSlots);
    uint64_t v[parts];
    for (int p = 0; p < parts; p++) {
      ncclsimDevWait w = {&this->comm, NCCLSIM_WAIT_LL_SLOT, elt + p * this->pitch, -1, -1};
      v[p] = ncclsim::dev::llLoad(buf + 4 * (this->slotsOffset + elt + p * this->pitch), this->epoch, w);
    }
    __builtin_memcpy(&elts[u], v, sizeof(T));
  }
}

template <typename Coop>
template <int Unroll, typename Elt, typename EltToAcc, typename Reduce>
NCCL_DEVICE_INLINE auto ncclLLA2ASession<Coop>::recvReduce(int eltStart, int eltCount, int eltStride,
                                                           EltToAcc eltToAcc, Reduce red)
    -> decltype(eltToAcc(nccl::utility::declval<Elt>())) {
  using Acc = decltype(eltToAcc(nccl::utility::declval<Elt>()));
  Acc acc{};
  for (int i = 0; i < eltCount; i++) {
    Acc x = eltToAcc(this->template recv<Elt>(eltStart + i * eltStride));
    acc = i == 0 ? x : red(acc, x);
  }
  return acc;
}

template <typename Coop>
NCCL_DEVICE_INLINE void ncclLLA2ASession<Coop>::endEpoch(Coop) {
  if (this->epoch >= uint32_t(-2)) { /* about to wrap: the half we leave must not match a future epoch */
    this->coop.sync();
    uint32_t *buf = (uint32_t *)ncclGetResourceBufferLocalPointer(this->comm, this->handle.bufHandle);
    for (uint32_t i = uint32_t(this->coop.thread_rank()); i < this->handle.nSlots; i += uint32_t(this->coop.size()))
      __builtin_memset(buf + 4 * (this->slotsOffset + i), 0, 16);
  }
  this->coop.sync();
  this->epoch += this->epoch == uint32_t(-1) ? 3 : 1;
  this->slotsOffset = this->calcSlotOffset();
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_LL_A2A__FUNCS_H_ */
