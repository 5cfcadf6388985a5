/*
 * case_ft.c — FT-*: fault tolerance and elasticity (nccl.core
 * Communicator.revoke, .shrink, .get_unique_id, .grow, .suspend, .resume:
 * ncclCommRevoke, ncclCommShrink, ncclCommGetUniqueId, ncclCommGrow,
 * ncclCommSuspend, ncclCommResume).
 *
 * The scenario of FT-02 and FT-03: the last rank (the victim) dies in the
 * middle of an allreduce. On ncclsim NCCLSIM_FAULT stops it there, as if
 * its process died; on real NCCL it leaves its allreduce out, which the
 * survivors cannot tell from a death. The survivors revoke, shrink to
 * themselves, check an allreduce, and then the victim comes back as a new
 * rank through grow, and an allreduce over every rank is checked.
 *
 * Error codes are those real NCCL 2.30.7 gave on one H100
 * (docs/conformance/nccl-2.30.7_H100x1_2026-11-23_ft).
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "case.h"

#ifdef NCCLSIM /* from ncclsim's nccl.h, which case.h includes */
#include <ncclsim.h>
#endif

enum { FT_COUNT = 1024 }; /* floats per allreduce */

static double mono(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
  nanosleep(&ts, NULL);
}

struct ft_env {
  cudaStream_t stream;
  float *dev;  /* FT_COUNT floats on the device */
  float *host; /* FT_COUNT floats */
};

static bool ft_env_init(case_ctx_t *ctx, struct ft_env *e)
{
  if (!CASE_EXPECT(ctx, ctx_stream_create(ctx, &e->stream) == cudaSuccess, "cudaStreamCreate failed"))
    return false;
  if (!CASE_EXPECT(ctx, ctx_cuda_malloc(ctx, (void **)&e->dev, FT_COUNT * sizeof(float)) == cudaSuccess,
                   "cudaMalloc failed"))
    return false;
  e->host = ctx_host_malloc(ctx, FT_COUNT * sizeof(float));
  return CASE_EXPECT(ctx, e->host != NULL, "out of host memory");
}

/* Enqueues an in-place allreduce (sum) of FT_COUNT floats, each `mine`. */
static bool ft_allreduce_start(case_ctx_t *ctx, n4c_comm_t *comm, struct ft_env *e, float mine)
{
  for (int i = 0; i < FT_COUNT; i++)
    e->host[i] = mine + (float)(i % 7);
  if (!CASE_EXPECT(ctx, cudaMemcpy(e->dev, e->host, FT_COUNT * sizeof(float), cudaMemcpyHostToDevice) ==
                            cudaSuccess, "cudaMemcpy to the device failed"))
    return false;
  n4c_buffer_t b = n4c_buffer(e->dev, FT_COUNT, ncclFloat32, ctx->device);
  n4c_status_t st = n4c_comm_allreduce(comm, &b, &b, ncclSum, e->stream);
  if (case_refused_across_hosts(ctx, st))
    return false;
  return CASE_EXPECT(ctx, st == N4C_OK, "allreduce: %s; %s", n4c_status_name(st), n4c_last_error_message());
}

/* An allreduce whose ranks contribute `mine` and must all see `sum` (of
 * the contributions) plus nranks * (i % 7) at element i. */
static bool ft_allreduce_check(case_ctx_t *ctx, n4c_comm_t *comm, struct ft_env *e, float mine, float sum,
                               int nranks, const char *what)
{
  if (!ft_allreduce_start(ctx, comm, e, mine))
    return false;
  cudaError_t ce = cudaStreamSynchronize(e->stream);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "%s: the allreduce's stream: %s", what, cudaGetErrorName(ce)))
    return false;
  if (!CASE_EXPECT(ctx, cudaMemcpy(e->host, e->dev, FT_COUNT * sizeof(float), cudaMemcpyDeviceToHost) ==
                            cudaSuccess, "cudaMemcpy from the device failed"))
    return false;
  for (int i = 0; i < FT_COUNT; i++) {
    float want = sum + (float)(nranks * (i % 7));
    if (!CASE_EXPECT(ctx, e->host[i] == want, "%s: element %d is %g, expected %g", what, i, e->host[i], want))
      return false;
  }
  return true;
}

/* Polls comm's async error until it leaves ncclInProgress or `secs` times
 * the build's slowdown pass. */
static ncclResult_t ft_settle(n4c_comm_t *comm, double secs)
{
  ncclResult_t a = ncclInProgress;
  double until = mono() + secs * case_slowdown();
  while (n4c_comm_get_async_error(comm, &a) == N4C_OK && a == ncclInProgress && mono() < until)
    sleep_ms(5);
  return a;
}

