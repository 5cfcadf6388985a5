/*
 * sim/dev/devcomm.c — device communicators: ncclDevCommCreate/Destroy, the
 * dev area (per-rank lists, window tables) and its cleanup at destroy.
 *
 * A device communicator is validated as real NCCL's ncclDevCommCreate
 * validates it, then filled from the communicator's topology and the
 * granted requirements. Nothing runs on a device, so creation needs no
 * rendezvous: it is local to the calling rank. Each rank keeps its live
 * device communicators in a list, so that destroy finds them by id and the
 * communicator's destroy frees any left open.
 *
 * The rank's window table is filled by sim/rma through the hooks
 * sim_dev_window_add / sim_dev_window_remove (sim/dev/dev.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dev_internal.h"

/* ---- the area ---- */

static ncclResult_t dev_clique_init(sim_clique *c) {
  sim_dev_state *st = sim_calloc(1, sizeof *st);
  if (!st) return ncclSystemError;
  st->ranks = sim_calloc((size_t)c->nranks, sizeof *st->ranks);
  if (!st->ranks) {
    sim_free(st);
    return ncclSystemError;
  }
  st->nranks = c->nranks;
  atomic_init(&st->next_id, 1);
  for (int r = 0; r < c->nranks; r++) sim_mutex_init(&st->ranks[r].lock);
  c->area[SIM_AREA_DEV] = st;
  return ncclSuccess;
}

/* Frees a rank's device communicators and extra window chunks. Caller
 * holds the rank's lock (or is the last user of the state). */
static void rank_release(sim_dev_rank *dr, int rank) {
  int n = 0;
  for (sim_devcomm *d = dr->devcomms, *next; d; d = next) {
    next = d->next;
    if (d->resources) sim_mem_free(d->resources, SIM_MEM_DEVICE);
    sim_free(d);
    n++;
  }
  dr->devcomms = NULL;
  for (ncclDevCommWindowTable *t = dr->windows.next, *next; t; t = next) {
    next = t->next;
    sim_free(t);
  }
  memset(&dr->windows, 0, sizeof dr->windows);
  if (n) SIM_INFO(SIM_DEV, "rank %d: destroyed %d device communicator(s) left open", rank, n);
}

/* Only a communicator whose clique was made runs its areas' comm_fini, and
 * a clique exists only once every area's clique_init succeeded. */
static void dev_comm_fini(ncclComm_t comm) {
  sim_dev_state *st = comm->clique->area[SIM_AREA_DEV];
  if (NEVER(!st)) return;
  sim_dev_rank *dr = &st->ranks[comm->rank];
  sim_mutex_lock(&dr->lock);
  rank_release(dr, comm->rank);
  pthread_mutex_unlock(&dr->lock);
}

/* Runs only for a clique whose dev clique_init succeeded (sim_clique_create
 * unwinds the areas before the failing one). */
static void dev_clique_fini(sim_clique *c) {
  sim_dev_state *st = c->area[SIM_AREA_DEV];
  if (NEVER(!st)) return;
  for (int r = 0; r < st->nranks; r++) {
    rank_release(&st->ranks[r], r);
    pthread_mutex_destroy(&st->ranks[r].lock);
  }
  sim_free(st->ranks);
  sim_free(st);
  c->area[SIM_AREA_DEV] = NULL;
}

const sim_area sim_area_dev = {
    .name = "dev", .clique_init = dev_clique_init, .clique_fini = dev_clique_fini, .comm_fini = dev_comm_fini};

/* ---- window tables ---- */

ncclResult_t sim_dev_window_add(ncclComm_t comm, ncclWindow_t win, void *base, size_t size) {
  sim_dev_rank *dr = sim_dev_rank_of(comm);
  ncclResult_t res = ncclSuccess;
  sim_mutex_lock(&dr->lock);
  ncclDevCommWindowTable *t = &dr->windows;
  for (;;) {
    for (int i = 0; i < 32; i++)
      if (!t->entries[i].window) {
        t->entries[i] = (ncclDevCommWindowEntry){(uintptr_t)base, (uintptr_t)size, win};
        goto out;
      }
    if (!t->next && !(t->next = sim_calloc(1, sizeof *t->next))) {
      res = ncclSystemError;
      goto out;
    }
    t = t->next;
  }
out:
  pthread_mutex_unlock(&dr->lock);
  return res;
}

