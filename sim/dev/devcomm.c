/*
 * sim/dev/devcomm.c — device communicators: ncclDevCommCreate/Destroy, the
 * dev area (per-rank lists, window tables) and its cleanup at destroy.
 *
 * A device communicator is validated as real NCCL's ncclDevCommCreate
 * validates it (NCCL 2.30.7, dev_runtime.cc), then laid out as NCCL lays
 * it out: its own barriers become resource requirements ahead of the
 * caller's (world GIN, rail GIN, LSA, then the hybrid barrier's world GIN,
 * rail GIN and LSA parts), signals, counters and buffers are numbered in
 * that order after the communicator-level signals and counters, and each
 * rank gets its resource buffers and its kernel-side state (state.c).
 * Creation is local to the calling rank on one host: the k-th device
 * communicator of every rank is the same one (state.c's groups). Each rank
 * keeps its live device communicators in a list, so that destroy finds
 * them by id and the communicator's destroy frees any left open.
 *
 * The rank's window table is filled by sim/rma through the hooks
 * sim_dev_window_add / sim_dev_window_remove (sim/dev/dev.h).
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "dev_internal.h"

/* nccl::utility::idivRcp32, in C: 2^32/x for a power of two (0 for 1),
 * else (2^32-1)/x. */
static uint32_t nccl_rcp32(uint32_t x) {
  if (!x) return 0;
  return UINT32_MAX / x + ((x & (x - 1)) == 0 ? 1 : 0);
}

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
  sim_mutex_init(&st->lock);
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
    sim_dev_res_window_forget(d->st);
    sim_dev_state_free(d->st);
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
  sim_dev_views_fini(comm);
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
  sim_dev_groups_fini(st);
  pthread_mutex_destroy(&st->lock);
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
  sim_dev_view_forget(win);
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

/* The resource list's own checks (before any of it is laid out). */
static ncclResult_t check_resources(const ncclDevCommRequirements_t *r, long long *signals, long long *counters) {
  int i = 0;
  *signals = *counters = 0;
  for (const ncclDevResourceRequirements_t *q = r->resourceRequirementsList; q; q = q->next, i++) {
    if (i > 1 << 20) return bad("%s is longer than %lld entries (a cycle?)", "resourceRequirementsList", 1 << 20);
    if (q->ginSignalCount < 0) return bad("%s: a ginSignalCount is %lld", "resourceRequirementsList", q->ginSignalCount);
    if (q->ginCounterCount < 0)
      return bad("%s: a ginCounterCount is %lld", "resourceRequirementsList", q->ginCounterCount);
    if (q->bufferAlign & (q->bufferAlign - 1)) /* neither 0 (no alignment) nor a power of two */
      return bad("%s: a bufferAlign is %lld, not a power of two", "resourceRequirementsList", (long long)q->bufferAlign);
    *signals += q->ginSignalCount;
    *counters += q->ginCounterCount;
  }
  return ncclSuccess;
}

/* The layout of a device communicator's resources, NCCL's: every entry
 * of the list, in order, gets its buffer at the next multiple of its
 * alignment (at least NCCLSIM_DEV_RESOURCE_UNIT, even an empty one, as in
 * NCCL) and its signals and counters after the previous entry's. */
typedef struct {
  size_t bytes;            /* the end of the last non-empty buffer */
  long long signals, counters;
} res_layout;