/* The result of an NCCL-level failure of nccl4c call `st`. */
static bool ft_nccl_fails(case_ctx_t *ctx, n4c_status_t st, ncclResult_t want, const char *what)
{
  ncclResult_t got = n4c_last_nccl_result();
  return CASE_EXPECT(ctx, st == N4C_ENCCL && got == want, "%s: %s (ncclResult_t %d); expected N4C_ENCCL with %s (%d)",
                     what, n4c_status_name(st), (int)got, ncclGetErrorString(want), (int)want);
}

/* Revokes comm and waits for it to go quiet (async ncclSuccess). */
static bool ft_revoke(case_ctx_t *ctx, n4c_comm_t *comm)
{
  n4c_status_t st = n4c_comm_revoke(comm, 0);
  if (case_refused_across_hosts(ctx, st))
    return false;
  if (st == N4C_ENOTSUP) {
    case_skip_unsupported(ctx);
    return false;
  }
  if (!CASE_EXPECT(ctx, st == N4C_OK || st == N4C_EINPROGRESS, "revoke: %s; %s", n4c_status_name(st),
                   n4c_last_error_message()))
    return false;
  ncclResult_t a = ft_settle(comm, 30);
  return CASE_EXPECT(ctx, a == ncclSuccess, "after revoke the async error is %s (%d), not ncclSuccess",
                     ncclGetErrorString(a), (int)a);
}

void case_FT_01(case_ctx_t *ctx)
{
  struct ft_env e;
  n4c_comm_t *comm, *sub = NULL;
  float n = (float)ctx->nranks;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!ft_env_init(ctx, &e) || !ft_allreduce_check(ctx, comm, &e, 1, n, ctx->nranks, "before revoke"))
    return;
  if (!ft_revoke(ctx, comm))
    return;
  /* Later work fails; so do a second revoke and a finalize. */
  n4c_buffer_t b = n4c_buffer(e.dev, FT_COUNT, ncclFloat32, ctx->device);
  if (!ft_nccl_fails(ctx, n4c_comm_allreduce(comm, &b, &b, ncclSum, e.stream), ncclInvalidUsage,
                     "allreduce on a revoked communicator"))
    return;
  if (!ft_nccl_fails(ctx, n4c_comm_revoke(comm, 0), ncclInvalidArgument, "a second revoke"))
    return;
  if (!ctx_barrier(ctx))
    return;
  /* Management goes on: a split of the revoked communicator works. */
  CASE_OK(ctx, n4c_comm_split(comm, 0, ctx->rank, NULL, &sub));
  ctx_defer_comm(ctx, sub);
  if (!ft_allreduce_check(ctx, sub, &e, 2, 2 * n, ctx->nranks, "split of the revoked communicator"))
    return;
  if (!ft_nccl_fails(ctx, n4c_comm_finalize(comm), ncclInvalidArgument, "finalize after revoke"))
    return;
  CASE_OK(ctx, n4c_comm_destroy(comm));
}

/* Waits until `comm`'s allreduce on e->stream shows a failure (ncclsim) or
 * `secs` pass (real NCCL has no failure detector: the survivors' watchdog
 * decides). True when it failed. */
static bool ft_wait_failure(n4c_comm_t *comm, struct ft_env *e, double secs)
{
  double until = mono() + secs * case_slowdown();
  while (mono() < until) {
    ncclResult_t a = ncclSuccess;
    if (n4c_comm_get_async_error(comm, &a) == N4C_OK && a != ncclSuccess && a != ncclInProgress)
      return true;
    cudaError_t q = cudaStreamQuery(e->stream);
    if (q != cudaErrorNotReady && q != cudaSuccess)
      return true;
    sleep_ms(10);
  }
  return false;
}

