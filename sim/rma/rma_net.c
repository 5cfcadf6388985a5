/*
 * sim/rma/rma_net.c — windows, puts and signals with ranks on other hosts
 * (sim/net/net.h).
 *
 * Signal counters. Each rank makes its own row of counters (one per source
 * rank) before it joins the bootstrap, maps it for UCX and sends its remote
 * key with its hello, so that every rank can signal every other from the
 * start, with or without a window, as real NCCL's signal buffers allow. The
 * clique takes the rows of its ranks here; a rank elsewhere gets a row of
 * local use only (its `called` counts, for the timeline).
 *
 * Windows. A rank maps its window memory for UCX as it registers. The
 * registration round is the one of a single host: this host's ranks arrive
 * in it, and its leader (the host's first rank), once they all have, sends
 * their parts (address, size, flags, remote key) to the other hosts'
 * leaders and arrives for their ranks with what it receives. The round then
 * completes as on one host, with a handle for each rank here and the remote
 * keys of the ranks elsewhere in the collective window.
 *
 * Puts and signals. A put to a rank elsewhere is a UCX put of its bytes
 * into the target's window, then a fence and an atomic add of 1 to the
 * target's counter for this source: the add lands after the bytes, so a
 * wait that sees the count sees the data, as on one host. A signal is the
 * add alone. Over TCP (simulated hosts) the target's process applies both
 * as it progresses UCX, which a wait on a communicator across hosts does.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "rma_internal.h"

ncclResult_t rma_net_join(ncclComm_t comm, sim_net_rank_info *mine, char *why, size_t why_len) {
  size_t bytes = (size_t)comm->nranks * sizeof(rma_sig);
  rma_sig *row = sim_aligned_alloc(64, bytes);
  ncclResult_t res = row ? ncclSuccess : ncclSystemError;
  if (row) {
    memset(row, 0, bytes);
    const void *addr;
    size_t len;
    char ucx_why[256];
    res = sim_ucx_init(&addr, &len, ucx_why, sizeof ucx_why);
    if (res != ncclSuccess) SIM_WARN(SIM_RMA, "rank %d: %s", comm->rank, ucx_why);
    if (res == ncclSuccess) res = sim_ucx_mem_map(row, bytes, &comm->net_sig_memh, &mine->row);
  }
  if (res != ncclSuccess) {
    sim_free(row);
    snprintf(why, why_len, "cannot make its signal counters for ranks on other hosts");
    return res;
  }
  comm->net_sig_row = row;
  return ncclSuccess;
}

void rma_net_comm_free(ncclComm_t comm) {
  sim_ucx_mem_unmap(comm->net_sig_memh);
  comm->net_sig_memh = NULL;
  sim_free(comm->net_sig_row); /* still its own: no clique took it */
  comm->net_sig_row = NULL;
}

ncclResult_t rma_net_rows_init(sim_clique *c, rma_state *st) {
  size_t bytes = (size_t)c->nranks * sizeof(rma_sig);
  for (int r = 0; r < c->nranks; r++) {
    ncclComm_t m = c->ranks[r];
    if (m && m->net_sig_row) {
      st->row[r] = m->net_sig_row;
      m->net_sig_row = NULL;
    } else if ((st->row[r] = sim_aligned_alloc(64, bytes)) != NULL) {
      memset(st->row[r], 0, bytes);
    } else {
      return ncclSystemError;
    }
  }
  return ncclSuccess;
}

void rma_net_rows_fini(rma_state *st) {
  if (!st->row || st->sig) return; /* one host: the rows are slices of sig */
  for (int r = 0; r < st->nranks; r++) sim_free(st->row[r]);
}

ncclResult_t rma_net_map(ncclComm_t comm, reg_slot *slot) {
  if (!comm->clique->net) return ncclSuccess;
  return sim_ucx_mem_map(slot->ptr, slot->size, &slot->memh, &slot->key);
}

/* ---- registration across hosts ---- */

/* One rank's part as its leader sends it. */
typedef struct {
  uint64_t ptr, size;
  int32_t flags, pad;
  sim_ucx_rkey key;
} net_part;

