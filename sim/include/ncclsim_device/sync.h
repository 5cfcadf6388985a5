/*
 * ncclsim_device/sync.h — a block's and a warp's synchronization: barriers,
 * warp shuffles, votes, matches and reductions, memory fences, clocks.
 *
 * A warp exchange waits, as on a GPU since Volta, until every lane its
 * mask names has called the same function with the same mask; then each
 * lane gets its result. A lane that the mask names and that has ended, or
 * lanes that disagree on the call or the mask, end the kernel with a
 * report (on a GPU: undefined behaviour). Outside a kernel (a host thread
 * calling device code) the calling thread is lane 0 of a warp of one.
 */
#ifndef NCCLSIM_DEVICE_SYNC_H_
#define NCCLSIM_DEVICE_SYNC_H_

#if defined(__NCCLSIM_PARSE__) /* not clang's builtin, which device code alone may call */
#define __syncthreads() __ncclsim_syncthreads(0, 0)
#else
static inline void __syncthreads(void) { __ncclsim_syncthreads(0, 0); }
#endif
static inline int __syncthreads_count(int predicate) { return __ncclsim_syncthreads(1, predicate); }
static inline int __syncthreads_and(int predicate) { return __ncclsim_syncthreads(2, predicate); }
static inline int __syncthreads_or(int predicate) { return __ncclsim_syncthreads(3, predicate); }

static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static inline unsigned __activemask(void) { return __ncclsim_activemask(); }

namespace __ncclsim_rt {

template <class T>
static inline uint64_t to_bits(const T &v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                "warp exchanges move values of at most 64 bits");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
static inline T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

/* Each lane's argument: the shuffle's width above, its lane or delta below. */
static inline uint64_t shfl_arg(int width, unsigned x) { return (uint64_t)(unsigned)width << 32 | x; }
static inline unsigned width_of(uint64_t a) {
  unsigned w = (unsigned)(a >> 32);
  return w == 0 || w > 32 || (w & (w - 1)) ? 32 : w;
}

inline uint64_t w_none(const uint64_t *, const uint64_t *, unsigned, unsigned) { return 0; }
inline uint64_t w_idx(const uint64_t *v, const uint64_t *a, unsigned mask, unsigned lane) {
  unsigned w = width_of(a[lane]), src = (lane & ~(w - 1)) + ((unsigned)a[lane] & (w - 1));
  return mask >> src & 1 ? v[src] : v[lane];
}
inline uint64_t w_up(const uint64_t *v, const uint64_t *a, unsigned mask, unsigned lane) {
  unsigned w = width_of(a[lane]), d = (unsigned)a[lane];
  unsigned src = (lane & (w - 1)) >= d ? lane - d : lane;
  return mask >> src & 1 ? v[src] : v[lane];
}
inline uint64_t w_down(const uint64_t *v, const uint64_t *a, unsigned mask, unsigned lane) {
  unsigned w = width_of(a[lane]), d = (unsigned)a[lane];
  unsigned src = (lane & (w - 1)) + d < w ? lane + d : lane;
  return mask >> src & 1 ? v[src] : v[lane];
}
/* A lane of a later group of `width` lanes gives the caller its own value. */
inline uint64_t w_xor(const uint64_t *v, const uint64_t *a, unsigned mask, unsigned lane) {
  unsigned w = width_of(a[lane]), src = lane ^ ((unsigned)a[lane] & 31);
  if (src / w > lane / w) src = lane;
  return mask >> src & 1 ? v[src] : v[lane];
}
inline uint64_t w_ballot(const uint64_t *v, const uint64_t *, unsigned mask, unsigned) {
  uint64_t r = 0;
  for (unsigned l = 0; l < 32; l++)
    if ((mask >> l & 1) && v[l]) r |= 1u << l;
  return r;
}
inline uint64_t w_match_any(const uint64_t *v, const uint64_t *, unsigned mask, unsigned lane) {
  uint64_t r = 0;
  for (unsigned l = 0; l < 32; l++)
    if ((mask >> l & 1) && v[l] == v[lane]) r |= 1u << l;
  return r;
}
inline uint64_t w_match_all(const uint64_t *v, const uint64_t *, unsigned mask, unsigned lane) {
  for (unsigned l = 0; l < 32; l++)
    if ((mask >> l & 1) && v[l] != v[lane]) return 0;
  return mask;
}
template <int op, bool is_signed>
inline uint64_t w_reduce(const uint64_t *v, const uint64_t *, unsigned mask, unsigned) {
  uint32_t r = op == 1 ? 0xffffffffu : 0; /* and: all ones */
  bool first = true;
  for (unsigned l = 0; l < 32; l++) {
    if (!(mask >> l & 1)) continue;
    uint32_t x = (uint32_t)v[l];
    switch (op) {
    case 0: r += x; break;
    case 1: r &= x; break;
    case 2: r |= x; break;
    case 3: r ^= x; break;
    case 4: r = first || (is_signed ? (int32_t)x < (int32_t)r : x < r) ? x : r; break;
    case 5: r = first || (is_signed ? (int32_t)x > (int32_t)r : x > r) ? x : r; break;
    }
    first = false;
  }
  return r;
}

} /* namespace __ncclsim_rt */

static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  __ncclsim_warp_sync(mask, 0, __ncclsim_rt::w_none, 0, "__syncwarp");
}

