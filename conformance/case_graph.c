/*
 * case_graph.c — GRAPH-*: NCCL operations in CUDA graphs (stream capture),
 * at the NCCL and CUDA level: nccl4c has no graph API, the claims are
 * NCCL's and CUDA's.
 *
 * Captures are thread-local (cudaStreamCaptureModeThreadLocal), as
 * nccl-tests' -G makes them: with ranks as threads, a global capture
 * forbids the other ranks' threads calls such as cudaMalloc, and one of
 * them would invalidate it. The capturing stream is non-blocking, so that
 * nothing on the legacy stream depends on it.
 *
 * Each case runs its operation once outside the capture first (same
 * communicator, peers and count), as nccl-tests warms up before its -G
 * capture: NCCL connects at an operation's first use, and with ranks of
 * one process on several GPUs that connection enables peer access
 * (cudaDeviceEnablePeerAccess), which a thread-local capture forbids.
 * Measured on 4 x H100 with NCCL 2.30.7, ranks as threads: without the
 * warm-up the first captured allreduce (or group of sends and receives)
 * failed with "failed to peer with device N: 900 operation not permitted
 * when stream is capturing".
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include "case.h"
#if HAVE_DECL_NCCLPUTSIGNAL
#include "case_rma.h"
#endif

static void stream_destroy_(void *s) { (void)cudaStreamDestroy((cudaStream_t)s); }
static void host_free_(void *p) { (void)cudaFreeHost(p); }
static void graph_destroy_(void *g) { (void)cudaGraphDestroy((cudaGraph_t)g); }
static void exec_destroy_(void *x) { (void)cudaGraphExecDestroy((cudaGraphExec_t)x); }

struct genv {
  n4c_comm_t *comm;
  ncclComm_t nc;
  cudaStream_t s;
};

static bool genv_setup(case_ctx_t *ctx, struct genv *e)
{
  n4c_status_t st = ctx_comm_init(ctx, &e->comm);
  if (!CASE_EXPECT(ctx, st == N4C_OK, "ctx_comm_init: %s", n4c_strerror(st)))
    return false;
  e->nc = n4c_comm_handle(e->comm);
  cudaError_t ce = cudaStreamCreateWithFlags(&e->s, cudaStreamNonBlocking);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "cudaStreamCreateWithFlags: %s", cudaGetErrorName(ce)))
    return false;
  ctx_defer(ctx, stream_destroy_, e->s);
  return true;
}

/* Pinned host memory, freed after the case. */
static void *pinned(case_ctx_t *ctx, size_t bytes)
{
  void *p = NULL;
  cudaError_t ce = cudaMallocHost(&p, bytes);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "cudaMallocHost(%zu): %s", bytes, cudaGetErrorName(ce)))
    return NULL;
  ctx_defer(ctx, host_free_, p);
  return p;
}

static void *device(case_ctx_t *ctx, size_t bytes)
{
  void *p = NULL;
  cudaError_t ce = ctx_cuda_malloc(ctx, &p, bytes);
  return CASE_EXPECT(ctx, ce == cudaSuccess, "cudaMalloc(%zu): %s", bytes, cudaGetErrorName(ce)) ? p : NULL;
}

static bool begin(case_ctx_t *ctx, struct genv *e)
{
  cudaError_t ce = cudaStreamBeginCapture(e->s, cudaStreamCaptureModeThreadLocal);
  return CASE_EXPECT(ctx, ce == cudaSuccess, "cudaStreamBeginCapture: %s", cudaGetErrorName(ce));
}

/* Ends the capture and instantiates its graph (both freed after). */
static bool end(case_ctx_t *ctx, struct genv *e, cudaGraphExec_t *x)
{
  cudaGraph_t g = NULL;
  cudaError_t ce = cudaStreamEndCapture(e->s, &g);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess && g, "cudaStreamEndCapture: %s", cudaGetErrorName(ce)))
    return false;
  ctx_defer(ctx, graph_destroy_, g);
  ce = cudaGraphInstantiate(x, g, 0);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "cudaGraphInstantiate: %s", cudaGetErrorName(ce)))
    return false;
  ctx_defer(ctx, exec_destroy_, *x);
  return true;
}

