/*
 * sim/coll/coll.c — the collectives: rendezvous by sequence number,
 * argument comparison and a shared split of the work.
 *
 * Every collective call on a communicator takes the rank's next sequence
 * number. Tasks of one sequence number meet in a round of the rendezvous
 * (core/core.h): post() arrives with the rank's task without blocking, and
 * the arrival that completes the round compares every rank's call (kind,
 * count, datatype, op, root) and plans the work in the round's payload. A mismatch
 * fails every rank with a diagnostic naming each rank's call, where real
 * NCCL would hang or corrupt memory.
 *
 * The work of a matched slot is cut into jobs (slices of the result) which
 * every waiting rank claims with an atomic counter and runs, reading every
 * rank's buffers where the transport maps them and copying through it
 * (clique->tp, sim/transport.h). Claiming rather than
 * assigning slice k to rank k keeps the work going when one worker thread
 * runs several ranks' tasks. A rank's task completes once every job is
 * done, so no rank reuses a buffer that a peer still reads.
 *
 * In place: a job reads only the input ranges its outputs are computed
 * from and reduces through scratch, so writing its own outputs never
 * clobbers another job's inputs. AlltoAll pairs the blocks i->j and j->i in
 * one job, both staged, since in place each one's output is the other's
 * input.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../transport.h"
#include "coll_internal.h"

static const struct {
  const char *name;
  bool reduces, rooted;
} kinds[] = {
    [C_ALLREDUCE] = {"ncclAllReduce", true, false},   [C_BROADCAST] = {"ncclBroadcast", false, true},
    [C_REDUCE] = {"ncclReduce", true, true},          [C_ALLGATHER] = {"ncclAllGather", false, false},
    [C_REDUCESCATTER] = {"ncclReduceScatter", true, false}, [C_ALLTOALL] = {"ncclAlltoAll", false, false},
    [C_GATHER] = {"ncclGather", false, true},         [C_SCATTER] = {"ncclScatter", false, true},
};


/* A round's slot for `rank`: that rank's task. */
static coll_task *task_of(sim_rv *rv, int rank) { return coll_rank_of(rv, rank)->task; }

/* ---------------------------------------------------------------- area */

static ncclResult_t coll_clique_init(sim_clique *c) {
  coll_state *st = sim_calloc(1, sizeof *st);
  if (!st) return ncclSystemError;
  st->nranks = c->nranks;
  st->seq = sim_calloc((size_t)c->nranks, sizeof *st->seq);
  st->ops = sim_calloc((size_t)c->nranks, sizeof *st->ops);
  if (!st->seq || !st->ops || coll_small_init(st, c->nranks) != ncclSuccess) {
    sim_free(st->seq);
    sim_free(st->ops);
    sim_free(st);
    return ncclSystemError;
  }
  sim_mutex_init(&st->lock);
  sim_rv_table_init(&st->rounds);
  c->area[SIM_AREA_COLL] = st;
  return ncclSuccess;
}

static void coll_clique_fini(sim_clique *c) {
  coll_state *st = c->area[SIM_AREA_COLL];
  if (!st) return;
  for (int r = 0; r < st->nranks; r++)
    while (st->ops[r]) {
      sim_redop *o = st->ops[r];
      st->ops[r] = o->next;
      sim_free(o);
    }
  sim_rv_table_fini(&st->rounds);
  coll_small_fini(st->small);
  pthread_mutex_destroy(&st->lock);
  sim_free(st->seq);
  sim_free(st->ops);
  sim_free(st);
  c->area[SIM_AREA_COLL] = NULL;
}

const sim_area sim_area_coll = {.name = "coll", .clique_init = coll_clique_init, .clique_fini = coll_clique_fini, .comm_fini = sim_redop_comm_fini};

/* --------------------------------------------------------- descriptions */

static const char *op_name(int op_class) {
  static const char *const names[] = {"sum", "prod", "max", "min", "avg", "premulsum"};
  return op_class >= 0 && op_class <= OP_PREMULSUM ? names[op_class] : "?";
}

