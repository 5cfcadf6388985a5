/*
 * sim/core/trace.c — the timeline of NCCL operations and the flight
 * recorder, both written in the Chrome Trace Event Format (Perfetto,
 * chrome://tracing) through jansson.
 *
 * Every rank of a clique has a ring of its last NCCLSIM_TRACE_RING
 * operations: a stream worker takes a slot before it posts a task and
 * fills in its end after the wait, under the ring's lock (a few stores).
 * The lock is a spinlock: only that rank's workers take it, for a few
 * stores (or, with NCCLSIM_TRACE, an append), and a mutex's two atomic
 * operations per side, robust and process-shared with ranks as processes,
 * were a large part of an operation's cost. A dump from another process
 * gives up on a ring whose holder stays away (it may have died).
 * On an incident (a timeout, a mismatched collective, an NCCLSIM_FAULT
 * stop, ncclCommAbort, SIGUSR1) every live clique's rings go to
 * NCCLSIM_TRACE_DUMP; operations still running show as such.
 *
 * With NCCLSIM_TRACE=FILE at a clique's creation, its operations are also
 * appended, with their describe() text, to one process-wide list under a
 * briefly held lock, and FILE is written at exit. With ranks as processes
 * each process writes its own ranks; the clique is freed by whichever
 * process leaves it last, which hands the other processes' unwritten
 * timelines to the registry for them to take at their next flush.
 *
 * The file: a process (pid) per communicator, a thread (tid) per rank and
 * stream (rank * 100 + the stream's index for that rank); an X event per
 * operation, an instant event per enqueue, flow events from a send to its
 * receive, from a put or signal to the wait that consumes it (waits with
 * one descriptor; at most WAIT_FLOWS_MAX flows a wait, its last signals)
 * and from rank 0's collective to the other ranks' (flow ids made from the
 * communicator, the ranks and the pairing number).
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "../kernel/kernel.h"
#include "core_internal.h"
#ifdef HAVE_JANSSON
#include <jansson.h>
#endif

enum { EV_X = 0, EV_ENQ = 1 };
enum { F_PEER = 1, F_SEQ = 2, F_SEND = 4, F_RECV = 8, F_COLL = 16, F_SIG = 32, F_WAIT = 64, F_DEV = 128, F_KERNEL = 256 };
/* The track of a rank's kernels' device-API events (sim_trace_device). */
static const char device_track;
/* A wait's flows drawn at most: one per signal it consumes. */
enum { WAIT_FLOWS_MAX = 256 };

/* One operation in a ring. */

typedef struct {
  const char *name; /* static: sim_task_ops.name */
  const void *stream;
  uint64_t t0, t1; /* sim_ticks(); t1 == 0: still running */
  uint64_t seq, id; /* id: the slot's number, to tell a reused slot */
  uint32_t span;    /* a wait: the signals it consumes, seq the last */
  size_t bytes;
  int peer, result;
  unsigned flags;
} trace_rec;

/* An event of the timeline (or of a dump, desc empty). */
typedef struct {
  trace_rec r;
  uint64_t key;
  int rank, nranks;
  int ph; /* EV_X, EV_ENQ */
  char desc[192];
} trace_ev;

/* The timeline, per rank in chunks: appending never moves what is kept. */
enum { CHUNK_EVENTS = 1024 };
typedef struct ev_chunk {
  struct ev_chunk *next;
  size_t n;
  int pid; /* the process whose rank wrote it, the one to write it out */
  trace_ev ev[CHUNK_EVENTS];
} ev_chunk;

/* A cache line of its own: each rank's workers write their ring at every
 * operation, and neighbours sharing a line would bounce it between them. */
typedef struct {
  _Alignas(64) _Atomic int lock;
  int pid;       /* the process of the rank's timeline (ranks as processes) */
  _Atomic int device; /* the rank's device in this process, + 1 (0: none here) */
  uint64_t head; /* records written so far */
  size_t pos;    /* head % cap, kept without a division (two a record cost 10 ns) */
  trace_rec *rec;
  ev_chunk *first, *last; /* its timeline, NCCLSIM_TRACE */
} rank_ring;

typedef struct trace_clique {
  struct trace_clique *prev, *next; /* the registry, under reg_lock */
  uint64_t key;
  int nranks;
  bool full;   /* NCCLSIM_TRACE was set at creation */
  size_t cap;  /* ring size (0: no ring) */
  _Atomic int dumped;
  rank_ring ring[];
} trace_clique;

