/*
 * sim/kernel/kernel.h — the kernel room (CUDA kernels on fibers), as the
 * rooms above it use it.
 */
#ifndef NCCLSIM_KERNEL_H_
#define NCCLSIM_KERNEL_H_

#include <stdint.h>

/* What a kernel's run tells an upper floor that registered for it (the
 * timeline, core/trace.c): its device, its name (static storage: the
 * kernel's signature), its start and end (sim_ticks()), and a
 * description (grid, block, where it was launched, its error if any).
 * Called on the stream's worker once the kernel has ended. Until a hook
 * is registered a run reads no clock for it. */
typedef void (*sim_k_trace_fn)(int device, const char *name, uint64_t t0, uint64_t t1, const char *desc);
void sim_k_trace_hook(sim_k_trace_fn fn);

#endif /* NCCLSIM_KERNEL_H_ */
