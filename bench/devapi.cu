/* bench/devapi.cu — NCCL's device API on ncclsim (sim/dev/), each figure
 * against a peer measured in the same run, at 2 ranks as threads:
 *   barrier    one LSA barrier sync (ncclLsaBarrierSession) in a kernel,
 *              a round trip between the ranks' kernels, against the host
 *              API's ncclSignal -> ncclWaitSignal half round trip (a
 *              ping-pong of signals on the ranks' streams);
 *   gin_put    GIN put bandwidth, rank 0's kernel putting `put_mib` MiB to
 *              rank 1 in 1 MiB puts with a signal, until rank 1's kernel
 *              sees the last signal, under GDAKI (in the kernel's thread)
 *              and PROXY (through the proxy thread), against memcpy of the
 *              same bytes;
 *   allreduce  the LSA allreduce of NCCL's example 06_device_api/01 (a
 *              barrier, then each rank sums its share of the elements over
 *              every rank's send buffer through LSA pointers and stores the
 *              sums into every rank's receive buffer, then a barrier; 16
 *              blocks of 512 threads, 1M floats), the kernels' time
 *              against a plain C loop doing the same sums on one thread.
 * Each figure is a median over `reps` repeats, with its spread.
 *   devapi [reps=5] [put_mib=64]
 * Built by ncclsim-nvcc (bench/local.mk). */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>
#include <ncclsim.h>

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

#define CHECK(cond, what)                                      \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "devapi: %s failed\n", what);            \
      exit(1);                                                 \
    }                                                          \
  } while (0)
#define CUDA(call) CHECK((call) == cudaSuccess, #call)
#define NCCL(call) CHECK((call) == ncclSuccess, #call)

enum { NR = 2 };

/* Two ranks, as threads driven by this one, with GIN type `gin`. */
struct Pair {
  ncclComm_t comm[NR];
  cudaStream_t stream[NR];
  void init(int gin) {
    ncclsimCommOptions_t o = NCCLSIM_COMM_OPTIONS_INIT;
    o.ginType = gin;
    NCCL(ncclsimSetCommOptions(&o));
    int devs[NR] = {0, 1};
    NCCL(ncclCommInitAll(comm, NR, devs));
    NCCL(ncclsimSetCommOptions(nullptr));
    for (int r = 0; r < NR; r++) {
      CUDA(cudaSetDevice(r));
      CUDA(cudaStreamCreate(&stream[r]));
    }
  }
  void window(size_t bytes, ncclWindow_t *w, void **buf) {
    for (int r = 0; r < NR; r++) {
      CUDA(cudaSetDevice(r));
      NCCL(ncclMemAlloc(&buf[r], bytes));
      CUDA(cudaMemset(buf[r], 0, bytes));
    }
    NCCL(ncclGroupStart());
    for (int r = 0; r < NR; r++) NCCL(ncclCommWindowRegister(comm[r], buf[r], bytes, &w[r], NCCL_WIN_COLL_SYMMETRIC));
    NCCL(ncclGroupEnd());
  }
  void unwindow(ncclWindow_t *w, void **buf) {
    for (int r = 0; r < NR; r++) {
      NCCL(ncclCommWindowDeregister(comm[r], w[r]));
      NCCL(ncclMemFree(buf[r]));
    }
  }
  template <class F>
  double timed(F launch) { /* seconds from the first launch to the last rank's end */
    double t0 = now_s();
    for (int r = 0; r < NR; r++) {
      CUDA(cudaSetDevice(r));
      launch(r);
    }
    for (int r = 0; r < NR; r++) {
      CUDA(cudaSetDevice(r));
      CUDA(cudaStreamSynchronize(stream[r]));
    }
    return now_s() - t0;
  }
  void fini() {
    for (int r = 0; r < NR; r++) {
      CUDA(cudaSetDevice(r));
      cudaStreamDestroy(stream[r]);
      ncclCommDestroy(comm[r]);
    }
  }
};

/* ---- barrier ---- */

__global__ void barriers(ncclDevComm dc, int n) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, 0};
  for (int i = 0; i < n; i++) bar.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
}

/* Host ping-pong of signals: rank 0 signals then waits, rank 1 waits then
 * signals; chunks well below the stream's depth, each rank's host thread
 * enqueuing its own. Seconds for n iterations (2n half round trips). */
