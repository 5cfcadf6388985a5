/*
 * sim/comm/split.c — ncclCommSplit and ncclCommShrink, and the wait of
 * every management round of a clique (split, shrink, suspend, resume).
 *
 * Split and shrink are collective over the parent: the participating ranks
 * post (color, key) into a round named by their count of split calls; the
 * last to arrive builds one communicator per color, ranks ordered by (key,
 * parent rank), and everyone picks up its own.
 *
 * NCCL 2.30 (init.cc, ncclCommShrink and ncclCommInitChildComm): a shrink
 * is called by every rank not excluded, never by an excluded one; the
 * survivors keep their order; NCCL_SHRINK_ABORT first stops the caller's
 * operations in flight on the parent; a revoked parent may still be split
 * or shrunk.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"

/* A rank's part of a round: its (color, key) going in, its new
 * communicator coming out. */
typedef struct {
  int color, key; /* color NCCL_SPLIT_NOCOLOR: no communicator */
  int blocking;   /* the new communicator's mode */
  uint64_t excl;  /* shrink: a hash of the sorted exclude list, which every rank must share */
  ncclComm_t result;
} split_slot;

/* ---- the wait of a management round ---- */

/* Whether rank r, expected in a round, can no longer arrive: destroyed or
 * aborted, its process exited, or stopped by NCCLSIM_FAULT. Names why. */
static bool rank_gone(sim_clique *c, int r, char *why, size_t len) {
  sim_mutex_lock(&c->lock); /* a rank's teardown clears its slot under it */
  ncclComm_t m = c->ranks[r];
  const char *what = !m ? "was destroyed or aborted"
                     : atomic_load(&m->gone) ? "is in a process that exited"
                     : atomic_load(&m->dead) ? "was stopped by NCCLSIM_FAULT"
                                             : NULL;
  int pid = m ? m->pid : 0;
  pthread_mutex_unlock(&c->lock);
  if (what) snprintf(why, len, "rank %d %s (pid %d)", r, what, pid);
  return what != NULL;
}

static bool excluded(int r, const int *excl, int nexcl) {
  for (int i = 0; i < nexcl; i++)
    if (excl[i] == r) return true;
  return false;
}

/* Under the table's lock: an expected rank missing from rv and gone. */
static bool any_gone(sim_clique *c, sim_rv *rv, const int *excl, int nexcl, char *why, size_t len) {
  for (int r = 0; r < c->nranks; r++)
    if (!sim_rv_present(rv, r) && !excluded(r, excl, nexcl) && rank_gone(c, r, why, len)) return true;
  return false;
}

/* How often a waiter looks for gone ranks. */
#define GONE_CHECK_NS (100ull * 1000 * 1000)

int sim_mgmt_wait(ncclComm_t comm, sim_rv *rv, const int *excl, int nexcl, bool poll, char *why, size_t len) {
  sim_clique *c = comm->clique;
  for (;;) {
    uint64_t deadline = sim_rv_deadline(rv), now = sim_now_ns();
    if (sim_rv_done(rv)) return 0;
    sim_rv_lock(&c->splits);
    bool gone = !sim_rv_done(rv) && any_gone(c, rv, excl, nexcl, why, len);
    sim_rv_unlock(&c->splits);
    if (gone) return ECANCELED;
    if (now >= deadline) return sim_rv_done(rv) ? 0 : ETIMEDOUT;
    if (poll) return EINPROGRESS;
    sim_rv_wait(&c->splits, rv, NULL, deadline - now < GONE_CHECK_NS ? deadline : now + GONE_CHECK_NS);
  }
}

/* ---- split and shrink ---- */

/* Builds every color's communicator: the round's completion, under the
 * clique's split table lock. Absent ranks (excluded by a shrink) have no
 * color. */
