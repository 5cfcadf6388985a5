/*
 * sim/sim.h — ncclsim's internal contract.
 *
 * Every part of the simulator (cuda/, comm/, p2p/, rma/, coll/, dev/) codes
 * against this header only. Nothing here is public: the public surface is
 * <nccl.h>, <cuda_runtime_api.h>, <nccl_device.h> and <ncclsim.h>.
 */
#ifndef NCCLSIM_SIM_H_
#define NCCLSIM_SIM_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl.h"
#include "ncclsim.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_UNUSED __attribute__((unused))
#define SIM_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ------------------------------------------------------------------------
 * Parameters (util/param.c). Every tunable is one NCCLSIM_* variable, read
 * once and cached, overridable at run time with ncclsimParamSet(). README.md
 * lists them, in this order, with these defaults (make check compares:
 * tests/readme-params.sh). */
#define SIM_PARAMS(X)                                                                            \
  X(DEVICES, "DEVICES", "8", "number of simulated CUDA devices")                                 \
  X(DEVICE_MEM, "DEVICE_MEM", "17179869184", "bytes of memory per simulated device")             \
  X(TIMEOUT, "TIMEOUT", "30", "seconds a blocked operation waits before it fails with a diagnostic") \
  X(SPIN, "SPIN", "2000", "polls before a waiting thread sleeps (0: sleep at once)")             \
  X(RANKS_PER_NODE, "RANKS_PER_NODE", "0", "ranks per simulated node; 0 puts every rank on one node") \
  X(WINDOWS, "WINDOWS", "1", "0 makes window registration return a NULL window, as on platforms without windows") \
  X(GIN_TYPE, "GIN_TYPE", "none", "GIN type reported by communicators: none, proxy, gdaki or gpi") \
  X(RAILED_GIN_TYPE, "RAILED_GIN_TYPE", "none", "railed GIN type: none, proxy, gdaki or gpi")    \
  X(HOST_RMA, "HOST_RMA", "1", "1 if host-initiated RMA (put_signal, signal, wait_signal) is supported") \
  X(DEVICE_API, "DEVICE_API", "1", "1 if the device API (device communicators) is supported")    \
  X(LAT_US, "LAT_US", "5", "ncclGroupSimulateEnd model: microseconds of latency per operation")  \
  X(BW_GBS, "BW_GBS", "100", "ncclGroupSimulateEnd model: link bandwidth in GB/s")              \
  X(STACK_KB, "STACK_KB", "256", "stack size of each stream worker thread, in KiB")                \
  X(FAULT, "FAULT", "none", "RANK:K: in communicators made from now on, rank RANK stops at its Kth NCCL operation, as if its process died") \
  X(DEBUG, "DEBUG", "none", "log level: WARN, INFO or TRACE, NCCL-style lines on stderr; anything else prints nothing") \
  X(DEBUG_SUBSYS, "DEBUG_SUBSYS", "ALL", "comma-separated subsystems logged: INIT, ALLOC, STREAM, P2P, COLL, RMA, DEV, ALL (unknown names ignored; empty: ALL)")

typedef enum {
#define SIM_PARAM_ENUM(id, env, dflt, doc) SIM_P_##id,
  SIM_PARAMS(SIM_PARAM_ENUM)
#undef SIM_PARAM_ENUM
  SIM_P_COUNT
} sim_param_id;

/* Numeric value (strtod of the text; GIN names map to their enum value). */
double sim_param(sim_param_id id);
int64_t sim_param_int(sim_param_id id);
/* The current text of a parameter. */
const char *sim_param_text(sim_param_id id);
/* NCCLSIM_TIMEOUT in nanoseconds. */
uint64_t sim_timeout_ns(void);

