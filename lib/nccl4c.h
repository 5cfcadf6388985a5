/*
 * nccl4c.h — the host-side object API of NVIDIA nccl4py's `nccl.core`, in C.
 *
 * One header, one prefix: functions `n4c_<type>_<verb>`, types `n4c_*_t`,
 * macros `N4C_*`. Built against real NCCL + CUDA or against ncclsim; only
 * types present in NCCL 2.28 appear here, so this header compiles against
 * either. Functions the linked NCCL lacks return N4C_ENOTSUP.
 *
 * Conventions (they hold for every function unless its comment says more):
 *
 *  - Return value. Every fallible function returns an n4c_status_t. On
 *    failure, out-arguments are left unchanged unless stated, and the
 *    calling thread's n4c_last_error_message() names the operation, the
 *    argument and its value ("n4c_comm_send: peer is 7, but nranks is 4").
 *  - Argument checks. Every argument is checked before NCCL is called;
 *    a rejected argument gives N4C_EINVAL and NCCL is not called. In
 *    particular: a NULL object or out-pointer; a null communicator (made
 *    by n4c_comm_new and never initialized, or by a NOCOLOR split) or a
 *    destroyed one; a peer or root outside [0, nranks); a NULL buffer
 *    pointer with a non-zero count; an unknown dtype; a buffer whose
 *    device differs from the communicator's.
 *  - NCCL failures give N4C_ENCCL; n4c_last_nccl_result() then holds the
 *    ncclResult_t and the message names the NCCL function and its
 *    ncclGetErrorString text. CUDA failures give N4C_ECUDA.
 *  - Counts are in elements of the buffer's dtype; sizes are in bytes.
 *  - Allocation failure anywhere gives N4C_ENOMEM and leaks nothing.
 *
 * Thread-safety (as NCCL): a communicator, and the resources made from
 * it, may be used by one thread at a time; different communicators may be
 * used from different threads at once. Reference counts are atomic, so
 * n4c_comm_free / n4c_resource_free may run on any thread, but not while
 * another thread is using the same object. The error state
 * (n4c_last_error_message, n4c_last_nccl_result) is per thread.
 * Functions marked "any thread" are safe without that restriction.
 *
 * Object lifetime. Objects are reference counted, as Python objects are.
 * n4c_comm_free and n4c_resource_free drop the caller's reference. A
 * destroyed or aborted communicator, or a closed resource, stays a valid
 * object to query (is_valid false) until freed. Every resource holds a
 * reference to its communicator, so the two may be freed in either order.
 *
 * Resources. Registered buffers, windows, custom reduction ops and device
 * communicators are opaque types whose first member is the common
 * resource header. A pointer to any of them may be cast to
 * n4c_resource_t* (use N4C_RESOURCE(p)), exactly as libuv handles are
 * cast to uv_handle_t*, and passed to n4c_resource_close / _is_valid /
 * _free. The reverse cast is not allowed.
 */
#ifndef NCCL4C_H_
#define NCCL4C_H_

#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <cuda_runtime_api.h>
#include <nccl.h>

/* DLPack parts appear when configure found dlpack.h (N4C_HAVE_DLPACK) or
 * the compiler sees it. */
#if defined(N4C_HAVE_DLPACK)
#define N4C_DLPACK 1
#elif defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#define N4C_DLPACK 1
#endif
#endif
#ifdef N4C_DLPACK
#include <dlpack/dlpack.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public API: the library is built with -fvisibility=hidden, so
 * only these symbols are exported. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define N4C_EXTERN __attribute__((visibility("default")))
#else
#define N4C_EXTERN
#endif

#define N4C_VERSION_MAJOR 0
#define N4C_VERSION_MINOR 1
#define N4C_VERSION_PATCH 0

/* A field of a config or requirements struct holding N4C_UNSET keeps
 * NCCL's default (it equals NCCL_CONFIG_UNDEF_INT). */
#define N4C_UNSET INT_MIN

/* ======================================================================
 * Errors
 * ==================================================================== */

/* X(name, value, text): the one table of status codes and their text. */
#define N4C_STATUS_MAP(X)                                                     \
  X(OK, 0, "success")                                                         \
  X(EINVAL, 1, "invalid argument")             /* nccl.core NcclInvalid */     \
  X(ECLOSED, 2, "resource is closed")          /* RuntimeError after close */  \
  X(ENCCL, 3, "NCCL error")                    /* see n4c_last_nccl_result */  \
  X(ECUDA, 4, "CUDA runtime error")                                           \
  X(ENOTSUP, 5, "not supported by the linked NCCL")                           \
  X(ENOMEM, 6, "out of memory")                                               \
  X(EINPROGRESS, 7, "operation in progress on a non-blocking communicator")

#define N4C_STATUS_ENUM_(name, value, text) N4C_##name = value,
typedef enum { N4C_STATUS_MAP(N4C_STATUS_ENUM_) } n4c_status_t;
#undef N4C_STATUS_ENUM_

/* Static text of a status ("invalid argument"); "unknown status" for a
 * value outside the table. Never NULL. Any thread. */
N4C_EXTERN const char *n4c_strerror(n4c_status_t status);

/* Name of a status ("N4C_EINVAL"); "N4C_UNKNOWN" outside the table. Never
 * NULL. Any thread. */
N4C_EXTERN const char *n4c_status_name(n4c_status_t status);

/* nccl.core get_error_string(): ncclGetErrorString(result), NCCL's text
 * for an ncclResult_t. Never NULL (NCCL's own text for unknown values).
 * Any thread. */
N4C_EXTERN const char *n4c_get_error_string(ncclResult_t result);

/* Text of the last failure on the calling thread, naming the operation,
 * the argument and its value; "" if none yet. Valid until the thread's next
 * nccl4c call. Any thread (thread-local). Mirrors the text of nccl.core's
 * exceptions. */
N4C_EXTERN const char *n4c_last_error_message(void);

