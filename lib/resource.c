/*
 * resource.c — the base every communicator resource shares: reference
 * counting, idempotent close, is_valid, and tracking by the communicator
 * (an intrusive list under comm->lock) so that destroy/abort/finalize and
 * close_all_resources close whatever is still open.
 *
 * References: the owner's (dropped by n4c_resource_free) and the list's
 * while tracked. Whoever unlinks r from the list owns the list's reference.
 * Close is decided by one compare-and-swap OPEN -> CLOSED, so kind->close
 * runs exactly once however close and close-all interleave.
 */
#include "config.h"

#include "n4c_internal.h"

void n4c_resource_init(n4c_resource_t *r, n4c_comm_t *comm, const n4c_resource_kind_t *kind) {
  r->kind = kind;
  r->comm = comm;
  n4c_comm_ref(comm);
  atomic_init(&r->refs, 1);
  atomic_init(&r->state, N4C_RES_NEW);
  r->tracked = false;
  r->prev = r->next = NULL;
}

n4c_status_t n4c_resource_alloc(const char *op, n4c_comm_t *comm,
                                const n4c_resource_kind_t *kind, size_t size, void **out) {
  n4c_resource_t *r = n4c_calloc(1, size);
  if (!r) return n4c_enomem(op, kind->name);
  n4c_resource_init(r, comm, kind);
  *out = r;
  return N4C_OK;
}

void n4c_comm_track(n4c_resource_t *r) {
  n4c_comm_t *comm = r->comm;
  atomic_fetch_add(&r->refs, 1);
  atomic_store(&r->state, N4C_RES_OPEN);
  pthread_mutex_lock(&comm->lock);
  r->prev = NULL;
  r->next = comm->resources;
  if (comm->resources) comm->resources->prev = r;
  comm->resources = r;
  r->tracked = true;
  pthread_mutex_unlock(&comm->lock);
}

/* Caller holds comm->lock. */
static void unlink_locked(n4c_comm_t *comm, n4c_resource_t *r) {
  if (r->prev) r->prev->next = r->next;
  else comm->resources = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = NULL;
  r->tracked = false;
}

/* True if r was tracked: the caller now owns the list's reference. */
static bool untrack(n4c_resource_t *r) {
  n4c_comm_t *comm = r->comm;
  pthread_mutex_lock(&comm->lock);
  bool was = r->tracked;
  if (was) unlink_locked(comm, r);
  pthread_mutex_unlock(&comm->lock);
  return was;
}

void n4c_resource_unref(n4c_resource_t *r) {
  if (atomic_fetch_sub(&r->refs, 1) != 1) return;
  n4c_comm_t *comm = r->comm;
  if (r->kind->release) r->kind->release(r);
  n4c_free(r);
  n4c_comm_unref(comm);
}

/* Runs kind->close once; the caller keeps a reference across the call. */
static n4c_status_t close_once(n4c_resource_t *r) {
  int expected = N4C_RES_OPEN;
  if (!atomic_compare_exchange_strong(&r->state, &expected, N4C_RES_CLOSED)) return N4C_OK;
  n4c_status_t st = r->kind->close ? r->kind->close(r) : N4C_OK;
  if (untrack(r)) n4c_resource_unref(r);
  return st;
}

n4c_status_t n4c_resource_close(n4c_resource_t *r) {
  N4C_CHECK(n4c_check_ptr("n4c_resource_close", "r", r));
  return close_once(r);
}

bool n4c_resource_is_valid(const n4c_resource_t *r) {
  return r && atomic_load(&((n4c_resource_t *)r)->state) == N4C_RES_OPEN;
}

n4c_status_t n4c_resource_free(n4c_resource_t *r) {
  if (!r) return N4C_OK;
  n4c_status_t st = close_once(r);
  n4c_resource_unref(r);
  return st;
}

n4c_status_t n4c_resource_check_open(const char *op, const char *arg, const n4c_resource_t *r) {
  N4C_CHECK(n4c_check_ptr(op, arg, r));
  if (n4c_resource_is_valid(r)) return N4C_OK;
  return n4c_error(N4C_ECLOSED, "%s: %s is closed", op, arg);
}

n4c_status_t n4c_comm_close_all_resources(n4c_comm_t *comm) {
  N4C_CHECK(n4c_check_ptr("n4c_comm_close_all_resources", "comm", comm));
  /* Pop one at a time: close runs outside the lock, since kind->close may
   * call NCCL, and a concurrent n4c_resource_close must find r untracked. */
  for (;;) {
    pthread_mutex_lock(&comm->lock);
    n4c_resource_t *r = comm->resources;
    if (r) unlink_locked(comm, r);
    pthread_mutex_unlock(&comm->lock);
    if (!r) break;
    (void)close_once(r); /* best effort, as nccl.core */
    n4c_resource_unref(r);
  }
  return N4C_OK;
}
