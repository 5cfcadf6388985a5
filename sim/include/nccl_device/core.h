/*
 * nccl_device/core.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/core.h>: the device API's handles and types, communicator
 * properties, device-communicator requirements, the host functions NCCL
 * declares there (ncclCommQueryProperties, ncclDevCommCreate and Destroy,
 * the window pointer getters, the host team queries), and, for CUDA code
 * (NCCL_CHECK_CUDACC: nvcc, or ncclsim's compiler driver), the device side
 * of teams, window pointers and resource buffers.
 *
 * Every function lives in the header that declares it in NCCL 2.30.7, so
 * that a program built against ncclsim builds against real NCCL: these are
 * NOT in <nccl.h>. Programs include <nccl_device.h>, which includes this
 * header, as with NCCL. Unlike NCCL's (C++/CUDA), the host part is plain C
 * and also compiles as C++. struct ncclDevComm is ncclsim's own
 * (<ncclsim_devcomm.h>, with NCCL's public fields); the team functions
 * that take it are C++ only, as in NCCL.
 */
#ifndef NCCLSIM_NCCL_DEVICE_CORE_H_
#define NCCLSIM_NCCL_DEVICE_CORE_H_

/* ncclsim's own nccl.h, wherever the include path points. */
#include "../nccl.h"
#include "coop.h"
#include "utility.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ncclDevComm;
typedef struct ncclDevComm ncclDevComm_t;

typedef struct ncclWindow_vidmem ncclWindow_vidmem_t;

struct ncclMultimemHandle;
typedef struct ncclMultimemHandle ncclMultimemHandle_t;

typedef uint32_t ncclDevResourceHandle;
typedef ncclDevResourceHandle ncclDevResourceHandle_t;
typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

/* What ncclGin's flushAsync hands to its wait. */
typedef struct {
  uint64_t opaque[2];
} ncclGinRequest_t;

struct ncclLsaBarrierHandle;
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;
struct ncclGinBarrierHandle;
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;
struct ncclLLA2AHandle;
typedef struct ncclLLA2AHandle ncclLLA2AHandle_t;

/* A team: nRanks ranks, this rank's index in it, and the world-rank stride
 * between consecutive members. */
typedef struct ncclTeam {
  int nRanks, rank, stride;
} ncclTeam_t;

#ifdef __cplusplus
}
template <typename T>
struct ncclSymPtr;
/* Tags that name the teams every device communicator has. */
struct ncclTeamTagWorld {};
struct ncclTeamTagLsa {};
struct ncclTeamTagRail {};
extern "C" {
#endif

typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;

typedef enum {
  NCCL_GIN_CONNECTION_NONE = 0,
  NCCL_GIN_CONNECTION_FULL = 1,
  NCCL_GIN_CONNECTION_RAIL = 2
} ncclGinConnectionType_t;

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

/* GIN (GPU-initiated networking) types, 2.29+. 1 is deliberately unused. */
typedef enum {
  NCCL_GIN_TYPE_NONE = 0,
  NCCL_GIN_TYPE_PROXY = 2,
  NCCL_GIN_TYPE_GDAKI = 3,
  NCCL_GIN_TYPE_GPI = 4
} ncclGinType_t;

/* Communicator properties, 2.29+ (2.30 layout). */
typedef struct ncclCommProperties {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int rank;
  int nRanks;
  int cudaDev;
  int nvmlDev;
  bool deviceApiSupport;
  bool multimemSupport;
  ncclGinType_t ginType;
  int nLsaTeams;
  bool hostRmaSupport;
  ncclGinType_t railedGinType;
} ncclCommProperties_t;

/* Size, magic and version; ncclCommQueryProperties fills the rest. NCCL's
 * initializer names only those three, leaving the rest zero: the same
 * values, spelled out here so that -Wextra (missing initializers) stays
 * quiet. */
#define NCCL_COMM_PROPERTIES_INITIALIZER {                                   \
  sizeof(ncclCommProperties_t), NCCL_API_MAGIC,                              \
  NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),                          \
  0, 0, 0, 0, false, false, NCCL_GIN_TYPE_NONE, 0, false, NCCL_GIN_TYPE_NONE \
}

ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t *props);

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

/* Window pointers; offsets in bytes. ncclsim has no multicast: the
 * multimem getters give NULL, as NCCL does on such systems. */
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void **outPtr);
ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
                                          void **outPtr);
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void **outPtr);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void **outPtr);

/* Host team queries: every rank; this node's ranks (LSA); one rank per
 * node at this rank's LSA index (rail). {0, 0, 0} for an invalid comm. */
