/*
 * sim/cuda/stream.c — streams as FIFO work queues.
 *
 * Each stream owns one worker thread, started on first use, that runs its
 * ops in order; host calls only append, so they return at once as on a GPU.
 * Stream objects are never unmapped: a destroyed stream goes back to a pool
 * with its magic cleared, so validating a stale handle is a safe read.
 * A failed op leaves an error on the stream; ops queued behind it still run,
 * told of the error, so that they release whoever waits on them instead of
 * hanging (they move no data). The next synchronize (or a query that finds
 * the stream idle) reports the error once and clears it, so a stream stays
 * usable after a failed NCCL call; the communicator keeps its async error.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POOL_POISON(p, n) ((void)(p), (void)(n))
#define POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#include "cuda_internal.h"

#define STREAM_MAGIC 0x5354524du

struct CUstream_st {
  _Atomic uint32_t magic;
  int device;
  unsigned flags;
  int priority; /* as given, clamped; ncclsim's workers do not act on it */
  bool is_default;
  pthread_mutex_t lock; /* starts the worker; a marker's mark and count (below) */
  _Atomic bool started;
  pthread_t worker;
  /* The queue: an intrusive many-producer, one-consumer list (Vyukov's).
   * A producer swaps its op in at `tail`, then links it from its
   * predecessor; the worker alone walks from `head`, so enqueue and dequeue
   * take no lock. `stub` keeps the list non-empty. */
  _Alignas(64) _Atomic(sim_op *) tail;
  _Alignas(64) sim_op *head; /* the worker's */
  sim_op stub;
  /* The op the worker runs, until its release, for the deadlock check and
   * the timeout dump (sim_stream_peek); a peeker holds it by `peekers`. */
  _Atomic(sim_op *) running;
  _Atomic uint32_t peekers;
  _Atomic uint64_t enqueued;
  sim_count completed; /* woken only at what a synchronize waits for */
  _Atomic uint64_t bounded_enqueued, bounded_completed; /* of the ops that count toward the depth */
  _Atomic int err; /* cudaError_t not yet reported by a synchronize */
  _Atomic(void *) capture; /* the capture it takes part in (capture.c); NULL: none */
  _Atomic int stop;
  sim_waitq work_wq; /* woken on enqueue and stop */
  sim_waitq room_wq; /* woken when a bounded op completes, for an enqueue waiting for room */
  struct CUstream_st *next_all; /* every stream ever made */
  /* The op pools (below), one per size class: blocks the enqueuers take
   * (under pool_lock, which the worker never takes) and blocks handed
   * back by whoever released them (pushed without a lock, taken in one
   * swap). */
  pthread_mutex_t pool_lock;
  struct pool_block *pool_free[3];
  unsigned pool_count[3];
  _Alignas(64) _Atomic(struct pool_block *) pool_back[3];
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_stream *all_streams; /* live and pooled */
static sim_stream **defaults;   /* per device */
static int ndefaults;
/* The calling thread's last default stream (device, stream): stream 0
 * resolves without streams_lock. Streams are never freed, and a default
 * stream is never destroyed. */
static _Thread_local int tl_default_dev = -1;
static _Thread_local sim_stream *tl_default;

/* Streams are the process's own; a forked child has none of the parent's
 * workers, so with ranks as processes it starts with no streams. */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&streams_lock, NULL);
  all_streams = NULL;
  defaults = NULL;
  ndefaults = 0;
  tl_default_dev = -1;
  tl_default = NULL;
}
__attribute__((constructor)) static void stream_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static bool has_work(void *arg) {
  sim_stream *s = arg;
  return atomic_load_explicit(&s->enqueued, memory_order_acquire) != sim_count_get(&s->completed) ||
         atomic_load(&s->stop);
}

/* A marker has nothing to run; the worker publishes it (below). */
static cudaError_t marker_run(sim_op *op, cudaError_t err) {
  (void)op;
  (void)err;
  return cudaSuccess;
}

/* ---- the queue ---- */

static void queue_reset(sim_stream *s) {
  atomic_store_explicit(&s->stub.next, NULL, memory_order_relaxed);
  s->head = &s->stub;
  atomic_store(&s->tail, &s->stub);
}

