/*
 * sim/net/ucx.c — bytes between hosts, through UCX (ucp).
 *
 * One context and one worker per process, shared by its ranks and their
 * stream workers (UCS_THREAD_MODE_MULTI: UCX serialises them). An endpoint
 * to a peer process is made at its first use from the worker address the
 * bootstrap carried, with peer error handling, so that a send to a process
 * that died ends with an error instead of waiting for ever.
 *
 * UCX is loaded at the first use (dlopen of libucp.so.0), not linked: its
 * memory hooks are configured when it loads, and ncclsim turns them off
 * first (they would patch mmap and madvise under the sanitizers, and
 * ncclsim's memory needs no registration); a process that never reaches
 * another host never loads UCX at all.
 *
 * With NCCLSIM_HOST_ID set, processes of one machine play separate hosts:
 * unless the user says otherwise (UCX_TLS), UCX then moves their bytes
 * over TCP, as between machines, and never through shared memory.
 */
#define _GNU_SOURCE
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../sim.h"
#include "net_internal.h"

#if HAVE_UCX
#include <dlfcn.h>
#include <ucp/api/ucp.h>

#define UCX_FUNCS(X)                                                                                  \
  X(ucp_config_read) X(ucp_config_release) X(ucp_init_version) X(ucp_cleanup) X(ucp_get_version_string) \
  X(ucp_worker_create) X(ucp_worker_destroy) X(ucp_worker_get_address) X(ucp_worker_release_address)    \
  X(ucp_worker_get_efd) X(ucp_worker_arm) X(ucp_worker_progress) X(ucp_ep_create) X(ucp_ep_close_nbx)   \
  X(ucp_tag_send_nbx) X(ucp_tag_send_sync_nbx) X(ucp_tag_recv_nbx) X(ucp_request_check_status) X(ucp_request_free)              \
  X(ucp_request_cancel) X(ucs_status_string) X(ucp_mem_map) X(ucp_mem_unmap) X(ucp_rkey_pack)               \
  X(ucp_rkey_buffer_release) X(ucp_ep_rkey_unpack) X(ucp_rkey_destroy) X(ucp_put_nbx) X(ucp_atomic_op_nbx)  \
  X(ucp_worker_fence) X(ucp_worker_flush_nbx) X(ucp_get_nbx)
static struct {
#define UCX_FN(f) __typeof__(f) *f;
  UCX_FUNCS(UCX_FN)
#undef UCX_FN
} fn;

/* Loads UCX and finds every function; the reason in why if not. */
static bool ucx_load(char *why, size_t why_len) {
  /* UCX reads these when it loads; the user's own settings win. ncclsim's
   * memory is host memory: no memory hooks, memory-type cache or
   * registration cache. Simulated hosts talk over TCP, as machines do. */
  setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 0);
  setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
  setenv("UCX_MEMTYPE_CACHE", "n", 0);
  setenv("UCX_RCACHE_ENABLE", "n", 0);
  /* Over TCP, UCX 1.13 gives an endpoint with peer error handling (which
   * ncclsim needs, to notice a peer gone) no put-based rendezvous: TCP's
   * memory domain cannot invalidate registrations. Large messages then go
   * as active messages of at most the receive segment, and puts as copies
   * of at most the send segment, 64 KiB and 8 KiB by default: one system
   * call and one UCX header each. Segments of 512 KiB more than double
   * send/recv and put bandwidth between simulated hosts
   * (bench/hosts-vs-ucx.sh; docs/ncclsim.md, "Speed"). */
  setenv("UCX_TCP_RX_SEG_SIZE", "512K", 0);
  setenv("UCX_TCP_TX_SEG_SIZE", "512K", 0);
  if (sim_net_host_set()) setenv("UCX_TLS", "tcp,self", 0);
  void *h = dlopen("libucp.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(why, why_len, "cannot load UCX (libucp.so.0), which moves bytes between hosts: %s", dlerror());
    return false;
  }
