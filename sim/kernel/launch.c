/*
 * sim/kernel/launch.c — kernel launches: the record a launch becomes, its
 * checks, and CUDA's launch calls.
 *
 * A launch is one stream operation. Its record holds the sim_op, then the
 * launch as the device headers filled it (__ncclsim_launch), then the
 * kernel's arguments, in one block of the stream's op pool. Before the
 * record is enqueued, the kernel is probed: the launching thread calls it
 * once with a flag set, and the kernel's prologue (which ncclsim's driver
 * wrote at the top of every __global__ function) answers with its address
 * and returns at once. So `k<<<...>>>(...)` knows which function it runs,
 * whatever k is (a template, a pointer), and checks the configuration
 * against that kernel's attributes as CUDA does, at the launch.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel_internal.h"

typedef struct kop {
  sim_op op;
  int device;
  _Alignas(64) __ncclsim_launch l; /* the device headers' record starts here */
} kop;

static kop *kop_of(__ncclsim_launch *l) { return (kop *)((char *)l - offsetof(kop, l)); }

SIM_EXPORT void *__ncclsim_launch_alloc(void *stream, size_t size) {
  /* A bad stream handle still gets memory (plain); the submit refuses it. */
  kop *k = sim_stream_op_alloc(sim_stream_find((cudaStream_t)stream), offsetof(kop, l) + size);
  return k ? &k->l : NULL;
}

SIM_EXPORT int __ncclsim_launch_oom(void) { return sim_cuda_error(cudaErrorMemoryAllocation); }

SIM_EXPORT void __ncclsim_launch_free(void *record) {
  if (record) sim_stream_op_free(kop_of(record));
}

static void destroy(__ncclsim_launch *l) {
  if (l->destroy) l->destroy(l);
  __ncclsim_launch_free(l);
}

/* ---- the probe ---- */

static _Thread_local struct {
  bool on, got;
  const void *kernel;
  const char *pretty;
  unsigned max_threads;
} probe;

SIM_EXPORT int __ncclsim_kernel_enter(const void *kernel, const char *pretty, unsigned max_threads,
                                      unsigned min_blocks) {
  (void)min_blocks;
  if (__builtin_expect(!probe.on, 1)) return 0;
  probe.got = true;
  probe.kernel = kernel;
  probe.pretty = pretty;
  probe.max_threads = max_threads;
  return 1;
}

SIM_EXPORT void __ncclsim_probe_begin(void) {
  probe.on = true;
  probe.got = false;
}

SIM_EXPORT int __ncclsim_probe_end(const void **kernel, const char **pretty, unsigned *max_threads) {
  probe.on = false;
  if (!probe.got) return 0;
  if (kernel) *kernel = probe.kernel;
  if (pretty) *pretty = probe.pretty;
  if (max_threads) *max_threads = probe.max_threads;
  return 1;
}

/* Asks the launch's kernel who it is; NULL: it did not answer (not built
 * by ncclsim's driver). */
static kentry *identify(__ncclsim_launch *l) {
  const void *kernel = NULL;
  const char *pretty = NULL;
  unsigned max_threads = 0;
  __ncclsim_probe_begin();
  l->invoke(l);
  if (!__ncclsim_probe_end(&kernel, &pretty, &max_threads)) return NULL;
  kentry *k = sim_k_lookup(kernel, true);
  if (!k) return NULL;
  if (!K_GET(k, pretty)) K_SET(k, pretty, pretty); /* a string literal of the kernel's */
  K_SET(k, max_threads, max_threads);
  l->kernel = kernel;
  return k;
}

/* ---- checks ---- */

static cudaError_t bad(cudaError_t err, const __ncclsim_launch *l, const char *fmt, ...) SIM_PRINTF(3, 4);
static cudaError_t bad(cudaError_t err, const __ncclsim_launch *l, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  SIM_WARN(SIM_KERNEL, "launch of %s (%s:%d): %s: %s", l->name ? l->name : "a kernel", l->file ? l->file : "?",
           l->line, cudaGetErrorName(err), why);
  return err;
}

/* Blocks of `threads` threads with `smem` bytes each that a multiprocessor
 * holds (the H100's limits, with a nominal 32 registers a thread). */
int sim_k_occupancy(unsigned threads, size_t smem) {
  if (!threads) return 0;
  int by_threads = 2048 / (int)threads;
  int by_regs = 65536 / (32 * (int)threads);
  int by_smem = (int)(233472 / (smem + 1024));
  int n = 32;
  if (by_threads < n) n = by_threads;
  if (by_regs < n) n = by_regs;
  if (by_smem < n) n = by_smem;
  return n;
}