/* ncclResult_t of the calling thread's last N4C_ENCCL (ncclSuccess if
 * none). Any thread (thread-local). Mirrors NcclError.status. */
N4C_EXTERN ncclResult_t n4c_last_nccl_result(void);

/* ======================================================================
 * Versions (nccl.core Version, get_version, get_lib_version, get_lib_path)
 * ==================================================================== */

/* A release version, decoded from NCCL's packed code. */
typedef struct {
  int major, minor, patch;
} n4c_semver_t;

/* nccl.core Version: nccl4c's own version (N4C_VERSION_*), and the NCCL
 * version of the library loaded at run time (ncclGetVersion) and of the
 * nccl.h nccl4c was built against (NCCL_VERSION_CODE). */
typedef struct {
  n4c_semver_t nccl4c;
  n4c_semver_t nccl;
  n4c_semver_t nccl_header;
} n4c_version_t;

/* nccl.core get_version(). N4C_OK; N4C_EINVAL (out NULL); N4C_ENCCL
 * (ncclGetVersion). Any thread. */
N4C_EXTERN n4c_status_t n4c_get_version(n4c_version_t *out);

/* nccl.core get_lib_version(): the loaded NCCL's release (ncclGetVersion,
 * decoded from X*10000+Y*100+Z, or X*1000+Y*100+Z before 2.9). N4C_OK;
 * N4C_EINVAL (out NULL); N4C_ENCCL. Any thread. */
N4C_EXTERN n4c_status_t n4c_get_lib_version(n4c_semver_t *out);

/* nccl.core get_lib_path(): the file the loaded NCCL came from (the shared
 * object defining ncclGetVersion, by dladdr), or NULL in *out when it
 * cannot be told (NCCL linked statically). The string is the dynamic
 * loader's, valid while the library stays loaded. N4C_OK; N4C_EINVAL (out
 * NULL). Any thread. */
N4C_EXTERN n4c_status_t n4c_get_lib_path(const char **out);

/* ======================================================================
 * Buffers and data types
 * ==================================================================== */

/* nccl.core's resolved buffer: (ptr, count, dtype, device_id). `count` is
 * in elements of `dtype`; `device` is the CUDA device the memory lives on.
 * A plain value: nccl4c never keeps a pointer to it. */
typedef struct {
  void *ptr;
  size_t count;
  ncclDataType_t dtype;
  int device;
} n4c_buffer_t;

/* Builds an n4c_buffer_t; checks nothing (use sites check). Any thread. */
N4C_EXTERN n4c_buffer_t n4c_buffer(void *ptr, size_t count, ncclDataType_t dtype, int device);

/* Item size of `dtype` in bytes (1, 2, 4 or 8); 0 for an unknown dtype.
 * Any thread. */
N4C_EXTERN size_t n4c_dtype_size(ncclDataType_t dtype);

/* Name of `dtype` as nccl.core spells it: "int8", "uint8", "int32",
 * "uint32", "int64", "uint64", "float16", "float32", "float64",
 * "bfloat16", "float8_e4m3", "float8_e5m2"; NULL for an unknown dtype.
 * Any thread. */
N4C_EXTERN const char *n4c_dtype_name(ncclDataType_t dtype);

#ifdef N4C_DLPACK
/* nccl.core interop resolve_array/resolve_tensor: resolves a DLPack tensor
 * to (ptr + byte_offset, count = product of shape, dtype, device id).
 * `tensor` is only read; `*out` is written on success only.
 * N4C_OK; N4C_EINVAL if tensor or out is NULL; ndim < 0, or shape NULL
 * with ndim > 0; the device type is not kDLCUDA or device_id < 0; the dtype
 * has no NCCL equivalent (the message names DLPack code, bits and lanes);
 * a shape entry is negative or the element count passes INT64_MAX (the
 * message names the dimension); the tensor is not dense in row-major (C) or
 * column-major (F) order (strides NULL counts as C; F is accepted so that
 * tensors from n4c_dlpack_empty(..., 'F', ...) resolve); the size in bytes
 * overflows size_t; data is NULL with elements or a byte_offset; or
 * data + byte_offset + the size in bytes passes the end of the address
 * space. Any thread. */
N4C_EXTERN n4c_status_t n4c_buffer_from_dlpack(const DLTensor *tensor, n4c_buffer_t *out);

/* nccl.core interop empty(): an uninitialised tensor of `ndim` dims
 * `shape` (elements) and `dtype`, allocated by ncclMemAlloc on `device`
 * (N4C_CURRENT_DEVICE: the current one; the current device is restored,
 * also on failure). `order` 'C' (row-major) or 'F' (column-major) sets the
 * strides. The tensor's deleter frees the memory and the tensor.
 * N4C_OK; N4C_EINVAL for a NULL out, NULL shape with ndim > 0, ndim < 0, a
 * negative extent, an unknown dtype, another order, or a size overflowing
 * size_t; N4C_ENCCL (ncclMemAlloc); N4C_ECUDA (cudaSetDevice);
 * N4C_ENOMEM. Any thread. */
N4C_EXTERN n4c_status_t n4c_dlpack_empty(const int64_t *shape, int ndim, ncclDataType_t dtype,
                              char order, int device, DLManagedTensor **out);
#endif

/* ======================================================================
 * Memory
 * ==================================================================== */

#define N4C_CURRENT_DEVICE (-1)

/* nccl.core mem_alloc: `bytes` bytes of device memory from ncclMemAlloc
 * on `device` (N4C_CURRENT_DEVICE or >= 0). NCCL may round the size up
 * to its allocation granularity; only `bytes` may be used. The current
 * device is restored afterwards, also on failure. bytes 0 gives *out NULL.
 * N4C_OK; N4C_EINVAL (out NULL, device < -1); N4C_ECUDA (cudaGetDevice /
 * cudaSetDevice); N4C_ENCCL (ncclMemAlloc). Any thread. */
N4C_EXTERN n4c_status_t n4c_mem_alloc(size_t bytes, int device, void **out);

