// tests/sim_fp_vs_cuda.cc — ncclsim's narrow floats against CUDA's own
// host code, compared bit for bit. Built only against the real
// cuda_fp16.h, cuda_bf16.h and cuda_fp8.h (CUDA_CPPFLAGS), and linked with
// tests/sim_fp_vs_cuda_sim.cc, which holds ncclsim's cuda_fp16.h and
// cuda_bf16.h in a namespace of their own. Exit 0 = pass, 1 = a
// difference (printed).
//
// Coverage of ncclsim_fp.h's conversions: every float16 and bfloat16
// encoding decoded; every float8 byte both ways; and, for each narrowing,
// every float whose bits below the target's rounding point are one of the
// patterns that decide rounding (zero, one, just under/at/over half, all
// ones), over all high bits. N4C_FP_EXHAUSTIVE=1 checks all 2^32 floats
// instead (minutes).
//
// Then every function of tests/fp_ops.h's table, through both headers:
// one 16-bit operand on all 65536 values (pairs: every value in each
// lane), two or three on every combination of special values and
// N4C_FP_SAMPLES (default 131072) random ones. Where CUDA has host code
// (H) ncclsim must equal it. Where CUDA has none (D: fma, math, the
// directed conversions) or its host code differs from its documentation
// (Z), ncclsim must equal a reference written here from the
// documentation: exact integer arithmetic rounded by CUDA's own
// conversions (fma), long double libm (math), the host's rounding modes
// (directed conversions).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "../sim/include/ncclsim_fp.h"

static unsigned long failures;

static void fail(const char *what, uint64_t in, uint64_t want, uint64_t got) {
  if (failures++ < 20)
    std::printf("%s(0x%llx): CUDA 0x%llx, ncclsim 0x%llx\n", what, (unsigned long long)in, (unsigned long long)want,
                (unsigned long long)got);
}

static uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float bitsf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Every narrowing of one float.
static void narrow(uint32_t u) {
  float f = bitsf(u);
  struct {
    const char *name;
    unsigned want, got;
  } c[] = {
      {"__float2half_rn", __half_as_ushort(__float2half_rn(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RN)},
      {"__float2half_rz", __half_as_ushort(__float2half_rz(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RZ)},
      {"__float2half_ru", __half_as_ushort(__float2half_ru(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RU)},
      {"__float2half_rd", __half_as_ushort(__float2half_rd(f)), ncclsim_fp_to_f16(f, NCCLSIM_FP_RD)},
      {"__float2bfloat16_rn", __bfloat16_as_ushort(__float2bfloat16_rn(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RN)},
      {"__float2bfloat16_rz", __bfloat16_as_ushort(__float2bfloat16_rz(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RZ)},
      {"__float2bfloat16_ru", __bfloat16_as_ushort(__float2bfloat16_ru(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RU)},
      {"__float2bfloat16_rd", __bfloat16_as_ushort(__float2bfloat16_rd(f)), ncclsim_fp_to_bf16(f, NCCLSIM_FP_RD)},
      {"e4m3 satfinite", __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3), ncclsim_fp_to_fp8(f, 1, 0)},
      {"e4m3 nosat", __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E4M3), ncclsim_fp_to_fp8(f, 0, 0)},
      {"e5m2 satfinite", __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2), ncclsim_fp_to_fp8(f, 1, 1)},
      {"e5m2 nosat", __nv_cvt_float_to_fp8(f, __NV_NOSAT, __NV_E5M2), ncclsim_fp_to_fp8(f, 0, 1)},
  };
  for (auto &x : c)
    if (x.want != x.got) fail(x.name, u, x.want, x.got);
}

// Doubles: a rounding decided past float's precision (double rounding
// through float would get these wrong).
static void narrow_double(double d) {
  uint64_t in;
  std::memcpy(&in, &d, 8);
  unsigned want = __half_as_ushort(__double2half(d)), got = ncclsim_fp_to_f16(d, NCCLSIM_FP_RN);
  if (want != got) fail("__double2half", in, want, got);
  want = __bfloat16_as_ushort(__double2bfloat16(d)), got = ncclsim_fp_to_bf16(d, NCCLSIM_FP_RN);
  if (want != got) fail("__double2bfloat16", in, want, got);
  for (int sat = 0; sat < 2; sat++)
    for (int e5 = 0; e5 < 2; e5++) {
      want = __nv_cvt_double_to_fp8(d, sat ? __NV_SATFINITE : __NV_NOSAT, e5 ? __NV_E5M2 : __NV_E4M3);
      got = ncclsim_fp_to_fp8(d, sat, e5);
      if (want != got) fail("__nv_cvt_double_to_fp8", in, want, got);
    }
}

// ---- every function of tests/fp_ops.h ----

#define FP_EVAL_HOST_ONLY 1
#include "fp_ops.h"
#include "fp_ops_eval.h"

uint64_t sim_fp_eval(int op, uint64_t a, uint64_t b, uint64_t c);

// References for what CUDA has no host code for, under CUDA's names in
// namespace ref, built from the documentation and CUDA's host code.
namespace ref {
static float tof(const __half x) { return __half2float(x); }
static float tof(const __nv_bfloat16 x) { return __bfloat162float(x); }
static __half rn(const __half, double d) { return __double2half(d); }
static __nv_bfloat16 rn(const __nv_bfloat16, double d) { return __double2bfloat16(d); }
static uint16_t bits(const __half x) { return __half_as_ushort(x); }
static uint16_t bits(const __nv_bfloat16 x) { return __bfloat16_as_ushort(x); }
static __half of_bits(const __half, unsigned b) { return __ushort_as_half((unsigned short)b); }
static __nv_bfloat16 of_bits(const __nv_bfloat16, unsigned b) { return __ushort_as_bfloat16((unsigned short)b); }
static __half2 pair(const __half x, const __half y) { return __halves2half2(x, y); }
static __nv_bfloat162 pair(const __nv_bfloat16 x, const __nv_bfloat16 y) { return __halves2bfloat162(x, y); }
static bool isnan16(const __half x) { return __hisnan(x); }
static bool isnan16(const __nv_bfloat16 x) { return __hisnan(x); }

// a*b + c, exactly, as a double rounded to odd (which CUDA's __double2half
// and __double2bfloat16 then round once, as an fma does): the values as
// integers times powers of two, summed in 128 bits; where the exponents
// lie too far apart for that, the smaller operand only says which way the
// larger one is off.
static int bitlen(unsigned __int128 m) {
  int n = 0;
  while (m) m >>= 1, n++;
  return n;
}
static void split(float f, int *neg, unsigned __int128 *m, int *e) {
  int x;
  float fr = std::frexp(std::fabs(f), &x);
  *neg = std::signbit(f);
  *m = (unsigned __int128)(uint64_t)std::ldexp(fr, 24);
  *e = x - 24;
}
static double fma_odd(float a, float b, float c) {
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(c)) return (double)a * (double)b + (double)c;
  int na, nb, nc, ea, eb, ec;
  unsigned __int128 ma, mb, mc;
  split(a, &na, &ma, &ea), split(b, &nb, &mb, &eb), split(c, &nc, &mc, &ec);
  int np = na ^ nb, ep = ea + eb;
  unsigned __int128 mp = ma * mb;
  if (mp == 0 && mc == 0) return np && nc ? -0.0 : 0.0;
  if (mp == 0) return c;
  if (mc == 0) return (np ? -1.0 : 1.0) * std::ldexp((double)(uint64_t)mp, ep);
  int e = ep < ec ? ep : ec, neg;
  unsigned __int128 m;
  if (ep - e > 60 || ec - e > 60) { /* the smaller is under an eighth of the larger's last bit */
    bool p_big = ep > ec;
    m = (p_big ? mp : mc) << 3;
    neg = p_big ? np : nc;
    m = ((p_big ? nc : np) == neg) ? m + 1 : m - 1;
    e = (p_big ? ep : ec) - 3;
  } else {
    __int128 s = (np ? -1 : 1) * (__int128)(mp << (ep - e)) + (nc ? -1 : 1) * (__int128)(mc << (ec - e));
    if (s == 0) return 0.0;
    neg = s < 0;
    m = (unsigned __int128)(s < 0 ? -s : s);
  }
  int n = bitlen(m);
  if (n > 53) {
    bool cut = (m & (((unsigned __int128)1 << (n - 53)) - 1)) != 0;
    m = (m >> (n - 53)) | (cut ? 1 : 0);
    e += n - 53;
  }
  return (neg ? -1.0 : 1.0) * std::ldexp((double)(uint64_t)m, e);
}
template <class T>
static T fma1(const T a, const T b, const T c) {
  return rn(a, fma_odd(tof(a), tof(b), tof(c)));
}
// _sat: CUDA's own host clamp of its _sat adds; _relu: below +0 (-0
// too) to +0, NaN to the canonical NaN, as CUDA documents.
static __half one(const __half) { return __float2half(1.0f); }
static __nv_bfloat16 one(const __nv_bfloat16) { return __float2bfloat16(1.0f); }
template <class T>
static T sat(const T x) {
  return __hmin(__hmax(x, of_bits(x, 0)), one(x));
}
template <class T>
static T relu(const T x) {
  return isnan16(x) ? of_bits(x, 0x7fff) : (bits(x) & 0x8000) ? of_bits(x, 0) : x;
}
#define REF_FMA(T, T2)                                                                                       \
  static T __hfma(const T a, const T b, const T c) { return fma1(a, b, c); }                                 \
  static T __hfma_sat(const T a, const T b, const T c) { return sat(fma1(a, b, c)); }                        \
  static T __hfma_relu(const T a, const T b, const T c) { return relu(fma1(a, b, c)); }                      \
  static T2 __hfma2(const T2 a, const T2 b, const T2 c) { return pair(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
  static T2 __hfma2_sat(const T2 a, const T2 b, const T2 c) {                                                \
    return pair(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));                                       \
  }                                                                                                          \
  static T2 __hfma2_relu(const T2 a, const T2 b, const T2 c) {                                               \
    return pair(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));                                     \
  }                                                                                                          \
  static T2 __hcmadd(const T2 a, const T2 b, const T2 c) {                                                   \
    return pair(__hfma(::__hneg(a.y), b.y, __hfma(a.x, b.x, c.x)), __hfma(a.y, b.x, __hfma(a.x, b.y, c.y))); \
  }
REF_FMA(__half, __half2)
REF_FMA(__nv_bfloat16, __nv_bfloat162)

// Math: long double libm (glibc's own code for it, not the double
// functions ncclsim calls), rounded by CUDA's conversion.
#define REF_MATH(base, expr)                                                                       \
  template <class T>                                                                               \
  static T base##_1(const T a) {                                                                   \
    long double x = tof(a);                                                                        \
    return rn(a, (double)(expr));                                                                  \
  }                                                                                                \
  static __half h##base(const __half a) { return base##_1(a); }                                    \
  static __nv_bfloat16 h##base(const __nv_bfloat16 a) { return base##_1(a); }                      \
  static __half2 h2##base(const __half2 a) { return pair(base##_1(a.x), base##_1(a.y)); }          \
  static __nv_bfloat162 h2##base(const __nv_bfloat162 a) { return pair(base##_1(a.x), base##_1(a.y)); }
REF_MATH(sqrt, sqrtl(x))
REF_MATH(rsqrt, 1.0L / sqrtl(x))
REF_MATH(rcp, 1.0L / x)
REF_MATH(log, logl(x))
REF_MATH(log2, log2l(x))
REF_MATH(log10, log10l(x))
REF_MATH(exp, expl(x))
REF_MATH(exp2, exp2l(x))
REF_MATH(exp10, powl(10.0L, x))
REF_MATH(sin, sinl(x))
REF_MATH(cos, cosl(x))
REF_MATH(tanh, tanhl(x))
REF_MATH(tanh_approx, tanhl(x))
REF_MATH(ceil, ceill(x))
REF_MATH(floor, floorl(x))
REF_MATH(trunc, truncl(x))
REF_MATH(rint, nearbyintl(x))

// To integers in a direction: libm's rounding, then the bounds; NaN gives
// 0, or the lowest value for 64 bits (CUDA's _rz host code).
template <class I>
static I to_int(float f, long double (*round)(long double)) {
  if (f != f) return sizeof(I) == 8 ? (I)(1ull << 63) : 0;
  long double r = round(f);
  if (r <= (long double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
  if (r >= (long double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
  return (I)r;
}
#define REF_TO_INT(t, T, n, I)                                                          \
  static I __##t##2##n##_rn(const T h) { return to_int<I>(tof(h), nearbyintl); } \
  static I __##t##2##n##_rd(const T h) { return to_int<I>(tof(h), floorl); }     \
  static I __##t##2##n##_ru(const T h) { return to_int<I>(tof(h), ceill); }
#define REF_TO_INTS(t, T)                                                                            \
  REF_TO_INT(t, T, int, int) REF_TO_INT(t, T, uint, unsigned) REF_TO_INT(t, T, short, short)         \
  REF_TO_INT(t, T, ushort, unsigned short) REF_TO_INT(t, T, ll, long long)                          \
  REF_TO_INT(t, T, ull, unsigned long long)
REF_TO_INTS(half, __half)
REF_TO_INTS(bfloat16, __nv_bfloat16)

// From integers to bfloat16 in a direction: the integer to float in that
// rounding mode (once), then CUDA's conversion in the same direction
// (directed roundings compose).
template <class I>
static float to_float_in(I i, int mode) {
  int old = std::fegetround();
  std::fesetround(mode);
  volatile I vi = i;
  volatile float f = (float)vi;
  std::fesetround(old);
  return f;
}
#define REF_FROM_INT(n, I)                                                                                              \
  static __nv_bfloat16 __##n##2bfloat16_rz(const I i) { return __float2bfloat16_rz(to_float_in(i, FE_TOWARDZERO)); } \
  static __nv_bfloat16 __##n##2bfloat16_rd(const I i) { return __float2bfloat16_rd(to_float_in(i, FE_DOWNWARD)); }   \
  static __nv_bfloat16 __##n##2bfloat16_ru(const I i) { return __float2bfloat16_ru(to_float_in(i, FE_UPWARD)); }
REF_FROM_INT(int, int)
REF_FROM_INT(uint, unsigned)
REF_FROM_INT(short, short)
REF_FROM_INT(ushort, unsigned short)
REF_FROM_INT(ll, long long)
REF_FROM_INT(ull, unsigned long long)

// bfloat16 __hmax_nan and __hmin_nan as documented: "+0.0 > -0.0" (CUDA
// 13's host code returns the first of two zeros); the rest is its host
// code.
static __nv_bfloat16 max_nan(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  if ((bits(a) | bits(b)) & 0x7fff || __hisnan(a) || __hisnan(b)) return ::__hmax_nan(a, b);
  return of_bits(a, bits(a) & bits(b));
}
static __nv_bfloat16 min_nan(const __nv_bfloat16 a, const __nv_bfloat16 b) {
  if ((bits(a) | bits(b)) & 0x7fff || __hisnan(a) || __hisnan(b)) return ::__hmin_nan(a, b);
  return of_bits(a, bits(a) | bits(b));
}
static __nv_bfloat162 max2_nan(const __nv_bfloat162 a, const __nv_bfloat162 b) { return pair(max_nan(a.x, b.x), max_nan(a.y, b.y)); }
static __nv_bfloat162 min2_nan(const __nv_bfloat162 a, const __nv_bfloat162 b) { return pair(min_nan(a.x, b.x), min_nan(a.y, b.y)); }

// The D and Z functions of the table, through the references above (the
// Z ones renamed, since CUDA's own are in scope too).
#define __hmax_nan max_nan
#define __hmin_nan min_nan
#define __hmax2_nan max2_nan
#define __hmin2_nan min2_nan
#define REF_CASE(id, f, kind, where, expr) REF_CASE_##where(id, expr)
#define REF_CASE_H(id, expr)
#define REF_CASE_D(id, expr) \
  case FP_OP_##id:           \
    return fp_out(expr);
#define REF_CASE_Z REF_CASE_D
static uint64_t eval(int op, uint64_t a, uint64_t b, uint64_t c) {
  (void)a, (void)b, (void)c;
  switch (op) {
    FP_OPS(REF_CASE)
    default:
      break;
  }
  return FP_EVAL_NONE;
}
#undef __hmax_nan
#undef __hmin_nan
#undef __hmax2_nan
#undef __hmin2_nan
}  // namespace ref

static void compare_ops() {
  size_t nrand = 131072;
  if (const char *e = std::getenv("N4C_FP_SAMPLES")) nrand = std::strtoul(e, nullptr, 0);
  std::vector<uint64_t> in[3];
  unsigned long checked[3] = {0, 0, 0}, calls = 0;
  for (int op = 0; op < FP_OP_COUNT; op++) {
    const fp_op_info *info = &fp_op_infos[op];
    fp_gen_inputs(info, nrand, in);
    unsigned long bad = 0;
    for (size_t i = 0; i < in[0].size(); i++) {
      uint64_t a = in[0][i], b = in[1][i], c = in[2][i];
      uint64_t want = info->where == FP_WHERE_H ? fp_eval(op, a, b, c) : ref::eval(op, a, b, c);
      uint64_t got = sim_fp_eval(op, a, b, c);
      if (want == FP_EVAL_NONE || got == FP_EVAL_NONE) {
        std::printf("%s: no %s implementation\n", info->name, got == FP_EVAL_NONE ? "ncclsim" : "reference");
        failures++;
        break;
      }
      if (want != got && bad++ < 3 && failures++ < 60)
        std::printf("%s(0x%llx, 0x%llx, 0x%llx): %s 0x%llx, ncclsim 0x%llx\n", info->name, (unsigned long long)a,
                    (unsigned long long)b, (unsigned long long)c, info->where == FP_WHERE_H ? "CUDA" : "reference",
                    (unsigned long long)want, (unsigned long long)got);
    }
    if (bad > 3) failures += bad - 3;
    if (bad) std::printf("%s: %lu of %zu differ\n", info->name, bad, in[0].size());
    checked[info->where]++;
    calls += in[0].size();
  }
  std::printf("%d functions, %lu calls: %lu against CUDA's host code, %lu against references (%lu device-only, "
              "%lu where CUDA's host code departs from its documentation)\n",
              (int)FP_OP_COUNT, calls, checked[FP_WHERE_H], checked[FP_WHERE_D] + checked[FP_WHERE_Z],
              checked[FP_WHERE_D], checked[FP_WHERE_Z]);
}

int main() {
  // Decoding: every encoding.
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t want = fbits(__half2float(__ushort_as_half((unsigned short)h))), got = fbits(ncclsim_fp_f16_to_float((uint16_t)h));
    if (want != got) fail("__half2float", h, want, got);
    want = fbits(__bfloat162float(__ushort_as_bfloat16((unsigned short)h)));
    got = fbits(ncclsim_fp_bf16_to_float((uint16_t)h));
    if (want != got) fail("__bfloat162float", h, want, got);
    __half hh = __ushort_as_half((unsigned short)h);
    long long wl = __half2ll_rz(hh), gl = ncclsim_fp_to_int(__half2float(hh), INT64_MIN, INT64_MAX, INT64_MIN);
    if (wl != gl) fail("__half2ll_rz", h, (uint64_t)wl, (uint64_t)gl);
    int wi = __half2int_rz(hh), gi = (int)ncclsim_fp_to_int(__half2float(hh), INT32_MIN, INT32_MAX, 0);
    if (wi != gi) fail("__half2int_rz", h, (uint64_t)wi, (uint64_t)gi);
    unsigned long long wu = __half2ull_rz(hh), gu = ncclsim_fp_to_uint(__half2float(hh), UINT64_MAX, UINT64_C(1) << 63);
    if (wu != gu) fail("__half2ull_rz", h, wu, gu);
  }
  for (uint32_t b = 0; b < 256; b++)
    for (int e5 = 0; e5 < 2; e5++) {
      __nv_fp8_interpretation_t k = e5 ? __NV_E5M2 : __NV_E4M3;
      unsigned want = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, k).x, got = ncclsim_fp_fp8_to_f16((uint8_t)b, e5);
      if (want != got) fail("__nv_cvt_fp8_to_halfraw", b, want, got);
      __nv_fp8_e4m3 q4;
      __nv_fp8_e5m2 q5;
      q4.__x = q5.__x = (__nv_fp8_storage_t)b;
      uint32_t wf = fbits(e5 ? float(q5) : float(q4)), gf = fbits(ncclsim_fp_fp8_to_float((uint8_t)b, e5));
      if (wf != gf) fail("float(__nv_fp8)", b, wf, gf);
    }
  // Narrowing.
  if (std::getenv("N4C_FP_EXHAUSTIVE")) {
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u++) narrow((uint32_t)u);
  } else {
    for (unsigned s : {13u, 16u, 20u, 21u}) {  // float16, bfloat16, e4m3, e5m2 normals
      uint32_t half = 1u << (s - 1), all = (1u << s) - 1;
      const uint32_t lows[] = {0, 1, half - 1, half, half + 1, all};
      for (uint32_t hi = 0; hi < (1u << (32 - s)); hi++)
        for (uint32_t lo : lows) narrow(hi << s | lo);
    }
    // Subnormal results round at coarser points: every float of magnitude
    // below 2^-5 (float8's and float16's subnormal ranges and their
    // borders) with a sampled mantissa, and all of them near float16's.
    uint32_t x = 12345;
    for (uint32_t e = 0; e < 127 - 5; e++)
      for (int i = 0; i < 4096; i++) {
        x = x * 1664525u + 1013904223u;
        uint32_t u = e << 23 | (x >> 9);
        narrow(u);
        narrow(u | 0x80000000u);
      }
  }
  uint64_t y = 99;
  for (int i = 0; i < 2000000; i++) {
    y = y * 6364136223846793005ull + 1442695040888963407ull;
    double d;
    uint64_t bits = (y >> 1) % (UINT64_C(0x40f0000000000000) - UINT64_C(0x3e00000000000000)) + UINT64_C(0x3e00000000000000);
    std::memcpy(&d, &bits, 8);  // magnitudes 2^-31 .. 2^16: every format's range
    narrow_double((y & 1) ? -d : d);
  }
  compare_ops();
  if (failures) std::printf("%lu differences from CUDA\n", failures);
  else std::printf("ncclsim_fp.h matches CUDA %d's host conversions\n", CUDART_VERSION);
  return failures != 0;
}
