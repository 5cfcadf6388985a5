/*
 * sim/net/ucx.c — bytes between hosts, through UCX (ucp).
 *
 * One context and one worker per process, shared by its ranks and their
 * stream workers (UCS_THREAD_MODE_MULTI: UCX serialises them). An endpoint
 * to a peer process is made at its first use from the worker address the
 * bootstrap carried, with peer error handling, so that a send to a process
 * that died ends with an error instead of waiting for ever.
 *
 * With NCCLSIM_HOST_ID set, processes of one machine play separate hosts:
 * unless the user says otherwise (UCX_TLS), UCX then moves their bytes
 * over TCP, as between machines, and never through shared memory.
 */
#define _GNU_SOURCE
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim.h"
#include "net.h"

#if HAVE_UCX
#include <ucp/api/ucp.h>

static struct {
  pthread_mutex_t lock;
  bool ready;
  ucp_context_h ctx;
  ucp_worker_h worker;
  void *addr; /* the worker's address, copied out of UCX's (released) */
  size_t addr_len;
  struct ep_rec { uint64_t group; int pid; ucp_ep_h ep; } *eps;
  int neps, cap;
} ux = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Simulated hosts talk over TCP unless the user chose (UCX_TLS is read at
 * ucp_config_read; UCX's global options are read when it loads, too early
 * for anything set here). */
static void defaults(void) {
  if (strcmp(sim_param_text(SIM_P_HOST_ID), "auto") != 0) setenv("UCX_TLS", "tcp,self", 0);
}

/* At exit, once no communicator across hosts is left: the endpoints, the
 * worker and the context go (a communicator still alive keeps them: its
 * stream workers may be inside UCX). */
static void teardown(void) {
  pthread_mutex_lock(&ux.lock);
  if (ux.ready && !sim_net_comms_here()) {
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    for (int i = 0; i < ux.neps; i++) {
      void *r = ucp_ep_close_nbx(ux.eps[i].ep, &p);
      if (UCS_PTR_IS_PTR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(ux.worker);
        ucp_request_free(r);
      }
    }
    free(ux.eps);
    ux.eps = NULL;
    ux.neps = ux.cap = 0;
    ucp_worker_destroy(ux.worker);
    ucp_cleanup(ux.ctx);
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
  if (!ux.ready) {
    defaults();
    ucp_config_t *cfg = NULL;
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                      .features = UCP_FEATURE_TAG,
                      .mt_workers_shared = 1};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = UCS_THREAD_MODE_MULTI};
    if ((st = ucp_config_read(NULL, NULL, &cfg)) != UCS_OK) step = "ucp_config_read";
    else if ((st = ucp_init(&p, cfg, &ux.ctx)) != UCS_OK) step = "ucp_init";
    if (cfg) ucp_config_release(cfg);
    if (!step && (st = ucp_worker_create(ux.ctx, &wp, &ux.worker)) != UCS_OK) step = "ucp_worker_create";
    ucp_address_t *a = NULL;
    if (!step && (st = ucp_worker_get_address(ux.worker, &a, &ux.addr_len)) != UCS_OK)
      step = "ucp_worker_get_address";
    if (!step && !(ux.addr = malloc(ux.addr_len))) st = UCS_ERR_NO_MEMORY, step = "malloc";
    if (ux.addr) memcpy(ux.addr, a, ux.addr_len);
    if (a) ucp_worker_release_address(ux.worker, a);
    if (step) {
      if (ux.worker) ucp_worker_destroy(ux.worker);
      if (ux.ctx) ucp_cleanup(ux.ctx);
      ux.worker = NULL;
      ux.ctx = NULL;
    } else {
      ux.ready = true;
      SIM_INFO(SIM_INIT, "UCX %s: worker of pid %d ready, address of %zu bytes", ucp_get_version_string(),
               (int)getpid(), ux.addr_len);
    }
  }
  pthread_mutex_unlock(&ux.lock);
  if (step) {
    snprintf(why, why_len, "UCX: %s failed: %s", step, ucs_status_string(st));
    return ncclSystemError;
  }
  *addr = ux.addr;
  *len = ux.addr_len;
  return ncclSuccess;
}

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st) {
  (void)ep;
  struct ep_rec *e = arg;
  SIM_INFO(SIM_P2P, "UCX: the endpoint to pid %d failed: %s", e ? e->pid : -1, ucs_status_string(st));
}

