/*
 * sim/cuda/device.c — simulated devices, the current device, CUDA errors.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

static _Thread_local int current; /* device of the calling thread */
static _Thread_local cudaError_t last_error;

int sim_device_count(void) {
  int64_t n = sim_param_int(SIM_P_DEVICES);
  return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

/* Whether this process has made a context on a device: by cudaSetDevice,
 * or by the first call that uses its current device (sim_current_device).
 * A fault decides what a device without one answers (sim_cuda_sticky). */
enum { STICKY_MAX = 4096 }; /* sim_device_count()'s bound */
static _Atomic unsigned char context[STICKY_MAX];
static _Atomic int fault; /* the process's first kernel fault */

static void context_make(int device) {
  if (device < 0 || device >= STICKY_MAX || atomic_load_explicit(&context[device], memory_order_relaxed)) return;
  if (atomic_load(&fault) == cudaSuccess) atomic_store(&context[device], 1); /* none after a fault */
}

void sim_cuda_context_drop(int device) {
  if (device >= 0 && device < STICKY_MAX) atomic_store(&context[device], 0);
}

int sim_current_device(void) {
  context_make(current);
  return current;
}

static int log_device(void) { return current; } /* makes no context */

/* Log lines name the calling thread's device (util/log.c). */
__attribute__((constructor)) static void device_log_hook(void) { sim_log_device_hook(log_device); }

cudaError_t sim_cuda_error(cudaError_t err) {
  if (err != cudaSuccess) last_error = err;
  return err;
}

/* A kernel's fault loses the process's GPU state, not its device's alone
 * (measured, CUDA 13 on 4 x H100): every later call on a device it had a
 * context on returns the fault's error, sticky until the process ends;
 * a device it had none on, or one cudaDeviceReset since, answers
 * cudaErrorDevicesUnavailable. One flag says whether there was a fault,
 * so the calls that check pay one load. */
_Atomic int sim_cuda_sticky_any;

void sim_cuda_sticky_set(int device, cudaError_t err) {
  switch (err) { /* the faults; what a GPU refuses at launch (a block's shared memory) is the stream's alone */
  case cudaErrorAssert:
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchFailure:
  case cudaErrorLaunchTimeout:
    break;
  default:
    return;
  }
  if (device >= 0 && device < STICKY_MAX && atomic_load(&fault) == cudaSuccess)
    atomic_store(&context[device], 1); /* it ran a kernel */
  int none = cudaSuccess;
  atomic_compare_exchange_strong(&fault, &none, (int)err); /* the first fault stays */
  atomic_store(&sim_cuda_sticky_any, 1);
}

cudaError_t sim_cuda_sticky_slow(int device) {
  cudaError_t err = (cudaError_t)atomic_load(&fault);
  if (err == cudaSuccess || device < 0 || device >= STICKY_MAX) return err;
  return atomic_load(&context[device]) ? err : cudaErrorDevicesUnavailable;
}

/* What a synchronizing call does once the device's work it waited for
 * has run (kernel/printf.c registers the printing of device printf). */
static void (*synced_hook)(int device);

void sim_cuda_sync_hook(void (*fn)(int device)) { synced_hook = fn; }

void sim_cuda_synced(int device) {
  void (*fn)(int) = synced_hook;
  if (fn) fn(device);
}

SIM_EXPORT cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return sim_cuda_error(cudaErrorInvalidValue);
  *count = sim_device_count();
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= sim_device_count()) {
    SIM_WARN(SIM_STREAM, "cudaSetDevice: device %d does not exist (NCCLSIM_DEVICES=%d)", device,
             sim_device_count());
    return sim_cuda_error(cudaErrorInvalidDevice);
  }
  current = device;
  context_make(device);
  cudaError_t s = sim_cuda_sticky(device); /* no context after a fault */
  return s == cudaErrorDevicesUnavailable ? sim_cuda_error(s) : cudaSuccess;
}

