/*
 * case_block.c — BLOCK-*: real NCCL's host-blocking rules (NCCL 2.30,
 * measured on H200): the first use of a connection blocks the calling host
 * thread until the peers take part, and a stream holds about a thousand
 * pending operations before an enqueue blocks.
 *
 * "Did not return before the peer called" is checked by order: each rank
 * reads CLOCK_REALTIME (one clock for every thread and process of a host)
 * right after its call returns or right before it calls, and the times are
 * compared. The late rank sleeps first, so that an early return would show.
 *
 * BLOCK-06 is the rule behind them on the GPU side: NCCL runs one
 * communicator's launches one after another, whatever their streams.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "case.h"

/* The late rank's head start: 300 ms on a plain build, times the build's
 * slowdown (BLOCK-04's and BLOCK-05's early ranks must do their part within
 * it; sanitizer builds are that much slower). */
enum { LATE_MS = 300 };
static int late_ms(void)
{
  return LATE_MS * case_slowdown();
}

static double wall(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
  nanosleep(&ts, NULL);
}

struct block_env {
  n4c_comm_t *comm;
  cudaStream_t stream;
  void *mem;
  n4c_buffer_t buf; /* 64 floats */
};

static bool block_setup(case_ctx_t *ctx, struct block_env *e)
{
  n4c_status_t st = ctx_comm_init(ctx, &e->comm);
  if (!CASE_EXPECT(ctx, st == N4C_OK, "ctx_comm_init: %s (%s)", n4c_strerror(st), n4c_last_error_message()))
    return false;
  cudaError_t ce = ctx_stream_create(ctx, &e->stream);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "cudaStreamCreate: %s", cudaGetErrorName(ce)))
    return false;
  ce = ctx_cuda_malloc(ctx, &e->mem, 64 * sizeof(float));
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "cudaMalloc: %s", cudaGetErrorName(ce)))
    return false;
  e->buf = n4c_buffer(e->mem, 64, ncclFloat32, ctx->device);
  return ctx_barrier(ctx);
}

static bool synced(case_ctx_t *ctx, struct block_env *e)
{
  cudaError_t ce = cudaStreamSynchronize(e->stream);
  return CASE_EXPECT(ctx, ce == cudaSuccess, "cudaStreamSynchronize: %s (%s)", cudaGetErrorName(ce),
                     ncclGetLastError(n4c_comm_handle(e->comm)));
}

/* Each rank's time, gathered: returned[r] is when rank r's first call
 * returned (or, for the late rank, when it was about to call). */
static bool gather_times(case_ctx_t *ctx, double mine, double *all)
{
  return ctx_allgather(ctx, &mine, sizeof mine, all, (size_t)ctx->nranks * sizeof *all);
}

void case_BLOCK_01(case_ctx_t *ctx)
{
  struct block_env e;
  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks (a late peer to send to), there is 1");
  double t[CTX_XCHG_MAX / sizeof(double)];
  if (!block_setup(ctx, &e))
    return;
  double mine = 0;
  if (ctx->rank == 1) {
    sleep_ms(late_ms());
    mine = wall();
    CASE_OK(ctx, n4c_comm_recv(e.comm, &e.buf, 0, e.stream));
  } else if (ctx->rank == 0) {
    CASE_OK(ctx, n4c_comm_send(e.comm, &e.buf, 1, e.stream));
    mine = wall();
  }
  if (!gather_times(ctx, mine, t))
    return;
  if (ctx->rank == 0)
    CASE_EXPECT(ctx, t[0] >= t[1], "rank 0's first send returned %.3f s before rank 1 called its first recv",
                t[1] - t[0]);
  if (ctx->rank <= 1)
    synced(ctx, &e);
}

/* Every rank's first allreduce, the last rank coming late_ms() late: t[r] is
 * when rank r's call returned, t[late] when the late rank was about to
 * call. False after a failed check. */
static bool late_first_allreduce(case_ctx_t *ctx, struct block_env *e, double *t)
{
  int late = ctx->nranks - 1;
  double mine = 0;
  if (ctx->rank == late) {
    sleep_ms(late_ms());
    mine = wall();
  }
  n4c_status_t st = n4c_comm_allreduce(e->comm, &e->buf, &e->buf, ncclSum, e->stream);
  if (!case_status_(ctx, st, N4C_OK, "n4c_comm_allreduce(e->comm, &e->buf, &e->buf, ncclSum, e->stream)",
                    __FILE__, __LINE__))
    return false;
  if (ctx->rank != late)
    mine = wall();
  return gather_times(ctx, mine, t);
}

