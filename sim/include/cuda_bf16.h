/*
 * cuda_bf16.h — ncclsim's bfloat16 (__nv_bfloat16), the counterpart of
 * cuda_fp16.h (which it includes, as CUDA's does): C sees the storage
 * types; C++ the classes and all of CUDA 13's __nv_bfloat16 and
 * __nv_bfloat162 functions but the warp and memory ones (shuffles, __ldg
 * and kin, atomics), as cuda_fp16.h has for __half: conversions,
 * comparisons, arithmetic, packed forms, math, rounding to integers.
 * Where CUDA has host code, results equal it bit for bit (ncclsim_fp.h,
 * tests/fp-vs-cuda), but for __hmax_nan and __hmin_nan of two zeros, which
 * follow CUDA's documentation; the device-only functions give the result
 * CUDA documents, rounded once.
 */
#ifndef __CUDA_BF16_H__
#define __CUDA_BF16_H__
#define NCCLSIM_CUDA_BF16_H_ 1

#include <cuda_fp16.h>

typedef struct NCCLSIM_ALIGN(2) {
  unsigned short x;
} __nv_bfloat16_raw;

typedef struct NCCLSIM_ALIGN(4) {
  unsigned short x;
  unsigned short y;
} __nv_bfloat162_raw;

#if defined(__cplusplus)

#define __CUDA_BF16_TYPES_EXIST__ /* as CUDA, for code that tests it */
struct __nv_bfloat16;
static inline __nv_bfloat16 __float2bfloat16(const float a);
static inline __nv_bfloat16 __double2bfloat16(const double a);
static inline float __bfloat162float(const __nv_bfloat16 a);
static inline int __bfloat162int_rz(const __nv_bfloat16 h);
static inline unsigned int __bfloat162uint_rz(const __nv_bfloat16 h);
static inline long long int __bfloat162ll_rz(const __nv_bfloat16 h);
static inline unsigned long long int __bfloat162ull_rz(const __nv_bfloat16 h);
static inline short int __bfloat162short_rz(const __nv_bfloat16 h);
static inline unsigned short int __bfloat162ushort_rz(const __nv_bfloat16 h);
static inline signed char __bfloat162char_rz(const __nv_bfloat16 h);
static inline unsigned char __bfloat162uchar_rz(const __nv_bfloat16 h);

struct NCCLSIM_ALIGN(2) __nv_bfloat16 {
 protected:
  unsigned short __x; /* the bits, under CUDA's name: some host code reads it through a subclass */

