/*
 * nccl_device/impl/ptr__funcs.h — ncclsim's: ncclSymPtr<T>'s arithmetic
 * and its addresses.
 */
#ifndef NCCLSIM_NCCL_DEVICE_PTR__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_PTR__FUNCS_H_
#include "ptr__types.h"
#include "core__funcs.h"

#if __cplusplus
template <typename T>
NCCL_HOST_DEVICE_INLINE constexpr ncclSymPtr<T>::ncclSymPtr(ncclWindow_t window_, size_t offset_)
    : window(window_), offset(offset_) {}

template <typename T>
template <typename U>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T>::operator ncclSymPtr<U>() const {
  return ncclSymPtr<U>(window, offset);
}

#define NCCLSIM_SYMPTR_STEP(Int)                                                            \
  template <typename T>                                                                     \
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &ncclSymPtr<T>::operator+=(Int d) {                 \
    offset += (size_t)(long long)d * sizeof(T);                                             \
    return *this;                                                                           \
  }                                                                                         \
  template <typename T>                                                                     \
  NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> &ncclSymPtr<T>::operator-=(Int d) {                 \
    offset -= (size_t)(long long)d * sizeof(T);                                             \
    return *this;                                                                           \
  }
NCCLSIM_SYMPTR_STEP(int)
NCCLSIM_SYMPTR_STEP(unsigned int)
NCCLSIM_SYMPTR_STEP(long)
NCCLSIM_SYMPTR_STEP(unsigned long)
NCCLSIM_SYMPTR_STEP(long long)
NCCLSIM_SYMPTR_STEP(unsigned long long)
#undef NCCLSIM_SYMPTR_STEP

template <typename T, typename Int>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> operator+(ncclSymPtr<T> p, Int d) {
  return p += d;
}
template <typename T, typename Int>
NCCL_HOST_DEVICE_INLINE ncclSymPtr<T> operator-(ncclSymPtr<T> p, Int d) {
  return p -= d;
}
template <typename T>
NCCL_HOST_DEVICE_INLINE ptrdiff_t operator-(ncclSymPtr<T> a, ncclSymPtr<T> b) {
  return ((ptrdiff_t)a.offset - (ptrdiff_t)b.offset) / (ptrdiff_t)sizeof(T);
}
template <typename T>
NCCL_HOST_DEVICE_INLINE bool operator==(ncclSymPtr<T> a, ncclSymPtr<T> b) {
  return a.window == b.window && a.offset == b.offset;
}
template <typename T>
NCCL_HOST_DEVICE_INLINE bool operator!=(ncclSymPtr<T> a, ncclSymPtr<T> b) {
  return !(a == b);
}

#if NCCL_CHECK_CUDACC
template <typename T>
NCCL_DEVICE_INLINE T *ncclSymPtr<T>::localPtr() const {
  return (T *)ncclGetLocalPointer(window, offset);
}
template <typename T>
NCCL_DEVICE_INLINE T *ncclSymPtr<T>::lsaPtr(int peer) const {
  return (T *)ncclGetLsaPointer(window, offset, peer);
}
template <typename T>
NCCL_DEVICE_INLINE T *ncclSymPtr<T>::peerPtr(int peer) const {
  return (T *)ncclGetPeerPointer(window, offset, peer);
}
template <typename T>
NCCL_DEVICE_INLINE T *ncclSymPtr<T>::peerPtr(ncclTeam team, int peer) const {
  return (T *)ncclGetPeerPointer(window, offset, team, peer);
}
template <typename T>
NCCL_DEVICE_INLINE T *ncclSymPtr<T>::multimemPtr(ncclMultimemHandle mmHandle) const {
  return (T *)ncclGetMultimemPointer(window, offset, mmHandle);
}
template <typename T>
NCCL_DEVICE_INLINE T *ncclSymPtr<T>::lsaMultimemPtr(ncclDevComm const &comm) const {
  return (T *)ncclGetLsaMultimemPointer(window, offset, comm);
}
#endif
#endif /* __cplusplus */

#endif /* NCCLSIM_NCCL_DEVICE_PTR__FUNCS_H_ */