static inline void relax(int i) {
  if (i < 64) sim_cpu_relax();
  else sched_yield();
}

static void ring_lock(rank_ring *rg) {
  for (int i = 0; atomic_exchange_explicit(&rg->lock, 1, memory_order_acquire); i++)
    while (atomic_load_explicit(&rg->lock, memory_order_relaxed)) relax(i++);
}

static void ring_unlock(rank_ring *rg) { atomic_store_explicit(&rg->lock, 0, memory_order_release); }

/* The lock, unless its holder keeps it past ns (a dump, which must not
 * hang on a rank whose process died holding it). */
static bool ring_lock_within(rank_ring *rg, uint64_t ns) {
  uint64_t until = 0;
  for (int i = 0; atomic_exchange_explicit(&rg->lock, 1, memory_order_acquire); i++) {
    if (i == 64) until = sim_now_ns() + ns;
    if (i > 64 && sim_now_ns() > until) return false;
    relax(i);
  }
  return true;
}

/* The registry of cliques with a recorder: shared by the processes of a
 * job (util/shm.c), since any of them may create or free a clique. */
typedef struct {
  pthread_mutex_t lock;
  uint64_t t_base; /* first clique's creation in the job, in sim_ticks(): time 0 of every file */
  trace_clique head;
  /* Timelines of freed cliques' ranks whose processes have not written
   * them yet (a process that dies first leaves its chunks in the arena). */
  ev_chunk *orphans;
} trace_registry;
static void registry_init(void *p) {
  trace_registry *r = p;
  sim_mutex_init(&r->lock);
  r->head.prev = r->head.next = &r->head;
}
static trace_registry *registry(void) { return sim_shared(SIM_SHARED_TRACE, sizeof(trace_registry), registry_init); }
#define reg_lock (registry()->lock)
#define reg_head (registry()->head)
#define t_base (registry()->t_base)

static pthread_mutex_t full_lock = PTHREAD_MUTEX_INITIALIZER;
/* Chunks of the cliques destroyed, and of the live ones at a flush. */
static ev_chunk *full_head, *full_tail;
static char full_path[1024];
static bool atexit_set;
static _Atomic int full_here; /* this process has set full_path and atexit */
#ifndef HAVE_JANSSON
static bool warned_no_json;
#endif

static volatile sig_atomic_t usr1_flag;
static _Atomic int usr1_pending;

static void on_usr1(int sig SIM_UNUSED) {
  usr1_flag = 1;
  atomic_store(&usr1_pending, 1);
}

static bool full_written; /* by sim_trace_flush: at exit, only what came after */

static int flush(bool always);
static void at_exit(void) { flush(false); }

static bool param_off(const char *v) { return !v || !v[0] || !strcmp(v, "none"); }

/* A file name with %p replaced by the process id. With ranks as processes
 * each process writes its own ranks: `pid_always` puts the pid in a name
 * that has no %p (before a last ".json"), so that the files do not collide
 * (tools/ncclsim-trace-merge makes one of them). */
static void expand_path(char *out, size_t len, const char *fmt, bool pid_always) {
  size_t o = 0;
  bool had = false;
  for (const char *s = fmt; *s && o + 24 < len; s++) {
    if (s[0] == '%' && s[1] == 'p') {
      o += (size_t)snprintf(out + o, len - o, "%d", (int)getpid());
      had = true;
      s++;
    } else {
      out[o++] = *s;
    }
  }
  out[o] = 0;
  if (!pid_always || had) return;
  size_t n = strlen(out);
  bool json = n >= 5 && !strcmp(out + n - 5, ".json");
  char tail[8] = "";
  if (json) {
    strcpy(tail, ".json");
    out[n - 5] = 0;
  }
  size_t m = strlen(out);
  snprintf(out + m, len - m, ".%d%s", (int)getpid(), tail);
}

