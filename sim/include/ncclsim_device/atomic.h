/*
 * ncclsim_device/atomic.h — CUDA's atomic functions, with their _block and
 * _system forms, on every type CUDA has them for.
 *
 * They are the CPU's atomic operations, relaxed as CUDA's are: atomic
 * between the ranks' threads of one process, and, on the shared arena,
 * between processes. Floating-point and 16-bit ones are compare-and-swap
 * loops on the word that holds them.
 */
#ifndef NCCLSIM_DEVICE_ATOMIC_H_
#define NCCLSIM_DEVICE_ATOMIC_H_

namespace __ncclsim_rt {

/* *p = f(*p), atomically; returns the old value. U: the unsigned word. */
template <class T, class U, class F>
static inline T atomic_update(T *p, F f) {
  static_assert(sizeof(T) == sizeof(U), "a word of the value's size");
  U *w = reinterpret_cast<U *>(p);
  U old = __atomic_load_n(w, __ATOMIC_RELAXED), next;
  T o, n;
  do {
    std::memcpy(&o, &old, sizeof o);
    n = f(o);
    std::memcpy(&next, &n, sizeof n);
  } while (!__atomic_compare_exchange_n(w, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return o;
}

} /* namespace __ncclsim_rt */

#define NCCLSIM_ATOMIC_SCOPES(ret, name, params, args) \
  static inline ret name##_block params { return name args; } \
  static inline ret name##_system params { return name args; }

/* ---- integers: the CPU's read-modify-writes ---- */
#define NCCLSIM_ATOMIC_INT(T)                                                                          \
  static inline T atomicAdd(T *a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_RELAXED); }         \
  static inline T atomicAnd(T *a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_RELAXED); }         \
  static inline T atomicOr(T *a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_RELAXED); }           \
  static inline T atomicXor(T *a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED); }         \
  static inline T atomicExch(T *a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_RELAXED); }        \
  static inline T atomicCAS(T *a, T compare, T v) {                                                   \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);           \
    return compare;                                                                                   \
  }                                                                                                   \
  static inline T atomicMin(T *a, T v) {                                                              \
    return __ncclsim_rt::atomic_update<T, T>(a, [v](T o) { return v < o ? v : o; });                  \
  }                                                                                                   \
  static inline T atomicMax(T *a, T v) {                                                              \
    return __ncclsim_rt::atomic_update<T, T>(a, [v](T o) { return v > o ? v : o; });                  \
  }                                                                                                   \
  NCCLSIM_ATOMIC_SCOPES(T, atomicAdd, (T * a, T v), (a, v))                                           \
  NCCLSIM_ATOMIC_SCOPES(T, atomicAnd, (T * a, T v), (a, v))                                           \
  NCCLSIM_ATOMIC_SCOPES(T, atomicOr, (T * a, T v), (a, v))                                            \
  NCCLSIM_ATOMIC_SCOPES(T, atomicXor, (T * a, T v), (a, v))                                           \
  NCCLSIM_ATOMIC_SCOPES(T, atomicExch, (T * a, T v), (a, v))                                          \
  NCCLSIM_ATOMIC_SCOPES(T, atomicCAS, (T * a, T c, T v), (a, c, v))                                   \
  NCCLSIM_ATOMIC_SCOPES(T, atomicMin, (T * a, T v), (a, v))                                           \
  NCCLSIM_ATOMIC_SCOPES(T, atomicMax, (T * a, T v), (a, v))

NCCLSIM_ATOMIC_INT(int)
NCCLSIM_ATOMIC_INT(unsigned int)
NCCLSIM_ATOMIC_INT(unsigned long long int)
NCCLSIM_ATOMIC_INT(long long int)
#undef NCCLSIM_ATOMIC_INT

static inline int atomicSub(int *a, int v) { return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED); }
static inline unsigned int atomicSub(unsigned int *a, unsigned int v) {
  return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED);
}
NCCLSIM_ATOMIC_SCOPES(int, atomicSub, (int *a, int v), (a, v))
NCCLSIM_ATOMIC_SCOPES(unsigned int, atomicSub, (unsigned int *a, unsigned int v), (a, v))

