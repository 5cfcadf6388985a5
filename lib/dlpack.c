/*
 * dlpack.c — nccl.core's framework interop (its CuPy and PyTorch empty()
 * and resolve_array/resolve_tensor) through DLPack: tensors in
 * NCCL-allocated memory (n4c_dlpack_empty) and DLPack tensors resolved to
 * nccl.core's (ptr, count, dtype, device) (n4c_buffer_from_dlpack).
 *
 * Built when configure found <dlpack/dlpack.h> (HAVE_DLPACK); nccl4c.h
 * declares these functions under N4C_DLPACK, which defining
 * N4C_HAVE_DLPACK before including it guarantees.
 *
 * A tensor is accepted when its elements are dense, in row-major (C) or
 * column-major (F) order: NCCL sees the memory as count contiguous
 * elements either way. Extents of 1 may have any stride, as PyTorch
 * produces them.
 */
#include "config.h"

#if HAVE_DLPACK
#define N4C_HAVE_DLPACK 1

#include <stdint.h>
#include <string.h>

#include "mem.h"

/* DLPack 1.1 added float8 codes; older headers (Debian's 0.6) have none,
 * and NCCL's float8 types then have no DLPack equivalent. */
#if defined(DLPACK_MAJOR_VERSION) && (DLPACK_MAJOR_VERSION > 1 || (DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 1))
#define N4C_DLPACK_FP8 1
#endif

static const struct {
  ncclDataType_t nccl;
  uint8_t code, bits;
} dtypes[] = {
    {ncclInt8, kDLInt, 8},      {ncclUint8, kDLUInt, 8},     {ncclInt32, kDLInt, 32},
    {ncclUint32, kDLUInt, 32},  {ncclInt64, kDLInt, 64},     {ncclUint64, kDLUInt, 64},
    {ncclFloat16, kDLFloat, 16}, {ncclFloat32, kDLFloat, 32}, {ncclFloat64, kDLFloat, 64},
    {ncclBfloat16, kDLBfloat, 16},
#ifdef N4C_DLPACK_FP8
    {ncclFloat8e4m3, kDLFloat8_e4m3fn, 8}, {ncclFloat8e5m2, kDLFloat8_e5m2, 8},
#endif
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

/* Product of the extents into *count; false on a negative extent or a
 * product past INT64_MAX (then *bad is the offending dimension). DLPack's
 * strides are int64_t, so no larger tensor can be described, and dense()
 * relies on this bound. */
static bool extents(const int64_t *shape, int ndim, size_t *count, int *bad) {
  size_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || (uint64_t)shape[i] > SIZE_MAX) {
      *bad = i;
      return false;
    }
    size_t e = (size_t)shape[i];
    if (e && n > (size_t)INT64_MAX / e) {
      *bad = i;
      return false;
    }
    n *= e;
  }
  *count = n;
  return true;
}

/* Dense in C order (fortran false) or F order. */
static bool dense(const DLTensor *t, bool fortran) {
  int64_t want = 1;
  for (int k = 0; k < t->ndim; k++) {
    int i = fortran ? k : t->ndim - 1 - k;
    if (t->shape[i] != 1 && t->strides[i] != want) return false;
    want *= t->shape[i];
  }
  return true;
}

n4c_status_t n4c_buffer_from_dlpack(const DLTensor *t, n4c_buffer_t *out) {
  static const char op[] = "n4c_buffer_from_dlpack";
  N4C_CHECK(n4c_check_ptr(op, "tensor", t));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (t->ndim < 0) return n4c_error(N4C_EINVAL, "%s: tensor->ndim is %d, must be >= 0", op, t->ndim);
  if (t->ndim > 0 && !t->shape) return n4c_error(N4C_EINVAL, "%s: tensor->shape is NULL with ndim %d", op, t->ndim);
  if (t->device.device_type != kDLCUDA)
    return n4c_error(N4C_EINVAL, "%s: tensor is on DLPack device type %d, not kDLCUDA (%d)", op,
                     (int)t->device.device_type, (int)kDLCUDA);
  if (t->device.device_id < 0)
    return n4c_error(N4C_EINVAL, "%s: tensor->device.device_id is %d", op, (int)t->device.device_id);
  size_t i = 0;
  if (t->dtype.lanes == 1)
    while (i < NDTYPES && !(dtypes[i].code == t->dtype.code && dtypes[i].bits == t->dtype.bits)) i++;
  if (t->dtype.lanes != 1 || i == NDTYPES)
    return n4c_error(N4C_EINVAL, "%s: DLPack dtype (code %u, bits %u, lanes %u) has no NCCL equivalent", op,
                     (unsigned)t->dtype.code, (unsigned)t->dtype.bits, (unsigned)t->dtype.lanes);
  size_t count;
  int bad;
  if (!extents(t->shape, t->ndim, &count, &bad))
    return n4c_error(N4C_EINVAL, "%s: tensor->shape[%d] is %lld (negative, or the element count overflows)", op, bad,
                     (long long)t->shape[bad]);
  if (t->strides && count > 1 && !dense(t, false) && !dense(t, true))
    return n4c_error(N4C_EINVAL, "%s: tensor is not contiguous (its strides are neither C nor F order)", op);
  size_t item = n4c_dtype_size(dtypes[i].nccl);
  if (count > SIZE_MAX / item) return n4c_error(N4C_EINVAL, "%s: tensor's size in bytes overflows", op);
  if (!t->data && (count || t->byte_offset))
    return n4c_error(N4C_EINVAL, "%s: tensor->data is NULL with %zu elements", op, count);
  /* data + byte_offset + the bytes must stay inside the address space, as C
   * sees it: pointer arithmetic spans at most PTRDIFF_MAX bytes. */
  uintptr_t base = (uintptr_t)t->data, room = base < PTRDIFF_MAX ? (uintptr_t)PTRDIFF_MAX - base : 0;
  if (t->data && (t->byte_offset > room || count * item > room - t->byte_offset))
    return n4c_error(N4C_EINVAL, "%s: tensor->byte_offset %llu and %zu bytes run past the end of "
                     "the address space from data %p", op, (unsigned long long)t->byte_offset,
                     count * item, t->data);
  *out = n4c_buffer(t->data ? (char *)t->data + t->byte_offset : NULL, count, dtypes[i].nccl, t->device.device_id);
  return N4C_OK;
}

