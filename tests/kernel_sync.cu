/* tests/kernel_sync.cu — a block's and a warp's built-ins on ncclsim:
 * __syncthreads and its counting forms, __syncwarp, the shuffles with
 * their widths, votes, matches and warp reductions, __activemask, the
 * cooperative groups of a block and a warp, loop ticks that let a spinning
 * thread's block go on. Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

static int *dev_ints(size_t n) {
  int *p = NULL;
  assert_int_equal(cudaMalloc(&p, n * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMemset(p, 0, n * sizeof(int)), cudaSuccess);
  return p;
}

static void to_host(int *h, const int *d, size_t n) {
  assert_int_equal(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
}

/* Each phase reads what the other threads wrote before the barrier. */
__global__ void barrier_phases(int *out, int phases) {
  __shared__ int cell[256];
  int t = threadIdx.x, n = blockDim.x;
  cell[t] = t;
  for (int p = 0; p < phases; p++) {
    __syncthreads();
    int v = cell[(t + 1) % n];
    __syncthreads();
    cell[t] = v;
  }
  __syncthreads();
  out[t] = cell[t];
}

__global__ void barrier_counts(int *out) {
  int t = threadIdx.x;
  out[0 * blockDim.x + t] = __syncthreads_count(t % 3 == 0);
  out[1 * blockDim.x + t] = __syncthreads_and(t < 1000);
  out[2 * blockDim.x + t] = __syncthreads_and(t != 17);
  out[3 * blockDim.x + t] = __syncthreads_or(t == 17);
  out[4 * blockDim.x + t] = __syncthreads_or(0);
}

static void test_syncthreads(void **state) {
  (void)state;
  int *d = dev_ints(5 * 256), h[5 * 256];
  barrier_phases<<<2, 256>>>(d, 5);
  assert_int_equal(launched(), cudaSuccess);
  to_host(h, d, 256);
  for (int t = 0; t < 256; t++) assert_int_equal(h[t], (t + 5) % 256);
  barrier_counts<<<1, 200>>>(d);
  to_host(h, d, 5 * 200);
  for (int t = 0; t < 200; t++) {
    assert_int_equal(h[t], 67);
    assert_int_equal(h[200 + t], 1);
    assert_int_equal(h[400 + t], 0);
    assert_int_equal(h[600 + t], 1);
    assert_int_equal(h[800 + t], 0);
  }
  cudaFree(d);
}

/* Threads that ended count as arrived at a barrier (as on a GPU since
 * Volta): half the block returns early. */