static double signal_pingpong(Pair &p, int n) {
  const int chunk = 128;
  double t0 = now_s();
  std::thread ranks[NR];
  for (int r = 0; r < NR; r++)
    ranks[r] = std::thread([&p, r, n] {
      CUDA(cudaSetDevice(r));
      int peer = 1 - r;
      ncclWaitSignalDesc_t d = {1, peer, 0, 0};
      for (int done = 0; done < n; done += chunk) {
        for (int i = done; i < done + chunk && i < n; i++)
          for (int step = 0; step < 2; step++) {
            if ((step == 0) == (r == 0)) NCCL(ncclSignal(peer, 0, 0, 0, p.comm[r], p.stream[r]));
            else NCCL(ncclWaitSignal(1, &d, p.comm[r], p.stream[r]));
          }
        CUDA(cudaStreamSynchronize(p.stream[r]));
      }
    });
  for (auto &t : ranks) t.join();
  return now_s() - t0;
}

static void bench_barrier(int reps) {
  Pair p;
  p.init(NCCL_GIN_TYPE_NONE);
  ncclDevComm dc[NR];
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = 1;
  for (int r = 0; r < NR; r++) NCCL(ncclDevCommCreate(p.comm[r], &reqs, &dc[r]));
  const int n = 20000, m = 2000;
  p.timed([&](int r) { barriers<<<1, 32, 0, p.stream[r]>>>(dc[r], 100); }); /* warm-up */
  signal_pingpong(p, 128);
  std::vector<double> bar, sig, ratio;
  for (int rep = 0; rep < reps; rep++) {
    double b = p.timed([&](int r) { barriers<<<1, 32, 0, p.stream[r]>>>(dc[r], n); }) / n * 1e6;
    double s = signal_pingpong(p, m) / (2.0 * m) * 1e6;
    bar.push_back(b);
    sig.push_back(s);
    ratio.push_back(b / s);
  }
  stats sb = of(bar), ss = of(sig), sr = of(ratio);
  printf("bench=devapi test=barrier lsa_barrier_rtt_us=%.3f signal_half_rtt_us=%.3f ratio_median=%.3f ratio_min=%.3f "
         "ratio_max=%.3f barriers=%d signals=%d reps=%d\n",
         sb.median, ss.median, sr.median, sr.min, sr.max, n, 2 * m, reps);
  for (int r = 0; r < NR; r++) NCCL(ncclDevCommDestroy(p.comm[r], &dc[r]));
  p.fini();
}

/* ---- gin_put ---- */

/* Rank 0 puts n chunks of `chunk` bytes into rank 1's window (signal 0);
 * rank 1 waits for all n signals. */
__global__ void ginPuts(ncclDevComm dc, ncclWindow_t dst, ncclWindow_t src, size_t chunk, int n, uint64_t base) {
  ncclGin gin{dc, 0};
  if (dc.rank == 0) {
    for (int i = 0; i < n; i++)
      gin.put(ncclTeamWorld(dc), 1, dst, (size_t)i * chunk, src, (size_t)i * chunk, chunk, ncclGin_WeakSignalInc{0});
    gin.flush(ncclCoopThread());
  } else {
    gin.waitSignal(ncclCoopThread(), 0, base + n);
  }
}

static void bench_gin_put(int reps, int mib) {
  static const struct {
    int type;
    const char *name;
  } types[] = {{NCCL_GIN_TYPE_GDAKI, "gdaki"}, {NCCL_GIN_TYPE_PROXY, "proxy"}};
  size_t bytes = (size_t)mib << 20, chunk = 1 << 20;
  int n = (int)(bytes / chunk);
  for (auto &t : types) {
    Pair p;
    p.init(t.type);
    ncclWindow_t src[NR], dst[NR];
    void *sbuf[NR], *dbuf[NR];
    p.window(bytes, src, sbuf);
    p.window(bytes, dst, dbuf);
    ncclDevComm dc[NR];
    ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
    reqs.ginConnectionType = NCCL_GIN_CONNECTION_FULL;
    reqs.ginSignalCount = 1;
    for (int r = 0; r < NR; r++) NCCL(ncclDevCommCreate(p.comm[r], &reqs, &dc[r]));
    memset(sbuf[0], 1, bytes);
    uint64_t base = 0;
    p.timed([&](int r) { ginPuts<<<1, 1, 0, p.stream[r]>>>(dc[r], dst[r], src[r], chunk, n, base); }); /* warm-up */
    base += n;
    std::vector<double> gin, cpy, ratio;
    for (int rep = 0; rep < reps; rep++) {
      double g = bytes / p.timed([&](int r) { ginPuts<<<1, 1, 0, p.stream[r]>>>(dc[r], dst[r], src[r], chunk, n, base); }) / 1e9;
      base += n;
      double t0 = now_s();
      memcpy(dbuf[1], sbuf[0], bytes);
      double c = bytes / (now_s() - t0) / 1e9;
      gin.push_back(g);
      cpy.push_back(c);
      ratio.push_back(g / c);
    }
    stats sg = of(gin), sc = of(cpy), sr = of(ratio);
    printf("bench=devapi test=gin_put gin=%s put_mib=%d chunk_kib=%zu gin_gbs=%.3f memcpy_gbs=%.3f ratio_median=%.3f "
           "ratio_min=%.3f ratio_max=%.3f reps=%d\n",
           t.name, mib, chunk >> 10, sg.median, sc.median, sr.median, sr.min, sr.max, reps);
    for (int r = 0; r < NR; r++) NCCL(ncclDevCommDestroy(p.comm[r], &dc[r]));
    p.unwindow(dst, dbuf);
    p.unwindow(src, sbuf);
    p.fini();
  }
}