static void queue_push(sim_stream *s, sim_op *op) {
  atomic_store_explicit(&op->next, NULL, memory_order_relaxed);
  sim_op *prev = atomic_exchange_explicit(&s->tail, op, memory_order_acq_rel);
  atomic_store_explicit(&prev->next, op, memory_order_release);
}

/* The worker's: the next op, or NULL while none is linked (a producer
 * between its swap and its link). An op leaves the list only once its
 * successor is linked, so no producer still writes to it. */
static sim_op *queue_pop(sim_stream *s) {
  sim_op *head = s->head, *next = atomic_load_explicit(&head->next, memory_order_acquire);
  if (head == &s->stub) {
    if (!next) return NULL;
    s->head = head = next;
    next = atomic_load_explicit(&next->next, memory_order_acquire);
  }
  if (next) {
    s->head = next;
    return head;
  }
  if (head != atomic_load_explicit(&s->tail, memory_order_acquire)) return NULL;
  queue_push(s, &s->stub);
  next = atomic_load_explicit(&head->next, memory_order_acquire);
  if (!next) return NULL;
  s->head = next;
  return head;
}

/* The worker's next op: has_work said there is one (or stop). A producer
 * that counted its op has linked it, but one that swapped in earlier may
 * not have linked its own yet, which the list needs first: wait for it. */
static sim_op *next_op(sim_stream *s) {
  for (int i = 0;; i++) {
    sim_op *op = queue_pop(s);
    if (op || (atomic_load(&s->stop) && atomic_load(&s->enqueued) == sim_count_get(&s->completed))) return op;
    if (i < 64) sim_cpu_relax();
    else sched_yield();
  }
}

/* Ends the worker's hold of op: after this, nobody reads it, and it may be
 * released. The store and the load of `peekers` are sequentially
 * consistent, as a peeker's increment and its load of `running`: either
 * the peeker sees NULL, or we see it and wait for it to leave. */
static void unpublish(sim_stream *s) {
  atomic_store(&s->running, NULL);
  while (atomic_load(&s->peekers)) sched_yield();
}

void sim_stream_peek(sim_stream *s, void (*fn)(sim_op *op, void *arg), void *arg) {
  atomic_fetch_add(&s->peekers, 1);
  sim_op *op = atomic_load(&s->running);
  if (op) fn(op, arg);
  atomic_fetch_sub(&s->peekers, 1);
}

/* Asks for the next queued op's lines while this one runs: the enqueuer
 * wrote them, so they sit in its core's cache, and fetching them when the
 * op starts would put a cross-core miss per line on the path from one
 * operation's end to the next one's start (a ping-pong's whole latency).
 * The op is inside a task or a pool block: the lines around it. */
static void prefetch_next(sim_stream *s) {
  sim_op *next = s->head == &s->stub ? atomic_load_explicit(&s->stub.next, memory_order_acquire) : s->head;
  if (!next) return;
  for (int k = -4; k < 4; k++) __builtin_prefetch((const char *)next + 64 * k, 1, 3);
}

/* n places of s's depth are free again: wakes the enqueuers waiting for
 * room (has_room()). */
static void give_room(sim_stream *s, uint64_t n) {
  atomic_fetch_add(&s->bounded_completed, n);
  sim_waitq_wake_sleepers(&s->room_wq);
}

/* Releases an op that ran and counts it complete. */
static void retire(sim_stream *s, sim_op *op) {
  uint64_t cost = op->unbounded ? 0 : op->cost ? op->cost : 1; /* read now: op goes at its release */
  if (op->run == marker_run) {
    /* What the marker publishes and the count that says the stream got
     * past it change together, under the lock cudaStreamQuery reads
     * under: an event seen complete means the stream seen past its
     * record, and back. */
    sim_mutex_lock(&s->lock);
    ((sim_marker *)op)->mark((sim_marker *)op);
    op->release(op);
    sim_count_add(&s->completed, 1);
    pthread_mutex_unlock(&s->lock);
  } else {
    op->release(op);
    sim_count_add(&s->completed, 1);
  }
  if (cost) give_room(s, cost);
}

/* Runs the ops in order. An op that ran is retired (released and counted)
 * once the next one has started, when the next has a start(): what a
 * peer waits for (a put's signal, a send's match) then leaves before the
 * bookkeeping of the op before it, which is not on that path. */
