/*
 * case_sig.c — SIG-*: nccl.core's signal, wait_signal and put_signal
 * (ncclSignal, ncclWaitSignal, ncclPutSignal), and SIG-STRESS.
 *
 * Every case registers one symmetric window per rank: the first half is
 * the source of puts, the second half their target.
 */
#include "config.h"

#if !HAVE_DECL_NCCLPUTSIGNAL
/* The linked NCCL has no one-sided API (it came in 2.29): every SIG case
 * is a skip that names the version. */
#include "case.h"
#define SIG_SKIP(id) \
  void case_##id(case_ctx_t *ctx) { CASE_SKIP_NO_NCCL_API(ctx); }
SIG_SKIP(SIG_01)
SIG_SKIP(SIG_02)
SIG_SKIP(SIG_03)
SIG_SKIP(SIG_04)
SIG_SKIP(SIG_05)
SIG_SKIP(SIG_06)
SIG_SKIP(SIG_07)
SIG_SKIP(SIG_08)
SIG_SKIP(SIG_09)
SIG_SKIP(SIG_10)
SIG_SKIP(SIG_11)
SIG_SKIP(SIG_12)
SIG_SKIP(SIG_13)
SIG_SKIP(SIG_STRESS)
#else /* HAVE_DECL_NCCLPUTSIGNAL */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include "case_rma.h"
#include "pattern.h"

enum { HALF = 1 << 16, WIN = 2 * HALF };

struct sig_env {
  n4c_comm_t *comm;
  n4c_window_t *win;
  unsigned char *mem; /* the window's memory */
  cudaStream_t stream;
  int next, prev;
};

static bool sync_ok(case_ctx_t *ctx, struct sig_env *e, const char *what)
{
  cudaError_t ce = cudaStreamSynchronize(e->stream);
  return CASE_EXPECT(ctx, ce == cudaSuccess, "%s: cudaStreamSynchronize: %s (%s)", what,
                     cudaGetErrorName(ce), ncclGetLastError(n4c_comm_handle(e->comm)));
}

static bool sig_setup(case_ctx_t *ctx, struct sig_env *e, size_t bytes)
{
  void *mem;
  n4c_status_t st = ctx_comm_init(ctx, &e->comm);
  if (!CASE_EXPECT(ctx, st == N4C_OK, "ctx_comm_init: %s", n4c_strerror(st)))
    return false;
  cudaError_t ce = ctx_stream_create(ctx, &e->stream);
  if (!CASE_EXPECT(ctx, ce == cudaSuccess, "cudaStreamCreate: %s", cudaGetErrorName(ce)) ||
      !rma_window(ctx, e->comm, bytes, N4C_WIN_COLL_SYMMETRIC, &mem, &e->win))
    return false;
  e->mem = mem;
  e->next = (ctx->rank + 1) % ctx->nranks;
  e->prev = (ctx->rank + ctx->nranks - 1) % ctx->nranks;
  /* Every rank's first one-sided operation, together: NCCL sets one-sided
   * state up at the first one, and that call blocks until every rank has
   * made its own (a case where only some ranks signal would hang there). */
  n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(e->prev);
  n4c_status_t gs = n4c_group_start();
  n4c_status_t s1 = n4c_comm_signal(e->comm, e->next, 0, 0, 0, e->stream);
  n4c_status_t s2 = n4c_comm_wait_signal(e->comm, &d, 1, e->stream);
  n4c_status_t ge = n4c_group_end();
  if (!CASE_EXPECT(ctx, gs == N4C_OK && s1 == N4C_OK && s2 == N4C_OK && ge == N4C_OK,
                   "the first signal and wait, grouped: %s, %s, %s, %s (%s)", n4c_strerror(gs), n4c_strerror(s1),
                   n4c_strerror(s2), n4c_strerror(ge), n4c_last_error_message()) ||
      !sync_ok(ctx, e, "the first signal and wait"))
    return false;
  return ctx_barrier(ctx);
}

