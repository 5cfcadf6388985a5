/*
 * sim/dev/gin.c — GIN from kernels: ncclsimDevGinIssue and the signals,
 * shadows and counters (nccl_device/impl/ncclsim__abi.h).
 *
 * An operation is checked where the kernel issues it (every check names
 * the window, peer, offset, signal or counter), then carried out as the
 * device communicator's GIN type says: GDAKI and GPI (NCCL's GPU-driven
 * types) in the issuing CUDA thread itself, at once; PROXY by the rank's
 * proxy thread (gin_proxy.c), which takes each context's operations in
 * the order they were issued. Either way a context's operations to a peer
 * land in issue order, so every signal is strong (a weak one may be).
 *
 * Carrying one out (sim_dev_gin_execute): the bytes (a put, a value, a
 * get) go through memory on one host and through UCX to a rank on another
 * (gin_net.c); then the remote action adds to the peer's signal, by index
 * (in the peer's device-communicator state, per context) or at an address
 * of its window (a VA signal), with a release, so that a wait that sees
 * it sees the bytes; then the local action bumps the counter, the source
 * having been consumed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dev_internal.h"
#include "../transport.h"

static const char *type_name(int t) {
  return t == NCCL_GIN_TYPE_PROXY ? "PROXY" : t == NCCL_GIN_TYPE_GDAKI ? "GDAKI" : t == NCCL_GIN_TYPE_GPI ? "GPI" : "none";
}

const char *sim_dev_gin_op_name(int kind) {
  switch (kind) {
  case NCCLSIM_GIN_PUT: return "ncclGin::put";
  case NCCLSIM_GIN_PUT_VALUE: return "ncclGin::putValue";
  case NCCLSIM_GIN_SIGNAL: return "ncclGin::signal";
  case NCCLSIM_GIN_GET: return "ncclGin::get";
  default: return "a GIN operation";
  }
}

/* The rank's GIN state, checked: GIN enabled, context in range. */
static struct ncclsimDevState *gin_self(const struct ncclDevComm *c, int ctx, const char *op) {
  struct ncclsimDevState *st = sim_dev_self(c, op);
  if (st->gin_type == NCCL_GIN_TYPE_NONE)
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: the device communicator has no GIN (its requirements set no ginConnectionType)", op);
  if (ctx < 0 || ctx >= st->nctx)
    sim_dev_fault(st, cudaErrorInvalidValue, "%s: GIN context %d, but the device communicator has %d (ginContextCount)",
                  op, ctx, st->nctx);
  return st;
}

/* A rank's index in its LSA team, which names its rail. */
static int rail_of(const struct ncclsimDevState *st, int r) {
  const sim_net_map *m = st->clique->net;
  return m ? m->host_rank[r] : r % st->clique->ranks_per_node;
}

static void check_signal(struct ncclsimDevState *st, const ncclsimGinOp *op, const char *name) {
  if (op->sigType == NCCLSIM_GIN_SIG_INDEXED && op->signal >= (uint32_t)st->nsig)
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: GIN signal %u, but the device communicator has %d (its requirements' ginSignalCount, its "
                  "barriers' and its resources')",
                  name, op->signal, st->nsig);
  if (op->sigType != NCCLSIM_GIN_SIG_NONE && op->strong && !st->strong_ok)
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: a strong signal, but the device communicator was made with ginStrongSignalsRequired false "
                  "(undefined behaviour on NCCL)",
                  name);
  if (op->sigType == NCCLSIM_GIN_SIG_VA && !st->va_ok)
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: a VA signal, but the device communicator was made with ginVaSignalsRequired false (undefined "
                  "behaviour on NCCL)",
                  name);
  if (op->sigType == NCCLSIM_GIN_SIG_VA) {
    sim_dev_win *v = sim_dev_win_of(op->sigWin, name);
    sim_dev_win_at(v, op->peer, op->sigOff, 8, name, NULL, NULL);
    if (op->sigOff % 8)
      sim_dev_fault(st, cudaErrorIllegalAddress, "%s: VA signal at offset %zu of window %p is not 8-byte aligned",
                    name, op->sigOff, (void *)op->sigWin);
  }
}