/* The scenario up to the shrink (FT-02), and on to the grow (FT-03). */
static void ft_scenario(case_ctx_t *ctx, bool grow)
{
  struct ft_env e;
  n4c_comm_t *comm, *small = NULL, *big = NULL;
  int victim = ctx->nranks - 1, v;
  bool dead = ctx->rank == victim;

  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks");
#ifdef NCCLSIM
  /* The victim stops at its 2nd operation (the warm-up is its 1st); the
   * survivors' wait for it ends within NCCLSIM_TIMEOUT. Read once, when
   * the communicator is made; threads of one process share the setting,
   * so everyone sets it before and restores it after. The flight recorder
   * is off for it: a deliberate death is no failure to keep a dump of
   * (it would be left in /tmp). */
  char fault[32];
  snprintf(fault, sizeof fault, "%d:2", victim);
  ncclsimParamSet("FAULT", fault);
  ncclsimParamSet("TRACE_RING", "0");
  char timeout[32];
  snprintf(timeout, sizeof timeout, "%d", 10 * case_slowdown());
  ncclsimParamSet("TIMEOUT", timeout);
#endif
  n4c_status_t st = ctx_comm_init(ctx, &comm);
  bool met = ctx_barrier(ctx);
#ifdef NCCLSIM
  ncclsimParamSet("FAULT", NULL);
  ncclsimParamSet("TRACE_RING", NULL);
#endif
  CASE_OK(ctx, st);
  if (!met || !ft_env_init(ctx, &e) ||
      !ft_allreduce_check(ctx, comm, &e, 1, (float)ctx->nranks, ctx->nranks, "the warm-up"))
    goto out;

  /* The victim dies in the allreduce; the survivors' does not complete. */
#ifdef NCCLSIM
  if (!ft_allreduce_start(ctx, comm, &e, (float)(ctx->rank + 1)))
    goto out;
#else
  if (!dead && !ft_allreduce_start(ctx, comm, &e, (float)(ctx->rank + 1)))
    goto out;
#endif
  if (!dead) {
    bool seen = ft_wait_failure(comm, &e, 30);
#ifdef NCCLSIM
    if (!CASE_EXPECT(ctx, seen, "the survivor saw no failure of its allreduce within %d s (NCCLSIM_TIMEOUT %d)",
                     30 * case_slowdown(), 10 * case_slowdown()))
      goto out;
#else
    ctx_note(ctx, "the survivor's allreduce %s within %d s", seen ? "failed" : "hung", 30 * case_slowdown());
#endif
    if (!ft_revoke(ctx, comm))
      goto out;
    /* The revoked allreduce's stream: ncclsim reports its failure once
     * (cudaErrorLaunchFailure), a GPU nothing; either way it is drained. */
    cudaError_t ce = cudaStreamSynchronize(e.stream);
    ctx_note(ctx, "after revoke the stream synchronizes with %s", cudaGetErrorName(ce));
    int ex[1] = { victim };
    st = n4c_comm_shrink(comm, ex, 1, NULL, N4C_SHRINK_ABORT, &small);
    if (case_refused_across_hosts(ctx, st))
      goto out;
    if (st == N4C_ENOTSUP) {
      case_skip_unsupported(ctx);
      goto out;
    }
    if (!CASE_EXPECT(ctx, st == N4C_OK, "shrink(exclude %d, ABORT): %s; %s", victim, n4c_status_name(st),
                     n4c_last_error_message()))
      goto out;
    ctx_defer_comm(ctx, small);
    if (!CASE_EXPECT(ctx, n4c_comm_nranks(small, &v) == N4C_OK && v == ctx->nranks - 1,
                     "the shrunk communicator has %d ranks, expected %d", v, ctx->nranks - 1) ||
        !CASE_EXPECT(ctx, n4c_comm_rank(small, &v) == N4C_OK && v == ctx->rank,
                     "rank %d is rank %d in the shrunk communicator", ctx->rank, v))
      goto out;
    /* Ranks 0..n-2 contribute r + 1. */
    float sum = (float)(ctx->nranks - 1) * (float)ctx->nranks / 2;
    if (!ft_allreduce_check(ctx, small, &e, (float)(ctx->rank + 1), sum, ctx->nranks - 1,
                            "allreduce of the survivors"))
      goto out;
  }
  /* The victim's communicator is gone with it; what it comes back with
   * starts clean (its stream drained: ncclsim reports the stopped
   * allreduce there once). */
  if (dead) {
    n4c_comm_abort(comm);
    (void)cudaStreamSynchronize(e.stream);
  }
  if (!ctx_barrier(ctx) || !grow)
    goto out;

  /* The victim comes back as a new rank, through an id from rank 0. */
  ncclUniqueId gid;
  if (ctx->rank == 0) {
    st = n4c_comm_get_unique_id(small, &gid);
    if (st == N4C_ENOTSUP)
      case_skip_unsupported(ctx);
    else
      CASE_EXPECT(ctx, st == N4C_OK, "get_unique_id: %s; %s", n4c_status_name(st), n4c_last_error_message());
  }
  if (!ctx_bcast(ctx, &gid, sizeof gid, 0))
    goto out;
  if (dead) {
    n4c_comm_t *null;
    CASE_OK(ctx, n4c_comm_new(&null));
    ctx_defer_comm(ctx, null);
    st = n4c_comm_grow(null, ctx->nranks, &gid, victim, NULL, &big);
  } else {
    st = n4c_comm_grow(small, ctx->nranks, ctx->rank == 0 ? &gid : NULL, N4C_GROW_EXISTING, NULL, &big);
  }
  if (!CASE_EXPECT(ctx, st == N4C_OK, "grow to %d ranks: %s; %s", ctx->nranks, n4c_status_name(st),
                   n4c_last_error_message()))
    goto out;
  ctx_defer_comm(ctx, big);
  if (!CASE_EXPECT(ctx, n4c_comm_nranks(big, &v) == N4C_OK && v == ctx->nranks,
                   "the grown communicator has %d ranks, expected %d", v, ctx->nranks) ||
      !CASE_EXPECT(ctx, n4c_comm_rank(big, &v) == N4C_OK && v == ctx->rank,
                   "rank %d is rank %d in the grown communicator", ctx->rank, v))
    goto out;
  ft_allreduce_check(ctx, big, &e, (float)(ctx->rank + 1), (float)ctx->nranks * (float)(ctx->nranks + 1) / 2,
                     ctx->nranks, "allreduce after grow");
out:
#ifdef NCCLSIM
  ncclsimParamSet("TIMEOUT", NULL);
#endif
  return;
}

