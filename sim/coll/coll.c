/*
 * sim/coll/coll.c — the collectives: rendezvous by sequence number,
 * argument comparison and a shared split of the work.
 *
 * Every collective call on a communicator takes the rank's next sequence
 * number. Tasks of one sequence number meet in a round of the rendezvous
 * (sim/sim.h): post() arrives with the rank's task without blocking, and
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

typedef enum {
  C_ALLREDUCE,
  C_BROADCAST,
  C_REDUCE,
  C_ALLGATHER,
  C_REDUCESCATTER,
  C_ALLTOALL,
  C_GATHER,
  C_SCATTER
} coll_kind;

static const struct {
  const char *name;
  bool reduces, rooted;
} kinds[] = {
    [C_ALLREDUCE] = {"ncclAllReduce", true, false},   [C_BROADCAST] = {"ncclBroadcast", false, true},
    [C_REDUCE] = {"ncclReduce", true, true},          [C_ALLGATHER] = {"ncclAllGather", false, false},
    [C_REDUCESCATTER] = {"ncclReduceScatter", true, false}, [C_ALLTOALL] = {"ncclAlltoAll", false, false},
    [C_GATHER] = {"ncclGather", false, true},         [C_SCATTER] = {"ncclScatter", false, true},
};

/* Op class compared across ranks: the built-in op, or PreMulSum. */
enum { OP_PREMULSUM = ncclNumOps };

typedef struct coll_task {
  sim_task base;
  coll_kind kind;
  const char *fn; /* the entry point called (ncclBcast or ncclBroadcast, ...) */
  const void *send;
  void *recv;
  size_t count;
  ncclDataType_t dt;
  int op_class; /* ncclRedOp_t for built-ins, OP_PREMULSUM for user ops */
  ncclRedOp_t op;
  sim_redop redop; /* copy of the user op, when op_class is OP_PREMULSUM */
  int root;
  uint64_t seq;
  sim_rv *round; /* while posted */
  unsigned char *tmp; /* COLL_TMP_BYTES, 64-aligned, then COLL_BLOCK * 8 of stage: in this allocation */
} coll_task;

/* The round's payload: the plan, fixed at completion. */
typedef struct coll_slot {
  uint64_t seq;
  int nranks;
  const sim_transport *tp;
  coll_kind kind;
  ncclDataType_t dt;
  red_kind red;
  int root;
  size_t esize, bcount, slice, spb, njobs; /* elements per block and slice; slices per block */
  bool stream; /* large: write results with non-temporal stores */
  _Atomic size_t next_job, done_jobs;
  const unsigned char **send; /* by rank, mapped */
  unsigned char **recv;
  unsigned char *scalars; /* 8 bytes per rank */
} coll_slot;

/* A round's slot for `rank`: that rank's task. */
static coll_task *task_of(sim_rv *rv, int rank) { return *(coll_task **)sim_rv_slot(rv, rank); }

/* ---------------------------------------------------------------- area */