/* nccl.core mem_free: ncclMemFree(ptr). NULL is a no-op. N4C_OK;
 * N4C_ENCCL. Any thread. */
N4C_EXTERN n4c_status_t n4c_mem_free(void *ptr);

/* ======================================================================
 * Communicator
 * ==================================================================== */

typedef struct n4c_comm_s n4c_comm_t;

#define N4C_SPLIT_NOCOLOR (-1) /* == NCCL_SPLIT_NOCOLOR */

/* nccl.core CTAPolicy (NCCL_CTA_POLICY_*), for n4c_config_t.cta_policy. */
typedef enum {
  N4C_CTA_POLICY_DEFAULT = 0x00,
  N4C_CTA_POLICY_EFFICIENCY = 0x01,
  N4C_CTA_POLICY_ZERO = 0x02
} n4c_cta_policy_t;

/* nccl.core NCCLConfig: every field of NCCL 2.30's ncclConfig_t, as
 * nccl.core names it. A field holding N4C_UNSET (NULL for the strings)
 * keeps NCCL's default, as a field left None does. Booleans are 0 or 1.
 * Build one with the initializer, set fields, and turn it into the
 * ncclConfig_t that n4c_comm_init, _split, _shrink and _grow take:
 *
 *   n4c_config_t c = N4C_CONFIG_INIT;
 *   c.blocking = 0;
 *   ncclConfig_t nc;
 *   n4c_config_to_nccl(&c, &nc);
 */
typedef struct {
  int blocking;                /* 0/1; NCCL's default 1 */
  int cga_cluster_size;        /* 0..8 */
  int min_ctas, max_ctas;      /* 1..32 */
  const char *net_name;        /* network module, e.g. "IB", "Socket" */
  int split_share;             /* 0/1: share resources with split children */
  int traffic_class;           /* >= 0; the network's meaning */
  const char *comm_name;       /* for logs and profilers */
  int collnet_enable;          /* 0/1: IB SHARP */
  int cta_policy;              /* n4c_cta_policy_t bits */
  int shrink_share;            /* 0/1: share resources with shrunk children */
  int nvls_ctas;               /* > 0 */
  int n_channels_per_net_peer; /* > 0 */
  int nvlink_centric_sched;    /* 0/1 */
  int graph_usage_mode;        /* 0, 1 or 2 (NCCL 2.29+) */
  int num_rma_ctx;             /* > 0 (NCCL 2.29+) */
  int max_p2p_peers;           /* > 0 (NCCL 2.30+) */
  int graph_stream_ordering;   /* 0/1 (NCCL 2.30+) */
} n4c_config_t;

/* Every field unset. */
#define N4C_CONFIG_INIT                                                          \
  { N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, NULL,      N4C_UNSET, N4C_UNSET, \
    NULL,      N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, \
    N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET }

/* Writes NCCL_CONFIG_INITIALIZER to *out, then each set field of *config.
 * NCCL checks the values' ranges when a communicator is made with it (as
 * nccl.core leaves them to NCCL); this checks the booleans. The strings
 * are pointed to, not copied: they must outlive the use of *out.
 * N4C_OK; N4C_EINVAL (config or out NULL, a boolean field set to other
 * than 0 or 1: the message names it); N4C_ENOTSUP (a field is set that the
 * linked NCCL's ncclConfig_t lacks, e.g. max_p2p_peers before 2.30: the
 * message names it; *out is then unchanged). Any thread. */
N4C_EXTERN n4c_status_t n4c_config_to_nccl(const n4c_config_t *config, ncclConfig_t *out);

/* nccl.core get_unique_id(): ncclGetUniqueId. N4C_OK; N4C_EINVAL (out
 * NULL); N4C_ENCCL. Any thread. */
N4C_EXTERN n4c_status_t n4c_get_unique_id(ncclUniqueId *out);

/* nccl.core Communicator(): a new null communicator (not initialized,
 * is_valid false), with one reference held by the caller.
 * N4C_OK; N4C_EINVAL (out NULL); N4C_ENOMEM. Any thread. */
N4C_EXTERN n4c_status_t n4c_comm_new(n4c_comm_t **out);

/* nccl.core Communicator.initialize(): joins the clique of `nranks` ranks
 * as `rank`, on the calling thread's current CUDA device. `ids` holds
 * `nids` >= 1 unique ids, the same on every rank: nids == 1 calls
 * ncclCommInitRankConfig, nids > 1 ncclCommInitRankScalable. `config`
 * may be NULL (NCCL defaults); NCCL may write to it.
 * Non-blocking communicators (config->blocking == 0): NCCL's ncclInProgress
 * gives N4C_EINPROGRESS; the communicator is then initialized (is_valid
 * true) but usable only once n4c_comm_get_async_error reports ncclSuccess;
 * until then, calls that need its identity give N4C_EINPROGRESS.
 * N4C_OK; N4C_EINPROGRESS; N4C_EINVAL (comm or ids NULL, comm already
 * initialized or destroyed, nranks < 1, rank outside [0, nranks), nids < 1);
 * N4C_ENCCL (the communicator stays null). Collective over the clique.
 * Inside a group (n4c_group_start) NCCL completes the init at
 * n4c_group_end; the communicator is usable after it. */
N4C_EXTERN n4c_status_t n4c_comm_initialize(n4c_comm_t *comm, int nranks, int rank,
                                 const ncclUniqueId *ids, int nids, ncclConfig_t *config);

/* nccl.core Communicator.init(): n4c_comm_new + n4c_comm_initialize. On
 * success (or N4C_EINPROGRESS) *out is the new communicator; on failure
 * *out is NULL and nothing is leaked. Statuses as n4c_comm_initialize,
 * plus N4C_ENOMEM. */
N4C_EXTERN n4c_status_t n4c_comm_init(n4c_comm_t **out, int nranks, int rank,
                           const ncclUniqueId *ids, int nids, ncclConfig_t *config);

