/*
 * ncclsim_device/intrinsics.h — CUDA's integer and floating-point
 * intrinsics, its min/max overloads, the cache-hinted loads and stores,
 * and the address-space tests.
 *
 * Exact ones compute what CUDA does; the fast approximations (__expf,
 * __sinf, __fdividef, ...) compute the exact result, which CUDA's
 * documentation allows them to be within their error bound of. The
 * rounding-mode forms (__fadd_rz, ...) round as named, through the CPU's
 * rounding mode.
 */
#ifndef NCCLSIM_DEVICE_INTRINSICS_H_
#define NCCLSIM_DEVICE_INTRINSICS_H_

#include <cfenv>

/* ---- integers ---- */
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long int x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long int x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long int x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
  x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
  x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
  x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
  return __builtin_bswap32(x);
}
static inline unsigned long long int __brevll(unsigned long long int x) {
  return (unsigned long long)__brev((unsigned)x) << 32 | __brev((unsigned)(x >> 32));
}
/* Bytes of (y:x) chosen by the four selector nibbles of s. */
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  unsigned long long v = (unsigned long long)y << 32 | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)(v >> (8 * ((s >> (4 * i)) & 7)) & 0xff) << (8 * i);
  return r;
}
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) << (shift & 31) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) << (shift > 32 ? 32 : shift) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (shift & 31));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (shift > 32 ? 32 : shift));
}
static inline int __mulhi(int x, int y) { return (int)((long long)x * y >> 32); }
static inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return (unsigned)((unsigned long long)x * y >> 32);
}
static inline long long int __mul64hi(long long int x, long long int y) {
  return (long long)((__int128)x * y >> 64);
}
static inline unsigned long long int __umul64hi(unsigned long long int x, unsigned long long int y) {
  return (unsigned long long)((unsigned __int128)x * y >> 64);
}
static inline int __mul24(int x, int y) { return (int)((long long)(x << 8 >> 8) * (y << 8 >> 8)); }
static inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }
static inline int __hadd(int x, int y) { return (int)(((long long)x + y) >> 1); }
static inline int __rhadd(int x, int y) { return (int)(((long long)x + y + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int x, unsigned int y) {
  return (unsigned)(((unsigned long long)x + y) >> 1);
}
static inline unsigned int __urhadd(unsigned int x, unsigned int y) {
  return (unsigned)(((unsigned long long)x + y + 1) >> 1);
}
static inline unsigned int __sad(int x, int y, unsigned int z) {
  return z + (unsigned)(x > y ? (long long)x - y : (long long)y - x);
}
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
  return z + (x > y ? x - y : y - x);
}
static inline int __dp4a(int a, int b, int c) {
  for (int i = 0; i < 4; i++) c += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
  return c;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
  for (int i = 0; i < 4; i++) c += (a >> (8 * i) & 0xff) * (b >> (8 * i) & 0xff);
  return c;
}

/* CUDA's min and max for every arithmetic pair, in the global namespace,
 * as device code calls them. */
#define NCCLSIM_MINMAX(T)                                    \
  static inline T min(T a, T b) { return b < a ? b : a; } \
  static inline T max(T a, T b) { return a < b ? b : a; }
NCCLSIM_MINMAX(int)
NCCLSIM_MINMAX(unsigned int)
NCCLSIM_MINMAX(long int)
NCCLSIM_MINMAX(unsigned long int)
NCCLSIM_MINMAX(long long int)
NCCLSIM_MINMAX(unsigned long long int)
#undef NCCLSIM_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline unsigned int min(int a, unsigned int b) { return min((unsigned int)a, b); }
static inline unsigned int min(unsigned int a, int b) { return min(a, (unsigned int)b); }
static inline unsigned int max(int a, unsigned int b) { return max((unsigned int)a, b); }
static inline unsigned int max(unsigned int a, int b) { return max(a, (unsigned int)b); }
static inline unsigned long long int min(long long int a, unsigned long long int b) {
  return min((unsigned long long)a, b);
}
static inline unsigned long long int max(long long int a, unsigned long long int b) {
  return max((unsigned long long)a, b);
}
static inline unsigned int umin(unsigned int a, unsigned int b) { return min(a, b); }
static inline unsigned int umax(unsigned int a, unsigned int b) { return max(a, b); }
static inline long long int llmin(long long int a, long long int b) { return min(a, b); }
static inline long long int llmax(long long int a, long long int b) { return max(a, b); }
static inline unsigned long long int ullmin(unsigned long long int a, unsigned long long int b) { return min(a, b); }
static inline unsigned long long int ullmax(unsigned long long int a, unsigned long long int b) { return max(a, b); }

/* ---- bits of floating-point values ---- */
static inline float __int_as_float(int x) { return __ncclsim_rt::from_bits<float>((uint32_t)x); }
static inline int __float_as_int(float x) { return (int)(uint32_t)__ncclsim_rt::to_bits(x); }
static inline float __uint_as_float(unsigned int x) { return __ncclsim_rt::from_bits<float>(x); }
static inline unsigned int __float_as_uint(float x) { return (uint32_t)__ncclsim_rt::to_bits(x); }
static inline double __longlong_as_double(long long int x) { return __ncclsim_rt::from_bits<double>((uint64_t)x); }
static inline long long int __double_as_longlong(double x) { return (long long)__ncclsim_rt::to_bits(x); }
static inline int __double2hiint(double x) { return (int)(__ncclsim_rt::to_bits(x) >> 32); }
static inline int __double2loint(double x) { return (int)(uint32_t)__ncclsim_rt::to_bits(x); }
static inline double __hiloint2double(int hi, int lo) {
  return __ncclsim_rt::from_bits<double>((uint64_t)(uint32_t)hi << 32 | (uint32_t)lo);
}

/* ---- rounding modes: the operation done with the CPU's mode set ---- */
namespace __ncclsim_rt {
template <class F>
static inline auto rounded(int mode, F f) -> decltype(f()) {
  int old = std::fegetround();
  std::fesetround(mode);
  volatile auto r = f(); /* not folded or moved out of the mode's reach */
  std::fesetround(old);
  return r;
}
} /* namespace __ncclsim_rt */
#define NCCLSIM_ROUNDED(T, name, expr, params)                                                           \
  static inline T name##_rn params { return __ncclsim_rt::rounded(FE_TONEAREST, [&] { return (T)(expr); }); } \
  static inline T name##_rz params { return __ncclsim_rt::rounded(FE_TOWARDZERO, [&] { return (T)(expr); }); } \
  static inline T name##_ru params { return __ncclsim_rt::rounded(FE_UPWARD, [&] { return (T)(expr); }); }     \
  static inline T name##_rd params { return __ncclsim_rt::rounded(FE_DOWNWARD, [&] { return (T)(expr); }); }
NCCLSIM_ROUNDED(float, __fadd, x + y, (float x, float y))
NCCLSIM_ROUNDED(float, __fsub, x - y, (float x, float y))
NCCLSIM_ROUNDED(float, __fmul, x * y, (float x, float y))
NCCLSIM_ROUNDED(float, __fdiv, x / y, (float x, float y))
NCCLSIM_ROUNDED(float, __fmaf, fmaf(x, y, z), (float x, float y, float z))
NCCLSIM_ROUNDED(float, __frcp, 1.0f / x, (float x))
NCCLSIM_ROUNDED(float, __fsqrt, sqrtf(x), (float x))
NCCLSIM_ROUNDED(double, __dadd, x + y, (double x, double y))
NCCLSIM_ROUNDED(double, __dsub, x - y, (double x, double y))
NCCLSIM_ROUNDED(double, __dmul, x * y, (double x, double y))
NCCLSIM_ROUNDED(double, __ddiv, x / y, (double x, double y))
NCCLSIM_ROUNDED(double, __fma, fma(x, y, z), (double x, double y, double z))
NCCLSIM_ROUNDED(double, __drcp, 1.0 / x, (double x))
NCCLSIM_ROUNDED(double, __dsqrt, sqrt(x), (double x))
NCCLSIM_ROUNDED(float, __int2float, x, (int x))
NCCLSIM_ROUNDED(float, __uint2float, x, (unsigned int x))
NCCLSIM_ROUNDED(float, __ll2float, x, (long long int x))
NCCLSIM_ROUNDED(float, __ull2float, x, (unsigned long long int x))
NCCLSIM_ROUNDED(float, __double2float, x, (double x))
NCCLSIM_ROUNDED(double, __ll2double, x, (long long int x))
NCCLSIM_ROUNDED(double, __ull2double, x, (unsigned long long int x))
#undef NCCLSIM_ROUNDED
static inline double __int2double_rn(int x) { return x; }
static inline double __uint2double_rn(unsigned int x) { return x; }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }

