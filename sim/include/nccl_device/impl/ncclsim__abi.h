/*
 * nccl_device/impl/ncclsim__abi.h — what ncclsim's device-API headers call
 * in libncclsim (sim/dev/), and the small C++ helpers they share. Not an
 * API: programs use NCCL's names; these may change with any release.
 *
 * The device API's templates (barrier sessions, ncclGin, the LL
 * all-to-all) are ncclsim's C++ in these headers; what needs the
 * simulator's state goes through the C functions below, which run in the
 * calling CUDA thread (a fiber of its stream's worker, sim/kernel/):
 * window and resource pointers (with their bounds checked), waits (that
 * let the block's other threads run between polls, and end at
 * NCCLSIM_TIMEOUT with a report), and GIN operations (carried out as the
 * device communicator's GIN type says). Every error is a kernel fault:
 * the kernel ends with a sticky CUDA error and a message naming the
 * kernel, block and thread (abi.h's __ncclsim_fault).
 *
 * Plain C and C++: sim/dev/ implements it in C.
 */
#ifndef NCCLSIM_NCCL_DEVICE_ABI_H_
#define NCCLSIM_NCCL_DEVICE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#include "../../nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ncclDevComm;

/* ---- cooperation ---- */
/* Named barrier `id` (0..15) of the running block, for `nthreads` threads
 * (a multiple of 32): ncclCoopWarpSpan::sync, PTX's bar.sync id, n. */
void ncclsimDevNamedBarrier(unsigned id, unsigned nthreads);

/* ---- windows (ncclGet*Pointer); offsets in bytes ---- */
/* The caller's own memory of window w at offset. */
void *ncclsimDevWinLocal(ncclWindow_t w, size_t offset);
/* LSA peer lsaPeer's (0 .. LSA team size - 1). */
void *ncclsimDevWinLsa(ncclWindow_t w, size_t offset, int lsaPeer);
/* World rank peer's; NULL for a rank outside the caller's LSA team (as
 * NCCL documents for ncclGetPeerDevicePointer and its device side). */
void *ncclsimDevWinPeer(ncclWindow_t w, size_t offset, int peer);
/* Rank `peer` of a team (the caller being its rank teamRank, members
 * teamStride world ranks apart), which must lie in the LSA team. */
void *ncclsimDevWinTeam(ncclWindow_t w, size_t offset, int teamRank, int teamStride, int peer);

/* What a thread keeps of a window for the pointer getters' inline path:
 * valid while `gen` equals ncclsimDevWinGen, which every deregistration
 * moves. lsaPtr is NULL for the windows that take the checked path
 * always (resource windows). */
typedef struct ncclsimDevWinCache {
  ncclWindow_t win;
  uint64_t gen;
  int rank, lsaRank, lsaSize;
  char *const *lsaPtr;     /* by LSA index: that rank's memory, mapped here */
  const size_t *lsaBytes;  /* by LSA index: its size */
  const int *lsaWorld;     /* by LSA index: its world rank */
} ncclsimDevWinCache;
extern uint64_t ncclsimDevWinGen;
/* Fills *c for window w (a kernel fault when w is not a live window). */
void ncclsimDevWinFill(ncclWindow_t w, ncclsimDevWinCache *c);

/* ---- resource buffers (ncclGetResourceBuffer*Pointer) ---- */
/* LSA peer lsaPeer's copy of resource buffer `handle` (units of 128
 * bytes, as ncclGetResourceBufferOffset) of device communicator c. */
void *ncclsimDevRes(const struct ncclDevComm *c, uint32_t handle, int lsaPeer);
/* The window that stands for c's resource buffers (ncclDevComm's
 * resourceWindow), made on first use; NULL when c has none. */
ncclWindow_t ncclsimDevResWindow(const struct ncclDevComm *c);

