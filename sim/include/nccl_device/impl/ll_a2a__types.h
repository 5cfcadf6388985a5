/*
 * nccl_device/impl/ll_a2a__types.h — ncclsim's: the LL all-to-all's
 * handle and session state.
 *
 * A handle's buffer holds, per block, one 16-byte line (its first word
 * keeps the block's epoch between sessions) and two halves of nSlots
 * 16-byte slots; a session uses the half of its epoch's parity. A slot is
 * {low 32 bits of data, epoch, high 32 bits, epoch}: the sender stores
 * the data, then the epoch (release); the receiver waits for the epoch
 * (acquire), then reads the data.
 */
#ifndef NCCLSIM_NCCL_DEVICE_LL_A2A__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_LL_A2A__TYPES_H_
#include "../ll_a2a.h"
#include "core__types.h"

struct ncclLLA2AHandle {
  ncclDevResourceHandle_t bufHandle;
  uint32_t nSlots;
};

#if NCCL_CHECK_CUDACC
template <typename Coop>
struct ncclLLA2ASession_internal {
  Coop coop;
  ncclDevComm const &comm;
  ncclTeam team;
  ncclLLA2AHandle handle;
  int block;
  int pitch; /* slots between the 8-byte parts of one element */
  bool multimem;
  ncclMultimemHandle mmHandle;
  uint32_t epoch;
  uint32_t slotsOffset; /* this epoch's first slot, in 16-byte lines from the buffer's start */

  NCCL_DEVICE_INLINE uint32_t calcSlotOffset() const {
    return uint32_t(block) * (1 + 2 * handle.nSlots) + 1 + (epoch & 1) * handle.nSlots;
  }
};
#endif

#endif /* NCCLSIM_NCCL_DEVICE_LL_A2A__TYPES_H_ */