#define UCX_SYM(f)                                                                        \
  if (!(*(void **)&fn.f = dlsym(h, #f))) {                                                \
    snprintf(why, why_len, "UCX (libucp.so.0) has no %s: a UCX older than ncclsim's", #f); \
    return false;                                                                         \
  }
  UCX_FUNCS(UCX_SYM)
#undef UCX_SYM
  return true;
}

static struct {
  pthread_mutex_t lock;
  bool ready;
  ucp_context_h ctx;
  ucp_worker_h worker;
  void *addr; /* the worker's address, copied out of UCX's (released) */
  size_t addr_len;
  /* One record per peer process, never moved (the error handler holds
   * it): failed is set when UCX gives the endpoint up (the peer died). */
  struct ep_rec { uint64_t group; int pid; ucp_ep_h ep; _Atomic int failed; } **eps;
  int neps, cap;
  int efd; /* the worker's event descriptor; -1: none */
  _Atomic uint64_t rma_ops; /* puts and adds issued since the last flush that ended */
} ux = {.lock = PTHREAD_MUTEX_INITIALIZER, .efd = -1};


/* UCX's progress: where it copies a put's data into this process's windows
 * and adds to its signals, for other hosts' ranks. UCX is not built with
 * ThreadSanitizer: TSan sees its copies (memcpy is intercepted in every
 * library) but not the atomics that order them before a signal, so a
 * kernel that read the data after its wait for the signal was reported as
 * racing with the copy. Under TSan, what UCX reads and writes in a progress
 * call is not recorded; the callbacks' atomics still order. */
static unsigned progress(void) {
#if SIM_TSAN
  sim_tsan_ignore_begin();
#endif
  unsigned n = fn.ucp_worker_progress(ux.worker);
#if SIM_TSAN
  sim_tsan_ignore_end();
#endif
  return n;
}

/* At exit, once no communicator across hosts is left: the endpoints, the
 * worker and the context go (a communicator still alive keeps them: its
 * stream workers may be inside UCX). */
static void teardown(void) {
  /* This process's puts and adds are applied before it goes, for a second
   * at most (sim_ucx_flush; communicators may still be alive). */
  if (ux.ready) sim_ucx_flush(sim_now_ns() + 1000000000ull);
  pthread_mutex_lock(&ux.lock);
  if (ux.ready && !(sim_net_up.comms_here && sim_net_up.comms_here())) {
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    for (int i = 0; i < ux.neps; i++) {
      void *r = fn.ucp_ep_close_nbx(ux.eps[i]->ep, &p);
      if (UCS_PTR_IS_PTR(r)) {
        while (fn.ucp_request_check_status(r) == UCS_INPROGRESS) progress();
        fn.ucp_request_free(r);
      }
    }
    for (int i = 0; i < ux.neps; i++) free(ux.eps[i]);
    free(ux.eps);
    ux.eps = NULL;
    ux.neps = ux.cap = 0;
    fn.ucp_worker_destroy(ux.worker);
    fn.ucp_cleanup(ux.ctx);
    ux.efd = -1;
    free(ux.addr);
    ux.addr = NULL;
    ux.ready = false;
  }
  pthread_mutex_unlock(&ux.lock);
}

/* A forked child has UCX's memory but not its threads or connections. */
static void atfork_child(void) {
  pthread_mutex_init(&ux.lock, NULL);
  ux.ready = false;
  ux.eps = NULL;
  ux.neps = ux.cap = 0;
  ux.efd = -1;
}

ncclResult_t sim_ucx_init(const void **addr, size_t *len, char *why, size_t why_len) {
  static bool hooked;
  pthread_mutex_lock(&ux.lock);
  if (!hooked) {
    hooked = true;
    atexit(teardown);
    pthread_atfork(NULL, NULL, atfork_child);
  }
  ucs_status_t st = UCS_OK;
  const char *step = NULL;
  static bool loaded;
  if (!loaded && !(loaded = ucx_load(why, why_len))) {
    pthread_mutex_unlock(&ux.lock);
    return ncclSystemError;
  }
  if (!ux.ready) {
    ucp_config_t *cfg = NULL;
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                      .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP | UCP_FEATURE_RMA | UCP_FEATURE_AMO64,
                      .mt_workers_shared = 1};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = UCS_THREAD_MODE_MULTI};
    if ((st = fn.ucp_config_read(NULL, NULL, &cfg)) != UCS_OK) step = "ucp_config_read";
    else if ((st = fn.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &p, cfg, &ux.ctx)) != UCS_OK) step = "ucp_init";
    if (cfg) fn.ucp_config_release(cfg);
    if (!step && (st = fn.ucp_worker_create(ux.ctx, &wp, &ux.worker)) != UCS_OK) step = "ucp_worker_create";
    ucp_address_t *a = NULL;
    if (!step && (st = fn.ucp_worker_get_address(ux.worker, &a, &ux.addr_len)) != UCS_OK)
      step = "ucp_worker_get_address";
    if (!step && !(ux.addr = malloc(ux.addr_len))) st = UCS_ERR_NO_MEMORY, step = "malloc";
    if (ux.addr) memcpy(ux.addr, a, ux.addr_len);
    if (!step && fn.ucp_worker_get_efd(ux.worker, &ux.efd) != UCS_OK) ux.efd = -1; /* then waits poll only */
    if (a) fn.ucp_worker_release_address(ux.worker, a);
    if (step) {
      if (ux.worker) fn.ucp_worker_destroy(ux.worker);
      if (ux.ctx) fn.ucp_cleanup(ux.ctx);
      ux.worker = NULL;
      ux.ctx = NULL;
    } else {
      ux.ready = true;
      SIM_INFO(SIM_INIT, "UCX %s: worker of pid %d ready, address of %zu bytes", fn.ucp_get_version_string(),
               (int)getpid(), ux.addr_len);
    }
  }
  pthread_mutex_unlock(&ux.lock);
  if (step) {
    snprintf(why, why_len, "UCX: %s failed: %s", step, fn.ucs_status_string(st));
    return ncclSystemError;
  }
  *addr = ux.addr;
  *len = ux.addr_len;
  return ncclSuccess;
}

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st) {
  (void)ep;
  struct ep_rec *e = arg;
  atomic_store(&e->failed, (int)st);
  SIM_INFO(SIM_P2P, "UCX: the endpoint to pid %d failed: %s", e->pid, fn.ucs_status_string(st));
}

