/*
 * p2p.c — point to point: send and recv.
 */
#include "config.h"

#include "n4c_internal.h"

n4c_status_t n4c_comm_send(n4c_comm_t *comm, const n4c_buffer_t *buf, int peer,
                           cudaStream_t stream) {
  static const char op[] = "n4c_comm_send";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_buffer(op, "sendbuf", comm, buf));
  N4C_CHECK(n4c_check_rank(op, "peer", comm, peer));
  N4C_NCCLCHECK(op, ncclSend, (buf->ptr, buf->count, buf->dtype, peer, comm->handle, stream));
  return N4C_OK;
}

n4c_status_t n4c_comm_recv(n4c_comm_t *comm, const n4c_buffer_t *buf, int peer,
                           cudaStream_t stream) {
  static const char op[] = "n4c_comm_recv";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_buffer(op, "recvbuf", comm, buf));
  N4C_CHECK(n4c_check_rank(op, "peer", comm, peer));
  N4C_NCCLCHECK(op, ncclRecv, (buf->ptr, buf->count, buf->dtype, peer, comm->handle, stream));
  return N4C_OK;
}