/* Float to integer: CUDA saturates out-of-range values, and NaN gives 0
 * (its 64-bit forms: the smallest value). */
namespace __ncclsim_rt {
template <class I>
static inline I to_int(double r, double lo, double hi, I nan) {
  return r != r ? nan : r <= lo ? (I)lo : r >= hi ? (I)hi : (I)r;
}
} /* namespace __ncclsim_rt */
#define NCCLSIM_F2I(I, name, lo, hi, nan)                                                                     \
  static inline I name##_rn(double x) { return __ncclsim_rt::to_int<I>(nearbyint(x), lo, hi, nan); }         \
  static inline I name##_rz(double x) { return __ncclsim_rt::to_int<I>(trunc(x), lo, hi, nan); }             \
  static inline I name##_ru(double x) { return __ncclsim_rt::to_int<I>(ceil(x), lo, hi, nan); }              \
  static inline I name##_rd(double x) { return __ncclsim_rt::to_int<I>(floor(x), lo, hi, nan); }
NCCLSIM_F2I(int, __float2int, -2147483648.0, 2147483647.0, 0)
NCCLSIM_F2I(unsigned int, __float2uint, 0.0, 4294967295.0, 0)
NCCLSIM_F2I(long long int, __float2ll, -9223372036854775808.0, 9223372036854775807.0, INT64_MIN)
NCCLSIM_F2I(unsigned long long int, __float2ull, 0.0, 18446744073709551615.0, 0x8000000000000000ull)
NCCLSIM_F2I(int, __double2int, -2147483648.0, 2147483647.0, 0)
NCCLSIM_F2I(unsigned int, __double2uint, 0.0, 4294967295.0, 0)
NCCLSIM_F2I(long long int, __double2ll, -9223372036854775808.0, 9223372036854775807.0, INT64_MIN)
NCCLSIM_F2I(unsigned long long int, __double2ull, 0.0, 18446744073709551615.0, 0x8000000000000000ull)
#undef NCCLSIM_F2I