static void *worker_main(void *arg) {
  sim_stream *s = arg;
  sim_op *prev = NULL; /* ran, not yet retired; still published as running */
  uint64_t stamp = 0;  /* the end of the op that ran last, for the next one's start (sim_op.stamp) */
  /* Ops (CUDA calls made from inside them, logging) see the stream's device. */
  cudaSetDevice(s->device);
  sim_worker_busy(true); /* out while it waits for work (below) or sleeps in an op */
  for (;;) {
    if (prev && atomic_load_explicit(&s->enqueued, memory_order_acquire) - sim_count_get(&s->completed) <= 1) {
      /* Nothing queued behind it: retire it now, then wait. The next
       * operation does not follow it at once, even if it is enqueued
       * before we look again (as the retire lets a synchronize return). */
      stamp = 0;
      unpublish(s);
      retire(s, prev);
      prev = NULL;
    }
    if (!prev && !has_work(s)) {
      stamp = 0; /* the next operation's start is read afresh */
      sim_waitq_wait_idle(&s->work_wq, has_work, s);
    }
    sim_op *op = next_op(s);
    if (!op) { /* stopped, and nothing is left (prev was retired above) */
      sim_worker_busy(false);
      return NULL;
    }
    atomic_store(&s->running, op); /* sequentially consistent: see unpublish() */
    prefetch_next(s);
    cudaError_t before = (cudaError_t)atomic_load(&s->err);
    op->stamp = stamp;
    if (op->start) op->start(op, before);
    else op->stamp = 0; /* not a launch: its time is not the next launch's */
    if (prev) {
      while (atomic_load(&s->peekers)) sched_yield(); /* a peeker may still hold prev */
      retire(s, prev);
      prev = NULL;
    }
    cudaError_t e = op->run(op, before);
    stamp = op->stamp;
    if (e != cudaSuccess && before == cudaSuccess) {
      SIM_INFO(SIM_STREAM, "stream %p (device %d): %s failed: %s", (void *)s, s->device, op->what,
               cudaGetErrorName(e));
      atomic_store(&s->err, e);
    }
    prev = op;
  }
}

/* A pooled or new stream, not yet published. Caller holds streams_lock. */
static sim_stream *stream_make(int device, unsigned flags, int priority, bool is_default) {
  sim_stream *s = NULL;
  for (sim_stream *p = all_streams; p; p = p->next_all)
    if (atomic_load(&p->magic) == 0 && !atomic_load(&p->started)) {
      s = p;
      break;
    }
  if (!s) {
    s = sim_aligned_alloc(_Alignof(sim_stream), sizeof *s); /* its queue ends are on lines of their own */
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    sim_mutex_init(&s->lock);
    pthread_mutex_init(&s->pool_lock, NULL); /* the process's own, as the stream */
    s->next_all = all_streams;
    all_streams = s;
  }
  s->device = device;
  s->flags = flags;
  s->priority = priority;
  s->is_default = is_default;
  queue_reset(s);
  atomic_store(&s->running, NULL);
  atomic_store(&s->enqueued, 0);
  sim_count_init(&s->completed);
  atomic_store(&s->bounded_enqueued, 0);
  atomic_store(&s->bounded_completed, 0);
  atomic_store(&s->err, cudaSuccess);
  atomic_store(&s->stop, 0);
  atomic_store(&s->magic, STREAM_MAGIC);
  return s;
}

static sim_stream *default_stream(int device) {
  sim_mutex_lock(&streams_lock);
  if (device >= ndefaults) {
    int n = device + 1 > sim_device_count() ? device + 1 : sim_device_count();
    sim_stream **d = sim_realloc(defaults, (size_t)n * sizeof *d);
    if (!d) {
      pthread_mutex_unlock(&streams_lock);
      return NULL;
    }
    memset(d + ndefaults, 0, (size_t)(n - ndefaults) * sizeof *d);
    defaults = d;
    ndefaults = n;
  }
  if (!defaults[device]) defaults[device] = stream_make(device, cudaStreamDefault, 0, true);
  sim_stream *s = defaults[device];
  pthread_mutex_unlock(&streams_lock);
  return s;
}

static sim_stream *resolve_default(void) {
  int device = sim_current_device();
  if (device != tl_default_dev || !tl_default) {
    tl_default = default_stream(device);
    tl_default_dev = device;
  }
  return tl_default;
}

