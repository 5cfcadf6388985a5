/*
 * sim/sim.h — what every room of the simulator shares.
 *
 * The engine stands in floors, and a room calls only rooms below it:
 * util < cuda, net < kernel < core < comm < the areas p2p, rma, coll and
 * dev. Where a lower room must tell an upper one something, the upper one
 * registers a hook (a function pointer, or an argument passed down).
 *
 * This header holds util's functions, which every room uses (parameters,
 * logging, the allocation hook, ranks as processes, timed waiting, host
 * threads blocked by NCCL's rules), and the types that cross the floors:
 * a stream's handle, a clique's rendezvous table, the areas' sim_area, and
 * a communicator with its clique. Every other room declares its own
 * functions in its own header (cuda/cuda.h, net/net.h, core/core.h,
 * comm/comm.h, dev/dev.h), and what only its own files share in its
 * *_internal.h. Nothing here is public: the public surface is <nccl.h>,
 * <cuda_runtime_api.h>, <nccl_device.h> and <ncclsim.h>.
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

/* 1 in ThreadSanitizer builds (GCC's macro, clang's feature test). */
#if defined(__SANITIZE_THREAD__)
#define SIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIM_TSAN 1
#endif
#endif
#ifndef SIM_TSAN
#define SIM_TSAN 0
#endif

/* ThreadSanitizer: stop and start recording the calling thread's (or
 * fiber's) reads and writes, for work it cannot judge (the kernel engine's
 * own on a kernel thread, UCX's progress). Calls nest. libtsan exports
 * these, no header declares them. */
