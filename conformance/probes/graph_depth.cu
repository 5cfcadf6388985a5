/* How much of a stream's queue a graph launch takes, by what its graph
 * holds: CUDA 13's documentation is silent on it. Each line counts the
 * launches (or plain calls) that went in behind a stream blocked by a host
 * function before the host thread blocked; ncclsim's answers are in
 * docs/ncclsim.md ("Graphs"). Run it on a GPU and on ncclsim and compare.
 *
 *   nvcc -arch=sm_90 graph_depth.cu -o graph_depth          (real)
 *   ncclsim-nvcc graph_depth.cu -o graph_depth              (ncclsim)
 *
 * A watchdog thread opens the gate 1 s after it closes; a call that
 * returns after 0.8 s is the one that blocked, and is not counted. */
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <cuda_runtime.h>

struct big_args {
  int v[1000]; /* 4000 bytes of kernel parameters, as NCCL's kernels take */
};

__global__ void small_kernel(int *p) {
  if (p) p[threadIdx.x] = 1;
}

__global__ void big_kernel(big_args a, int *p) {
  if (p) p[threadIdx.x] = a.v[threadIdx.x];
}

__global__ void shared_kernel(int *p) {
  extern __shared__ int sh[];
  sh[threadIdx.x] = 1;
  __syncthreads();
  if (p) p[threadIdx.x] = sh[threadIdx.x];
}

/* A launch as NCCL 2.30 makes one on sm_90: blocks in clusters of 4, with
 * dynamic shared memory. */
static cudaError_t cluster_launch(cudaStream_t s, int *d) {
  cudaLaunchConfig_t c = {};
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeClusterDimension;
  at[0].val.clusterDim.x = 4;
  at[0].val.clusterDim.y = 1;
  at[0].val.clusterDim.z = 1;
  c.gridDim = dim3(32);
  c.blockDim = dim3(32);
  c.dynamicSmemBytes = 64 << 10;
  c.stream = s;
  c.attrs = at;
  c.numAttrs = 1;
  return cudaLaunchKernelEx(&c, shared_kernel, d);
}

static std::atomic<int> open_gate, at_gate;
static void gate(void *) {
  at_gate = 1;
  while (!open_gate.load()) std::this_thread::sleep_for(std::chrono::microseconds(500));
}
static void nothing(void *) {}

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* Calls fn(i) until one blocks (or 5000 went in), behind a blocked s. */
template <class F> static int behind_gate(cudaStream_t s, F fn) {
  open_gate = 0;
  at_gate = 0;
  cudaLaunchHostFunc(s, gate, nullptr);
  while (!at_gate.load()) std::this_thread::yield(); /* the stream is blocked from here on */
  std::thread w([] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    open_gate = 1;
  });
  double t0 = now();
  int in = 0;
  for (; in < 5000; in++) {
    fn(in);
    if (now() - t0 > 0.8) break;
  }
  w.join();
  cudaStreamSynchronize(s);
  return in;
}

static void line(const char *what, int in) {
  std::printf("%s: %d%s\n", what, in, in == 5000 ? " (no block seen)" : "");
}

/* Graph launches of what build() captures on s. */
template <class B> static void graph(const char *what, cudaStream_t s, B build) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t x = nullptr;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  build();
  cudaError_t e = cudaStreamEndCapture(s, &g);
  if (e != cudaSuccess || cudaGraphInstantiate(&x, g, 0) != cudaSuccess) {
    std::printf("%s: capture %s\n", what, cudaGetErrorName(e));
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    return;
  }
  size_t n = 0;
  cudaGraphGetNodes(g, nullptr, &n);
  char name[160];
  std::snprintf(name, sizeof name, "graph launches, %s (%zu node(s))", what, n);
  line(name, behind_gate(s, [&](int) { cudaGraphLaunch(x, s); }));
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
}

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t ev;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  int *d = nullptr, *h = nullptr;
  cudaMalloc(&d, 4096);
  cudaMallocHost(&h, 4096);
  static big_args a;
  /* Each kernel once, outside the count: a first launch loads its module,
   * which waits for the blocked stream. */
  cudaFuncSetAttribute(shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10);
  small_kernel<<<1, 32, 0, s>>>(d);
  big_kernel<<<1, 32, 0, s>>>(a, d);
  std::printf("a cluster launch: %s\n", cudaGetErrorName(cluster_launch(s, d)));
  std::printf("warm-up: %s\n", cudaGetErrorName(cudaStreamSynchronize(s)));

  line("cudaMemsetAsync calls", behind_gate(s, [&](int) { cudaMemsetAsync(d, 0, 64, s); }));
  line("small kernel launches", behind_gate(s, [&](int) { small_kernel<<<1, 32, 0, s>>>(d); }));
  line("4000-byte-parameter kernel launches", behind_gate(s, [&](int) { big_kernel<<<1, 32, 0, s>>>(a, d); }));
  line("cluster launches of 64 KiB shared memory", behind_gate(s, [&](int) { cluster_launch(s, d); }));
  line("cudaEventRecord calls", behind_gate(s, [&](int) { cudaEventRecord(ev, s); }));

  graph("1 memset", s, [&] { cudaMemsetAsync(d, 0, 64, s); });
  graph("10 memsets", s, [&] {
    for (int i = 0; i < 10; i++) cudaMemsetAsync(d, i, 64, s);
  });
  graph("1 copy", s, [&] { cudaMemcpyAsync(d, d + 512, 64, cudaMemcpyDeviceToDevice, s); });
  graph("1 small kernel", s, [&] { small_kernel<<<1, 32, 0, s>>>(d); });
  graph("10 small kernels", s, [&] {
    for (int i = 0; i < 10; i++) small_kernel<<<1, 32, 0, s>>>(d);
  });
  graph("1 kernel of 4000 bytes of parameters", s, [&] { big_kernel<<<1, 32, 0, s>>>(a, d); });
  graph("1 cluster launch of 64 KiB shared memory", s, [&] { cluster_launch(s, d); });
  graph("10 copies", s, [&] {
    for (int i = 0; i < 10; i++) cudaMemcpyAsync(d, d + 512, 64, cudaMemcpyDeviceToDevice, s);
  });
  graph("1 host function", s, [&] { cudaLaunchHostFunc(s, nothing, nullptr); });
  graph("1 memset between an external wait and an external record", s, [&] {
    cudaStreamWaitEvent(s, ev, cudaEventWaitExternal);
    cudaMemsetAsync(d, 0, 64, s);
    cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal);
  });
  graph("a 4000-byte kernel between an external wait and an external record", s, [&] {
    cudaStreamWaitEvent(s, ev, cudaEventWaitExternal);
    big_kernel<<<1, 32, 0, s>>>(a, d);
    cudaEventRecordWithFlags(ev, s, cudaEventRecordExternal);
  });
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("done: %s\n", cudaGetErrorName(e));
  cudaFree(d);
  cudaFreeHost(h);
  cudaEventDestroy(ev);
  cudaStreamDestroy(s);
  return 0;
}
