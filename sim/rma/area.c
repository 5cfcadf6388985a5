/*
 * sim/rma/area.c — the rma area: its per-clique state (per-rank window
 * lists and registrations, registration rounds, signal counters), created
 * and freed with the clique, and a rank's cleanup at destroy or abort.
 */
#include <string.h>

#include "config.h"
#include "rma_internal.h"

static ncclResult_t rma_clique_init(sim_clique *c) {
  rma_state *st = sim_calloc(1, sizeof *st);
  if (!st) return ncclSystemError;
  size_t n = (size_t)c->nranks;
  st->nranks = c->nranks;
  st->rank = sim_aligned_alloc(64, n * sizeof *st->rank);
  st->row = sim_calloc(n, sizeof *st->row);
  if (st->row && !c->net && (st->sig = sim_aligned_alloc(64, n * n * sizeof *st->sig)))
    for (size_t i = 0; i < n; i++) st->row[i] = st->sig + i * n;
  if (!st->rank || !st->row || (c->net ? rma_net_rows_init(c, st) != ncclSuccess : !st->sig)) {
    rma_net_rows_fini(st);
    sim_free(st->rank);
    sim_free(st->row);
    sim_free(st->sig);
    sim_free(st);
    return ncclSystemError;
  }
  memset(st->rank, 0, n * sizeof *st->rank);
  if (st->sig) memset(st->sig, 0, n * n * sizeof *st->sig);
  for (size_t i = 0; i < n; i++) {
    sim_mutex_init(&st->rank[i].lock);
    st->rank[i].withdrawn_from = UINT64_MAX;
  }
  sim_rv_table_init(&st->rounds);
  c->area[SIM_AREA_RMA] = st;
  return ncclSuccess;
}

static void rma_clique_fini(sim_clique *c) {
  rma_state *st = c->area[SIM_AREA_RMA];
  if (NEVER(!st)) return; /* only areas whose init succeeded are finalised */
  sim_rv_table_fini(&st->rounds);
  for (int i = 0; i < st->nranks; i++) pthread_mutex_destroy(&st->rank[i].lock);
  rma_net_rows_fini(st);
  sim_free(st->rank);
  sim_free(st->row);
  sim_free(st->sig);
  sim_free(st);
  c->area[SIM_AREA_RMA] = NULL;
}

/* Frees comm's leftover registrations and windows (destroy/abort). */
static void rma_comm_fini(ncclComm_t comm) {
  rma_state *st = rma_of(comm);
  if (NEVER(!st)) return; /* a comm has a clique only once every area is set up */
  rma_register_comm_fini(comm);
  rma_wins_fini(comm);
  rma_regs_fini(comm);
  rma_net_comm_free(comm);
  atomic_store(&comm->mem_bytes, 0);
}

static void rma_comm_poll(ncclComm_t comm) { (void)sim_rma_poll(comm); }

const sim_area sim_area_rma = {.name = "rma", .clique_init = rma_clique_init, .clique_fini = rma_clique_fini, .comm_fini = rma_comm_fini, .comm_poll = rma_comm_poll,
                               .net_join = rma_net_join, .comm_free = rma_net_comm_free};
