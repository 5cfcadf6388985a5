/*
 * nccl_device.h — ncclsim's drop-in for NCCL's <nccl_device.h>, the host
 * side of the device API.
 *
 * As in NCCL 2.30.7, the host functions (ncclCommQueryProperties,
 * ncclDevCommCreate/Destroy, the window pointer getters, the team queries)
 * and the types they take are declared in <nccl_device/core.h>, which this
 * header includes; this one adds the device communicator itself.
 *
 * Real NCCL's device headers are C++ (CUDA); these are plain C and also
 * compile as C++, so C programs can create device communicators on
 * ncclsim. Only the host-side part exists: there are no device functions
 * (no kernels run on ncclsim); struct ncclDevComm is ncclsim's own,
 * documented below, and holds what a device-side emulation needs.
 */
#ifndef NCCLSIM_NCCL_DEVICE_H_
#define NCCLSIM_NCCL_DEVICE_H_

#include "nccl_device/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Multicast is never available on ncclsim (multimemSupport is false), so a
 * multimem handle is never filled. */
struct ncclMultimemHandle {
  void *mcBasePtr;
};

/* The windows a rank registered, as real NCCL's device communicator sees
 * them: chunks of 32 entries, chained. ncclsim keeps one table per rank,
 * shared by all its device communicators; an unused entry has window NULL. */
typedef struct ncclDevCommWindowEntry {
  uintptr_t base, size;
  ncclWindow_t window;
} ncclDevCommWindowEntry;

typedef struct ncclDevCommWindowTable {
  ncclDevCommWindowEntry entries[32];
  struct ncclDevCommWindowTable *next;
} ncclDevCommWindowTable;

/*
 * ncclsim's device communicator: a plain C struct, filled by
 * ncclDevCommCreate and passed by value (as to a kernel). Its layout is
 * ncclsim's, not NCCL's.
 *
 * GIN signals: ids 0 .. ginSignalCount-1 in all. The first
 * requirements.ginSignalCount of them are the communicator-level ones (they
 * start at 0, as NCCL guarantees); each entry of resourceRequirementsList
 * then gets the next consecutive block, in list order, and its
 * outGinSignalStart says where it starts. Counters likewise.
 * Resource buffers: one block per device communicator (resourceBase,
 * resourceBytes); a buffer's handle is its offset from resourceBase in
 * units of NCCLSIM_DEV_RESOURCE_UNIT bytes.
 */
#define NCCLSIM_DEV_RESOURCE_UNIT 128
typedef struct ncclDevComm {
  int rank, nRanks;
  int lsaRank, lsaSize; /* the LSA team: the ranks of this simulated node */
  int nLsaTeams;        /* simulated nodes */

  /* GIN: ginType is the communicator's GIN type (railed GIN type for a RAIL
   * connection) when GIN was enabled, NCCL_GIN_TYPE_NONE otherwise. */
  ncclGinType_t ginType;
  ncclGinConnectionType_t ginConnectionType;
  int ginContextCount; /* granted: the requested hint (at least 1) with GIN, else 0 */
  int ginSignalCount;  /* granted, communicator-level plus every resource's */
  int ginCounterCount;
  bool ginStrongSignals, ginVaSignals; /* ginStrongSignalsRequired, ginVaSignalsRequired */
  bool ginExclusiveContexts;
  int ginQueueDepth;

  /* Barriers and LL all-to-all, as requested. */
  int barrierCount, lsaBarrierCount, railGinBarrierCount, worldGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;

  ncclDevCommWindowTable *windowTable; /* the rank's registered windows */
  void *resourceBase;                  /* resource buffers, NULL if none */
  size_t resourceBytes;

  uint64_t id; /* ncclsim's name for this device communicator (ncclDevCommDestroy) */
} ncclDevComm;

#ifdef __cplusplus
}
#endif
#endif /* NCCLSIM_NCCL_DEVICE_H_ */
