/*
 * nccl_device/coop.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/coop.h>: the cooperation types, NCCL's subset of CUDA's
 * cooperative groups. Each has thread_rank(), size(), num_threads() (the
 * same as size) and sync():
 *
 *   ncclCoopTile<N>   an aligned power-of-two set of N lanes of a warp
 *                     (ncclCoopThread = <1>, ncclCoopWarp = <32>)
 *   ncclCoopLanes     the lanes of a mask, in this warp
 *   ncclCoopWarpSpan  warps warp0 .. warp0+nWarps-1 of the block, with an
 *                     id 0..15 (a named barrier each)
 *   ncclCoopCta       the whole block (1-D blocks: thread_rank is threadIdx.x)
 *   ncclCoopAny       any of the above, behind a small vtable
 *
 * plus ncclCoopGetLaneMask, ncclCoopIsThread, ncclCoopWithinWarp,
 * ncclCoopCoalesced and ncclCoopBcast. On ncclsim a block's threads are
 * fibers of one worker: the syncs are the kernel engine's __syncwarp and
 * __syncthreads, and a warp span's is a named barrier that ncclsim keeps
 * per block (sim/dev/coop.c).
 */
#ifndef NCCLSIM_NCCL_DEVICE_COOP_H_
#define NCCLSIM_NCCL_DEVICE_COOP_H_
#include "utility.h"

#if NCCL_CHECK_CUDACC
#include "impl/ncclsim__abi.h"

struct ncclCoopAny {
  struct Storage {
    alignas(alignof(void *)) char space[16];
  };
  struct VTable {
    int (*thread_rank)(void const *);
    int (*size)(void const *);
    void (*sync)(void *);
  };

  template <typename Impl>
  __device__ static int thread_rank(void const *o) {
    return static_cast<Impl const *>(o)->thread_rank();
  }
  template <typename Impl>
  __device__ static int size(void const *o) {
    return static_cast<Impl const *>(o)->size();
  }
  template <typename Impl>
  __device__ static void sync(void *o) {
    static_cast<Impl *>(o)->sync();
  }
  template <typename Impl>
  __device__ static VTable const *get_vtable() {
    static_assert(sizeof(Impl) <= sizeof(Storage), "Incompatible coop type size");
    static_assert(alignof(Impl) <= alignof(Storage), "Incompatible coop type alignment");
    static constexpr VTable v = {&thread_rank<Impl>, &size<Impl>, &sync<Impl>};
    return &v;
  }

  Storage storage;
  VTable const *vtable;

  ncclCoopAny(ncclCoopAny const &) = default;
  ncclCoopAny(ncclCoopAny &&) = default;
  ncclCoopAny() = default;

  template <typename Impl>
  __device__ ncclCoopAny(Impl impl) {
    ::new (&this->storage) Impl(impl);
    this->vtable = get_vtable<Impl>();
  }

  __device__ int thread_rank() const { return vtable->thread_rank(&storage); }
  __device__ int size() const { return vtable->size(&storage); }
  __device__ int num_threads() const { return vtable->size(&storage); }
  __device__ void sync() { vtable->sync(&storage); }
};

template <int nThreadsPow2>
struct ncclCoopTile {
  static_assert(nccl::utility::isPow2(nThreadsPow2) && nThreadsPow2 <= 32, "Condition required");

  NCCL_DEVICE_INLINE int thread_rank() const { return nccl::utility::lane() % nThreadsPow2; }
  NCCL_DEVICE_INLINE constexpr int size() const { return nThreadsPow2; }
  NCCL_DEVICE_INLINE constexpr int num_threads() const { return nThreadsPow2; }
  /* The tile's lanes: N consecutive lanes starting at a multiple of N. */
  NCCL_DEVICE_INLINE uint32_t laneMask() const {
    return (0xffffffffu >> (32 - nThreadsPow2)) << (nccl::utility::lane() & ~(nThreadsPow2 - 1));
  }
  NCCL_DEVICE_INLINE void sync() {
    if (nThreadsPow2 > 1) __syncwarp(laneMask());
  }
};

typedef ncclCoopTile<1> ncclCoopThread;
typedef ncclCoopTile<32> ncclCoopWarp;

struct ncclCoopLanes {
  uint32_t lmask;

  NCCL_DEVICE_INLINE constexpr ncclCoopLanes(uint32_t lmask_ = ~0u) : lmask(lmask_) {}
  NCCL_DEVICE_INLINE int thread_rank() const { return __popc(lmask & nccl::utility::lanemask_lt()); }
  NCCL_DEVICE_INLINE int size() const { return __popc(lmask); }
  NCCL_DEVICE_INLINE int num_threads() const { return __popc(lmask); }
  NCCL_DEVICE_INLINE void sync() { __syncwarp(lmask); }
};