 public:
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw &hr) : __x(hr.x) {}
  __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) {
    __x = hr.x;
    return *this;
  }
  operator __nv_bfloat16_raw() const {
    __nv_bfloat16_raw r;
    r.x = __x;
    return r;
  }
  /* Through float, exactly, then rounded once to bfloat16. */
  explicit __nv_bfloat16(const __half f) : __x(ncclsim_fp_to_bf16(static_cast<float>(f), NCCLSIM_FP_RN)) {}
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
  __nv_bfloat16(const float f) : __x(ncclsim_fp_to_bf16(f, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const double f) : __x(ncclsim_fp_to_bf16(f, NCCLSIM_FP_RN)) {}
  operator float() const { return ncclsim_fp_bf16_to_float(__x); }
  __nv_bfloat16 &operator=(const float f) { return *this = __nv_bfloat16(f); }
  __nv_bfloat16 &operator=(const double f) { return *this = __nv_bfloat16(f); }
  /* Integers: exact in double, so rounding once there is rounding once. */
  __nv_bfloat16(const short val) : __x(ncclsim_fp_to_bf16(val, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const unsigned short val) : __x(ncclsim_fp_to_bf16(val, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const int val) : __x(ncclsim_fp_to_bf16(val, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const unsigned int val) : __x(ncclsim_fp_to_bf16(val, NCCLSIM_FP_RN)) {}
  /* Past 2^53 a 64-bit integer goes through a double rounded to odd: a
   * plain (double) would round twice (2^60 + 2^52 + 1 would become a tie). */
  __nv_bfloat16(const long val) : __x(ncclsim_fp_to_bf16(ncclsim_fp_i64_odd(val), NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const unsigned long val) : __x(ncclsim_fp_to_bf16(ncclsim_fp_u64_odd(val), NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const long long val) : __x(ncclsim_fp_to_bf16(ncclsim_fp_i64_odd(val), NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const unsigned long long val) : __x(ncclsim_fp_to_bf16(ncclsim_fp_u64_odd(val), NCCLSIM_FP_RN)) {}
  operator signed char() const { return __bfloat162char_rz(*this); }
  operator unsigned char() const { return __bfloat162uchar_rz(*this); }
  operator char() const { return (char)__bfloat162char_rz(*this); }
  operator short() const { return __bfloat162short_rz(*this); }
  operator unsigned short() const { return __bfloat162ushort_rz(*this); }
  operator int() const { return __bfloat162int_rz(*this); }
  operator unsigned int() const { return __bfloat162uint_rz(*this); }
  operator long() const { return (long)__bfloat162ll_rz(*this); }
  operator unsigned long() const { return (unsigned long)__bfloat162ull_rz(*this); }
  operator long long() const { return __bfloat162ll_rz(*this); }
  operator unsigned long long() const { return __bfloat162ull_rz(*this); }
  __nv_bfloat16 &operator=(const short val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(const unsigned short val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(const int val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(const unsigned int val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(const long long val) { return *this = __nv_bfloat16(val); }
  __nv_bfloat16 &operator=(const unsigned long long val) { return *this = __nv_bfloat16(val); }
  constexpr operator bool() const { return (__x & 0x7FFFU) != 0U; }
#endif
};

struct NCCLSIM_ALIGN(4) __nv_bfloat162 {
  __nv_bfloat16 x;
  __nv_bfloat16 y;
  __nv_bfloat162() = default;
  __nv_bfloat162(const __nv_bfloat162 &) = default;
  __nv_bfloat162(__nv_bfloat162 &&) = default;
  __nv_bfloat162 &operator=(const __nv_bfloat162 &) = default;
  __nv_bfloat162 &operator=(__nv_bfloat162 &&) = default;
  constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
  __nv_bfloat162(const __nv_bfloat162_raw &h2r) : x(__nv_bfloat16_raw{h2r.x}), y(__nv_bfloat16_raw{h2r.y}) {}
  __nv_bfloat162 &operator=(const __nv_bfloat162_raw &h2r) { return *this = __nv_bfloat162(h2r); }
  operator __nv_bfloat162_raw() const {
    __nv_bfloat162_raw r;
    r.x = static_cast<__nv_bfloat16_raw>(x).x;
    r.y = static_cast<__nv_bfloat16_raw>(y).x;
    return r;
  }
};

/* ---- conversions ---- */

static inline __nv_bfloat16 ncclsim_bf16_bits(unsigned short b) {
  __nv_bfloat16_raw r;
  r.x = b;
  return __nv_bfloat16(r);
}
static inline unsigned short ncclsim_bf16_raw(const __nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }

static inline __nv_bfloat16 __double2bfloat16(const double a) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(a, NCCLSIM_FP_RN)); }
static inline __nv_bfloat16 __float2bfloat16(const float a) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(a, NCCLSIM_FP_RN)); }
static inline __nv_bfloat16 __float2bfloat16_rn(const float a) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(a, NCCLSIM_FP_RN)); }
static inline __nv_bfloat16 __float2bfloat16_rz(const float a) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(a, NCCLSIM_FP_RZ)); }
static inline __nv_bfloat16 __float2bfloat16_rd(const float a) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(a, NCCLSIM_FP_RD)); }
static inline __nv_bfloat16 __float2bfloat16_ru(const float a) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(a, NCCLSIM_FP_RU)); }
static inline float __bfloat162float(const __nv_bfloat16 a) { return ncclsim_fp_bf16_to_float(ncclsim_bf16_raw(a)); }
static inline __nv_bfloat162 __float2bfloat162_rn(const float a) { return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(a)); }
static inline __nv_bfloat162 __floats2bfloat162_rn(const float a, const float b) { return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(b)); }
static inline __nv_bfloat162 __float22bfloat162_rn(const float2 a) { return __floats2bfloat162_rn(a.x, a.y); }
static inline float2 __bfloat1622float2(const __nv_bfloat162 a) { return make_float2(__bfloat162float(a.x), __bfloat162float(a.y)); }
static inline float __low2float(const __nv_bfloat162 a) { return __bfloat162float(a.x); }
static inline float __high2float(const __nv_bfloat162 a) { return __bfloat162float(a.y); }
static inline __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 a) { return a.x; }
static inline __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 a) { return a.y; }
static inline __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 make_bfloat162(const __nv_bfloat16 x, const __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
static inline __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat162 __lowhigh2highlow(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.x); }
static inline __nv_bfloat162 __low2bfloat162(const __nv_bfloat162 a) { return __nv_bfloat162(a.x, a.x); }
static inline __nv_bfloat162 __high2bfloat162(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.y); }
static inline __nv_bfloat162 __lows2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }

/* To integers, as cuda_fp16.h's: rounded in the suffix's direction (only
 * _rz has host code in CUDA), then clamped; NaN gives 0, or the lowest
 * value for 64 bits. */
#define NCCLSIM_BF162INT(name, T, mode, lo, hi, nan) \
  static inline T name(const __nv_bfloat16 h) { return (T)ncclsim_fp_to_int(ncclsim_fp_rint(__bfloat162float(h), mode), lo, hi, nan); }
#define NCCLSIM_BF162UINT(name, T, mode, hi, nan) \
  static inline T name(const __nv_bfloat16 h) { return (T)ncclsim_fp_to_uint(ncclsim_fp_rint(__bfloat162float(h), mode), hi, nan); }
#define NCCLSIM_BF162INTS(to, T, lo, hi, nan)                   \
  NCCLSIM_BF162INT(__bfloat162##to##_rn, T, NCCLSIM_FP_RN, lo, hi, nan) \
  NCCLSIM_BF162INT(__bfloat162##to##_rz, T, NCCLSIM_FP_RZ, lo, hi, nan) \
  NCCLSIM_BF162INT(__bfloat162##to##_rd, T, NCCLSIM_FP_RD, lo, hi, nan) \
  NCCLSIM_BF162INT(__bfloat162##to##_ru, T, NCCLSIM_FP_RU, lo, hi, nan)
#define NCCLSIM_BF162UINTS(to, T, hi, nan)                   \
  NCCLSIM_BF162UINT(__bfloat162##to##_rn, T, NCCLSIM_FP_RN, hi, nan) \
  NCCLSIM_BF162UINT(__bfloat162##to##_rz, T, NCCLSIM_FP_RZ, hi, nan) \
  NCCLSIM_BF162UINT(__bfloat162##to##_rd, T, NCCLSIM_FP_RD, hi, nan) \
  NCCLSIM_BF162UINT(__bfloat162##to##_ru, T, NCCLSIM_FP_RU, hi, nan)
NCCLSIM_BF162INTS(int, int, INT32_MIN, INT32_MAX, 0)
NCCLSIM_BF162UINTS(uint, unsigned int, UINT32_MAX, 0)
NCCLSIM_BF162INTS(ll, long long int, INT64_MIN, INT64_MAX, INT64_MIN)
NCCLSIM_BF162UINTS(ull, unsigned long long int, UINT64_MAX, UINT64_C(0x8000000000000000))
NCCLSIM_BF162INTS(short, short int, INT16_MIN, INT16_MAX, 0)
NCCLSIM_BF162UINTS(ushort, unsigned short int, UINT16_MAX, 0)
NCCLSIM_BF162INT(__bfloat162char_rz, signed char, NCCLSIM_FP_RZ, INT8_MIN, INT8_MAX, 0)
NCCLSIM_BF162UINT(__bfloat162uchar_rz, unsigned char, NCCLSIM_FP_RZ, UINT8_MAX, 0)
#undef NCCLSIM_BF162INT
#undef NCCLSIM_BF162UINT
#undef NCCLSIM_BF162INTS
#undef NCCLSIM_BF162UINTS

/* From integers, rounded once in the suffix's direction (only _rn has
 * host code in CUDA): 32 bits and less are exact in double, 64 bits are
 * made a double rounded to odd (a plain (double) would round twice). */
#define NCCLSIM_INTS2BF16(from, T, exact)                                                                                        \
  static inline __nv_bfloat16 __##from##2bfloat16_rn(const T i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(exact(i), NCCLSIM_FP_RN)); } \
  static inline __nv_bfloat16 __##from##2bfloat16_rz(const T i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(exact(i), NCCLSIM_FP_RZ)); } \
  static inline __nv_bfloat16 __##from##2bfloat16_rd(const T i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(exact(i), NCCLSIM_FP_RD)); } \
  static inline __nv_bfloat16 __##from##2bfloat16_ru(const T i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(exact(i), NCCLSIM_FP_RU)); }
#define NCCLSIM_AS_DOUBLE(i) ((double)(i))
NCCLSIM_INTS2BF16(int, int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2BF16(uint, unsigned int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2BF16(short, short int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2BF16(ushort, unsigned short int, NCCLSIM_AS_DOUBLE)
NCCLSIM_INTS2BF16(ll, long long int, ncclsim_fp_i64_odd)
NCCLSIM_INTS2BF16(ull, unsigned long long int, ncclsim_fp_u64_odd)
#undef NCCLSIM_INTS2BF16
#undef NCCLSIM_AS_DOUBLE

static inline short int __bfloat16_as_short(const __nv_bfloat16 h) { return (short)ncclsim_bf16_raw(h); }
static inline unsigned short int __bfloat16_as_ushort(const __nv_bfloat16 h) { return ncclsim_bf16_raw(h); }
static inline __nv_bfloat16 __short_as_bfloat16(const short int i) { return ncclsim_bf16_bits((unsigned short)i); }
static inline __nv_bfloat16 __ushort_as_bfloat16(const unsigned short int i) { return ncclsim_bf16_bits(i); }

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

/* ---- comparisons and arithmetic: through float, as in cuda_fp16.h
 * (float's 24 bits are more than twice bfloat16's 8), as CUDA's host code
 * does; NaN results are the canonical 0x7fff. ---- */

static inline bool __hisnan(const __nv_bfloat16 a) { return (ncclsim_bf16_raw(a) & 0x7fffU) > 0x7f80U; }
static inline int __hisinf(const __nv_bfloat16 a) {
  unsigned short b = ncclsim_bf16_raw(a);
  return b == 0x7f80U ? 1 : b == 0xff80U ? -1 : 0;
}
/* Ordered comparisons are false where either side is NaN; the unordered
 * ones (u) true. */
static inline bool __heq(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) == __bfloat162float(b); }
static inline bool __hne(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hisnan(a) && !__hisnan(b) && !__heq(a, b); }
static inline bool __hlt(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) < __bfloat162float(b); }
static inline bool __hle(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) <= __bfloat162float(b); }
static inline bool __hgt(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) > __bfloat162float(b); }
static inline bool __hge(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) >= __bfloat162float(b); }
static inline bool __hequ(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hne(a, b); }
static inline bool __hneu(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__heq(a, b); }
static inline bool __hltu(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hge(a, b); }
static inline bool __hleu(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hgt(a, b); }
static inline bool __hgtu(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hle(a, b); }
static inline bool __hgeu(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hlt(a, b); }

static inline __nv_bfloat16 __hadd(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) + __bfloat162float(b)); }
static inline __nv_bfloat16 __hsub(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) - __bfloat162float(b)); }
static inline __nv_bfloat16 __hmul(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) * __bfloat162float(b)); }
/* Rounded once, as CUDA documents and its host code does (the GPU's
 * approximate division is not reproduced). */
