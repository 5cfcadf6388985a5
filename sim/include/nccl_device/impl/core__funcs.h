/*
 * nccl_device/impl/core__funcs.h — ncclsim's: teams, window pointers and
 * resource buffers (core.h's API).
 */
#ifndef NCCLSIM_NCCL_DEVICE_CORE__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_CORE__FUNCS_H_
#include "core__types.h"
#include "comm__types.h"
#include "ptr__types.h"

#if __cplusplus
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamWorld(ncclDevComm const &comm) {
  ncclTeam t;
  t.nRanks = comm.nRanks;
  t.rank = comm.rank;
  t.stride = 1;
  return t;
}
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamLsa(ncclDevComm const &comm) {
  ncclTeam t;
  t.nRanks = comm.lsaSize;
  t.rank = comm.lsaRank;
  t.stride = 1;
  return t;
}
/* One rank per LSA team, at this rank's LSA index: NCCL's outer factor of
 * the world by the LSA size. */
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamRail(ncclDevComm const &comm) {
  ncclTeam t;
  t.nRanks = comm.nRanks / comm.lsaSize;
  t.rank = comm.rank / comm.lsaSize;
  t.stride = comm.lsaSize;
  return t;
}
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToWorld(ncclDevComm const &comm, ncclTeam tm, int rank) {
  return comm.rank + (rank - tm.rank) * tm.stride;
}
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToLsa(ncclDevComm const &comm, ncclTeam tm, int rank) {
  return comm.lsaRank + (rank - tm.rank) * tm.stride;
}
#endif

/* b's member bRank is the world rank (bRank - b.rank) * b.stride away
 * from this one; in a, that is (that distance) / a.stride members away,
 * if it divides. */
NCCL_HOST_DEVICE_INLINE bool ncclTeamRankIsMember(ncclTeam_t a, ncclTeam_t b, int brank) {
  int delta = (brank - b.rank) * b.stride;
  if (delta % a.stride != 0) return false;
  int arank = a.rank + delta / a.stride;
  return 0 <= arank && arank < a.nRanks;
}
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToTeam(ncclTeam_t a, ncclTeam_t b, int brank) {
  return a.rank + (brank - b.rank) * b.stride / a.stride;
}
NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamInnerFactor(ncclTeam_t parent, int innerSize) {
  ncclTeam_t t;
  t.nRanks = innerSize;
  t.rank = parent.rank % innerSize;
  t.stride = parent.stride;
  return t;
}
NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamOuterFactor(ncclTeam_t parent, int innerSize) {
  ncclTeam_t t;
  t.nRanks = parent.nRanks / innerSize;
  t.rank = parent.rank / innerSize;
  t.stride = parent.stride * innerSize;
  return t;
}
/* Counts parent's members in order, skipping subset's (a subset of
 * parent, evenly spaced in it), and returns the index-th member left. */
NCCL_HOST_DEVICE_INLINE int ncclTeamRankInDifference(ncclTeam_t parent, ncclTeam_t subset, int index) {
  int step = subset.stride / parent.stride;           /* subset members this many parent ranks apart */
  int first = parent.rank - subset.rank * step;       /* parent rank of subset's member 0 */
  if (step < 0) {
    step = -step;
    first -= (subset.nRanks - 1) * step;
  }
  int last = first + (subset.nRanks - 1) * step;
  if (index < first) return index;                    /* before subset's first member */
  int gaps = (subset.nRanks - 1) * (step - 1);        /* ranks between subset's members */
  int k = index - first;
  if (k < gaps) return first + 1 + (k / (step - 1)) * step + k % (step - 1);
  return last + 1 + (k - gaps);
}
NCCL_HOST_DEVICE_INLINE size_t ncclGetResourceBufferOffset(ncclDevResourceHandle_t h) {
  return (size_t)h * NCCLSIM_DEV_RESOURCE_UNIT;
}

#if NCCL_CHECK_CUDACC
/* Each takes the inline path (a thread's cached view of the window) when
 * it can, else libncclsim's checked one (ncclsim__abi.h). */