ncclResult_t sim_trace_clique_init(sim_clique *c) {
  int64_t cap = sim_param_int(SIM_P_TRACE_RING);
  const char *path = sim_param_text(SIM_P_TRACE);
  bool full = !param_off(path);
#ifndef HAVE_JANSSON
  if (full || cap > 0) {
    sim_mutex_lock(&reg_lock);
    if (full && !warned_no_json)
      SIM_WARN(SIM_INIT, "NCCLSIM_TRACE=%s ignored: ncclsim was built without jansson, which writes traces", path);
    warned_no_json = true;
    pthread_mutex_unlock(&reg_lock);
  }
  full = false;
  cap = 0;
#endif
  if (cap < 0) cap = 0;
  size_t tc_bytes = sizeof(trace_clique) + (size_t)c->nranks * sizeof(rank_ring);
  trace_clique *tc = sim_aligned_alloc(64, tc_bytes);
  if (!tc) return ncclSystemError;
  memset(tc, 0, tc_bytes);
  tc->key = c->key;
  tc->nranks = c->nranks;
  tc->full = full;
  tc->cap = (size_t)cap;
  for (int r = 0; r < c->nranks; r++) {
    if (cap && !(tc->ring[r].rec = sim_calloc((size_t)cap, sizeof(trace_rec)))) {
      for (int q = 0; q <= r; q++) sim_free(tc->ring[q].rec);
      sim_free(tc);
      return ncclSystemError;
    }
  }
  sim_mutex_lock(&reg_lock);
  if (!t_base) t_base = sim_ticks();
  tc->next = &reg_head;
  tc->prev = reg_head.prev;
  tc->prev->next = tc;
  reg_head.prev = tc;
  if (full) {
    sim_mutex_lock(&full_lock);
    expand_path(full_path, sizeof full_path, path, sim_shm_on());
    pthread_mutex_unlock(&full_lock);
    if (!atexit_set) atexit(at_exit);
    atexit_set = true;
  }
  if (tc->cap) {
    /* SIGUSR1 dumps the rings, unless the program handles it itself
     * (its default action would kill the process). */
    struct sigaction old;
    if (sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_usr1;
      sa.sa_flags = SA_RESTART;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGUSR1, &sa, NULL);
    }
  }
  pthread_mutex_unlock(&reg_lock);
  c->trace = tc;
  return ncclSuccess;
}

/* Moves the ranks' timelines to the process's list (full_lock held). */
static void splice(trace_clique *tc) {
  for (int r = 0; r < tc->nranks; r++) {
    rank_ring *rg = &tc->ring[r];
    ring_lock(rg);
    if (rg->first && rg->pid == (int)getpid()) { /* each process writes its own ranks */
      if (full_tail) full_tail->next = rg->first;
      else full_head = rg->first;
      full_tail = rg->last;
      rg->first = rg->last = NULL;
    }
    ring_unlock(rg);
  }
}

/* A freed clique's timelines of other processes' ranks, which those
 * processes write at their next flush, go to the registry's orphans
 * (reg_lock held; splice has taken this process's). Their ranks have left
 * the clique, so no worker appends meanwhile. */
static void orphan(trace_clique *tc) {
  for (int r = 0; r < tc->nranks; r++) {
    rank_ring *rg = &tc->ring[r];
    if (!rg->first) continue;
    rg->last->next = registry()->orphans;
    registry()->orphans = rg->first;
    rg->first = rg->last = NULL;
  }
}

/* Takes this process's orphans onto its list, in their order (reg_lock and
 * full_lock held). */
static void adopt(void) {
  int me = (int)getpid();
  for (ev_chunk **p = &registry()->orphans, *k; (k = *p);) {
    if (k->pid != me) {
      p = &k->next;
      continue;
    }
    *p = k->next;
    k->next = NULL;
    if (full_tail) full_tail->next = k;
    else full_head = k;
    full_tail = k;
  }
}

void sim_trace_clique_fini(sim_clique *c) {
  trace_clique *tc = c->trace;
  if (!tc) return;
  sim_mutex_lock(&reg_lock);
  tc->prev->next = tc->next;
  tc->next->prev = tc->prev;
  sim_mutex_lock(&full_lock);
  splice(tc);
  pthread_mutex_unlock(&full_lock);
  orphan(tc);
  pthread_mutex_unlock(&reg_lock);
  for (int r = 0; r < tc->nranks; r++) sim_free(tc->ring[r].rec);
  sim_free(tc);
  c->trace = NULL;
}

