/* case_iop.c — IOP-*, MEM-01: nccl.core's framework interop through
 * DLPack, and NCCL memory allocation (ncclMemAlloc, ncclMemFree). */
#include "config.h"

#if HAVE_DLPACK
#define N4C_HAVE_DLPACK 1
#endif
#include <stdint.h>
#include <string.h>
#include "case.h"
#ifdef NCCLSIM
#include <ncclsim.h>
#endif

#ifdef N4C_DLPACK
static void delete_tensor(void *m)
{
  DLManagedTensor *t = m;

  t->deleter(t);
}

/* n4c_dlpack_empty, deleted after the case. */
static n4c_status_t empty(case_ctx_t *ctx, const int64_t *shape, int ndim, ncclDataType_t dt, char order,
                          DLManagedTensor **out)
{
  n4c_status_t st = n4c_dlpack_empty(shape, ndim, dt, order, N4C_CURRENT_DEVICE, out);

  if (st == N4C_OK)
    ctx_defer(ctx, delete_tensor, *out);
  return st;
}
#define NEED_DLPACK()
#else
#define NEED_DLPACK() CASE_SKIP(ctx, "nccl4c was built without dlpack/dlpack.h")
#endif

void case_IOP_01(case_ctx_t *ctx)
{
  NEED_DLPACK();
#ifdef N4C_DLPACK
  static const int64_t shape[] = { 2, 3, 4 };
  static const int64_t c_strides[] = { 12, 4, 1 }, f_strides[] = { 1, 2, 6 };
  DLManagedTensor *m;

  for (int k = 0; k < 2; k++) {
    char order = k ? 'F' : 'C';
    const int64_t *want = k ? f_strides : c_strides;
    CASE_OK(ctx, empty(ctx, shape, 3, ncclFloat32, order, &m));
    DLTensor *t = &m->dl_tensor;
    CASE_CHECK(ctx, t->data != NULL && t->ndim == 3 && t->byte_offset == 0, "order %c: data %p, ndim %d", order,
               t->data, t->ndim);
    CASE_CHECK(ctx, t->device.device_type == kDLCUDA && t->device.device_id == ctx->device,
               "order %c: device (%d, %d), expected (kDLCUDA, %d)", order, (int)t->device.device_type,
               (int)t->device.device_id, ctx->device);
    CASE_CHECK(ctx, t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1,
               "dtype (%u, %u, %u), expected float32", t->dtype.code, t->dtype.bits, t->dtype.lanes);
    for (int i = 0; i < 3; i++)
      CASE_CHECK(ctx, t->shape[i] == shape[i] && t->strides[i] == want[i],
                 "order %c, dim %d: extent %lld stride %lld, expected %lld, %lld", order, i,
                 (long long)t->shape[i], (long long)t->strides[i], (long long)shape[i], (long long)want[i]);
    struct cudaPointerAttributes a;
    CASE_CUDA_OK(ctx, cudaPointerGetAttributes(&a, t->data));
    CASE_CHECK(ctx, a.type == cudaMemoryTypeDevice && a.device == ctx->device,
               "memory type %d on device %d, expected device memory on %d", (int)a.type, a.device, ctx->device);
    /* It is usable memory: 24 floats go in and come back. */
    float in[24], back[24];
    for (int i = 0; i < 24; i++)
      in[i] = (float)(i * 3 + ctx->rank);
    CASE_CUDA_OK(ctx, cudaMemcpy(t->data, in, sizeof in, cudaMemcpyHostToDevice));
    CASE_CUDA_OK(ctx, cudaMemcpy(back, t->data, sizeof back, cudaMemcpyDeviceToHost));
    CASE_CHECK(ctx, memcmp(in, back, sizeof in) == 0, "the tensor's memory does not hold what was written");
  }
  /* A 0-d tensor is one element. */
  CASE_OK(ctx, empty(ctx, NULL, 0, ncclInt64, 'C', &m));
  n4c_buffer_t b;
  CASE_OK(ctx, n4c_buffer_from_dlpack(&m->dl_tensor, &b));
  CASE_CHECK(ctx, b.count == 1 && b.ptr, "0-d tensor: count %zu, ptr %p", b.count, b.ptr);
#endif
}

