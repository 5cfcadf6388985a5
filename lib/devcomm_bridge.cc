/*
 * devcomm_bridge.cc — the device-API bridge (devcomm_bridge.h): device
 * communicators, communicator properties and window device pointers.
 * Real NCCL's <nccl_device.h> is C++, so the bridge is C++ on every
 * backend: one mapping of the requirements, for real NCCL and ncclsim
 * alike. Built when configure's probe found a <nccl_device.h> that C++ can
 * include (HAVE_NCCL_DEVCOMM). The other functions are compiled where
 * configure found them (HAVE_BRIDGE_<NAME>).
 *
 * Requirements layouts differ between NCCL releases (2.28.3 lacks fields
 * that 2.28.9 has, 2.30 adds size/magic/version and more), so every field
 * is set through a setter that exists only if the linked header has the
 * member (SFINAE). A field the user set that this NCCL lacks gives
 * N4C_DC_ENOTSUP naming it; unset fields keep NCCL's defaults
 * (NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER where the header has it, else a
 * zeroed struct with ginContextCount 4 where that member exists).
 */
#include "config.h"

#include <cstddef>
#include <cuda_runtime.h>
#include <nccl.h>
// NCCL's device headers are not warning-clean under our flags (-Wshadow).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include <nccl_device.h>
#pragma GCC diagnostic pop

#include "devcomm_bridge.h"

/* put_<member>(q, v, field, &missing, 0) assigns v if the header's struct
 * has <member>; otherwise the second overload is chosen and records
 * `field` in *missing (the first one only). Where every member exists, as
 * on ncclsim, only assignments are compiled: no branch that cannot run. */
#define N4C_FIELD(name)                                                                 \
  template <typename T>                                                                 \
  static auto put_##name(T &q, int v, const char *, const char **, int)                 \
      -> decltype((void)q.name) {                                                       \
    q.name = static_cast<decltype(q.name)>(v);                                          \
  }                                                                                     \
  template <typename T>                                                                 \
  static void put_##name(T &, int, const char *field, const char **missing, long) {     \
    if (!*missing) *missing = field;                                                    \
  }
N4C_FIELD(lsaMultimem)
N4C_FIELD(barrierCount)
N4C_FIELD(lsaBarrierCount)
N4C_FIELD(railGinBarrierCount)
N4C_FIELD(lsaLLA2ABlockCount)
N4C_FIELD(lsaLLA2ASlotCount)
N4C_FIELD(ginForceEnable)
N4C_FIELD(ginContextCount)
N4C_FIELD(ginSignalCount)
N4C_FIELD(ginCounterCount)
N4C_FIELD(ginConnectionType)
N4C_FIELD(ginExclusiveContexts)
N4C_FIELD(ginQueueDepth)
N4C_FIELD(worldGinBarrierCount)
N4C_FIELD(ginStrongSignalsRequired)
N4C_FIELD(ginVaSignalsRequired)

extern "C" n4c_dc_result_t n4c_dc_create(ncclComm_t comm, const n4c_dev_comm_requirements_t *r, void **out,
                                         ncclResult_t *nres, const char **detail) {
  const char *missing = NULL;
#ifdef NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
  ncclDevCommRequirements_t q = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
#else
  ncclDevCommRequirements_t q = ncclDevCommRequirements_t();
  put_ginContextCount(q, 4, "gin_context_count", &missing, 0); /* NCCL's default, if it has the field */
  missing = NULL;
#endif
  if (r) {
#define N4C_PUT(field, member) \
  if (r->field != N4C_UNSET) put_##member(q, r->field, #field, &missing, 0);
    N4C_PUT(lsa_multimem, lsaMultimem)
    N4C_PUT(barrier_count, barrierCount)
    N4C_PUT(lsa_barrier_count, lsaBarrierCount)
    N4C_PUT(rail_gin_barrier_count, railGinBarrierCount)
    N4C_PUT(lsa_ll_a2a_block_count, lsaLLA2ABlockCount)
    N4C_PUT(lsa_ll_a2a_slot_count, lsaLLA2ASlotCount)
    N4C_PUT(gin_force_enable, ginForceEnable)
    N4C_PUT(gin_context_count, ginContextCount)
    N4C_PUT(gin_signal_count, ginSignalCount)
    N4C_PUT(gin_counter_count, ginCounterCount)
    N4C_PUT(gin_connection_type, ginConnectionType)
    N4C_PUT(gin_exclusive_contexts, ginExclusiveContexts)
    N4C_PUT(gin_queue_depth, ginQueueDepth)
    N4C_PUT(world_gin_barrier_count, worldGinBarrierCount)
    N4C_PUT(gin_strong_signals_required, ginStrongSignalsRequired)
    N4C_PUT(gin_va_signals_required, ginVaSignalsRequired)
#undef N4C_PUT
    if (missing) {
      *detail = missing;
      return N4C_DC_ENOTSUP;
    }
  }
  ncclDevComm_t *dc = static_cast<ncclDevComm_t *>(n4c_malloc(sizeof(ncclDevComm_t)));
  if (!dc) return N4C_DC_ENOMEM;
  *dc = ncclDevComm_t();
  ncclResult_t res = ncclDevCommCreate(comm, &q, dc);
  if (res != ncclSuccess) {
    n4c_free(dc);
    *nres = res;
    return N4C_DC_ENCCL;
  }
  *out = dc;
  return N4C_DC_OK;
}