SIM_EXPORT cudaError_t cudaGetDevice(int *device) {
  if (!device) return sim_cuda_error(cudaErrorInvalidValue);
  *device = current;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaDriverGetVersion(int *v) {
  if (!v) return sim_cuda_error(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *v) { return cudaDriverGetVersion(v); }

SIM_EXPORT cudaError_t cudaGetLastError(void) {
  cudaError_t s = sim_cuda_sticky(current);
  if (s != cudaSuccess) { /* the device's, so it stays; the thread's record goes */
    last_error = cudaSuccess;
    return s;
  }
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

SIM_EXPORT cudaError_t cudaPeekAtLastError(void) {
  cudaError_t s = sim_cuda_sticky(current);
  return s != cudaSuccess ? s : last_error;
}

#define SIM_CUDA_ERRORS(X)                                                           \
  X(cudaSuccess, "no error")                                                         \
  X(cudaErrorInvalidValue, "invalid argument")                                       \
  X(cudaErrorMemoryAllocation, "out of memory")                                      \
  X(cudaErrorInitializationError, "initialization error")                            \
  X(cudaErrorInvalidConfiguration, "invalid configuration argument")                 \
  X(cudaErrorInvalidSymbol, "invalid device symbol")                                 \
  X(cudaErrorInvalidDevicePointer, "invalid device pointer")                         \
  X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")            \
  X(cudaErrorDevicesUnavailable, "CUDA-capable device(s) is/are busy or unavailable") \
  X(cudaErrorInvalidDeviceFunction, "invalid device function")                       \
  X(cudaErrorNoDevice, "no CUDA-capable device is detected")                         \
  X(cudaErrorInvalidDevice, "invalid device ordinal")                                \
  X(cudaErrorDeviceUninitialized, "invalid device context")                          \
  X(cudaErrorMapBufferObjectFailed, "mapping of buffer object failed")               \
  X(cudaErrorUnsupportedLimit, "limit is not supported on this architecture")        \
  X(cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices") \
  X(cudaErrorOperatingSystem, "OS call failed or operation not supported on this OS")  \
  X(cudaErrorInvalidResourceHandle, "invalid resource handle")                       \
  X(cudaErrorIllegalState, "the operation cannot be performed in the present state") \
  X(cudaErrorLossyQuery, "attempted introspection would be semantically lossy")      \
  X(cudaErrorNotReady, "device not ready")                                           \
  X(cudaErrorIllegalAddress, "an illegal memory access was encountered")             \
  X(cudaErrorLaunchOutOfResources, "too many resources requested for launch")        \
  X(cudaErrorLaunchTimeout, "the launch timed out and was terminated")              \
  X(cudaErrorPeerAccessAlreadyEnabled, "peer access is already enabled")             \
  X(cudaErrorPeerAccessNotEnabled, "peer access has not been enabled")               \
  X(cudaErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped") \
  X(cudaErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region") \
  X(cudaErrorAssert, "device-side assert triggered")                                 \
  X(cudaErrorLaunchFailure, "unspecified launch failure")                            \
  X(cudaErrorNotSupported, "operation not supported")                                \
  X(cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch")     \
  X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
  X(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
  X(cudaErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
  X(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began") \
  X(cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work")            \
  X(cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
  X(cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
  X(cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
  X(cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
  X(cudaErrorTimeout, "the operation timed out (ncclsim: NCCLSIM_TIMEOUT expired)")  \
  X(cudaErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
  X(cudaErrorUnknown, "unknown error")

SIM_EXPORT const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
#define SIM_ERR_STR(code, text) case code: return text;
    SIM_CUDA_ERRORS(SIM_ERR_STR)
#undef SIM_ERR_STR
  }
  return "unrecognized error code";
}

SIM_EXPORT const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define SIM_ERR_NAME(code, text) case code: return #code;
    SIM_CUDA_ERRORS(SIM_ERR_NAME)
#undef SIM_ERR_NAME
  }
  return "unrecognized error code"; /* as CUDA's cudaGetErrorName */
}