/* The stream has work left after a pause (a wait that must not be done). */
static bool still_waiting(case_ctx_t *ctx, struct sig_env *e, const char *what)
{
  struct timespec ts = { 0, 50 * 1000 * 1000 };
  nanosleep(&ts, NULL);
  cudaError_t ce = cudaStreamQuery(e->stream);
  return CASE_EXPECT(ctx, ce == cudaErrorNotReady, "%s: the wait completed early (%s)", what,
                     cudaGetErrorName(ce));
}

static void wait_from(case_ctx_t *ctx, struct sig_env *e, int peer, int count)
{
  n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(peer);
  d.op_count = count;
  CASE_OK(ctx, n4c_comm_wait_signal(e->comm, &d, 1, e->stream));
}

void case_SIG_01(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  CASE_OK(ctx, n4c_comm_signal(e.comm, e.next, 0, 0, 0, e.stream));
  wait_from(ctx, &e, e.prev, 1);
  sync_ok(ctx, &e, "signal to next, wait from prev");
}

void case_SIG_02(case_ctx_t *ctx)
{
  struct sig_env e;
  if (ctx->nranks < 2)
    CASE_SKIP(ctx, "needs 2 ranks (rank 0 signals rank 1), there is 1");
  if (!sig_setup(ctx, &e, WIN))
    return;
  if (ctx->rank == 0)
    for (int i = 0; i < 3; i++)
      CASE_OK(ctx, n4c_comm_signal(e.comm, 1, 0, 0, 0, e.stream));
  if (ctx->rank == 1) {
    wait_from(ctx, &e, 0, 2);
    wait_from(ctx, &e, 0, 1);
    if (!sync_ok(ctx, &e, "waits for 2 then 1 of 3 signals"))
      return;
    wait_from(ctx, &e, 0, 2);
    still_waiting(ctx, &e, "a wait for 2 signals with none sent");
  }
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 0) {
    CASE_OK(ctx, n4c_comm_signal(e.comm, 1, 0, 0, 0, e.stream));
    CASE_OK(ctx, n4c_comm_signal(e.comm, 1, 0, 0, 0, e.stream));
  }
  sync_ok(ctx, &e, "the rest of the signals");
}

void case_SIG_03(case_ctx_t *ctx)
{
  struct sig_env e;
  n4c_wait_signal_desc_t d[CTX_XCHG_MAX];
  if (ctx->nranks < 3)
    CASE_SKIP(ctx, "needs 3 ranks (a waiter and two signalling peers), there are %d", ctx->nranks);
  if (!sig_setup(ctx, &e, WIN))
    return;
  if (ctx->rank == 0) {
    for (int p = 1; p < ctx->nranks; p++) {
      d[p - 1] = (n4c_wait_signal_desc_t)N4C_WAIT_SIGNAL_DESC(p);
      d[p - 1].op_count = p;
    }
    CASE_OK(ctx, n4c_comm_wait_signal(e.comm, d, ctx->nranks - 1, e.stream));
  } else {
    /* Rank 1 holds back its signal; the others send all of theirs. */
    for (int i = 0; i < (ctx->rank == 1 ? 0 : ctx->rank); i++)
      CASE_OK(ctx, n4c_comm_signal(e.comm, 0, 0, 0, 0, e.stream));
  }
  if (ctx->rank == 0 && !still_waiting(ctx, &e, "rank 1's count has not arrived"))
    return;
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 1)
    CASE_OK(ctx, n4c_comm_signal(e.comm, 0, 0, 0, 0, e.stream));
  sync_ok(ctx, &e, "every peer's count");
}

static bool nccl_invalid(case_ctx_t *ctx, n4c_status_t st, const char *what)
{
  return CASE_EXPECT(ctx, st == N4C_ENCCL && n4c_last_nccl_result() == ncclInvalidArgument,
                     "%s: %s, NCCL result %d; expected ncclInvalidArgument", what, n4c_strerror(st),
                     (int)n4c_last_nccl_result());
}