void case_IOP_02(case_ctx_t *ctx)
{
  NEED_DLPACK();
#ifdef N4C_DLPACK
  static const int64_t shape[] = { 4 };
  static const char bad[] = { 'c', 'f', 'A', 'K', ' ', 0 };
  DLManagedTensor *m = NULL;

  for (size_t i = 0; i < sizeof bad; i++) {
    CASE_STATUS(ctx, n4c_dlpack_empty(shape, 1, ncclFloat32, bad[i], N4C_CURRENT_DEVICE, &m), N4C_EINVAL);
    CASE_CHECK(ctx, strstr(n4c_last_error_message(), "order") != NULL, "the message does not name order: %s",
               n4c_last_error_message());
  }
  CASE_CHECK(ctx, m == NULL, "out was written on failure");
  static const int64_t neg[] = { 4, -1 };
  CASE_STATUS(ctx, n4c_dlpack_empty(neg, 2, ncclFloat32, 'C', N4C_CURRENT_DEVICE, &m), N4C_EINVAL);
  CASE_STATUS(ctx, n4c_dlpack_empty(shape, 1, ncclNumTypes, 'C', N4C_CURRENT_DEVICE, &m), N4C_EINVAL);
  CASE_STATUS(ctx, n4c_dlpack_empty(shape, 1, ncclFloat32, 'C', N4C_CURRENT_DEVICE, NULL), N4C_EINVAL);
#endif
}

void case_IOP_03(case_ctx_t *ctx)
{
  NEED_DLPACK();
#ifdef N4C_DLPACK
  static const ncclDataType_t dts[] = { ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64,
                                        ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16 };
  static const int64_t shape[] = { 3, 5 };
  DLManagedTensor *m;
  n4c_buffer_t b;

  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    char order = i % 2 ? 'F' : 'C';
    CASE_OK(ctx, empty(ctx, shape, 2, dts[i], order, &m));
    CASE_OK(ctx, n4c_buffer_from_dlpack(&m->dl_tensor, &b));
    CASE_CHECK(ctx, b.ptr == m->dl_tensor.data && b.count == 15 && b.dtype == dts[i] && b.device == ctx->device,
               "%s (%c): resolved to (%p, %zu, %d, %d), expected (%p, 15, %d, %d)", n4c_dtype_name(dts[i]), order,
               b.ptr, b.count, (int)b.dtype, b.device, m->dl_tensor.data, (int)dts[i], ctx->device);
  }
  /* byte_offset is honoured; strides NULL is contiguous. */
  DLTensor t = m->dl_tensor;
  t.byte_offset = 16;
  t.strides = NULL;
  int64_t three[] = { 3 };
  t.shape = three;
  t.ndim = 1;
  CASE_OK(ctx, n4c_buffer_from_dlpack(&t, &b));
  CASE_CHECK(ctx, b.ptr == (char *)t.data + 16 && b.count == 3, "byte_offset 16: ptr %p (data %p), count %zu", b.ptr,
             t.data, b.count);
  /* Not on a CUDA device. */
  t = m->dl_tensor;
  t.device.device_type = kDLCPU;
  CASE_STATUS(ctx, n4c_buffer_from_dlpack(&t, &b), N4C_EINVAL);
  t.device.device_type = kDLCUDAHost;
  CASE_STATUS(ctx, n4c_buffer_from_dlpack(&t, &b), N4C_EINVAL);
  /* Not contiguous: every other column of a 3 x 10. */
  int64_t shp[] = { 3, 5 }, str[] = { 10, 2 };
  t = m->dl_tensor;
  t.shape = shp;
  t.strides = str;
  CASE_STATUS(ctx, n4c_buffer_from_dlpack(&t, &b), N4C_EINVAL);
  CASE_CHECK(ctx, strstr(n4c_last_error_message(), "contiguous") != NULL, "message: %s", n4c_last_error_message());
  /* Extents of 1 may carry any stride. */
  int64_t shp1[] = { 1, 15 }, str1[] = { 999, 1 };
  t.shape = shp1;
  t.strides = str1;
  CASE_OK(ctx, n4c_buffer_from_dlpack(&t, &b));
  CASE_STATUS(ctx, n4c_buffer_from_dlpack(NULL, &b), N4C_EINVAL);