static ncclResult_t build(sim_rv *rv, void *arg) {
  sim_clique *c = arg;
  int n = c->nranks;
#define SLOT(i) ((split_slot *)sim_rv_slot(rv, (i)))
#define COLOR(i) (sim_rv_present(rv, (i)) ? SLOT(i)->color : NCCL_SPLIT_NOCOLOR)
  for (int i = 0, first = -1; i < n; i++) {
    if (!sim_rv_present(rv, i)) continue;
    if (first < 0) first = i;
    else if (SLOT(i)->excl != SLOT(first)->excl) {
      SIM_WARN(SIM_INIT, "ncclCommShrink: ranks %d and %d of the parent passed different excludeRanksList (ncclsim "
               "checks this: every rank that calls it must exclude the same ranks)", first, i);
      return ncclInvalidUsage;
    }
  }
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
      members[k]->blocking = SLOT(order[k])->blocking;
      atomic_store(&members[k]->driver, atomic_load(&parent->driver)); /* not the completer's thread */
      atomic_store(&members[k]->driver_tid, atomic_load(&parent->driver_tid));
    }
    uint64_t key = sim_unique_key();
    res = k < m ? ncclSystemError : sim_clique_create(members, m, key, NULL);
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

/* What a rank passed, kept for its wait. */
typedef struct {
  const char *op;
  int nexcl;
  int excl[]; /* sorted */
} split_args;

/* Posts this rank's part; never blocks. */
static ncclResult_t split_post(ncclComm_t comm, const split_slot *slot, int expected, sim_rv **out) {
  sim_clique *c = comm->clique;
  const sim_rv_ops *ops = expected == c->nranks ? &split_rv : &shrink_rv;
  SIM_CHECK(sim_rv_arrive(&c->splits, ops, comm->split_count, c->nranks, expected, comm->rank, 0, slot, c, out));
  comm->split_count++;
  return ncclSuccess;
}

/* Waits for the round to complete and takes this rank's communicator. */
static ncclResult_t split_wait(ncclComm_t comm, sim_rv *rv, const split_args *a, ncclComm_t *out) {
  sim_clique *c = comm->clique;
  char why[160] = "";
  int rc = sim_mgmt_wait(comm, rv, a->excl, a->nexcl, false, why, sizeof why);
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
    sim_comm_fail(comm, res, "%s: rank %d waited for rank(s) [%s] of the parent to call it too (%s%s)", a->op,
                  comm->rank, missing, res == ncclTimeout ? "NCCLSIM_TIMEOUT expired" : "it never will: ", why);
    *out = NULL;
    /* Withdrawn: the rank's next split or shrink meets the others in this
     * same round, which may still be waiting for it. */
    if (comm->split_count == sim_rv_key(rv) + 1) comm->split_count--;
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
  bool ran;
  split_args *args;
} split_job;

static ncclResult_t split_job_run(sim_group_job *job) {
  split_job *j = (split_job *)job;
  j->ran = true;
  return split_wait(j->comm, j->round, j->args, j->out);
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
  sim_free(j->args);
  sim_free(j);
}

/* The new communicator's mode: the parent's without a config (NCCL copies
 * the parent's config), else the config's, blocking when it leaves it
 * undefined (NCCL's default). */
static int child_blocking(ncclComm_t parent, const ncclConfig_t *config) {
  if (!config) return parent->blocking;
  return config->blocking == NCCL_CONFIG_UNDEF_INT ? 1 : config->blocking;
}

static ncclResult_t split(ncclComm_t comm, split_slot *slot, int expected, split_args *a, ncclComm_t *out) {
  split_job *job = NULL;
  *out = NULL;
  if (sim_group_depth() > 0 && !(job = sim_calloc(1, sizeof *job))) {
    sim_free(a);
    return ncclSystemError;
  }
  sim_rv *r;
  ncclResult_t res = split_post(comm, slot, expected, &r);
  if (res != ncclSuccess) {
    sim_free(job);
    sim_free(a);
    return res;
  }
  if (!job) {
    res = split_wait(comm, r, a, out);
    sim_free(a);
    return res;
  }
  *job = (split_job){.job = {.comm = comm, .run = split_job_run, .release = split_job_free},
                     .comm = comm, .round = r, .out = out, .args = a};
  return sim_group_add_job(&job->job);
}