static ncclResult_t lay_out(ncclDevResourceRequirements_t *head, const ncclDevResourceRequirements_t *user,
                            res_layout *l) {
  size_t off = 0;
  int i = -1; /* the index in the caller's list (user), counted from there */
  for (ncclDevResourceRequirements_t *q = head; q; q = q->next, i += i >= 0) {
    if (q == user) i = 0;
    size_t a = q->bufferAlign > NCCLSIM_DEV_RESOURCE_UNIT ? q->bufferAlign : NCCLSIM_DEV_RESOURCE_UNIT;
    size_t at = (off + a - 1) & ~(a - 1);
    if (at < off || q->bufferSize > SIZE_MAX - at)
      return bad("%s: the buffers' total size overflows (entry %lld)", "resourceRequirementsList", i);
    if (q->outBufferHandle) *q->outBufferHandle = (ncclDevResourceHandle_t)(at / NCCLSIM_DEV_RESOURCE_UNIT);
    if (q->outGinSignalStart) *q->outGinSignalStart = (ncclGinSignal_t)l->signals;
    if (q->outGinCounterStart) *q->outGinCounterStart = (ncclGinCounter_t)l->counters;
    off = at + q->bufferSize;
    if (q->bufferSize) l->bytes = off;
    l->signals += q->ginSignalCount;
    l->counters += q->ginCounterCount;
    if (l->signals > INT32_MAX || l->counters > INT32_MAX)
      return bad("%s total is %lld, too many", "GIN signal or counter", l->signals > l->counters ? l->signals : l->counters);
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

/* The device communicator's own barriers as resource requirements, ahead
 * of the caller's list, in NCCL's order; *head is the list to lay out. */
typedef struct {
  ncclDevResourceRequirements_t world, rail, lsa, hybrid_world, hybrid_rail, hybrid_lsa;
} own_barriers;

static ncclDevResourceRequirements_t *barrier_requirements(ncclComm_t comm, const ncclDevCommRequirements_t *r,
                                                           bool railed, ncclDevComm_t *dc, own_barriers *b) {
  ncclTeam_t lsa = {comm->lsa_size, comm->lsa_rank, 1}, world = {comm->nranks, comm->rank, 1};
  ncclTeam_t rail = ncclTeamRail(comm);
  /* Counts were checked (>= 0), so none of these fails. */
  (void)ncclLsaBarrierCreateRequirement(lsa, r->barrierCount, &dc->hybridLsaBarrier, &b->hybrid_lsa);
  b->hybrid_lsa.next = r->resourceRequirementsList;
  (void)ncclGinBarrierCreateRequirement(comm, rail, r->barrierCount, &dc->hybridRailGinBarrier, &b->hybrid_rail);
  b->hybrid_rail.next = &b->hybrid_lsa;
  (void)ncclGinBarrierCreateRequirement(comm, world, railed ? 0 : r->barrierCount, &dc->hybridWorldGinBarrier,
                                        &b->hybrid_world);
  b->hybrid_world.next = &b->hybrid_rail;
  (void)ncclLsaBarrierCreateRequirement(lsa, r->lsaBarrierCount, &dc->lsaBarrier, &b->lsa);
  b->lsa.next = &b->hybrid_world;
  (void)ncclGinBarrierCreateRequirement(comm, rail, r->railGinBarrierCount, &dc->railGinBarrier, &b->rail);
  b->rail.next = &b->lsa;
  (void)ncclGinBarrierCreateRequirement(comm, world, r->worldGinBarrierCount, &dc->worldGinBarrier, &b->world);
  b->world.next = &b->rail;
  return &b->world;
}

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
  long long list_signals, list_counters;
  SIM_CHECK(check_resources(r, &list_signals, &list_counters));
  SIM_CHECK(check_teams(r));
  if (r->lsaMultimem) {
    SIM_WARN(SIM_DEV, "%s: lsaMultimem requested, but multimem is not supported (no multicast)", OP_CREATE);
    return ncclInvalidArgument;
  }
  if (r->ginForceEnable) conn = NCCL_GIN_CONNECTION_FULL; /* NCCL: the deprecated flag means FULL */
  bool gin = conn != NCCL_GIN_CONNECTION_NONE;
  /* NCCL's ncclGinResourcesRequested: signals, counters and GIN barriers. */
  bool gin_wanted = r->ginSignalCount > 0 || r->ginCounterCount > 0 || r->barrierCount > 0 ||
                    r->railGinBarrierCount > 0 || r->worldGinBarrierCount > 0 || list_signals > 0 || list_counters > 0;
  if (!gin && gin_wanted) {
    SIM_WARN(SIM_DEV,
             "%s: requested GIN resources but did not request GIN to be enabled (%lld signal(s), %lld counter(s), "
             "%d hybrid, %d rail and %d world GIN barrier(s); set ginConnectionType)",
             OP_CREATE, r->ginSignalCount + list_signals, r->ginCounterCount + list_counters, r->barrierCount,
             r->railGinBarrierCount, r->worldGinBarrierCount);
    return ncclInvalidArgument;
  }
  bool railed = conn == NCCL_GIN_CONNECTION_RAIL;
  if (gin && !all_ranks_gin(comm, railed)) {
    SIM_WARN(SIM_DEV, "%s: requested GIN but not all ranks support GIN (%s; %s is none on some rank)", OP_CREATE,
             railed ? "RAIL connection" : r->ginForceEnable ? "ginForceEnable" : "FULL connection",
             railed ? "railedGinType (NCCLSIM_RAILED_GIN_TYPE)" : "ginType (NCCLSIM_GIN_TYPE)");
    return ncclInvalidArgument;
  }
  if (railed && r->worldGinBarrierCount > 0) {
    SIM_WARN(SIM_DEV, "%s: cannot create %d world GIN barrier(s) with NCCL_GIN_CONNECTION_RAIL", OP_CREATE,
             r->worldGinBarrierCount);
    return ncclInvalidArgument;
  }

  /* Across hosts the device communicator's memory is registered as a
   * window, a call that waits for every rank (as NCCL's creation does). */
  if (comm->clique->net && (sim_group_depth() > 0 || !comm->blocking)) {
    SIM_WARN(SIM_DEV,
             "%s: rank %d's communicator spans %d hosts, and ncclsim does not yet run %s %s across hosts "
             "(docs/ncclsim.md, \"Ranks on other hosts\")",
             OP_CREATE, comm->rank, comm->clique->net->nhosts, OP_CREATE,
             comm->blocking ? "inside a group" : "on a non-blocking communicator");
    return ncclInvalidUsage;
  }

  ncclDevComm_t dc;
  memset(&dc, 0, sizeof dc);
  own_barriers own;
  res_layout lay = {0, r->ginSignalCount, r->ginCounterCount};
  SIM_CHECK(lay_out(barrier_requirements(comm, r, railed, &dc, &own), r->resourceRequirementsList, &lay));

  sim_dev_state *ds = comm->clique->area[SIM_AREA_DEV];
  dc.magic = NCCL_API_MAGIC;
  dc.version = r->version;
  dc.rank = comm->rank;
  dc.nRanks = comm->nranks;
  dc.nRanks_rcp32 = nccl_rcp32((uint32_t)comm->nranks);
  dc.lsaRank = comm->lsa_rank;
  dc.lsaSize = comm->lsa_size;
  dc.lsaSize_rcp32 = nccl_rcp32((uint32_t)comm->lsa_size);
  dc.nLsaTeams = comm->clique->nnodes;
  dc.ginType = !gin ? NCCL_GIN_TYPE_NONE : (ncclGinType_t)(railed ? comm->opts.railedGinType : comm->opts.ginType);
  dc.ginConnectionType = (ncclGinConnectionType_t)conn;
  dc.ginConnectionCount = gin ? 1 : 0;
  dc.ginNetDeviceTypes[0] = (uint8_t)dc.ginType; /* ncclNetDeviceType numbers GIN types alike */
  dc.ginContextCount = gin ? (uint32_t)(r->ginContextCount > 0 ? r->ginContextCount : 1) : 0;
  dc.ginSignalCount = gin ? (int)lay.signals : 0;
  dc.ginCounterCount = gin ? (int)lay.counters : 0;
  dc.ginConnectionsRailed = railed;
  dc.ginContextsRailed = railed;
  dc.ginStrongLegacySignals = r->ginStrongSignalsRequired;
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
  dc.resourceBytes = lay.bytes;
  dc.id = atomic_fetch_add(&ds->next_id, 1);
  for (ncclTeamRequirements_t *q = r->teamRequirementsList; q; q = q->next)
    if (q->outMultimemHandle) memset(q->outMultimemHandle, 0, sizeof *q->outMultimemHandle);

  sim_dev_rank *dr = &ds->ranks[comm->rank];
  sim_mutex_lock(&dr->lock);
  uint64_t seq = dr->created;
  pthread_mutex_unlock(&dr->lock);
  sim_devcomm *d = sim_calloc(1, sizeof *d);
  struct ncclsimDevState *st = NULL;
  ncclResult_t made = d ? sim_dev_state_make(comm, &dc, lay.bytes, seq, &st) : ncclSystemError;
  if (made != ncclSuccess) {
    sim_free(d);
    return made;
  }
  sim_dev_trace_enable(st);
  d->id = dc.id;
  d->st = st;
  dc.sim = st;
  dc.resourceBase = st->res;
  dc.ginHandles[0] = st;
  dc.ginSignalShadows = st->shadows;
  dc.resourceWindow = lay.bytes ? (ncclWindow_t)(void *)&st->res_window : NULL;

  sim_mutex_lock(&dr->lock);
  dc.windowTable = &dr->windows;
  d->next = dr->devcomms;
  dr->devcomms = d;
  dr->created++;
  pthread_mutex_unlock(&dr->lock);
  atomic_fetch_add(&comm->mem_bytes, (uint64_t)lay.bytes);
  *out = dc;
  SIM_INFO(SIM_DEV,
           "%s: rank %d: device communicator %llu (#%llu of the rank; GIN %d, connection %d, %u context(s), %d "
           "signal(s), %d counter(s), %zu bytes of resources)",
           OP_CREATE, comm->rank, (unsigned long long)dc.id, (unsigned long long)seq, (int)dc.ginType, conn,
           dc.ginContextCount, dc.ginSignalCount, dc.ginCounterCount, lay.bytes);
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
  atomic_fetch_sub(&comm->mem_bytes, (uint64_t)d->st->res_bytes);
  sim_dev_res_window_forget(d->st);
  sim_dev_state_free(d->st);
  sim_free(d);
  return ncclSuccess;
}
