/*
 * nccl_device/impl/reduce_copy__funcs.h — ncclsim's reduce-copy helpers.
 *
 * One loop does them all (ncclsim::dev::reduceCopy): the coop's threads
 * take elements thread_rank(), +size(), ...; each reduces its element of
 * every source in source order and stores the result to every
 * destination. Sources and destinations are resolved to pointers once per
 * thread (up to 64; more are asked of their lambda per element). The
 * multimem forms end the kernel: ncclsim has no multicast.
 */
#ifndef NCCLSIM_NCCL_DEVICE_REDUCE_COPY__FUNCS_H_
#define NCCLSIM_NCCL_DEVICE_REDUCE_COPY__FUNCS_H_
#include "../reduce_copy.h"
#include "reduce_copy__types.h"
#include "core__funcs.h"
#include "ptr__funcs.h"

#if NCCL_CHECK_CUDACC
namespace ncclsim {
namespace dev {
template <typename T, typename Red, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount>
__device__ inline void reduceCopy(Coop coop, SrcLambda src, int nSrc, DstLambda dst, int nDst, Red const &red,
                                  IntCount count) {
  enum { kMax = 64 };
  T *s[kMax], *d[kMax];
  bool cached = nSrc <= kMax && nDst <= kMax;
  if (cached) {
    for (int i = 0; i < nSrc; i++) s[i] = (T *)src(i);
    for (int i = 0; i < nDst; i++) d[i] = (T *)dst(i);
  }
  for (IntCount e = IntCount(coop.thread_rank()); e < count; e += IntCount(coop.size())) {
    T acc = cached ? s[0][e] : ((T *)src(0))[e];
    for (int i = 1; i < nSrc; i++) acc = red(acc, cached ? s[i][e] : ((T *)src(i))[e]);
    for (int i = 0; i < nDst; i++) (cached ? d[i] : (T *)dst(i))[e] = acc;
  }
}
__device__ inline void noMultimem(const char *fn) {
  ncclsimDevUnsupported(fn);
}
} /* namespace dev */
} /* namespace ncclsim */

template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename RedOp, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceLsaCopy(Coop coop, SrcLambda src, int nSrc, DstLambda dst, int nDst, RedOp const &red, IntCount count) {
  ncclsim::dev::reduceCopy<T>(coop, src, nSrc, dst, nDst, red, count);
}