sim_stream *sim_stream_resolve(cudaStream_t h, cudaError_t *err) {
  sim_stream *s = h ? (sim_stream *)h : resolve_default();
  if (!s) {
    *err = cudaErrorMemoryAllocation;
    return NULL;
  }
  if (atomic_load(&s->magic) != STREAM_MAGIC) {
    SIM_WARN(SIM_STREAM, "stream %p is not a live stream (destroyed, or never created)", (void *)h);
    *err = cudaErrorInvalidResourceHandle;
    return NULL;
  }
  *err = cudaSuccess;
  return s;
}

sim_stream *sim_stream_find(cudaStream_t h) {
  sim_stream *s = h ? (sim_stream *)h : resolve_default();
  return s && atomic_load(&s->magic) == STREAM_MAGIC ? s : NULL;
}

int sim_stream_device(sim_stream *s) { return s->device; }

void *sim_stream_capture(sim_stream *s) { return atomic_load_explicit(&s->capture, memory_order_acquire); }
void sim_stream_capture_set(sim_stream *s, void *capture) { atomic_store(&s->capture, capture); }

/* ---- the stream's depth: CUDA's queue of pending work is bounded, and an
 * enqueue into a full queue blocks the host thread until the GPU retires
 * one. Measured with CUDA 13 on H100, behind a kernel that does not finish:
 * 1021 kernels, cudaMemcpyAsync or cudaMemsetAsync go in (1022 pending),
 * the next blocks; event records and host functions are not bounded (3000
 * went in). Through NCCL 2.30.7 on H200: 1021 waits, 1022 allreduces, 1030
 * sends. An op counts as the CUDA operations it stands for (sim_op.cost):
 * a launch of puts is several. ---- */

typedef struct {
  sim_stream *s;
  uint64_t cost; /* the CUDA operations the op to enqueue stands for */
} room_arg;

static bool has_room(void *arg) {
  room_arg *a = arg;
  uint64_t depth = (uint64_t)sim_param_int(SIM_P_STREAM_DEPTH);
  /* Sequentially consistent, for the worker's wake (sim.h). */
  uint64_t pending = atomic_load_explicit(&a->s->bounded_enqueued, memory_order_relaxed) -
                     atomic_load(&a->s->bounded_completed);
  /* An op of more than the whole depth goes into an empty stream: on a GPU
   * its own first parts complete and make room for the rest. */
  return pending == 0 || pending + a->cost <= depth;
}

/* What the op at the front of the stream still waits for: while it does,
 * the stream frees no room. */
typedef struct {
  sim_rank_ref *out;
  int max, n;
} awaits_arg;

static void op_awaits(sim_op *op, void *arg) {
  awaits_arg *a = arg;
  a->n = op->awaits ? op->awaits(op, a->out, a->max) : 0;
}

static int front_awaits(sim_block *b, sim_rank_ref *out, int max) {
  awaits_arg a = {out, max, 0};
  sim_stream_peek(b->arg, op_awaits, &a);
  return a.n < 0 ? 0 : a.n;
}

static cudaError_t wait_room(sim_stream *s, const sim_op *op, room_arg *room) {
  sim_block b;
  sim_block_init(&b, front_awaits, s, "an enqueue of %s on a full stream %p (device %d, NCCLSIM_STREAM_DEPTH=%s)",
                 op->what, (void *)s, s->device, sim_param_text(SIM_P_STREAM_DEPTH));
  char why[384];
  int rc = sim_block_wait(&b, &s->room_wq, has_room, room, sim_deadline(), why, sizeof why);
  if (rc == 0) return cudaSuccess;
  if (rc == EDEADLK) {
    SIM_WARN(SIM_STREAM,
             "%s: stream %p holds NCCLSIM_STREAM_DEPTH=%s pending operations and its first waits for a rank that "
             "cannot call: %s. On a GPU this enqueue blocks forever (CUDA's stream queue is full); enqueue fewer "
             "operations before the peers can progress",
             op->what, (void *)s, sim_param_text(SIM_P_STREAM_DEPTH), why);
    return cudaErrorLaunchFailure;
  }
  SIM_WARN(SIM_STREAM,
           "%s: stream %p held NCCLSIM_STREAM_DEPTH=%s pending operations for NCCLSIM_TIMEOUT=%s s (CUDA's stream "
           "queue is full: on a GPU this enqueue would still be blocked)",
           op->what, (void *)s, sim_param_text(SIM_P_STREAM_DEPTH), sim_param_text(SIM_P_TIMEOUT));
  return cudaErrorTimeout;
}