/* ---- single precision intrinsics: the exact function ---- */
static inline float __fdividef(float x, float y) { return x / y; }
static inline float fdividef(float x, float y) { return x / y; }
/* The C library declares these names (its internal aliases) without
 * exporting them: the definitions are ncclsim's, with its linkage. */
extern "C" {
inline float __expf(float x) __THROW { return expf(x); }
inline float __exp10f(float x) __THROW { return exp10f(x); }
inline float __logf(float x) __THROW { return logf(x); }
inline float __log2f(float x) __THROW { return log2f(x); }
inline float __log10f(float x) __THROW { return log10f(x); }
inline float __sinf(float x) __THROW { return sinf(x); }
inline float __cosf(float x) __THROW { return cosf(x); }
inline float __tanf(float x) __THROW { return tanf(x); }
inline void __sincosf(float x, float *s, float *c) __THROW { sincosf(x, s, c); }
inline float __powf(float x, float y) __THROW { return powf(x, y); }
}
static inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline void sincospif(float x, float *s, float *c) {
  *s = sinpif(x);
  *c = cospif(x);
}
static inline void sincospi(double x, double *s, double *c) {
  *s = sinpi(x);
  *c = cospi(x);
}
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline float rhypotf(float x, float y) { return 1.0f / hypotf(x, y); }
static inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
static inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
static inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
static inline float saturatef(float x) { return __saturatef(x); }

/* ---- loads and stores with cache hints: plain ones on a CPU ---- */
#define NCCLSIM_LOAD(name)                     \
  template <class T>                           \
  static inline T name(const T *p) { return *p; }
#define NCCLSIM_STORE(name)                    \
  template <class T>                           \
  static inline void name(T *p, T v) { *p = v; }
NCCLSIM_LOAD(__ldg)
NCCLSIM_LOAD(__ldcg)
NCCLSIM_LOAD(__ldca)
NCCLSIM_LOAD(__ldcs)
NCCLSIM_LOAD(__ldlu)
NCCLSIM_LOAD(__ldcv)
NCCLSIM_STORE(__stwb)
NCCLSIM_STORE(__stcg)
NCCLSIM_STORE(__stcs)
NCCLSIM_STORE(__stwt)
#undef NCCLSIM_LOAD
#undef NCCLSIM_STORE

/* ---- address spaces: one space on a CPU ---- */
static inline unsigned int __isGlobal(const void *p) { return p != nullptr; }
static inline unsigned int __isShared(const void *) { return 0; }
static inline unsigned int __isConstant(const void *) { return 0; }
static inline unsigned int __isLocal(const void *) { return 0; }
static inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }
static inline size_t __cvta_generic_to_global(const void *p) { return (size_t)p; }
static inline void *__cvta_shared_to_generic(size_t a) { return (void *)a; }
static inline void *__cvta_global_to_generic(size_t a) { return (void *)a; }

#endif
