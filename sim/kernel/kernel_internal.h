/*
 * sim/kernel/kernel_internal.h — shared by the files of the kernel room:
 * fibers (fiber.c), the threads of a block and their barriers and warps
 * (block.c), a launch run on its stream's worker (grid.c), launches and
 * their checks (launch.c), the registry of kernels (registry.c), faults
 * (fault.c) and device printf (printf.c).
 *
 * The room sits on cuda/ (streams, devices, memory) and below core/.
 */
#ifndef NCCLSIM_KERNEL_INTERNAL_H_
#define NCCLSIM_KERNEL_INTERNAL_H_

#include <setjmp.h>

#include "../sim.h"
#include "../cuda/cuda.h"
#include "kernel.h"
#include <ncclsim_device/abi.h>

/* ---- fibers (fiber.c) ---- */
typedef struct sim_fiber {
  void *ctx;          /* where it resumes (Boost.Context's fcontext_t) */
  void *map;          /* guard page + stack */
  size_t map_size;
  char *stack;        /* lowest usable address */
  size_t stack_size;
  void *tsan;         /* ThreadSanitizer's fiber */
  int tsan_ign;       /* its ignore depth when it last switched away (fiber.c) */
  struct sim_fiber *next; /* in the worker's pool */
  void (*fn)(void *);
  void *arg;
  struct sim_fiber *exit_to; /* where it goes when fn returns */
  bool exit_sync;
  bool fresh;         /* prepared with a new context, not yet entered */
  bool leaving;       /* its thread ended: pooled by whatever resumes after it */
  bool parked;        /* waits in its loop for its next thread (no new context needed) */
  bool slot, busy;    /* one of the worker's by ring index (fiber.c), and in use */
  struct sim_fiber *target; /* the fiber it last jumped to (one entered first learns itself) */
} sim_fiber;

/* The calling worker's own context, made with the worker's fiber state
 * (pool, signal stack) at its first call; NULL out of memory. */
sim_fiber *sim_fiber_home(void);
/* A fiber with a stack, from the worker's pool, for the thread at index
 * `slot` of its ring (under ThreadSanitizer, the worker's fiber of that
 * index: fiber.c); NULL out of memory. */
sim_fiber *sim_fiber_alloc(unsigned slot);
/* Pools a fiber whose function did not return (abandoned by a fault) or
 * that was never switched to. */
void sim_fiber_free(sim_fiber *f);
/* Makes f run fn(arg) when it is next switched to. When fn returns, f
 * goes where sim_fiber_exit_to said, and back to the pool. */
void sim_fiber_prepare(sim_fiber *f, void (*fn)(void *), void *arg);
/* Suspends `from` (the running context) and resumes `to`. `sync`: the
 * switch orders what `from` did before what `to` does, for
 * ThreadSanitizer (kernel threads switch without it: see fiber.c). */
void sim_fiber_switch(sim_fiber *from, sim_fiber *to, bool sync);
/* Where `from`, running, goes when its function returns, as a switch. */
void sim_fiber_exit_to(sim_fiber *from, sim_fiber *to, bool sync);
/* The sanitizers told of a switch from `from` to `to` that a siglongjmp
 * makes (a fault in a kernel thread): `from` is abandoned. */
void sim_fiber_escape(sim_fiber *from, sim_fiber *to);
size_t sim_fiber_stack_size(void);
/* Under ThreadSanitizer: the thread-local variables of every module
 * loaded, made for the calling worker before its kernel threads use them
 * (fiber.c). */
#if SIM_TSAN
void sim_fiber_tls_ready(void);
#else
static inline void sim_fiber_tls_ready(void) {}
#endif


/* Where threads meet (a barrier, a warp exchange, a launch), the order
 * ThreadSanitizer is told of: what came before a release on p, before
 * what comes after an acquire on p. */