static inline __nv_bfloat16 __hdiv(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) / __bfloat162float(b)); }
/* _rn: the same operations, which the GPU would not fuse into an fma. */
static inline __nv_bfloat16 __hadd_rn(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __hadd(a, b); }
static inline __nv_bfloat16 __hsub_rn(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __hsub(a, b); }
static inline __nv_bfloat16 __hmul_rn(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __hmul(a, b); }
/* A NaN input gives the canonical NaN, as CUDA's host code (the GPU
 * leaves NaN payloads unspecified). */
static inline __nv_bfloat16 __hneg(const __nv_bfloat16 a) {
  return ncclsim_bf16_bits(__hisnan(a) ? 0x7fffU : (unsigned short)(ncclsim_bf16_raw(a) ^ 0x8000U));
}
static inline __nv_bfloat16 __habs(const __nv_bfloat16 a) {
  return ncclsim_bf16_bits(__hisnan(a) ? 0x7fffU : (unsigned short)(ncclsim_bf16_raw(a) & 0x7fffU));
}
/* NaN loses to a number; two NaNs give the canonical NaN; +0 > -0. */
static inline __nv_bfloat16 __hmax(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_bf16_bits(0x7fffU);
  if (__heq(a, b)) return ncclsim_bf16_raw(a) > ncclsim_bf16_raw(b) ? b : a;
  return __hisnan(b) || __hgt(a, b) ? a : b;
}
static inline __nv_bfloat16 __hmin(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_bf16_bits(0x7fffU);
  if (__heq(a, b)) return ncclsim_bf16_raw(a) > ncclsim_bf16_raw(b) ? a : b;
  return __hisnan(b) || __hlt(a, b) ? a : b;
}
/* _nan: a NaN input makes the result the canonical NaN; +0 > -0 as CUDA
 * documents and the GPU's max.NaN does (CUDA 13's host code returns the
 * first of two zeros). */