/* ((old >= val) ? 0 : old + 1), and ((old == 0 || old > val) ? val : old - 1) */
static inline unsigned int atomicInc(unsigned int *a, unsigned int val) {
  return __ncclsim_rt::atomic_update<unsigned int, unsigned int>(a, [val](unsigned int o) {
    return o >= val ? 0u : o + 1;
  });
}
static inline unsigned int atomicDec(unsigned int *a, unsigned int val) {
  return __ncclsim_rt::atomic_update<unsigned int, unsigned int>(a, [val](unsigned int o) {
    return o == 0 || o > val ? val : o - 1;
  });
}
NCCLSIM_ATOMIC_SCOPES(unsigned int, atomicInc, (unsigned int *a, unsigned int v), (a, v))
NCCLSIM_ATOMIC_SCOPES(unsigned int, atomicDec, (unsigned int *a, unsigned int v), (a, v))

static inline unsigned short int atomicCAS(unsigned short int *a, unsigned short int compare,
                                           unsigned short int v) {
  __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;
}
NCCLSIM_ATOMIC_SCOPES(unsigned short int, atomicCAS, (unsigned short int *a, unsigned short int c,
                                                      unsigned short int v), (a, c, v))

/* ---- floating point: compare-and-swap loops ---- */
static inline float atomicAdd(float *a, float v) {
  return __ncclsim_rt::atomic_update<float, uint32_t>(a, [v](float o) { return o + v; });
}
static inline double atomicAdd(double *a, double v) {
  return __ncclsim_rt::atomic_update<double, uint64_t>(a, [v](double o) { return o + v; });
}
static inline float atomicExch(float *a, float v) {
  return __ncclsim_rt::atomic_update<float, uint32_t>(a, [v](float) { return v; });
}
static inline __half atomicAdd(__half *a, __half v) {
  return __ncclsim_rt::atomic_update<__half, uint16_t>(a, [v](__half o) { return __hadd(o, v); });
}
static inline __half2 atomicAdd(__half2 *a, __half2 v) {
  return __ncclsim_rt::atomic_update<__half2, uint32_t>(
      a, [v](__half2 o) { return __half2(__hadd(o.x, v.x), __hadd(o.y, v.y)); });
}
static inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *a, __nv_bfloat16 v) {
  return __ncclsim_rt::atomic_update<__nv_bfloat16, uint16_t>(a, [v](__nv_bfloat16 o) { return __hadd(o, v); });
}
static inline __nv_bfloat162 atomicAdd(__nv_bfloat162 *a, __nv_bfloat162 v) {
  return __ncclsim_rt::atomic_update<__nv_bfloat162, uint32_t>(
      a, [v](__nv_bfloat162 o) { return __nv_bfloat162(__hadd(o.x, v.x), __hadd(o.y, v.y)); });
}
/* sm_90's vector forms: each element atomically (as CUDA says: not the
 * vector as one). */
static inline float2 atomicAdd(float2 *a, float2 v) {
  return make_float2(atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y));
}
static inline float4 atomicAdd(float4 *a, float4 v) {
  return make_float4(atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y), atomicAdd(&a->z, v.z), atomicAdd(&a->w, v.w));
}
NCCLSIM_ATOMIC_SCOPES(float, atomicAdd, (float *a, float v), (a, v))
NCCLSIM_ATOMIC_SCOPES(double, atomicAdd, (double *a, double v), (a, v))
NCCLSIM_ATOMIC_SCOPES(float, atomicExch, (float *a, float v), (a, v))
NCCLSIM_ATOMIC_SCOPES(__half, atomicAdd, (__half * a, __half v), (a, v))
NCCLSIM_ATOMIC_SCOPES(__half2, atomicAdd, (__half2 * a, __half2 v), (a, v))
NCCLSIM_ATOMIC_SCOPES(__nv_bfloat16, atomicAdd, (__nv_bfloat16 * a, __nv_bfloat16 v), (a, v))
NCCLSIM_ATOMIC_SCOPES(__nv_bfloat162, atomicAdd, (__nv_bfloat162 * a, __nv_bfloat162 v), (a, v))
NCCLSIM_ATOMIC_SCOPES(float2, atomicAdd, (float2 * a, float2 v), (a, v))
NCCLSIM_ATOMIC_SCOPES(float4, atomicAdd, (float4 * a, float4 v), (a, v))
#undef NCCLSIM_ATOMIC_SCOPES

#endif
