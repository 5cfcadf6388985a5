/*
 * sim/coll/small.c — small allreduces without the rendezvous table's lock.
 *
 * An allreduce of a few elements costs its handoffs between threads, not
 * its bytes: through the rendezvous, each rank takes the table's lock to
 * arrive and again to leave, and waits for the last arrival to publish the
 * result, so a 2-rank 8-byte call took about 750 ns (bench/coll_roofline),
 * 3.5 x Open MPI's MPI_Allreduce. Here each rank writes its input into its
 * own cache line of a ring of parts, indexed by sequence number, and reads
 * every rank's part of that number and reduces them itself, in rank order,
 * so every rank gets the same bits as through the rendezvous. One line
 * crosses between cores each way.
 *
 * Every collective of such a communicator, whichever way it runs, writes
 * its call (kind, count, datatype, op, root) into its part. A small rank
 * that finds another call among the parts of its number arrives in that
 * number's rendezvous round, where every rank that took the rendezvous
 * waits: the round completes and compares the calls as for any collective,
 * so a mismatch fails every rank with the same diagnostic as before. When
 * the calls differ, every small rank finds a part unlike its own, so
 * every rank arrives. The round marks the number failed (coll_small_fail),
 * and the small waiters end on it. A matched small call takes no lock.
 *
 * A rank's part of number s reuses the line of s - SMALL_SLOTS: it waits
 * until every rank has finished every collective below s - SMALL_SLOTS + 1
 * (each rank's watermark of finished sequence numbers, `fin`). A rank
 * whose line is still read defers its write from the post to its wait, so
 * that a post never blocks (a group of many small allreduces posts them
 * all before it waits for the first).
 */
#include <errno.h>
#include <string.h>

#include "../transport.h"
#include "coll_internal.h"

enum {
  SMALL_SLOTS = 64, /* parts per rank: sequence numbers in flight at once */
  FIN_RING = 256,   /* per rank: collectives finished ahead of its watermark */
};

/* Rank r's part of sequence number s, one cache line. */
typedef struct coll_part {
  _Alignas(64) _Atomic uint64_t tag; /* s + 1 once written */
  coll_sig sig;
  unsigned char data[COLL_SMALL_BYTES]; /* a small call's input */
} coll_part;
_Static_assert(sizeof(coll_part) == 64, "a part is one cache line");

/* Rank r's finished collectives: `upto`, every number below it; `done`,
 * those finished out of order above it, by number mod FIN_RING. Only the
 * rank's own threads write them. */
typedef struct coll_fin {
  _Alignas(64) _Atomic uint64_t upto;
  /* The last minimum of every rank's upto that a thread of this rank read
   * (release/acquire: a thread of the rank's other stream that trusts it
   * is ordered after the finishes it saw). */
  _Atomic uint64_t seen_min;
  _Atomic uint64_t done[FIN_RING];
} coll_fin;

struct coll_small {
  int nranks;
  coll_part *parts;   /* SMALL_SLOTS x nranks */
  coll_fin *fin;      /* per rank */
  _Atomic uint64_t *bad; /* per slot: s + 1 when round s mismatched */
  sim_waitq wq;       /* parts written, rounds finished or failed */
};

ncclResult_t coll_small_init(coll_state *st, int nranks) {
  st->small = NULL;
  /* Every rank reads every part, and spins for them: with more ranks than
   * CPUs the rendezvous, whose work any running thread takes, is faster
   * (on 2 CPUs, 8 ranks' 8-byte allreduces took 20-22 us this way against
   * 15-18 us through it). The watermark
   * assumes a rank finishes its collectives in about the order it issued
   * them, which NCCLSIM_COMM_ORDER=1 (the default) gives. */
  int64_t most = sim_param_int(SIM_P_SMALL_RANKS);
  if (most < 0) most = sim_ncpus() < 16 ? sim_ncpus() : 16;
  if (most > COLL_SMALL_RANKS) most = COLL_SMALL_RANKS;
  if (nranks > most || sim_param_int(SIM_P_COMM_ORDER) == 0) return ncclSuccess;
  coll_small *sm = sim_calloc(1, sizeof *sm);
  if (!sm) return ncclSystemError;
  sm->nranks = nranks;
  sm->parts = sim_aligned_alloc(64, sizeof(coll_part) * SMALL_SLOTS * (size_t)nranks);
  sm->fin = sim_aligned_alloc(64, sizeof(coll_fin) * (size_t)nranks);
  sm->bad = sim_calloc(SMALL_SLOTS, sizeof *sm->bad);
  if (!sm->parts || !sm->fin || !sm->bad) {
    coll_small_fini(sm);
    return ncclSystemError;
  }
  memset(sm->parts, 0, sizeof(coll_part) * SMALL_SLOTS * (size_t)nranks);
  memset(sm->fin, 0, sizeof(coll_fin) * (size_t)nranks);
  st->small = sm;
  return ncclSuccess;
}

