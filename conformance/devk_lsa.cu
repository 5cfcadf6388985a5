/*
 * devk_lsa.cu — DEVK kernels of LSA: load/store through peer pointers
 * (DEVK-01), the LSA barrier session and its memory orders (DEVK-02), and
 * a device communicator made by nccl4c (DEVK-09). See devk.h.
 */
#include "devk_util.h"

const char *devk_order_name(int order) {
  static const char *names[] = {"sync(acq_rel)", "sync(seq_cst)", "arrive(release) + wait(acquire)"};
  return order >= 0 && order < DEVK_ORDER_COUNT ? names[order] : "?";
}

#if DEVK_API
enum { BLOCKS = 2, THREADS = 64, SLOTS = 256 };

/* Every thread stores, for each slot of its block, this rank's tag into
 * slot [lsaRank][slot] of every LSA peer's window; after the block's LSA
 * barrier it loads slot [p][slot] of its own window for every LSA peer p.
 * Also compares the pointer getters. */
__global__ void lsaPointers(ncclWindow_t win, ncclDevComm dc, DevkErrors *err) {
  ncclTeam lsa = ncclTeamLsa(dc);
  int me = dc.lsaRank, n = dc.lsaSize;
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < SLOTS; s += gridDim.x * blockDim.x)
    for (int p = 0; p < n; p++) {
      int *peer = (int *)ncclGetLsaPointer(win, 0, p);
      peer[me * SLOTS + s] = devkTag(dc.rank, p, s, 0);
    }
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, lsa, dc.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  int *mine = (int *)ncclGetLocalPointer(win, 0);
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < SLOTS; s += gridDim.x * blockDim.x)
    for (int p = 0; p < n; p++) {
      int want = devkTag(ncclTeamRankToWorld(dc, lsa, p), me, s, 0);
      if (mine[p * SLOTS + s] != want) devkError(err, 1, p, s, mine[p * SLOTS + s]);
    }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (mine != ncclGetLsaPointer(win, 0, me)) devkError(err, 2, me, 0, 0);
    for (int p = 0; p < n; p++) {
      int world = ncclTeamRankToWorld(dc, lsa, p);
      void *q = ncclGetLsaPointer(win, 16, p);
      if (ncclGetPeerPointer(win, 16, world) != q) devkError(err, 3, p, world, 0);
      if (ncclGetPeerPointer(win, 16, lsa, p) != q) devkError(err, 4, p, world, 0);
    }
  }
}

/* Rounds of stores to every LSA peer and a barrier of the given order;
 * after it the round's stores of every peer are seen, and a second
 * barrier keeps the next round's stores behind every peer's loads. */
__global__ void lsaOrders(ncclWindow_t win, ncclDevComm dc, int order, int rounds, DevkErrors *err) {
  ncclTeam lsa = ncclTeamLsa(dc);
  int me = dc.lsaRank, n = dc.lsaSize;
  ncclCoopCta cta;
  ncclLsaBarrierSession<ncclCoopCta> bar{cta, dc, lsa, dc.lsaBarrier, blockIdx.x};
  int *mine = (int *)ncclGetLocalPointer(win, 0);
  for (int k = 1; k <= rounds; k++) {
    for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < SLOTS; s += gridDim.x * blockDim.x)
      for (int p = 0; p < n; p++) ((int *)ncclGetLsaPointer(win, 0, p))[me * SLOTS + s] = devkTag(dc.rank, p, s, k);
    for (int pass = 0; pass < 2; pass++) {
      if (order == DEVK_ORDER_ACQ_REL) {
        bar.sync(cta, cuda::memory_order_acq_rel);
      } else if (order == DEVK_ORDER_SEQ_CST) {
        bar.sync(cta, cuda::memory_order_seq_cst);
      } else {
        bar.arrive(cta, cuda::memory_order_release);
        bar.wait(cta, cuda::memory_order_acquire);
      }
      if (pass) break;
      for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < SLOTS; s += gridDim.x * blockDim.x)
        for (int p = 0; p < n; p++) {
          int want = devkTag(ncclTeamRankToWorld(dc, lsa, p), me, s, k);
          if (mine[p * SLOTS + s] != want) devkError(err, k, p, s, mine[p * SLOTS + s]);
        }
    }
  }
}

static int pointers(ncclComm_t comm, const ncclDevComm *given, char *msg, size_t len) {
  DevkResult res(msg, len);
  DevkWindow win;
  DevkDevComm own;
  DevkErrorBuf eb;
  int n = 0;
  if (DEVK_NCCL(res, ncclCommCount(comm, &n)) && win.make(res, comm, (size_t)n * SLOTS * sizeof(int)) &&
      eb.make(res)) {
    ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.lsaBarrierCount = BLOCKS;
    if (given || own.make(res, comm, reqs)) {
      ncclDevComm dc = given ? *given : own.dc;
      DevkErrors e;
      if (devkRun(res, "lsaPointers", [&] { lsaPointers<<<BLOCKS, THREADS>>>(win.win, dc, eb.d); }) &&
          eb.read(res, &e) && e.count) {
        if (e.at[0] == 1)
          res.fail("%d wrong loads; first: rank %d's LSA rank %d stored %#x in slot %d, read %#x", e.count, dc.rank,
                   e.at[1], devkTag(ncclTeamRankToWorld(dc, ncclTeamLsa(dc), e.at[1]), dc.lsaRank, e.at[2], 0),
                   e.at[2], e.at[3]);
        else
          res.fail("rank %d: pointer getters disagree (check %d, LSA peer %d, world rank %d)", dc.rank, e.at[0],
                   e.at[1], e.at[2]);
      }
    }
  }
  return res.rc;
}

int devk_lsa_pointers(ncclComm_t comm, char *msg, size_t len) { return pointers(comm, nullptr, msg, len); }

int devk_lsa_devcomm(ncclComm_t comm, const void *devComm, char *msg, size_t len) {
  return pointers(comm, (const ncclDevComm *)devComm, msg, len);
}

int devk_lsa_barrier(ncclComm_t comm, int order, char *msg, size_t len) {
  DevkResult res(msg, len);
  DevkWindow win;
  DevkDevComm dc;
  DevkErrorBuf eb;
  int n = 0;
  enum { ROUNDS = 8 };
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = BLOCKS;
  DevkErrors e;
  if (DEVK_NCCL(res, ncclCommCount(comm, &n)) && win.make(res, comm, (size_t)n * SLOTS * sizeof(int)) &&
      eb.make(res) && dc.make(res, comm, reqs) &&
      devkRun(res, "lsaOrders", [&] { lsaOrders<<<BLOCKS, THREADS>>>(win.win, dc.dc, order, ROUNDS, eb.d); }) &&
      eb.read(res, &e) && e.count)
    res.fail("%s: %d stale loads; first in round %d: LSA rank %d's slot %d read %#x", devk_order_name(order), e.count,
             e.at[0], e.at[1], e.at[2], e.at[3]);
  return res.rc;
}
#else
static int old(char *msg, size_t len) {
  snprintf(msg, len, "needs NCCL 2.30's device API (this is %d)", NCCL_VERSION_CODE);
  return DEVK_SKIP;
}
int devk_lsa_pointers(ncclComm_t, char *msg, size_t len) { return old(msg, len); }
int devk_lsa_devcomm(ncclComm_t, const void *, char *msg, size_t len) { return old(msg, len); }
int devk_lsa_barrier(ncclComm_t, int, char *msg, size_t len) { return old(msg, len); }
#endif