static ncclResult_t coll_clique_init(sim_clique *c) {
  coll_state *st = sim_calloc(1, sizeof *st);
  if (!st) return ncclSystemError;
  st->nranks = c->nranks;
  st->seq = sim_calloc((size_t)c->nranks, sizeof *st->seq);
  st->ops = sim_calloc((size_t)c->nranks, sizeof *st->ops);
  if (!st->seq || !st->ops) {
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

static void plan_free(sim_rv *rv) {
  coll_slot *s = sim_rv_payload(rv);
  sim_free(s->send);
  sim_free(s->recv);
  sim_free(s->scalars);
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
  if (n < 0 || (size_t)n >= len || !rv) return;
  coll_slot *s = sim_rv_payload(rv);
  if (!sim_rv_done(rv))
    snprintf(buf + n, len - (size_t)n, ": waiting for the other ranks' call #%llu (%d of %d posted)",
             (unsigned long long)t->seq, sim_rv_arrived(rv), sim_rv_nranks(rv));
  else
    snprintf(buf + n, len - (size_t)n, ": running (%zu of %zu slices done)", atomic_load(&s->done_jobs), s->njobs);
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

static ncclResult_t plan(sim_rv *rv, sim_clique *c) {
  coll_slot *s = sim_rv_payload(rv);
  const coll_task *t0 = task_of(rv, 0);
  int n = sim_rv_nranks(rv);
  s->seq = sim_rv_key(rv);
  s->nranks = n;
  s->tp = c->tp;
  s->kind = t0->kind;
  s->dt = t0->dt;
  s->root = t0->root;
  s->esize = sim_dtype_size(t0->dt);
  s->bcount = t0->count;
  s->send = sim_calloc((size_t)n, sizeof *s->send);
  s->recv = sim_calloc((size_t)n, sizeof *s->recv);
  s->scalars = sim_calloc((size_t)n, 8);
  if (!s->send || !s->recv || !s->scalars) return ncclSystemError;
  for (int r = 0; r < n; r++) {
    const coll_task *t = task_of(rv, r);
    s->send[r] = t->send ? c->tp->map_peer(c, r, (void *)t->send) : NULL;
    s->recv[r] = t->recv ? c->tp->map_peer(c, r, t->recv) : NULL;
  }
  if (kinds[s->kind].reduces) {
    switch (t0->op_class) {
    case ncclSum: s->red = RED_SUM; break;
    case ncclProd: s->red = RED_PROD; break;
    case ncclMax: s->red = RED_MAX; break;
    case ncclMin: s->red = RED_MIN; break;
    case ncclAvg: s->red = sim_dtype_is_float(s->dt) ? RED_PREMULSUM : RED_SUMPOSTDIV; break;
    default: s->red = RED_PREMULSUM; break;
    }
    for (int r = 0; r < n && s->red == RED_PREMULSUM; r++) {
      const coll_task *t = task_of(rv, r);
      unsigned char *dst = s->scalars + 8 * (size_t)r;
      if (t->op_class == ncclAvg) sim_avg_scalar(s->dt, n, dst);
      else if (!t->redop.device) memcpy(dst, t->redop.scalar, s->esize);
      else memcpy(dst, c->tp->map_peer(c, r, (void *)t->redop.scalar_ptr), s->esize); /* read as it runs */
    }
  }
  size_t nblocks = 1;
  switch (s->kind) {
  case C_ALLGATHER:
  case C_REDUCESCATTER:
  case C_GATHER:
  case C_SCATTER: nblocks = (size_t)n; break;
  case C_ALLTOALL: nblocks = (size_t)n * (size_t)(n + 1) / 2; break;
  default: break;
  }
  /* Slices of 64 KiB .. 1 MiB, about four per rank, so that the ranks
   * share the work evenly and each slice is worth an atomic. */
  size_t total = nblocks * s->bcount * s->esize, bytes = total / (4 * (size_t)n);
  if (bytes < 65536) bytes = 65536;
  if (bytes > 1048576) bytes = 1048576;
  /* Past 4 MiB of results, which the cache would not keep for the reader
   * anyway, stores bypass the cache: no read for ownership, a third less
   * memory traffic for the reductions. */
  s->stream = total >= ((size_t)4 << 20);
  s->slice = bytes / s->esize;
  s->spb = (s->bcount + s->slice - 1) / s->slice;
  s->njobs = nblocks * s->spb;
  return ncclSuccess;
}

/* ---------------------------------------------------------------- work */

static void copy_to(const coll_slot *s, unsigned char *dst, const unsigned char *src, size_t bytes) {
  if (dst == src) return;
  if (s->stream) s->tp->copy_stream(dst, src, bytes);
  else s->tp->copy(dst, src, bytes);
}

/* Reduces len elements at inoff of every rank's send buffer into each of
 * outs. Streaming, a block is reduced into `stage` (in cache) and stored
 * from there to every output; else into outs[0], copied to the others. */
static void reduce_job(coll_slot *s, size_t inoff, unsigned char **outs, int nouts, size_t len, void *tmp,
                       unsigned char *stage) {
  const void *in[64], **inp = in;
  int n = s->nranks;
  if (n > 64 && !(inp = sim_malloc((size_t)n * sizeof *inp))) inp = NULL;
  red_args a = {s->dt, s->red, n, inp, s->scalars};
  for (size_t done = 0; done < len && inp; done += COLL_BLOCK) {
    size_t m = len - done < COLL_BLOCK ? len - done : COLL_BLOCK, b = done * s->esize;
    for (int r = 0; r < n; r++) inp[r] = s->send[r] + inoff + b;
    if (s->stream) {
      sim_reduce_block(&a, m, stage, tmp);
      for (int o = 0; o < nouts; o++) s->tp->copy_stream(outs[o] + b, stage, m * s->esize);
    } else {
      sim_reduce_block(&a, m, outs[0] + b, tmp);
      for (int o = 1; o < nouts; o++) copy_to(s, outs[o] + b, outs[0] + b, m * s->esize);
    }
  }
  if (inp != in) sim_free(inp);
}

/* Unordered pair (i, j), i <= j, number b of n(n+1)/2. */
static void pair_of(size_t b, int n, int *i, int *j) {
  int a = 0;
  while (b >= (size_t)(n - a)) b -= (size_t)(n - a++);
  *i = a;
  *j = a + (int)b;
}

static void run_job(coll_slot *s, size_t k, unsigned char *tmp, unsigned char *stage) {
  int n = s->nranks, root = s->root;
  size_t b = k / s->spb, off = (k % s->spb) * s->slice;
  size_t len = s->bcount - off < s->slice ? s->bcount - off : s->slice;
  size_t es = s->esize, boff = off * es, bytes = len * es, blk = s->bcount * es;
  unsigned char *outs[64];
  switch (s->kind) {
  case C_ALLREDUCE: {
    unsigned char **o = outs;
    if (n > 64 && !(o = sim_malloc((size_t)n * sizeof *o))) return;
    for (int r = 0; r < n; r++) o[r] = s->recv[r] + boff;
    reduce_job(s, boff, o, n, len, tmp, stage);
    if (o != outs) sim_free(o);
    break;
  }
  case C_REDUCE:
    outs[0] = s->recv[root] + boff;
    reduce_job(s, boff, outs, 1, len, tmp, stage);
    break;
  case C_REDUCESCATTER:
    outs[0] = s->recv[b] + boff;
    reduce_job(s, b * blk + boff, outs, 1, len, tmp, stage);
    break;
  case C_BROADCAST:
    for (int r = 0; r < n; r++) copy_to(s, s->recv[r] + boff, s->send[root] + boff, bytes);
    break;
  case C_ALLGATHER:
    for (int r = 0; r < n; r++) copy_to(s, s->recv[r] + b * blk + boff, s->send[b] + boff, bytes);
    break;
  case C_GATHER: copy_to(s, s->recv[root] + b * blk + boff, s->send[b] + boff, bytes); break;
  case C_SCATTER: copy_to(s, s->recv[b] + boff, s->send[root] + b * blk + boff, bytes); break;
  case C_ALLTOALL: {
    int i, j;
    pair_of(b, n, &i, &j);
    if (i == j) {
      copy_to(s, s->recv[i] + i * blk + boff, s->send[i] + i * blk + boff, bytes);
      break;
    }
    for (size_t d = 0; d < bytes; d += COLL_TMP_BYTES - 64) {
      size_t m = bytes - d < COLL_TMP_BYTES - 64 ? bytes - d : COLL_TMP_BYTES - 64, x = boff + d;
      s->tp->copy(tmp, s->send[i] + j * blk + x, m); /* i -> j, staged: in place it is i's output */
      s->tp->copy(s->recv[i] + j * blk + x, s->send[j] + i * blk + x, m);
      s->tp->copy(s->recv[j] + i * blk + x, tmp, m);
    }
    break;
  }
  }
}

/* ------------------------------------------------------------- the task */

static coll_state *state_of(sim_clique *c) { return c->area[SIM_AREA_COLL]; }

/* The round's completion: compare every rank's call, then plan. */
static ncclResult_t coll_complete(sim_rv *rv, void *arg) {
  sim_clique *c = arg;
  int n = sim_rv_nranks(rv);
  bool same = true;
  for (int r = 1; r < n; r++) same = same && same_call(task_of(rv, 0), task_of(rv, r));
  if (!same) {
    fail_mismatch(rv);
    return ncclInvalidUsage;
  }
  ncclResult_t res = plan(rv, c);
  if (res != ncclSuccess) /* every rank learns it in wait() */
    for (int r = 0; r < n; r++)
      sim_comm_fail(task_of(rv, r)->base.comm, res, "%s: out of memory planning collective #%llu",
                    task_of(rv, r)->fn, (unsigned long long)sim_rv_key(rv));
  return res;
}

static const sim_rv_ops coll_rv = {"collective", "collective sequence number", sizeof(coll_slot),
                                   sizeof(coll_task *), coll_complete, plan_free};

static ncclResult_t coll_post(sim_task *base) {
  coll_task *t = (coll_task *)base;
  sim_clique *c = base->comm->clique;
  sim_rv *rv;
  SIM_CHECK(sim_rv_arrive(&state_of(c)->rounds, &coll_rv, t->seq, c->nranks, c->nranks, base->comm->rank, 0, &t, c,
                          &rv));
  set_round(t, rv);
  return ncclSuccess;
}

static bool slot_done(void *arg) {
  coll_slot *s = arg;
  return atomic_load_explicit(&s->done_jobs, memory_order_acquire) == s->njobs;
}

static ncclResult_t coll_wait(sim_task *base, sim_due *due) {
  coll_task *t = (coll_task *)base;
  sim_clique *c = base->comm->clique;
  sim_rv_table *rounds = &state_of(c)->rounds;
  sim_rv *rv = t->round;
  int rc = sim_rv_wait_due(rounds, rv, sim_clique_cancel(c), due);
  if (rc != 0) {
    /* Withdraw unless the round completed meanwhile (then carry on). The
     * timeout dump reads t->round under the comm's lock: unpublish it
     * before the withdrawal may free it. */
    set_round(t, NULL);
    if (sim_rv_withdraw(rounds, rv, base->comm->rank)) return rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError;
    set_round(t, rv); /* completed: still held */
  }
  ncclResult_t res = ncclSuccess;
  if (sim_rv_result(rv) != ncclSuccess) {
    res = (ncclResult_t)atomic_load(&base->comm->async_error);
    if (res == ncclSuccess) res = ncclInvalidUsage;
  } else {
    coll_slot *s = sim_rv_payload(rv);
    size_t k;
    while ((k = atomic_fetch_add_explicit(&s->next_job, 1, memory_order_relaxed)) < s->njobs) {
      run_job(s, k, t->tmp, t->tmp + COLL_TMP_BYTES);
      if (s->stream) s->tp->fence(); /* the stores land before the job counts */
      if (atomic_fetch_add_explicit(&s->done_jobs, 1, memory_order_acq_rel) + 1 == s->njobs)
        sim_waitq_wake(&rounds->wq);
    }
    /* Jobs never block, so the ranks running the rest finish: no deadline. */
    sim_waitq_wait(&rounds->wq, slot_done, s, NULL, UINT64_MAX);
  }
  set_round(t, NULL);
  sim_rv_leave(rounds, rv, base->comm->rank);
  return res;
}

static void coll_release(sim_task *base) { sim_task_free(base); }

/* The sequence number is taken only by a collective sure to launch: one
 * refused or dropped with its group takes none, or every later collective
 * of the rank would meet its peers' previous one. */
static void coll_commit(sim_task *base) {
  coll_task *t = (coll_task *)base;
  t->seq = atomic_fetch_add(&state_of(base->comm->clique)->seq[base->comm->rank], 1);
  base->seq = t->seq;
  base->has_seq = true;
}

/* The ranks that have not yet called collective #seq: their sequence
 * numbers are taken at the call (commit), so a rank whose counter has not
 * passed seq has not made it. */
static int coll_awaits(sim_task *base, sim_rank_ref *out, int max) {
  coll_task *t = (coll_task *)base;
  sim_clique *c = base->comm->clique;
  coll_state *st = state_of(c);
  int n = 0;
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
  /* Scratch of the reduction, then the stage of streamed results. */
  coll_task *t = sim_task_alloc(sizeof *t + COLL_TMP_BYTES + COLL_BLOCK * 8 + 64, stream);
  if (!t) return sim_group_error(ncclSystemError);
  t->tmp = (unsigned char *)(((uintptr_t)(t + 1) + 63) & ~(uintptr_t)63);
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
