/* case_res.c — RES-*, BUF-*: resources of every kind, registered buffers. */
#include "case_rma.h"

enum { NKINDS = 4 };
static const char *const kind_names[NKINDS] = { "registered buffer", "window", "custom op",
                                                 "device communicator" };

/* One resource of each kind on comm; r[k] NULL (and a failed check) for a
 * kind that could not be made. Device communicators where the linked NCCL
 * lacks the device API (N4C_ENOTSUP) or the communicator reports no device
 * API support (its properties) are left out, with a note, and the cases
 * run over the other kinds. */
/* The device API is missing: from the linked NCCL, or for this
 * communicator (properties.device_api_support false). */
static bool dev_api(n4c_comm_t *comm)
{
  n4c_comm_properties_t p;
  return n4c_comm_properties(comm, &p) == N4C_OK && p.device_api_support;
}

static bool make_all(case_ctx_t *ctx, n4c_comm_t *comm, n4c_resource_t *r[NKINDS])
{
  n4c_buffer_reg_t *reg = NULL;
  n4c_window_t *win = NULL;
  n4c_redop_t *op = NULL;
  n4c_dev_comm_t *dc = NULL;
  float scalar = 2.0f;
  void *mem = rma_mem(ctx, 4096);
  bool ok = mem != NULL;

  memset(r, 0, NKINDS * sizeof r[0]);
  if (!ok)
    return false;
  n4c_buffer_t b = n4c_buffer(mem, 1024, ncclFloat32, ctx->device);
  n4c_status_t st[NKINDS] = {
    n4c_comm_register_buffer(comm, &b, &reg),
    n4c_comm_register_window(comm, &b, N4C_WIN_COLL_SYMMETRIC, &win),
    n4c_comm_create_pre_mul_sum_host(comm, &scalar, ncclFloat32, &op),
    n4c_comm_create_dev_comm(comm, NULL, &dc),
  };
  r[0] = N4C_RESOURCE(reg), r[1] = N4C_RESOURCE(win), r[2] = N4C_RESOURCE(op), r[3] = N4C_RESOURCE(dc);
  for (int k = 0; k < NKINDS; k++) {
    rma_defer_res(ctx, r[k]);
    if (k == 3 && st[k] != N4C_OK && !dev_api(comm)) {
      if (ctx->rank == 0)
        ctx_note(ctx, "%s: not supported by the linked NCCL, left out", kind_names[k]);
      continue;
    }
    if (k == 3 && case_sim_hosts() && st[k] == N4C_ENCCL && n4c_last_nccl_result() == ncclInvalidUsage) {
      if (ctx->rank == 0) /* refused: ncclsim does not yet make them across hosts */
        ctx_note(ctx, "%s: %s, left out", kind_names[k], n4c_last_error_message());
      continue;
    }
    ok &= CASE_EXPECT(ctx, st[k] == N4C_OK && r[k], "creating a %s: %s (%s)", kind_names[k],
                      n4c_strerror(st[k]), st[k] ? n4c_last_error_message() : "no object");
  }
  return ok;
}

void case_RES_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_resource_t *r[NKINDS];

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!make_all(ctx, comm, r) || !ctx_barrier(ctx))
    return;
  for (int k = 0; k < NKINDS; k++) {
    if (!r[k])
      continue; /* not supported here */
    CASE_OK(ctx, n4c_resource_close(r[k]));
    CASE_OK(ctx, n4c_resource_close(r[k]));
    CASE_EXPECT(ctx, !n4c_resource_is_valid(r[k]), "%s valid after close", kind_names[k]);
  }
}

void case_RES_02(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_resource_t *r[NKINDS];

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!make_all(ctx, comm, r) || !ctx_barrier(ctx))
    return;
  for (int k = 0; k < NKINDS; k++) {
    if (!r[k])
      continue; /* not supported here */
    CASE_CHECK(ctx, n4c_resource_is_valid(r[k]), "%s not valid after creation", kind_names[k]);
    CASE_OK(ctx, n4c_resource_close(r[k]));
    CASE_CHECK(ctx, !n4c_resource_is_valid(r[k]), "%s valid after close", kind_names[k]);
  }
}

