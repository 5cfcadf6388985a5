/*
 * sim/core/trace.c — the timeline of NCCL operations and the flight
 * recorder, both written in the Chrome Trace Event Format (Perfetto,
 * chrome://tracing) through jansson.
 *
 * Every rank of a clique has a ring of its last NCCLSIM_TRACE_RING
 * operations: a stream worker takes a slot before it posts a task and
 * fills in its end after the wait, under the ring's lock (a few stores).
 * On an incident (a timeout, a mismatched collective, an NCCLSIM_FAULT
 * stop, ncclCommAbort, SIGUSR1) every live clique's rings go to
 * NCCLSIM_TRACE_DUMP; operations still running show as such.
 *
 * With NCCLSIM_TRACE=FILE at a clique's creation, its operations are also
 * appended, with their describe() text, to one process-wide list under a
 * briefly held lock, and FILE is written at exit.
 *
 * The file: a process (pid) per communicator, a thread (tid) per rank and
 * stream (rank * 100 + the stream's index for that rank); an X event per
 * operation, an instant event per enqueue, flow events from a send to its
 * receive and from rank 0's collective to the other ranks' (flow ids made
 * from the communicator, the ranks and the pairing number).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core_internal.h"
#ifdef HAVE_JANSSON
#include <jansson.h>
#endif

enum { EV_X = 0, EV_ENQ = 1 };
enum { F_PEER = 1, F_SEQ = 2, F_SEND = 4, F_RECV = 8, F_COLL = 16 };

/* One operation in a ring. */
typedef struct {
  const char *name; /* static: sim_task_ops.name */
  const void *stream;
  uint64_t t0, t1; /* t1 == 0: still running */
  uint64_t seq, id; /* id: the slot's number, to tell a reused slot */
  size_t bytes;
  int peer, result;
  unsigned flags;
} trace_rec;

