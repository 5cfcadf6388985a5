/*
 * sim/coll/work.c — a matched collective's work: its plan, cut into jobs
 * (slices of the result), and the jobs themselves.
 *
 * The bytes a collective moves are the floor of its cost (bench/
 * coll_roofline): every input byte read once, every output byte written
 * once. So a reduction runs a strip of 64 bytes of every input at a time
 * into registers and stores the strip to each output (sim_reduce_fused),
 * and a copy to several outputs reads its source once per 16 KiB piece
 * and writes that piece from L1 to each output. Past a size that no cache
 * keeps, results are stored around the cache (no read for ownership).
 *
 * Jobs: each rank owns a contiguous share of them and runs it first, so
 * that from call to call a rank's thread touches the same bytes and finds
 * them in its own cache; then it takes what is left of the others' shares,
 * which keeps every rank's work going when threads outnumber cores (a
 * share whose thread is not running is done by those that are). A job is
 * claimed by an atomic increment of its owner's counter.
 */
#include <stdlib.h>
#include <string.h>

#include "../transport.h"
#include "coll_internal.h"

/* Reduces in the fused kernels, or block by block through tmp: len
 * elements at inoff of every rank's send buffer into each of outs. */
static void reduce_job(const coll_plan *p, sim_rv *rv, size_t inoff, unsigned char **outs, int nouts, size_t len,
                       unsigned char *tmp, unsigned char *stage, size_t block) {
  const void *in[64], **inp = in;
  int n = p->nranks;
  if (n > 64 && !(inp = sim_malloc((size_t)n * sizeof *inp))) return;
  red_args a = {p->dt, p->red, n, inp, coll_rank_of(rv, 0)->scalar, coll_rank_stride(rv)};
  for (size_t done = 0; done < len; done += block) {
    size_t m = len - done < block ? len - done : block, b = done * p->esize;
    for (int r = 0; r < n; r++) inp[r] = coll_rank_of(rv, r)->send + inoff + b;
    void *dst[64], **dp = dst;
    if (p->stream) {
      /* Reduced into the stage, in cache, then stored around the cache. */
      if (!sim_reduce_fused(&a, m, (void *const *)&stage, 1)) sim_reduce_block(&a, m, stage, tmp);
      for (int o = 0; o < nouts; o++) p->tp->copy_stream(outs[o] + b, stage, m * p->esize);
      continue;
    }
    if (nouts > 64 && !(dp = sim_malloc((size_t)nouts * sizeof *dp))) break;
    for (int o = 0; o < nouts; o++) dp[o] = outs[o] + b;
    if (!sim_reduce_fused(&a, m, dp, nouts)) {
      sim_reduce_block(&a, m, dp[0], tmp);
      for (int o = 1; o < nouts; o++) p->tp->copy(dp[o], dp[0], m * p->esize);
    }
    if (dp != dst) sim_free(dp);
  }
  if (inp != in) sim_free(inp);
}

/* src to each of outs (skipping an output that is src: in place), a piece
 * of 16 KiB at a time, so that src is read from memory once. */
static void fanout(const coll_plan *p, unsigned char *const *outs, int nouts, size_t outoff, const unsigned char *src,
                   size_t bytes) {
  enum { PIECE = 16384 };
  for (size_t d = 0; d < bytes; d += PIECE) {
    size_t m = bytes - d < PIECE ? bytes - d : PIECE;
    for (int o = 0; o < nouts; o++) {
      unsigned char *dst = outs[o] + outoff + d;
      if (dst == src + d) continue;
      if (p->stream) p->tp->copy_stream(dst, src + d, m);
      else p->tp->copy(dst, src + d, m);
    }
  }
}

static void copy_to(const coll_plan *p, unsigned char *dst, const unsigned char *src, size_t bytes) {
  if (dst == src) return;
  if (p->stream) p->tp->copy_stream(dst, src, bytes);
  else p->tp->copy(dst, src, bytes);
}

/* Unordered pair (i, j), i <= j, number b of n(n+1)/2. */
static void pair_of(size_t b, int n, int *i, int *j) {
  int a = 0;
  while (b >= (size_t)(n - a)) b -= (size_t)(n - a++);
  *i = a;
  *j = a + (int)b;
}

