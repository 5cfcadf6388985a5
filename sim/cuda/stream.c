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

#include "cuda_internal.h"

#define STREAM_MAGIC 0x5354524du

struct CUstream_st {
  _Atomic uint32_t magic;
  int device;
  unsigned flags;
  bool is_default;
  pthread_mutex_t lock; /* guards head, tail, running, started, and a marker's count */
  sim_op *head, *tail;
  sim_op *running; /* the op the worker runs, until its release */
  _Atomic uint64_t enqueued, completed;
  _Atomic uint64_t bounded_enqueued, bounded_completed; /* of the ops that count toward the depth */
  _Atomic int err; /* cudaError_t not yet reported by a synchronize */
  _Atomic int stop;
  bool started;
  pthread_t worker;
  sim_waitq work_wq; /* woken on enqueue and stop */
  sim_waitq done_wq; /* woken when an op completes */
  struct CUstream_st *next_all; /* every stream ever made */
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static sim_stream *all_streams; /* live and pooled */
static sim_stream **defaults;   /* per device */
static int ndefaults;

/* Streams are the process's own; a forked child has none of the parent's
 * workers, so with ranks as processes it starts with no streams. */
static void child_after_fork(void) {
  if (!sim_shm_on()) return;
  pthread_mutex_init(&streams_lock, NULL);
  all_streams = NULL;
  defaults = NULL;
  ndefaults = 0;
}
__attribute__((constructor)) static void stream_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static bool has_work(void *arg) {
  sim_stream *s = arg;
  return atomic_load_explicit(&s->enqueued, memory_order_acquire) !=
             atomic_load_explicit(&s->completed, memory_order_relaxed) ||
         atomic_load(&s->stop);
}

/* A marker has nothing to run; the worker publishes it (below). */
static cudaError_t marker_run(sim_op *op, cudaError_t err) {
  (void)op;
  (void)err;
  return cudaSuccess;
}

static void *worker_main(void *arg) {
  sim_stream *s = arg;
  /* Ops (CUDA calls made from inside them, logging) see the stream's device. */
  cudaSetDevice(s->device);
  for (;;) {
    sim_waitq_wait(&s->work_wq, has_work, s, NULL, UINT64_MAX);
    sim_mutex_lock(&s->lock);
    sim_op *op = s->head;
    if (op) {
      s->head = op->next;
      if (!s->head) s->tail = NULL;
    }
    s->running = op;
    pthread_mutex_unlock(&s->lock);
    if (!op) {
      /* has_work held with nothing queued: only stop does that, since this
       * thread alone takes ops off the queue and completes them. */
      if (NEVER(!atomic_load(&s->stop))) continue;
      return NULL;
    }
    cudaError_t before = (cudaError_t)atomic_load(&s->err);
    bool bounded = !op->unbounded; /* read now: op goes at its release */
    cudaError_t e = op->run(op, before);
    if (e != cudaSuccess && before == cudaSuccess) {
      SIM_INFO(SIM_STREAM, "stream %p (device %d): %s failed: %s", (void *)s, s->device, op->what,
               cudaGetErrorName(e));
      atomic_store(&s->err, e);
    }
    sim_mutex_lock(&s->lock); /* a deadlock check may be reading `running` */
    s->running = NULL;
    if (op->run == marker_run) {
      /* What the marker publishes and the count that says the stream got
       * past it change together, under the lock cudaStreamQuery reads
       * under: an event seen complete means the stream seen past its
       * record, and back. */
      ((sim_marker *)op)->mark((sim_marker *)op);
      op->release(op);
      atomic_fetch_add_explicit(&s->completed, 1, memory_order_release);
      pthread_mutex_unlock(&s->lock);
    } else {
      pthread_mutex_unlock(&s->lock);
      op->release(op);
      atomic_fetch_add_explicit(&s->completed, 1, memory_order_release);
    }
    if (bounded) atomic_fetch_add_explicit(&s->bounded_completed, 1, memory_order_release);
    sim_waitq_wake(&s->done_wq);
  }
}

/* A pooled or new stream, not yet published. Caller holds streams_lock. */
static sim_stream *stream_make(int device, unsigned flags, bool is_default) {
  sim_stream *s = NULL;
  for (sim_stream *p = all_streams; p; p = p->next_all)
    if (atomic_load(&p->magic) == 0 && !p->started) {
      s = p;
      break;
    }
  if (!s) {
    s = sim_calloc(1, sizeof *s);
    if (!s) return NULL;
    sim_mutex_init(&s->lock);
    s->next_all = all_streams;
    all_streams = s;
  }
  s->device = device;
  s->flags = flags;
  s->is_default = is_default;
  s->head = s->tail = NULL;
  atomic_store(&s->enqueued, 0);
  atomic_store(&s->completed, 0);
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
  if (!defaults[device]) defaults[device] = stream_make(device, cudaStreamDefault, true);
  sim_stream *s = defaults[device];
  pthread_mutex_unlock(&streams_lock);
  return s;
}

sim_stream *sim_stream_resolve(cudaStream_t h, cudaError_t *err) {
  sim_stream *s = h ? (sim_stream *)h : default_stream(sim_current_device());
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

int sim_stream_device(sim_stream *s) { return s->device; }

/* ---- the stream's depth: CUDA's queue of pending work is bounded, and an
 * enqueue into a full queue blocks the host thread until the GPU retires
 * one. Measured with CUDA 13 on H100, behind a kernel that does not finish:
 * 1021 kernels, cudaMemcpyAsync or cudaMemsetAsync go in (1022 pending),
 * the next blocks; event records and host functions are not bounded (3000
 * went in). Through NCCL 2.30.7 on H200: 1021 waits, 1022 allreduces, 1030
 * sends. ---- */

static bool has_room(void *arg) {
  sim_stream *s = arg;
  uint64_t depth = (uint64_t)sim_param_int(SIM_P_STREAM_DEPTH);
  return atomic_load_explicit(&s->bounded_enqueued, memory_order_relaxed) -
             atomic_load_explicit(&s->bounded_completed, memory_order_acquire) <
         depth;
}

/* What the op at the front of the stream still waits for: while it does,
 * the stream frees no room. */
static int front_awaits(sim_block *b, sim_rank_ref *out, int max) {
  sim_stream *s = b->arg;
  sim_mutex_lock(&s->lock);
  int n = s->running && s->running->awaits ? s->running->awaits(s->running, out, max) : 0;
  pthread_mutex_unlock(&s->lock);
  return n < 0 ? 0 : n;
}

static cudaError_t wait_room(sim_stream *s, const sim_op *op) {
  sim_block b;
  sim_block_init(&b, front_awaits, s, "an enqueue of %s on a full stream %p (device %d, NCCLSIM_STREAM_DEPTH=%s)",
                 op->what, (void *)s, s->device, sim_param_text(SIM_P_STREAM_DEPTH));
  char why[384];
  int rc = sim_block_wait(&b, &s->done_wq, has_room, s, sim_deadline(), why, sizeof why);
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
  if (!op->unbounded && sim_param_int(SIM_P_STREAM_DEPTH) > 0 && !has_room(s)) {
    cudaError_t err = wait_room(s, op);
    if (err != cudaSuccess) return err;
  }
  sim_mutex_lock(&s->lock);
  if (!s->started) {
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
    s->started = true;
  }
  if (s->tail) s->tail->next = op;
  else s->head = op;
  s->tail = op;
  if (!op->unbounded) atomic_fetch_add_explicit(&s->bounded_enqueued, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&s->enqueued, 1, memory_order_release);
  pthread_mutex_unlock(&s->lock);
  sim_waitq_wake(&s->work_wq);
  return cudaSuccess;
}

cudaError_t sim_stream_enqueue_marker(sim_stream *s, sim_marker *m) {
  m->op.run = marker_run;
  return sim_stream_enqueue(s, &m->op);
}

typedef struct {
  sim_stream *s;
  uint64_t target;
} drain_arg;

static bool drained(void *arg) {
  drain_arg *d = arg;
  return atomic_load_explicit(&d->s->completed, memory_order_acquire) >= d->target;
}

cudaError_t sim_stream_drain(sim_stream *s) {
  drain_arg d = {s, atomic_load(&s->enqueued)};
  /* Every op that can block has its own deadline, so this wait ends. */
  sim_waitq_wait(&s->done_wq, drained, &d, NULL, UINT64_MAX);
  return (cudaError_t)atomic_exchange(&s->err, cudaSuccess);
}

/* Drains every stream of a device. */
static cudaError_t device_drain(int device) {
  /* Snapshot the device's live streams, then drain each outside the lock. */
  sim_stream *list[256];
  int n = 0;
  cudaError_t first = cudaSuccess;
  sim_stream *d = default_stream(device);
  if (d) first = sim_stream_drain(d);
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
          cudaError_t e = sim_stream_drain(list[i]);
          if (first == cudaSuccess) first = e;
        }
        n = 0;
      }
    }
  }
  for (int i = 0; i < n; i++) {
    cudaError_t e = sim_stream_drain(list[i]);
    if (first == cudaSuccess) first = e;
  }
  return first;
}

SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *ps, unsigned int flags) {
  if (!ps || (flags & ~(unsigned)cudaStreamNonBlocking)) return sim_cuda_error(cudaErrorInvalidValue);
  sim_mutex_lock(&streams_lock);
  sim_stream *s = stream_make(sim_current_device(), flags, false);
  pthread_mutex_unlock(&streams_lock);
  if (!s) return sim_cuda_error(cudaErrorMemoryAllocation);
  *ps = s;
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
  /* CUDA lets queued work finish after destroy returns; we finish it first,
   * which callers cannot tell apart except by timing. */
  sim_stream_drain(s);
  atomic_store(&s->magic, 0);
  sim_mutex_lock(&s->lock);
  bool started = s->started;
  pthread_mutex_unlock(&s->lock);
  if (started) {
    atomic_store(&s->stop, 1);
    sim_waitq_wake(&s->work_wq);
    pthread_join(s->worker, NULL);
  }
  sim_mutex_lock(&streams_lock);
  s->started = false; /* back in the pool */
  pthread_mutex_unlock(&streams_lock);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t h) {
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  return sim_cuda_error(sim_stream_drain(s));
}

SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t h) {
  cudaError_t err;
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  /* Under the lock, as a marker is counted (worker_main). */
  sim_mutex_lock(&s->lock);
  bool idle = atomic_load(&s->completed) == atomic_load(&s->enqueued);
  pthread_mutex_unlock(&s->lock);
  if (!idle) return cudaErrorNotReady;
  return sim_cuda_error((cudaError_t)atomic_exchange(&s->err, cudaSuccess));
}

typedef struct {
  sim_op op;
  cudaHostFn_t fn;
  void *arg;
} host_fn_op;

static cudaError_t host_fn_run(sim_op *op, cudaError_t err) {
  host_fn_op *h = (host_fn_op *)op;
  if (err == cudaSuccess) h->fn(h->arg);
  return cudaSuccess;
}

static void op_free(sim_op *op) { sim_free(op); }

SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t h, cudaHostFn_t fn, void *arg) {
  cudaError_t err;
  if (!fn) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(h, &err);
  if (!s) return sim_cuda_error(err);
  host_fn_op *op = sim_calloc(1, sizeof *op);
  if (!op) return sim_cuda_error(cudaErrorMemoryAllocation);
  op->op.run = host_fn_run;
  op->op.release = op_free;
  op->op.what = "cudaLaunchHostFunc";
  op->op.unbounded = true; /* CUDA takes any number (measured: 3000 behind a blocked kernel) */
  op->fn = fn;
  op->arg = arg;
  if ((err = sim_stream_enqueue(s, &op->op)) != cudaSuccess) sim_free(op);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaDeviceSynchronize(void) { return sim_cuda_error(device_drain(sim_current_device())); }
