/*
 * devk_gin.cu — DEVK kernels of GIN: the hybrid barrier (DEVK-03), the
 * GIN barrier and its fence levels (DEVK-04), put with each signal action
 * (DEVK-05), counters and flush (DEVK-06), putValue (DEVK-07). The
 * communicator must have a GIN type; the device communicators ask for a
 * FULL connection. See devk.h.
 */
#include "devk_util.h"

const char *devk_signal_name(int a) {
  static const char *names[] = {"ncclGin_SignalInc",         "ncclGin_StrongSignalInc",   "ncclGin_WeakSignalInc",
                                "ncclGin_SignalAdd",         "ncclGin_StrongSignalAdd",   "ncclGin_WeakSignalAdd",
                                "ncclGin_VASignalInc",       "ncclGin_StrongVASignalInc", "ncclGin_WeakVASignalInc",
                                "ncclGin_VASignalAdd",       "ncclGin_StrongVASignalAdd", "ncclGin_WeakVASignalAdd"};
  return a >= 0 && a < DEVK_SIG_COUNT ? names[a] : "?";
}

const char *devk_fence_name(int f) {
  static const char *names[] = {"Put|Get", "Put", "Get", "None"};
  return f >= 0 && f < DEVK_FENCE_COUNT ? names[f] : "?";
}

#if DEVK_API
enum { CHUNK = 64 }; /* ints a rank puts to each peer */

/* ---- barriers: rounds of puts (or gets) to every rank, then a barrier ---- */

/* Thread 0 of each block puts round k's chunk of block b to every rank:
 * src's chunk, which it writes first, into dst at [b][rank]. After the
 * barrier, dst's chunks from every rank hold round k. With gets (the Get
 * fence), each rank instead fetches every rank's chunk of src into dst. */
template <typename Barrier>
__device__ void rounds(ncclGin &gin, ncclDevComm &dc, Barrier &bar, ncclWindow_t dst, ncclWindow_t src, int nrounds,
                       bool gets, bool check, ncclGinFenceLevel fence, DevkErrors *err) {
  ncclTeam world = ncclTeamWorld(dc);
  int me = dc.rank, n = dc.nRanks, b = blockIdx.x;
  int *mysrc = (int *)ncclGetLocalPointer(src, 0);
  int *mydst = (int *)ncclGetLocalPointer(dst, 0);
  ncclCoopCta cta;
  for (int k = 1; k <= nrounds; k++) {
    for (int i = threadIdx.x; i < CHUNK; i += blockDim.x) mysrc[b * CHUNK + i] = devkTag(me, b, i, k);
    cta.sync();
    if (!gets) {
      for (int r = threadIdx.x; r < n; r += blockDim.x)
        gin.put(world, r, dst, ((size_t)b * n + me) * CHUNK * sizeof(int), src, (size_t)b * CHUNK * sizeof(int),
                CHUNK * sizeof(int));
    } else {
      /* the peers' sources must hold round k before anyone gets them */
      bar.sync(cta, cuda::memory_order_acq_rel, fence);
      for (int r = threadIdx.x; r < n; r += blockDim.x)
        gin.get(world, r, src, (size_t)b * CHUNK * sizeof(int), dst, ((size_t)b * n + r) * CHUNK * sizeof(int),
                CHUNK * sizeof(int));
    }
    bar.sync(cta, cuda::memory_order_acq_rel, fence);
    if (check)
      for (int r = 0; r < n; r++)
        for (int i = threadIdx.x; i < CHUNK; i += blockDim.x) {
          int got = mydst[(b * n + r) * CHUNK + i];
          if (got != devkTag(r, b, i, k)) devkError(err, k, r, i, got);
        }
    gin.flush(cta); /* the source is rewritten next round */
    bar.sync(cta, cuda::memory_order_acq_rel, fence);
  }
}

__global__ void hybridBarrier(ncclWindow_t dst, ncclWindow_t src, ncclDevComm dc, int nrounds, DevkErrors *err) {
  ncclGin gin{dc, 0};
  ncclBarrierSession<ncclCoopCta> bar{ncclCoopCta(), ncclTeamTagWorld(), gin, blockIdx.x};
  rounds(gin, dc, bar, dst, src, nrounds, false, true, ncclGinFenceLevel::Put | ncclGinFenceLevel::Get, err);
}

