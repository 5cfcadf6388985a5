/*
 * cuda_fp8.h — ncclsim's host-side float8 (e4m3 and e5m2).
 *
 * As in CUDA 13: C and C++ see the storage types and the __nv_cvt_*
 * conversions; C++ also gets __nv_fp8_e4m3, __nv_fp8_e5m2 and their x2
 * pairs. Conversions round to nearest even and saturate as CUDA's do (the
 * constructors with __NV_SATFINITE), bit for bit: ncclsim_fp.h. The e8m0
 * format, the x4 types and the packed arithmetic are absent.
 */
#ifndef __CUDA_FP8_H__
#define __CUDA_FP8_H__
#define NCCLSIM_CUDA_FP8_H_ 1

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <vector_types.h>

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short int __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;

typedef enum __nv_saturation_t {
  __NV_NOSAT,
  __NV_SATFINITE,
} __nv_saturation_t;

typedef enum __nv_fp8_interpretation_t {
  __NV_E4M3,
  __NV_E5M2,
} __nv_fp8_interpretation_t;

/* Narrowing rounds once, from double (floats, halves and bfloat16 widen to
 * it exactly). */
static inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(const double x, const __nv_saturation_t saturate,
                                                        const __nv_fp8_interpretation_t fp8_interpretation) {
  return ncclsim_fp_to_fp8(x, saturate == __NV_SATFINITE, fp8_interpretation == __NV_E5M2);
}
static inline __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(const double2 x, const __nv_saturation_t saturate,
                                                             const __nv_fp8_interpretation_t fp8_interpretation) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(x.x, saturate, fp8_interpretation) |
                                __nv_cvt_double_to_fp8(x.y, saturate, fp8_interpretation) << 8);
}
static inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(const float x, const __nv_saturation_t saturate,
                                                       const __nv_fp8_interpretation_t fp8_interpretation) {
  return __nv_cvt_double_to_fp8(x, saturate, fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(const float2 x, const __nv_saturation_t saturate,
                                                            const __nv_fp8_interpretation_t fp8_interpretation) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(x.x, saturate, fp8_interpretation) |
                                __nv_cvt_double_to_fp8(x.y, saturate, fp8_interpretation) << 8);
}
static inline __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(const __half_raw x, const __nv_saturation_t saturate,
                                                         const __nv_fp8_interpretation_t fp8_interpretation) {
  return __nv_cvt_double_to_fp8(ncclsim_fp_f16_to_float(x.x), saturate, fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(const __half2_raw x, const __nv_saturation_t saturate,
                                                              const __nv_fp8_interpretation_t fp8_interpretation) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(ncclsim_fp_f16_to_float(x.x), saturate, fp8_interpretation) |
                                __nv_cvt_double_to_fp8(ncclsim_fp_f16_to_float(x.y), saturate, fp8_interpretation)
                                    << 8);
}
static inline __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(const __nv_bfloat16_raw x, const __nv_saturation_t saturate,
                                                             const __nv_fp8_interpretation_t fp8_interpretation) {
  return __nv_cvt_double_to_fp8(ncclsim_fp_bf16_to_float(x.x), saturate, fp8_interpretation);
}
static inline __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(const __nv_bfloat162_raw x,
                                                                  const __nv_saturation_t saturate,
                                                                  const __nv_fp8_interpretation_t fp8_interpretation) {
  return (__nv_fp8x2_storage_t)(__nv_cvt_double_to_fp8(ncclsim_fp_bf16_to_float(x.x), saturate, fp8_interpretation) |
                                __nv_cvt_double_to_fp8(ncclsim_fp_bf16_to_float(x.y), saturate, fp8_interpretation)
                                    << 8);
}
/* Exact (every float8 value is a float16 value); NaN gives 0x7fff. */
static inline __half_raw __nv_cvt_fp8_to_halfraw(const __nv_fp8_storage_t x,
                                                 const __nv_fp8_interpretation_t fp8_interpretation) {
  __half_raw r;
  r.x = ncclsim_fp_fp8_to_f16(x, fp8_interpretation == __NV_E5M2);
  return r;
}
static inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(const __nv_fp8x2_storage_t x,
                                                     const __nv_fp8_interpretation_t fp8_interpretation) {
  __half2_raw r;
  r.x = ncclsim_fp_fp8_to_f16((__nv_fp8_storage_t)(x & 0xffU), fp8_interpretation == __NV_E5M2);
  r.y = ncclsim_fp_fp8_to_f16((__nv_fp8_storage_t)(x >> 8), fp8_interpretation == __NV_E5M2);
  return r;
}

#ifdef __cplusplus

/* The scalar classes differ only in their interpretation: one definition,
 * stamped twice. Constructors saturate (__NV_SATFINITE), as CUDA's do;
 * integer conversions go through __half, truncating toward zero. */