/* ------------------------------------------------------------------------
 * Logging (util/log.c). NCCLSIM_DEBUG=WARN|INFO|TRACE sets the level;
 * NCCLSIM_DEBUG_SUBSYS=INIT,P2P,... (or ALL, the default) the mask. Both are
 * parameters (SIM_P_DEBUG, SIM_P_DEBUG_SUBSYS), read at every log call, so
 * ncclsimParamSet changes them at run time. A WARN is always kept as the
 * thread's last error text (ncclGetLastError). */
typedef enum { SIM_LOG_NONE = 0, SIM_LOG_WARN = 1, SIM_LOG_INFO = 2, SIM_LOG_TRACE = 3 } sim_log_level;
enum {
  SIM_INIT = 1 << 0,
  SIM_ALLOC = 1 << 1,
  SIM_STREAM = 1 << 2,
  SIM_P2P = 1 << 3,
  SIM_COLL = 1 << 4,
  SIM_RMA = 1 << 5,
  SIM_DEV = 1 << 6,
  SIM_ALL = ~0
};
void sim_log(sim_log_level level, unsigned subsys, const char *file, int line, const char *fmt, ...)
    SIM_PRINTF(5, 6);
#define SIM_WARN(sub, ...) sim_log(SIM_LOG_WARN, (sub), __FILE__, __LINE__, __VA_ARGS__)
#define SIM_INFO(sub, ...) sim_log(SIM_LOG_INFO, (sub), __FILE__, __LINE__, __VA_ARGS__)
#define SIM_TRACE(sub, ...) sim_log(SIM_LOG_TRACE, (sub), __FILE__, __LINE__, __VA_ARGS__)
/* The values of NCCLSIM_DEBUG (a sim_log_level) and NCCLSIM_DEBUG_SUBSYS (a
 * mask), for util/param.c. Any text is accepted, as NCCL does: an unknown
 * level prints nothing, unknown subsystem names are ignored, an empty list
 * means ALL. */
double sim_log_level_value(const char *text);
double sim_log_subsys_value(const char *text);
/* Thread's last warning text ("" if none). */
const char *sim_last_warning(void);
void sim_clear_warning(void);

/* NCCL-style error trail: log the failing call's location and propagate. */
#define SIM_CHECK(call)                                                        \
  do {                                                                         \
    ncclResult_t sim_res_ = (call);                                            \
    if (sim_res_ != ncclSuccess) {                                             \
      SIM_INFO(SIM_ALL, "%s:%d -> %d", __FILE__, __LINE__, (int)sim_res_);     \
      return sim_res_;                                                         \
    }                                                                          \
  } while (0)
#define SIM_CHECKGOTO(call, res, label)                                        \
  do {                                                                         \
    (res) = (call);                                                            \
    if ((res) != ncclSuccess) {                                                \
      SIM_INFO(SIM_ALL, "%s:%d -> %d", __FILE__, __LINE__, (int)(res));        \
      goto label;                                                              \
    }                                                                          \
  } while (0)

/* ------------------------------------------------------------------------
 * Allocation hook (util/alloc.c). Every allocation of the simulator's own
 * state and of simulated device memory goes through here, so tests can fail
 * the Nth allocation (ncclsimAllocFailAfter). */
void *sim_malloc(size_t size);
void *sim_calloc(size_t n, size_t size);
void *sim_realloc(void *p, size_t size);
void *sim_aligned_alloc(size_t align, size_t size);
void sim_free(void *p);
char *sim_strdup(const char *s);

/* ------------------------------------------------------------------------
 * Timed waiting (util/wait.c). A waitq is a futex word: a waker changes the
 * state a waiter tests, then calls sim_waitq_wake(). Waiters spin
 * NCCLSIM_SPIN polls, then sleep. */
typedef struct sim_waitq {
  _Atomic uint32_t seq;
  _Atomic uint32_t sleepers;
} sim_waitq;
#define SIM_WAITQ_INIT {0, 0}
typedef bool (*sim_ready_fn)(void *arg);

uint64_t sim_now_ns(void);
/* now + NCCLSIM_TIMEOUT */
uint64_t sim_deadline(void);
void sim_waitq_wake(sim_waitq *q);
/* Returns 0 once ready(arg), ETIMEDOUT when deadline_ns passes, ECANCELED
 * when *cancel becomes non-zero (cancel may be NULL). */