__global__ void ginBarrier(ncclWindow_t dst, ncclWindow_t src, ncclDevComm dc, int fence, int nrounds,
                           DevkErrors *err) {
  ncclGin gin{dc, 0};
  ncclGinBarrierSession<ncclCoopCta> bar{ncclCoopCta(), gin, ncclTeamTagWorld(), blockIdx.x};
  ncclGinFenceLevel f = fence == DEVK_FENCE_PUT_GET ? ncclGinFenceLevel::Put | ncclGinFenceLevel::Get
                        : fence == DEVK_FENCE_PUT   ? ncclGinFenceLevel::Put
                        : fence == DEVK_FENCE_GET   ? ncclGinFenceLevel::Get
                                                    : ncclGinFenceLevel::None;
  /* With Put: puts, checked; Get: gets, checked; None: the barrier alone. */
  rounds(gin, dc, bar, dst, src, nrounds, fence == DEVK_FENCE_GET, fence != DEVK_FENCE_NONE, f, err);
}

enum { BLOCKS = 2, THREADS = 32, ROUNDS = 4 };

static bool ginDevComm(DevkResult &res, DevkDevComm &dc, ncclComm_t comm, int signals, int counters, int barriers,
                       int worldBarriers) {
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
  reqs.ginSignalCount = signals;
  reqs.ginCounterCount = counters;
  reqs.barrierCount = barriers;
  reqs.worldGinBarrierCount = worldBarriers;
  return devkGin(res, comm) && dc.make(res, comm, reqs);
}

static int barrier(ncclComm_t comm, bool hybrid, int fence, char *msg, size_t len) {
  DevkResult res(msg, len);
  DevkWindow dst, src;
  DevkDevComm dc;
  DevkErrorBuf eb;
  DevkErrors e;
  int n = 0;
  if (DEVK_NCCL(res, ncclCommCount(comm, &n)) && dst.make(res, comm, (size_t)BLOCKS * n * CHUNK * sizeof(int)) &&
      src.make(res, comm, (size_t)BLOCKS * CHUNK * sizeof(int)) && eb.make(res) &&
      ginDevComm(res, dc, comm, 0, 0, hybrid ? BLOCKS : 0, hybrid ? 0 : BLOCKS) &&
      devkRun(res, hybrid ? "hybridBarrier" : "ginBarrier", [&] {
        if (hybrid) hybridBarrier<<<BLOCKS, THREADS>>>(dst.win, src.win, dc.dc, ROUNDS, eb.d);
        else ginBarrier<<<BLOCKS, THREADS>>>(dst.win, src.win, dc.dc, fence, ROUNDS, eb.d);
      }) &&
      eb.read(res, &e) && e.count)
    res.fail("%s barrier, fence %s: %d stale elements; first in round %d: rank %d's element %d read %#x",
             hybrid ? "hybrid" : "GIN", devk_fence_name(fence), e.count, e.at[0], e.at[1], e.at[2], e.at[3]);
  return res.rc;
}

int devk_hybrid_barrier(ncclComm_t comm, char *msg, size_t len) {
  return barrier(comm, true, DEVK_FENCE_PUT_GET, msg, len);
}
int devk_gin_barrier(ncclComm_t comm, int fence, char *msg, size_t len) { return barrier(comm, false, fence, msg, len); }

/* ---- signals ---- */

/* The put of `action`, from src's chunk for r into dst's chunk of this
 * rank at `region`, signalling signal `region` (indexed) or the 8 bytes
 * at region * 8 of sig (VA); adds carry this rank + 1. */