static inline __nv_bfloat16 __hmax_nan(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  return __hisnan(a) || __hisnan(b) ? ncclsim_bf16_bits(0x7fffU) : __hmax(a, b);
}
static inline __nv_bfloat16 __hmin_nan(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  return __hisnan(a) || __hisnan(b) ? ncclsim_bf16_bits(0x7fffU) : __hmin(a, b);
}
/* _sat: clamped to [+0, 1], NaN to +0. */
static inline __nv_bfloat16 ncclsim_bf16_sat(const __nv_bfloat16 a) {
  return __hmin(__hmax(a, ncclsim_bf16_bits(0)), ncclsim_bf16_bits(0x3f80U));
}
static inline __nv_bfloat16 __hadd_sat(const __nv_bfloat16 a, const __nv_bfloat16 b) { return ncclsim_bf16_sat(__hadd(a, b)); }
static inline __nv_bfloat16 __hsub_sat(const __nv_bfloat16 a, const __nv_bfloat16 b) { return ncclsim_bf16_sat(__hsub(a, b)); }
static inline __nv_bfloat16 __hmul_sat(const __nv_bfloat16 a, const __nv_bfloat16 b) { return ncclsim_bf16_sat(__hmul(a, b)); }
/* Device-only in CUDA (no host code to follow): a*b + c rounded once,
 * as the GPU's fma.rn.bf16 (see ncclsim_fp_fma_odd). _sat as above, as
 * CUDA's max/min sequence after the fma; _relu clamps what is below +0
 * (-0 too) to +0 and makes NaN canonical, as cuda_fp16.h's. */
static inline __nv_bfloat16 __hfma(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) {
  return ncclsim_bf16_bits(
      ncclsim_fp_to_bf16(ncclsim_fp_fma_odd(__bfloat162float(a), __bfloat162float(b), __bfloat162float(c)), NCCLSIM_FP_RN));
}
static inline __nv_bfloat16 __hfma_sat(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) { return ncclsim_bf16_sat(__hfma(a, b, c)); }
static inline __nv_bfloat16 __hfma_relu(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) {
  return __hmax_nan(__hfma(a, b, c), ncclsim_bf16_bits(0));
}

/* ---- bfloat162: each lane on its own, as the functions above; x is the
 * low lane. Comparisons give 1.0 or 0.0 a lane, _mask 0xffff or 0 a lane,
 * and the __hb forms whether both lanes hold. ---- */

#define NCCLSIM_BF162_UNARY(name, f) \
  static inline __nv_bfloat162 name(const __nv_bfloat162 a) { return __nv_bfloat162(f(a.x), f(a.y)); }
#define NCCLSIM_BF162_BINARY(name, f) \
  static inline __nv_bfloat162 name(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(f(a.x, b.x), f(a.y, b.y)); }
#define NCCLSIM_BF162_TERNARY(name, f)                                       \
  static inline __nv_bfloat162 name(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) { \
    return __nv_bfloat162(f(a.x, b.x, c.x), f(a.y, b.y, c.y));                       \
  }