/* ---- allreduce ---- */

/* The example's allreduce: each rank sums its share (elements strided by
 * every rank's threads) over every rank's send buffer, and stores the sums
 * into every rank's receive buffer, between two LSA barriers. */
__global__ void lsaAllReduce(ncclWindow_t send, ncclWindow_t recv, size_t count, ncclDevComm dc) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), dc, ncclTeamLsa(dc), dc.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_acquire);
  int n = dc.nRanks;
  size_t first = threadIdx.x + (size_t)blockDim.x * (dc.rank + (size_t)blockIdx.x * n);
  size_t stride = (size_t)blockDim.x * gridDim.x * n;
  for (size_t i = first; i < count; i += stride) {
    float v = 0.0f;
    for (int p = 0; p < n; p++) v += ((float *)ncclGetLsaPointer(send, 0, p))[i];
    for (int p = 0; p < n; p++) ((float *)ncclGetLsaPointer(recv, 0, p))[i] = v;
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

static void bench_allreduce(int reps) {
  Pair p;
  p.init(NCCL_GIN_TYPE_NONE);
  const size_t count = 1 << 20, bytes = count * sizeof(float);
  const int blocks = 16, threads = 512;
  ncclWindow_t send[NR], recv[NR];
  void *sbuf[NR], *rbuf[NR];
  p.window(bytes, send, sbuf);
  p.window(bytes, recv, rbuf);
  for (int r = 0; r < NR; r++)
    for (size_t i = 0; i < count; i++) ((float *)sbuf[r])[i] = (float)(r + 1);
  ncclDevComm dc[NR];
  ncclDevCommRequirements reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.lsaBarrierCount = blocks;
  for (int r = 0; r < NR; r++) NCCL(ncclDevCommCreate(p.comm[r], &reqs, &dc[r]));
  auto launch = [&](int r) { lsaAllReduce<<<blocks, threads, 0, p.stream[r]>>>(send[r], recv[r], count, dc[r]); };
  p.timed(launch); /* warm-up */
  std::vector<double> ker, loop, ratio;
  for (int rep = 0; rep < reps; rep++) {
    double k = p.timed(launch) * 1e3;
    for (int r = 0; r < NR; r++) CHECK(((float *)rbuf[r])[count - 1] == 3.0f, "allreduce result");
    /* the same sums on one thread: every element over every rank's send
     * buffer, stored into every rank's receive buffer */
    double t0 = now_s();
    for (size_t i = 0; i < count; i++) {
      float v = 0.0f;
      for (int q = 0; q < NR; q++) v += ((volatile float *)sbuf[q])[i];
      for (int q = 0; q < NR; q++) ((volatile float *)rbuf[q])[i] = v;
    }
    double l = (now_s() - t0) * 1e3;
    ker.push_back(k);
    loop.push_back(l);
    ratio.push_back(k / l);
  }
  stats sk = of(ker), sl = of(loop), sr = of(ratio);
  printf("bench=devapi test=allreduce ranks=%d count=%zu grid=%dx%d kernel_ms=%.3f loop_ms=%.3f ratio_median=%.3f "
         "ratio_min=%.3f ratio_max=%.3f reps=%d\n",
         NR, count, blocks, threads, sk.median, sl.median, sr.median, sr.min, sr.max, reps);
  for (int r = 0; r < NR; r++) NCCL(ncclDevCommDestroy(p.comm[r], &dc[r]));
  p.unwindow(recv, rbuf);
  p.unwindow(send, sbuf);
  p.fini();
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5, mib = argc > 2 ? atoi(argv[2]) : 64;
  if (reps < 1) reps = 1;
  if (mib < 1) mib = 1;
  bench_barrier(reps);
  bench_gin_put(reps, mib);
  bench_allreduce(reps);
  return 0;
}