/* nccl.core Communicator.init_all(): ncclCommInitAll; one thread creates
 * `ndev` communicators, rank i on device devlist[i] (devlist NULL means
 * devices 0..ndev-1), written to comms[0..ndev-1]. ndev 0 creates nothing
 * and returns N4C_OK (comms may then be NULL). On failure comms is left
 * unchanged. N4C_OK; N4C_EINVAL (ndev < 0, comms NULL with ndev > 0, a
 * negative device in devlist); N4C_ENOMEM; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_init_all(n4c_comm_t **comms, int ndev, const int *devlist);

/* nccl.core Communicator.split(): ncclCommSplit. Ranks of equal `color`
 * form a communicator, ordered by `key`; color N4C_SPLIT_NOCOLOR takes
 * part but gets a null communicator (is_valid false) in *out. `config` may be NULL (inherit). *out holds one new
 * reference. N4C_OK; N4C_EINPROGRESS (non-blocking child); N4C_EINVAL
 * (null/destroyed comm, out NULL, color < 0 other than NOCOLOR);
 * N4C_ENOMEM; N4C_ENCCL (*out unchanged). Collective over comm; one
 * thread driving several ranks calls it for each inside a group, and the
 * children are usable after n4c_group_end. */
N4C_EXTERN n4c_status_t n4c_comm_split(n4c_comm_t *comm, int color, int key, ncclConfig_t *config,
                            n4c_comm_t **out);

/* nccl.core CommShrinkFlag (NCCL_SHRINK_*). */
typedef enum {
  N4C_SHRINK_DEFAULT = 0x00, /* the parent must have no operation in flight */
  N4C_SHRINK_ABORT = 0x01    /* first abort the parent's operations in flight */
} n4c_shrink_flag_t;

/* nccl.core Communicator.shrink(): ncclCommShrink. A new communicator of
 * comm's ranks less the `nexclude` ranks in `exclude` (ranks of comm),
 * renumbered in order from 0. Every rank not excluded calls it; excluded
 * ranks must not (they may be dead). NCCL 2.30 refuses an empty list
 * (nexclude 0) with ncclInvalidArgument; nccl4c passes it on, as nccl.core
 * does. `config` NULL inherits comm's configuration; a config's undefined
 * fields take NCCL's defaults. *out holds one new reference.
 * N4C_OK; N4C_EINPROGRESS (non-blocking child: poll its async error);
 * N4C_EINVAL (null/destroyed comm, out NULL, nexclude < 0 or >= nranks,
 * exclude NULL with nexclude > 0, an excluded rank outside [0, nranks) or
 * named twice, the caller's own rank excluded, flag not a
 * n4c_shrink_flag_t); N4C_ENOMEM; N4C_ENOTSUP (the linked NCCL lacks it); N4C_ENCCL
 * (*out unchanged). Collective over the ranks kept; one thread driving
 * several ranks calls it for each inside a group. */
N4C_EXTERN n4c_status_t n4c_comm_shrink(n4c_comm_t *comm, const int *exclude, int nexclude,
                             ncclConfig_t *config, n4c_shrink_flag_t flag, n4c_comm_t **out);

/* nccl.core Communicator.get_unique_id(): ncclCommGetUniqueId, an id bound
 * to comm for n4c_comm_grow. One existing rank (the grow root) calls it
 * and hands the id to the new ranks; NCCL refuses a second id while the
 * first is not consumed by a grow. N4C_OK; N4C_EINVAL (null/destroyed
 * comm, out NULL); N4C_ENOTSUP (the linked NCCL lacks it); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_get_unique_id(n4c_comm_t *comm, ncclUniqueId *out);

/* n4c_comm_grow's `rank` for a rank of the old communicator. */
#define N4C_GROW_EXISTING (-1)

/* nccl.core Communicator.grow(): ncclCommGrow. A new communicator of
 * `nranks` ranks: comm's ranks, keeping their numbers, and new ones.
 *  - existing root (called n4c_comm_get_unique_id): comm live, `id` that
 *    id, rank N4C_GROW_EXISTING;
 *  - other existing ranks: comm live, id NULL, rank N4C_GROW_EXISTING;
 *  - new ranks: comm a null communicator (n4c_comm_new), `id` the root's
 *    id, rank their number in [old nranks, nranks).
 * `config` NULL: NCCL's defaults (new ranks) or comm's (existing ones).
 * *out holds one new reference; comm stays as it was.
 * N4C_OK; N4C_EINPROGRESS (non-blocking child); N4C_EINVAL (comm or out
 * NULL; a new rank with an initialized comm, or an existing rank with a
 * null or destroyed one; nranks < 1; rank neither N4C_GROW_EXISTING nor
 * in [0, nranks); a new rank without id; an existing rank whose comm has
 * nranks >= the new nranks); N4C_ENOMEM; N4C_ENOTSUP (the linked NCCL lacks it);
 * N4C_ENCCL (*out unchanged). Collective over every rank of the new
 * communicator. */
N4C_EXTERN n4c_status_t n4c_comm_grow(n4c_comm_t *comm, int nranks, const ncclUniqueId *id, int rank,
                           ncclConfig_t *config, n4c_comm_t **out);

/* nccl.core Communicator.revoke(): ncclCommRevoke. Stops every operation
 * in flight on comm; its async error reads ncclInProgress until comm is
 * quiet, then ncclSuccess, after which destroy, abort, split and shrink
 * may proceed. Real NCCL 2.30.7 then fails work on comm with
 * ncclInvalidUsage, and a second revoke and ncclCommFinalize with
 * ncclInvalidArgument (docs/conformance/nccl-2.30.7_H100x1_2026-11-23_ft).
 * `flags` is passed to NCCL, which needs 0 (NCCL_REVOKE_DEFAULT) and
 * fails others with ncclInvalidArgument. N4C_OK; N4C_EINPROGRESS
 * (non-blocking comm: poll its async error); N4C_EINVAL (null/destroyed
 * comm); N4C_ENOTSUP (the linked NCCL lacks it); N4C_ENCCL. Local: each
 * rank revokes its own communicator. */