#define NCCLSIM_FP8_CLASS(T, KIND)                                                                              \
  struct NCCLSIM_ALIGN(1) T {                                                                                   \
    __nv_fp8_storage_t __x;                                                                                     \
    T() = default;                                                                                              \
    explicit T(const __half f) : __x(__nv_cvt_halfraw_to_fp8(static_cast<__half_raw>(f), __NV_SATFINITE, KIND)) {} \
    explicit T(const __nv_bfloat16 f)                                                                           \
        : __x(__nv_cvt_bfloat16raw_to_fp8(static_cast<__nv_bfloat16_raw>(f), __NV_SATFINITE, KIND)) {}          \
    explicit T(const float f) : __x(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, KIND)) {}                          \
    explicit T(const double f) : __x(__nv_cvt_double_to_fp8(f, __NV_SATFINITE, KIND)) {}                        \
    explicit T(const unsigned short int val) : T(static_cast<float>(val)) {}                                    \
    explicit T(const unsigned int val) : T(static_cast<float>(val)) {}                                          \
    explicit T(const unsigned long int val) : T(static_cast<float>(val)) {}                                     \
    explicit T(const unsigned long long int val) : T(static_cast<float>(val)) {}                                \
    explicit T(const short int val) : T(static_cast<float>(val)) {}                                             \
    explicit T(const int val) : T(static_cast<float>(val)) {}                                                   \
    explicit T(const long int val) : T(static_cast<float>(val)) {}                                              \
    explicit T(const long long int val) : T(static_cast<float>(val)) {}                                         \
    explicit operator __half() const { return __half(__nv_cvt_fp8_to_halfraw(__x, KIND)); }                     \
    explicit operator float() const { return ncclsim_fp_f16_to_float(__nv_cvt_fp8_to_halfraw(__x, KIND).x); }   \
    explicit operator __nv_bfloat16() const { return __float2bfloat16_rz(float(*this)); }                       \
    explicit operator double() const { return static_cast<double>(float(*this)); }                              \
    explicit operator unsigned char() const {                                                                   \
      return (__x & 0x7FU) == 0x7FU ? 0 : (unsigned char)ncclsim_fp_to_uint(float(*this), 0xFFU, 0);           \
    }                                                                                                           \
    explicit operator unsigned short int() const { return __half2ushort_rz(__half(*this)); }                    \
    explicit operator unsigned int() const { return __half2uint_rz(__half(*this)); }                            \
    explicit operator unsigned long int() const { return (unsigned long)__half2ull_rz(__half(*this)); }         \
    explicit operator unsigned long long int() const { return __half2ull_rz(__half(*this)); }                   \
    explicit operator signed char() const {                                                                     \
      return (__x & 0x7FU) == 0x7FU ? 0 : (signed char)ncclsim_fp_to_int(float(*this), -128, 127, 0);           \
    }                                                                                                           \
    explicit operator short int() const { return __half2short_rz(__half(*this)); }                              \
    explicit operator int() const { return __half2int_rz(__half(*this)); }                                      \
    explicit operator long int() const { return (long)__half2ll_rz(__half(*this)); }                            \
    explicit operator long long int() const { return __half2ll_rz(__half(*this)); }                             \
    explicit operator bool() const { return (__x & 0x7FU) != 0U; }                                              \
  }

NCCLSIM_FP8_CLASS(__nv_fp8_e4m3, __NV_E4M3);
NCCLSIM_FP8_CLASS(__nv_fp8_e5m2, __NV_E5M2);
#undef NCCLSIM_FP8_CLASS

#define NCCLSIM_FP8X2_CLASS(T, KIND)                                                                        \
  struct NCCLSIM_ALIGN(2) T {                                                                               \
    __nv_fp8x2_storage_t __x;                                                                               \
    T() = default;                                                                                          \
    explicit T(const __half2 f)                                                                             \
        : __x(__nv_cvt_halfraw2_to_fp8x2(static_cast<__half2_raw>(f), __NV_SATFINITE, KIND)) {}             \
    explicit T(const __nv_bfloat162 f)                                                                      \
        : __x(__nv_cvt_bfloat16raw2_to_fp8x2(static_cast<__nv_bfloat162_raw>(f), __NV_SATFINITE, KIND)) {} \
    explicit T(const float2 f) : __x(__nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, KIND)) {}                  \
    explicit T(const double2 f) : __x(__nv_cvt_double2_to_fp8x2(f, __NV_SATFINITE, KIND)) {}                \
    explicit operator __half2() const { return __half2(__nv_cvt_fp8x2_to_halfraw2(__x, KIND)); }            \
    explicit operator float2() const { return __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(__x, KIND))); } \
  }

NCCLSIM_FP8X2_CLASS(__nv_fp8x2_e4m3, __NV_E4M3);
NCCLSIM_FP8X2_CLASS(__nv_fp8x2_e5m2, __NV_E5M2);
#undef NCCLSIM_FP8X2_CLASS

#endif /* __cplusplus */
#endif /* __CUDA_FP8_H__ */
