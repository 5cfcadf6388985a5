/*
 * sim/rma/rma.h — what the rma area offers the area beside it (sim/dev):
 * a window's memory on every rank, for kernels' window pointers and GIN
 * (the device API reads windows; rma owns them).
 */
#ifndef NCCLSIM_RMA_H_
#define NCCLSIM_RMA_H_

#include <stdbool.h>
#include "../sim.h"
#include "../net/net.h"

typedef struct sim_rma_win_info {
  ncclComm_t comm; /* the rank that owns the handle */
  int nranks;
  void **ptr;        /* by rank: its window memory (in its process, for a rank elsewhere) */
  size_t *size;      /* by rank, bytes */
  sim_ucx_rkey *key; /* across hosts, by rank: its remote key; else NULL */
} sim_rma_win_info;

/* Copies what `win`, a live handle, says of every rank into *out (its
 * arrays from sim_malloc, freed by sim_rma_win_info_free). false, with
 * nothing allocated, when win is not a live window handle (no WARN: the
 * caller says what it was doing) or out of memory. Thread-safe; a window
 * deregistered meanwhile is the caller's error, as in NCCL. */
bool sim_rma_win_info_get(ncclWindow_t win, sim_rma_win_info *out);
void sim_rma_win_info_free(sim_rma_win_info *info);

#endif /* NCCLSIM_RMA_H_ */
