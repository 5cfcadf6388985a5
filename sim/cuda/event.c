/*
 * sim/cuda/event.c — events: positions in a stream's queue.
 *
 * Recording enqueues a marker (cuda_internal.h); when the stream reaches
 * it, the event's completed generation catches up with the recorded one
 * and its time is taken, in the same step as the stream counts the record
 * done. Like streams, event objects are pooled, never unmapped.
 */
#include "cuda_internal.h"

#define EVENT_MAGIC 0x45564e54u

struct CUevent_st {
  _Atomic uint32_t magic;
  unsigned flags;
  _Atomic uint64_t recorded;  /* generation of the last record call */
  _Atomic uint64_t completed; /* generation the stream has reached */
  _Atomic uint64_t time_ns;   /* when `completed` was reached */
  pthread_mutex_t lock;       /* orders completions from several streams */
  sim_waitq wq;
  struct CUevent_st *next_all;
  uint64_t gen; /* its creations so far: an interprocess handle names one (ipc.c) */
  /* An event opened from an interprocess handle stands for another
   * process's event: `target`, while that one is at generation
   * target_gen. */
  struct CUevent_st *target;
  uint64_t target_gen;
};

static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUevent_st *all_events;

/* Events are the process's own (see stream.c). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&events_lock, NULL);
  all_events = NULL;
}
__attribute__((constructor)) static void event_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

static struct CUevent_st *resolve_handle(cudaEvent_t e) {
  if (!e || atomic_load(&e->magic) != EVENT_MAGIC) {
    SIM_WARN(SIM_STREAM, "event %p is not a live event", (void *)e);
    return NULL;
  }
  return e;
}

/* The event a handle's operations act on: itself, or the exporter's for
 * an event opened from an interprocess handle. */
static struct CUevent_st *resolve(cudaEvent_t h) {
  struct CUevent_st *e = resolve_handle(h);
  if (!e || !e->target) return e;
  struct CUevent_st *t = e->target;
  if (atomic_load(&t->magic) != EVENT_MAGIC || t->gen != e->target_gen) {
    SIM_WARN(SIM_STREAM, "event %p was opened from an interprocess handle, and its exporter has destroyed the event "
             "since (undefined in CUDA)", (void *)h);
    return NULL;
  }
  return t;
}

SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *pe, unsigned int flags) {
  if (!pe || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess)))
    return sim_cuda_error(cudaErrorInvalidValue);
  /* CUDA's rule: an interprocess event cannot time. */
  if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return sim_cuda_error(cudaErrorInvalidValue);
  sim_mutex_lock(&events_lock);
  struct CUevent_st *e = NULL;
  for (struct CUevent_st *p = all_events; p; p = p->next_all)
    if (atomic_load(&p->magic) == 0) {
      e = p;
      break;
    }
  if (!e) {
    e = sim_calloc(1, sizeof *e);
    if (!e) {
      pthread_mutex_unlock(&events_lock);
      return sim_cuda_error(cudaErrorMemoryAllocation);
    }
    sim_mutex_init(&e->lock);
    e->next_all = all_events;
    all_events = e;
  }
  e->flags = flags;
  e->gen++;
  e->target = NULL;
  atomic_store(&e->recorded, 0);
  atomic_store(&e->completed, 0);
  atomic_store(&e->time_ns, 0);
  atomic_store(&e->magic, EVENT_MAGIC);
  pthread_mutex_unlock(&events_lock);
  *pe = e;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *pe) { return cudaEventCreateWithFlags(pe, cudaEventDefault); }

SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t h) {
  struct CUevent_st *e = resolve_handle(h);
  if (!e) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  sim_capture_event_forget(e);
  /* A pending record op still points at e; the object stays mapped and a
   * late completion only bumps counters of a pooled event, which a reuse
   * resets under events_lock. Wait for it anyway so reuse starts clean
   * (an opened event's records act on its exporter's, not on e). */
  if (!e->target) cudaEventSynchronize(h);
  atomic_store(&e->magic, 0);
  return cudaSuccess;
}

typedef struct {
  sim_marker m;
  struct CUevent_st *e;
  uint64_t gen;
} record_op;

