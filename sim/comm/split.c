/*
 * sim/comm/split.c — ncclCommSplit and ncclCommShrink.
 *
 * Both are collective over the parent: the participating ranks post
 * (color, key) into a round named by their count of split calls; the last
 * to arrive builds one communicator per color, ranks ordered by (key,
 * parent rank), and everyone picks up its own.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "comm_internal.h"

/* A rank's part of a round: its (color, key) going in, its new
 * communicator coming out. */
typedef struct {
  int color, key; /* color NCCL_SPLIT_NOCOLOR: no communicator */
  ncclComm_t result;
} split_slot;

/* Builds every color's communicator: the round's completion, under the
 * clique's split table lock. Absent ranks (excluded by a shrink) have no
 * color. */
static ncclResult_t build(sim_rv *rv, void *arg) {
  sim_clique *c = arg;
  int n = c->nranks;
#define SLOT(i) ((split_slot *)sim_rv_slot(rv, (i)))
#define COLOR(i) (sim_rv_present(rv, (i)) ? SLOT(i)->color : NCCL_SPLIT_NOCOLOR)
  ncclComm_t *members = sim_calloc((size_t)n, sizeof *members);
  int *order = sim_calloc((size_t)n, sizeof *order);
  bool *built = sim_calloc((size_t)n, sizeof *built);
  ncclResult_t res = (members && order && built) ? ncclSuccess : ncclSystemError;
  for (int first = 0; res == ncclSuccess && first < n; first++) {
    if (built[first] || COLOR(first) == NCCL_SPLIT_NOCOLOR) continue;
    int m = 0;
    for (int i = first; i < n; i++)
      if (!built[i] && COLOR(i) == COLOR(first)) {
        built[i] = true;
        /* insertion sort by (key, parent rank) */
        int j = m++;
        while (j > 0 && SLOT(order[j - 1])->key > SLOT(i)->key) {
          order[j] = order[j - 1];
          j--;
        }
        order[j] = i;
      }
    int k;
    for (k = 0; k < m; k++) {
      ncclComm_t parent = c->ranks[order[k]];
      if (!(members[k] = sim_comm_alloc(m, k, parent->device, NULL))) break;
      members[k]->opts = parent->opts;
      members[k]->blocking = parent->blocking;
      atomic_store(&members[k]->driver, atomic_load(&parent->driver)); /* not the completer's thread */
      atomic_store(&members[k]->driver_tid, atomic_load(&parent->driver_tid));
    }
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    uint64_t key;
    memcpy(&key, id.internal + 16, sizeof key);
    res = k < m ? ncclSystemError : sim_clique_create(members, m, key);
    if (res != ncclSuccess) {
      while (--k >= 0) sim_comm_free(members[k]);
      break;
    }
    for (k = 0; k < m; k++) SLOT(order[k])->result = members[k];
  }
  if (res != ncclSuccess) /* undo the colors already built */
    for (int i = 0; i < n; i++)
      if (sim_rv_present(rv, i) && SLOT(i)->result) {
        ncclCommDestroy(SLOT(i)->result);
        SLOT(i)->result = NULL;
      }
#undef COLOR
#undef SLOT
  sim_free(members);
  sim_free(order);
  sim_free(built);
  return res;
}

static const sim_rv_ops split_rv = {"ncclCommSplit", "split round", 0, sizeof(split_slot), build, NULL, false};
static const sim_rv_ops shrink_rv = {"ncclCommShrink", "split round", 0, sizeof(split_slot), build, NULL, false};

/* Posts this rank's (color, key); never blocks. */
static ncclResult_t split_post(ncclComm_t comm, int color, int key, int expected, sim_rv **out) {
  split_slot slot = {color, key, NULL};
  sim_clique *c = comm->clique;
  const sim_rv_ops *ops = expected == c->nranks ? &split_rv : &shrink_rv;
  SIM_CHECK(sim_rv_arrive(&c->splits, ops, comm->split_count, c->nranks, expected, comm->rank, 0, &slot, c,
                          out));
  comm->split_count++;
  return ncclSuccess;
}

/* Waits for the round to complete and takes this rank's communicator. */
static ncclResult_t split_wait(ncclComm_t comm, sim_rv *rv, ncclComm_t *out, const char *op) {
  sim_clique *c = comm->clique;
  int rc = sim_rv_wait(&c->splits, rv, sim_clique_cancel(c), sim_rv_deadline(rv));
  sim_rv_lock(&c->splits);
  ncclResult_t res;
  if (sim_rv_done(rv)) {
    res = sim_rv_result(rv);
    *out = res == ncclSuccess ? ((split_slot *)sim_rv_slot(rv, comm->rank))->result : NULL;
  } else {
    char missing[256];
    sim_rv_missing(rv, missing, sizeof missing);
    /* The wait returns 0 only once the round is done. */
    res = NEVER(rc == 0) ? ncclInternalError : rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    sim_comm_fail(comm, res, "%s: rank %d waited for rank(s) [%s] of the parent to call it too (%s)", op,
                  comm->rank, missing, res == ncclTimeout ? "NCCLSIM_TIMEOUT expired" : "communicator aborted");
    *out = NULL;
  }
  sim_rv_leave_locked(&c->splits, rv, comm->rank);
  sim_rv_unlock(&c->splits);
  return res;
}

