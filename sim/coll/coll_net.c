/*
 * sim/coll/coll_net.c — collectives whose ranks are on several hosts
 * (sim/net/net.h): each host's leader stages the other hosts' inputs here.
 *
 * The round of a collective has a slot for every rank of the communicator.
 * This host's ranks arrive in it as on one host. The leader (the host's
 * first rank) waits until they all have, then sends every other host's
 * leader one message with their calls (kind, count, datatype, op, root,
 * PreMulSum factor) and one per input, and receives the same from each of
 * them. It then arrives for every rank elsewhere, with that rank's input
 * staged here and scratch for its output: the round compares all the calls
 * (a mismatch across hosts is diagnosed as on one host) and runs as it
 * would on one host. Every host thus computes every rank's result and keeps
 * its own; the cost is each host receiving every other rank's input, not
 * the least traffic (a hierarchical reduction is the next step), and the
 * gain is that every collective, datatype and op works across hosts with
 * the one engine.
 *
 * Messages between leaders are tagged with the collective's sequence
 * number (its low 7 bits), so that collectives the leaders run in different
 * orders (different streams) still meet their own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "../net/net.h"
#include "../transport.h"
#include "coll_internal.h"

typedef struct {
  int32_t kind, dt, op_class, root;
  uint64_t count;
  unsigned char scalar[8];
  int32_t reduced; /* its host sent one input, its ranks' reduced (every call of the host says so) */
  int32_t pad;
} net_hdr;

typedef struct coll_net {
  int nranks, nhosts;
  coll_task *tasks;       /* rank -> its call, for the ranks elsewhere */
  unsigned char **staged; /* rank -> its input (if it came) and its output scratch, one block */
  unsigned char **fill;   /* host -> the input of its ranks but the first, when it sent one reduced */
  unsigned char *partial; /* this host's ranks' inputs reduced, as sent */
  net_hdr *hdrs;          /* rank -> its call */
  sim_ucx_op *ops;
  int nops;
} coll_net;

bool coll_net_leader(ncclComm_t comm) {
  sim_net_map *m = comm->clique->net;
  return m && m->host_rank[comm->rank] == 0;
}

/* Elements rank r of n sends and receives for call h. */
static size_t send_elems(const net_hdr *h, int r, int n) {
  size_t c = h->count, nn = (size_t)n;
  switch (h->kind) {
  case C_BROADCAST: return r == h->root ? c : 0;
  case C_REDUCESCATTER:
  case C_ALLTOALL: return c * nn;
  case C_SCATTER: return r == h->root ? c * nn : 0;
  default: return c; /* allreduce, reduce, allgather, gather */
  }
}

static size_t recv_elems(const net_hdr *h, int r, int n) {
  size_t c = h->count, nn = (size_t)n;
  switch (h->kind) {
  case C_ALLGATHER:
  case C_ALLTOALL: return c * nn;
  case C_GATHER: return r == h->root ? c * nn : 0;
  case C_REDUCE: return r == h->root ? c : 0;
  default: return c; /* allreduce, broadcast, reducescatter, scatter */
  }
}

static uint64_t tag_of(sim_clique *c, uint64_t seq, int from, int to) {
  return sim_net_leader_tag(c->key, SIM_NET_TAG_COLL, seq, from, to);
}

void coll_net_free(coll_task *t) {
  coll_net *x = t->net;
  if (!x) return;
  for (int i = 0; i < x->nops; i++) sim_ucx_cancel(&x->ops[i]); /* those not ended (a failure) */
  for (int r = 0; x->staged && r < x->nranks; r++) sim_free(x->staged[r]);
  for (int h = 0; x->fill && h < x->nhosts; h++) sim_free(x->fill[h]);
  sim_free(x->staged);
  sim_free(x->fill);
  sim_free(x->partial);
  sim_free(x->tasks);
  sim_free(x->hdrs);
  sim_free(x->ops);
  sim_free(x);
  t->net = NULL;
}

static ncclResult_t push_op(coll_net *x, ncclResult_t posted) {
  if (posted == ncclSuccess) x->nops++;
  return posted;
}