extern "C" ncclResult_t n4c_dc_destroy(ncclComm_t comm, void *dc) {
  return ncclDevCommDestroy(comm, static_cast<const ncclDevComm_t *>(dc));
}

extern "C" void n4c_dc_free(void *dc) { n4c_free(dc); }

/* ---- communicator properties and window device pointers (2.29+) ---- */

#if HAVE_BRIDGE_NCCLCOMMQUERYPROPERTIES
/* nccl4c's enums are NCCL's values, converted by a cast (the GIN types came
 * with ncclCommQueryProperties, in 2.29). */
static_assert(static_cast<int>(NCCL_GIN_TYPE_NONE) == N4C_GIN_NONE &&
                  static_cast<int>(NCCL_GIN_TYPE_PROXY) == N4C_GIN_PROXY &&
                  static_cast<int>(NCCL_GIN_TYPE_GDAKI) == N4C_GIN_GDAKI &&
                  static_cast<int>(NCCL_GIN_TYPE_GPI) == N4C_GIN_GPI,
              "n4c_gin_type_t differs from ncclGinType_t");
static_assert(static_cast<int>(NCCL_GIN_CONNECTION_NONE) == N4C_GIN_CONNECTION_NONE &&
                  static_cast<int>(NCCL_GIN_CONNECTION_FULL) == N4C_GIN_CONNECTION_FULL &&
                  static_cast<int>(NCCL_GIN_CONNECTION_RAIL) == N4C_GIN_CONNECTION_RAIL,
              "n4c_gin_connection_type_t differs from ncclGinConnectionType_t");

extern "C" ncclResult_t n4c_br_comm_properties(ncclComm_t comm, n4c_comm_properties_t *out) {
  ncclCommProperties_t p = NCCL_COMM_PROPERTIES_INITIALIZER;
  ncclResult_t res = ncclCommQueryProperties(comm, &p);
  if (res != ncclSuccess) return res;
  out->rank = p.rank;
  out->nranks = p.nRanks;
  out->cuda_dev = p.cudaDev;
  out->nvml_dev = p.nvmlDev;
  out->device_api_support = p.deviceApiSupport;
  out->multimem_support = p.multimemSupport;
  out->gin_type = static_cast<n4c_gin_type_t>(p.ginType);
  out->n_lsa_teams = p.nLsaTeams;
  out->host_rma_support = p.hostRmaSupport;
  out->railed_gin_type = static_cast<n4c_gin_type_t>(p.railedGinType);
  return ncclSuccess;
}
#endif

#if HAVE_BRIDGE_NCCLGETLSADEVICEPOINTER
extern "C" ncclResult_t n4c_br_lsa_device_pointer(ncclWindow_t win, size_t offset, int lsa_rank, void **out) {
  return ncclGetLsaDevicePointer(win, offset, lsa_rank, out);
}
#endif

#if HAVE_BRIDGE_NCCLGETPEERDEVICEPOINTER
extern "C" ncclResult_t n4c_br_peer_device_pointer(ncclWindow_t win, size_t offset, int peer, void **out) {
  return ncclGetPeerDevicePointer(win, offset, peer, out);
}
#endif

#if HAVE_BRIDGE_NCCLGETLSAMULTIMEMDEVICEPOINTER
extern "C" ncclResult_t n4c_br_lsa_multimem_device_pointer(ncclWindow_t win, size_t offset, void **out) {
  return ncclGetLsaMultimemDevicePointer(win, offset, out);
}
#endif
