/*
 * cuda_fp16.h — ncclsim's float16 (__half), for host programs that fill or
 * check NCCL buffers and for CUDA device code, which on ncclsim is host
 * C++ compiled against these headers.
 *
 * As in CUDA 13: C sees only the storage types __half_raw and __half2_raw;
 * C++ also gets __half and __half2 with their conversions and operators,
 * and <cstring> and <utility> (programs written against CUDA rely on
 * them arriving this way). C++ has all of CUDA 13's __half and __half2
 * functions but for the warp and memory ones (shuffles, __ldg and kin,
 * atomics): conversions, comparisons, arithmetic (_rn, _sat, _nan, fma
 * and its _sat and _relu), packed half2 forms, math (hsqrt .. htanh) and
 * rounding to integers. Where CUDA has host code, results equal it bit
 * for bit, NaN encodings included (tests/fp-vs-cuda); the device-only
 * functions give the result CUDA documents, rounded once (fma, math, the
 * directed conversions). One implementation of the roundings, ncclsim_fp.h,
 * serves these headers and ncclsim's reductions. docs/ncclsim.md lists
 * what is here and where the GPU may differ.
 */
#ifndef __CUDA_FP16_H__
#define __CUDA_FP16_H__
#define NCCLSIM_CUDA_FP16_H_ 1

#include <vector_types.h>
#include <vector_functions.h>
#include <ncclsim_fp.h>

#if defined(__cplusplus)
#include <cstring>
#include <utility>
#define NCCLSIM_ALIGN(n) alignas(n)
#else
#define NCCLSIM_ALIGN(n) __attribute__((aligned(n)))
#endif

typedef struct NCCLSIM_ALIGN(2) {
  unsigned short x;
} __half_raw;

typedef struct NCCLSIM_ALIGN(4) {
  unsigned short x;
  unsigned short y;
} __half2_raw;

#if defined(__cplusplus)

#define __CUDA_FP16_TYPES_EXIST__ /* as CUDA, for code that tests it */
struct __nv_bfloat16;
struct __half;
static inline __half __float2half(const float a);
static inline __half __double2half(const double a);
static inline float __half2float(const __half a);
static inline int __half2int_rz(const __half h);
static inline unsigned int __half2uint_rz(const __half h);
static inline long long int __half2ll_rz(const __half h);
static inline unsigned long long int __half2ull_rz(const __half h);
static inline short int __half2short_rz(const __half h);
static inline unsigned short int __half2ushort_rz(const __half h);
static inline signed char __half2char_rz(const __half h);
static inline unsigned char __half2uchar_rz(const __half h);

struct NCCLSIM_ALIGN(2) __half {
 protected:
  unsigned short __x; /* the bits, under CUDA's name: some host code reads it through a subclass */

 public:
  __half() = default;
  constexpr __half(const __half_raw &hr) : __x(hr.x) {}
  __half &operator=(const __half_raw &hr) {
    __x = hr.x;
    return *this;
  }
  operator __half_raw() const {
    __half_raw r;
    r.x = __x;
    return r;
  }
  explicit __half(const __nv_bfloat16 f); /* defined in cuda_bf16.h, as CUDA does */
#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
  __half(const float f) : __x(ncclsim_fp_to_f16(f, NCCLSIM_FP_RN)) {}
  __half(const double f) : __x(ncclsim_fp_to_f16(f, NCCLSIM_FP_RN)) {}
  operator float() const { return ncclsim_fp_f16_to_float(__x); }
  __half &operator=(const float f) { return *this = __half(f); }
  __half &operator=(const double f) { return *this = __half(f); }
  /* Integers: exact in double, so rounding once there is rounding once. */
  __half(const short val) : __x(ncclsim_fp_to_f16(val, NCCLSIM_FP_RN)) {}
  __half(const unsigned short val) : __x(ncclsim_fp_to_f16(val, NCCLSIM_FP_RN)) {}
  __half(const int val) : __x(ncclsim_fp_to_f16(val, NCCLSIM_FP_RN)) {}
  __half(const unsigned int val) : __x(ncclsim_fp_to_f16(val, NCCLSIM_FP_RN)) {}
  /* Past 2^53 a 64-bit integer rounds in double first; harmless, since
   * anything past 65520 is already infinity in float16. */
  __half(const long val) : __x(ncclsim_fp_to_f16((double)val, NCCLSIM_FP_RN)) {}
  __half(const unsigned long val) : __x(ncclsim_fp_to_f16((double)val, NCCLSIM_FP_RN)) {}
  __half(const long long val) : __x(ncclsim_fp_to_f16((double)val, NCCLSIM_FP_RN)) {}
  __half(const unsigned long long val) : __x(ncclsim_fp_to_f16((double)val, NCCLSIM_FP_RN)) {}
  operator signed char() const { return __half2char_rz(*this); }
  operator unsigned char() const { return __half2uchar_rz(*this); }
  operator char() const { return (char)__half2char_rz(*this); }
  operator short() const { return __half2short_rz(*this); }
  operator unsigned short() const { return __half2ushort_rz(*this); }
  operator int() const { return __half2int_rz(*this); }
  operator unsigned int() const { return __half2uint_rz(*this); }
  operator long() const { return (long)__half2ll_rz(*this); }
  operator unsigned long() const { return (unsigned long)__half2ull_rz(*this); }
  operator long long() const { return __half2ll_rz(*this); }
  operator unsigned long long() const { return __half2ull_rz(*this); }
  __half &operator=(const short val) { return *this = __half(val); }
  __half &operator=(const unsigned short val) { return *this = __half(val); }
  __half &operator=(const int val) { return *this = __half(val); }
  __half &operator=(const unsigned int val) { return *this = __half(val); }
  __half &operator=(const long long val) { return *this = __half(val); }
  __half &operator=(const unsigned long long val) { return *this = __half(val); }
  constexpr operator bool() const { return (__x & 0x7FFFU) != 0U; }
#endif
};