/* Everything an operation names, checked in the issuing thread (where a
 * fault can end the kernel), and the peer's state made sure of. */
static void check(struct ncclsimDevState *st, const ncclsimGinOp *op) {
  const char *name = sim_dev_gin_op_name(op->kind);
  if (op->peer < 0 || op->peer >= st->nranks)
    sim_dev_fault(st, cudaErrorInvalidValue, "%s: peer %d is not a rank of the communicator (%d ranks)", name,
                  op->peer, st->nranks);
  if (st->railed && rail_of(st, op->peer) != rail_of(st, st->rank))
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: rank %d is not on rank %d's rail (LSA index %d, not %d): a RAIL GIN connection reaches the "
                  "rail only (ncclTeamRail)",
                  name, op->peer, st->rank, rail_of(st, op->peer), rail_of(st, st->rank));
  if (op->kind == NCCLSIM_GIN_PUT || op->kind == NCCLSIM_GIN_PUT_VALUE) {
    size_t bytes = op->kind == NCCLSIM_GIN_PUT ? op->bytes : (size_t)op->valueBytes;
    sim_dev_win_at(sim_dev_win_of(op->dstWin, name), op->peer, op->dstOff, bytes, name, NULL, NULL);
    if (op->kind == NCCLSIM_GIN_PUT)
      sim_dev_win_at(sim_dev_win_of(op->srcWin, name), st->rank, op->srcOff, op->bytes, name, NULL, NULL);
  } else if (op->kind == NCCLSIM_GIN_GET) {
    sim_dev_win_at(sim_dev_win_of(op->srcWin, name), op->peer, op->srcOff, op->bytes, name, NULL, NULL);
    sim_dev_win_at(sim_dev_win_of(op->dstWin, name), st->rank, op->dstOff, op->bytes, name, NULL, NULL);
  }
  check_signal(st, op, name);
  if (op->hasCounter && op->counter >= (uint32_t)st->nctr)
    sim_dev_fault(st, cudaErrorInvalidValue,
                  "%s: GIN counter %u, but the device communicator has %d (its requirements' ginCounterCount and "
                  "its resources')",
                  name, op->counter, st->nctr);
  if (!sim_net_remote(st->clique->net, op->peer)) sim_dev_peer(st, op->peer, name);
}

/* The remote action on a rank of this host. */
static void signal_here(struct ncclsimDevState *st, const ncclsimGinOp *op) {
  uint64_t *p;
  if (op->sigType == NCCLSIM_GIN_SIG_INDEXED) {
    struct ncclsimDevState *peer = sim_dev_peer(st, op->peer, "a GIN signal");
    p = (uint64_t *)st->clique->tp->map_peer(st->clique, op->peer,
                                             &peer->signals[(size_t)op->context * (size_t)peer->nsig + op->signal]);
  } else {
    p = (uint64_t *)sim_dev_win_at(sim_dev_win_of(op->sigWin, "a GIN VA signal"), op->peer, op->sigOff, 8,
                                   "a GIN VA signal", NULL, NULL);
  }
  __atomic_fetch_add(p, op->sigArg, __ATOMIC_RELEASE);
}

