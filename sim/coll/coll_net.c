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
 * number (its low 8 bits), so that collectives the leaders run in different
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
} net_hdr;

typedef struct coll_net {
  int nranks;
  coll_task *tasks;       /* rank -> its call, for the ranks elsewhere */
  unsigned char **staged; /* rank -> its input and its output scratch, one block */
  net_hdr *hdrs;          /* host -> its ranks' calls (one array per other host) */
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
  return sim_net_leader_tag(c->key, 0, seq, from, to);
}

void coll_net_free(coll_task *t) {
  coll_net *x = t->net;
  if (!x) return;
  for (int i = 0; i < x->nops; i++) sim_ucx_cancel(&x->ops[i]); /* those not ended (a failure) */
  for (int r = 0; x->staged && r < x->nranks; r++) sim_free(x->staged[r]);
  sim_free(x->staged);
  sim_free(x->tasks);
  sim_free(x->hdrs);
  sim_free(x->ops);
  sim_free(x);
  t->net = NULL;
}

/* Waits for every operation in x->ops[from..x->nops); a host that dies
 * meanwhile ends every rank of this host (sim_net_check_gone). */
static ncclResult_t wait_ops(coll_net *x, int from, ncclComm_t comm, sim_due *due) {
  for (int i = from; i < x->nops; i++) {
    ncclResult_t res = sim_net_wait(comm, &x->ops[i], -1, 1024, due);
    if (x->ops[i].cancelled) return res;
    if (res != ncclSuccess)
      return sim_comm_fail(comm, res, "collective across hosts: a message between hosts' leaders failed in UCX: %s",
                           sim_ucx_status_text(&x->ops[i]));
  }
  return ncclSuccess;
}

static ncclResult_t push_op(coll_net *x, ncclResult_t posted) {
  if (posted == ncclSuccess) x->nops++;
  return posted;
}

ncclResult_t coll_net_exchange(coll_task *t, sim_rv_table *rounds, sim_rv *rv, sim_due *due) {
  ncclComm_t comm = t->base.comm;
  sim_clique *c = comm->clique;
  sim_net_map *m = c->net;
  int n = c->nranks, me = comm->rank, H = m->my_host;
  size_t es = sim_dtype_size(t->dt);
  SIM_CHECK(sim_net_wait_host(comm, rounds, rv, due));
  coll_net *x = sim_calloc(1, sizeof *x);
  if (!x) return ncclSystemError;
  t->net = x;
  x->nranks = n;
  x->tasks = sim_calloc((size_t)n, sizeof *x->tasks);
  x->staged = sim_calloc((size_t)n, sizeof *x->staged);
  x->hdrs = sim_calloc((size_t)n, sizeof *x->hdrs); /* rank -> its call; this host's and the others' */
  x->ops = sim_calloc((size_t)n + (size_t)m->nhosts * ((size_t)m->host_size[H] + 1) + 1, sizeof *x->ops);
  if (!x->tasks || !x->staged || !x->hdrs || !x->ops) return ncclSystemError;

  /* This host's calls, from their slots, in rank order. */
  net_hdr *mine = sim_calloc((size_t)m->host_size[H], sizeof *mine);
  if (!mine) return ncclSystemError;
  int k = 0;
  for (int r = 0; r < n; r++) {
    if (m->host[r] != H) continue;
    const coll_rank *s = coll_rank_of(rv, r);
    const coll_task *rt = s->task;
    mine[k] = (net_hdr){rt->kind, rt->dt, rt->op_class, rt->root, rt->count, {0}};
    memcpy(mine[k].scalar, s->scalar, sizeof mine[k].scalar);
    x->hdrs[r] = mine[k++];
  }
  /* To every other host's leader: the calls, then each input. */
  ncclResult_t res = ncclSuccess;
  for (int h = 0; h < m->nhosts && res == ncclSuccess; h++) {
    if (h == H) continue;
    int lead = 0;
    while (m->host[lead] != h) lead++;
    uint64_t tag = tag_of(c, t->seq, H, h);
    res = push_op(x, sim_ucx_send(m, lead, tag, mine, (size_t)m->host_size[H] * sizeof *mine, &x->ops[x->nops]));
    for (int r = 0; r < n && res == ncclSuccess; r++) {
      if (m->host[r] != H) continue;
      size_t bytes = send_elems(&x->hdrs[r], r, n) * sim_dtype_size(x->hdrs[r].dt);
      if (bytes) res = push_op(x, sim_ucx_send(m, lead, tag, coll_rank_of(rv, r)->send, bytes, &x->ops[x->nops]));
    }
  }
  int sends = x->nops;
  /* From every other host's leader: its calls, then each input, staged. */
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
    if (res == ncclSuccess) res = wait_ops(x, at, comm, due);
    if (res == ncclSuccess && x->ops[at].length != (size_t)m->host_size[h] * sizeof *theirs)
      res = sim_comm_fail(comm, ncclInternalError, "collective across hosts: host %d's leader sent %zu bytes of calls",
                          h, x->ops[at].length);
    for (int r = 0, i = 0; r < n && res == ncclSuccess; r++) {
      if (m->host[r] != h) continue;
      net_hdr *hr = &x->hdrs[r];
      *hr = theirs[i++];
      size_t hs = sim_dtype_size(hr->dt);
      if (!hs || hr->kind < C_ALLREDUCE || hr->kind > C_SCATTER) {
        res = sim_comm_fail(comm, ncclInternalError, "collective across hosts: rank %d's call came garbled", r);
        break;
      }
      size_t in = send_elems(hr, r, n) * hs, out = recv_elems(hr, r, n) * hs;
      if (!(x->staged[r] = sim_aligned_alloc(64, in + out + 64))) {
        res = ncclSystemError;
        break;
      }
      if (in) res = push_op(x, sim_ucx_recv(tag, x->staged[r], in, &x->ops[x->nops]));
    }
    sim_free(theirs);
  }
  sim_free(mine);
  if (res == ncclSuccess) res = wait_ops(x, sends, comm, due);
  if (res == ncclSuccess) res = wait_ops(x, 0, comm, due);
  if (res != ncclSuccess) return res;
  /* Every rank elsewhere arrives, as if it were here. */
  (void)es;
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
    slot.recv = recv_elems(hr, r, n) ? x->staged[r] + ((in + 63) & ~(size_t)63) : NULL;
    memcpy(slot.scalar, hr->scalar, sizeof slot.scalar);
    res = coll_arrive_remote(c, t->seq, r, &slot, me);
  }
  return res;
}
