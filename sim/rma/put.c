/*
 * sim/rma/put.c — ncclPutSignal: one copy from the caller's symmetric
 * window into the target's memory of the named window, then a signal to
 * the target (see signal.c). peerWinOffset is in bytes.
 */
#include "rma_internal.h"

SIM_EXPORT ncclResult_t ncclPutSignal(const void *localbuff, size_t count, ncclDataType_t datatype, int peer,
                                      ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx,
                                      unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  static const char op[] = "ncclPutSignal";
  ncclResult_t res = rma_check_signal_args(comm, peer, sigIdx, ctx, flags, op);
  if (res != ncclSuccess) return sim_group_error(res);
  if (!peerWin) {
    SIM_WARN(SIM_RMA, "%s: peerWin is NULL", op);
    return sim_group_error(ncclInvalidArgument);
  }
  if ((res = sim_check_buffer(comm, localbuff, count, datatype, op, "localbuff")) != ncclSuccess)
    return sim_group_error(res);
  size_t bytes = count * sim_dtype_size(datatype);
  if (bytes && !rma_in_symmetric(comm, localbuff, bytes)) {
    SIM_WARN(SIM_RMA,
             "%s: localbuff %p (%zu bytes) is not inside one of rank %d's windows registered with "
             "NCCL_WIN_COLL_SYMMETRIC",
             op, localbuff, bytes, comm->rank);
    return sim_group_error(ncclInvalidArgument);
  }
  rma_cwin *cw;
  if (!rma_find_own(comm, peerWin, &cw, op)) return sim_group_error(ncclInternalError);
  if (peerWinOffset > cw->size || bytes > cw->size - peerWinOffset) {
    SIM_WARN(SIM_RMA,
             "%s: %zu bytes at offset %zu run past the end of rank %d's window (%zu bytes) (ncclsim checks this; "
             "real NCCL does not)",
             op, bytes, peerWinOffset, peer, cw->size);
    rma_cwin_unref(cw);
    return sim_group_error(ncclInvalidArgument);
  }
  rma_task *t = rma_task_new(RMA_PUT, comm, 0);
  if (!t) {
    rma_cwin_unref(cw);
    return sim_group_error(ncclSystemError);
  }
  t->peer = peer;
  t->src = localbuff;
  t->off = peerWinOffset;
  t->nbytes = bytes;
  t->cw = cw;
  t->base.bytes = bytes;
  return sim_task_submit(&t->base, stream);
}