void case_SIG_04(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  nccl_invalid(ctx, n4c_comm_signal(e.comm, e.next, 1, 0, 0, e.stream), "signal_index 1");
  nccl_invalid(ctx, n4c_comm_signal(e.comm, e.next, 0, 1, 0, e.stream), "context 1");
  nccl_invalid(ctx, n4c_comm_signal(e.comm, e.next, 0, 0, 1, e.stream), "flags 1");
  n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(e.prev);
  d.signal_index = 1;
  nccl_invalid(ctx, n4c_comm_wait_signal(e.comm, &d, 1, e.stream), "wait signal_index 1");
  d.signal_index = 0, d.context = 1;
  nccl_invalid(ctx, n4c_comm_wait_signal(e.comm, &d, 1, e.stream), "wait context 1");
  d.context = 0, d.op_count = 0;
  CASE_STATUS(ctx, n4c_comm_wait_signal(e.comm, &d, 1, e.stream), N4C_EINVAL);
  CASE_STATUS(ctx, n4c_comm_wait_signal(e.comm, &d, 0, e.stream), N4C_EINVAL);
  /* The same at the NCCL level. */
  ncclComm_t nc = n4c_comm_handle(e.comm);
  ncclWaitSignalDesc_t nd = { 0, e.prev, 0, 0 };
  ncclResult_t r = ncclWaitSignal(1, &nd, nc, e.stream);
  CASE_CHECK(ctx, r == ncclInvalidArgument, "ncclWaitSignal opCnt 0: %d", (int)r);
  nd.opCnt = -1;
  r = ncclWaitSignal(1, &nd, nc, e.stream);
  CASE_CHECK(ctx, r == ncclInvalidArgument, "ncclWaitSignal opCnt -1: %d", (int)r);
  nd.opCnt = 1;
  r = ncclWaitSignal(0, &nd, nc, e.stream);
  CASE_CHECK(ctx, r == ncclInvalidArgument, "ncclWaitSignal nDesc 0: %d", (int)r);
  /* Nothing of it was enqueued: a real exchange still pairs up. */
  CASE_OK(ctx, n4c_comm_signal(e.comm, e.next, 0, 0, 0, e.stream));
  wait_from(ctx, &e, e.prev, 1);
  sync_ok(ctx, &e, "after the rejected calls");
}

/* Puts `count` elements of dtype from the source half to next at element
 * offset `off`, and checks what prev put here. */
static void put_and_check(case_ctx_t *ctx, struct sig_env *e, ncclDataType_t dt, size_t count,
                          size_t off, int tag, bool fill_async)
{
  size_t isz = n4c_dtype_size(dt), bytes = count * isz;
  static _Thread_local unsigned char host[WIN];
  pattern_fill_not(host, HALF, pattern_seed(e->prev, tag));
  CASE_CUDA_OK(ctx, cudaMemcpy(e->mem + HALF, host, HALF, cudaMemcpyHostToDevice));
  pattern_fill(host, bytes, pattern_seed(ctx->rank, tag));
  if (fill_async) { /* stale data first; the put must send the copy after it */
    CASE_CUDA_OK(ctx, cudaMemset(e->mem, 0xee, bytes));
    CASE_CUDA_OK(ctx, cudaMemcpyAsync(e->mem, host, bytes, cudaMemcpyHostToDevice, e->stream));
  } else {
    CASE_CUDA_OK(ctx, cudaMemcpy(e->mem, host, bytes, cudaMemcpyHostToDevice));
  }
  if (!ctx_barrier(ctx))
    return;
  n4c_buffer_t src = n4c_buffer(e->mem, count, dt, ctx->device);
  /* The target half starts at HALF bytes, i.e. HALF / isz elements. */
  CASE_OK(ctx, n4c_comm_put_signal(e->comm, &src, e->next, e->win, HALF / isz + off, 0, 0, 0,
                                   e->stream));
  wait_from(ctx, e, e->prev, 1);
  if (!sync_ok(ctx, e, "put_signal then wait_signal"))
    return;
  CASE_CUDA_OK(ctx, cudaMemcpy(host, e->mem + HALF, HALF, cudaMemcpyDeviceToHost));
  uint64_t seed = pattern_seed(e->prev, tag);
  size_t at = off * isz, nd;
  for (size_t i = 0; i < at; i++)
    CASE_CHECK(ctx, host[i] == (uint8_t)~pattern_byte(seed, i), "byte %zu before the offset "
               "(%zu elements = %zu bytes) was written", i, off, at);
  size_t bad = pattern_check(host + at, bytes, seed, &nd);
  CASE_CHECK(ctx, bad == bytes, "%s x %zu at element offset %zu: byte %zu of the data from rank %d "
             "differs (%zu differ)", n4c_dtype_name(dt), count, off, bad, e->prev, nd);
  CASE_CHECK(ctx, host[at + bytes] == (uint8_t)~pattern_byte(seed, at + bytes),
             "the byte after the data was written");
}