/* Launches x on the case's stream and waits for it. */
static bool launch(case_ctx_t *ctx, struct genv *e, cudaGraphExec_t x, int i)
{
  cudaError_t ce = cudaGraphLaunch(x, e->s);
  if (ce == cudaSuccess)
    ce = cudaStreamSynchronize(e->s);
  return CASE_EXPECT(ctx, ce == cudaSuccess, "launch %d: %s (%s)", i, cudaGetErrorName(ce),
                     ncclGetLastError(e->nc));
}

#define NCCL_EXPECT(ctx, call) \
  CASE_EXPECT((ctx), (call) == ncclSuccess, "%s: %s", #call, ncclGetLastError(NULL))

/* The warm-up (see the top): an in-place or out-of-place allreduce of n
 * int32 outside any capture, waited for. */
static bool warm_allreduce(case_ctx_t *ctx, struct genv *e, const void *in, void *out, size_t n)
{
  if (!NCCL_EXPECT(ctx, ncclAllReduce(in, out, n, ncclInt32, ncclSum, e->nc, e->s)))
    return false;
  cudaError_t ce = cudaStreamSynchronize(e->s);
  return CASE_EXPECT(ctx, ce == cudaSuccess, "the warm-up allreduce: %s (%s)", cudaGetErrorName(ce),
                     ncclGetLastError(e->nc));
}

/* GRAPH-01 */
void case_GRAPH_01(case_ctx_t *ctx)
{
  enum { N = 4096, LAUNCHES = 1000 };
  struct genv e;
  cudaGraphExec_t x;
  if (!genv_setup(ctx, &e))
    return;
  int32_t *hin = pinned(ctx, N * 4), *hout = pinned(ctx, N * 4), *din = device(ctx, N * 4),
          *dout = device(ctx, N * 4);
  if (!hin || !hout || !din || !dout || !warm_allreduce(ctx, &e, din, dout, N))
    return;
  for (int i = 0; i < N; i++)
    hout[i] = -1;
  if (!begin(ctx, &e))
    return;
  bool ok = CASE_EXPECT(ctx, cudaMemcpyAsync(din, hin, N * 4, cudaMemcpyHostToDevice, e.s) == cudaSuccess,
                        "cudaMemcpyAsync in the capture") &&
            NCCL_EXPECT(ctx, ncclAllReduce(din, dout, N, ncclInt32, ncclSum, e.nc, e.s)) &&
            CASE_EXPECT(ctx, cudaMemcpyAsync(hout, dout, N * 4, cudaMemcpyDeviceToHost, e.s) == cudaSuccess,
                        "cudaMemcpyAsync in the capture");
  if (!end(ctx, &e, &x) || !ok)
    return;
  CASE_CHECK(ctx, hout[0] == -1 && hout[N - 1] == -1, "the capture ran the copies (%d, %d)", hout[0], hout[N - 1]);
  int n = ctx->nranks, bad = 0;
  for (int it = 0; it < LAUNCHES; it++) {
    for (int i = 0; i < N; i++)
      hin[i] = (ctx->rank + 1) * (it + 1) + i % 5;
    if (!launch(ctx, &e, x, it))
      return;
    for (int i = 0; i < N; i++) {
      int32_t want = (it + 1) * n * (n + 1) / 2 + n * (i % 5);
      if (hout[i] != want && bad++ < 3)
        CASE_EXPECT(ctx, false, "launch %d: element %d is %d, expected %d", it, i, hout[i], want);
    }
  }
  CASE_EXPECT(ctx, bad == 0, "%d wrong elements over %d launches", bad, LAUNCHES);
}

/* GRAPH-02 */
void case_GRAPH_02(case_ctx_t *ctx)
{
  enum { N = 65536, LAUNCHES = 100 };
  struct genv e;
  cudaGraphExec_t x;
  if (!genv_setup(ctx, &e))
    return;
  int next = (ctx->rank + 1) % ctx->nranks, prev = (ctx->rank + ctx->nranks - 1) % ctx->nranks;
  int32_t *h = pinned(ctx, N * 4), *send = device(ctx, N * 4), *recv = device(ctx, N * 4);
  if (!h || !send || !recv)
    return;
  /* The warm-up: the ring once, uncaptured. */
  bool ok = NCCL_EXPECT(ctx, ncclGroupStart()) && NCCL_EXPECT(ctx, ncclSend(send, N, ncclInt32, next, e.nc, e.s)) &&
            NCCL_EXPECT(ctx, ncclRecv(recv, N, ncclInt32, prev, e.nc, e.s)) && NCCL_EXPECT(ctx, ncclGroupEnd());
  cudaError_t ce = ok ? cudaStreamSynchronize(e.s) : cudaErrorUnknown;
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "the warm-up ring: %s (%s)", cudaGetErrorName(ce), ncclGetLastError(e.nc)) ||
      !begin(ctx, &e))
    return;
  ok = CASE_EXPECT(ctx, cudaMemcpyAsync(send, h, N * 4, cudaMemcpyHostToDevice, e.s) == cudaSuccess,
                   "cudaMemcpyAsync in the capture") &&
       NCCL_EXPECT(ctx, ncclGroupStart()) && NCCL_EXPECT(ctx, ncclSend(send, N, ncclInt32, next, e.nc, e.s)) &&
       NCCL_EXPECT(ctx, ncclRecv(recv, N, ncclInt32, prev, e.nc, e.s)) && NCCL_EXPECT(ctx, ncclGroupEnd()) &&
       CASE_EXPECT(ctx, cudaMemcpyAsync(h, recv, N * 4, cudaMemcpyDeviceToHost, e.s) == cudaSuccess,
                   "cudaMemcpyAsync in the capture");
  if (!end(ctx, &e, &x) || !ok)
    return;
  int bad = 0;
  for (int it = 0; it < LAUNCHES; it++) {
    for (int i = 0; i < N; i++)
      h[i] = ctx->rank * 1000003 + it * 7919 + i;
    if (!launch(ctx, &e, x, it))
      return;
    for (int i = 0; i < N; i++) {
      int32_t want = prev * 1000003 + it * 7919 + i;
      if (h[i] != want && bad++ < 3)
        CASE_EXPECT(ctx, false, "launch %d: element %d from rank %d is %d, expected %d", it, i, prev, h[i], want);
    }
  }
  CASE_EXPECT(ctx, bad == 0, "%d wrong elements over %d launches", bad, LAUNCHES);
}

