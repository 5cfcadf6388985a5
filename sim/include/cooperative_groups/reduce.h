/*
 * cooperative_groups/reduce.h — ncclsim: cooperative_groups::reduce over a
 * tile of up to a warp, and its operators (plus, less, greater, bit_and,
 * bit_or, bit_xor). Every thread of the tile gets the result.
 */
#ifndef NCCLSIM_COOPERATIVE_GROUPS_REDUCE_H_
#define NCCLSIM_COOPERATIVE_GROUPS_REDUCE_H_

#include <cooperative_groups.h>

namespace cooperative_groups {

template <class T>
struct plus {
  T operator()(const T &a, const T &b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(const T &a, const T &b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(const T &a, const T &b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(const T &a, const T &b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(const T &a, const T &b) const { return a ^ b; }
};

/* A butterfly: after log2(size) exchanges every lane holds the whole. */
template <class Tile, class T, class Op>
static inline T reduce(const Tile &tile, T value, Op op) {
  for (unsigned d = 1; d < tile.num_threads(); d <<= 1) value = op(value, tile.shfl_xor(value, d));
  return value;
}

} /* namespace cooperative_groups */

#endif
