/*
 * n4c_internal.h — what the files of lib/ share and the public header hides: the
 * allocation hook, error helpers and CHECK macros, argument checks, the
 * communicator and the resource base. Not installed.
 *
 * Every .c file includes "config.h" first, then this header.
 */
#ifndef N4C_INTERNAL_H_
#define N4C_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "nccl4c.h"

#if defined(__GNUC__)
#define N4C_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define N4C_PRINTF(f, a)
#endif

/* ---- allocation (alloc.c): every allocation of lib/ goes through here,
 * so that tests can fail the Nth one (n4c_test.h). ---- */
void *n4c_malloc(size_t size);
void *n4c_calloc(size_t n, size_t size);
void n4c_free(void *p);

/* ---- errors (error.c) ---- */

/* Formats the thread's message and returns `st`:
 *   return n4c_error(N4C_EINVAL, "%s: peer is %d, but nranks is %d", op, p, n); */
n4c_status_t n4c_error(n4c_status_t st, const char *fmt, ...) N4C_PRINTF(2, 3);

/* An NCCL call `fn` failed with `r` inside `op`: records r as the thread's
 * last NCCL result; ncclInProgress gives N4C_EINPROGRESS, any other
 * failure N4C_ENCCL, with "op: fn failed: <ncclGetErrorString> (code)". */
n4c_status_t n4c_nccl_error(const char *op, const char *fn, ncclResult_t r);

/* A CUDA runtime call `fn` failed with `e` inside `op`: N4C_ECUDA. */
n4c_status_t n4c_cuda_error(const char *op, const char *fn, cudaError_t e);

/* `fn` is missing from the linked NCCL: N4C_ENOTSUP with
 * "op: fn is not supported by the linked NCCL 2.28.9". */
n4c_status_t n4c_enotsup(const char *op, const char *fn);

/* Decodes NCCL's packed version code (version.c). */
void n4c_version_decode(int code, n4c_semver_t *out);

/* Out of memory while allocating `what` in `op`: N4C_ENOMEM. */
n4c_status_t n4c_enomem(const char *op, const char *what);

/* NCCL-style control flow. `op` is the public function's name. */
#define N4C_CHECK(call)                                                        \
  do {                                                                         \
    n4c_status_t n4c_st_ = (call);                                             \
    if (n4c_st_ != N4C_OK) return n4c_st_;                                     \
  } while (0)

#define N4C_CHECKGOTO(call, res, label)                                        \
  do {                                                                         \
    (res) = (call);                                                            \
    if ((res) != N4C_OK) goto label;                                           \
  } while (0)