/* Runs under the stream's lock (sim_marker): takes the event's own lock,
 * never events_lock, which cudaEventRecord holds while it enqueues. */
static void record_mark(sim_marker *m) {
  record_op *r = (record_op *)m;
  uint64_t now = sim_now_ns();
  /* Records on two streams may complete out of order; an earlier one
   * completing late must not move the event's time (or state) back. The
   * time is stored before the generation that publishes it. */
  sim_mutex_lock(&r->e->lock);
  if (atomic_load(&r->e->completed) < r->gen) {
    atomic_store(&r->e->time_ns, now);
    atomic_store(&r->e->completed, r->gen);
  }
  pthread_mutex_unlock(&r->e->lock);
  sim_waitq_wake(&r->e->wq);
}

static void op_free(sim_op *op) { sim_free(op); }

static cudaError_t record(cudaEvent_t h, cudaStream_t sh, unsigned flags) {
  cudaError_t err;
  struct CUevent_st *e = resolve(h);
  if (!e) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  sim_stream *s = sim_stream_resolve(sh, &err);
  if (!s) return sim_cuda_error(err);
  /* In a capture the event marks a place in its graph (capture.c). */
  if (sim_stream_capturing(s)) return sim_cuda_error(sim_capture_event_record(s, e, flags));
  sim_capture_event_forget(e);
  record_op *r = sim_calloc(1, sizeof *r);
  if (!r) return sim_cuda_error(cudaErrorMemoryAllocation);
  r->m.mark = record_mark;
  r->m.op.release = op_free;
  r->m.op.what = "cudaEventRecord";
  r->m.op.unbounded = true; /* CUDA takes any number (measured) */
  r->e = e;
  /* Under events_lock, so that a record the stream refuses (its worker
   * cannot start) is taken back before anyone else records: the event keeps
   * its previous state instead of waiting forever for a record that never
   * runs. */
  sim_mutex_lock(&events_lock);
  r->gen = atomic_fetch_add(&e->recorded, 1) + 1;
  err = sim_stream_enqueue_marker(s, &r->m);
  if (err != cudaSuccess) atomic_fetch_sub(&e->recorded, 1);
  pthread_mutex_unlock(&events_lock);
  if (err != cudaSuccess) sim_free(r);
  return sim_cuda_error(err);
}

SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t h, cudaStream_t sh) { return record(h, sh, 0); }

SIM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t h, cudaStream_t sh, unsigned int flags) {
  if (flags & ~(unsigned)cudaEventRecordExternal) return sim_cuda_error(cudaErrorInvalidValue);
  return record(h, sh, flags);
}

bool sim_event_valid(cudaEvent_t h) { return h && atomic_load(&h->magic) == EVENT_MAGIC; }

typedef struct {
  struct CUevent_st *e;
  uint64_t gen;
} gen_arg;

static bool reached(void *arg) {
  gen_arg *g = arg;
  return atomic_load(&g->e->completed) >= g->gen;
}

SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t h) {
  struct CUevent_st *e = resolve(h);
  if (!e) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  cudaError_t cap = sim_capture_event_check(e, "cudaEventSynchronize");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  gen_arg g = {e, atomic_load(&e->recorded)};
  sim_waitq_wait(&e->wq, reached, &g, NULL, UINT64_MAX);
  sim_cuda_synced(sim_current_device());
  cudaError_t sticky = sim_cuda_sticky(sim_current_device());
  if (sticky != cudaSuccess) return sim_cuda_error(sticky);
  sim_mempool_synced(); /* pools release what exceeds their threshold */
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t h) {
  struct CUevent_st *e = resolve(h);
  if (!e) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  cudaError_t cap = sim_capture_event_check(e, "cudaEventQuery");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  return atomic_load(&e->completed) >= atomic_load(&e->recorded) ? cudaSuccess : cudaErrorNotReady;
}

SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
  struct CUevent_st *s = resolve(a), *t = resolve(b);
  if (!ms) return sim_cuda_error(cudaErrorInvalidValue);
  if (!s || !t) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  cudaError_t cap = sim_capture_event_check(s, "cudaEventElapsedTime");
  if (cap == cudaSuccess) cap = sim_capture_event_check(t, "cudaEventElapsedTime");
  if (cap != cudaSuccess) return sim_cuda_error(cap);
  if ((s->flags | t->flags) & cudaEventDisableTiming) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  if (!atomic_load(&s->recorded) || !atomic_load(&t->recorded)) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  if (atomic_load(&s->completed) < atomic_load(&s->recorded) ||
      atomic_load(&t->completed) < atomic_load(&t->recorded))
    return sim_cuda_error(cudaErrorNotReady);
  *ms = (float)(((double)atomic_load(&t->time_ns) - (double)atomic_load(&s->time_ns)) / 1e6);
  return cudaSuccess;
}

typedef struct {
  sim_op op;
  gen_arg g;
} wait_event_op;

static cudaError_t wait_event_run(sim_op *op, cudaError_t err) {
  wait_event_op *w = (wait_event_op *)op;
  /* Bounded: the recorded position is reached once the ops before it ran,
   * and each of those has its own deadline. */
  sim_waitq_wait(&w->g.e->wq, reached, &w->g, NULL, UINT64_MAX);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t sh, cudaEvent_t h, unsigned int flags) {
  cudaError_t err;
  struct CUevent_st *e = resolve(h);
  if (!e) return sim_cuda_error(cudaErrorInvalidResourceHandle);
  if (flags & ~(unsigned)cudaEventWaitExternal) return sim_cuda_error(cudaErrorInvalidValue);
  sim_stream *s = sim_stream_resolve(sh, &err);
  if (!s) return sim_cuda_error(err);
  /* A fork or a join of a capture, or a wait node in one (capture.c). */
  bool done;
  err = sim_capture_event_wait(s, e, flags, atomic_load(&e->recorded) != 0, &done);
  if (done) return sim_cuda_error(err);
  /* cudaEventWaitExternal belongs to graph capture: CUDA answers it
   * outside a capture with cudaErrorIllegalState. */
  if (flags == cudaEventWaitExternal) return sim_cuda_error(cudaErrorIllegalState);
  uint64_t gen = atomic_load(&e->recorded);
  if (gen == 0 || atomic_load(&e->completed) >= gen) return cudaSuccess; /* nothing to wait for */
  wait_event_op *w = sim_calloc(1, sizeof *w);
  if (!w) return sim_cuda_error(cudaErrorMemoryAllocation);
  w->op.run = wait_event_run;
  w->op.release = op_free;
  w->op.what = "cudaStreamWaitEvent";
  w->op.unbounded = true; /* NCCL adds one per operation and still gets ~1021 operations in */
  w->g = (gen_arg){e, gen};
  if ((err = sim_stream_enqueue(s, &w->op)) != cudaSuccess) sim_free(w);
  return sim_cuda_error(err);
}

cudaError_t sim_event_export(cudaEvent_t h, void **obj, uint64_t *gen) {
  struct CUevent_st *e = resolve_handle(h);
  if (!e) return cudaErrorInvalidResourceHandle;
  if (e->target) { /* handed on: the handle names the exporter's own event */
    if (!resolve(h)) return cudaErrorInvalidResourceHandle;
    *obj = e->target;
    *gen = e->target_gen;
    return cudaSuccess;
  }
  if (!(e->flags & cudaEventInterprocess)) {
    SIM_WARN(SIM_STREAM, "cudaIpcGetEventHandle: event %p was not created with cudaEventInterprocess", (void *)h);
    return cudaErrorInvalidResourceHandle;
  }
  *obj = e;
  *gen = e->gen;
  return cudaSuccess;
}

cudaError_t sim_event_import(cudaEvent_t *out, void *obj, uint64_t gen) {
  struct CUevent_st *t = obj;
  if (atomic_load(&t->magic) != EVENT_MAGIC || t->gen != gen || !(t->flags & cudaEventInterprocess)) {
    SIM_WARN(SIM_STREAM, "cudaIpcOpenEventHandle: the exporting process has destroyed the event %p", obj);
    return cudaErrorInvalidResourceHandle;
  }
  cudaEvent_t h;
  cudaError_t err = cudaEventCreateWithFlags(&h, cudaEventInterprocess | cudaEventDisableTiming);
  if (err != cudaSuccess) return err;
  h->target = t;
  h->target_gen = gen;
  *out = h;
  return cudaSuccess;
}