void case_BLOCK_02(case_ctx_t *ctx)
{
  struct block_env e;
  double t[CTX_XCHG_MAX / sizeof(double)];
  int late = ctx->nranks - 1;
  if (!block_setup(ctx, &e))
    return;
  if (!late_first_allreduce(ctx, &e, t))
    return;
  if (ctx->rank != late)
    CASE_EXPECT(ctx, t[ctx->rank] >= t[late],
                "rank %d's first allreduce returned %.3f s before rank %d called its own", ctx->rank,
                t[late] - t[ctx->rank], late);
  synced(ctx, &e);
}

void case_BLOCK_03(case_ctx_t *ctx)
{
#if !HAVE_DECL_NCCLPUTSIGNAL
  CASE_SKIP_NO_NCCL_API(ctx);
#else
  struct block_env e;
  double t[CTX_XCHG_MAX / sizeof(double)];
  n4c_wait_signal_desc_t d[CTX_XCHG_MAX / sizeof(double)];
  int late = ctx->nranks - 1;
  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks (a late rank that signals rank 0), there is 1");
  if (!block_setup(ctx, &e))
    return;
  double mine;
  if (ctx->rank == late) {
    sleep_ms(late_ms());
    mine = wall();
  }
  /* Rank 0 waits for one signal from every other rank. */
  if (ctx->rank == 0) {
    for (int p = 1; p < ctx->nranks; p++)
      d[p - 1] = (n4c_wait_signal_desc_t)N4C_WAIT_SIGNAL_DESC(p);
    CASE_OK(ctx, n4c_comm_wait_signal(e.comm, d, ctx->nranks - 1, e.stream));
  } else {
    CASE_OK(ctx, n4c_comm_signal(e.comm, 0, 0, 0, 0, e.stream));
  }
  if (ctx->rank != late)
    mine = wall();
  if (!gather_times(ctx, mine, t))
    return;
  if (ctx->rank != late)
    CASE_EXPECT(ctx, t[ctx->rank] >= t[late],
                "rank %d's first one-sided call returned %.3f s before rank %d made its own", ctx->rank,
                t[late] - t[ctx->rank], late);
  synced(ctx, &e);
#endif
}

/* The depth this run expects: about a thousand on GPUs (NCCL 2.30.7 on
 * H200: 1021 waits, 1022 allreduces, 1030 sends); on ncclsim exactly
 * NCCLSIM_STREAM_DEPTH where the environment sets it. */
enum { DEPTH_MIN = 900, DEPTH_MAX = 1100, ENQ = 2000 };

void case_BLOCK_04(case_ctx_t *ctx)
{
  struct block_env e;
  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks (a sender behind the receiving rank), there is 1");
  double t[CTX_XCHG_MAX / sizeof(double)];
  if (!block_setup(ctx, &e))
    return;
  if (ctx->rank > 1) {
    ctx_barrier(ctx);
    gather_times(ctx, 0, t);
    return;
  }
  /* One exchange connects the link first. */
  CASE_OK(ctx, ctx->rank == 0 ? n4c_comm_recv(e.comm, &e.buf, 1, e.stream) : n4c_comm_send(e.comm, &e.buf, 0, e.stream));
  if (!synced(ctx, &e) || !ctx_barrier(ctx))
    return;
  double *enq = ctx_host_malloc(ctx, ENQ * sizeof *enq);
  if (!CASE_EXPECT(ctx, enq != NULL, "out of host memory"))
    return;
  double mine = 0;
  if (ctx->rank == 0) {
    for (int i = 0; i < ENQ; i++) {
      CASE_OK(ctx, n4c_comm_recv(e.comm, &e.buf, 1, e.stream));
      enq[i] = wall();
    }
  } else {
    sleep_ms(2 * late_ms());
    mine = wall();
    for (int i = 0; i < ENQ; i++)
      CASE_OK(ctx, n4c_comm_send(e.comm, &e.buf, 0, e.stream));
  }
  if (!synced(ctx, &e) || !gather_times(ctx, mine, t))
    return;
  if (ctx->rank != 0)
    return;
  int before = 0;
  while (before < ENQ && enq[before] < t[1])
    before++;
  int lo = DEPTH_MIN, hi = DEPTH_MAX;
#ifdef NCCLSIM
  const char *set = getenv("NCCLSIM_STREAM_DEPTH");
  if (set && atoi(set) > 0)
    lo = hi = atoi(set);
#endif
  ctx_note(ctx, "rank 0 enqueued %d of %d receives before rank 1 began to send", before, ENQ);
  CASE_EXPECT(ctx, before >= lo && before <= hi,
              "rank 0 enqueued %d receives ahead of the sender before its thread blocked; expected %d..%d", before,
              lo, hi);
}

