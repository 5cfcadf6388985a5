/*
 * sim/kernel/kernel.h — the kernel room (CUDA kernels on fibers), as the
 * rooms above it use it.
 */
#ifndef NCCLSIM_KERNEL_H_
#define NCCLSIM_KERNEL_H_

#include <stdint.h>

#include "../sim.h"

/* What a kernel's run tells an upper floor that registered for it (the
 * timeline, core/trace.c): its device, its name (static storage: the
 * kernel's signature), its start and end (sim_ticks()), and a
 * description (grid, block, where it was launched, its error if any).
 * Called on the stream's worker once the kernel has ended. Until a hook
 * is registered a run reads no clock for it. */
typedef void (*sim_k_trace_fn)(int device, const char *name, uint64_t t0, uint64_t t1, const char *desc);
void sim_k_trace_hook(sim_k_trace_fn fn);

/* The engine's own accesses on a kernel thread's fiber: ThreadSanitizer
 * ignores the reads and writes between enter and leave (nested; the depth
 * is each fiber's own). Fibers switch without synchronization, so what
 * the engine keeps for the threads a worker runs (their states, the ring,
 * the warps' exchange slots, the fibers, threadIdx; an upper room's cache
 * of the worker's) would be races to it. A fiber runs engine code from
 * its start, and leaves it only to run the kernel and on return from an
 * engine call. reset: back to none, on the worker's own context after a
 * fault's siglongjmp (it left in the middle of the ring's engine code).
 * enter_handler: enter, in a fault's signal handler on a kernel thread.
 * nosync: synchronization ignored too, between begin and end on one
 * thread with no switch or abort between (a lock the engine takes for a
 * kernel thread, which would order each thread that takes it after the
 * last one; nothing does on a GPU). No-ops without ThreadSanitizer. */
#if SIM_TSAN
void sim_k_engine_enter(void);
void sim_k_engine_leave(void);
void sim_k_engine_reset(void);
void sim_k_engine_enter_handler(void);
void sim_k_nosync_begin(void);
void sim_k_nosync_end(void);
#else
static inline void sim_k_engine_enter(void) {}
static inline void sim_k_engine_leave(void) {}
static inline void sim_k_engine_reset(void) {}
static inline void sim_k_engine_enter_handler(void) {}
static inline void sim_k_nosync_begin(void) {}
static inline void sim_k_nosync_end(void) {}
#endif

#endif /* NCCLSIM_KERNEL_H_ */
