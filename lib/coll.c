/*
 * coll.c — collectives. Counts come from the buffers; where NCCL takes one
 * count for two buffers of different lengths (allgather, reduce_scatter,
 * gather, scatter, alltoall), the lengths are checked against each other
 * first, so that a mistake gives N4C_EINVAL with both counts instead of an
 * overrun.
 */
#include "config.h"

#include "n4c_internal.h"

/* Both buffers checked, same dtype. */
static n4c_status_t check_pair(const char *op, n4c_comm_t *comm, const n4c_buffer_t *send,
                               const n4c_buffer_t *recv) {
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_buffer(op, "send", comm, send));
  N4C_CHECK(n4c_check_buffer(op, "recv", comm, recv));
  if (send->dtype != recv->dtype)
    return n4c_error(N4C_EINVAL, "%s: send.dtype is %s, but recv.dtype is %s", op,
                     n4c_dtype_name(send->dtype), n4c_dtype_name(recv->dtype));
  return N4C_OK;
}

/* big->count must be nranks * small->count. */
static n4c_status_t check_times(const char *op, n4c_comm_t *comm, const char *bigname,
                                const n4c_buffer_t *big, const char *smallname,
                                const n4c_buffer_t *small) {
  size_t n = (size_t)comm->nranks;
  if (small->count > SIZE_MAX / n || big->count != n * small->count)
    return n4c_error(N4C_EINVAL, "%s: %s.count is %zu, but it must be nranks (%zu) * %s.count (%zu)", op,
                     bigname, big->count, n, smallname, small->count);
  return N4C_OK;
}

