/*
 * nccl_device/utility.h — ncclsim's drop-in for NCCL 2.30.7's
 * <nccl_device/utility.h>: the qualifier macros of the device API
 * (NCCL_DEVICE_INLINE, NCCL_HOST_DEVICE_INLINE, NCCL_EXTERN_C, ...), the
 * loop pragmas, and namespace nccl::utility: integer helpers (divUp,
 * rolling comparisons, division by reciprocals), memory-order helpers,
 * lane queries and the Optional/Present holders.
 *
 * Names and semantics are NCCL's; the code is ncclsim's. NCCL_CHECK_CUDACC
 * is 1 where CUDA code is compiled (nvcc, or ncclsim's compiler driver
 * ncclsim-nvcc, which defines __CUDACC__): only then are the device parts
 * of the API declared. Plain C sees the macros and stdint/stdbool only.
 */
#ifndef NCCLSIM_NCCL_DEVICE_UTILITY_H_
#define NCCLSIM_NCCL_DEVICE_UTILITY_H_

#ifndef NCCL_CHECK_CUDACC
#if defined(__CUDACC__)
#define NCCL_CHECK_CUDACC 1
#else
#define NCCL_CHECK_CUDACC 0
#endif
#endif

#if NCCL_CHECK_CUDACC
#define NCCL_DEVICE_INLINE __device__ __forceinline__
#define NCCL_HOST_DEVICE_INLINE __host__ __device__ __forceinline__
#else
#ifndef __host__
#define __host__
#endif
#define NCCL_DEVICE_INLINE
#if defined(__cplusplus)
#define NCCL_HOST_DEVICE_INLINE inline __attribute__((always_inline))
#else /* C: one definition per translation unit */
#define NCCL_HOST_DEVICE_INLINE static inline __attribute__((always_inline))
#endif
#endif

#if defined(__cpp_if_constexpr) && __cpp_if_constexpr >= 201606
#ifndef NCCL_IF_CONSTEXPR
#define NCCL_IF_CONSTEXPR constexpr
#endif
#else
#ifndef NCCL_IF_CONSTEXPR
#define NCCL_IF_CONSTEXPR
#endif
#endif

/* nvcc's unroll pragmas. The host compiler that ncclsim's driver runs has
 * no such pragma (GCC's needs a count), and unrolling changes nothing a
 * program can observe: they expand to nothing. */
#define DO_PRAGMA(x) _Pragma(#x)
#define NVCC_PRAGMA_UNROLL(trip_count)
#define NVCC_PRAGMA_UNROLL_AUTO
#define NVCC_PRAGMA_UNROLL_DISABLED

#if __cplusplus
#define NCCL_EXTERN_C extern "C"
#else
#define NCCL_EXTERN_C
#endif
#define NCCL_IR_EXTERN_C

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#if NCCL_CHECK_CUDACC
#include <cuda/atomic>
#endif