#define NCCLSIM_BF162_COMPARE(cmp)                                                                        \
  static inline __nv_bfloat162 cmp##2(const __nv_bfloat162 a, const __nv_bfloat162 b) {                                       \
    return __nv_bfloat162(ncclsim_bf16_bits(cmp(a.x, b.x) ? 0x3f80U : 0), ncclsim_bf16_bits(cmp(a.y, b.y) ? 0x3f80U : 0)); \
  }                                                                                                       \
  static inline unsigned int cmp##2_mask(const __nv_bfloat162 a, const __nv_bfloat162 b) {                             \
    return (cmp(a.x, b.x) ? 0xffffU : 0U) | (cmp(a.y, b.y) ? 0xffff0000U : 0U);                          \
  }
#define NCCLSIM_BF162_BOTH(name, cmp) \
  static inline bool name(const __nv_bfloat162 a, const __nv_bfloat162 b) { return cmp(a.x, b.x) && cmp(a.y, b.y); }

NCCLSIM_BF162_COMPARE(__heq)
NCCLSIM_BF162_COMPARE(__hne)
NCCLSIM_BF162_COMPARE(__hle)
NCCLSIM_BF162_COMPARE(__hge)
NCCLSIM_BF162_COMPARE(__hlt)
NCCLSIM_BF162_COMPARE(__hgt)
NCCLSIM_BF162_COMPARE(__hequ)
NCCLSIM_BF162_COMPARE(__hneu)
NCCLSIM_BF162_COMPARE(__hleu)
NCCLSIM_BF162_COMPARE(__hgeu)
NCCLSIM_BF162_COMPARE(__hltu)
NCCLSIM_BF162_COMPARE(__hgtu)
NCCLSIM_BF162_BOTH(__hbeq2, __heq)
NCCLSIM_BF162_BOTH(__hbne2, __hne)
NCCLSIM_BF162_BOTH(__hble2, __hle)
NCCLSIM_BF162_BOTH(__hbge2, __hge)
NCCLSIM_BF162_BOTH(__hblt2, __hlt)
NCCLSIM_BF162_BOTH(__hbgt2, __hgt)
NCCLSIM_BF162_BOTH(__hbequ2, __hequ)
NCCLSIM_BF162_BOTH(__hbneu2, __hneu)
NCCLSIM_BF162_BOTH(__hbleu2, __hleu)
NCCLSIM_BF162_BOTH(__hbgeu2, __hgeu)
NCCLSIM_BF162_BOTH(__hbltu2, __hltu)
NCCLSIM_BF162_BOTH(__hbgtu2, __hgtu)
static inline __nv_bfloat162 __hisnan2(const __nv_bfloat162 a) {
  return __nv_bfloat162(ncclsim_bf16_bits(__hisnan(a.x) ? 0x3f80U : 0), ncclsim_bf16_bits(__hisnan(a.y) ? 0x3f80U : 0));
}
NCCLSIM_BF162_BINARY(__hadd2, __hadd)
NCCLSIM_BF162_BINARY(__hsub2, __hsub)
NCCLSIM_BF162_BINARY(__hmul2, __hmul)
NCCLSIM_BF162_BINARY(__h2div, __hdiv)
NCCLSIM_BF162_BINARY(__hadd2_rn, __hadd_rn)
NCCLSIM_BF162_BINARY(__hsub2_rn, __hsub_rn)
NCCLSIM_BF162_BINARY(__hmul2_rn, __hmul_rn)
NCCLSIM_BF162_BINARY(__hadd2_sat, __hadd_sat)
NCCLSIM_BF162_BINARY(__hsub2_sat, __hsub_sat)
NCCLSIM_BF162_BINARY(__hmul2_sat, __hmul_sat)
NCCLSIM_BF162_BINARY(__hmax2, __hmax)
NCCLSIM_BF162_BINARY(__hmin2, __hmin)
NCCLSIM_BF162_BINARY(__hmax2_nan, __hmax_nan)
NCCLSIM_BF162_BINARY(__hmin2_nan, __hmin_nan)
NCCLSIM_BF162_UNARY(__hneg2, __hneg)
NCCLSIM_BF162_UNARY(__habs2, __habs)
NCCLSIM_BF162_TERNARY(__hfma2, __hfma)
NCCLSIM_BF162_TERNARY(__hfma2_sat, __hfma_sat)
NCCLSIM_BF162_TERNARY(__hfma2_relu, __hfma_relu)
/* (a.x + i a.y) * (b.x + i b.y) + (c.x + i c.y), in four roundings, as
 * CUDA's. */
