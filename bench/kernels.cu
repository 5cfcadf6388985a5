/* bench/kernels.cu — CUDA kernels on ncclsim, each figure against a peer
 * measured in the same run:
 *   launch       an empty <<<1,1>>> launch and its stream synchronize,
 *                against cudaLaunchHostFunc and its synchronize (target:
 *                at most 2x);
 *   syncthreads  one __syncthreads of a 512-thread block, per thread,
 *                against a bare switch of Boost.Context (the library the
 *                fibers switch with) between two fibers, and around a
 *                ring of 512 fibers on stacks of their own (what the
 *                memory system charges a switch to another stack);
 *   copy         a grid-stride copy kernel (16 blocks of 512 threads, 16-byte
 *                elements) against memcpy of the same bytes (target: at
 *                least 0.25x), and against the same copy in plain C in
 *                the order ncclsim runs it (what that order costs);
 *   memory       a 16 x 512 kernel at 4 ranks (devices), every thread alive
 *                at once (a barrier loop): the resident memory it adds, per
 *                rank (target: at most 64 MiB).
 * Each figure is a median over `reps` repeats, with its spread.
 *   kernels [reps=5] [copy_mib=64]
 * Built by ncclsim-nvcc (bench/local.mk). */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

static double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct stats {
  double median, min, max;
};
static stats of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "kernels: %s: %s\n", what, cudaGetErrorString(e));
    exit(1);
  }
}

__global__ void empty() {}
static void noop(void *) {}

static void bench_launch(int reps) {
  cudaStream_t s;
  check(cudaStreamCreate(&s), "stream");
  const int n = 2000;
  std::vector<double> k, h, r;
  for (int rep = 0; rep < reps; rep++) {
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
      empty<<<1, 1, 0, s>>>();
      cudaStreamSynchronize(s);
    }
    double t1 = now_s();
    for (int i = 0; i < n; i++) {
      cudaLaunchHostFunc(s, noop, nullptr);
      cudaStreamSynchronize(s);
    }
    double t2 = now_s();
    k.push_back((t1 - t0) / n * 1e6);
    h.push_back((t2 - t1) / n * 1e6);
    r.push_back((t1 - t0) / (t2 - t1));
  }
  check(cudaGetLastError(), "launch");
  stats sk = of(k), sh = of(h), sr = of(r);
  printf("bench=kernels test=launch launch_us=%.3f hostfn_us=%.3f ratio_median=%.3f ratio_min=%.3f ratio_max=%.3f "
         "target_max=2 reps=%d\n",
         sk.median, sh.median, sr.median, sr.min, sr.max, reps);
  cudaStreamDestroy(s);
}

/* Boost.Context's C entry points, as ncclsim's fibers use them. */
extern "C" {
typedef void *fcontext_t;
struct transfer_t {
  fcontext_t fctx;
  void *data;
};
transfer_t jump_fcontext(fcontext_t const to, void *vp);
fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));
}

static void bouncer(transfer_t t) {
  for (;;) t = jump_fcontext(t.fctx, nullptr);
}

/* ns per one-way switch: a ping-pong of n round trips. */
static double bare_switch_ns(int n) {
  static char stack[64 * 1024];
  fcontext_t f = make_fcontext(stack + sizeof stack, sizeof stack, bouncer);
  transfer_t t = jump_fcontext(f, nullptr);
  double t0 = now_s();
  for (int i = 0; i < n; i++) t = jump_fcontext(t.fctx, nullptr);
  return (now_s() - t0) / (2.0 * n) * 1e9;
}

/* ns per switch around a ring of n fibers, each on a stack of its own
 * (what a barrier of n threads costs the memory system: every switch
 * lands on another stack). */
static fcontext_t ring_ctx[1024];
static int ring_cur, ring_n;
static long ring_left;
static fcontext_t ring_home;
static void ring_fn(transfer_t t) {
  for (;;) {
    int from = (int)(intptr_t)t.data;
    if (from >= 0) ring_ctx[from] = t.fctx;
    else ring_home = t.fctx;
    if (--ring_left <= 0) t = jump_fcontext(ring_home, (void *)(intptr_t)ring_cur);
    int me = ring_cur;
    ring_cur = (me + 1) % ring_n;
    t = jump_fcontext(ring_ctx[ring_cur], (void *)(intptr_t)me);
  }
}
static double ring_switch_ns(int n, long switches) {
  const size_t stack = 64 * 1024;
  std::vector<char> mem((size_t)n * stack);
  for (int i = 0; i < n; i++) ring_ctx[i] = make_fcontext(&mem[(size_t)(i + 1) * stack], stack, ring_fn);
  ring_n = n;
  ring_cur = 0;
  ring_left = switches;
  double t0 = now_s();
  jump_fcontext(ring_ctx[0], (void *)(intptr_t)-1);
  return (now_s() - t0) / (double)switches * 1e9;
}

__global__ void barriers(int k) {
  for (int i = 0; i < k; i++) __syncthreads();
}