N4C_EXTERN n4c_status_t n4c_comm_revoke(n4c_comm_t *comm, int flags);

/* nccl.core CommSuspendFlag (NCCL_SUSPEND_*). */
typedef enum {
  N4C_SUSPEND_MEM = 0x01 /* release the communicator's dynamic GPU memory */
} n4c_suspend_flag_t;

/* nccl.core Communicator.suspend() / resume(): ncclCommSuspend(comm,
 * flags) and ncclCommResume. Suspend with N4C_SUSPEND_MEM releases the
 * communicator's dynamic GPU memory until resume;
 * n4c_comm_mem_stat(N4C_MEM_STAT_GPU_MEM_SUSPENDED) reads 1 meanwhile.
 * nccl.core says a suspended communicator cannot communicate; real NCCL
 * 2.30.7 (one rank, measured) did not refuse an allreduce, accepted flags
 * 0 and unknown bits, and failed a second suspend and a resume of a
 * communicator not suspended with ncclInvalidUsage. `flags` is passed to
 * NCCL as it is. N4C_OK; N4C_EINVAL (null/destroyed comm); N4C_ENOTSUP
 * (the linked NCCL lacks it); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_suspend(n4c_comm_t *comm, int flags);
N4C_EXTERN n4c_status_t n4c_comm_resume(n4c_comm_t *comm);

/* nccl.core finalize()/destroy()/abort(). Each first closes every resource
 * the communicator tracks (close errors ignored), then calls
 * ncclCommFinalize / ncclCommDestroy / ncclCommAbort. Afterwards is_valid
 * is false. On a null or already destroyed communicator each is a no-op
 * returning N4C_OK. After finalize, destroy or abort still releases the
 * NCCL communicator (and n4c_comm_free does so if neither is called);
 * finalize again is a no-op. N4C_OK; N4C_EINPROGRESS (finalize of a
 * non-blocking communicator: poll n4c_comm_get_async_error); N4C_EINVAL
 * (comm NULL); N4C_ENCCL (the communicator is still marked destroyed:
 * NCCL does not allow a retry). finalize is collective. */
N4C_EXTERN n4c_status_t n4c_comm_finalize(n4c_comm_t *comm);
N4C_EXTERN n4c_status_t n4c_comm_destroy(n4c_comm_t *comm);
N4C_EXTERN n4c_status_t n4c_comm_abort(n4c_comm_t *comm);

/* Drops the caller's reference to `comm` (NULL: no-op), first destroying
 * it if it still holds an NCCL communicator. The memory goes when the
 * last resource made from it is freed too. Returns the destroy's status
 * (the reference is dropped regardless). */
N4C_EXTERN n4c_status_t n4c_comm_free(n4c_comm_t *comm);

/* nccl.core is_valid: true when comm is initialized and neither finalized,
 * destroyed nor aborted. NULL gives false. */
N4C_EXTERN bool n4c_comm_is_valid(const n4c_comm_t *comm);

/* nccl.core handle: the ncclComm_t, or NULL for a NULL, null, finalized or
 * destroyed communicator. */
N4C_EXTERN ncclComm_t n4c_comm_handle(const n4c_comm_t *comm);

/* Identity properties: nccl.core nranks (ncclCommCount), rank
 * (ncclCommUserRank), device (ncclCommCuDevice). Read from NCCL once and
 * cached. N4C_OK; N4C_EINVAL (comm or out NULL, null or destroyed
 * communicator); N4C_EINPROGRESS (non-blocking init not done); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_nranks(n4c_comm_t *comm, int *out);
N4C_EXTERN n4c_status_t n4c_comm_rank(n4c_comm_t *comm, int *out);
N4C_EXTERN n4c_status_t n4c_comm_device(n4c_comm_t *comm, int *out);

/* GIN transport type, mirroring ncclGinType_t / nccl.core NcclGinType. */
typedef enum {
  N4C_GIN_NONE = 0,
  N4C_GIN_PROXY = 2,
  N4C_GIN_GDAKI = 3,
  N4C_GIN_GPI = 4
} n4c_gin_type_t;

/* GIN connection topology, mirroring ncclGinConnectionType_t. */
typedef enum {
  N4C_GIN_CONNECTION_NONE = 0,
  N4C_GIN_CONNECTION_FULL = 1,
  N4C_GIN_CONNECTION_RAIL = 2
} n4c_gin_connection_type_t;

/* "none", "proxy", "gdaki", "gpi"; NULL for another value. Any thread. */
N4C_EXTERN const char *n4c_gin_type_name(n4c_gin_type_t type);
/* "none", "full", "rail"; NULL for another value. Any thread. */
N4C_EXTERN const char *n4c_gin_connection_type_name(n4c_gin_connection_type_t type);

/* nccl.core Communicator properties (ncclCommProperties_t, 2.29+). */
typedef struct {
  int rank;
  int nranks;
  int cuda_dev;
  int nvml_dev;
  bool device_api_support;
  bool multimem_support;
  n4c_gin_type_t gin_type;
  int n_lsa_teams;
  bool host_rma_support;
  n4c_gin_type_t railed_gin_type;
} n4c_comm_properties_t;

/* ncclCommQueryProperties into *out. N4C_OK; N4C_EINVAL (comm or out
 * NULL, null or destroyed communicator); N4C_ENOTSUP (the linked NCCL lacks it);
 * N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_properties(n4c_comm_t *comm, n4c_comm_properties_t *out);

/* nccl.core get_async_error(): ncclCommGetAsyncError into *out. Works on
 * a finalized communicator too (to poll a non-blocking finalize). N4C_OK
 * (whatever *out says); N4C_EINVAL (comm or out NULL, null or destroyed
 * communicator); N4C_ENCCL (the query itself failed). */
N4C_EXTERN n4c_status_t n4c_comm_get_async_error(n4c_comm_t *comm, ncclResult_t *out);

