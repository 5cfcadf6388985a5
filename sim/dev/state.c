/*
 * sim/dev/state.c — a device communicator's state on each rank (struct
 * ncclsimDevState, sim/dev/dev_internal.h), and its group: how a rank's
 * kernels find their peers' state.
 *
 * The state lives in memory the host's ranks share (sim_calloc: the arena
 * with ranks as processes), so a kernel of one rank reads and writes a
 * peer's signals, barriers and resource buffers directly, as LSA peers do
 * through NVLink. Each rank publishes its state in the group of its
 * device communicator's sequence number when it creates it; a kernel that
 * needs a peer's before the peer made it polls until it is there.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dev_internal.h"

void sim_dev_lsa_members(ncclComm_t comm, int *out) {
  const sim_net_map *m = comm->clique->net;
  if (!m) {
    for (int i = 0; i < comm->lsa_size; i++) out[i] = comm->node * comm->clique->ranks_per_node + i;
    return;
  }
  for (int r = 0; r < m->nranks; r++)
    if (m->host[r] == m->my_host && m->host_rank[r] < comm->lsa_size) out[m->host_rank[r]] = r;
}

static void group_join(sim_dev_state *ds, struct ncclsimDevState *st) {
  sim_mutex_lock(&ds->lock);
  sim_dev_group *g = ds->groups;
  while (g && g->seq != st->seq) g = g->next;
  if (!g && (g = sim_calloc(1, sizeof *g + (size_t)ds->nranks * sizeof g->rank[0]))) {
    g->seq = st->seq;
    g->nranks = ds->nranks;
    g->next = ds->groups;
    ds->groups = g;
  }
  if (g) {
    g->refs++;
    atomic_store_explicit(&g->rank[st->rank], st, memory_order_release);
  }
  st->group = g;
  pthread_mutex_unlock(&ds->lock);
}

static void group_leave(sim_dev_state *ds, struct ncclsimDevState *st) {
  sim_dev_group *g = st->group;
  if (!g) return;
  sim_mutex_lock(&ds->lock);
  atomic_store_explicit(&g->rank[st->rank], NULL, memory_order_release);
  if (--g->refs == 0) {
    sim_dev_group **pp = &ds->groups;
    while (*pp && *pp != g) pp = &(*pp)->next;
    if (ALWAYS(*pp)) *pp = g->next; /* a group with references is in the list */
    sim_free(g);
  }
  pthread_mutex_unlock(&ds->lock);
  st->group = NULL;
}

void sim_dev_groups_fini(sim_dev_state *ds) {
  for (sim_dev_group *g = ds->groups, *next; g; g = next) {
    next = g->next;
    sim_free(g);
  }
  ds->groups = NULL;
}

static void state_release(struct ncclsimDevState *st) {
  sim_free(st->lsa_world);
  sim_free(st->shadows);
  sim_free(st->counters);
  if (st->ctx)
    for (int i = 0; i < st->nctx; i++) sim_free(st->ctx[i].ring);
  sim_free(st->ctx);
  if (st->block) sim_mem_free(st->block, SIM_MEM_NCCL);
  st->magic = 0;
  sim_free(st);
}

/* The block of device memory peers reach: the resource buffers, then
 * the signals (nctx x nsig), zeroed. */
static bool block_make(struct ncclsimDevState *st, int device) {
  size_t res = (st->res_bytes + 63) & ~(size_t)63, sig = (size_t)st->nctx * (size_t)st->nsig * sizeof(uint64_t);
  st->block_bytes = res + sig;
  if (!st->block_bytes) return true;
  if (sim_mem_alloc((void **)&st->block, st->block_bytes, device, SIM_MEM_NCCL, 4096) != cudaSuccess) {
    SIM_WARN(SIM_DEV, "ncclDevCommCreate: cannot allocate %zu bytes of resource buffers%s on device %d",
             st->block_bytes, sig ? " and GIN signals" : "", device);
    return false;
  }
  memset(st->block, 0, st->block_bytes);
  st->res = st->res_bytes ? st->block : NULL;
  st->signals = sig ? (uint64_t *)(st->block + res) : NULL;
  st->sig_off = res;
  return true;
}