typedef struct {
  pthread_mutex_t lock;
  uint64_t head; /* records written so far */
  trace_rec *rec;
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

/* An event of the timeline (or of a dump, desc empty). */
typedef struct {
  trace_rec r;
  uint64_t key;
  int rank, nranks;
  int ph; /* EV_X, EV_ENQ */
  char desc[192];
} trace_ev;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static trace_clique reg_head = {&reg_head, &reg_head, 0, 0, false, 0, 0};
static uint64_t t_base; /* first clique's creation: time 0 of the files */

static pthread_mutex_t full_lock = PTHREAD_MUTEX_INITIALIZER;
static trace_ev *full_ev;
static size_t full_n, full_cap;
static char full_path[1024];
static bool atexit_set;
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

static void at_exit(void) {
  pthread_mutex_lock(&full_lock);
  bool more = full_n > 0 || !full_written;
  pthread_mutex_unlock(&full_lock);
  if (more) sim_trace_flush();
}

static bool param_off(const char *v) { return !v || !v[0] || !strcmp(v, "none"); }

ncclResult_t sim_trace_clique_init(sim_clique *c) {
  int64_t cap = sim_param_int(SIM_P_TRACE_RING);
  const char *path = sim_param_text(SIM_P_TRACE);
  bool full = !param_off(path);
#ifndef HAVE_JANSSON
  if (full || cap > 0) {
    pthread_mutex_lock(&reg_lock);
    if (full && !warned_no_json)
      SIM_WARN(SIM_INIT, "NCCLSIM_TRACE=%s ignored: ncclsim was built without jansson, which writes traces", path);
    warned_no_json = true;
    pthread_mutex_unlock(&reg_lock);
  }
  full = false;
  cap = 0;
#endif
  if (cap < 0) cap = 0;
  trace_clique *tc = sim_calloc(1, sizeof *tc + (size_t)c->nranks * sizeof(rank_ring));
  if (!tc) return ncclSystemError;
  tc->key = c->key;
  tc->nranks = c->nranks;
  tc->full = full;
  tc->cap = (size_t)cap;
  for (int r = 0; r < c->nranks; r++) {
    pthread_mutex_init(&tc->ring[r].lock, NULL);
    if (cap && !(tc->ring[r].rec = sim_calloc((size_t)cap, sizeof(trace_rec)))) {
      for (int q = 0; q <= r; q++) {
        pthread_mutex_destroy(&tc->ring[q].lock);
        sim_free(tc->ring[q].rec);
      }
      sim_free(tc);
      return ncclSystemError;
    }
  }
  pthread_mutex_lock(&reg_lock);
  if (!t_base) t_base = sim_now_ns();
  tc->next = &reg_head;
  tc->prev = reg_head.prev;
  tc->prev->next = tc;
  reg_head.prev = tc;
  if (full) {
    pthread_mutex_lock(&full_lock);
    snprintf(full_path, sizeof full_path, "%s", path);
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

void sim_trace_clique_fini(sim_clique *c) {
  trace_clique *tc = c->trace;
  if (!tc) return;
  pthread_mutex_lock(&reg_lock);
  tc->prev->next = tc->next;
  tc->next->prev = tc->prev;
  pthread_mutex_unlock(&reg_lock);
  for (int r = 0; r < tc->nranks; r++) {
    pthread_mutex_destroy(&tc->ring[r].lock);
    sim_free(tc->ring[r].rec);
  }
  sim_free(tc);
  c->trace = NULL;
}

static void fill_rec(trace_rec *r, sim_task *t) {
  r->name = t->ops->name;
  r->stream = t->stream;
  r->bytes = t->bytes;
  r->peer = t->peer;
  r->seq = t->seq;
  r->flags = (t->has_peer ? F_PEER : 0) | (t->has_seq ? F_SEQ : 0) | (t->conn == SIM_CONN_SEND ? F_SEND : 0) |
             (t->conn == SIM_CONN_RECV ? F_RECV : 0) | (t->conn == SIM_CONN_COLL ? F_COLL : 0);
}

static void full_append(const trace_ev *e) {
  pthread_mutex_lock(&full_lock);
  if (full_n == full_cap) {
    size_t cap = full_cap ? 2 * full_cap : 1024;
    trace_ev *p = sim_realloc(full_ev, cap * sizeof *p);
    if (!p) {
      pthread_mutex_unlock(&full_lock);
      return;
    }
    full_ev = p;
    full_cap = cap;
  }
  full_ev[full_n++] = *e;
  pthread_mutex_unlock(&full_lock);
}

void sim_trace_enqueue(sim_task *t) {
  trace_clique *tc = t->comm->clique->trace;
  if (!tc || !tc->full) return;
  trace_ev e;
  memset(&e, 0, sizeof e);
  fill_rec(&e.r, t);
  e.r.t0 = e.r.t1 = sim_now_ns();
  e.key = tc->key;
  e.rank = t->comm->rank;
  e.nranks = tc->nranks;
  e.ph = EV_ENQ;
  full_append(&e);
}

void sim_trace_begin(sim_task *t) {
  trace_clique *tc = t->comm->clique->trace;
  uint64_t now = sim_now_ns();
  if (!tc) return;
  t->trace_slot = now; /* the start, for the timeline */
  if (!tc->cap) return;
  rank_ring *rg = &tc->ring[t->comm->rank];
  pthread_mutex_lock(&rg->lock);
  uint64_t id = rg->head++;
  trace_rec *r = &rg->rec[id % tc->cap];
  fill_rec(r, t);
  r->t0 = now;
  r->t1 = 0;
  r->id = id;
  r->result = -1;
  pthread_mutex_unlock(&rg->lock);
  t->trace_slot = id;
}

void sim_trace_end(sim_task *t) {
  trace_clique *tc = t->comm->clique->trace;
  if (!tc) return;
  uint64_t now = sim_now_ns(), t0 = now;
  if (tc->cap) {
    rank_ring *rg = &tc->ring[t->comm->rank];
    pthread_mutex_lock(&rg->lock);
    trace_rec *r = &rg->rec[t->trace_slot % tc->cap];
    if (r->id == t->trace_slot && r->t0 && !r->t1) {
      t0 = r->t0;
      r->t1 = now > r->t0 ? now : r->t0 + 1;
      r->result = (int)t->result;
      r->seq = t->seq; /* a collective numbered after its post */
    }
    pthread_mutex_unlock(&rg->lock);
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
  full_append(&e);
}

/* ------------------------------------------------------------ writing */

#ifdef HAVE_JANSSON
/* Flow ids: a send and its receive share (key, sender, receiver, nth); a
 * collective's ranks (key, seq, rank). */
static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}
static json_t *flow_id(uint64_t h) { return json_integer((json_int_t)(h & 0x1fffffffffffffull)); }

typedef struct {
  uint64_t key;
  int rank;
  const void *stream;
} track;

static double us(uint64_t ns) { return ns > t_base ? (double)(ns - t_base) / 1000.0 : 0.0; }

static const char *result_name(int r) {
  return r < 0 ? "in progress" : r == ncclSuccess ? "ncclSuccess" : ncclGetErrorString((ncclResult_t)r);
}

static void add_flow(json_t *arr, const char *ph, uint64_t id, int pid, int tid, double ts) {
  json_t *f = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f}", "name", "match", "cat", "nccl", "ph", ph, "pid", pid,
                        "tid", tid, "ts", ts);
  json_object_set_new(f, "id", flow_id(id));
  if (ph[0] == 'f') json_object_set_new(f, "bp", json_string("e"));
  json_array_append_new(arr, f);
}

/* Writes events ev[0..n) to path; 0 or -1. */
static int write_events(const char *path, const trace_ev *ev, size_t n, const char *why) {
  json_t *arr = json_array();
  uint64_t *keys = NULL;
  track *tracks = NULL;
  size_t nkeys = 0, ntracks = 0;
  int rc = -1;
  if (!arr) return -1;
  keys = sim_calloc(n + 1, sizeof *keys);
  tracks = sim_calloc(n + 1, sizeof *tracks);
  if (!keys || !tracks) goto out;
  for (size_t i = 0; i < n; i++) {
    const trace_ev *e = &ev[i];
    size_t p, k;
    for (p = 0; p < nkeys && keys[p] != e->key; p++) continue;
    if (p == nkeys) {
      keys[nkeys++] = e->key;
      char name[64];
      snprintf(name, sizeof name, "communicator %016llx (%d ranks)", (unsigned long long)e->key, e->nranks);
      json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name", "ph", "M",
                                           "pid", (int)p, "tid", 0, "args", "name", name));
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
      tracks[ntracks++] = (track){e->key, e->rank, e->r.stream};
      char name[64];
      snprintf(name, sizeof name, "rank %d stream %d", e->rank, idx);
      json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M",
                                           "pid", (int)p, "tid", tid, "args", "name", name));
      json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:i, s:{s:i}}", "name", "thread_sort_index", "ph",
                                           "M", "pid", (int)p, "tid", tid, "args", "sort_index", tid));
    }
    double ts = us(e->r.t0);
    if (e->ph == EV_ENQ) {
      json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f}", "name", e->r.name, "cat", "enqueue", "ph", "i",
                            "s", "t", "pid", (int)p, "tid", tid, "ts", ts);
      json_array_append_new(arr, o);
      continue;
    }
    uint64_t t1 = e->r.t1 ? e->r.t1 : sim_now_ns();
    json_t *args = json_pack("{s:I, s:s}", "bytes", (json_int_t)e->r.bytes, "result", result_name(e->r.result));
    if (e->r.flags & F_PEER) json_object_set_new(args, "peer", json_integer(e->r.peer));
    if (e->r.flags & F_SEQ) json_object_set_new(args, "seq", json_integer((json_int_t)e->r.seq));
    if (e->desc[0]) json_object_set_new(args, "call", json_string(e->desc));
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:o}", "name", e->r.name, "cat", "nccl", "ph", "X",
                          "pid", (int)p, "tid", tid, "ts", ts, "dur", us(t1) - ts > 0 ? us(t1) - ts : 0.001,
                          "args", args);
    json_array_append_new(arr, o);
    if ((e->r.flags & (F_PEER | F_SEQ)) == (F_PEER | F_SEQ) && (e->r.flags & (F_SEND | F_RECV))) {
      bool send = e->r.flags & F_SEND;
      int s = send ? e->rank : e->r.peer, d = send ? e->r.peer : e->rank;
      uint64_t id = mix(mix(mix(mix(e->key, 1), (uint64_t)s), (uint64_t)d), e->r.seq);
      add_flow(arr, send ? "s" : "f", id, (int)p, tid, ts);
    } else if ((e->r.flags & (F_COLL | F_SEQ)) == (F_COLL | F_SEQ)) {
      if (e->rank == 0)
        for (int r = 1; r < e->nranks; r++)
          add_flow(arr, "s", mix(mix(mix(e->key, 2), e->r.seq), (uint64_t)r), (int)p, tid, ts);
      else
        add_flow(arr, "f", mix(mix(mix(e->key, 2), e->r.seq), (uint64_t)e->rank), (int)p, tid, ts);
    }
  }
  json_t *root = json_pack("{s:o, s:s}", "traceEvents", arr, "displayTimeUnit", "ns");
  arr = NULL;
  if (root && why) json_object_set_new(root, "ncclsim", json_pack("{s:s}", "why", why));
  if (root) {
    rc = json_dump_file(root, path, JSON_COMPACT) == 0 ? 0 : -1;
    json_decref(root);
  }
