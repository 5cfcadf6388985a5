/*
 * devk_util.h — what the DEVK kernels' files (conformance/devk_*.cu)
 * share: their verdict, symmetric windows, device communicators, and the
 * errors their kernels count. C++ for nvcc and ncclsim-nvcc alike.
 */
#ifndef N4C_CONFORMANCE_DEVK_UTIL_H_
#define N4C_CONFORMANCE_DEVK_UTIL_H_

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include "devk.h"

/* The NCCL device API the kernels use is 2.30's. */
#define DEVK_API (NCCL_VERSION_CODE >= NCCL_VERSION(2, 30, 0))

/* A function's verdict: the first failure's text, kept. */
struct DevkResult {
  char *msg;
  size_t len;
  int rc;
  DevkResult(char *m, size_t l) : msg(m), len(l), rc(DEVK_PASS) {
    if (len) msg[0] = 0;
  }
  bool ok() const { return rc == DEVK_PASS; }
  void set(int code, const char *fmt, va_list ap) {
    if (rc != DEVK_PASS) return; /* the first one says it */
    rc = code;
    if (len) vsnprintf(msg, len, fmt, ap);
  }
  bool fail(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    set(DEVK_FAIL, fmt, ap);
    va_end(ap);
    return false;
  }
  bool skip(const char *fmt, ...) __attribute__((format(printf, 2, 3))) {
    va_list ap;
    va_start(ap, fmt);
    set(DEVK_SKIP, fmt, ap);
    va_end(ap);
    return false;
  }
  bool nccl(ncclResult_t r, const char *call) {
    return r == ncclSuccess || fail("%s: %s (%d)", call, ncclGetErrorString(r), (int)r);
  }
  bool cuda(cudaError_t e, const char *call) {
    return e == cudaSuccess || fail("%s: %s", call, cudaGetErrorName(e));
  }
};
#define DEVK_NCCL(res, call) (res).nccl((call), #call)
#define DEVK_CUDA(res, call) (res).cuda((call), #call)

/* A window of `bytes` on every rank (ncclMemAlloc, symmetric), zeroed. */
struct DevkWindow {
  ncclComm_t comm = nullptr;
  void *buf = nullptr;
  ncclWindow_t win = nullptr;
  size_t bytes = 0;
  bool make(DevkResult &res, ncclComm_t c, size_t n) {
    comm = c;
    bytes = n;
    return DEVK_NCCL(res, ncclMemAlloc(&buf, n)) && DEVK_CUDA(res, cudaMemset(buf, 0, n)) &&
           DEVK_CUDA(res, cudaDeviceSynchronize()) &&
           DEVK_NCCL(res, ncclCommWindowRegister(comm, buf, n, &win, NCCL_WIN_COLL_SYMMETRIC));
  }
  ~DevkWindow() {
    if (win) ncclCommWindowDeregister(comm, win);
    if (buf) ncclMemFree(buf);
  }
};

/* A device communicator, destroyed with this. */
struct DevkDevComm {
  ncclComm_t comm = nullptr;
  ncclDevComm dc;
  bool made = false;
  bool make(DevkResult &res, ncclComm_t c, ncclDevCommRequirements const &reqs) {
    comm = c;
    made = DEVK_NCCL(res, ncclDevCommCreate(comm, &reqs, &dc));
    return made;
  }
  ~DevkDevComm() {
    if (made) ncclDevCommDestroy(comm, &dc);
  }
};

/* What a kernel found wrong: how many, and the first one's coordinates. */
struct DevkErrors {
  int count;
  int at[4];
};

/* Device memory for a kernel's DevkErrors, read back after it. */
struct DevkErrorBuf {
  DevkErrors *d = nullptr;
  bool make(DevkResult &res) {
    return DEVK_CUDA(res, cudaMalloc(&d, sizeof *d)) && DEVK_CUDA(res, cudaMemset(d, 0, sizeof *d));
  }
  bool read(DevkResult &res, DevkErrors *out) {
    return DEVK_CUDA(res, cudaMemcpy(out, d, sizeof *out, cudaMemcpyDeviceToHost));
  }
  ~DevkErrorBuf() {
    if (d) cudaFree(d);
  }
};

/* Counts an error; the first one's coordinates are kept. */
__device__ inline void devkError(DevkErrors *e, int a, int b, int c, int d) {
  if (atomicAdd(&e->count, 1) == 0) {
    e->at[0] = a;
    e->at[1] = b;
    e->at[2] = c;
    e->at[3] = d;
  }
}

/* Runs a launch (a lambda) and waits for it. */
template <typename F>
static inline bool devkRun(DevkResult &res, const char *what, F launch) {
  launch();
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return e == cudaSuccess || res.fail("%s: %s", what, cudaGetErrorName(e));
}

/* The communicator's GIN type, for the GIN cases (skip without one). */
static inline bool devkGin(DevkResult &res, ncclComm_t comm) {
  ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  if (!DEVK_NCCL(res, ncclCommQueryProperties(comm, &props))) return false;
  if (!props.deviceApiSupport) return res.skip("deviceApiSupport is false on this communicator");
  if (props.ginType == NCCL_GIN_TYPE_NONE) return res.skip("the communicator has no GIN type (ginType NONE)");
  return true;
}

/* A value that names a writer, a reader, a slot and a round. */
__host__ __device__ inline int devkTag(int writer, int reader, int slot, int round) {
  return (round & 0xff) << 24 | (writer & 0xff) << 16 | (reader & 0xf) << 12 | (slot & 0xfff);
}

#endif /* N4C_CONFORMANCE_DEVK_UTIL_H_ */