#if __cplusplus
namespace nccl {
namespace utility {

#if NCCL_CHECK_CUDACC
/* Polls of NCCL's waits check the communicator's abort flag every 10000
 * steps; true when it is set. ncclsim's own waits end at NCCLSIM_TIMEOUT
 * instead, so this is only for code that calls it itself. */
static NCCL_DEVICE_INLINE bool testAbort(uint32_t *abortFlag, uint32_t &steps) {
  if (++steps < 10000) return false;
  steps = 0;
  return abortFlag != nullptr && cuda::atomic_ref<uint32_t>{*abortFlag}.load(cuda::memory_order_relaxed) != 0;
}
#endif

/* For unevaluated contexts only (decltype), as std::declval. */
template <typename T>
T &&declval() noexcept;

template <typename>
struct always_false {
  static constexpr bool value = false;
};

template <typename T, T v>
struct ValueAsType {
  static constexpr T value = v;
};

#if NCCL_CHECK_CUDACC
/* Zero, in a way the compiler cannot see through. */
template <typename = void>
NCCL_DEVICE_INLINE int opaqueZero() {
  static volatile int zero = 0;
  return zero;
}
#endif

template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z divUp(X x, Y y) {
  return (x + y - 1) / y;
}
template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z roundUp(X x, Y y) {
  return divUp<X, Y, Z>(x, y) * y;
}
template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z roundDown(X x, Y y) {
  return (x / y) * y;
}
/* a: a power of two. */
template <typename X, typename Y, typename Z = decltype(X() + Y())>
NCCL_HOST_DEVICE_INLINE constexpr Z alignUp(X x, Y a) {
  return (Z(x) + Z(a) - 1) & ~(Z(a) - 1);
}
template <typename T>
NCCL_HOST_DEVICE_INLINE T *alignUp(T *x, size_t a) {
  static_assert(sizeof(T) == 1, "Only single byte types allowed.");
  return reinterpret_cast<T *>((reinterpret_cast<uintptr_t>(x) + a - 1) & ~uintptr_t(a - 1));
}
template <typename T>
NCCL_HOST_DEVICE_INLINE void *alignUp(void const *x, size_t a) {
  return reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(x) + a - 1) & ~uintptr_t(a - 1));
}
template <typename X, typename Y, typename Z = decltype(X() + int())>
NCCL_HOST_DEVICE_INLINE constexpr Z alignDown(X x, Y a) {
  return Z(x) & ~(Z(a) - 1);
}
template <typename T>
NCCL_HOST_DEVICE_INLINE T *alignDown(T *x, size_t a) {
  static_assert(sizeof(T) == 1, "Only single byte types allowed.");
  return reinterpret_cast<T *>(reinterpret_cast<uintptr_t>(x) & ~uintptr_t(a - 1));
}
template <typename T>
NCCL_HOST_DEVICE_INLINE void *alignDown(void const *x, size_t a) {
  return reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(x) & ~uintptr_t(a - 1));
}

/* base with delta4G added to its upper 32 bits (NCCL's flat LSA layout). */
template <typename T>
NCCL_HOST_DEVICE_INLINE T add4G(T base, int delta4G) {
  static_assert(sizeof(T) == 8, "add4G takes 64-bit values");
  uint64_t v;
  __builtin_memcpy(&v, &base, 8);
  v += uint64_t(uint32_t(delta4G)) << 32;
  __builtin_memcpy(&base, &v, 8);
  return base;
}

template <typename Int>
NCCL_HOST_DEVICE_INLINE constexpr bool isPow2(Int x) {
  return (x & (x - 1)) == 0;
}

/* a <= b in modular arithmetic of nBits bits: b is at most half the ring
 * ahead of a. Counters that wrap compare so. */
template <typename Uint>
NCCL_HOST_DEVICE_INLINE bool rollingLessEq(Uint a, Uint b, int nBits = 8 * sizeof(Uint)) {
  static_assert(Uint(0) < Uint(-1), "Uint must be unsigned.");
  Uint mask = Uint(-1) >> (8 * sizeof(Uint) - nBits);
  return Uint((b - a) & mask) <= Uint(mask >> 1);
}
template <typename Uint>
NCCL_HOST_DEVICE_INLINE bool rollingLessThan(Uint a, Uint b, int nBits = 8 * sizeof(Uint)) {
  return !rollingLessEq(b, a, nBits);
}

/* Reciprocals for the fast divisions below: idivFast32(x, y, idivRcp32(y))
 * == x / y. A power of two gets 2^32/y (0 for 1, which the divisions take
 * as "divide by one"). */