static void run_job(const coll_plan *p, sim_rv *rv, size_t k, unsigned char *tmp, unsigned char *stage,
                    size_t block) {
  int n = p->nranks, root = p->root;
  size_t b = k / p->spb, off = (k % p->spb) * p->slice;
  size_t len = p->bcount - off < p->slice ? p->bcount - off : p->slice;
  size_t es = p->esize, boff = off * es, bytes = len * es, blk = p->bcount * es;
  unsigned char *outs[64], **o = outs;
#define SEND(r) (coll_rank_of(rv, (r))->send)
#define RECV(r) (coll_rank_of(rv, (r))->recv)
  if (n > 64 && !(o = sim_malloc((size_t)n * sizeof *o))) return;
  switch (p->kind) {
  case C_ALLREDUCE:
    for (int r = 0; r < n; r++) o[r] = RECV(r) + boff;
    reduce_job(p, rv, boff, o, n, len, tmp, stage, block);
    break;
  case C_REDUCE:
    o[0] = RECV(root) + boff;
    reduce_job(p, rv, boff, o, 1, len, tmp, stage, block);
    break;
  case C_REDUCESCATTER:
    o[0] = RECV(b) + boff;
    reduce_job(p, rv, b * blk + boff, o, 1, len, tmp, stage, block);
    break;
  case C_BROADCAST:
    for (int r = 0; r < n; r++) o[r] = RECV(r);
    fanout(p, o, n, boff, SEND(root) + boff, bytes);
    break;
  case C_ALLGATHER:
    for (int r = 0; r < n; r++) o[r] = RECV(r);
    fanout(p, o, n, b * blk + boff, SEND(b) + boff, bytes);
    break;
  case C_GATHER: copy_to(p, RECV(root) + b * blk + boff, SEND(b) + boff, bytes); break;
  case C_SCATTER: copy_to(p, RECV(b) + boff, SEND(root) + b * blk + boff, bytes); break;
  case C_ALLTOALL: {
    int i, j;
    pair_of(b, n, &i, &j);
    if (i == j) {
      copy_to(p, RECV(i) + i * blk + boff, SEND(i) + i * blk + boff, bytes);
      break;
    }
    size_t room = block * 8; /* bytes of tmp it may use */
    for (size_t d = 0; d < bytes; d += room) {
      size_t m = bytes - d < room ? bytes - d : room, x = boff + d;
      p->tp->copy(tmp, SEND(i) + j * blk + x, m); /* i -> j, staged: in place it is i's output */
      p->tp->copy(RECV(i) + j * blk + x, SEND(j) + i * blk + x, m);
      p->tp->copy(RECV(j) + i * blk + x, tmp, m);
    }
    break;
  }
  }
#undef SEND
#undef RECV
  if (o != outs) sim_free(o);
}

/* Bytes a collective reads and writes in all, every rank's inputs and
 * outputs; `total` is the bytes of one rank's result blocks. */
static uint64_t footprint(const coll_plan *p, size_t total) {
  uint64_t n = (uint64_t)p->nranks, blk = (uint64_t)p->bcount * p->esize;
  switch (p->kind) {
  case C_ALLREDUCE: return 2 * n * blk;
  case C_REDUCE:
  case C_BROADCAST: return (n + 1) * blk;
  case C_REDUCESCATTER: /* n inputs of n blocks, n outputs of one */
  case C_ALLGATHER:     /* n inputs of one block, n outputs of n */
    return (n + 1) * n * blk;
  case C_ALLTOALL: return 2 * n * n * blk;
  default: return 2 * (uint64_t)total; /* gather, scatter: n blocks in, n out */
  }
}