struct NCCLSIM_ALIGN(4) __half2 {
  __half x;
  __half y;
  __half2() = default;
  __half2(const __half2 &) = default;
  __half2(__half2 &&) = default;
  __half2 &operator=(const __half2 &) = default;
  __half2 &operator=(__half2 &&) = default;
  constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
  __half2(const __half2_raw &h2r) : x(__half_raw{h2r.x}), y(__half_raw{h2r.y}) {}
  __half2 &operator=(const __half2_raw &h2r) { return *this = __half2(h2r); }
  operator __half2_raw() const {
    __half2_raw r;
    r.x = static_cast<__half_raw>(x).x;
    r.y = static_cast<__half_raw>(y).x;
    return r;
  }
};

/* ---- conversions ---- */

static inline __half ncclsim_half_bits(unsigned short b) {
  __half_raw r;
  r.x = b;
  return __half(r);
}
static inline unsigned short ncclsim_half_raw(const __half h) { return static_cast<__half_raw>(h).x; }

static inline __half __double2half(const double a) { return ncclsim_half_bits(ncclsim_fp_to_f16(a, NCCLSIM_FP_RN)); }
static inline __half __float2half(const float a) { return ncclsim_half_bits(ncclsim_fp_to_f16(a, NCCLSIM_FP_RN)); }
static inline __half __float2half_rn(const float a) { return ncclsim_half_bits(ncclsim_fp_to_f16(a, NCCLSIM_FP_RN)); }
static inline __half __float2half_rz(const float a) { return ncclsim_half_bits(ncclsim_fp_to_f16(a, NCCLSIM_FP_RZ)); }
static inline __half __float2half_rd(const float a) { return ncclsim_half_bits(ncclsim_fp_to_f16(a, NCCLSIM_FP_RD)); }
static inline __half __float2half_ru(const float a) { return ncclsim_half_bits(ncclsim_fp_to_f16(a, NCCLSIM_FP_RU)); }
static inline float __half2float(const __half a) { return ncclsim_fp_f16_to_float(ncclsim_half_raw(a)); }
static inline __half2 __float2half2_rn(const float a) { return __half2(__float2half(a), __float2half(a)); }
static inline __half2 __floats2half2_rn(const float a, const float b) { return __half2(__float2half(a), __float2half(b)); }
static inline __half2 __float22half2_rn(const float2 a) { return __floats2half2_rn(a.x, a.y); }
static inline float2 __half22float2(const __half2 a) { return make_float2(__half2float(a.x), __half2float(a.y)); }
static inline float __low2float(const __half2 a) { return __half2float(a.x); }
static inline float __high2float(const __half2 a) { return __half2float(a.y); }
static inline __half __low2half(const __half2 a) { return a.x; }
static inline __half __high2half(const __half2 a) { return a.y; }
static inline __half2 __halves2half2(const __half a, const __half b) { return __half2(a, b); }
static inline __half2 make_half2(const __half x, const __half y) { return __half2(x, y); }
static inline __half2 __half2half2(const __half a) { return __half2(a, a); }
static inline __half2 __lowhigh2highlow(const __half2 a) { return __half2(a.y, a.x); }
static inline __half2 __low2half2(const __half2 a) { return __half2(a.x, a.x); }
static inline __half2 __high2half2(const __half2 a) { return __half2(a.y, a.y); }
static inline __half2 __lows2half2(const __half2 a, const __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(const __half2 a, const __half2 b) { return __half2(a.y, b.y); }

/* To integers: rounded in the suffix's direction (only _rz has host code
 * in CUDA; the others are the GPU's cvt.rni/rmi/rpi), then past the
 * type's range its nearest bound; NaN gives 0, or the lowest value for 64
 * bits, as CUDA's host code and the GPU's cvt do. */
#define NCCLSIM_HALF2INT(name, T, mode, lo, hi, nan) \
  static inline T name(const __half h) { return (T)ncclsim_fp_to_int(ncclsim_fp_rint(__half2float(h), mode), lo, hi, nan); }
#define NCCLSIM_HALF2UINT(name, T, mode, hi, nan) \
  static inline T name(const __half h) { return (T)ncclsim_fp_to_uint(ncclsim_fp_rint(__half2float(h), mode), hi, nan); }
#define NCCLSIM_HALF2INTS(to, T, lo, hi, nan)              \
  NCCLSIM_HALF2INT(__half2##to##_rn, T, NCCLSIM_FP_RN, lo, hi, nan) \
  NCCLSIM_HALF2INT(__half2##to##_rz, T, NCCLSIM_FP_RZ, lo, hi, nan) \
  NCCLSIM_HALF2INT(__half2##to##_rd, T, NCCLSIM_FP_RD, lo, hi, nan) \
  NCCLSIM_HALF2INT(__half2##to##_ru, T, NCCLSIM_FP_RU, lo, hi, nan)
#define NCCLSIM_HALF2UINTS(to, T, hi, nan)              \
  NCCLSIM_HALF2UINT(__half2##to##_rn, T, NCCLSIM_FP_RN, hi, nan) \
  NCCLSIM_HALF2UINT(__half2##to##_rz, T, NCCLSIM_FP_RZ, hi, nan) \
  NCCLSIM_HALF2UINT(__half2##to##_rd, T, NCCLSIM_FP_RD, hi, nan) \
  NCCLSIM_HALF2UINT(__half2##to##_ru, T, NCCLSIM_FP_RU, hi, nan)
NCCLSIM_HALF2INTS(int, int, INT32_MIN, INT32_MAX, 0)
NCCLSIM_HALF2UINTS(uint, unsigned int, UINT32_MAX, 0)
NCCLSIM_HALF2INTS(ll, long long int, INT64_MIN, INT64_MAX, INT64_MIN)
NCCLSIM_HALF2UINTS(ull, unsigned long long int, UINT64_MAX, UINT64_C(0x8000000000000000))
NCCLSIM_HALF2INTS(short, short int, INT16_MIN, INT16_MAX, 0)
NCCLSIM_HALF2UINTS(ushort, unsigned short int, UINT16_MAX, 0)
NCCLSIM_HALF2INT(__half2char_rz, signed char, NCCLSIM_FP_RZ, INT8_MIN, INT8_MAX, 0)
NCCLSIM_HALF2UINT(__half2uchar_rz, unsigned char, NCCLSIM_FP_RZ, UINT8_MAX, 0)
#undef NCCLSIM_HALF2INT
#undef NCCLSIM_HALF2UINT
#undef NCCLSIM_HALF2INTS
#undef NCCLSIM_HALF2UINTS

/* From integers, rounded once in the suffix's direction: 32 bits and less
 * are exact in double, 64 bits are made a double rounded to odd. */
#define NCCLSIM_INTS2HALF(from, T, exact)                                                                  \
  static inline __half __##from##2half_rn(const T i) { return ncclsim_half_bits(ncclsim_fp_to_f16(exact(i), NCCLSIM_FP_RN)); } \
  static inline __half __##from##2half_rz(const T i) { return ncclsim_half_bits(ncclsim_fp_to_f16(exact(i), NCCLSIM_FP_RZ)); } \
  static inline __half __##from##2half_rd(const T i) { return ncclsim_half_bits(ncclsim_fp_to_f16(exact(i), NCCLSIM_FP_RD)); } \
  static inline __half __##from##2half_ru(const T i) { return ncclsim_half_bits(ncclsim_fp_to_f16(exact(i), NCCLSIM_FP_RU)); }
#define NCCLSIM_AS_DOUBLE(i) ((double)(i))
NCCLSIM_INTS2HALF(int, int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2HALF(uint, unsigned int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2HALF(short, short int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2HALF(ushort, unsigned short int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2HALF(ll, long long int, ncclsim_fp_i64_odd)
NCCLSIM_INTS2HALF(ull, unsigned long long int, ncclsim_fp_u64_odd)
#undef NCCLSIM_INTS2HALF
#undef NCCLSIM_AS_DOUBLE

static inline short int __half_as_short(const __half h) { return (short)ncclsim_half_raw(h); }
static inline unsigned short int __half_as_ushort(const __half h) { return ncclsim_half_raw(h); }
static inline __half __short_as_half(const short int i) { return ncclsim_half_bits((unsigned short)i); }
static inline __half __ushort_as_half(const unsigned short int i) { return ncclsim_half_bits(i); }

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

/* ---- comparisons and arithmetic: through float, which is exact for
 * float16 operands and rounds + - * / once back to float16 (float's 24
 * bits are more than twice float16's 11, so the double rounding is
 * harmless), as CUDA's host code does; NaN results are the canonical
 * 0x7fff. ---- */

static inline bool __hisnan(const __half a) { return (ncclsim_half_raw(a) & 0x7fffU) > 0x7c00U; }
static inline int __hisinf(const __half a) {
  unsigned short b = ncclsim_half_raw(a);
  return b == 0x7c00U ? 1 : b == 0xfc00U ? -1 : 0;
}
/* Ordered comparisons are false where either side is NaN; the unordered
 * ones (u) true. */
static inline bool __heq(const __half a, const __half b) { return __half2float(a) == __half2float(b); }
static inline bool __hne(const __half a, const __half b) { return !__hisnan(a) && !__hisnan(b) && !__heq(a, b); }
static inline bool __hlt(const __half a, const __half b) { return __half2float(a) < __half2float(b); }
static inline bool __hle(const __half a, const __half b) { return __half2float(a) <= __half2float(b); }
static inline bool __hgt(const __half a, const __half b) { return __half2float(a) > __half2float(b); }
static inline bool __hge(const __half a, const __half b) { return __half2float(a) >= __half2float(b); }
static inline bool __hequ(const __half a, const __half b) { return !__hne(a, b); }
static inline bool __hneu(const __half a, const __half b) { return !__heq(a, b); }
static inline bool __hltu(const __half a, const __half b) { return !__hge(a, b); }
static inline bool __hleu(const __half a, const __half b) { return !__hgt(a, b); }
static inline bool __hgtu(const __half a, const __half b) { return !__hle(a, b); }
static inline bool __hgeu(const __half a, const __half b) { return !__hlt(a, b); }

static inline __half __hadd(const __half a, const __half b) { return __float2half(__half2float(a) + __half2float(b)); }
static inline __half __hsub(const __half a, const __half b) { return __float2half(__half2float(a) - __half2float(b)); }
static inline __half __hmul(const __half a, const __half b) { return __float2half(__half2float(a) * __half2float(b)); }
/* Rounded once, as CUDA documents and its host code does (the GPU's
 * reciprocal-based sequence is not reproduced). */
static inline __half __hdiv(const __half a, const __half b) { return __float2half(__half2float(a) / __half2float(b)); }
/* _rn: the same operations, which the GPU would not fuse into an fma. */
static inline __half __hadd_rn(const __half a, const __half b) { return __hadd(a, b); }
static inline __half __hsub_rn(const __half a, const __half b) { return __hsub(a, b); }
static inline __half __hmul_rn(const __half a, const __half b) { return __hmul(a, b); }
/* A NaN input gives the canonical NaN, as CUDA's host code (the GPU
 * leaves NaN payloads unspecified). */
static inline __half __hneg(const __half a) {
  return ncclsim_half_bits(__hisnan(a) ? 0x7fffU : (unsigned short)(ncclsim_half_raw(a) ^ 0x8000U));
}
static inline __half __habs(const __half a) {
  return ncclsim_half_bits(__hisnan(a) ? 0x7fffU : (unsigned short)(ncclsim_half_raw(a) & 0x7fffU));
}
/* NaN loses to a number; two NaNs give the canonical NaN; +0 > -0. */
static inline __half __hmax(const __half a, const __half b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_half_bits(0x7fffU);
  if (__heq(a, b)) return ncclsim_half_raw(a) > ncclsim_half_raw(b) ? b : a;
  return __hisnan(b) || __hgt(a, b) ? a : b;
}
static inline __half __hmin(const __half a, const __half b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_half_bits(0x7fffU);
  if (__heq(a, b)) return ncclsim_half_raw(a) > ncclsim_half_raw(b) ? a : b;
  return __hisnan(b) || __hlt(a, b) ? a : b;
}
/* _nan: a NaN input makes the result the canonical NaN. */
static inline __half __hmax_nan(const __half a, const __half b) {
  return __hisnan(a) || __hisnan(b) ? ncclsim_half_bits(0x7fffU) : __hmax(a, b);
}
static inline __half __hmin_nan(const __half a, const __half b) {
  return __hisnan(a) || __hisnan(b) ? ncclsim_half_bits(0x7fffU) : __hmin(a, b);
}
/* _sat: clamped to [+0, 1], NaN to +0. */
static inline __half ncclsim_half_sat(const __half a) {
  return __hmin(__hmax(a, ncclsim_half_bits(0)), ncclsim_half_bits(0x3c00U));
}
static inline __half __hadd_sat(const __half a, const __half b) { return ncclsim_half_sat(__hadd(a, b)); }
static inline __half __hsub_sat(const __half a, const __half b) { return ncclsim_half_sat(__hsub(a, b)); }
static inline __half __hmul_sat(const __half a, const __half b) { return ncclsim_half_sat(__hmul(a, b)); }
/* Device-only in CUDA (no host code to follow): a*b + c rounded once,
 * as the GPU's fma.rn.f16 (see ncclsim_fp_fma_odd). _sat as above; _relu
 * clamps what is below +0 (-0 too) to +0 and makes NaN canonical, as
 * CUDA's own sequence for GPUs without fma.relu does. */
static inline __half __hfma(const __half a, const __half b, const __half c) {
  return ncclsim_half_bits(
      ncclsim_fp_to_f16(ncclsim_fp_fma_odd(__half2float(a), __half2float(b), __half2float(c)), NCCLSIM_FP_RN));
}
static inline __half __hfma_sat(const __half a, const __half b, const __half c) { return ncclsim_half_sat(__hfma(a, b, c)); }
static inline __half __hfma_relu(const __half a, const __half b, const __half c) {
  return __hmax_nan(__hfma(a, b, c), ncclsim_half_bits(0));
}

/* ---- half2: each lane on its own, as the functions above; x is the low
 * lane. Comparisons give 1.0 or 0.0 a lane, _mask 0xffff or 0 a lane, and
 * the __hb forms whether both lanes hold. ---- */

#define NCCLSIM_HALF2_UNARY(name, f) \
  static inline __half2 name(const __half2 a) { return __half2(f(a.x), f(a.y)); }
#define NCCLSIM_HALF2_BINARY(name, f) \
  static inline __half2 name(const __half2 a, const __half2 b) { return __half2(f(a.x, b.x), f(a.y, b.y)); }
#define NCCLSIM_HALF2_TERNARY(name, f)                                       \
  static inline __half2 name(const __half2 a, const __half2 b, const __half2 c) { \
    return __half2(f(a.x, b.x, c.x), f(a.y, b.y, c.y));                       \
  }
#define NCCLSIM_HALF2_COMPARE(cmp)                                                                        \
  static inline __half2 cmp##2(const __half2 a, const __half2 b) {                                       \
    return __half2(ncclsim_half_bits(cmp(a.x, b.x) ? 0x3c00U : 0), ncclsim_half_bits(cmp(a.y, b.y) ? 0x3c00U : 0)); \
  }                                                                                                       \
  static inline unsigned int cmp##2_mask(const __half2 a, const __half2 b) {                             \
    return (cmp(a.x, b.x) ? 0xffffU : 0U) | (cmp(a.y, b.y) ? 0xffff0000U : 0U);                          \
  }
#define NCCLSIM_HALF2_BOTH(name, cmp) \
  static inline bool name(const __half2 a, const __half2 b) { return cmp(a.x, b.x) && cmp(a.y, b.y); }

NCCLSIM_HALF2_COMPARE(__heq)
NCCLSIM_HALF2_COMPARE(__hne)
NCCLSIM_HALF2_COMPARE(__hle)
NCCLSIM_HALF2_COMPARE(__hge)
NCCLSIM_HALF2_COMPARE(__hlt)
NCCLSIM_HALF2_COMPARE(__hgt)
NCCLSIM_HALF2_COMPARE(__hequ)
NCCLSIM_HALF2_COMPARE(__hneu)
NCCLSIM_HALF2_COMPARE(__hleu)
NCCLSIM_HALF2_COMPARE(__hgeu)
NCCLSIM_HALF2_COMPARE(__hltu)
NCCLSIM_HALF2_COMPARE(__hgtu)
NCCLSIM_HALF2_BOTH(__hbeq2, __heq)
NCCLSIM_HALF2_BOTH(__hbne2, __hne)
NCCLSIM_HALF2_BOTH(__hble2, __hle)
NCCLSIM_HALF2_BOTH(__hbge2, __hge)
NCCLSIM_HALF2_BOTH(__hblt2, __hlt)
NCCLSIM_HALF2_BOTH(__hbgt2, __hgt)
NCCLSIM_HALF2_BOTH(__hbequ2, __hequ)
NCCLSIM_HALF2_BOTH(__hbneu2, __hneu)
NCCLSIM_HALF2_BOTH(__hbleu2, __hleu)
NCCLSIM_HALF2_BOTH(__hbgeu2, __hgeu)
NCCLSIM_HALF2_BOTH(__hbltu2, __hltu)
NCCLSIM_HALF2_BOTH(__hbgtu2, __hgtu)
static inline __half2 __hisnan2(const __half2 a) {
  return __half2(ncclsim_half_bits(__hisnan(a.x) ? 0x3c00U : 0), ncclsim_half_bits(__hisnan(a.y) ? 0x3c00U : 0));
}
NCCLSIM_HALF2_BINARY(__hadd2, __hadd)
NCCLSIM_HALF2_BINARY(__hsub2, __hsub)
NCCLSIM_HALF2_BINARY(__hmul2, __hmul)
NCCLSIM_HALF2_BINARY(__h2div, __hdiv)
NCCLSIM_HALF2_BINARY(__hadd2_rn, __hadd_rn)
NCCLSIM_HALF2_BINARY(__hsub2_rn, __hsub_rn)
NCCLSIM_HALF2_BINARY(__hmul2_rn, __hmul_rn)
NCCLSIM_HALF2_BINARY(__hadd2_sat, __hadd_sat)
NCCLSIM_HALF2_BINARY(__hsub2_sat, __hsub_sat)
NCCLSIM_HALF2_BINARY(__hmul2_sat, __hmul_sat)
NCCLSIM_HALF2_BINARY(__hmax2, __hmax)
NCCLSIM_HALF2_BINARY(__hmin2, __hmin)
NCCLSIM_HALF2_BINARY(__hmax2_nan, __hmax_nan)
NCCLSIM_HALF2_BINARY(__hmin2_nan, __hmin_nan)
NCCLSIM_HALF2_UNARY(__hneg2, __hneg)
NCCLSIM_HALF2_UNARY(__habs2, __habs)
NCCLSIM_HALF2_TERNARY(__hfma2, __hfma)
NCCLSIM_HALF2_TERNARY(__hfma2_sat, __hfma_sat)
NCCLSIM_HALF2_TERNARY(__hfma2_relu, __hfma_relu)
/* (a.x + i a.y) * (b.x + i b.y) + (c.x + i c.y), in four roundings, as
 * CUDA's. */
static inline __half2 __hcmadd(const __half2 a, const __half2 b, const __half2 c) {
  return __half2(__hfma(__hneg(a.y), b.y, __hfma(a.x, b.x, c.x)), __hfma(a.y, b.x, __hfma(a.x, b.y, c.y)));
}

/* ---- math (device-only in CUDA): the exact result rounded once to
 * nearest even, as CUDA documents each. Computed in double, whose error
 * (libm's, under an ulp of double) does not move a float16 rounding. The
 * GPU's own sequences (approximate float functions, then fixed inputs)
 * are not reproduced; htanh_approx is htanh here. ---- */

static inline __half ncclsim_half_rn(double d) { return ncclsim_half_bits(ncclsim_fp_to_f16(d, NCCLSIM_FP_RN)); }
static inline double ncclsim_half_d(const __half a) { return __half2float(a); }
static inline __half hsqrt(const __half a) { return ncclsim_half_rn(__builtin_sqrt(ncclsim_half_d(a))); }
static inline __half hrsqrt(const __half a) { return ncclsim_half_rn(1.0 / __builtin_sqrt(ncclsim_half_d(a))); }
static inline __half hrcp(const __half a) { return ncclsim_half_rn(1.0 / ncclsim_half_d(a)); }
static inline __half hlog(const __half a) { return ncclsim_half_rn(__builtin_log(ncclsim_half_d(a))); }
static inline __half hlog2(const __half a) { return ncclsim_half_rn(__builtin_log2(ncclsim_half_d(a))); }
static inline __half hlog10(const __half a) { return ncclsim_half_rn(__builtin_log10(ncclsim_half_d(a))); }
static inline __half hexp(const __half a) { return ncclsim_half_rn(__builtin_exp(ncclsim_half_d(a))); }
static inline __half hexp2(const __half a) { return ncclsim_half_rn(__builtin_exp2(ncclsim_half_d(a))); }
static inline __half hexp10(const __half a) { return ncclsim_half_rn(__builtin_pow(10.0, ncclsim_half_d(a))); }
static inline __half hsin(const __half a) { return ncclsim_half_rn(__builtin_sin(ncclsim_half_d(a))); }
static inline __half hcos(const __half a) { return ncclsim_half_rn(__builtin_cos(ncclsim_half_d(a))); }
static inline __half htanh(const __half a) { return ncclsim_half_rn(__builtin_tanh(ncclsim_half_d(a))); }
static inline __half htanh_approx(const __half a) { return htanh(a); }
/* To an integral value (exact in float16), as cvt.r?i.f16.f16. */
static inline __half htrunc(const __half a) { return ncclsim_half_rn(ncclsim_fp_rint(__half2float(a), NCCLSIM_FP_RZ)); }
static inline __half hceil(const __half a) { return ncclsim_half_rn(ncclsim_fp_rint(__half2float(a), NCCLSIM_FP_RU)); }
static inline __half hfloor(const __half a) { return ncclsim_half_rn(ncclsim_fp_rint(__half2float(a), NCCLSIM_FP_RD)); }
static inline __half hrint(const __half a) { return ncclsim_half_rn(ncclsim_fp_rint(__half2float(a), NCCLSIM_FP_RN)); }
NCCLSIM_HALF2_UNARY(h2sqrt, hsqrt)
NCCLSIM_HALF2_UNARY(h2rsqrt, hrsqrt)
NCCLSIM_HALF2_UNARY(h2rcp, hrcp)
NCCLSIM_HALF2_UNARY(h2log, hlog)
NCCLSIM_HALF2_UNARY(h2log2, hlog2)
NCCLSIM_HALF2_UNARY(h2log10, hlog10)
NCCLSIM_HALF2_UNARY(h2exp, hexp)
NCCLSIM_HALF2_UNARY(h2exp2, hexp2)
NCCLSIM_HALF2_UNARY(h2exp10, hexp10)
NCCLSIM_HALF2_UNARY(h2sin, hsin)
NCCLSIM_HALF2_UNARY(h2cos, hcos)
NCCLSIM_HALF2_UNARY(h2tanh, htanh)
NCCLSIM_HALF2_UNARY(h2tanh_approx, htanh_approx)
NCCLSIM_HALF2_UNARY(h2trunc, htrunc)
NCCLSIM_HALF2_UNARY(h2ceil, hceil)
NCCLSIM_HALF2_UNARY(h2floor, hfloor)
NCCLSIM_HALF2_UNARY(h2rint, hrint)
#undef NCCLSIM_HALF2_UNARY
#undef NCCLSIM_HALF2_BINARY
#undef NCCLSIM_HALF2_TERNARY
#undef NCCLSIM_HALF2_COMPARE
#undef NCCLSIM_HALF2_BOTH

#if !defined(__CUDA_NO_HALF_OPERATORS__)
inline __half operator+(const __half &lh, const __half &rh) { return __hadd(lh, rh); }
inline __half operator-(const __half &lh, const __half &rh) { return __hsub(lh, rh); }
inline __half operator*(const __half &lh, const __half &rh) { return __hmul(lh, rh); }
inline __half operator/(const __half &lh, const __half &rh) { return __hdiv(lh, rh); }
inline __half &operator+=(__half &lh, const __half &rh) { return lh = __hadd(lh, rh); }
inline __half &operator-=(__half &lh, const __half &rh) { return lh = __hsub(lh, rh); }
inline __half &operator*=(__half &lh, const __half &rh) { return lh = __hmul(lh, rh); }
inline __half &operator/=(__half &lh, const __half &rh) { return lh = __hdiv(lh, rh); }
inline __half &operator++(__half &h) { return h = __hadd(h, ncclsim_half_bits(0x3c00U)); }
inline __half &operator--(__half &h) { return h = __hsub(h, ncclsim_half_bits(0x3c00U)); }
inline __half operator++(__half &h, const int) {
  __half old = h;
  ++h;
  return old;
}
inline __half operator--(__half &h, const int) {
  __half old = h;
  --h;
  return old;
}
inline __half operator+(const __half &h) { return h; }
inline __half operator-(const __half &h) { return __hneg(h); }
/* != is unordered, as for float: NaN != NaN. */
inline bool operator==(const __half &lh, const __half &rh) { return __heq(lh, rh); }
inline bool operator!=(const __half &lh, const __half &rh) { return __hneu(lh, rh); }
inline bool operator>(const __half &lh, const __half &rh) { return __hgt(lh, rh); }
inline bool operator<(const __half &lh, const __half &rh) { return __hlt(lh, rh); }
inline bool operator>=(const __half &lh, const __half &rh) { return __hge(lh, rh); }
inline bool operator<=(const __half &lh, const __half &rh) { return __hle(lh, rh); }

inline __half2 operator+(const __half2 &lh, const __half2 &rh) { return __hadd2(lh, rh); }
inline __half2 operator-(const __half2 &lh, const __half2 &rh) { return __hsub2(lh, rh); }
inline __half2 operator*(const __half2 &lh, const __half2 &rh) { return __hmul2(lh, rh); }
inline __half2 operator/(const __half2 &lh, const __half2 &rh) { return __h2div(lh, rh); }
inline __half2 &operator+=(__half2 &lh, const __half2 &rh) { return lh = __hadd2(lh, rh); }
inline __half2 &operator-=(__half2 &lh, const __half2 &rh) { return lh = __hsub2(lh, rh); }
inline __half2 &operator*=(__half2 &lh, const __half2 &rh) { return lh = __hmul2(lh, rh); }
inline __half2 &operator/=(__half2 &lh, const __half2 &rh) { return lh = __h2div(lh, rh); }
inline __half2 &operator++(__half2 &h) { return h = __hadd2(h, __half2half2(ncclsim_half_bits(0x3c00U))); }
inline __half2 &operator--(__half2 &h) { return h = __hsub2(h, __half2half2(ncclsim_half_bits(0x3c00U))); }
inline __half2 operator++(__half2 &h, const int) {
  __half2 old = h;
  ++h;
  return old;
}
inline __half2 operator--(__half2 &h, const int) {
  __half2 old = h;
  --h;
  return old;
}
inline __half2 operator+(const __half2 &h) { return h; }
inline __half2 operator-(const __half2 &h) { return __hneg2(h); }
/* Both lanes must hold; != is both lanes unordered-unequal. */
inline bool operator==(const __half2 &lh, const __half2 &rh) { return __hbeq2(lh, rh); }
inline bool operator!=(const __half2 &lh, const __half2 &rh) { return __hbneu2(lh, rh); }
inline bool operator>(const __half2 &lh, const __half2 &rh) { return __hbgt2(lh, rh); }
inline bool operator<(const __half2 &lh, const __half2 &rh) { return __hblt2(lh, rh); }
inline bool operator>=(const __half2 &lh, const __half2 &rh) { return __hbge2(lh, rh); }
inline bool operator<=(const __half2 &lh, const __half2 &rh) { return __hble2(lh, rh); }
#endif

#if !defined(CUDA_NO_HALF)
typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;
#endif

#endif /* __cplusplus */
#endif /* __CUDA_FP16_H__ */