static void bench_syncthreads(int reps) {
  const int threads = 512, k = 200;
  std::vector<double> b, f, g, r, q;
  for (int rep = 0; rep < reps; rep++) {
    double t0 = now_s();
    barriers<<<1, threads>>>(k);
    check(cudaDeviceSynchronize(), "barriers");
    double t1 = now_s();
    barriers<<<1, threads>>>(0);
    check(cudaDeviceSynchronize(), "no barriers");
    double t2 = now_s();
    double per = ((t1 - t0) - (t2 - t1)) / ((double)k * threads) * 1e9;
    double sw = bare_switch_ns(100000);
    double ring = ring_switch_ns(threads, (long)threads * k);
    b.push_back(per);
    f.push_back(sw);
    g.push_back(ring);
    r.push_back(per / sw);
    q.push_back(per / ring);
  }
  stats sb = of(b), sf = of(f), sg = of(g), sr = of(r), sq = of(q);
  printf("bench=kernels test=syncthreads threads=%d barrier_ns_per_thread=%.2f fiber_switch_ns=%.2f "
         "ratio_median=%.3f ratio_min=%.3f ratio_max=%.3f ring_switch_ns=%.2f ratio_to_ring_median=%.3f "
         "ratio_to_ring_min=%.3f ratio_to_ring_max=%.3f reps=%d\n",
         threads, sb.median, sf.median, sr.median, sr.min, sr.max, sg.median, sq.median, sq.min, sq.max, reps);
}

__global__ void gridcopy(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) dst[i] = src[i];
}

/* The same copy in the order ncclsim runs it, in plain C: the blocks one
 * after another; in a block, each thread in turn runs a tick (1024
 * iterations) of its grid-stride loop, round after round. What this
 * order costs the memory system bounds the kernel, fibers or not. */
static void copy_in_order(const int4 *src, int4 *dst, size_t n, unsigned blocks, unsigned threads) {
  size_t stride = (size_t)blocks * threads;
  std::vector<size_t> pos(threads);
  for (unsigned b = 0; b < blocks; b++) {
    for (unsigned t = 0; t < threads; t++) pos[t] = (size_t)b * threads + t;
    for (bool left = true; left;) {
      left = false;
      for (unsigned t = 0; t < threads; t++) {
        size_t i = pos[t];
        for (int k = 0; k < 1024 && i < n; k++, i += stride) dst[i] = src[i];
        pos[t] = i;
        left |= i < n;
      }
    }
  }
}

static void bench_copy(int reps, size_t mib) {
  size_t bytes = mib << 20, n = bytes / sizeof(int4);
  int4 *src, *dst;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&dst, bytes), "malloc");
  memset(src, 1, bytes); /* ncclsim's device memory is the host's */
  memset(dst, 0, bytes);
  std::vector<double> k, m, o, r, q;
  gridcopy<<<16, 512>>>(src, dst, n); /* warm */
  check(cudaDeviceSynchronize(), "copy");
  for (int rep = 0; rep < reps; rep++) {
    double t0 = now_s();
    gridcopy<<<16, 512>>>(src, dst, n);
    check(cudaDeviceSynchronize(), "copy");
    double t1 = now_s();
    memcpy(dst, src, bytes);
    double t2 = now_s();
    copy_in_order(src, dst, n, 16, 512);
    double t3 = now_s();
    k.push_back(bytes / (t1 - t0) / 1e9);
    m.push_back(bytes / (t2 - t1) / 1e9);
    o.push_back(bytes / (t3 - t2) / 1e9);
    r.push_back((t2 - t1) / (t1 - t0));
    q.push_back((t3 - t2) / (t1 - t0));
  }
  stats sk = of(k), sm = of(m), so = of(o), sr = of(r), sq = of(q);
  printf("bench=kernels test=copy blocks=16 threads=512 mib=%zu kernel_gbs=%.2f memcpy_gbs=%.2f ratio_median=%.3f "
         "ratio_min=%.3f ratio_max=%.3f target_min=0.25 order_gbs=%.2f ratio_to_order_median=%.3f "
         "ratio_to_order_min=%.3f ratio_to_order_max=%.3f reps=%d\n",
         mib, sk.median, sm.median, sr.median, sr.min, sr.max, so.median, sq.median, sq.min, sq.max, reps);
  cudaFree(src);
  cudaFree(dst);
}

static long rss_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, n)) v = atol(line + n + 1);
  if (f) fclose(f);
  return v;
}

__global__ void alive(int k) {
  __shared__ int s[512];
  for (int i = 0; i < k; i++) {
    s[threadIdx.x] = i;
    __syncthreads();
  }
}

static void bench_memory() {
  const int ranks = 4;
  /* the streams and their workers first, so that their own memory is not
   * the kernels' */
  std::vector<cudaStream_t> s(ranks);
  for (int r = 0; r < ranks; r++) {
    check(cudaSetDevice(r), "device");
    check(cudaStreamCreate(&s[r]), "stream");
    cudaLaunchHostFunc(s[r], noop, nullptr);
    check(cudaStreamSynchronize(s[r]), "sync");
  }
  long before = rss_kib("VmHWM:");
  for (int r = 0; r < ranks; r++) {
    cudaSetDevice(r);
    alive<<<16, 512, 0, s[r]>>>(50);
  }
  for (int r = 0; r < ranks; r++) {
    cudaSetDevice(r);
    check(cudaStreamSynchronize(s[r]), "alive");
  }
  long after = rss_kib("VmHWM:");
  printf("bench=kernels test=memory ranks=%d blocks=16 threads=512 rss_per_rank_mib=%.2f target_max=64\n", ranks,
         (after - before) / 1024.0 / ranks);
  for (int r = 0; r < ranks; r++) cudaStreamDestroy(s[r]);
  cudaSetDevice(0);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 64;
  if (reps < 1 || mib < 1) {
    fprintf(stderr, "usage: kernels [reps>=1] [copy_mib>=1]\n");
    return 2;
  }
  bench_memory(); /* first: before other buffers raise the peak */
  bench_launch(reps);
  bench_syncthreads(reps);
  bench_copy(reps, mib);
  return 0;
}