void coll_plan_jobs(coll_plan *p, sim_rv *rv) {
  int n = p->nranks;
  size_t nblocks = 1;
  switch (p->kind) {
  case C_ALLGATHER:
  case C_REDUCESCATTER:
  case C_GATHER:
  case C_SCATTER: nblocks = (size_t)n; break;
  case C_ALLTOALL: nblocks = (size_t)n * (size_t)(n + 1) / 2; break;
  default: break;
  }
  /* Slices of 64 KiB .. 1 MiB, about four per rank, so that the ranks
   * share the work evenly and each slice is worth an atomic. */
  size_t total = nblocks * p->bcount * p->esize, bytes = total / (4 * (size_t)n);
  if (bytes < 65536) bytes = 65536;
  if (bytes > 1048576) bytes = 1048576;
  /* A collective whose bytes (every input and output) outgrow the cache
   * stores its results around it: no read for ownership, a third less
   * memory traffic for the reductions, and its inputs stay cached. One that
   * fits keeps them in cache, where the next reader finds them: streamed,
   * 2-rank allreduces and reduce-scatters of 4 MiB (16 and 12 MiB in all)
   * ran at 0.37-0.48 of bench/coll_roofline, kept in cache at 0.55-0.75. */
  /* A reduction to one output (reduce-scatter, reduce) never streams: its
   * results are a small part of its traffic, and stored around the cache
   * they cost more than the reads for ownership they save. 2-rank
   * reduce-scatters of 16 and 64 MiB ran at 0.49 and 0.56 of the roofline
   * streamed, 0.71 and 0.73 through the cache; 4 ranks, 0.55 and 0.57
   * against 0.54 and 0.59 (medians of 3 alternating runs). An allreduce,
   * which writes every result once per rank, gains: 4 ranks, 0.75 and 0.68
   * streamed against 0.52 and 0.52. */
  /* A 2-rank allreduce streams too. Measured while copy_stream's loop was
   * slow (sim/transport_local.c), it ran faster through the cache (16 MiB:
   * 0.80 against 0.57); with that loop mended, streamed again: 16 MiB 0.80
   * and 0.71 against 0.72 and 0.64, 64 MiB 0.75 and 0.73 against 0.68
   * and 0.66 (two sets of 6 alternating runs). */
  int64_t at = sim_param_int(SIM_P_STREAM_STORE_BYTES);
  bool one_out = p->kind == C_REDUCESCATTER || p->kind == C_REDUCE;
  p->stream = !one_out && footprint(p, total) > (at > 0 ? (uint64_t)at : 0);
  p->slice = bytes / p->esize;
  p->spb = (p->bcount + p->slice - 1) / p->slice;
  p->njobs = nblocks * p->spb;
  /* Each rank's share: jobs [r * njobs / n, (r + 1) * njobs / n). */
  for (int r = 0; r < n; r++) {
    coll_rank *cr = coll_rank_of(rv, r);
    cr->start = p->njobs * (size_t)r / (size_t)n;
    cr->end = p->njobs * (size_t)(r + 1) / (size_t)n;
    atomic_store_explicit(&cr->next, cr->start, memory_order_relaxed);
  }
  sim_count_init(&p->done);
}

/* The scratch of a worker thread's jobs: COLL_TMP_BYTES of reduction
 * scratch, then COLL_BLOCK * 8 of stage, 64-aligned. A thread's own, made
 * at its first collective and freed when it ends (not per task: zeroing
 * or faulting in 80 KiB per call cost more than an 8-byte allreduce).
 * Plain memory, outside the allocation hook, as a thread's stack is: a
 * thread without it (out of memory) runs its jobs in small blocks on its
 * stack. */
enum { SCRATCH_BYTES = COLL_TMP_BYTES + COLL_BLOCK * 8, SMALL_BLOCK = 256 };
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static _Thread_local unsigned char *scratch;

static void scratch_make_key(void) { pthread_key_create(&scratch_key, free); }

static unsigned char *thread_scratch(void) {
  if (scratch) return scratch;
  pthread_once(&scratch_once, scratch_make_key);
  void *q = NULL;
  if (posix_memalign(&q, 64, SCRATCH_BYTES) != 0) return NULL;
  pthread_setspecific(scratch_key, q);
  return scratch = q;
}

/* Runs the jobs it can claim from rank r's share. */
static void run_share(coll_plan *p, sim_rv *rv, int r, unsigned char *tmp, unsigned char *stage, size_t block) {
  coll_rank *cr = coll_rank_of(rv, r);
  size_t k, ran = 0;
  while ((k = atomic_fetch_add_explicit(&cr->next, 1, memory_order_relaxed)) < cr->end) {
    run_job(p, rv, k, tmp, stage, block);
    if (p->stream) p->tp->fence(); /* the stores land before the job counts */
    ran++;
  }
  if (ran) sim_count_add(&p->done, ran);
}

void coll_work(coll_plan *p, sim_rv *rv, int me) {
  size_t block = COLL_BLOCK;
  unsigned char *tmp = thread_scratch(), small[SMALL_BLOCK * 12 + SMALL_BLOCK * 8 + 128], *stage;
  if (tmp) {
    stage = tmp + COLL_TMP_BYTES;
  } else { /* out of memory: smaller blocks, on the stack */
    tmp = (unsigned char *)(((uintptr_t)small + 63) & ~(uintptr_t)63);
    stage = tmp + SMALL_BLOCK * 12 + 64;
    block = SMALL_BLOCK;
  }
  int n = p->nranks;
  /* With no more ranks than cores, a share its rank has begun is left to
   * it: that rank's thread runs, and taking its last jobs would move their
   * bytes to this core's cache and back again at the next call. */
  bool polite = n <= sim_ncpus();
  run_share(p, rv, me, tmp, stage, block);
  for (int i = 1; i < n && sim_count_get(&p->done) < p->njobs; i++) {
    coll_rank *cr = coll_rank_of(rv, (me + i) % n);
    if (polite && atomic_load_explicit(&cr->next, memory_order_relaxed) != cr->start) continue;
    run_share(p, rv, (me + i) % n, tmp, stage, block);
  }
}

bool coll_done(const coll_plan *p) { return sim_count_get(&p->done) >= p->njobs; }