static inline __nv_bfloat162 __hcmadd(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
  return __nv_bfloat162(__hfma(__hneg(a.y), b.y, __hfma(a.x, b.x, c.x)), __hfma(a.y, b.x, __hfma(a.x, b.y, c.y)));
}

/* ---- math (device-only in CUDA): the exact result rounded once to
 * nearest even, computed in double as cuda_fp16.h's. The GPU computes
 * most of these with approximate float instructions (ex2.approx,
 * lg2.approx, rcp.approx, ...) then rounds to bfloat16, which can differ
 * in the last place; htanh_approx is htanh here. ---- */

static inline __nv_bfloat16 ncclsim_bf16_rn(double d) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(d, NCCLSIM_FP_RN)); }
static inline double ncclsim_bf16_d(const __nv_bfloat16 a) { return __bfloat162float(a); }
static inline __nv_bfloat16 hsqrt(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_sqrt(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hrsqrt(const __nv_bfloat16 a) { return ncclsim_bf16_rn(1.0 / __builtin_sqrt(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hrcp(const __nv_bfloat16 a) { return ncclsim_bf16_rn(1.0 / ncclsim_bf16_d(a)); }
static inline __nv_bfloat16 hlog(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_log(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hlog2(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_log2(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hlog10(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_log10(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hexp(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_exp(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hexp2(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_exp2(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hexp10(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_pow(10.0, ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hsin(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_sin(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 hcos(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_cos(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 htanh(const __nv_bfloat16 a) { return ncclsim_bf16_rn(__builtin_tanh(ncclsim_bf16_d(a))); }
static inline __nv_bfloat16 htanh_approx(const __nv_bfloat16 a) { return htanh(a); }
/* To an integral value (exact in bfloat16), as cvt.r?i.bf16.bf16. */
static inline __nv_bfloat16 htrunc(const __nv_bfloat16 a) { return ncclsim_bf16_rn(ncclsim_fp_rint(__bfloat162float(a), NCCLSIM_FP_RZ)); }
static inline __nv_bfloat16 hceil(const __nv_bfloat16 a) { return ncclsim_bf16_rn(ncclsim_fp_rint(__bfloat162float(a), NCCLSIM_FP_RU)); }
static inline __nv_bfloat16 hfloor(const __nv_bfloat16 a) { return ncclsim_bf16_rn(ncclsim_fp_rint(__bfloat162float(a), NCCLSIM_FP_RD)); }
static inline __nv_bfloat16 hrint(const __nv_bfloat16 a) { return ncclsim_bf16_rn(ncclsim_fp_rint(__bfloat162float(a), NCCLSIM_FP_RN)); }
NCCLSIM_BF162_UNARY(h2sqrt, hsqrt)
NCCLSIM_BF162_UNARY(h2rsqrt, hrsqrt)
NCCLSIM_BF162_UNARY(h2rcp, hrcp)
NCCLSIM_BF162_UNARY(h2log, hlog)
NCCLSIM_BF162_UNARY(h2log2, hlog2)
NCCLSIM_BF162_UNARY(h2log10, hlog10)
NCCLSIM_BF162_UNARY(h2exp, hexp)
NCCLSIM_BF162_UNARY(h2exp2, hexp2)
NCCLSIM_BF162_UNARY(h2exp10, hexp10)
NCCLSIM_BF162_UNARY(h2sin, hsin)
NCCLSIM_BF162_UNARY(h2cos, hcos)
NCCLSIM_BF162_UNARY(h2tanh, htanh)
NCCLSIM_BF162_UNARY(h2tanh_approx, htanh_approx)
NCCLSIM_BF162_UNARY(h2trunc, htrunc)
NCCLSIM_BF162_UNARY(h2ceil, hceil)
NCCLSIM_BF162_UNARY(h2floor, hfloor)
NCCLSIM_BF162_UNARY(h2rint, hrint)
#undef NCCLSIM_BF162_UNARY
#undef NCCLSIM_BF162_BINARY
#undef NCCLSIM_BF162_TERNARY
#undef NCCLSIM_BF162_COMPARE
#undef NCCLSIM_BF162_BOTH

#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
inline __nv_bfloat16 operator+(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hadd(lh, rh); }
inline __nv_bfloat16 operator-(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hsub(lh, rh); }
inline __nv_bfloat16 operator*(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hmul(lh, rh); }
inline __nv_bfloat16 operator/(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hdiv(lh, rh); }
inline __nv_bfloat16 &operator+=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hadd(lh, rh); }
inline __nv_bfloat16 &operator-=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hsub(lh, rh); }
inline __nv_bfloat16 &operator*=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hmul(lh, rh); }
inline __nv_bfloat16 &operator/=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return lh = __hdiv(lh, rh); }
inline __nv_bfloat16 &operator++(__nv_bfloat16 &h) { return h = __hadd(h, ncclsim_bf16_bits(0x3f80U)); }
inline __nv_bfloat16 &operator--(__nv_bfloat16 &h) { return h = __hsub(h, ncclsim_bf16_bits(0x3f80U)); }
inline __nv_bfloat16 operator++(__nv_bfloat16 &h, const int) {
  __nv_bfloat16 old = h;
  ++h;
  return old;
}
inline __nv_bfloat16 operator--(__nv_bfloat16 &h, const int) {
  __nv_bfloat16 old = h;
  --h;
  return old;
}
inline __nv_bfloat16 operator+(const __nv_bfloat16 &h) { return h; }
inline __nv_bfloat16 operator-(const __nv_bfloat16 &h) { return __hneg(h); }
/* != is unordered, as for float: NaN != NaN. */
inline bool operator==(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __heq(lh, rh); }
inline bool operator!=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hneu(lh, rh); }
inline bool operator>(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hgt(lh, rh); }
inline bool operator<(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hlt(lh, rh); }
inline bool operator>=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hge(lh, rh); }
inline bool operator<=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hle(lh, rh); }

inline __nv_bfloat162 operator+(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hadd2(lh, rh); }
inline __nv_bfloat162 operator-(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hsub2(lh, rh); }
inline __nv_bfloat162 operator*(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hmul2(lh, rh); }
inline __nv_bfloat162 operator/(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __h2div(lh, rh); }
inline __nv_bfloat162 &operator+=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __hadd2(lh, rh); }
inline __nv_bfloat162 &operator-=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __hsub2(lh, rh); }
inline __nv_bfloat162 &operator*=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __hmul2(lh, rh); }
inline __nv_bfloat162 &operator/=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return lh = __h2div(lh, rh); }
inline __nv_bfloat162 &operator++(__nv_bfloat162 &h) { return h = __hadd2(h, __bfloat162bfloat162(ncclsim_bf16_bits(0x3f80U))); }
inline __nv_bfloat162 &operator--(__nv_bfloat162 &h) { return h = __hsub2(h, __bfloat162bfloat162(ncclsim_bf16_bits(0x3f80U))); }
inline __nv_bfloat162 operator++(__nv_bfloat162 &h, const int) {
  __nv_bfloat162 old = h;
  ++h;
  return old;
}
inline __nv_bfloat162 operator--(__nv_bfloat162 &h, const int) {
  __nv_bfloat162 old = h;
  --h;
  return old;
}
inline __nv_bfloat162 operator+(const __nv_bfloat162 &h) { return h; }
inline __nv_bfloat162 operator-(const __nv_bfloat162 &h) { return __hneg2(h); }
/* Both lanes must hold; != is both lanes unordered-unequal. */
inline bool operator==(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbeq2(lh, rh); }
inline bool operator!=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbneu2(lh, rh); }
inline bool operator>(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbgt2(lh, rh); }
inline bool operator<(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hblt2(lh, rh); }
inline bool operator>=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbge2(lh, rh); }
inline bool operator<=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hble2(lh, rh); }
#endif


/* Declared in cuda_fp16.h; needs the complete bfloat16 type. */
inline __half::__half(const __nv_bfloat16 f) : __x(ncclsim_fp_to_f16(static_cast<float>(f), NCCLSIM_FP_RN)) {}

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#endif /* __cplusplus */
#endif /* __CUDA_BF16_H__ */
