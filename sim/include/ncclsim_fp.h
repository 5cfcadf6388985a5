/*
 * ncclsim_fp.h — the one software implementation of ncclsim's narrow
 * floating-point formats (float16, bfloat16, float8 e4m3 and e5m2).
 *
 * cuda_fp16.h, cuda_bf16.h and cuda_fp8.h wrap these functions in CUDA's
 * names and types, and the simulator's reductions (sim/coll/dtype.c) call
 * them directly, so a value converted by a user's host code and one
 * converted inside an ncclsim allreduce round alike. Results are bit-exact
 * with CUDA 13's host conversions, NaN encodings included (checked against
 * the real headers by tests/sim_fp_vs_cuda when /usr/local/cuda exists).
 *
 * Plain C99 with static inline functions, so that C and C++ programs can
 * include it without linking anything; every name starts with ncclsim_fp_.
 */
#ifndef NCCLSIM_FP_H_
#define NCCLSIM_FP_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rounding directions, as CUDA's _rn, _rz, _ru and _rd suffixes. */
enum { NCCLSIM_FP_RN = 0, NCCLSIM_FP_RZ = 1, NCCLSIM_FP_RU = 2, NCCLSIM_FP_RD = 3 };

/* A format: mantissa bits, exponent bias, total width, the encodings of the
 * largest finite magnitude, of an overflow when not saturating (infinity,
 * or NaN for e4m3, which has no infinity) and of NaN (CUDA's canonical,
 * unsigned). */
typedef struct {
  int mbits, bias, width;
  uint32_t max_finite, overflow, nan;
} ncclsim_fp_format;

#define NCCLSIM_FP_F16 {10, 15, 16, 0x7bffu, 0x7c00u, 0x7fffu}
#define NCCLSIM_FP_BF16 {7, 127, 16, 0x7f7fu, 0x7f80u, 0x7fffu}
#define NCCLSIM_FP_E4M3 {3, 7, 8, 0x7eu, 0x7fu, 0x7fu}
#define NCCLSIM_FP_E5M2 {2, 15, 8, 0x7bu, 0x7cu, 0x7fu}

static inline uint64_t ncclsim_fp_dbits(double d) {
  uint64_t u;
  __builtin_memcpy(&u, &d, sizeof u); /* no <string.h>: the headers must not add declarations */
  return u;
}
static inline float ncclsim_fp_float(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint32_t ncclsim_fp_fbits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}

/* x >> s rounded in direction mode; neg says the value is negative, which
 * the directed modes need. s may exceed 63: then only a directed rounding
 * away from zero leaves something (the smallest step). */
static inline uint64_t ncclsim_fp_shift(uint64_t x, unsigned s, int mode, int neg) {
  if (s == 0) return x;
  int away = (mode == NCCLSIM_FP_RU && !neg) || (mode == NCCLSIM_FP_RD && neg);
  if (s > 63) return x && away ? 1 : 0;
  uint64_t q = x >> s, rem = x & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
  if (!rem) return q;
  if (mode == NCCLSIM_FP_RN) return q + (rem > half || (rem == half && (q & 1)));
  return q + (away ? 1 : 0);
}

/* Encodes d (floats widen to double exactly, so one encoder serves both and
 * rounds once). NaN gives the format's NaN; an infinite input gives the
 * overflow encoding, or the largest finite value when saturating; a finite
 * value past the largest rounds as IEEE says for the mode (to the largest
 * finite one for rz, and for ru/rd on the side they round toward zero). */
