/*
 * sim/rma/buf_register.c — registered buffers: ncclCommRegister /
 * ncclCommDeregister.
 *
 * Registration is local. The simulator has nothing to pin, so a handle only
 * records the range (for bounds checks and ncclCommMemStats). A handle that
 * was deregistered is kept until the communicator goes, so that a second
 * deregistration fails with ncclInvalidUsage, as on real NCCL, instead of
 * reading freed memory.
 */
#include <stdio.h>

#include "rma_internal.h"

SIM_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
  static const char op[] = "ncclCommRegister";
  SIM_CHECK(sim_comm_check(comm, op));
  if (!handle || (!buff && size)) {
    SIM_WARN(SIM_RMA, "%s: buff %p, handle %p: NULL", op, buff, (void *)handle);
    return ncclInvalidArgument;
  }
  *handle = NULL;
  sim_alloc_info a;
  if (sim_mem_lookup(buff, &a) && a.kind != SIM_MEM_HOST && a.device != comm->device) {
    SIM_WARN(SIM_RMA, "%s: buff %p is on device %d, but rank %d's communicator is on device %d", op, buff,
             a.device, comm->rank, comm->device);
    return ncclInvalidArgument;
  }
  if (!sim_mem_check_range(buff, size, "ncclCommRegister buff")) return ncclInvalidArgument;
  rma_reg *g = sim_calloc(1, sizeof *g);
  if (!g) return ncclSystemError;
  g->magic = RMA_REG_MAGIC;
  g->comm = comm;
  g->ptr = buff;
  g->size = size;
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  g->next = rk->regs;
  rk->regs = g;
  pthread_mutex_unlock(&rk->lock);
  atomic_fetch_add(&comm->mem_bytes, (uint64_t)size);
  *handle = g;
  return ncclSuccess;
}

static rma_reg *unlink_reg(rma_reg **head, void *handle) {
  for (rma_reg **pp = head; *pp; pp = &(*pp)->next)
    if (*pp == handle) {
      rma_reg *g = *pp;
      *pp = g->next;
      return g;
    }
  return NULL;
}

SIM_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) {
  static const char op[] = "ncclCommDeregister";
  SIM_CHECK(sim_comm_check(comm, op));
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  rma_reg *g = unlink_reg(&rk->regs, handle);
  bool dead = false;
  if (g) {
    g->magic = 0;
    g->next = rk->dead_regs;
    rk->dead_regs = g;
  } else {
    for (rma_reg *d = rk->dead_regs; d && !dead; d = d->next) dead = d == handle;
  }
  pthread_mutex_unlock(&rk->lock);
  if (!g) {
    SIM_WARN(SIM_RMA, "%s: rank %d: handle %p is %s", op, comm->rank, handle,
             dead ? "deregistered already" : "not a registration of this communicator");
    return ncclInvalidUsage;
  }
  atomic_fetch_sub(&comm->mem_bytes, (uint64_t)g->size);
  return ncclSuccess;
}

void rma_regs_fini(ncclComm_t comm) {
  rma_rank *rk = &rma_of(comm)->rank[comm->rank];
  sim_mutex_lock(&rk->lock);
  rma_reg *lists[2] = {rk->regs, rk->dead_regs};
  rk->regs = rk->dead_regs = NULL;
  pthread_mutex_unlock(&rk->lock);
  for (int i = 0; i < 2; i++)
    while (lists[i]) {
      rma_reg *g = lists[i];
      lists[i] = g->next;
      sim_free(g);
    }
}