/* ---- hierarchical reductions ----
 * When every rank of a host calls the same reduction (allreduce, reduce,
 * reduce-scatter), its leader reduces their inputs here and sends the other
 * hosts that one partial result instead of each rank's input: a host pair
 * moves one input, not one per rank. A receiving host arrives for the
 * sender's first rank with the partial (PreMulSum factor 1: the factors are
 * in it) and for its other ranks with an input that adds nothing: zeros for
 * sums, ones for products, the partial itself for max and min. Every host
 * reduces the same partials in the same order, so every rank's result is
 * the same on every host; it is not the bits of one host's rank-order
 * reduction (narrow floats round each partial), as NCCL's own algorithms
 * differ from one another. */

static bool reduces(int kind) { return kind == C_ALLREDUCE || kind == C_REDUCE || kind == C_REDUCESCATTER; }

/* Whether host H's ranks (their calls in x->hdrs) reduce alike, and more
 * than one of them is there. */
static bool host_reduces(const coll_net *x, const sim_net_map *m, int H) {
  const net_hdr *h0 = NULL;
  if (m->host_size[H] < 2) return false;
  for (int r = 0; r < x->nranks; r++) {
    const net_hdr *h = &x->hdrs[r];
    if (m->host[r] != H) continue;
    if (!reduces(h->kind)) return false;
    if (!h0) h0 = h;
    else if (h->kind != h0->kind || h->dt != h0->dt || h->op_class != h0->op_class || h->count != h0->count ||
             h->root != h0->root)
      return false;
  }
  return true;
}

/* One element of dt that is 1 (little-endian integers), in 8 bytes. */
static void one_of(ncclDataType_t dt, unsigned char *out8) {
  memset(out8, 0, 8);
  if (sim_dtype_is_float(dt)) sim_avg_scalar(dt, 1, out8);
  else out8[0] = 1;
}

/* This host's ranks' `elems` inputs (from their slots), reduced with their
 * factors into x->partial. */
static ncclResult_t host_partial(coll_net *x, sim_rv *rv, const sim_net_map *m, const net_hdr *h0, size_t elems) {
  ncclDataType_t dt = (ncclDataType_t)h0->dt;
  size_t es = sim_dtype_size(dt);
  int k = m->host_size[m->my_host], i = 0;
  red_kind red = coll_red_kind(h0->op_class, dt);
  if (red == RED_SUMPOSTDIV) red = RED_SUM; /* divided once, by the round, at the end */
  const void **in = sim_calloc((size_t)k, sizeof *in);
  const unsigned char **base = sim_calloc((size_t)k, sizeof *base);
  unsigned char *sc = sim_calloc((size_t)k, 8);
  unsigned char *tmp = sim_aligned_alloc(64, COLL_TMP_BYTES);
  x->partial = sim_aligned_alloc(64, elems * es + 64);
  ncclResult_t res = in && base && sc && tmp && x->partial ? ncclSuccess : ncclSystemError;
  for (int r = 0; r < x->nranks && res == ncclSuccess; r++) {
    if (m->host[r] != m->my_host) continue;
    base[i] = coll_rank_of(rv, r)->send;
    memcpy(sc + 8 * (size_t)i++, coll_rank_of(rv, r)->scalar, 8);
  }
  red_args a = {dt, red, k, in, sc, 8};
  for (size_t done = 0; done < elems && res == ncclSuccess; done += COLL_BLOCK) {
    size_t len = elems - done < COLL_BLOCK ? elems - done : COLL_BLOCK;
    for (int j = 0; j < k; j++) in[j] = base[j] + done * es;
    sim_reduce_block(&a, len, x->partial + done * es, tmp);
  }
  sim_free(in);
  sim_free((void *)base);
  sim_free(sc);
  sim_free(tmp);
  return res;
}

/* The input of host h's ranks but the first, when it sent a partial of
 * `bytes`: one that adds nothing to the reduction. */
static ncclResult_t host_fill(coll_net *x, int h, const net_hdr *h0, size_t bytes, const unsigned char *carrier,
                              const unsigned char **out) {
  ncclDataType_t dt = (ncclDataType_t)h0->dt;
  red_kind red = coll_red_kind(h0->op_class, dt);
  if (red == RED_MAX || red == RED_MIN) { /* the partial again: max(a, a) = a */
    *out = carrier;
    return ncclSuccess;
  }
  *out = x->fill[h];
  if (x->fill[h]) return ncclSuccess; /* one for all the host's ranks */
  if (!(x->fill[h] = sim_aligned_alloc(64, bytes + 64))) return ncclSystemError;
  memset(x->fill[h], 0, bytes);
  if (red == RED_PROD) {
    unsigned char one[8];
    size_t es = sim_dtype_size(dt);
    one_of(dt, one);
    for (size_t b = 0; b < bytes; b += es) memcpy(x->fill[h] + b, one, es);
  }
  *out = x->fill[h];
  return ncclSuccess;
}