#if SIM_TSAN
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
static inline void sim_tsan_ignore_begin(void) {
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}
static inline void sim_tsan_ignore_end(void) {
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}
#endif

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
  X(SPIN, "SPIN", "2000", "polls before a waiting thread sleeps (0: sleep at once; an idle stream worker stops sooner while busy workers match the CPUs)") \
  X(RANKS_PER_NODE, "RANKS_PER_NODE", "0", "ranks per simulated node; 0 puts every rank on one node") \
  X(WINDOWS, "WINDOWS", "1", "0 makes window registration return a NULL window, as on platforms without windows") \
  X(GIN_TYPE, "GIN_TYPE", "none", "GIN type reported by communicators: none, proxy, gdaki or gpi") \
  X(RAILED_GIN_TYPE, "RAILED_GIN_TYPE", "none", "railed GIN type: none, proxy, gdaki or gpi")    \
  X(HOST_RMA, "HOST_RMA", "1", "1 if host-initiated RMA (put_signal, signal, wait_signal) is supported") \
  X(DEVICE_API, "DEVICE_API", "1", "1 if the device API (device communicators) is supported")    \
  X(LAT_US, "LAT_US", "5", "ncclGroupSimulateEnd model: microseconds of latency per operation")  \
  X(BW_GBS, "BW_GBS", "100", "ncclGroupSimulateEnd model: link bandwidth in GB/s")              \
  X(STACK_KB, "STACK_KB", "256", "stack size of each stream worker thread, in KiB")                \
  X(KERNEL_STACK_KB, "KERNEL_STACK_KB", "64", "stack size of each thread of a CUDA kernel (a fiber), in KiB; a stack costs only the pages it touches") \
  X(COMM_ORDER, "COMM_ORDER", "1", "1 runs one communicator's operations in the order they were issued, across streams, as NCCL does (an operation waits for the rank's earlier ones on other streams); 0: stream order only") \
  X(STREAM_STORE_BYTES, "STREAM_STORE_BYTES", "16777216", "bytes a collective reads and writes, all ranks' inputs and outputs together, above which it stores its results around the cache (reduce-scatter and reduce never; 0: always)") \
  X(SMALL_RANKS, "SMALL_RANKS", "auto", "largest communicator whose allreduces of up to 32 bytes a rank skip the rendezvous: each rank reads every rank's part and reduces them itself (0: none; auto: the number of CPUs, at most 16; at most 64)") \
  X(STREAM_DEPTH, "STREAM_DEPTH", "1022", "CUDA operations a stream holds pending (NCCL operations, async copies and memsets; a put_signal counts 3, a signal 2); the next enqueue blocks the host thread, as CUDA's stream queue does (0: no bound)") \
  X(GRAPH_NCCL_DEPTH, "GRAPH_NCCL_DEPTH", "36", "places of a stream's depth a CUDA graph launch holding NCCL operations takes, however many it holds (NCCL 2.30.7 on 2 x H200: 28 such launches went in behind a blocked stream, with 1, 4 or 16 allreduces a graph)") \
  X(PROCESSES, "PROCESSES", "auto", "ranks as processes: auto shares ncclsim's state among the processes of a launcher's job (mpirun, srun); 1 also with the processes this one forks (ncclsimProcessesInit); 0 never") \
  X(SHM_SIZE, "SHM_SIZE", "68719476736", "with NCCLSIM_PROCESSES=1: bytes of address space the shared arena reserves (pages are used only as touched)") \
  X(FAULT, "FAULT", "none", "RANK:K: in communicators made from now on, rank RANK stops at its Kth NCCL operation, as if its process died") \
  X(DEBUG, "DEBUG", "none", "log level: WARN, INFO or TRACE, NCCL-style lines on stderr; anything else prints nothing") \
  X(DEBUG_SUBSYS, "DEBUG_SUBSYS", "ALL", "comma-separated subsystems logged: INIT, ALLOC, STREAM, P2P, COLL, RMA, DEV, KERNEL, ALL (unknown names ignored; empty: ALL)") \
  X(TRACE, "TRACE", "none", "FILE: communicators made from now on record every NCCL operation; the timeline is written to FILE at exit (Chrome Trace Event Format; none: off)") \
  X(TRACE_RING, "TRACE_RING", "256", "flight recorder: operations each rank keeps, written to NCCLSIM_TRACE_DUMP on a failure (0: off)") \
  X(TRACE_DUMP, "TRACE_DUMP", "/tmp/ncclsim-flight-%p.json", "file of the flight recorder's dump; %p stands for the process id") \
  X(NET, "NET", "auto", "ranks on other hosts: 1 makes ncclGetUniqueId start a bootstrap root, so that ranks of any process or host join with the id; auto: 1 when NCCLSIM_HOST_ID is not auto; 0 never") \
  X(HOST_ID, "HOST_ID", "auto", "this process's host: processes of one machine with different names act as separate hosts (no shared memory; UCX over TCP between them); auto: the machine's name") \
  X(SOCKET_IFNAME, "SOCKET_IFNAME", "auto", "the bootstrap root's interface, as NCCL_SOCKET_IFNAME: comma-separated name prefixes, ^ excludes them, = matches names exactly; auto: the first interface up other than lo and docker*, else lo")

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
  SIM_KERNEL = 1 << 7,
  SIM_ALL = ~0
};
void sim_log(sim_log_level level, unsigned subsys, const char *file, int line, const char *fmt, ...)
    SIM_PRINTF(5, 6);
#define SIM_WARN(sub, ...) sim_log(SIM_LOG_WARN, (sub), __FILE__, __LINE__, __VA_ARGS__)
/* INFO and TRACE test the level before the call: a call that prints
 * nothing still cost a 1 KiB frame and a pthread_once, and p2p_post's
 * TRACE at every match was 4% of bench/signal_latency's CPU samples. */
#define SIM_LOG_ON(lvl) ((int)(lvl) <= (int)sim_param(SIM_P_DEBUG))
#define SIM_INFO(sub, ...) \
  (SIM_LOG_ON(SIM_LOG_INFO) ? sim_log(SIM_LOG_INFO, (sub), __FILE__, __LINE__, __VA_ARGS__) : (void)0)
#define SIM_TRACE(sub, ...) \
  (SIM_LOG_ON(SIM_LOG_TRACE) ? sim_log(SIM_LOG_TRACE, (sub), __FILE__, __LINE__, __VA_ARGS__) : (void)0)
