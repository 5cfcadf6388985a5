/*
 * cuda_bf16.h — ncclsim's host-side bfloat16 (__nv_bfloat16), the
 * counterpart of cuda_fp16.h (which it includes, as CUDA's does): C sees
 * the storage types, C++ the classes, conversions and operators, rounding
 * bit for bit as CUDA 13's host code (ncclsim_fp.h).
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
  /* Past 2^53 a 64-bit integer rounds in double first; harmless when
   * rounding to nearest, since double's 53 bits are more than twice
   * bfloat16's 8. */
  __nv_bfloat16(const long val) : __x(ncclsim_fp_to_bf16((double)val, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const unsigned long val) : __x(ncclsim_fp_to_bf16((double)val, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const long long val) : __x(ncclsim_fp_to_bf16((double)val, NCCLSIM_FP_RN)) {}
  __nv_bfloat16(const unsigned long long val) : __x(ncclsim_fp_to_bf16((double)val, NCCLSIM_FP_RN)) {}
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
static inline __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat162 __lowhigh2highlow(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.x); }

static inline int __bfloat162int_rz(const __nv_bfloat16 h) {
  return (int)ncclsim_fp_to_int(__bfloat162float(h), INT32_MIN, INT32_MAX, 0);
}
static inline unsigned int __bfloat162uint_rz(const __nv_bfloat16 h) {
  return (unsigned int)ncclsim_fp_to_uint(__bfloat162float(h), UINT32_MAX, 0);
}
static inline long long int __bfloat162ll_rz(const __nv_bfloat16 h) {
  return ncclsim_fp_to_int(__bfloat162float(h), INT64_MIN, INT64_MAX, INT64_MIN);
}
static inline unsigned long long int __bfloat162ull_rz(const __nv_bfloat16 h) {
  return ncclsim_fp_to_uint(__bfloat162float(h), UINT64_MAX, UINT64_C(0x8000000000000000));
}
static inline short int __bfloat162short_rz(const __nv_bfloat16 h) {
  return (short)ncclsim_fp_to_int(__bfloat162float(h), INT16_MIN, INT16_MAX, 0);
}
static inline unsigned short int __bfloat162ushort_rz(const __nv_bfloat16 h) {
  return (unsigned short)ncclsim_fp_to_uint(__bfloat162float(h), UINT16_MAX, 0);
}
static inline signed char __bfloat162char_rz(const __nv_bfloat16 h) {
  return (signed char)ncclsim_fp_to_int(__bfloat162float(h), INT8_MIN, INT8_MAX, 0);
}
static inline unsigned char __bfloat162uchar_rz(const __nv_bfloat16 h) {
  return (unsigned char)ncclsim_fp_to_uint(__bfloat162float(h), UINT8_MAX, 0);
}
static inline __nv_bfloat16 __int2bfloat16_rn(const int i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(i, NCCLSIM_FP_RN)); }
static inline __nv_bfloat16 __uint2bfloat16_rn(const unsigned int i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(i, NCCLSIM_FP_RN)); }
static inline __nv_bfloat16 __short2bfloat16_rn(const short int i) { return ncclsim_bf16_bits(ncclsim_fp_to_bf16(i, NCCLSIM_FP_RN)); }
static inline __nv_bfloat16 __ushort2bfloat16_rn(const unsigned short int i) {
  return ncclsim_bf16_bits(ncclsim_fp_to_bf16(i, NCCLSIM_FP_RN));
}
static inline __nv_bfloat16 __ll2bfloat16_rn(const long long int i) {
  return ncclsim_bf16_bits(ncclsim_fp_to_bf16((double)i, NCCLSIM_FP_RN));
}
static inline __nv_bfloat16 __ull2bfloat16_rn(const unsigned long long int i) {
  return ncclsim_bf16_bits(ncclsim_fp_to_bf16((double)i, NCCLSIM_FP_RN));
}

static inline short int __bfloat16_as_short(const __nv_bfloat16 h) { return (short)ncclsim_bf16_raw(h); }
static inline unsigned short int __bfloat16_as_ushort(const __nv_bfloat16 h) { return ncclsim_bf16_raw(h); }
static inline __nv_bfloat16 __short_as_bfloat16(const short int i) { return ncclsim_bf16_bits((unsigned short)i); }
static inline __nv_bfloat16 __ushort_as_bfloat16(const unsigned short int i) { return ncclsim_bf16_bits(i); }

/* ---- comparisons and arithmetic: through float, as in cuda_fp16.h
 * (float's 24 bits are more than twice bfloat16's 8). ---- */

static inline bool __hisnan(const __nv_bfloat16 a) { return (ncclsim_bf16_raw(a) & 0x7fffU) > 0x7f80U; }
static inline int __hisinf(const __nv_bfloat16 a) {
  unsigned short b = ncclsim_bf16_raw(a);
  return b == 0x7f80U ? 1 : b == 0xff80U ? -1 : 0;
}
static inline bool __heq(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) == __bfloat162float(b); }
static inline bool __hne(const __nv_bfloat16 a, const __nv_bfloat16 b) { return !__hisnan(a) && !__hisnan(b) && !__heq(a, b); }
static inline bool __hlt(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) < __bfloat162float(b); }
static inline bool __hle(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) <= __bfloat162float(b); }
static inline bool __hgt(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) > __bfloat162float(b); }
static inline bool __hge(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __bfloat162float(a) >= __bfloat162float(b); }
static inline __nv_bfloat16 __hadd(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) + __bfloat162float(b)); }
static inline __nv_bfloat16 __hsub(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) - __bfloat162float(b)); }
static inline __nv_bfloat16 __hmul(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) * __bfloat162float(b)); }
static inline __nv_bfloat16 __hdiv(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) / __bfloat162float(b)); }
static inline __nv_bfloat16 __hneg(const __nv_bfloat16 a) { return ncclsim_bf16_bits((unsigned short)(ncclsim_bf16_raw(a) ^ 0x8000U)); }
static inline __nv_bfloat16 __habs(const __nv_bfloat16 a) { return ncclsim_bf16_bits((unsigned short)(ncclsim_bf16_raw(a) & 0x7fffU)); }
/* NaN loses to a number; two NaNs give the canonical NaN. */
static inline __nv_bfloat16 __hmax(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_bf16_bits(0x7fffU);
  return __hisnan(b) || __hge(a, b) ? a : b;
}
static inline __nv_bfloat16 __hmin(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_bf16_bits(0x7fffU);
  return __hisnan(b) || __hle(a, b) ? a : b;
}

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
inline bool operator==(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __heq(lh, rh); }
inline bool operator!=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hne(lh, rh); }
inline bool operator>(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hgt(lh, rh); }
inline bool operator<(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hlt(lh, rh); }
inline bool operator>=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hge(lh, rh); }
inline bool operator<=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hle(lh, rh); }
#endif


/* Declared in cuda_fp16.h; needs the complete bfloat16 type. */
inline __half::__half(const __nv_bfloat16 f) : __x(ncclsim_fp_to_f16(static_cast<float>(f), NCCLSIM_FP_RN)) {}

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#endif /* __cplusplus */
#endif /* __CUDA_BF16_H__ */