static struct ep_rec *rec_find(uint64_t g, int pid) {
  for (int i = 0; i < ux.neps; i++)
    if (ux.eps[i]->group == g && ux.eps[i]->pid == pid) return ux.eps[i];
  return NULL;
}

/* The endpoint to peer's process, made at first use (*made: by this call;
 * may be NULL). */
static ucp_ep_h ep_make(const sim_net_map *m, int peer, bool *made) {
  uint64_t g = m->group[peer];
  int pid = m->pid[peer];
  ucp_ep_h ep = NULL;
  pthread_mutex_lock(&ux.lock);
  struct ep_rec *rec = rec_find(g, pid);
  if (rec) ep = rec->ep;
  if (!ep && ux.neps == ux.cap) {
    int cap = ux.cap ? 2 * ux.cap : 16;
    struct ep_rec **n = realloc(ux.eps, (size_t)cap * sizeof *n);
    if (n) ux.eps = n, ux.cap = cap;
  }
  if (!ep && ux.neps < ux.cap && (rec = calloc(1, sizeof *rec))) {
    ucp_ep_params_t ep_p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                          UCP_EP_PARAM_FIELD_ERR_HANDLER,
                            .address = (const ucp_address_t *)(m->addrs + m->addr_off[peer]),
                            .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                            .err_handler = {.cb = ep_failed, .arg = rec}};
    *rec = (struct ep_rec){g, pid, NULL, 0};
    ucs_status_t st = fn.ucp_ep_create(ux.worker, &ep_p, &ep);
    if (st == UCS_OK) {
      rec->ep = ep;
      ux.eps[ux.neps++] = rec;
      if (made) *made = true;
    } else {
      SIM_WARN(SIM_P2P, "UCX: cannot make an endpoint to rank %d (pid %d on %s): %s", peer, pid, m->host_name[peer],
               fn.ucs_status_string(st));
      free(rec);
      ep = NULL;
    }
  }
  pthread_mutex_unlock(&ux.lock);
  return ep;
}

static ucp_ep_h ep_of(const sim_net_map *m, int peer) { return ep_make(m, peer, NULL); }

/* Completions come as callbacks, from whichever thread progresses the
 * worker; every operation gets a request (no immediate completion), so that
 * one path reads its status and length. */
static void send_done(void *req, ucs_status_t st, void *arg) {
  (void)req;
  sim_ucx_op *op = arg;
  op->status = st;
  atomic_store_explicit(&op->done, 1, memory_order_release);
}

