/*
 * signal.c — one-sided signals and puts (nccl.core signal, wait_signal,
 * put_signal; NCCL 2.29+). The put's offset is in elements of the local
 * buffer's dtype, as nccl.core has it; NCCL takes bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>

#include "n4c_internal.h"

n4c_status_t n4c_comm_signal(n4c_comm_t *comm, int peer, int signal_index, int context,
                             unsigned int flags, cudaStream_t stream) {
  static const char op[] = "n4c_comm_signal";
#if HAVE_DECL_NCCLSIGNAL
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_rank(op, "peer", comm, peer));
  N4C_NCCLCHECK(op, ncclSignal, (peer, signal_index, context, flags, comm->handle, stream));
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclSignal");
#endif
}

n4c_status_t n4c_comm_wait_signal(n4c_comm_t *comm, const n4c_wait_signal_desc_t *descs,
                                  int ndescs, cudaStream_t stream) {
  static const char op[] = "n4c_comm_wait_signal";
#if HAVE_DECL_NCCLWAITSIGNAL
  enum { ON_STACK = 16 };
  ncclWaitSignalDesc_t stack[ON_STACK], *d = stack;
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "descs", descs));
  if (ndescs < 1) return n4c_error(N4C_EINVAL, "%s: ndescs is %d, must be >= 1", op, ndescs);
  for (int i = 0; i < ndescs; i++) {
    char arg[40];
    snprintf(arg, sizeof arg, "descs[%d].peer", i);
    N4C_CHECK(n4c_check_rank(op, arg, comm, descs[i].peer));
    if (descs[i].op_count < 1)
      return n4c_error(N4C_EINVAL, "%s: descs[%d].op_count is %d, must be >= 1", op, i,
                       descs[i].op_count);
  }
  if (ndescs > ON_STACK && !(d = n4c_malloc((size_t)ndescs * sizeof *d)))
    return n4c_enomem(op, "wait descriptors");
  for (int i = 0; i < ndescs; i++) {
    d[i].opCnt = descs[i].op_count;
    d[i].peer = descs[i].peer;
    d[i].sigIdx = descs[i].signal_index;
    d[i].ctx = descs[i].context;
  }
  ncclResult_t r = ncclWaitSignal(ndescs, d, comm->handle, stream);
  if (d != stack) n4c_free(d);
  if (r != ncclSuccess) return n4c_nccl_error(op, "ncclWaitSignal", r);
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclWaitSignal");
#endif
}

n4c_status_t n4c_comm_put_signal(n4c_comm_t *comm, const n4c_buffer_t *local, int peer,
                                 const n4c_window_t *peer_window, size_t peer_window_offset,
                                 int signal_index, int context, unsigned int flags,
                                 cudaStream_t stream) {
  static const char op[] = "n4c_comm_put_signal";
#if HAVE_DECL_NCCLPUTSIGNAL
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_buffer(op, "local", comm, local));
  N4C_CHECK(n4c_check_rank(op, "peer", comm, peer));
  N4C_CHECK(n4c_check_ptr(op, "peer_window", peer_window));
  if (!n4c_resource_is_valid(N4C_RESOURCE(peer_window)))
    return n4c_error(N4C_EINVAL, "%s: peer_window is closed", op);
  if (N4C_RESOURCE(peer_window)->comm != comm)
    return n4c_error(N4C_EINVAL, "%s: peer_window belongs to another communicator; name the "
                     "target by this rank's own window of the collective registration", op);
  ncclWindow_t win = n4c_window_handle(peer_window);
  if (!win)
    return n4c_error(N4C_EINVAL, "%s: peer_window's registration has not completed yet", op);
  size_t isz = n4c_dtype_size(local->dtype);
  if (peer_window_offset > SIZE_MAX / isz)
    return n4c_error(N4C_EINVAL, "%s: peer_window_offset %zu elements of %s overflows in bytes",
                     op, peer_window_offset, n4c_dtype_name(local->dtype));
  N4C_NCCLCHECK(op, ncclPutSignal,
                (local->ptr, local->count, local->dtype, peer, win,
                 peer_window_offset * isz, signal_index, context, flags, comm->handle, stream));
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclPutSignal");
#endif
}
