/*
 * ncclsim_device/ptx.h — what ncclsim's driver turns inline PTX into
 * (sim/nvcc/ptx.c): loads and stores with PTX's memory orders, reductions
 * and atomics on memory, fences, the special registers device code reads.
 *
 * A .volatile or .relaxed access is a relaxed atomic one here, .acquire and
 * .release the C++ orders of those names: what PTX's memory model gives
 * them between threads. A weak access is a plain one.
 */
#ifndef NCCLSIM_DEVICE_PTX_H_
#define NCCLSIM_DEVICE_PTX_H_

#include <ctime>

namespace __ncclsim_ptx {

enum order { WEAK, VOLATILE, RELAXED, ACQUIRE, RELEASE, ACQ_REL, SEQ_CST };
enum op { OP_add, OP_min, OP_max, OP_and, OP_or, OP_xor, OP_inc, OP_dec, OP_exch };

static constexpr int gcc_order(order o) {
  return o == ACQUIRE ? __ATOMIC_ACQUIRE
         : o == RELEASE ? __ATOMIC_RELEASE
         : o == ACQ_REL ? __ATOMIC_ACQ_REL
         : o == SEQ_CST ? __ATOMIC_SEQ_CST
                        : __ATOMIC_RELAXED;
}

/* An operand as the instruction's type: pointers as addresses, a float in
 * an integer register (or back) by its bits, else converted. */
template <class T, class S>
static inline T get(const S &s) {
  if constexpr (std::is_pointer<S>::value) {
    return (T)(uintptr_t)s;
  } else if constexpr (sizeof(S) == sizeof(T) && std::is_floating_point<S>::value != std::is_floating_point<T>::value) {
    T t;
    std::memcpy(&t, &s, sizeof t);
    return t;
  } else {
    return static_cast<T>(s);
  }
}
template <class D, class V>
static inline void put(D &d, V v) {
  if constexpr (std::is_pointer<D>::value) {
    d = (D)(uintptr_t)v;
  } else if constexpr (sizeof(D) == sizeof(V) && std::is_floating_point<D>::value != std::is_floating_point<V>::value) {
    std::memcpy(&d, &v, sizeof d);
  } else {
    d = static_cast<D>(v);
  }
}

template <class T, order O>
static inline T ld(const void *p) {
  T v;
  if (O == WEAK) std::memcpy(&v, p, sizeof v);
  else __atomic_load(static_cast<const T *>(p), &v, gcc_order(O));
  return v;
}
template <class T, order O>
static inline void st(void *p, T v) {
  if (O == WEAK) std::memcpy(p, &v, sizeof v);
  else __atomic_store(static_cast<T *>(p), &v, gcc_order(O));
}

template <op OP, class T>
static inline T apply(T old, T v) {
  switch (OP) {
  case OP_add: return (T)(old + v);
  case OP_min: return v < old ? v : old;
  case OP_max: return v > old ? v : old;
  case OP_inc: return old >= v ? (T)0 : (T)(old + 1);
  case OP_dec: return old == 0 || old > v ? v : (T)(old - 1);
  case OP_exch: return v;
  default: break;
  }
  if constexpr (std::is_integral<T>::value) {
    switch (OP) {
    case OP_and: return old & v;
    case OP_or: return old | v;
    case OP_xor: return old ^ v;
    default: break;
    }
  }
  return v;
}

/* A read-modify-write; returns the old value. */
template <op OP, class T, order O>
static inline T atom(void *p, T v) {
  T *a = static_cast<T *>(p);
  T old;
  __atomic_load(a, &old, __ATOMIC_RELAXED);
  T next = apply<OP, T>(old, v);
  while (!__atomic_compare_exchange(a, &old, &next, true, gcc_order(O), __ATOMIC_RELAXED))
    next = apply<OP, T>(old, v);
  return old;
}
template <class T, order O>
static inline T atom_cas(void *p, T compare, T v) {
  __atomic_compare_exchange(static_cast<T *>(p), &compare, &v, false, gcc_order(O), __ATOMIC_RELAXED);
  return compare;
}

static inline void fence(order o) { __atomic_thread_fence(gcc_order(o)); }

static inline unsigned laneid(void) { return __ncclsim_self ? __ncclsim_self->lane : 0; }
static inline unsigned warpid(void) { return __ncclsim_self ? __ncclsim_self->warp : 0; }
static inline unsigned nwarpid(void) { return 64; }
static inline unsigned smid(void) { return 0; }
static inline unsigned nsmid(void) { return 132; }
/* %lanemask_eq, _lt, _le, _gt, _ge */
static inline unsigned lanemask(int which) {
  unsigned l = laneid(), eq = 1u << l, lt = eq - 1, le = lt | eq;
  switch (which) {
  case 0: return eq;
  case 1: return lt;
  case 2: return le;
  case 3: return ~le;
  default: return ~lt;
  }
}
static inline unsigned clock32(void) { return (unsigned)clock64(); }
static inline unsigned long long globaltimer(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

} /* namespace __ncclsim_ptx */

#endif