/* ---- waits ---- */
enum {
  NCCLSIM_WAIT_LSA_BARRIER = 1,
  NCCLSIM_WAIT_GIN_BARRIER,
  NCCLSIM_WAIT_SIGNAL,
  NCCLSIM_WAIT_VA_SIGNAL,
  NCCLSIM_WAIT_COUNTER,
  NCCLSIM_WAIT_LL_SLOT,
  NCCLSIM_WAIT_MULTIMEM_BARRIER
};
/* What a wait is for, for its report. */
typedef struct ncclsimDevWait {
  const struct ncclDevComm *comm; /* may be NULL */
  int kind;                       /* NCCLSIM_WAIT_* */
  int index;                      /* barrier index, signal or counter id, slot */
  int peer;                       /* world rank whose write it awaits; -1: any */
  int context;                    /* GIN context, or -1 */
} ncclsimDevWait;
/* Polls the `bytes` (4 or 8) at addr until, with `bits` of rolling
 * arithmetic (nccl::utility::rollingLessEq), least <= value; acquire
 * loads when `acquire`. Lets the block's other threads run between polls
 * and progresses what the device communicator needs (GIN across hosts).
 * At NCCLSIM_TIMEOUT the kernel ends with cudaErrorLaunchTimeout and a
 * report: the rank, kernel, block and thread, what is awaited and its
 * value, and what each peer's kernel is doing. Returns the value seen. */
uint64_t ncclsimDevWaitFor(const void *addr, int bytes, uint64_t least, int bits, int acquire, const ncclsimDevWait *w);
/* The same for at most timeoutCycles of clock64(): 0 when met, 1 when
 * the time ran out (the waits that return ncclTimeout). */
int ncclsimDevWaitCycles(const void *addr, int bytes, uint64_t least, int bits, int acquire, uint64_t timeoutCycles,
                         const ncclsimDevWait *w);

/* ---- GIN ---- */
enum { NCCLSIM_GIN_PUT = 1, NCCLSIM_GIN_PUT_VALUE, NCCLSIM_GIN_SIGNAL, NCCLSIM_GIN_GET };
enum { NCCLSIM_GIN_SIG_NONE = 0, NCCLSIM_GIN_SIG_INDEXED, NCCLSIM_GIN_SIG_VA };
/* One GIN operation, as ncclGin's methods describe it. */
typedef struct ncclsimGinOp {
  int kind;    /* NCCLSIM_GIN_* */
  int context; /* GIN context index */
  int peer;    /* world rank */
  ncclWindow_t dstWin; /* PUT, PUT_VALUE: the peer's side; GET: the local side */
  size_t dstOff;
  ncclWindow_t srcWin; /* PUT: local; GET: the peer's */
  size_t srcOff;
  size_t bytes;      /* PUT, GET */
  uint64_t value;    /* PUT_VALUE: the value's bytes, little end first */
  int valueBytes;    /* PUT_VALUE: 1, 2, 4 or 8 */
  int sigType;       /* NCCLSIM_GIN_SIG_* */
  uint32_t signal;   /* INDEXED */
  ncclWindow_t sigWin; /* VA: the signal's window and offset (8 bytes) */
  size_t sigOff;
  int sigAdd;        /* 0: increment by 1, 1: add sigArg */
  uint64_t sigArg;
  int strong;        /* a strong signal: every earlier put to that peer landed first */
  int hasCounter;    /* bump local counter `counter` once the source is consumed */
  uint32_t counter;
} ncclsimGinOp;
/* Issues op on device communicator c: GDAKI and GPI carry it out in the
 * calling thread, PROXY hands it to c's proxy thread. Faults (with the
 * window, peer and offset named) on an offset outside a window, a peer
 * out of range or unreachable through c's GIN connection, a signal,
 * counter or context beyond what c's requirements asked for. */
void ncclsimDevGinIssue(const struct ncclDevComm *c, const ncclsimGinOp *op);
/* Until every operation that context `context` issued (peer >= 0: to
 * that peer) has consumed its source. */
void ncclsimDevGinFlush(const struct ncclDevComm *c, int context, int peer);
/* The calling rank's signal, its shadow, or its counter (checked
 * against c's counts and contexts). */
uint64_t *ncclsimDevGinSignal(const struct ncclDevComm *c, int context, uint32_t signal);
uint64_t *ncclsimDevGinShadow(const struct ncclDevComm *c, int context, uint32_t signal);
uint64_t *ncclsimDevGinCounter(const struct ncclDevComm *c, int context, uint32_t counter);
/* A VA signal of the calling rank: 8 aligned bytes of window w. */
uint64_t *ncclsimDevGinVaSignal(const struct ncclDevComm *c, ncclWindow_t w, size_t offset);
/* Sets a signal (and its shadow) or a counter to zero. */
void ncclsimDevGinResetSignal(const struct ncclDevComm *c, int context, uint32_t signal);
void ncclsimDevGinResetCounter(const struct ncclDevComm *c, int context, uint32_t counter);

