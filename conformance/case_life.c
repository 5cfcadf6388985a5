/* case_life.c — LIFE-*: the communicator's lifecycle and identity. */
#include "config.h"

#include <string.h>
#include "case.h"

/* The communicator's rank, nranks and device are as expected. */
static bool expect_identity(case_ctx_t *ctx, n4c_comm_t *comm, const char *what,
                            int rank, int nranks, int device)
{
  int r = -1, n = -1, d = -1;
  n4c_status_t sr, sn, sd;

  if (!CASE_EXPECT(ctx, n4c_comm_is_valid(comm), "%s: is_valid is false", what) ||
      !CASE_EXPECT(ctx, n4c_comm_handle(comm) != NULL, "%s: handle is NULL", what))
    return false;
  sr = n4c_comm_rank(comm, &r);
  sn = n4c_comm_nranks(comm, &n);
  sd = n4c_comm_device(comm, &d);
  if (!CASE_EXPECT(ctx, sr == N4C_OK && r == rank, "%s: rank gives %s, %d; expected %d",
                   what, n4c_status_name(sr), r, rank) ||
      !CASE_EXPECT(ctx, sn == N4C_OK && n == nranks, "%s: nranks gives %s, %d; expected %d",
                   what, n4c_status_name(sn), n, nranks) ||
      !CASE_EXPECT(ctx, sd == N4C_OK && d == device, "%s: device gives %s, %d; expected %d",
                   what, n4c_status_name(sd), d, device))
    return false;
  return true;
}

void case_LIFE_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  int *all = ctx_host_malloc(ctx, (size_t)ctx->nranks * sizeof *all);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!expect_identity(ctx, comm, "the new communicator", ctx->rank, ctx->nranks, ctx->device))
    return;
  /* The ranks are one clique: NCCL agrees on who is who on every rank. */
  int mine = ctx->rank;
  CASE_CHECK(ctx, all, "no memory");
  if (!ctx_allgather(ctx, &mine, sizeof mine, all, (size_t)ctx->nranks * sizeof *all))
    return;
  for (int r = 0; r < ctx->nranks; r++)
    CASE_CHECK(ctx, all[r] == r, "rank %d reports itself as rank %d", r, all[r]);
}

void case_LIFE_02(case_ctx_t *ctx)
{
  int n = ctx->nranks;

  if (ctx->rank != 0)
    return; /* init_all is one thread's work */
  if (n > ctx->ndevices)
    CASE_SKIP(ctx, "needs %d devices, has %d", n, ctx->ndevices);

  n4c_comm_t **comms = ctx_host_malloc(ctx, (size_t)n * sizeof *comms);
  int *devlist = ctx_host_malloc(ctx, (size_t)n * sizeof *devlist);
  char what[64];

  CASE_CHECK(ctx, comms && devlist, "out of memory");
  CASE_OK(ctx, n4c_comm_init_all(comms, n, NULL));
  for (int i = 0; i < n; i++)
    ctx_defer_comm(ctx, comms[i]);
  for (int i = 0; i < n; i++) {
    snprintf(what, sizeof what, "init_all(%d, NULL), comms[%d]", n, i);
    if (!expect_identity(ctx, comms[i], what, i, n, i))
      return;
  }

  /* An explicit devlist: rank i on devlist[i]. */
  for (int i = 0; i < n; i++)
    devlist[i] = n - 1 - i;
  CASE_OK(ctx, n4c_comm_init_all(comms, n, devlist));
  for (int i = 0; i < n; i++)
    ctx_defer_comm(ctx, comms[i]);
  for (int i = 0; i < n; i++) {
    snprintf(what, sizeof what, "init_all(%d, reversed devlist), comms[%d]", n, i);
    if (!expect_identity(ctx, comms[i], what, i, n, devlist[i]))
      return;
  }

  /* ndev 0 creates nothing, and writes nothing. */
  n4c_comm_t *untouched[1] = { (n4c_comm_t *)&untouched };
  CASE_OK(ctx, n4c_comm_init_all(untouched, 0, NULL));
  CASE_CHECK(ctx, untouched[0] == (n4c_comm_t *)&untouched,
             "init_all with ndev 0 wrote comms[0] = %p", (void *)untouched[0]);
  CASE_OK(ctx, n4c_comm_init_all(NULL, 0, NULL));
}

