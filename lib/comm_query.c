/*
 * comm_query.c — what a communicator says about itself: validity, handle,
 * identity (nranks, rank, device), async error, last error, memory stats.
 */
#include "config.h"

#include "n4c_internal.h"

n4c_status_t n4c_check_comm(const char *op, const n4c_comm_t *comm) {
  N4C_CHECK(n4c_check_ptr(op, "comm", comm));
  switch (comm->state) {
  case N4C_COMM_LIVE: return N4C_OK;
  case N4C_COMM_NULL:
    return n4c_error(N4C_EINVAL, "%s: comm is a null communicator (not initialized)", op);
  case N4C_COMM_FINALIZED: return n4c_error(N4C_EINVAL, "%s: comm is finalized", op);
  default: return n4c_error(N4C_EINVAL, "%s: comm is destroyed", op);
  }
}

n4c_status_t n4c_comm_identity(const char *op, n4c_comm_t *comm) {
  if (comm->have_identity) return N4C_OK;
  int nranks, rank, device;
  N4C_NCCLCHECK(op, ncclCommCount, (comm->handle, &nranks));
  N4C_NCCLCHECK(op, ncclCommUserRank, (comm->handle, &rank));
  N4C_NCCLCHECK(op, ncclCommCuDevice, (comm->handle, &device));
  comm->nranks = nranks;
  comm->rank = rank;
  comm->device = device;
  comm->have_identity = true;
  return N4C_OK;
}

bool n4c_comm_is_valid(const n4c_comm_t *comm) { return comm && comm->state == N4C_COMM_LIVE; }

ncclComm_t n4c_comm_handle(const n4c_comm_t *comm) {
  return n4c_comm_is_valid(comm) ? comm->handle : NULL;
}

/* Shared by the three identity getters. */
static n4c_status_t identity_get(const char *op, n4c_comm_t *comm, int *out, int which) {
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  N4C_CHECK(n4c_comm_identity(op, comm));
  *out = which == 0 ? comm->nranks : which == 1 ? comm->rank : comm->device;
  return N4C_OK;
}

n4c_status_t n4c_comm_nranks(n4c_comm_t *comm, int *out) {
  return identity_get("n4c_comm_nranks", comm, out, 0);
}

n4c_status_t n4c_comm_rank(n4c_comm_t *comm, int *out) {
  return identity_get("n4c_comm_rank", comm, out, 1);
}

n4c_status_t n4c_comm_device(n4c_comm_t *comm, int *out) {
  return identity_get("n4c_comm_device", comm, out, 2);
}

n4c_status_t n4c_comm_get_async_error(n4c_comm_t *comm, ncclResult_t *out) {
  static const char op[] = "n4c_comm_get_async_error";
  /* A finalized communicator is still polled for its non-blocking finalize. */
  if (!(comm && comm->state == N4C_COMM_FINALIZED)) N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  N4C_NCCLCHECK(op, ncclCommGetAsyncError, (comm->handle, out));
  return N4C_OK;
}

n4c_status_t n4c_comm_last_error(n4c_comm_t *comm, const char **out) {
  static const char op[] = "n4c_comm_last_error";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  const char *text = ncclGetLastError(comm->handle);
  *out = text ? text : "";
  return N4C_OK;
}

n4c_status_t n4c_comm_mem_stat(n4c_comm_t *comm, n4c_mem_stat_t stat, uint64_t *out) {
  static const char op[] = "n4c_comm_mem_stat";
  N4C_CHECK(n4c_check_comm(op, comm));
  if ((int)stat < N4C_MEM_STAT_GPU_MEM_SUSPEND || (int)stat > N4C_MEM_STAT_GPU_MEM_TOTAL)
    return n4c_error(N4C_EINVAL, "%s: stat is %d, not an n4c_mem_stat_t (0..%d)", op, (int)stat,
                     N4C_MEM_STAT_GPU_MEM_TOTAL);
  N4C_CHECK(n4c_check_ptr(op, "out", out));
#if HAVE_DECL_NCCLCOMMMEMSTATS
  N4C_NCCLCHECK(op, ncclCommMemStats, (comm->handle, (ncclCommMemStat_t)stat, out));
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclCommMemStats");
#endif
}