__device__ void putWith(ncclGin &gin, ncclTeam world, int r, int action, int region, int n, ncclWindow_t dst,
                        ncclWindow_t src, ncclWindow_t sig) {
  size_t to = ((size_t)region * n + world.rank) * CHUNK * sizeof(int), from = (size_t)r * CHUNK * sizeof(int);
  size_t bytes = CHUNK * sizeof(int), va = (size_t)region * 8;
  uint64_t add = (uint64_t)world.rank + 1;
  ncclGinSignal_t s = (ncclGinSignal_t)region;
  switch (action) {
  case DEVK_SIG_INC: gin.put(world, r, dst, to, src, from, bytes, ncclGin_SignalInc{s}); break;
  case DEVK_SIG_STRONG_INC: gin.put(world, r, dst, to, src, from, bytes, ncclGin_StrongSignalInc{s}); break;
  case DEVK_SIG_WEAK_INC: gin.put(world, r, dst, to, src, from, bytes, ncclGin_WeakSignalInc{s}); break;
  case DEVK_SIG_ADD: gin.put(world, r, dst, to, src, from, bytes, ncclGin_SignalAdd{s, add}); break;
  case DEVK_SIG_STRONG_ADD: gin.put(world, r, dst, to, src, from, bytes, ncclGin_StrongSignalAdd{s, add}); break;
  case DEVK_SIG_WEAK_ADD: gin.put(world, r, dst, to, src, from, bytes, ncclGin_WeakSignalAdd{s, add}); break;
  case DEVK_SIG_VA_INC: gin.put(world, r, dst, to, src, from, bytes, ncclGin_VASignalInc{sig, va}); break;
  case DEVK_SIG_STRONG_VA_INC: gin.put(world, r, dst, to, src, from, bytes, ncclGin_StrongVASignalInc{sig, va}); break;
  case DEVK_SIG_WEAK_VA_INC: gin.put(world, r, dst, to, src, from, bytes, ncclGin_WeakVASignalInc{sig, va}); break;
  case DEVK_SIG_VA_ADD: gin.put(world, r, dst, to, src, from, bytes, ncclGin_VASignalAdd{sig, va, add}); break;
  case DEVK_SIG_STRONG_VA_ADD:
    gin.put(world, r, dst, to, src, from, bytes, ncclGin_StrongVASignalAdd{sig, va, add});
    break;
  default: gin.put(world, r, dst, to, src, from, bytes, ncclGin_WeakVASignalAdd{sig, va, add}); break;
  }
}

/* Every rank puts its chunk for r to every rank r with the action, then
 * waits for its own signal to count every rank's put, and checks their
 * bytes. */
__global__ void ginSignals(ncclWindow_t dst, ncclWindow_t src, ncclWindow_t sig, ncclDevComm dc, int action,
                           DevkErrors *err) {
  ncclGin gin{dc, 0};
  ncclTeam world = ncclTeamWorld(dc);
  int me = dc.rank, n = dc.nRanks, region = action;
  int *mysrc = (int *)ncclGetLocalPointer(src, 0);
  for (int r = 0; r < n; r++)
    for (int i = threadIdx.x; i < CHUNK; i += blockDim.x) mysrc[r * CHUNK + i] = devkTag(me, r, i, action);
  __syncthreads();
  bool va = action >= DEVK_SIG_VA_INC, adds = action == DEVK_SIG_ADD || action == DEVK_SIG_STRONG_ADD ||
                                             action == DEVK_SIG_WEAK_ADD || action >= DEVK_SIG_VA_ADD;
  /* A new device communicator's signals, and a new window, start at 0
   * (reading them first would race with the peers' puts). */
  for (int r = threadIdx.x; r < n; r += blockDim.x) putWith(gin, world, r, action, region, n, dst, src, sig);
  uint64_t want = adds ? (uint64_t)n * (n + 1) / 2 : (uint64_t)n;
  if (va) gin.waitSignal(ncclCoopCta(), sig, (size_t)region * 8, want);
  else gin.waitSignal(ncclCoopCta(), (ncclGinSignal_t)region, want);
  int *mydst = (int *)ncclGetLocalPointer(dst, 0);
  for (int r = 0; r < n; r++)
    for (int i = threadIdx.x; i < CHUNK; i += blockDim.x) {
      int got = mydst[(region * n + r) * CHUNK + i];
      if (got != devkTag(r, me, i, action)) devkError(err, r, i, got, 0);
    }
  gin.flush(ncclCoopCta());
  uint64_t now = va ? gin.readSignal(sig, (size_t)region * 8) : gin.readSignal((ncclGinSignal_t)region);
  if (threadIdx.x == 0 && now != want) devkError(err, -1, (int)now, (int)want, 0);
}

