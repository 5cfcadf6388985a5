/*
 * ft.c — fault tolerance and elasticity: shrink, grow and the unique id it
 * needs, revoke, suspend and resume (nccl.core Communicator.shrink, .grow,
 * .get_unique_id, .revoke, .suspend, .resume).
 */
#include "config.h"

#include "n4c_internal.h"

n4c_status_t n4c_comm_shrink(n4c_comm_t *comm, const int *exclude, int nexclude, ncclConfig_t *config,
                             n4c_shrink_flag_t flag, n4c_comm_t **out) {
  static const char op[] = "n4c_comm_shrink";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (flag != N4C_SHRINK_DEFAULT && flag != N4C_SHRINK_ABORT)
    return n4c_error(N4C_EINVAL, "%s: flag is %d, must be N4C_SHRINK_DEFAULT or N4C_SHRINK_ABORT", op,
                     (int)flag);
  N4C_CHECK(n4c_comm_identity(op, comm));
  if (nexclude < 0 || nexclude >= comm->nranks)
    return n4c_error(N4C_EINVAL, "%s: nexclude is %d, must be in [0, nranks %d)", op, nexclude,
                     comm->nranks);
  if (nexclude > 0) N4C_CHECK(n4c_check_ptr(op, "exclude", exclude));
  for (int i = 0; i < nexclude; i++) {
    N4C_CHECK(n4c_check_rank(op, "an excluded rank", comm, exclude[i]));
    if (exclude[i] == comm->rank)
      return n4c_error(N4C_EINVAL, "%s: exclude[%d] is %d, this rank: excluded ranks must not call shrink",
                       op, i, exclude[i]);
    for (int j = 0; j < i; j++)
      if (exclude[j] == exclude[i])
        return n4c_error(N4C_EINVAL, "%s: exclude[%d] and exclude[%d] are both %d", op, j, i, exclude[i]);
  }
#if HAVE_DECL_NCCLCOMMSHRINK
  n4c_comm_t *child;
  N4C_CHECK(n4c_comm_child_new(op, &child));
  /* NCCL takes a non-const list; it only reads it. */
  ncclResult_t r = ncclCommShrink(comm->handle, (int *)exclude, nexclude, &child->handle, config, (int)flag);
  return n4c_comm_child_adopt(op, "ncclCommShrink", r, child, config, comm->nonblocking, true, out);
#else
  (void)config;
  return n4c_enotsup(op, "ncclCommShrink");
#endif
}

n4c_status_t n4c_comm_get_unique_id(n4c_comm_t *comm, ncclUniqueId *out) {
  static const char op[] = "n4c_comm_get_unique_id";
  N4C_CHECK(n4c_check_comm(op, comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
#if HAVE_DECL_NCCLCOMMGETUNIQUEID
  N4C_NCCLCHECK(op, ncclCommGetUniqueId, (comm->handle, out));
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclCommGetUniqueId");
#endif
}

n4c_status_t n4c_comm_grow(n4c_comm_t *comm, int nranks, const ncclUniqueId *id, int rank,
                           ncclConfig_t *config, n4c_comm_t **out) {
  static const char op[] = "n4c_comm_grow";
  N4C_CHECK(n4c_check_ptr(op, "comm", comm));
  N4C_CHECK(n4c_check_ptr(op, "out", out));
  if (nranks < 1) return n4c_error(N4C_EINVAL, "%s: nranks is %d, must be >= 1", op, nranks);
  bool existing = rank == N4C_GROW_EXISTING;
  if (!existing && (rank < 0 || rank >= nranks))
    return n4c_error(N4C_EINVAL, "%s: rank is %d, must be N4C_GROW_EXISTING (%d) or in [0, nranks %d)", op,
                     rank, N4C_GROW_EXISTING, nranks);
  if (existing) {
    N4C_CHECK(n4c_check_comm(op, comm));
    N4C_CHECK(n4c_comm_identity(op, comm));
    if (comm->nranks >= nranks)
      return n4c_error(N4C_EINVAL, "%s: nranks is %d, but comm already has %d ranks: grow adds ranks", op,
                       nranks, comm->nranks);
  } else {
    if (comm->state != N4C_COMM_NULL)
      return n4c_error(N4C_EINVAL, "%s: rank is %d (a new rank), but comm is %s: new ranks pass a null "
                       "communicator (n4c_comm_new)", op, rank,
                       comm->state == N4C_COMM_LIVE ? "initialized" : "finalized or destroyed");
    N4C_CHECK(n4c_check_ptr(op, "id", id));
  }
#if HAVE_DECL_NCCLCOMMGROW
  n4c_comm_t *child;
  N4C_CHECK(n4c_comm_child_new(op, &child));
  ncclResult_t r = ncclCommGrow(existing ? comm->handle : NULL, nranks, id, rank, &child->handle, config);
  return n4c_comm_child_adopt(op, "ncclCommGrow", r, child, config, existing && comm->nonblocking, true, out);
#else
  (void)id;
  (void)config;
  return n4c_enotsup(op, "ncclCommGrow");
#endif
}

n4c_status_t n4c_comm_revoke(n4c_comm_t *comm, int flags) {
  static const char op[] = "n4c_comm_revoke";
  N4C_CHECK(n4c_check_comm(op, comm));
#if HAVE_DECL_NCCLCOMMREVOKE
  N4C_NCCLCHECK(op, ncclCommRevoke, (comm->handle, flags));
  return N4C_OK;
#else
  (void)flags;
  return n4c_enotsup(op, "ncclCommRevoke");
#endif
}

n4c_status_t n4c_comm_suspend(n4c_comm_t *comm, int flags) {
  static const char op[] = "n4c_comm_suspend";
  N4C_CHECK(n4c_check_comm(op, comm));
#if HAVE_DECL_NCCLCOMMSUSPEND
  N4C_NCCLCHECK(op, ncclCommSuspend, (comm->handle, flags));
  return N4C_OK;
#else
  (void)flags;
  return n4c_enotsup(op, "ncclCommSuspend");
#endif
}

n4c_status_t n4c_comm_resume(n4c_comm_t *comm) {
  static const char op[] = "n4c_comm_resume";
  N4C_CHECK(n4c_check_comm(op, comm));
#if HAVE_DECL_NCCLCOMMRESUME
  N4C_NCCLCHECK(op, ncclCommResume, (comm->handle));
  return N4C_OK;
#else
  return n4c_enotsup(op, "ncclCommResume");
#endif
}
