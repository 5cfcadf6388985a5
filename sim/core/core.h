/*
 * sim/core/core.h — the engine (sim/core), as the rooms above it use it:
 * rendezvous rounds, failures, tasks and their launch on streams, groups,
 * first-use connections, and the timeline and flight recorder. What every
 * room shares (a clique's rendezvous table, the areas' sim_area) is in
 * sim/sim.h.
 */
#ifndef NCCLSIM_CORE_H_
#define NCCLSIM_CORE_H_

#include "../sim.h"
#include "../cuda/cuda.h"

/* ------------------------------------------------------------------------
 * Rendezvous (core/rendezvous.c): where ranks meet. Init, split and shrink,
 * window registration and every collective are rounds of this one
 * primitive.
 *
 * A round is named by a key within a table: the unique id's key for init,
 * a per-rank count of calls for the others. Each rank arrives once, copying
 * its slot in; the arrival that makes `expected` runs ops->complete for
 * everyone, under the table's lock. Arriving never blocks, so one thread
 * can arrive for several ranks (a group) and wait later.
 *
 * An arrival holds the round until the rank leaves, unless it is
 * SIM_RV_DETACHED: a non-blocking caller that complete() settles and that
 * never leaves. The last holder out frees the round. A rank that leaves an
 * unfinished round withdraws: its slot empties and the round waits for it
 * again (a timeout, a cancel, an abort, a destroy).
 *
 * A round is one allocation: header, per-rank state, `payload_size` bytes of
 * the round's own, and nranks slots of `slot_size` bytes, reached by offsets
 * from its start rather than by pointers, so that it can move into memory
 * that processes map at different addresses. */
typedef struct sim_rv_ops {
  const char *what;     /* the call, for diagnostics ("ncclCommInitRank") */
  const char *key_name; /* what names a round, for diagnostics ("unique id") */
  size_t payload_size;  /* bytes shared by the round (zeroed) */
  size_t slot_size;     /* bytes per rank, copied in at arrival */
  /* Runs once, in the completing arrival, under the table's lock; `arg` is
   * that arrival's. Its return is the round's result. */
  ncclResult_t (*complete)(sim_rv *rv, void *arg);
  /* Frees what the payload owns, as the round goes (may be NULL). */
  void (*release)(sim_rv *rv);
  /* Its callers never read sim_rv_deadline: no clock read at the open (a
   * collective opens a round per call). */
  bool untimed;
} sim_rv_ops;
/* DETACHED: see above. ONCE: a rank already in the round is no error: the
 * arrival is dropped (for idempotent arrivals such as connections). */
enum { SIM_RV_DETACHED = 1, SIM_RV_ONCE = 2 };

void sim_rv_table_init(sim_rv_table *t);
/* Frees the rounds still open (their ranks are gone). */
void sim_rv_table_fini(sim_rv_table *t);
/* Arrives in round `key` as `rank` of nranks; the round completes when
 * `expected` ranks are in. Opens the round, with a deadline NCCLSIM_TIMEOUT
 * from now, if it is not open. *out (may be NULL) is the round, or NULL for
 * a detached arrival. Errors, with nothing posted and a WARN naming
 * ops->what: ncclInvalidUsage if the open round has another nranks or
 * expected, or the rank is in it already (the round then fails for every
 * rank in it: sim_rv_conflict), or the round failed so already;
 * ncclSystemError out of memory. */
ncclResult_t sim_rv_arrive(sim_rv_table *t, const sim_rv_ops *ops, uint64_t key, int nranks, int expected,
                           int rank, unsigned flags, const void *slot, void *arg, sim_rv **out);
/* Waits, holding rv, until it completes (0), deadline_ns passes
 * (ETIMEDOUT) or *cancel becomes non-zero (ECANCELED; cancel may be NULL). */
int sim_rv_wait(sim_rv_table *t, sim_rv *rv, const _Atomic int *cancel, uint64_t deadline_ns);
/* The same, with a deadline set only if the wait has to sleep. */
int sim_rv_wait_due(sim_rv_table *t, sim_rv *rv, const _Atomic int *cancel, sim_due *due);
/* Leaves rv: its result if complete, else the rank withdraws and
 * ncclInProgress is returned. rv may be freed: do not touch it after. */
ncclResult_t sim_rv_leave(sim_rv_table *t, sim_rv *rv, int rank);
/* Withdraws from rv unless it completed meanwhile: true if withdrawn (rv
 * may be gone), false if complete (nothing changed, rv still held). */