cudaError_t sim_stream_enqueue(sim_stream *s, sim_op *op) {
  op->next = NULL;
  /* A graph launch counts once, as its first op (graph_exec.c); the
   * thread-local is read only while some thread launches a graph (a
   * library's thread-local costs a call). */
  if (atomic_load_explicit(&sim_graph_launches, memory_order_relaxed) && sim_graph_launching) op->unbounded = true;
  uint64_t cost = op->unbounded ? 0 : op->cost ? op->cost : 1;
  room_arg room = {s, cost};
  if (cost && sim_param_int(SIM_P_STREAM_DEPTH) > 0 && !has_room(&room)) {
    cudaError_t err = wait_room(s, op, &room);
    if (err != cudaSuccess) return err;
  }
  if (!atomic_load_explicit(&s->started, memory_order_acquire)) {
    sim_mutex_lock(&s->lock);
    if (!atomic_load(&s->started)) {
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setstacksize(&attr, (size_t)sim_param_int(SIM_P_STACK_KB) * 1024);
      int rc = pthread_create(&s->worker, &attr, worker_main, s);
      pthread_attr_destroy(&attr);
      if (rc != 0) {
        pthread_mutex_unlock(&s->lock);
        SIM_WARN(SIM_STREAM, "cannot start the worker of stream %p: %s", (void *)s, strerror(rc));
        return cudaErrorMemoryAllocation;
      }
      atomic_store_explicit(&s->started, true, memory_order_release);
    }
    pthread_mutex_unlock(&s->lock);
  }
  /* Counted after it is linked: a worker that sees the count finds the op
   * (next_op waits out producers that swapped in before it). */
  queue_push(s, op);
  if (cost) atomic_fetch_add_explicit(&s->bounded_enqueued, cost, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->enqueued, 1, memory_order_release);
  sim_waitq_wake(&s->work_wq);
  return cudaSuccess;
}

cudaError_t sim_stream_enqueue_marker(sim_stream *s, sim_marker *m) {
  m->op.run = marker_run;
  return sim_stream_enqueue(s, &m->op);
}

/* Waits for what s holds now; its error is kept for the next synchronize. */
static void stream_wait(sim_stream *s) {
  /* Every op that can block has its own deadline, so this wait ends. */
  sim_count_wait(&s->completed, atomic_load(&s->enqueued), UINT64_MAX);
}

cudaError_t sim_stream_drain(sim_stream *s) {
  stream_wait(s);
  return (cudaError_t)atomic_exchange(&s->err, cudaSuccess);
}

/* take: a synchronize, which returns (and clears) the first of the
 * streams' errors; otherwise a wait that leaves them (cudaFree). */
static cudaError_t drain_one(sim_stream *s, bool take) {
  if (take) return sim_stream_drain(s);
  stream_wait(s);
  return cudaSuccess;
}

/* Drains every stream of a device. */
cudaError_t sim_device_drain(int device, bool take) {
  /* Snapshot the device's live streams, then drain each outside the lock. */
  sim_stream *list[256];
  int n = 0;
  cudaError_t first = cudaSuccess;
  sim_stream *d = default_stream(device);
  if (d) first = drain_one(d, take);
  sim_mutex_lock(&streams_lock);
  sim_stream *p = all_streams;
  pthread_mutex_unlock(&streams_lock);
  for (; p; p = p->next_all) {
    /* all_streams only grows at the head, so walking from a snapshot of the
     * head is safe without the lock. */
    if (atomic_load(&p->magic) == STREAM_MAGIC && p->device == device && p != d) {
      list[n++] = p;
      if (n == (int)(sizeof list / sizeof list[0])) {
        for (int i = 0; i < n; i++) {
          cudaError_t e = drain_one(list[i], take);
          if (first == cudaSuccess) first = e;
        }
        n = 0;
      }
    }
  }
  for (int i = 0; i < n; i++) {
    cudaError_t e = drain_one(list[i], take);
    if (first == cudaSuccess) first = e;
  }
  return first;
}

SIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *ps, unsigned int flags, int priority) {
  if (!ps || (flags & ~(unsigned)cudaStreamNonBlocking)) return sim_cuda_error(cudaErrorInvalidValue);
  sim_mutex_lock(&streams_lock);
  sim_stream *s = stream_make(sim_current_device(), flags, sim_stream_priority_clamp(priority), false);
  pthread_mutex_unlock(&streams_lock);
  if (!s) return sim_cuda_error(cudaErrorMemoryAllocation);
  *ps = s;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned int flags) {
  return cudaStreamCreateWithPriority(ps, flags, 0);
}

SIM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t h, int *priority) {
  cudaError_t err;
  if (!priority) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  *priority = s->priority;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t h, unsigned int *flags) {
  cudaError_t err;
  if (!flags) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  *flags = s->flags;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *ps) {
  return cudaStreamCreateWithFlags(ps, cudaStreamDefault);
}

SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t h) {
  cudaError_t err;
  if (!h) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  if (s->is_default) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  if (sim_stream_capturing(s)) sim_capture_stream_gone(s);
  /* CUDA lets queued work finish after destroy returns; we finish it first,
   * which callers cannot tell apart except by timing. */
  sim_stream_drain(s);
  atomic_store(&s->magic, 0);
  sim_mutex_lock(&s->lock);
  bool started = atomic_load(&s->started);
  pthread_mutex_unlock(&s->lock);
  if (started) {
    atomic_store(&s->stop, 1);
    sim_waitq_wake(&s->work_wq);
    pthread_join(s->worker, NULL);
  }
  sim_mutex_lock(&streams_lock);
  atomic_store(&s->started, false); /* back in the pool */
  pthread_mutex_unlock(&streams_lock);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t h) {
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  if (sim_stream_capturing(s)) /* measured: CUDA 13, H100 */
    return sim_cuda_error(sim_capture_refuse(s, "cudaStreamSynchronize", "its captured work is not queued to run"));
  err = sim_stream_drain(s);
  sim_mempool_synced(); /* pools release what exceeds their threshold */
  sim_cuda_synced(s->device);
  if (err == cudaSuccess) err = sim_cuda_sticky(s->device); /* a kernel faulted */
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t h) {
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  if (sim_stream_capturing(s))
    return sim_cuda_error(sim_capture_refuse(s, "cudaStreamQuery", "its captured work is not queued to run"));
  /* Under the lock, as a marker is counted (worker_main). */
  sim_mutex_lock(&s->lock);
  bool idle = sim_count_get(&s->completed) == atomic_load(&s->enqueued);
  pthread_mutex_unlock(&s->lock);
  if ((err = sim_cuda_sticky(s->device)) != cudaSuccess) return sim_cuda_error(err);
  if (!idle) return cudaErrorNotReady;
  return sim_cuda_error((cudaError_t)atomic_exchange(&s->err, cudaSuccess));
}

/* ---- op pools. Every NCCL call enqueues a task that the worker releases
 * once it ran: through malloc, the host thread's allocation and the
 * worker's free meet in the allocator's locks and caches of another
 * thread. A stream keeps the blocks its worker released for the next
 * enqueue instead. ---- */

/* A block: this header, then the op on a cache line boundary (an area
 * may lay its task out by lines: sim/p2p). */
typedef struct pool_block {
  _Alignas(64) struct pool_block *next; /* in a free list */
  sim_stream *home;                     /* NULL: plain memory, freed to the allocator */
  size_t cls;
  size_t size; /* what was asked for (sim_stream_op_size) */
} pool_block;

static const size_t pool_sizes[3] = {256, 512, 1024};
/* Blocks a class keeps at most, more go back to the allocator: a full
 * stream (NCCLSIM_STREAM_DEPTH, 1022 by default) of tasks of one class. */
enum { POOL_KEEP = 1024 };