void sim_dev_gin_execute(struct ncclsimDevState *st, const ncclsimGinOp *op) {
  const char *name = sim_dev_gin_op_name(op->kind);
  sim_clique *c = st->clique;
  bool remote = sim_net_remote(c->net, op->peer);
  uint64_t addr = 0;
  const sim_ucx_rkey *key = NULL;
  if (op->kind == NCCLSIM_GIN_PUT || op->kind == NCCLSIM_GIN_PUT_VALUE) {
    const void *src = &op->value;
    size_t bytes = (size_t)op->valueBytes;
    if (op->kind == NCCLSIM_GIN_PUT) {
      src = sim_dev_win_at(sim_dev_win_of(op->srcWin, name), st->rank, op->srcOff, op->bytes, name, NULL, NULL);
      bytes = op->bytes;
    }
    char *dst = sim_dev_win_at(sim_dev_win_of(op->dstWin, name), op->peer, op->dstOff, bytes, name, &addr, &key);
    if (remote) {
      sim_dev_net_execute(st, op, src, bytes, addr, key);
    } else {
      if (bytes) c->tp->copy(dst, src, bytes);
      if (op->sigType != NCCLSIM_GIN_SIG_NONE) signal_here(st, op);
    }
  } else if (op->kind == NCCLSIM_GIN_GET) {
    const char *src = sim_dev_win_at(sim_dev_win_of(op->srcWin, name), op->peer, op->srcOff, op->bytes, name, &addr, &key);
    char *dst = sim_dev_win_at(sim_dev_win_of(op->dstWin, name), st->rank, op->dstOff, op->bytes, name, NULL, NULL);
    if (remote) sim_dev_net_get(st, op, dst, addr, key);
    else if (op->bytes) c->tp->copy(dst, src, op->bytes);
    __atomic_thread_fence(__ATOMIC_RELEASE);
  } else if (remote) {
    sim_dev_net_execute(st, op, NULL, 0, 0, NULL);
  } else {
    signal_here(st, op);
  }
  if (op->hasCounter)
    __atomic_fetch_add(&st->counters[(size_t)op->context * (size_t)st->nctr + op->counter], 1, __ATOMIC_RELEASE);
}

/* op on the timeline: issued (PROXY) or carried out (GDAKI, GPI) from t0. */
static void trace_op(struct ncclsimDevState *st, const ncclsimGinOp *op, uint64_t t0) {
  char sig[64] = "";
  if (op->sigType == NCCLSIM_GIN_SIG_INDEXED)
    snprintf(sig, sizeof sig, ", signal %u %s", op->signal, op->sigAdd ? "add" : "inc");
  else if (op->sigType == NCCLSIM_GIN_SIG_VA)
    snprintf(sig, sizeof sig, ", VA signal at offset %zu %s", op->sigOff, op->sigAdd ? "add" : "inc");
  size_t bytes = op->kind == NCCLSIM_GIN_PUT || op->kind == NCCLSIM_GIN_GET ? op->bytes
                 : op->kind == NCCLSIM_GIN_PUT_VALUE                        ? (size_t)op->valueBytes
                                                                            : 0;
  sim_dev_trace(st, sim_dev_gin_op_name(op->kind), t0, op->peer, bytes, "GIN context %d%s%s, %s", op->context, sig,
                op->hasCounter ? ", counter" : "",
                st->gin_type == NCCL_GIN_TYPE_PROXY ? "queued for the PROXY thread" : type_name(st->gin_type));
}

SIM_EXPORT void ncclsimDevGinIssue(const struct ncclDevComm *c, const ncclsimGinOp *op) {
  struct ncclsimDevState *st = gin_self(c, op->context, sim_dev_gin_op_name(op->kind));
  check(st, op);
  sim_dev_activity *a = &st->act; /* for the reports of waits that cannot complete */
  atomic_store_explicit(&a->op_peer, op->peer, memory_order_relaxed);
  atomic_store_explicit(&a->op_sig_type, op->sigType, memory_order_relaxed);
  atomic_store_explicit(&a->op_signal, op->signal, memory_order_relaxed);
  atomic_store_explicit(&a->op_at, __ncclsim_now_ns(), memory_order_relaxed);
  atomic_store_explicit(&a->op_kind, op->kind, memory_order_release);
  uint64_t t0 = __atomic_load_n(&ncclsimDevTracing, __ATOMIC_RELAXED) ? sim_ticks() : 0;
  sim_dev_ctx *x = &st->ctx[op->context];
  if (st->gin_type == NCCL_GIN_TYPE_PROXY) {
    sim_dev_proxy_enqueue(st, op);
  } else {
    atomic_fetch_add_explicit(&x->issued, 1, memory_order_relaxed);
    sim_dev_gin_execute(st, op);
    atomic_fetch_add_explicit(&x->done, 1, memory_order_release);
  }
  if (t0) trace_op(st, op, t0);
}