static void recv_done(void *req, ucs_status_t st, const ucp_tag_recv_info_t *info, void *arg) {
  (void)req;
  sim_ucx_op *op = arg;
  op->status = st;
  op->length = info ? info->length : 0;
  atomic_store_explicit(&op->done, 1, memory_order_release);
}

static ncclResult_t started(sim_ucx_op *op, ucs_status_ptr_t r, bool recv) {
  op->recv = recv;
  if (UCS_PTR_IS_ERR(r) || !r) {
    op->req = NULL;
    op->status = r ? UCS_PTR_STATUS(r) : UCS_ERR_NO_PROGRESS;
    atomic_store(&op->done, 1);
    if (op->rkey) fn.ucp_rkey_destroy(op->rkey);
    op->rkey = NULL;
    SIM_WARN(SIM_P2P, "UCX: %s refused: %s", recv ? "tagged receive" : "send, put or atomic add",
             fn.ucs_status_string(op->status));
    return ncclSystemError;
  }
  op->req = r;
  return ncclSuccess;
}

/* Resets op for a new operation to peer's process; its endpoint, or NULL
 * (op then ended as unreachable). */
static ucp_ep_h op_begin(sim_ucx_op *op, const sim_net_map *m, int peer) {
  atomic_store(&op->done, 0);
  op->cancelled = false;
  op->status = UCS_INPROGRESS;
  op->rkey = NULL;
  ucp_ep_h ep = ep_of(m, peer);
  if (!ep) {
    op->req = NULL;
    op->status = UCS_ERR_UNREACHABLE;
    atomic_store(&op->done, 1);
  }
  return ep;
}

ncclResult_t sim_ucx_send(const sim_net_map *m, int peer, uint64_t tag, const void *buf, size_t bytes, bool sync,
                          sim_ucx_op *op) {
  ucp_ep_h ep = op_begin(op, m, peer);
  if (!ep) return ncclSystemError;
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                           UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                           .cb.send = send_done,
                           .user_data = op};
  return started(op, (sync ? fn.ucp_tag_send_sync_nbx : fn.ucp_tag_send_nbx)(ep, buf, bytes, tag, &p), false);
}

ncclResult_t sim_ucx_recv(uint64_t tag, void *buf, size_t bytes, sim_ucx_op *op) {
  atomic_store(&op->done, 0);
  op->cancelled = false;
  op->status = UCS_INPROGRESS;
  op->length = 0;
  op->rkey = NULL;
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                           UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                           .cb.recv = recv_done,
                           .user_data = op};
  return started(op, fn.ucp_tag_recv_nbx(ux.worker, buf, bytes, tag, UINT64_MAX, &p), true);
}

ncclResult_t sim_ucx_mem_map(void *p, size_t bytes, void **memh, sim_ucx_rkey *rkey) {
  ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                             .address = p,
                             .length = bytes};
  ucp_mem_h h = NULL;
  void *buf = NULL;
  size_t len = 0;
  ucs_status_t st = fn.ucp_mem_map(ux.ctx, &mp, &h);
  if (st == UCS_OK) st = fn.ucp_rkey_pack(ux.ctx, h, &buf, &len);
  if (st == UCS_OK && len > sizeof rkey->bytes) st = UCS_ERR_EXCEEDS_LIMIT;
  if (st == UCS_OK) {
    rkey->addr = (uint64_t)(uintptr_t)p;
    rkey->len = (uint32_t)len;
    memcpy(rkey->bytes, buf, len);
  }
  if (buf) fn.ucp_rkey_buffer_release(buf);
  if (st != UCS_OK) {
    if (h) fn.ucp_mem_unmap(ux.ctx, h);
    SIM_WARN(SIM_RMA, "UCX: cannot map %zu bytes at %p for puts from other hosts (%s%s)", bytes, p,
             fn.ucs_status_string(st), len > sizeof rkey->bytes ? ": its remote key is too long for ncclsim" : "");
    return ncclSystemError;
  }
  *memh = h;
  return ncclSuccess;
}

void sim_ucx_mem_unmap(void *memh) {
  if (memh && ux.ready) fn.ucp_mem_unmap(ux.ctx, memh);
}

/* The remote key of `k` for op, unpacked on peer's endpoint; op owns it
 * until it ends (UCX needs it until then). */
