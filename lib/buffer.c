/*
 * buffer.c — n4c_buffer_t, data type sizes and names, and the argument
 * checks shared by every function that takes a buffer, a dtype or a rank.
 */
#include "config.h"

#include <stdint.h>

#include "n4c_internal.h"

static const struct {
  const char *name;
  size_t size;
} dtypes[ncclNumTypes] = {
    [ncclInt8] = {"int8", 1},         [ncclUint8] = {"uint8", 1},
    [ncclInt32] = {"int32", 4},       [ncclUint32] = {"uint32", 4},
    [ncclInt64] = {"int64", 8},       [ncclUint64] = {"uint64", 8},
    [ncclFloat16] = {"float16", 2},   [ncclFloat32] = {"float32", 4},
    [ncclFloat64] = {"float64", 8},   [ncclBfloat16] = {"bfloat16", 2},
    [ncclFloat8e4m3] = {"float8_e4m3", 1}, [ncclFloat8e5m2] = {"float8_e5m2", 1},
};

/* The enum's underlying type may be unsigned: compare as int. */
static bool dtype_known(ncclDataType_t d) { return (int)d >= 0 && (int)d < (int)ncclNumTypes; }

n4c_buffer_t n4c_buffer(void *ptr, size_t count, ncclDataType_t dtype, int device) {
  n4c_buffer_t b = {ptr, count, dtype, device};
  return b;
}

size_t n4c_dtype_size(ncclDataType_t dtype) { return dtype_known(dtype) ? dtypes[dtype].size : 0; }

const char *n4c_dtype_name(ncclDataType_t dtype) {
  return dtype_known(dtype) ? dtypes[dtype].name : NULL;
}

n4c_status_t n4c_check_dtype(const char *op, const char *arg, ncclDataType_t dtype) {
  if (dtype_known(dtype)) return N4C_OK;
  return n4c_error(N4C_EINVAL, "%s: %s is %d, not an ncclDataType_t (0..%d)", op, arg,
                   (int)dtype, (int)ncclNumTypes - 1);
}

n4c_status_t n4c_check_buffer(const char *op, const char *arg, n4c_comm_t *comm,
                              const n4c_buffer_t *buf) {
  N4C_CHECK(n4c_check_ptr(op, arg, buf));
  if (!dtype_known(buf->dtype))
    return n4c_error(N4C_EINVAL, "%s: %s.dtype is %d, not an ncclDataType_t (0..%d)", op, arg,
                     (int)buf->dtype, (int)ncclNumTypes - 1);
  if (!buf->ptr && buf->count > 0)
    return n4c_error(N4C_EINVAL, "%s: %s.ptr is NULL, but %s.count is %zu", op, arg, arg,
                     buf->count);
  if (buf->count > SIZE_MAX / dtypes[buf->dtype].size)
    return n4c_error(N4C_EINVAL, "%s: %s.count is %zu, more bytes of %s than size_t holds", op,
                     arg, buf->count, dtypes[buf->dtype].name);
  N4C_CHECK(n4c_comm_identity(op, comm));
  if (buf->device != comm->device)
    return n4c_error(N4C_EINVAL, "%s: %s is on device %d, but communicator is on device %d", op,
                     arg, buf->device, comm->device);
  return N4C_OK;
}

size_t n4c_buffer_bytes(const n4c_buffer_t *buf) { return buf->count * dtypes[buf->dtype].size; }

n4c_status_t n4c_check_rank(const char *op, const char *arg, n4c_comm_t *comm, int value) {
  N4C_CHECK(n4c_comm_identity(op, comm));
  if (value >= 0 && value < comm->nranks) return N4C_OK;
  return n4c_error(N4C_EINVAL, "%s: %s is %d, but nranks is %d", op, arg, value, comm->nranks);
}