static ncclResult_t comm_split(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                               ncclConfig_t *config) {
  SIM_CHECK(sim_comm_check_mgmt(comm, "ncclCommSplit"));
  if (!newcomm) {
    SIM_WARN(SIM_INIT, "ncclCommSplit: newcomm is NULL");
    return ncclInvalidArgument;
  }
  *newcomm = NULL; /* until the split is complete, as NCCL */
  if (color < NCCL_SPLIT_NOCOLOR) {
    SIM_WARN(SIM_INIT, "ncclCommSplit: color is %d; must be >= 0 or NCCL_SPLIT_NOCOLOR", color);
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_config_check(config, "ncclCommSplit"));
  if (comm->clique->net) return sim_split_net(comm, color, key, config, newcomm);
  split_args *a = sim_calloc(1, sizeof *a);
  if (!a) return ncclSystemError;
  a->op = "ncclCommSplit";
  split_slot slot = {color, key, child_blocking(comm, config), 0, NULL};
  return split(comm, &slot, comm->nranks, a, newcomm);
}

static int int_cmp(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static ncclResult_t comm_shrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                                ncclConfig_t *config, int flags) {
  SIM_CHECK(sim_comm_check_mgmt(comm, "ncclCommShrink"));
  if (!newcomm) {
    SIM_WARN(SIM_INIT, "ncclCommShrink: newcomm is NULL");
    return ncclInvalidArgument;
  }
  if (!exclude || nexclude <= 0) { /* NCCL: a non-NULL list of at least one rank */
    SIM_WARN(SIM_INIT, "ncclCommShrink: excludeRanksList is %p and excludeRanksCount %d; must exclude at least one "
             "rank", (void *)exclude, nexclude);
    return ncclInvalidArgument;
  }
  if (nexclude >= comm->nranks) {
    SIM_WARN(SIM_INIT, "ncclCommShrink: excludeRanksCount is %d, but the communicator has %d ranks", nexclude,
             comm->nranks);
    return ncclInvalidArgument;
  }
  if (flags != NCCL_SHRINK_DEFAULT && flags != NCCL_SHRINK_ABORT) {
    SIM_WARN(SIM_INIT, "ncclCommShrink: shrinkFlags %d is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT "
             "(ncclsim checks this)", flags);
    return ncclInvalidArgument;
  }
  SIM_CHECK(sim_config_check(config, "ncclCommShrink"));
  split_args *a = sim_malloc(sizeof *a + (size_t)nexclude * sizeof(int));
  if (!a) return ncclSystemError;
  a->op = "ncclCommShrink";
  a->nexcl = nexclude;
  memcpy(a->excl, exclude, (size_t)nexclude * sizeof(int)); /* NCCL sorts the caller's list; ncclsim leaves it */
  qsort(a->excl, (size_t)nexclude, sizeof(int), int_cmp);
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < nexclude; i++) {
    const char *why = a->excl[i] < 0 || a->excl[i] >= comm->nranks ? "not a rank (ncclsim checks this)"
                      : i > 0 && a->excl[i] == a->excl[i - 1]   ? "listed twice (ncclsim checks this)"
                      : a->excl[i] == comm->rank ? "the caller: excluded ranks must not call ncclCommShrink"
                                                 : NULL;
    if (why) {
      SIM_WARN(SIM_INIT, "ncclCommShrink: excludeRanksList holds %d, %s", a->excl[i], why);
      sim_free(a);
      return ncclInvalidArgument;
    }
    h = (h ^ (uint64_t)(unsigned)a->excl[i]) * 1099511628211ull;
  }
  if (flags & NCCL_SHRINK_ABORT) sim_comm_stop_ops(comm, "ncclCommShrink(NCCL_SHRINK_ABORT)");
  if (comm->clique->net) {
    ncclResult_t res = sim_shrink_net(comm, a->excl, nexclude, h, config, newcomm);
    sim_free(a);
    return res;
  }
  /* Survivors keep their order: key = parent rank. */
  split_slot slot = {0, comm->rank, child_blocking(comm, config), h, NULL};
  return split(comm, &slot, comm->nranks - nexclude, a, newcomm);
}

/* As in NCCL, a split that fails inside a group also fails the group. */
SIM_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                      ncclConfig_t *config) {
  return sim_group_error(comm_split(comm, color, key, newcomm, config));
}

SIM_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *exclude, int nexclude, ncclComm_t *newcomm,
                                       ncclConfig_t *config, int flags) {
  if (newcomm) *newcomm = NULL;
  return sim_group_error(comm_shrink(comm, exclude, nexclude, newcomm, config, flags));
}
