/* tests/kernel_graph.cu — kernels in CUDA graphs on ncclsim
 * (sim/kernel/graph.c): a launch on a capturing stream is a kernel node
 * that keeps the launch's arguments, and every launch of the graph runs it
 * again; cudaGraphAddKernelNode and the kernel node parameters; a kernel
 * node disabled, updated and set in an executable graph; a kernel captured
 * around an NCCL allreduce. Built by ncclsim-nvcc (tests/kernel.mk). */
#include "kernel_test.h"

#include <stdio.h>
#include <unistd.h>
#include <nccl.h>

__global__ void add(int *p, int v, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) p[i] += v;
}

__global__ void scale(int *p, int k, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) p[i] *= k;
}

__global__ void __launch_bounds__(64) small_blocks(int *p) { p[threadIdx.x] = 1; }

enum { N = 1000 };

static int *dev_ints(int n) {
  int *p = NULL;
  assert_int_equal(cudaMalloc(&p, n * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaMemset(p, 0, n * sizeof(int)), cudaSuccess);
  return p;
}

static void expect(const int *d, int v) {
  int h[N];
  assert_int_equal(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < N; i++)
    if (h[i] != v) fail_msg("element %d is %d, expected %d", i, h[i], v);
}

/* <<<>>> and cudaLaunchKernel on a capturing stream: nodes, not runs; each
 * launch of the graph runs both, with the arguments of the capture. */
static void test_captured_launches(void **state) {
  (void)state;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int *d = dev_ints(N);
  int v = 5, k = 2, n = N;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  add<<<4, 64, 0, s>>>(d, v, n);
  assert_int_equal(launched(), cudaSuccess);
  void *args[] = {&d, &k, &n};
  assert_int_equal(cudaLaunchKernel((const void *)scale, dim3(2), dim3(128), args, 0, s), cudaSuccess);
  v = 1000; /* copied at the capture: no effect */
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  expect(d, 0); /* nothing ran */
  cudaGraphNode_t nodes[2];
  size_t nn = 2;
  assert_int_equal(cudaGraphGetNodes(g, nodes, &nn), cudaSuccess);
  assert_int_equal(nn, 2);
  struct cudaKernelNodeParams p;
  assert_int_equal(cudaGraphKernelNodeGetParams(nodes[0], &p), cudaSuccess);
  assert_ptr_equal(p.func, (void *)add);
  assert_int_equal(p.gridDim.x, 4);
  assert_int_equal(p.blockDim.x, 64);
  assert_int_equal(cudaGraphKernelNodeGetParams(nodes[1], &p), cudaSuccess);
  assert_ptr_equal(p.func, (void *)scale);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  int want = 0;
  for (int l = 0; l < 4; l++) {
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    want = (want + 5) * 2;
  }
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  expect(d, want);
  /* The graph may go first: the executable graph keeps its kernels. */
  assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaGraphExecDestroy(x), cudaSuccess); /* with the launch queued */
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  expect(d, (want + 5) * 2);
  /* A launch whose configuration fails fails at the capture, as at a run. */
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  add<<<1, 2048, 0, s>>>(d, 1, n);
  assert_int_equal(launched(), cudaErrorInvalidValue);
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  assert_int_equal(cudaGraphGetNodes(g, NULL, &nn), cudaSuccess);
  assert_int_equal(nn, 0);
  cudaGraphDestroy(g);
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* cudaGraphAddKernelNode: the arguments' values are taken at the call. */
static void test_kernel_nodes(void **state) {
  (void)state;
  cudaStream_t s;
  assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
  int *d = dev_ints(N);
  int v = 3, n = N, k = 10;
  cudaGraph_t g;
  assert_int_equal(cudaGraphCreate(&g, 0), cudaSuccess);
  void *aargs[] = {&d, &v, &n}, *sargs[] = {&d, &k, &n};
  struct cudaKernelNodeParams ap = {(void *)add, dim3(8), dim3(32), 0, aargs, NULL};
  struct cudaKernelNodeParams sp = {(void *)scale, dim3(1), dim3(256), 0, sargs, NULL};
  cudaGraphNode_t a, b;
  assert_int_equal(cudaGraphAddKernelNode(&a, g, NULL, 0, &ap), cudaSuccess);
  assert_int_equal(cudaGraphAddKernelNode(&b, g, &a, 1, &sp), cudaSuccess);
  v = 100;
  k = 100;
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  expect(d, 30);
  /* Errors: not a kernel; no arguments; a configuration CUDA refuses;
   * arguments in the "extra" form; bounds. */
  cudaGraphNode_t bad;
  struct cudaKernelNodeParams ep = ap;
  ep.func = (void *)&v;
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &ep), cudaErrorInvalidResourceHandle);
  ep.func = NULL;
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &ep), cudaErrorInvalidDeviceFunction);
  ep = ap;
  ep.kernelParams = NULL;
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &ep), cudaErrorInvalidValue);
  ep = ap;
  ep.blockDim = dim3(2048);
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &ep), cudaErrorInvalidValue);
  void *extra[] = {NULL};
  ep = ap;
  ep.extra = extra;
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &ep), cudaErrorInvalidValue);
  int *q = d;
  void *bargs[] = {&q};
  struct cudaKernelNodeParams bp = {(void *)small_blocks, dim3(1), dim3(128), 0, bargs, NULL};
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &bp), cudaErrorInvalidValue); /* over 64 */
  bp.blockDim = dim3(64);
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, &bp), cudaSuccess);
  assert_int_equal(cudaGraphDestroyNode(bad), cudaSuccess);
  assert_int_equal(cudaGraphAddKernelNode(&bad, g, NULL, 0, NULL), cudaErrorInvalidValue);
  /* Set on the graph's node, and on the executable graph's. */
  v = 1;
  assert_int_equal(cudaGraphKernelNodeSetParams(a, &ap), cudaSuccess);
  struct cudaKernelNodeParams got;
  assert_int_equal(cudaGraphKernelNodeGetParams(a, &got), cudaSuccess);
  assert_ptr_equal(got.func, (void *)add);
  assert_null(got.kernelParams);
  k = 3;
  assert_int_equal(cudaGraphExecKernelNodeSetParams(x, b, &sp), cudaSuccess);
  assert_int_equal(cudaMemset(d, 0, N * sizeof(int)), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  expect(d, 9); /* the executable graph's add is still 3's; its scale now 3 */
  /* Disabled: the scale runs as an empty node. */
  assert_int_equal(cudaGraphNodeSetEnabled(x, b, 0), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  expect(d, 12);
  /* An update from the graph brings its add of 1. */
  cudaGraphExecUpdateResultInfo info;
  assert_int_equal(cudaGraphExecUpdate(x, g, &info), cudaSuccess);
  assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  expect(d, 13);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* Kernels around a captured allreduce, one rank: the graph's order. */
static void test_kernel_and_nccl(void **state) {
  (void)state;
  ncclComm_t comm;
  int dev0 = 0;
  assert_int_equal(ncclCommInitAll(&comm, 1, &dev0), ncclSuccess);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  int *d = dev_ints(N), *e = dev_ints(N), n = N;
  assert_int_equal(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  add<<<2, 128, 0, s>>>(d, 2, n);
  assert_int_equal(ncclAllReduce(d, e, N, ncclInt32, ncclSum, comm, s), ncclSuccess);
  scale<<<2, 128, 0, s>>>(e, 10, n);
  cudaGraph_t g;
  assert_int_equal(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphExec_t x;
  assert_int_equal(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
  for (int l = 1; l <= 3; l++) {
    assert_int_equal(cudaGraphLaunch(x, s), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    expect(e, 20 * l);
  }
  char path[] = "/tmp/kernel_graphXXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(cudaGraphDebugDotPrint(g, path, 0), cudaSuccess);
  FILE *f = fopen(path, "r");
  char text[4096];
  size_t len = fread(text, 1, sizeof text - 1, f);
  text[len] = 0;
  fclose(f);
  unlink(path);
  assert_non_null(strstr(text, "add"));
  assert_non_null(strstr(text, "grid (2, 1, 1), block (128, 1, 1)"));
  assert_non_null(strstr(text, "ncclAllReduce"));
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  ncclCommDestroy(comm);
  cudaFree(d);
  cudaFree(e);
  cudaStreamDestroy(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_captured_launches),
      cmocka_unit_test(test_kernel_nodes),
      cmocka_unit_test(test_kernel_and_nccl),
  };
  return cmocka_run_group_tests_name("kernel_graph", tests, NULL, NULL);
}