void case_LIFE_03(case_ctx_t *ctx)
{
  n4c_comm_t *comm, *sub = NULL;
  int color = ctx->rank % 2, nsame = 0, below = 0;
  char what[64];

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));

  /* Two colors; keys in reverse rank order, so the new ranks run backwards. */
  CASE_OK(ctx, n4c_comm_split(comm, color, ctx->nranks - ctx->rank, NULL, &sub));
  ctx_defer_comm(ctx, sub);
  for (int r = 0; r < ctx->nranks; r++) {
    nsame += r % 2 == color;
    below += r % 2 == color && r > ctx->rank;
  }
  snprintf(what, sizeof what, "split(color %d, key %d)", color, ctx->nranks - ctx->rank);
  if (!expect_identity(ctx, sub, what, below, nsame, ctx->device))
    return;
  if (!ctx_barrier(ctx))
    return;

  /* Rank 0 opts out: a null communicator for it, the rest keep their order. */
  int nocolor = ctx->rank == 0;
  CASE_OK(ctx, n4c_comm_split(comm, nocolor ? N4C_SPLIT_NOCOLOR : 0, ctx->rank, NULL, &sub));
  ctx_defer_comm(ctx, sub);
  if (nocolor) {
    int r = -1;

    CASE_CHECK(ctx, !n4c_comm_is_valid(sub), "split(NOCOLOR): is_valid is true");
    CASE_CHECK(ctx, n4c_comm_handle(sub) == NULL, "split(NOCOLOR): handle is not NULL");
    CASE_STATUS(ctx, n4c_comm_rank(sub, &r), N4C_EINVAL);
  } else {
    expect_identity(ctx, sub, "split(0, rank) beside a NOCOLOR rank 0", ctx->rank - 1,
                    ctx->nranks - 1, ctx->device);
  }
}

void case_LIFE_04(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  ncclUniqueId id;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_OK(ctx, n4c_comm_destroy(comm));
  CASE_CHECK(ctx, !n4c_comm_is_valid(comm), "is_valid is true after destroy");
  CASE_CHECK(ctx, n4c_comm_handle(comm) == NULL, "handle is not NULL after destroy");
  CASE_OK(ctx, n4c_comm_destroy(comm));
  CASE_OK(ctx, n4c_comm_abort(comm));
  CASE_CHECK(ctx, !n4c_comm_is_valid(comm), "is_valid is true after a second destroy");

  if (!ctx_new_unique_id(ctx, &id))
    return;
  CASE_OK(ctx, n4c_comm_init(&comm, ctx->nranks, ctx->rank, &id, 1, NULL));
  ctx_defer_comm(ctx, comm);
  CASE_OK(ctx, n4c_comm_abort(comm));
  CASE_CHECK(ctx, !n4c_comm_is_valid(comm), "is_valid is true after abort");
  CASE_CHECK(ctx, n4c_comm_handle(comm) == NULL, "handle is not NULL after abort");
  CASE_OK(ctx, n4c_comm_abort(comm));
  CASE_OK(ctx, n4c_comm_destroy(comm));
  CASE_CHECK(ctx, !n4c_comm_is_valid(comm), "is_valid is true after a second abort");
}

/*
 * LIFE-05. Every method of the communicator in nccl4c.h that needs a live
 * one, called on `comm`, must give N4C_EINVAL and name itself. Left out,
 * as nccl4c.h documents them: finalize, destroy, abort and
 * close_all_resources are no-ops returning N4C_OK there (LIFE-04, RES-05),
 * and initialize is how a null communicator becomes live (LIFE-06).
 */
#define LIFE05_METHODS(X)                                                    \
  X(n4c_comm_split, n4c_comm_split(comm, 0, 0, NULL, &out))                  \
  X(n4c_comm_nranks, n4c_comm_nranks(comm, &i))                              \
  X(n4c_comm_rank, n4c_comm_rank(comm, &i))                                  \
  X(n4c_comm_device, n4c_comm_device(comm, &i))                              \
  X(n4c_comm_properties, n4c_comm_properties(comm, &props))                  \
  X(n4c_comm_get_async_error, n4c_comm_get_async_error(comm, &res))          \
  X(n4c_comm_last_error, n4c_comm_last_error(comm, &text))                   \
  X(n4c_comm_mem_stat, n4c_comm_mem_stat(comm, N4C_MEM_STAT_GPU_MEM_TOTAL, &u64)) \
  X(n4c_comm_send, n4c_comm_send(comm, buf, 0, 0))                           \
  X(n4c_comm_recv, n4c_comm_recv(comm, buf, 0, 0))                           \
  X(n4c_comm_signal, n4c_comm_signal(comm, 0, 0, 0, 0, 0))                   \
  X(n4c_comm_wait_signal, n4c_comm_wait_signal(comm, &desc, 1, 0))           \
  X(n4c_comm_put_signal, n4c_comm_put_signal(comm, buf, 0, NULL, 0, 0, 0, 0, 0)) \
  X(n4c_comm_allreduce, n4c_comm_allreduce(comm, buf, buf, ncclSum, 0))      \
  X(n4c_comm_broadcast, n4c_comm_broadcast(comm, buf, buf, 0, 0))            \
  X(n4c_comm_reduce, n4c_comm_reduce(comm, buf, buf, ncclSum, 0, 0))         \
  X(n4c_comm_allgather, n4c_comm_allgather(comm, buf, buf, 0))               \
  X(n4c_comm_reduce_scatter, n4c_comm_reduce_scatter(comm, buf, buf, ncclSum, 0)) \
  X(n4c_comm_alltoall, n4c_comm_alltoall(comm, buf, buf, 0))                 \
  X(n4c_comm_gather, n4c_comm_gather(comm, buf, buf, 0, 0))                  \
  X(n4c_comm_scatter, n4c_comm_scatter(comm, buf, buf, 0, 0))                \
  X(n4c_comm_register_buffer, n4c_comm_register_buffer(comm, buf, &reg))     \
  X(n4c_comm_register_window, n4c_comm_register_window(comm, buf, 0, &win))  \
  X(n4c_comm_create_pre_mul_sum_host,                                        \
    n4c_comm_create_pre_mul_sum_host(comm, &scalar, ncclFloat32, &redop))    \
  X(n4c_comm_create_pre_mul_sum_device,                                      \
    n4c_comm_create_pre_mul_sum_device(comm, one, &redop))                   \
  X(n4c_comm_create_dev_comm, n4c_comm_create_dev_comm(comm, NULL, &dc))