/* GRAPH-03 */
#if !HAVE_DECL_NCCLPUTSIGNAL
void case_GRAPH_03(case_ctx_t *ctx) { CASE_SKIP_NO_NCCL_API(ctx); }
#else
void case_GRAPH_03(case_ctx_t *ctx)
{
  enum { HALF = 1 << 16, LAUNCHES = 100 };
  struct genv e;
  cudaGraphExec_t x;
  void *mem;
  n4c_window_t *win;
  if (!genv_setup(ctx, &e) || !rma_window(ctx, e.comm, 2 * HALF, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  ncclWindow_t w = n4c_window_handle(win);
  unsigned char *m = mem, *h = pinned(ctx, 2 * HALF);
  if (!h)
    return;
  int next = (ctx->rank + 1) % ctx->nranks, prev = (ctx->rank + ctx->nranks - 1) % ctx->nranks;
  ncclWaitSignalDesc_t d = {1, prev, 0, 0};
  /* Every rank's first one-sided operation, together and uncaptured (it
   * blocks until every rank has made its own: SIG-*). */
  bool ok = NCCL_EXPECT(ctx, ncclGroupStart()) && NCCL_EXPECT(ctx, ncclSignal(next, 0, 0, 0, e.nc, e.s)) &&
            NCCL_EXPECT(ctx, ncclWaitSignal(1, &d, e.nc, e.s)) && NCCL_EXPECT(ctx, ncclGroupEnd());
  cudaError_t ce = ok ? cudaStreamSynchronize(e.s) : cudaErrorUnknown;
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "the first signal and wait: %s", cudaGetErrorName(ce)) ||
      !ctx_barrier(ctx) || !begin(ctx, &e))
    return;
  ok = CASE_EXPECT(ctx, cudaMemcpyAsync(m, h, HALF, cudaMemcpyHostToDevice, e.s) == cudaSuccess,
                   "cudaMemcpyAsync in the capture") &&
       NCCL_EXPECT(ctx, ncclGroupStart()) &&
       NCCL_EXPECT(ctx, ncclPutSignal(m, HALF, ncclUint8, next, w, HALF, 0, 0, 0, e.nc, e.s)) &&
       NCCL_EXPECT(ctx, ncclWaitSignal(1, &d, e.nc, e.s)) && NCCL_EXPECT(ctx, ncclGroupEnd()) &&
       CASE_EXPECT(ctx, cudaMemcpyAsync(h + HALF, m + HALF, HALF, cudaMemcpyDeviceToHost, e.s) == cudaSuccess,
                   "cudaMemcpyAsync in the capture");
  if (!end(ctx, &e, &x) || !ok)
    return;
  int bad = 0;
  for (int it = 0; it < LAUNCHES; it++) {
    for (int i = 0; i < HALF; i++)
      h[i] = (unsigned char)(ctx->rank * 31 + it * 7 + i);
    if (!launch(ctx, &e, x, it))
      return;
    for (int i = 0; i < HALF; i++) {
      unsigned char want = (unsigned char)(prev * 31 + it * 7 + i);
      if (h[HALF + i] != want && bad++ < 3)
        CASE_EXPECT(ctx, false, "launch %d: window byte %d from rank %d is %u, expected %u", it, HALF + i, prev,
                    h[HALF + i], want);
    }
    /* The next launch's put lands where this one's copy out read from: on
     * every rank, that copy must be done first. */
    if (!ctx_barrier(ctx))
      return;
  }
  CASE_EXPECT(ctx, bad == 0, "%d wrong bytes over %d launches", bad, LAUNCHES);
}
#endif