void case_SIG_05(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  put_and_check(ctx, &e, ncclUint8, 40000, 0, 5, false);
}

void case_SIG_06(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  put_and_check(ctx, &e, ncclFloat64, 1001, 7, 6, false); /* lands at byte 56 */
  if (ctx_barrier(ctx))
    put_and_check(ctx, &e, ncclFloat16, 999, 3, 7, false); /* byte 6 */
}

void case_SIG_07(case_ctx_t *ctx)
{
  struct sig_env e;
  void *plain, *mem2;
  n4c_window_t *w2;
  if (!sig_setup(ctx, &e, WIN))
    return;
  CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &plain, 4096));
  n4c_buffer_t b = n4c_buffer(plain, 1024, ncclFloat32, ctx->device);
  nccl_invalid(ctx, n4c_comm_put_signal(e.comm, &b, e.next, e.win, 0, 0, 0, 0, e.stream),
               "source from cudaMalloc");
  /* A window, but not a symmetric one. */
  if (!rma_window(ctx, e.comm, 8192, N4C_WIN_DEFAULT, &mem2, &w2))
    return;
  b = n4c_buffer(mem2, 1024, ncclFloat32, ctx->device);
  nccl_invalid(ctx, n4c_comm_put_signal(e.comm, &b, e.next, e.win, 0, 0, 0, 0, e.stream),
               "source in a DEFAULT (not symmetric) window");
  b = n4c_buffer(e.mem, 1024, ncclFloat32, ctx->device);
  CASE_STATUS(ctx, n4c_comm_put_signal(e.comm, &b, e.next, NULL, 0, 0, 0, 0, e.stream), N4C_EINVAL);
  ncclResult_t r = ncclPutSignal(e.mem, 1024, ncclFloat32, e.next, NULL, 0, 0, 0, 0,
                                 n4c_comm_handle(e.comm), e.stream);
  CASE_CHECK(ctx, r == ncclInvalidArgument, "ncclPutSignal with a NULL window: %d", (int)r);
  ctx_barrier(ctx);
}

