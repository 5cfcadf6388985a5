/*
 * devk_ll.cu — DEVK kernel of the LL all-to-all (DEVK-08). See devk.h.
 */
#include "devk_util.h"

#if DEVK_API
enum { EPOCHS = 6, THREADS = 32 };

struct Wide { /* an element of two slots */
  uint64_t a, b;
};

/* Every epoch, each LSA rank sends every LSA peer p a value in slot
 * `its own LSA rank` and receives every peer's: 8-byte values, then
 * 16-byte ones (two slots, maxElts apart), then ints summed by recvReduce. */
__global__ void llA2A(ncclDevComm dc, ncclLLA2AHandle h, DevkErrors *err) {
  ncclTeam lsa = ncclTeamLsa(dc);
  int me = lsa.rank, n = lsa.nRanks;
  ncclCoopCta cta;
  ncclLLA2ASession<ncclCoopCta> s{cta, dc, lsa, h, blockIdx.x, n};
  for (int e = 0; e < EPOCHS; e++) {
    int kind = e % 3;
    for (int p = threadIdx.x; p < n; p += blockDim.x) {
      if (kind == 0) s.send(p, me, (uint64_t)devkTag(me, p, 0, e) << 32 | (uint32_t)e);
      else if (kind == 1) s.send(p, me, Wide{(uint64_t)devkTag(me, p, 1, e), ~(uint64_t)e});
      else s.send(p, me, (me + 1) * (e + 1));
    }
    if (kind == 2) {
      if (threadIdx.x == 0) {
        int sum = s.template recvReduce<1, int>(0, n, 1, [](int x) { return x; }, [](int a, int b) { return a + b; });
        if (sum != (e + 1) * n * (n + 1) / 2) devkError(err, e, -1, sum, 0);
      }
    } else {
      for (int p = threadIdx.x; p < n; p += blockDim.x) {
        if (kind == 0) {
          uint64_t v = s.template recv<uint64_t>(p);
          if (v != ((uint64_t)devkTag(p, me, 0, e) << 32 | (uint32_t)e)) devkError(err, e, p, (int)(v >> 32), 0);
        } else {
          Wide v = s.template recv<Wide>(p);
          if (v.a != (uint64_t)devkTag(p, me, 1, e) || v.b != ~(uint64_t)e) devkError(err, e, p, (int)v.a, 1);
        }
      }
    }
    s.endEpoch(cta);
  }
}

int devk_ll_a2a(ncclComm_t comm, char *msg, size_t len) {
  DevkResult res(msg, len);
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  if (!DEVK_NCCL(res, ncclCommQueryProperties(comm, &props))) return res.rc;
  if (!props.deviceApiSupport) return res.skip("deviceApiSupport is false on this communicator"), res.rc;
  int lsaSize = ncclTeamLsa(comm).nRanks;
  ncclLLA2AHandle h;
  ncclDevResourceRequirements req;
  int slots = ncclLLA2ACalcSlots(lsaSize, sizeof(Wide));
  DevkDevComm dc;
  DevkErrorBuf eb;
  DevkErrors e;
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.resourceRequirementsList = &req;
  if (slots != lsaSize * 2) return res.fail("ncclLLA2ACalcSlots(%d, 16) is %d, not %d", lsaSize, slots, lsaSize * 2), res.rc;
  if (DEVK_NCCL(res, ncclLLA2ACreateRequirement(1, slots, &h, &req)) && eb.make(res) && dc.make(res, comm, reqs) &&
      devkRun(res, "llA2A", [&] { llA2A<<<1, THREADS>>>(dc.dc, h, eb.d); }) && eb.read(res, &e) && e.count) {
    if (e.at[1] < 0) res.fail("epoch %d: recvReduce's sum is %d", e.at[0], e.at[2]);
    else res.fail("%d wrong values; first in epoch %d: from LSA rank %d, %#x (%s)", e.count, e.at[0], e.at[1], e.at[2],
                  e.at[3] ? "16-byte" : "8-byte");
  }
  return res.rc;
}
#else
int devk_ll_a2a(ncclComm_t, char *msg, size_t len) {
  snprintf(msg, len, "needs NCCL 2.30's device API (this is %d)", NCCL_VERSION_CODE);
  return DEVK_SKIP;
}
#endif