/* GRAPH-04 */
void case_GRAPH_04(case_ctx_t *ctx)
{
  enum { N = 1024, ROUNDS = 50 };
  struct genv e;
  cudaGraphExec_t x;
  cudaStream_t s2;
  if (!genv_setup(ctx, &e))
    return;
  cudaError_t ce = cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  CASE_CHECK(ctx, ce == cudaSuccess, "cudaStreamCreateWithFlags: %s", cudaGetErrorName(ce));
  ctx_defer(ctx, stream_destroy_, s2);
  int32_t *h = pinned(ctx, N * 4), *dx = device(ctx, N * 4), *dy = device(ctx, N * 4);
  if (!h || !dx || !dy || !warm_allreduce(ctx, &e, dx, dx, N) || !begin(ctx, &e))
    return;
  bool ok = NCCL_EXPECT(ctx, ncclAllReduce(dx, dx, N, ncclInt32, ncclSum, e.nc, e.s));
  if (!end(ctx, &e, &x) || !ok)
    return;
  int n = ctx->nranks, bad = 0;
  for (int r = 0; r < ROUNDS; r++) {
    for (int i = 0; i < N; i++)
      h[i] = r + i + ctx->rank;
    ce = cudaMemcpy(dx, h, N * 4, cudaMemcpyHostToDevice);
    CASE_CHECK(ctx, ce == cudaSuccess, "cudaMemcpy: %s", cudaGetErrorName(ce));
    /* The graph's allreduce on one stream, then an uncaptured one on
     * another, with nothing between them but the order of the calls. */
    ce = cudaGraphLaunch(x, e.s);
    CASE_CHECK(ctx, ce == cudaSuccess, "round %d: cudaGraphLaunch: %s", r, cudaGetErrorName(ce));
    CASE_CHECK(ctx, NCCL_EXPECT(ctx, ncclAllReduce(dx, dy, N, ncclInt32, ncclSum, e.nc, s2)), "round %d", r);
    ce = cudaStreamSynchronize(s2);
    if (ce == cudaSuccess)
      ce = cudaStreamSynchronize(e.s);
    if (ce == cudaSuccess)
      ce = cudaMemcpy(h, dy, N * 4, cudaMemcpyDeviceToHost);
    CASE_CHECK(ctx, ce == cudaSuccess, "round %d: %s (%s)", r, cudaGetErrorName(ce), ncclGetLastError(e.nc));
    for (int i = 0; i < N; i++) {
      int32_t want = n * (n * (r + i) + n * (n - 1) / 2);
      if (h[i] != want && bad++ < 3)
        CASE_EXPECT(ctx, false, "round %d: element %d is %d, expected %d (%s)", r, i, h[i], want,
                    h[i] == n * (r + i) + n * (n - 1) / 2 ? "the uncaptured allreduce ran before the graph's"
                                                         : "neither order");
    }
  }
  CASE_EXPECT(ctx, bad == 0, "%d wrong elements over %d rounds", bad, ROUNDS);
}

