/*
 * sim/coll/coll_internal.h — what the files of sim/coll/ share: software
 * conversions of the narrow floats, the reduction kernels, the per-rank
 * table of PreMulSum ops, and a matched collective's plan and jobs.
 */
#ifndef NCCLSIM_COLL_INTERNAL_H_
#define NCCLSIM_COLL_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "../core/core.h"
#include "../comm/comm.h"

/* ---- dtype.c: float16, bfloat16, float8 e4m3 and e5m2 <-> float.
 * Narrowing rounds to nearest even. float16 overflows to infinity (as
 * __float2half); both float8 formats saturate to their largest finite value,
 * infinities included, as the __nv_fp8_e4m3/__nv_fp8_e5m2 constructors do
 * (__NV_SATFINITE). NaN stays NaN. */
float sim_f16_to_f32(uint16_t h);
uint16_t sim_f32_to_f16(float f);
float sim_bf16_to_f32(uint16_t h);
uint16_t sim_f32_to_bf16(float f);
float sim_e4m3_to_f32(uint8_t b);
uint8_t sim_f32_to_e4m3(float f);
float sim_e5m2_to_f32(uint8_t b);
uint8_t sim_f32_to_e5m2(float f);
/* Element i of a narrow-float array as float, and back (i in elements). */
float sim_narrow_load(ncclDataType_t dt, const void *p, size_t i);
void sim_narrow_store(ncclDataType_t dt, void *p, size_t i, float v);
/* float16, bfloat16, e4m3, e5m2. */
static inline int sim_dtype_is_narrow(ncclDataType_t dt) {
  return dt == ncclFloat16 || dt == ncclBfloat16 || dt == ncclFloat8e4m3 || dt == ncclFloat8e5m2;
}
static inline int sim_dtype_is_float(ncclDataType_t dt) {
  return sim_dtype_is_narrow(dt) || dt == ncclFloat32 || dt == ncclFloat64;
}

/* ---- reduce.c: the reduction of one block. ---- */
typedef enum {
  RED_SUM,
  RED_PROD,
  RED_MAX,
  RED_MIN,
  RED_PREMULSUM, /* sum of scalar_r * x_r; also ncclAvg on floats (scalar 1/n) */
  RED_SUMPOSTDIV /* ncclAvg on integers: wrapped sum, then / nranks */
} red_kind;

/* Scratch for one block: COLL_BLOCK elements of up to 8 bytes, and for the
 * narrow floats a float accumulator beside. */
enum { COLL_BLOCK = 4096, COLL_TMP_BYTES = COLL_BLOCK * 8 + COLL_BLOCK * 4 + 64 };

typedef struct {
  ncclDataType_t dt;
  red_kind kind;
  int nin;
  const void *const *in; /* nin inputs, each at the block's first element */
  /* PREMULSUM: nin scalars, each one element of dt at the start of 8
   * bytes, scalar_stride bytes apart */
  const unsigned char *scalars;
  size_t scalar_stride;
} red_args;

/* Reduces n <= COLL_BLOCK elements of the nin inputs into `out` (which may
 * alias any input exactly: every input is read before out is written).
 * tmp has n * 12 + 64 bytes (COLL_TMP_BYTES for COLL_BLOCK), 64-aligned. */
void sim_reduce_block(const red_args *a, size_t n, void *out, void *tmp);
/* The same straight into each of nout outputs (any of which may alias an
 * input exactly), with no scratch: a strip of 64 bytes of every input at
 * a time, reduced in registers and stored to every output, so each input
 * is read once and each output written once. Sum, product, max and min of
 * the integer types, float32 and float64, in rank order as
 * sim_reduce_block (the same bits); false, having done nothing, for
 * anything else. */
bool sim_reduce_fused(const red_args *a, size_t n, void *const *out, int nout);
/* The reduction a call's op class (ncclSum.., or a PreMulSum op's) makes
 * on dt (coll.c). */
