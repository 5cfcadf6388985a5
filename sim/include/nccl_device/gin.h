/*
 * nccl_device/gin.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/gin.h>: GIN, GPU-initiated networking, from kernels.
 *
 * ncclGin (a context of a device communicator) puts bytes or a value into
 * a peer's window, gets from one, and signals: a remote action (a signal
 * of the peer's, by index or at an address of a window, incremented or
 * added to; strong: every earlier put of this context to that peer lands
 * first; weak: only this put) and a local action (a counter of the
 * caller's, bumped when the source has been consumed). flush waits until
 * every source this context put from may be reused; readSignal,
 * waitSignal and resetSignal (and their counter forms) read the caller's
 * own. Waits compare "rolling" over `bits` bits, so that a counter that
 * wraps still grows.
 *
 * On ncclsim (sim/dev/gin*.c) the device communicator's GIN type decides
 * who carries an operation out: PROXY, a proxy thread of the rank's; GDAKI
 * and GPI, the calling CUDA thread itself. Peers on other simulated hosts
 * are reached over ncclsim's UCX layer. The connection type (FULL: every
 * rank; RAIL: the ranks of this rank's rail) says which peers are
 * reachable; another one, an offset outside a window, or a signal,
 * counter or context beyond the requirements is a kernel fault naming
 * them.
 */
#ifndef NCCLSIM_NCCL_DEVICE_GIN_H_
#define NCCLSIM_NCCL_DEVICE_GIN_H_
#include "core.h"
#include "gin/gin_device_common.h"

#if NCCL_CHECK_CUDACC
struct ncclGinCtx;
template <unsigned>
struct ncclGinCtx_M;

struct ncclGinDescriptorSmem;

/* Actions of a put. */
struct ncclGin_None {};

