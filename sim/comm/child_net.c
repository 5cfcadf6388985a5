/*
 * sim/comm/child_net.c — the child communicators of a communicator across
 * hosts: ncclCommSplit, ncclCommShrink and ncclCommGrow.
 *
 * On one host the split round builds every color's communicator at once
 * (split.c). Across hosts no process can build the clique of ranks that
 * live elsewhere, so the split is made the way NCCL makes one from its
 * bootstrap (init.cc, ncclCommSplit through bootstrapSplit):
 *   1. the ranks exchange (color, key) and, from every rank with a color, a
 *      candidate unique id, with a bootstrap root in its process;
 *   2. each color takes the id of its new rank 0, and every other
 *      candidate is released at once (net/bootstrap.c);
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
 * Each call makes one exchange, posted whole at the call, so that a thread
 * that drives several ranks (a group) posts every one of them before any
 * waits. Where it waits is where it would on one host:
 *  - outside a group, in the call, whatever the modes: split and shrink
 *    return once the child is made (as split.c's do), and so does a grow
 *    into a blocking communicator;
 *  - inside a group, at ncclGroupEnd, in three steps over the group's jobs:
 *    every exchange and every child's hello to its bootstrap root, then
 *    every root's answer, then every child's init (core/group.c);
 *  - a grow into a non-blocking communicator returns ncclInProgress with
 *    its child at once, and the child's ncclCommGetAsyncError polls the
 *    exchange, then the init (init.c's sim_init_later). Such an exchange
 *    ends with its parent: destroyed first, the child's init fails.
 *
 * Bootstrap keys: a candidate that does not become its color's id, and an
 * id whose maker fails before its hello, are released; the root forgets
 * the others as their rounds end (net/bootstrap.c).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "../net/net.h"
#include "comm_internal.h"

typedef struct {
  int32_t color, key;
  ncclUniqueId id; /* a candidate for its color's id; zeros: NOCOLOR */
} split_part;

/* A survivor's part of a shrink. */
typedef struct {
  uint64_t excl;   /* the hash of the sorted exclude list */
  ncclUniqueId id; /* the first survivor's: the new communicator's */
} shrink_part;

/* An existing rank's part of a grow. */
typedef struct {
  int32_t have, pad; /* whether id is the grow's */
  ncclUniqueId id;
} grow_part;

enum { SPLIT, SHRINK, GROW };

/* One call in flight. */
typedef struct sim_child_net {
  sim_group_job job;           /* inside a group: its steps at ncclGroupEnd */
  sim_init_pre pre;            /* a grow into a non-blocking communicator: its child's prelude */
  struct sim_child_net *next;  /* in its parent's net_children (a prelude's), under `live` */
  ncclComm_t parent;           /* a prelude's: NULL once the parent is gone */
  int kind;
  const char *op;
  ncclComm_t *out;
  ncclConfig_t config;         /* the child's: its mode resolved */
  sim_net_xrun *x;             /* the exchange */
  sim_due due;
  int n, me;                   /* its ranks, and this rank's place among them */
  int *peers;                  /* NULL: every rank of the parent */
  size_t bytes;
  void *mine, *all;
  uint64_t secret;             /* the key of an id this rank made, still its to release (0: none) */
  int color;                   /* a split's */
  int grow_nranks;             /* a grow's */
  ncclUniqueId id;             /* the child's, once exchanged */
  int m, rank;                 /* the child's size (0: none for this rank) and this rank's rank in it */
  ncclComm_t child;
  ncclResult_t res;            /* a job's first failure */
  bool ran;
} sim_child_net;

/* Guards the preludes' parent pointers and the parents' lists. */
static pthread_mutex_t live = PTHREAD_MUTEX_INITIALIZER;

static void op_free(sim_child_net *o) {
  sim_net_exchange_end(o->x);
  if (o->secret) sim_net_root_release(o->secret);
  sim_free(o->peers);
  sim_free(o->mine);
  sim_free(o->all);
  sim_free(o);
}

