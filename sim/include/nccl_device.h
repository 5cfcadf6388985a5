/*
 * nccl_device.h — ncclsim's drop-in for the host side of NCCL's device API
 * (real NCCL 2.30 declares it in <nccl_device.h> / <nccl_device/core.h>).
 *
 * Real NCCL's device headers are C++ (CUDA); this one is plain C and also
 * compiles as C++, so C programs can create device communicators on
 * ncclsim. Only the host-side part exists: requirements, teams,
 * ncclDevCommCreate/Destroy. There are no device functions (no kernels run
 * on ncclsim); struct ncclDevComm is ncclsim's own, documented below, and
 * holds what a device-side emulation needs.
 */
#ifndef NCCLSIM_NCCL_DEVICE_H_
#define NCCLSIM_NCCL_DEVICE_H_

#include "nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t ncclDevResourceHandle;
typedef ncclDevResourceHandle ncclDevResourceHandle_t;
typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

/* A team: nRanks ranks, this rank's index in it, and the world-rank stride
 * between consecutive members. */
typedef struct ncclTeam {
  int nRanks, rank, stride;
} ncclTeam_t;

/* Multicast is never available on ncclsim (multimemSupport is false), so a
 * multimem handle is never filled. */
typedef struct ncclMultimemHandle {
  void *mcBasePtr;
} ncclMultimemHandle_t;

typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;

/* A resource a library asks for besides the communicator-level counts. */
struct ncclDevResourceRequirements {
  ncclDevResourceRequirements_t *next;
  size_t bufferSize, bufferAlign;
  ncclDevResourceHandle_t *outBufferHandle; /* if non-NULL, set by ncclDevCommCreate */
  int ginSignalCount;
  int ginCounterCount;
  ncclGinSignal_t *outGinSignalStart;   /* if non-NULL, set by ncclDevCommCreate */
  ncclGinCounter_t *outGinCounterStart; /* if non-NULL, set by ncclDevCommCreate */
};

struct ncclTeamRequirements {
  ncclTeamRequirements_t *next;
  ncclTeam_t team;
  bool multimem;
  ncclMultimemHandle_t *outMultimemHandle; /* if non-NULL, set by ncclDevCommCreate */
};

/* NCCL 2.30 layout. Initialise with NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
 * size, magic and version are checked (ncclInvalidArgument otherwise). */
typedef struct ncclDevCommRequirements {
  size_t size;
  unsigned int magic;
  unsigned int version;

  ncclDevResourceRequirements_t *resourceRequirementsList;
  ncclTeamRequirements_t *teamRequirementsList;

  bool lsaMultimem; /* multimem on the LSA team */

  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;

  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;

  bool ginForceEnable;
  int ginContextCount; /* a hint */
  int ginSignalCount;  /* signals 0 .. ginSignalCount-1 */
  int ginCounterCount; /* counters 0 .. ginCounterCount-1 */
  ncclGinConnectionType_t ginConnectionType;
  bool ginExclusiveContexts;
  int ginQueueDepth;
  int ginTrafficClass;

  int worldGinBarrierCount;

  bool ginStrongSignalsRequired;
  bool ginVaSignalsRequired;
} ncclDevCommRequirements_t;

#define NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER {                                \
  sizeof(ncclDevCommRequirements_t), NCCL_API_MAGIC,                            \
  NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),                             \
  NULL, NULL,               /* resourceRequirementsList, teamRequirementsList */ \
  false,                    /* lsaMultimem */                                   \
  0, 0, 0,                  /* barrierCount, lsaBarrierCount, railGinBarrierCount */ \
  0, 0,                     /* lsaLLA2ABlockCount, lsaLLA2ASlotCount */         \
  false, 4, 0, 0,           /* ginForceEnable, ginContextCount, ginSignalCount, ginCounterCount */ \
  NCCL_GIN_CONNECTION_NONE, /* ginConnectionType */                             \
  false, 0,                 /* ginExclusiveContexts, ginQueueDepth */           \
  NCCL_CONFIG_UNDEF_INT,    /* ginTrafficClass */                               \
  0,                        /* worldGinBarrierCount */                          \
  true, true                /* ginStrongSignalsRequired, ginVaSignalsRequired */ \
}

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
typedef struct ncclDevComm ncclDevComm_t;

/* Creates a device communicator. Fails with ncclInvalidArgument (as real
 * NCCL does) for: NULL arguments; a requirements struct without
 * NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER's size and magic; a negative
 * count; an unknown connection type; a FULL connection (or ginForceEnable)
 * while some rank has no GIN type; a RAIL connection while some rank has no
 * railed GIN type; GIN signals or counters (top level or in a resource
 * requirement) without GIN enabled (ginForceEnable or a connection type);
 * lsaMultimem or a multimem team requirement (ncclsim has no multicast).
 * ncclInvalidUsage when the communicator reports no device API support
 * (NCCLSIM_DEVICE_API=0). Local to the calling rank on ncclsim (real NCCL
 * may synchronise the ranks). */
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t *reqs, ncclDevComm_t *outDevComm);
/* Destroys a device communicator of `comm`. ncclInvalidArgument for one
 * that is not live (ncclsim checks this; real NCCL does not). Destroying
 * the communicator destroys every device communicator still open. */
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *devComm);

/* Host team queries: every rank; this node's ranks (LSA); one rank per
 * node at this rank's LSA index (rail). {0, 0, 0} for an invalid comm. */
ncclTeam_t ncclTeamWorld(ncclComm_t comm);
ncclTeam_t ncclTeamLsa(ncclComm_t comm);
ncclTeam_t ncclTeamRail(ncclComm_t comm);

#ifdef __cplusplus
}
#endif
#endif /* NCCLSIM_NCCL_DEVICE_H_ */
