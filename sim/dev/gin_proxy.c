/*
 * sim/dev/gin_proxy.c — GIN's PROXY type: operations that kernels issue
 * are "relayed through a CPU proxy thread", as NCCL's PROXY GIN does.
 *
 * Each rank's device communicator with PROXY GIN has a proxy thread in the
 * rank's process, made by ncclDevCommCreate and joined by its destroy.
 * Each GIN context has a ring of ginQueueDepth operations (512 when the
 * requirements leave it 0): a kernel thread writes an operation and
 * publishes it (issued), then goes on; the proxy takes the contexts'
 * operations in issue order, carries each out (gin.c) and counts it done,
 * which flush waits for. A kernel that finds its context's ring full
 * polls (letting its block's other threads run) until the proxy makes
 * room; an idle proxy sleeps until an operation is published.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dev_internal.h"

enum { DEFAULT_DEPTH = 512 };

struct sim_dev_proxy {
  pthread_t thread;
  struct ncclsimDevState *st;
  _Atomic int stop;
  sim_waitq wq; /* the proxy sleeps here; publishers and stop wake it */
  _Atomic int *locks; /* per context: one publisher at a time (kernels of several streams) */
};

static bool pending(struct ncclsimDevState *st) {
  for (int i = 0; i < st->nctx; i++)
    if (atomic_load_explicit(&st->ctx[i].head, memory_order_relaxed) <
        atomic_load_explicit(&st->ctx[i].issued, memory_order_acquire))
      return true;
  return false;
}

static bool wake_up(void *p) {
  struct sim_dev_proxy *px = p;
  return atomic_load_explicit(&px->stop, memory_order_acquire) || pending(px->st);
}

static void *proxy_main(void *p) {
  struct sim_dev_proxy *px = p;
  struct ncclsimDevState *st = px->st;
  for (;;) {
    bool any = false;
    for (int i = 0; i < st->nctx; i++) {
      sim_dev_ctx *x = &st->ctx[i];
      uint64_t head = atomic_load_explicit(&x->head, memory_order_relaxed);
      while (head < atomic_load_explicit(&x->issued, memory_order_acquire)) {
        ncclsimGinOp op = x->ring[head % x->depth];
        sim_dev_gin_execute(st, &op);
        atomic_store_explicit(&x->head, ++head, memory_order_release);
        atomic_fetch_add_explicit(&x->done, 1, memory_order_release);
        any = true;
      }
    }
    if (any) continue;
    if (atomic_load_explicit(&px->stop, memory_order_acquire)) break;
    sim_waitq_wait_idle(&px->wq, wake_up, px);
  }
  return NULL;
}

ncclResult_t sim_dev_proxy_start(struct ncclsimDevState *st) {
  struct sim_dev_proxy *px = sim_calloc(1, sizeof *px);
  if (!px) return ncclSystemError;
  px->st = st;
  px->locks = sim_calloc((size_t)st->nctx, sizeof *px->locks);
  bool ok = px->locks != NULL;
  for (int i = 0; ok && i < st->nctx; i++) {
    sim_dev_ctx *x = &st->ctx[i];
    x->depth = st->queue_depth > 0 ? (uint32_t)st->queue_depth : DEFAULT_DEPTH;
    ok = (x->ring = sim_calloc(x->depth, sizeof *x->ring)) != NULL;
  }
  int e = ok ? pthread_create(&px->thread, NULL, proxy_main, px) : ENOMEM;
  if (e) {
    sim_free(px->locks);
    sim_free(px);
    SIM_WARN(SIM_DEV, "ncclDevCommCreate: rank %d: cannot start the GIN proxy thread: %s", st->rank, strerror(e));
    return ncclSystemError;
  }
  st->proxy = px;
  SIM_INFO(SIM_DEV, "rank %d: GIN proxy thread started for device communicator %llu (%d context(s), depth %u)",
           st->rank, (unsigned long long)st->id, st->nctx, st->nctx ? st->ctx[0].depth : 0);
  return ncclSuccess;
}

typedef struct {
  sim_dev_ctx *x;
} room_arg;

static bool room(void *p) {
  sim_dev_ctx *x = ((room_arg *)p)->x;
  return atomic_load_explicit(&x->issued, memory_order_relaxed) -
             atomic_load_explicit(&x->head, memory_order_acquire) <
         x->depth;
}

void sim_dev_proxy_enqueue(struct ncclsimDevState *st, const ncclsimGinOp *op) {
  struct sim_dev_proxy *px = st->proxy;
  sim_dev_ctx *x = &st->ctx[op->context];
  _Atomic int *lock = &px->locks[op->context];
  for (;;) {
    room_arg a = {x};
    if (!room(&a)) {
      char what[128];
      snprintf(what, sizeof what, "room in GIN context %d's proxy queue (%u operations, ginQueueDepth)", op->context,
               x->depth);
      sim_dev_poll(st, room, &a, what);
    }
    int expect = 0;
    if (!atomic_compare_exchange_strong_explicit(lock, &expect, 1, memory_order_acquire, memory_order_relaxed)) {
      __ncclsim_yield("a GIN proxy queue (another stream's kernel publishes)");
      continue;
    }
    uint64_t tail = atomic_load_explicit(&x->issued, memory_order_relaxed);
    bool has_room = tail - atomic_load_explicit(&x->head, memory_order_acquire) < x->depth;
    if (has_room) {
      x->ring[tail % x->depth] = *op;
      atomic_store_explicit(&x->issued, tail + 1, memory_order_release);
    }
    atomic_store_explicit(lock, 0, memory_order_release);
    if (has_room) break;
  }
  sim_waitq_wake(&px->wq);
}

void sim_dev_proxy_stop(struct ncclsimDevState *st) {
  struct sim_dev_proxy *px = st->proxy;
  atomic_store_explicit(&px->stop, 1, memory_order_release);
  sim_waitq_wake(&px->wq);
  pthread_join(px->thread, NULL);
  sim_free(px->locks);
  sim_free(px);
  st->proxy = NULL;
}