static void fill_rec(trace_rec *r, sim_task *t) {
  r->name = t->ops->name;
  r->stream = t->stream;
  r->bytes = t->bytes;
  r->peer = t->peer;
  r->seq = t->seq;
  r->span = t->seq_span;
  r->flags = (t->has_peer ? F_PEER : 0) | (t->has_seq ? F_SEQ : 0) | (t->conn == SIM_CONN_SEND ? F_SEND : 0) |
             (t->conn == SIM_CONN_RECV ? F_RECV : 0) | (t->conn == SIM_CONN_COLL ? F_COLL : 0) |
             (t->ops->cost == SIM_COST_RMA_PUT ? F_SIG : 0) | (t->ops->cost == SIM_COST_RMA_WAIT ? F_WAIT : 0);
}

/* Appends to the rank's timeline, under its ring's lock: the lock is
 * shared only by the threads that drive that rank. */
static void full_append(trace_clique *tc, const trace_ev *e) {
  rank_ring *rg = &tc->ring[e->rank];
  if (!atomic_load_explicit(&full_here, memory_order_acquire)) {
    /* This process's first event: with ranks as processes it may not be
     * the one that made the clique, and it writes its own file at exit. */
    sim_mutex_lock(&full_lock);
    if (!full_path[0]) expand_path(full_path, sizeof full_path, sim_param_text(SIM_P_TRACE), sim_shm_on());
    if (!atexit_set) atexit(at_exit);
    atexit_set = true;
    pthread_mutex_unlock(&full_lock);
    atomic_store_explicit(&full_here, 1, memory_order_release);
  }
  ring_lock(rg);
  rg->pid = (int)getpid();
  if (!rg->last || rg->last->n == CHUNK_EVENTS) {
    ev_chunk *k = sim_malloc(sizeof *k);
    if (!k) {
      ring_unlock(rg);
      return;
    }
    k->next = NULL;
    k->n = 0;
    k->pid = rg->pid;
    if (rg->last) rg->last->next = k;
    else rg->first = k;
    rg->last = k;
  }
  rg->last->ev[rg->last->n++] = *e;
  ring_unlock(rg);
}

void sim_trace_enqueue(sim_task *t) {
  trace_clique *tc = t->comm->clique->trace;
  if (!tc || !tc->full) return;
  trace_ev e;
  memset(&e, 0, sizeof e);
  fill_rec(&e.r, t);
  e.r.t0 = e.r.t1 = sim_ticks();
  e.key = tc->key;
  e.rank = t->comm->rank;
  e.nranks = tc->nranks;
  e.ph = EV_ENQ;
  full_append(tc, &e);
}

/* The worker's last end travels in its ops (sim_op.stamp), not in a
 * thread-local: a library's thread-locals cost a call to __tls_get_addr
 * each (three an operation, on the path from a peer's signal to the
 * answer), and the initial-exec model, which would not, marks the library
 * STATIC_TLS, whose 3 KiB then no longer fit the reserve glibc keeps for
 * libraries loaded with dlopen (Python's ctypes failed with "cannot
 * allocate memory in static TLS block"; tests/dlopen-tls.sh). */
void sim_trace_begin(sim_task *t, uint64_t *stamp) {
  trace_clique *tc = t->comm->clique->trace;
  if (!tc) return;
  uint64_t now = *stamp ? *stamp : sim_ticks();
  *stamp = 0;
  t->trace_slot = now; /* the start, for the timeline */
  if (!tc->cap) return;
  rank_ring *rg = &tc->ring[t->comm->rank];
  ring_lock(rg);
  uint64_t id = rg->head++;
  size_t pos = rg->pos;
  rg->pos = pos + 1 == tc->cap ? 0 : pos + 1;
  trace_rec *r = &rg->rec[pos];
  fill_rec(r, t);
  r->t0 = now;
  r->t1 = 0;
  r->id = id;
  r->result = -1;
  ring_unlock(rg);
  t->trace_slot = id;
  t->trace_pos = pos;
}

void sim_trace_end(sim_task *t, uint64_t *stamp) {
  trace_clique *tc = t->comm->clique->trace;
  if (!tc) return;
  if (t->trace_slot == UINT64_MAX) { /* not run: it begins and ends now */
    *stamp = 0;
    sim_trace_begin(t, stamp);
  }
  t->trace_end = *stamp = sim_ticks();
}

