/* case_reg.c — REG-*: buffer and window registration (nccl.core's
 * register_buffer and register_window: ncclCommRegister,
 * ncclCommWindowRegister). */
#include "config.h"

#include <time.h>
#include "case_rma.h"

void case_REG_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  void *mem = rma_mem(ctx, 1 << 16);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CHECK(ctx, mem, "no memory");
  for (int d = 0; d < ncclNumTypes; d++) {
    n4c_buffer_reg_t *reg;
    n4c_buffer_t b = n4c_buffer(mem, 777, (ncclDataType_t)d, ctx->device);
    CASE_OK(ctx, n4c_comm_register_buffer(comm, &b, &reg));
    size_t want = 777 * n4c_dtype_size((ncclDataType_t)d), got = n4c_buffer_reg_size(reg);
    n4c_resource_free(N4C_RESOURCE(reg));
    CASE_CHECK(ctx, got == want, "%s x 777: size %zu, expected %zu", n4c_dtype_name((ncclDataType_t)d),
               got, want);
  }
}

void case_REG_02(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_buffer_reg_t *reg;
  n4c_window_t *win;
  void *other = NULL;
  int odev = (ctx->device + 1) % ctx->ndevices;

  if (ctx->ndevices < 2)
    CASE_SKIP(ctx, "needs 2 devices, there is %d", ctx->ndevices);
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, cudaSetDevice(odev));
  ncclResult_t r = ncclMemAlloc(&other, 4096);
  CASE_CUDA_OK(ctx, cudaSetDevice(ctx->device));
  CASE_CHECK(ctx, r == ncclSuccess, "ncclMemAlloc on device %d: %s", odev, ncclGetErrorString(r));
  ctx_defer(ctx, rma_mem_free_, other);
  n4c_buffer_t b = n4c_buffer(other, 1024, ncclFloat32, odev);
  CASE_STATUS(ctx, n4c_comm_register_buffer(comm, &b, &reg), N4C_EINVAL);
  CASE_CHECK(ctx, strstr(n4c_last_error_message(), "buf"), "message '%s' does not name buf",
             n4c_last_error_message());
  CASE_STATUS(ctx, n4c_comm_register_window(comm, &b, 0, &win), N4C_EINVAL);
  CASE_CHECK(ctx, win == NULL, "window returned for a rejected registration");
}

void case_REG_03(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win;
  void *mem;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, 3 * 4096, N4C_WIN_DEFAULT, &mem, &win))
    return;
  CASE_CHECK(ctx, n4c_window_handle(win) != NULL, "window handle is NULL");
  CASE_CHECK(ctx, n4c_window_size(win) == 3 * 4096, "window size %zu", n4c_window_size(win));
  size_t *sizes = ctx_host_malloc(ctx, (size_t)ctx->nranks * sizeof *sizes), mine = n4c_window_size(win);
  CASE_CHECK(ctx, sizes, "no memory");
  if (!ctx_allgather(ctx, &mine, sizeof mine, sizes, (size_t)ctx->nranks * sizeof *sizes))
    return;
  for (int r = 0; r < ctx->nranks; r++)
    CASE_CHECK(ctx, sizes[r] == mine, "rank %d's window is %zu bytes, mine %zu", r, sizes[r], mine);
}

/* REG-04. The catalog expected a rejection and asked to record what real
 * NCCL does: conformance/probes/win_unequal.c on 2 x H200 found that NCCL
 * 2.28.3 and 2.30.7 both accept windows of unequal sizes, each rank's
 * window keeping its own size (2.30.7 reserves the largest size on every
 * rank), and that puts into them land. Rank 0 registers twice the others'
 * size. Where NCCL has one-sided RMA, each rank puts to the next inside
 * every window; then rank 1 puts past its own size into rank 0's upper
 * half, which NCCL 2.30.7 refuses with ncclInvalidArgument: it checks a
 * put's offset against the caller's own window (ncclDevrGetLsaRankPtr),
 * found when this case first ran on the GPUs. ncclsim also refuses a put
 * past the target's size, which real NCCL does not check (it writes past
 * the peer's memory), so that part runs on ncclsim only. */
void case_REG_04(case_ctx_t *ctx)
{
  enum { SMALL = 1 << 16, PART = 4096 };
  n4c_comm_t *comm;
  n4c_window_t *win;
  void *mem;
  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks (sizes that differ between ranks), there is 1");
  size_t bytes = ctx->rank == 0 ? 2 * SMALL : SMALL;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!rma_window(ctx, comm, bytes, N4C_WIN_COLL_SYMMETRIC, &mem, &win))
    return;
  CASE_CHECK(ctx, n4c_window_size(win) == bytes, "window size %zu, registered %zu", n4c_window_size(win), bytes);
  size_t *sizes = ctx_host_malloc(ctx, (size_t)ctx->nranks * sizeof *sizes);
  CASE_CHECK(ctx, sizes, "no memory");
  if (!ctx_allgather(ctx, &bytes, sizeof bytes, sizes, (size_t)ctx->nranks * sizeof *sizes))
    return;
  for (int r = 0; r < ctx->nranks; r++)
    CASE_CHECK(ctx, sizes[r] == (r == 0 ? 2u : 1u) * SMALL, "rank %d's window is %zu bytes", r, sizes[r]);
