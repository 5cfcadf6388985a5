/*
 * ncclsim_device/abi.h — what ncclsim's device headers and libncclsim
 * share to run CUDA kernels on the CPU. Not an API: the names here may
 * change with any release; programs use CUDA's names (threadIdx,
 * __syncthreads, atomicAdd, ...), which the other headers of this folder
 * define on top of it.
 *
 * A kernel's threads are fibers (user-level contexts, Boost.Context) run by
 * the stream's worker thread, one block at a time (a cooperative launch:
 * every block at once). The worker keeps the running fiber's coordinates in
 * the thread-local variables below, so `threadIdx.x` is one load.
 *
 * C and C++: the engine (sim/kernel/, C11) and the device headers (C++)
 * both include it.
 */
#ifndef NCCLSIM_DEVICE_ABI_H_
#define NCCLSIM_DEVICE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include <vector_types.h>

/* 1 in a ThreadSanitizer build (GCC's macro, clang's feature test). */
#if defined(__SANITIZE_THREAD__)
#define NCCLSIM_K_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NCCLSIM_K_TSAN 1
#endif
#endif

#ifdef __cplusplus
#define NCCLSIM_K_TLS __thread
extern "C" {
#else
#define NCCLSIM_K_TLS _Thread_local
#endif

/* The running fiber's coordinates; the worker writes them at every switch.
 * Outside a kernel: threadIdx and blockIdx zero, blockDim and gridDim one,
 * as for the host thread that a kernel is not. CUDA declares blockDim and
 * gridDim as dim3; they are uint3 here (a thread-local variable needs a
 * trivial type), which dim3 converts from. */
extern NCCLSIM_K_TLS uint3 threadIdx;
extern NCCLSIM_K_TLS uint3 blockIdx;
extern NCCLSIM_K_TLS uint3 blockDim;
extern NCCLSIM_K_TLS uint3 gridDim;

/* A thread of a running kernel, as the device headers see it. */
typedef struct __ncclsim_kthread {
  unsigned rank;        /* linear index in the block: x + y*bx + z*bx*by */
  unsigned lane, warp;  /* rank % 32, rank / 32 */
  unsigned warp_lanes;  /* the lanes of its warp that the block has (a last, partial warp has fewer) */
  struct __ncclsim_kblock *block;
  void *user;           /* the device API's (nccl_device): per-thread state */
} __ncclsim_kthread;

/* The running thread of a kernel; NULL on a thread that runs no kernel. */
extern NCCLSIM_K_TLS __ncclsim_kthread *__ncclsim_self;

/* Loop back-edges count down from this; at zero the thread lets the next
 * thread of its block run (__ncclsim_tick), so a thread that spins on a
 * flag another thread sets cannot starve it. ncclsim's compiler driver
 * puts the count in every loop of device code. */
#if defined(__cplusplus) && defined(NCCLSIM_K_TSAN)
/* Under ThreadSanitizer: the count is one word of the worker's, which
 * every thread of the block counts down in turn, each on its own fiber;
 * plain, it would be reported as a race between them (a fiber switch
 * orders nothing there, as on a GPU). A relaxed atomic says what it is,
 * and orders nothing either. The same int to the engine. */
struct __ncclsim_ticks_t {
  int n;
  int operator--() { return __atomic_sub_fetch(&n, 1, __ATOMIC_RELAXED); }
};
extern NCCLSIM_K_TLS __ncclsim_ticks_t __ncclsim_ticks;
#else
extern NCCLSIM_K_TLS int __ncclsim_ticks;
#endif
void __ncclsim_tick(void);

/* ---- launches ------------------------------------------------------------
 * A launch record: the device headers lay the kernel's arguments out behind
 * it (a C++ tuple), and give the functions that call the kernel with them
 * and destroy them. */
typedef struct __ncclsim_launch {
  void (*invoke)(struct __ncclsim_launch *l); /* one thread's call of the kernel */
  void (*destroy)(struct __ncclsim_launch *l);
  dim3 grid, block;
  size_t smem;
  void *stream;        /* cudaStream_t */
  int cooperative;     /* cudaLaunchCooperativeKernel, or the attribute */
  const void *kernel;  /* the kernel's address, found by the probe */
  const char *name;    /* as written at the launch (the callee), or the registry's */
  const char *file;    /* the launch's place in the source (NULL: unknown) */
  int line;
  void *args;          /* the arguments (inside this record's block) */
  void *engine;        /* the engine's */
} __ncclsim_launch;

/* Memory for a record and its arguments (size bytes, 64-aligned), from the
 * stream's op pool; NULL: out of memory, or a bad stream (the submit that
 * follows is not made; __ncclsim_launch_free gives it back). */
void *__ncclsim_launch_alloc(void *stream, size_t size);
void __ncclsim_launch_free(void *record);
/* A launch that got no record: cudaErrorMemoryAllocation, kept for
 * cudaGetLastError; returns it. */
int __ncclsim_launch_oom(void);
/* Checks the configuration, then enqueues the launch on its stream. On an
 * error the record is destroyed (destroy, then freed) and the error, a
 * cudaError_t, recorded for cudaGetLastError and returned. */
int __ncclsim_launch_submit(__ncclsim_launch *l);

/* A cudaLaunchConfig_t's attributes, for cudaLaunchKernelEx's C++ form:
 * cudaSuccess (a cudaError_t) and whether the launch is cooperative. */
int __ncclsim_config_attrs(const void *config, int *cooperative);

/* The probe: a kernel's prologue (which ncclsim's driver puts at the top of
 * every __global__ function) calls this with its own address and name. It
 * returns 1 while the launching thread probes (the kernel then returns at
 * once: the launch learns which function `k<<<...>>>` calls, for its
 * attributes) and 0 in a kernel's thread. */
int __ncclsim_kernel_enter(const void *kernel, const char *pretty, unsigned max_threads, unsigned min_blocks);
/* Probing: begin, call the kernel once, end; end returns 0 when no prologue
 * answered (a kernel not built by ncclsim's driver). */
void __ncclsim_probe_begin(void);
int __ncclsim_probe_end(const void **kernel, const char **pretty, unsigned *max_threads);

/* The registry of kernels, for the launches that pass a kernel's address
 * and an array of argument pointers (cudaLaunchKernel's void* form):
 * `pack` builds a record from `args` (as __ncclsim_launch_alloc, then the
 * arguments copied in). A kernel registers once, when its code is made
 * (its template instantiated): the prologue refers to its registration. */
typedef __ncclsim_launch *(*__ncclsim_pack_fn)(void *stream, void **args);
int __ncclsim_kernel_register(const void *kernel, __ncclsim_pack_fn pack, unsigned nargs);

/* ---- a block's threads ---------------------------------------------------- */
/* __syncthreads and its counting forms (op 0: plain, 1: count, 2: and,
 * 3: or); returns the reduction of pred over the block. */
int __ncclsim_syncthreads(int op, int pred);
/* A warp-level exchange: every lane of `mask` (which must include the
 * caller) passes a 64-bit value and an argument; when all have, each
 * lane's result is computed by `fn` from all lanes' values and arguments
 * (indexed by lane) and returned. kind names the CUDA call for
 * diagnostics; lanes that meet must call the same kind with one mask. */
typedef uint64_t (*__ncclsim_warp_fn)(const uint64_t *values, const uint64_t *args, unsigned mask, unsigned lane);
uint64_t __ncclsim_warp_sync(unsigned mask, uint64_t value, __ncclsim_warp_fn fn, uint64_t arg, const char *kind);
/* The lanes of the caller's warp that have not exited. */
unsigned __ncclsim_activemask(void);
/* A grid-wide barrier (cooperative launches only; elsewhere a fault). */
void __ncclsim_grid_sync(void);
/* Lets the block's other threads run: for waits that poll (the device API,
 * __nanosleep). Returns 0, or an error when the wait must end (the kernel
 * was aborted). `what` says what the thread waits for, for the report when
 * the wait outlives NCCLSIM_TIMEOUT. */
int __ncclsim_yield(const char *what);

/* ---- memory ---------------------------------------------------------------- */
/* The running block's instance of the __shared__ variable `key` (the
 * address of a static object unique to its declaration): size bytes,
 * aligned to align, made at its first use in the block. */
void *__ncclsim_shared(const void *key, size_t size, size_t align);
/* The running block's dynamic shared memory (the launch's smem bytes). */
void *__ncclsim_shared_dynamic(void);
/* The current device's copy of the __device__ or __constant__ variable
 * whose host object is `symbol` (size bytes, initialised from it). */
void *__ncclsim_device_symbol(const void *symbol, size_t size, const char *name);

/* Registers a __device__ or __constant__ variable (at load: the driver
 * writes the call after its definition). */
int __ncclsim_symbol_register(const void *host, size_t size, const char *name);

/* ---- faults and output ----------------------------------------------------- */
/* A failed device assert: prints CUDA's message and ends the kernel with
 * cudaErrorAssert. Outside a kernel, the C library's assert failure. */
void __ncclsim_assert_fail(const char *expr, const char *file, unsigned line, const char *function)
    __attribute__((noreturn));
/* Ends the running kernel with err (a cudaError_t, sticky on its device)
 * and the message, which names the kernel, block and thread; for the
 * device API's faults (an offset outside a window, a wait that cannot
 * complete). Outside a kernel: prints the message and returns err. */
int __ncclsim_fault(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* NCCLSIM_TIMEOUT in nanoseconds, and the clock it is measured on
 * (CLOCK_MONOTONIC): a polling wait that started at t fails once
 * __ncclsim_now_ns() - t > __ncclsim_timeout_ns(). */
uint64_t __ncclsim_timeout_ns(void);
uint64_t __ncclsim_now_ns(void);
/* "kernel K, block (x,y,z), thread (x,y,z)" of the running thread (or
 * "a host thread"), for messages; returns buf. */
const char *__ncclsim_where(char *buf, size_t len);

/* __trap(): ends the kernel with cudaErrorLaunchFailure. */
void __ncclsim_trap(const char *why) __attribute__((noreturn));
/* Device printf: the formatted text goes to the device's buffer, which the
 * host's synchronizing calls print (as CUDA's printf FIFO). */
int __ncclsim_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#undef NCCLSIM_K_TLS
#undef NCCLSIM_K_TSAN
#endif /* NCCLSIM_DEVICE_ABI_H_ */
