/*
 * sim/dev/window.c — windows in kernels: ncclGetLocalPointer,
 * ncclGetLsaPointer, ncclGetPeerPointer and the resource buffers
 * (ncclsimDev* of nccl_device/impl/ncclsim__abi.h).
 *
 * A window handle is rma's (sim/rma): what a kernel needs of it (every
 * rank's memory and size, its LSA team) is copied into a view at its
 * first use in this process (sim_rma_win_info_get), kept in a process
 * list, and cached per thread; a deregistration drops the window's view
 * and moves a generation that every cached view is checked against, so a
 * handle reused after that is looked up again. Ranks share memory within
 * a host (threads, or processes mapping one arena at one address), so an
 * LSA pointer is the peer's own address, as the transport maps it.
 *
 * A device communicator's resource buffers are one block per rank in its
 * state; ncclDevComm.resourceWindow stands for them, with a view of its
 * own whose peers come from the device communicator's group.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "dev_internal.h"
#include "../kernel/kernel.h"
#include "../transport.h"

static pthread_mutex_t views_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_dev_win *views;
/* Moved by every drop of a view; the headers' inline path reads it
 * (ncclsim__abi.h): plain uint64_t, read and written with __atomic. */
SIM_EXPORT uint64_t ncclsimDevWinGen = 1;
#define views_gen_load() __atomic_load_n(&ncclsimDevWinGen, __ATOMIC_ACQUIRE)

/* A few views per thread, checked against the generation. */
enum { CACHE_SLOTS = 8 };
static _Thread_local struct {
  ncclWindow_t win;
  uint64_t gen;
  sim_dev_win *v;
} cache[CACHE_SLOTS];

static unsigned slot_of(ncclWindow_t w) { return (unsigned)(((uintptr_t)w >> 4) ^ ((uintptr_t)w >> 12)) % CACHE_SLOTS; }

static void view_free(sim_dev_win *v) {
  sim_rma_win_info_free(&v->info);
  sim_free(v->lsa_ptr);
  sim_free(v->lsa_bytes);
  sim_free(v->lsa_world);
  sim_free(v);
}

/* A view of a registered window, from rma's record of it. */
static sim_dev_win *view_make(ncclWindow_t w) {
  sim_dev_win *v = sim_calloc(1, sizeof *v);
  if (!v) return NULL;
  if (!sim_rma_win_info_get(w, &v->info)) {
    sim_free(v);
    return NULL;
  }
  ncclComm_t comm = v->info.comm;
  v->win = w;
  v->comm = comm;
  v->rank = comm->rank;
  v->nranks = v->info.nranks;
  v->lsa_rank = comm->lsa_rank;
  v->lsa_size = comm->lsa_size;
  v->lsa_world = sim_calloc((size_t)v->lsa_size, sizeof *v->lsa_world);
  v->lsa_ptr = sim_calloc((size_t)v->lsa_size, sizeof *v->lsa_ptr);
  v->lsa_bytes = sim_calloc((size_t)v->lsa_size, sizeof *v->lsa_bytes);
  if (!v->lsa_world || !v->lsa_ptr || !v->lsa_bytes) {
    view_free(v);
    return NULL;
  }
  sim_dev_lsa_members(comm, v->lsa_world);
  sim_clique *c = comm->clique;
  for (int i = 0; i < v->lsa_size; i++) {
    int r = v->lsa_world[i];
    v->lsa_ptr[i] = c->tp->map_peer(c, r, v->info.ptr[r]);
    v->lsa_bytes[i] = v->info.size[r];
  }
  return v;
}

static sim_dev_win *win_of(ncclWindow_t w, const char *op) {
  unsigned s = slot_of(w);
  uint64_t gen = views_gen_load();
  if (w && cache[s].win == w && cache[s].gen == gen) return cache[s].v;
  sim_dev_win *v = NULL;
  if (w) {
    pthread_mutex_lock(&views_lock);
    for (v = views; v && v->win != w; v = v->next) continue;
    if (!v && (v = view_make(w))) {
      v->next = views;
      views = v;
    }
    gen = __atomic_load_n(&ncclsimDevWinGen, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&views_lock);
  }
  if (!v) {
    __ncclsim_fault(cudaErrorIllegalAddress,
                    "%s: window %p is not a registered window (never registered, deregistered, or its "
                    "communicator destroyed)",
                    op, (void *)w);
    abort(); /* a host thread that called device code */
  }
  cache[s].win = w;
  cache[s].gen = gen;
  cache[s].v = v;
  return v;
}