static inline uint32_t ncclsim_fp_encode(double d, ncclsim_fp_format fm, int mode, int saturate) {
  uint64_t u = ncclsim_fp_dbits(d), a = u & ~(UINT64_C(1) << 63);
  int neg = (int)(u >> 63);
  uint32_t sign = (uint32_t)neg << (fm.width - 1);
  if (a > UINT64_C(0x7ff0000000000000)) return fm.nan;
  if (a == UINT64_C(0x7ff0000000000000)) return sign | (saturate ? fm.max_finite : fm.overflow);
  int biased = (int)(a >> 52);
  int field = (biased ? biased : 1) - 1023 + fm.bias; /* the result's exponent field */
  uint64_t r;
  if (field >= 1) {
    /* Rebase the exponent and round exponent and mantissa together: a carry
     * out of the mantissa bumps the exponent, as it should. */
    r = ncclsim_fp_shift(a - ((uint64_t)(1023 - fm.bias) << 52), (unsigned)(52 - fm.mbits), mode, neg);
  } else {
    /* Subnormal result: the quantum is the smallest subnormal. */
    uint64_t mant = (a & ((UINT64_C(1) << 52) - 1)) | (biased ? UINT64_C(1) << 52 : 0);
    r = ncclsim_fp_shift(mant, (unsigned)(52 - fm.mbits + 1 - field), mode, neg);
  }
  if (r > fm.max_finite) {
    int toward_zero = mode == NCCLSIM_FP_RZ || (mode == NCCLSIM_FP_RU && neg) || (mode == NCCLSIM_FP_RD && !neg);
    r = saturate || toward_zero ? fm.max_finite : fm.overflow;
  }
  return sign | (uint32_t)r;
}

/* Decodes b exactly (every value of these formats is a float). NaN gives
 * CUDA's canonical float NaN, 0x7fffffff. */
static inline float ncclsim_fp_decode(uint32_t b, ncclsim_fp_format fm) {
  int ebits = fm.width - 1 - fm.mbits;
  uint32_t sign = (b >> (fm.width - 1)) & 1u, e = (b >> fm.mbits) & ((1u << ebits) - 1u),
           m = b & ((1u << fm.mbits) - 1u), mag = b & ~(1u << (fm.width - 1));
  float v;
  if (mag > fm.overflow || (mag == fm.overflow && fm.overflow == fm.nan)) return ncclsim_fp_float(0x7fffffffu);
  if (mag == fm.overflow) v = ncclsim_fp_float(0x7f800000u);
  else if (e == 0) v = (float)m * ncclsim_fp_float((uint32_t)(127 + 1 - fm.bias - fm.mbits) << 23);
  else v = ncclsim_fp_float(((e - (uint32_t)fm.bias + 127u) << 23) | (m << (23 - fm.mbits)));
  return sign ? -v : v;
}

/* ---- the conversions the CUDA headers and the reductions use ---- */

static inline uint16_t ncclsim_fp_to_f16(double d, int mode) {
  const ncclsim_fp_format f = NCCLSIM_FP_F16;
  return (uint16_t)ncclsim_fp_encode(d, f, mode, 0);
}
static inline float ncclsim_fp_f16_to_float(uint16_t h) {
  const ncclsim_fp_format f = NCCLSIM_FP_F16;
  return ncclsim_fp_decode(h, f);
}
static inline uint16_t ncclsim_fp_to_bf16(double d, int mode) {
  const ncclsim_fp_format f = NCCLSIM_FP_BF16;
  return (uint16_t)ncclsim_fp_encode(d, f, mode, 0);
}
/* bfloat16 is the top half of a float: NaN payloads survive, as in CUDA. */
static inline float ncclsim_fp_bf16_to_float(uint16_t h) { return ncclsim_fp_float((uint32_t)h << 16); }

/* float8: e5m2 says which kind (else e4m3); CUDA rounds to nearest even only. */
static inline uint8_t ncclsim_fp_to_fp8(double d, int saturate, int e5m2) {
  const ncclsim_fp_format e4 = NCCLSIM_FP_E4M3, e5 = NCCLSIM_FP_E5M2;
  return (uint8_t)ncclsim_fp_encode(d, e5m2 ? e5 : e4, NCCLSIM_FP_RN, saturate);
}
static inline float ncclsim_fp_fp8_to_float(uint8_t b, int e5m2) {
  const ncclsim_fp_format e4 = NCCLSIM_FP_E4M3, e5 = NCCLSIM_FP_E5M2;
  return ncclsim_fp_decode(b, e5m2 ? e5 : e4);
}
/* Exact: every float8 value is a float16 value. NaN gives 0x7fff. */
static inline uint16_t ncclsim_fp_fp8_to_f16(uint8_t b, int e5m2) {
  return ncclsim_fp_to_f16(ncclsim_fp_fp8_to_float(b, e5m2), NCCLSIM_FP_RN);
}

