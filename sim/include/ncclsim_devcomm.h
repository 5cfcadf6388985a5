/*
 * ncclsim_devcomm.h — ncclsim's device communicator, struct ncclDevComm,
 * as <nccl_device.h> defines it on ncclsim (NCCL 2.30.7 defines its own in
 * nccl_device/impl/comm__types.h). Included through <nccl_device.h>.
 *
 * A plain C struct, filled by ncclDevCommCreate and passed by value to
 * kernels. NCCL's public fields (rank, nRanks, lsaRank, lsaSize,
 * ginContextCount; NCCL documents only these as stable) and the handles
 * of its barriers (lsaBarrier, railGinBarrier, worldGinBarrier, the
 * hybrid ones) have NCCL's names and meaning; the layout is ncclsim's, and
 * so are the fields below "ncclsim's own".
 *
 * GIN signals: ids 0 .. ginSignalCount-1 in all. The first
 * requirements.ginSignalCount are the communicator-level ones (from 0, as
 * NCCL guarantees); then, as in NCCL, those of the device communicator's
 * own GIN barriers (world, rail, hybrid world, hybrid rail), then each
 * entry of resourceRequirementsList in list order (its outGinSignalStart
 * says where). Counters likewise. Resource buffers: one block per device
 * communicator and rank (resourceBase), the barriers' buffers first; a
 * buffer's handle is its offset from resourceBase in units of
 * NCCLSIM_DEV_RESOURCE_UNIT bytes.
 */
#ifndef NCCLSIM_DEVCOMM_H_
#define NCCLSIM_DEVCOMM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCCLSIM_DEV_RESOURCE_UNIT 128

/* The windows a rank registered, as real NCCL's device communicator sees
 * them: chunks of 32 entries, chained. ncclsim keeps one table per rank,
 * shared by all its device communicators; an unused entry has window NULL. */
typedef struct ncclDevCommWindowEntry {
  uintptr_t base, size;
  ncclWindow_t window;
} ncclDevCommWindowEntry;

typedef struct ncclDevCommWindowTable {
#ifdef __cplusplus
  typedef ncclDevCommWindowEntry Entry; /* NCCL's name, ncclDevCommWindowTable::Entry */
#endif
  ncclDevCommWindowEntry entries[32];
  struct ncclDevCommWindowTable *next;
} ncclDevCommWindowTable;
typedef struct ncclDevCommWindowTable *ncclDevCommWindowTable_t;

/* What ncclsim keeps of a device communicator for its kernels (sim/dev/). */
struct ncclsimDevState;

typedef struct ncclDevComm {
  /* ---- NCCL's fields ---- */
  unsigned int magic, version; /* NCCL_API_MAGIC, the requirements' version */
  int rank, nRanks;
  uint32_t nRanks_rcp32; /* nccl::utility::idivRcp32(nRanks) */
  int lsaRank, lsaSize;  /* the LSA team: the ranks of this simulated node or host */
  uint32_t lsaSize_rcp32;

  ncclDevCommWindowTable_t windowTable; /* the rank's registered windows */
  ncclWindow_t resourceWindow;          /* stands for the resource buffers (ncclGetResourceBuffer); NULL if none */

  ncclGinBarrierHandle_t hybridWorldGinBarrier;
  ncclMultimemHandle_t lsaMultimem; /* mcBasePtr NULL: no multicast on ncclsim */
  ncclLsaBarrierHandle_t lsaBarrier;
  ncclGinBarrierHandle_t railGinBarrier;

  uint8_t ginConnectionCount;   /* 1 with GIN, else 0 */
  uint8_t ginNetDeviceTypes[4]; /* [0]: the GIN type (ncclNetDeviceType numbering) */
  void *ginHandles[4];          /* [0]: the rank's device state, as sim */
  int ginSignalCount;           /* granted: communicator-level, barriers' and every resource's */
  int ginCounterCount;
  uint64_t *ginSignalShadows;   /* [context][signal], the rank's */
  uint32_t ginContextCount;     /* granted: the requested hint (at least 1) with GIN, else 0 */
  bool ginConnectionsRailed;    /* a RAIL connection: GIN reaches this rank's rail only */
  bool ginStrongLegacySignals;  /* the deprecated signal actions are strong */
  bool ginContextsRailed;

  uint32_t *abortFlag; /* NULL: ncclsim's waits end at NCCLSIM_TIMEOUT instead */

  ncclLsaBarrierHandle_t hybridLsaBarrier;
  ncclGinBarrierHandle_t hybridRailGinBarrier;
  ncclGinBarrierHandle_t worldGinBarrier;

  /* ---- ncclsim's own ---- */
  int nLsaTeams; /* simulated nodes or hosts */
  /* ginType is the communicator's GIN type (railed GIN type for a RAIL
   * connection) when GIN was enabled, NCCL_GIN_TYPE_NONE otherwise. */
  ncclGinType_t ginType;
  ncclGinConnectionType_t ginConnectionType;
  bool ginStrongSignals, ginVaSignals; /* ginStrongSignalsRequired, ginVaSignalsRequired */
  bool ginExclusiveContexts;
  int ginQueueDepth;
  /* Barriers and LL all-to-all, as requested. */
  int barrierCount, lsaBarrierCount, railGinBarrierCount, worldGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  void *resourceBase;   /* the rank's resource buffers (barriers' and requirements'), NULL if none */
  size_t resourceBytes; /* of them */
  struct ncclsimDevState *sim; /* the rank's device state (sim/dev/dev_internal.h) */
  uint64_t id; /* ncclsim's name for this device communicator (ncclDevCommDestroy) */
} ncclDevComm;

#ifdef __cplusplus
}
#endif
#endif /* NCCLSIM_DEVCOMM_H_ */