ncclResult_t sim_dev_state_make(ncclComm_t comm, const ncclDevComm *dc, size_t res_bytes, uint64_t seq,
                                struct ncclsimDevState **out) {
  struct ncclsimDevState *st = sim_calloc(1, sizeof *st);
  if (!st) return ncclSystemError;
  st->magic = SIM_DEV_STATE_MAGIC;
  st->rank = comm->rank;
  st->nranks = comm->nranks;
  st->lsa_rank = comm->lsa_rank;
  st->lsa_size = comm->lsa_size;
  st->comm = comm;
  st->clique = comm->clique;
  st->seq = seq;
  st->id = dc->id;
  st->res_bytes = res_bytes;
  st->gin_type = (int)dc->ginType;
  st->railed = dc->ginConnectionsRailed;
  st->strong_ok = dc->ginStrongSignals;
  st->va_ok = dc->ginVaSignals;
  st->nctx = (int)dc->ginContextCount;
  st->nsig = dc->ginSignalCount;
  st->nctr = dc->ginCounterCount;
  st->queue_depth = dc->ginQueueDepth;
  const sim_net_map *m = comm->clique->net;
  st->nhosts_elsewhere = m ? m->nhosts - 1 : 0;
  if (st->gin_type == NCCL_GIN_TYPE_NONE) st->nctx = st->nsig = st->nctr = 0;
  bool ok = (st->lsa_world = sim_calloc((size_t)st->lsa_size, sizeof *st->lsa_world)) != NULL;
  if (ok) sim_dev_lsa_members(comm, st->lsa_world);
  if (ok && st->gin_type != NCCL_GIN_TYPE_NONE) {
    size_t ns = (size_t)st->nctx * (size_t)st->nsig, nc = (size_t)st->nctx * (size_t)st->nctr;
    ok = (!ns || (st->shadows = sim_calloc(ns, sizeof(uint64_t)))) &&
         (!nc || (st->counters = sim_calloc(nc, sizeof(uint64_t)))) &&
         (st->ctx = sim_aligned_alloc(64, (size_t)st->nctx * sizeof *st->ctx)) != NULL;
    if (st->ctx) memset(st->ctx, 0, (size_t)st->nctx * sizeof *st->ctx);
  }
  if (!ok) {
    state_release(st);
    SIM_WARN(SIM_DEV, "ncclDevCommCreate: rank %d: out of memory for the device communicator's state", comm->rank);
    return ncclSystemError;
  }
  if (!block_make(st, comm->device)) {
    state_release(st);
    return ncclSystemError;
  }
  ncclResult_t r = ncclSuccess;
  if (st->gin_type == NCCL_GIN_TYPE_PROXY) r = sim_dev_proxy_start(st);
  if (r == ncclSuccess) group_join(comm->clique->area[SIM_AREA_DEV], st);
  if (r == ncclSuccess && !st->group) r = ncclSystemError;
  if (r == ncclSuccess && m) r = sim_dev_net_setup(st);
  if (r != ncclSuccess) {
    sim_dev_state_free(st);
    return r;
  }
  *out = st;
  return ncclSuccess;
}

void sim_dev_state_free(struct ncclsimDevState *st) {
  if (st->proxy) sim_dev_proxy_stop(st);
  if (st->net) sim_dev_net_free(st);
  group_leave(st->clique->area[SIM_AREA_DEV], st);
  state_release(st);
}

/* ---- in kernels ---- */

struct ncclsimDevState *sim_dev_self(const struct ncclDevComm *c, const char *op) {
  struct ncclsimDevState *st = c ? c->sim : NULL;
  if (!st || st->magic != SIM_DEV_STATE_MAGIC || st->id != c->id) {
    __ncclsim_fault(cudaErrorInvalidValue,
                    "%s: the device communicator (id %llu) was not made by ncclDevCommCreate, or was destroyed",
                    op, c ? (unsigned long long)c->id : 0ull);
    abort(); /* a host thread that called device code */
  }
  return st;
}

bool sim_dev_in_lsa(const struct ncclsimDevState *st, int peer, int *lsa) {
  for (int i = 0; i < st->lsa_size; i++)
    if (st->lsa_world[i] == peer) {
      if (lsa) *lsa = i;
      return true;
    }
  return false;
}

typedef struct {
  sim_dev_group *g;
  int peer;
} peer_arg;

static bool peer_made(void *p) {
  peer_arg *a = p;
  return atomic_load_explicit(&a->g->rank[a->peer], memory_order_acquire) != NULL;
}

struct ncclsimDevState *sim_dev_peer(struct ncclsimDevState *st, int peer, const char *op) {
  if (peer == st->rank) return st;
  if (peer < 0 || peer >= st->nranks)
    sim_dev_fault(st, cudaErrorInvalidValue, "%s: peer %d is not a rank of the communicator (%d ranks)", op, peer,
                  st->nranks);
  const sim_net_map *m = st->clique->net;
  if (sim_net_remote(m, peer)) {
    char host[160];
    sim_net_describe_host(m, m->host[peer], host, sizeof host);
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: rank %d is on %s, another simulated host: its memory is reachable by GIN only", op, peer, host);
  }
  struct ncclsimDevState *p = atomic_load_explicit(&st->group->rank[peer], memory_order_acquire);
  if (p) return p;
  char what[192];
  snprintf(what, sizeof what,
           "%s: rank %d's device communicator #%llu (rank %d has not called ncclDevCommCreate for it yet, or "
           "destroyed it)",
           op, peer, (unsigned long long)st->seq, peer);
  peer_arg a = {st->group, peer};
  sim_dev_poll(st, peer_made, &a, what);
  return atomic_load_explicit(&st->group->rank[peer], memory_order_acquire);
}