n4c_status_t n4c_comm_allreduce(n4c_comm_t *comm, const n4c_buffer_t *send,
                                const n4c_buffer_t *recv, ncclRedOp_t op, cudaStream_t stream) {
  static const char fn[] = "n4c_comm_allreduce";
  N4C_CHECK(check_pair(fn, comm, send, recv));
  if (send->count != recv->count)
    return n4c_error(N4C_EINVAL, "%s: send.count is %zu, but recv.count is %zu", fn, send->count,
                     recv->count);
  N4C_NCCLCHECK(fn, ncclAllReduce,
                (send->ptr, recv->ptr, recv->count, recv->dtype, op, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_broadcast(n4c_comm_t *comm, const n4c_buffer_t *send,
                                const n4c_buffer_t *recv, int root, cudaStream_t stream) {
  static const char fn[] = "n4c_comm_broadcast";
  N4C_CHECK(n4c_check_comm(fn, comm));
  N4C_CHECK(n4c_check_buffer(fn, "recv", comm, recv));
  N4C_CHECK(n4c_check_rank(fn, "root", comm, root));
  const void *sp = recv->ptr; /* in place when no send buffer */
  if (send) {
    N4C_CHECK(check_pair(fn, comm, send, recv));
    if (send->count != recv->count)
      return n4c_error(N4C_EINVAL, "%s: send.count is %zu, but recv.count is %zu", fn, send->count,
                       recv->count);
    sp = send->ptr;
  }
  N4C_NCCLCHECK(fn, ncclBroadcast, (sp, recv->ptr, recv->count, recv->dtype, root, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_reduce(n4c_comm_t *comm, const n4c_buffer_t *send,
                             const n4c_buffer_t *recv, ncclRedOp_t op, int root,
                             cudaStream_t stream) {
  static const char fn[] = "n4c_comm_reduce";
  N4C_CHECK(n4c_check_comm(fn, comm));
  N4C_CHECK(n4c_check_buffer(fn, "send", comm, send));
  N4C_CHECK(n4c_check_rank(fn, "root", comm, root));
  void *rp = NULL;
  if (recv) {
    N4C_CHECK(check_pair(fn, comm, send, recv));
    if (send->count != recv->count)
      return n4c_error(N4C_EINVAL, "%s: send.count is %zu, but recv.count is %zu", fn, send->count,
                       recv->count);
    rp = recv->ptr;
  } else if (comm->rank == root) {
    return n4c_error(N4C_EINVAL, "%s: recv is NULL on the root (rank %d)", fn, root);
  }
  N4C_NCCLCHECK(fn, ncclReduce, (send->ptr, rp, send->count, send->dtype, op, root, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_allgather(n4c_comm_t *comm, const n4c_buffer_t *send,
                                const n4c_buffer_t *recv, cudaStream_t stream) {
  static const char fn[] = "n4c_comm_allgather";
  N4C_CHECK(check_pair(fn, comm, send, recv));
  N4C_CHECK(check_times(fn, comm, "recv", recv, "send", send));
  N4C_NCCLCHECK(fn, ncclAllGather, (send->ptr, recv->ptr, send->count, send->dtype, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_reduce_scatter(n4c_comm_t *comm, const n4c_buffer_t *send,
                                     const n4c_buffer_t *recv, ncclRedOp_t op,
                                     cudaStream_t stream) {
  static const char fn[] = "n4c_comm_reduce_scatter";
  N4C_CHECK(check_pair(fn, comm, send, recv));
  N4C_CHECK(check_times(fn, comm, "send", send, "recv", recv));
  N4C_NCCLCHECK(fn, ncclReduceScatter,
                (send->ptr, recv->ptr, recv->count, recv->dtype, op, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_alltoall(n4c_comm_t *comm, const n4c_buffer_t *send,
                               const n4c_buffer_t *recv, cudaStream_t stream) {
  static const char fn[] = "n4c_comm_alltoall";
  N4C_CHECK(check_pair(fn, comm, send, recv));
  if (send->count != recv->count || send->count % (size_t)comm->nranks)
    return n4c_error(N4C_EINVAL,
                     "%s: send.count is %zu and recv.count is %zu; they must be equal and a multiple of "
                     "nranks (%d)",
                     fn, send->count, recv->count, comm->nranks);
  N4C_NCCLCHECK(fn, ncclAlltoAll,
                (send->ptr, recv->ptr, send->count / (size_t)comm->nranks, send->dtype, comm->handle,
                 stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_gather(n4c_comm_t *comm, const n4c_buffer_t *send,
                             const n4c_buffer_t *recv, int root, cudaStream_t stream) {
  static const char fn[] = "n4c_comm_gather";
  N4C_CHECK(n4c_check_comm(fn, comm));
  N4C_CHECK(n4c_check_buffer(fn, "send", comm, send));
  N4C_CHECK(n4c_check_rank(fn, "root", comm, root));
  void *rp = NULL;
  if (recv) {
    N4C_CHECK(check_pair(fn, comm, send, recv));
    N4C_CHECK(check_times(fn, comm, "recv", recv, "send", send));
    rp = recv->ptr;
  } else if (comm->rank == root) {
    return n4c_error(N4C_EINVAL, "%s: recv is NULL on the root (rank %d)", fn, root);
  }
  N4C_NCCLCHECK(fn, ncclGather, (send->ptr, rp, send->count, send->dtype, root, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_scatter(n4c_comm_t *comm, const n4c_buffer_t *send,
                              const n4c_buffer_t *recv, int root, cudaStream_t stream) {
  static const char fn[] = "n4c_comm_scatter";
  N4C_CHECK(n4c_check_comm(fn, comm));
  N4C_CHECK(n4c_check_buffer(fn, "recv", comm, recv));
  N4C_CHECK(n4c_check_rank(fn, "root", comm, root));
  const void *sp = NULL;
  if (send) {
    N4C_CHECK(check_pair(fn, comm, send, recv));
    N4C_CHECK(check_times(fn, comm, "send", send, "recv", recv));
    sp = send->ptr;
  } else if (comm->rank == root) {
    return n4c_error(N4C_EINVAL, "%s: send is NULL on the root (rank %d)", fn, root);
  }
  N4C_NCCLCHECK(fn, ncclScatter, (sp, recv->ptr, recv->count, recv->dtype, root, comm->handle, stream));
  return N4C_OK;
}