/* nccl.core last_error: ncclGetLastError's text for comm into *out (never
 * NULL; owned by NCCL, valid until its next call). N4C_OK; N4C_EINVAL
 * (comm or out NULL, null or destroyed communicator). */
N4C_EXTERN n4c_status_t n4c_comm_last_error(n4c_comm_t *comm, const char **out);

/* Memory statistics, mirroring ncclCommMemStat_t (absent in NCCL 2.28). */
typedef enum {
  N4C_MEM_STAT_GPU_MEM_SUSPEND = 0,
  N4C_MEM_STAT_GPU_MEM_SUSPENDED = 1,
  N4C_MEM_STAT_GPU_MEM_PERSIST = 2,
  N4C_MEM_STAT_GPU_MEM_TOTAL = 3
} n4c_mem_stat_t;

/* nccl.core mem_stat(): ncclCommMemStats(stat) into *out (bytes, or 0/1
 * for GPU_MEM_SUSPENDED). N4C_OK; N4C_EINVAL (comm or out NULL,
 * null/destroyed communicator, stat outside the enum); N4C_ENOTSUP (linked
 * NCCL lacks ncclCommMemStats); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_mem_stat(n4c_comm_t *comm, n4c_mem_stat_t stat, uint64_t *out);

/* nccl.core close_all_resources(): closes every resource comm tracks,
 * ignoring their errors; idempotent. A null or destroyed communicator
 * tracks nothing: N4C_OK. N4C_OK; N4C_EINVAL (comm NULL). */
N4C_EXTERN n4c_status_t n4c_comm_close_all_resources(n4c_comm_t *comm);

/* ======================================================================
 * Groups (thread-local, as in NCCL)
 * ==================================================================== */

/* ncclGroupStart / ncclGroupEnd. N4C_OK; N4C_EINPROGRESS (ncclGroupEnd on
 * non-blocking communicators); N4C_ENCCL. Per thread. */
N4C_EXTERN n4c_status_t n4c_group_start(void);
N4C_EXTERN n4c_status_t n4c_group_end(void);

/* ncclGroupSimulateEnd: ends the group without running it and writes the
 * estimated time of its operations, in seconds, to *seconds. N4C_OK;
 * N4C_EINVAL (seconds NULL; the group is then left open); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_group_simulate_end(double *seconds);

/* ======================================================================
 * Point to point: nccl.core's Communicator.send and .recv. Stream 0 is
 * the default stream.
 * ==================================================================== */

/* nccl.core send()/recv(): ncclSend/ncclRecv of buf->count elements of
 * buf->dtype to/from `peer`. N4C_OK; N4C_EINVAL (null/destroyed comm, buf
 * NULL, unknown dtype, NULL ptr with count > 0, buf->device differs from
 * the communicator's, peer outside [0, nranks)); N4C_EINPROGRESS;
 * N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_send(n4c_comm_t *comm, const n4c_buffer_t *buf, int peer,
                           cudaStream_t stream);
N4C_EXTERN n4c_status_t n4c_comm_recv(n4c_comm_t *comm, const n4c_buffer_t *buf, int peer,
                           cudaStream_t stream);

/* ======================================================================
 * Signals and one-sided puts: nccl.core's Communicator.signal,
 * .wait_signal and .put_signal (NCCL 2.29+, else N4C_ENOTSUP)
 * ==================================================================== */

typedef struct n4c_window_s n4c_window_t;

/* nccl.core WaitSignalDesc: wait for `op_count` signals from `peer`. */
typedef struct {
  int peer;
  int op_count;     /* signals to consume, >= 1 */
  int signal_index; /* must be 0 today */
  int context;      /* must be 0 today */
} n4c_wait_signal_desc_t;

/* Initializer: n4c_wait_signal_desc_t d = N4C_WAIT_SIGNAL_DESC(peer); */
#define N4C_WAIT_SIGNAL_DESC(peer) { (peer), 1, 0, 0 }

/* nccl.core signal(): ncclSignal to `peer`. signal_index, context and
 * flags are passed through (NCCL requires 0 and rejects others with
 * ncclInvalidArgument → N4C_ENCCL). N4C_OK; N4C_EINVAL (null/destroyed
 * comm, peer out of range); N4C_ENOTSUP; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_signal(n4c_comm_t *comm, int peer, int signal_index, int context,
                             unsigned int flags, cudaStream_t stream);

/* nccl.core wait_signal(): ncclWaitSignal over descs[0..ndescs-1]. N4C_OK;
 * N4C_EINVAL (null/destroyed comm, descs NULL, ndescs < 1, a desc's peer
 * out of range or op_count < 1; the message names the index);
 * N4C_ENOTSUP; N4C_ENOMEM; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_wait_signal(n4c_comm_t *comm, const n4c_wait_signal_desc_t *descs,
                                  int ndescs, cudaStream_t stream);

/* nccl.core put_signal(): ncclPutSignal of local->count elements into
 * `peer`'s memory of the collective window `peer_window`, at
 * `peer_window_offset` ELEMENTS of local->dtype (converted to bytes for
 * NCCL), then a signal. peer_window is the caller's own handle of the
 * collective window, not the handle value the peer holds: real NCCL 2.30.7
 * names the target that way and fails with ncclInternalError given the
 * peer's value, although nccl.core's put_signal documentation says to pass
 * the peer's window handle (conformance case SIG-08). N4C_OK; N4C_EINVAL
 * (null/destroyed comm, bad local buffer, peer out of range, peer_window
 * NULL or closed or of another communicator, offset in bytes
 * overflowing); N4C_ENOTSUP; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_put_signal(n4c_comm_t *comm, const n4c_buffer_t *local, int peer,
                                 const n4c_window_t *peer_window, size_t peer_window_offset,
                                 int signal_index, int context, unsigned int flags,
                                 cudaStream_t stream);

/* ======================================================================
 * Collectives: ncclAllReduce, ncclBroadcast, ncclReduce, ncclAllGather,
 * ncclReduceScatter, ncclAlltoAll, ncclGather and ncclScatter over
 * n4c_buffer_t. Counts come from the buffers and are checked against each
 * other (N4C_EINVAL, the message gives both counts); both buffers must
 * have the same dtype and the communicator's device. In place means
 * send->ptr and recv->ptr as NCCL defines it. `op` is an ncclRedOp_t
 * (ncclSum..ncclAvg) or one from n4c_redop_op. Every one: N4C_OK;
 * N4C_EINVAL; N4C_EINPROGRESS; N4C_ENCCL. Collective over comm.
 * ==================================================================== */

