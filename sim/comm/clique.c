/*
 * sim/comm/clique.c — a rank's comm, and the clique that binds the ranks
 * of one communicator: its topology and every area's state.
 */
#include "comm_internal.h"
#include "../transport.h"

static const sim_area *const areas[SIM_AREA_COUNT] = {&sim_area_conn, &sim_area_p2p, &sim_area_rma,
                                                      &sim_area_coll, &sim_area_dev};

ncclComm_t sim_comm_alloc(int nranks, int rank, int device, const ncclConfig_t *config) {
  ncclComm_t c = sim_calloc(1, sizeof *c);
  if (!c) return NULL;
  c->magic = SIM_COMM_MAGIC;
  c->rank = rank;
  c->nranks = nranks;
  c->device = device;
  c->blocking = !(config && config->blocking == 0);
  atomic_store(&c->state, SIM_COMM_INITIALIZING);
  pthread_mutex_init(&c->lock, NULL);
  c->pending.prev = c->pending.next = &c->pending;
  sim_comm_driven(c); /* the init caller drives it until another thread calls */
  sim_options_resolve(&c->opts);
  uint64_t fault = (uint64_t)sim_param(SIM_P_FAULT);
  if (fault && (int)(fault >> 32) == rank) c->fault_at = fault & 0xffffffffu;
  return c;
}

void sim_comm_free(ncclComm_t c) {
  c->magic = 0;
  pthread_mutex_destroy(&c->lock);
  sim_free(c);
}

/* Frees a clique whose first `nareas` areas were set up, last first. */
static void clique_free(sim_clique *c, int nareas) {
  while (--nareas >= 0)
    if (areas[nareas]->clique_fini) areas[nareas]->clique_fini(c);
  sim_trace_clique_fini(c);
  sim_rv_table_fini(&c->splits);
  pthread_mutex_destroy(&c->lock);
  sim_free(c->ranks);
  sim_free(c->rank_wq);
  sim_free(c);
}

ncclResult_t sim_clique_create(ncclComm_t *comms, int nranks, uint64_t key) {
  sim_clique *c = sim_calloc(1, sizeof *c);
  if (!c) return ncclSystemError;
  c->ranks = sim_calloc((size_t)nranks, sizeof *c->ranks);
  c->rank_wq = sim_calloc((size_t)nranks, sizeof *c->rank_wq);
  if (!c->ranks || !c->rank_wq) {
    sim_free(c->ranks);
    sim_free(c->rank_wq);
    sim_free(c);
    return ncclSystemError;
  }
  c->key = key;
  c->nranks = nranks;
  c->tp = &sim_transport_local;
  pthread_mutex_init(&c->lock, NULL);
  sim_rv_table_init(&c->splits);
  int rpn = comms[0]->opts.ranksPerNode;
  c->ranks_per_node = rpn > 0 && rpn < nranks ? rpn : nranks;
  c->nnodes = (nranks + c->ranks_per_node - 1) / c->ranks_per_node;
  int i;
  for (i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->clique_init && areas[i]->clique_init(c) != ncclSuccess) break;
  if (i < SIM_AREA_COUNT) {
    SIM_WARN(SIM_INIT, "cannot allocate the %s state of a %d-rank communicator", areas[i]->name, nranks);
    clique_free(c, i);
    return ncclSystemError;
  }
  if (sim_trace_clique_init(c) != ncclSuccess) {
    SIM_WARN(SIM_INIT, "cannot allocate the flight recorder of a %d-rank communicator", nranks);
    clique_free(c, SIM_AREA_COUNT);
    return ncclSystemError;
  }
  atomic_store(&c->refs, nranks);
  for (int r = 0; r < nranks; r++) {
    ncclComm_t m = comms[r];
    c->ranks[r] = m;
    m->clique = c;
    m->node = r / c->ranks_per_node;
    m->lsa_rank = r % c->ranks_per_node;
    int first = m->node * c->ranks_per_node;
    m->lsa_size = nranks - first < c->ranks_per_node ? nranks - first : c->ranks_per_node;
  }
  for (int r = 0; r < nranks; r++) atomic_store(&comms[r]->state, SIM_COMM_READY);
  SIM_INFO(SIM_INIT, "communicator %016llx: %d ranks on %d node(s) of %d", (unsigned long long)key, nranks,
           c->nnodes, c->ranks_per_node);
  return ncclSuccess;
}

void sim_clique_unref(sim_clique *c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  clique_free(c, SIM_AREA_COUNT);
}

void sim_comm_fini_areas(ncclComm_t comm) {
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_fini) areas[i]->comm_fini(comm);
}

void sim_comm_poll(ncclComm_t comm) {
  if (!comm->clique) return;
  for (int i = 0; i < SIM_AREA_COUNT; i++)
    if (areas[i]->comm_poll) areas[i]->comm_poll(comm);
}