#if !HAVE_DECL_NCCLPUTSIGNAL
  ctx_note(ctx, "registration checked; no put: NCCL %d has no one-sided RMA", NCCL_VERSION_CODE);
#else
  cudaStream_t stream;
  int next = (ctx->rank + 1) % ctx->nranks, prev = (ctx->rank + ctx->nranks - 1) % ctx->nranks;
  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &stream));
  CASE_CUDA_OK(ctx, cudaMemset(mem, 0, bytes));
  CASE_CUDA_OK(ctx, cudaMemset(mem, ctx->rank + 1, PART));
  if (!ctx_barrier(ctx))
    return;
  /* Every rank's first one-sided operations, grouped (NCCL connects at
   * the first one, which waits for every rank's). */
  n4c_buffer_t src = n4c_buffer(mem, PART, ncclUint8, ctx->device);
  n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(prev);
  CASE_OK(ctx, n4c_group_start());
  n4c_status_t sp = n4c_comm_put_signal(comm, &src, next, win, PART, 0, 0, 0, stream);
  n4c_status_t sw = n4c_comm_wait_signal(comm, &d, 1, stream);
  CASE_OK(ctx, n4c_group_end());
  CASE_CHECK(ctx, sp == N4C_OK && sw == N4C_OK, "put_signal to rank %d: %s; wait: %s (%s)", next,
             n4c_strerror(sp), n4c_strerror(sw), n4c_last_error_message());
  CASE_CUDA_OK(ctx, cudaStreamSynchronize(stream));
  unsigned char *host = ctx_host_malloc(ctx, PART);
  CASE_CHECK(ctx, host, "no memory");
  CASE_CUDA_OK(ctx, cudaMemcpy(host, (char *)mem + PART, PART, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < PART; i++)
    CASE_CHECK(ctx, host[i] == prev + 1, "byte %zu of what rank %d put is %u, expected %d", i, prev, host[i],
               prev + 1);
  if (!ctx_barrier(ctx))
    return;
  /* Nothing waits for these: each fails at its call (outside a group,
   * NCCL launches, and fails, inside ncclPutSignal). */
  if (ctx->rank == 1) {
    n4c_status_t st = n4c_comm_put_signal(comm, &src, 0, win, SMALL + PART, 0, 0, 0, stream);
    CASE_CHECK(ctx, st == N4C_ENCCL && n4c_last_nccl_result() == ncclInvalidArgument,
               "rank 1's put at byte %d of rank 0's window, past its own %d: %s (ncclResult %d); expected "
               "ncclInvalidArgument", SMALL + PART, SMALL, n4c_strerror(st), (int)n4c_last_nccl_result());
  }
#ifdef NCCLSIM
  if (ctx->rank == 0) { /* past rank 1's window, inside rank 0's own */
    CASE_STATUS(ctx, n4c_comm_put_signal(comm, &src, 1, win, SMALL + PART, 0, 0, 0, stream), N4C_ENCCL);
    const char *why = ncclGetLastError(n4c_comm_handle(comm));
    CASE_CHECK(ctx, strstr(why, "rank 1's window (65536 bytes)"), "diagnostic '%s' does not name rank 1's size",
               why);
    ctx_note(ctx, "ncclsim refuses a put past the peer's size: %s", why);
  }
#endif
#endif
}

void case_REG_05(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win = NULL;
  void *mem = rma_mem(ctx, 4096);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CHECK(ctx, mem, "no memory");
  n4c_buffer_t b = n4c_buffer(mem, 4096, ncclUint8, ctx->device);
  CASE_OK(ctx, n4c_group_start());
  n4c_status_t st = n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &win);
  CASE_OK(ctx, n4c_group_end());
  rma_defer_res(ctx, win);
  CASE_CHECK(ctx, st == N4C_OK && win, "register_window inside a group: %s, window %p (%s)",
             n4c_strerror(st), (void *)win, n4c_last_error_message());
  CASE_CHECK(ctx, n4c_window_handle(win) != NULL, "handle still NULL after group end");
}