/* float to integer, rounding toward zero, as CUDA's __half2int_rz and
 * kin: values past the type's range give its nearest bound, NaN gives
 * nan_value (CUDA's host code: 0 for 32 bits and less, the lowest value
 * for 64 bits, as the GPU's cvt instructions). */
static inline int64_t ncclsim_fp_to_int(float f, int64_t lo, int64_t hi, int64_t nan_value) {
  if (f != f) return nan_value;
  if (f <= (float)lo) return lo;
  if (f >= (float)hi) return hi; /* (float)hi may round up past hi: compare, then clamp */
  return (int64_t)f;
}
static inline uint64_t ncclsim_fp_to_uint(float f, uint64_t hi, uint64_t nan_value) {
  if (f != f) return nan_value;
  if (f <= 0) return 0;
  if (f >= (float)hi) return hi;
  return (uint64_t)f;
}

/* ---- what the device intrinsics of cuda_fp16.h and cuda_bf16.h need ---- */

/* f rounded to an integral value in direction mode, as the GPU's
 * cvt.rni/rzi/rpi/rmi: NaN and infinities unchanged, the sign kept (a
 * rounding to an integer never changes it, and -0.3 gives -0). Without
 * libm, whose rint would follow the caller's rounding mode. */
static inline float ncclsim_fp_rint(float f, int mode) {
  uint32_t u = ncclsim_fp_fbits(f);
  if ((u & 0x7fffffffu) >= 0x4b000000u) return f; /* 2^23 and up are integers; inf, NaN */
  int32_t t = (int32_t)f;                          /* toward zero, exact */
  float r = f - (float)t;                          /* the fraction, exact */
  if (mode == NCCLSIM_FP_RN) t += (r > 0.5f || (r == 0.5f && (t & 1))) - (r < -0.5f || (r == -0.5f && (t & 1)));
  else if (mode == NCCLSIM_FP_RU) t += r > 0;
  else if (mode == NCCLSIM_FP_RD) t -= r < 0;
  return ncclsim_fp_float(ncclsim_fp_fbits((float)t) | (u & 0x80000000u));
}

/* An integer as a double rounded to odd: exact below 2^53, else cut to 53
 * bits with the last one set when anything nonzero was cut. Rounding that
 * double once more, in any direction, to a format of 51 bits or fewer
 * gives what rounding the integer itself would (the odd bit keeps "not
 * exactly on a boundary"); (double)u would round twice, and 2^60 + 2^52 + 1
 * would come out a tie. */
static inline double ncclsim_fp_u64_odd(uint64_t u) {
  if (u < (UINT64_C(1) << 53)) return (double)u;
  unsigned s = 11u - (unsigned)__builtin_clzll(u);
  uint64_t m = (u >> s) | ((u & ((UINT64_C(1) << s) - 1)) != 0);
  return (double)m * (double)(UINT64_C(1) << s);
}
static inline double ncclsim_fp_i64_odd(int64_t i) {
  return i < 0 ? -ncclsim_fp_u64_odd(-(uint64_t)i) : ncclsim_fp_u64_odd((uint64_t)i);
}

/* a*b + c as a double rounded to odd, for a, b and c float16 or bfloat16
 * values (so a*b, of 22 significant bits at most and exponents far inside
 * double's, is exact): the sum's rounding error, recovered exactly
 * (TwoSum), moves an even result to its odd neighbour toward the exact
 * sum. Encoding it then rounds once, as the GPU's fma does; a sum of
 * opposite zeros is +0, of two -0 is -0, as IEEE's fma. */
static inline double ncclsim_fp_fma_odd(double a, double b, double c) {
  double p = a * b, s = p + c;
  uint64_t u = ncclsim_fp_dbits(s);
  if ((u & UINT64_C(0x7ff0000000000000)) == UINT64_C(0x7ff0000000000000)) return s; /* inf, NaN */
  double bb = s - p, err = (p - (s - bb)) + (c - bb);
  if (err == 0 || (u & 1)) return s;
  /* s is even and not exact, so not zero: step its magnitude toward the sum. */
  u = ((err > 0) == (s > 0)) ? u + 1 : u - 1;
  double r;
  __builtin_memcpy(&r, &u, sizeof r);
  return r;
}

#ifdef __cplusplus
}
#endif
#endif /* NCCLSIM_FP_H_ */
