/*
 * nccl_device/ll_a2a.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/ll_a2a.h>: the low-latency all-to-all. Each block has
 * slots in every LSA peer's resource buffer; send writes a value (up to 8
 * bytes a slot, wider types take pitch-spaced slots) with the session's
 * epoch beside it, recv polls its own slot until that epoch is there. A
 * session's slots alternate between two halves by epoch, so endEpoch can
 * start the next round at once. On ncclsim a recv that cannot complete
 * ends at NCCLSIM_TIMEOUT with a report naming the slot.
 */
#ifndef NCCLSIM_NCCL_DEVICE_LL_A2A_H_
#define NCCLSIM_NCCL_DEVICE_LL_A2A_H_
#include "impl/core__types.h"

struct ncclLLA2AHandle;

/* Slots for maxElts elements of up to maxEltSize bytes: 8 bytes a slot. */
NCCL_EXTERN_C __host__ int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);

/* The resource requirement of nBlocks blocks of nSlots slots each: fills
 * *outReq and outHandle's slot count; ncclDevCommCreate sets the handle's
 * buffer. ncclInvalidArgument for NULL pointers or negative counts (NCCL
 * checks neither). Thread-safe. */
NCCL_EXTERN_C __host__ ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t *outHandle,
                                                               ncclDevResourceRequirements_t *outReq);

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclLLA2ASession_internal;

template <typename Coop>
struct ncclLLA2ASession : ncclLLA2ASession_internal<Coop> {
  NCCL_DEVICE_INLINE ncclLLA2ASession(Coop, ncclDevComm const &, ncclTeam, ncclLLA2AHandle, uint32_t block, int maxElts,
                                      bool multimem = false, ncclMultimemHandle mmHandle = {});
  NCCL_DEVICE_INLINE ~ncclLLA2ASession();

  ncclLLA2ASession(ncclLLA2ASession const &) = delete; /* sessions are not copyable */

  /* data into slot `slot` of team member peer's buffer. */
  template <typename T>
  NCCL_DEVICE_INLINE void send(int peer, int slot, T data);
  /* data into slot `slot` of every member's buffer. */
  template <typename T>
  NCCL_DEVICE_INLINE void bcast(int slot, T data);
  /* What this epoch's send put in the caller's slot `slot`. */
  template <typename T>
  NCCL_DEVICE_INLINE T recv(int slot);
  /* eltCount (MinEltCount..MaxEltCount) slots eltStride apart from eltStart. */
  template <int MinEltCount, int MaxEltCount, typename T>
  NCCL_DEVICE_INLINE void recvUnrolled(int eltStart, int eltCount, int eltStride, T (&vals)[MaxEltCount]);
  /* red over eltToAcc of eltCount received elements. */
  template <int Unroll, typename Elt, typename EltToAcc, typename Reduce>
  NCCL_DEVICE_INLINE auto recvReduce(int eltStart, int eltCount, int eltStride, EltToAcc eltToAcc, Reduce red)
      -> decltype(eltToAcc(nccl::utility::declval<Elt>()));

  /* Ends an all-to-all round: every peer must have been sent at least one
   * slot, and a slot that peer sent must have been received. */
  NCCL_DEVICE_INLINE void endEpoch(Coop);
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_LL_A2A_H_ */
