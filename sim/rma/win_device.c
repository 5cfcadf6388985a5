/*
 * sim/rma/win_device.c — windows as the device API sees them: every
 * rank's memory of a window (sim/rma/rma.h, for sim/dev's kernel-side
 * pointers and GIN), and ncclGetMultimemDevicePointer.
 */
#include "config.h"

#include <string.h>

#include "rma_internal.h"
#include "rma.h"
#include "nccl_device/impl/core__types.h"

bool sim_rma_win_info_get(ncclWindow_t win, sim_rma_win_info *out) {
  memset(out, 0, sizeof *out);
  if (!win || !rma_win_live_owner(win, &out->comm)) return false;
  rma_win_view v;
  if (!rma_win_lookup(win, &v, "the device API")) return false;
  int n = v.cw->nranks;
  out->nranks = n;
  out->ptr = sim_malloc((size_t)n * sizeof *out->ptr);
  out->size = sim_malloc((size_t)n * sizeof *out->size);
  out->key = v.cw->key ? sim_malloc((size_t)n * sizeof *out->key) : NULL;
  if (!out->ptr || !out->size || (v.cw->key && !out->key)) {
    sim_rma_win_info_free(out);
    return false;
  }
  memcpy(out->ptr, v.cw->ptr, (size_t)n * sizeof *out->ptr);
  memcpy(out->size, v.cw->size, (size_t)n * sizeof *out->size);
  if (out->key) memcpy(out->key, v.cw->key, (size_t)n * sizeof *out->key);
  return true;
}

void sim_rma_win_info_free(sim_rma_win_info *info) {
  sim_free(info->ptr);
  sim_free(info->size);
  sim_free(info->key);
  memset(info, 0, sizeof *info);
}

/* As NCCL 2.30.7's (dev_runtime.cc): a window, an output and a multimem
 * handle with a base are required; without multicast the pointer is NULL
 * and the call succeeds. ncclsim never hands out a multimem handle with a
 * base (it has no multicast), so a handle that has one was not made by
 * ncclsim, and the window and offset are checked all the same. */
SIM_EXPORT ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
                                                     void **outPtr) {
  static const char op[] = "ncclGetMultimemDevicePointer";
  if (!window || !outPtr) {
    SIM_WARN(SIM_RMA, "%s: %s is NULL", op, !window ? "window" : "outPtr");
    return ncclInvalidArgument;
  }
  *outPtr = NULL;
  if (!multimem.mcBasePtr) {
    SIM_WARN(SIM_RMA, "%s: multimem.mcBasePtr is NULL; it needs to be valid", op);
    return ncclInvalidArgument;
  }
  rma_win_view v;
  if (!rma_win_lookup(window, &v, op)) return ncclInvalidArgument;
  if (offset >= v.size) {
    SIM_WARN(SIM_RMA, "%s: offset %zu is past the window's %zu bytes (ncclsim checks this)", op, offset, v.size);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}
