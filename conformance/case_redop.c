/* case_redop.c — REDOP-*: PreMulSum reduction ops. */
#include "coll_check.h"

/* Rank r's scalar: 1 or 2, so that ranks differ and every dtype is exact. */
static double scalar_of(int r) { return (double)(r % 2 + 1); }

void case_REDOP_01(case_ctx_t *ctx) {
  n4c_comm_t *comm;
  cudaStream_t stream;
  double scalars[CTX_XCHG_MAX];
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &stream));
  for (int r = 0; r < ctx->nranks && r < CTX_XCHG_MAX; r++) scalars[r] = scalar_of(r);
  for (int dt = 0; dt < ncclNumTypes; dt++) {
    unsigned char s[8];
    n4c_redop_t *op;
    ncclRedOp_t v;
    coll_encode((ncclDataType_t)dt, scalar_of(ctx->rank), s);
    CASE_OK(ctx, n4c_comm_create_pre_mul_sum_host(comm, s, (ncclDataType_t)dt, &op));
    coll_encode((ncclDataType_t)dt, 7, s); /* host-immediate: read at creation only */
    CASE_OK(ctx, n4c_redop_op(op, &v));
    CASE_EXPECT(ctx, (int)v >= ncclNumOps, "op value %d is a built-in op's", (int)v);
    /* 65539 (many reduction blocks) for float32 only: the suite runs at 8
     * ranks under sanitizers. */
    static const size_t counts[] = {1, 1031, 65539};
    for (size_t c = 0; c < (dt == ncclFloat32 ? 3u : 2u); c++)
      for (int inplace = 0; inplace < 2; inplace++) {
        coll_run run = {K_ALLREDUCE, (ncclDataType_t)dt, ncclNumOps, v, scalars, counts[c], 0, inplace, false};
        if (!coll_check(ctx, comm, stream, &run)) break;
        run.kind = K_REDUCESCATTER;
        if (!coll_check(ctx, comm, stream, &run)) break;
      }
    CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(op)));
    n4c_resource_free(N4C_RESOURCE(op));
  }
}

static void free_redop(void *op) { n4c_resource_free(N4C_RESOURCE(op)); }

void case_REDOP_02(case_ctx_t *ctx) {
  n4c_comm_t *comm;
  cudaStream_t stream;
  void *d;
  n4c_redop_t *op;
  ncclRedOp_t v;
  double scalars[CTX_XCHG_MAX];
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_stream_create(ctx, &stream));
  CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &d, 16));
  float one = 1, mine = (float)scalar_of(ctx->rank);
  CASE_CUDA_OK(ctx, cudaMemcpy(d, &one, sizeof one, cudaMemcpyHostToDevice));
  n4c_buffer_t two = n4c_buffer(d, 2, ncclFloat32, ctx->device), sb = n4c_buffer(d, 1, ncclFloat32, ctx->device);
  CASE_STATUS(ctx, n4c_comm_create_pre_mul_sum_device(comm, &two, &op), N4C_EINVAL);
  CASE_OK(ctx, n4c_comm_create_pre_mul_sum_device(comm, &sb, &op));
  ctx_defer(ctx, free_redop, op);
  /* A device scalar is read when the collective runs, not at creation. */
  CASE_CUDA_OK(ctx, cudaMemcpy(d, &mine, sizeof mine, cudaMemcpyHostToDevice));
  CASE_OK(ctx, n4c_redop_op(op, &v));
  for (int r = 0; r < ctx->nranks && r < CTX_XCHG_MAX; r++) scalars[r] = scalar_of(r);
  coll_run run = {K_ALLREDUCE, ncclFloat32, ncclNumOps, v, scalars, 4099, 0, false, false};
  CASE_CHECK(ctx, coll_check(ctx, comm, stream, &run), "allreduce with a device scalar");
  /* The op is for float32 only. */
  n4c_buffer_t i32 = n4c_buffer(d, 1, ncclInt32, ctx->device);
  CASE_STATUS(ctx, n4c_comm_allreduce(comm, &i32, &i32, v, 0), N4C_ENCCL);
  CASE_CHECK(ctx, n4c_last_nccl_result() == ncclInvalidArgument, "last NCCL result %d, not ncclInvalidArgument",
             (int)n4c_last_nccl_result());
}

void case_REDOP_03(case_ctx_t *ctx) {
  n4c_comm_t *comm, *other;
  n4c_redop_t *op;
  ncclRedOp_t v;
  ncclUniqueId id2;
  void *d;
  double two = 2;
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &d, 64));
  CASE_OK(ctx, n4c_comm_create_pre_mul_sum_host(comm, &two, ncclFloat64, &op));
  CASE_OK(ctx, n4c_redop_op(op, &v));
  /* An op belongs to its communicator. */
  if (!ctx_new_unique_id(ctx, &id2)) return;
  CASE_OK(ctx, n4c_comm_init(&other, ctx->nranks, ctx->rank, &id2, 1, NULL));
  ctx_defer_comm(ctx, other);
  n4c_buffer_t b = n4c_buffer(d, 4, ncclFloat64, ctx->device);
  CASE_STATUS(ctx, n4c_comm_allreduce(other, &b, &b, v, 0), N4C_ENCCL);
  CASE_EXPECT(ctx, n4c_last_nccl_result() == ncclInvalidArgument, "op of another communicator: %d",
              (int)n4c_last_nccl_result());
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(op)));
  CASE_STATUS(ctx, n4c_redop_op(op, &v), N4C_ECLOSED);
  n4c_resource_free(N4C_RESOURCE(op));
  /* NCCL level: after destroy, the op is unknown; destroying twice fails. */
  CASE_CHECK(ctx, ncclAllReduce(d, d, 4, ncclFloat64, v, n4c_comm_handle(comm), 0) == ncclInvalidArgument,
             "ncclAllReduce with a destroyed op: not ncclInvalidArgument");
  CASE_CHECK(ctx, ncclRedOpDestroy(v, n4c_comm_handle(comm)) == ncclInvalidArgument,
             "second ncclRedOpDestroy: not ncclInvalidArgument");
  CASE_CHECK(ctx, ncclRedOpDestroy(ncclSum, n4c_comm_handle(comm)) == ncclInvalidArgument,
             "ncclRedOpDestroy(ncclSum): not ncclInvalidArgument");
}
