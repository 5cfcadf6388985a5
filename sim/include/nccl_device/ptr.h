/*
 * nccl_device/ptr.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/ptr.h>: ncclSymPtr<T>, a position in a window that means
 * the same place in every rank's copy of it (a window and a byte offset).
 * Arithmetic moves the offset by elements of T; in kernels it turns into
 * the caller's, an LSA peer's, a team member's or the multimem address
 * (ncclGet*Pointer). C++ only.
 */
#ifndef NCCLSIM_NCCL_DEVICE_PTR_H_
#define NCCLSIM_NCCL_DEVICE_PTR_H_
#include "core.h"
#include <stdint.h>

#if __cplusplus
template <typename T>
struct ncclSymPtr {
  using ElementType = T;
  ncclWindow_t window;
  size_t offset;

  NCCL_HOST_DEVICE_INLINE constexpr ncclSymPtr(ncclWindow_t window = nullptr, size_t offset = 0);

  template <typename U>
  NCCL_HOST_DEVICE_INLINE operator ncclSymPtr<U>() const;

  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator+=(int d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator+=(unsigned int d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator+=(long d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator+=(unsigned long d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator+=(long long d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator+=(unsigned long long d);

  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator-=(int d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator-=(unsigned int d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator-=(long d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator-=(unsigned long d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator-=(long long d);
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &operator-=(unsigned long long d);

#if NCCL_CHECK_CUDACC
  NCCL_DEVICE_INLINE T *localPtr() const;
  NCCL_DEVICE_INLINE T *lsaPtr(int peer) const;
  NCCL_DEVICE_INLINE T *peerPtr(int peer) const;
  NCCL_DEVICE_INLINE T *peerPtr(ncclTeam team, int peer) const;
  NCCL_DEVICE_INLINE T *multimemPtr(ncclMultimemHandle mmHandle) const;
  NCCL_DEVICE_INLINE T *lsaMultimemPtr(ncclDevComm const &) const;
#endif
};

template <typename T, typename Int>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> operator+(ncclSymPtr<T> p, Int d);
template <typename T, typename Int>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> operator-(ncclSymPtr<T> p, Int d);
/* Elements between two positions of one window. */
template <typename T>
NCCL_HOST_DEVICE_INLINE ptrdiff_t operator-(ncclSymPtr<T> a, ncclSymPtr<T> b);
/* Same window and offset. (NCCL 2.30.7 declares these with an extra
 * template parameter that no call can deduce; ncclsim's can be called.) */
template <typename T>
NCCL_HOST_DEVICE_INLINE bool operator==(ncclSymPtr<T> a, ncclSymPtr<T> b);
template <typename T>
NCCL_HOST_DEVICE_INLINE bool operator!=(ncclSymPtr<T> a, ncclSymPtr<T> b);
#endif

#endif /* NCCLSIM_NCCL_DEVICE_PTR_H_ */