void sim_trace_close(sim_task *t) {
  trace_clique *tc = t->comm->clique->trace;
  if (!tc || !t->trace_end) return;
  uint64_t now = t->trace_end, t0 = now;
  t->trace_end = 0;
  if (tc->cap) {
    rank_ring *rg = &tc->ring[t->comm->rank];
    ring_lock(rg);
    trace_rec *r = &rg->rec[t->trace_pos];
    if (r->id == t->trace_slot && r->t0 && !r->t1) {
      t0 = r->t0;
      r->t1 = now > r->t0 ? now : r->t0 + 1;
      r->result = (int)t->result;
      r->seq = t->seq; /* a collective or a wait numbered after its post */
      r->span = t->seq_span;
      if (t->has_seq) r->flags |= F_SEQ;
    }
    ring_unlock(rg);
  } else {
    t0 = t->trace_slot ? t->trace_slot : now;
  }
  if (!tc->full) return;
  trace_ev e;
  memset(&e, 0, sizeof e);
  fill_rec(&e.r, t);
  e.r.t0 = t0;
  e.r.t1 = now > t0 ? now : t0 + 1;
  e.r.result = (int)t->result;
  e.key = tc->key;
  e.rank = t->comm->rank;
  e.nranks = tc->nranks;
  e.ph = EV_X;
  t->ops->describe(t, e.desc, sizeof e.desc);
  full_append(tc, &e);
}

bool sim_trace_timeline(const sim_clique *c) {
  const trace_clique *tc = c->trace;
  return tc && tc->full;
}

/* A kernel that ran on `device` (kernel/grid.c's hook): a span on the
 * kernels' track of each traced rank of this process on that device. */
static void trace_kernel(int device, const char *name, uint64_t t0, uint64_t t1, const char *desc) {
  sim_mutex_lock(&reg_lock);
  for (trace_clique *tc = reg_head.next; tc != &reg_head; tc = tc->next)
    if (tc->full)
      for (int r = 0; r < tc->nranks; r++)
        if (atomic_load_explicit(&tc->ring[r].device, memory_order_relaxed) == device + 1) {
          trace_ev e;
          memset(&e, 0, sizeof e);
          e.r.name = name;
          e.r.stream = &device_track;
          e.r.t0 = t0;
          e.r.t1 = t1 > t0 ? t1 : t0 + 1;
          e.r.peer = -1;
          e.r.result = ncclSuccess;
          e.r.flags = F_DEV | F_KERNEL;
          e.key = tc->key;
          e.rank = r;
          e.nranks = tc->nranks;
          e.ph = EV_X;
          snprintf(e.desc, sizeof e.desc, "%s", desc);
          full_append(tc, &e);
        }
  pthread_mutex_unlock(&reg_lock);
}

void sim_trace_rank_device(sim_clique *c, int rank, int device) {
  trace_clique *tc = c->trace;
  if (!tc || rank < 0 || rank >= tc->nranks || device < 0) return;
  atomic_store(&tc->ring[rank].device, device + 1);
  if (tc->full) sim_k_trace_hook(trace_kernel); /* kernels cost a clock read from now on */
}

void sim_trace_device(sim_clique *c, int rank, const char *name, uint64_t t0, uint64_t t1, int peer, size_t bytes,
                      const char *desc) {
  trace_clique *tc = c->trace;
  if (!tc || !tc->full || rank < 0 || rank >= tc->nranks) return;
  trace_ev e;
  memset(&e, 0, sizeof e);
  e.r.name = name;
  e.r.stream = &device_track;
  e.r.t0 = t0;
  e.r.t1 = t1 > t0 ? t1 : t0 + 1;
  e.r.bytes = bytes;
  e.r.peer = peer;
  e.r.result = ncclSuccess;
  e.r.flags = F_DEV | (peer >= 0 ? F_PEER : 0);
  e.key = tc->key;
  e.rank = rank;
  e.nranks = tc->nranks;
  e.ph = EV_X;
  snprintf(e.desc, sizeof e.desc, "%s", desc ? desc : "");
  full_append(tc, &e);
}

/* ------------------------------------------------------------ writing */

#ifdef HAVE_JANSSON
/* Flow ids: a send and its receive share (key, sender, receiver, nth), a
 * signal and its wait the same with a kind of their own (pair_flow); a
 * collective's ranks (key, seq, rank). */
