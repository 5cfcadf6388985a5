/*
 * case.h — the API of a conformance case.
 *
 * A case is one claim of the conformance catalog: its ID and claim are a
 * line of cases.def (collectives and reduction ops: more in
 * docs/conformance-catalog-coll.md).
 * Adding one takes a line in cases.def and a function:
 *
 *   N4C_CASE(P2P_09, "P2P-09", "send to a peer out of range fails with EINVAL")
 *
 *   void case_P2P_09(case_ctx_t *ctx)
 *   {
 *     n4c_comm_t *comm;
 *     void *p;
 *     CASE_OK(ctx, ctx_comm_init(ctx, &comm));
 *     CASE_CUDA_OK(ctx, ctx_cuda_malloc(ctx, &p, 64));
 *     n4c_buffer_t buf = n4c_buffer(p, 16, ncclFloat32, ctx->device);
 *     CASE_STATUS(ctx, n4c_comm_send(comm, &buf, ctx->nranks, 0), N4C_EINVAL);
 *   }
 *
 * The function runs once on every rank, each on its own thread (or process,
 * under --mpi and --procs), with that rank's device current. A rank's
 * verdict is pass unless a check failed or it skipped; the case fails if
 * any rank failed, else skips if any rank skipped.
 *
 * Checks either return from the case function (CASE_CHECK, CASE_OK, ...) or
 * go on (CASE_EXPECT). A rank that returns early leaves its peers waiting in
 * any NCCL call that needs it; the watchdog ends that, but a clean report
 * needs the ranks to stop together: after a step whose outcome can differ
 * between ranks, call ctx_barrier() and return when it says a rank stopped.
 * Resources taken through ctx_* helpers (or handed to ctx_defer) are
 * released after the function returns, early or not, in reverse order.
 */
#ifndef N4C_CONFORMANCE_CASE_H_
#define N4C_CONFORMANCE_CASE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <nccl.h>
#include <cuda_runtime_api.h>
#include "nccl4c.h"

struct launch_ops;
struct ctx_defer;

typedef struct case_ctx {
  int rank;     /* 0 .. nranks-1 */
  int nranks;
  int device;   /* current on this rank's thread: rank (or local rank) mod ndevices */
  int ndevices; /* cudaGetDeviceCount */
  ncclUniqueId id; /* made once per case, the same on every rank */
  bool verbose;
  /* The case runs in a process that earlier cases used (--mpi, --procs,
   * --no-fork): what NCCL reads once per process (its NCCL_* variables) is
   * read. */
  bool shared_process;
  /* Ranks of this case in this process: nranks as threads, 1 when ranks
   * are processes (--mpi, --procs). What a process counts of its own (its
   * allocations) is this many ranks' worth. */
  int local_ranks;

  /* The runner's; cases do not touch these. */
  const struct launch_ops *launch;
  void *launch_data;
  struct ctx_defer *defers;
  bool stopped; /* this rank failed or skipped */
} case_ctx_t;

typedef void case_fn(case_ctx_t *ctx);

#define N4C_CASE(sym, id, claim) case_fn case_##sym;
#include "cases.def"
#undef N4C_CASE

/* Verdicts. The functions return `ok`, so CASE_EXPECT can be used in
 * conditions; a failure detail reads "file:line: <message>". */