void case_REG_06(case_ctx_t *ctx)
{
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  n4c_comm_t *comm = NULL;
  n4c_window_t *win = NULL;
  ncclResult_t async = ncclInProgress;
  void *mem = rma_mem(ctx, 4096);
  time_t until = time(NULL) + 60 * case_slowdown();

  CASE_CHECK(ctx, mem, "no memory");
  config.blocking = 0;
  n4c_status_t st = n4c_comm_init(&comm, ctx->nranks, ctx->rank, &ctx->id, 1, &config);
  if (comm)
    ctx_defer_comm(ctx, comm);
  CASE_CHECK(ctx, st == N4C_OK || st == N4C_EINPROGRESS, "non-blocking init: %s", n4c_strerror(st));
  while (async == ncclInProgress && time(NULL) < until)
    CASE_OK(ctx, n4c_comm_get_async_error(comm, &async));
  CASE_CHECK(ctx, async == ncclSuccess, "non-blocking init ended with %d", (int)async);
  n4c_buffer_t b = n4c_buffer(mem, 4096, ncclUint8, ctx->device);
  CASE_OK(ctx, n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &win));
  rma_defer_res(ctx, win);
  CASE_CHECK(ctx, win != NULL, "no window object on a non-blocking communicator");
  bool was_null = n4c_window_handle(win) == NULL;
  async = ncclInProgress;
  while (async == ncclInProgress && time(NULL) < until)
    CASE_OK(ctx, n4c_comm_get_async_error(comm, &async));
  CASE_CHECK(ctx, async == ncclSuccess, "registration ended with %d", (int)async);
  CASE_CHECK(ctx, n4c_window_handle(win) != NULL, "handle NULL after get_async_error reported success");
  ctx_note(ctx, "handle was %s right after the call", was_null ? "NULL" : "already set");
  ctx_barrier(ctx);
}

void case_REG_07(case_ctx_t *ctx)
{
#ifndef NCCLSIM
  CASE_SKIP(ctx, "needs a platform without windows (ncclsim: NCCLSIM_WINDOWS=0)");
#else
  n4c_comm_t *comm;
  n4c_window_t *win = (n4c_window_t *)1;
  void *mem = rma_mem(ctx, 4096);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CHECK(ctx, mem, "no memory");
  /* The parameter is process-wide: set by all, used by all, then restored. */
  ncclsimParamSet("WINDOWS", "0");
  if (!ctx_barrier(ctx))
    return;
  n4c_buffer_t b = n4c_buffer(mem, 4096, ncclUint8, ctx->device);
  n4c_status_t st = n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &win);
  bool ok = ctx_barrier(ctx);
  ncclsimParamSet("WINDOWS", NULL);
  if (!ok)
    return;
  CASE_CHECK(ctx, st == N4C_OK && win == NULL, "NULL NCCL window: %s, window %p; expected N4C_OK and NULL",
             n4c_strerror(st), (void *)win);
#endif
}

void case_REG_08(case_ctx_t *ctx)
{
  CASE_CHECK(ctx, N4C_WIN_DEFAULT == 0 && NCCL_WIN_DEFAULT == 0, "DEFAULT is not 0");
  CASE_CHECK(ctx, N4C_WIN_COLL_SYMMETRIC == 1 && NCCL_WIN_COLL_SYMMETRIC == 1, "COLL_SYMMETRIC is not 1");
  #ifdef NCCL_WIN_STRICT_ORDERING
  CASE_CHECK(ctx, NCCL_WIN_STRICT_ORDERING == 2, "NCCL_WIN_STRICT_ORDERING is not 2");
#endif
  CASE_CHECK(ctx, N4C_WIN_STRICT_ORDERING == 2, "N4C_WIN_STRICT_ORDERING is not 2");
}

void case_REG_09(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_window_t *win = NULL;
  void *mem;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &mem, 1 << 16));
  n4c_buffer_t b = n4c_buffer(mem, 1 << 16, ncclUint8, ctx->device);
  n4c_status_t st = n4c_comm_register_window(comm, &b, N4C_WIN_DEFAULT, &win);
  rma_defer_res(ctx, win);
  CASE_CHECK(ctx, st == N4C_ENCCL && n4c_last_nccl_result() == ncclUnhandledCudaError,
             "window over cudaMalloc memory: %s, NCCL result %d; expected ncclUnhandledCudaError",
             n4c_strerror(st), (int)n4c_last_nccl_result());
  ctx_barrier(ctx);
}

void case_REG_10(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  void *h, *mem = rma_mem(ctx, 4096);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CHECK(ctx, mem, "no memory");
  ncclComm_t nc = n4c_comm_handle(comm);
  CASE_NCCL_OK(ctx, ncclCommRegister(nc, mem, 4096, &h));
  CASE_NCCL_OK(ctx, ncclCommDeregister(nc, h));
  ncclResult_t r = ncclCommDeregister(nc, h);
  CASE_CHECK(ctx, r == ncclInvalidUsage, "second ncclCommDeregister: %s (%d), expected ncclInvalidUsage",
             ncclGetErrorString(r), (int)r);
}