NCCL_DEVICE_INLINE void *ncclGetLocalPointer(ncclWindow_t w, size_t offset) {
  const ncclsimDevWinCache *c = ncclsim::dev::win(w);
  void *p = ncclsim::dev::lsaFast(c, c->lsaRank, offset);
  return p ? p : ncclsimDevWinLocal(w, offset);
}
NCCL_DEVICE_INLINE void *ncclGetLsaPointer(ncclWindow_t w, size_t offset, int peer) {
  void *p = ncclsim::dev::lsaFast(ncclsim::dev::win(w), peer, offset);
  return p ? p : ncclsimDevWinLsa(w, offset, peer);
}
NCCL_DEVICE_INLINE void *ncclGetPeerPointer(ncclWindow_t w, size_t offset, int peer) {
  const ncclsimDevWinCache *c = ncclsim::dev::win(w);
  int i = c->lsaRank + (peer - c->rank); /* the LSA index if the team is consecutive world ranks */
  void *p = c->lsaPtr && (unsigned)i < (unsigned)c->lsaSize && c->lsaWorld[i] == peer ? ncclsim::dev::lsaFast(c, i, offset)
                                                                                       : nullptr;
  return p ? p : ncclsimDevWinPeer(w, offset, peer);
}
NCCL_DEVICE_INLINE void *ncclGetPeerPointer(ncclWindow_t w, size_t offset, ncclTeam tm, int peer) {
  const ncclsimDevWinCache *c = ncclsim::dev::win(w);
  void *p = ncclsim::dev::lsaFast(c, c->lsaRank + (peer - tm.rank) * tm.stride, offset);
  return p ? p : ncclsimDevWinTeam(w, offset, tm.rank, tm.stride, peer);
}
/* NCCL: the handle's base, plus the window's place in the multicast
 * range (none without multicast), plus offset. */
NCCL_DEVICE_INLINE void *ncclGetMultimemPointer(ncclWindow_t w, size_t offset, ncclMultimemHandle mm) {
  (void)w;
  return (char *)mm.mcBasePtr + offset;
}
NCCL_DEVICE_INLINE void *ncclGetLsaMultimemPointer(ncclWindow_t w, size_t offset, ncclDevComm const &comm) {
  return ncclGetMultimemPointer(w, offset, comm.lsaMultimem);
}

/* The window, among comm's rank's registered windows, that holds ptr
 * (NCCL's lookup through the device window table). */
template <typename Coop>
NCCL_DEVICE_INLINE ncclWindow_t ncclFindWindow(Coop coop, ncclDevComm const &comm, void const *ptr) {
  (void)coop;
  uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  for (ncclDevCommWindowTable *t = comm.windowTable; t; t = t->next)
    for (int i = 0; i < 32; i++) {
      ncclDevCommWindowEntry const &e = t->entries[i];
      if (e.window && e.size && p - e.base < e.size) return e.window;
    }
  return nullptr;
}

NCCL_DEVICE_INLINE void *ncclGetResourceBufferLocalPointer(ncclDevComm const &comm, ncclDevResourceHandle h) {
  return ncclsimDevRes(&comm, h, comm.lsaRank);
}
NCCL_DEVICE_INLINE void *ncclGetResourceBufferLsaPointer(ncclDevComm const &comm, ncclDevResourceHandle h, int peer) {
  return ncclsimDevRes(&comm, h, peer);
}
NCCL_DEVICE_INLINE void *ncclGetResourceBufferPeerPointer(ncclDevComm const &comm, ncclDevResourceHandle h,
                                                          ncclTeam team, int peer) {
  return ncclsimDevRes(&comm, h, comm.lsaRank + (peer - team.rank) * team.stride);
}
NCCL_DEVICE_INLINE void *ncclGetResourceBufferMultimemPointer(ncclDevComm const &comm, ncclDevResourceHandle h,
                                                              ncclMultimemHandle mm) {
  (void)comm;
  return (char *)mm.mcBasePtr + ncclGetResourceBufferOffset(h);
}
NCCL_DEVICE_INLINE void *ncclGetResourceBufferLsaMultimemPointer(ncclDevComm const &comm, ncclDevResourceHandle h) {
  return ncclGetResourceBufferMultimemPointer(comm, h, comm.lsaMultimem);
}
NCCL_DEVICE_INLINE ncclSymPtr<char> ncclGetResourceBuffer(ncclDevComm const &comm, ncclDevResourceHandle h) {
  return ncclSymPtr<char>(ncclsimDevResWindow(&comm), ncclGetResourceBufferOffset(h));
}
#endif

#endif /* NCCLSIM_NCCL_DEVICE_CORE__FUNCS_H_ */