out:
  json_decref(arr);
  sim_free(keys);
  sim_free(tracks);
  return rc;
}
#else
static int write_events(const char *path SIM_UNUSED, const trace_ev *ev SIM_UNUSED, size_t n SIM_UNUSED,
                        const char *why SIM_UNUSED) {
  return -1;
}
#endif

int sim_trace_flush(void) {
  pthread_mutex_lock(&reg_lock); /* t_base */
  pthread_mutex_lock(&full_lock);
  int rc = full_path[0] ? write_events(full_path, full_ev, full_n, NULL) : -1;
  if (full_path[0] && rc != 0) fprintf(stderr, "ncclsim: cannot write the trace to %s\n", full_path);
  /* What was written is not written again: a later flush starts anew. */
  full_written = true;
  full_n = 0;
  pthread_mutex_unlock(&full_lock);
  pthread_mutex_unlock(&reg_lock);
  return rc;
}

static char dump_path[1024];

const char *sim_trace_dump(sim_clique *c, const char *why) {
  trace_clique *mine = c ? c->trace : NULL;
  if (c && (!mine || !mine->cap || atomic_exchange(&mine->dumped, 1))) return NULL;
  pthread_mutex_lock(&reg_lock);
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
      pthread_mutex_lock(&rg->lock);
      uint64_t first = rg->head > tc->cap ? rg->head - tc->cap : 0;
      for (uint64_t i = first; i < rg->head; i++) {
        trace_ev *e = &ev[n++];
        e->r = rg->rec[i % tc->cap];
        e->key = tc->key;
        e->rank = r;
        e->nranks = tc->nranks;
        e->ph = EV_X;
      }
      pthread_mutex_unlock(&rg->lock);
    }
  }
  /* NCCLSIM_TRACE_DUMP, %p the process id. */
  const char *fmt = sim_param_text(SIM_P_TRACE_DUMP);
  size_t o = 0;
  for (const char *s = fmt; *s && o + 24 < sizeof dump_path; s++) {
    if (s[0] == '%' && s[1] == 'p') {
      o += (size_t)snprintf(dump_path + o, sizeof dump_path - o, "%d", (int)getpid());
      s++;
    } else {
      dump_path[o++] = *s;
    }
  }
  dump_path[o] = 0;
  if (write_events(dump_path, ev, n, why) == 0) res = dump_path;
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