int sim_waitq_wait(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel,
                   uint64_t deadline_ns);

/* ------------------------------------------------------------------------
 * Devices and the allocation registry (cuda/device.c, cuda/memory.c). */
int sim_device_count(void);
int sim_current_device(void);

typedef enum { SIM_MEM_DEVICE = 1, SIM_MEM_HOST = 2, SIM_MEM_NCCL = 3 } sim_mem_kind;
typedef struct sim_alloc_info {
  void *base;
  size_t size; /* bytes the caller asked for */
  int device;  /* -1 for host memory */
  sim_mem_kind kind;
} sim_alloc_info;
/* Allocates `size` bytes tagged with `device` and `kind`, aligned to `align`. */
cudaError_t sim_mem_alloc(void **out, size_t size, int device, sim_mem_kind kind, size_t align);
/* Frees an allocation of `kind`; cudaErrorInvalidValue if p is not the base
 * of a live allocation of that kind. */
cudaError_t sim_mem_free(void *p, sim_mem_kind kind);
/* The allocation containing p, if any. */
bool sim_mem_lookup(const void *p, sim_alloc_info *out);
/* Checks that [p, p + bytes) does not run past the allocation containing p
 * (memory outside the registry is host memory and is not checked). On
 * failure logs a WARN naming `what` and returns false. */
bool sim_mem_check_range(const void *p, size_t bytes, const char *what);
/* Device of p: the allocation's device, or -1 for host/unknown memory. */
int sim_mem_device(const void *p);
/* Live allocations and their bytes (for leak checks in tests). */
void sim_mem_stats(size_t *count, size_t *bytes);

/* ------------------------------------------------------------------------
 * Streams (cuda/stream.c). An op is run once, in FIFO order, by the
 * stream's worker. `stream_err` is the stream's pending error before this op:
 * when it is not cudaSuccess the op must complete quickly (fail, but still
 * release waiters). run() returns the error that poisons the stream, or
 * cudaSuccess. release() frees the op; it is called after run(). */
typedef struct sim_op sim_op;
struct sim_op {
  sim_op *next;
  cudaError_t (*run)(sim_op *op, cudaError_t stream_err);
  void (*release)(sim_op *op);
  const char *what;
};
typedef struct CUstream_st sim_stream;
/* Resolves a stream handle (0 = the current device's default stream).
 * NULL with *err = cudaErrorInvalidResourceHandle for a destroyed or foreign
 * handle. */
sim_stream *sim_stream_resolve(cudaStream_t s, cudaError_t *err);
int sim_stream_device(sim_stream *s);
/* Appends op; never blocks. */
cudaError_t sim_stream_enqueue(sim_stream *s, sim_op *op);

/* ------------------------------------------------------------------------
 * Communicators (comm/). A clique is the set of ranks of one communicator,
 * shared by all of them; a struct ncclComm is one rank's view. */
typedef struct sim_clique sim_clique;
typedef struct sim_task sim_task;

/* Per-area state hung off a clique, created with it and freed with it. */
typedef enum { SIM_AREA_P2P, SIM_AREA_RMA, SIM_AREA_COLL, SIM_AREA_DEV, SIM_AREA_COUNT } sim_area_id;
typedef struct sim_area {
  const char *name;
  /* Allocates the clique's state for this area into clique->area[id]. */
  ncclResult_t (*clique_init)(sim_clique *c);
  void (*clique_fini)(sim_clique *c);
  /* Releases a rank's leftovers (windows, ops, dev comms) at destroy/abort. */
  void (*comm_fini)(ncclComm_t comm);
  /* Progress of the rank's non-blocking work, run by ncclCommGetAsyncError
   * (e.g. fails a non-blocking window registration past its deadline). */
  void (*comm_poll)(ncclComm_t comm);
} sim_area;
/* Runs every area's comm_poll (comm/comm.c). */
void sim_comm_poll(ncclComm_t comm);
extern const sim_area sim_area_p2p, sim_area_rma, sim_area_coll, sim_area_dev;