/* Inside a group the wait moves to ncclGroupEnd, so one thread can split
 * every rank; the new handle is filled then, as NCCL allows. */
typedef struct {
  sim_group_job job;
  ncclComm_t comm;
  sim_rv *round;
  ncclComm_t *out;
  const char *op;
  bool ran;
} split_job;

static ncclResult_t split_job_run(sim_group_job *job) {
  split_job *j = (split_job *)job;
  j->ran = true;
  return split_wait(j->comm, j->round, j->out, j->op);
}

/* A job released without running: its comm was destroyed inside the
 * group. The rank leaves the round, and a communicator already built for it
 * is destroyed, since nobody will ever get its handle. */
static void split_job_free(sim_group_job *job) {
  split_job *j = (split_job *)job;
  if (!j->ran) {
    sim_clique *c = j->comm->clique;
    sim_rv_lock(&c->splits);
    sim_rv *rv = j->round;
    ncclComm_t orphan = sim_rv_done(rv) && sim_rv_result(rv) == ncclSuccess
                            ? ((split_slot *)sim_rv_slot(rv, j->comm->rank))->result
                            : NULL;
    sim_rv_leave_locked(&c->splits, rv, j->comm->rank);
    sim_rv_unlock(&c->splits);
    if (orphan) ncclCommDestroy(orphan);
  }
  sim_free(j);
}

static ncclResult_t split(ncclComm_t comm, int color, int key, int expected, ncclComm_t *out, const char *op) {
  split_job *job = NULL;
  *out = NULL;
  if (sim_group_depth() > 0 && !(job = sim_calloc(1, sizeof *job))) return sim_group_error(ncclSystemError);
  sim_rv *r;
  ncclResult_t res = split_post(comm, color, key, expected, &r);
  if (res != ncclSuccess) {
    sim_free(job);
    return sim_group_error(res);
  }
  if (!job) return split_wait(comm, r, out, op);
  *job = (split_job){.job = {.comm = comm, .run = split_job_run, .release = split_job_free},
                     .comm = comm, .round = r, .out = out, .op = op};
  return sim_group_add_job(&job->job);
}

static ncclResult_t comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                               ncclConfig_t *config) {
  SIM_CHECK(sim_comm_check(comm, "ncclCommSplit"));
  if (!newcomm) {
    SIM_WARN(SIM_INIT, "ncclCommSplit: newcomm is NULL");
    return ncclInvalidArgument;
  }
  if (color < NCCL_SPLIT_NOCOLOR) {
    SIM_WARN(SIM_INIT, "ncclCommSplit: color is %d; must be >= 0 or NCCL_SPLIT_NOCOLOR", color);
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_config_check(config, "ncclCommSplit"));
  return split(comm, color, key, comm->nranks, newcomm, "ncclCommSplit");
}

static ncclResult_t comm_shrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                                ncclConfig_t *config, int flags) {
  SIM_CHECK(sim_comm_check(comm, "ncclCommShrink"));
  if (!newcomm || nexclude < 0 || (nexclude > 0 && !exclude) || nexclude >= comm->nranks ||
      (flags != NCCL_SHRINK_DEFAULT && flags != NCCL_SHRINK_ABORT)) {
    SIM_WARN(SIM_INIT, "ncclCommShrink: invalid arguments (newcomm %p, excludeRanksCount %d, shrinkFlags %d)",
             (void *)newcomm, nexclude, flags);
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_config_check(config, "ncclCommShrink"));
  for (int i = 0; i < nexclude; i++) {
    if (exclude[i] < 0 || exclude[i] >= comm->nranks) {
      SIM_WARN(SIM_INIT, "ncclCommShrink: excludeRanksList[%d] is %d, not a rank", i, exclude[i]);
      return ncclInvalidArgument;
    }
    if (exclude[i] == comm->rank) {
      SIM_WARN(SIM_INIT, "ncclCommShrink: rank %d excludes itself; excluded ranks must not call it", comm->rank);
      return ncclInvalidUsage;
    }
  }
  /* Survivors keep their order: key = parent rank. */
  return split(comm, 0, comm->rank, comm->nranks - nexclude, newcomm, "ncclCommShrink");
}

/* As in NCCL, a split that fails inside a group also fails the group. */
SIM_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                      ncclConfig_t *config) {
  return sim_group_error(comm_split(comm, color, key, newcomm, config));
}

SIM_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                                       ncclConfig_t *config, int flags) {
  return sim_group_error(comm_shrink(comm, exclude, nexclude, newcomm, config, flags));
}