ncclResult_t coll_net_exchange(coll_task *t, sim_rv_table *rounds, sim_rv *rv, sim_due *due) {
  ncclComm_t comm = t->base.comm;
  sim_clique *c = comm->clique;
  sim_net_map *m = c->net;
  int n = c->nranks, me = comm->rank, H = m->my_host;
  static const char what[] = "collective across hosts";
  SIM_CHECK(sim_rv_wait_host(rounds, rv, comm, due));
  coll_net *x = sim_calloc(1, sizeof *x);
  if (!x) return ncclSystemError;
  t->net = x;
  x->nranks = n;
  x->nhosts = m->nhosts;
  x->tasks = sim_calloc((size_t)n, sizeof *x->tasks);
  x->staged = sim_calloc((size_t)n, sizeof *x->staged);
  x->fill = sim_calloc((size_t)m->nhosts, sizeof *x->fill);
  x->hdrs = sim_calloc((size_t)n, sizeof *x->hdrs); /* rank -> its call; this host's and the others' */
  x->ops = sim_calloc((size_t)n + (size_t)m->nhosts * ((size_t)m->host_size[H] + 1) + 1, sizeof *x->ops);
  if (!x->tasks || !x->staged || !x->fill || !x->hdrs || !x->ops) return ncclSystemError;

  /* This host's calls, from their slots, in rank order. */
  net_hdr *mine = sim_calloc((size_t)m->host_size[H], sizeof *mine);
  if (!mine) return ncclSystemError;
  int k = 0;
  for (int r = 0; r < n; r++) {
    if (m->host[r] != H) continue;
    const coll_rank *s = coll_rank_of(rv, r);
    const coll_task *rt = s->task;
    mine[k] = (net_hdr){rt->kind, rt->dt, rt->op_class, rt->root, rt->count, {0}, 0, 0};
    memcpy(mine[k].scalar, s->scalar, sizeof mine[k].scalar);
    x->hdrs[r] = mine[k++];
  }
  /* One reduced input for the host, or each rank's. */
  ncclResult_t res = ncclSuccess;
  size_t partial_bytes = 0;
  if (host_reduces(x, m, H)) {
    const net_hdr *h0 = &mine[0];
    size_t elems = send_elems(h0, me, n);
    partial_bytes = elems * sim_dtype_size(h0->dt);
    res = host_partial(x, rv, m, h0, elems);
    for (int i = 0; i < k; i++) mine[i].reduced = 1;
    SIM_TRACE(SIM_COLL, "%s %llu across hosts: host %d sends its %d ranks' inputs reduced, %zu bytes",
              coll_kind_name(h0->kind), (unsigned long long)t->seq, H, k, partial_bytes);
  }
  /* To every other host's leader: the calls, then the inputs. */
  for (int h = 0; h < m->nhosts && res == ncclSuccess; h++) {
    if (h == H) continue;
    int lead = sim_net_leader(m, h);
    uint64_t tag = tag_of(c, t->seq, H, h);
    res = push_op(x, sim_ucx_send(m, lead, tag, mine, (size_t)m->host_size[H] * sizeof *mine, false, &x->ops[x->nops]));
    if (x->partial) {
      if (res == ncclSuccess && partial_bytes)
        res = push_op(x, sim_ucx_send(m, lead, tag, x->partial, partial_bytes, false, &x->ops[x->nops]));
      continue;
    }
    for (int r = 0; r < n && res == ncclSuccess; r++) {
      if (m->host[r] != H) continue;
      size_t bytes = send_elems(&x->hdrs[r], r, n) * sim_dtype_size(x->hdrs[r].dt);
      if (bytes) res = push_op(x, sim_ucx_send(m, lead, tag, coll_rank_of(rv, r)->send, bytes, false, &x->ops[x->nops]));
    }
  }
  int sends = x->nops;
  /* From every other host's leader: its calls, then its inputs, staged. */
  for (int h = 0; h < m->nhosts && res == ncclSuccess; h++) {
    if (h == H) continue;
    net_hdr *theirs = sim_calloc((size_t)m->host_size[h], sizeof *theirs);
    if (!theirs) {
      res = ncclSystemError;
      break;
    }
    uint64_t tag = tag_of(c, t->seq, h, H);
    int at = x->nops;
    res = push_op(x, sim_ucx_recv(tag, theirs, (size_t)m->host_size[h] * sizeof *theirs, &x->ops[x->nops]));
    if (res == ncclSuccess) res = sim_net_wait_ops(comm, x->ops, at, x->nops, due, what);
    if (res == ncclSuccess && x->ops[at].length != (size_t)m->host_size[h] * sizeof *theirs)
      res = sim_comm_fail(comm, ncclInternalError, "collective across hosts: host %d's leader sent %zu bytes of calls",
                          h, x->ops[at].length);
    int carrier = -1; /* the rank whose input is the host's reduced one */
    for (int r = 0, i = 0; r < n && res == ncclSuccess; r++) {
      if (m->host[r] != h) continue;
      net_hdr *hr = &x->hdrs[r];
      *hr = theirs[i++];
      size_t hs = sim_dtype_size(hr->dt);
      if (!hs || hr->kind < C_ALLREDUCE || hr->kind > C_SCATTER || (hr->reduced && !reduces(hr->kind))) {
        res = sim_comm_fail(comm, ncclInternalError, "collective across hosts: rank %d's call came garbled", r);
        break;
      }
      size_t in = send_elems(hr, r, n) * hs, out = recv_elems(hr, r, n) * hs;
      bool comes = !hr->reduced || carrier < 0; /* an input of its own comes */
      if (hr->reduced && carrier < 0) carrier = r;
      if (!comes) in = 0; /* its input is made here (host_fill) */
      if (!(x->staged[r] = sim_aligned_alloc(64, in + out + 64))) {
        res = ncclSystemError;
        break;
      }
      if (in) res = push_op(x, sim_ucx_recv(tag, x->staged[r], in, &x->ops[x->nops]));
    }
    sim_free(theirs);
  }
  sim_free(mine);
  if (res == ncclSuccess) res = sim_net_wait_ops(comm, x->ops, sends, x->nops, due, what);
  if (res == ncclSuccess) res = sim_net_wait_ops(comm, x->ops, 0, x->nops, due, what);
  if (res != ncclSuccess) return res;
  /* Every rank elsewhere arrives, as if it were here. */
  int carrier = -1;
  for (int r = 0; r < n && res == ncclSuccess; r++) {
    if (m->host[r] == H) continue;
    const net_hdr *hr = &x->hdrs[r];
    coll_task *ft = &x->tasks[r];
    ft->base.comm = comm; /* a mismatch is reported through the leader */
    ft->kind = hr->kind;
    ft->fn = coll_kind_name(hr->kind);
    ft->count = (size_t)hr->count;
    ft->dt = (ncclDataType_t)hr->dt;
    ft->op_class = hr->op_class;
    ft->root = hr->root;
    ft->seq = t->seq;
    size_t in = send_elems(hr, r, n) * sim_dtype_size(ft->dt);
    coll_rank slot;
    memset(&slot, 0, sizeof slot);
    slot.task = ft;
    slot.send = in ? x->staged[r] : NULL;
    memcpy(slot.scalar, hr->scalar, sizeof slot.scalar);
    if (hr->reduced) {
      if (carrier < 0 || m->host[carrier] != m->host[r]) {
        carrier = r; /* the host's partial, its factors applied */
        if (coll_red_kind(hr->op_class, ft->dt) == RED_PREMULSUM) one_of(ft->dt, slot.scalar);
      } else {
        memset(slot.scalar, 0, sizeof slot.scalar); /* 0 x 0: nothing, whatever its factor */
        res = in ? host_fill(x, m->host[r], hr, in, x->staged[carrier], &slot.send) : ncclSuccess;
        in = 0; /* its staged block is output only */
      }
    }
    slot.recv = recv_elems(hr, r, n) ? x->staged[r] + ((in + 63) & ~(size_t)63) : NULL;
    if (res == ncclSuccess) res = coll_arrive_remote(c, t->seq, r, &slot, me);
  }
  return res;
}