static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}
enum { FLOW_P2P = 1, FLOW_COLL = 2, FLOW_SIG = 3 };
static uint64_t pair_flow(uint64_t key, int kind, int from, int to, uint64_t nth) {
  return mix(mix(mix(mix(key, (uint64_t)kind), (uint64_t)from), (uint64_t)to), nth);
}
static json_t *flow_id(uint64_t h) { return json_integer((json_int_t)(h & 0x1fffffffffffffull)); }

typedef struct {
  uint64_t key;
  int rank;
  const void *stream;
} track;

/* sim_ticks() per ns, for us(): set as a file is written (under reg_lock). */
static double tick_ns = 1.0;
static double us(uint64_t ticks) { return ticks > t_base ? (double)(ticks - t_base) / tick_ns / 1000.0 : 0.0; }

static const char *result_name(int r) {
  return r < 0 ? "in progress" : r == ncclSuccess ? "ncclSuccess" : ncclGetErrorString((ncclResult_t)r);
}

/* The file is written an event at a time: a timeline of millions of
 * operations never becomes one JSON tree. */
typedef struct {
  FILE *f;
  bool first;
} writer;

static void emit(writer *w, json_t *o) {
  if (!o) return;
  fputs(w->first ? "\n" : ",\n", w->f);
  w->first = false;
  json_dumpf(o, w->f, JSON_COMPACT);
  json_decref(o);
}

static void add_flow(writer *w, const char *ph, uint64_t id, int pid, int tid, double ts) {
  json_t *f = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f}", "name", "match", "cat", "nccl", "ph", ph, "pid", pid,
                        "tid", tid, "ts", ts);
  if (!f) return;
  json_object_set_new(f, "id", flow_id(id));
  if (ph[0] == 'f') json_object_set_new(f, "bp", json_string("e"));
  emit(w, f);
}

/* The events, from an array or from the timeline's chunks. */
typedef struct {
  const trace_ev *ev;
  size_t n, i;
  const ev_chunk *k;
} ev_iter;

static const trace_ev *next_ev(ev_iter *it) {
  if (it->ev) return it->i < it->n ? &it->ev[it->i++] : NULL;
  while (it->k && it->i == it->k->n) {
    it->k = it->k->next;
    it->i = 0;
  }
  return it->k ? &it->k->ev[it->i++] : NULL;
}

/* Grows *a (of *cap elements of size sz) to hold n + 1; false out of memory. */
static bool grow(void **a, size_t *cap, size_t n, size_t sz) {
  if (n < *cap) return true;
  size_t c = *cap ? 2 * *cap : 16;
  void *p = sim_realloc(*a, c * sz);
  if (!p) return false;
  *a = p;
  *cap = c;
  return true;
}