bool sim_rv_withdraw(sim_rv_table *t, sim_rv *rv, int rank);
/* For callers that read the round before leaving: the table's lock, and
 * sim_rv_leave under it. sim_rv_each_open runs fn on every open round,
 * under the lock; fn may leave the round it is given. */
void sim_rv_lock(sim_rv_table *t);
void sim_rv_unlock(sim_rv_table *t);
ncclResult_t sim_rv_leave_locked(sim_rv_table *t, sim_rv *rv, int rank);
void sim_rv_each_open(sim_rv_table *t, void (*fn)(sim_rv_table *t, sim_rv *rv, void *arg), void *arg);
/* The open round of `key`, or NULL; under the lock. */
sim_rv *sim_rv_find_locked(sim_rv_table *t, uint64_t key);
/* The round's parts. done is read with acquire order, without the lock; the
 * rest change under the lock. */
bool sim_rv_done(const sim_rv *rv);
ncclResult_t sim_rv_result(const sim_rv *rv); /* once done */
uint64_t sim_rv_key(const sim_rv *rv);
uint64_t sim_rv_deadline(const sim_rv *rv);
int sim_rv_nranks(const sim_rv *rv);
int sim_rv_arrived(const sim_rv *rv);
bool sim_rv_present(const sim_rv *rv, int rank);
void *sim_rv_payload(sim_rv *rv);
void *sim_rv_slot(sim_rv *rv, int rank);
/* The ranks not present, as "1,3" (empty if none). */
void sim_rv_missing(const sim_rv *rv, char *buf, size_t len);
/* Whether rv failed because an arrival disagreed with it, and how, in buf:
 * one line naming both values. Such a round is done, with ncclInvalidUsage
 * for every rank, and refuses later arrivals until its deadline. Under the
 * lock, or by a holder of rv. */
bool sim_rv_conflict(const sim_rv *rv, char *buf, size_t len);
/* Across hosts (sim/net/net.h), a leader's wait before it speaks for its
 * host: until every rank of this host has arrived in rv, progressing UCX
 * for the other hosts meanwhile. ncclSuccess, or as sim_net_poll. */
ncclResult_t sim_rv_wait_host(sim_rv_table *t, sim_rv *rv, ncclComm_t comm, sim_due *due);

/* ------------------------------------------------------------------------
 * Failures (core/fail.c). */
/* Records a failure on a comm: async error (first one wins), last_error
 * text, WARN. Returns `res`. */
ncclResult_t sim_comm_fail(ncclComm_t comm, ncclResult_t res, const char *fmt, ...) SIM_PRINTF(3, 4);
/* Dumps every rank's outstanding operations (once per clique and incident). */
void sim_clique_dump_pending(sim_clique *c, const char *why);

/* ------------------------------------------------------------------------
 * Tasks and their launch on streams (core/task.c), first-use connections
 * (core/connect.c) and groups (core/group.c). Area code fills a task and
 * calls sim_task_submit(); the task machinery handles groups, streams,
 * timeouts and reference counting of the comm.
 *
 * post(): announce the operation to peers; must not block for long. On
 *         failure it leaves nothing posted (peers cannot see the task).
 * wait(): called only after a successful post; blocks until done, using
 *         sim_waitq_wait_due with the given deadline (set only if a wait
 *         has to sleep; shared by the launch's tasks) and
 *         sim_comm_cancel(). On
 *         timeout return ncclTimeout, on cancel ncclRemoteError, in both
 *         cases after withdrawing anything peers could still touch.
 * describe(): one line for the timeout dump: the call, its arguments, and
 *         what it still waits for. The machinery shows the task as pending
 *         between post and the end of wait.
 * release(): free the task (sim_task_free, for memory from sim_task_alloc).
 * commit(): optional; called once per task, in call order, when it is sure
 *         to be launched (outside a group at submit, inside one at
 *         ncclGroupEnd): a task refused, dropped with a failed group or by
 *         ncclGroupSimulateEnd is never committed. Collectives take their
 *         sequence number here.
 * Areas report a specific diagnostic with sim_comm_fail(); otherwise the
 * machinery reports a generic one for a failed post or wait. */