static cudaError_t check(__ncclsim_launch *l, const kentry *k) {
  dim3 g = l->grid, b = l->block;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z)
    return bad(cudaErrorInvalidValue, l, "a zero dimension: grid (%u,%u,%u), block (%u,%u,%u)", g.x, g.y, g.z, b.x,
               b.y, b.z);
  unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
  /* CUDA 13 on an H100 answers cudaErrorInvalidValue here, not
   * cudaErrorInvalidConfiguration (measured). */
  if (threads > 1024 || b.x > 1024 || b.y > 1024 || b.z > 64)
    return bad(cudaErrorInvalidValue, l, "block (%u,%u,%u): %llu threads; at most 1024, and z at most 64", b.x, b.y,
               b.z, threads);
  unsigned bound = K_GET(k, max_threads);
  if (bound && threads > bound)
    return bad(cudaErrorInvalidValue, l, "block of %llu threads, over the kernel's __launch_bounds__ of %u", threads,
               bound);
  if (g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    return bad(cudaErrorInvalidValue, l, "grid (%u,%u,%u): at most 2147483647 x 65535 x 65535 blocks", g.x, g.y, g.z);
  size_t limit = sim_k_smem_limit(k);
  if (l->smem > limit)
    return bad(cudaErrorInvalidValue, l,
               "%zu bytes of dynamic shared memory, over the kernel's %zu (cudaFuncSetAttribute with "
               "cudaFuncAttributeMaxDynamicSharedMemorySize raises it, up to 232448)",
               l->smem, limit);
  if (l->cooperative) {
    unsigned long long blocks = (unsigned long long)g.x * g.y * g.z;
    unsigned long long most = (unsigned long long)sim_k_occupancy((unsigned)threads, l->smem + K_GET(k, static_smem)) * 132;
    if (blocks > most)
      return bad(cudaErrorCooperativeLaunchTooLarge, l,
                 "a cooperative launch of %llu blocks: at most %llu can be resident (132 multiprocessors)", blocks,
                 most);
  }
  return cudaSuccess;
}

/* ---- the stream operation ---- */

static cudaError_t kop_run(sim_op *op, cudaError_t stream_err) {
  kop *k = (kop *)op;
  /* Behind a failed operation, or on a device a kernel's fault lost, a
   * kernel does not run. */
  if (stream_err != cudaSuccess || sim_cuda_sticky(k->device) != cudaSuccess) return cudaSuccess;
  cudaError_t err = sim_k_run(&k->l, k->device);
  if (err != cudaSuccess) sim_cuda_sticky_set(k->device, err);
  return err;
}

static void kop_release(sim_op *op) { destroy(&((kop *)op)->l); }

SIM_EXPORT int __ncclsim_launch_submit(__ncclsim_launch *l) {
  cudaError_t err;
  int device = sim_current_device();
  sim_k_printf_flush(device); /* CUDA prints what earlier kernels printed at a launch */
  kentry *k = identify(l);
  if (!k) {
    err = bad(cudaErrorInvalidDeviceFunction, l,
              "the kernel did not answer its probe: it was not compiled by ncclsim's compiler driver (%s)",
              "pkg-config --variable=nvcc ncclsim");
    goto fail;
  }
  if (!l->name) l->name = K_GET(k, pretty);
  sim_stream *s = sim_stream_resolve((cudaStream_t)l->stream, &err);
  if (!s) {
    err = bad(err, l, "stream %p is not a live stream (CUDA's launch on a destroyed stream is undefined)", l->stream);
    goto fail;
  }
  device = sim_stream_device(s);
  if ((err = sim_cuda_sticky(device)) != cudaSuccess) goto fail;
  if ((err = check(l, k)) != cudaSuccess) goto fail;
  if (sim_stream_capturing(s)) { /* a kernel node keeps the record (kernel/graph.c) */
    if ((err = sim_k_capture(l, device, s)) != cudaSuccess) goto fail;
    return cudaSuccess;
  }
  kop *o = kop_of(l);
  o->device = device;
  o->op.run = kop_run;
  o->op.release = kop_release;
  o->op.what = "kernel launch";
  if ((err = sim_stream_enqueue(s, &o->op)) != cudaSuccess) goto fail;
  return cudaSuccess;
fail:
  destroy(l);
  return sim_cuda_error(err);
}