void case_FT_02(case_ctx_t *ctx) { ft_scenario(ctx, false); }

void case_FT_03(case_ctx_t *ctx) { ft_scenario(ctx, true); }

void case_FT_04(case_ctx_t *ctx)
{
  struct ft_env e;
  n4c_comm_t *comm;
  bool last = ctx->rank == ctx->nranks - 1;

  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks");
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!ft_env_init(ctx, &e) || !ft_allreduce_check(ctx, comm, &e, 1, (float)ctx->nranks, ctx->nranks, "the warm-up"))
    return;
  /* Every rank but the last enqueues an allreduce that cannot complete. */
  if (!last) {
    if (!ft_allreduce_start(ctx, comm, &e, 1))
      return;
    sleep_ms(200);
    cudaError_t q = cudaStreamQuery(e.stream);
    CASE_CHECK(ctx, q == cudaErrorNotReady, "the allreduce without its last rank is not in flight: %s",
               cudaGetErrorName(q));
    if (!ft_revoke(ctx, comm))
      return;
    /* Revoke stopped it: the stream drains. */
    double until = mono() + 30 * case_slowdown();
    while ((q = cudaStreamQuery(e.stream)) == cudaErrorNotReady && mono() < until)
      sleep_ms(5);
    CASE_CHECK(ctx, q != cudaErrorNotReady, "%d s after revoke the allreduce is still in flight",
               30 * case_slowdown());
    ctx_note(ctx, "the revoked allreduce's stream ended with %s", cudaGetErrorName(q));
  }
  if (!ctx_barrier(ctx))
    return;
  if (last && !ft_revoke(ctx, comm))
    return;
  ctx_barrier(ctx);
}

void case_FT_05(case_ctx_t *ctx)
{
  struct ft_env e;
  n4c_comm_t *comm;
  uint64_t suspended = 7;
  float n = (float)ctx->nranks;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!ft_env_init(ctx, &e) || !ft_allreduce_check(ctx, comm, &e, 1, n, ctx->nranks, "before suspend"))
    return;
  n4c_status_t st = n4c_comm_suspend(comm, N4C_SUSPEND_MEM);
  if (st == N4C_ENOTSUP)
    CASE_SKIP_UNSUPPORTED(ctx);
  if (case_refused_across_hosts(ctx, st))
    return;
  CASE_CHECK(ctx, st == N4C_OK, "suspend(MEM): %s; %s", n4c_status_name(st), n4c_last_error_message());
  CASE_OK(ctx, n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_SUSPENDED, &suspended));
  CASE_CHECK(ctx, suspended == 1, "mem_stat(GPU_MEM_SUSPENDED) is %llu while suspended, expected 1",
             (unsigned long long)suspended);
  if (!ft_nccl_fails(ctx, n4c_comm_suspend(comm, N4C_SUSPEND_MEM), ncclInvalidUsage, "a second suspend"))
    return;
  CASE_OK(ctx, n4c_comm_resume(comm));
  CASE_OK(ctx, n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_SUSPENDED, &suspended));
  CASE_CHECK(ctx, suspended == 0, "mem_stat(GPU_MEM_SUSPENDED) is %llu after resume, expected 0",
             (unsigned long long)suspended);
  if (!ft_nccl_fails(ctx, n4c_comm_resume(comm), ncclInvalidUsage, "a resume of a communicator not suspended"))
    return;
  if (!ctx_barrier(ctx))
    return;
  ft_allreduce_check(ctx, comm, &e, 3, 3 * n, ctx->nranks, "after resume");
}
