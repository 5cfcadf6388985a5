/*
 * nccl_device/reduce_copy.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/reduce_copy.h>: the reduce-copy building blocks. Each
 * reduces `count` elements of T from nSrc sources (LSA peers through
 * their window pointers, local buffers, or multimem addresses), and
 * writes the result to nDst destinations; the threads of the coop share
 * the elements. Sources and destinations come as lambdas (int -> T*), as
 * symmetric pointers with a team (every member), as a window and offset,
 * or strided from a base pointer.
 *
 * ncclsim has no multicast: a multimem form ends the kernel with
 * cudaErrorNotSupported (a program checks multimemSupport first, as on a
 * GPU without NVLink SHARP).
 */
#ifndef NCCLSIM_NCCL_DEVICE_REDUCE_COPY_H_
#define NCCLSIM_NCCL_DEVICE_REDUCE_COPY_H_
#include "core.h"
#include "impl/reduce_copy__types.h"

#if NCCL_CHECK_CUDACC
/* 1.x: any reduction (RedOp, e.g. nccl::utility::OpSum<T>), LSA sources. */
template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename RedOp, typename IntCount,
          int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceLsaCopy(Coop, SrcLambda, int, DstLambda, int, RedOp const &, IntCount);
template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename RedOp, typename IntCount,
          int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceMultimemCopy(Coop, SrcLambda, int, DstLambda, int, RedOp const &, IntCount);

/* 2.x: sums, lambdas. */
template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount,
          int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumLsaCopy(Coop, SrcLambda, int, DstLambda, int, IntCount);
template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount,
          int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumMultimemCopy(Coop, SrcLambda, int, DstLambda, int, IntCount);
template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount,
          int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumLsaCopy(Coop, SrcLambda, int, DstLambda, int, IntCount);
template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount,
          int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumMultimemCopy(Coop, SrcLambda, int, DstLambda, int, IntCount);

/* 3.x: sums into one local destination. */
template <typename T, typename Coop, typename SrcLambda, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop, SrcLambda, int, T *, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop, ncclSymPtr<T>, T *, IntCount, ncclTeam);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop, ncclSymPtr<T>, T *, IntCount, ncclDevComm_t);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop, ncclWindow_t, size_t, T *, IntCount, ncclTeam);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop, ncclWindow_t, size_t, T *, IntCount, ncclDevComm_t);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSum(Coop, ncclSymPtr<T>, T *, IntCount, ncclMultimemHandle);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSum(Coop, T *, T *, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSum(Coop, ncclWindow_t, size_t, T *, IntCount, ncclMultimemHandle);
template <typename T, typename Coop, typename SrcLambda, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLocalReduceSum(Coop, SrcLambda, int, T *, IntCount);
/* nSrc sources displ elements apart from basePtr. */
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLocalReduceSum(Coop, int, T *, size_t, T *, IntCount);

/* 4.x: one source copied to every destination. */
template <typename T, typename Coop, typename DstLambda, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop, T *, DstLambda, int, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop, T *, ncclSymPtr<T>, IntCount, ncclTeam);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop, T *, ncclSymPtr<T>, IntCount, ncclDevComm_t);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop, T *, ncclWindow_t, size_t, IntCount, ncclTeam);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop, T *, ncclWindow_t, size_t, IntCount, ncclDevComm_t);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemCopy(Coop, T *, ncclSymPtr<T>, IntCount, ncclMultimemHandle);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemCopy(Coop, T *, T *, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemCopy(Coop, T *, ncclWindow_t, size_t, IntCount, ncclMultimemHandle);
template <typename T, typename Coop, typename DstLambda, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLocalCopy(Coop, T *, DstLambda, int, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLocalCopy(Coop, T *, int, T *, size_t, IntCount);

/* 5.x: sums copied to several destinations. */
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop, ncclSymPtr<T>, ncclSymPtr<T>, IntCount, ncclTeam);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop, ncclSymPtr<T>, ncclSymPtr<T>, IntCount, ncclDevComm_t);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop, ncclWindow_t, size_t, ncclWindow_t, size_t, IntCount, ncclTeam);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop, ncclWindow_t, size_t, ncclWindow_t, size_t, IntCount, ncclDevComm_t);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop, ncclSymPtr<T>, ncclTeam, ncclSymPtr<T>, ncclTeam, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumCopy(Coop, ncclSymPtr<T>, ncclMultimemHandle, ncclSymPtr<T>,
                                                  ncclMultimemHandle, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumCopy(Coop, T *, T *, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumCopy(Coop, ncclWindow_t, size_t, ncclMultimemHandle, ncclWindow_t, size_t,
                                                  ncclMultimemHandle, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumMultimemCopy(Coop, ncclSymPtr<T>, ncclTeam, ncclSymPtr<T>, ncclMultimemHandle,
                                                     IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLsaReduceSumMultimemCopy(Coop, ncclSymPtr<T>, ncclTeam, T *, IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumLsaCopy(Coop, ncclSymPtr<T>, ncclMultimemHandle, ncclSymPtr<T>, ncclTeam,
                                                     IntCount);
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumLsaCopy(Coop, T *, ncclSymPtr<T>, ncclTeam, IntCount);
/* nSrc strided sources into nDst strided destinations. */
template <typename T, typename Coop, typename IntCount, int UNROLL = 4 * 16 / sizeof(T)>
NCCL_DEVICE_INLINE void ncclLocalReduceSumCopy(Coop, int, T *, size_t, int, T *, size_t, IntCount);
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_REDUCE_COPY_H_ */
