// warp_primitives.cu — shuffles, votes and a tile's reduction with
// cooperative groups.
#include <cstdio>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void warp_ops(int *out) {
  int lane = threadIdx.x % 32;
  int v = lane + 1;
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffff, v, d);
  unsigned odd = __ballot_sync(0xffffffff, lane % 2);
  int any31 = __any_sync(0xffffffff, lane == 31);
  int all_small = __all_sync(0xffffffff, lane < 31);
  int up = __shfl_up_sync(0xffffffff, lane, 1);
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  int tile_max = cg::reduce(tile, lane, cg::greater<int>());
  if (threadIdx.x < 32) {
    out[lane * 6 + 0] = v;
    out[lane * 6 + 1] = (int)odd;
    out[lane * 6 + 2] = any31;
    out[lane * 6 + 3] = all_small;
    out[lane * 6 + 4] = up;
    out[lane * 6 + 5] = tile_max;
  }
}

int main() {
  int *d, h[32 * 6];
  cudaMalloc(&d, sizeof h);
  warp_ops<<<1, 64>>>(d);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int lane = 0; lane < 32; lane += 7)
    printf("lane %2d: sum %d ballot %08x any %d all %d up %d tilemax %d\n", lane, h[lane * 6], (unsigned)h[lane * 6 + 1],
           h[lane * 6 + 2], h[lane * 6 + 3], h[lane * 6 + 4], h[lane * 6 + 5]);
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