/* The cache is the worker's, which its kernel threads share: the kernel
 * engine's to ThreadSanitizer (sim/kernel/kernel.h). */
sim_dev_win *sim_dev_win_of(ncclWindow_t w, const char *op) {
  sim_k_engine_enter();
  sim_dev_win *v = win_of(w, op);
  sim_k_engine_leave();
  return v;
}

/* Drops the views of win (all of comm's when win is NULL, and with st
 * the resource window of st) and moves the generation. */
static void views_drop(ncclComm_t comm, ncclWindow_t win, struct ncclsimDevState *st) {
  pthread_mutex_lock(&views_lock);
  for (sim_dev_win **pp = &views; *pp;) {
    sim_dev_win *v = *pp;
    bool drop = st ? v->res == st : win ? v->win == win : v->comm == comm;
    if (drop) {
      *pp = v->next;
      view_free(v);
    } else {
      pp = &v->next;
    }
  }
  __atomic_fetch_add(&ncclsimDevWinGen, 1, __ATOMIC_ACQ_REL);
  pthread_mutex_unlock(&views_lock);
}

void sim_dev_views_fini(ncclComm_t comm) { views_drop(comm, NULL, NULL); }
void sim_dev_res_window_forget(struct ncclsimDevState *st) { views_drop(st->comm, NULL, st); }
/* rma's deregistration (sim/dev/dev.h's hook, devcomm.c) drops its view. */
void sim_dev_view_forget(ncclWindow_t win) { views_drop(NULL, win, NULL); }

static void __attribute__((noreturn)) outside(sim_dev_win *v, int peer, size_t offset, size_t bytes, size_t size,
                                               const char *op) {
  __ncclsim_fault(cudaErrorIllegalAddress,
                  "%s: rank %d: %zu byte(s) at offset %zu of %s %p on rank %d are outside it (%zu bytes there)",
                  op, v->rank, bytes, offset, v->res ? "the resource window" : "window", (void *)v->win, peer,
                  size);
  abort();
}

char *sim_dev_win_at(sim_dev_win *v, int peer, size_t offset, size_t bytes, const char *op, uint64_t *addr,
                     const sim_ucx_rkey **key) {
  if (peer < 0 || peer >= v->nranks) {
    __ncclsim_fault(cudaErrorInvalidValue, "%s: rank %d: peer %d is not a rank of window %p's communicator (%d ranks)",
                    op, v->rank, peer, (void *)v->win, v->nranks);
    abort();
  }
  if (v->res) { /* a resource window */
    struct ncclsimDevState *st = v->res;
    if (offset > st->res_bytes || bytes > st->res_bytes - offset) outside(v, peer, offset, bytes, st->res_bytes, op);
    if (sim_net_remote(st->clique->net, peer)) {
      sim_dev_net_res_at(st, peer, offset, addr, key);
      return NULL;
    }
    struct ncclsimDevState *p = sim_dev_peer(st, peer, op);
    return st->clique->tp->map_peer(st->clique, peer, p->res) + offset;
  }
  size_t size = v->info.size[peer];
  if (offset > size || bytes > size - offset) outside(v, peer, offset, bytes, size, op);
  if (v->info.key && sim_net_remote(v->comm->clique->net, peer)) {
    if (addr) *addr = (uint64_t)(uintptr_t)v->info.ptr[peer] + offset;
    if (key) *key = &v->info.key[peer];
    return NULL;
  }
  sim_clique *c = v->comm->clique;
  return (char *)c->tp->map_peer(c, peer, v->info.ptr[peer]) + offset;
}

/* LSA index i's memory of w at offset, checked. */
static void *lsa_at(sim_dev_win *v, int i, size_t offset, const char *op) {
  if (i < 0 || i >= v->lsa_size) {
    __ncclsim_fault(cudaErrorInvalidValue,
                    "%s: rank %d: LSA peer %d of window %p is outside the LSA team (LSA ranks 0..%d)", op,
                    v->rank, i, (void *)v->win, v->lsa_size - 1);
    abort();
  }
  if (v->res) return sim_dev_win_at(v, v->res->lsa_world[i], offset, 1, op, NULL, NULL);
  int r = v->lsa_world[i];
  if (offset >= v->info.size[r]) outside(v, r, offset, 1, v->info.size[r], op);
  return v->lsa_ptr[i] + offset;
}