/* Two warp spans with one id must not be in a collective at once (NCCL's
 * rule); their threads meet at named barrier 1+id of the block. */
struct ncclCoopWarpSpan {
  uint32_t warp0 : 8, nWarps : 8, id : 8;

  NCCL_DEVICE_INLINE constexpr ncclCoopWarpSpan(int warp0_, int nWarps_, int id_)
      : warp0(uint32_t(warp0_)), nWarps(uint32_t(nWarps_)), id(uint32_t(id_)) {}
  NCCL_DEVICE_INLINE int thread_rank() const { return int(threadIdx.x) - 32 * int(warp0); }
  NCCL_DEVICE_INLINE int size() const { return 32 * int(nWarps); }
  NCCL_DEVICE_INLINE int num_threads() const { return 32 * int(nWarps); }
  NCCL_DEVICE_INLINE void sync() { ncclsimDevNamedBarrier(1 + id, 32 * nWarps); }
};

struct ncclCoopCta {
  NCCL_DEVICE_INLINE int thread_rank() const { return int(threadIdx.x); }
  NCCL_DEVICE_INLINE int size() const { return int(blockDim.x); }
  NCCL_DEVICE_INLINE int num_threads() const { return int(blockDim.x); }
  NCCL_DEVICE_INLINE void sync() { __syncthreads(); }
};

template <int nThreadsPow2>
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopTile<nThreadsPow2> coop) {
  return coop.laneMask();
}
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopLanes coop) { return coop.lmask; }
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopWarpSpan) { return ~0u; }
NCCL_DEVICE_INLINE uint32_t ncclCoopGetLaneMask(ncclCoopCta) { return ~0u; }

/* Whether the coop is known at compile time to be one thread. */
template <int nThreads>
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopTile<nThreads>) {
  return nThreads == 1;
}
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopLanes) { return false; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopWarpSpan) { return false; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopIsThread(ncclCoopCta) { return false; }

/* Whether the coop lies within one warp. */
template <int nThreads>
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopTile<nThreads>) {
  return true;
}
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopLanes) { return true; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopWarpSpan) { return false; }
NCCL_DEVICE_INLINE constexpr bool ncclCoopWithinWarp(ncclCoopCta) { return false; }

/* The lanes of this warp that can act together now, and the same given
 * that every thread of coop takes part. */
NCCL_DEVICE_INLINE ncclCoopLanes ncclCoopCoalesced() { return ncclCoopLanes{__activemask()}; }
template <typename Coop>
NCCL_DEVICE_INLINE ncclCoopTile<32> ncclCoopCoalesced(Coop) {
  return ncclCoopTile<32>();
}
NCCL_DEVICE_INLINE ncclCoopLanes ncclCoopCoalesced(ncclCoopLanes coop) { return coop; }
template <int nThreads>
NCCL_DEVICE_INLINE ncclCoopTile<nThreads> ncclCoopCoalesced(ncclCoopTile<nThreads> coop) {
  return coop;
}

/* value as thread `root` of the coop has it (root: its thread_rank). */
template <int nThreads, typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopTile<nThreads> coop, T value, int root, bool entrySync = true) {
  (void)entrySync;
  if (nThreads == 1) return value;
  int src = (nccl::utility::lane() & ~(nThreads - 1)) + root;
  return ncclsim::dev::warpBcast(coop.laneMask(), value, src);
}
template <typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopLanes coop, T value, int root, bool entrySync = true) {
  (void)entrySync;
  return ncclsim::dev::warpBcast(coop.lmask, value, ncclsim::dev::nthLane(coop.lmask, root));
}
/* Wider coops go through the block's shared memory: one slot per warp
 * span id, one for the block. */
template <typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopWarpSpan coop, T value, int root, bool entrySync = true) {
  static_assert(sizeof(T) <= 16, "Required");
  static const char key = 0;
  ulong2 *stash = static_cast<ulong2 *>(__ncclsim_shared(&key, 16 * sizeof(ulong2), 16));
  if (entrySync) coop.sync();
  if (coop.thread_rank() == root) __builtin_memcpy(&stash[coop.id], &value, sizeof(T));
  coop.sync();
  T out;
  __builtin_memcpy(&out, &stash[coop.id], sizeof(T));
  return out;
}
template <typename T>
NCCL_DEVICE_INLINE T ncclCoopBcast(ncclCoopCta coop, T value, int root, bool entrySync = true) {
  static_assert(sizeof(T) <= 16, "Required");
  static const char key = 0;
  ulong2 *stash = static_cast<ulong2 *>(__ncclsim_shared(&key, sizeof(ulong2), 16));
  if (entrySync) coop.sync();
  if (coop.thread_rank() == root) __builtin_memcpy(stash, &value, sizeof(T));
  coop.sync();
  T out;
  __builtin_memcpy(&out, stash, sizeof(T));
  return out;
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_COOP_H_ */