ncclTeam_t ncclTeamWorld(ncclComm_t comm);
ncclTeam_t ncclTeamLsa(ncclComm_t comm);
ncclTeam_t ncclTeamRail(ncclComm_t comm);
/* World rank, or LSA rank, of `team`'s member `rank` (this rank being
 * team.rank, members team.stride world ranks apart); -1 for an invalid
 * comm. */
int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank);
int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank);

#ifdef __cplusplus
/* Team arithmetic (impl/core__funcs.h, which defines them; in C, only
 * there), host and device: whether b's member bPeer is a member of a,
 * and its rank there; the inner and outer factors of a team (innerSize
 * consecutive members, and one per such group); the index-th rank of
 * parent that is not in subset. */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE bool ncclTeamRankIsMember(ncclTeam_t a, ncclTeam_t b, int bPeer);
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE int ncclTeamRankToTeam(ncclTeam_t a, ncclTeam_t b, int bPeer);
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamInnerFactor(ncclTeam_t parent, int innerSize);
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE ncclTeam_t ncclTeamOuterFactor(ncclTeam_t parent, int innerSize);
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE int ncclTeamRankInDifference(ncclTeam_t parent, ncclTeam_t subset, int index);
/* A resource buffer handle's offset in bytes (units of 128). */
NCCL_EXTERN_C NCCL_HOST_DEVICE_INLINE size_t ncclGetResourceBufferOffset(ncclDevResourceHandle_t h);
#endif

#ifdef __cplusplus
}
/* The device communicator's teams, and rank conversions (C++, host and
 * device). */
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamWorld(ncclDevComm const &);
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamLsa(ncclDevComm const &);
NCCL_HOST_DEVICE_INLINE ncclTeam ncclTeamRail(ncclDevComm const &);
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToWorld(ncclDevComm const &, ncclTeam, int rank);
NCCL_HOST_DEVICE_INLINE int ncclTeamRankToLsa(ncclDevComm const &, ncclTeam, int rank);
#endif

#if NCCL_CHECK_CUDACC
/* The resource buffer h as a symmetric pointer into the device
 * communicator's resource window. */
NCCL_DEVICE_INLINE ncclSymPtr<char> ncclGetResourceBuffer(ncclDevComm const &, ncclDevResourceHandle);

/* Window pointers in kernels; offsets in bytes. On ncclsim an offset past
 * the peer's window, or a peer outside the LSA team, is a kernel fault
 * naming the window, the peer and the offset (real NCCL computes an
 * address regardless); ncclGetPeerPointer gives NULL for a world rank
 * outside the LSA team, as NCCL documents. Multimem: ncclsim has no
 * multicast, and gives what NCCL gives without it (mcBasePtr NULL: the
 * offset as an address). */
NCCL_DEVICE_INLINE void *ncclGetLocalPointer(ncclWindow_t w, size_t offset);
NCCL_DEVICE_INLINE void *ncclGetLsaPointer(ncclWindow_t w, size_t offset, int peer);
NCCL_DEVICE_INLINE void *ncclGetPeerPointer(ncclWindow_t w, size_t offset, int peer);
NCCL_DEVICE_INLINE void *ncclGetPeerPointer(ncclWindow_t w, size_t offset, ncclTeam tm, int peer);
NCCL_DEVICE_INLINE void *ncclGetMultimemPointer(ncclWindow_t w, size_t offset, ncclMultimemHandle mmHandle);
NCCL_DEVICE_INLINE void *ncclGetLsaMultimemPointer(ncclWindow_t w, size_t offset, ncclDevComm const &);

/* Resource buffer pointers: the caller's, an LSA peer's, a team member's,
 * multimem (see above). */
NCCL_DEVICE_INLINE void *ncclGetResourceBufferLocalPointer(ncclDevComm const &, ncclDevResourceHandle);
NCCL_DEVICE_INLINE void *ncclGetResourceBufferLsaPointer(ncclDevComm const &, ncclDevResourceHandle, int peer);
NCCL_DEVICE_INLINE void *ncclGetResourceBufferPeerPointer(ncclDevComm const &, ncclDevResourceHandle, ncclTeam,
                                                          int peer);
NCCL_DEVICE_INLINE void *ncclGetResourceBufferMultimemPointer(ncclDevComm const &, ncclDevResourceHandle,
                                                              ncclMultimemHandle);
NCCL_DEVICE_INLINE void *ncclGetResourceBufferLsaMultimemPointer(ncclDevComm const &, ncclDevResourceHandle);
#endif

#endif /* NCCLSIM_NCCL_DEVICE_CORE_H_ */