/* GRAPH-05 */
void case_GRAPH_05(case_ctx_t *ctx)
{
  enum { N = 256 };
  struct genv e;
  if (!genv_setup(ctx, &e))
    return;
  int32_t *h = pinned(ctx, N * 4), *dx = device(ctx, N * 4);
  /* The warm-up comes before the ones are set: the check at the end is
   * that of one allreduce only. */
  if (!h || !dx || !warm_allreduce(ctx, &e, dx, dx, N))
    return;
  for (int i = 0; i < N; i++)
    h[i] = 1;
  cudaError_t ce = cudaMemcpy(dx, h, N * 4, cudaMemcpyHostToDevice);
  CASE_CHECK(ctx, ce == cudaSuccess, "cudaMemcpy: %s", cudaGetErrorName(ce));
  for (int call = 0; call < 2; call++) {
    const char *what = call ? "cudaMalloc" : "cudaStreamSynchronize of the capturing stream";
    if (!begin(ctx, &e))
      return;
    bool ok = NCCL_EXPECT(ctx, ncclAllReduce(dx, dx, N, ncclInt32, ncclSum, e.nc, e.s));
    void *p = NULL;
    ce = call ? cudaMalloc(&p, 64) : cudaStreamSynchronize(e.s);
    ok &= CASE_EXPECT(ctx, ce == cudaErrorStreamCaptureUnsupported,
                      "%s during a thread-local capture: %s, expected cudaErrorStreamCaptureUnsupported", what,
                      cudaGetErrorName(ce));
    if (p)
      cudaFree(p);
    cudaGraph_t g = (cudaGraph_t)&g;
    ce = cudaStreamEndCapture(e.s, &g);
    ok &= CASE_EXPECT(ctx, ce == cudaErrorStreamCaptureInvalidated && g == NULL,
                      "after %s, cudaStreamEndCapture: %s and graph %p, expected cudaErrorStreamCaptureInvalidated "
                      "and NULL", what, cudaGetErrorName(ce), (void *)g);
    if (g && g != (cudaGraph_t)&g)
      cudaGraphDestroy(g);
    cudaGetLastError();
    enum cudaStreamCaptureStatus st;
    ce = cudaStreamIsCapturing(e.s, &st);
    ok &= CASE_EXPECT(ctx, ce == cudaSuccess && st == cudaStreamCaptureStatusNone,
                      "after the capture's end the stream still captures (%s, status %d)", cudaGetErrorName(ce), st);
    if (!ok)
      return;
  }
  /* The stream and communicator go on; the captured allreduces never ran. */
  CASE_CHECK(ctx, NCCL_EXPECT(ctx, ncclAllReduce(dx, dx, N, ncclInt32, ncclSum, e.nc, e.s)), "after the captures");
  ce = cudaStreamSynchronize(e.s);
  if (ce == cudaSuccess)
    ce = cudaMemcpy(h, dx, N * 4, cudaMemcpyDeviceToHost);
  CASE_CHECK(ctx, ce == cudaSuccess, "%s (%s)", cudaGetErrorName(ce), ncclGetLastError(e.nc));
  CASE_EXPECT(ctx, h[0] == ctx->nranks && h[N - 1] == ctx->nranks,
              "after one uncaptured allreduce of ones, %d and %d, expected %d", h[0], h[N - 1], ctx->nranks);
}