SIM_EXPORT void *ncclsimDevWinLocal(ncclWindow_t w, size_t offset) {
  static const char op[] = "ncclGetLocalPointer";
  sim_dev_win *v = sim_dev_win_of(w, op);
  return lsa_at(v, v->lsa_rank, offset, op);
}

SIM_EXPORT void *ncclsimDevWinLsa(ncclWindow_t w, size_t offset, int lsaPeer) {
  static const char op[] = "ncclGetLsaPointer";
  return lsa_at(sim_dev_win_of(w, op), lsaPeer, offset, op);
}

SIM_EXPORT void *ncclsimDevWinPeer(ncclWindow_t w, size_t offset, int peer) {
  static const char op[] = "ncclGetPeerPointer";
  sim_dev_win *v = sim_dev_win_of(w, op);
  for (int i = 0; i < v->lsa_size; i++)
    if ((v->res ? v->res->lsa_world[i] : v->lsa_world[i]) == peer) return lsa_at(v, i, offset, op);
  return NULL; /* not in the LSA team: NULL, as NCCL documents */
}

SIM_EXPORT void *ncclsimDevWinTeam(ncclWindow_t w, size_t offset, int teamRank, int teamStride, int peer) {
  static const char op[] = "ncclGetPeerPointer (team)";
  sim_dev_win *v = sim_dev_win_of(w, op);
  return lsa_at(v, v->lsa_rank + (peer - teamRank) * teamStride, offset, op);
}

/* The cache (in the program, inline) is the worker's too. */
SIM_EXPORT void ncclsimDevWinFill(ncclWindow_t w, ncclsimDevWinCache *c) {
  sim_k_engine_enter();
  uint64_t gen = views_gen_load(); /* before the view: a drop after it makes the entry stale */
  sim_dev_win *v = sim_dev_win_of(w, "a window pointer");
  c->win = w;
  c->gen = gen;
  c->rank = v->rank;
  c->lsaRank = v->lsa_rank;
  c->lsaSize = v->lsa_size;
  c->lsaPtr = v->res ? NULL : v->lsa_ptr; /* a resource window's peers are found at each use */
  c->lsaBytes = v->lsa_bytes;
  c->lsaWorld = v->lsa_world;
  sim_k_engine_leave();
}

/* ---- resource buffers ---- */

SIM_EXPORT void *ncclsimDevRes(const struct ncclDevComm *c, uint32_t handle, int lsaPeer) {
  static const char op[] = "a resource buffer pointer";
  struct ncclsimDevState *st = sim_dev_self(c, op);
  size_t off = (size_t)handle * NCCLSIM_DEV_RESOURCE_UNIT;
  if (off >= st->res_bytes)
    sim_dev_fault(st, cudaErrorIllegalAddress,
                  "%s: resource buffer handle %u (byte %zu) is outside the device communicator's %zu bytes of "
                  "resource buffers",
                  op, handle, off, st->res_bytes);
  if (lsaPeer < 0 || lsaPeer >= st->lsa_size)
    sim_dev_fault(st, cudaErrorInvalidValue, "%s: LSA peer %d is outside the LSA team (LSA ranks 0..%d)", op, lsaPeer,
                  st->lsa_size - 1);
  if (lsaPeer == st->lsa_rank) return st->res + off;
  int peer = st->lsa_world[lsaPeer];
  struct ncclsimDevState *p = sim_dev_peer(st, peer, op);
  return (char *)st->clique->tp->map_peer(st->clique, peer, p->res) + off;
}

SIM_EXPORT ncclWindow_t ncclsimDevResWindow(const struct ncclDevComm *c) {
  struct ncclsimDevState *st = sim_dev_self(c, "ncclGetResourceBuffer");
  if (!st->res_bytes) return NULL;
  ncclWindow_t w = (ncclWindow_t)(void *)&st->res_window;
  pthread_mutex_lock(&views_lock);
  sim_dev_win *v = views;
  while (v && v->win != w) v = v->next;
  if (!v && (v = sim_calloc(1, sizeof *v))) {
    v->win = w;
    v->comm = st->comm;
    v->res = st;
    v->rank = st->rank;
    v->nranks = st->nranks;
    v->lsa_rank = st->lsa_rank;
    v->lsa_size = st->lsa_size;
    v->next = views;
    views = v;
  }
  pthread_mutex_unlock(&views_lock);
  if (!v) sim_dev_fault(st, cudaErrorMemoryAllocation, "ncclGetResourceBuffer: out of memory");
  return w;
}