static ucp_rkey_h rkey_of(sim_ucx_op *op, ucp_ep_h ep, const sim_ucx_rkey *k) {
  ucp_rkey_h rk = NULL;
  ucs_status_t st = fn.ucp_ep_rkey_unpack(ep, k->bytes, &rk);
  if (st == UCS_OK) return op->rkey = rk;
  op->req = NULL;
  op->status = st;
  atomic_store(&op->done, 1);
  SIM_WARN(SIM_RMA, "UCX: cannot unpack a remote key: %s", fn.ucs_status_string(st));
  return NULL;
}

ncclResult_t sim_ucx_put(const sim_net_map *m, int peer, const void *src, size_t bytes, const sim_ucx_rkey *k,
                         uint64_t offset, sim_ucx_op *op) {
  ucp_ep_h ep = op_begin(op, m, peer);
  ucp_rkey_h rk = ep ? rkey_of(op, ep, k) : NULL;
  if (!rk) return ncclSystemError;
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                           UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                           .cb.send = send_done,
                           .user_data = op};
  atomic_fetch_add(&ux.rma_ops, 1);
  return started(op, fn.ucp_put_nbx(ep, src, bytes, k->addr + offset, rk, &p), false);
}

ncclResult_t sim_ucx_get(const sim_net_map *m, int peer, void *dst, size_t bytes, const sim_ucx_rkey *k,
                         uint64_t offset, sim_ucx_op *op) {
  ucp_ep_h ep = op_begin(op, m, peer);
  ucp_rkey_h rk = ep ? rkey_of(op, ep, k) : NULL;
  if (!rk) return ncclSystemError;
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                           UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                           .cb.send = send_done,
                           .user_data = op};
  atomic_fetch_add(&ux.rma_ops, 1);
  return started(op, fn.ucp_get_nbx(ep, dst, bytes, k->addr + offset, rk, &p), false);
}

ncclResult_t sim_ucx_add(const sim_net_map *m, int peer, const sim_ucx_rkey *k, uint64_t offset, bool fence,
                         sim_ucx_op *op) {
  return sim_ucx_add_value(m, peer, k, offset, 1, fence, op);
}

ncclResult_t sim_ucx_add_value(const sim_net_map *m, int peer, const sim_ucx_rkey *k, uint64_t offset, uint64_t value,
                               bool fence, sim_ucx_op *op) {
  ucp_ep_h ep = op_begin(op, m, peer);
  ucp_rkey_h rk = ep ? rkey_of(op, ep, k) : NULL;
  if (!rk) return ncclSystemError;
  /* Whatever this worker put before lands before the add. */
  if (fence) fn.ucp_worker_fence(ux.worker);
  op->operand = value;
  atomic_fetch_add(&ux.rma_ops, 1);
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                                           UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                           .cb.send = send_done,
                           .user_data = op,
                           .datatype = ucp_dt_make_contig(sizeof op->operand)};
  return started(op, fn.ucp_atomic_op_nbx(ep, UCP_ATOMIC_OP_ADD, &op->operand, 1, k->addr + offset, rk, &p),
                 false);
}

bool sim_ucx_progress(void) { return ux.ready && progress() > 0; }

static void flush_done(void *req, ucs_status_t st, void *arg) {
  (void)req, (void)st;
  atomic_store_explicit((_Atomic int *)arg, 1, memory_order_release);
}

void sim_ucx_flush(uint64_t deadline_ns) {
  uint64_t issued = atomic_load(&ux.rma_ops);
  if (!ux.ready || !issued) return; /* nothing to flush: no wait for idle peers' wireup */
  _Atomic int done = 0;
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                           .cb.send = flush_done,
                           .user_data = (void *)&done};
  void *r = fn.ucp_worker_flush_nbx(ux.worker, &p);
  if (!UCS_PTR_IS_PTR(r)) return; /* done at once, or failed: nothing to wait for */
  while (!atomic_load_explicit(&done, memory_order_acquire) && sim_now_ns() < deadline_ns)
    if (!progress()) sim_ucx_sleep(1000);
  /* Past the deadline (a peer that never progresses), UCX finishes the
   * flush alone: once freed, a request's callback is not called. */
  if (atomic_load_explicit(&done, memory_order_acquire)) atomic_compare_exchange_strong(&ux.rma_ops, &issued, 0);
  fn.ucp_request_free(r);
}