/* One allocation: the managed tensor, then shape and strides. */
typedef struct {
  DLManagedTensor m;
  int64_t dims[]; /* shape[ndim], strides[ndim] */
} empty_tensor;

static void empty_deleter(DLManagedTensor *self) {
  if (!self) return;
  if (self->dl_tensor.data) ncclMemFree(self->dl_tensor.data);
  n4c_free(self);
}

n4c_status_t n4c_dlpack_empty(const int64_t *shape, int ndim, ncclDataType_t dtype, char order, int device,
                              DLManagedTensor **out) {
  static const char op[] = "n4c_dlpack_empty";
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (ndim < 0) return n4c_error(N4C_EINVAL, "%s: ndim is %d, must be >= 0", op, ndim);
  if (ndim > 0) N4C_CHECK(n4c_check_ptr(op, "shape", shape));
  N4C_CHECK(n4c_check_dtype(op, "dtype", dtype));
  if (order != 'C' && order != 'F')
    return n4c_error(N4C_EINVAL, "%s: order is '%c' (%d), must be 'C' or 'F'", op, order > 31 && order < 127 ? order : '?',
                     (int)order);
  size_t i = 0;
  while (i < NDTYPES && dtypes[i].nccl != dtype) i++;
  if (i == NDTYPES)
    return n4c_error(N4C_EINVAL, "%s: dtype %s has no code in this DLPack (%d)", op, n4c_dtype_name(dtype),
                     (int)DLPACK_VERSION);
  size_t count;
  int bad;
  if (!extents(shape, ndim, &count, &bad))
    return n4c_error(N4C_EINVAL, "%s: shape[%d] is %lld (negative, or the element count overflows)", op, bad,
                     (long long)shape[bad]);
  size_t item = n4c_dtype_size(dtype);
  if (count > SIZE_MAX / item) return n4c_error(N4C_EINVAL, "%s: the tensor's size in bytes overflows", op);
  /* With an extent of 0 the element count is 0 whatever the others are,
   * but the strides are still products of them: they must fit int64. */
  int64_t stride = 1;
  for (int k = 0; k < ndim; k++) {
    int d = order == 'C' ? ndim - 1 - k : k;
    if (__builtin_mul_overflow(stride, shape[d] ? shape[d] : 1, &stride))
      return n4c_error(N4C_EINVAL, "%s: the strides of shape[%d] = %lld overflow int64", op, d, (long long)shape[d]);
  }
  if (device < N4C_CURRENT_DEVICE)
    return n4c_error(N4C_EINVAL, "%s: device is %d, must be >= 0 or N4C_CURRENT_DEVICE (-1)", op, device);

  empty_tensor *e = n4c_calloc(1, sizeof *e + 2 * (size_t)ndim * sizeof(int64_t));
  if (!e) return n4c_enomem(op, "the tensor");
  void *data = NULL;
  int dev;
  n4c_status_t st = n4c_mem_alloc_op(op, count * item, device, &data, &dev);
  if (st != N4C_OK) {
    n4c_free(e);
    return st;
  }
  DLTensor *t = &e->m.dl_tensor;
  int64_t *sh = e->dims, *strides = e->dims + ndim;
  if (ndim) memcpy(sh, shape, (size_t)ndim * sizeof *sh);
  int64_t s = 1;
  for (int k = 0; k < ndim; k++) {
    int d = order == 'C' ? ndim - 1 - k : k;
    strides[d] = s;
    s *= sh[d];
  }
  t->data = data;
  t->device.device_type = kDLCUDA;
  t->device.device_id = dev;
  t->ndim = ndim;
  t->dtype.code = dtypes[i].code;
  t->dtype.bits = dtypes[i].bits;
  t->dtype.lanes = 1;
  t->shape = ndim ? sh : NULL;
  t->strides = ndim ? strides : NULL;
  t->byte_offset = 0;
  e->m.manager_ctx = NULL;
  e->m.deleter = empty_deleter;
  *out = &e->m;
  return N4C_OK;
}

#endif /* HAVE_DLPACK */