/* ncclAllReduce; send->count == recv->count. */
N4C_EXTERN n4c_status_t n4c_comm_allreduce(n4c_comm_t *comm, const n4c_buffer_t *send,
                                const n4c_buffer_t *recv, ncclRedOp_t op, cudaStream_t stream);

/* ncclBroadcast of recv->count elements from `root`; send is read on the
 * root only and may be NULL elsewhere (and on the root for in place, where
 * recv is the data); when given, send->count == recv->count. */
N4C_EXTERN n4c_status_t n4c_comm_broadcast(n4c_comm_t *comm, const n4c_buffer_t *send,
                                const n4c_buffer_t *recv, int root, cudaStream_t stream);

/* ncclReduce of send->count elements to `root`; recv is written on the
 * root only and may be NULL elsewhere; when given, recv->count ==
 * send->count. */
N4C_EXTERN n4c_status_t n4c_comm_reduce(n4c_comm_t *comm, const n4c_buffer_t *send,
                             const n4c_buffer_t *recv, ncclRedOp_t op, int root,
                             cudaStream_t stream);

/* ncclAllGather; recv->count == nranks * send->count. */
N4C_EXTERN n4c_status_t n4c_comm_allgather(n4c_comm_t *comm, const n4c_buffer_t *send,
                                const n4c_buffer_t *recv, cudaStream_t stream);

/* ncclReduceScatter; send->count == nranks * recv->count. */
N4C_EXTERN n4c_status_t n4c_comm_reduce_scatter(n4c_comm_t *comm, const n4c_buffer_t *send,
                                     const n4c_buffer_t *recv, ncclRedOp_t op,
                                     cudaStream_t stream);

/* ncclAlltoAll; send->count == recv->count, a multiple of nranks; each
 * peer gets send->count / nranks elements. */
N4C_EXTERN n4c_status_t n4c_comm_alltoall(n4c_comm_t *comm, const n4c_buffer_t *send,
                               const n4c_buffer_t *recv, cudaStream_t stream);

/* ncclGather to `root`; recv (root only, may be NULL elsewhere) has
 * nranks * send->count elements. */
N4C_EXTERN n4c_status_t n4c_comm_gather(n4c_comm_t *comm, const n4c_buffer_t *send,
                             const n4c_buffer_t *recv, int root, cudaStream_t stream);

/* ncclScatter from `root`; send (root only, may be NULL elsewhere) has
 * nranks * recv->count elements. */
N4C_EXTERN n4c_status_t n4c_comm_scatter(n4c_comm_t *comm, const n4c_buffer_t *send,
                              const n4c_buffer_t *recv, int root, cudaStream_t stream);

/* ======================================================================
 * Resources: nccl.core's CommResource and its kinds (registered buffers
 * and windows, custom reduction ops, device communicators)
 * ==================================================================== */

typedef struct n4c_resource_s n4c_resource_t;
typedef struct n4c_buffer_reg_s n4c_buffer_reg_t;
typedef struct n4c_redop_s n4c_redop_t;
typedef struct n4c_dev_comm_s n4c_dev_comm_t;

/* Any resource pointer, seen as its common header (see the cast rule at
 * the top of this file). */
#define N4C_RESOURCE(p) ((n4c_resource_t *)(p))

/* nccl.core CommResource.close(): releases the NCCL object and stops
 * tracking; idempotent (closed already: N4C_OK, nothing done). The
 * resource is closed afterwards even if NCCL failed. Must not run at the
 * same time as its communicator's destroy/abort/finalize on another thread.
 * N4C_OK; N4C_EINVAL (r NULL); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_resource_close(n4c_resource_t *r);

/* nccl.core is_valid: created and not closed. NULL gives false. */
N4C_EXTERN bool n4c_resource_is_valid(const n4c_resource_t *r);

/* Drops the caller's reference (NULL: no-op), closing first if open.
 * Returns the close's status (the reference is dropped regardless). */
N4C_EXTERN n4c_status_t n4c_resource_free(n4c_resource_t *r);

/* ---- registered buffers (nccl.core Communicator.register_buffer,
 *      RegisteredBufferHandle) ---- */

/* ncclCommRegister of buf (size = count * itemsize bytes). *out holds
 * one reference; the communicator tracks it. N4C_OK; N4C_EINVAL
 * (null/destroyed comm, bad buffer, wrong device, out NULL); N4C_ENOMEM;
 * N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_register_buffer(n4c_comm_t *comm, const n4c_buffer_t *buf,
                                      n4c_buffer_reg_t **out);
/* nccl.core handle: NCCL's registration handle. N4C_OK; N4C_EINVAL (NULL
 * argument); N4C_ECLOSED (closed). */
N4C_EXTERN n4c_status_t n4c_buffer_reg_handle(const n4c_buffer_reg_t *reg, void **out);
/* nccl.core size: registered bytes (kept after close); 0 for NULL. */
N4C_EXTERN size_t n4c_buffer_reg_size(const n4c_buffer_reg_t *reg);

/* ---- windows (nccl.core Communicator.register_window,
 *      RegisteredWindowHandle) ---- */

#define N4C_WIN_DEFAULT 0         /* NCCL_WIN_DEFAULT */
#define N4C_WIN_COLL_SYMMETRIC 1  /* NCCL_WIN_COLL_SYMMETRIC */
#define N4C_WIN_STRICT_ORDERING 2 /* NCCL_WIN_STRICT_ORDERING */