/* Writes the events to path; 0 or -1. */
static int write_events(const char *path, ev_iter *it, const char *why) {
  uint64_t *keys = NULL;
  track *tracks = NULL;
  size_t nkeys = 0, ntracks = 0, ckeys = 0, ctracks = 0;
  writer w = {fopen(path, "w"), true};
  if (!w.f) return -1;
  tick_ns = sim_ticks_per_ns();
  fputs("{\"displayTimeUnit\":\"ns\",", w.f);
  if (why) {
    json_t *o = json_pack("{s:s}", "why", why);
    fputs("\"ncclsim\":", w.f);
    json_dumpf(o, w.f, JSON_COMPACT);
    json_decref(o);
    fputs(",", w.f);
  }
  fputs("\"traceEvents\":[", w.f);
  const trace_ev *e;
  while ((e = next_ev(it))) {
    size_t p, k;
    for (p = 0; p < nkeys && keys[p] != e->key; p++) continue;
    if (p == nkeys) {
      if (!grow((void **)&keys, &ckeys, nkeys, sizeof *keys)) break;
      keys[nkeys++] = e->key;
      char name[64];
      snprintf(name, sizeof name, "communicator %016llx (%d ranks)", (unsigned long long)e->key, e->nranks);
      emit(&w, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name", "ph", "M", "pid", (int)p, "tid", 0,
                         "args", "name", name));
    }
    int idx = 0;
    for (k = 0; k < ntracks; k++) {
      if (tracks[k].key == e->key && tracks[k].rank == e->rank) {
        if (tracks[k].stream == e->r.stream) break;
        idx++;
      }
    }
    int tid = e->rank * 100 + idx;
    if (k == ntracks) {
      if (!grow((void **)&tracks, &ctracks, ntracks, sizeof *tracks)) break;
      tracks[ntracks++] = (track){e->key, e->rank, e->r.stream};
      char name[64];
      if (e->r.stream == &device_track) snprintf(name, sizeof name, "rank %d kernels", e->rank);
      else snprintf(name, sizeof name, "rank %d stream %d", e->rank, idx);
      emit(&w, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M", "pid", (int)p, "tid",
                         tid, "args", "name", name));
      emit(&w, json_pack("{s:s, s:s, s:i, s:i, s:{s:i}}", "name", "thread_sort_index", "ph", "M", "pid", (int)p,
                         "tid", tid, "args", "sort_index", tid));
    }
    double ts = us(e->r.t0);
    if (e->ph == EV_ENQ) {
      emit(&w, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f}", "name", e->r.name, "cat", "enqueue", "ph", "i", "s",
                         "t", "pid", (int)p, "tid", tid, "ts", ts));
      continue;
    }
    uint64_t t1 = e->r.t1 ? e->r.t1 : sim_ticks();
    if (e->r.flags & F_DEV) {
      json_t *args = json_pack("{s:s}", "in", e->desc);
      if (args && e->r.bytes) json_object_set_new(args, "bytes", json_integer((json_int_t)e->r.bytes));
      if (args && (e->r.flags & F_PEER)) json_object_set_new(args, "peer", json_integer(e->r.peer));
      emit(&w, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:o}", "name", e->r.name, "cat",
                         e->r.flags & F_KERNEL ? "kernel" : "device", "ph", "X",
                         "pid", (int)p, "tid", tid, "ts", ts, "dur", us(t1) - ts > 0 ? us(t1) - ts : 0.001, "args",
                         args));
      continue;
    }
    json_t *args = json_pack("{s:I, s:s}", "bytes", (json_int_t)e->r.bytes, "result", result_name(e->r.result));
    if (args && (e->r.flags & F_PEER)) json_object_set_new(args, "peer", json_integer(e->r.peer));
    if (args && (e->r.flags & F_SEQ)) json_object_set_new(args, "seq", json_integer((json_int_t)e->r.seq));
    if (args && e->desc[0]) json_object_set_new(args, "call", json_string(e->desc));
    emit(&w, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:o}", "name", e->r.name, "cat", "nccl", "ph", "X", "pid",
                       (int)p, "tid", tid, "ts", ts, "dur", us(t1) - ts > 0 ? us(t1) - ts : 0.001, "args", args));
    if ((e->r.flags & (F_PEER | F_SEQ)) == (F_PEER | F_SEQ) && (e->r.flags & (F_SEND | F_RECV))) {
      bool send = e->r.flags & F_SEND;
      int s = send ? e->rank : e->r.peer, d = send ? e->r.peer : e->rank;
      add_flow(&w, send ? "s" : "f", pair_flow(e->key, FLOW_P2P, s, d, e->r.seq), (int)p, tid, ts);
    } else if ((e->r.flags & (F_PEER | F_SEQ)) == (F_PEER | F_SEQ) && (e->r.flags & F_SIG)) {
      /* A put or signal, numbered among its rank's signals to the peer,
       * to the wait of the peer that consumes it. */
      add_flow(&w, "s", pair_flow(e->key, FLOW_SIG, e->rank, e->r.peer, e->r.seq), (int)p, tid, ts);
    } else if ((e->r.flags & (F_PEER | F_SEQ)) == (F_PEER | F_SEQ) && (e->r.flags & F_WAIT) && e->r.span) {
      uint64_t n = e->r.span < WAIT_FLOWS_MAX ? e->r.span : WAIT_FLOWS_MAX;
      for (uint64_t j = e->r.seq - n + 1; j <= e->r.seq; j++)
        add_flow(&w, "f", pair_flow(e->key, FLOW_SIG, e->r.peer, e->rank, j), (int)p, tid, ts);
    } else if ((e->r.flags & (F_COLL | F_SEQ)) == (F_COLL | F_SEQ)) {
      if (e->rank == 0)
        for (int r = 1; r < e->nranks; r++)
          add_flow(&w, "s", mix(mix(mix(e->key, FLOW_COLL), e->r.seq), (uint64_t)r), (int)p, tid, ts);
      else
        add_flow(&w, "f", mix(mix(mix(e->key, FLOW_COLL), e->r.seq), (uint64_t)e->rank), (int)p, tid, ts);
    }
  }
  fputs("\n]}\n", w.f);
  int rc = ferror(w.f) ? -1 : 0;
  if (fclose(w.f) != 0) rc = -1;
  sim_free(keys);
  sim_free(tracks);
  return rc;
}
#else
typedef struct {
  const trace_ev *ev;
  size_t n, i;
  const ev_chunk *k;
} ev_iter;
static int write_events(const char *path SIM_UNUSED, ev_iter *it SIM_UNUSED, const char *why SIM_UNUSED) {
  return -1;
}
#endif

