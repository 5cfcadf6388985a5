/*
 * bufreg.c — registered buffers (nccl.core register_buffer): a resource
 * holding ncclCommRegister's handle, released by ncclCommDeregister.
 */
#include "config.h"

#include "n4c_internal.h"

struct n4c_buffer_reg_s {
  n4c_resource_t base; /* first: see n4c_internal.h */
  void *handle;        /* NCCL's; kept after close for nothing but debugging */
  size_t bytes;
};

static n4c_status_t bufreg_close(n4c_resource_t *r) {
  n4c_buffer_reg_t *reg = (n4c_buffer_reg_t *)r;
  N4C_NCCLCHECK("n4c_resource_close", ncclCommDeregister, (r->comm->handle, reg->handle));
  return N4C_OK;
}

static const n4c_resource_kind_t bufreg_kind = {"registered buffer", bufreg_close, NULL};

n4c_status_t n4c_comm_register_buffer(n4c_comm_t *comm, const n4c_buffer_t *buf,
                                      n4c_buffer_reg_t **out) {
  static const char op[] = "n4c_comm_register_buffer";
  n4c_buffer_reg_t *reg;
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  *out = NULL;
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_buffer(op, "buf", comm, buf));
  N4C_CHECK(n4c_resource_alloc(op, comm, &bufreg_kind, sizeof *reg, (void **)&reg));
  reg->bytes = n4c_buffer_bytes(buf);
  ncclResult_t r = ncclCommRegister(comm->handle, buf->ptr, reg->bytes, &reg->handle);
  if (r != ncclSuccess) {
    n4c_resource_unref(&reg->base);
    return n4c_nccl_error(op, "ncclCommRegister", r);
  }
  n4c_comm_track(&reg->base);
  *out = reg;
  return N4C_OK;
}

n4c_status_t n4c_buffer_reg_handle(const n4c_buffer_reg_t *reg, void **out) {
  static const char op[] = "n4c_buffer_reg_handle";
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  *out = NULL;
  N4C_CHECK(n4c_resource_check_open(op, "reg", reg ? &reg->base : NULL));
  *out = reg->handle;
  return N4C_OK;
}

size_t n4c_buffer_reg_size(const n4c_buffer_reg_t *reg) { return reg ? reg->bytes : 0; }