__global__ void early_exit(int *out) {
  if (threadIdx.x >= 64) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

static void test_barrier_after_exit(void **state) {
  (void)state;
  int *d = dev_ints(128), h[128];
  early_exit<<<1, 128>>>(d);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  to_host(h, d, 128);
  for (int t = 0; t < 128; t++) assert_int_equal(h[t], t < 64);
  cudaFree(d);
}

__global__ void shuffles(int *out, int width) {
  int l = threadIdx.x % 32, n = blockDim.x;
  int *o = out + threadIdx.x;
  o[0 * n] = __shfl_sync(0xffffffff, l * 10, 3, width);
  o[1 * n] = __shfl_up_sync(0xffffffff, l * 10, 2, width);
  o[2 * n] = __shfl_down_sync(0xffffffff, l * 10, 2, width);
  o[3 * n] = __shfl_xor_sync(0xffffffff, l * 10, 5, width);
  double dv = __shfl_sync(0xffffffff, l + 0.5, (l + 1) % 32);
  o[4 * n] = (int)(dv * 2);
  unsigned long long big = __shfl_down_sync(0xffffffff, (unsigned long long)l << 40, 1);
  o[5 * n] = (int)(big >> 40);
}

static void test_shuffles(void **state) {
  (void)state;
  int *d = dev_ints(6 * 64), h[6 * 64];
  for (int width = 32; width >= 4; width /= 2) {
    shuffles<<<1, 64>>>(d, width);
    to_host(h, d, 6 * 64);
    for (int t = 0; t < 64; t++) {
      int l = t % 32, base = l / width * width, in = l % width;
      assert_int_equal(h[t], (base + 3 % width) * 10);
      assert_int_equal(h[64 + t], in >= 2 ? (l - 2) * 10 : l * 10);
      assert_int_equal(h[128 + t], in + 2 < width ? (l + 2) * 10 : l * 10);
      int x = l ^ 5;
      assert_int_equal(h[192 + t], x / width > l / width ? l * 10 : x * 10);
      assert_int_equal(h[256 + t], ((l + 1) % 32) * 2 + 1);
      assert_int_equal(h[320 + t], l < 31 ? l + 1 : l);
    }
  }
  cudaFree(d);
}

__global__ void votes(int *out) {
  int l = threadIdx.x % 32, n = blockDim.x;
  int *o = out + threadIdx.x;
  o[0 * n] = (int)__ballot_sync(0xffffffff, l % 4 == 1);
  o[1 * n] = __any_sync(0xffffffff, l == 31);
  o[2 * n] = __all_sync(0xffffffff, l < 31);
  o[3 * n] = (int)__match_any_sync(0xffffffff, l / 8);
  int pred = -1;
  o[4 * n] = (int)__match_all_sync(0xffffffff, 7, &pred);
  o[5 * n] = pred;
  o[6 * n] = (int)__reduce_add_sync(0xffffffff, (unsigned)l);
  o[7 * n] = __reduce_min_sync(0xffffffff, 10 - l);
  o[8 * n] = __reduce_max_sync(0xffffffff, 10 - l);
  o[9 * n] = (int)__reduce_or_sync(0xffffffff, 1u << (l % 8));
  o[10 * n] = (int)__activemask();
}

static void test_votes(void **state) {
  (void)state;
  int *d = dev_ints(11 * 32), h[11 * 32];
  votes<<<1, 32>>>(d);
  to_host(h, d, 11 * 32);
  for (int t = 0; t < 32; t++) {
    assert_int_equal((unsigned)h[t], 0x22222222u);
    assert_int_equal(h[32 + t], 1);
    assert_int_equal(h[64 + t], 0);
    assert_int_equal((unsigned)h[96 + t], 0xffu << (t / 8 * 8));
    assert_int_equal((unsigned)h[128 + t], 0xffffffffu);
    assert_int_equal(h[160 + t], 1);
    assert_int_equal(h[192 + t], 31 * 32 / 2);
    assert_int_equal(h[224 + t], 10 - 31);
    assert_int_equal(h[256 + t], 10);
    assert_int_equal(h[288 + t], 0xff);
    assert_int_equal((unsigned)h[320 + t], 0xffffffffu);
  }
  cudaFree(d);
}

/* Lanes with disjoint masks exchange independently; a partial last warp
 * has only its lanes; lanes that ended leave __activemask. */
__global__ void partial_warp(int *out) {
  int l = threadIdx.x % 32;
  if (threadIdx.x >= 32) { /* the warp of 8 */
    out[threadIdx.x] = __reduce_add_sync(0xff, l) * 100 + (int)__activemask();
    return;
  }
  unsigned half = l < 16 ? 0x0000ffffu : 0xffff0000u;
  int v = __shfl_sync(half, l, 0, 16);
  if (l >= 24) return;
  __syncwarp(0x00ffffff);
  out[threadIdx.x] = v * 1000 + (int)__popc(__activemask());
}

static void test_partial_warps(void **state) {
  (void)state;
  int *d = dev_ints(40), h[40];
  partial_warp<<<1, 40>>>(d);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  to_host(h, d, 40);
  for (int t = 0; t < 24; t++) assert_int_equal(h[t], (t < 16 ? 0 : 16) * 1000 + 24);
  for (int t = 32; t < 40; t++) assert_int_equal(h[t], 28 * 100 + 0xff);
  cudaFree(d);
}

__global__ void groups(int *out) {
  cg::thread_block b = cg::this_thread_block();
  auto tile = cg::tiled_partition<8>(b);
  int *o = out + threadIdx.x, n = blockDim.x;
  o[0] = (int)b.thread_rank();
  o[n] = (int)b.size();
  o[2 * n] = cg::reduce(tile, (int)threadIdx.x, cg::plus<int>());
  o[3 * n] = cg::reduce(tile, (int)threadIdx.x, cg::greater<int>());
  o[4 * n] = (int)tile.thread_rank() * 100 + (int)tile.meta_group_rank();
  o[5 * n] = tile.shfl((int)threadIdx.x, 7);
  o[6 * n] = (int)tile.ballot(threadIdx.x % 2);
  b.sync();
  cg::thread_group dyn = cg::tiled_partition(b, 4);
  o[7 * n] = (int)dyn.thread_rank();
  dyn.sync();
  cg::coalesced_group c = cg::coalesced_threads();
  o[8 * n] = (int)c.size();
  cg::sync(b);
}

static void test_cooperative_groups(void **state) {
  (void)state;
  int *d = dev_ints(9 * 64), h[9 * 64];
  groups<<<1, 64>>>(d);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  to_host(h, d, 9 * 64);
  for (int t = 0; t < 64; t++) {
    int base = t / 8 * 8;
    assert_int_equal(h[t], t);
    assert_int_equal(h[64 + t], 64);
    assert_int_equal(h[128 + t], 8 * base + 28);
    assert_int_equal(h[192 + t], base + 7);
    assert_int_equal(h[256 + t], (t % 8) * 100 + t / 8);
    assert_int_equal(h[320 + t], base + 7);
    assert_int_equal(h[384 + t], 0xaa);
    assert_int_equal(h[448 + t], t % 4);
    assert_int_equal(h[512 + t], 32);
  }
  cudaFree(d);
}

/* Independent thread scheduling: a thread spins on a flag another thread
 * of its block sets later; the loop's ticks let that one run. */
__global__ void spin_on_sibling(volatile int *flag, int *out) {
  if (threadIdx.x == 0) {
    while (*flag == 0) {
    }
    out[0] = 1;
  } else if (threadIdx.x == blockDim.x - 1) {
    *flag = 1;
  }
}

static void test_spin_on_sibling(void **state) {
  (void)state;
  int *f = dev_ints(1), *o = dev_ints(1), h;
  spin_on_sibling<<<1, 64>>>(f, o);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  to_host(&h, o, 1);
  assert_int_equal(h, 1);
  cudaFree(f);
  cudaFree(o);
}

/* Outside a kernel, device code runs as lane 0 of a warp of one. */
static void test_host_calls(void **state) {
  (void)state;
  assert_int_equal(__shfl_sync(1, 42, 0), 42);
  assert_int_equal(__ballot_sync(1, 1), 1);
  assert_int_equal(__syncthreads_count(1), 1);
  __syncwarp();
  assert_int_equal(__activemask(), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_syncthreads),     cmocka_unit_test(test_barrier_after_exit),
      cmocka_unit_test(test_shuffles),        cmocka_unit_test(test_votes),
      cmocka_unit_test(test_partial_warps),   cmocka_unit_test(test_cooperative_groups),
      cmocka_unit_test(test_spin_on_sibling), cmocka_unit_test(test_host_calls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
