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

typedef struct sim_split_round {
  struct sim_split_round *next;
  uint64_t seq;
  int expected, arrived, waiters;
  int *color, *key; /* by parent rank; color NCCL_SPLIT_NOCOLOR if absent */
  bool *present;
  ncclComm_t *result; /* by parent rank */
  ncclResult_t status;
  bool done;
  uint64_t deadline;
} sim_split_round;

static void round_free(sim_split_round *r) {
  sim_free(r->color);
  sim_free(r->key);
  sim_free(r->present);
  sim_free(r->result);
  sim_free(r);
}

static sim_split_round *round_get(sim_clique *c, uint64_t seq, int expected) {
  for (sim_split_round *r = c->splits; r; r = r->next)
    if (r->seq == seq) return r;
  sim_split_round *r = sim_calloc(1, sizeof *r);
  if (!r) return NULL;
  int n = c->nranks;
  r->color = sim_calloc((size_t)n, sizeof *r->color);
  r->key = sim_calloc((size_t)n, sizeof *r->key);
  r->present = sim_calloc((size_t)n, sizeof *r->present);
  r->result = sim_calloc((size_t)n, sizeof *r->result);
  if (!r->color || !r->key || !r->present || !r->result) {
    round_free(r);
    return NULL;
  }
  for (int i = 0; i < n; i++) r->color[i] = NCCL_SPLIT_NOCOLOR;
  r->seq = seq;
  r->expected = expected;
  r->deadline = sim_deadline();
  r->next = c->splits;
  c->splits = r;
  return r;
}

static void round_unlink(sim_clique *c, sim_split_round *r) {
  for (sim_split_round **pp = &c->splits; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      return;
    }
}

/* Builds every color's communicator. Caller holds c->lock. */
static ncclResult_t build(sim_clique *c, sim_split_round *r) {
  int n = c->nranks;
  ncclComm_t *members = sim_calloc((size_t)n, sizeof *members);
  int *order = sim_calloc((size_t)n, sizeof *order);
  bool *built = sim_calloc((size_t)n, sizeof *built);
  ncclResult_t res = (members && order && built) ? ncclSuccess : ncclSystemError;
  for (int first = 0; res == ncclSuccess && first < n; first++) {
    if (built[first] || r->color[first] == NCCL_SPLIT_NOCOLOR) continue;
    int m = 0;
    for (int i = first; i < n; i++)
      if (!built[i] && r->color[i] == r->color[first]) {
        built[i] = true;
        /* insertion sort by (key, parent rank) */
        int j = m++;
        while (j > 0 && r->key[order[j - 1]] > r->key[i]) {
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
    for (k = 0; k < m; k++) r->result[order[k]] = members[k];
  }
  if (res != ncclSuccess) /* undo the colors already built */
    for (int i = 0; i < n; i++)
      if (r->result[i]) {
        ncclCommDestroy(r->result[i]);
        r->result[i] = NULL;
      }
  sim_free(members);
  sim_free(order);
  sim_free(built);
  return res;
}

typedef struct {
  sim_clique *c;
  sim_split_round *r;
} round_arg;

static bool round_done(void *arg) {
  round_arg *a = arg;
  pthread_mutex_lock(&a->c->lock);
  bool d = a->r->done;
  pthread_mutex_unlock(&a->c->lock);
  return d;
}

/* Posts this rank's (color, key); never blocks. */
static ncclResult_t split_post(ncclComm_t comm, int color, int key, int expected, sim_split_round **out) {
  sim_clique *c = comm->clique;
  pthread_mutex_lock(&c->lock);
  sim_split_round *r = round_get(c, comm->split_count, expected);
  if (!r) {
    pthread_mutex_unlock(&c->lock);
    return ncclSystemError;
  }
  comm->split_count++;
  r->color[comm->rank] = color;
  r->key[comm->rank] = key;
  r->present[comm->rank] = true;
  r->arrived++;
  r->waiters++;
  if (r->arrived == r->expected) {
    round_unlink(c, r);
    r->status = build(c, r);
    r->done = true;
  }
  pthread_mutex_unlock(&c->lock);
  sim_waitq_wake(&c->wq);
  *out = r;
  return ncclSuccess;
}

/* Takes this rank out of the round: out of its open slots if it is not
 * done, and frees it with its last waiter. Caller holds c->lock. */
static void round_leave(sim_clique *c, sim_split_round *r, int rank) {
  if (!r->done) {
    r->present[rank] = false;
    r->color[rank] = NCCL_SPLIT_NOCOLOR;
    r->arrived--;
  }
  if (--r->waiters == 0) {
    if (!r->done) round_unlink(c, r);
    round_free(r);
  }
}

/* Waits for the round to complete and takes this rank's communicator. */
static ncclResult_t split_wait(ncclComm_t comm, sim_split_round *r, ncclComm_t *out, const char *op) {
  sim_clique *c = comm->clique;
  round_arg a = {c, r};
  int rc = sim_waitq_wait(&c->wq, round_done, &a, sim_clique_cancel(c), r->deadline);
  pthread_mutex_lock(&c->lock);
  ncclResult_t res;
  if (r->done) {
    res = r->status;
    *out = res == ncclSuccess ? r->result[comm->rank] : NULL;
  } else {
    char missing[256] = "";
    size_t n = 0;
    for (int i = 0; i < c->nranks && n < sizeof missing - 16; i++)
      if (!r->present[i]) n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%d", n ? "," : "", i);
    /* The wait returns 0 only once the round is done. */
    res = NEVER(rc == 0) ? ncclInternalError : rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    sim_comm_fail(comm, res, "%s: rank %d waited for rank(s) [%s] of the parent to call it too (%s)", op,
                  comm->rank, missing, res == ncclTimeout ? "NCCLSIM_TIMEOUT expired" : "communicator aborted");
    *out = NULL;
  }
  round_leave(c, r, comm->rank);
  pthread_mutex_unlock(&c->lock);
  return res;
}

/* Inside a group the wait moves to ncclGroupEnd, so one thread can split
 * every rank; the new handle is filled then, as NCCL allows. */
typedef struct {
  sim_group_job job;
  ncclComm_t comm;
  sim_split_round *round;
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
    pthread_mutex_lock(&c->lock);
    sim_split_round *r = j->round;
    ncclComm_t orphan = r->done && r->status == ncclSuccess ? r->result[j->comm->rank] : NULL;
    round_leave(c, r, j->comm->rank);
    pthread_mutex_unlock(&c->lock);
    if (orphan) ncclCommDestroy(orphan);
  }
  sim_free(j);
}

static ncclResult_t split(ncclComm_t comm, int color, int key, int expected, ncclComm_t *out, const char *op) {
  split_job *job = NULL;
  *out = NULL;
  if (sim_group_depth() > 0 && !(job = sim_calloc(1, sizeof *job))) return sim_group_error(ncclSystemError);
  sim_split_round *r;
  ncclResult_t res = split_post(comm, color, key, expected, &r);
  if (res != ncclSuccess) {
    sim_free(job);
    return sim_group_error(res);
  }
  if (!job) return split_wait(comm, r, out, op);
  job->job.comm = comm;
  job->job.run = split_job_run;
  job->job.release = split_job_free;
  job->comm = comm;
  job->round = r;
  job->out = out;
  job->op = op;
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