/* Writes the timeline: always, or if it has events or was never written. */
static int flush(bool always) {
  sim_mutex_lock(&reg_lock); /* t_base, the live cliques */
  sim_mutex_lock(&full_lock);
  for (trace_clique *tc = reg_head.next; tc != &reg_head; tc = tc->next) splice(tc);
  adopt();
  if (!always && !full_head && full_written) {
    pthread_mutex_unlock(&full_lock);
    pthread_mutex_unlock(&reg_lock);
    return 0;
  }
  ev_iter it = {NULL, 0, 0, full_head};
  int rc = full_path[0] ? write_events(full_path, &it, NULL) : -1;
  if (full_path[0] && rc != 0) fprintf(stderr, "ncclsim: cannot write the trace to %s\n", full_path);
  /* What was written is not written again: a later flush starts anew. */
  full_written = true;
  while (full_head) {
    ev_chunk *k = full_head;
    full_head = k->next;
    sim_free(k);
  }
  full_tail = NULL;
  pthread_mutex_unlock(&full_lock);
  pthread_mutex_unlock(&reg_lock);
  return rc;
}

int sim_trace_flush(void) { return flush(true); }

static char dump_path[1024];

const char *sim_trace_dump(sim_clique *c, const char *why) {
  trace_clique *mine = c ? c->trace : NULL;
  if (c && (!mine || !mine->cap || atomic_exchange(&mine->dumped, 1))) return NULL;
  sim_mutex_lock(&reg_lock);
  size_t n = 0;
  for (trace_clique *tc = reg_head.next; tc != &reg_head; tc = tc->next)
    n += tc->cap ? tc->cap * (size_t)tc->nranks : 0;
  const char *res = NULL;
  trace_ev *ev = n ? sim_calloc(n, sizeof *ev) : NULL;
  if (!ev) goto out;
  n = 0;
  for (trace_clique *tc = reg_head.next; tc != &reg_head; tc = tc->next) {
    if (!tc->cap) continue;
    for (int r = 0; r < tc->nranks; r++) {
      rank_ring *rg = &tc->ring[r];
      if (!ring_lock_within(rg, 10ull * 1000 * 1000)) continue;
      uint64_t first = rg->head > tc->cap ? rg->head - tc->cap : 0;
      for (uint64_t i = first; i < rg->head; i++) {
        trace_ev *e = &ev[n++];
        e->r = rg->rec[i % tc->cap];
        e->key = tc->key;
        e->rank = r;
        e->nranks = tc->nranks;
        e->ph = EV_X;
      }
      ring_unlock(rg);
    }
  }
  /* No operation recorded: no file (an abort of an idle communicator
   * would only leave an empty dump behind). */
  if (n == 0) goto out;
  /* NCCLSIM_TRACE_DUMP, %p the process id. */
  expand_path(dump_path, sizeof dump_path, sim_param_text(SIM_P_TRACE_DUMP), false);
  ev_iter it = {ev, n, 0, NULL};
  if (write_events(dump_path, &it, why) == 0) res = dump_path;
out:
  sim_free(ev);
  pthread_mutex_unlock(&reg_lock);
  return res;
}

void sim_trace_poll(void) {
  if (!atomic_load_explicit(&usr1_pending, memory_order_relaxed)) return;
  if (!atomic_exchange(&usr1_pending, 0)) return;
  usr1_flag = 0;
  const char *p = sim_trace_dump(NULL, "SIGUSR1");
  if (p) SIM_INFO(SIM_INIT, "flight recorder (SIGUSR1): every rank's last operations written to %s", p);
}