/* An outstanding operation, listed while posted and not complete, so that a
 * timeout can say what every rank was doing. */
typedef struct sim_pending {
  struct sim_pending *prev, *next;
  void (*describe)(struct sim_pending *p, char *buf, size_t len);
} sim_pending;

enum { SIM_COMM_MAGIC = 0x4e43534du };
typedef enum {
  SIM_COMM_INITIALIZING = 0,
  SIM_COMM_READY = 1,
  SIM_COMM_FINALIZED = 2,
  SIM_COMM_FAILED = 3, /* init failed; only destroy/abort are allowed */
  SIM_COMM_REVOKED = 4
} sim_comm_state;

struct sim_clique {
  uint64_t key; /* from the unique id, for logs */
  int nranks;
  struct ncclComm **ranks; /* rank -> its comm; a slot is NULL once destroyed */
  _Atomic int refs;
  _Atomic int aborted; /* set by ncclCommAbort/Revoke or a rank fault: every wait ends */
  _Atomic int dumped;  /* the first timeout dumps the pending list once */
  pthread_mutex_t lock;
  int ranks_per_node; /* ranks per simulated node */
  int nnodes;
  struct sim_split_round *splits; /* open ncclCommSplit/Shrink rounds, under lock */
  const struct sim_transport *tp; /* how ranks reach each other (sim/transport.h) */
  void *area[SIM_AREA_COUNT];
  sim_waitq wq; /* generic clique-wide wait queue (rendezvous, split) */
  /* One wait queue per rank, for waits on objects a peer may free as soon
   * as it sees them complete (a task): the waker wakes the waiter's rank
   * queue, which lives as long as the clique, never the object itself. */
  sim_waitq *rank_wq;
};

/* The wait queue of `rank`, and a wake of it. Safe to call while the waker's
 * own comm is alive, whatever became of the object that completed. */
static inline sim_waitq *sim_rank_wq(sim_clique *c, int rank) { return &c->rank_wq[rank]; }
static inline void sim_wake_rank(sim_clique *c, int rank) { sim_waitq_wake(&c->rank_wq[rank]); }

struct ncclComm {
  uint32_t magic; /* SIM_COMM_MAGIC while alive, 0 after free */
  sim_clique *clique;
  int rank, nranks, device;
  int node, lsa_rank, lsa_size; /* simulated node topology */
  bool blocking;
  _Atomic int state;       /* sim_comm_state */
  _Atomic int async_error; /* ncclResult_t */
  _Atomic int64_t inflight; /* tasks submitted and not yet released */
  _Atomic uint64_t mem_bytes; /* simulator memory held for this rank (ncclCommMemStats) */
  sim_waitq inflight_wq;
  ncclsimCommOptions_t opts; /* GIN types etc., fixed at init */
  pthread_mutex_t lock;       /* guards pending, last_error */
  sim_pending pending;        /* list head */
  char last_error[512];
  uint64_t split_count; /* this rank's ncclCommSplit/Shrink calls so far */
  uint64_t ntasks;      /* NCCL operations submitted so far */
  uint64_t fault_at;    /* NCCLSIM_FAULT: this rank dies at this operation (0: never) */
  _Atomic int dead;     /* stopped by NCCLSIM_FAULT: its operations never reach peers */
};

/* Validates a comm handle: non-NULL, alive, READY. Logs a WARN naming `op`
 * and returns ncclInvalidArgument (NULL/dead) or ncclInvalidUsage (not
 * ready) otherwise. */
ncclResult_t sim_comm_check(ncclComm_t comm, const char *op);
/* Records a failure on a comm: async error (first one wins), last_error
 * text, WARN. Returns `res`. */