void sim_dev_window_remove(ncclComm_t comm, ncclWindow_t win) {
  sim_dev_rank *dr = sim_dev_rank_of(comm);
  sim_mutex_lock(&dr->lock);
  for (ncclDevCommWindowTable *t = &dr->windows; t; t = t->next)
    for (int i = 0; i < 32; i++)
      if (t->entries[i].window == win) memset(&t->entries[i], 0, sizeof t->entries[i]);
  pthread_mutex_unlock(&dr->lock);
}

/* ---- validation ---- */

static const char OP_CREATE[] = "ncclDevCommCreate";

static ncclResult_t bad(const char *fmt, const char *what, long long v) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, what, v);
  SIM_WARN(SIM_DEV, "%s: %s", OP_CREATE, msg);
  return ncclInvalidArgument;
}

#define CHECK_COUNT(field)                                                          \
  do {                                                                              \
    if (r->field < 0) return bad("%s is %lld, must be >= 0", #field, r->field);     \
  } while (0)

/* Sums of what the resource list asks for. */
typedef struct {
  long long signals, counters; /* resource-list totals */
  size_t bytes;                /* resource buffers, laid out */
} res_totals;

static size_t res_align(const ncclDevResourceRequirements_t *q) {
  return q->bufferAlign > NCCLSIM_DEV_RESOURCE_UNIT ? q->bufferAlign : NCCLSIM_DEV_RESOURCE_UNIT;
}

static ncclResult_t check_resources(const ncclDevCommRequirements_t *r, res_totals *tot) {
  memset(tot, 0, sizeof *tot);
  int i = 0;
  for (const ncclDevResourceRequirements_t *q = r->resourceRequirementsList; q; q = q->next, i++) {
    if (i > 1 << 20) return bad("%s is longer than %lld entries (a cycle?)", "resourceRequirementsList", 1 << 20);
    if (q->ginSignalCount < 0) return bad("%s: a ginSignalCount is %lld", "resourceRequirementsList", q->ginSignalCount);
    if (q->ginCounterCount < 0)
      return bad("%s: a ginCounterCount is %lld", "resourceRequirementsList", q->ginCounterCount);
    if (q->bufferAlign & (q->bufferAlign - 1)) /* neither 0 (no alignment) nor a power of two */
      return bad("%s: a bufferAlign is %lld, not a power of two", "resourceRequirementsList", (long long)q->bufferAlign);
    tot->signals += q->ginSignalCount;
    tot->counters += q->ginCounterCount;
    if (q->bufferSize) {
      size_t a = res_align(q);
      size_t off = (tot->bytes + a - 1) & ~(a - 1);
      if (off < tot->bytes || q->bufferSize > SIZE_MAX - off)
        return bad("%s: the buffers' total size overflows (entry %lld)", "resourceRequirementsList", i);
      tot->bytes = off + q->bufferSize;
    }
  }
  return ncclSuccess;
}

static ncclResult_t check_teams(const ncclDevCommRequirements_t *r) {
  int i = 0;
  for (const ncclTeamRequirements_t *q = r->teamRequirementsList; q; q = q->next, i++) {
    if (i > 1 << 20) return bad("%s is longer than %lld entries (a cycle?)", "teamRequirementsList", 1 << 20);
    if (q->multimem) return bad("%s: entry %lld requests multimem, but multimem is not supported", "teamRequirementsList", i);
  }
  return ncclSuccess;
}

/* Every rank that is still there supports `type`-kind GIN: a rank on
 * another host by the types it gave the bootstrap. */
static bool all_ranks_gin(ncclComm_t comm, bool railed) {
  sim_clique *c = comm->clique;
  const sim_net_map *net = c->net;
  bool ok = true;
  sim_mutex_lock(&c->lock);
  for (int i = 0; i < c->nranks && ok; i++) {
    ncclComm_t m = c->ranks[i];
    sim_net_rank_info info;
    if (sim_net_remote(net, i))
      ok = sim_net_rank_info_of(net, i, &info) &&
           (railed ? info.railed_gin_type : info.gin_type) != NCCL_GIN_TYPE_NONE;
    else if (m)
      ok = (railed ? m->opts.railedGinType : m->opts.ginType) != NCCL_GIN_TYPE_NONE;
  }
  pthread_mutex_unlock(&c->lock);
  return ok;
}

/* ---- create / destroy ---- */

SIM_EXPORT ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t *r,
                                          ncclDevComm_t *out) {
  SIM_CHECK(sim_comm_check(comm, OP_CREATE));
  if (!r || !out) {
    SIM_WARN(SIM_DEV, "%s: %s is NULL", OP_CREATE, !r ? "reqs" : "outDevComm");
    return ncclInvalidArgument;
  }
  if (r->magic != NCCL_API_MAGIC || r->size < sizeof *r) {
    SIM_WARN(SIM_DEV,
             "%s: reqs (size %zu, magic 0x%x) was not initialised with NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER "
             "(2.30 layout, %zu bytes)",
             OP_CREATE, r->size, r->magic, sizeof *r);
    return ncclInvalidArgument;
  }
  if (!comm->opts.deviceApi) {
    SIM_WARN(SIM_DEV, "%s: rank %d: the device API is not supported on this communicator (NCCLSIM_DEVICE_API=0)",
             OP_CREATE, comm->rank);
    return ncclInvalidUsage;
  }
  CHECK_COUNT(barrierCount);
  CHECK_COUNT(lsaBarrierCount);
  CHECK_COUNT(railGinBarrierCount);
  CHECK_COUNT(lsaLLA2ABlockCount);
  CHECK_COUNT(lsaLLA2ASlotCount);
  CHECK_COUNT(ginContextCount);
  CHECK_COUNT(ginSignalCount);
  CHECK_COUNT(ginCounterCount);
  CHECK_COUNT(ginQueueDepth);
  CHECK_COUNT(worldGinBarrierCount);
  int conn = (int)r->ginConnectionType;
  if (conn != NCCL_GIN_CONNECTION_NONE && conn != NCCL_GIN_CONNECTION_FULL && conn != NCCL_GIN_CONNECTION_RAIL)
    return bad("%s is %lld, not an ncclGinConnectionType_t", "ginConnectionType", conn);
  res_totals tot;
  SIM_CHECK(check_resources(r, &tot));
  SIM_CHECK(check_teams(r));
  if (r->lsaMultimem) {
    SIM_WARN(SIM_DEV, "%s: lsaMultimem requested, but multimem is not supported (no multicast)", OP_CREATE);
    return ncclInvalidArgument;
  }
  long long signals = r->ginSignalCount + tot.signals, counters = r->ginCounterCount + tot.counters;
  if (signals > INT32_MAX || counters > INT32_MAX) return bad("%s total is %lld, too many", "GIN signal or counter", signals > counters ? signals : counters);
  bool gin = r->ginForceEnable || conn != NCCL_GIN_CONNECTION_NONE;
  if (!gin && (signals || counters)) {
    SIM_WARN(SIM_DEV,
             "%s: requested GIN resources but did not request GIN to be enabled (%lld signal(s), %lld counter(s); "
             "set ginConnectionType or ginForceEnable)",
             OP_CREATE, signals, counters);
    return ncclInvalidArgument;
  }
  bool railed = conn == NCCL_GIN_CONNECTION_RAIL;
  if (gin && !all_ranks_gin(comm, railed)) {
    SIM_WARN(SIM_DEV, "%s: requested GIN but not all ranks support GIN (%s; %s is none on some rank)", OP_CREATE,
             railed ? "RAIL connection" : conn == NCCL_GIN_CONNECTION_FULL ? "FULL connection" : "ginForceEnable",
             railed ? "railedGinType (NCCLSIM_RAILED_GIN_TYPE)" : "ginType (NCCLSIM_GIN_TYPE)");
    return ncclInvalidArgument;
  }

  sim_devcomm *d = sim_calloc(1, sizeof *d);
  if (!d) return ncclSystemError;
  if (tot.bytes) {
    cudaError_t e = sim_mem_alloc(&d->resources, tot.bytes, comm->device, SIM_MEM_DEVICE, 4096);
    if (e != cudaSuccess) {
      sim_free(d);
      SIM_WARN(SIM_DEV, "%s: cannot allocate %zu bytes of resource buffers on device %d", OP_CREATE, tot.bytes,
               comm->device);
      return ncclSystemError;
    }
    memset(d->resources, 0, tot.bytes);
  }
  sim_dev_state *st = comm->clique->area[SIM_AREA_DEV];
  d->id = atomic_fetch_add(&st->next_id, 1);
  d->bytes = tot.bytes;

  /* Hand out signal and counter ids (communicator-level first, from 0) and
   * buffer handles, in list order. */
  uint32_t sig = (uint32_t)r->ginSignalCount, ctr = (uint32_t)r->ginCounterCount;
  size_t off = 0;
  for (ncclDevResourceRequirements_t *q = r->resourceRequirementsList; q; q = q->next) {
    if (q->outGinSignalStart) *q->outGinSignalStart = sig;
    if (q->outGinCounterStart) *q->outGinCounterStart = ctr;
    sig += (uint32_t)q->ginSignalCount;
    ctr += (uint32_t)q->ginCounterCount;
    if (q->bufferSize) {
      size_t a = res_align(q);
      off = (off + a - 1) & ~(a - 1);
      if (q->outBufferHandle) *q->outBufferHandle = (ncclDevResourceHandle_t)(off / NCCLSIM_DEV_RESOURCE_UNIT);
      off += q->bufferSize;
    } else if (q->outBufferHandle) {
      *q->outBufferHandle = 0;
    }
  }
  for (ncclTeamRequirements_t *q = r->teamRequirementsList; q; q = q->next)
    if (q->outMultimemHandle) memset(q->outMultimemHandle, 0, sizeof *q->outMultimemHandle);

  ncclDevComm_t dc;
  memset(&dc, 0, sizeof dc);
  dc.rank = comm->rank;
  dc.nRanks = comm->nranks;
  dc.lsaRank = comm->lsa_rank;
  dc.lsaSize = comm->lsa_size;
  dc.nLsaTeams = comm->clique->nnodes;
  dc.ginType = !gin ? NCCL_GIN_TYPE_NONE : (ncclGinType_t)(railed ? comm->opts.railedGinType : comm->opts.ginType);
  dc.ginConnectionType = (ncclGinConnectionType_t)conn;
  dc.ginContextCount = gin ? (r->ginContextCount > 0 ? r->ginContextCount : 1) : 0;
  dc.ginSignalCount = (int)signals;
  dc.ginCounterCount = (int)counters;
  dc.ginStrongSignals = r->ginStrongSignalsRequired;
  dc.ginVaSignals = r->ginVaSignalsRequired;
  dc.ginExclusiveContexts = r->ginExclusiveContexts;
  dc.ginQueueDepth = r->ginQueueDepth;
  dc.barrierCount = r->barrierCount;
  dc.lsaBarrierCount = r->lsaBarrierCount;
  dc.railGinBarrierCount = r->railGinBarrierCount;
  dc.worldGinBarrierCount = r->worldGinBarrierCount;
  dc.lsaLLA2ABlockCount = r->lsaLLA2ABlockCount;
  dc.lsaLLA2ASlotCount = r->lsaLLA2ASlotCount;
  dc.resourceBase = d->resources;
  dc.resourceBytes = tot.bytes;
  dc.id = d->id;

  sim_dev_rank *dr = &st->ranks[comm->rank];
  sim_mutex_lock(&dr->lock);
  dc.windowTable = &dr->windows;
  d->next = dr->devcomms;
  dr->devcomms = d;
  pthread_mutex_unlock(&dr->lock);
  atomic_fetch_add(&comm->mem_bytes, (uint64_t)tot.bytes);
  *out = dc;
  SIM_INFO(SIM_DEV, "%s: rank %d: device communicator %llu (GIN %d, connection %d, %d signal(s), %d counter(s))",
           OP_CREATE, comm->rank, (unsigned long long)dc.id, (int)dc.ginType, conn, dc.ginSignalCount,
           dc.ginCounterCount);
  return ncclSuccess;
}

SIM_EXPORT ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t *dc) {
  static const char op[] = "ncclDevCommDestroy";
  SIM_CHECK(sim_comm_check(comm, op));
  if (!dc) {
    SIM_WARN(SIM_DEV, "%s: devComm is NULL", op);
    return ncclInvalidArgument;
  }
  sim_dev_rank *dr = sim_dev_rank_of(comm);
  sim_mutex_lock(&dr->lock);
  sim_devcomm **pp = &dr->devcomms;
  while (*pp && (*pp)->id != dc->id) pp = &(*pp)->next;
  sim_devcomm *d = *pp;
  if (d) *pp = d->next;
  pthread_mutex_unlock(&dr->lock);
  if (!d) {
    SIM_WARN(SIM_DEV,
             "%s: rank %d: device communicator %llu is not a live device communicator of this communicator "
             "(destroyed already?) (ncclsim checks this; real NCCL does not)",
             op, comm->rank, (unsigned long long)dc->id);
    return ncclInvalidArgument;
  }
  if (d->resources) sim_mem_free(d->resources, SIM_MEM_DEVICE);
  atomic_fetch_sub(&comm->mem_bytes, (uint64_t)d->bytes);
  sim_free(d);
  return ncclSuccess;
}