struct sim_task_ops {
  const char *name; /* "ncclSend", ... */
  ncclResult_t (*post)(sim_task *t);
  ncclResult_t (*wait)(sim_task *t, sim_due *due);
  void (*describe)(sim_task *t, char *buf, size_t len);
  void (*release)(sim_task *t);
  void (*commit)(sim_task *t);
  /* Optional, for the deadlock check: the ranks that have not yet made the
   * call this posted task waits for (sim_block.awaits); 0 when it waits for
   * none; -1 when it cannot tell. */
  int (*awaits)(sim_task *t, sim_rank_ref *out, int max);
  /* What NCCL puts on the stream for it, for the stream's depth (core/task.c). */
  enum { SIM_COST_KERNEL = 0, SIM_COST_RMA_WAIT, SIM_COST_RMA_PUT } cost;
  /* Optional: a task captured in a CUDA graph is kept unposted, and each
   * launch of the graph runs a byte copy of it (core/capture.c); retain
   * takes for the copy the references release() gives back. */
  void (*retain)(sim_task *t);
};
/* The connection an operation uses, which real NCCL sets up at its first
 * use (core/connect.c). */
typedef enum {
  SIM_CONN_NONE = 0,
  SIM_CONN_SEND, /* the link to conn_peer; its first use needs the peer's first receive from us */
  SIM_CONN_RECV, /* the link from conn_peer */
  SIM_CONN_COLL, /* the collective ring: every rank's first collective */
  SIM_CONN_RMA   /* one-sided state: every rank's first one-sided operation */
} sim_conn_kind;
struct sim_task {
  sim_task *next;
  const struct sim_task_ops *ops;
  ncclComm_t comm;
  sim_stream *stream;
  sim_conn_kind conn; /* set by the area */
  int conn_peer;
  size_t bytes;        /* bytes this rank moves, for ncclGroupSimulateEnd's model */
  sim_op op;           /* the first task of a launch is its stream op (core/task.c) */
  _Atomic bool listed; /* posted and not yet waited: the timeout dump shows it */
  ncclResult_t result; /* set by the machinery */
  /* For the timeline (core/trace.c), set by the area: the peer (has_peer)
   * and the number that pairs the operation with its peers' (has_seq): a
   * collective's sequence number, a send's or receive's index among the
   * pair's calls. */
  bool has_peer, has_seq;
  int peer;
  uint64_t seq;
  uint32_t seq_span; /* a ncclWaitSignal: the signals it consumes, seq the last */
  uint64_t trace_slot; /* managed by the machinery (UINT64_MAX: not begun) */
  size_t trace_pos;    /* its record's index in the ring */
  uint64_t trace_end;  /* its end in sim_ticks(), not yet recorded (0: not ended) */
  /* Set by the machinery: posted only once comm->order_done reaches it
   * (0: at once), and order_blocked while it waits (the timeout dump). */
  uint64_t order_after;
  _Atomic bool order_blocked;
  bool replayed; /* issued by a graph launch (comm->graph_inflight counts it; core/capture.c) */
};
/* Validates the stream, then launches the task now (outside a group) or at
 * ncclGroupEnd. On error the task is released and the error returned. */
ncclResult_t sim_task_submit(sim_task *t, cudaStream_t stream);
/* A task's memory: `size` zeroed bytes, 64-aligned, from the op pool of
 * the stream it will be submitted on (any stream handle: a bad one gets plain memory,
 * and submit refuses it), so that the worker that releases it hands it
 * back to the next enqueue without the allocator. NULL out of memory; the
 * allocation hook (ncclsimAllocFailAfter) counts every call. */
void *sim_task_alloc(size_t size, cudaStream_t stream);
void sim_task_free(sim_task *t);
/* Real NCCL's first-use connections (core/connect.c): before a launch,
 * every task of blocking communicators whose connection is not yet set up
 * makes its rank arrive there, then the host thread waits until the peers
 * have arrived too. ncclSuccess; ncclInvalidUsage when only blocked threads
 * (this one included) could make the peers arrive, ncclTimeout after
 * NCCLSIM_TIMEOUT: each with a diagnostic, the connections left as they
 * were. Collectives are connected at init instead when NCCL_RUNTIME_CONNECT
 * is 0 in the environment at the communicator's creation, as in NCCL. */
ncclResult_t sim_connect(sim_task *list);
/* A communicator's NCCL operations kept by CUDA graphs go with it
 * (core/capture.c): a later launch of those graphs fails, saying so. */
void sim_capture_forget_comm(ncclComm_t comm);
/* Thread's group depth (0 outside ncclGroupStart/End). */
int sim_group_depth(void);
/* Work to run at ncclGroupEnd on the calling thread (comm init, window
 * registration, split inside a group). The callback runs after every task of
 * the group was launched; its result becomes ncclGroupEnd's. */
