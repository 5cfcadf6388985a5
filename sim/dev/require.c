/*
 * sim/dev/require.c — the requirement helpers of the device API (host
 * functions of NCCL 2.30.7): ncclLsaBarrierCreateRequirement,
 * ncclGinBarrierCreateRequirement, ncclLLA2ACalcSlots and
 * ncclLLA2ACreateRequirement. Each fills a resource requirement that the
 * caller chains into ncclDevCommRequirements.resourceRequirementsList,
 * sized as NCCL sizes it, and the handle whose buffer or first signal
 * ncclDevCommCreate then sets. ncclDevCommCreate uses the same functions
 * for the device communicator's own barriers (devcomm.c).
 */
#include "config.h"

#include <string.h>

#include "dev_internal.h"

static ncclResult_t check(const void *handle, const void *req, int count, const char *count_name, const char *op) {
  if (!handle || !req) {
    SIM_WARN(SIM_DEV, "%s: %s is NULL (ncclsim checks this)", op, !handle ? "outHandle" : "outReq");
    return ncclInvalidArgument;
  }
  if (count < 0) {
    SIM_WARN(SIM_DEV, "%s: %s is %d, must be >= 0 (ncclsim checks this)", op, count_name, count);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

/* (3 + team size) 32-bit words a barrier (lsa_barrier__types.h). */
SIM_EXPORT ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t *outHandle,
                                                        ncclDevResourceRequirements_t *outReq) {
  SIM_CHECK(check(outHandle, outReq, nBarriers, "nBarriers", "ncclLsaBarrierCreateRequirement"));
  if (team.nRanks < 0) {
    SIM_WARN(SIM_DEV, "ncclLsaBarrierCreateRequirement: team.nRanks is %d (ncclsim checks this)", team.nRanks);
    return ncclInvalidArgument;
  }
  memset(outReq, 0, sizeof *outReq);
  outHandle->nBarriers = nBarriers;
  outReq->bufferSize = ((size_t)3 * (size_t)nBarriers + (size_t)nBarriers * (size_t)team.nRanks) * sizeof(uint32_t);
  outReq->bufferAlign = sizeof(uint32_t);
  outReq->outBufferHandle = &outHandle->bufHandle;
  return ncclSuccess;
}

/* A signal per team member and barrier (gin_barrier__types.h). comm is
 * not read, as in NCCL. */
SIM_EXPORT ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                                        ncclGinBarrierHandle_t *outHandle,
                                                        ncclDevResourceRequirements_t *outReq) {
  (void)comm;
  SIM_CHECK(check(outHandle, outReq, nBarriers, "nBarriers", "ncclGinBarrierCreateRequirement"));
  long long n = (long long)nBarriers * team.nRanks;
  if (team.nRanks < 0 || n > INT32_MAX) {
    SIM_WARN(SIM_DEV, "ncclGinBarrierCreateRequirement: %d barrier(s) of %d rank(s) (ncclsim checks this)", nBarriers,
             team.nRanks);
    return ncclInvalidArgument;
  }
  memset(outReq, 0, sizeof *outReq);
  outReq->ginSignalCount = (int)n;
  outReq->outGinSignalStart = &outHandle->signal0;
  return ncclSuccess;
}

/* A slot carries 8 bytes of an element. */
SIM_EXPORT int ncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  if (maxElts < 0 || maxEltSize < 0) return 0;
  return maxElts * ((maxEltSize + 7) / 8);
}

/* Per block a 16-byte line and two halves of nSlots 16-byte slots
 * (ll_a2a__types.h). */
SIM_EXPORT ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t *outHandle,
                                                   ncclDevResourceRequirements_t *outReq) {
  SIM_CHECK(check(outHandle, outReq, nBlocks, "nBlocks", "ncclLLA2ACreateRequirement"));
  SIM_CHECK(check(outHandle, outReq, nSlots, "nSlots", "ncclLLA2ACreateRequirement"));
  memset(outReq, 0, sizeof *outReq);
  outHandle->nSlots = (uint32_t)nSlots;
  outReq->bufferSize = (size_t)nBlocks * (1 + 2 * (size_t)nSlots) * 16;
  outReq->bufferAlign = 16;
  outReq->outBufferHandle = &outHandle->bufHandle;
  return ncclSuccess;
}