void case_SIG_08(case_ctx_t *ctx)
{
  struct sig_env e;
  ncclWindow_t *all = ctx_host_malloc(ctx, (size_t)ctx->nranks * sizeof *all);
  CASE_CHECK(ctx, all, "no memory");
  if (!sig_setup(ctx, &e, WIN))
    return;
  ncclWindow_t mine = n4c_window_handle(e.win);
  if (!ctx_allgather(ctx, &mine, sizeof mine, all, (size_t)ctx->nranks * sizeof *all))
    return;
  ncclComm_t nc = n4c_comm_handle(e.comm);
  ncclResult_t own = ncclPutSignal(e.mem, 64, ncclUint8, e.next, mine, HALF, 0, 0, 0, nc, e.stream);
  CASE_CHECK(ctx, own == ncclSuccess, "put naming the caller's own handle: %s", ncclGetErrorString(own));
  wait_from(ctx, &e, e.prev, 1);
  if (!sync_ok(ctx, &e, "put with the own handle"))
    return;
  ncclResult_t theirs = all[e.next] == mine ? ncclSuccess
                        : ncclPutSignal(e.mem, 64, ncclUint8, e.next, all[e.next], HALF, 0, 0, 0, nc,
                                        e.stream);
  if (all[e.next] == mine) {
    ctx_note(ctx, "the peer's handle has the same value as mine: nothing to tell apart");
  } else {
    CASE_CHECK(ctx, theirs == ncclInternalError, "put naming the peer's handle: %s (%d), real NCCL "
               "2.30.7 gives ncclInternalError", ncclGetErrorString(theirs), (int)theirs);
    case_divergence(ctx, "nccl.core's put_signal documentation says it takes \"the peer's window "
                    "handle\"; NCCL 2.30.7 names the target by the caller's own handle of the "
                    "collective window (works) and rejects the peer's handle value with "
                    "ncclInternalError (\"device object does not exist in shadow pool\")");
  }
  ctx_barrier(ctx);
}

void case_SIG_09(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  n4c_buffer_t b = n4c_buffer(e.mem, 16, ncclUint8, ctx->device);
  CASE_STATUS(ctx, n4c_comm_signal(e.comm, ctx->nranks, 0, 0, 0, e.stream), N4C_EINVAL);
  CASE_STATUS(ctx, n4c_comm_put_signal(e.comm, &b, -1, e.win, 0, 0, 0, 0, e.stream), N4C_EINVAL);
  ncclComm_t nc = n4c_comm_handle(e.comm);
  ncclResult_t r = ncclSignal(ctx->nranks, 0, 0, 0, nc, e.stream);
  CASE_CHECK(ctx, r == ncclInvalidArgument, "ncclSignal to peer %d: %d", ctx->nranks, (int)r);
  r = ncclPutSignal(e.mem, 16, ncclUint8, ctx->nranks, n4c_window_handle(e.win), HALF, 0, 0, 0, nc,
                    e.stream);
  CASE_CHECK(ctx, r == ncclInvalidArgument, "ncclPutSignal to peer %d: %d", ctx->nranks, (int)r);
}

void case_SIG_10(case_ctx_t *ctx)
{
  n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(5);
  CASE_CHECK(ctx, d.peer == 5 && d.op_count == 1 && d.signal_index == 0 && d.context == 0,
             "N4C_WAIT_SIGNAL_DESC(5) is {peer %d, op_count %d, signal_index %d, context %d}", d.peer,
             d.op_count, d.signal_index, d.context);
}

void case_SIG_11(case_ctx_t *ctx)
{
  struct sig_env e;
  static _Thread_local unsigned char host[4096];
  if (!sig_setup(ctx, &e, WIN))
    return;
  pattern_fill(host, sizeof host, pattern_seed(ctx->rank, 11));
  CASE_CUDA_OK(ctx, cudaMemcpy(e.mem, host, sizeof host, cudaMemcpyHostToDevice));
  if (!ctx_barrier(ctx))
    return;
  n4c_buffer_t b = n4c_buffer(e.mem, sizeof host, ncclUint8, ctx->device);
  CASE_OK(ctx, n4c_group_start());
  CASE_OK(ctx, n4c_comm_put_signal(e.comm, &b, e.next, e.win, HALF, 0, 0, 0, e.stream));
  wait_from(ctx, &e, e.prev, 1);
  CASE_OK(ctx, n4c_group_end());
  if (!sync_ok(ctx, &e, "grouped put and wait"))
    return;
  CASE_CUDA_OK(ctx, cudaMemcpy(host, e.mem + HALF, sizeof host, cudaMemcpyDeviceToHost));
  size_t nd, bad = pattern_check(host, sizeof host, pattern_seed(e.prev, 11), &nd);
  CASE_CHECK(ctx, bad == sizeof host, "byte %zu of rank %d's put differs", bad, e.prev);
}