void *sim_stream_op_alloc(sim_stream *s, size_t size) {
  size_t cls = 0;
  while (cls < 3 && size > pool_sizes[cls]) cls++;
  pool_block *b = NULL;
  if (s && cls < 3) {
    pthread_mutex_lock(&s->pool_lock);
    if (!s->pool_free[cls]) {
      /* Take what came back; keep POOL_KEEP of it. */
      pool_block *back = atomic_exchange_explicit(&s->pool_back[cls], NULL, memory_order_acquire), *extra = NULL;
      while (back) {
        pool_block *next = back->next;
        if (s->pool_count[cls] < POOL_KEEP) {
          back->next = s->pool_free[cls];
          s->pool_free[cls] = back;
          s->pool_count[cls]++;
        } else {
          back->next = extra;
          extra = back;
        }
        back = next;
      }
      pthread_mutex_unlock(&s->pool_lock);
      while (extra) {
        pool_block *next = extra->next;
        sim_free(extra);
        extra = next;
      }
      pthread_mutex_lock(&s->pool_lock);
    }
    if ((b = s->pool_free[cls])) {
      s->pool_free[cls] = b->next;
      s->pool_count[cls]--;
    }
    pthread_mutex_unlock(&s->pool_lock);
    if (b && sim_alloc_fails()) { /* counted as the allocation it replaces */
      sim_stream_op_free(b + 1);
      return NULL;
    }
  }
  size_t bytes = cls < 3 ? pool_sizes[cls] : size;
  if (!b) {
    if (!(b = sim_aligned_alloc(_Alignof(pool_block), sizeof *b + bytes))) return NULL;
    b->home = cls < 3 ? s : NULL;
    b->cls = cls;
  }
  POOL_UNPOISON(b + 1, bytes);
  memset(b + 1, 0, size);
  b->size = size;
  return b + 1;
}

size_t sim_stream_op_size(const void *p) { return ((const pool_block *)p - 1)->size; }

void sim_stream_op_free(void *p) {
  if (!p) return;
  pool_block *b = (pool_block *)p - 1;
  sim_stream *s = b->home;
  if (!s) {
    sim_free(b);
    return;
  }
  POOL_POISON(p, pool_sizes[b->cls]);
  b->next = atomic_load_explicit(&s->pool_back[b->cls], memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&s->pool_back[b->cls], &b->next, b, memory_order_release,
                                                memory_order_relaxed)) {
  }
}

typedef struct {
  sim_op op;
  sim_stream *s;
  cudaHostFn_t fn;
  void *arg;
} host_fn_op;

/* A host function takes no place of the depth while queued, but one
 * while it runs (CUDA 13 on H200: 1021 memsets, kernels or graph launches
 * went in behind a host function that blocked, against 1022 pending with
 * a kernel; conformance/probes/graph_depth.cu). */
static cudaError_t host_fn_run(sim_op *op, cudaError_t err) {
  host_fn_op *h = (host_fn_op *)op;
  if (err != cudaSuccess) return cudaSuccess;
  atomic_fetch_add(&h->s->bounded_enqueued, 1);
  h->fn(h->arg);
  give_room(h->s, 1);
  return cudaSuccess;
}

static void op_free(sim_op *op) { sim_free(op); }

SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t h, cudaHostFn_t fn, void *arg) {
  cudaError_t err;
  if (!fn) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  if (sim_stream_capturing(s)) return sim_cuda_error(sim_capture_host(s, fn, arg)); /* a host node */
  host_fn_op *op = sim_calloc(1, sizeof *op);
  if (!op) return sim_cuda_error(cudaErrorMemoryAllocation);
  op->op.run = host_fn_run;
  op->op.release = op_free;
  op->op.what = "cudaLaunchHostFunc";
  op->op.unbounded = true; /* CUDA takes any number (measured: 3000 behind a blocked kernel) */
  op->s = s;
  op->fn = fn;
  op->arg = arg;
  if ((err = sim_stream_enqueue(s, &op->op)) != cudaSuccess) sim_free(op);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  int device = sim_current_device();
  cudaError_t err = sim_capture_sync_device(device);
  if (err != cudaSuccess) return sim_cuda_error(err);
  err = sim_device_drain(device, true);
  sim_mempool_synced();
  sim_cuda_synced(device);
  if (err == cudaSuccess) err = sim_cuda_sticky(device); /* a kernel faulted */
  return sim_cuda_error(err);
}

void sim_stream_destroy_device(int device) {
  sim_mutex_lock(&streams_lock);
  sim_stream *p = all_streams;
  pthread_mutex_unlock(&streams_lock);
  for (; p; p = p->next_all) /* as device_drain walks it */
    if (atomic_load(&p->magic) == STREAM_MAGIC && p->device == device && !p->is_default) cudaStreamDestroy(p);
}