int devk_gin_signal(ncclComm_t comm, int action, char *msg, size_t len) {
  DevkResult res(msg, len);
  DevkWindow dst, src, sig;
  DevkDevComm dc;
  DevkErrorBuf eb;
  DevkErrors e;
  int n = 0;
  if (DEVK_NCCL(res, ncclCommCount(comm, &n)) &&
      dst.make(res, comm, (size_t)DEVK_SIG_COUNT * n * CHUNK * sizeof(int)) &&
      src.make(res, comm, (size_t)n * CHUNK * sizeof(int)) && sig.make(res, comm, DEVK_SIG_COUNT * 8) &&
      eb.make(res) && ginDevComm(res, dc, comm, DEVK_SIG_COUNT, 0, 0, 0) &&
      devkRun(res, "ginSignals", [&] { ginSignals<<<1, THREADS>>>(dst.win, src.win, sig.win, dc.dc, action, eb.d); }) &&
      eb.read(res, &e) && e.count) {
    if (e.at[0] < 0)
      res.fail("%s: the signal reads %d after the waits, not %d", devk_signal_name(action), e.at[1], e.at[2]);
    else
      res.fail("%s: %d wrong elements after the signal; first: rank %d's element %d read %#x",
               devk_signal_name(action), e.count, e.at[0], e.at[1], e.at[2]);
  }
  return res.rc;
}

/* ---- counters and flush ---- */

/* Puts to every rank, bumping counter 0 (weak) and counter 1 (the
 * deprecated ncclGin_CounterInc) as their sources are consumed, and
 * signal 0 at the target. */
__global__ void ginCounters(ncclWindow_t dst, ncclWindow_t src, ncclDevComm dc, DevkErrors *err) {
  ncclGin gin{dc, 0};
  ncclTeam world = ncclTeamWorld(dc);
  int me = dc.rank, n = dc.nRanks;
  int *mysrc = (int *)ncclGetLocalPointer(src, 0);
  for (int r = 0; r < n; r++)
    for (int i = threadIdx.x; i < CHUNK; i += blockDim.x) mysrc[r * CHUNK + i] = devkTag(me, r, i, 6);
  /* Every thread reads the counters before any thread puts: a thread
   * that read them after another's put had been consumed would wait for
   * one more than ever comes (it hung once, in CI). */
  uint64_t c0 = gin.readCounter(0), c1 = gin.readCounter(1);
  __syncthreads();
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    size_t to = (size_t)me * CHUNK * sizeof(int), from = (size_t)r * CHUNK * sizeof(int);
    if (r % 2)
      gin.put(world, r, dst, to, src, from, CHUNK * sizeof(int), ncclGin_SignalInc{0}, ncclGin_CounterInc{1});
    else
      gin.put(world, r, dst, to, src, from, CHUNK * sizeof(int), ncclGin_SignalInc{0}, ncclGin_WeakCounterInc{0});
  }
  int odd = n / 2, even = n - odd;
  gin.waitCounter(ncclCoopCta(), 0, c0 + even);
  gin.waitCounter(ncclCoopCta(), 1, c1 + odd);
  gin.flush(ncclCoopCta());
  if (threadIdx.x == 0) {
    if (gin.readCounter(0) != c0 + even) devkError(err, 1, (int)gin.readCounter(0), (int)(c0 + even), 0);
    if (gin.readCounter(1) != c1 + odd) devkError(err, 2, (int)gin.readCounter(1), (int)(c1 + odd), 0);
  }
  gin.waitSignal(ncclCoopCta(), 0, (uint64_t)n);
  int *mydst = (int *)ncclGetLocalPointer(dst, 0);
  for (int r = 0; r < n; r++)
    for (int i = threadIdx.x; i < CHUNK; i += blockDim.x)
      if (mydst[r * CHUNK + i] != devkTag(r, me, i, 6)) devkError(err, 3, r, i, mydst[r * CHUNK + i]);
  __syncthreads();
  if (threadIdx.x == 0) {
    gin.resetCounter(0);
    gin.resetCounter(1);
    if (gin.readCounter(0) != 0 || gin.readCounter(1) != 0) devkError(err, 4, (int)gin.readCounter(0), 0, 0);
  }
}