ncclResult_t rma_net_exchange(ncclComm_t comm, sim_rv *rv, const sim_rv_ops *rv_ops, sim_due *due) {
  sim_clique *c = comm->clique;
  rma_state *st = rma_of(comm);
  const sim_net_map *m = c->net;
  int n = c->nranks, H = m->my_host;
  uint64_t seq = sim_rv_key(rv);
  SIM_CHECK(sim_rv_wait_host(&st->rounds, rv, comm, due));
  net_part *mine = sim_calloc((size_t)m->host_size[H], sizeof *mine);
  net_part *all = sim_calloc((size_t)n, sizeof *all); /* host by host, each in rank order */
  ncclResult_t res = mine && all ? ncclSuccess : ncclSystemError;
  if (res == ncclSuccess) {
    sim_rv_lock(&st->rounds);
    for (int r = 0, k = 0; r < n; r++) {
      if (m->host[r] != H) continue;
      const reg_slot *s = sim_rv_slot(rv, r);
      mine[k++] = (net_part){(uint64_t)(uintptr_t)s->ptr, s->size, s->flags, 0, s->key};
    }
    sim_rv_unlock(&st->rounds);
    res = sim_net_leaders_allgather(comm, SIM_NET_TAG_WINDOW, seq, mine, sizeof *mine, all, due,
                                    "ncclCommWindowRegister across hosts");
  }
  /* Every rank elsewhere arrives, as if it were here. */
  for (int h = 0, at = 0; h < m->nhosts && res == ncclSuccess; at += m->host_size[h++]) {
    for (int r = 0, k = at; r < n && h != H && res == ncclSuccess; r++) {
      if (m->host[r] != h) continue;
      const net_part *p = &all[k++];
      reg_slot slot = {(void *)(uintptr_t)p->ptr, (size_t)p->size, p->flags, NULL, NULL, NULL, p->key, false};
      res = sim_rv_arrive(&st->rounds, rv_ops, seq, n, n, r, SIM_RV_DETACHED, &slot, c, NULL);
    }
  }
  sim_free(mine);
  sim_free(all);
  return res;
}

/* ---- puts and signals ---- */

ncclResult_t rma_net_put(ncclComm_t comm, int peer, const void *src, size_t bytes, rma_cwin *cw, size_t off,
                         sim_ucx_op ops[2]) {
  const sim_net_map *m = comm->clique->net;
  sim_net_rank_info info;
  bool have = sim_net_rank_info_of(m, peer, &info); /* not inside NEVER(): coverage builds drop its argument */
  if (NEVER(!have)) return sim_comm_fail(comm, ncclInternalError, "rank %d sent no signal row", peer);
  ncclResult_t res = ncclSuccess;
  bool put = src && bytes;
  if (put) res = sim_ucx_put(m, peer, src, bytes, &cw->key[peer], off, &ops[0]);
  /* A signal alone needs no fence: an earlier put's own signal followed it. */
  if (res == ncclSuccess)
    res = sim_ucx_add(m, peer, &info.row, (uint64_t)comm->rank * sizeof(rma_sig) + offsetof(rma_sig, arrived), put,
                      &ops[1]);
  if (res != ncclSuccess)
    return sim_comm_fail(comm, res, "%s to rank %d on another host: UCX refused it",
                         src ? "ncclPutSignal" : "ncclSignal", peer);
  return ncclSuccess;
}

ncclResult_t rma_net_done(ncclComm_t comm, int peer, sim_ucx_op ops[2], sim_due *due) {
  for (int i = 0; i < 2; i++) {
    if (!ops[i].req) continue; /* not started (a signal has no put), or ended */
    ncclResult_t res = sim_net_wait(comm, &ops[i], peer, 1 << 16, due);
    if (ops[i].cancelled || res == ncclSuccess) {
      if (res != ncclSuccess) return res;
      continue;
    }
    return sim_comm_fail(comm, res, "%s to rank %d on another host failed in UCX: %s",
                         i == 0 ? "the put of ncclPutSignal" : "the signal", peer, sim_ucx_status_text(&ops[i]));
  }
  return ncclSuccess;
}

typedef struct {
  bool (*arrived)(void *);
  void *arg;
} net_arrival;

static bool arrived_or_moved(void *arg, bool *moved) {
  net_arrival *a = arg;
  if (a->arrived(a->arg)) return true;
  *moved = sim_ucx_progress();
  return a->arrived(a->arg);
}

ncclResult_t rma_net_wait(ncclComm_t comm, bool (*arrived)(void *), void *arg, sim_due *due) {
  net_arrival a = {arrived, arg};
  /* Signals from this host wake no UCX event: sleeps are short. */
  ncclResult_t res = sim_net_poll(comm, arrived_or_moved, &a, -1, 1 << 16, 100, sim_comm_cancel(comm), due);
  /* A put and its signal from another host may have been applied by
   * another rank thread of this process, in its progress of the shared
   * worker, under the worker's lock. UCX's add is atomic, so the data is
   * ordered before the count we saw. ThreadSanitizer does not see into
   * UCX's atomics: under it, one more progress takes that lock too, which
   * makes the order one it sees; other builds need no call on this path. */
  if (SIM_TSAN && res == ncclSuccess) sim_ucx_progress();
  return res;
}