NCCL_HOST_DEVICE_INLINE constexpr uint32_t idivRcp32(uint32_t x) {
  return uint32_t(-1) / x + (isPow2(x) ? 1 : 0);
}
NCCL_HOST_DEVICE_INLINE constexpr uint64_t idivRcp64(uint64_t x) {
  return uint64_t(-1) / x + (isPow2(x) ? 1 : 0);
}
NCCL_HOST_DEVICE_INLINE uint32_t mul32hi(uint32_t a, uint32_t b) {
  return uint32_t((uint64_t(a) * b) >> 32);
}
NCCL_HOST_DEVICE_INLINE uint64_t mul64hi(uint64_t a, uint64_t b) {
  return uint64_t(((unsigned __int128)a * b) >> 64);
}
/* The reciprocal of x*y from those of x and y. */
NCCL_HOST_DEVICE_INLINE uint32_t imulRcp32(uint32_t x, uint32_t xrcp, uint32_t y, uint32_t yrcp) {
  if (xrcp == 0) return yrcp;
  if (yrcp == 0) return xrcp;
  return idivRcp32(x * y);
}
NCCL_HOST_DEVICE_INLINE uint64_t imulRcp64(uint64_t x, uint64_t xrcp, uint64_t y, uint64_t yrcp) {
  if (xrcp == 0) return yrcp;
  if (yrcp == 0) return xrcp;
  return idivRcp64(x * y);
}
/* Quotient and remainder of x / y, given yrcp = idivRcp(y): an estimate
 * from the reciprocal, corrected by one where it falls short. */
NCCL_HOST_DEVICE_INLINE void idivmodFast32(uint32_t *quo, uint32_t *rem, uint32_t x, uint32_t y, uint32_t yrcp) {
  uint32_t q = yrcp == 0 ? x : mul32hi(x, yrcp);
  uint32_t r = x - y * q;
  while (r >= y) q += 1, r -= y;
  *quo = q;
  *rem = r;
}
NCCL_HOST_DEVICE_INLINE void idivmodFast64(uint64_t *quo, uint64_t *rem, uint64_t x, uint64_t y, uint64_t yrcp) {
  uint64_t q = yrcp == 0 ? x : mul64hi(x, yrcp);
  uint64_t r = x - y * q;
  while (r >= y) q += 1, r -= y;
  *quo = q;
  *rem = r;
}
NCCL_HOST_DEVICE_INLINE uint32_t idivFast32(uint32_t x, uint32_t y, uint32_t yrcp) {
  uint32_t q, r;
  idivmodFast32(&q, &r, x, y, yrcp);
  return q;
}
NCCL_HOST_DEVICE_INLINE uint32_t idivFast64(uint64_t x, uint64_t y, uint64_t yrcp) {
  uint64_t q, r;
  idivmodFast64(&q, &r, x, y, yrcp);
  return uint32_t(q);
}
NCCL_HOST_DEVICE_INLINE uint32_t imodFast32(uint32_t x, uint32_t y, uint32_t yrcp) {
  uint32_t q, r;
  idivmodFast32(&q, &r, x, y, yrcp);
  return r;
}
NCCL_HOST_DEVICE_INLINE uint64_t imodFast64(uint64_t x, uint64_t y, uint64_t yrcp) {
  uint64_t q, r;
  idivmodFast64(&q, &r, x, y, yrcp);
  return r;
}

#if NCCL_CHECK_CUDACC
/* idivRcp64(x) for 1 <= x <= 64 (0 gives 1's). */
NCCL_DEVICE_INLINE uint64_t idivRcp64_upto64(int x) {
  return idivRcp64(uint64_t(x < 1 ? 1 : x));
}
NCCL_DEVICE_INLINE uint32_t idivRcp32_upto64(int x) {
  return uint32_t(idivRcp64_upto64(x) >> 32);
}

/* The acquire half and the release half of a memory order. */
NCCL_DEVICE_INLINE cuda::memory_order acquireOrderOf(cuda::memory_order ord) {
  if (ord == cuda::memory_order_release) return cuda::memory_order_relaxed;
  if (ord == cuda::memory_order_acq_rel) return cuda::memory_order_acquire;
  return ord;
}
NCCL_DEVICE_INLINE cuda::memory_order releaseOrderOf(cuda::memory_order ord) {
  if (ord == cuda::memory_order_acquire) return cuda::memory_order_relaxed;
  if (ord == cuda::memory_order_acq_rel) return cuda::memory_order_release;
  return ord;
}