#if SIM_TSAN
#include <sanitizer/tsan_interface.h>
#define HB_RELEASE(p) __tsan_release((void *)(p))
#define HB_ACQUIRE(p) __tsan_acquire((void *)(p))
#else
#define HB_RELEASE(p) ((void)(p))
#define HB_ACQUIRE(p) ((void)(p))
#endif

/* ---- a kernel's threads (block.c) ---- */
typedef enum { KT_NEW = 0, KT_RUN, KT_BAR, KT_WARP, KT_GRID, KT_DONE } kt_state;

typedef struct kthread {
  __ncclsim_kthread pub; /* first: __ncclsim_self points at it */
  uint3 tid;
  uint8_t state;
  uint32_t wait_gen;     /* the barrier or warp generation it waits for */
  const char *waits_for; /* what its last __ncclsim_yield waited for */
  bool in_activemask;    /* waits in __activemask for its warp to settle */
  unsigned active;       /* the mask __activemask settled on */
  sim_fiber *fiber;      /* NULL before it starts and after it ends */
} kthread;

/* An exchange under way among some lanes of a warp. Lanes with disjoint
 * masks exchange independently (the tiles of a warp), so a warp has up to
 * 32 at once. */
typedef struct kexchange {
  unsigned want; /* the lanes of the exchange (0: the slot is free) */
  unsigned arrived;
  __ncclsim_warp_fn fn;
  const char *kind;
} kexchange;

typedef struct kwarp {
  kexchange ex[32];
  uint64_t value[32], arg[32];
  /* A lane's result waits in its slot until it reads it: no exchange that
   * could overwrite it completes before, since that one needs the lane. */
  uint64_t result[32];
} kwarp;

typedef struct kshared {
  const void *key;
  void *ptr;
} kshared;

struct __ncclsim_kblock {
  struct kgrid *grid;
  uint3 bid;
  unsigned nthreads, live;
  kthread *threads;
  kwarp *warps;
  unsigned nwarps;
  /* __syncthreads: arrivals of this generation, and the reduction */
  unsigned bar_arrived;
  uint32_t bar_gen;
  int bar_acc;
  int bar_result[2];
  /* __shared__: the dynamic part first, then the variables as first used */
  char *smem;
  size_t smem_dynamic, smem_used, smem_cap;
  kshared *vars;
  unsigned nvars, vars_cap;
  bool cached; /* its buffers are its worker's (block.c) */
  unsigned ring_base; /* the ring's index of its first thread */
};
typedef struct __ncclsim_kblock kblock;

/* A launch while its worker runs it (grid.c). `ring` is the threads that
 * are resident: one block's, or every block's in a cooperative launch. */
typedef struct kgrid {
  __ncclsim_launch *l;
  int device;
  unsigned long long nblocks, blocks_started;
  kblock *blocks;    /* the resident blocks */
  unsigned nresident;
  kthread **ring;
  unsigned ring_n, live;
  /* The grid barrier of a cooperative launch. */
  unsigned grid_arrived;
  uint32_t grid_gen;
  /* A round of the ring with no progress (barrier passed, thread started
   * or ended) lets other workers run; NCCLSIM_TIMEOUT of them ends it. */
  bool progress;
  uint64_t quiet_since;
  sim_fiber *home;
  kthread *running;
  uint3 *tls_tid, *tls_bid; /* the worker's threadIdx and blockIdx (sim_k_tls_bind) */
  __ncclsim_kthread **tls_self;
  const char *pretty; /* the kernel's signature, from its prologue */
  cudaError_t err;    /* a fault; the worker reports it */
  char why[1024];
  bool jmp_armed;
  sigjmp_buf jmp;     /* a signal in a kernel thread lands here */
} kgrid;

/* The grid the calling worker runs (NULL: none). */
extern _Thread_local kgrid *sim_k_grid;

/* Runs every block of l on the calling worker; cudaSuccess, or the
 * kernel's fault (recorded sticky on the device, and reported). */
