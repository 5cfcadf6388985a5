/*
 * cooperative_groups.h — ncclsim: the part of CUDA's cooperative groups
 * that block- and warp-level code uses: this_thread_block, this_grid (a
 * cooperative launch's), tiled_partition (static tiles of up to a warp,
 * and dynamic ones), coalesced_threads, their sync, ranks and sizes, and a
 * tile's shuffles and votes; cooperative_groups/reduce.h adds reduce.
 *
 * Built on ncclsim's device built-ins (ncclsim_device/sync.h), for code
 * compiled by ncclsim's driver.
 */
#ifndef NCCLSIM_COOPERATIVE_GROUPS_H_
#define NCCLSIM_COOPERATIVE_GROUPS_H_

#include <cuda_runtime.h>

namespace cooperative_groups {

namespace details {
static inline unsigned block_rank(void) {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static inline unsigned block_size(void) { return blockDim.x * blockDim.y * blockDim.z; }
static inline unsigned lane(void) { return block_rank() % 32; }
} /* namespace details */

class thread_group {
 public:
  /* A group of `size` consecutive threads of the block (tiled_partition). */
  thread_group(unsigned size, unsigned rank) : size_(size), rank_(rank) {}
  unsigned long long size() const { return size_; }
  unsigned long long num_threads() const { return size_; }
  unsigned long long thread_rank() const { return rank_; }
  unsigned long long meta_group_rank() const { return details::block_rank() / size_; }
  unsigned long long meta_group_size() const { return (details::block_size() + size_ - 1) / size_; }
  bool is_valid() const { return size_ != 0; }
  void sync() const {
    if (size_ <= 32) __syncwarp(mask());
    else __syncthreads(); /* larger dynamic tiles: the block's barrier (every tile must reach it) */
  }
  unsigned mask() const {
    unsigned base = details::lane() / size_ * size_ % 32;
    return size_ >= 32 ? 0xffffffffu : ((1u << size_) - 1) << base;
  }

 protected:
  unsigned size_, rank_;
};

class thread_block : public thread_group {
 public:
  thread_block() : thread_group(details::block_size(), details::block_rank()) {}
  void sync() const { __syncthreads(); }
  dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
  dim3 dim_threads() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
  dim3 group_dim() const { return dim_threads(); }
};

static inline thread_block this_thread_block(void) { return thread_block(); }

class grid_group {
 public:
  bool is_valid() const { return true; }
  void sync() const { __ncclsim_grid_sync(); }
  unsigned long long size() const { return num_threads(); }
  unsigned long long num_threads() const {
    return (unsigned long long)num_blocks() * details::block_size();
  }
  unsigned long long thread_rank() const { return (unsigned long long)block_rank() * details::block_size() + details::block_rank(); }
  unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
  unsigned long long block_rank() const {
    return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  }
  dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
  dim3 dim_blocks() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
  dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
};

static inline grid_group this_grid(void) { return grid_group(); }

/* A static tile of Size (a power of two, at most 32) consecutive threads. */
template <unsigned Size, class Parent = void>
class thread_block_tile : public thread_group {
  static_assert(Size > 0 && Size <= 32 && (Size & (Size - 1)) == 0,
                "ncclsim: tiles of a power of two up to 32 threads");

 public:
  thread_block_tile() : thread_group(Size, details::block_rank() % Size) {}
  static constexpr unsigned long long size() { return Size; }
  static constexpr unsigned long long num_threads() { return Size; }
  unsigned long long thread_rank() const { return details::block_rank() % Size; }
  void sync() const { __syncwarp(mask()); }
  template <class T>
  T shfl(T var, unsigned src) const { return __shfl_sync(mask(), var, (int)src, Size); }
  template <class T>
  T shfl_up(T var, unsigned delta) const { return __shfl_up_sync(mask(), var, delta, Size); }
  template <class T>
  T shfl_down(T var, unsigned delta) const { return __shfl_down_sync(mask(), var, delta, Size); }
  template <class T>
  T shfl_xor(T var, unsigned lane_mask) const { return __shfl_xor_sync(mask(), var, (int)lane_mask, Size); }
  int any(int pred) const { return __any_sync(mask(), pred); }
  int all(int pred) const { return __all_sync(mask(), pred); }
  unsigned ballot(int pred) const { return __ballot_sync(mask(), pred) >> (details::lane() / Size * Size); }
  template <class T>
  unsigned match_any(T v) const { return __match_any_sync(mask(), v) >> (details::lane() / Size * Size); }
  template <class T>
  unsigned match_all(T v, int &pred) const { return __match_all_sync(mask(), v, &pred) >> (details::lane() / Size * Size); }
};

template <unsigned Size, class Parent>
static inline thread_block_tile<Size, Parent> tiled_partition(const Parent &) {
  return thread_block_tile<Size, Parent>();
}

/* A dynamic tile: size threads of the parent (a power of two). */
static inline thread_group tiled_partition(const thread_group &parent, unsigned size) {
  (void)parent;
  return thread_group(size, details::block_rank() % size);
}

/* The warp's threads that are running together: on ncclsim, the lanes of
 * the warp that have not ended. */
class coalesced_group : public thread_group {
 public:
  coalesced_group() : thread_group(__popc(__activemask()), __popc(__activemask() & ((1u << details::lane()) - 1))) {
    m_ = __activemask();
  }
  void sync() const { __syncwarp(m_); }
  unsigned mask() const { return m_; }
  unsigned ballot(int pred) const { return __ballot_sync(m_, pred); }
  int any(int pred) const { return __any_sync(m_, pred); }
  int all(int pred) const { return __all_sync(m_, pred); }
  /* src: a rank in the group, which names the src-th active lane. */
  template <class T>
  T shfl(T var, unsigned src) const {
    unsigned m = m_, lane = 0;
    for (unsigned r = 0; m; r++, m &= m - 1)
      if (r == src) {
        lane = (unsigned)__ffs((int)m) - 1;
        break;
      }
    return __shfl_sync(m_, var, (int)lane);
  }

 private:
  unsigned m_;
};

static inline coalesced_group coalesced_threads(void) { return coalesced_group(); }

template <class Group>
static inline void sync(const Group &g) {
  g.sync();
}

} /* namespace cooperative_groups */

#endif