void case_SIG_12(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  put_and_check(ctx, &e, ncclInt32, 8000, 0, 12, true);
}

void case_SIG_13(case_ctx_t *ctx)
{
  struct sig_env e;
  if (!sig_setup(ctx, &e, WIN))
    return;
  ncclWindow_t h = n4c_window_handle(e.win);
  void *other = rma_mem(ctx, 4096);
  n4c_window_t *w2;
  CASE_CHECK(ctx, other, "no memory");
  /* A source that is still in a symmetric window, so the target is what
   * fails. Registered before the target is closed: NCCL 2.30.7 hands a window
   * registered after a deregistration the freed handle's value, and the
   * stale handle would then name it (the put succeeds). */
  n4c_buffer_t ob = n4c_buffer(other, 4096, ncclUint8, ctx->device);
  CASE_OK(ctx, n4c_comm_register_window(e.comm, &ob, N4C_WIN_COLL_SYMMETRIC, &w2));
  rma_defer_res(ctx, w2);
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(e.win)));
  n4c_buffer_t b = n4c_buffer(e.mem, 16, ncclUint8, ctx->device);
  CASE_STATUS(ctx, n4c_comm_put_signal(e.comm, &b, e.next, e.win, 0, 0, 0, 0, e.stream), N4C_EINVAL);
  ncclResult_t r = ncclPutSignal(other, 16, ncclUint8, e.next, h, 0, 0, 0, 0,
                                 n4c_comm_handle(e.comm), e.stream);
  CASE_CHECK(ctx, r == ncclInternalError, "ncclPutSignal naming a deregistered window: %s (%d), "
             "expected ncclInternalError", ncclGetErrorString(r), (int)r);
  ctx_barrier(ctx);
}

/* ---- SIG-STRESS ----
 * Every rank sends N4C_SIG_STRESS signals in all (default 100000; 1000000
 * is the full run) to random peers in random order, half of them puts. A
 * put from s to t carries slot k (of SLOTS) of s's source for t into t's
 * slot (s, k). Then every rank waits for exactly what each peer sent, in
 * random chunks, checks the slots, and proves nothing extra was counted. */
enum { SLOTS = 16, SLOT_BYTES = 64 };

static uint8_t slot_byte(int s, int t, int k, int i) { return (uint8_t)(s * 31 + t * 7 + k * 3 + i + 1); }

