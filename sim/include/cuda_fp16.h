/*
 * cuda_fp16.h — ncclsim's host-side float16 (__half), for programs that
 * include CUDA's header to fill or check NCCL buffers on the host.
 *
 * As in CUDA 13: C sees only the storage types __half_raw and __half2_raw;
 * C++ also gets __half and __half2 with their conversions and operators,
 * and <cstring> and <utility> (programs written against CUDA rely on
 * them arriving this way). The conversions round as CUDA's do, bit for
 * bit: they are ncclsim_fp.h's, the ones ncclsim's reductions use. Device
 * intrinsics (__hfma, the packed half2 arithmetic, math functions) are
 * absent; docs/ncclsim.md lists what is here.
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
static inline __half2 __half2half2(const __half a) { return __half2(a, a); }
static inline __half2 __lowhigh2highlow(const __half2 a) { return __half2(a.y, a.x); }

static inline int __half2int_rz(const __half h) {
  return (int)ncclsim_fp_to_int(__half2float(h), INT32_MIN, INT32_MAX, 0);
}
static inline unsigned int __half2uint_rz(const __half h) {
  return (unsigned int)ncclsim_fp_to_uint(__half2float(h), UINT32_MAX, 0);
}
static inline long long int __half2ll_rz(const __half h) {
  return ncclsim_fp_to_int(__half2float(h), INT64_MIN, INT64_MAX, INT64_MIN);
}
static inline unsigned long long int __half2ull_rz(const __half h) {
  return ncclsim_fp_to_uint(__half2float(h), UINT64_MAX, UINT64_C(0x8000000000000000));
}
static inline short int __half2short_rz(const __half h) {
  return (short)ncclsim_fp_to_int(__half2float(h), INT16_MIN, INT16_MAX, 0);
}
static inline unsigned short int __half2ushort_rz(const __half h) {
  return (unsigned short)ncclsim_fp_to_uint(__half2float(h), UINT16_MAX, 0);
}
static inline signed char __half2char_rz(const __half h) {
  return (signed char)ncclsim_fp_to_int(__half2float(h), INT8_MIN, INT8_MAX, 0);
}
static inline unsigned char __half2uchar_rz(const __half h) {
  return (unsigned char)ncclsim_fp_to_uint(__half2float(h), UINT8_MAX, 0);
}
static inline __half __int2half_rn(const int i) { return ncclsim_half_bits(ncclsim_fp_to_f16(i, NCCLSIM_FP_RN)); }
static inline __half __uint2half_rn(const unsigned int i) { return ncclsim_half_bits(ncclsim_fp_to_f16(i, NCCLSIM_FP_RN)); }
static inline __half __short2half_rn(const short int i) { return ncclsim_half_bits(ncclsim_fp_to_f16(i, NCCLSIM_FP_RN)); }
static inline __half __ushort2half_rn(const unsigned short int i) {
  return ncclsim_half_bits(ncclsim_fp_to_f16(i, NCCLSIM_FP_RN));
}
static inline __half __ll2half_rn(const long long int i) {
  return ncclsim_half_bits(ncclsim_fp_to_f16((double)i, NCCLSIM_FP_RN));
}
static inline __half __ull2half_rn(const unsigned long long int i) {
  return ncclsim_half_bits(ncclsim_fp_to_f16((double)i, NCCLSIM_FP_RN));
}

static inline short int __half_as_short(const __half h) { return (short)ncclsim_half_raw(h); }
static inline unsigned short int __half_as_ushort(const __half h) { return ncclsim_half_raw(h); }
static inline __half __short_as_half(const short int i) { return ncclsim_half_bits((unsigned short)i); }
static inline __half __ushort_as_half(const unsigned short int i) { return ncclsim_half_bits(i); }

/* ---- comparisons and arithmetic: through float, which is exact for
 * float16 operands and rounds + - * / once back to float16 (float's 24
 * bits are more than twice float16's 11, so the double rounding is
 * harmless), as CUDA's host code does. ---- */

static inline bool __hisnan(const __half a) { return (ncclsim_half_raw(a) & 0x7fffU) > 0x7c00U; }
static inline int __hisinf(const __half a) {
  unsigned short b = ncclsim_half_raw(a);
  return b == 0x7c00U ? 1 : b == 0xfc00U ? -1 : 0;
}
static inline bool __heq(const __half a, const __half b) { return __half2float(a) == __half2float(b); }
static inline bool __hne(const __half a, const __half b) { return !__hisnan(a) && !__hisnan(b) && !__heq(a, b); }
static inline bool __hlt(const __half a, const __half b) { return __half2float(a) < __half2float(b); }
static inline bool __hle(const __half a, const __half b) { return __half2float(a) <= __half2float(b); }
static inline bool __hgt(const __half a, const __half b) { return __half2float(a) > __half2float(b); }
static inline bool __hge(const __half a, const __half b) { return __half2float(a) >= __half2float(b); }
static inline __half __hadd(const __half a, const __half b) { return __float2half(__half2float(a) + __half2float(b)); }
static inline __half __hsub(const __half a, const __half b) { return __float2half(__half2float(a) - __half2float(b)); }
static inline __half __hmul(const __half a, const __half b) { return __float2half(__half2float(a) * __half2float(b)); }
static inline __half __hdiv(const __half a, const __half b) { return __float2half(__half2float(a) / __half2float(b)); }
static inline __half __hneg(const __half a) { return ncclsim_half_bits((unsigned short)(ncclsim_half_raw(a) ^ 0x8000U)); }
static inline __half __habs(const __half a) { return ncclsim_half_bits((unsigned short)(ncclsim_half_raw(a) & 0x7fffU)); }
/* NaN loses to a number; two NaNs give the canonical NaN. */
static inline __half __hmax(const __half a, const __half b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_half_bits(0x7fffU);
  return __hisnan(b) || __hge(a, b) ? a : b;
}
static inline __half __hmin(const __half a, const __half b) {
  if (__hisnan(a) && __hisnan(b)) return ncclsim_half_bits(0x7fffU);
  return __hisnan(b) || __hle(a, b) ? a : b;
}

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
inline bool operator==(const __half &lh, const __half &rh) { return __heq(lh, rh); }
inline bool operator!=(const __half &lh, const __half &rh) { return __hne(lh, rh); }
inline bool operator>(const __half &lh, const __half &rh) { return __hgt(lh, rh); }
inline bool operator<(const __half &lh, const __half &rh) { return __hlt(lh, rh); }
inline bool operator>=(const __half &lh, const __half &rh) { return __hge(lh, rh); }
inline bool operator<=(const __half &lh, const __half &rh) { return __hle(lh, rh); }
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