cudaError_t sim_k_run(__ncclsim_launch *l, int device);
/* Block setup and the first switch into its threads (block.c). */
bool sim_k_block_init(kgrid *g, kblock *b, uint3 bid, bool own);
void sim_k_block_fini(kblock *b);
/* Switches from the home context into the ring until every resident
 * thread ended, or the grid was aborted (g->err). */
void sim_k_ring_run(kgrid *g);
/* Takes the calling worker's addresses of the thread-locals a switch sets. */
void sim_k_tls_bind(kgrid *g);
/* Ends the running grid with err: records the message (first fault wins)
 * and switches home; never returns to the caller. From a fiber only. */
void sim_k_abort(kgrid *g, cudaError_t err, const char *fmt, ...) SIM_PRINTF(3, 4) __attribute__((noreturn));
/* Records a fault without switching (the home context, a signal handler). */
void sim_k_fault(kgrid *g, cudaError_t err, const char *fmt, ...) SIM_PRINTF(3, 4);
/* "kernel NAME, block (x,y,z), thread (x,y,z)" for messages. */
void sim_k_where(kgrid *g, const kthread *t, char *buf, size_t len);

/* ---- the registry (registry.c) ---- */
/* pack and nargs are set as the kernel registers, before main; the rest
 * change while launches run (a probe, cudaFuncSetAttribute on one thread,
 * a block's end on a worker): read and written with K_GET and K_SET,
 * relaxed atomics (each is a value on its own). */
typedef struct kentry {
  const void *kernel;
  __ncclsim_pack_fn pack;
  unsigned nargs;
  const char *pretty;
  unsigned max_threads; /* __launch_bounds__ (0: none) */
  int max_dynamic_smem; /* cudaFuncAttributeMaxDynamicSharedMemorySize */
  int carveout;         /* cudaFuncAttributePreferredSharedMemoryCarveout */
  size_t static_smem;   /* the __shared__ bytes its last block used */
} kentry;
/* The kernel at `kernel`, registered by its prologue or met by a probe
 * (made then); NULL if unknown and `make` is false, or out of memory. */
kentry *sim_k_lookup(const void *kernel, bool make);
#define K_GET(k, field) __atomic_load_n(&(k)->field, __ATOMIC_RELAXED)
#define K_SET(k, field, v) __atomic_store_n(&(k)->field, (v), __ATOMIC_RELAXED)
/* The shared memory a block of k may have: 48 KiB, or what
 * cudaFuncSetAttribute raised it to. */
size_t sim_k_smem_limit(const kentry *k);
/* A call on func, which is not a kernel: its CUDA error, recorded. */
cudaError_t sim_k_not_kernel(const void *func);

/* Graphs (graph.c): a launch on a capturing stream becomes a kernel node
 * that keeps l (cudaSuccess: l is the node's; otherwise l is still the
 * caller's). sim_k_launch_check: identifies l's kernel and checks its
 * configuration, as a launch does (launch.c). */
cudaError_t sim_k_capture(__ncclsim_launch *l, int device, sim_stream *s);
cudaError_t sim_k_launch_check(__ncclsim_launch *l);

/* Blocks of `threads` threads using `smem` bytes of shared memory that an
 * H100 multiprocessor holds (launch.c). */
int sim_k_occupancy(unsigned threads, size_t smem);
/* A cudaLaunchKernelEx's attributes: cooperative or not (launch.c);
 * cudaSuccess, cudaErrorInvalidValue or cudaErrorNotSupported. */
int sim_k_config_attrs(const cudaLaunchConfig_t *config, int *cooperative);

/* ---- faults and output (fault.c, printf.c) ---- */
/* Catches SIGSEGV and SIGBUS in kernel threads (installed at the first
 * launch). */
void sim_k_signals_install(void);
/* Prints the device's buffered printf output (a synchronizing call, a
 * launch, exit). */
void sim_k_printf_flush(int device);

/* Loop ticks between two lets-others-run of a spinning thread. */
enum { SIM_K_TICKS = 1024 };

#endif