void case_SIG_STRESS(case_ctx_t *ctx)
{
  const char *env = getenv("N4C_SIG_STRESS");
  long total = env ? atol(env) : 100000;
  int n = ctx->nranks;
  size_t region = (size_t)n * SLOTS * SLOT_BYTES;
  struct sig_env e;
  unsigned seed = 12345u + (unsigned)ctx->rank * 7919u;

  /* Each rank's counts to every peer go through one exchange slot. */
  if (n < 2 || (size_t)n * sizeof(uint64_t) > CTX_XCHG_MAX)
    CASE_SKIP(ctx, "runs at 2..%zu ranks, not %d", CTX_XCHG_MAX / sizeof(uint64_t), n);
  if (!sig_setup(ctx, &e, 2 * region))
    return;
  unsigned char *host = ctx_host_malloc(ctx, 2 * region);
  uint64_t *sent = ctx_host_malloc(ctx, (size_t)n * sizeof *sent);
  uint64_t *left = ctx_host_malloc(ctx, (size_t)n * sizeof *left);
  uint64_t *all = ctx_host_malloc(ctx, (size_t)n * (size_t)n * sizeof *all);
  CASE_CHECK(ctx, host && sent && left && all, "no memory");
  for (int t = 0; t < n; t++)
    for (int k = 0; k < SLOTS; k++)
      for (int i = 0; i < SLOT_BYTES; i++)
        host[((size_t)t * SLOTS + k) * SLOT_BYTES + i] = slot_byte(ctx->rank, t, k, i);
  memset(host + region, 0, region);
  CASE_CUDA_OK(ctx, cudaMemcpy(e.mem, host, 2 * region, cudaMemcpyHostToDevice));
  if (!ctx_barrier(ctx))
    return;
  memset(sent, 0, (size_t)n * sizeof *sent);
  long mine = total / n + (ctx->rank < total % n);
  for (long i = 0; i < mine; i++) {
    int t = (int)(rand_r(&seed) % (unsigned)(n - 1));
    t += t >= ctx->rank;
    if (rand_r(&seed) & 1) {
      int k = (int)(sent[t] % SLOTS);
      n4c_buffer_t b = n4c_buffer(e.mem + ((size_t)t * SLOTS + k) * SLOT_BYTES, SLOT_BYTES, ncclUint8,
                                  ctx->device);
      CASE_OK(ctx, n4c_comm_put_signal(e.comm, &b, t, e.win,
                                       region + ((size_t)ctx->rank * SLOTS + k) * SLOT_BYTES, 0, 0, 0,
                                       e.stream));
    } else {
      CASE_OK(ctx, n4c_comm_signal(e.comm, t, 0, 0, 0, e.stream));
    }
    sent[t]++;
  }
  if (!ctx_allgather(ctx, sent, (size_t)n * sizeof sent[0], all, (size_t)n * (size_t)n * sizeof *all))
    return;
  /* Wait for what each peer sent me, in random chunks, peers interleaved. */
  int live = 0;
  for (int s = 0; s < n; s++)
    live += (left[s] = all[(size_t)s * n + ctx->rank]) > 0;
  while (live) {
    int s = (int)(rand_r(&seed) % (unsigned)n);
    if (!left[s])
      continue;
    uint64_t c = 1 + rand_r(&seed) % 1000;
    if (c > left[s])
      c = left[s];
    wait_from(ctx, &e, s, (int)c);
    left[s] -= c;
    live -= left[s] == 0;
  }
  if (!sync_ok(ctx, &e, "waiting for every signal sent"))
    return;
  CASE_CUDA_OK(ctx, cudaMemcpy(host + region, e.mem + region, region, cudaMemcpyDeviceToHost));
  for (int s = 0; s < n; s++)
    for (int k = 0; k < SLOTS; k++)
      for (int i = 0; i < SLOT_BYTES; i++) {
        uint8_t got = host[region + ((size_t)s * SLOTS + k) * SLOT_BYTES + i];
        /* A slot is written by some put, or by none (then still 0). */
        CASE_CHECK(ctx, got == 0 || got == slot_byte(s, ctx->rank, k, i), "slot %d from rank %d, "
                   "byte %d: 0x%02x, expected 0x%02x", k, s, i, got, slot_byte(s, ctx->rank, k, i));
      }
  /* Nothing extra was counted: one more wait needs one more signal. The
   * ranks take turns: rank w waits for one more from its prev, and prev,
   * which waits for nothing, sends it from its own stream. The release
   * cannot come from another stream of a rank whose own extra wait is
   * pending: NCCL runs one communicator's operations in the order they
   * were issued, across streams, so that signal would queue behind the
   * wait it should release (on 2 x H200 with NCCL 2.30.7, such a program
   * hangs: conformance/probes/sig_stress.c, phase xstream). */
  for (int w = 0; w < n; w++) {
    if (ctx->rank == w) {
      wait_from(ctx, &e, e.prev, 1);
      if (!still_waiting(ctx, &e, "a wait beyond every signal sent"))
        return;
    }
    if (!ctx_barrier(ctx))
      return;
    if (ctx->rank == (w + n - 1) % n)
      CASE_OK(ctx, n4c_comm_signal(e.comm, w, 0, 0, 0, e.stream));
    if (!sync_ok(ctx, &e, "the last signal"))
      return;
  }
  ctx_note(ctx, "%ld signals among %d ranks; this rank sent %ld", total, n, mine);
}

#endif /* HAVE_DECL_NCCLPUTSIGNAL */