template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename RedOp, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceMultimemCopy(Coop coop, SrcLambda, int, DstLambda, int, RedOp const &, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclLsaReduceMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumLsaCopy(Coop coop, SrcLambda src, int nSrc, DstLambda dst, int nDst, IntCount count) {
  ncclsim::dev::reduceCopy<T>(coop, src, nSrc, dst, nDst, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumMultimemCopy(Coop coop, SrcLambda, int, DstLambda, int, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclLsaReduceSumMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumLsaCopy(Coop coop, SrcLambda, int, DstLambda, int, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumLsaCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename SrcLambda, typename DstLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumMultimemCopy(Coop coop, SrcLambda, int, DstLambda, int, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename SrcLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop coop, SrcLambda src, int nSrc, T *dstPtr, IntCount count) {
  auto dst = [=](int) -> T * { return dstPtr; };
  ncclsim::dev::reduceCopy<T>(coop, src, nSrc, dst, 1, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop coop, ncclSymPtr<T> src, T *dstPtr, IntCount count, ncclTeam team) {
  auto s = [=](int i) -> T * { return src.peerPtr(team, i); };
  auto dst = [=](int) -> T * { return dstPtr; };
  ncclsim::dev::reduceCopy<T>(coop, s, team.nRanks, dst, 1, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop coop, ncclSymPtr<T> src, T *dstPtr, IntCount count, ncclDevComm_t devComm) {
  ncclLsaReduceSum<T, Coop, IntCount, UNROLL>(coop, src, dstPtr, count, ncclTeamLsa(devComm));
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop coop, ncclWindow_t window, size_t offset, T *dstPtr, IntCount count, ncclTeam team) {
  ncclLsaReduceSum<T, Coop, IntCount, UNROLL>(coop, ncclSymPtr<T>(window, offset), dstPtr, count, team);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSum(Coop coop, ncclWindow_t window, size_t offset, T *dstPtr, IntCount count, ncclDevComm_t devComm) {
  ncclLsaReduceSum<T, Coop, IntCount, UNROLL>(coop, ncclSymPtr<T>(window, offset), dstPtr, count, ncclTeamLsa(devComm));
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSum(Coop coop, ncclSymPtr<T>, T *, IntCount, ncclMultimemHandle) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSum: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSum(Coop coop, T *, T *, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSum: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSum(Coop coop, ncclWindow_t, size_t, T *, IntCount, ncclMultimemHandle) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSum: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename SrcLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLocalReduceSum(Coop coop, SrcLambda src, int nSrc, T *dstPtr, IntCount count) {
  auto dst = [=](int) -> T * { return dstPtr; };
  ncclsim::dev::reduceCopy<T>(coop, src, nSrc, dst, 1, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLocalReduceSum(Coop coop, int nSrc, T *basePtr, size_t displ, T *dstPtr, IntCount count) {
  auto src = [=](int i) -> T * { return basePtr + i * displ; };
  auto dst = [=](int) -> T * { return dstPtr; };
  ncclsim::dev::reduceCopy<T>(coop, src, nSrc, dst, 1, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename DstLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop coop, T *srcPtr, DstLambda dst, int nDst, IntCount count) {
  auto src = [=](int) -> T * { return srcPtr; };
  ncclsim::dev::reduceCopy<T>(coop, src, 1, dst, nDst, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop coop, T *srcPtr, ncclSymPtr<T> dst, IntCount count, ncclTeam team) {
  auto src = [=](int) -> T * { return srcPtr; };
  auto d = [=](int i) -> T * { return dst.peerPtr(team, i); };
  ncclsim::dev::reduceCopy<T>(coop, src, 1, d, team.nRanks, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop coop, T *srcPtr, ncclSymPtr<T> dst, IntCount count, ncclDevComm_t devComm) {
  ncclLsaCopy<T, Coop, IntCount, UNROLL>(coop, srcPtr, dst, count, ncclTeamLsa(devComm));
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop coop, T *srcPtr, ncclWindow_t window, size_t offset, IntCount count, ncclTeam team) {
  ncclLsaCopy<T, Coop, IntCount, UNROLL>(coop, srcPtr, ncclSymPtr<T>(window, offset), count, team);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaCopy(Coop coop, T *srcPtr, ncclWindow_t window, size_t offset, IntCount count, ncclDevComm_t devComm) {
  ncclLsaCopy<T, Coop, IntCount, UNROLL>(coop, srcPtr, ncclSymPtr<T>(window, offset), count, ncclTeamLsa(devComm));
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemCopy(Coop coop, T *, ncclSymPtr<T>, IntCount, ncclMultimemHandle) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemCopy(Coop coop, T *, T *, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemCopy(Coop coop, T *, ncclWindow_t, size_t, IntCount, ncclMultimemHandle) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename DstLambda, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLocalCopy(Coop coop, T *srcPtr, DstLambda dst, int nDst, IntCount count) {
  auto src = [=](int) -> T * { return srcPtr; };
  ncclsim::dev::reduceCopy<T>(coop, src, 1, dst, nDst, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLocalCopy(Coop coop, T *srcPtr, int nDst, T *basePtr, size_t displ, IntCount count) {
  auto src = [=](int) -> T * { return srcPtr; };
  auto dst = [=](int i) -> T * { return basePtr + i * displ; };
  ncclsim::dev::reduceCopy<T>(coop, src, 1, dst, nDst, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop coop, ncclSymPtr<T> src, ncclSymPtr<T> dst, IntCount count, ncclTeam team) {
  ncclLsaReduceSumCopy<T, Coop, IntCount, UNROLL>(coop, src, team, dst, team, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop coop, ncclSymPtr<T> src, ncclSymPtr<T> dst, IntCount count, ncclDevComm_t devComm) {
  ncclLsaReduceSumCopy<T, Coop, IntCount, UNROLL>(coop, src, dst, count, ncclTeamLsa(devComm));
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop coop, ncclWindow_t srcWindow, size_t srcOffset, ncclWindow_t dstWindow, size_t dstOffset, IntCount count, ncclTeam team) {
  ncclLsaReduceSumCopy<T, Coop, IntCount, UNROLL>(coop, ncclSymPtr<T>(srcWindow, srcOffset), ncclSymPtr<T>(dstWindow, dstOffset), count, team);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop coop, ncclWindow_t srcWindow, size_t srcOffset, ncclWindow_t dstWindow, size_t dstOffset, IntCount count, ncclDevComm_t devComm) {
  ncclLsaReduceSumCopy<T, Coop, IntCount, UNROLL>(coop, ncclSymPtr<T>(srcWindow, srcOffset), ncclSymPtr<T>(dstWindow, dstOffset), count, ncclTeamLsa(devComm));
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumCopy(Coop coop, ncclSymPtr<T> src, ncclTeam srcTeam, ncclSymPtr<T> dst, ncclTeam dstTeam, IntCount count) {
  auto s = [=](int i) -> T * { return src.peerPtr(srcTeam, i); };
  auto d = [=](int i) -> T * { return dst.peerPtr(dstTeam, i); };
  ncclsim::dev::reduceCopy<T>(coop, s, srcTeam.nRanks, d, dstTeam.nRanks, nccl::utility::OpSum<T>{}, count);
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumCopy(Coop coop, ncclSymPtr<T>, ncclMultimemHandle, ncclSymPtr<T>, ncclMultimemHandle, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumCopy(Coop coop, T *, T *, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumCopy(Coop coop, ncclWindow_t, size_t, ncclMultimemHandle, ncclWindow_t, size_t, ncclMultimemHandle, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumMultimemCopy(Coop coop, ncclSymPtr<T>, ncclTeam, ncclSymPtr<T>, ncclMultimemHandle, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclLsaReduceSumMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLsaReduceSumMultimemCopy(Coop coop, ncclSymPtr<T>, ncclTeam, T *, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclLsaReduceSumMultimemCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumLsaCopy(Coop coop, ncclSymPtr<T>, ncclMultimemHandle, ncclSymPtr<T>, ncclTeam, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumLsaCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclMultimemReduceSumLsaCopy(Coop coop, T *, ncclSymPtr<T>, ncclTeam, IntCount) {
  (void)coop;
  ncclsim::dev::noMultimem("ncclMultimemReduceSumLsaCopy: multimem (ncclsim has no multicast)");
}

template <typename T, typename Coop, typename IntCount, int UNROLL>
NCCL_DEVICE_INLINE void ncclLocalReduceSumCopy(Coop coop, int nSrc, T *srcBase, size_t srcDispl, int nDst, T *dstBase, size_t dstDispl, IntCount count) {
  auto src = [=](int i) -> T * { return srcBase + i * srcDispl; };
  auto dst = [=](int i) -> T * { return dstBase + i * dstDispl; };
  ncclsim::dev::reduceCopy<T>(coop, src, nSrc, dst, nDst, nccl::utility::OpSum<T>{}, count);
}
#endif /* NCCL_CHECK_CUDACC */

#endif /* NCCLSIM_NCCL_DEVICE_REDUCE_COPY__FUNCS_H_ */