#endif
}

void case_IOP_04(case_ctx_t *ctx)
{
  NEED_DLPACK();
#ifdef N4C_DLPACK
  static const struct { uint8_t code, bits; uint16_t lanes; const char *text; } bad[] = {
    { kDLComplex, 64, 1, "code 5, bits 64, lanes 1" },
    { kDLFloat, 32, 4, "code 2, bits 32, lanes 4" },
    { kDLInt, 16, 1, "code 0, bits 16, lanes 1" },
    { kDLOpaqueHandle, 64, 1, "code 3, bits 64, lanes 1" },
    { 6 /* kDLBool in DLPack >= 1.0 */, 8, 1, "code 6, bits 8, lanes 1" },
  };
  static const int64_t shape[] = { 8 };
  DLManagedTensor *m;
  n4c_buffer_t b;

  CASE_OK(ctx, empty(ctx, shape, 1, ncclFloat32, 'C', &m));
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    DLTensor t = m->dl_tensor;
    t.dtype.code = bad[i].code;
    t.dtype.bits = bad[i].bits;
    t.dtype.lanes = bad[i].lanes;
    CASE_STATUS(ctx, n4c_buffer_from_dlpack(&t, &b), N4C_EINVAL);
    CASE_CHECK(ctx, strstr(n4c_last_error_message(), bad[i].text) != NULL,
               "the message does not name \"%s\": %s", bad[i].text, n4c_last_error_message());
  }
#endif
}

void case_IOP_05(case_ctx_t *ctx)
{
  NEED_DLPACK();
#ifndef NCCLSIM
  CASE_SKIP(ctx, "needs ncclsim's allocation registry to count live allocations");
#elif defined(N4C_DLPACK)
  static const int64_t shape[] = { 64, 33 };
  size_t n0 = 0, b0 = 0, n1 = 0, b1 = 0, n2 = 0, b2 = 0;
  DLManagedTensor *m[3];

  /* The registry is the process's: rank 0 counts while the others wait. */
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 0)
    ncclsimMemStats(&n0, &b0);
  if (!ctx_barrier(ctx))
    return;
  for (int i = 0; i < 3; i++)
    CASE_OK(ctx, n4c_dlpack_empty(shape, 2, i == 1 ? ncclFloat64 : ncclInt8, i == 2 ? 'F' : 'C',
                                  N4C_CURRENT_DEVICE, &m[i]));
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 0)
    ncclsimMemStats(&n1, &b1);
  if (!ctx_barrier(ctx))
    return;
  for (int i = 0; i < 3; i++)
    m[i]->deleter(m[i]);
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 0) {
    ncclsimMemStats(&n2, &b2);
    CASE_CHECK(ctx, n1 == n0 + 3 * (size_t)ctx->local_ranks && b1 >= b0 + (size_t)ctx->local_ranks * 64 * 33 * 10,
               "with 3 tensors per rank: %zu allocations of %zu bytes, before %zu of %zu", n1, b1, n0, b0);
    CASE_CHECK(ctx, n2 == n0 && b2 == b0, "after the deleters: %zu allocations of %zu bytes, before %zu of %zu", n2,
               b2, n0, b0);
  }
  /* mem_alloc/mem_free likewise. */
  void *p;
  if (!ctx_barrier(ctx))
    return;
  if (ctx->rank == 0) {
    CASE_OK(ctx, n4c_mem_alloc(5000, N4C_CURRENT_DEVICE, &p));
    ncclsimMemStats(&n1, &b1);
    CASE_OK(ctx, n4c_mem_free(p));
    ncclsimMemStats(&n2, &b2);
    CASE_CHECK(ctx, n1 == n0 + 1 && b1 >= b0 + 5000 && n2 == n0 && b2 == b0,
               "mem_alloc(5000): %zu/%zu live, after mem_free %zu/%zu, before %zu/%zu", n1, b1, n2, b2, n0, b0);
  }
#endif
}

