/*
 * mem.c — nccl.core mem_alloc/mem_free: device memory from NCCL's
 * allocator (ncclMemAlloc), which windows require.
 *
 * ncclMemAlloc allocates on the calling thread's current device, so
 * another device is made current for the call and the previous one is
 * restored afterwards, whatever happened. NCCL may round the size up to
 * its allocation granularity (ncclsim: to 4096 bytes); only the bytes
 * asked for may be used.
 */
#include "config.h"

#include <stdio.h>

#include "mem.h"

n4c_status_t n4c_mem_alloc_op(const char *op, size_t bytes, int device, void **out, int *resolved) {
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (device < N4C_CURRENT_DEVICE)
    return n4c_error(N4C_EINVAL, "%s: device is %d, must be >= 0 or N4C_CURRENT_DEVICE (-1)", op, device);
  int prev;
  N4C_CUDACHECK(op, cudaGetDevice, (&prev));
  int target = device == N4C_CURRENT_DEVICE ? prev : device;
  if (bytes == 0) { /* ncclMemAlloc rejects 0 bytes; nccl.core gives no memory */
    *out = NULL;
    if (resolved) *resolved = target;
    return N4C_OK;
  }
  if (target != prev) N4C_CUDACHECK(op, cudaSetDevice, (target));
  void *p = NULL;
  ncclResult_t r = ncclMemAlloc(&p, bytes);
  cudaError_t e = target != prev ? cudaSetDevice(prev) : cudaSuccess;
  if (r != ncclSuccess) {
    n4c_status_t st = n4c_nccl_error(op, "ncclMemAlloc", r);
    if (e != cudaSuccess) { /* keep NCCL's error, but say the device was not restored */
      char first[256];
      snprintf(first, sizeof first, "%s", n4c_last_error_message());
      return n4c_error(st, "%s; then cudaSetDevice(%d) to restore the current device failed: %s", first, prev,
                       cudaGetErrorName(e));
    }
    return st;
  }
  if (e != cudaSuccess) {
    ncclMemFree(p);
    return n4c_cuda_error(op, "cudaSetDevice", e);
  }
  *out = p;
  if (resolved) *resolved = target;
  return N4C_OK;
}

n4c_status_t n4c_mem_alloc(size_t bytes, int device, void **out) {
  return n4c_mem_alloc_op("n4c_mem_alloc", bytes, device, out, NULL);
}

n4c_status_t n4c_mem_free(void *ptr) {
  if (!ptr) return N4C_OK;
  N4C_NCCLCHECK("n4c_mem_free", ncclMemFree, (ptr));
  return N4C_OK;
}