void coll_small_fini(coll_small *sm) {
  if (!sm) return;
  sim_free(sm->parts);
  sim_free(sm->fin);
  sim_free(sm->bad);
  sim_free(sm);
}

bool coll_small_takes(const coll_small *sm, const coll_task *t) {
  if (!sm || t->kind != C_ALLREDUCE || t->count * sim_dtype_size(t->dt) > COLL_SMALL_BYTES) return false;
  red_kind k = coll_red_kind(t->op_class, t->dt);
  /* The kinds the fused kernels reduce, so that sim_reduce_fused takes
   * them all (sim/coll/reduce.c); PreMulSum and integer averages go the
   * rendezvous way. */
  return (k == RED_SUM || k == RED_PROD || k == RED_MAX || k == RED_MIN) && !sim_dtype_is_narrow(t->dt);
}

static coll_part *part_of(coll_small *sm, uint64_t seq, int rank) {
  return &sm->parts[(seq % SMALL_SLOTS) * (size_t)sm->nranks + (size_t)rank];
}

/* Every rank has finished every collective below seq - SMALL_SLOTS + 1, so
 * nobody reads the lines of seq any more. The minimum read last is kept,
 * so that this reads the others' watermarks once in many calls. */
static bool slot_free(void *arg) {
  coll_task *t = arg;
  coll_small *sm = coll_state_of(t->base.comm->clique)->small;
  coll_fin *f = &sm->fin[t->base.comm->rank];
  if (t->seq < atomic_load_explicit(&f->seen_min, memory_order_acquire) + SMALL_SLOTS) return true;
  uint64_t m = UINT64_MAX;
  for (int r = 0; r < sm->nranks; r++) {
    uint64_t u = atomic_load_explicit(&sm->fin[r].upto, memory_order_acquire);
    if (u < m) m = u;
  }
  atomic_store_explicit(&f->seen_min, m, memory_order_release);
  return t->seq < m + SMALL_SLOTS;
}

/* t->small_written is the owner's, but a timeout's dump of the pending
 * operations (coll_describe, from another rank's thread) reads it too: it
 * is stored and read there with atomic builtins (a plain bool in
 * coll_task; ThreadSanitizer caught the dump racing with write_part). */
static void write_part(coll_small *sm, coll_task *t) {
  sim_clique *c = t->base.comm->clique;
  int me = t->base.comm->rank;
  coll_part *p = part_of(sm, t->seq, me);
  coll_signature(t, &p->sig);
  if (t->small) memcpy(p->data, c->tp->map_peer(c, me, (void *)t->send), t->count * sim_dtype_size(t->dt));
  atomic_store_explicit(&p->tag, t->seq + 1, memory_order_release);
  __atomic_store_n(&t->small_written, true, __ATOMIC_RELAXED);
  sim_waitq_wake(&sm->wq);
}

void coll_small_post(coll_small *sm, coll_task *t) {
  __atomic_store_n(&t->small_written, false, __ATOMIC_RELAXED);
  if (slot_free(t)) write_part(sm, t);
}

int coll_small_write(coll_small *sm, coll_task *t, sim_due *due) {
  if (t->small_written) return 0;
  int rc = sim_waitq_wait_due(&sm->wq, slot_free, t, sim_comm_cancel(t->base.comm), due);
  if (rc == 0) write_part(sm, t);
  return rc;
}

typedef struct {
  coll_small *sm;
  coll_sig sig; /* the waiter's call */
  uint64_t seq;
  bool other;   /* a part holds another call */
} round_arg;