void case_IOP_06(case_ctx_t *ctx)
{
  NEED_DLPACK();
#ifdef N4C_DLPACK
  static const int64_t shape[] = { 32, 32 };
  DLManagedTensor *m;
  n4c_comm_t *comm;
  n4c_buffer_t b;
  n4c_buffer_reg_t *reg;
  n4c_window_t *win;
  void *handle = NULL;

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_OK(ctx, empty(ctx, shape, 2, ncclFloat32, 'C', &m));
  CASE_OK(ctx, n4c_buffer_from_dlpack(&m->dl_tensor, &b));
  CASE_OK(ctx, n4c_comm_register_buffer(comm, &b, &reg));
  CASE_CHECK(ctx, n4c_buffer_reg_size(reg) == 4096, "registered %zu bytes, expected 4096", n4c_buffer_reg_size(reg));
  CASE_OK(ctx, n4c_buffer_reg_handle(reg, &handle));
  CASE_CHECK(ctx, handle != NULL, "registration handle is NULL");
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(reg)));
  n4c_resource_free(N4C_RESOURCE(reg));
  n4c_status_t st = n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &win);
  if (st == N4C_ENOTSUP)
    CASE_SKIP(ctx, "%s", n4c_last_error_message());
  CASE_CHECK(ctx, st == N4C_OK, "register_window: %s; %s", n4c_status_name(st), n4c_last_error_message());
  if (!win)
    CASE_SKIP(ctx, "NCCL gives no window here (NULL window)");
  void *user = NULL;
  CASE_CHECK(ctx, n4c_window_size(win) == 4096, "window of %zu bytes, expected 4096", n4c_window_size(win));
  st = n4c_window_user_ptr(win, &user);
  if (st != N4C_ENOTSUP)
    CASE_CHECK(ctx, st == N4C_OK && user == b.ptr, "user_ptr %p, the tensor's %p", user, b.ptr);
  n4c_resource_free(N4C_RESOURCE(win));
#endif
}

void case_MEM_01(case_ctx_t *ctx)
{
  int cur = -1, other = (ctx->device + 1) % (ctx->ndevices > 0 ? ctx->ndevices : 1);
  void *p = NULL;
  struct cudaPointerAttributes a;

  CASE_STATUS(ctx, n4c_mem_alloc(64, -2, &p), N4C_EINVAL);
  CASE_STATUS(ctx, n4c_mem_alloc(64, N4C_CURRENT_DEVICE, NULL), N4C_EINVAL);
  CASE_OK(ctx, n4c_mem_alloc(0, N4C_CURRENT_DEVICE, &p));
  CASE_CHECK(ctx, p == NULL, "0 bytes gives %p, expected NULL", p);
  CASE_OK(ctx, n4c_mem_free(NULL));
  CASE_OK(ctx, n4c_mem_alloc(100, N4C_CURRENT_DEVICE, &p));
  CASE_CUDA_OK(ctx, cudaPointerGetAttributes(&a, p));
  CASE_CHECK(ctx, a.device == ctx->device, "N4C_CURRENT_DEVICE allocated on %d, current is %d", a.device,
             ctx->device);
  CASE_OK(ctx, n4c_mem_free(p));
  if (ctx->ndevices < 2)
    CASE_SKIP(ctx, "needs 2 devices, has %d", ctx->ndevices);
  CASE_OK(ctx, n4c_mem_alloc(12345, other, &p));
  CASE_CUDA_OK(ctx, cudaGetDevice(&cur));
  CASE_CHECK(ctx, cur == ctx->device, "current device is %d after mem_alloc on %d, was %d", cur, other,
             ctx->device);
  CASE_CUDA_OK(ctx, cudaPointerGetAttributes(&a, p));
  CASE_CHECK(ctx, a.device == other, "mem_alloc on device %d gave memory on %d", other, a.device);
  CASE_OK(ctx, n4c_mem_free(p));
  /* A failing allocation restores the device too. */
  p = NULL;
  n4c_status_t st = n4c_mem_alloc(SIZE_MAX / 2, other, &p);
  CASE_CHECK(ctx, st != N4C_OK, "mem_alloc(SIZE_MAX / 2) succeeded");
  CASE_CUDA_OK(ctx, cudaGetDevice(&cur));
  CASE_CHECK(ctx, cur == ctx->device, "current device is %d after a failed mem_alloc on %d, was %d", cur, other,
             ctx->device);
}
