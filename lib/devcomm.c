/*
 * devcomm.c — device communicators (nccl.core's
 * Communicator.create_dev_comm / NCCL's ncclDevCommCreate):
 * n4c_comm_create_dev_comm, n4c_dev_comm_ptr, tracked as a resource whose
 * close is ncclDevCommDestroy.
 *
 * NCCL's <nccl_device.h> is C++, so the NCCL calls go through
 * devcomm_bridge.h, implemented in devcomm_bridge.cc. Without it (no C++
 * compiler, or an NCCL without a usable device API: no HAVE_NCCL_DEVCOMM)
 * creation gives N4C_ENOTSUP.
 */
#include "config.h"

#include <string.h>

#include "n4c_internal.h"
#include "devcomm_bridge.h"

struct n4c_dev_comm_s {
  n4c_resource_t base;
  void *dc; /* the ncclDevComm_t, from n4c_dc_create */
};

#ifdef HAVE_NCCL_DEVCOMM
static n4c_status_t dev_comm_close(n4c_resource_t *r) {
  n4c_dev_comm_t *d = (n4c_dev_comm_t *)r;
  ncclResult_t res = n4c_dc_destroy(r->comm->handle, d->dc);
  if (res != ncclSuccess) return n4c_nccl_error("n4c_resource_close", "ncclDevCommDestroy", res);
  return N4C_OK;
}

static void dev_comm_release(n4c_resource_t *r) { n4c_dc_free(((n4c_dev_comm_t *)r)->dc); }

static const n4c_resource_kind_t dev_comm_kind = {"device communicator", dev_comm_close, dev_comm_release};
#endif

/* X(field, kind): kind B is a 0/1 boolean, C a count >= 0, T a connection type. */
#define N4C_DC_FIELDS(X)                                                        \
  X(lsa_multimem, 'B') X(barrier_count, 'C') X(lsa_barrier_count, 'C')          \
  X(rail_gin_barrier_count, 'C') X(lsa_ll_a2a_block_count, 'C')                 \
  X(lsa_ll_a2a_slot_count, 'C') X(gin_force_enable, 'B')                        \
  X(gin_context_count, 'C') X(gin_signal_count, 'C') X(gin_counter_count, 'C')  \
  X(gin_connection_type, 'T') X(gin_exclusive_contexts, 'B')                    \
  X(gin_queue_depth, 'C') X(world_gin_barrier_count, 'C')                       \
  X(gin_strong_signals_required, 'B') X(gin_va_signals_required, 'B')

static n4c_status_t check_field(const char *op, const char *name, int kind, int v) {
  if (v == N4C_UNSET) return N4C_OK;
  switch (kind) {
  case 'B':
    if (v != 0 && v != 1) return n4c_error(N4C_EINVAL, "%s: reqs->%s is %d, must be 0, 1 or N4C_UNSET", op, name, v);
    break;
  case 'C':
    if (v < 0) return n4c_error(N4C_EINVAL, "%s: reqs->%s is %d, must be >= 0 or N4C_UNSET", op, name, v);
    break;
  default:
    if (!n4c_gin_connection_type_name((n4c_gin_connection_type_t)v))
      return n4c_error(N4C_EINVAL, "%s: reqs->%s is %d, not an n4c_gin_connection_type_t (0, 1, 2)", op, name, v);
  }
  return N4C_OK;
}

n4c_status_t n4c_comm_create_dev_comm(n4c_comm_t *comm, const n4c_dev_comm_requirements_t *reqs,
                                      n4c_dev_comm_t **out) {
  static const char op[] = "n4c_comm_create_dev_comm";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (reqs) {
#define CHECK_ONE(f, k) N4C_CHECK(check_field(op, #f, k, reqs->f));
    N4C_DC_FIELDS(CHECK_ONE)
#undef CHECK_ONE
  }
#ifdef HAVE_NCCL_DEVCOMM
  n4c_dev_comm_t *d;
  N4C_CHECK(n4c_resource_alloc(op, comm, &dev_comm_kind, sizeof *d, (void **)&d));
  ncclResult_t nres = ncclSuccess;
  const char *detail = NULL;
  n4c_status_t st = N4C_OK;
  switch (n4c_dc_create(comm->handle, reqs, &d->dc, &nres, &detail)) {
  case N4C_DC_OK: break;
  case N4C_DC_ENOMEM: st = n4c_enomem(op, "the ncclDevComm_t"); break;
  case N4C_DC_ENOTSUP:
    st = n4c_error(N4C_ENOTSUP, "%s: reqs->%s is set, but the linked NCCL %d.%d.%d has no such requirement", op,
                   detail ? detail : "(unknown)", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
    break;
  default: st = n4c_nccl_error(op, "ncclDevCommCreate", nres);
  }
  if (st != N4C_OK) {
    n4c_resource_unref(&d->base); /* d->dc is NULL: nothing to free */
    return st;
  }
  n4c_comm_track(&d->base);
  *out = d;
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclDevCommCreate");
#endif
}

n4c_status_t n4c_dev_comm_ptr(const n4c_dev_comm_t *dc, void **out) {
  static const char op[] = "n4c_dev_comm_ptr";
  N4C_CHECK(n4c_resource_check_open(op, "dc", (const n4c_resource_t *)dc));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  *out = dc->dc;
  return N4C_OK;
}