int devk_gin_counter(ncclComm_t comm, char *msg, size_t len) {
  DevkResult res(msg, len);
  DevkWindow dst, src;
  DevkDevComm dc;
  DevkErrorBuf eb;
  DevkErrors e;
  int n = 0;
  static const char *what[] = {"", "counter 0 (ncclGin_WeakCounterInc) reads %d, not %d",
                               "counter 1 (ncclGin_CounterInc) reads %d, not %d",
                               "rank %d's element %d read %#x after the signal", "a reset counter reads %d"};
  if (DEVK_NCCL(res, ncclCommCount(comm, &n)) && dst.make(res, comm, (size_t)n * CHUNK * sizeof(int)) &&
      src.make(res, comm, (size_t)n * CHUNK * sizeof(int)) && eb.make(res) && ginDevComm(res, dc, comm, 1, 2, 0, 0) &&
      devkRun(res, "ginCounters", [&] { ginCounters<<<1, THREADS>>>(dst.win, src.win, dc.dc, eb.d); }) &&
      eb.read(res, &e) && e.count) {
    char detail[160];
    snprintf(detail, sizeof detail, what[e.at[0] >= 1 && e.at[0] <= 4 ? e.at[0] : 0], e.at[1], e.at[2], e.at[3]);
    res.fail("%d error(s); first: %s", e.count, detail);
  }
  return res.rc;
}

/* ---- putValue ---- */

/* Values of 1, 2, 4 and 8 bytes to every rank, each with signal 0: at
 * [rank] of dst, 16 bytes a rank. */
__global__ void ginPutValue(ncclWindow_t dst, ncclDevComm dc, DevkErrors *err) {
  ncclGin gin{dc, 0};
  ncclTeam world = ncclTeamWorld(dc);
  int me = dc.rank, n = dc.nRanks;
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    size_t at = (size_t)me * 16;
    gin.putValue(world, r, dst, at, (uint8_t)(0x10 + me), ncclGin_SignalInc{0});
    gin.putValue(world, r, dst, at + 2, (uint16_t)(0x2000 + me), ncclGin_SignalInc{0});
    gin.putValue(world, r, dst, at + 4, (uint32_t)(0x30000000u + me), ncclGin_SignalInc{0});
    gin.putValue(world, r, dst, at + 8, (uint64_t)0x4000000000000000ull + me, ncclGin_SignalInc{0});
  }
  gin.waitSignal(ncclCoopCta(), 0, (uint64_t)4 * n);
  char *mine = (char *)ncclGetLocalPointer(dst, 0);
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    char *p = mine + r * 16;
    if (*(uint8_t *)p != (uint8_t)(0x10 + r)) devkError(err, r, 1, *(uint8_t *)p, 0);
    if (*(uint16_t *)(p + 2) != (uint16_t)(0x2000 + r)) devkError(err, r, 2, *(uint16_t *)(p + 2), 0);
    if (*(uint32_t *)(p + 4) != 0x30000000u + r) devkError(err, r, 4, (int)*(uint32_t *)(p + 4), 0);
    if (*(uint64_t *)(p + 8) != 0x4000000000000000ull + r) devkError(err, r, 8, (int)*(uint64_t *)(p + 8), 0);
    if (p[1] != 0) devkError(err, r, 0, p[1], 0); /* the byte past the 1-byte value is untouched */
  }
}

int devk_gin_put_value(ncclComm_t comm, char *msg, size_t len) {
  DevkResult res(msg, len);
  DevkWindow dst;
  DevkDevComm dc;
  DevkErrorBuf eb;
  DevkErrors e;
  int n = 0;
  if (DEVK_NCCL(res, ncclCommCount(comm, &n)) && dst.make(res, comm, (size_t)n * 16) && eb.make(res) &&
      ginDevComm(res, dc, comm, 1, 0, 0, 0) &&
      devkRun(res, "ginPutValue", [&] { ginPutValue<<<1, THREADS>>>(dst.win, dc.dc, eb.d); }) && eb.read(res, &e) &&
      e.count)
    res.fail("%d wrong values; first: rank %d's %d-byte value read %#x", e.count, e.at[0], e.at[1], e.at[2]);
  return res.rc;
}
#else
static int old(char *msg, size_t len) {
  snprintf(msg, len, "needs NCCL 2.30's device API (this is %d)", NCCL_VERSION_CODE);
  return DEVK_SKIP;
}
int devk_hybrid_barrier(ncclComm_t, char *msg, size_t len) { return old(msg, len); }
int devk_gin_barrier(ncclComm_t, int, char *msg, size_t len) { return old(msg, len); }
int devk_gin_signal(ncclComm_t, int, char *msg, size_t len) { return old(msg, len); }
int devk_gin_counter(ncclComm_t, char *msg, size_t len) { return old(msg, len); }
int devk_gin_put_value(ncclComm_t, char *msg, size_t len) { return old(msg, len); }
#endif
