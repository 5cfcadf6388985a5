/*
 * comm.c — the communicator's lifecycle: new, initialize/init, init_all,
 * split, finalize/destroy/abort and free. Its reference count, shared with
 * its resources, is in n4c_internal.h.
 */
#include "config.h"

#include <stdlib.h>

#include "n4c_internal.h"

static n4c_status_t comm_alloc(const char *op, n4c_comm_t **out) {
  n4c_comm_t *c = n4c_calloc(1, sizeof *c);
  if (!c) return n4c_enomem(op, "a communicator");
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    n4c_free(c);
    return n4c_enomem(op, "a communicator's mutex");
  }
  atomic_init(&c->refs, 1);
  c->state = N4C_COMM_NULL;
  *out = c;
  return N4C_OK;
}

n4c_status_t n4c_get_unique_id(ncclUniqueId *out) {
  static const char op[] = "n4c_get_unique_id";
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  N4C_NCCLCHECK(op, ncclGetUniqueId, (out));
  return N4C_OK;
}

n4c_status_t n4c_comm_new(n4c_comm_t **out) {
  N4C_CHECK(n4c_check_ptr("n4c_comm_new", "out", out));
  return comm_alloc("n4c_comm_new", out);
}

static n4c_status_t initialize(const char *op, n4c_comm_t *comm, int nranks, int rank,
                               const ncclUniqueId *ids, int nids, ncclConfig_t *config) {
  N4C_CHECK(n4c_check_ptr(op, "comm", comm));
  if (comm->state != N4C_COMM_NULL)
    return n4c_error(N4C_EINVAL, "%s: comm is already %s", op,
                     comm->state == N4C_COMM_LIVE ? "initialized" : "finalized or destroyed");
  if (nranks < 1) return n4c_error(N4C_EINVAL, "%s: nranks is %d, must be >= 1", op, nranks);
  if (rank < 0 || rank >= nranks)
    return n4c_error(N4C_EINVAL, "%s: rank is %d, but nranks is %d", op, rank, nranks);
  N4C_CHECK(n4c_check_ptr(op, "ids", ids));
  if (nids < 1) return n4c_error(N4C_EINVAL, "%s: nids is %d, must be >= 1", op, nids);

  /* NCCL writes the handle into comm itself: inside a group it may do so
   * only at ncclGroupEnd, so the address must outlive this call. */
  ncclResult_t r;
  const char *fn;
  comm->handle = NULL;
  if (nids == 1) {
    fn = "ncclCommInitRankConfig";
    r = ncclCommInitRankConfig(&comm->handle, nranks, ids[0], rank, config);
  } else {
    fn = "ncclCommInitRankScalable";
    r = ncclCommInitRankScalable(&comm->handle, nranks, rank, nids, (ncclUniqueId *)ids, config);
  }
  if (r == ncclSuccess || (r == ncclInProgress && comm->handle)) {
    comm->state = N4C_COMM_LIVE;
    comm->have_identity = false;
    comm->nonblocking = config && config->blocking == 0;
    return r == ncclSuccess ? N4C_OK : n4c_nccl_error(op, fn, r);
  }
  /* A non-blocking init may hand out a communicator before failing. */
  if (comm->handle) (void)ncclCommAbort(comm->handle);
  comm->handle = NULL;
  return n4c_nccl_error(op, fn, r);
}

n4c_status_t n4c_comm_initialize(n4c_comm_t *comm, int nranks, int rank, const ncclUniqueId *ids,
                                 int nids, ncclConfig_t *config) {
  return initialize("n4c_comm_initialize", comm, nranks, rank, ids, nids, config);
}

n4c_status_t n4c_comm_init(n4c_comm_t **out, int nranks, int rank, const ncclUniqueId *ids,
                           int nids, ncclConfig_t *config) {
  static const char op[] = "n4c_comm_init";
  n4c_comm_t *comm;
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  *out = NULL;
  N4C_CHECK(comm_alloc(op, &comm));
  n4c_status_t st = initialize(op, comm, nranks, rank, ids, nids, config);
  if (st != N4C_OK && st != N4C_EINPROGRESS) {
    n4c_comm_unref(comm); /* still null: nothing to destroy */
    return st;
  }
  *out = comm;
  return st;
}

n4c_status_t n4c_comm_init_all(n4c_comm_t **comms, int ndev, const int *devlist) {
  static const char op[] = "n4c_comm_init_all";
  if (ndev < 0) return n4c_error(N4C_EINVAL, "%s: ndev is %d, must be >= 0", op, ndev);
  if (ndev == 0) return N4C_OK; /* nccl.core: nothing to create */
  N4C_CHECK(n4c_check_ptr(op, "comms", comms));
  for (int i = 0; devlist && i < ndev; i++)
    if (devlist[i] < 0)
      return n4c_error(N4C_EINVAL, "%s: devlist[%d] is %d, must be >= 0", op, i, devlist[i]);

  /* Everything is allocated before NCCL runs, so no NCCL communicator can
   * be left without an owner. */
  n4c_status_t st = N4C_OK;
  int made = 0;
  n4c_comm_t **objs = n4c_calloc((size_t)ndev, sizeof *objs);
  ncclComm_t *handles = n4c_calloc((size_t)ndev, sizeof *handles);
  if (!objs || !handles) {
    st = n4c_enomem(op, "the communicator table");
    goto out;
  }
  for (; made < ndev; made++) N4C_CHECKGOTO(comm_alloc(op, &objs[made]), st, out);
  N4C_NCCLCHECKGOTO(op, ncclCommInitAll, (handles, ndev, devlist), st, out);
  for (int i = 0; i < ndev; i++) {
    objs[i]->handle = handles[i];
    objs[i]->state = N4C_COMM_LIVE;
    comms[i] = objs[i];
  }
  made = 0; /* handed over */
out:
  for (int i = 0; i < made; i++) n4c_comm_unref(objs[i]);
  n4c_free(handles);
  n4c_free(objs);
  return st;
}

