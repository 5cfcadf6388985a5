/*
 * sim/comm/child_net.c — the child communicators of a communicator across
 * hosts: ncclCommSplit, ncclCommShrink and ncclCommGrow.
 *
 * On one host the split round builds every color's communicator at once
 * (split.c). Across hosts no process can build the clique of ranks that
 * live elsewhere, so the split is made the way NCCL makes one from its
 * bootstrap (init.cc, ncclCommSplit through bootstrapSplit):
 *   1. the ranks exchange (color, key);
 *   2. the new rank 0 of each color makes a unique id, with a bootstrap
 *      root in its process, and the ids are exchanged the same way;
 *   3. each member inits its rank of its color's communicator with its
 *      color's id: the init path of every communicator across hosts
 *      (bootstrap, UCX endpoints, signal rows), on the parent's device,
 *      with the parent's options.
 * A shrink is one exchange among the ranks that call it (never the
 * excluded ones): the exclude list's hash, which must agree, and the id of
 * the new rank 0, the first survivor. Survivors keep their order.
 *
 * A grow's existing ranks exchange the id of ncclCommGetUniqueId, which
 * only some of them may have passed (its coordinator's host keeps it too),
 * and init their ranks with it beside the new ranks (grow.c).
 *
 * The exchanges are UCX messages among the parent's ranks
 * (net/exchange.c), not its collectives: they take none of its sequence
 * numbers, and they run on a revoked parent, as NCCL's bootstrap does.
 *
 * Not yet across hosts: any of them inside a group, or of or into a
 * non-blocking communicator (the exchanges block the calling thread, which
 * inside a group may drive its peers).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "../net/net.h"
#include "comm_internal.h"

typedef struct {
  int32_t color, key;
} split_part;

/* all[i * bytes ..] gets peers[i]'s `mine` (NULL: every rank of the
 * parent; this rank is at index me): exchange `round` (0 or 1) of the
 * parent's current split, shrink or grow. */
static ncclResult_t exchange(ncclComm_t comm, const char *op, int round, const int *peers, int n, int me,
                             const void *mine, size_t bytes, void *all, const char *what) {
  char about[96];
  snprintf(about, sizeof about, "%s across hosts, its exchange of %s", op, what);
  /* Twice NCCLSIM_TIMEOUT: these calls follow failures, and a peer on
   * another host may see one only when its own operation times out (a rank
   * stopped by NCCLSIM_FAULT is seen at once on its own host only). */
  uint64_t now = sim_now_ns(), t = sim_timeout_ns();
  sim_due due = sim_due_at(t < (UINT64_MAX - now) / 2 ? now + 2 * t : UINT64_MAX);
  /* Sequence numbers 0-63 (suspend.c takes 64-127). */
  ncclResult_t res = sim_net_allgather(comm, SIM_NET_TAG_MGMT, (2 * comm->split_count + (uint64_t)round) & 63, peers,
                                       n, me, mine, bytes, all, true, &due, about);
  if (res == ncclTimeout)
    res = sim_comm_fail(comm, ncclTimeout, "%s: rank %d waited for the other ranks' part; after twice NCCLSIM_TIMEOUT=%s "
                        "s some still had not called %s", about, comm->rank, sim_param_text(SIM_P_TIMEOUT), op);
  return res;
}

/* The members of `color` (parent ranks) in new-rank order, by (key, parent
 * rank); returns how many. */
static int members_of(const split_part *parts, int n, int color, int *order) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (parts[i].color != color) continue;
    int j = m++;
    while (j > 0 && parts[order[j - 1]].key > parts[i].key) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  return m;
}

static ncclResult_t refuse(ncclComm_t comm, const char *op, const char *why) {
  SIM_WARN(SIM_INIT, "%s: rank %d's communicator spans %d hosts, and ncclsim does not yet run %s %s across hosts "
           "(docs/ncclsim.md, \"Ranks on other hosts\")", op, comm->rank, comm->clique->net->nhosts, op, why);
  return ncclInvalidUsage;
}

/* The refusals that split, shrink and grow share; ncclSuccess if none. */
static ncclResult_t refused(ncclComm_t comm, const char *op, const ncclConfig_t *config) {
  if (sim_group_depth() > 0) return refuse(comm, op, "inside a group");
  if (!comm->blocking || (config && config->blocking == 0))
    return refuse(comm, op, comm->blocking ? "into a non-blocking communicator" : "on a non-blocking communicator");
  return ncclSuccess;
}

ncclResult_t sim_split_net(ncclComm_t comm, int color, int key, ncclConfig_t *config, ncclComm_t *newcomm) {
  static const char op[] = "ncclCommSplit";
  SIM_CHECK(refused(comm, op, config));
  int n = comm->nranks;
  split_part mine = {color, key}, *parts = sim_calloc((size_t)n, sizeof *parts);
  int *order = sim_calloc((size_t)n, sizeof *order);
  ncclUniqueId id, *ids = sim_calloc((size_t)n, sizeof *ids);
  ncclResult_t res = parts && order && ids ? ncclSuccess : ncclSystemError;
  comm->split_count++; /* as on one host: the grow ids count splits too */
  if (res == ncclSuccess) res = exchange(comm, op, 0, NULL, n, comm->rank, &mine, sizeof mine, parts, "colors and keys");
  int m = 0, me = -1;
  if (res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR) {
    m = members_of(parts, n, color, order);
    for (int k = 0; k < m; k++)
      if (order[k] == comm->rank) me = k;
    if (NEVER(me < 0)) res = ncclInternalError;
  }
  /* The new rank 0 of each color makes its id; the others send zeros. */
  memset(&id, 0, sizeof id);
  if (res == ncclSuccess && me == 0) res = sim_net_id_make(&id);
  if (res == ncclSuccess) res = exchange(comm, op, 1, NULL, n, comm->rank, &id, sizeof id, ids, "unique ids");
  if (res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR) {
    SIM_INFO(SIM_INIT, "%s: rank %d is rank %d of %d of color %d, across hosts", op, comm->rank, me, m, color);
    res = sim_init_rank(newcomm, m, &ids[order[0]], me, config, comm->device, &comm->opts, op);
  }
  sim_free(parts);
  sim_free(order);
  sim_free(ids);
  return res;
}

