/*
 * sim/comm/grow.c — ncclCommGetUniqueId and ncclCommGrow.
 *
 * NCCL 2.30 (init.cc, ncclCommGetUniqueId and ncclCommGrow; bootstrap.cc,
 * bootstrapGetUniqueId and bcastGrowHandle; nccl.h and the user guide's
 * api/comms.rst):
 *
 *  - One existing rank, the coordinator, calls ncclCommGetUniqueId on the
 *    parent and hands the id to the new ranks out of band. It does not
 *    block; NCCL sends the id to the parent's ranks 0 and n-1 itself. The
 *    id names the parent and its next child (split, shrink or grow), and
 *    serves one grow only; asked again before that grow, it is the same.
 *  - Every rank of the new communicator calls ncclCommGrow with the same
 *    nRanks (more than the parent's): existing ranks with (parent, id or
 *    NULL, rank -1) keep their rank; new ranks with (NULL, id, their rank,
 *    at least the parent's size). The parent stays as it was.
 *  - config NULL: the parent's configuration for existing ranks, the
 *    defaults for new ones.
 *
 * Here the id's key names a round of the init table that every process of
 * the job shares (comm/init.c), so existing and new ranks meet there as an
 * init does, threads or processes alike. Existing ranks compute the key
 * from their parent's clique and its count of children; new ranks read it
 * from the id. Across hosts the id carries a bootstrap root in the
 * coordinator's process, and the existing ranks, some of which may have
 * no id, exchange it first (comm/child_net.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "../net/net.h"
#include "comm_internal.h"

static ncclResult_t get_unique_id(ncclComm_t comm, ncclUniqueId *id) {
  SIM_CHECK(sim_comm_check_mgmt(comm, "ncclCommGetUniqueId"));
  if (!id) {
    SIM_WARN(SIM_INIT, "ncclCommGetUniqueId: uniqueId is NULL");
    return ncclInvalidArgument;
  }
  const char *env = getenv("NCCL_COMM_ID");
  if (env) { /* as NCCL: a fixed root address cannot serve a grow */
    SIM_WARN(SIM_INIT, "ncclCommGetUniqueId should not be called when NCCL_COMM_ID is set (it is \"%s\")", env);
    return ncclInvalidUsage;
  }
  sim_clique *c = comm->clique;
  uint64_t seq = comm->split_count + 1; /* the next child, as NCCL's childCount + 1 */
  /* Again before a grow consumed the id: NCCL 2.30.7 makes another (its
   * source has no check, and it returned ncclSuccess twice on a GPU,
   * docs/conformance/nccl-2.30.7_H100x1_2026-11-23_ft); nccl4py's advice
   * not to is advice. Here the second id is the first: both name the
   * parent's next child. */
  /* Across hosts the id carries a bootstrap root, here; the id is kept
   * for the second call and for this host's ranks' grow (child_net.c). */
  sim_mutex_lock(&c->lock);
  int root = c->grow_root;
  bool again = c->grow_seq == seq;
  if (again) *id = c->grow_id;
  pthread_mutex_unlock(&c->lock);
  if (!again) {
    /* With the network on, new ranks may come from other hosts even to a
     * parent on one host (a shrink to this host's ranks). */
    if (c->net || sim_net_on()) SIM_CHECK(sim_net_grow_id_make(id, c->key, seq, c->nranks));
    else sim_grow_id_make(id, c->key, seq, c->nranks);
    sim_mutex_lock(&c->lock);
    c->grow_seq = seq;
    c->grow_root = comm->rank;
    c->grow_id = *id;
    pthread_mutex_unlock(&c->lock);
  }
  if (again)
    SIM_INFO(SIM_INIT, "ncclCommGetUniqueId: rank %d made this communicator's next grow id before (rank %d); "
             "the same id again", comm->rank, root);
  SIM_INFO(SIM_INIT, "ncclCommGetUniqueId: rank %d of communicator %016llx, for its child %llu", comm->rank,
           (unsigned long long)c->key, (unsigned long long)seq);
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId *uniqueId) {
  return get_unique_id(comm, uniqueId);
}

#define OP "ncclCommGrow"