/* Against real NCCL older than a method's NCCL function, nccl4c answers
 * N4C_ENOTSUP before it looks at the communicator; ncclsim has them all. */
#ifdef NCCLSIM
#define LIFE05_ENOTSUP_OK 0
#else
#define LIFE05_ENOTSUP_OK 1
#endif

static void expect_methods_fail(case_ctx_t *ctx, n4c_comm_t *comm, const char *state,
                                const n4c_buffer_t *buf, const n4c_buffer_t *one)
{
  n4c_comm_t *out = NULL;
  n4c_comm_properties_t props;
  n4c_wait_signal_desc_t desc = N4C_WAIT_SIGNAL_DESC(0);
  n4c_buffer_reg_t *reg = NULL;
  n4c_window_t *win = NULL;
  n4c_redop_t *redop = NULL;
  n4c_dev_comm_t *dc = NULL;
  float scalar = 2.0f;
  int i;
  ncclResult_t res;
  const char *text, *msg;
  uint64_t u64;
  n4c_status_t st;

  CASE_EXPECT(ctx, !n4c_comm_is_valid(comm), "%s communicator: is_valid is true", state);
  CASE_EXPECT(ctx, n4c_comm_handle(comm) == NULL, "%s communicator: handle is not NULL", state);
#define X(name, call)                                                        \
  st = (call);                                                               \
  msg = n4c_last_error_message();                                            \
  if (st == N4C_ENOTSUP && LIFE05_ENOTSUP_OK)                                \
    ctx_note(ctx, "%s: not in the linked NCCL (%s)", #name, msg);            \
  else if (CASE_EXPECT(ctx, st == N4C_EINVAL, "%s on a %s communicator returned %s, " \
                       "expected N4C_EINVAL", #name, state, n4c_status_name(st))) \
    CASE_EXPECT(ctx, strstr(msg, #name) != NULL, "%s on a %s communicator: the message " \
                "'%s' does not name the operation", #name, state, msg);
  LIFE05_METHODS(X)
#undef X
  /* What a method that should have failed made. */
  n4c_comm_free(out);
  n4c_resource_free(N4C_RESOURCE(reg));
  n4c_resource_free(N4C_RESOURCE(win));
  n4c_resource_free(N4C_RESOURCE(redop));
  n4c_resource_free(N4C_RESOURCE(dc));
}

void case_LIFE_05(case_ctx_t *ctx)
{
  n4c_comm_t *null_comm, *comm;
  void *p;
  ncclUniqueId id;

  CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &p, 64));
  n4c_buffer_t buf = n4c_buffer(p, 16, ncclFloat32, ctx->device);
  n4c_buffer_t one = n4c_buffer(p, 1, ncclFloat32, ctx->device);

  CASE_OK(ctx, n4c_comm_new(&null_comm));
  ctx_defer_comm(ctx, null_comm);
  expect_methods_fail(ctx, null_comm, "null", &buf, &one);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_OK(ctx, n4c_comm_destroy(comm));
  expect_methods_fail(ctx, comm, "destroyed", &buf, &one);
  CASE_STATUS(ctx, n4c_comm_initialize(comm, ctx->nranks, ctx->rank, &ctx->id, 1, NULL),
              N4C_EINVAL);

  if (!ctx_new_unique_id(ctx, &id))
    return;
  CASE_OK(ctx, n4c_comm_init(&comm, ctx->nranks, ctx->rank, &id, 1, NULL));
  ctx_defer_comm(ctx, comm);
  CASE_OK(ctx, n4c_comm_abort(comm));
  expect_methods_fail(ctx, comm, "aborted", &buf, &one);
}

void case_LIFE_06(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  const char *msg;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  /* Were this to reach NCCL, the init would wait for peers that never come. */
  CASE_STATUS(ctx, n4c_comm_initialize(comm, ctx->nranks, ctx->rank, &ctx->id, 1, NULL),
              N4C_EINVAL);
  msg = n4c_last_error_message();
  CASE_CHECK(ctx, strstr(msg, "n4c_comm_initialize") != NULL,
             "the message '%s' does not name n4c_comm_initialize", msg);
  expect_identity(ctx, comm, "the communicator after the second initialize", ctx->rank,
                  ctx->nranks, ctx->device);
}