/* An atomic load or store at a scope chosen at run time. Every scope is
 * the machine's on ncclsim: the CPU's atomics serve them all. */
template <typename T>
NCCL_DEVICE_INLINE T atomicLoad(T *ptr, cuda::memory_order ord, cuda::thread_scope scope) {
  (void)scope;
  return cuda::atomic_ref<T, cuda::thread_scope_system>{*ptr}.load(ord);
}
template <typename T>
NCCL_DEVICE_INLINE void atomicStore(T *ptr, T val, cuda::memory_order ord, cuda::thread_scope scope) {
  (void)scope;
  cuda::atomic_ref<T, cuda::thread_scope_system>{*ptr}.store(val, ord);
}

/* The calling thread's lane in its warp, and the mask of the lanes below. */
NCCL_DEVICE_INLINE int lane() {
  return __ncclsim_self ? int(__ncclsim_self->lane) : 0;
}
NCCL_DEVICE_INLINE unsigned int lanemask_lt() {
  return (1u << lane()) - 1u;
}

/* A load of memory that does not change while the kernel runs. */
template <typename T>
NCCL_DEVICE_INLINE T loadConst(T const *p) {
  return *p;
}
#endif

/* ---- Optional<T>: a T constructed or not, from Present<Arg...>'s
 * arguments or from Absent. */
template <int... vals>
struct IntSeq {};

template <int n, int m, int... i>
struct IntSeqUpTo : IntSeqUpTo<n, m + 1, i..., m> {};
template <int n, int... i>
struct IntSeqUpTo<n, n, i...> {
  using Type = IntSeq<i...>;
};

template <typename... Arg>
struct Present;
template <>
struct Present<> {};
template <typename H, typename... T>
struct Present<H, T...> {
  H h;
  Present<T...> t;

  NCCL_HOST_DEVICE_INLINE Present(H h_, Present<T...> t_) : h(static_cast<H>(h_)), t(t_) {}
  NCCL_HOST_DEVICE_INLINE Present(Present const &that) : h(static_cast<H>(that.h)), t(that.t) {}

  NCCL_HOST_DEVICE_INLINE H get(IntSeq<0>) { return static_cast<H>(h); }
  template <int i>
  NCCL_HOST_DEVICE_INLINE decltype(auto) get(IntSeq<i>) {
    return t.get(IntSeq<i - 1>{});
  }
};

NCCL_HOST_DEVICE_INLINE Present<> present() { return Present<>{}; }
template <typename H, typename... T>
NCCL_HOST_DEVICE_INLINE Present<H &&, T &&...> present(H &&h, T &&...t) {
  return Present<H &&, T &&...>{static_cast<H &&>(h), present(static_cast<T &&>(t)...)};
}

struct Absent {};

template <typename T>
struct Optional {
  bool present;
  union {
    T thing;
  };

  NCCL_HOST_DEVICE_INLINE constexpr Optional() : present(false) {}
  NCCL_HOST_DEVICE_INLINE constexpr Optional(Absent) : present(false) {}
  template <typename... Arg, int... i>
  NCCL_HOST_DEVICE_INLINE Optional(Present<Arg...> args, IntSeq<i...>) : present(true), thing{args.get(IntSeq<i>())...} {}
  template <typename... Arg>
  NCCL_HOST_DEVICE_INLINE Optional(Present<Arg...> args) : Optional(args, typename IntSeqUpTo<sizeof...(Arg), 0>::Type()) {}
  NCCL_HOST_DEVICE_INLINE ~Optional() {
    if (present) thing.~T();
  }
};

} /* namespace utility */
} /* namespace nccl */
#endif /* __cplusplus */
#endif /* NCCLSIM_NCCL_DEVICE_UTILITY_H_ */