/* ncclCommWindowRegister of buf (count * itemsize bytes) with `flags`
 * (N4C_WIN_* ORed). Collective over comm. If NCCL succeeds with a NULL
 * window, *out is NULL and N4C_OK (nccl.core returns None) — except on a
 * non-blocking communicator still in progress, where the window is
 * returned and its handle fills once n4c_comm_get_async_error reports
 * ncclSuccess. Inside a group the handle fills at group end. Ranks may
 * register different sizes (NCCL 2.28 and later accept them); a put into a
 * peer's window must fit that peer's size.
 * N4C_OK; N4C_EINVAL (null/destroyed comm, bad buffer, wrong device,
 * unknown flag bits, out NULL); N4C_ENOMEM; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_register_window(n4c_comm_t *comm, const n4c_buffer_t *buf, int flags,
                                      n4c_window_t **out);
/* nccl.core handle: the ncclWindow_t; NULL for NULL, closed or not yet
 * filled. */
N4C_EXTERN ncclWindow_t n4c_window_handle(const n4c_window_t *win);
/* nccl.core size: registered bytes (kept after close); 0 for NULL. */
N4C_EXTERN size_t n4c_window_size(const n4c_window_t *win);
/* nccl.core user_ptr: ncclWinGetUserPtr. N4C_OK; N4C_EINVAL; N4C_ECLOSED;
 * N4C_ENOTSUP (the linked NCCL lacks it); N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_window_user_ptr(const n4c_window_t *win, void **out);
/* Pointer getters, `offset` in BYTES within the window. *out NULL where
 * nccl.core returns None (multimem unsupported; peer outside the LSA team).
 * lsa_ptr: ncclGetLsaDevicePointer (lsa_rank in [0, lsa team size));
 * peer_ptr: ncclGetPeerDevicePointer (peer in [0, nranks));
 * lsa_multimem_ptr: ncclGetLsaMultimemDevicePointer.
 * N4C_OK; N4C_EINVAL (NULL argument, negative rank); N4C_ECLOSED;
 * N4C_ENOTSUP (the linked NCCL lacks it); N4C_ENCCL (out of range, as NCCL decides). */
N4C_EXTERN n4c_status_t n4c_window_lsa_ptr(const n4c_window_t *win, int lsa_rank, size_t offset,
                                void **out);
N4C_EXTERN n4c_status_t n4c_window_peer_ptr(const n4c_window_t *win, int peer, size_t offset,
                                 void **out);
N4C_EXTERN n4c_status_t n4c_window_lsa_multimem_ptr(const n4c_window_t *win, size_t offset,
                                         void **out);

/* ---- custom reduction ops (nccl.core Communicator.create_pre_mul_sum,
 *      CustomRedOp) ---- */

/* ncclRedOpCreatePreMulSum with a host scalar (ncclScalarHostImmediate):
 * `scalar` points to one element of `dtype` in host memory, read before
 * return. N4C_OK; N4C_EINVAL (null/destroyed comm, scalar or out NULL,
 * unknown dtype); N4C_ENOMEM; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_create_pre_mul_sum_host(n4c_comm_t *comm, const void *scalar,
                                              ncclDataType_t dtype, n4c_redop_t **out);
/* ncclRedOpCreatePreMulSum with a device scalar (ncclScalarDevice), read
 * when each collective runs; scalar->count must be 1 and its device the
 * communicator's (N4C_EINVAL). The op applies to scalar->dtype. Other
 * statuses as the host variant. */
N4C_EXTERN n4c_status_t n4c_comm_create_pre_mul_sum_device(n4c_comm_t *comm, const n4c_buffer_t *scalar,
                                                n4c_redop_t **out);
/* nccl.core op. N4C_OK; N4C_EINVAL (NULL argument); N4C_ECLOSED. */
N4C_EXTERN n4c_status_t n4c_redop_op(const n4c_redop_t *redop, ncclRedOp_t *out);

/* ---- device communicators (nccl.core Communicator.create_dev_comm,
 *      DevCommResource) ---- */

/* nccl.core NCCLDevCommRequirements. Booleans are 0/1; counts >= 0. */
typedef struct {
  int lsa_multimem;
  int barrier_count;
  int lsa_barrier_count;
  int rail_gin_barrier_count;
  int lsa_ll_a2a_block_count;
  int lsa_ll_a2a_slot_count;
  int gin_force_enable;
  int gin_context_count;
  int gin_signal_count;
  int gin_counter_count;
  int gin_connection_type; /* n4c_gin_connection_type_t */
  int gin_exclusive_contexts;
  int gin_queue_depth;
  int world_gin_barrier_count;
  int gin_strong_signals_required;
  int gin_va_signals_required;
} n4c_dev_comm_requirements_t;

/* Every field unset: n4c_dev_comm_requirements_t r =
 * N4C_DEV_COMM_REQUIREMENTS_INIT; */
#define N4C_DEV_COMM_REQUIREMENTS_INIT                                        \
  { N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET,          \
    N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET,          \
    N4C_UNSET, N4C_UNSET, N4C_UNSET, N4C_UNSET }

/* ncclDevCommCreate with `reqs` (NULL: all defaults). Several may be made
 * from one communicator. N4C_OK; N4C_EINVAL (null/destroyed comm, out
 * NULL, a set field out of range: negative count, boolean not 0/1, unknown
 * connection type); N4C_ENOTSUP; N4C_ENOMEM; N4C_ENCCL. */
N4C_EXTERN n4c_status_t n4c_comm_create_dev_comm(n4c_comm_t *comm,
                                      const n4c_dev_comm_requirements_t *reqs,
                                      n4c_dev_comm_t **out);
/* nccl.core ptr: address of the ncclDevComm_t (host memory, to pass to
 * kernels by value). N4C_OK; N4C_EINVAL (NULL argument); N4C_ECLOSED. */
N4C_EXTERN n4c_status_t n4c_dev_comm_ptr(const n4c_dev_comm_t *dc, void **out);

#ifdef __cplusplus
}
#endif
#endif /* NCCL4C_H_ */
