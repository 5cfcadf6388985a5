/*
 * redop.c — PreMulSum reduction ops (nccl.core CustomRedOp), tracked
 * resources of their communicator: closing one is ncclRedOpDestroy.
 */
#include "config.h"

#include "n4c_internal.h"

struct n4c_redop_s {
  n4c_resource_t base;
  ncclRedOp_t op;
};

static n4c_status_t redop_close(n4c_resource_t *r) {
  n4c_redop_t *o = (n4c_redop_t *)r;
  N4C_NCCLCHECK("n4c_resource_close", ncclRedOpDestroy, (o->op, r->comm->handle));
  return N4C_OK;
}

static const n4c_resource_kind_t redop_kind = {"redop", redop_close, NULL};

static n4c_status_t create(const char *fn, n4c_comm_t *comm, void *scalar, ncclDataType_t dtype,
                           ncclScalarResidence_t residence, n4c_redop_t **out) {
  n4c_redop_t *o;
  N4C_CHECK(n4c_resource_alloc(fn, comm, &redop_kind, sizeof *o, (void **)&o));
  ncclResult_t r = ncclRedOpCreatePreMulSum(&o->op, scalar, dtype, residence, comm->handle);
  if (r != ncclSuccess) {
    n4c_resource_unref(&o->base);
    return n4c_nccl_error(fn, "ncclRedOpCreatePreMulSum", r);
  }
  n4c_comm_track(&o->base);
  *out = o;
  return N4C_OK;
}

n4c_status_t n4c_comm_create_pre_mul_sum_host(n4c_comm_t *comm, const void *scalar,
                                              ncclDataType_t dtype, n4c_redop_t **out) {
  static const char fn[] = "n4c_comm_create_pre_mul_sum_host";
  N4C_CHECK(n4c_check_comm(fn, comm));
  N4C_CHECK(n4c_check_ptr(fn, "scalar", scalar));
  N4C_CHECK(n4c_check_ptr(fn, "out", out));
  N4C_CHECK(n4c_check_dtype(fn, "dtype", dtype));
  return create(fn, comm, (void *)scalar, dtype, ncclScalarHostImmediate, out);
}

n4c_status_t n4c_comm_create_pre_mul_sum_device(n4c_comm_t *comm, const n4c_buffer_t *scalar,
                                                n4c_redop_t **out) {
  static const char fn[] = "n4c_comm_create_pre_mul_sum_device";
  N4C_CHECK(n4c_check_comm(fn, comm));
  N4C_CHECK(n4c_check_ptr(fn, "out", out));
  N4C_CHECK(n4c_check_buffer(fn, "scalar", comm, scalar));
  if (scalar->count != 1)
    return n4c_error(N4C_EINVAL, "%s: scalar.count is %zu, but a device scalar is one element", fn,
                     scalar->count);
  return create(fn, comm, scalar->ptr, scalar->dtype, ncclScalarDevice, out);
}

n4c_status_t n4c_redop_op(const n4c_redop_t *redop, ncclRedOp_t *out) {
  static const char fn[] = "n4c_redop_op";
  N4C_CHECK(n4c_resource_check_open(fn, "redop", redop ? &redop->base : NULL));
  N4C_CHECK(n4c_check_ptr(fn, "out", out));
  *out = redop->op;
  return N4C_OK;
}
