/*
 * case_rma.h — helpers shared by the resource, window, registration and
 * signal cases (case_res.c, case_win.c, case_reg.c, case_sig.c).
 */
#ifndef N4C_CONFORMANCE_CASE_RMA_H_
#define N4C_CONFORMANCE_CASE_RMA_H_

#include <string.h>
#include "case.h"
#ifdef NCCLSIM
#include <ncclsim.h>
#endif

static inline void rma_mem_free_(void *p) { (void)ncclMemFree(p); }
static inline void rma_res_free_(void *r) { (void)n4c_resource_free((n4c_resource_t *)r); }

/* ncclMemAlloc on the current device, freed after the case (NULL after a
 * failed check). */
static inline void *rma_mem(case_ctx_t *ctx, size_t bytes)
{
  void *p = NULL;
  ncclResult_t r = ncclMemAlloc(&p, bytes);
  if (!CASE_EXPECT(ctx, r == ncclSuccess, "ncclMemAlloc(%zu): %s", bytes, ncclGetErrorString(r)))
    return NULL;
  ctx_defer(ctx, rma_mem_free_, p);
  return p;
}

/* n4c_resource_free(r) after the case. */
static inline void rma_defer_res(case_ctx_t *ctx, void *r)
{
  if (r)
    ctx_defer(ctx, rma_res_free_, r);
}

/* A communicator of every rank of the case: with nnodes 0, on the layout
 * the environment gives (NCCLSIM_RANKS_PER_NODE, or the real nodes); else
 * asked to be on `nnodes` simulated nodes (ncclsim only; real NCCL has the
 * nodes it has). Either way a case reads the layout it got with
 * ctx_topology. false, after a skip or a failed check, when that cannot be
 * had. */
static inline bool rma_comm_nodes(case_ctx_t *ctx, int nnodes, n4c_comm_t **comm)
{
  if (nnodes == 0) {
    n4c_status_t st = ctx_comm_init(ctx, comm);
    return CASE_EXPECT(ctx, st == N4C_OK, "ctx_comm_init: %s", n4c_strerror(st));
  }
#ifdef NCCLSIM
  if (ctx->nranks % nnodes != 0) {
    case_skip_(ctx, "%d ranks do not split into %d nodes", ctx->nranks, nnodes);
    return false;
  }
  ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
  o.ranksPerNode = ctx->nranks / nnodes;
  ncclsimSetCommOptions(&o);
  n4c_status_t st = ctx_comm_init(ctx, comm);
  ncclsimSetCommOptions(NULL);
  return CASE_EXPECT(ctx, st == N4C_OK, "ctx_comm_init on %d nodes: %s", nnodes, n4c_strerror(st));
#else
  case_skip_(ctx, "a %d-node topology needs ncclsim (NCCLSIM_RANKS_PER_NODE); real NCCL runs on "
             "the nodes it is given", nnodes);
  return false;
#endif
}

/* A window of `bytes` over ncclMemAlloc memory on every rank. */
static inline bool rma_window(case_ctx_t *ctx, n4c_comm_t *comm, size_t bytes, int flags,
                              void **mem, n4c_window_t **win)
{
  *win = NULL;
  if (!(*mem = rma_mem(ctx, bytes)))
    return false;
  n4c_buffer_t b = n4c_buffer(*mem, bytes, ncclUint8, ctx->device);
  n4c_status_t st = n4c_comm_register_window(comm, &b, flags, win);
  if (case_refused_across_hosts(ctx, st))
    return false;
  if (!CASE_EXPECT(ctx, st == N4C_OK, "n4c_comm_register_window: %s (%s)", n4c_strerror(st),
                   n4c_last_error_message()))
    return false;
  rma_defer_res(ctx, *win);
  return CASE_EXPECT(ctx, *win != NULL, "n4c_comm_register_window gave no window");
}

#endif /* N4C_CONFORMANCE_CASE_RMA_H_ */