typedef struct sim_group_job {
  struct sim_group_job *next;
  ncclComm_t comm; /* whose work it is: dropped, not run, if that comm is destroyed first */
  ncclResult_t (*run)(struct sim_group_job *job);
  void (*release)(struct sim_group_job *job);
  /* Optional: run for every job of the group before the first run (its
   * failure is recorded where run will find it). */
  void (*prepare)(struct sim_group_job *job);
  /* Optional, likewise, before the first prepare: a step that other jobs'
   * prepare may wait for (a management call across hosts completes its
   * exchange and sends its child's hello to the bootstrap root, which
   * answers once every rank's hello has come). */
  void (*start)(struct sim_group_job *job);
} sim_group_job;
ncclResult_t sim_group_add_job(sim_group_job *job);
/* Drops the calling thread's not-yet-launched tasks and jobs of `comm`
 * (destroy or abort inside an open group): they would otherwise keep the
 * comm's in-flight count up while the only thread that could launch them
 * waits for it to drain. */
void sim_group_forget(ncclComm_t comm);
/* Its tasks only, its jobs kept (ncclCommRevoke inside an open group). */
void sim_group_forget_tasks(ncclComm_t comm);
/* True if the calling thread's open group holds unlaunched work of comm. */
bool sim_group_holds(ncclComm_t comm);
/* Every NCCL entry point returns its argument errors through this: inside a
 * group the error is also kept, ncclGroupEnd returns it and launches
 * nothing, as NCCL does. Returns res. */
ncclResult_t sim_group_error(ncclResult_t res);

/* ------------------------------------------------------------------------
 * Timeline and flight recorder (core/trace.c). Every rank keeps its last
 * NCCLSIM_TRACE_RING operations in a ring; with NCCLSIM_TRACE=FILE every
 * operation is also kept for FILE, written at exit. Both in the Chrome
 * Trace Event Format (Perfetto). Settings are read at a clique's creation. */
/* Registers a new clique (comm/clique.c): ncclSystemError, nothing left,
 * out of memory. fini unregisters it before it is freed. */
ncclResult_t sim_trace_clique_init(sim_clique *c);
/* The device that rank uses in this process (comm/clique.c, after init):
 * its kernels go on its track of the timeline. */
void sim_trace_rank_device(sim_clique *c, int rank, int device);
void sim_trace_clique_fini(sim_clique *c);
/* The host thread launches t (enqueue); a stream worker starts it (before
 * post) and ends it (after wait, or when it was not run). The end only
 * takes the time: it is recorded when the task is released (close), which
 * its stream does after it has started the next operation, so that what a
 * peer waits for (a put's signal, a send) does not wait for the record. */
void sim_trace_enqueue(sim_task *t);
/* A worker's begin takes the time of its last end, which it follows at
 * once (one clock read per operation, not two): `stamp` is the launch op's
 * (sim_op.stamp), which the stream worker sets to the end of the op before
 * it, or to 0 when it found nothing queued behind that op, or that op was
 * not a launch (a copy, an event wait), whose time is not its next
 * operation's. A begin takes it (and leaves 0, so that the launch's next
 * task reads the clock); an end sets it. */
void sim_trace_begin(sim_task *t, uint64_t *stamp);
void sim_trace_end(sim_task *t, uint64_t *stamp);
void sim_trace_close(sim_task *t);
/* Flight recorder: writes every live clique's rings to NCCLSIM_TRACE_DUMP,
 * once per clique c and incident (c may be NULL: always). Returns the
 * file's name (static storage), or NULL when nothing was written. */
const char *sim_trace_dump(sim_clique *c, const char *why);
/* Writes the timeline to NCCLSIM_TRACE's file now and empties it (also run
 * at exit, when there is something new); 0, or -1 when tracing is off or
 * the file cannot be written. */
int sim_trace_flush(void);
/* Runs a dump that SIGUSR1 asked for (every NCCL call checks). */
void sim_trace_poll(void);
/* Whether c's operations go to NCCLSIM_TRACE's timeline (set at its
 * creation). */
bool sim_trace_timeline(const sim_clique *c);
/* A device-API event of rank's kernels (sim/dev/trace.c): a span from t0
 * to t1 (sim_ticks()) on the rank's track of kernels, named `name`
 * (static storage), with desc (the kernel, block and thread, and what it
 * did), the peer (-1: none) and bytes moved (0: none). Nothing when c is
 * not on the timeline. Thread-safe (the rank's ring lock). */
void sim_trace_device(sim_clique *c, int rank, const char *name, uint64_t t0, uint64_t t1, int peer, size_t bytes,
                      const char *desc);

#endif /* NCCLSIM_CORE_H_ */
