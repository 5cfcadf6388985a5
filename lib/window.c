/*
 * window.c — windows (nccl.core register_window, RegisteredWindowHandle):
 * a resource holding a rank's ncclWindow_t of a collective window.
 *
 * NCCL writes the handle into w->win itself, which is why the resource is
 * allocated before the call: inside a group it fills at ncclGroupEnd, and
 * on a non-blocking communicator once the registration completes (NCCL
 * returns ncclInProgress until then).
 */
#include "config.h"

#include "n4c_internal.h"
#include "devcomm_bridge.h" /* the device pointers: NCCL declares them in C++ <nccl_device.h> */

struct n4c_window_s {
  n4c_resource_t base; /* first: see n4c_internal.h */
  ncclWindow_t win;    /* NULL until filled; written by NCCL */
  size_t bytes;
};

/* A NULL window inside a group is one that fills at group end, not "no
 * window". */
static bool in_group(void) { return n4c_group_depth() > 0; }

static n4c_status_t window_close(n4c_resource_t *r) {
  n4c_window_t *w = (n4c_window_t *)r;
  if (!w->win) return N4C_OK; /* never filled: nothing registered */
#if HAVE_DECL_NCCLCOMMWINDOWREGISTER
  N4C_NCCLCHECK("n4c_resource_close", ncclCommWindowDeregister, (r->comm->handle, w->win));
#endif
  return N4C_OK;
}

static const n4c_resource_kind_t window_kind = {"window", window_close, NULL};

n4c_status_t n4c_comm_register_window(n4c_comm_t *comm, const n4c_buffer_t *buf, int flags,
                                      n4c_window_t **out) {
  static const char op[] = "n4c_comm_register_window";
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  *out = NULL;
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_buffer(op, "buf", comm, buf));
  if (flags & ~(N4C_WIN_COLL_SYMMETRIC | N4C_WIN_STRICT_ORDERING))
    return n4c_error(N4C_EINVAL, "%s: flags is 0x%x; only N4C_WIN_COLL_SYMMETRIC (0x1) and "
                     "N4C_WIN_STRICT_ORDERING (0x2) are defined", op, (unsigned)flags);
#if HAVE_DECL_NCCLCOMMWINDOWREGISTER
  n4c_window_t *w;
  N4C_CHECK(n4c_resource_alloc(op, comm, &window_kind, sizeof *w, (void **)&w));
  w->bytes = n4c_buffer_bytes(buf);
  ncclResult_t r = ncclCommWindowRegister(comm->handle, buf->ptr, w->bytes, &w->win, flags);
  /* A non-blocking communicator may leave the handle NULL, with success or
   * ncclInProgress, until get_async_error reports success (as nccl.core's
   * register_window documents). */
  if (r != ncclSuccess && r != ncclInProgress) { /* refused at once, blocking or not */
    n4c_resource_unref(&w->base);
    return n4c_nccl_error(op, "ncclCommWindowRegister", r);
  }
  if (!w->win && (r == ncclInProgress || comm->nonblocking)) {
    n4c_comm_track(&w->base); /* fills once get_async_error reports success */
    *out = w;
    return N4C_OK;
  }
  if (!w->win && !in_group()) { /* no windows on this platform: None */
    n4c_resource_unref(&w->base);
    return N4C_OK;
  }
  n4c_comm_track(&w->base);
  *out = w;
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclCommWindowRegister");
#endif
}

ncclWindow_t n4c_window_handle(const n4c_window_t *win) {
  return n4c_resource_is_valid(N4C_RESOURCE(win)) ? win->win : NULL;
}

size_t n4c_window_size(const n4c_window_t *win) { return win ? win->bytes : 0; }

/* Getter preamble: out set to NULL, win open. */
static n4c_status_t getter_check(const char *op, const n4c_window_t *win, void **out) {
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  *out = NULL;
  N4C_CHECK(n4c_resource_check_open(op, "win", N4C_RESOURCE(win)));
  if (!win->win)
    return n4c_error(N4C_EINPROGRESS, "%s: the window's registration has not completed yet", op);
  return N4C_OK;
}

n4c_status_t n4c_window_user_ptr(const n4c_window_t *win, void **out) {
  static const char op[] = "n4c_window_user_ptr";
  N4C_CHECK(getter_check(op, win, out));
#if HAVE_DECL_NCCLWINGETUSERPTR
  N4C_NCCLCHECK(op, ncclWinGetUserPtr, (win->base.comm->handle, win->win, out));
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclWinGetUserPtr");
#endif
}

n4c_status_t n4c_window_lsa_ptr(const n4c_window_t *win, int lsa_rank, size_t offset, void **out) {
  static const char op[] = "n4c_window_lsa_ptr";
  N4C_CHECK(getter_check(op, win, out));
  if (lsa_rank < 0) return n4c_error(N4C_EINVAL, "%s: lsa_rank is %d, must be >= 0", op, lsa_rank);
#if HAVE_BRIDGE_NCCLGETLSADEVICEPOINTER
  ncclResult_t r = n4c_br_lsa_device_pointer(win->win, offset, lsa_rank, out);
  if (r != ncclSuccess) return n4c_nccl_error(op, "ncclGetLsaDevicePointer", r);
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclGetLsaDevicePointer");
#endif
}

n4c_status_t n4c_window_peer_ptr(const n4c_window_t *win, int peer, size_t offset, void **out) {
  static const char op[] = "n4c_window_peer_ptr";
  N4C_CHECK(getter_check(op, win, out));
  if (peer < 0) return n4c_error(N4C_EINVAL, "%s: peer is %d, must be >= 0", op, peer);
#if HAVE_BRIDGE_NCCLGETPEERDEVICEPOINTER
  ncclResult_t r = n4c_br_peer_device_pointer(win->win, offset, peer, out);
  if (r != ncclSuccess) return n4c_nccl_error(op, "ncclGetPeerDevicePointer", r);
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclGetPeerDevicePointer");
#endif
}

n4c_status_t n4c_window_lsa_multimem_ptr(const n4c_window_t *win, size_t offset, void **out) {
  static const char op[] = "n4c_window_lsa_multimem_ptr";
  N4C_CHECK(getter_check(op, win, out));
#if HAVE_BRIDGE_NCCLGETLSAMULTIMEMDEVICEPOINTER
  ncclResult_t r = n4c_br_lsa_multimem_device_pointer(win->win, offset, out);
  if (r != ncclSuccess) return n4c_nccl_error(op, "ncclGetLsaMultimemDevicePointer", r);
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclGetLsaMultimemDevicePointer");
#endif
}