red_kind coll_red_kind(int op_class, ncclDataType_t dt);
/* The scalar of ncclAvg on floats: 1/nranks as one element of dt. */
void sim_avg_scalar(ncclDataType_t dt, int nranks, void *out8);

/* ---- redop.c: ncclRedOpCreatePreMulSum ops, per rank. ---- */
typedef struct sim_redop {
  struct sim_redop *next;
  ncclRedOp_t value;
  ncclDataType_t dt;
  bool device;            /* the scalar is read when a collective runs */
  const void *scalar_ptr; /* device (or non-immediate) residence */
  unsigned char scalar[8]; /* host-immediate value */
} sim_redop;

/* Finds comm's op `op` of datatype dt: copies it into *out. WARN and
 * ncclInvalidArgument if op is not one of comm's live ops or was made for
 * another datatype. */
ncclResult_t sim_redop_lookup(ncclComm_t comm, ncclRedOp_t op, ncclDataType_t dt, const char *fn,
                              sim_redop *out);
/* Frees every op of comm (ncclCommDestroy/Abort). */
void sim_redop_comm_fini(ncclComm_t comm);

typedef struct coll_small coll_small;

/* coll.c: the clique's state; redop.c keeps its per-rank lists in it. */
typedef struct {
  pthread_mutex_t lock; /* guards ops */
  int nranks;
  sim_rv_table rounds;   /* one round per collective sequence number */
  _Atomic uint64_t *seq; /* per rank: its next collective's sequence number */
  sim_redop **ops;       /* per rank, under lock */
  coll_small *small;     /* small allreduces (small.c); NULL: none */
} coll_state;

static inline coll_state *coll_state_of(sim_clique *c) { return c->area[SIM_AREA_COLL]; }

/* ---- coll.c: a rank's collective call. ---- */
/* Op class compared across ranks: the built-in op, or PreMulSum. */
enum { OP_PREMULSUM = ncclNumOps };

typedef struct coll_task {
  sim_task base;
  int kind; /* coll_kind */
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
  struct coll_net *net; /* across hosts, the leader's exchange (coll_net.c) */
  bool small;           /* run by small.c */
  bool small_written;   /* its part is written (small.c) */
  bool finished;        /* told to small.c (coll_small_finished) */
} coll_task;

/* What the ranks' calls must agree on (coll.c): kind, count, datatype, op
 * class where the kind reduces, root where it has one (-1 otherwise). */
typedef struct coll_sig {
  uint64_t count;
  int32_t root;
  int16_t op_class;
  uint8_t kind, dt;
} coll_sig;
void coll_signature(const coll_task *t, coll_sig *out);
/* coll.c: arrives for t, a small allreduce whose number holds another
 * call, in that number's rendezvous round, detached: the round compares. */
ncclResult_t coll_arrive_small(sim_clique *c, coll_task *t);

/* ---- small.c: small allreduces, without the rendezvous table's lock.
 * At most COLL_SMALL_BYTES per rank, in communicators on one host of at
 * most NCCLSIM_SMALL_RANKS ranks (never more than COLL_SMALL_RANKS). */
enum { COLL_SMALL_BYTES = 32, COLL_SMALL_RANKS = 64 };
/* Sets st->small, or leaves it NULL where the way is not taken (too many
 * ranks, NCCLSIM_COMM_ORDER=0); ncclSystemError out of memory. */
ncclResult_t coll_small_init(coll_state *st, int nranks);
void coll_small_fini(coll_small *sm);
/* t (its seq committed) runs this way, sm being its communicator's small
 * state on this host (NULL across hosts): the same answer on every rank
 * that makes the same call. */
bool coll_small_takes(const coll_small *sm, const coll_task *t);
/* Writes t's part (its call; a small one's input too) if its line is
 * free: every collective of a communicator with small allreduces does, at
 * its post (never blocks). */
void coll_small_post(coll_small *sm, coll_task *t);
/* Writes t's part if the post could not, once its line is free; 0, or
 * ETIMEDOUT / ECANCELED. */