/* ---- timeline (NCCLSIM_TRACE) ---- */
/* Nonzero once this process made a device communicator whose
 * communicator is on NCCLSIM_TRACE's timeline: the headers then time
 * their barrier sessions (GIN operations and waits on signals and
 * counters are timed in libncclsim). */
extern int ncclsimDevTracing;
enum { NCCLSIM_EV_LSA_ARRIVE = 1, NCCLSIM_EV_LSA_WAIT, NCCLSIM_EV_GIN_SYNC };
/* The timeline's clock (sim_ticks), for a span's start. */
uint64_t ncclsimDevTraceNow(void);
/* A span of c's calling rank, from t0 to now: NCCLSIM_EV_* `event` of
 * barrier `index`, on the rank's track of kernels, with the kernel,
 * block and thread. */
void ncclsimDevTraceSpan(const struct ncclDevComm *c, int event, int index, uint64_t t0);

/* ---- faults ---- */
/* Ends the kernel with cudaErrorNotSupported: what ncclsim cannot do
 * (multimem), named. */
void ncclsimDevUnsupported(const char *what) __attribute__((noreturn));
/* Ends the kernel with cudaErrorInvalidValue and the message. */
void ncclsimDevBadArgument(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#ifdef __cplusplus
}

#if defined(__CUDACC__)
namespace ncclsim {
namespace dev {
/* value as lane src of mask has it, 32 bits at a time through the warp. */
template <typename T>
__device__ inline T warpBcast(uint32_t mask, T value, int src) {
  constexpr int n = (sizeof(T) + 3) / 4;
  uint32_t u[n];
  u[n - 1] = 0;
  __builtin_memcpy(u, &value, sizeof(T));
  for (int i = 0; i < n; i++) u[i] = __shfl_sync(mask, u[i], src);
  T out;
  __builtin_memcpy(&out, u, sizeof(T));
  return out;
}
/* The lane of mask's n-th set bit (n from 0); 32 if it has fewer. */
__device__ inline int nthLane(uint32_t mask, int n) {
  for (int l = 0; l < 32; l++)
    if ((mask >> l & 1) && n-- == 0) return l;
  return 32;
}
/* The calling thread's view of window w, from a cache of four: the inline
 * path of ncclGet*Pointer (a call into libncclsim only when w is not
 * cached, or a window was deregistered since). */
inline thread_local ncclsimDevWinCache winCache[4];
__device__ inline const ncclsimDevWinCache *win(ncclWindow_t w) {
  ncclsimDevWinCache *c = &winCache[((uintptr_t)w >> 6) & 3];
  if (c->win != w || c->gen != __atomic_load_n(&ncclsimDevWinGen, __ATOMIC_ACQUIRE)) ncclsimDevWinFill(w, c);
  return c;
}
/* LSA index i's memory of w at offset, if the inline path may give it
 * (i in the team, offset inside that rank's window); else NULL, and the
 * caller takes the checked path, which faults where it must. */
__device__ inline void *lsaFast(const ncclsimDevWinCache *c, int i, size_t offset) {
  if (c->lsaPtr && (unsigned)i < (unsigned)c->lsaSize && offset < c->lsaBytes[i]) return c->lsaPtr[i] + offset;
  return nullptr;
}
/* A barrier session's span on the timeline, by the thread that makes it
 * (coop's thread 0): from its construction to its destruction. */
struct TraceSpan {
  const ncclDevComm *comm;
  int event, index;
  uint64_t t0;
  __device__ TraceSpan(bool leader, const ncclDevComm &c, int ev, int idx)
      : comm(&c), event(ev), index(idx),
        t0(leader && __atomic_load_n(&ncclsimDevTracing, __ATOMIC_RELAXED) ? ncclsimDevTraceNow() : 0) {}
  __device__ ~TraceSpan() {
    if (t0) ncclsimDevTraceSpan(comm, event, index, t0);
  }
  TraceSpan(const TraceSpan &) = delete;
  TraceSpan &operator=(const TraceSpan &) = delete;
};
/* A memory order's acquire half, as a flag for ncclsimDevWaitFor. */
__device__ inline int isAcquire(cuda::memory_order o) {
  return o != cuda::memory_order_relaxed && o != cuda::memory_order_release;
}
} /* namespace dev */
} /* namespace ncclsim */
#endif
#endif /* __cplusplus */
#endif /* NCCLSIM_NCCL_DEVICE_ABI_H_ */