typedef struct {
  sim_dev_ctx *x;
  uint64_t target;
} flush_arg;

static bool flushed(void *p) {
  flush_arg *a = p;
  return atomic_load_explicit(&a->x->done, memory_order_acquire) >= a->target;
}

SIM_EXPORT void ncclsimDevGinFlush(const struct ncclDevComm *c, int context, int peer) {
  struct ncclsimDevState *st = gin_self(c, context, "ncclGin::flush");
  if (peer >= st->nranks)
    sim_dev_fault(st, cudaErrorInvalidValue, "ncclGin::wait (flushAsync): peer %d is not a rank of the communicator (%d ranks)",
                  peer, st->nranks);
  /* Operations are carried out in order per context: waiting for all
   * issued so far covers those to `peer`. */
  flush_arg a = {&st->ctx[context], atomic_load_explicit(&st->ctx[context].issued, memory_order_acquire)};
  uint64_t t0 = __atomic_load_n(&ncclsimDevTracing, __ATOMIC_RELAXED) ? sim_ticks() : 0;
  char what[96];
  snprintf(what, sizeof what, "GIN context %d's operations to be carried out (%s proxy, flush)", context,
           type_name(st->gin_type));
  sim_dev_poll(st, flushed, &a, what);
  if (t0) sim_dev_trace(st, "ncclGin::flush", t0, peer, 0, "GIN context %d", context);
}

static uint64_t *word(const struct ncclDevComm *c, int context, uint32_t id, bool counter, bool shadow,
                      const char *op) {
  struct ncclsimDevState *st = gin_self(c, context, op);
  int n = counter ? st->nctr : st->nsig;
  if (id >= (uint32_t)n)
    sim_dev_fault(st, cudaErrorInvalidValue, "%s: GIN %s %u, but the device communicator has %d", op,
                  counter ? "counter" : "signal", id, n);
  size_t i = (size_t)context * (size_t)n + id;
  return counter ? &st->counters[i] : shadow ? &st->shadows[i] : &st->signals[i];
}

SIM_EXPORT uint64_t *ncclsimDevGinSignal(const struct ncclDevComm *c, int context, uint32_t signal) {
  return word(c, context, signal, false, false, "a GIN signal");
}
SIM_EXPORT uint64_t *ncclsimDevGinShadow(const struct ncclDevComm *c, int context, uint32_t signal) {
  return word(c, context, signal, false, true, "a GIN signal's shadow");
}
SIM_EXPORT uint64_t *ncclsimDevGinCounter(const struct ncclDevComm *c, int context, uint32_t counter) {
  return word(c, context, counter, true, false, "a GIN counter");
}

SIM_EXPORT uint64_t *ncclsimDevGinVaSignal(const struct ncclDevComm *c, ncclWindow_t w, size_t offset) {
  static const char op[] = "a GIN VA signal";
  struct ncclsimDevState *st = sim_dev_self(c, op);
  if (offset % 8)
    sim_dev_fault(st, cudaErrorIllegalAddress, "%s at offset %zu of window %p is not 8-byte aligned", op, offset,
                  (void *)w);
  return (uint64_t *)sim_dev_win_at(sim_dev_win_of(w, op), st->rank, offset, 8, op, NULL, NULL);
}

SIM_EXPORT void ncclsimDevGinResetSignal(const struct ncclDevComm *c, int context, uint32_t signal) {
  __atomic_store_n(word(c, context, signal, false, false, "ncclGin::resetSignal"), 0, __ATOMIC_RELAXED);
  *word(c, context, signal, false, true, "ncclGin::resetSignal") = 0;
}

SIM_EXPORT void ncclsimDevGinResetCounter(const struct ncclDevComm *c, int context, uint32_t counter) {
  __atomic_store_n(word(c, context, counter, true, false, "ncclGin::resetCounter"), 0, __ATOMIC_RELAXED);
}