int coll_small_write(coll_small *sm, coll_task *t, sim_due *due);
/* Writes the part if the post could not, waits for every rank's, and
 * reduces them into t's output. */
ncclResult_t coll_small_wait(coll_small *sm, coll_task *t, sim_due *due);
/* Ranks whose part of t's number is written, t's rank counted if it
 * wrote its part, even if a timeout withdrew it since (the timeout's
 * description). */
int coll_small_count(coll_small *sm, const coll_task *t);
/* Round seq mismatched: its small waiters end with the comm's error. */
void coll_small_fail(coll_small *sm, uint64_t seq);
/* Every collective of `rank`, whichever way it ran, once it ends. */
void coll_small_finished(coll_small *sm, int rank, uint64_t seq);

/* ---- work.c: a matched collective's plan and jobs. ---- */
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

/* A rank's slot in the collective's round: what it brought at its arrival
 * (its buffers mapped for the other ranks, its PreMulSum factor), and its
 * share of the jobs, which the plan sets. The round aligns slots of 64
 * bytes or more to cache lines: each rank claims from its own counter. */
typedef struct coll_rank {
  struct coll_task *task;
  const unsigned char *send;
  unsigned char *recv;
  unsigned char scalar[8]; /* PREMULSUM: this rank's factor, one element of dt */
  _Atomic size_t next;     /* its next job to claim; its share is [start, end) */
  size_t start, end;
  unsigned char pad[8];
} coll_rank;

static inline coll_rank *coll_rank_of(sim_rv *rv, int rank) { return (coll_rank *)sim_rv_slot(rv, rank); }
static inline size_t coll_rank_stride(sim_rv *rv) {
  return (size_t)((unsigned char *)sim_rv_slot(rv, 1) - (unsigned char *)sim_rv_slot(rv, 0));
}

/* The round's payload: the plan, fixed at completion. */
typedef struct coll_plan {
  uint64_t seq;
  int nranks;
  const struct sim_transport *tp;
  coll_kind kind;
  ncclDataType_t dt;
  red_kind red;
  int root;
  size_t esize, bcount, slice, spb, njobs; /* elements per block and slice; slices per block */
  bool stream; /* large: write results around the cache */
  sim_count done; /* jobs done; waiters sleep until it reaches njobs */
} coll_plan;

/* Cuts a plan whose kind, sizes and ranks are set into jobs, and sets each
 * rank's share. */
void coll_plan_jobs(coll_plan *p, sim_rv *rv);
/* Runs rank `me`'s share of the jobs, then what is left of the others'. */
void coll_work(coll_plan *p, sim_rv *rv, int me);
/* Every job is done. */
bool coll_done(const coll_plan *p);

/* ---- coll_net.c: collectives across hosts (sim/net/net.h). ----
 * A collective's round has a slot for every rank. This host's ranks arrive
 * as anywhere; its leader (its first rank) then sends their calls and
 * inputs to every other host's leader, receives theirs, and arrives for
 * each rank elsewhere with those inputs staged here (and scratch for their
 * outputs, which this host computes and drops). The round then runs as on
 * one host: every host computes every result, and keeps its own ranks'. */
bool coll_net_leader(ncclComm_t comm);
/* The leader's part, in its wait, before it waits for the round. */
ncclResult_t coll_net_exchange(coll_task *t, sim_rv_table *rounds, sim_rv *rv, sim_due *due);
/* Frees what the exchange staged, once the round's work is done. */
void coll_net_free(coll_task *t);
/* coll.c: arrives in round seq for `rank`, a rank on another host, with its
 * slot (task, staged input, scratch output, factor); `me` completes it if
 * it is the last. */
ncclResult_t coll_arrive_remote(sim_clique *c, uint64_t seq, int rank, const coll_rank *slot, int me);
/* coll.c: the entry point's name of a kind ("ncclAllReduce"). */
const char *coll_kind_name(int kind);

#endif /* NCCLSIM_COLL_INTERNAL_H_ */
