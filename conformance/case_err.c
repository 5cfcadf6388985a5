/* case_err.c — ERR-*: status texts and the last error message. */
#include "config.h"

#include <string.h>
#include "case.h"

/* The message of the calling thread's last failure contains each of the
 * `n` strings in `parts`. */
static bool expect_message(case_ctx_t *ctx, const char *call, const char *const *parts, int n)
{
  const char *msg = n4c_last_error_message();

  for (int i = 0; i < n; i++)
    if (!CASE_EXPECT(ctx, strstr(msg, parts[i]) != NULL,
                     "after %s the last error message '%s' does not contain '%s'", call, msg,
                     parts[i]))
      return false;
  return true;
}

void case_ERR_01(case_ctx_t *ctx)
{
  static const struct { n4c_status_t st; const char *name; } statuses[] = {
#define X(name, value, text) { N4C_##name, "N4C_" #name },
    N4C_STATUS_MAP(X)
#undef X
  };
  n4c_comm_t *comm;
  const char *s;
  char value[16];
  void *p;

  for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
    s = n4c_strerror(statuses[i].st);
    CASE_CHECK(ctx, s && *s && strcmp(s, n4c_strerror((n4c_status_t)1000)) != 0,
               "n4c_strerror(%s) is '%s'", statuses[i].name, s ? s : "(NULL)");
    s = n4c_status_name(statuses[i].st);
    CASE_CHECK(ctx, s && strcmp(s, statuses[i].name) == 0, "n4c_status_name(%d) is '%s', "
               "expected '%s'", (int)statuses[i].st, s ? s : "(NULL)", statuses[i].name);
  }
  s = n4c_strerror((n4c_status_t)1000);
  CASE_CHECK(ctx, s && *s, "n4c_strerror of an unknown status is empty or NULL");
  /* 0 (ncclSuccess) .. 8 (ncclTimeout, new in 2.30: older NCCL has no name
   * for it, but must still give a text). */
  for (int r = 0; r <= 8; r++) {
    s = ncclGetErrorString((ncclResult_t)r);
    CASE_CHECK(ctx, s && *s, "ncclGetErrorString(%d) is empty or NULL", r);
  }

  /* The last error names the operation, the argument and its value. */
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &p, 64));
  n4c_buffer_t buf = n4c_buffer(p, 16, ncclFloat32, ctx->device);

  snprintf(value, sizeof value, "%d", ctx->nranks);
  CASE_STATUS(ctx, n4c_comm_send(comm, &buf, ctx->nranks, 0), N4C_EINVAL);
  if (!expect_message(ctx, "a send to peer nranks",
                      (const char *const[]){ "n4c_comm_send", "peer", value }, 3))
    return;

  buf.dtype = (ncclDataType_t)99;
  CASE_STATUS(ctx, n4c_comm_recv(comm, &buf, 0, 0), N4C_EINVAL);
  if (!expect_message(ctx, "a recv of dtype 99",
                      (const char *const[]){ "n4c_comm_recv", "dtype", "99" }, 3))
    return;

  CASE_STATUS(ctx, n4c_comm_rank(comm, NULL), N4C_EINVAL);
  expect_message(ctx, "n4c_comm_rank(comm, NULL)",
                 (const char *const[]){ "n4c_comm_rank", "out" }, 2);
}