static ncclResult_t ended(sim_ucx_op *op) {
  switch (op->status) {
  case UCS_OK: return ncclSuccess;
  case UCS_ERR_MESSAGE_TRUNCATED: return ncclInvalidUsage;
  case UCS_ERR_CANCELED: return ncclRemoteError;
  case UCS_ERR_ENDPOINT_TIMEOUT:
  case UCS_ERR_CONNECTION_RESET:
  case UCS_ERR_UNREACHABLE: return ncclRemoteError;
  default: return ncclSystemError;
  }
}

ncclResult_t sim_ucx_test(sim_ucx_op *op, bool *progressed) {
  if (!op->req) return ended(op);
  if (!atomic_load_explicit(&op->done, memory_order_acquire)) {
    unsigned n = progress();
    if (progressed) *progressed = n > 0;
    if (!atomic_load_explicit(&op->done, memory_order_acquire)) return ncclInProgress;
  }
  fn.ucp_request_free(op->req);
  op->req = NULL;
  if (op->rkey) fn.ucp_rkey_destroy(op->rkey);
  op->rkey = NULL;
  return ended(op);
}

/* A receive is cancelled and waited for (its buffer is the caller's). A
 * send is handed back to UCX, which goes on with it alone: once a request
 * is freed UCX calls no callback for it, so op may go. */
void sim_ucx_cancel(sim_ucx_op *op) {
  if (!op->req) return;
  if (op->recv) {
    fn.ucp_request_cancel(ux.worker, op->req);
    while (!atomic_load_explicit(&op->done, memory_order_acquire)) progress();
  }
  fn.ucp_request_free(op->req);
  op->req = NULL;
  op->status = UCS_ERR_CANCELED;
  op->cancelled = true;
  op->rkey = NULL; /* UCX may still use it for a freed put or add: left to the process's end */
}

const char *sim_ucx_status_text(const sim_ucx_op *op) { return fn.ucs_status_string((ucs_status_t)op->status); }

/* The tag of the message that says an endpoint is wired up: the one tag
 * with bit 63 clear whose sender and receiver are the same rank, which a
 * send between ranks (p2p/p2p_net.c) never is. */
#define WIRED_TAG ((1ull << 63) - 1)

void sim_ucx_connect(const sim_net_map *m, uint64_t deadline_ns) {
  /* One rank of each process to which this call made the endpoint. */
  int *to = sim_calloc((size_t)m->nranks, sizeof *to), n = 0;
  for (int r = 0; to && r < m->nranks; r++) {
    bool made = false;
    if (m->host[r] != m->my_host && ep_make(m, r, &made) && made) to[n++] = r;
  }
  /* UCX 1.13 can abort (assertions in tcp_iface.c and wireup_ep.c) when a
   * peer dies while the wireup of its endpoint is still in flight. So the
   * two processes of each new endpoint exchange a message through it, and
   * a synchronous one: a send ends once the peer has received it, so that
   * neither leaves here (to stop progressing UCX, or to exit) while the
   * other still needs it. Every process makes the endpoints to the same
   * processes in the init that first joins them, so each expects one
   * message from each of its new peers; the messages are counted, not told
   * apart (another thread's init may take this one's). A peer that dies
   * later fails an endpoint that is connected, which UCX handles. */
  sim_ucx_op *ops = n ? sim_calloc(2 * (size_t)n, sizeof *ops) : NULL;
  unsigned char *in = n ? sim_calloc((size_t)n, 1) : NULL;
  static const unsigned char one = 1;
  int nops = 0;
  for (int i = 0; ops && in && i < n; i++)
    if (sim_ucx_recv(WIRED_TAG, &in[i], 1, &ops[nops]) == ncclSuccess) nops++;
  for (int i = 0; ops && in && i < n; i++)
    if (sim_ucx_send(m, to[i], WIRED_TAG, &one, 1, true, &ops[nops]) == ncclSuccess) nops++;
  for (int left = nops; left && sim_now_ns() < deadline_ns;) {
    bool moved = false, failed = false;
    left = 0;
    for (int i = 0; i < nops; i++) {
      bool p = false;
      if (sim_ucx_test(&ops[i], &p) == ncclInProgress) left++;
      moved |= p;
    }
    for (int i = 0; i < n && !failed; i++) failed = sim_ucx_peer_failed(m, to[i]) != NULL;
    if (failed) break; /* the wait across hosts that follows reports it */
    if (left && !moved) sim_ucx_sleep(1000);
  }
  for (int i = 0; i < nops; i++) sim_ucx_cancel(&ops[i]); /* those not ended */
  sim_free(ops);
  sim_free(in);
  sim_free(to);
}