/* RES-03/04/05: releasing the communicator's tracked resources by `how`. */
static void release_all(case_ctx_t *ctx, int how)
{
  static const char *const hows[] = { "destroy", "abort", "close_all_resources" };
  n4c_comm_t *comm;
  n4c_resource_t *r[NKINDS];

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  if (!make_all(ctx, comm, r) || !ctx_barrier(ctx))
    return;
  if (how == 0)
    CASE_OK(ctx, n4c_comm_destroy(comm));
  else if (how == 1)
    CASE_OK(ctx, n4c_comm_abort(comm));
  else {
    CASE_OK(ctx, n4c_comm_close_all_resources(comm));
    CASE_OK(ctx, n4c_comm_close_all_resources(comm));
  }
  for (int k = 0; k < NKINDS; k++) {
    if (!r[k])
      continue; /* not supported here */
    CASE_EXPECT(ctx, !n4c_resource_is_valid(r[k]), "%s valid after %s", kind_names[k], hows[how]);
    CASE_OK(ctx, n4c_resource_close(r[k]));
  }
  void *h;
  CASE_STATUS(ctx, n4c_buffer_reg_handle((n4c_buffer_reg_t *)r[0], &h), N4C_ECLOSED);
  CASE_STATUS(ctx, n4c_window_user_ptr((n4c_window_t *)r[1], &h), N4C_ECLOSED);
  if (how == 2) /* the communicator itself stays usable */
    CASE_CHECK(ctx, n4c_comm_is_valid(comm), "communicator invalid after close_all_resources");
}

void case_RES_03(case_ctx_t *ctx) { release_all(ctx, 0); }
void case_RES_04(case_ctx_t *ctx) { release_all(ctx, 1); }
void case_RES_05(case_ctx_t *ctx) { release_all(ctx, 2); }

void case_RES_06(case_ctx_t *ctx)
{
  n4c_comm_t *null_comm, *comm;
  float scalar = 1.0f;
  void *mem = rma_mem(ctx, 4096);
  n4c_buffer_reg_t *reg;
  n4c_window_t *win;
  n4c_redop_t *op;
  n4c_dev_comm_t *dc;

  if (!mem)
    return;
  n4c_buffer_t b = n4c_buffer(mem, 1024, ncclFloat32, ctx->device);
  CASE_OK(ctx, n4c_comm_new(&null_comm));
  ctx_defer_comm(ctx, null_comm);
  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_OK(ctx, n4c_comm_destroy(comm));
  n4c_comm_t *comms[2] = { null_comm, comm };
  for (int i = 0; i < 2; i++) {
    const char *what = i ? "destroyed" : "null";
    CASE_STATUS(ctx, n4c_comm_register_buffer(comms[i], &b, &reg), N4C_EINVAL);
    CASE_CHECK(ctx, strstr(n4c_last_error_message(), "n4c_comm_register_buffer"),
               "%s comm: message '%s' does not name the operation", what, n4c_last_error_message());
    CASE_STATUS(ctx, n4c_comm_register_window(comms[i], &b, 0, &win), N4C_EINVAL);
    CASE_STATUS(ctx, n4c_comm_create_pre_mul_sum_host(comms[i], &scalar, ncclFloat32, &op),
                N4C_EINVAL);
    CASE_STATUS(ctx, n4c_comm_create_dev_comm(comms[i], NULL, &dc), N4C_EINVAL);
  }
}

void case_BUF_01(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_buffer_reg_t *reg;
  void *h, *mem = rma_mem(ctx, 3 * 8 * 1000);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CHECK(ctx, mem, "no memory");
  n4c_buffer_t b = n4c_buffer(mem, 1000, ncclFloat64, ctx->device);
  CASE_OK(ctx, n4c_comm_register_buffer(comm, &b, &reg));
  rma_defer_res(ctx, reg);
  CASE_OK(ctx, n4c_buffer_reg_handle(reg, &h));
  CASE_CHECK(ctx, h != NULL, "registered buffer's handle is NULL");
  CASE_CHECK(ctx, n4c_buffer_reg_size(reg) == 8000, "size is %zu, expected 1000 x 8 = 8000",
             n4c_buffer_reg_size(reg));
}

void case_BUF_02(case_ctx_t *ctx)
{
  n4c_comm_t *comm;
  n4c_buffer_reg_t *reg;
  void *h, *mem = rma_mem(ctx, 4096);

  CASE_OK(ctx, ctx_comm_init(ctx, &comm));
  CASE_CHECK(ctx, mem, "no memory");
  n4c_buffer_t b = n4c_buffer(mem, 4096, ncclUint8, ctx->device);
  CASE_OK(ctx, n4c_comm_register_buffer(comm, &b, &reg));
  rma_defer_res(ctx, reg);
  CASE_OK(ctx, n4c_resource_close(N4C_RESOURCE(reg)));
  CASE_STATUS(ctx, n4c_buffer_reg_handle(reg, &h), N4C_ECLOSED);
  CASE_CHECK(ctx, h == NULL, "handle after close is %p, expected NULL", h);
  CASE_CHECK(ctx, n4c_buffer_reg_size(reg) == 4096, "size after close is %zu",
             n4c_buffer_reg_size(reg));
}