/* N4C_NCCLCHECK(op, ncclSend, (ptr, count, dt, peer, h, stream)); */
#define N4C_NCCLCHECK(op, fn, args)                                            \
  do {                                                                         \
    ncclResult_t n4c_r_ = fn args;                                             \
    if (n4c_r_ != ncclSuccess) return n4c_nccl_error((op), #fn, n4c_r_);       \
  } while (0)

#define N4C_NCCLCHECKGOTO(op, fn, args, res, label)                            \
  do {                                                                         \
    ncclResult_t n4c_r_ = fn args;                                             \
    if (n4c_r_ != ncclSuccess) {                                               \
      (res) = n4c_nccl_error((op), #fn, n4c_r_);                               \
      goto label;                                                              \
    }                                                                          \
  } while (0)

#define N4C_CUDACHECK(op, fn, args)                                            \
  do {                                                                         \
    cudaError_t n4c_e_ = fn args;                                              \
    if (n4c_e_ != cudaSuccess) return n4c_cuda_error((op), #fn, n4c_e_);       \
  } while (0)

/* ---- argument checks (error.c, buffer.c, comm_query.c): N4C_OK or
 * N4C_EINVAL with a message naming op, arg and value. ---- */

/* "op: arg is NULL". */
n4c_status_t n4c_check_ptr(const char *op, const char *arg, const void *p);
/* dtype in [0, ncclNumTypes). */
n4c_status_t n4c_check_dtype(const char *op, const char *arg, ncclDataType_t dtype);
/* buf non-NULL, known dtype, ptr non-NULL when count > 0, count * itemsize
 * fits size_t, and buf->device equal to comm's device (comm must have
 * passed n4c_check_comm). */
n4c_status_t n4c_check_buffer(const char *op, const char *arg, n4c_comm_t *comm,
                              const n4c_buffer_t *buf);
/* Size in bytes of a buffer that passed n4c_check_buffer. */
size_t n4c_buffer_bytes(const n4c_buffer_t *buf);
/* comm non-NULL, initialized, neither finalized nor destroyed. */
n4c_status_t n4c_check_comm(const char *op, const n4c_comm_t *comm);
/* `value` (a peer or root named `arg`) in [0, nranks). */
n4c_status_t n4c_check_rank(const char *op, const char *arg, n4c_comm_t *comm, int value);

/* ---- groups (group.c) ---- */

/* The calling thread's n4c_group_start depth (0 outside a group). */
int n4c_group_depth(void);

/* ---- the communicator (comm.c, comm_query.c) ---- */

typedef enum {
  N4C_COMM_NULL = 0,  /* n4c_comm_new, NOCOLOR split, failed init */
  N4C_COMM_LIVE,      /* initialized (possibly still in progress) */
  N4C_COMM_FINALIZED, /* ncclCommFinalize done; handle kept for destroy */
  N4C_COMM_DESTROYED  /* destroyed or aborted; handle gone */
} n4c_comm_state_t;

struct n4c_comm_s {
  atomic_int refs;        /* the owner's, plus one per resource made */
  n4c_comm_state_t state; /* one thread at a time, as NCCL */
  ncclComm_t handle;
  bool have_identity;     /* nranks, rank, device read from NCCL */
  bool nonblocking;       /* config->blocking == 0: NCCL may fill handles later */
  int nranks, rank, device;
  pthread_mutex_t lock;       /* guards the resource list */
  n4c_resource_t *resources;  /* tracked, open resources; each holds a ref */
};

/* A new null communicator object, to receive a child's NCCL handle. */
n4c_status_t n4c_comm_child_new(const char *op, n4c_comm_t **out);
/* Takes the result `r` of NCCL call `fn` that wrote child->handle (split,
 * shrink, grow): on failure aborts any handle NCCL left and frees child;
 * else child is live (null if not `member`), non-blocking as `config` says
 * (NULL: as its parent), and goes to *out. N4C_OK, N4C_EINPROGRESS or
 * N4C_ENCCL. */
n4c_status_t n4c_comm_child_adopt(const char *op, const char *fn, ncclResult_t r, n4c_comm_t *child,
                                  const ncclConfig_t *config, bool parent_nonblocking, bool member,
                                  n4c_comm_t **out);
/* Reads nranks, rank and device from NCCL once (N4C_EINPROGRESS while a
 * non-blocking init runs). comm must have passed n4c_check_comm. */
n4c_status_t n4c_comm_identity(const char *op, n4c_comm_t *comm);
/* The communicator's reference count: resources hold one each, so that the
 * last of the owner and its resources frees it. */
static inline void n4c_comm_ref(n4c_comm_t *comm) { atomic_fetch_add(&comm->refs, 1); }
static inline void n4c_comm_unref(n4c_comm_t *comm) {
  if (atomic_fetch_sub(&comm->refs, 1) != 1) return;
  /* Resources hold references, so none can be left in the list here. */
  pthread_mutex_destroy(&comm->lock);
  n4c_free(comm);
}

/* ---- the resource base (resource.c) ----
 *
 * A kind embeds n4c_resource_t as its FIRST member:
 *
 *   struct n4c_window_s { n4c_resource_t base; ncclWindow_t win; size_t bytes; };
 *   static n4c_status_t window_close(n4c_resource_t *r) {
 *     n4c_window_t *w = (n4c_window_t *)r;
 *     N4C_NCCLCHECK("n4c_resource_close", ncclCommWindowDeregister, (r->comm->handle, w->win));
 *     return N4C_OK;
 *   }
 *   static const n4c_resource_kind_t window_kind = { "window", window_close, NULL };
 *
 *   n4c_window_t *w;
 *   N4C_CHECK(n4c_resource_alloc(OP, comm, &window_kind, sizeof *w, (void **)&w));
 *   if (NCCL call fails) { n4c_resource_unref(&w->base); return n4c_nccl_error(...); }
 *   n4c_comm_track(&w->base);   // now open (is_valid) and closed on comm destroy
 *   *out = w;
 */

typedef struct n4c_resource_kind {
  const char *name; /* "window": for messages */
  /* Releases the NCCL object. Called at most once per resource, while
   * its communicator still holds a live NCCL handle, by n4c_resource_close
   * or by the communicator's close-all. May be NULL. */
  n4c_status_t (*close)(n4c_resource_t *r);
  /* Frees what the kind allocated besides the object itself, when the last
   * reference goes (also for a resource never tracked). May be NULL. */
  void (*release)(n4c_resource_t *r);
} n4c_resource_kind_t;

typedef enum { N4C_RES_NEW = 0, N4C_RES_OPEN, N4C_RES_CLOSED } n4c_res_state_t;

struct n4c_resource_s {
  const n4c_resource_kind_t *kind;
  n4c_comm_t *comm;            /* holds a reference to it */
  atomic_int refs;             /* the owner's, plus the comm's list while tracked */
  atomic_int state;            /* n4c_res_state_t */
  bool tracked;                /* guarded by comm->lock */
  n4c_resource_t *prev, *next; /* guarded by comm->lock */
};

/* Allocates `size` zeroed bytes (size >= sizeof(n4c_resource_t)) and
 * initialises the header: one reference (the caller's), state NEW (not
 * valid), a reference to comm taken. N4C_ENOMEM (message names op). */
n4c_status_t n4c_resource_alloc(const char *op, n4c_comm_t *comm,
                                const n4c_resource_kind_t *kind, size_t size, void **out);
/* Initialises a header in memory the caller allocated with n4c_malloc
 * (the base frees it with n4c_free at the last reference). */
void n4c_resource_init(n4c_resource_t *r, n4c_comm_t *comm, const n4c_resource_kind_t *kind);
/* Marks r open and adds it to its communicator's list (with a reference).
 * Never fails. */
void n4c_comm_track(n4c_resource_t *r);
/* Drops one reference; the last one calls kind->release, frees r and drops
 * r's communicator reference. Use it to discard a resource never tracked. */
void n4c_resource_unref(n4c_resource_t *r);
/* For getters: N4C_EINVAL if r is NULL ("op: arg is NULL"), N4C_ECLOSED
 * if it is not open ("op: arg is closed"). */
n4c_status_t n4c_resource_check_open(const char *op, const char *arg, const n4c_resource_t *r);

#endif /* N4C_INTERNAL_H_ */