n4c_status_t n4c_comm_split(n4c_comm_t *comm, int color, int key, ncclConfig_t *config,
                            n4c_comm_t **out) {
  static const char op[] = "n4c_comm_split";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (color < 0 && color != N4C_SPLIT_NOCOLOR)
    return n4c_error(N4C_EINVAL, "%s: color is %d, must be >= 0 or N4C_SPLIT_NOCOLOR (%d)", op,
                     color, N4C_SPLIT_NOCOLOR);
  n4c_comm_t *child;
  N4C_CHECK(n4c_comm_child_new(op, &child));
  /* NOCOLOR ranks must take part too, or the other ranks wait for them.
   * The handle goes straight into child (see initialize). */
  ncclResult_t r = ncclCommSplit(comm->handle, color, key, &child->handle, config);
  return n4c_comm_child_adopt(op, "ncclCommSplit", r, child, config, comm->nonblocking,
                              color != N4C_SPLIT_NOCOLOR, out);
}

n4c_status_t n4c_comm_child_new(const char *op, n4c_comm_t **out) { return comm_alloc(op, out); }

n4c_status_t n4c_comm_child_adopt(const char *op, const char *fn, ncclResult_t r, n4c_comm_t *child,
                                  const ncclConfig_t *config, bool parent_nonblocking, bool member,
                                  n4c_comm_t **out) {
  if (r != ncclSuccess && !(r == ncclInProgress && child->handle)) {
    if (child->handle) (void)ncclCommAbort(child->handle);
    n4c_comm_unref(child);
    return n4c_nccl_error(op, fn, r);
  }
  /* Not a member (NOCOLOR): a null communicator. */
  child->state = member ? N4C_COMM_LIVE : N4C_COMM_NULL;
  /* Without a config a child inherits its parent's configuration; with
   * one, NCCL's defaults fill what it leaves undefined (blocking). */
  child->nonblocking = config ? config->blocking == 0 : parent_nonblocking;
  *out = child;
  return r == ncclSuccess ? N4C_OK : n4c_nccl_error(op, fn, r);
}

typedef enum { TEARDOWN_FINALIZE, TEARDOWN_DESTROY, TEARDOWN_ABORT } teardown_t;

static n4c_status_t teardown(const char *op, n4c_comm_t *comm, teardown_t how) {
  N4C_CHECK(n4c_check_ptr(op, "comm", comm));
  if (comm->state == N4C_COMM_NULL || comm->state == N4C_COMM_DESTROYED) return N4C_OK;
  if (comm->state == N4C_COMM_FINALIZED && how == TEARDOWN_FINALIZE) return N4C_OK;
  (void)n4c_comm_close_all_resources(comm); /* errors ignored, as nccl.core */

  ncclComm_t h = comm->handle;
  ncclResult_t r;
  const char *fn;
  switch (how) {
  case TEARDOWN_FINALIZE:
    comm->state = N4C_COMM_FINALIZED; /* handle kept: destroy still frees it */
    fn = "ncclCommFinalize";
    r = ncclCommFinalize(h);
    break;
  case TEARDOWN_DESTROY:
    comm->state = N4C_COMM_DESTROYED;
    comm->handle = NULL;
    fn = "ncclCommDestroy";
    r = ncclCommDestroy(h);
    break;
  default:
    comm->state = N4C_COMM_DESTROYED;
    comm->handle = NULL;
    fn = "ncclCommAbort";
    r = ncclCommAbort(h);
    break;
  }
  return r == ncclSuccess ? N4C_OK : n4c_nccl_error(op, fn, r);
}

n4c_status_t n4c_comm_finalize(n4c_comm_t *comm) {
  return teardown("n4c_comm_finalize", comm, TEARDOWN_FINALIZE);
}

n4c_status_t n4c_comm_destroy(n4c_comm_t *comm) {
  return teardown("n4c_comm_destroy", comm, TEARDOWN_DESTROY);
}

n4c_status_t n4c_comm_abort(n4c_comm_t *comm) {
  return teardown("n4c_comm_abort", comm, TEARDOWN_ABORT);
}

n4c_status_t n4c_comm_free(n4c_comm_t *comm) {
  if (!comm) return N4C_OK;
  n4c_status_t st = N4C_OK;
  if (comm->state == N4C_COMM_LIVE || comm->state == N4C_COMM_FINALIZED)
    st = teardown("n4c_comm_free", comm, TEARDOWN_DESTROY);
  n4c_comm_unref(comm);
  return st;
}