/* An existing rank: keeps its rank, on the parent's device. */
static ncclResult_t grow_existing(ncclComm_t comm, int nranks, const ncclUniqueId *id, int rank, ncclComm_t *out,
                                  ncclConfig_t *config) {
  SIM_CHECK(sim_comm_check_mgmt(comm, OP));
  if (nranks <= comm->nranks) {
    SIM_WARN(SIM_INIT, OP ": nRanks %d is not more than the parent's %d ranks", nranks, comm->nranks);
    return ncclInvalidArgument;
  }
  if (rank != -1) {
    SIM_WARN(SIM_INIT, OP ": existing ranks must pass rank -1, got %d", rank);
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_config_check(config, OP));
  sim_clique *c = comm->clique;
  uint64_t seq = comm->split_count + 1;
  sim_id_info info;
  if (id && (!sim_id_read(id, &info) || !info.grow_seq || info.parent_key != c->key)) {
    SIM_WARN(SIM_INIT, OP ": rank %d passed a uniqueId that ncclCommGetUniqueId did not make for this communicator "
             "(ncclsim checks this; existing ranks may pass NULL)", comm->rank);
    return ncclInvalidArgument;
  }
  sim_mutex_lock(&c->lock);
  uint64_t made = c->grow_seq, consumed = c->grow_consumed;
  pthread_mutex_unlock(&c->lock);
  uint64_t stale = id ? info.grow_seq : made > consumed ? made : 0;
  if (stale && stale != seq) {
    /* NCCL's "magic mismatch computed by the root" */
    SIM_WARN(SIM_INIT, OP ": the id of this grow was made for the parent's child %llu, but the parent has made %llu "
             "children since (splits, shrinks or grows): make a new id with ncclCommGetUniqueId",
             (unsigned long long)stale, (unsigned long long)(seq - stale));
    return ncclInvalidArgument;
  }
  /* An id with a bootstrap root: the existing ranks init through it too. */
  sim_mutex_lock(&c->lock);
  bool net_id = id ? sim_id_net(id) : c->grow_seq == seq && sim_id_net(&c->grow_id);
  pthread_mutex_unlock(&c->lock);
  if (c->net || net_id) return sim_grow_net(comm, nranks, id, seq, config, out);
  ncclComm_t nc = sim_comm_alloc(nranks, comm->rank, comm->device, config);
  if (!nc) return ncclSystemError;
  if (!config) nc->blocking = comm->blocking; /* the parent's configuration */
  nc->opts = comm->opts;
  nc->grow_join = true;
  comm->split_count = seq; /* as NCCL's ++childCount: this id is consumed */
  sim_mutex_lock(&c->lock);
  if (c->grow_consumed < seq) c->grow_consumed = seq;
  pthread_mutex_unlock(&c->lock);
  SIM_INFO(SIM_INIT, OP ": existing rank %d of communicator %016llx joins its child %llu of %d ranks", comm->rank,
           (unsigned long long)c->key, (unsigned long long)seq, nranks);
  return sim_init_join(nc, sim_grow_key(c->key, seq), out);
}

/* A new rank: the id's round, on the current device. */
static ncclResult_t grow_new(int nranks, const ncclUniqueId *id, int rank, ncclComm_t *out, ncclConfig_t *config) {
  if (rank < 0) {
    SIM_WARN(SIM_INIT, OP ": new ranks (comm NULL) must pass their rank in the new communicator, got %d", rank);
    return ncclInvalidArgument;
  }
  if (!id) {
    SIM_WARN(SIM_INIT, OP ": new ranks (comm NULL) must pass the uniqueId of ncclCommGetUniqueId, got NULL");
    return ncclInvalidArgument;
  }
  if (rank >= nranks) {
    SIM_WARN(SIM_INIT, OP ": new rank %d exceeds total ranks %d", rank, nranks);
    return ncclInvalidArgument;
  }
  sim_id_info info;
  if (!sim_id_read(id, &info) || !info.grow_seq) {
    SIM_WARN(SIM_INIT, OP ": the uniqueId was not made by ncclCommGetUniqueId (ncclsim checks this)");
    return ncclInvalidArgument;
  }
  if (rank < info.parent_nranks || nranks <= info.parent_nranks) {
    SIM_WARN(SIM_INIT, OP ": rank %d of nRanks %d: the parent has %d ranks, which keep ranks 0..%d; new ranks take "
             "the ranks after them (ncclsim checks this)", rank, nranks, info.parent_nranks,
             info.parent_nranks - 1);
    return ncclInvalidArgument;
  }
  if (sim_id_net(id)) /* a parent across hosts: its bootstrap root is the coordinator's */
    return sim_init_rank(out, nranks, id, rank, config, sim_current_device(), NULL, OP);
  if (!sim_id_reachable(id, OP)) return ncclInvalidUsage;
  SIM_CHECK(sim_config_check(config, OP));
  ncclComm_t nc = sim_comm_alloc(nranks, rank, sim_current_device(), config);
  if (!nc) return ncclSystemError;
  nc->grow_join = true;
  SIM_INFO(SIM_INIT, OP ": new rank %d joins child %llu of communicator %016llx, %d ranks", rank,
           (unsigned long long)info.grow_seq, (unsigned long long)info.parent_key, nranks);
  return sim_init_join(nc, info.key, out);
}

static ncclResult_t grow(ncclComm_t comm, int nranks, const ncclUniqueId *id, int rank, ncclComm_t *out,
                         ncclConfig_t *config) {
  if (!out) {
    SIM_WARN(SIM_INIT, OP ": newcomm is NULL");
    return ncclInvalidArgument;
  }
  *out = NULL;
  if (nranks <= 0) {
    SIM_WARN(SIM_INIT, OP ": total ranks must be positive, got %d", nranks);
    return ncclInvalidArgument;
  }
  return comm ? grow_existing(comm, nranks, id, rank, out, config) : grow_new(nranks, id, rank, out, config);
}

SIM_EXPORT ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId *uniqueId, int rank,
                                     ncclComm_t *newcomm, ncclConfig_t *config) {
  return sim_init_group_check(grow(comm, nRanks, uniqueId, rank, newcomm, config));
}