/* The child's config: the parent's mode without one (NCCL copies the
 * parent's config), else the config's, blocking when it leaves it
 * undefined. Only the mode is read from a config. */
static void child_config(ncclComm_t parent, const ncclConfig_t *config, ncclConfig_t *out) {
  *out = (ncclConfig_t)NCCL_CONFIG_INITIALIZER;
  out->blocking = !config ? parent->blocking : config->blocking == 0 ? 0 : 1;
}

/* A call's state, with room for its parts: n ranks, this one at me. */
static sim_child_net *op_new(ncclComm_t parent, int kind, const char *op, int n, int me, size_t bytes,
                             const ncclConfig_t *config, ncclComm_t *out) {
  sim_child_net *o = sim_calloc(1, sizeof *o);
  if (!o) return NULL;
  o->parent = parent;
  o->kind = kind;
  o->op = op;
  o->out = out;
  o->n = n;
  o->me = me;
  o->bytes = bytes;
  o->mine = sim_calloc(1, bytes);
  o->all = sim_calloc((size_t)n, bytes);
  child_config(parent, config, &o->config);
  if (!o->mine || !o->all) {
    op_free(o);
    return NULL;
  }
  return o;
}

/* Posts this rank's part, the parent's split count already taken. */
static ncclResult_t op_post(sim_child_net *o, const char *what) {
  char about[96];
  snprintf(about, sizeof about, "%s across hosts, its exchange of %s", o->op, what);
  /* Twice NCCLSIM_TIMEOUT: these calls follow failures, and a peer on
   * another host may see one only when its own operation times out (a rank
   * stopped by NCCLSIM_FAULT is seen at once on its own host only). */
  uint64_t now = sim_now_ns(), t = sim_timeout_ns();
  o->due = sim_due_at(t < (UINT64_MAX - now) / 2 ? now + 2 * t : UINT64_MAX);
  /* Sequence numbers 0-63 (suspend.c takes 64-127). */
  return sim_net_allgather_start(o->parent, SIM_NET_TAG_MGMT, o->parent->split_count & 63, o->peers, o->n, o->me,
                                 o->mine, o->bytes, o->all, true, about, &o->x);
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

static ncclResult_t settle_split(sim_child_net *o) {
  const split_part *parts = o->all;
  if (o->color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  int *order = sim_calloc((size_t)o->n, sizeof *order);
  if (!order) return ncclSystemError;
  o->m = members_of(parts, o->n, o->color, order);
  o->rank = -1;
  for (int k = 0; k < o->m; k++)
    if (order[k] == o->me) o->rank = k;
  o->id = parts[order[0]].id;
  int first = order[0];
  sim_free(order);
  if (first != o->me) { /* another candidate is the color's: nobody will init with this one */
    sim_net_root_release(o->secret);
    o->secret = 0;
  }
  if (NEVER(o->rank < 0)) return ncclInternalError;
  SIM_INFO(SIM_INIT, "%s: rank %d is rank %d of %d of color %d, across hosts", o->op, o->parent->rank, o->rank, o->m,
           o->color);
  return ncclSuccess;
}

static ncclResult_t settle_shrink(sim_child_net *o) {
  const shrink_part *parts = o->all;
  for (int k = 1; k < o->n; k++)
    if (parts[k].excl != parts[0].excl) { /* as on one host: the call fails, the parent does not */
      SIM_WARN(SIM_INIT, "%s: ranks %d and %d of the parent passed different excludeRanksList (ncclsim checks this: "
               "every rank that calls it must exclude the same ranks)", o->op, o->peers[0], o->peers[k]);
      return ncclInvalidUsage;
    }
  o->id = parts[0].id;
  o->m = o->n;
  o->rank = o->me;
  SIM_INFO(SIM_INIT, "%s: rank %d is rank %d of %d, across hosts", o->op, o->parent->rank, o->rank, o->m);
  return ncclSuccess;
}

static ncclResult_t settle_grow(sim_child_net *o) {
  const grow_part *parts = o->all;
  int from = -1;
  for (int r = 0; r < o->n; r++) {
    if (!parts[r].have) continue;
    if (from < 0) from = r;
    else if (memcmp(&parts[r].id, &parts[from].id, sizeof parts[r].id) != 0) {
      SIM_WARN(SIM_INIT, "%s: ranks %d and %d of the parent passed different uniqueIds (ncclsim checks this)", o->op,
               from, r);
      return ncclInvalidArgument;
    }
  }
  if (from < 0) {
    SIM_WARN(SIM_INIT, "%s: no rank of the parent passed the uniqueId of ncclCommGetUniqueId, and no host of theirs "
             "made one for this grow: at least the coordinator's host must", o->op);
    return ncclInvalidArgument;
  }
  o->id = parts[from].id;
  o->m = o->grow_nranks;
  o->rank = o->parent->rank;
  SIM_INFO(SIM_INIT, "%s: existing rank %d joins the parent's child %llu of %d ranks, across hosts", o->op,
           o->parent->rank, (unsigned long long)o->parent->split_count, o->m);
  return ncclSuccess;
}

/* The exchange ended with res: the child's id, size and this rank's place,
 * or the failure. Either way the exchange is over. */
static ncclResult_t exchanged(sim_child_net *o, ncclResult_t res) {
  sim_net_exchange_end(o->x);
  o->x = NULL;
  if (res == ncclTimeout)
    res = sim_comm_fail(o->parent, ncclTimeout, "%s across hosts: rank %d waited for the other ranks' part; after "
                        "twice NCCLSIM_TIMEOUT=%s s some still had not called %s", o->op, o->parent->rank,
                        sim_param_text(SIM_P_TIMEOUT), o->op);
  if (res != ncclSuccess) return res;
  return o->kind == SPLIT ? settle_split(o) : o->kind == SHRINK ? settle_shrink(o) : settle_grow(o);
}

/* Makes the child and sends its hello to the bootstrap root (nothing for a
 * NOCOLOR rank). The id's key is then the root's to forget. */
static ncclResult_t start_child(sim_child_net *o) {
  if (!o->m) return ncclSuccess;
  ncclComm_t p = o->parent;
  ncclResult_t res = sim_init_start(&o->child, o->m, &o->id, o->rank, &o->config, p->device, &p->opts, o->op);
  if (res == ncclSuccess) o->secret = 0;
  return res;
}

/* The child's init ended with res: the caller's handle. A split or shrink
 * that failed gives none (as on one host), a grow its failed child (as
 * any init). */
static ncclResult_t finish(sim_child_net *o, ncclResult_t res) {
  if (res != ncclSuccess && o->child && o->kind != GROW) {
    ncclCommAbort(o->child);
    o->child = NULL;
  }
  *o->out = o->child;
  o->child = NULL;
  return res;
}

/* Outside a group: the whole call, here. */
static ncclResult_t run_now(sim_child_net *o) {
  ncclResult_t res = exchanged(o, sim_net_exchange_wait(o->parent, o->x, &o->due));
  if (res == ncclSuccess) res = start_child(o);
  if (res == ncclSuccess && o->child) res = sim_init_wait(o->child);
  res = finish(o, res);
  op_free(o);
  return res;
}

/* ---- inside a group: the steps at ncclGroupEnd ---- */

static void job_start(sim_group_job *job) {
  sim_child_net *o = (sim_child_net *)job;
  o->res = exchanged(o, sim_net_exchange_wait(o->parent, o->x, &o->due));
  if (o->res == ncclSuccess) o->res = start_child(o);
}

static void job_prepare(sim_group_job *job) {
  sim_child_net *o = (sim_child_net *)job;
  if (o->child) sim_init_boot(o->child);
}

static ncclResult_t job_run(sim_group_job *job) {
  sim_child_net *o = (sim_child_net *)job;
  o->ran = true;
  ncclResult_t res = o->res;
  if (res == ncclSuccess && o->child) res = sim_init_wait(o->child);
  return finish(o, res);
}

/* Also released without running: its parent was destroyed inside the
 * group; a child already begun goes too, since nobody would get it. */
static void job_free(sim_group_job *job) {
  sim_child_net *o = (sim_child_net *)job;
  if (o->child) ncclCommAbort(o->child);
  op_free(o);
}

/* ---- a grow into a non-blocking communicator: its child's prelude ---- */

static ncclResult_t pre_step(sim_init_pre *p, ncclComm_t child, bool block, ncclUniqueId *id) {
  sim_child_net *o = (sim_child_net *)((char *)p - offsetof(sim_child_net, pre));
  ncclResult_t res;
  for (unsigned idle = 0;;) {
    bool moved = false;
    pthread_mutex_lock(&live);
    if (!o->parent) {
      pthread_mutex_unlock(&live);
      return sim_comm_fail(child, ncclInvalidUsage, "%s: rank %d's parent communicator was destroyed before its "
                           "ranks had exchanged the grow's unique id", o->op, child->rank);
    }
    res = sim_net_exchange_test(o->parent, o->x, !block || idle >= 1024, &o->due, &moved);
    if (res != ncclInProgress) res = exchanged(o, res);
    char why[sizeof o->parent->last_error];
    if (res != ncclSuccess && res != ncclInProgress) snprintf(why, sizeof why, "%s", ncclGetLastError(o->parent));
    pthread_mutex_unlock(&live);
    if (res == ncclSuccess) break;
    if (res != ncclInProgress)
      return sim_comm_fail(child, res, "%s: rank %d: the exchange of the grow's unique id among the parent's ranks "
                           "failed: %s", o->op, child->rank, why);
    if (!block) return res;
    idle = moved ? 0 : idle + 1;
    if (idle > 1024) sim_ucx_sleep(1000);
  }
  *id = o->id;
  return ncclSuccess;
}

static void pre_end(sim_init_pre *p) {
  sim_child_net *o = (sim_child_net *)((char *)p - offsetof(sim_child_net, pre));
  pthread_mutex_lock(&live);
  if (o->parent) {
    sim_child_net **pp = &o->parent->net_children;
    while (*pp != o) pp = &(*pp)->next;
    *pp = o->next;
  }
  pthread_mutex_unlock(&live);
  op_free(o);
}

void sim_child_net_forget(ncclComm_t parent) {
  pthread_mutex_lock(&live);
  for (sim_child_net *o = parent->net_children; o; o = o->next) {
    sim_net_exchange_end(o->x);
    o->x = NULL;
    o->parent = NULL;
  }
  parent->net_children = NULL;
  pthread_mutex_unlock(&live);
}

/* ---- the calls ---- */

/* Posted: the call goes on in its place (outside a group, inside one, or
 * in a non-blocking child's polls). On failure to post, o is freed. */
static ncclResult_t go(sim_child_net *o, ncclResult_t posted) {
  if (posted != ncclSuccess) {
    op_free(o);
    return posted;
  }
  if (o->kind == GROW && !o->config.blocking) {
    o->pre = (sim_init_pre){pre_step, pre_end, o->op};
    ncclComm_t parent = o->parent;
    pthread_mutex_lock(&live);
    o->next = parent->net_children;
    parent->net_children = o;
    pthread_mutex_unlock(&live);
    return sim_init_later(o->out, o->grow_nranks, parent->rank, &o->config, parent->device, &parent->opts,
                          &o->pre);
  }
  if (sim_group_depth() == 0) return run_now(o);
  o->job = (sim_group_job){.comm = o->parent, .run = job_run, .release = job_free, .prepare = job_prepare,
                           .start = job_start};
  return sim_group_add_job(&o->job);
}

ncclResult_t sim_split_net(ncclComm_t comm, int color, int key, ncclConfig_t *config, ncclComm_t *newcomm) {
  sim_child_net *o = op_new(comm, SPLIT, "ncclCommSplit", comm->nranks, comm->rank, sizeof(split_part), config,
                            newcomm);
  if (!o) return ncclSystemError;
  comm->split_count++; /* as on one host: the grow ids count splits too */
  split_part *mine = o->mine;
  mine->color = color;
  mine->key = key;
  o->color = color;
  /* Every rank with a color offers an id; its color's new rank 0's wins. */
  ncclResult_t res = color == NCCL_SPLIT_NOCOLOR ? ncclSuccess : sim_net_child_id_make(&mine->id, &o->secret);
  if (res == ncclSuccess) res = op_post(o, "colors, keys and unique ids");
  return go(o, res);
}

ncclResult_t sim_shrink_net(ncclComm_t comm, const int *excl, int nexcl, uint64_t excl_hash, ncclConfig_t *config,
                            ncclComm_t *newcomm) {
  int n = comm->nranks - nexcl, me = -1;
  sim_child_net *o = op_new(comm, SHRINK, "ncclCommShrink", n, 0, sizeof(shrink_part), config, newcomm);
  if (!o) return ncclSystemError;
  comm->split_count++;
  ncclResult_t res = (o->peers = sim_calloc((size_t)n, sizeof *o->peers)) ? ncclSuccess : ncclSystemError;
  /* The survivors in parent order: their new ranks. excl is sorted. */
  for (int r = 0, k = 0, e = 0; r < comm->nranks && res == ncclSuccess; r++) {
    if (e < nexcl && excl[e] == r) {
      e++;
      continue;
    }
    if (r == comm->rank) me = k;
    o->peers[k++] = r;
  }
  o->me = me;
  shrink_part *mine = o->mine;
  mine->excl = excl_hash;
  if (res == ncclSuccess && me == 0) res = sim_net_child_id_make(&mine->id, &o->secret);
  if (res == ncclSuccess) res = op_post(o, "exclude lists and the unique id");
  return go(o, res);
}

ncclResult_t sim_grow_net(ncclComm_t comm, int nranks, const ncclUniqueId *id, uint64_t seq, ncclConfig_t *config,
                          ncclComm_t *newcomm) {
  static const char op[] = "ncclCommGrow";
  sim_clique *c = comm->clique;
  grow_part mine;
  memset(&mine, 0, sizeof mine);
  if (id) mine.have = 1, mine.id = *id;
  sim_mutex_lock(&c->lock); /* the coordinator on this host made it */
  if (!id && c->grow_seq == seq) mine.have = 1, mine.id = c->grow_id;
  if (c->grow_consumed < seq) c->grow_consumed = seq;
  pthread_mutex_unlock(&c->lock);
  comm->split_count = seq; /* as NCCL's ++childCount: this id is consumed */
  if (c->net) {
    sim_child_net *o = op_new(comm, GROW, op, comm->nranks, comm->rank, sizeof mine, config, newcomm);
    if (!o) return ncclSystemError;
    o->grow_nranks = nranks;
    memcpy(o->mine, &mine, sizeof mine);
    return go(o, op_post(o, "the unique id"));
  }
  /* A parent on one host (in a job across hosts): its ranks share the
   * clique, hence the kept id; nothing to exchange. */
  ncclConfig_t cfg;
  child_config(comm, config, &cfg);
  if (!mine.have) {
    SIM_WARN(SIM_INIT, "%s: no rank of the parent passed the uniqueId of ncclCommGetUniqueId, and no host of theirs "
             "made one for this grow: at least the coordinator's host must", op);
    return ncclInvalidArgument;
  }
  SIM_INFO(SIM_INIT, "%s: existing rank %d joins the parent's child %llu of %d ranks", op, comm->rank,
           (unsigned long long)seq, nranks);
  return sim_init_rank(newcomm, nranks, &mine.id, comm->rank, &cfg, comm->device, &comm->opts, op);
}
