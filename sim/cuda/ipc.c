/*
 * sim/cuda/ipc.c — interprocess memory and event handles.
 *
 * With ranks as processes every allocation lies in the job's shared arena,
 * at one address in every process of the job (util/shm.c), and so does
 * every event object: opening a handle maps nothing. It checks that the
 * handle names a live allocation (or event) of another process of this
 * job and hands out its address. A handle carries the job's random name,
 * and one of another job, whose addresses mean nothing here, is refused
 * before anything it names is read; the allocation's serial (the event's
 * generation) tells a reallocation at the same address from what was
 * exported. The registry counts the processes that have an allocation
 * open, so that its owner's cudaFree leaves the bytes to them until their
 * last close (memory.c).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"

#define MEM_MAGIC 0x4d435049u /* "IPCM" */
#define EVENT_MAGIC 0x45435049u /* "IPCE" */
#define WIRE_VERSION 1u

/* What a handle's 64 bytes hold. */
typedef struct {
  uint32_t magic, version;
  uint64_t job; /* sim_shm_job() of the exporter: 0 when it shares nothing */
  int32_t pid, device;
  uint64_t addr;   /* the allocation's base, or the event object */
  uint64_t size;   /* the allocation's bytes (0 for an event) */
  uint64_t serial; /* the allocation's serial, or the event's generation */
  uint64_t check;  /* of the above: a handle that is not one is told apart */
} wire;
_Static_assert(sizeof(wire) <= CUDA_IPC_HANDLE_SIZE, "a handle's fields fit CUDA's 64 bytes");

