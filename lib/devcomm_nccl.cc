/*
 * devcomm_nccl.cc — the device-communicator bridge (devcomm_bridge.h) for
 * real NCCL, whose <nccl_device.h> only C++ can include. The one C++ file
 * of lib/; built only for the real backend when configure found a usable
 * <nccl_device.h> (HAVE_NCCL_DEVCOMM).
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

static bool set(int v) { return v != N4C_UNSET; }

/* put_<field>(q, v, 0) assigns and returns true if the header's struct has
 * <field>; otherwise the second overload is chosen and returns false. */
#define N4C_FIELD(name)                                                                  \
  template <typename T>                                                                  \
  static auto put_##name(T &q, int v, int) -> decltype((void)q.name, true) {             \
    q.name = static_cast<decltype(q.name)>(v);                                           \
    return true;                                                                         \
  }                                                                                      \
  template <typename T>                                                                  \
  static bool put_##name(T &, int, long) {                                               \
    return false;                                                                        \
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
#ifdef NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
  ncclDevCommRequirements_t q = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
#else
  ncclDevCommRequirements_t q = ncclDevCommRequirements_t();
  put_ginContextCount(q, 4, 0);
#endif
  if (r) {
    const char *missing = NULL;
#define N4C_PUT(field, member)                                                 \
  if (set(r->field) && !put_##member(q, r->field, 0) && !missing) missing = #field;
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
