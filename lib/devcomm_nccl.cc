/*
 * devcomm_nccl.cc — the device-communicator bridge (devcomm_bridge.h) for
 * real NCCL, whose <nccl_device.h> only C++ can include. The one C++ file
 * of lib/; built only for the real backend when configure found a usable
 * <nccl_device.h> (HAVE_NCCL_DEVCOMM).
 *
 * Requirements layouts: NCCL >= 2.30.5 has every field nccl4c knows, with
 * size/magic/version and NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER. Older
 * NCCL (2.28) has only the first twelve; a set field it lacks gives
 * N4C_DC_ENOTSUP, and without the initializer the defaults are a zeroed
 * struct with ginContextCount 4 (the documented default; it is a hint).
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

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 30, 5)
#define N4C_DC_FULL_LAYOUT 1
#endif

static bool set(int v) { return v != N4C_UNSET; }

extern "C" n4c_dc_result_t n4c_dc_create(ncclComm_t comm, const n4c_dev_comm_requirements_t *r, void **out,
                                         ncclResult_t *nres, const char **detail) {
#ifdef N4C_DC_FULL_LAYOUT
  ncclDevCommRequirements_t q = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
#else
  ncclDevCommRequirements_t q = ncclDevCommRequirements_t();
  q.ginContextCount = 4;
#endif
  if (r) {
    if (set(r->lsa_multimem)) q.lsaMultimem = r->lsa_multimem != 0;
    if (set(r->barrier_count)) q.barrierCount = r->barrier_count;
    if (set(r->lsa_barrier_count)) q.lsaBarrierCount = r->lsa_barrier_count;
    if (set(r->rail_gin_barrier_count)) q.railGinBarrierCount = r->rail_gin_barrier_count;
    if (set(r->lsa_ll_a2a_block_count)) q.lsaLLA2ABlockCount = r->lsa_ll_a2a_block_count;
    if (set(r->lsa_ll_a2a_slot_count)) q.lsaLLA2ASlotCount = r->lsa_ll_a2a_slot_count;
    if (set(r->gin_force_enable)) q.ginForceEnable = r->gin_force_enable != 0;
    if (set(r->gin_context_count)) q.ginContextCount = r->gin_context_count;
    if (set(r->gin_signal_count)) q.ginSignalCount = r->gin_signal_count;
    if (set(r->gin_counter_count)) q.ginCounterCount = r->gin_counter_count;
#ifdef N4C_DC_FULL_LAYOUT
    if (set(r->gin_connection_type)) q.ginConnectionType = (ncclGinConnectionType_t)r->gin_connection_type;
    if (set(r->gin_exclusive_contexts)) q.ginExclusiveContexts = r->gin_exclusive_contexts != 0;
    if (set(r->gin_queue_depth)) q.ginQueueDepth = r->gin_queue_depth;
    if (set(r->world_gin_barrier_count)) q.worldGinBarrierCount = r->world_gin_barrier_count;
    if (set(r->gin_strong_signals_required)) q.ginStrongSignalsRequired = r->gin_strong_signals_required != 0;
    if (set(r->gin_va_signals_required)) q.ginVaSignalsRequired = r->gin_va_signals_required != 0;
#else
    const char *missing = set(r->gin_connection_type)           ? "gin_connection_type"
                          : set(r->gin_exclusive_contexts)      ? "gin_exclusive_contexts"
                          : set(r->gin_queue_depth)             ? "gin_queue_depth"
                          : set(r->world_gin_barrier_count)     ? "world_gin_barrier_count"
                          : set(r->gin_strong_signals_required) ? "gin_strong_signals_required"
                          : set(r->gin_va_signals_required)     ? "gin_va_signals_required"
                                                                : NULL;
    if (missing) {
      *detail = missing;
      return N4C_DC_ENOTSUP;
    }
#endif
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