struct ncclGin_StrongVASignalInc {
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_WeakVASignalInc {
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_VASignalInc { /* deprecated: strong if the communicator asked for strong signals */
  ncclWindow_t signalWindow;
  size_t signalOffset;
};
struct ncclGin_StrongVASignalAdd {
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};
struct ncclGin_WeakVASignalAdd {
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};
struct ncclGin_VASignalAdd { /* deprecated */
  ncclWindow_t signalWindow;
  size_t signalOffset;
  uint64_t value;
};
struct ncclGin_StrongSignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_WeakSignalAdd {
  ncclGinSignal_t signal;
  uint64_t value;
};
struct ncclGin_SignalAdd { /* deprecated */
  ncclGinSignal_t signal;
  uint64_t value;
};
/* Inc may not be mixed with other operators on one signal without a
 * reset in between (NCCL's rule). */
struct ncclGin_StrongSignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_WeakSignalInc {
  ncclGinSignal_t signal;
};
struct ncclGin_SignalInc { /* deprecated */
  ncclGinSignal_t signal;
};
struct ncclGin_CounterInc { /* deprecated: ncclGin_WeakCounterInc */
  ncclGinCounter_t counter;
};
struct ncclGin_WeakCounterInc {
  ncclGinCounter_t counter;
};
struct ncclGin_DescriptorSmem {
  ncclGinDescriptorSmem *descriptor;
};

/* What a buffer's memory is made of (all host memory on ncclsim). */
struct ncclGin_SegmentDevice {};
struct ncclGin_SegmentMixed {};
struct ncclGin_SegmentHostNuma {};

template <unsigned backendMask>
struct ncclGin_BackendMask;

template <ncclNetDeviceType backend>
using ncclGin_BackendOne = ncclGin_BackendMask<(1u << (int)backend)>;

using ncclGin = ncclGin_BackendMask<NCCL_GIN_BACKEND_MASK_ALL>;

/* The C form: the same operations as functions of an ncclGin_C. */
struct ncclGin_C {
  ncclDevComm const &comm;
  uint32_t nConnections : 8, connectionId : 8, _ginBackend : 8;
  uint32_t contextId;
  ncclGinResourceSharingMode resourceSharingMode;

  void *_ginHandle;
  uint64_t *_signalShadows;
  unsigned backendMask;

  NCCL_DEVICE_INLINE ncclGin_C(ncclDevComm const &comm_, unsigned backendMask_, int contextIndex,
                               ncclGinResourceSharingMode resourceSharingMode_ = NCCL_GIN_RESOURCE_SHARING_GPU);
};

NCCL_DEVICE_INLINE void ncclGin_C_init(ncclGin_C *net, unsigned backendMask, ncclDevComm const &comm, int contextIndex);
NCCL_DEVICE_INLINE void ncclGin_C_initWithResourceSharingMode(ncclGin_C *net, unsigned backendMask,
                                                              ncclDevComm const &comm, int contextIndex,
                                                              ncclGinResourceSharingMode resourceSharingMode);
NCCL_DEVICE_INLINE void ncclGinPut(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
                                   ncclWindow_t srcWin, size_t srcOffset, size_t bytes, bool isSignal,
                                   ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                   bool isCounter, ncclGinCounter_t counterId, ncclCoopAny coop, bool isDescriptor,
                                   ncclGinDescriptorSmem *descriptor, cuda::thread_scope givenRelease,
                                   cuda::thread_scope requiredRelease);
NCCL_DEVICE_INLINE void ncclGinSignal(ncclGin_C *net, ncclTeam team, int peer, bool isSignal, ncclGinSignal_t signalId,
                                      ncclGinSignalOp_t signalOp, uint64_t signalOpArg, ncclCoopAny coop,
                                      bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                      cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease);
NCCL_DEVICE_INLINE void ncclGinPut_v2(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
                                      ncclWindow_t srcWin, size_t srcOffset, size_t bytes, bool isSignal,
                                      ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                      bool isCounter, ncclGinCounter_t counterId, ncclCoopAny coop, bool isDescriptor,
                                      ncclGinDescriptorSmem *descriptor, cuda::thread_scope givenRelease,
                                      cuda::thread_scope requiredRelease, uint32_t optFlags);
NCCL_DEVICE_INLINE void ncclGinSignal_v2(ncclGin_C *net, ncclTeam team, int peer, bool isSignal,
                                         ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                         ncclCoopAny coop, bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                         cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease,
                                         uint32_t optFlags);
NCCL_DEVICE_INLINE void ncclGinFlush(ncclGin_C *net, ncclCoopAny coop, cuda::memory_order ord);
NCCL_DEVICE_INLINE uint64_t ncclGinReadCounter(ncclGin_C *net, ncclGinCounter_t counter, int bits,
                                               cuda::memory_order ord);
NCCL_DEVICE_INLINE void ncclGinWaitCounter(ncclGin_C *net, ncclCoopAny coop, ncclGinCounter_t counter, uint64_t least,
                                           int bits, cuda::memory_order ord);
NCCL_DEVICE_INLINE uint64_t ncclGinReadSignal(ncclGin_C *net, ncclGinSignal_t signal, int bits, cuda::memory_order ord);
NCCL_DEVICE_INLINE void ncclGinWaitSignal(ncclGin_C *net, ncclCoopAny coop, ncclGinSignal_t signal, uint64_t least,
                                          int bits, cuda::memory_order ord);
NCCL_DEVICE_INLINE void ncclGinResetCounter(ncclGin_C *net, ncclGinCounter_t counter);
NCCL_DEVICE_INLINE void ncclGinResetSignal(ncclGin_C *net, ncclGinSignal_t signal);
NCCL_DEVICE_INLINE void ncclGinPutValue(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin, size_t dstOffset,
                                        uint64_t value, size_t size, bool isSignal, ncclGinSignal_t signalId,
                                        ncclGinSignalOp_t signalOp, uint64_t signalOpArg, ncclCoopAny coop,
                                        bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                        cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease);
NCCL_DEVICE_INLINE void ncclGinPutValue_v2(ncclGin_C *net, ncclTeam team, int peer, ncclWindow_t dstWin,
                                           size_t dstOffset, uint64_t value, size_t size, bool isSignal,
                                           ncclGinSignal_t signalId, ncclGinSignalOp_t signalOp, uint64_t signalOpArg,
                                           ncclCoopAny coop, bool isDescriptor, ncclGinDescriptorSmem *descriptor,
                                           cuda::thread_scope givenRelease, cuda::thread_scope requiredRelease,
                                           uint32_t optFlags);
NCCL_DEVICE_INLINE uint64_t *ncclGinGetSignalShadowPtr(ncclGin_C *net, ncclGinSignal_t signal);

template <unsigned backendMask>
struct ncclGin_BackendMask {
  ncclDevComm const &comm;
  uint32_t nConnections : 8, connectionId : 8, _ginBackend : 8;
  uint32_t contextId;
  ncclGinResourceSharingMode resourceSharingMode;

  /* Context contextIndex (0 .. comm.ginContextCount-1) of comm. */
  NCCL_DEVICE_INLINE ncclGin_BackendMask(ncclDevComm const &, int contextIndex,
                                         ncclGinResourceSharingMode resourceSharingMode_ = NCCL_GIN_RESOURCE_SHARING_GPU);

  /* A flush of what this context sent to team member peer, as a request
   * that wait() completes. */
  template <typename Coop = ncclCoopThread, typename DescriptorSmem = ncclGin_None>
  NCCL_DEVICE_INLINE void flushAsync(ncclTeam team, uint32_t peer, ncclGinRequest_t *outRequest,
                                     Coop coop = ncclCoopThread{}, uint32_t optFlags = ncclGinOptFlagsDefault,
                                     DescriptorSmem descriptor = ncclGin_None{}) const;
  template <typename Coop = ncclCoopThread, typename DescriptorSmem = ncclGin_None>
  NCCL_DEVICE_INLINE void wait(ncclGinRequest_t &outRequest, Coop coop = ncclCoopThread{},
                               DescriptorSmem descriptor = ncclGin_None{},
                               cuda::memory_order ord = cuda::memory_order_acquire) const;

  /* bytes from the peer's remoteWnd at remoteOffset into the caller's
   * localWnd at localOffset; landed after a flush, or a barrier with the
   * Get fence. */
  template <typename Coop = ncclCoopThread, typename DescriptorSmem = ncclGin_None,
            typename SegmentType = ncclGin_SegmentDevice>
  NCCL_DEVICE_INLINE void get(ncclTeam, int peer, ncclWindow_t remoteWnd, size_t remoteOffset, ncclWindow_t localWnd,
                              size_t localOffset, size_t bytes, Coop coop = ncclCoopThread{},
                              DescriptorSmem descriptor = ncclGin_None{}, uint32_t optFlags = ncclGinOptFlagsDefault,
                              SegmentType bufType = ncclGin_SegmentDevice{}) const;

  /* bytes from the caller's srcWnd at srcOffset into team member peer's
   * dstWnd at dstOffset, then the remote and local actions. */
  template <typename RemoteAction = ncclGin_None, typename LocalAction = ncclGin_None, typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None, typename SegmentType = ncclGin_SegmentDevice>
  NCCL_DEVICE_INLINE void put(ncclTeam, int peer, ncclWindow_t dstWnd, size_t dstOffset, ncclWindow_t srcWnd,
                              size_t srcOffset, size_t bytes, RemoteAction remoteAction = ncclGin_None{},
                              LocalAction localAction = ncclGin_None{}, Coop coop = ncclCoopThread{},
                              DescriptorSmem descriptor = ncclGin_None{},
                              cuda::thread_scope givenRelease = cuda::thread_scope_thread,
                              cuda::thread_scope requiredRelease = cuda::thread_scope_device,
                              uint32_t optFlags = ncclGinOptFlagsDefault,
                              SegmentType bufType = ncclGin_SegmentDevice{}) const;

  /* nElts elements of T between symmetric pointers. */
  template <typename T, typename RemoteAction = ncclGin_None, typename LocalAction = ncclGin_None,
            typename Coop = ncclCoopThread, typename DescriptorSmem = ncclGin_None,
            typename SegmentType = ncclGin_SegmentDevice>
  NCCL_DEVICE_INLINE void put(ncclTeam, int peer, ncclSymPtr<T> dstElts, ncclSymPtr<T> srcElts, size_t nElts,
                              RemoteAction remoteAction = ncclGin_None{}, LocalAction localAction = ncclGin_None{},
                              Coop coop = ncclCoopThread{}, DescriptorSmem descriptor = ncclGin_None{},
                              cuda::thread_scope givenRelease = cuda::thread_scope_thread,
                              cuda::thread_scope requiredRelease = cuda::thread_scope_device,
                              uint32_t optFlags = ncclGinOptFlagsDefault,
                              SegmentType bufType = ncclGin_SegmentDevice{}) const;

  /* A value of at most 8 bytes into the peer's window. */
  template <typename T, typename RemoteAction = ncclGin_None, typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None>
  NCCL_DEVICE_INLINE void putValue(ncclTeam, int peer, ncclWindow_t dstWnd, size_t dstOffset, T value,
                                   RemoteAction remoteAction = ncclGin_None{}, Coop coop = ncclCoopThread{},
                                   DescriptorSmem descriptor = ncclGin_None{},
                                   cuda::thread_scope givenRelease = cuda::thread_scope_thread,
                                   cuda::thread_scope requiredRelease = cuda::thread_scope_device,
                                   uint32_t optFlags = ncclGinOptFlagsDefault) const;
  template <typename T, typename RemoteAction = ncclGin_None, typename Coop = ncclCoopThread,
            typename DescriptorSmem = ncclGin_None>
  NCCL_DEVICE_INLINE void putValue(ncclTeam, int peer, ncclSymPtr<T> dst, T value,
                                   RemoteAction remoteAction = ncclGin_None{}, Coop coop = ncclCoopThread{},
                                   DescriptorSmem descriptor = ncclGin_None{},
                                   cuda::thread_scope givenRelease = cuda::thread_scope_thread,
                                   cuda::thread_scope requiredRelease = cuda::thread_scope_device,
                                   uint32_t optFlags = ncclGinOptFlagsDefault) const;

  /* The remote action alone. */
  template <typename RemoteAction, typename Coop = ncclCoopThread, typename DescriptorSmem = ncclGin_None>
  NCCL_DEVICE_INLINE void signal(ncclTeam, int peer, RemoteAction remoteAction, Coop coop = ncclCoopThread(),
                                 DescriptorSmem descriptor = ncclGin_None{},
                                 cuda::thread_scope givenRelease = cuda::thread_scope_thread,
                                 cuda::thread_scope requiredRelease = cuda::thread_scope_device,
                                 uint32_t optFlags = ncclGinOptFlagsDefault) const;

  /* Every source buffer this context's puts read (from any thread of
   * coop) may be reused; it does not say the data landed. */
  template <typename Coop, typename DescriptorSmem = ncclGin_None>
  NCCL_DEVICE_INLINE void flush(Coop coop, cuda::memory_order ord = cuda::memory_order_acquire,
                                DescriptorSmem descriptor = ncclGin_None{}) const;

  /* Counters: 56 bits at most. */
  NCCL_DEVICE_INLINE uint64_t readCounter(ncclGinCounter_t counter, int bits = 56,
                                          cuda::memory_order ord = cuda::memory_order_acquire) const;
  template <typename Coop>
  NCCL_DEVICE_INLINE void waitCounter(Coop, ncclGinCounter_t counter, uint64_t least, int bits = 56,
                                      cuda::memory_order ord = cuda::memory_order_acquire) const;

  /* Each signal has a shadow for the caller's own bookkeeping; only
   * increaseSignalShadow, waitSignalFollowShadow and resetSignal touch it. */
  NCCL_DEVICE_INLINE uint64_t *getSignalShadowPtr(ncclGinSignal_t signal) const;
  NCCL_DEVICE_INLINE void increaseSignalShadow(ncclGinSignal_t signal, uint64_t delta) const;

  NCCL_DEVICE_INLINE uint64_t readSignal(ncclGinSignal_t signal, int bits = 64,
                                         cuda::memory_order ord = cuda::memory_order_acquire) const;
  NCCL_DEVICE_INLINE uint64_t readSignal(ncclWindow_t signalWindow, size_t signalOffset, int bits = 64,
                                         cuda::memory_order ord = cuda::memory_order_acquire) const;
  template <typename Coop>
  NCCL_DEVICE_INLINE void waitSignal(Coop, ncclGinSignal_t signal, uint64_t least, int bits = 64,
                                     cuda::memory_order ord = cuda::memory_order_acquire) const;
  template <typename Coop>
  NCCL_DEVICE_INLINE void waitSignal(Coop, ncclWindow_t signalWindow, size_t signalOffset, uint64_t least,
                                     int bits = 64, cuda::memory_order ord = cuda::memory_order_acquire) const;
  /* Until the signal reaches its shadow. */
  template <typename Coop>
  NCCL_DEVICE_INLINE void waitSignalMeetShadow(Coop, ncclGinSignal_t signal, int bits = 64,
                                               cuda::memory_order ord = cuda::memory_order_acquire) const;
  /* Until the signal exceeds its shadow by leastDelta; the shadow follows
   * it, *before is the old shadow and *delta the difference. */
  template <typename Coop, typename Uint>
  NCCL_DEVICE_INLINE void waitSignalFollowShadow(Coop, ncclGinSignal_t signal, Uint leastDelta, Uint *before,
                                                 Uint *delta, int bits = 64,
                                                 cuda::memory_order ord = cuda::memory_order_acquire) const;

  /* To zero; must not race with updates of the same signal or counter. */
  NCCL_DEVICE_INLINE void resetCounter(ncclGinCounter_t counter) const;
  NCCL_DEVICE_INLINE void resetSignal(ncclGinSignal_t signal) const;
  NCCL_DEVICE_INLINE void resetSignal(ncclWindow_t signalWindow, size_t signalOffset) const;

  /* internal: */
  void *_ginHandle;
  uint64_t *_signalShadows;

  NCCL_DEVICE_INLINE ncclGinCtx_M<backendMask> _makeCtx() const;
};
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_GIN_H_ */
