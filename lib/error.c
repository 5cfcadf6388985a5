/*
 * error.c — status texts (from N4C_STATUS_MAP) and the thread-local error
 * state: the last failure's message and the last NCCL result.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "n4c_internal.h"

/* Long enough for an op, an argument, two values and NCCL's text. */
#define N4C_MSG_MAX 512

static _Thread_local char last_msg[N4C_MSG_MAX];
static _Thread_local ncclResult_t last_nccl = ncclSuccess;

const char *n4c_strerror(n4c_status_t status) {
  switch (status) {
#define X(name, value, text) case N4C_##name: return text;
    N4C_STATUS_MAP(X)
#undef X
  }
  return "unknown status";
}

const char *n4c_status_name(n4c_status_t status) {
  switch (status) {
#define X(name, value, text) case N4C_##name: return "N4C_" #name;
    N4C_STATUS_MAP(X)
#undef X
  }
  return "N4C_UNKNOWN";
}

const char *n4c_get_error_string(ncclResult_t result) {
  const char *text = ncclGetErrorString(result);
  return text ? text : "unknown NCCL error";
}

const char *n4c_last_error_message(void) { return last_msg; }

ncclResult_t n4c_last_nccl_result(void) { return last_nccl; }

n4c_status_t n4c_error(n4c_status_t st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_msg, sizeof last_msg, fmt, ap);
  va_end(ap);
  return st;
}

n4c_status_t n4c_nccl_error(const char *op, const char *fn, ncclResult_t r) {
  last_nccl = r;
  if (r == ncclInProgress)
    return n4c_error(N4C_EINPROGRESS,
                     "%s: %s is in progress (non-blocking communicator; poll "
                     "n4c_comm_get_async_error)", op, fn);
  const char *text = ncclGetErrorString(r);
  return n4c_error(N4C_ENCCL, "%s: %s failed: %s (ncclResult_t %d)", op, fn,
                   text ? text : "unknown NCCL error", (int)r);
}

n4c_status_t n4c_cuda_error(const char *op, const char *fn, cudaError_t e) {
  const char *text = cudaGetErrorString(e);
  return n4c_error(N4C_ECUDA, "%s: %s failed: %s (cudaError_t %d)", op, fn,
                   text ? text : "unknown CUDA error", (int)e);
}

n4c_status_t n4c_enotsup(const char *op, const char *fn) {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess || v <= 0)
    return n4c_error(N4C_ENOTSUP, "%s: %s is not supported by the linked NCCL", op, fn);
  n4c_semver_t sv;
  n4c_version_decode(v, &sv);
  return n4c_error(N4C_ENOTSUP, "%s: %s is not supported by the linked NCCL %d.%d.%d", op,
                   fn, sv.major, sv.minor, sv.patch);
}

n4c_status_t n4c_enomem(const char *op, const char *what) {
  return n4c_error(N4C_ENOMEM, "%s: out of memory allocating %s", op, what);
}

n4c_status_t n4c_check_ptr(const char *op, const char *arg, const void *p) {
  if (p) return N4C_OK;
  return n4c_error(N4C_EINVAL, "%s: %s is NULL", op, arg);
}