/* For a graph's kernel node (kernel/graph.c): the checks of a launch. */
cudaError_t sim_k_launch_check(__ncclsim_launch *l) {
  kentry *k = identify(l);
  if (!k)
    return bad(cudaErrorInvalidDeviceFunction, l, "the kernel did not answer its probe: it was not compiled by "
               "ncclsim's compiler driver");
  if (!l->name) l->name = K_GET(k, pretty);
  return check(l, k);
}

/* ---- CUDA's launch calls by address ---- */

static cudaError_t launch_packed(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                                 cudaStream_t stream, int cooperative) {
  kentry *k = func ? sim_k_lookup(func, false) : NULL;
  if (!k || !k->pack) {
    SIM_WARN(SIM_KERNEL, "cudaLaunchKernel: %p is not a kernel compiled by ncclsim's compiler driver", func);
    return k ? sim_cuda_error(cudaErrorInvalidDeviceFunction) : sim_k_not_kernel(func);
  }
  if (!args && k->nargs) {
    SIM_WARN(SIM_KERNEL, "cudaLaunchKernel: args is NULL for %s, which takes %u arguments",
             K_GET(k, pretty) ? K_GET(k, pretty) : "a kernel", k->nargs);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  __ncclsim_launch *l = k->pack(stream, args);
  if (!l) return sim_cuda_error(cudaErrorMemoryAllocation);
  l->grid = grid;
  l->block = block;
  l->smem = smem;
  l->stream = stream;
  l->cooperative = cooperative;
  return (cudaError_t)__ncclsim_launch_submit(l);
}

SIM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                                        cudaStream_t stream) {
  return launch_packed(func, grid, block, args, smem, stream, 0);
}

SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                                                   cudaStream_t stream) {
  return launch_packed(func, grid, block, args, smem, stream, 1);
}

/* The attributes of a cudaLaunchKernelEx: cooperative or not; ncclsim has
 * no clusters. */
int sim_k_config_attrs(const cudaLaunchConfig_t *config, int *cooperative) {
  *cooperative = 0;
  if (config->numAttrs && !config->attrs) {
    SIM_WARN(SIM_KERNEL, "cudaLaunchKernelEx: numAttrs is %u and attrs is NULL", config->numAttrs);
    return cudaErrorInvalidValue;
  }
  for (unsigned i = 0; i < config->numAttrs; i++) {
    const cudaLaunchAttribute *a = &config->attrs[i];
    switch (a->id) {
    case cudaLaunchAttributeCooperative: *cooperative = a->val.cooperative != 0; break;
    case cudaLaunchAttributeClusterDimension:
    case cudaLaunchAttributePreferredClusterDimension:
      if (a->val.clusterDim.x > 1 || a->val.clusterDim.y > 1 || a->val.clusterDim.z > 1) {
        SIM_WARN(SIM_KERNEL, "cudaLaunchKernelEx: a cluster of %ux%ux%u blocks: ncclsim has no clusters",
                 a->val.clusterDim.x, a->val.clusterDim.y, a->val.clusterDim.z);
        return cudaErrorNotSupported;
      }
      break;
    case cudaLaunchAttributeIgnore:
    case cudaLaunchAttributeAccessPolicyWindow:
    case cudaLaunchAttributeSynchronizationPolicy:
    case cudaLaunchAttributeClusterSchedulingPolicyPreference:
    case cudaLaunchAttributePriority:
    case cudaLaunchAttributeMemSyncDomainMap:
    case cudaLaunchAttributeMemSyncDomain:
    case cudaLaunchAttributePreferredSharedMemoryCarveout:
    case cudaLaunchAttributeNvlinkUtilCentricScheduling:
      break; /* hints: no effect on a CPU */
    default:
      SIM_WARN(SIM_KERNEL, "cudaLaunchKernelEx: launch attribute %d is not simulated", (int)a->id);
      return cudaErrorNotSupported;
    }
  }
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args) {
  int cooperative;
  if (!config) return sim_cuda_error(cudaErrorInvalidValue);
  cudaError_t err = (cudaError_t)sim_k_config_attrs(config, &cooperative);
  if (err != cudaSuccess) return sim_cuda_error(err);
  return launch_packed(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream,
                       cooperative);
}

SIM_EXPORT int __ncclsim_config_attrs(const void *config, int *cooperative) {
  if (!config) return cudaErrorInvalidValue;
  return sim_k_config_attrs(config, cooperative);
}