static uint64_t wire_check(const wire *w) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the fields before check */
  const unsigned char *p = (const unsigned char *)w;
  for (size_t i = 0; i < offsetof(wire, check); i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void pack(char out[CUDA_IPC_HANDLE_SIZE], uint32_t magic, int device, const void *addr, uint64_t size,
                 uint64_t serial) {
  wire w = {magic, WIRE_VERSION, sim_shm_job(), (int32_t)getpid(), device, (uint64_t)(uintptr_t)addr, size, serial, 0};
  w.check = wire_check(&w);
  memset(out, 0, CUDA_IPC_HANDLE_SIZE);
  memcpy(out, &w, sizeof w);
}

/* Unpacks a handle of `magic` made for this process to open: errors as in
 * cuda_runtime_api.h, each with a WARN. */
static cudaError_t unpack(const char in[CUDA_IPC_HANDLE_SIZE], uint32_t magic, wire *w, const char *what) {
  memcpy(w, in, sizeof *w);
  if (w->magic != magic || w->version != WIRE_VERSION || w->check != wire_check(w)) {
    SIM_WARN(SIM_ALLOC, "%s: the handle is not one that %s made", what,
             magic == MEM_MAGIC ? "cudaIpcGetMemHandle" : "cudaIpcGetEventHandle");
    return cudaErrorInvalidValue;
  }
  uint64_t job = sim_shm_job();
  if (w->pid == (int32_t)getpid() && w->job == job) { /* assumed (CUDA's context error); to be measured */
    SIM_WARN(SIM_ALLOC, "%s: the handle was made by this process; open it in another one", what);
    return cudaErrorDeviceUninitialized;
  }
  if (!w->job || w->job != job) {
    SIM_WARN(SIM_ALLOC,
             "%s: the handle comes from process %d of %s; ranks as processes share memory only within one ncclsim "
             "job (NCCLSIM_PROCESSES, a launcher's job)",
             what, (int)w->pid, !w->job ? "a process that shares nothing" : !job ? "a job, and this process shares nothing" : "another ncclsim job");
    return cudaErrorMapBufferObjectFailed;
  }
  if (kill(w->pid, 0) != 0 && errno == ESRCH) {
    SIM_WARN(SIM_ALLOC, "%s: the handle's process %d has exited", what, (int)w->pid);
    return cudaErrorInvalidResourceHandle;
  }
  return cudaSuccess;
}

/* ---- memory ---- */

/* What this process has open: base and serial, and its opens. */
typedef struct {
  void *base;
  uint64_t serial;
  unsigned refs;
} opened;

static pthread_mutex_t opens_lock = PTHREAD_MUTEX_INITIALIZER;
static opened *opens;
static size_t nopens, opens_cap;

/* Opens are the process's own: a forked child has none (with ranks as
 * processes the array is the parent's, in the arena). */
static void child_after_fork(void) {
  if (!sim_shm_already_on()) return;
  pthread_mutex_init(&opens_lock, NULL);
  opens = NULL;
  nopens = opens_cap = 0;
}
__attribute__((constructor)) static void ipc_atfork(void) { pthread_atfork(NULL, NULL, child_after_fork); }

SIM_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr) {
  if (!handle || !devPtr) return sim_cuda_error(cudaErrorInvalidValue);
  sim_alloc_info a;
  const char *why = NULL;
  if (!sim_mem_lookup(devPtr, &a) || a.kind != SIM_MEM_DEVICE) why = "is not cudaMalloc memory";
  else if (a.flags & (SIM_MEM_F_POOL | SIM_MEM_F_GRAPH)) why = "is from a memory pool (cudaMallocAsync) or a graph";
  else if (a.flags & (SIM_MEM_F_FREED | SIM_MEM_F_ORPHAN)) why = "was freed";
  else if (a.pid != (int)getpid()) why = "is another process's allocation";
  if (why) {
    SIM_WARN(SIM_ALLOC, "cudaIpcGetMemHandle: %p %s", devPtr, why);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  /* A pointer inside an allocation names all of it: CUDA 13 takes one
   * (measured); the opener gets the base, as a handle names an allocation. */
  pack(handle->reserved, MEM_MAGIC, a.device, a.base, a.size, a.serial);
  return cudaSuccess;
}

typedef struct {
  const wire *w;
  int delta;     /* +1: one more process has it open; -1: one fewer */
  bool matched;
} open_arg;

static sim_mem_edit_result count_open(sim_alloc_info *a, void *arg) {
  open_arg *o = arg;
  if (a->serial != o->w->serial) return SIM_MEM_KEEP;
  if (o->delta > 0) {
    if (a->pid != o->w->pid || a->kind != SIM_MEM_DEVICE || (a->flags & (SIM_MEM_F_FREED | SIM_MEM_F_ORPHAN)))
      return SIM_MEM_KEEP;
    a->ipc_opens++;
    o->matched = true;
    return SIM_MEM_CHANGED;
  }
  o->matched = true;
  return --a->ipc_opens == 0 && (a->flags & SIM_MEM_F_ORPHAN) ? SIM_MEM_REMOVE : SIM_MEM_CHANGED;
}

SIM_EXPORT cudaError_t cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle, unsigned int flags) {
  /* CUDA 13 on an H100 (measured) wants cudaIpcMemLazyEnablePeerAccess: 0 is cudaErrorInvalidValue */
  if (!devPtr || flags != cudaIpcMemLazyEnablePeerAccess) return sim_cuda_error(cudaErrorInvalidValue);
  wire w;
  cudaError_t err = unpack(handle.reserved, MEM_MAGIC, &w, "cudaIpcOpenMemHandle");
  if (err != cudaSuccess) return sim_cuda_error(err);
  void *base = (void *)(uintptr_t)w.addr;
  sim_mutex_lock(&opens_lock);
  for (size_t i = 0; i < nopens; i++)
    if (opens[i].base == base && opens[i].serial == w.serial) { /* CUDA 13: one more reference */
      opens[i].refs++;
      pthread_mutex_unlock(&opens_lock);
      *devPtr = base;
      return cudaSuccess;
    }
  if (nopens == opens_cap) {
    size_t ncap = opens_cap ? opens_cap * 2 : 16;
    opened *n = sim_realloc(opens, ncap * sizeof *n);
    if (!n) {
      pthread_mutex_unlock(&opens_lock);
      return sim_cuda_error(cudaErrorMemoryAllocation);
    }
    opens = n;
    opens_cap = ncap;
  }
  open_arg o = {&w, +1, false};
  sim_mem_edit(base, count_open, &o);
  if (!o.matched) {
    pthread_mutex_unlock(&opens_lock);
    SIM_WARN(SIM_ALLOC, "cudaIpcOpenMemHandle: process %d has freed the memory the handle names (%p, %llu bytes)",
             (int)w.pid, base, (unsigned long long)w.size);
    return sim_cuda_error(cudaErrorInvalidResourceHandle);
  }
  opens[nopens++] = (opened){base, w.serial, 1};
  pthread_mutex_unlock(&opens_lock);
  *devPtr = base;
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaIpcCloseMemHandle(void *devPtr) {
  if (!devPtr) return sim_cuda_error(cudaErrorInvalidValue);
  sim_mutex_lock(&opens_lock);
  size_t i = 0;
  while (i < nopens && opens[i].base != devPtr) i++;
  if (i == nopens) {
    pthread_mutex_unlock(&opens_lock);
    SIM_WARN(SIM_ALLOC, "cudaIpcCloseMemHandle: %p is not memory this process opened with cudaIpcOpenMemHandle",
             devPtr);
    return sim_cuda_error(cudaErrorInvalidValue);
  }
  if (--opens[i].refs == 0) {
    wire w = {.serial = opens[i].serial};
    open_arg o = {&w, -1, false};
    sim_mem_edit(devPtr, count_open, &o);
    opens[i] = opens[--nopens];
  }
  pthread_mutex_unlock(&opens_lock);
  return cudaSuccess;
}

/* ---- events ---- */

SIM_EXPORT cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle, cudaEvent_t event) {
  if (!handle) return sim_cuda_error(cudaErrorInvalidValue);
  void *obj;
  uint64_t gen;
  cudaError_t err = sim_event_export(event, &obj, &gen);
  if (err != cudaSuccess) return sim_cuda_error(err);
  pack(handle->reserved, EVENT_MAGIC, -1, obj, 0, gen);
  return cudaSuccess;
}

SIM_EXPORT cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event, cudaIpcEventHandle_t handle) {
  if (!event) return sim_cuda_error(cudaErrorInvalidValue);
  wire w;
  cudaError_t err = unpack(handle.reserved, EVENT_MAGIC, &w, "cudaIpcOpenEventHandle");
  if (err == cudaSuccess) err = sim_event_import(event, (void *)(uintptr_t)w.addr, w.serial);
  return sim_cuda_error(err);
}
