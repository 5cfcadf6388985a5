/*
 * sim/comm/split_net.c — ncclCommSplit on a communicator across hosts.
 *
 * On one host the split round builds every color's communicator at once
 * (split.c). Across hosts no process can build the clique of ranks that
 * live elsewhere, so the split is made the way NCCL makes one from its
 * bootstrap (init.cc, ncclCommSplit through bootstrapSplit):
 *   1. the ranks exchange (color, key) over the parent;
 *   2. the new rank 0 of each color makes a unique id, with a bootstrap
 *      root in its process, and the ids are exchanged the same way;
 *   3. each member inits its rank of its color's communicator with its
 *      color's id: the init path of every communicator across hosts
 *      (bootstrap, UCX endpoints, signal rows), on the parent's device,
 *      with the parent's options.
 * The exchanges are allgathers over the parent, on a stream of the split's
 * own, so they run (and are traced) as two of the parent's collectives,
 * with their ordering, first-use connections and failure reports.
 *
 * Not yet across hosts: a split inside a group, or of or into a
 * non-blocking communicator (the exchanges block the calling thread, which
 * inside a group may drive its peers), or of a revoked communicator (whose
 * rank runs no more collectives).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "../net/net.h"
#include "comm_internal.h"

static const char OP[] = "ncclCommSplit";

typedef struct {
  int32_t color, key;
} split_part;

/* all[r * bytes ..] gets rank r's `mine`, through an ncclAllGather over
 * comm on a stream of its own, on comm's device. */
static ncclResult_t parent_allgather(ncclComm_t comm, const void *mine, size_t bytes, void *all, const char *what) {
  int prev = sim_current_device();
  size_t n = (size_t)comm->nranks;
  unsigned char *buf = NULL;
  cudaStream_t s = NULL;
  ncclResult_t res = ncclSystemError;
  if (cudaSetDevice(comm->device) != cudaSuccess || cudaMalloc((void **)&buf, bytes * (n + 1)) != cudaSuccess ||
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    SIM_WARN(SIM_INIT, "%s: rank %d: no device memory or stream on device %d for the exchange of %s", OP,
             comm->rank, comm->device, what);
    goto out;
  }
  memcpy(buf, mine, bytes); /* simulated device memory is the host's */
  res = ncclAllGather(buf, buf + bytes, bytes, ncclUint8, comm, s);
  if (res == ncclSuccess && cudaStreamSynchronize(s) != cudaSuccess) {
    ncclCommGetAsyncError(comm, &res);
    if (res == ncclSuccess || res == ncclInProgress) res = ncclSystemError;
  }
  if (res != ncclSuccess)
    SIM_WARN(SIM_INIT, "%s: rank %d: the exchange of %s over the parent failed: %s", OP, comm->rank, what,
             ncclGetErrorString(res));
  else
    memcpy(all, buf + bytes, bytes * n);
out:
  if (s) cudaStreamDestroy(s);
  if (buf) cudaFree(buf);
  cudaSetDevice(prev);
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

static ncclResult_t refuse(ncclComm_t comm, const char *why) {
  SIM_WARN(SIM_INIT, "%s: rank %d's communicator spans %d hosts, and ncclsim does not yet run %s %s across hosts "
           "(docs/ncclsim.md, \"Ranks on other hosts\")", OP, comm->rank, comm->clique->net->nhosts, OP, why);
  return ncclInvalidUsage;
}

ncclResult_t sim_split_net(ncclComm_t comm, int color, int key, ncclConfig_t *config, ncclComm_t *newcomm) {
  if (sim_group_depth() > 0) return refuse(comm, "inside a group");
  /* Its exchanges are collectives, which a revoked rank no longer runs;
   * NCCL splits a revoked parent through its bootstrap. */
  if (atomic_load(&comm->state) == SIM_COMM_REVOKED) return refuse(comm, "of a revoked communicator");
  if (!comm->blocking || (config && config->blocking == 0))
    return refuse(comm, comm->blocking ? "into a non-blocking communicator" : "on a non-blocking communicator");
  int n = comm->nranks;
  split_part mine = {color, key}, *parts = sim_calloc((size_t)n, sizeof *parts);
  int *order = sim_calloc((size_t)n, sizeof *order);
  ncclUniqueId id, *ids = sim_calloc((size_t)n, sizeof *ids);
  ncclResult_t res = parts && order && ids ? ncclSuccess : ncclSystemError;
  comm->split_count++; /* as on one host: the grow ids count splits too */
  if (res == ncclSuccess) res = parent_allgather(comm, &mine, sizeof mine, parts, "colors and keys");
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
  if (res == ncclSuccess) res = parent_allgather(comm, &id, sizeof id, ids, "the new communicators' unique ids");
  if (res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR) {
    SIM_INFO(SIM_INIT, "%s: rank %d is rank %d of %d of color %d, across hosts", OP, comm->rank, me, m, color);
    res = sim_init_rank(newcomm, m, &ids[order[0]], me, config, comm->device, &comm->opts, OP);
  }
  sim_free(parts);
  sim_free(order);
  sim_free(ids);
  return res;
}