static bool failed(const round_arg *a) {
  return atomic_load_explicit(&a->sm->bad[a->seq % SMALL_SLOTS], memory_order_acquire) == a->seq + 1;
}

int coll_small_count(coll_small *sm, const coll_task *t) {
  int n = __atomic_load_n(&t->small_written, __ATOMIC_RELAXED), me = t->base.comm->rank;
  for (int r = 0; r < sm->nranks; r++)
    n += r != me && atomic_load_explicit(&part_of(sm, t->seq, r)->tag, memory_order_acquire) == t->seq + 1;
  return n;
}

static bool all_written(void *arg) {
  round_arg *a = arg;
  if (failed(a)) return true;
  int n = 0;
  for (int r = 0; r < a->sm->nranks; r++) {
    coll_part *p = part_of(a->sm, a->seq, r);
    if (atomic_load_explicit(&p->tag, memory_order_acquire) != a->seq + 1) continue;
    n++;
    if (memcmp(&p->sig, &a->sig, sizeof a->sig) != 0) a->other = true;
  }
  return a->other || n == a->sm->nranks;
}

static bool failed_ready(void *arg) { return failed(arg); }

static ncclResult_t wait_error(int rc) { return rc == ETIMEDOUT ? ncclTimeout : ncclRemoteError; }

ncclResult_t coll_small_wait(coll_small *sm, coll_task *t, sim_due *due) {
  ncclComm_t comm = t->base.comm;
  sim_clique *c = comm->clique;
  const _Atomic int *cancel = sim_comm_cancel(comm);
  int rc = coll_small_write(sm, t, due);
  round_arg a = {.sm = sm, .seq = t->seq};
  coll_signature(t, &a.sig);
  if (rc == 0) rc = sim_waitq_wait_due(&sm->wq, all_written, &a, cancel, due);
  if (rc != 0) {
    /* Withdrawn, as from a rendezvous round: a rank that comes later does
     * not find this part, and times out too. */
    if (t->small_written) atomic_store_explicit(&part_of(sm, t->seq, comm->rank)->tag, 0, memory_order_relaxed);
    return wait_error(rc);
  }
  if (!failed(&a) && a.other) {
    /* Another call at this number: to the round, which tells every rank
     * (coll.c, the mismatch), then wait for its verdict. */
    ncclResult_t res = coll_arrive_small(c, t);
    if (res != ncclSuccess) return res;
    if ((rc = sim_waitq_wait_due(&sm->wq, failed_ready, &a, cancel, due)) != 0) return wait_error(rc);
  }
  if (failed(&a)) {
    ncclResult_t res = (ncclResult_t)atomic_load(&comm->async_error);
    return res == ncclSuccess ? ncclInvalidUsage : res;
  }
  const void *in[COLL_SMALL_RANKS];
  for (int r = 0; r < sm->nranks; r++) in[r] = part_of(sm, t->seq, r)->data;
  red_args ra = {t->dt, coll_red_kind(t->op_class, t->dt), sm->nranks, in, NULL, 0};
  void *out = c->tp->map_peer(c, comm->rank, t->recv);
  if (!sim_reduce_fused(&ra, t->count, &out, 1)) return ncclInternalError; /* coll_small_takes admits none such */
  return ncclSuccess;
}

void coll_small_fail(coll_small *sm, uint64_t seq) {
  if (!sm) return;
  atomic_store_explicit(&sm->bad[seq % SMALL_SLOTS], seq + 1, memory_order_release);
  sim_waitq_wake(&sm->wq);
}

/* Marks seq finished, then moves the watermark over every finished number.
 * Sequentially consistent marks and reads: of two threads of the rank
 * finishing neighbours at once, one sees the other's mark. */
void coll_small_finished(coll_small *sm, int rank, uint64_t seq) {
  if (!sm) return;
  coll_fin *f = &sm->fin[rank];
  atomic_store(&f->done[seq % FIN_RING], seq + 1);
  uint64_t w = atomic_load(&f->upto);
  while (atomic_load(&f->done[w % FIN_RING]) == w + 1) {
    if (atomic_compare_exchange_strong(&f->upto, &w, w + 1)) w++;
  }
  sim_waitq_wake(&sm->wq);
}