/* "ncclReduce(count=8, ncclFloat32, sum, root=1)": the arguments compared. */
static int describe_call(const coll_task *t, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s(count=%zu, %s", t->fn, t->count, sim_dtype_name(t->dt));
  if (kinds[t->kind].reduces && n >= 0 && (size_t)n < len)
    n += snprintf(buf + n, len - (size_t)n, ", %s", op_name(t->op_class));
  if (kinds[t->kind].rooted && n >= 0 && (size_t)n < len)
    n += snprintf(buf + n, len - (size_t)n, ", root=%d", t->root);
  if (n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, ")");
  return n;
}

/* coll_describe runs under the comm's lock (the timeout dump of another
 * rank); so does every change of t->round once the task is posted. */
static void set_round(coll_task *t, sim_rv *rv) {
  sim_mutex_lock(&t->base.comm->lock);
  t->round = rv;
  pthread_mutex_unlock(&t->base.comm->lock);
}

static void coll_describe(sim_task *base, char *buf, size_t len) {
  coll_task *t = (coll_task *)base;
  int n = describe_call(t, buf, len);
  if (n >= 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, " #%llu", (unsigned long long)t->seq);
  sim_rv *rv = t->round;
  /* t->small is set by the owner's worker at post, without the lock: read
   * atomically, as small.c does t->small_written. */
  if (n >= 0 && (size_t)n < len && __atomic_load_n(&t->small, __ATOMIC_RELAXED)) {
    snprintf(buf + n, len - (size_t)n, ": waiting for the other ranks' call #%llu (%d of %d posted)",
             (unsigned long long)t->seq, coll_small_count(coll_state_of(base->comm->clique)->small, t),
             base->comm->clique->nranks);
    return;
  }
  if (n < 0 || (size_t)n >= len || !rv) return;
  coll_plan *p = sim_rv_payload(rv);
  if (!sim_rv_done(rv))
    snprintf(buf + n, len - (size_t)n, ": waiting for the other ranks' call #%llu (%d of %d posted)",
             (unsigned long long)t->seq, sim_rv_arrived(rv), sim_rv_nranks(rv));
  else
    snprintf(buf + n, len - (size_t)n, ": running (%zu of %zu slices done)", (size_t)sim_count_get(&p->done),
             p->njobs);
}

/* ---------------------------------------------------------------- plan */

static bool same_call(const coll_task *a, const coll_task *b) {
  return a->kind == b->kind && a->count == b->count && a->dt == b->dt &&
         (!kinds[a->kind].reduces || a->op_class == b->op_class) && (!kinds[a->kind].rooted || a->root == b->root);
}

/* Fails every rank of a slot whose calls disagree. The diagnostic names
 * each rank's call, ranks making the same call grouped ("ranks 0-2,5
 * ncclAllReduce(...); rank 3 ncclBroadcast(...)") so that it fits the
 * comm's last-error text even at many ranks. */
static void fail_mismatch(sim_rv *rv) {
  int nranks = sim_rv_nranks(rv);
  char msg[512], *listed = sim_calloc((size_t)nranks, 1);
  size_t len = sizeof msg;
  int n = snprintf(msg, len, "collective #%llu mismatched across ranks:", (unsigned long long)sim_rv_key(rv));
#define ROOM (n >= 0 && (size_t)n < len)
  for (int r = 0; r < nranks && listed && ROOM; r++) {
    if (listed[r]) continue;
    const coll_task *t = task_of(rv, r);
    int cnt = 0;
    for (int q = r; q < nranks; q++)
      cnt += !listed[q] && task_of(rv, q)->fn == t->fn && same_call(t, task_of(rv, q));
    n += snprintf(msg + n, len - (size_t)n, "%s %s ", r ? ";" : "", cnt > 1 ? "ranks" : "rank");
    /* The ranks as ranges: 0-2,5. */
    for (int q = r, first = 1; q < nranks && ROOM; q++) {
      if (listed[q] || task_of(rv, q)->fn != t->fn || !same_call(t, task_of(rv, q))) continue;
      int end = q;
      while (end + 1 < nranks && !listed[end + 1] && task_of(rv, end + 1)->fn == t->fn &&
             same_call(t, task_of(rv, end + 1)))
        end++;
      for (int k = q; k <= end; k++) listed[k] = 1;
      n += end > q ? snprintf(msg + n, len - (size_t)n, "%s%d-%d", first ? "" : ",", q, end)
                   : snprintf(msg + n, len - (size_t)n, "%s%d", first ? "" : ",", q);
      first = 0;
      q = end;
    }
    if (ROOM) n += snprintf(msg + n, len - (size_t)n, " ");
    if (ROOM) n += describe_call(t, msg + n, len - (size_t)n);
  }
  /* The flight recorder's file, named in the diagnostic. */
  const char *fr = sim_trace_dump(task_of(rv, 0)->base.comm->clique, "mismatched collective");
  if (fr && ROOM) snprintf(msg + n, len - (size_t)n, "; flight recorder: %s", fr);
#undef ROOM
  sim_free(listed);
  for (int r = 0; r < nranks; r++)
    sim_comm_fail(task_of(rv, r)->base.comm, ncclInvalidUsage,
                  "%s (ncclsim checks this; real NCCL would hang or corrupt memory)", msg);
}

red_kind coll_red_kind(int op_class, ncclDataType_t dt) {
  switch (op_class) {
  case ncclSum: return RED_SUM;
  case ncclProd: return RED_PROD;
  case ncclMax: return RED_MAX;
  case ncclMin: return RED_MIN;
  case ncclAvg: return sim_dtype_is_float(dt) ? RED_PREMULSUM : RED_SUMPOSTDIV;
  default: return RED_PREMULSUM;
  }
}

static red_kind red_of(const coll_task *t) { return coll_red_kind(t->op_class, t->dt); }

/* The plan of a matched round: the call's shape from rank 0's task, each
 * rank's buffers and factor being in its slot already. */
static void plan(sim_rv *rv, sim_clique *c) {
  coll_plan *p = sim_rv_payload(rv);
  const coll_task *t0 = task_of(rv, 0);
  p->seq = sim_rv_key(rv);
  p->nranks = sim_rv_nranks(rv);
  p->tp = c->tp;
  p->kind = t0->kind;
  p->dt = t0->dt;
  p->root = t0->root;
  p->esize = sim_dtype_size(t0->dt);
  p->bcount = t0->count;
  p->red = red_of(t0);
  coll_plan_jobs(p, rv);
  SIM_TRACE(SIM_COLL, "%s %llu, %d ranks: %zu jobs of up to %zu bytes, results stored %s the cache",
            coll_kind_name(p->kind), (unsigned long long)p->seq, p->nranks, p->njobs, p->slice * p->esize,
            p->stream ? "around" : "through");
}

/* ------------------------------------------------------------- the task */

/* The small way's state, where it runs: on one host. Ranks on other hosts
 * never see this host's parts (nor it theirs), so a communicator across
 * hosts writes none. */
static coll_small *small_of(sim_clique *c) { return c->net ? NULL : coll_state_of(c)->small; }

/* Collectives this small (bytes per rank) are run whole by the arrival
 * that completes the round, before it publishes it: the others find the
 * result done, with no job to claim or count (for a few cache lines,
 * each handoff between threads costs more than the work). */
#define COLL_INLINE_BYTES 4096

typedef struct {
  sim_clique *c;
  int rank; /* of the completing arrival */
} complete_arg;

/* The round's completion: compare every rank's call, then plan. */
static ncclResult_t coll_complete(sim_rv *rv, void *arg) {
  complete_arg *a = arg;
  int n = sim_rv_nranks(rv);
  bool same = true;
  for (int r = 1; r < n; r++) same = same && same_call(task_of(rv, 0), task_of(rv, r));
  if (!same) {
    fail_mismatch(rv);
    coll_small_fail(small_of(a->c), sim_rv_key(rv));
    return ncclInvalidUsage;
  }
  /* A small allreduce arrives only when it found another call at its
   * number (small.c), so the calls differ; were they the same, there is
   * nothing to run here. */
  if (task_of(rv, 0)->small) return ncclSuccess;
  plan(rv, a->c);
  coll_plan *p = sim_rv_payload(rv);
  if (p->bcount * p->esize <= COLL_INLINE_BYTES) coll_work(p, rv, a->rank);
  return ncclSuccess;
}

static const sim_rv_ops coll_rv = {"collective", "collective sequence number", sizeof(coll_plan),
                                   sizeof(coll_rank), coll_complete, NULL, true};

const char *coll_kind_name(int kind) { return kinds[kind].name; }

ncclResult_t coll_arrive_remote(sim_clique *c, uint64_t seq, int rank, const coll_rank *slot, int me) {
  complete_arg a = {c, me};
  return sim_rv_arrive(&coll_state_of(c)->rounds, &coll_rv, seq, c->nranks, c->nranks, rank, SIM_RV_DETACHED, slot,
                       &a, NULL);
}

/* Arrives with the rank's slot: its task, its buffers mapped for the
 * others, and its PreMulSum factor (a device scalar is read now, as the
 * operation runs). */
static ncclResult_t coll_post(sim_task *base) {
  coll_task *t = (coll_task *)base;
  sim_clique *c = base->comm->clique;
  int me = base->comm->rank;
  coll_rank slot;
  memset(&slot, 0, sizeof slot);
  slot.task = t;
  slot.send = t->send ? c->tp->map_peer(c, me, (void *)t->send) : NULL;
  slot.recv = t->recv ? c->tp->map_peer(c, me, t->recv) : NULL;
  if (kinds[t->kind].reduces && red_of(t) == RED_PREMULSUM) {
    if (t->op_class == ncclAvg) sim_avg_scalar(t->dt, c->nranks, slot.scalar);
    else if (!t->redop.device) memcpy(slot.scalar, t->redop.scalar, sim_dtype_size(t->dt));
    else memcpy(slot.scalar, c->tp->map_peer(c, me, (void *)t->redop.scalar_ptr), sim_dtype_size(t->dt));
  }
  complete_arg a = {c, me};
  coll_state *st = coll_state_of(c);
  coll_small *sm = small_of(c);
  __atomic_store_n(&t->small, coll_small_takes(sm, t), __ATOMIC_RELAXED); /* coll_describe reads it */
  if (sm) coll_small_post(sm, t); /* its call, for the small ranks to compare */
  if (t->small) return ncclSuccess;
  sim_rv *rv;
  SIM_CHECK(sim_rv_arrive(&st->rounds, &coll_rv, t->seq, c->nranks, c->nranks, me, 0, &slot, &a, &rv));
  set_round(t, rv);
  return ncclSuccess;
}

void coll_signature(const coll_task *t, coll_sig *out) {
  memset(out, 0, sizeof *out);
  out->count = t->count;
  out->root = kinds[t->kind].rooted ? t->root : -1;
  out->op_class = (int16_t)(kinds[t->kind].reduces ? t->op_class : -1);
  out->kind = (uint8_t)t->kind;
  out->dt = (uint8_t)t->dt;
}

/* The detached arrival of a rank elsewhere, with only the task: the round
 * compares the calls and runs nothing (coll_complete). */
ncclResult_t coll_arrive_small(sim_clique *c, coll_task *t) {
  coll_rank slot;
  memset(&slot, 0, sizeof slot);
  slot.task = t;
  int me = t->base.comm->rank;
  return coll_arrive_remote(c, t->seq, me, &slot, me);
}

static ncclResult_t wait_round(coll_task *t, sim_due *due) {
  sim_task *base = &t->base;
  sim_clique *c = base->comm->clique;
  sim_rv_table *rounds = &coll_state_of(c)->rounds;
  coll_small *sm = small_of(c);
  sim_rv *rv = t->round;
  int src = sm ? coll_small_write(sm, t, due) : 0; /* its call, if the post could not */
  if (src != 0) {
    set_round(t, NULL);
    if (sim_rv_withdraw(rounds, rv, base->comm->rank)) return src == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    set_round(t, rv);
  }
  if (c->net && coll_net_leader(base->comm)) {
    ncclResult_t nr = coll_net_exchange(t, rounds, rv, due);
    if (nr != ncclSuccess) {
      set_round(t, NULL);
      if (sim_rv_withdraw(rounds, rv, base->comm->rank)) {
        coll_net_free(t);
        return nr;
      }
      set_round(t, rv); /* completed after all: go on */
    }
  }
  int rc = sim_rv_wait_due(rounds, rv, sim_comm_cancel(base->comm), due);
  if (rc != 0) {
    /* Withdraw unless the round completed meanwhile (then carry on). The
     * timeout dump reads t->round under the comm's lock: unpublish it
     * before the withdrawal may free it. */
    set_round(t, NULL);
    if (sim_rv_withdraw(rounds, rv, base->comm->rank)) {
      coll_net_free(t);
      return rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    }
    set_round(t, rv); /* completed: still held */
  }
  ncclResult_t res = ncclSuccess;
  if (sim_rv_result(rv) != ncclSuccess) {
    res = (ncclResult_t)atomic_load(&base->comm->async_error);
    if (res == ncclSuccess) res = ncclInvalidUsage;
  } else {
    coll_plan *p = sim_rv_payload(rv);
    if (!coll_done(p)) {
      coll_work(p, rv, base->comm->rank);
      /* Jobs never block, so the ranks running the rest finish: no
       * deadline. A rank with nothing left polls (NCCLSIM_SPIN) before it
       * sleeps: a futex sleep and wake per call costs more than the work
       * of a 1 MiB allreduce. Only with more ranks than cores and jobs
       * of more than 256 KiB, which take longer than a sleep and a wake,
       * does it sleep at once, not taking turns from the ranks with jobs. */
      bool sleep_now = p->nranks > sim_ncpus() && p->slice * p->esize > ((size_t)256 << 10);
      int64_t yields = sleep_now ? 0 : sim_param_int(SIM_P_SPIN);
      sim_count_wait_spin(&p->done, p->njobs, UINT64_MAX, yields);
    }
  }
  coll_net_free(t); /* every job is done: nobody reads the staged inputs */
  set_round(t, NULL);
  sim_rv_leave(rounds, rv, base->comm->rank);
  return res;
}

/* The collective has ended for this rank once its wait returns: marked
 * finished then, not at its release, which comes only when its whole
 * launch (a group of many) has ended. */
static ncclResult_t coll_wait(sim_task *base, sim_due *due) {
  coll_task *t = (coll_task *)base;
  coll_small *sm = small_of(base->comm->clique);
  ncclResult_t res = t->small ? coll_small_wait(sm, t, due) : wait_round(t, due);
  coll_small_finished(sm, base->comm->rank, t->seq);
  t->finished = true;
  return res;
}

/* A task whose post failed is never waited for: finished here. */
static void coll_release(sim_task *base) {
  coll_task *t = (coll_task *)base;
  if (base->has_seq && !t->finished) coll_small_finished(small_of(base->comm->clique), base->comm->rank, t->seq);
  sim_task_free(base);
}

/* The sequence number is taken only by a collective sure to launch: one
 * refused or dropped with its group takes none, or every later collective
 * of the rank would meet its peers' previous one. */
static void coll_commit(sim_task *base) {
  coll_task *t = (coll_task *)base;
  t->seq = atomic_fetch_add(&coll_state_of(base->comm->clique)->seq[base->comm->rank], 1);
  base->seq = t->seq;
  base->has_seq = true;
}

/* The ranks that have not yet called collective #seq: their sequence
 * numbers are taken at the call (commit), so a rank whose counter has not
 * passed seq has not made it. */
static int coll_awaits(sim_task *base, sim_rank_ref *out, int max) {
  coll_task *t = (coll_task *)base;
  sim_clique *c = base->comm->clique;
  coll_state *st = coll_state_of(c);
  int n = 0;
  if (c->net) return -1; /* the calls of ranks on other hosts are not known here */
  for (int r = 0; r < c->nranks; r++)
    if (atomic_load(&st->seq[r]) <= t->seq) {
      if (n == max) return -1;
      out[n++] = (sim_rank_ref){c, r};
    }
  return n;
}

/* Names as literals: a static initializer must be a constant expression in
 * ISO C (kinds[k].name is one only for GCC). */
#define OPS(name) {name, coll_post, coll_wait, coll_describe, coll_release, coll_commit, coll_awaits}
static const struct sim_task_ops task_ops[] = {
    [C_ALLREDUCE] = OPS("ncclAllReduce"), [C_BROADCAST] = OPS("ncclBroadcast"),
    [C_REDUCE] = OPS("ncclReduce"),       [C_ALLGATHER] = OPS("ncclAllGather"),
    [C_REDUCESCATTER] = OPS("ncclReduceScatter"), [C_ALLTOALL] = OPS("ncclAlltoAll"),
    [C_GATHER] = OPS("ncclGather"),       [C_SCATTER] = OPS("ncclScatter"),
};

/* ------------------------------------------------------- entry points */

/* Checks `count` elements times `mult` at buf (mult: nranks for the
 * concatenated side of a collective). */
static ncclResult_t check_side(ncclComm_t comm, const void *buf, size_t count, size_t mult, ncclDataType_t dt,
                               const char *fn, const char *arg) {
  if (count > SIZE_MAX / mult) {
    SIM_WARN(SIM_COLL, "%s: count %zu times %zu ranks overflows", fn, count, mult);
    return ncclInvalidArgument;
  }
  return sim_check_buffer(comm, buf, count * mult, dt, fn, arg);
}

static ncclResult_t enqueue(coll_kind kind, const char *fn, const void *send, void *recv, size_t count,
                            ncclDataType_t dt, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t res;
  if ((res = sim_comm_check(comm, fn)) != ncclSuccess) return sim_group_error(res);
  if (!sim_dtype_size(dt)) {
    SIM_WARN(SIM_COLL, "%s: datatype %d is not a ncclDataType_t", fn, (int)dt);
    return sim_group_error(ncclInvalidArgument);
  }
  if (kinds[kind].rooted && (root < 0 || root >= comm->nranks)) {
    SIM_WARN(SIM_COLL, "%s: root is %d, but the communicator has %d ranks", fn, root, comm->nranks);
    return sim_group_error(ncclInvalidArgument);
  }
  sim_redop redop;
  int op_class = (int)op;
  if (kinds[kind].reduces && ((int)op < 0 || (int)op >= ncclNumOps)) {
    if ((res = sim_redop_lookup(comm, op, dt, fn, &redop)) != ncclSuccess) return sim_group_error(res);
    op_class = OP_PREMULSUM;
  }
  size_t n = (size_t)comm->nranks;
  bool is_root = comm->rank == root;
  const void *sb = send;
  void *rb = recv;
  size_t smul = 1, rmul = 1;
  bool check_send = true, check_recv = true;
  switch (kind) {
  case C_BROADCAST: check_send = is_root; break;
  case C_REDUCE: check_recv = is_root; break;
  case C_ALLGATHER: rmul = n; break;
  case C_REDUCESCATTER: smul = n; break;
  case C_ALLTOALL: smul = rmul = n; break;
  case C_GATHER: rmul = n, check_recv = is_root; break;
  case C_SCATTER: smul = n, check_send = is_root; break;
  default: break;
  }
  if (check_send && (res = check_side(comm, sb, count, smul, dt, fn, "sendbuff")) != ncclSuccess)
    return sim_group_error(res);
  if (check_recv && (res = check_side(comm, rb, count, rmul, dt, fn, "recvbuff")) != ncclSuccess)
    return sim_group_error(res);
  /* NCCL returns at once from a collective of no elements: no rendezvous. */
  if (count == 0) return ncclSuccess;
  coll_task *t = sim_task_alloc(sizeof *t, stream);
  if (!t) return sim_group_error(ncclSystemError);
  t->base = (sim_task){.ops = &task_ops[kind], .comm = comm, .conn = SIM_CONN_COLL};
  t->kind = kind;
  t->fn = fn;
  t->send = send;
  t->recv = recv;
  t->count = count;
  t->dt = dt;
  t->op = op;
  t->op_class = op_class;
  if (op_class == OP_PREMULSUM) t->redop = redop;
  t->root = kinds[kind].rooted ? root : -1;
  /* Bytes this rank moves, as nccl-tests' bus bandwidth counts them. */
  size_t bytes = count * sim_dtype_size(dt);
  switch (kind) {
  case C_ALLREDUCE: t->base.bytes = 2 * (n - 1) * bytes / n; break;
  case C_ALLGATHER:
  case C_REDUCESCATTER: t->base.bytes = (n - 1) * bytes; break;
  case C_ALLTOALL: t->base.bytes = (n - 1) * bytes; break;
  default: t->base.bytes = bytes; break;
  }
  return sim_task_submit(&t->base, stream);
}

SIM_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_ALLREDUCE, "ncclAllReduce", sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

SIM_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                      int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_BROADCAST, "ncclBroadcast", sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

SIM_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  return enqueue(C_BROADCAST, "ncclBcast", buff, buff, count, datatype, ncclSum, root, comm, stream);
}

SIM_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                   ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_REDUCE, "ncclReduce", sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

SIM_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                      ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_ALLGATHER, "ncclAllGather", sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream);
}

SIM_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream) {
  return enqueue(C_REDUCESCATTER, "ncclReduceScatter", sendbuff, recvbuff, recvcount, datatype, op, 0, comm,
                 stream);
}

SIM_EXPORT ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                     ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_ALLTOALL, "ncclAlltoAll", sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, stream);
}

SIM_EXPORT ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                   int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_GATHER, "ncclGather", sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}

SIM_EXPORT ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                                    int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(C_SCATTER, "ncclScatter", sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream);
}
