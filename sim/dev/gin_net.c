/*
 * sim/dev/gin_net.c — GIN to ranks on other simulated hosts, over UCX.
 * (Not yet: such an operation ends the kernel with cudaErrorNotSupported.)
 */
#include "config.h"

#include "dev_internal.h"

ncclResult_t sim_dev_net_setup(struct ncclsimDevState *st) {
  (void)st;
  return ncclSuccess;
}

void sim_dev_net_free(struct ncclsimDevState *st) { st->net = NULL; }

void sim_dev_net_execute(struct ncclsimDevState *st, const ncclsimGinOp *op, const void *src, size_t bytes,
                         uint64_t dst_addr, const sim_ucx_rkey *dst_key) {
  (void)src, (void)bytes, (void)dst_addr, (void)dst_key;
  sim_dev_fault(st, cudaErrorNotSupported, "GIN to rank %d on another simulated host is not supported yet", op->peer);
}

void sim_dev_net_res_at(struct ncclsimDevState *st, int peer, size_t offset, uint64_t *addr,
                        const sim_ucx_rkey **key) {
  (void)offset, (void)addr, (void)key;
  sim_dev_fault(st, cudaErrorNotSupported,
                "the resource buffers of rank %d on another simulated host are not reachable yet", peer);
}

void sim_dev_net_progress(struct ncclsimDevState *st) {
  (void)st;
  sim_ucx_progress();
}