bool case_expect_(case_ctx_t *ctx, bool ok, const char *file, int line,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void case_skip_(case_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Skips with "not supported by NCCL x.y.z" and nccl4c's last message: for
 * an N4C_ENOTSUP where the claim needs a function the linked NCCL lacks.
 * CASE_STATUS/CASE_OK do this by themselves. */
void case_skip_unsupported(case_ctx_t *ctx);
#define CASE_SKIP_UNSUPPORTED(ctx) \
  do { case_skip_unsupported(ctx); return; } while (0)
/* Skips with "not supported by NCCL x.y.z", then " (why)" unless why is
 * NULL: for a case compiled without the NCCL API it needs (configure found
 * no declaration, e.g. ncclPutSignal before 2.29). */
void case_skip_nccl_version(case_ctx_t *ctx, const char *why);
#define CASE_SKIP_NO_NCCL_API(ctx) \
  do { case_skip_nccl_version((ctx), NULL); return; } while (0)
/* Records where real NCCL differs from its documentation (both texts). */
void case_divergence(case_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A "# rank R: ..." diagnostic, shown with -v. */
void ctx_note(case_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CASE_EXPECT(ctx, cond, ...) \
  case_expect_((ctx), !!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define CASE_CHECK(ctx, cond, ...) \
  do { if (!CASE_EXPECT((ctx), (cond), __VA_ARGS__)) return; } while (0)

#define CASE_SKIP(ctx, ...) \
  do { case_skip_((ctx), __VA_ARGS__); return; } while (0)

/* `call` returns n4c_status_t and must give `want`; the detail names the
 * call, both statuses and nccl4c's last error message. */
#define CASE_STATUS(ctx, call, want)                                         \
  do {                                                                       \
    n4c_status_t st_ = (call);                                               \
    if (!case_status_((ctx), st_, (want), #call, __FILE__, __LINE__)) return; \
  } while (0)
#define CASE_OK(ctx, call) CASE_STATUS(ctx, call, N4C_OK)

/* The same for the NCCL and CUDA APIs, for NCCL-level claims. */
#define CASE_NCCL_OK(ctx, call)                                              \
  do {                                                                       \
    ncclResult_t r_ = (call);                                                \
    if (r_ == ncclInvalidUsage && case_skip_not_across_hosts(ctx, false)) return; \
    CASE_CHECK((ctx), r_ == ncclSuccess, "%s: %s (%d)", #call,               \
               ncclGetErrorString(r_), (int)r_);                             \
  } while (0)
#define CASE_CUDA_OK(ctx, call)                                              \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    CASE_CHECK((ctx), e_ == cudaSuccess, "%s: %s (%d)", #call,               \
               cudaGetErrorName(e_), (int)e_);                               \
  } while (0)

bool case_status_(case_ctx_t *ctx, n4c_status_t got, n4c_status_t want,
                  const char *call, const char *file, int line);
/* On ncclsim, after an NCCL call failed with ncclInvalidUsage: skips (and
 * returns true) when ncclsim said it does not yet run that call on a
 * communicator across simulated hosts (n4c-conformance --sim-hosts).
 * from_nccl4c: the call was nccl4c's, whose last message must name it.
 * CASE_STATUS and CASE_NCCL_OK try it. */
bool case_skip_not_across_hosts(case_ctx_t *ctx, bool from_nccl4c);
/* The same for a helper's own check, with the status st of the nccl4c call
 * that just returned: true (skipped) if ncclsim refused it across hosts. */
bool case_refused_across_hosts(case_ctx_t *ctx, n4c_status_t st);
/* Whether the ranks are simulated hosts (--sim-hosts, ncclsim). */
bool case_sim_hosts(void);
/* N4C_SLOWDOWN: how many times slower than a plain build this one runs
 * (from the environment, as make check exports it, else configure's; 1 on
 * a plain build). Deadlines and the head starts of late ranks are
 * multiplied by it; what a case checks is not. */
int case_slowdown(void);

/* Collectives across the ranks of the case. Each returns false, having done
 * its exchange, when some rank has failed, skipped or returned: return
 * quietly then, the rank that stopped has said why. */
bool ctx_barrier(case_ctx_t *ctx);
/* all[r * len ..] receives rank r's `mine`; len <= CTX_XCHG_MAX, and `all`
 * holds all_bytes >= nranks * len (else the case is wrong: abort). Size it
 * by nranks (ctx_host_malloc): a fixed array that fits 8 ranks overflows at
 * 256. */
#define CTX_XCHG_MAX 2048 /* bytes: a uint64_t per peer at 256 ranks */
bool ctx_allgather(case_ctx_t *ctx, const void *mine, size_t len, void *all, size_t all_bytes);
bool ctx_bcast(case_ctx_t *ctx, void *buf, size_t len, int root);
/* A fresh unique id from rank 0, for a second communicator in one case. */
bool ctx_new_unique_id(case_ctx_t *ctx, ncclUniqueId *id);

/* The layout a communicator got, read from its properties rather than
 * assumed from what was asked for (NCCLSIM_RANKS_PER_NODE, or real nodes,
 * may give any): nnodes LSA teams (n4c_comm_properties' n_lsa_teams); this
 * rank's team has lsa_size consecutive ranks, as NCCL's LSA team (stride
 * 1), and this rank is its LSA rank lsa_rank; its LSA rank 0 is rank
 * lsa_first. On ncclsim the team comes from ncclTeamLsa; on real NCCL from
 * the properties, for teams of equal size. */
typedef struct case_topo {
  int nnodes, lsa_size, lsa_rank, lsa_first;
} case_topo_t;
/* Fills *t for comm; false, after a skip (properties not supported, or on
 * real NCCL teams of unequal size) or a failed check, when it cannot. */
bool ctx_topology(case_ctx_t *ctx, n4c_comm_t *comm, case_topo_t *t);
/* True if `peer` is in this rank's LSA team. */
static inline bool case_topo_lsa_peer(const case_topo_t *t, int peer)
{
  return peer >= t->lsa_first && peer < t->lsa_first + t->lsa_size;
}

/* Resources released when the case function returns. */
void ctx_defer(case_ctx_t *ctx, void (*fn)(void *), void *arg);
/* n4c_comm_init over ctx->id with every rank of the case; freed after. */
n4c_status_t ctx_comm_init(case_ctx_t *ctx, n4c_comm_t **comm);
/* n4c_comm_free(comm) after the case. */
void ctx_defer_comm(case_ctx_t *ctx, n4c_comm_t *comm);
/* cudaStreamCreate; destroyed after. */
cudaError_t ctx_stream_create(case_ctx_t *ctx, cudaStream_t *stream);
/* cudaMalloc on the current device; cudaFree after. */
cudaError_t ctx_cuda_malloc(case_ctx_t *ctx, void **ptr, size_t bytes);
/* malloc, freed after; NULL when out of memory. */
void *ctx_host_malloc(case_ctx_t *ctx, size_t bytes);

#endif /* N4C_CONFORMANCE_CASE_H_ */