/* A survivor's part of a shrink. */
typedef struct {
  uint64_t excl; /* the hash of the sorted exclude list */
  ncclUniqueId id; /* the first survivor's: the new communicator's */
} shrink_part;

ncclResult_t sim_shrink_net(ncclComm_t comm, const int *excl, int nexcl, uint64_t excl_hash, ncclConfig_t *config,
                            ncclComm_t *newcomm) {
  static const char op[] = "ncclCommShrink";
  SIM_CHECK(refused(comm, op, config));
  int n = comm->nranks - nexcl, me = -1;
  int *peers = sim_calloc((size_t)n, sizeof *peers);
  shrink_part mine = {excl_hash, {{0}}}, *parts = sim_calloc((size_t)n, sizeof *parts);
  ncclResult_t res = peers && parts ? ncclSuccess : ncclSystemError;
  comm->split_count++;
  /* The survivors in parent order: their new ranks. excl is sorted. */
  for (int r = 0, k = 0, e = 0; r < comm->nranks && res == ncclSuccess; r++) {
    if (e < nexcl && excl[e] == r) {
      e++;
      continue;
    }
    if (r == comm->rank) me = k;
    peers[k++] = r;
  }
  if (res == ncclSuccess && me == 0) res = sim_net_id_make(&mine.id);
  if (res == ncclSuccess)
    res = exchange(comm, op, 0, peers, n, me, &mine, sizeof mine, parts, "exclude lists and the unique id");
  for (int k = 1; k < n && res == ncclSuccess; k++)
    if (parts[k].excl != parts[0].excl) { /* as on one host: the call fails, the parent does not */
      SIM_WARN(SIM_INIT, "%s: ranks %d and %d of the parent passed different excludeRanksList (ncclsim checks this: "
               "every rank that calls it must exclude the same ranks)", op, peers[0], peers[k]);
      res = ncclInvalidUsage;
    }
  if (res == ncclSuccess) {
    SIM_INFO(SIM_INIT, "%s: rank %d is rank %d of %d, across hosts", op, comm->rank, me, n);
    res = sim_init_rank(newcomm, n, &parts[0].id, me, config, comm->device, &comm->opts, op);
  }
  sim_free(peers);
  sim_free(parts);
  return res;
}

/* An existing rank's part of a grow. */
typedef struct {
  int32_t have, pad; /* whether id is the grow's */
  ncclUniqueId id;
} grow_part;

ncclResult_t sim_grow_net(ncclComm_t comm, int nranks, const ncclUniqueId *id, uint64_t seq, ncclConfig_t *config,
                          ncclComm_t *newcomm) {
  static const char op[] = "ncclCommGrow";
  if (comm->clique->net) SIM_CHECK(refused(comm, op, config));
  sim_clique *c = comm->clique;
  int n = comm->nranks;
  grow_part mine, *parts = sim_calloc((size_t)n, sizeof *parts);
  ncclResult_t res = parts ? ncclSuccess : ncclSystemError;
  memset(&mine, 0, sizeof mine);
  if (id) mine.have = 1, mine.id = *id;
  sim_mutex_lock(&c->lock); /* the coordinator on this host made it */
  if (!id && c->grow_seq == seq) mine.have = 1, mine.id = c->grow_id;
  if (c->grow_consumed < seq) c->grow_consumed = seq;
  pthread_mutex_unlock(&c->lock);
  comm->split_count = seq; /* as NCCL's ++childCount: this id is consumed */
  /* A parent on one host (in a job across hosts): its ranks share the
   * clique, hence the kept id; nothing to exchange. */
  if (res == ncclSuccess && c->net)
    res = exchange(comm, op, 0, NULL, n, comm->rank, &mine, sizeof mine, parts, "the unique id");
  else if (res == ncclSuccess)
    parts[comm->rank] = mine;
  int from = -1;
  for (int r = 0; r < n && res == ncclSuccess; r++) {
    if (!parts[r].have) continue;
    if (from < 0) from = r;
    else if (memcmp(&parts[r].id, &parts[from].id, sizeof parts[r].id) != 0) {
      SIM_WARN(SIM_INIT, "%s: ranks %d and %d of the parent passed different uniqueIds (ncclsim checks this)", op,
               from, r);
      res = ncclInvalidArgument;
    }
  }
  if (res == ncclSuccess && from < 0) {
    SIM_WARN(SIM_INIT, "%s: no rank of the parent passed the uniqueId of ncclCommGetUniqueId, and no host of theirs "
             "made one for this grow: at least the coordinator's host must", op);
    res = ncclInvalidArgument;
  }
  if (res == ncclSuccess) {
    SIM_INFO(SIM_INIT, "%s: existing rank %d joins the parent's child %llu of %d ranks, across hosts", op, comm->rank,
             (unsigned long long)seq, nranks);
    res = sim_init_rank(newcomm, nranks, &parts[from].id, comm->rank, config, comm->device, &comm->opts, op);
  }
  sim_free(parts);
  return res;
}