void case_BLOCK_05(case_ctx_t *ctx)
{
  struct block_env e;
  double t[CTX_XCHG_MAX / sizeof(double)];
  int late = ctx->nranks - 1;
  if (ctx->shared_process)
    CASE_SKIP(ctx, "NCCL reads NCCL_RUNTIME_CONNECT once per process, and this run's processes ran other cases "
                   "(--mpi, --procs or --no-fork)");
  if (ctx->rank == 0)
    setenv("NCCL_RUNTIME_CONNECT", "0", 1); /* one environment per process: set once, before every init */
  if (!ctx_barrier(ctx))
    return;
  if (ctx->nranks > 1 && ctx->rank != 0 && getenv("NCCL_RUNTIME_CONNECT") == NULL)
    setenv("NCCL_RUNTIME_CONNECT", "0", 1); /* ranks in processes of their own */
  if (!block_setup(ctx, &e))
    return;
  if (!late_first_allreduce(ctx, &e, t))
    return;
  if (ctx->rank != late)
    CASE_EXPECT(ctx, t[ctx->rank] < t[late],
                "rank %d's first allreduce waited for rank %d although NCCL_RUNTIME_CONNECT=0 connects at init",
                ctx->rank, late);
  synced(ctx, &e);
}

void case_BLOCK_06(case_ctx_t *ctx)
{
#if !HAVE_DECL_NCCLPUTSIGNAL
  CASE_SKIP_NO_NCCL_API(ctx);
#else
  struct block_env e;
  cudaStream_t other;
  int n = ctx->nranks, next = (ctx->rank + 1) % n, prev = (ctx->rank + n - 1) % n;
  if (n < 2)
    CASE_SKIP(ctx, "needs 2 ranks (rank 1 releases rank 0's wait), there is 1");
  if (!block_setup(ctx, &e))
    return;
  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &other));
  /* Every rank's first one-sided operations, grouped: they connect. */
  n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(prev);
  CASE_OK(ctx, n4c_group_start());
  CASE_OK(ctx, n4c_comm_signal(e.comm, next, 0, 0, 0, e.stream));
  CASE_OK(ctx, n4c_comm_wait_signal(e.comm, &d, 1, e.stream));
  CASE_OK(ctx, n4c_group_end());
  if (!synced(ctx, &e))
    return;
  /* Rank 0 waits on its stream for a signal rank 1 sends only after the
   * barrier, then signals rank 1 from a second stream: that signal must
   * not run before the wait ends. */
  n4c_wait_signal_desc_t from = N4C_WAIT_SIGNAL_DESC(ctx->rank == 0 ? 1 : 0);
  cudaError_t behind = cudaSuccess;
  if (ctx->rank == 0) {
    CASE_OK(ctx, n4c_comm_wait_signal(e.comm, &from, 1, e.stream));
    CASE_OK(ctx, n4c_comm_signal(e.comm, 1, 0, 0, 0, other));
    sleep_ms(late_ms());
    behind = cudaStreamQuery(other);
  }
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 1) {
    CASE_OK(ctx, n4c_comm_signal(e.comm, 0, 0, 0, 0, e.stream));
    CASE_OK(ctx, n4c_comm_wait_signal(e.comm, &from, 1, e.stream));
  }
  if (!synced(ctx, &e))
    return;
  cudaError_t ce = cudaStreamSynchronize(other);
  CASE_EXPECT(ctx, ce == cudaSuccess, "cudaStreamSynchronize of the second stream: %s", cudaGetErrorName(ce));
  if (ctx->rank == 0)
    CASE_EXPECT(ctx, behind == cudaErrorNotReady,
                "the signal on the second stream was done (%s) %d ms after it was enqueued, while the rank's "
                "wait_signal issued before it on the first stream was still pending",
                cudaGetErrorName(behind), late_ms());
#endif
}