template <class T>
static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  return __ncclsim_rt::from_bits<T>(__ncclsim_warp_sync(mask, __ncclsim_rt::to_bits(var), __ncclsim_rt::w_idx,
                                                        __ncclsim_rt::shfl_arg(width, (unsigned)srcLane),
                                                        "__shfl_sync"));
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned int delta, int width = warpSize) {
  return __ncclsim_rt::from_bits<T>(__ncclsim_warp_sync(mask, __ncclsim_rt::to_bits(var), __ncclsim_rt::w_up,
                                                        __ncclsim_rt::shfl_arg(width, delta), "__shfl_up_sync"));
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned int delta, int width = warpSize) {
  return __ncclsim_rt::from_bits<T>(__ncclsim_warp_sync(mask, __ncclsim_rt::to_bits(var), __ncclsim_rt::w_down,
                                                        __ncclsim_rt::shfl_arg(width, delta), "__shfl_down_sync"));
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  return __ncclsim_rt::from_bits<T>(__ncclsim_warp_sync(mask, __ncclsim_rt::to_bits(var), __ncclsim_rt::w_xor,
                                                        __ncclsim_rt::shfl_arg(width, (unsigned)laneMask),
                                                        "__shfl_xor_sync"));
}

static inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return (unsigned)__ncclsim_warp_sync(mask, predicate != 0, __ncclsim_rt::w_ballot, 0, "__ballot_sync");
}
static inline int __any_sync(unsigned mask, int predicate) {
  return __ncclsim_warp_sync(mask, predicate != 0, __ncclsim_rt::w_ballot, 0, "__any_sync") != 0;
}
static inline int __all_sync(unsigned mask, int predicate) {
  return __ncclsim_warp_sync(mask, predicate != 0, __ncclsim_rt::w_ballot, 0, "__all_sync") == mask;
}
static inline int __uni_sync(unsigned mask, int predicate) {
  uint64_t b = __ncclsim_warp_sync(mask, predicate != 0, __ncclsim_rt::w_ballot, 0, "__uni_sync");
  return b == 0 || b == mask;
}

template <class T>
static inline unsigned __match_any_sync(unsigned mask, T value) {
  return (unsigned)__ncclsim_warp_sync(mask, __ncclsim_rt::to_bits(value), __ncclsim_rt::w_match_any, 0,
                                       "__match_any_sync");
}
template <class T>
static inline unsigned __match_all_sync(unsigned mask, T value, int *pred) {
  unsigned r = (unsigned)__ncclsim_warp_sync(mask, __ncclsim_rt::to_bits(value), __ncclsim_rt::w_match_all, 0,
                                             "__match_all_sync");
  *pred = r != 0;
  return r;
}

static inline unsigned __reduce_add_sync(unsigned mask, unsigned value) {
  return (unsigned)__ncclsim_warp_sync(mask, value, __ncclsim_rt::w_reduce<0, false>, 0, "__reduce_add_sync");
}
static inline int __reduce_add_sync(unsigned mask, int value) {
  return (int)(uint32_t)__ncclsim_warp_sync(mask, (uint32_t)value, __ncclsim_rt::w_reduce<0, true>, 0,
                                            "__reduce_add_sync");
}
static inline unsigned __reduce_min_sync(unsigned mask, unsigned value) {
  return (unsigned)__ncclsim_warp_sync(mask, value, __ncclsim_rt::w_reduce<4, false>, 0, "__reduce_min_sync");
}
static inline int __reduce_min_sync(unsigned mask, int value) {
  return (int)(uint32_t)__ncclsim_warp_sync(mask, (uint32_t)value, __ncclsim_rt::w_reduce<4, true>, 0,
                                            "__reduce_min_sync");
}
static inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  return (unsigned)__ncclsim_warp_sync(mask, value, __ncclsim_rt::w_reduce<5, false>, 0, "__reduce_max_sync");
}
static inline int __reduce_max_sync(unsigned mask, int value) {
  return (int)(uint32_t)__ncclsim_warp_sync(mask, (uint32_t)value, __ncclsim_rt::w_reduce<5, true>, 0,
                                            "__reduce_max_sync");
}
static inline unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return (unsigned)__ncclsim_warp_sync(mask, value, __ncclsim_rt::w_reduce<1, false>, 0, "__reduce_and_sync");
}
static inline unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return (unsigned)__ncclsim_warp_sync(mask, value, __ncclsim_rt::w_reduce<2, false>, 0, "__reduce_or_sync");
}
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return (unsigned)__ncclsim_warp_sync(mask, value, __ncclsim_rt::w_reduce<3, false>, 0, "__reduce_xor_sync");
}

/* Clocks: the CPU's cycle counter stands for the SM's. */
static inline long long int clock64(void) {
#if defined(__x86_64__) || defined(__i386__)
  return (long long int)__builtin_ia32_rdtsc();
#else
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long int)t.tv_sec * 1000000000LL + t.tv_nsec;
#endif
}

/* A poll's pause: the block's other threads run meanwhile. */
static inline void __nanosleep(unsigned int ns) {
  (void)ns;
  __ncclsim_yield("__nanosleep");
}

static inline void __trap(void) { __ncclsim_trap("__trap()"); }
static inline void __brkpt(void) { __ncclsim_trap("__brkpt()"); }
static inline void __prof_trigger(int counter) { (void)counter; }

#endif