ncclResult_t sim_comm_fail(ncclComm_t comm, ncclResult_t res, const char *fmt, ...) SIM_PRINTF(3, 4);
/* Dumps every rank's outstanding operations (once per clique and incident). */
void sim_clique_dump_pending(sim_clique *c, const char *why);
void sim_comm_pending_add(ncclComm_t comm, sim_pending *p);
void sim_comm_pending_del(ncclComm_t comm, sim_pending *p);
/* The cancel flag every wait of this clique passes to sim_waitq_wait. */
static inline const _Atomic int *sim_clique_cancel(sim_clique *c) { return &c->aborted; }

/* ------------------------------------------------------------------------
 * Tasks and groups (comm/task.c, comm/group.c). Area code fills a task and
 * calls sim_task_submit(); the task machinery handles groups, streams,
 * timeouts and reference counting of the comm.
 *
 * post(): announce the operation to peers; must not block for long. On
 *         failure it leaves nothing posted (peers cannot see the task).
 * wait(): called only after a successful post; blocks until done, using
 *         sim_waitq_wait with the given deadline and sim_clique_cancel(). On
 *         timeout return ncclTimeout, on cancel ncclRemoteError, in both
 *         cases after withdrawing anything peers could still touch.
 * describe(): one line for the timeout dump: the call, its arguments, and
 *         what it still waits for. The machinery lists the task as pending
 *         between post and the end of wait.
 * release(): free the task.
 * Areas report a specific diagnostic with sim_comm_fail(); otherwise the
 * machinery reports a generic one for a failed post or wait. */
struct sim_task_ops {
  const char *name; /* "ncclSend", ... */
  ncclResult_t (*post)(sim_task *t);
  ncclResult_t (*wait)(sim_task *t, uint64_t deadline_ns);
  void (*describe)(sim_task *t, char *buf, size_t len);
  void (*release)(sim_task *t);
};
struct sim_task {
  sim_task *next;
  const struct sim_task_ops *ops;
  ncclComm_t comm;
  sim_stream *stream;
  size_t bytes;        /* bytes this rank moves, for ncclGroupSimulateEnd's model */
  sim_pending pending; /* managed by the machinery */
  ncclResult_t result; /* set by the machinery */
};
/* Validates the stream, then launches the task now (outside a group) or at
 * ncclGroupEnd. On error the task is released and the error returned. */
ncclResult_t sim_task_submit(sim_task *t, cudaStream_t stream);
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
} sim_group_job;
ncclResult_t sim_group_add_job(sim_group_job *job);
/* Drops the calling thread's not-yet-launched tasks and jobs of `comm`
 * (destroy or abort inside an open group): they would otherwise keep the
 * comm's in-flight count up while the only thread that could launch them
 * waits for it to drain. */
void sim_group_forget(ncclComm_t comm);
/* True if the calling thread's open group holds unlaunched work of comm. */
bool sim_group_holds(ncclComm_t comm);
/* Every NCCL entry point returns its argument errors through this: inside a
 * group the error is also kept, ncclGroupEnd returns it and launches
 * nothing, as NCCL does. Returns res. */
ncclResult_t sim_group_error(ncclResult_t res);

/* ------------------------------------------------------------------------
 * Helpers shared by the areas. */
size_t sim_dtype_size(ncclDataType_t dt); /* 0 for an unknown type */
const char *sim_dtype_name(ncclDataType_t dt);
/* Checks a peer rank for `op` (WARN + ncclInvalidArgument if out of range). */
ncclResult_t sim_check_peer(ncclComm_t comm, int peer, const char *op);
/* Checks datatype and buffer: dtype known, buf non-NULL when count > 0,
 * buf's device (if registered) equals comm's, range within its allocation.
 * WARN + ncclInvalidArgument otherwise. */
ncclResult_t sim_check_buffer(ncclComm_t comm, const void *buf, size_t count, ncclDataType_t dt,
                              const char *op, const char *argname);

#endif /* NCCLSIM_SIM_H_ */
