/*
 * sim/dev/gin_net.c — GIN to ranks on other simulated hosts, over
 * ncclsim's UCX layer (sim/net/).
 *
 * Memory is not shared between hosts, so what a peer elsewhere writes
 * must be registered with UCX and its key known: across hosts each rank's
 * ncclDevCommCreate registers its device communicator's block (resource
 * buffers, then signals; state.c) as a window of the communicator, which
 * is a call that every rank makes in the same order (NCCL's creation is
 * collective too): rma maps it for UCX and exchanges its address and key
 * with every rank (sim/rma/rma_net.c). A put to a rank elsewhere is then
 * a UCX put of its bytes into the peer's window, and its signal an atomic
 * add into the peer's block (an indexed signal) or window (a VA signal),
 * fenced after the put, so that a wait that sees the signal sees the
 * bytes; both as NCCL's GIN does through the NIC. The issuing thread (the
 * kernel's, or the proxy's) waits until UCX is done with the source, and
 * waits progress UCX, since over TCP a target applies puts only then.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dev_internal.h"

struct sim_dev_net {
  ncclWindow_t win;      /* the state's block, registered */
  sim_rma_win_info info; /* every rank's block: address and key */
};

ncclResult_t sim_dev_net_setup(struct ncclsimDevState *st) {
  if (!st->block_bytes) return ncclSuccess; /* nothing for peers to reach */
  struct sim_dev_net *n = sim_calloc(1, sizeof *n);
  if (!n) return ncclSystemError;
  ncclResult_t r = ncclCommWindowRegister(st->comm, st->block, st->block_bytes, &n->win, 0);
  if (r == ncclSuccess && !sim_rma_win_info_get(n->win, &n->info)) r = ncclSystemError;
  if (r != ncclSuccess) {
    if (n->win) ncclCommWindowDeregister(st->comm, n->win);
    sim_free(n);
    SIM_WARN(SIM_DEV, "ncclDevCommCreate: rank %d: cannot register the device communicator's memory for the other "
             "hosts: %s", st->rank, ncclGetErrorString(r));
    return r;
  }
  st->net = n;
  return ncclSuccess;
}

void sim_dev_net_free(struct ncclsimDevState *st) {
  struct sim_dev_net *n = st->net;
  if (!n) return;
  ncclCommWindowDeregister(st->comm, n->win);
  sim_rma_win_info_free(&n->info);
  sim_free(n);
  st->net = NULL;
}

/* A rank elsewhere's block at offset, for UCX. */
static void block_at(struct ncclsimDevState *st, int peer, size_t offset, uint64_t *addr, const sim_ucx_rkey **key) {
  struct sim_dev_net *n = st->net;
  if (!n || !n->info.key)
    sim_dev_fault(st, cudaErrorNotSupported, "rank %d on another simulated host has no device-communicator memory "
                  "registered (its resource buffers and signals are empty)", peer);
  *addr = (uint64_t)(uintptr_t)n->info.ptr[peer] + offset;
  *key = &n->info.key[peer];
}

void sim_dev_net_res_at(struct ncclsimDevState *st, int peer, size_t offset, uint64_t *addr, const sim_ucx_rkey **key) {
  block_at(st, peer, offset, addr, key);
}

/* Reports a failure: a kernel's fault in a kernel thread; the proxy's is
 * a WARN (its kernel sees the operation never land, at its wait). */
static void failed(struct ncclsimDevState *st, const ncclsimGinOp *op, const char *what, const sim_ucx_op *u) {
  if (__ncclsim_self)
    sim_dev_fault(st, cudaErrorLaunchFailure, "GIN to rank %d on another simulated host: %s (UCX: %s)", op->peer, what,
                  u ? sim_ucx_status_text(u) : "refused");
  SIM_WARN(SIM_DEV, "rank %d: GIN proxy: an operation to rank %d on another simulated host: %s (UCX: %s)", st->rank,
           op->peer, what, u ? sim_ucx_status_text(u) : "refused");
}

/* Until UCX is done with ops[0..n), letting a kernel's other threads run. */
static void complete(struct ncclsimDevState *st, const ncclsimGinOp *op, sim_ucx_op *ops, int n) {
  const sim_net_map *m = st->clique->net;
  uint64_t t0 = sim_now_ns();
  for (int i = 0; i < n; i++) {
    ncclResult_t r;
    while ((r = sim_ucx_test(&ops[i], NULL)) == ncclInProgress) {
      const char *gone = sim_ucx_peer_failed(m, op->peer);
      if (gone || sim_now_ns() - t0 > sim_timeout_ns()) {
        sim_ucx_cancel(&ops[i]);
        failed(st, op, gone ? gone : "UCX did not complete it within NCCLSIM_TIMEOUT", NULL);
        return;
      }
      if (__ncclsim_self) __ncclsim_yield("UCX to complete a GIN operation to another host");
    }
    if (r != ncclSuccess) {
      failed(st, op, "UCX failed it", &ops[i]);
      return;
    }
  }
}

void sim_dev_net_get(struct ncclsimDevState *st, const ncclsimGinOp *op, void *dst, uint64_t addr,
                     const sim_ucx_rkey *key) {
  sim_ucx_op u;
  memset(&u, 0, sizeof u);
  if (!op->bytes) return;
  if (sim_ucx_get(st->clique->net, op->peer, dst, op->bytes, key, addr - key->addr, &u) != ncclSuccess) {
    failed(st, op, "a get", NULL);
    return;
  }
  complete(st, op, &u, 1);
}

void sim_dev_net_execute(struct ncclsimDevState *st, const ncclsimGinOp *op, const void *src, size_t bytes,
                         uint64_t dst_addr, const sim_ucx_rkey *dst_key) {
  const sim_net_map *m = st->clique->net;
  sim_ucx_op ops[2];
  memset(ops, 0, sizeof ops);
  int n = 0;
  if (bytes) {
    if (sim_ucx_put(m, op->peer, src, bytes, dst_key, dst_addr - dst_key->addr, &ops[n]) != ncclSuccess) {
      failed(st, op, "a put", NULL);
      return;
    }
    n++;
  }
  if (op->sigType != NCCLSIM_GIN_SIG_NONE) {
    uint64_t addr;
    const sim_ucx_rkey *key;
    if (op->sigType == NCCLSIM_GIN_SIG_INDEXED)
      block_at(st, op->peer, st->sig_off + ((size_t)op->context * (size_t)st->nsig + op->signal) * sizeof(uint64_t),
               &addr, &key);
    else
      sim_dev_win_at(sim_dev_win_of(op->sigWin, "a GIN VA signal"), op->peer, op->sigOff, 8, "a GIN VA signal", &addr,
                     &key);
    /* Fenced: the put (and, strong, every earlier one) lands first. */
    if (sim_ucx_add_value(m, op->peer, key, addr - key->addr, op->sigArg, true, &ops[n]) != ncclSuccess) {
      failed(st, op, "a signal", NULL);
      return;
    }
    n++;
  }
  complete(st, op, ops, n);
}

void sim_dev_net_progress(struct ncclsimDevState *st) {
  (void)st;
  sim_ucx_progress();
}