const char *sim_ucx_peer_failed(const sim_net_map *m, int peer) {
  pthread_mutex_lock(&ux.lock);
  struct ep_rec *rec = rec_find(m->group[peer], m->pid[peer]);
  int st = rec ? atomic_load(&rec->failed) : 0;
  pthread_mutex_unlock(&ux.lock);
  return st ? fn.ucs_status_string((ucs_status_t)st) : NULL;
}

void sim_ucx_sleep(unsigned max_us) {
  /* Armed, the worker's descriptor wakes us at the next event; BUSY: there
   * is work now. Several waiting threads may arm it: a spurious wake only
   * costs a progress call. */
  if (ux.efd < 0 || fn.ucp_worker_arm(ux.worker) != UCS_OK) return;
  struct pollfd p = {ux.efd, POLLIN, 0};
  struct timespec ts = {(time_t)(max_us / 1000000u), (long)(max_us % 1000000u) * 1000};
  (void)ppoll(&p, 1, &ts, NULL);
}

#else /* !HAVE_UCX */


ncclResult_t sim_ucx_init(const void **addr, size_t *len, char *why, size_t why_len) {
  (void)addr, (void)len;
  snprintf(why, why_len, "ncclsim was built without UCX, which moves bytes between hosts (configure found no "
                         "ucx.pc; Debian: apt-get install libucx-dev, then configure again)");
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_send(const sim_net_map *m, int peer, uint64_t tag, const void *buf, size_t bytes, bool sync,
                          sim_ucx_op *op) {
  (void)m, (void)peer, (void)tag, (void)buf, (void)bytes, (void)sync, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_recv(uint64_t tag, void *buf, size_t bytes, sim_ucx_op *op) {
  (void)tag, (void)buf, (void)bytes, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_test(sim_ucx_op *op, bool *progressed) { (void)op, (void)progressed; return ncclInvalidUsage; }
void sim_ucx_sleep(unsigned max_us) { (void)max_us; }
void sim_ucx_cancel(sim_ucx_op *op) { (void)op; }
const char *sim_ucx_status_text(const sim_ucx_op *op) { (void)op; return "no UCX"; }
void sim_ucx_connect(const sim_net_map *m, uint64_t deadline_ns) { (void)m, (void)deadline_ns; }
ncclResult_t sim_ucx_mem_map(void *p, size_t bytes, void **memh, sim_ucx_rkey *rkey) {
  (void)p, (void)bytes, (void)rkey;
  *memh = NULL;
  return ncclInvalidUsage;
}
void sim_ucx_mem_unmap(void *memh) { (void)memh; }
ncclResult_t sim_ucx_put(const sim_net_map *m, int peer, const void *src, size_t bytes, const sim_ucx_rkey *k,
                         uint64_t offset, sim_ucx_op *op) {
  (void)m, (void)peer, (void)src, (void)bytes, (void)k, (void)offset, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_add(const sim_net_map *m, int peer, const sim_ucx_rkey *k, uint64_t offset, bool fence,
                         sim_ucx_op *op) {
  (void)m, (void)peer, (void)k, (void)offset, (void)fence, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_add_value(const sim_net_map *m, int peer, const sim_ucx_rkey *k, uint64_t offset, uint64_t value,
                               bool fence, sim_ucx_op *op) {
  (void)m, (void)peer, (void)k, (void)offset, (void)value, (void)fence, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_get(const sim_net_map *m, int peer, void *dst, size_t bytes, const sim_ucx_rkey *k,
                         uint64_t offset, sim_ucx_op *op) {
  (void)m, (void)peer, (void)dst, (void)bytes, (void)k, (void)offset, (void)op;
  return ncclInvalidUsage;
}
bool sim_ucx_progress(void) { return false; }
void sim_ucx_flush(uint64_t deadline_ns) { (void)deadline_ns; }
const char *sim_ucx_peer_failed(const sim_net_map *m, int peer) { (void)m, (void)peer; return NULL; }

#endif