/* NCCLSIM_DEBUG's value is a sim_log_level, NCCLSIM_DEBUG_SUBSYS's a mask
 * (util/param.c parses them). Any text is accepted, as NCCL does: an
 * unknown level prints nothing, unknown subsystem names are ignored, an
 * empty list means ALL. */
/* Thread's last warning text ("" if none). */
const char *sim_last_warning(void);
void sim_clear_warning(void);
/* The device a line names ("[dev]"): cuda/device.c registers the calling
 * thread's current device at load (util is below cuda and calls it by no
 * name); 0 until then, the device of every thread before cudaSetDevice. */
void sim_log_device_hook(int (*current_device)(void));

/* NCCL-style error trail: log the failing call's location and propagate.
 * On the error path only, so sim_log tests the level itself: no branch of
 * its own at every check. */
#define SIM_CHECK(call)                                                        \
  do {                                                                         \
    ncclResult_t sim_res_ = (call);                                            \
    if (sim_res_ != ncclSuccess) {                                             \
      sim_log(SIM_LOG_INFO, SIM_ALL, __FILE__, __LINE__, "%s:%d -> %d",        \
              __FILE__, __LINE__, (int)sim_res_);                              \
      return sim_res_;                                                         \
    }                                                                          \
  } while (0)
#define SIM_CHECKGOTO(call, res, label)                                        \
  do {                                                                         \
    (res) = (call);                                                            \
    if ((res) != ncclSuccess) {                                                \
      sim_log(SIM_LOG_INFO, SIM_ALL, __FILE__, __LINE__, "%s:%d -> %d",        \
              __FILE__, __LINE__, (int)(res));                                 \
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
/* Counts an allocation served without the allocator (a pool) for the hook:
 * true if this one must fail. */
bool sim_alloc_fails(void);
char *sim_strdup(const char *s);

/* ------------------------------------------------------------------------
 * Ranks as processes (util/shm.c). With NCCLSIM_PROCESSES=1 every
 * allocation above comes from one arena shared with later-forked children,
 * at the same address in each. Locks of state that peers may touch are
 * made with sim_mutex_init (process-shared and robust then) and taken with
 * sim_mutex_lock (which survives an owner that died). What used to be a
 * static shared by all ranks is a block from sim_shared(). */
enum { SIM_SHM_MAX_PROCS = 1024 };
typedef enum {
  SIM_SHARED_INIT,    /* comm/init.c: open init rounds */
  SIM_SHARED_MEM,     /* cuda/memory.c: the allocation registry */
  SIM_SHARED_WIN,     /* rma/win_registry.c: live and dead window handles */
  SIM_SHARED_THREADS, /* util/block.c: thread numbers */
  SIM_SHARED_TRACE,   /* core/trace.c: the cliques with a recorder */
  SIM_SHARED_CLIQUES, /* comm/clique.c: live cliques, for dead peers */
  SIM_SHARED_BUSY,    /* util/wait.c: the stream workers running operations */
  SIM_SHARED_COUNT
} sim_shared_id;
bool sim_shm_on(void);
/* The same without deciding: false while no allocation has decided yet
 * (a fork handler must leave the child free to join a job it names after
 * the fork, as n4c-conformance --sim-hosts does). */
bool sim_shm_already_on(void);
/* The job's random name (0 without NCCLSIM_PROCESSES): unique ids carry it. */
uint64_t sim_shm_job(void);
void *sim_shm_alloc(size_t align, size_t size);
void sim_shm_free(void *p);
size_t sim_shm_usable(const void *p);
bool sim_shm_contains(const void *p);
void sim_shm_stats(size_t *used, size_t *size);
/* The shared block `id` (size bytes, zeroed, then init), made by the first
 * caller of any process; NULL out of memory. */
void *sim_shared(sim_shared_id id, size_t size, void (*init)(void *));
void sim_mutex_init(pthread_mutex_t *m);
void sim_mutex_lock(pthread_mutex_t *m);
void sim_rwlock_init(pthread_rwlock_t *l);
/* Registers this process as a member of the job (at its first
 * communicator) and starts the thread that watches the others. That
 * thread runs `exited` (if not NULL; the last one given is kept) for each
 * process that exits, once the busy workers have taken back its share:
 * comm/clique.c's fails every communicator with ranks in it (util is below
 * comm and calls it by no name). */
void sim_proc_register(void (*exited)(int pid));
/* Processes started apart (util/job.c): whether a launcher named a job
 * (and NCCLSIM_PROCESSES is not 0), and the job's arena of `size` bytes,
 * made by the first process (which runs init on it before any other sees
 * it) and mapped at the same address by the others. */
bool sim_job_named(void);
ncclResult_t sim_job_attach(size_t size, void (*init)(void *p, size_t size), void **out, bool *created);

/* ------------------------------------------------------------------------
 * The CPU's spin-wait hint, for a poll that is about to try again. */
static inline void sim_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* ------------------------------------------------------------------------
 * Timed waiting (util/wait.c). A waitq is a futex word: a waker changes the
 * state a waiter tests, then calls sim_waitq_wake(). Waiters spin
 * NCCLSIM_SPIN polls, then sleep. */
typedef struct sim_waitq {
  _Atomic uint32_t seq;
  _Atomic uint32_t sleepers;
} sim_waitq;
/* A waitq on a cache line of its own, for arrays of them that different
 * threads wake (per rank): neighbours on one line would bounce it. */
typedef struct sim_waitq_line {
  _Alignas(64) sim_waitq q;
} sim_waitq_line;
#define SIM_WAITQ_INIT {0, 0}
typedef bool (*sim_ready_fn)(void *arg);

uint64_t sim_now_ns(void);
/* A cheap timestamp (util/ticks.c): the CPU's time-stamp counter where the
 * kernel's clock runs on it, else sim_now_ns(); sim_ticks_per_ns()
 * converts. For stamps on every operation, not for deadlines. */
extern bool sim_tsc;
static inline uint64_t sim_ticks(void) {
#if defined(__x86_64__)
  if (sim_tsc) return __builtin_ia32_rdtsc();
#endif
  return sim_now_ns();
}
double sim_ticks_per_ns(void);
/* now + NCCLSIM_TIMEOUT */
uint64_t sim_deadline(void);
/* A deadline NCCLSIM_TIMEOUT after the moment it is first needed: a wait
 * that ends while it spins never reads the clock (a clock read costs as
 * much as a signal's whole handoff). `at` is 0 until then; every wait that
 * shares one (the tasks of one launch) ends by the same time. */
typedef struct sim_due {
  uint64_t at;
} sim_due;
#define SIM_DUE_LAZY ((sim_due){0})
static inline sim_due sim_due_at(uint64_t deadline_ns) { return (sim_due){deadline_ns ? deadline_ns : 1}; }
uint64_t sim_due_ns(sim_due *d);
void sim_waitq_wake(sim_waitq *q);
/* sim_waitq_wake without its fence, for a state changed by a sequentially
 * consistent atomic read-modify-write that every ready() of q's waiters
 * reads with a sequentially consistent load: that change already orders
 * the waker's read of `sleepers` after it, as the fence does for any
 * other change (util/wait.c). */
static inline void sim_waitq_wake_sleepers(sim_waitq *q) {
  if (atomic_load(&q->sleepers)) sim_waitq_wake(q);
}
/* Returns 0 once ready(arg), ETIMEDOUT when deadline_ns passes, ECANCELED
 * when *cancel becomes non-zero (cancel may be NULL). */
int sim_waitq_wait(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel,
                   uint64_t deadline_ns);
/* The same, with a deadline set only if the wait has to sleep. */
int sim_waitq_wait_due(sim_waitq *q, sim_ready_fn ready, void *arg, const _Atomic int *cancel, sim_due *due);
/* Stream workers that run operations: each counts itself busy while it
 * runs one and is not asleep in it (a sleep in sim_waitq_wait or
 * sim_count_wait uncounts it), in a count of the job's (every process of
 * one machine, with ranks as processes). sim_worker_busy(true) counts the
 * calling thread in, false counts it out; a thread that is in stays in
 * until it says false. */
void sim_worker_busy(bool busy);
int sim_workers_busy(void);
/* Takes back the share of process `pid`, which exited (the job's monitor,
 * util/shm.c). Idempotent. */
void sim_workers_gone(int pid);
/* An idle stream worker's wait for work, with no deadline: as
 * sim_waitq_wait, but uncounted from the busy workers, and it stops
 * polling (it sleeps) at the first poll that would yield while the job's
 * busy workers are exactly as many as the CPUs (util/wait.c says why). */
void sim_waitq_wait_idle(sim_waitq *q, sim_ready_fn ready, void *arg);

/* A count whose waiters wait for it to reach a value of their own: adding
 * wakes them only when the count reaches the lowest value a sleeper waits
 * for, not at every step (a stream's completions: a synchronize waits for
 * the last one, and must not be woken by each). */
typedef struct sim_count {
  _Atomic uint64_t value;
  _Atomic uint64_t want; /* lowest value a sleeper waits for; UINT64_MAX: none */
  sim_waitq q;
} sim_count;
void sim_count_init(sim_count *c);
/* value += n (release); returns the new value. */
uint64_t sim_count_add(sim_count *c, uint64_t n);
static inline uint64_t sim_count_get(const sim_count *c) {
  return atomic_load_explicit(&((sim_count *)c)->value, memory_order_acquire);
}
/* Waits until the count reaches target (0) or deadline_ns passes
 * (ETIMEDOUT): 64 polls, then sleeps. */
int sim_count_wait(sim_count *c, uint64_t target, uint64_t deadline_ns);
/* The same with `yields` more polls, each after a sched_yield, before it
 * sleeps. */
int sim_count_wait_spin(sim_count *c, uint64_t target, uint64_t deadline_ns, int64_t yields);
/* Online CPUs (read once). */
int sim_ncpus(void);

/* ------------------------------------------------------------------------
 * Host threads blocked by NCCL's rules (util/block.c). Real NCCL blocks
 * the calling host thread at an operation's first use of a connection
 * until the peers take part, and CUDA blocks it when a stream's queue is
 * full. A thread blocked so registers a sim_block while it waits; each
 * communicator rank remembers the thread of its last call (its driver).
 * When every rank whose call could release a blocked thread is driven by
 * a thread that is itself blocked so (this one included), nothing can
 * ever release it: the wait ends at once with EDEADLK and a diagnostic,
 * where a GPU would hang. */
struct sim_clique;
typedef struct sim_rank_ref {
  struct sim_clique *c;
  int rank;
} sim_rank_ref;
typedef struct sim_block {
  struct sim_block *next;
  uint64_t thread; /* sim_thread_self() of the blocked thread */
  int tid;         /* its OS thread id, for messages */
  char what[192];  /* "rank 0's first ncclSend to rank 1 (first-use connection)" */
  /* Lists, as they stand now, the ranks whose next call would release the
   * thread; 0 when it is about to be released or it cannot be told.
   * Called under the registry's lock: may take locks of rendezvous tables
   * and streams, never the registry's. */
  int (*awaits)(struct sim_block *b, sim_rank_ref *out, int max);
  void *arg;
  _Atomic int doomed; /* set by another thread of the same deadlock, with `why` */
  char why[512];
} sim_block;
/* This thread's number (1, 2, ...: never reused) and OS thread id. */
uint64_t sim_thread_self(void);
int sim_thread_tid(void);
/* Waits as sim_waitq_wait does, registered as blocked by b (thread, tid
 * and `what` set by the caller through sim_block_init). Returns 0,
 * ETIMEDOUT at deadline_ns, or EDEADLK when the thread can no longer be
 * released; then `why` holds who drives the awaited ranks and why they
 * cannot act. */
void sim_block_init(sim_block *b, int (*awaits)(sim_block *b, sim_rank_ref *out, int max), void *arg,
                    const char *fmt, ...) SIM_PRINTF(4, 5);
int sim_block_wait(sim_block *b, sim_waitq *q, sim_ready_fn ready, void *ready_arg, uint64_t deadline_ns,
                   char *why, size_t len);

/* ------------------------------------------------------------------------
 * Streams (cuda/; cuda/cuda.h has them): a communicator keeps the ones its
 * rank launched on. */
typedef struct CUstream_st sim_stream;

/* ------------------------------------------------------------------------
 * Rendezvous tables (core/rendezvous.c; core/core.h has the rounds): a
 * clique embeds one, as an area's state may. */
typedef struct sim_rv sim_rv;
typedef struct sim_rv_table {
  pthread_mutex_t lock;
  sim_rv *open; /* rounds not yet complete, under lock */
  sim_rv *spare; /* freed rounds kept for reuse, under lock */
  int nspare;
  sim_waitq wq; /* woken at every arrival and departure */
} sim_rv_table;

/* ------------------------------------------------------------------------
 * Communicators (comm/; comm/comm.h has their functions). A clique is the
 * set of ranks of one communicator, shared by all of them; a struct
 * ncclComm is one rank's view. */
typedef struct sim_clique sim_clique;
typedef struct sim_task sim_task;

/* Per-area state hung off a clique, created with it and freed with it. */
struct sim_net_rank_info;
typedef enum { SIM_AREA_CONN, SIM_AREA_P2P, SIM_AREA_RMA, SIM_AREA_COLL, SIM_AREA_DEV, SIM_AREA_COUNT } sim_area_id;
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
  /* ncclCommSuspend(NCCL_SUSPEND_MEM) and ncclCommResume (comm/suspend.c),
   * all optional. Called with no operation in flight on any rank of the
   * clique: rank_suspend frees the state of `rank` that only operations
   * use (what NCCL would release: per-peer buffers), rank_resume makes it
   * again (ncclSystemError: nothing made). rank_suspendable is its size in
   * bytes: with now false, whether suspended or not (ncclStatGpuMemSuspend);
   * with now true, what is allocated at the moment. */
  size_t (*rank_suspendable)(sim_clique *c, int rank, bool now);
  void (*rank_suspend)(sim_clique *c, int rank);
  ncclResult_t (*rank_resume)(sim_clique *c, int rank);
  /* Across hosts, both optional. net_join, before the rank's bootstrap
   * (comm/init.c): puts what its peers elsewhere need of this area into
   * what it gives the bootstrap (sim/net/net.h; rma: its signal counters),
   * or says in why what it could not make. comm_free, as a comm is freed
   * (one that never joined a clique, and after destroy): frees what the
   * comm still holds of that. */
  ncclResult_t (*net_join)(ncclComm_t comm, struct sim_net_rank_info *mine, char *why, size_t len);
  void (*comm_free)(ncclComm_t comm);
} sim_area;
/* The areas, each defined in its own room (sim_area_conn: the first-use
 * connections of core/connect.c), in the order comm/clique.c sets them up. */
extern const sim_area sim_area_conn, sim_area_p2p, sim_area_rma, sim_area_coll, sim_area_dev;

/* A stream a rank has launched work on. A rank's outstanding operations
 * are the posted tasks of what its streams run now, which is where the
 * timeout dump looks (sim_stream_peek): nothing is listed or unlisted per
 * operation. Pushed at the rank's first launch on the stream; freed with
 * the comm. */
typedef struct sim_comm_stream {
  struct sim_comm_stream *next;
  sim_stream *s;
} sim_comm_stream;

enum { SIM_COMM_MAGIC = 0x4e43534du };
typedef enum {
  SIM_COMM_INITIALIZING = 0,
  SIM_COMM_READY = 1,
  SIM_COMM_FINALIZED = 2,
  SIM_COMM_FAILED = 3, /* init failed; only destroy/abort are allowed */
  SIM_COMM_REVOKED = 4,  /* ncclCommRevoke: destroy, abort, split, shrink, grow and queries only */
  SIM_COMM_SUSPENDED = 5 /* ncclCommSuspend(NCCL_SUSPEND_MEM): resume, destroy, abort and queries only */
} sim_comm_state;

struct sim_clique {
  uint64_t key; /* from the unique id, for logs */
  int nranks;
  struct ncclComm **ranks; /* rank -> its comm; a slot is NULL once destroyed */
  _Atomic int refs;
  _Atomic int aborted; /* set by ncclCommAbort or a dead process (sim_clique_abort): every rank's operations end */
  _Atomic int dumped;  /* the first timeout dumps the pending list once */
  void *trace;         /* its flight recorder and timeline state (core/trace.c) */
  pthread_mutex_t lock;
  int ranks_per_node; /* ranks per simulated node */
  int nnodes;
  sim_rv_table splits; /* ncclCommSplit/Shrink rounds */
  const struct sim_transport *tp; /* how ranks reach each other (sim/transport.h) */
  struct sim_net_map *net; /* ranks on other hosts (sim/net/net.h); NULL: all are here */
  void *area[SIM_AREA_COUNT];
  /* One wait queue per rank, for waits on objects a peer may free as soon
   * as it sees them complete (a task): the waker wakes the waiter's rank
   * queue, which lives as long as the clique, never the object itself. */
  sim_waitq_line *rank_wq;
  /* Ranks as processes: the live cliques of the job (comm/clique.c), and
   * the first rank whose process exited (0 pid: none). */
  struct sim_clique *live_prev, *live_next;
  _Atomic uint64_t exited; /* pid << 32 | rank; 0: none (sim_clique_exited) */
  /* ncclCommGetUniqueId (comm/grow.c), under lock: the grow number the last
   * id was made for (0: none pending) and the rank that made it. */
  uint64_t grow_seq;
  int grow_root;
  uint64_t grow_consumed; /* the last grow number an existing rank joined */
  ncclUniqueId grow_id;   /* across hosts: that id (its bootstrap root is in grow_root's process) */
};

/* The pid of the first rank of c whose process exited, and that rank in
 * *rank; 0 if none. */
static inline int sim_clique_exited(sim_clique *c, int *rank) {
  uint64_t e = atomic_load(&c->exited);
  *rank = (int)(uint32_t)e;
  return (int)(e >> 32);
}

/* The wait queue of `rank`, and a wake of it. Safe to call while the waker's
 * own comm is alive, whatever became of the object that completed. */
static inline sim_waitq *sim_rank_wq(sim_clique *c, int rank) { return &c->rank_wq[rank].q; }
static inline void sim_wake_rank(sim_clique *c, int rank) { sim_waitq_wake(&c->rank_wq[rank].q); }

struct ncclComm {
  uint32_t magic; /* SIM_COMM_MAGIC while alive, 0 after free */
  sim_clique *clique;
  sim_rv *init_rv; /* its init round while it joins (comm/init.c) */
  /* Across hosts (sim/net): the bootstrap under way, until the root
   * answers, and then the host map until the clique takes it. */
  struct sim_net_boot *boot;
  struct sim_net_map *net_pending;
  uint64_t boot_key, boot_deadline;
  struct sim_init_pre *init_pre; /* its unique id is still to come (comm/init.c, sim_init_later) */
  /* A non-blocking init at its bootstrap: on the list that any poll
   * advances (comm/init.c), under that list's lock. */
  struct ncclComm *pend_next;
  bool pend_listed, pend_busy;
  /* Its signal counters, one per source rank, made before the bootstrap
   * so that their remote key travels with it (the clique takes the row),
   * and UCX's mapping of them in this process (rma/rma_net.c). */
  void *net_sig_row, *net_sig_memh;
  int rank, nranks, device;
  int node, lsa_rank, lsa_size; /* simulated node topology */
  bool blocking;
  bool grow_join;          /* joins a grow's round (comm/grow.c), not an init's */
  _Atomic int state;       /* sim_comm_state */
  _Atomic int async_error; /* ncclResult_t */
  _Atomic int64_t inflight; /* tasks submitted and not yet released */
  _Atomic int64_t graph_inflight; /* of those, the ones graph launches issued (core/capture.c) */
  _Atomic uint64_t mem_bytes; /* simulator memory held for this rank (ncclCommMemStats) */
  sim_waitq inflight_wq;
  ncclsimCommOptions_t opts; /* GIN types etc., fixed at init */
  pthread_mutex_t lock;       /* guards last_error; the timeout dump describes the rank's tasks under it */
  _Atomic(sim_comm_stream *) streams; /* every stream it launched on, newest first */
  _Atomic(sim_stream *) last_stream;  /* the submitter's last one, found in streams */
  char last_error[512];
  uint64_t split_count; /* this rank's ncclCommSplit/Shrink calls so far */
  uint64_t ntasks;      /* NCCL operations submitted so far */
  uint64_t fault_at;    /* NCCLSIM_FAULT: this rank dies at this operation (0: never) */
  _Atomic int dead;     /* stopped by NCCLSIM_FAULT: its operations never reach peers */
  /* Ends this rank's waits in operations (sim_comm_cancel): set by its
   * ncclCommRevoke, for a moment by ncclCommShrink(NCCL_SHRINK_ABORT), and
   * for every rank by sim_clique_abort. */
  _Atomic int cancel;
  _Atomic int gone;          /* its process exited (comm/clique.c's proc_exited) */
  _Atomic int mem_suspended; /* ncclStatGpuMemSuspended: its suspendable state is freed */
  uint64_t mgmt_count;       /* its ncclCommSuspend(MEM)/Resume calls, which meet as rounds */
  sim_rv *mgmt_rv;           /* a non-blocking suspend or resume in progress (comm/suspend.c), under lock */
  struct sim_mgmt_net *mgmt_net; /* the same across hosts: its exchange (comm/suspend.c), under lock */
  bool mgmt_resume;
  /* Its grows across hosts whose exchange is still in flight for a child
   * still initializing (comm/child_net.c): they end with the parent. */
  struct sim_child_net *net_children;
  int pid;                 /* the process the rank lives in */
  _Atomic uint64_t driver; /* sim_thread_self() of its last NCCL call (0: none yet) */
  _Atomic int driver_tid;
  /* NCCL runs a communicator's launches one after another whatever their
   * streams (each launch's stream waits for the previous launch: enqueue.cc,
   * the deviceStream), so an operation waits for the rank's earlier ones on
   * other streams (core/task.c; NCCLSIM_COMM_ORDER). */
  uint64_t order_launched;   /* tasks launched so far, by the submitting thread */
  sim_stream *order_stream;  /* the stream of the last launch; NULL: several, or none */
  const void *order_mark;    /* the launch being counted, and what is known of it: */
  uint64_t order_base;       /* order_launched before it */
  sim_stream *order_first;   /* its first task's stream */
  bool order_streams;        /* it uses more than one stream */
  sim_count order_done;      /* tasks whose run has ended */
};

/* Records the calling thread as comm's driver (every NCCL call does). */
static inline void sim_comm_driven(ncclComm_t comm) {
  atomic_store_explicit(&comm->driver, sim_thread_self(), memory_order_relaxed);
  atomic_store_explicit(&comm->driver_tid, sim_thread_tid(), memory_order_relaxed);
}

/* The cancel flag a rank's waits in operations pass to sim_waitq_wait. */
static inline const _Atomic int *sim_comm_cancel(ncclComm_t comm) { return &comm->cancel; }

#endif /* NCCLSIM_SIM_H_ */