/* The endpoint to peer's process, made at first use. */
static ucp_ep_h ep_of(const sim_net_map *m, int peer) {
  uint64_t g = m->group[peer];
  int pid = m->pid[peer];
  ucp_ep_h ep = NULL;
  pthread_mutex_lock(&ux.lock);
  for (int i = 0; i < ux.neps && !ep; i++)
    if (ux.eps[i].group == g && ux.eps[i].pid == pid) ep = ux.eps[i].ep;
  if (!ep && ux.neps == ux.cap) {
    int cap = ux.cap ? 2 * ux.cap : 16;
    struct ep_rec *n = realloc(ux.eps, (size_t)cap * sizeof *n);
    if (n) ux.eps = n, ux.cap = cap;
  }
  if (!ep && ux.neps < ux.cap) {
    /* The error handler's argument is the pid alone: records move as the
     * array grows. */
    ucp_ep_params_t ep_p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                          UCP_EP_PARAM_FIELD_ERR_HANDLER,
                            .address = (const ucp_address_t *)(m->addrs + m->addr_off[peer]),
                            .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                            .err_handler = {.cb = ep_failed, .arg = NULL}};
    ucs_status_t st = ucp_ep_create(ux.worker, &ep_p, &ep);
    if (st == UCS_OK) ux.eps[ux.neps++] = (struct ep_rec){g, pid, ep};
    else {
      SIM_WARN(SIM_P2P, "UCX: cannot make an endpoint to rank %d (pid %d on %s): %s", peer, pid, m->host_name[peer],
               ucs_status_string(st));
      ep = NULL;
    }
  }
  pthread_mutex_unlock(&ux.lock);
  return ep;
}

static ncclResult_t started(sim_ucx_op *op, ucs_status_ptr_t r, bool recv) {
  op->recv = recv;
  if (UCS_PTR_IS_ERR(r)) {
    op->req = NULL;
    op->status = UCS_PTR_STATUS(r);
    SIM_WARN(SIM_P2P, "UCX: tagged %s refused: %s", recv ? "receive" : "send", ucs_status_string(op->status));
    return ncclSystemError;
  }
  op->req = r;
  op->status = r ? UCS_INPROGRESS : UCS_OK;
  return ncclSuccess;
}

ncclResult_t sim_ucx_send(const sim_net_map *m, int peer, uint64_t tag, const void *buf, size_t bytes,
                          sim_ucx_op *op) {
  ucp_ep_h ep = ep_of(m, peer);
  if (!ep) {
    op->req = NULL;
    op->status = UCS_ERR_UNREACHABLE;
    return ncclSystemError;
  }
  ucp_request_param_t p = {.op_attr_mask = 0};
  return started(op, ucp_tag_send_nbx(ep, buf, bytes, tag, &p), false);
}

ncclResult_t sim_ucx_recv(uint64_t tag, void *buf, size_t bytes, sim_ucx_op *op) {
  ucp_tag_recv_info_t info = {0};
  ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO, .recv_info.tag_info = &info};
  ncclResult_t res = started(op, ucp_tag_recv_nbx(ux.worker, buf, bytes, tag, UINT64_MAX, &p), true);
  op->length = info.length; /* if it ended at once */
  return res;
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

ncclResult_t sim_ucx_test(sim_ucx_op *op) {
  if (!op->req) return ended(op);
  ucp_worker_progress(ux.worker);
  ucs_status_t st;
  if (op->recv) {
    ucp_tag_recv_info_t info;
    st = ucp_tag_recv_request_test(op->req, &info);
    if (st != UCS_INPROGRESS) op->length = info.length;
  } else {
    st = ucp_request_check_status(op->req);
  }
  if (st == UCS_INPROGRESS) return ncclInProgress;
  ucp_request_free(op->req);
  op->req = NULL;
  op->status = st;
  return ended(op);
}

void sim_ucx_cancel(sim_ucx_op *op) {
  if (!op->req) return;
  if (op->recv) {
    ucp_request_cancel(ux.worker, op->req);
    while (ucp_request_check_status(op->req) == UCS_INPROGRESS) ucp_worker_progress(ux.worker);
  }
  ucp_request_free(op->req);
  op->req = NULL;
  op->status = UCS_ERR_CANCELED;
}

const char *sim_ucx_status_text(const sim_ucx_op *op) { return ucs_status_string((ucs_status_t)op->status); }

#else /* !HAVE_UCX */


ncclResult_t sim_ucx_init(const void **addr, size_t *len, char *why, size_t why_len) {
  (void)addr, (void)len;
  snprintf(why, why_len, "ncclsim was built without UCX, which moves bytes between hosts (configure found no "
                         "ucx.pc; Debian: apt-get install libucx-dev, then configure again)");
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_send(const sim_net_map *m, int peer, uint64_t tag, const void *buf, size_t bytes,
                          sim_ucx_op *op) {
  (void)m, (void)peer, (void)tag, (void)buf, (void)bytes, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_recv(uint64_t tag, void *buf, size_t bytes, sim_ucx_op *op) {
  (void)tag, (void)buf, (void)bytes, (void)op;
  return ncclInvalidUsage;
}
ncclResult_t sim_ucx_test(sim_ucx_op *op) { (void)op; return ncclInvalidUsage; }
void sim_ucx_cancel(sim_ucx_op *op) { (void)op; }
const char *sim_ucx_status_text(const sim_ucx_op *op) { (void)op; return "no UCX"; }

#endif
