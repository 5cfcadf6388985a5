/*
 * nccl_device/impl/reduce_copy__types.h — ncclsim's: the reduction
 * operators of the reduce-copy helpers (nccl::utility::OpSum), the
 * accumulator rebinding and the coop stride hints, with NCCL's names.
 */
#ifndef NCCLSIM_NCCL_DEVICE_REDUCE_COPY__TYPES_H_
#define NCCLSIM_NCCL_DEVICE_REDUCE_COPY__TYPES_H_

#include "../utility.h"
#include "../coop.h"

#if __cplusplus
namespace nccl {
namespace utility {

template <typename T>
struct OpSum {
  using EltType = T;
  NCCL_HOST_DEVICE_INLINE T operator()(const T &a, const T &b) const { return a + b; }
};

/* RedOp<T> rebound to the accumulator's type; other operators as they are. */
template <typename RedOp, typename AccEltType>
struct AccRedOp {
  using Type = RedOp;
};
template <template <typename> class Red, typename T, typename AccEltType>
struct AccRedOp<Red<T>, AccEltType> {
  using Type = Red<AccEltType>;
};

/* Elements a coop's thread strides by at compile time (0: at run time). */
template <typename Coop>
struct CoopStride {
  static constexpr int value = 0;
};
#if NCCL_CHECK_CUDACC
template <>
struct CoopStride<ncclCoopWarp> {
  static constexpr int value = 32;
};
template <>
struct CoopStride<ncclCoopCta> {
  static constexpr int value = 32;
};
template <>
struct CoopStride<ncclCoopThread> {
  static constexpr int value = 1;
};
#endif

} /* namespace utility */
} /* namespace nccl */
#endif /* __cplusplus */

#endif /* NCCLSIM_NCCL_DEVICE_REDUCE_COPY__TYPES_H_ */
